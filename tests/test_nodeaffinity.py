"""NodeAffinity: nodeSelector AND required node affinity filter; preferred terms score (weight 2)."""
import pytest

from builders import feasible_nodes, make_node, make_pod, req, run_filter, run_score, state_of, term
from podplan.optimizer.framework import Reason
from podplan.optimizer.nodeaffinity import PLUGIN, default_normalize_score

MISMATCH = Reason("NodeAffinity", "node(s) didn't match Pod's node affinity/selector", unresolvable=True)

NODES = [
    make_node("ssd-a").label("disk", "ssd").label("zone", "a").build(),
    make_node("ssd-b").label("disk", "ssd").label("zone", "b").build(),
    make_node("hdd-a").label("disk", "hdd").label("zone", "a").label("cores", "8").build(),
    make_node("bare").build(),
]
NAME_IN = lambda *names: req("metadata.name", "In", *names)  # noqa: E731


@pytest.mark.parametrize("pod, feasible", [
    pytest.param(make_pod("p").build(), ["ssd-a", "ssd-b", "hdd-a", "bare"],
                 id="a pod with no selector and no affinity fits every node"),
    pytest.param(make_pod("p").node_selector(disk="ssd").build(), ["ssd-a", "ssd-b"],
                 id="nodeSelector disk=ssd keeps the two ssd nodes"),
    pytest.param(make_pod("p").node_selector(disk="ssd", zone="b").build(), ["ssd-b"],
                 id="nodeSelector pairs are ANDed"),
    pytest.param(make_pod("p").node_selector(disk="nvme").build(), [],
                 id="nodeSelector no node carries fits nowhere"),
    pytest.param(make_pod("p").node_affinity(term(req("zone", "In", "b")), term(req("disk", "In", "hdd"))).build(),
                 ["ssd-b", "hdd-a"], id="required terms are ORed"),
    pytest.param(make_pod("p").node_affinity(term(req("disk", "Exists"), req("zone", "NotIn", "a"))).build(),
                 ["ssd-b"], id="expressions within one term are ANDed"),
    pytest.param(make_pod("p").node_affinity(term(req("disk", "DoesNotExist"))).build(), ["bare"],
                 id="DoesNotExist keeps only the unlabelled node"),
    pytest.param(make_pod("p").node_affinity(term(req("cores", "Gt", "4"))).build(), ["hdd-a"],
                 id="Gt compares the label as an integer"),
    pytest.param(make_pod("p").node_affinity(term(req("cores", "Lt", "4"))).build(), [],
                 id="Lt fails on a larger value and on nodes without the label"),
    pytest.param(make_pod("p").node_affinity(term()).build(), [],
                 id="an empty required term matches no node"),
    pytest.param(make_pod("p").node_selector(disk="ssd").node_affinity(term(req("zone", "In", "a"))).build(),
                 ["ssd-a"], id="nodeSelector and required affinity must both hold"),
    pytest.param(make_pod("p").node_affinity(term(fields=[NAME_IN("hdd-a")]), term(fields=[NAME_IN("bare")])).build(),
                 ["hdd-a", "bare"], id="matchFields metadata.name In pins the pod to the named nodes"),
    pytest.param(make_pod("p").node_affinity(term(fields=[NAME_IN("hdd-a", "bare")])).build(), [],
                 id="matchFields In with two names is a term upstream cannot parse: it matches no node"),
    pytest.param(make_pod("p").node_affinity(term(req("disk", "In", "ssd"), fields=[NAME_IN("ssd-b")]),
                                term(req("disk", "In", "ssd"), fields=[NAME_IN("hdd-a")])).build(),
                 ["ssd-b"], id="matchFields and matchExpressions in one term are ANDed"),
    pytest.param(make_pod("p").node_affinity(term(fields=[NAME_IN("ssd-a")]), term(req("zone", "In", "b"))).build(),
                 ["ssd-a", "ssd-b"], id="a name-pinned term ORed with an unpinned term leaves every node a candidate"),
])
def test_filter(pod, feasible):
    assert feasible_nodes(PLUGIN, pod, state_of(NODES)) == feasible


