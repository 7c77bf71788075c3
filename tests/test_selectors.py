"""Label selectors, node selectors and pod affinity term namespaces, matched as upstream matches them
(k8s.io/apimachinery/pkg/labels, component-helpers nodeaffinity, interpodaffinity's namespace merge), and the
API server's merge of matchLabelKeys / mismatchLabelKeys into the selector."""
from __future__ import annotations

from typing import Any

import pytest

from builders import pod_manifest, pod_term, req, selector, term
from podplan.models.loader import parse_documents
from podplan.models.objects import Pod
from podplan.models.selectors import LabelSelector, NodeSelector, NodeSelectorTerm, Requirement, selector_matches
from podplan.optimizer.interpodaffinity import term_namespaces

WEB = {"app": "web", "tier": "front", "version": "10"}

REQUIREMENTS = [
    # (requirement, labels, matches)
    (req("app", "In", "web", "api"), WEB, True),
    (req("app", "In", "api"), WEB, False),
    (req("missing", "In", "web"), WEB, False),
    (req("app", "NotIn", "api"), WEB, True),
    (req("app", "NotIn", "web"), WEB, False),
    (req("missing", "NotIn", "web"), WEB, True),  # NotIn holds when the key is absent
    (req("tier", "Exists"), WEB, True),
    (req("missing", "Exists"), WEB, False),
    (req("tier", "DoesNotExist"), WEB, False),
    (req("missing", "DoesNotExist"), WEB, True),
    (req("version", "Gt", "9"), WEB, True),  # compared as integers: "10" > "9"
    (req("version", "Gt", "10"), WEB, False),
    (req("version", "Lt", "11"), WEB, True),
    (req("version", "Lt", "10"), WEB, False),
    (req("missing", "Gt", "0"), WEB, False),
    (req("app", "Gt", "0"), WEB, False),  # a label that is not an integer never satisfies Gt/Lt
    (req("app", "Lt", "0"), WEB, False),
]


@pytest.mark.parametrize("requirement,labels,matches", REQUIREMENTS,
                         ids=[f"{r.key} {r.operator} {list(r.values)} on {l} is {m}" for r, l, m in REQUIREMENTS])
def test_every_operator_matches_as_upstream(requirement: Requirement, labels: dict[str, str], matches: bool) -> None:
    assert requirement.matches(labels) is matches


def test_match_labels_and_match_expressions_are_anded() -> None:
    both = selector(req("tier", "In", "front"), app="web")
    assert both.matches(WEB)
    assert not both.matches({"app": "web", "tier": "back"})
    assert not both.matches({"app": "api", "tier": "front"})
    assert not selector(req("tier", "Exists"), req("missing", "Exists")).matches(WEB)


def test_a_nil_selector_matches_nothing_and_an_empty_one_matches_everything() -> None:
    assert not selector_matches(None, WEB)
    assert not selector_matches(None, {})
    assert selector_matches(LabelSelector(), WEB)
    assert selector_matches(LabelSelector(), {})


def _pod_with_pdb_selector(sel: Any) -> Any:
    docs = [{"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "pdb"},
             "spec": {"minAvailable": 1, "selector": sel}}]
    return parse_documents(docs).pdbs[0].selector


