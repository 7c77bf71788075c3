"""InterPodAffinity as kube-scheduler judges it: required (anti-)affinity verdicts with upstream's reasons,
symmetric anti-affinity of existing pods, the first-pod rule, namespace resolution, and the min-max
normalized preference score."""
from __future__ import annotations

import dataclasses
import random
from dataclasses import dataclass, field

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from builders import make_node, make_pod, pod_term, req, selector, state_of
from podplan.models.objects import Node, Pod
from podplan.optimizer.interpodaffinity import (
    ERR_REASON_AFFINITY_RULES_NOT_MATCH,
    ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH,
    ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH,
    PLUGIN,
    term_matches,
    term_namespaces,
)
from podplan.optimizer.state import ClusterState

AFF = ERR_REASON_AFFINITY_RULES_NOT_MATCH
ANTI = ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH
EXISTING = ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH

TEAMS = {"team-a": {"team": "a"}, "team-a2": {"team": "a"}, "team-b": {"team": "b"}, "default": {}}


def zoned(name: str, zone: str | None, region: str = "r1") -> Node:
    """A node in `region`, with zone label `zone` (None: the node carries no zone label)."""
    b = make_node(name).label("region", region).label("hostname", name)
    return (b.label("zone", zone) if zone else b).build()


def three_zones() -> list[Node]:
    return [zoned("node-a", "z1"), zoned("node-b", "z2"), zoned("node-c", "z3")]


def app(value: str) -> object:
    return selector(app=value)


@dataclass
class FilterCase:
    id: str
    nodes: list[Node]
    existing: list[Pod]
    pod: Pod
    # node -> expected reason (None = passes); every node of the case is checked
    expect: dict[str, str | None]
    namespaces: dict[str, dict[str, str]] = field(default_factory=dict)


