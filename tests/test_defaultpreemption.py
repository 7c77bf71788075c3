"""DefaultPreemption, ported from kube-scheduler's tables (pkg/scheduler/framework/plugins/defaultpreemption/
default_preemption_test.go: TestDryRunPreemption, TestSelectBestCandidate, TestPostFilter), then the
simulator's use of it: victims deleted, their controllers' pods recreated and queued, the plan verified.

Upstream's sizes: small 100m/100, medium 200m/200, large 300m/300, very large 500m/500 (cpu/memory), nodes of
the very large size; priorities neg -100, low 0, mid 100, high 1000, very high 10000. PDB statuses upstream
sets by hand are reproduced with minAvailable over the pods (podplan computes disruptionsAllowed itself);
upstream's fake filter plugins and DisruptedPods have no counterpart and are not ported.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from builders import cluster_of, make_node, make_pod, selector
from podplan.models.objects import Node, Pod, PodDisruptionBudget
from podplan.optimizer.defaultpreemption import (
    Candidate, Evaluator, PreemptionArgs, after_preemption, calculate_num_candidates, pick_one_node, recreate,
)
from podplan.optimizer.greedy import simulate
from podplan.optimizer.pipeline import check
from podplan.optimizer.registry import DEFAULT_PROFILE
from podplan.optimizer.state import ClusterState

NEG, LOW, MID, HIGH, VERY_HIGH = -100, 0, 100, 1000, 10000
SMALL, MEDIUM, LARGE, VERY_LARGE = ("100m", 100), ("200m", 200), ("300m", 300), ("500m", 500)


def node(name: str, size: tuple[str, int] = VERY_LARGE, pods: int = 110, **labels: str) -> Node:
    b = make_node(name).alloc(cpu=size[0], memory=size[1], pods=pods).label("hostname", name)
    for k, v in labels.items():
        b = b.label(k, v)
    return b.build()


def pod(name: str, priority: int, size: tuple[str, int] | None = None, on: str = "", start: int | None = None,
        **labels: str) -> Pod:
    b = make_pod(name).priority(priority).labels(labels)
    if size is not None:
        b = b.req(cpu=size[0], memory=size[1])
    if on:
        b = b.on(on)
    if start is not None:
        b = b.set(start_time=f"1970-01-01T00:00:{start:02d}Z")  # upstream's epochTimeN, in seconds
    return b.build()


def pdb(min_available: int | str, **match: str) -> PodDisruptionBudget:
    return PodDisruptionBudget("default", "pdb-" + "-".join(match.values()), selector(**match), min_available=min_available)


def evaluator(nodes: Sequence[Node], pods: Sequence[Pod], pdbs: Sequence[PodDisruptionBudget] = ()) -> Evaluator:
    cluster = cluster_of(nodes, pods, pdbs=tuple(pdbs))
    state = ClusterState.from_cluster(cluster)
    return Evaluator(state, DEFAULT_PROFILE, cluster.pdbs, cluster.workloads, cluster.pods)


def dry_run(nodes: Sequence[Node], pods: Sequence[Pod], preemptor: Pod, pdbs: Sequence[PodDisruptionBudget] = (),
            args: PreemptionArgs = PreemptionArgs(), offset: int = 0) -> list[Candidate]:
    ev = evaluator(nodes, pods, pdbs)
    infos = sorted(ev.state.nodes.values(), key=lambda i: i.name)
    before = {i.name: list(i.pods) for i in infos}
    found, _ = ev.dry_run(preemptor, infos, offset, calculate_num_candidates(len(infos), args))
    assert {i.name: sorted(i.pods) for i in infos} == {k: sorted(v) for k, v in before.items()}, "a dry run"
    return found


def summary(candidates: Sequence[Candidate]) -> dict[str, Any]:
    """Upstream's comparison: candidates by node, victims by name, with the PDB violations when any."""
    out: dict[str, Any] = {}
    for c in candidates:
        names = sorted(v.name for v in c.victims)
        out[c.node] = (names, c.pdb_violations) if c.pdb_violations else names
    return out


# --------------------------------------------------------------------------------- TestDryRunPreemption


TWO = [node("node1"), node("node2")]
FIVE = [node(f"node{i}") for i in range(1, 6)]
FORTY_PERCENT = PreemptionArgs(min_candidate_nodes_percentage=40, min_candidate_nodes_absolute=1)

