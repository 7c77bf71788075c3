"""The preference-led pass scores pod (anti-)affinity in P's units (optimizer.marginal): the change of P a node
brings, instead of kube-scheduler's normalized counts."""
from __future__ import annotations

from collections import Counter

import numpy as np
from hypothesis import assume, given
from hypothesis import strategies as st

from builders import cluster_of, make_node, make_pod, pod_term, selector
from podplan.models.objects import Cluster, Pod
from podplan.optimizer.greedy import simulate
from podplan.optimizer.interpodaffinity import term_matches
from podplan.optimizer.marginal import P_UNIT, MarginalAffinity
from podplan.optimizer.nodearrays import NodeArrays
from podplan.optimizer.objective import preference_terms
from podplan.optimizer.policy import Policy
from podplan.optimizer.registry import DEFAULT_PROFILE
from podplan.optimizer.state import ClusterState
from podplan.optimizer.verify import verify
from podplan.optimizer.warmstart import preference, preference_led
from test_property_greedy import APPS, PROPERTY, clusters, describe, nodes

Z = "topology.kubernetes.io/zone"
H = "kubernetes.io/hostname"


def _zoned(nodes_per_zone: int = 2, cpu: str = "8") -> tuple:
    return tuple(make_node(f"n{z}{i}").label(Z, f"z{z}").label(H, f"n{z}{i}").alloc(cpu=cpu, memory="32Gi", pods=110)
                 .build() for z in range(3) for i in range(nodes_per_zone))


def _apart_by_zone(name: str, k: int, start: int = 0, weight: int = 100) -> list[Pod]:
    return [make_pod(f"{name}-{i}").label("app", name).req(cpu="500m").set(workload=f"Deployment/default/{name}",
                                                                          order=start + i)
            .preferred_pod_anti_affinity(weight, pod_term(Z, selector(app=name))).build() for i in range(k)]


def _zones_of(cluster: Cluster, placements: dict[str, str], prefix: str) -> list[int]:
    zone = {n.name: n.labels[Z] for n in cluster.nodes}
    return sorted(Counter(zone[n] for k, n in placements.items() if k.startswith(f"default/{prefix}-")).values())


def test_a_class_apart_by_zone_lands_one_one_and_the_rest_where_kube_scheduler_spreads_it_evenly() -> None:
    cluster = Cluster(nodes=_zoned(), pending=tuple(_apart_by_zone("web", 7)))
    greedy = simulate(cluster)
    led = preference_led(cluster, 0, gangs=None, profile=DEFAULT_PROFILE, policy=Policy())
    assert led is not None and verify(cluster, led.placements).ok
    assert _zones_of(cluster, greedy.placements, "web") == [2, 2, 3]  # every pod shares its zone: all 7 pay
    assert _zones_of(cluster, led.placements, "web") == [1, 1, 5]  # two are alone: 5 pay
    assert preference(cluster, greedy, Policy()) == -700 and preference(cluster, led, Policy()) == -500


def test_a_full_zone_sends_the_rest_to_the_zone_with_room() -> None:
    # one node per zone, 2 cpu each: 4 pods of half a cpu fill a zone; 9 pods need all three zones
    cluster = Cluster(nodes=_zoned(1, cpu="2"), pending=tuple(_apart_by_zone("web", 9)))
    led = preference_led(cluster, 0, gangs=None, profile=DEFAULT_PROFILE, policy=Policy())
    assert led is not None and len(led.placements) == 9 and verify(cluster, led.placements).ok
    assert preference(cluster, led, Policy()) >= -900


def _p_affinity(cluster: Cluster, state: ClusterState) -> int:
    terms = preference_terms(cluster, state, Policy())
    return terms["pod_affinity"] + terms["pod_anti_affinity"]


@st.composite
def preferring(draw: st.DrawFn) -> Cluster:
    """Small clusters (the property tests' nodes) whose pods, running or pending, hold preferred pod (anti-)affinity
    terms by zone or hostname, to their own app or another."""
    ns = draw(nodes())
    out = []
    for i in range(draw(st.integers(1, 8))):
        app = draw(st.sampled_from(APPS))
        b = make_pod(f"p{i}").label("app", app).req(cpu="100m")
        if draw(st.integers(0, 5)) == 0:
            b.namespace("other")
        for _ in range(draw(st.integers(0, 2))):
            term = pod_term(draw(st.sampled_from([Z, H])), selector(app=draw(st.sampled_from(APPS))))
            weight = draw(st.integers(1, 100))
            (b.preferred_pod_anti_affinity if draw(st.booleans()) else b.preferred_pod_affinity)(weight, term)
        if i and draw(st.booleans()):
            b.on(draw(st.sampled_from([n.name for n in ns])))
        out.append(b.build())
    return cluster_of(ns, out)


@PROPERTY
@given(preferring())
def test_the_score_is_the_change_of_p_when_every_holder_of_a_term_carries_the_labels_it_selects(
        cluster: Cluster) -> None:
    """The score of each node equals P's pod (anti-)affinity terms after the pod lands there less before, on
    random small clusters, wherever the score's one approximation is exact (the pods sharing a preferred term
    either all match it or none does: the generated workloads' own terms, the common case)."""
    if not cluster.pending:
        return
    pod = cluster.pending[0]
    state = ClusterState.from_cluster(cluster, [(p, p.node_name) for p in cluster.pods])
    holders: dict[object, set[bool]] = {}
    nsl = state.namespace_labels
    for q in (*cluster.pods, pod):
        for w in (*q.affinity.pod_preferred, *q.affinity.anti_preferred):
            holders.setdefault((w.term, q.namespace), set()).add(term_matches(w.term, q, q, nsl))
    assume(all(len(v) == 1 for v in holders.values()))
    arrays = NodeArrays(state)
    marginal = MarginalAffinity(state, arrays, Policy())
    scores = marginal.score(pod, np.arange(len(cluster.nodes)))
    before = _p_affinity(cluster, state)
    for i, node in enumerate(cluster.nodes):
        after = ClusterState.from_cluster(cluster, [(p, p.node_name) for p in cluster.pods] + [(pod, node.name)])
        assert scores[i] == P_UNIT * (_p_affinity(cluster, after) - before), f"{describe(cluster)}\nnode {node.name}"


@PROPERTY
@given(clusters(), st.integers(0, 3))
def test_the_pass_with_these_scores_binds_only_where_kube_scheduler_could(cluster: Cluster, seed: int) -> None:
    led = preference_led(cluster, seed, gangs=None, profile=DEFAULT_PROFILE, policy=Policy())
    if led is None:
        return
    failures = [v for v in verify(cluster, led.placements).violations if not v.preexisting]
    assert not failures, f"{describe(cluster)}\nplacements {led.placements}\n{failures}"