FILTER_CASES = [
    FilterCase(
        "a pod without affinity on a cluster without anti-affinity passes every node",
        three_zones(), [make_pod("db").label("app", "db").on("node-a").build()],
        make_pod("web").label("app", "web").build(),
        {"node-a": None, "node-b": None, "node-c": None},
    ),
    FilterCase(
        "required zone affinity to a db pod allows only the db pod's zone, including other nodes in it",
        three_zones() + [zoned("node-a2", "z1")], [make_pod("db").label("app", "db").on("node-a").build()],
        make_pod("web").pod_affinity(pod_term("zone", app("db"))).build(),
        {"node-a": None, "node-a2": None, "node-b": AFF, "node-c": AFF},
    ),
    FilterCase(
        "a node lacking the affinity topology key is rejected even though the matching pod runs on it",
        [zoned("node-a", "z1"), zoned("node-nozone", None)],
        [make_pod("db").label("app", "db").on("node-nozone").build(),
         make_pod("db2").label("app", "db").on("node-a").build()],
        make_pod("web").pod_affinity(pod_term("zone", app("db"))).build(),
        {"node-a": None, "node-nozone": AFF},
    ),
    FilterCase(
        "the first pod of a self-affine group may start on any node that carries the topology key",
        three_zones() + [zoned("node-nozone", None)], [make_pod("other").label("app", "other").on("node-a").build()],
        make_pod("web-0").label("app", "web").pod_affinity(pod_term("zone", app("web"))).build(),
        {"node-a": None, "node-b": None, "node-c": None, "node-nozone": AFF},
    ),
    FilterCase(
        "once one group member runs, the first-pod rule no longer applies and other zones are rejected",
        three_zones(), [make_pod("web-0").label("app", "web").on("node-b").build()],
        make_pod("web-1").label("app", "web").pod_affinity(pod_term("zone", app("web"))).build(),
        {"node-a": AFF, "node-b": None, "node-c": AFF},
    ),
    FilterCase(
        "a pod that does not match its own affinity term gets no first-pod exception",
        three_zones(), [],
        make_pod("web").label("app", "web").pod_affinity(pod_term("zone", app("db"))).build(),
        {"node-a": AFF, "node-b": AFF, "node-c": AFF},
    ),
    FilterCase(
        "a pod in another namespace does not match a term without namespaces, so the first-pod rule applies",
        three_zones(), [make_pod("web-x").namespace("team-b").label("app", "web").on("node-a").build()],
        make_pod("web").label("app", "web").pod_affinity(pod_term("zone", app("web"))).build(),
        {"node-a": None, "node-b": None, "node-c": None},
    ),
    FilterCase(
        "an existing pod counts only if it matches ALL required affinity terms",
        three_zones(),
        [make_pod("db").label("app", "db").on("node-a").build(),
         make_pod("cache").label("tier", "cache").on("node-b").build(),
         make_pod("both").label("app", "db").label("tier", "cache").on("node-c").build()],
        make_pod("web").pod_affinity(pod_term("zone", app("db")), pod_term("region", selector(tier="cache"))).build(),
        {"node-a": AFF, "node-b": AFF, "node-c": None},
    ),
    FilterCase(
        "required anti-affinity forbids the whole zone of a matching pod",
        three_zones() + [zoned("node-a2", "z1")], [make_pod("web-0").label("app", "web").on("node-a").build()],
        make_pod("web-1").label("app", "web").pod_anti_affinity(pod_term("zone", app("web"))).build(),
        {"node-a": ANTI, "node-a2": ANTI, "node-b": None, "node-c": None},
    ),
    FilterCase(
        "anti-affinity terms are ORed: a hostname term and a region term each forbid their domain",
        [zoned("node-a", "z1", "r1"), zoned("node-b", "z2", "r1"), zoned("node-c", "z3", "r2")],
        [make_pod("web-0").label("app", "web").on("node-a").build(),
         make_pod("batch").label("kind", "batch").on("node-b").build()],
        make_pod("web-1").label("app", "web")
        .pod_anti_affinity(pod_term("hostname", app("web")), pod_term("region", selector(kind="batch"))).build(),
        {"node-a": ANTI, "node-b": ANTI, "node-c": None},
    ),
    FilterCase(
        "an anti-affinity term whose topology key no node carries forbids nothing",
        three_zones(), [make_pod("web-0").label("app", "web").on("node-a").build()],
        make_pod("web-1").label("app", "web").pod_anti_affinity(pod_term("rack", app("web"))).build(),
        {"node-a": None, "node-b": None, "node-c": None},
    ),
    FilterCase(
        "an existing pod's required anti-affinity keeps matching pods out of its zone (symmetry)",
        three_zones(),
        [make_pod("lonely").label("app", "lonely")
         .pod_anti_affinity(pod_term("zone", app("web"))).on("node-b").build()],
        make_pod("web").label("app", "web").build(),
        {"node-a": None, "node-b": EXISTING, "node-c": None},
    ),
    FilterCase(
        "an existing pod's anti-affinity term without namespaces ignores pods of other namespaces",
        three_zones(),
        [make_pod("lonely").namespace("team-b").pod_anti_affinity(pod_term("zone", app("web"))).on("node-b").build()],
        make_pod("web").label("app", "web").build(),
        {"node-a": None, "node-b": None, "node-c": None},
    ),
    FilterCase(
        "an existing pod's anti-affinity on a node without the topology key forbids nothing",
        [zoned("node-a", "z1"), zoned("node-nozone", None)],
        [make_pod("lonely").pod_anti_affinity(pod_term("zone", app("web"))).on("node-nozone").build()],
        make_pod("web").label("app", "web").build(),
        {"node-a": None, "node-nozone": None},
    ),
    FilterCase(
        "when affinity and anti-affinity both fail only upstream's first reason, pod affinity, is given",
        three_zones(),
        [make_pod("db").label("app", "db").on("node-a").build(),
         make_pod("web-0").label("app", "web").on("node-b").build()],
        make_pod("web-1").label("app", "web")
        .pod_affinity(pod_term("region", app("db"))).pod_anti_affinity(pod_term("zone", app("web"))).build(),
        {"node-a": None, "node-b": ANTI, "node-c": None},
    ),
    FilterCase(
        "when the pod's own and an existing pod's anti-affinity both fail, the pod's own reason is given",
        three_zones(),
        [make_pod("web-0").label("app", "web").pod_anti_affinity(pod_term("zone", app("web"))).on("node-a").build()],
        make_pod("web-1").label("app", "web").pod_anti_affinity(pod_term("zone", app("web"))).build(),
        {"node-a": ANTI, "node-b": None, "node-c": None},
    ),
    FilterCase(
        "a failing affinity hides the existing pods' anti-affinity on the same node",
        three_zones(),
        [make_pod("lonely").pod_anti_affinity(pod_term("zone", app("web"))).on("node-a").build(),
         make_pod("db").label("app", "db").on("node-b").build()],
        make_pod("web").label("app", "web").pod_affinity(pod_term("zone", app("db"))).build(),
        {"node-a": AFF, "node-b": None, "node-c": AFF},
    ),
    FilterCase(
        "a namespaceSelector selects pods in every namespace whose labels match",
        three_zones(),
        [make_pod("db-a").namespace("team-a2").label("app", "db").on("node-a").build(),
         make_pod("db-b").namespace("team-b").label("app", "db").on("node-b").build()],
        make_pod("web").pod_affinity(pod_term("zone", app("db"), namespace_selector=selector(team="a"))).build(),
        {"node-a": None, "node-b": AFF, "node-c": AFF},
        TEAMS,
    ),
    FilterCase(
        "explicit namespaces and a namespaceSelector are unioned",
        three_zones(),
        [make_pod("db-a").namespace("team-a").label("app", "db").on("node-a").build(),
         make_pod("db-b").namespace("team-b").label("app", "db").on("node-b").build(),
         make_pod("db-d").label("app", "db").on("node-c").build()],
        make_pod("web").pod_anti_affinity(
            pod_term("zone", app("db"), namespaces=["team-b"], namespace_selector=selector(team="a"))).build(),
        {"node-a": ANTI, "node-b": ANTI, "node-c": None},
        TEAMS,
    ),
    FilterCase(
        "an empty namespaceSelector matches pods of every namespace",
        three_zones(), [make_pod("db").namespace("team-b").label("app", "db").on("node-c").build()],
        make_pod("web").pod_anti_affinity(pod_term("zone", app("db"), namespace_selector=selector())).build(),
        {"node-a": None, "node-b": None, "node-c": ANTI},
        TEAMS,
    ),
    FilterCase(
        "an existing pod's namespaceSelector is matched against the incoming pod's namespace labels",
        three_zones(),
        [make_pod("lonely").pod_anti_affinity(
            pod_term("zone", app("web"), namespace_selector=selector(team="a"))).on("node-a").build()],
        make_pod("web").namespace("team-a2").label("app", "web").build(),
        {"node-a": EXISTING, "node-b": None, "node-c": None},
        TEAMS,
    ),
    FilterCase(
        "an incoming selector matching empty labels still skips a namespace with no Namespace object, as upstream",
        three_zones(), [make_pod("db").namespace("ghost").label("app", "db").on("node-a").build()],
        make_pod("web").pod_anti_affinity(
            pod_term("zone", app("db"), namespace_selector=selector(req("team", "DoesNotExist")))).build(),
        {"node-a": None, "node-b": None, "node-c": None},
        TEAMS,
    ),
    FilterCase(
        "an existing selector matching empty labels catches an incoming pod whose namespace has no object, as upstream",
        three_zones(),
        [make_pod("lonely").pod_anti_affinity(
            pod_term("zone", app("web"), namespace_selector=selector(req("team", "DoesNotExist"))))
         .on("node-a").build()],
        make_pod("web").namespace("ghost").label("app", "web").build(),
        {"node-a": EXISTING, "node-b": None, "node-c": None},
        TEAMS,
    ),
    FilterCase(
        "a nil label selector matches no pod, so required affinity to it fails everywhere",
        three_zones(), [make_pod("db").label("app", "db").on("node-a").build()],
        make_pod("web").pod_affinity(pod_term("zone", None)).build(),
        {"node-a": AFF, "node-b": AFF, "node-c": AFF},
    ),
    FilterCase(
        "a terminating pod still counts for anti-affinity, as upstream",
        three_zones(), [make_pod("web-0").label("app", "web").set(terminating=True).on("node-a").build()],
        make_pod("web-1").label("app", "web").pod_anti_affinity(pod_term("zone", app("web"))).build(),
        {"node-a": ANTI, "node-b": None, "node-c": None},
    ),
]


