"""The vectorized simulator places every pod where the plain per-node loop does, with the same messages.

greedy.Scheduler (one node at a time through the plugins' predicates) is the reference; VectorScheduler must
give identical placements and pending messages on random clusters (small, and widened past 100 nodes so
numFeasibleNodesToFind and the rotation matter), on generated clusters of every profile, with
percentageOfNodesToScore 0, 50 and 100, with and without the placed-pod guard, and when the caller removes
pods from the state between cycles (rebalance's landing simulation).
"""
from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from podplan.models.generate import PROFILES, generate
from podplan.models.loader import parse_documents
from podplan.models.objects import Cluster, NodeSelector, PreferredSchedulingTerm
from podplan.optimizer.greedy import Scheduler, queue_order, simulate
from podplan.optimizer.state import ClusterState
from podplan.optimizer.vectorized import VectorScheduler
from builders import req, term
from test_property_greedy import HOST, PROPERTY, ZONE, clusters, describe

GPU = "example.com/gpu"


def outcome(cluster: Cluster, vectorized: bool, **options: object) -> tuple[dict[str, str], dict[str, str]]:
    plan = simulate(cluster, vectorized=vectorized, **options)  # type: ignore[arg-type]
    return plan.placements, plan.pending


def widen(cluster: Cluster, copies: int) -> Cluster:
    """`copies` clones of every node (own name and hostname) and of every pending pod: past 100 nodes
    kube-scheduler stops at numFeasibleNodesToFind and rotates its starting node."""
    nodes = list(cluster.nodes)
    for j in range(1, copies):
        for n in cluster.nodes:
            name = f"{n.name}-{j}"
            labels = {**n.labels, HOST: name} if HOST in n.labels else dict(n.labels)
            nodes.append(dataclasses.replace(n, name=name, labels=labels))
    pending = [dataclasses.replace(p, name=f"{p.name}-{j}", order=p.order + j * 1000)
               for j in range(copies) for p in cluster.pending]
    return dataclasses.replace(cluster, nodes=tuple(nodes), pending=tuple(pending))


@st.composite
def enriched(draw: st.DrawFn) -> Cluster:
    """A random cluster plus what its strategy lacks: extended resources (on some nodes, or on none),
    cordoned nodes, pods pinned by spec.nodeName, required node affinity (by labels, or pinning node names
    through matchFields), preferred node affinity."""
    cluster = draw(clusters())
    nodes = []
    for n in cluster.nodes:
        if draw(st.booleans()):
            n = dataclasses.replace(n, allocatable={**n.allocatable, GPU: draw(st.integers(1, 2))})
        nodes.append(dataclasses.replace(n, unschedulable=draw(st.integers(0, 5)) == 0))
    names = [n.name for n in nodes]
    pending = []
    for p in cluster.pending:
        extra = draw(st.sampled_from([{}, {}, {GPU: 1}, {"example.com/fpga": 1}]))
        affinity = p.affinity
        if draw(st.booleans()):
            preferred = PreferredSchedulingTerm(draw(st.integers(1, 100)), term(req("disk", "In", "ssd")))
            affinity = dataclasses.replace(affinity, node_preferred=(preferred,))
        required = draw(st.sampled_from([
            None, None, None,
            NodeSelector((term(req(ZONE, "NotIn", "a")), term(req("disk", "Exists")))),
            NodeSelector((term(fields=[req("metadata.name", "In", *draw(st.lists(st.sampled_from(names),
                                                                                 max_size=2)))]),)),
        ]))
        if required is not None:
            affinity = dataclasses.replace(affinity, node_required=required)
        pinned = draw(st.sampled_from(names)) if draw(st.integers(0, 5)) == 0 else ""
        pending.append(dataclasses.replace(p, requests={**p.requests, **extra}, affinity=affinity, node_name=pinned))
    return dataclasses.replace(cluster, nodes=tuple(nodes), pending=tuple(pending))


@PROPERTY
@given(st.one_of(clusters(), enriched()), st.integers(0, 3), st.sampled_from([0, 50, 100]), st.booleans())
def test_random_clusters_get_the_plain_loops_placements_and_messages(
        cluster: Cluster, seed: int, percentage: int, protect: bool) -> None:
    options = dict(seed=seed, percentage_of_nodes_to_score=percentage, protect_placed=protect)
    assert outcome(cluster, True, **options) == outcome(cluster, False, **options), describe(cluster)


@settings(PROPERTY, max_examples=30)
@given(st.one_of(clusters(), enriched()), st.integers(20, 30), st.integers(0, 3), st.sampled_from([0, 50, 100]))
def test_random_clusters_past_100_nodes_rotate_and_stop_early_as_the_plain_loop_does(
        cluster: Cluster, copies: int, seed: int, percentage: int) -> None:
    wide = widen(cluster, copies)
    options = dict(seed=seed, percentage_of_nodes_to_score=percentage)
    assert outcome(wide, True, **options) == outcome(wide, False, **options), describe(cluster)


@PROPERTY
@given(clusters(), st.integers(0, 3), st.data())
def test_pods_the_caller_removes_between_cycles_are_gone_for_the_vectorized_scheduler_too(
        cluster: Cluster, seed: int, data: st.DataObject) -> None:
    results = []
    removals = data.draw(st.lists(st.booleans(), min_size=len(cluster.pods) + len(cluster.pending),
                                  max_size=len(cluster.pods) + len(cluster.pending)))
    for make in (Scheduler, VectorScheduler):
        state = ClusterState.from_cluster(cluster)
        sched = make(state, seed, protect_placed=False)
        first = [sched.schedule(p) for p in queue_order(cluster.pending)]
        gone = [p for p, drop in zip(list(cluster.pods) + list(cluster.pending), removals)
                if drop and p.key in state.node_of]
        for p in gone:
            state.remove(p)
        again = [sched.schedule(dataclasses.replace(p, name=p.name + "-again")) for p in gone]
        results.append((first, again))
    assert results[0] == results[1], describe(cluster)


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("nodes,percentage", [(40, 0), (150, 0), (150, 50), (150, 100)],
                         ids=["40 nodes", "150 nodes adaptive", "150 nodes 50 percent", "150 nodes all"])
def test_generated_clusters_get_the_plain_loops_placements_and_messages(profile: str, nodes: int,
                                                                        percentage: int) -> None:
    cluster = parse_documents(generate(nodes, nodes * 5, 5, profile), f"<generate {profile}>")
    options = dict(seed=7, percentage_of_nodes_to_score=percentage)
    assert outcome(cluster, True, **options) == outcome(cluster, False, **options)


@PROPERTY
@given(st.one_of(clusters(), enriched()), st.integers(0, 3), st.booleans())
def test_with_preemption_the_vectorized_scheduler_evicts_and_places_as_the_plain_loop_does(
        cluster: Cluster, seed: int, protect: bool) -> None:
    fast = simulate(cluster, seed, protect_placed=protect, preemption=True, vectorized=True)
    plain = simulate(cluster, seed, protect_placed=protect, preemption=True, vectorized=False)
    assert (fast.placements, fast.pending, fast.preemptions) == (plain.placements, plain.pending, plain.preemptions), \
        describe(cluster)