DRY_RUN = [
    ("a pod that fits on every node without preemption yields no candidate",
     TWO, [pod("p1", MID, SMALL, "node1"), pod("p2", MID, SMALL, "node2")], pod("p", HIGH, SMALL), (), None, 0, {}),
    ("a pod that fits on both nodes when the lower-priority pods are preempted has both as candidates",
     TWO, [pod("p1", MID, LARGE, "node1"), pod("p2", MID, LARGE, "node2")], pod("p", HIGH, LARGE), (), None, 0,
     {"node1": ["p1"], "node2": ["p2"]}),
    ("a pod whose competitors all have higher priority preempts nothing",
     TWO, [pod("p1", MID, LARGE, "node1"), pod("p2", MID, LARGE, "node2")], pod("p", LOW, LARGE), (), None, 0, {}),
    ("the medium-priority pod is preempted and the small lower-priority one stays",
     TWO, [pod("p1.1", LOW, SMALL, "node1"), pod("p1.2", MID, LARGE, "node1"), pod("p2", MID, LARGE, "node2")],
     pod("p", HIGH, LARGE), (), None, 0, {"node1": ["p1.2"], "node2": ["p2"]}),
    ("mixed-priority pods are preempted, only those of lower priority",
     TWO, [pod("p1.1", MID, SMALL, "node1"), pod("p1.2", LOW, SMALL, "node1"), pod("p1.3", MID, MEDIUM, "node1"),
           pod("p1.4", HIGH, SMALL, "node1"), pod("p2", HIGH, LARGE, "node2")],
     pod("p", HIGH, LARGE), (), None, 0, {"node1": ["p1.2", "p1.3"]}),
    ("of equal-priority pods the one that started later is preempted",
     TWO, [pod("p1.1", LOW, SMALL, "node1", start=5), pod("p1.2", LOW, SMALL, "node1", start=4),
           pod("p1.3", MID, MEDIUM, "node1", start=3), pod("p1.4", HIGH, SMALL, "node1", start=2),
           pod("p2", HIGH, LARGE, "node2", start=1)],
     pod("p", HIGH, LARGE), (), None, 0, {"node1": ["p1.1", "p1.3"]}),
    ("the pod whose anti-affinity rejects the preemptor is preempted",
     TWO, [make_pod("p1.1").priority(LOW).label("foo", "").req(cpu="100m", memory=100).on("node1")
           .affinity(__import__("podplan.models.objects", fromlist=["Affinity"]).Affinity(anti_required=(
               __import__("builders").pod_term("hostname", selector(__import__("builders").req("foo", "Exists"))),)))
           .build(),
           pod("p1.2", MID, SMALL, "node1"), pod("p1.3", HIGH, SMALL, "node1"), pod("p2", HIGH, SMALL, "node2")],
     pod("p", HIGH, SMALL, foo=""), (), None, 0, {"node1": ["p1.1"]}),
    ("two victims of one PDB with one disruption allowed count one violation",
     [node("node1")], [pod("p1.1", MID, MEDIUM, "node1", app="foo"), pod("p1.2", MID, MEDIUM, "node1", app="foo")],
     pod("p", HIGH, VERY_LARGE), [pdb(1, app="foo")], None, 0, {"node1": (["p1.1", "p1.2"], 1)}),
    ("the candidates are limited to 40% of the nodes, from the offset, wrapping around",
     FIVE, [pod(f"p{i}", MID, LARGE, f"node{i}") for i in range(1, 6)], pod("p", HIGH, LARGE), (), FORTY_PERCENT, 4,
     {"node5": ["p5"], "node1": ["p1"]}),
    ("nodes without candidates are passed over until the limit is reached",
     FIVE, [pod("p1", MID, LARGE, "node1"), pod("p2", VERY_HIGH, LARGE, "node2"), pod("p3", MID, LARGE, "node3"),
            pod("p4", MID, LARGE, "node4"), pod("p5", VERY_HIGH, LARGE, "node5")],
     pod("p", HIGH, LARGE), (), FORTY_PERCENT, 4, {"node1": ["p1"], "node3": ["p3"]}),
    ("the dry run looks past the limit until a candidate violates no PDB",
     FIVE, [pod("p1", MID, LARGE, "node1", app="foo"), pod("p2", MID, LARGE, "node2", app="foo"),
            pod("p3", MID, LARGE, "node3"), pod("p4", MID, LARGE, "node4"), pod("p5", MID, LARGE, "node5", app="foo")],
     pod("p", HIGH, LARGE), [pdb(3, app="foo")], PreemptionArgs(40, 2), 4,
     {"node5": (["p5"], 1), "node1": (["p1"], 1), "node3": ["p3"]}),
]


