"""PodTopologySpread: Filter (DoNotSchedule), Score (ScheduleAnyway and the system defaults) and the helpers the
optimizer and verifier use. Clusters are small; each test id reads as the situation it checks."""
from __future__ import annotations

import dataclasses

import pytest

from podplan.models.objects import Pod, Service, Workload
from podplan.models.selectors import LabelSelector, Requirement
from podplan.optimizer.podtopologyspread import (ERR_REASON_CONSTRAINTS_NOT_MATCH, ERR_REASON_NODE_LABEL_NOT_MATCH, PLUGIN,
                                         count_matching, default_selector, filter_constraints, go_round,
                                         node_eligible, score_constraints)
from podplan.models.loader import parse_documents
from podplan.optimizer.state import ClusterState
from tests.builders import make_node, make_pod, run_score, spread, state_of
from tests.builders import feasible_nodes as plugin_feasible_nodes

ZONE = "zone"
HOST = "kubernetes.io/hostname"
APP_WEB = LabelSelector((("app", "web"),))


def zoned(name: str, zone: str, **labels: str):
    return make_node(name).label(ZONE, zone).label(HOST, name).labels(labels)


def web(name: str, node: str, ns: str = "default") -> Pod:
    return make_pod(name).namespace(ns).label("app", "web").on(node).build()


def incoming(*constraints, labels: dict[str, str] | None = None, **fields) -> Pod:
    b = make_pod("incoming").labels(labels if labels is not None else {"app": "web"})
    for c in constraints:
        b = b.spread(c)
    return b.set(**fields).build()


def feasible_nodes(pod: Pod, state: ClusterState) -> list[str]:
    return plugin_feasible_nodes(PLUGIN, pod, state)


def final_scores(pod: Pod, state: ClusterState, candidates: list[str] | None = None) -> dict[str, int]:
    return run_score(PLUGIN, pod, state, candidates)


FOUR = [zoned("a1", "a").build(), zoned("a2", "a").build(), zoned("b1", "b").build(), zoned("b2", "b").build()]
THREE_ZONES = [zoned("a1", "a").build(), zoned("a2", "a").build(), zoned("b1", "b").build(), zoned("c1", "c").build()]
POOLED = [zoned("a1", "a", pool="x").build(), zoned("b1", "b", pool="x").build(), zoned("c1", "c").build()]
TAINTED_C = [zoned("a1", "a").build(), zoned("b1", "b").build(), zoned("c1", "c").taint("dedicated", "gpu").build()]
ALL4 = ["a1", "a2", "b1", "b2"]

