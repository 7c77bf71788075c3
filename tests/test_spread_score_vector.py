"""PodTopologySpread's ScheduleAnyway score: the vectorized form (podtopologyspread/vector.py) equals the plain
PreScore/Score/NormalizeScore (scoring.py) on random clusters, under every combination of nodeAffinityPolicy and
nodeTaintsPolicy, zone and hostname keys, zone-less and tainted nodes, any candidate set; and whole simulations
take the same nodes through the vectorized scheduler and the plain loop under every scoring strategy."""
from __future__ import annotations

import itertools

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from builders import cluster_of, make_node, make_pod, req, selector, spread, term
from podplan.models.schedulerconfig import parse_scheduler_config
from podplan.optimizer.greedy import Scheduler
from podplan.optimizer.nodearrays import NodeArrays
from podplan.optimizer.podtopologyspread.scoring import normalize, pre_score, score_node
from podplan.optimizer.podtopologyspread.vector import SpreadVector
from podplan.optimizer.profiles import default_profiles, profiles_from
from podplan.optimizer.state import ClusterState
from podplan.optimizer.vectorized import VectorScheduler

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"
POLICIES = list(itertools.product(["Honor", "Ignore"], ["Honor", "Ignore"]))
SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def spread_clusters(draw: st.DrawFn):
    nodes = []
    for i in range(draw(st.integers(2, 8))):
        b = make_node(f"n{i}").label(HOST, f"n{i}")
        if draw(st.integers(0, 6)):
            b.label(ZONE, draw(st.sampled_from("abcd")))
        if draw(st.booleans()):
            b.label("disk", "ssd")
        for _ in range(draw(st.integers(0, 2))):
            b.taint(draw(st.sampled_from(["dedicated", "spot"])), "x",
                    draw(st.sampled_from(["NoSchedule", "PreferNoSchedule", "NoExecute"])))
        b.alloc(cpu="8", memory="32Gi", pods="110")
        nodes.append(b.build())
    names = [n.name for n in nodes]
    pods = []
    for i in range(draw(st.integers(0, 12))):
        pods.append(make_pod(f"e{i}").label("app", draw(st.sampled_from(["web", "db"])))
                    .req(cpu=draw(st.sampled_from(["100m", "1"]))).on(draw(st.sampled_from(names))).build())
    incoming = []
    for i in range(draw(st.integers(1, 4))):
        b = make_pod(f"p{i}").label("app", "web").req(cpu=draw(st.sampled_from(["100m", "500m", "2"])))
        keys = draw(st.lists(st.sampled_from([ZONE, HOST]), min_size=1, max_size=2, unique=True))
        for key in keys:
            affinity_policy, taints_policy = draw(st.sampled_from(POLICIES))
            b.spread(spread(draw(st.integers(1, 3)), key, selector(app="web"), "ScheduleAnyway",
                            affinity_policy=affinity_policy, taints_policy=taints_policy))
        if draw(st.booleans()):
            b.toleration("dedicated", "x", draw(st.sampled_from(["", "NoSchedule"])), "Equal")
        if draw(st.integers(0, 2)) == 0:
            b.node_selector(disk="ssd")
        if draw(st.integers(0, 3)) == 0:
            b.node_affinity(term(req(ZONE, "In", "a", "b")))
        incoming.append(b.build())
    return cluster_of(nodes, pods + incoming)


@SETTINGS
@given(spread_clusters(), st.data())
def test_the_vectorized_spread_score_equals_the_reference_on_any_candidates(cluster, data) -> None:
    state = ClusterState.from_cluster(cluster)
    vector = SpreadVector(state, NodeArrays(state))
    infos = list(state.nodes.values())
    for pod in cluster.pending:
        picked = data.draw(st.lists(st.sampled_from(range(len(infos))), min_size=1, unique=True))
        candidates = np.array(sorted(picked), np.int64)
        chosen = [infos[i] for i in candidates]
        pre = pre_score(pod, state, chosen)
        expected = normalize({i.name: score_node(pod, pre, i, state) for i in chosen}, pre)
        got = vector.score(pod, candidates)
        assert dict(zip([i.name for i in chosen], got.tolist())) == expected


STRATEGIES = {
    "LeastAllocated": None,
    "MostAllocated": {"type": "MostAllocated"},
    "RequestedToCapacityRatio": {"type": "RequestedToCapacityRatio", "requestedToCapacityRatio": {
        "shape": [{"utilization": 0, "score": 0}, {"utilization": 60, "score": 10},
                  {"utilization": 100, "score": 3}]}},
}


def profile_for(strategy: str):
    body = STRATEGIES[strategy]
    if body is None:
        return default_profiles().profiles[0]
    config = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
              "profiles": [{"schedulerName": "default-scheduler", "pluginConfig": [
                  {"name": "NodeResourcesFit", "args": {"scoringStrategy": {
                      **body, "resources": [{"name": "cpu", "weight": 2}, {"name": "memory", "weight": 1}]}}}]}]}
    return profiles_from(parse_scheduler_config(config)).profiles[0]


@SETTINGS
@given(spread_clusters(), st.sampled_from(sorted(STRATEGIES)))
def test_the_vectorized_scheduler_takes_the_reference_nodes_under_every_scoring_strategy(cluster, strategy) -> None:
    profile = profile_for(strategy)
    plain_state, fast_state = ClusterState.from_cluster(cluster), ClusterState.from_cluster(cluster)
    plain = Scheduler(plain_state, 0, profile=profile, protect_placed=False)
    fast = VectorScheduler(fast_state, 0, profile=profile, protect_placed=False, plain_fallback=True)
    for pod in cluster.pending:
        assert fast.schedule(pod) == plain.schedule(pod), (strategy, pod.key)