@pytest.mark.parametrize("nodes, pods, preemptor, pdbs, args, offset, expected",
                         [case[1:] for case in DRY_RUN], ids=[case[0] for case in DRY_RUN])
def test_dry_run_preemption(nodes: list[Node], pods: list[Pod], preemptor: Pod, pdbs: list[PodDisruptionBudget],
                            args: PreemptionArgs | None, offset: int, expected: dict[str, Any]) -> None:
    assert summary(dry_run(nodes, pods, preemptor, pdbs, args or PreemptionArgs(), offset)) == expected


def test_pod_topology_spread_failures_are_resolved_by_preempting_the_pods_that_skew_it() -> None:
    from builders import req, spread
    nodes = [node("node-a", zone="zone1"), node("node-b", zone="zone1"), node("node-x", zone="zone2")]
    pods = [pod("pod-a1", MID, None, "node-a", foo=""), pod("pod-a2", LOW, None, "node-a", foo=""),
            pod("pod-b1", LOW, None, "node-b", foo=""), pod("pod-x1", HIGH, None, "node-x", foo=""),
            pod("pod-x2", HIGH, None, "node-x", foo="")]
    exists = selector(req("foo", "Exists"))
    preemptor = make_pod("p").priority(HIGH).label("foo", "").spread(spread(1, "zone", exists)) \
        .spread(spread(1, "hostname", exists)).build()
    assert summary(dry_run(nodes, pods, preemptor)) == {"node-a": ["pod-a2"], "node-b": ["pod-b1"]}


# ------------------------------------------------------------------------------- TestSelectBestCandidate


THREE = ["node1", "node2", "node3"]

SELECT = [
    ("a pod that fits on both nodes when lower-priority pods are preempted takes either",
     ["node1", "node2"], pod("p", HIGH, LARGE),
     [pod("p1", MID, LARGE, "node1", start=0), pod("p2", MID, LARGE, "node2", start=0)], {"node1", "node2"}),
    ("the node whose highest victim priority is lowest is picked",
     THREE, pod("p", HIGH, VERY_LARGE),
     [pod("p1.1", MID, MEDIUM, "node1", 0), pod("p1.2", MID, LARGE, "node1", 0), pod("p2.1", MID, MEDIUM, "node2", 0),
      pod("p2.2", LOW, MEDIUM, "node2", 0), pod("p3.1", LOW, MEDIUM, "node3", 0), pod("p3.2", LOW, MEDIUM, "node3", 0)],
     {"node3"}),
    ("when the highest priorities are the same the smallest sum of priorities is picked",
     THREE, pod("p", HIGH, VERY_LARGE),
     [pod("p1.1", MID, MEDIUM, "node1", 0), pod("p1.2", MID, LARGE, "node1", 0), pod("p2.1", MID, LARGE, "node2", 0),
      pod("p2.2", LOW, MEDIUM, "node2", 0), pod("p3.1", MID, MEDIUM, "node3", 0), pod("p3.2", MID, MEDIUM, "node3", 0)],
     {"node2"}),
    ("when the highest priority and the sum are the same the fewest victims are picked",
     THREE, pod("p", HIGH, VERY_LARGE),
     [pod("p1.1", MID, SMALL, "node1", 0), pod("p1.2", NEG, SMALL, "node1", 0), pod("p1.3", MID, SMALL, "node1", 0),
      pod("p1.4", NEG, SMALL, "node1", 0), pod("p2.1", MID, LARGE, "node2", 0), pod("p2.2", NEG, MEDIUM, "node2", 0),
      pod("p3.1", MID, MEDIUM, "node3", 0), pod("p3.2", NEG, SMALL, "node3", 0), pod("p3.3", LOW, SMALL, "node3", 0)],
     {"node2"}),
    ("the sum of priorities is taken after shifting them all above zero",
     THREE, pod("p", HIGH, VERY_LARGE),
     [pod("p1.1", MID, SMALL, "node1", 0), pod("p1.2", NEG, SMALL, "node1", 0), pod("p1.3", NEG, SMALL, "node1", 0),
      pod("p2.1", MID, LARGE, "node2", 0), pod("p2.2", NEG, MEDIUM, "node2", 0), pod("p3.1", MID, MEDIUM, "node3", 0),
      pod("p3.2", NEG, SMALL, "node3", 0), pod("p3.3", LOW, SMALL, "node3", 0)],
     {"node2"}),
    ("the lowest highest priority wins even against a smaller sum or fewer victims elsewhere",
     ["node1", "node2", "node3", "node4"], pod("p", VERY_HIGH, VERY_LARGE),
     [pod("p1.1", MID, SMALL, "node1", 0), pod("p1.2", LOW, SMALL, "node1", 0), pod("p1.3", LOW, SMALL, "node1", 0),
      pod("p2.1", HIGH, LARGE, "node2", 0), pod("p3.1", MID, MEDIUM, "node3", 0), pod("p3.2", LOW, SMALL, "node3", 0),
      pod("p3.3", LOW, SMALL, "node3", 0), pod("p3.4", LOW, MEDIUM, "node3", 0), pod("p4.1", MID, MEDIUM, "node4", 0),
      pod("p4.2", MID, SMALL, "node4", 0), pod("p4.3", MID, SMALL, "node4", 0), pod("p4.4", NEG, SMALL, "node4", 0)],
     {"node1"}),
    ("with the same priorities and as many victims the node whose victims started last is picked",
     THREE, pod("p", HIGH, VERY_LARGE),
     [pod("p1.1", MID, MEDIUM, "node1", 2), pod("p1.2", MID, MEDIUM, "node1", 2), pod("p2.1", MID, MEDIUM, "node2", 3),
      pod("p2.2", MID, MEDIUM, "node2", 3), pod("p3.1", MID, MEDIUM, "node3", 1), pod("p3.2", MID, MEDIUM, "node3", 1)],
     {"node2"}),
    ("the start compared is the earliest of each node's highest-priority victims",
     THREE, pod("p", HIGH, VERY_LARGE),
     [pod("p1.1", MID, MEDIUM, "node1", 4), pod("p1.2", MID, MEDIUM, "node1", 2), pod("p2.1", MID, MEDIUM, "node2", 5),
      pod("p2.2", MID, MEDIUM, "node2", 1), pod("p3.1", MID, MEDIUM, "node3", 3), pod("p3.2", MID, MEDIUM, "node3", 6)],
     {"node3"}),
    ("with different priorities the start of the highest-priority victim decides",
     THREE, pod("p", HIGH, VERY_LARGE),
     [pod("p1.1", LOW, MEDIUM, "node1", 4), pod("p1.2", MID, MEDIUM, "node1", 2), pod("p2.1", MID, MEDIUM, "node2", 6),
      pod("p2.2", LOW, MEDIUM, "node2", 1), pod("p3.1", LOW, MEDIUM, "node3", 3), pod("p3.2", MID, MEDIUM, "node3", 5)],
     {"node2"}),
]