def verdicts(case: FilterCase) -> dict[str, str | None]:
    state = state_of(case.nodes, case.existing, case.namespaces)
    pre = PLUGIN.pre_filter(case.pod, state)
    out: dict[str, str | None] = {}
    for name, info in state.nodes.items():
        reasons = PLUGIN.filter(case.pod, pre, info, state)
        assert len(reasons) <= 1, "upstream returns one status per node"
        out[name] = reasons[0].reason if reasons else None
    return out


@pytest.mark.parametrize("case", FILTER_CASES, ids=lambda c: c.id)
def test_filter(case: FilterCase) -> None:
    assert verdicts(case) == case.expect


def test_pod_affinity_failure_is_unresolvable_and_anti_affinity_failures_are_not() -> None:
    nodes = three_zones()
    existing = [make_pod("db").label("app", "db").on("node-a").build(),
                make_pod("lonely").pod_anti_affinity(pod_term("zone", app("web"))).on("node-b").build()]
    state = state_of(nodes, existing)
    affine = make_pod("web").label("app", "web").pod_affinity(pod_term("zone", app("db"))).build()
    anti = make_pod("web").label("app", "web").pod_anti_affinity(pod_term("zone", app("db"))).build()
    [aff_reason] = PLUGIN.filter(affine, PLUGIN.pre_filter(affine, state), state.nodes["node-c"], state)
    [anti_reason] = PLUGIN.filter(anti, PLUGIN.pre_filter(anti, state), state.nodes["node-a"], state)
    [existing_reason] = PLUGIN.filter(anti, PLUGIN.pre_filter(anti, state), state.nodes["node-b"], state)
    assert (aff_reason.plugin, aff_reason.unresolvable) == ("InterPodAffinity", True)
    assert (anti_reason.reason, anti_reason.unresolvable) == (ANTI, False)
    assert (existing_reason.reason, existing_reason.unresolvable) == (EXISTING, False)