FILTER_CASES = [
    pytest.param(FOUR, [], incoming(spread(1, ZONE, APP_WEB)), ALL4,
                 id="an empty cluster lets the pod land in either zone"),
    pytest.param(FOUR, [web("w1", "a1"), web("w2", "a2")], incoming(spread(1, ZONE, APP_WEB)), ["b1", "b2"],
                 id="zone a at 2 matching pods and zone b at 0 leave only zone b within maxSkew 1"),
    pytest.param(FOUR, [web("w1", "a1"), web("w2", "a2")], incoming(spread(2, ZONE, APP_WEB)), ["b1", "b2"],
                 id="with maxSkew 2 zone a at 2 against 0 would reach skew 3 and fails"),
    pytest.param(FOUR, [web("w1", "a1")], incoming(spread(2, ZONE, APP_WEB)), ALL4,
                 id="with maxSkew 2 zone a at 1 against 0 reaches skew 2 and fits"),
    pytest.param(FOUR, [web("w1", "a1"), web("w2", "a2")],
                 incoming(spread(1, ZONE, APP_WEB), labels={"app": "db"}), ["b1", "b2"],
                 id="a pod outside its own selector adds no +1 yet zone a at 2 still exceeds maxSkew 1"),
    pytest.param(FOUR, [web("w1", "a1")], incoming(spread(1, ZONE, APP_WEB), labels={"app": "db"}), ALL4,
                 id="a pod outside its own selector fits zone a at 1 against 0"),
    pytest.param(FOUR, [web("w1", "a1", ns="other"), web("w2", "a2", ns="other")],
                 incoming(spread(1, ZONE, APP_WEB)), ALL4,
                 id="matching pods in another namespace are not counted"),
    pytest.param(FOUR, [dataclasses.replace(web("w1", "a1"), terminating=True), web("w2", "b1")],
                 incoming(spread(1, HOST, APP_WEB)), ["a1", "a2", "b2"],
                 id="a terminating pod is not counted so a1 stays at 0 while b1 at 1 fails"),
    pytest.param(FOUR, [web("w1", "a1"), web("w2", "a2")], incoming(spread(1, ZONE, None)), ALL4,
                 id="a null labelSelector counts no pod and the pod does not match it"),
    pytest.param(FOUR, [web("w1", "a1"), web("w2", "a2")], incoming(spread(1, ZONE, LabelSelector())), ALL4,
                 id="an empty labelSelector counts no pod so every zone is at 0 plus the pod itself"),
    pytest.param(FOUR, [web("w1", "a1"), web("w2", "a2")],
                 incoming(spread(1, ZONE, APP_WEB, when="ScheduleAnyway")), ALL4,
                 id="a ScheduleAnyway constraint never filters"),
    pytest.param([zoned("a1", "a").build(), make_node("bare").label(HOST, "bare").build()], [],
                 incoming(spread(1, ZONE, APP_WEB)), ["a1"],
                 id="a node without the zone label is rejected"),
    pytest.param(THREE_ZONES, [web("w1", "a1"), web("w2", "b1"), web("w3", "c1")],
                 incoming(spread(1, ZONE, APP_WEB, min_domains=4)), [],
                 id="three zones at 1 with minDomains 4 take the global minimum as 0 so no zone fits"),
    pytest.param(THREE_ZONES, [web("w1", "a1"), web("w2", "b1"), web("w3", "c1")],
                 incoming(spread(1, ZONE, APP_WEB, min_domains=3)), ["a1", "a2", "b1", "c1"],
                 id="three zones at 1 with minDomains 3 keep the real minimum 1 so every zone fits"),
    pytest.param(POOLED, [web("w1", "a1")], incoming(spread(1, ZONE, APP_WEB), node_selector={"pool": "x"}),
                 ["b1", "c1"],
                 id="nodeAffinityPolicy Honor counts only zones a and b inside the nodeSelector"),
    pytest.param(POOLED, [web("w1", "a1"), web("w2", "b1")],
                 incoming(spread(1, ZONE, APP_WEB), node_selector={"pool": "x"}), ["a1", "b1", "c1"],
                 id="nodeAffinityPolicy Honor keeps empty zone c outside the nodeSelector out of the minimum"),
    pytest.param(POOLED, [web("w1", "a1"), web("w2", "b1")],
                 incoming(spread(1, ZONE, APP_WEB, affinity_policy="Ignore"), node_selector={"pool": "x"}), ["c1"],
                 id="nodeAffinityPolicy Ignore counts empty zone c outside the nodeSelector so zones a and b fail"),
    pytest.param(TAINTED_C, [web("w1", "a1"), web("w2", "b1")],
                 incoming(spread(1, ZONE, APP_WEB, taints_policy="Honor")), ["a1", "b1", "c1"],
                 id="nodeTaintsPolicy Honor keeps the untolerated tainted empty zone c out of the minimum"),
    pytest.param(TAINTED_C, [web("w1", "a1"), web("w2", "b1")], incoming(spread(1, ZONE, APP_WEB)), ["c1"],
                 id="nodeTaintsPolicy Ignore by default counts tainted empty zone c so zones a and b fail"),
    pytest.param(TAINTED_C, [web("w1", "a1"), web("w2", "b1")],
                 incoming(spread(1, ZONE, APP_WEB, taints_policy="Honor"),
                          tolerations=make_pod("t").toleration("dedicated", "gpu").build().tolerations), ["c1"],
                 id="nodeTaintsPolicy Honor still counts a tainted zone the pod tolerates"),
    pytest.param(FOUR, [web("w1", "a1"), web("w2", "b1"), web("w3", "b1")],
                 incoming(spread(1, ZONE, APP_WEB), spread(1, HOST, APP_WEB)), ["a2"],
                 id="zone spread wants zone a and hostname spread wants an empty node so only a2 fits"),
    pytest.param(FOUR, [web("w1", "a1"), web("w2", "a2"), web("w3", "b2")],
                 incoming(spread(1, ZONE, APP_WEB), spread(1, HOST, APP_WEB)), ["b1"],
                 id="zone spread wants zone b and hostname spread wants empty b1 so b1 alone fits"),
    pytest.param(FOUR, [web("w1", "a1"), web("w2", "a2"), make_pod("d1").label("tier", "db").on("b1").build()],
                 incoming(spread(1, ZONE, APP_WEB), spread(1, ZONE, LabelSelector((("tier", "db"),))),
                          labels={"app": "web", "tier": "db"}), [],
                 id="two zone constraints with different selectors count apart and want different zones"),
    pytest.param(FOUR, [web("w1", "a1"), web("w2", "a2"), make_pod("d1").label("tier", "db").on("b1").build()],
                 incoming(spread(1, ZONE, APP_WEB), spread(1, ZONE, LabelSelector((("tier", "db"),)))),
                 ["b1", "b2"],
                 id="a pod outside the second selector adds nothing there so zone b at 1 of 0 still fits"),
]