@pytest.mark.parametrize("names, preemptor, pods, expected", [c[1:] for c in SELECT], ids=[c[0] for c in SELECT])
def test_select_best_candidate(names: list[str], preemptor: Pod, pods: list[Pod], expected: set[str]) -> None:
    for offset in range(len(names)):  # whatever node the dry run starts from
        chosen = pick_one_node(dry_run([node(n) for n in names], pods, preemptor, offset=offset))
        assert chosen is not None and chosen.node in expected


def test_the_number_of_candidates_is_a_percentage_of_the_nodes_at_least_the_absolute_minimum() -> None:
    assert [calculate_num_candidates(n) for n in (5, 100, 1000, 5000)] == [5, 100, 100, 500]
    assert calculate_num_candidates(5, FORTY_PERCENT) == 2


# --------------------------------------------------------------------------- TestPostFilter (through simulate)


ONE_POD = {"pods": 1}


def slot(name: str, **labels: str) -> Node:
    """A node with room for one pod and nothing else (upstream's onePodRes)."""
    b = make_node(name).alloc(pods=1).label("hostname", name)
    for k, v in labels.items():
        b = b.label(k, v)
    return b.build()


def small_node(name: str) -> Node:
    return make_node(name).alloc(cpu="200m", memory=400, pods=110).label("hostname", name).build()


def cpu_node(name: str) -> Node:
    """400m cpu, memory to spare: upstream's statuses of these cases come from the cpu alone."""
    return make_node(name).alloc(cpu="400m", memory="1Gi", pods=110).label("hostname", name).build()


def crowd(on: str) -> list[Pod]:
    """A high-priority pod of 200m and a low-priority one of 100m: a 300m pod does not fit even without the
    low-priority one (upstream's "no enough resource after removing low priority pods")."""
    return [pod(f"{on}-high", HIGH, MEDIUM, on), pod(f"{on}-low", LOW, SMALL, on)]


def tainted(n: Node) -> Node:
    from podplan.models.taints import Taint
    from dataclasses import replace
    return replace(n, taints=(Taint("dedicated", "infra", "NoSchedule"),))