def test_removing_the_only_matching_pod_reopens_its_zone() -> None:
    """The verifier judges a placed pod with the state updated incrementally; PreFilter must see removals."""
    web0 = make_pod("web-0").label("app", "web").on("node-a").build()
    state = state_of(three_zones(), [web0])
    pod = make_pod("web-1").label("app", "web").pod_anti_affinity(pod_term("zone", app("web"))).build()
    assert PLUGIN.filter(pod, PLUGIN.pre_filter(pod, state), state.nodes["node-a"], state)
    state.remove(web0)
    assert PLUGIN.filter(pod, PLUGIN.pre_filter(pod, state), state.nodes["node-a"], state) == []


# ------------------------------------------------------------------------------------------------ scoring


def normalized(pod: Pod, state: ClusterState, candidates: list[str]) -> dict[str, int]:
    infos = [state.nodes[n] for n in candidates]
    pre = PLUGIN.pre_score(pod, state, infos)
    raw = {i.name: PLUGIN.score(pod, pre, i, state) for i in infos}
    return PLUGIN.normalize(raw, pre)


@dataclass
class ScoreCase:
    id: str
    nodes: list[Node]
    existing: list[Pod]
    pod: Pod
    expect: dict[str, int]  # candidates (the feasible nodes) -> normalized score
    namespaces: dict[str, dict[str, str]] = field(default_factory=dict)


