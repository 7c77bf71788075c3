"""The verifier: every kind of violation in a final state, pre-existing ones apart, and the preference terms
of notes/semantics.md on hand-computed clusters."""
from __future__ import annotations

import pytest

from builders import cluster_of, make_node, make_pod, pod_term, req, selector, spread, term
from podplan.optimizer.policy import Policy
from podplan.optimizer.verify import verify, verify_state

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"


def node(name: str, zone: str = "a", cpu: str = "4", **labels: str):
    return make_node(name).label(HOST, name).label(ZONE, zone).labels(labels).alloc(
        cpu=cpu, memory="16Gi", pods=110).build()


def found(report) -> set[tuple[str, str, str]]:
    return {(v.pod.split("/")[1], v.plugin, v.reason) for v in report.violations}


TWO_NODES = [node("n1", zone="a"), node("n2", zone="b")]

# (nodes, pods, placements, violations expected: (pod, plugin, reason))
CASES = [
    pytest.param(
        [node("n1", cpu="1")],
        [make_pod("old").req(cpu="600m").on("n1").build(), make_pod("new").req(cpu="600m").build()],
        {"new": "n1"},
        {("old", "NodeResourcesFit", "Insufficient cpu"), ("new", "NodeResourcesFit", "Insufficient cpu")},
        id="two pods over the node's allocatable cpu: both are judged against the node total"),
    pytest.param(
        [make_node("t").taint("dedicated", "gpu").build()], [make_pod("new").build()], {"new": "t"},
        {("new", "TaintToleration", "node(s) had untolerated taint(s)")},
        id="a pod on a node whose NoSchedule taint it does not tolerate"),
    pytest.param(
        TWO_NODES, [make_pod("new").node_selector(disk="ssd").build()], {"new": "n1"},
        {("new", "NodeAffinity", "node(s) didn't match Pod's node affinity/selector")},
        id="a pod on a node its nodeSelector does not match"),
    pytest.param(
        TWO_NODES,
        [make_pod("old").label("app", "db").on("n1").build(),
         make_pod("new").pod_anti_affinity(pod_term(HOST, selector(app="db"))).build()],
        {"new": "n1"},
        {("new", "InterPodAffinity", "node(s) didn't match pod anti-affinity rules"),
         ("old", "InterPodAffinity", "node(s) didn't satisfy existing pods anti-affinity rules")},
        id="anti-affinity of the placed pod against an existing one: both sides are flagged"),
    pytest.param(
        TWO_NODES,
        [make_pod("old").on("n1").pod_anti_affinity(pod_term(ZONE, selector(app="web"))).build(),
         make_pod("new").label("app", "web").build()],
        {"new": "n1"},
        {("new", "InterPodAffinity", "node(s) didn't satisfy existing pods anti-affinity rules"),
         ("old", "InterPodAffinity", "node(s) didn't match pod anti-affinity rules")},
        id="anti-affinity of an existing pod against the placed one: both sides are flagged"),
    pytest.param(
        TWO_NODES,
        [make_pod("cache").label("app", "cache").on("n2").build(),
         make_pod("new").pod_affinity(pod_term(HOST, selector(app="cache"))).build()],
        {"new": "n1"},
        {("new", "InterPodAffinity", "node(s) didn't match pod affinity rules")},
        id="required affinity with the matching pod on another node"),
    pytest.param(
        TWO_NODES,
        [make_pod("new").label("app", "web").pod_affinity(pod_term(HOST, selector(app="web"))).build()],
        {"new": "n1"}, set(),
        id="a self-affine pod alone may start its group anywhere (first-pod rule)"),
    pytest.param(
        TWO_NODES,
        [make_pod("old").label("app", "web").on("n2").build(),
         make_pod("new").label("app", "web").pod_affinity(pod_term(HOST, selector(app="web"))).build()],
        {"new": "n1"},
        {("new", "InterPodAffinity", "node(s) didn't match pod affinity rules")},
        id="a self-affine pod is not alone once another pod matches: it must join it"),
    pytest.param(
        TWO_NODES,
        [make_pod(f"w{i}").label("app", "web").spread(spread(1, ZONE, selector(app="web"))).build() for i in range(2)],
        {"w0": "n1", "w1": "n1"},
        {("w0", "PodTopologySpread", "node(s) didn't match pod topology spread constraints"),
         ("w1", "PodTopologySpread", "node(s) didn't match pod topology spread constraints")},
        id="two zone-spread pods in one zone of two: skew 2 over maxSkew 1"),
    pytest.param(
        TWO_NODES + [make_node("bare").build()],
        [make_pod("w").label("app", "web").spread(spread(1, ZONE, selector(app="web"))).build()],
        {"w": "bare"},
        {("w", "PodTopologySpread", "node(s) didn't match pod topology spread constraints (missing required label)")},
        id="a spread pod on a node without the topology key"),
    pytest.param(
        [node("n1")], [make_pod("old").host_port(8080).on("n1").build(), make_pod("new").host_port(8080).build()],
        {"new": "n1"},
        {("old", "NodePorts", "node(s) didn't have free ports for the requested pod ports"),
         ("new", "NodePorts", "node(s) didn't have free ports for the requested pod ports")},
        id="two pods holding one host port on one node"),
    pytest.param(
        [node("n1", cpu="1"), make_node("t").taint("k", "v").alloc(cpu="1", memory="1Gi", pods=10).build()],
        [make_pod("new").req(cpu="2").node_selector(disk="ssd").build()], {"new": "t"},
        {("new", "TaintToleration", "node(s) had untolerated taint(s)"),
         ("new", "NodeAffinity", "node(s) didn't match Pod's node affinity/selector"),
         ("new", "NodeResourcesFit", "Insufficient cpu")},
        id="every plugin a pod breaks is listed, not just the first"),
]