POST_FILTER = [
    ("a higher-priority pod preempts the pod holding the node's only slot",
     [slot("node1")], [pod("p1", LOW, on="node1")], pod("p", HIGH), [("default/p", "node1", ["default/p1"])], None),
    ("a pod of tied priority is still unschedulable",
     [slot("node1")], [pod("p1", LOW, on="node1")], pod("p", LOW), [],
     "0/1 nodes are available: 1 Too many pods. "
     "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod."),
    ("a node the filters call unresolvable is no candidate",
     [tainted(slot("node1"))], [pod("p1", LOW, on="node1")], pod("p", HIGH), [],
     "0/1 nodes are available: 1 node(s) had untolerated taint(s). "
     "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."),
    ("the pod is made schedulable on the one node with a lower-priority pod",
     [slot("node1"), slot("node2")], [pod("p1", HIGH, on="node1"), pod("p2", LOW, on="node2")], pod("p", MID),
     [("default/p", "node2", ["default/p2"])], None),
    ("without candidates the message counts each node's reason after removing the lower-priority pods",
     [cpu_node("node1"), cpu_node("node2")], [*crowd("node1"), *crowd("node2")], pod("p", HIGH, LARGE), [],
     "0/2 nodes are available: 2 Insufficient cpu. preemption: 0/2 nodes are available: 2 Insufficient cpu."),
    ("mixed reasons: no lower-priority pod on two nodes, not enough cpu on the third",
     [cpu_node("node1"), cpu_node("node2"), cpu_node("node3")],
     [pod("p1", HIGH, MEDIUM, "node1"), *crowd("node2"), pod("p3", HIGH, MEDIUM, "node3")], pod("p", HIGH, LARGE), [],
     "0/3 nodes are available: 3 Insufficient cpu. "
     "preemption: 0/3 nodes are available: 1 Insufficient cpu, 2 No preemption victims found for incoming pod."),
    ("mixed reasons: two unresolvable nodes and two without enough cpu",
     [cpu_node("node1"), cpu_node("node2"), tainted(cpu_node("node3")), tainted(cpu_node("node4"))],
     [*crowd("node1"), *crowd("node2")], pod("p", HIGH, LARGE), [],
     "0/4 nodes are available: 2 Insufficient cpu, 2 node(s) had untolerated taint(s). "
     "preemption: 0/4 nodes are available: 2 Insufficient cpu, 2 Preemption is not helpful for scheduling."),
    ("a pod larger than the node is no candidate there (NodeResourcesFit calls it unresolvable)",
     [small_node("node1")], [pod("p1", LOW, on="node1")], pod("p", HIGH, LARGE), [],
     "0/1 nodes are available: 1 Insufficient cpu. "
     "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."),
    ("a pod with preemptionPolicy Never preempts nobody",
     [slot("node1")], [pod("p1", LOW, on="node1")],
     make_pod("p").priority(HIGH).set(preemption_policy="Never").build(), [],
     "0/1 nodes are available: 1 Too many pods. preemption: not eligible due to preemptionPolicy=Never."),
    ("a pod nominated where a lower-priority victim is still terminating waits for it",
     [slot("node1")],
     [make_pod("p1").priority(LOW).on("node1").set(terminating=True, raw={"status": {"conditions": [
         {"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler"}]}}).build()],
     make_pod("p").priority(HIGH).set(nominated_node_name="node1").build(), [],
     "0/1 nodes are available: 1 Too many pods. "
     "preemption: not eligible due to a terminating pod on the nominated node."),
]


@pytest.mark.parametrize("nodes, pods, preemptor, preemptions, message", [c[1:] for c in POST_FILTER],
                         ids=[c[0] for c in POST_FILTER])
def test_post_filter(nodes: list[Node], pods: list[Pod], preemptor: Pod, preemptions: list[tuple[str, str, list[str]]],
                     message: str | None) -> None:
    cluster = cluster_of(nodes, [*pods, preemptor])
    plan = simulate(cluster, preemption=True)
    assert [(p.preemptor, p.node, list(p.victims)) for p in plan.preemptions] == preemptions
    if message is None:
        assert plan.placements == {preemptor.key: preemptions[0][1]}
    else:
        assert plan.pending == {preemptor.key: message}
    check(cluster, plan)  # the verifier judges the final state without the victims