SCORE_CASES = [
    ScoreCase(
        "without any affinity in the cluster every node scores 0",
        three_zones(), [make_pod("db").label("app", "db").on("node-a").build()],
        make_pod("web").build(),
        {"node-a": 0, "node-b": 0, "node-c": 0},
    ),
    ScoreCase(
        "preferred affinity gives the matching pod's zone 100 and the others 0",
        three_zones(), [make_pod("db").label("app", "db").on("node-b").build()],
        make_pod("web").preferred_pod_affinity(5, pod_term("zone", app("db"))).build(),
        {"node-a": 0, "node-b": 100, "node-c": 0},
    ),
    ScoreCase(
        "preferred anti-affinity gives the matching pod's zone 0 and the others 100",
        three_zones(), [make_pod("web-0").label("app", "web").on("node-b").build()],
        make_pod("web-1").preferred_pod_anti_affinity(5, pod_term("zone", app("web"))).build(),
        {"node-a": 100, "node-b": 0, "node-c": 100},
    ),
    ScoreCase(
        "raw -5, 0 and +10 normalize min-max to 0, 33 and 100 (truncated)",
        three_zones(),
        [make_pod("db").label("app", "db").on("node-c").build(),
         make_pod("web-0").label("app", "web").on("node-a").build()],
        make_pod("web-1").preferred_pod_affinity(10, pod_term("zone", app("db")))
        .preferred_pod_anti_affinity(5, pod_term("zone", app("web"))).build(),
        {"node-a": 0, "node-b": 33, "node-c": 100},
    ),
    ScoreCase(
        "raw 1, 2 and 3 normalize to 0, 50 and 100: the minimum is the lowest candidate, not zero",
        three_zones() + [zoned("node-d", "z4")],
        [make_pod("db-1").label("app", "db").on("node-b").build(),
         make_pod("db-2").label("app", "db").on("node-b").build(),
         make_pod("db-3").label("app", "db").on("node-c").build(),
         make_pod("db-4").label("app", "db").on("node-c").build(),
         make_pod("db-5").label("app", "db").on("node-c").build(),
         make_pod("db-6").label("app", "db").on("node-d").build()],
        make_pod("web").preferred_pod_affinity(1, pod_term("zone", app("db"))).build(),
        {"node-d": 0, "node-b": 50, "node-c": 100},
    ),
    ScoreCase(
        "a node without the topology key scores raw 0, between an attracting and a repelling zone",
        [zoned("node-a", "z1"), zoned("node-b", "z2"), zoned("node-nozone", None)],
        [make_pod("db").label("app", "db").on("node-a").build(),
         make_pod("batch").label("app", "batch").on("node-b").build()],
        make_pod("web").preferred_pod_affinity(4, pod_term("zone", app("db")))
        .preferred_pod_anti_affinity(4, pod_term("zone", app("batch"))).build(),
        {"node-a": 100, "node-b": 0, "node-nozone": 50},
    ),
    ScoreCase(
        "pods on nodes that are not candidates still shape the candidates' topology scores",
        three_zones() + [zoned("node-a2", "z1")], [make_pod("db").label("app", "db").on("node-a2").build()],
        make_pod("web").preferred_pod_affinity(5, pod_term("zone", app("db"))).build(),
        {"node-a": 100, "node-b": 0},
    ),
    ScoreCase(
        "an existing pod's REQUIRED affinity attracts a matching incoming pod with weight 1",
        three_zones(),
        [make_pod("web").pod_affinity(pod_term("zone", selector(app="db"))).on("node-c").build()],
        make_pod("db").label("app", "db").build(),
        {"node-a": 0, "node-b": 0, "node-c": 100},
    ),
    ScoreCase(
        "an existing pod's preferred anti-affinity repels a matching incoming pod",
        three_zones(),
        [make_pod("web").preferred_pod_anti_affinity(7, pod_term("zone", app("db"))).on("node-a").build()],
        make_pod("db").label("app", "db").build(),
        {"node-a": 0, "node-b": 100, "node-c": 100},
    ),
    ScoreCase(
        "an existing pod's preferred term with a namespaceSelector is matched on the incoming pod's namespace labels",
        three_zones(),
        [make_pod("web").preferred_pod_affinity(
            3, pod_term("zone", app("db"), namespace_selector=selector(team="a"))).on("node-b").build()],
        make_pod("db").namespace("team-a").label("app", "db").build(),
        {"node-a": 0, "node-b": 100, "node-c": 0},
        TEAMS,
    ),
    ScoreCase(
        "a preference shared by every candidate's region normalizes to a tie at 0",
        three_zones(), [make_pod("db").label("app", "db").on("node-a").build()],
        make_pod("web").preferred_pod_affinity(8, pod_term("region", app("db"))).build(),
        {"node-a": 0, "node-b": 0, "node-c": 0},
    ),
    ScoreCase(
        "existing pods on a node without labels contribute nothing",
        [make_node("bare").build(), zoned("node-a", "z1")],
        [make_pod("web").pod_affinity(pod_term("zone", app("db"))).on("bare").build()],
        make_pod("db").label("app", "db").build(),
        {"bare": 0, "node-a": 0},
    ),
]