@pytest.mark.parametrize("nodes, pods, pod, expected", FILTER_CASES)
def test_filter_feasible_nodes(nodes, pods, pod, expected):
    assert feasible_nodes(pod, state_of(nodes, pods)) == expected


def test_missing_topology_label_is_unresolvable_with_upstream_text():
    state = state_of([zoned("a1", "a").build(), make_node("bare").build()], [])
    pod = incoming(spread(1, ZONE, APP_WEB))
    pre = PLUGIN.pre_filter(pod, state)
    (reason,) = PLUGIN.filter(pod, pre, state.nodes["bare"], state)
    assert reason.plugin == "PodTopologySpread"
    assert reason.reason == "node(s) didn't match pod topology spread constraints (missing required label)"
    assert reason.reason == ERR_REASON_NODE_LABEL_NOT_MATCH
    assert reason.unresolvable


def test_skew_violation_is_resolvable_with_upstream_text():
    state = state_of(FOUR, [web("w1", "a1"), web("w2", "a2")])
    pod = incoming(spread(1, ZONE, APP_WEB))
    (reason,) = PLUGIN.filter(pod, PLUGIN.pre_filter(pod, state), state.nodes["a1"], state)
    assert reason.reason == "node(s) didn't match pod topology spread constraints" == ERR_REASON_CONSTRAINTS_NOT_MATCH
    assert not reason.unresolvable


@pytest.mark.parametrize("zone_first, expected", [
    pytest.param(True, ERR_REASON_CONSTRAINTS_NOT_MATCH,
                 id="a1 lacking rack in crowded zone a fails on skew when the zone constraint comes first"),
    pytest.param(False, ERR_REASON_NODE_LABEL_NOT_MATCH,
                 id="a1 lacking rack in crowded zone a fails on the missing label when rack comes first"),
])
def test_first_constraint_in_order_decides_the_reason(zone_first, expected):
    nodes = [zoned("a1", "a").build()] + [zoned(n, z, rack="r").build() for n, z in (("a2", "a"), ("b1", "b"))]
    state = state_of(nodes, [web("w1", "a2"), web("w2", "a2")])
    zone, rack = spread(1, ZONE, APP_WEB), spread(1, "rack", APP_WEB)
    pod = incoming(zone, rack) if zone_first else incoming(rack, zone)
    assert [r.reason for r in PLUGIN.filter(pod, PLUGIN.pre_filter(pod, state), state.nodes["a1"], state)] == [expected]


def test_pod_without_hard_constraints_skips_prefilter_and_passes_everywhere():
    state = state_of([make_node("bare").build()], [])
    pod = incoming(spread(1, ZONE, APP_WEB, when="ScheduleAnyway"))
    assert PLUGIN.pre_filter(pod, state) is None
    assert PLUGIN.filter(pod, None, state.nodes["bare"], state) == []


def test_pods_placed_incrementally_change_the_verdict():
    state = state_of(FOUR, [])
    pod = incoming(spread(1, ZONE, APP_WEB))
    state.add(web("w1", "a1"), "a1")
    assert feasible_nodes(pod, state) == ["b1", "b2"]
    state.add(web("w2", "b2"), "b2")
    assert feasible_nodes(pod, state) == ALL4
    state.remove(web("w1", "a1"))
    assert feasible_nodes(pod, state) == ["a1", "a2"]