def test_the_minimum_highest_priority_node_is_picked_among_pdb_violating_ones() -> None:
    # upstream: "pod can be made schedulable on minHighestPriority node"
    nodes = [slot("node1"), slot("node2")]
    pods = [pod("p1", HIGH, on="node1", pdb="non-violating"), pod("p2", LOW, on="node1", pdb="violating"),
            pod("p3", MID, on="node2", pdb="violating")]
    preemptor = pod("p", VERY_HIGH)
    cluster = cluster_of(nodes, [*pods, preemptor], pdbs=(pdb("100%", pdb="violating"), pdb(0, pdb="non-violating")))
    plan = simulate(cluster, preemption=True)
    assert [(p.node, p.victims) for p in plan.preemptions] == [("node2", ("default/p3",))]


# -------------------------------------------------------------------------------------------- in simulate


def owned(name: str, kind: str, owner: str, priority: int, on: str, size: tuple[str, int] = LARGE) -> Pod:
    return make_pod(name).priority(priority).owner(kind, owner).req(cpu=size[0], memory=size[1]).on(on).build()


def test_victims_of_controllers_come_back_as_pending_pods_and_bare_pods_do_not() -> None:
    nodes = [node("node1", pods=3)]
    pods = [owned("web-0", "StatefulSet", "web", LOW, "node1", SMALL),
            owned("batch-abcde", "ReplicaSet", "batch", LOW, "node1", SMALL),
            pod("debug", LOW, SMALL, "node1")]
    preemptor = pod("p", HIGH, VERY_LARGE)
    cluster = cluster_of(nodes, [*pods, preemptor])
    plan = simulate(cluster, preemption=True)
    assert plan.placements == {"default/p": "node1"}
    assert sorted(plan.removed) == ["default/batch-abcde", "default/debug", "default/web-0"]
    again = {p.name: p for p in plan.recreated}
    assert "web-0" in again and "debug" not in again, "a StatefulSet's pod keeps its name, a bare pod is gone"
    (replica,) = [n for n in again if n != "web-0"]
    assert replica.startswith("batch-") and replica != "batch-abcde" and again[replica].node_name == ""
    assert set(plan.pending) == {"default/web-0", f"default/{replica}"}, "they queue like any pod, and find no room"
    after = after_preemption(cluster, plan)
    assert {p.key for p in after.pods} == set() and {p.key for p in after.pending} == {
        "default/p", "default/web-0", f"default/{replica}"}
    assert after_preemption(after, plan) == after
    check(cluster, plan)


def test_a_recreated_victim_is_placed_where_room_is_left() -> None:
    nodes = [node("node1"), node("node2")]
    pods = [owned("batch-abcde", "ReplicaSet", "batch", LOW, "node1", LARGE),
            pod("big", HIGH, LARGE, "node2")]
    preemptor = pod("p", HIGH, LARGE)
    plan = simulate(cluster_of(nodes, [*pods, preemptor]), preemption=True)
    (again,) = plan.recreated
    assert plan.placements == {"default/p": "node1"}
    assert plan.pending == {again.key: plan.pending[again.key]} and "No preemption victims" in plan.pending[again.key]


def test_without_preemption_the_simulator_leaves_the_pod_pending_and_evicts_nobody() -> None:
    cluster = cluster_of([slot("node1")], [pod("p1", LOW, on="node1"), pod("p", HIGH)])
    plan = simulate(cluster)
    assert plan.preemptions == () and plan.pending == {"default/p": "0/1 nodes are available: 1 Too many pods."}


def test_recreate_keeps_the_statefulset_name_and_draws_a_new_one_for_other_controllers() -> None:
    used = {"default/web-0", "default/batch-abcde"}
    sts = recreate(owned("web-0", "StatefulSet", "web", LOW, "node1"), used, 7)
    rs = recreate(owned("batch-abcde", "ReplicaSet", "batch", LOW, "node1"), used, 8)
    assert sts is not None and (sts.name, sts.node_name, sts.order) == ("web-0", "", 7)
    assert rs is not None and rs.name.startswith("batch-") and rs.key not in {"default/batch-abcde"} and rs.key in used
    assert recreate(pod("bare", LOW, on="node1"), used, 9) is None


# ------------------------------------------------------------------------------------------ from the CLI


INSTANCE = str(__import__("pathlib").Path(__file__).resolve().parents[1] / "instances" / "preemption.yaml")


def run(*args: str) -> tuple[int, str]:
    from click.testing import CliRunner
    from podplan.cli import main
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.output