def test_parsing_keeps_null_and_empty_selectors_apart() -> None:
    assert _pod_with_pdb_selector(None) is None
    assert _pod_with_pdb_selector({}) == LabelSelector()
    parsed = _pod_with_pdb_selector({"matchLabels": {"app": "web"},
                                     "matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["db"]}]})
    assert parsed.matches(WEB) and not parsed.matches({"app": "web", "tier": "db"})


NODE = ("node-a", {"zone": "a", "gpu-count": "4"})

NODE_SELECTORS = [
    ("one matching term", NodeSelector((term(req("zone", "In", "a")),)), True),
    ("terms are ORed: the second matches", NodeSelector((term(req("zone", "In", "b")), term(req("gpu-count", "Gt", "2")))), True),
    ("expressions inside a term are ANDed", NodeSelector((term(req("zone", "In", "a"), req("gpu-count", "Lt", "2")),)), False),
    ("an empty term matches no node", NodeSelector((NodeSelectorTerm(),)), False),
    ("an empty term ORed with a matching one", NodeSelector((NodeSelectorTerm(), term(req("zone", "Exists")))), True),
    ("no terms at all match nothing", NodeSelector(()), False),
    ("matchFields metadata.name In the node's name", NodeSelector((term(fields=[req("metadata.name", "In", "node-a")]),)), True),
    ("matchFields metadata.name In another name", NodeSelector((term(fields=[req("metadata.name", "In", "node-b")]),)), False),
    ("matchFields metadata.name NotIn another name", NodeSelector((term(fields=[req("metadata.name", "NotIn", "node-b")]),)), True),
    ("matchFields ANDed with matchExpressions", NodeSelector((term(req("zone", "In", "b"), fields=[req("metadata.name", "In", "node-a")]),)), False),
    ("matchFields do not read labels", NodeSelector((term(fields=[req("zone", "In", "a")]),)), False),
]


@pytest.mark.parametrize("selector_,matches", [(s, m) for _, s, m in NODE_SELECTORS], ids=[i for i, _, _ in NODE_SELECTORS])
def test_node_selector_terms(selector_: NodeSelector, matches: bool) -> None:
    assert selector_.matches(*NODE) is matches


def test_node_affinity_read_from_yaml_keeps_terms_ored_and_match_fields() -> None:
    affinity = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["b"]}]},
        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node-a"]}]},
    ]}}}
    (pod,) = parse_documents([pod_manifest("p", affinity=affinity)]).pending
    assert pod.affinity.node_required is not None
    assert pod.affinity.node_required.matches("node-a", {})
    assert pod.affinity.node_required.matches("node-z", {"zone": "b"})
    assert not pod.affinity.node_required.matches("node-z", {"zone": "a"})


# ------------------------------------------------------------------ namespaces and namespaceSelector

OWNER = Pod(namespace="shop", name="owner")
NAMESPACES = {"shop": {"team": "a"}, "billing": {"team": "a"}, "ops": {"team": "b"}}

NAMESPACE_CASES = [
    ("no namespaces and a null namespaceSelector mean the owner's namespace", pod_term("zone", selector()), {"shop"}),
    ("listed namespaces and a null selector mean exactly those", pod_term("zone", selector(), ["ops", "x"]), {"ops", "x"}),
    ("an empty namespaceSelector {} means every namespace", pod_term("zone", selector(), (), selector()), None),
    ("an empty selector with listed namespaces still means every namespace", pod_term("zone", selector(), ["ops"], selector()), None),
    ("a namespaceSelector picks the known namespaces whose labels match", pod_term("zone", selector(), (), selector(team="a")), {"shop", "billing"}),
    ("listed namespaces are unioned with the selector's", pod_term("zone", selector(), ["ops"], selector(team="a")), {"shop", "billing", "ops"}),
    ("a selector matching no namespace selects none, not the owner's", pod_term("zone", selector(), (), selector(team="z")), set()),
]


@pytest.mark.parametrize("term_,expected", [(t, e) for _, t, e in NAMESPACE_CASES], ids=[i for i, _, _ in NAMESPACE_CASES])
def test_term_namespaces(term_: Any, expected: set[str] | None) -> None:
    got = term_namespaces(term_, OWNER, NAMESPACES)
    assert (None if got is None else set(got)) == expected


def test_parsing_keeps_null_and_empty_namespace_selectors_apart() -> None:
    affinity = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {}, "topologyKey": "zone"},
        {"labelSelector": {}, "topologyKey": "zone", "namespaceSelector": {}},
        {"labelSelector": {}, "topologyKey": "zone", "namespaces": ["a", "b"], "namespaceSelector": None},
    ]}}
    (pod,) = parse_documents([pod_manifest("p", affinity=affinity)]).pending
    t0, t1, t2 = pod.affinity.pod_required
    assert (t0.namespaces, t0.namespace_selector) == ((), None)
    assert (t1.namespaces, t1.namespace_selector) == ((), LabelSelector())
    assert (t2.namespaces, t2.namespace_selector) == (("a", "b"), None)