# ---------------------------------------------------------------- Score

SCORE_CASES = [
    pytest.param(FOUR, [], incoming(spread(1, HOST, APP_WEB, when="ScheduleAnyway")), None,
                 {"a1": 100, "a2": 100, "b1": 100, "b2": 100},
                 id="no matching pods anywhere gives every candidate 100"),
    pytest.param(FOUR, [web("w1", "a1"), web("w2", "a1"), web("w3", "b1"), *[web(f"x{i}", "b2") for i in range(3)]],
                 incoming(spread(1, HOST, APP_WEB, when="ScheduleAnyway")), None,
                 # weight ln(6)=1.792: raw 4/0/2/5 -> 100*(5+0-raw)/5
                 {"a1": 20, "a2": 100, "b1": 60, "b2": 0},
                 id="hostname counts 2 0 1 3 score 20 100 60 0"),
    pytest.param(FOUR, [web("w1", "a1"), web("w2", "a1"), web("w3", "b1"), *[web(f"x{i}", "b2") for i in range(3)]],
                 incoming(spread(3, HOST, APP_WEB, when="ScheduleAnyway")), None,
                 # maxSkew 3 adds 2 to each raw score: 6/2/4/7 -> 100*(7+2-raw)/7, truncated
                 {"a1": 42, "a2": 100, "b1": 71, "b2": 28},
                 id="maxSkew 3 waters the differences down and Go integer division truncates"),
    pytest.param(FOUR, [web("w1", "a1"), web("w2", "a2"), web("w3", "b1")],
                 incoming(spread(1, ZONE, APP_WEB, when="ScheduleAnyway")), ["a1", "b2"],
                 # zone a=2, zone b=1 (pods on non-candidate nodes count), weight ln(4): raw 3/1 -> 33/100
                 {"a1": 33, "b2": 100},
                 id="zone counts include pods on non-candidate nodes of candidate zones"),
    pytest.param([zoned("a1", "a").build(), make_node("bare").label(HOST, "bare").build(), zoned("b1", "b").build()],
                 [web("w1", "a1")], incoming(spread(1, ZONE, APP_WEB, when="ScheduleAnyway")), None,
                 {"a1": 0, "bare": 0, "b1": 100},
                 id="a candidate lacking the zone label is ignored and scores 0"),
    pytest.param(FOUR, [web("w1", "a1"), web("w2", "a1")],
                 incoming(spread(1, HOST, APP_WEB)), None, {"a1": 0, "a2": 0, "b1": 0, "b2": 0},
                 id="a pod with only DoNotSchedule constraints gets no score and no system defaults"),
    pytest.param(FOUR, [web("w1", "a1"), web("w2", "a1")], incoming(), None, {"a1": 0, "a2": 0, "b1": 0, "b2": 0},
                 id="a pod with no constraints that nothing selects gets no system default score"),
    pytest.param(POOLED, [web("w1", "a1"), web("w2", "a1"), web("w3", "b1"), web("w4", "c1")],
                 incoming(spread(1, HOST, APP_WEB, when="ScheduleAnyway"), node_selector={"pool": "x"}), None,
                 # hostname is counted per node in Score, whatever the inclusion policy: ln(5) = 1.609,
                 # raw round(3.22)=3 / round(1.61)=2 / 2 -> 100*(3+2-raw)/3
                 {"a1": 66, "b1": 100, "c1": 100},
                 id="hostname counts come from the node itself even outside the nodeSelector"),
    pytest.param(POOLED, [web("w1", "a1"), web("w2", "a1"), web("w3", "b1"), web("w4", "c1")],
                 incoming(spread(1, ZONE, APP_WEB, when="ScheduleAnyway"), node_selector={"pool": "x"}), None,
                 # zone c fails the nodeSelector (Honor): its pod is not counted -> a=2, b=1, c=0, ln(5): 3/2/0
                 {"a1": 0, "b1": 33, "c1": 100},
                 id="nodeAffinityPolicy Honor drops the pods of a zone outside the nodeSelector"),
]


@pytest.mark.parametrize("nodes, pods, pod, candidates, expected", SCORE_CASES)
def test_normalized_scores(nodes, pods, pod, candidates, expected):
    assert final_scores(pod, state_of(nodes, pods), candidates) == expected