def test_simulate_preempts_batch_pods_for_the_serving_pods_of_the_bundled_instance() -> None:
    import json
    code, out = run("simulate", INSTANCE, "-o", "json")
    assert code == 0, out
    doc = json.loads(out)
    assert doc["preemptions"] == [
        # the indexer must run in zone a: node-1's two pods go, the StatefulSet's despite its PDB
        {"preemptor": "shop/search-indexer", "node": "node-1", "victims": ["shop/cache-0", "shop/batch-7d4f9-h2x8q"]},
        # equal victims elsewhere: the node whose victim started last (10:10, then 10:05)
        {"preemptor": "shop/checkout-t9sh2vknct-8fqr2", "node": "node-3", "victims": ["shop/batch-7d4f9-t9k2w"]},
        {"preemptor": "shop/checkout-t9sh2vknct-pclb7", "node": "node-2", "victims": ["shop/batch-7d4f9-m4c7z"]},
    ]
    pending = {p["pod"]: p["reason"] for p in doc["pending"]}
    assert pending["shop/report-builder"] == ("0/3 nodes are available: 3 Insufficient cpu. "
                                              "preemption: not eligible due to preemptionPolicy=Never.")
    assert pending["shop/cache-0"].endswith("preemption: 0/3 nodes are available: "
                                            "3 No preemption victims found for incoming pod.")
    assert len([k for k in pending if k.startswith("shop/batch-7d4f9-")]) == 3, "the ReplicaSet's pods come back"
    assert doc["objective"]["placed_by_priority"] == {"1000": 3}


def test_simulate_shows_the_preemptions_in_its_table_and_no_preemption_turns_them_off() -> None:
    code, out = run("simulate", INSTANCE)
    assert code == 0 and "PREEMPTOR" in out
    assert "shop/search-indexer              node-1   shop/cache-0, shop/batch-7d4f9-h2x8q" in out
    code, out = run("simulate", INSTANCE, "--no-preemption", "-o", "json")
    import json
    doc = json.loads(out)
    assert code == 0 and doc["preemptions"] == [] and doc["placements"] == [] and len(doc["pending"]) == 4


def test_the_emitted_state_leaves_the_victims_out_and_holds_the_recreated_pods() -> None:
    import yaml
    code, out = run("simulate", INSTANCE, "--emit", "state")
    assert code == 0
    pods = {d["metadata"]["name"]: d for d in yaml.safe_load_all(out) if d and d["kind"] == "Pod"}
    assert not {"batch-7d4f9-h2x8q", "batch-7d4f9-m4c7z", "batch-7d4f9-t9k2w"} & set(pods)
    assert "nodeName" not in pods["cache-0"]["spec"] and "status" not in pods["cache-0"]
    assert pods["search-indexer"]["spec"]["nodeName"] == "node-1" and pods["cache-1"]["spec"]["nodeName"] == "node-2"
    assert len([n for n in pods if n.startswith("batch-7d4f9-")]) == 3


# ------------------------------------------------------------------------------- optimal: solve --preempt


def solve_preempt(cluster: Any, allow_pdb_violations: bool = False) -> Any:
    import time
    from podplan.optimizer.defaultpreemption.batch import solve_preempt as solve
    from podplan.optimizer.runner import SolverParams
    plan = solve(cluster, SolverParams(time_limit=10, workers=1), deadline=time.perf_counter() + 10,
                 allow_pdb_violations=allow_pdb_violations)
    check(cluster, plan)  # verified on the final state
    return plan


def test_the_optimum_evicts_the_one_pod_that_makes_room_rather_than_two() -> None:
    nodes = [node("node1"), node("node2")]
    # 400m: node1 needs its 300m pod gone, node2 both of its 200m pods
    pods = [pod("big", LOW, LARGE, "node1"), pod("small-1", LOW, MEDIUM, "node2"), pod("small-2", LOW, MEDIUM, "node2"),
            make_pod("p").priority(HIGH).req(cpu="400m", memory=400).build()]
    plan = solve_preempt(cluster_of(nodes, pods))
    assert plan.placements == {"default/p": "node1"} and plan.removed == {"default/big"}


def test_the_optimum_evicts_the_lowest_priority_it_can() -> None:
    nodes = [node("node1"), node("node2")]
    pods = [pod("mid", MID, LARGE, "node1"), pod("low", LOW, LARGE, "node2"), pod("p", HIGH, LARGE)]
    plan = solve_preempt(cluster_of(nodes, pods))
    assert plan.placements == {"default/p": "node2"} and plan.removed == {"default/low"}
    assert plan.status == "OPTIMAL"


@pytest.mark.parametrize("policy", ["", "Never"], ids=["a pod of equal priority evicts nobody",
                                                      "a pod with preemptionPolicy Never evicts nobody"])