# ------------------------------------------------------------------ matchLabelKeys / mismatchLabelKeys


def _anti_term(labels: dict[str, str], **term_fields: Any) -> Any:
    affinity = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"topologyKey": "kubernetes.io/hostname", **term_fields}]}}
    (pod,) = parse_documents([pod_manifest("p", labels=labels, affinity=affinity)], strict=False).pending
    return pod.affinity.anti_required[0]


def test_match_label_keys_add_an_in_requirement_with_the_pods_own_value() -> None:
    t = _anti_term({"app": "web", "pod-template-hash": "abc"},
                   labelSelector={"matchLabels": {"app": "web"}}, matchLabelKeys=["pod-template-hash"])
    assert t.label_selector == LabelSelector((("app", "web"),), (Requirement("pod-template-hash", "In", ("abc",)),))
    assert t.label_selector.matches({"app": "web", "pod-template-hash": "abc"})
    assert not t.label_selector.matches({"app": "web", "pod-template-hash": "old"})
    assert t.match_label_keys == ("pod-template-hash",)


def test_mismatch_label_keys_add_a_notin_requirement_with_the_pods_own_value() -> None:
    t = _anti_term({"tenant": "a"}, labelSelector={"matchExpressions": [{"key": "tenant", "operator": "Exists"}]},
                   mismatchLabelKeys=["tenant"])
    assert t.label_selector.matches({"tenant": "b"})
    assert not t.label_selector.matches({"tenant": "a"})
    assert not t.label_selector.matches({})


def test_label_keys_the_pod_does_not_carry_are_ignored() -> None:
    t = _anti_term({"app": "web"}, labelSelector={"matchLabels": {"app": "web"}},
                   matchLabelKeys=["pod-template-hash"], mismatchLabelKeys=["tenant"])
    assert t.label_selector == LabelSelector((("app", "web"),))


def test_label_keys_leave_a_null_label_selector_matching_nothing() -> None:
    # Only reachable leniently: the API server rejects matchLabelKeys without a labelSelector.
    t = _anti_term({"app": "web"}, matchLabelKeys=["app"])
    assert t.label_selector is None


def test_label_keys_merge_into_preferred_terms_too() -> None:
    affinity = {"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 10, "podAffinityTerm": {
        "topologyKey": "zone", "labelSelector": {}, "matchLabelKeys": ["app"]}}]}}
    (pod,) = parse_documents([pod_manifest("p", labels={"app": "web"}, affinity=affinity)]).pending
    merged = pod.affinity.pod_preferred[0].term.label_selector
    assert merged.matches({"app": "web"}) and not merged.matches({"app": "api"})


def _spread_selector(labels: dict[str, str], constraint: dict[str, Any]) -> Any:
    base = {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}
    (pod,) = parse_documents([pod_manifest("p", labels=labels, topologySpreadConstraints=[{**base, **constraint}])],
                             strict=False).pending
    return pod.spread_constraints[0].label_selector


def test_spread_match_label_keys_are_anded_with_the_pods_values() -> None:
    sel = _spread_selector({"app": "web", "pod-template-hash": "v2"},
                           {"labelSelector": {"matchLabels": {"app": "web"}}, "matchLabelKeys": ["pod-template-hash"]})
    assert sel.matches({"app": "web", "pod-template-hash": "v2"})
    assert not sel.matches({"app": "web", "pod-template-hash": "v1"})


def test_spread_match_label_keys_missing_from_the_pod_change_nothing() -> None:
    sel = _spread_selector({"app": "web"}, {"labelSelector": {"matchLabels": {"app": "web"}}, "matchLabelKeys": ["hash"]})
    assert sel == LabelSelector((("app", "web"),))


def test_spread_with_null_selector_stays_match_nothing() -> None:
    assert _spread_selector({"app": "web"}, {"matchLabelKeys": ["app"]}) is None


# ------------------------------------------------------------- terms upstream fails to parse (lazy errors)