@pytest.mark.parametrize("case", SCORE_CASES, ids=lambda c: c.id)
def test_score(case: ScoreCase) -> None:
    state = state_of(case.nodes, case.existing, case.namespaces)
    assert normalized(case.pod, state, list(case.expect)) == case.expect


def test_raw_score_sums_weights_of_every_matching_pod_in_the_domain() -> None:
    pods = [make_pod(f"db-{i}").label("app", "db").on("node-a" if i < 3 else "node-b").build() for i in range(4)]
    state = state_of(three_zones(), pods)
    pod = make_pod("web").preferred_pod_affinity(6, pod_term("zone", app("db"))).build()
    pre = PLUGIN.pre_score(pod, state, state.node_infos())
    assert {n: PLUGIN.score(pod, pre, i, state) for n, i in state.nodes.items()} == {
        "node-a": 18, "node-b": 6, "node-c": 0}


def test_default_weight_is_two() -> None:
    assert (PLUGIN.name, PLUGIN.weight) == ("InterPodAffinity", 2)


# -------------------------------------------------------------------------------------------- public helpers


def test_term_namespaces_resolves_own_namespace_explicit_list_selector_and_all() -> None:
    owner = make_pod("o").namespace("team-b").build()
    assert term_namespaces(pod_term("zone", app("x")), owner, TEAMS) == {"team-b"}
    assert term_namespaces(pod_term("zone", app("x"), namespaces=["default"]), owner, TEAMS) == {"default"}
    assert term_namespaces(pod_term("zone", app("x"), namespaces=["default"], namespace_selector=selector(team="a")),
                           owner, TEAMS) == {"default", "team-a", "team-a2"}
    assert term_namespaces(pod_term("zone", app("x"), namespace_selector=selector()), owner, TEAMS) is None


def test_term_matches_checks_namespace_and_labels_in_both_upstream_views() -> None:
    owner = make_pod("o").namespace("team-b").build()
    same_ns = make_pod("c").namespace("team-b").label("app", "x").build()
    other_ns = make_pod("c").namespace("team-a").label("app", "x").build()
    ghost = make_pod("c").namespace("ghost").label("app", "x").build()
    plain = pod_term("zone", app("x"))
    no_team = pod_term("zone", app("x"), namespace_selector=selector(req("team", "DoesNotExist")))
    assert term_matches(plain, owner, same_ns, TEAMS)
    assert not term_matches(plain, owner, other_ns, TEAMS)
    assert not term_matches(pod_term("zone", app("y")), owner, same_ns, TEAMS)
    assert term_matches(no_team, owner, ghost, TEAMS)
    assert not term_matches(no_team, owner, ghost, TEAMS, owner_incoming=True)


# ------------------------------------------------------------------ incremental state, cached precompute


def test_a_replica_sees_the_previous_replica_bound_since_its_own_precompute() -> None:
    """Replicas share their terms, so PreFilter reuses per-node work; a bind in between must still count."""
    state = state_of(three_zones(), [make_pod("web-0").label("app", "web").on("node-a").build()])
    replica = lambda name: make_pod(name).label("app", "web").pod_anti_affinity(pod_term("zone", app("web"))).build()
    web1 = replica("web-1")
    pre = PLUGIN.pre_filter(web1, state)
    assert [n for n, i in state.nodes.items() if not PLUGIN.filter(web1, pre, i, state)] == ["node-b", "node-c"]
    state.add(web1, "node-b")
    web2 = replica("web-2")
    pre = PLUGIN.pre_filter(web2, state)
    assert [n for n, i in state.nodes.items() if not PLUGIN.filter(web2, pre, i, state)] == ["node-c"]