def test_the_optimum_never_evicts_for_a_pod_that_may_not_preempt(policy: str) -> None:
    nodes = [node("node1")]
    running = pod("running", HIGH if not policy else LOW, LARGE, "node1")
    waiting = make_pod("p").priority(HIGH).req(cpu="300m", memory=300).set(preemption_policy=policy).build()
    plan = solve_preempt(cluster_of(nodes, [running, waiting]))
    assert plan.placements == {} and plan.removed == frozenset() and "default/p" in plan.pending


def test_the_optimum_respects_pod_disruption_budgets_unless_told_otherwise() -> None:
    nodes = [node("node1")]
    pods = [pod("guarded", LOW, LARGE, "node1", app="db"), pod("p", HIGH, LARGE)]
    cluster = cluster_of(nodes, pods, pdbs=(pdb(1, app="db"),))
    assert solve_preempt(cluster).placements == {}
    plan = solve_preempt(cluster, allow_pdb_violations=True)
    assert plan.placements == {"default/p": "node1"} and plan.removed == {"default/guarded"}


def test_solve_preempt_on_the_bundled_instance_keeps_the_pdb_and_places_the_checkout_pods() -> None:
    import json
    code, out = run("solve", INSTANCE, "--preempt", "--time-limit", "20", "-o", "json")
    assert code == 0, out
    doc = json.loads(out)
    assert doc["status"] == "OPTIMAL" and doc["objective"]["placed_by_priority"] == {"1000": 2}
    victims = [v for p in doc["preemptions"] for v in p["victims"]]
    assert len(victims) == 2 and "shop/cache-0" not in victims
    code, out = run("solve", INSTANCE, "--preempt", "--allow-pdb-violations", "--time-limit", "20", "-o", "json")
    doc = json.loads(out)
    assert code == 0 and doc["objective"]["placed_by_priority"] == {"1000": 3}
    assert {"shop/cache-0", "shop/batch-7d4f9-h2x8q"} <= {v for p in doc["preemptions"] for v in p["victims"]}


def _evictions(*args: str) -> list[tuple[str, str]]:
    """(wave comment or "", evicted ns/name) in the order solve --preempt --emit evictions prints them."""
    code, out = run("solve", INSTANCE, "--preempt", "--time-limit", "20", "--emit", "evictions", *args)
    assert code == 0, out
    import yaml

    order, wave = [], ""
    for chunk in out.split("---"):
        comments = [line for line in chunk.splitlines() if line.startswith("# wave")]
        wave = comments[-1] if comments else wave
        doc = yaml.safe_load(chunk)
        if doc:
            assert doc["apiVersion"] == "policy/v1" and doc["kind"] == "Eviction"
            order.append((wave, f"{doc['metadata']['namespace']}/{doc['metadata']['name']}"))
    return order


def test_solve_preempt_prints_an_eviction_for_each_victim_within_every_budget() -> None:
    import json

    victims = {v for p in json.loads(run("solve", INSTANCE, "--preempt", "--time-limit", "20", "-o", "json")[1])[
        "preemptions"] for v in p["victims"]}
    evicted = _evictions()
    assert {pod for _, pod in evicted} == victims and all(w.startswith("# wave 1") for w, _ in evicted)


def test_victims_beyond_a_budget_come_last_in_a_wave_of_their_own() -> None:
    evicted = _evictions("--allow-pdb-violations")
    assert ("# wave 2: beyond a PodDisruptionBudget (the Eviction API refuses these with 429 until it allows them)",
            "shop/cache-0") in evicted
    assert evicted[-1][1] == "shop/cache-0"


def test_compare_with_preempt_judges_each_column_after_its_own_preemptions() -> None:
    import json

    code, out = run("compare", INSTANCE, "--preempt", "--time-limit", "20", "-o", "json")
    assert code == 0, out
    cols = {c["name"]: c for c in json.loads(out)["columns"]}
    assert set(cols) == {"greedy", "optimal"}  # no re-placement columns with --preempt
    # kube-scheduler's preemption breaks the cache PDB to place the indexer; the optimum keeps it by default
    assert cols["greedy"]["victims"] == 4 and cols["optimal"]["victims"] == 2
    assert cols["greedy"]["violations"] == 0 and cols["optimal"]["violations"] == 0
    code, out = run("compare", INSTANCE, "--preempt", "--allow-pdb-violations", "--time-limit", "20", "-o", "json")
    cols = {c["name"]: c for c in json.loads(out)["columns"]}
    assert cols["optimal"]["placed_by_priority"]["1000"]["placed"] >= cols["greedy"]["placed_by_priority"]["1000"]["placed"]