@pytest.mark.parametrize("nodes, pods, placements, expected", CASES)
def test_verify_flags_each_kind_of_violation(nodes, pods, placements, expected):
    cluster = cluster_of(nodes, pods)
    report = verify(cluster, {f"default/{k}": n for k, n in placements.items()})
    assert found(report) == expected
    assert report.ok == (not expected)
    assert not any(v.preexisting for v in report.violations)


def test_an_existing_violation_that_held_before_the_plan_is_pre_existing_and_does_not_fail_it():
    cluster = cluster_of([make_node("t").taint("k", "v").build(), node("n1")],
                         [make_pod("old").on("t").build(), make_pod("new").build()])
    report = verify(cluster, {"default/new": "n1"})
    assert report.ok
    assert [(v.pod, v.plugin, v.preexisting) for v in report.violations] == [("default/old", "TaintToleration", True)]


def test_an_existing_pod_the_plan_breaks_is_a_failure_not_pre_existing():
    cluster = cluster_of(TWO_NODES, [make_pod("old").label("app", "web").on("n1")
                                     .spread(spread(1, ZONE, selector(app="web"))).build(),
                                     make_pod("new").label("app", "web").build()])
    report = verify(cluster, {"default/new": "n1"})
    assert not report.ok
    assert [(v.pod, v.plugin, v.preexisting) for v in report.violations] == [
        ("default/old", "PodTopologySpread", False)]


def test_an_existing_pod_already_breaking_one_rule_that_the_plan_makes_break_another_fails_the_plan():
    cluster = cluster_of([make_node("t").label(HOST, "t").taint("k", "v").alloc(cpu="1", memory="1Gi", pods=10).build()],
                         [make_pod("old").req(cpu="600m").on("t").build(),
                          make_pod("new").req(cpu="600m").toleration("k", "v").build()])
    report = verify(cluster, {"default/new": "t"})
    assert {(v.pod, v.plugin, v.preexisting) for v in report.violations} == {
        ("default/old", "TaintToleration", True), ("default/old", "NodeResourcesFit", False),
        ("default/new", "NodeResourcesFit", False)}
    assert not report.ok


def test_a_static_pod_breaking_a_taint_is_reported_but_never_fails():
    cluster = cluster_of([make_node("cp").taint("node-role.kubernetes.io/control-plane", "").build()],
                         [make_pod("etcd").set(mirror=True).on("cp").build()])
    report = verify_state(cluster)
    assert report.ok and [(v.pod, v.preexisting) for v in report.violations] == [("default/etcd", True)]


def test_a_plan_naming_an_unknown_pod_or_node_fails():
    cluster = cluster_of([node("n1")], [make_pod("p").build()])
    report = verify(cluster, {"default/ghost": "n1", "default/p": "nowhere"})
    assert {(v.pod, v.plugin, v.reason) for v in report.violations} == {
        ("default/ghost", "Plan", "pod is not a pending pod of the input"),
        ("default/p", "Plan", "node is not in the input")}
    assert not report.ok and report.placed == 0


def test_placed_counts_by_priority_highest_first():
    cluster = cluster_of([node("n1")], [make_pod("a").priority(5).build(), make_pod("b").build(),
                                        make_pod("c").priority(5).build()])
    report = verify(cluster, {"default/a": "n1", "default/b": "n1", "default/c": "n1"})
    assert report.placed == 3 and list(report.placed_by_priority.items()) == [(5, 2), (0, 1)]


# ------------------------------------------------------------------------------------- preference terms P

ZERO = {"node_affinity": 0, "pod_affinity": 0, "pod_anti_affinity": 0, "prefer_no_schedule": 0,
        "schedule_anyway_skew": 0}