def test_a_replica_scores_against_the_previous_replica_bound_since_its_own_prescore() -> None:
    state = state_of(three_zones(), [make_pod("db").label("app", "db").on("node-a").build()])
    replica = lambda name: (make_pod(name).label("app", "web")
                            .preferred_pod_anti_affinity(10, pod_term("zone", app("web")))
                            .preferred_pod_affinity(1, pod_term("zone", app("db"))).build())
    assert normalized(replica("web-1"), state, ["node-a", "node-b", "node-c"]) == {
        "node-a": 100, "node-b": 0, "node-c": 0}
    state.add(replica("web-1"), "node-a")
    assert normalized(replica("web-2"), state, ["node-a", "node-b", "node-c"]) == {
        "node-a": 0, "node-b": 100, "node-c": 100}


# A direct transcription of upstream's PreFilter/Filter/PreScore/Score over all pods, without the per-node
# caches or compiled matchers, to compare against on random clusters that change between pods.

def reference_verdicts(pod: Pod, state: ClusterState) -> dict[str, str | None]:
    ns = state.namespace_labels
    a = pod.affinity
    aff: dict[tuple[str, str], int] = {}
    anti: dict[tuple[str, str], int] = {}
    existing_anti: dict[tuple[str, str], int] = {}

    def bump(counts: dict[tuple[str, str], int], labels: dict[str, str], key: str) -> None:
        if key in labels:
            counts[(key, labels[key])] = counts.get((key, labels[key]), 0) + 1

    for other, info in state.all_pods():
        labels = info.node.labels
        if a.pod_required and all(term_matches(t, pod, other, ns, owner_incoming=True) for t in a.pod_required):
            for t in a.pod_required:
                bump(aff, labels, t.topology_key)
        for t in a.anti_required:
            if term_matches(t, pod, other, ns, owner_incoming=True):
                bump(anti, labels, t.topology_key)
        for t in other.affinity.anti_required:
            if term_matches(t, other, pod, ns):
                bump(existing_anti, labels, t.topology_key)
    self_match = bool(a.pod_required) and all(
        term_matches(t, pod, pod, ns, owner_incoming=True) for t in a.pod_required)
    out: dict[str, str | None] = {}
    for name, info in state.nodes.items():
        labels = info.node.labels
        keys_present = all(t.topology_key in labels for t in a.pod_required)
        domains_hold = all(aff.get((t.topology_key, labels.get(t.topology_key)), 0) > 0 for t in a.pod_required)
        if not keys_present or not (domains_hold or (not aff and self_match)):
            out[name] = AFF
        elif any(anti.get((t.topology_key, labels.get(t.topology_key)), 0) > 0 for t in a.anti_required):
            out[name] = ANTI
        elif any(existing_anti.get(pair, 0) > 0 for pair in labels.items()):
            out[name] = EXISTING
        else:
            out[name] = None
    return out


def reference_raw_scores(pod: Pod, state: ClusterState) -> dict[str, int]:
    ns = state.namespace_labels
    topo: dict[tuple[str, str], int] = {}

    def add(labels: dict[str, str], key: str, weight: int) -> None:
        if key in labels:
            topo[(key, labels[key])] = topo.get((key, labels[key]), 0) + weight

    for other, info in state.all_pods():
        labels = info.node.labels
        for w in pod.affinity.pod_preferred:
            if term_matches(w.term, pod, other, ns, owner_incoming=True):
                add(labels, w.term.topology_key, w.weight)
        for w in pod.affinity.anti_preferred:
            if term_matches(w.term, pod, other, ns, owner_incoming=True):
                add(labels, w.term.topology_key, -w.weight)
        for t in other.affinity.pod_required:
            if term_matches(t, other, pod, ns):
                add(labels, t.topology_key, 1)
        for w in other.affinity.pod_preferred:
            if term_matches(w.term, other, pod, ns):
                add(labels, w.term.topology_key, w.weight)
        for w in other.affinity.anti_preferred:
            if term_matches(w.term, other, pod, ns):
                add(labels, w.term.topology_key, -w.weight)
    return {name: sum(topo.get(pair, 0) for pair in info.node.labels.items()) for name, info in state.nodes.items()}