def hosts(*names: str, zone: str | None = None):
    return [make_node(n).label(HOST, n).labels({"topology.kubernetes.io/zone": zone} if zone else {}).build()
            for n in names]


def test_system_defaults_spread_by_hostname_on_nodes_without_zone_labels():
    state = state_of(hosts("n1", "n2", "n3"), [web("w1", "n1"), web("w2", "n1"), web("w3", "n2")])
    state.services = (Service("default", "web", {"app": "web"}),)
    pod = make_pod("incoming").label("app", "web").build()
    # hostname maxSkew 3, weight ln(5): raw 2*1.609+2=5, 1.609+2=4 (3.6 rounds up), 2 -> 100*(5+2-raw)/5
    assert final_scores(pod, state) == {"n1": 40, "n2": 60, "n3": 100}


def test_system_defaults_use_the_owning_replicaset_selector():
    state = state_of(hosts("n1", "n2"), [web("w1", "n1"), web("w2", "n1")])
    state.workloads = (Workload("ReplicaSet", "default", "web-rs", selector=APP_WEB),)
    pod = make_pod("incoming").label("app", "web").owner("ReplicaSet", "web-rs").build()
    assert default_selector(pod, state) == LabelSelector((), (Requirement("app", "In", ("web",)),))
    # hostname maxSkew 3, ln(4): raw round(2*1.386+2)=5 and 2 -> 100*(5+2-raw)/5
    assert final_scores(pod, state) == {"n1": 40, "n2": 100}


def test_system_defaults_ignore_a_service_in_another_namespace_and_a_deployment_owner():
    state = state_of(hosts("n1", "n2"), [web("w1", "n1")])
    state.services = (Service("other", "web", {"app": "web"}),)
    state.workloads = (Workload("Deployment", "default", "web", selector=APP_WEB),)
    pod = make_pod("incoming").label("app", "web").owner("Deployment", "web").build()
    assert default_selector(pod, state) is None
    assert score_constraints(pod, state) == ()
    assert final_scores(pod, state) == {"n1": 0, "n2": 0}


def test_system_default_constraints_are_soft_only():
    state = state_of(hosts("n1"), [])
    state.services = (Service("default", "web", {"app": "web"}),)
    pod = make_pod("incoming").label("app", "web").build()
    assert [(c.topology_key, c.max_skew) for c in score_constraints(pod, state)] == [
        ("kubernetes.io/hostname", 3), ("topology.kubernetes.io/zone", 5)]
    assert filter_constraints(pod, state) == ()


def test_go_rounding_is_half_away_from_zero():
    assert [go_round(x) for x in (0.5, 1.5, 2.5, 2.4999, 3.0)] == [1, 2, 3, 2, 3]


# ---------------------------------------------------------------- helpers for the optimizer and verifier

def test_count_matching_lists_every_eligible_domain_with_zero_for_empty_ones():
    state = state_of(POOLED, [web("w1", "a1"), web("w2", "a1"), web("w3", "c1")])
    pod = incoming(spread(1, ZONE, APP_WEB), node_selector={"pool": "x"})
    (c,) = filter_constraints(pod, state)
    assert count_matching(c, pod, state) == {"a": 2, "b": 0}
    (ignore,) = filter_constraints(incoming(spread(1, ZONE, APP_WEB, affinity_policy="Ignore")), state)
    assert count_matching(ignore, pod, state) == {"a": 2, "b": 0, "c": 1}


def test_count_matching_requires_every_constraint_key_on_the_node():
    state = state_of([zoned("a1", "a", rack="r1").build(), zoned("b1", "b").build()], [web("w1", "b1")])
    pod = incoming(spread(1, ZONE, APP_WEB), spread(1, "rack", APP_WEB))
    zone, rack = filter_constraints(pod, state)
    assert count_matching(zone, pod, state) == {"a": 0, "b": 1}
    assert count_matching(zone, pod, state, (zone, rack)) == {"a": 0}