UNPARSABLE = [
    # (id, term, node labels): each term matches no node although its requirements would otherwise hold.
    ("a NotIn value that is not a label value", term(req("zone", "NotIn", "invalid value: ___@#$%^")), {"zone": "a"}),
    ("an In value longer than 63 characters", term(req("zone", "In", "a", "x" * 64)), {"zone": "a"}),
    ("a key that is not a qualified name", term(req("bad key!", "DoesNotExist")), {"zone": "a"}),
    ("a key with an upper-case prefix", term(req("Example.COM/zone", "DoesNotExist")), {"zone": "a"}),
    ("a key with two slashes", term(req("a/b/c", "DoesNotExist")), {"zone": "a"}),
    ("a Gt value that is not an integer", term(req("cores", "Gt", "four")), {"cores": "8"}),
    ("a Gt value that is an integer but not a label value", term(req("cores", "Gt", "-1")), {"cores": "8"}),
    ("a Gt value with a plus sign, an int64 but not a label value", term(req("cores", "Gt", "+4")), {"cores": "8"}),
    ("a Lt value beyond int64", term(req("cores", "Lt", str(2 ** 63))), {"cores": "8"}),
    ("one bad requirement spoils a term whose other requirement matches",
     term(req("zone", "In", "a"), req("zone", "NotIn", "bad value!")), {"zone": "a"}),
    ("matchFields with an operator other than In/NotIn", term(fields=[req("metadata.name", "Exists")]), {}),
    ("matchFields In with two names", term(fields=[req("metadata.name", "In", "node-a", "node-b")]), {}),
]


@pytest.mark.parametrize("term_,labels", [(t, l) for _, t, l in UNPARSABLE], ids=[i for i, _, _ in UNPARSABLE])
def test_a_term_upstream_cannot_parse_matches_no_node(term_: NodeSelectorTerm, labels: dict[str, str]) -> None:
    assert term_.parse_errors
    assert not term_.matches("node-a", labels)
    assert not NodeSelector((term_,)).matches("node-a", labels)


PARSABLE = [
    ("a prefixed key", term(req("topology.kubernetes.io/zone", "In", "a")), {"topology.kubernetes.io/zone": "a"}),
    ("an empty In value is a valid label value", term(req("zone", "In", "")), {"zone": ""}),
    ("a 63-character value", term(req("zone", "NotIn", "x" * 63)), {"zone": "a"}),
]


@pytest.mark.parametrize("term_,labels", [(t, l) for _, t, l in PARSABLE], ids=[i for i, _, _ in PARSABLE])
def test_terms_upstream_parses_still_match(term_: NodeSelectorTerm, labels: dict[str, str]) -> None:
    assert term_.parse_errors == ()
    assert term_.matches("node-a", labels)


def test_an_unparsable_term_does_not_stop_the_other_terms_from_matching() -> None:
    broken = term(req("zone", "NotIn", "invalid value: ___@#$%^"))
    assert NodeSelector((broken, term(req("zone", "In", "a")))).matches("node-a", {"zone": "a"})
    assert not NodeSelector((broken, term(req("zone", "In", "b")))).matches("node-a", {"zone": "a"})


@pytest.mark.parametrize("label", ["1_0", " 10", "10 ", "0x10", "1e3", ""],
                         ids=lambda v: f"node label {v!r} is not an int64 to Go, so Gt never holds")
def test_gt_reads_node_labels_as_go_parses_int64(label: str) -> None:
    assert not req("cores", "Gt", "0").matches({"cores": label})


def test_the_api_server_accepts_a_pod_whose_term_kube_scheduler_cannot_parse() -> None:
    affinity = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "zone", "operator": "NotIn", "values": ["invalid value: ___@#$%^"]}]},
        {"matchExpressions": [{"key": "cores", "operator": "Gt", "values": ["four"]}]},
    ]}}}
    (pod,) = parse_documents([pod_manifest("p", affinity=affinity)]).pending
    required = pod.affinity.node_required
    assert required is not None
    assert [t.parse_errors for t in required.terms] == [
        ("matchExpressions[0].values[0] 'invalid value: ___@#$%^': not a valid label value",),
        ("matchExpressions[0].values[0] 'four': for 'Gt', 'Lt' operators, the value must be an integer",)]
    assert not required.matches("node-a", {"zone": "b", "cores": "8"})