PREFERENCE_CASES = [
    pytest.param(
        [node("n1", zone="a", disk="hdd")],
        [make_pod("p").preferred_node_affinity(7, term(req(ZONE, "In", "a")))
         .preferred_node_affinity(3, term(req("disk", "In", "ssd"))).on("n1").build()],
        {"node_affinity": 7},
        id="node affinity: the weights of the preferred terms the node matches (7 of 7+3)"),
    pytest.param(
        [node("n1", zone="a"), node("n2", zone="a")],
        [make_pod("db").label("app", "db").on("n2").build(),
         make_pod("p").preferred_pod_affinity(5, pod_term(ZONE, selector(app="db"))).on("n1").build()],
        {"pod_affinity": 5},
        id="pod affinity: a matching pod elsewhere in the same zone satisfies the term"),
    pytest.param(
        [node("n1", zone="a")],
        [make_pod("p").label("app", "db").preferred_pod_affinity(5, pod_term(ZONE, selector(app="db"))).on("n1").build()],
        {},
        id="pod affinity: the pod itself does not count as the OTHER pod"),
    pytest.param(
        [make_node("bare").build(), node("n2", zone="a")],
        [make_pod("db").label("app", "db").on("n2").build(),
         make_pod("p").preferred_pod_affinity(5, pod_term(ZONE, selector(app="db"))).on("bare").build()],
        {},
        id="pod affinity: a node without the topology key satisfies nothing"),
    pytest.param(
        [node("n1"), node("n2")],
        [make_pod("web").label("app", "web").on("n1").build(),
         make_pod("p").preferred_pod_anti_affinity(4, pod_term(HOST, selector(app="web"))).on("n1").build(),
         make_pod("q").preferred_pod_anti_affinity(9, pod_term(HOST, selector(app="web"))).on("n2").build()],
        {"pod_anti_affinity": -4},
        id="pod anti-affinity: minus the weight of each preferred term violated on the pod's own node"),
    pytest.param(
        [make_node("n1").taint("a", "1", "PreferNoSchedule").taint("b", "2", "PreferNoSchedule")
         .taint("c", "3", "NoSchedule").build()],
        [make_pod("p").toleration("a", "1", "PreferNoSchedule").toleration("c", "3").on("n1").build()],
        {"prefer_no_schedule": -10},
        id="PreferNoSchedule: ten per such taint the pod does not tolerate (one of two)"),
    pytest.param(
        [node("a1", zone="a"), node("a2", zone="a"), node("b1", zone="b")],
        [make_pod(f"w{i}").label("app", "web").spread(spread(1, ZONE, selector(app="web"), "ScheduleAnyway"))
         .on(n).build() for i, n in enumerate(["a1", "a2", "a1"])],
        {"schedule_anyway_skew": -20},
        id="ScheduleAnyway skew: one group of three pods, zones a=3 b=0, maxSkew 1: ten per pod over, two over"),
    pytest.param(
        [node("a1", zone="a"), node("b1", zone="b", disk="ssd")],
        [make_pod(f"w{i}").label("app", "web").node_selector(disk="ssd")
         .spread(spread(1, ZONE, selector(app="web"), "ScheduleAnyway")).on("b1").build() for i in range(3)],
        {},
        id="ScheduleAnyway skew: zone a is no domain of a group whose first pod's nodeSelector excludes it"),
    pytest.param(
        [node("a1", zone="a"), node("b1", zone="b")],
        [make_pod("w0").label("app", "web").spread(spread(1, ZONE, selector(app="web"), "ScheduleAnyway")).on("a1").build(),
         make_pod("w1").label("app", "web").on("a1").build(),
         make_pod("w2").label("app", "web").on("a1").build()],
        {"schedule_anyway_skew": -20},
        id="ScheduleAnyway skew: pods without the constraint still count in the group's domains (a=3, b=0)"),
]


@pytest.mark.parametrize("nodes, pods, expected", PREFERENCE_CASES)
def test_preference_terms_on_hand_computed_states(nodes, pods, expected):
    report = verify_state(cluster_of(nodes, pods))
    assert report.terms == {**ZERO, **expected}
    assert report.preference == sum(expected.values())


def test_preference_terms_count_newly_placed_pods_like_existing_ones():
    nodes = [node("n1"), node("n2")]
    pods = [make_pod("web").label("app", "web").on("n1").build(),
            make_pod("p").preferred_pod_affinity(6, pod_term(HOST, selector(app="web"))).build()]
    assert verify(cluster_of(nodes, pods), {"default/p": "n1"}).terms["pod_affinity"] == 6
    assert verify(cluster_of(nodes, pods), {"default/p": "n2"}).terms["pod_affinity"] == 0


def test_multipliers_scale_and_sign_each_term():
    nodes = [make_node("n1").label(HOST, "n1").label(ZONE, "a").taint("x", "", "PreferNoSchedule").build()]
    pods = [make_pod("p").label("app", "web").preferred_node_affinity(2, term(req(ZONE, "In", "a")))
            .preferred_pod_anti_affinity(3, pod_term(ZONE, selector(app="web"))).on("n1").build(),
            make_pod("q").label("app", "web").on("n1").build()]
    m = Policy(node_affinity=5, pod_affinity=1, pod_anti_affinity=7, prefer_no_schedule=2, schedule_anyway_skew=1)
    report = verify_state(cluster_of(nodes, pods), m)
    assert report.terms == {**ZERO, "node_affinity": 10, "pod_anti_affinity": -21, "prefer_no_schedule": -4}