KEYS = ("zone", "region", "rack")
NAMESPACES = ("default", "team-a", "team-b", "ghost")  # ghost has no Namespace object

label_values = st.sampled_from(["web", "db", "cache"])
selectors = st.one_of(
    st.none(),
    label_values.map(lambda v: selector(app=v)),
    st.lists(label_values, min_size=1, max_size=2).map(lambda vs: selector(req("app", "In", *vs))),
    st.just(selector(req("app", "Exists"))),
)
ns_selectors = st.sampled_from([None, None, selector(), selector(team="a"), selector(req("team", "DoesNotExist"))])
terms = st.builds(lambda k, sel, nss, nsel: pod_term(k, sel, nss, nsel), st.sampled_from(KEYS), selectors,
                  st.lists(st.sampled_from(NAMESPACES), max_size=2), ns_selectors)
weights = st.integers(1, 100)


@st.composite
def pods(draw: st.DrawFn, name: str) -> Pod:
    b = make_pod(name).namespace(draw(st.sampled_from(NAMESPACES)))
    if draw(st.booleans()):
        b = b.label("app", draw(label_values))
    b = b.pod_affinity(*draw(st.lists(terms, max_size=2)))
    b = b.pod_anti_affinity(*draw(st.lists(terms, max_size=2)))
    for t in draw(st.lists(terms, max_size=2)):
        b = b.preferred_pod_affinity(draw(weights), t)
    for t in draw(st.lists(terms, max_size=2)):
        b = b.preferred_pod_anti_affinity(draw(weights), t)
    return b.build()


@st.composite
def clusters(draw: st.DrawFn) -> tuple[ClusterState, list[Pod]]:
    nodes = []
    for i in range(draw(st.integers(1, 5))):
        b = make_node(f"n{i}")
        for k in KEYS:
            if draw(st.integers(0, 3)):
                b = b.label(k, draw(st.sampled_from(["1", "2"])))
        nodes.append(b.build())
    existing = [dataclasses.replace(draw(pods(f"e{i}")), node_name=draw(st.sampled_from(nodes)).name)
                for i in range(draw(st.integers(0, 8)))]
    state = state_of(nodes, existing, {"default": {}, "team-a": {"team": "a"}, "team-b": {"team": "b"}})
    return state, draw(st.lists(pods("incoming"), min_size=1, max_size=4))


@settings(max_examples=150, deadline=None)
@given(clusters(), st.randoms(use_true_random=False))
def test_random_clusters_match_a_direct_transcription_of_upstream(cluster: tuple[ClusterState, list[Pod]],
                                                                  rnd: random.Random) -> None:
    state, incoming = cluster
    for i, pod in enumerate(incoming):
        pod = dataclasses.replace(pod, name=f"incoming-{i}")
        pre = PLUGIN.pre_filter(pod, state)
        got = {n: (PLUGIN.filter(pod, pre, info, state) or [None])[0] for n, info in state.nodes.items()}
        assert {n: r.reason if r else None for n, r in got.items()} == reference_verdicts(pod, state)
        infos = state.node_infos()
        pre_s = PLUGIN.pre_score(pod, state, infos)
        assert {i.name: PLUGIN.score(pod, pre_s, i, state) for i in infos} == reference_raw_scores(pod, state)
        # Change the cluster between pods: bind this one somewhere, sometimes unbind an earlier pod.
        state.add(pod, rnd.choice(list(state.nodes)))
        if state.node_of and rnd.random() < 0.3:
            key = rnd.choice(sorted(state.node_of))
            state.remove(state.nodes[state.node_of[key]].pods[key])