def test_node_eligible_follows_both_inclusion_policies():
    node = zoned("c1", "c").taint("dedicated", "gpu").build()
    pod = incoming(node_selector={"pool": "x"})
    (honor_both,) = filter_constraints(incoming(spread(1, ZONE, APP_WEB, taints_policy="Honor")), state_of([]))
    (ignore_both,) = filter_constraints(
        incoming(spread(1, ZONE, APP_WEB, affinity_policy="Ignore", taints_policy="Ignore")), state_of([]))
    assert not node_eligible(honor_both, pod, node)
    assert node_eligible(ignore_both, pod, node)
    assert not node_eligible(honor_both, incoming(), node)  # the taint alone excludes it


def test_counts_follow_add_and_remove_when_nodes_carry_a_generation():
    # The per-node count cache is used when NodeInfo has a generation bumped on every change (upstream's
    # NodeInfo.Generation); the counts must follow the pods as they move.
    state = state_of(FOUR, [web("w1", "a1"), web("w2", "b1")])
    for info in state.nodes.values():
        info.generation = 0
    pod = incoming(spread(1, ZONE, APP_WEB))
    assert feasible_nodes(pod, state) == ALL4
    state.add(web("w3", "a2"), "a2")
    state.nodes["a2"].generation += 1
    assert feasible_nodes(pod, state) == ["b1", "b2"]
    state.remove(web("w3", "a2"))
    state.nodes["a2"].generation += 1
    assert feasible_nodes(pod, state) == ALL4


# ---------------------------------------------------------------- through the manifest parser

def node_doc(name: str, zone: str) -> dict:
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"zone": zone, HOST: name}},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}


def pod_doc(name: str, labels: dict, node: str | None = None, spread_constraints: list | None = None) -> dict:
    spec: dict = {"containers": [{"name": "c", "image": "pause"}]}
    if node:
        spec["nodeName"] = node
    if spread_constraints:
        spec["topologySpreadConstraints"] = spread_constraints
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default", "labels": labels},
            "spec": spec}


def test_match_label_keys_count_only_pods_of_the_incoming_pods_revision():
    # Zone a holds two pods of the old revision; with matchLabelKeys [pod-template-hash] only the new
    # revision's pod in zone b counts, so zone a (0) is the only zone within maxSkew 1.
    constraint = {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule",
                  "labelSelector": {"matchLabels": {"app": "web"}}, "matchLabelKeys": ["pod-template-hash"]}
    cluster = parse_documents([
        node_doc("a1", "a"), node_doc("b1", "b"),
        pod_doc("old-1", {"app": "web", "pod-template-hash": "old"}, "a1"),
        pod_doc("old-2", {"app": "web", "pod-template-hash": "old"}, "a1"),
        pod_doc("new-1", {"app": "web", "pod-template-hash": "new"}, "b1"),
        pod_doc("new-2", {"app": "web", "pod-template-hash": "new"}, spread_constraints=[constraint]),
    ])
    state = ClusterState.from_cluster(cluster)
    (pod,) = cluster.pending
    assert feasible_nodes(pod, state) == ["a1"]
    without_keys = dict(pod_doc("x", {"app": "web", "pod-template-hash": "new"},
                                spread_constraints=[{k: v for k, v in constraint.items() if k != "matchLabelKeys"}]))
    (plain,) = parse_documents([node_doc("a1", "a"), without_keys]).pending
    assert feasible_nodes(plain, state) == ["b1"]


def test_deployment_replicas_get_system_default_spreading_from_the_deployment_selector():
    # The Deployment's ReplicaSet is not in the input: the Deployment's selector stands in for it.
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "default"},
                  "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}},
                           "template": {"metadata": {"labels": {"app": "web"}},
                                        "spec": {"containers": [{"name": "c", "image": "pause"}]}}}}
    cluster = parse_documents([node_doc("a1", "a"), node_doc("b1", "b"), pod_doc("w1", {"app": "web"}, "a1"),
                               deployment])
    state = ClusterState.from_cluster(cluster)
    replica = cluster.pending[0]
    assert replica.controller is not None and replica.controller.kind == "ReplicaSet"
    assert default_selector(replica, state) == LabelSelector((), (Requirement("app", "In", ("web",)),))
    # hostname maxSkew 3, ln(2+2): raw round(1.386+2)=3 on a1 and 2 on b1 -> 100*(3+2-raw)/3
    assert final_scores(replica, state) == {"a1": 66, "b1": 100}