def test_a_node_outside_every_name_pin_gets_the_framework_reason():
    pod = make_pod("p").node_affinity(term(fields=[NAME_IN("ssd-a")]), term(fields=[NAME_IN("hdd-a")])).build()
    state = state_of(NODES)
    assert run_filter(PLUGIN, pod, state, "ssd-b") == [
        Reason("NodeAffinity", "node(s) didn't satisfy plugin(s) [NodeAffinity]", unresolvable=True)]
    assert run_filter(PLUGIN, pod, state, "ssd-a") == []


def test_conflicting_name_pins_reject_every_node_as_conflict():
    pod = make_pod("p").node_affinity(term(fields=[NAME_IN("ssd-a"), NAME_IN("ssd-b")])).build()
    state = state_of(NODES)
    for node in state.nodes:
        assert run_filter(PLUGIN, pod, state, node) == [
            Reason("NodeAffinity", "pod affinity terms conflict", unresolvable=True)]


def test_a_label_mismatch_gets_the_pod_reason_unresolvable():
    pod = make_pod("p").node_selector(disk="ssd").build()
    assert run_filter(PLUGIN, pod, state_of(NODES), "hdd-a") == [MISMATCH]


@pytest.mark.parametrize("pod, expected", [
    pytest.param(make_pod("p").build(), {"ssd-a": 0, "ssd-b": 0, "hdd-a": 0, "bare": 0},
                 id="a pod without preferences scores every node 0"),
    pytest.param(make_pod("p").preferred_node_affinity(5, term(req("disk", "In", "nvme"))).build(),
                 {"ssd-a": 0, "ssd-b": 0, "hdd-a": 0, "bare": 0},
                 id="a preference no node matches scores every node 0"),
    pytest.param(make_pod("p").preferred_node_affinity(2, term(req("disk", "In", "ssd")))
                 .preferred_node_affinity(4, term(req("zone", "In", "a")))
                 .preferred_node_affinity(5, term(req("disk", "In", "ssd"), req("zone", "In", "a"))).build(),
                 {"ssd-a": 100, "ssd-b": 18, "hdd-a": 36, "bare": 0},
                 id="matched weights 11, 2, 4, 0 normalize to 100, 18, 36, 0 with integer division"),
    pytest.param(make_pod("p").preferred_node_affinity(0, term(req("disk", "In", "ssd")))
                 .preferred_node_affinity(3, term(req("disk", "In", "hdd"))).build(),
                 {"ssd-a": 0, "ssd-b": 0, "hdd-a": 100, "bare": 0},
                 id="a zero-weight preference counts for nothing"),
    pytest.param(make_pod("p").preferred_node_affinity(7, term(fields=[NAME_IN("bare")])).build(),
                 {"ssd-a": 0, "ssd-b": 0, "hdd-a": 0, "bare": 100},
                 id="a preferred matchFields term prefers the named node"),
])
def test_score(pod, expected):
    assert run_score(PLUGIN, pod, state_of(NODES)) == expected


def test_scores_are_normalized_over_the_candidates_only():
    pod = (make_pod("p").preferred_node_affinity(1, term(req("disk", "In", "hdd")))
           .preferred_node_affinity(3, term(req("disk", "In", "ssd"))).build())
    assert run_score(PLUGIN, pod, state_of(NODES), ["hdd-a", "bare"]) == {"hdd-a": 100, "bare": 0}


@pytest.mark.parametrize("raw, reverse, expected", [
    pytest.param({"a": 0, "b": 0}, False, {"a": 0, "b": 0}, id="all zero stays zero"),
    pytest.param({"a": 0, "b": 0}, True, {"a": 100, "b": 100}, id="all zero reversed is all 100"),
    pytest.param({"a": 1, "b": 3, "c": 2}, False, {"a": 33, "b": 100, "c": 66}, id="scaled by the maximum, truncated"),
    pytest.param({"a": 1, "b": 3, "c": 2}, True, {"a": 67, "b": 0, "c": 34}, id="reversed after truncation"),
])
def test_default_normalize_score(raw, reverse, expected):
    assert default_normalize_score(raw, reverse) == expected


def test_plugin_name_and_weight():
    assert (PLUGIN.name, PLUGIN.weight) == ("NodeAffinity", 2)
