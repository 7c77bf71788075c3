"""A KubeSchedulerConfiguration's profiles as podplan's (optimizer.profiles.profiles_from): filter order and
disabling, score weights, percentageOfNodesToScore, and each plugin's args as the rule packages apply them;
the default configuration is exactly DEFAULT_PROFILE."""
from __future__ import annotations

from typing import Any

import pytest

from builders import cluster_of, make_node, make_pod, pod_term, run_filter, run_score, selector, state_of
from podplan.models.objects import Service
from podplan.models.schedulerconfig import API_VERSION, KIND, parse_scheduler_config
from podplan.optimizer.framework import Profile
from podplan.optimizer.profiles import Profiles, default_profiles, profiles_from
from podplan.optimizer.registry import DEFAULT_PROFILE
from podplan.optimizer.state import ClusterState

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"


def profiles(*profile: dict[str, Any], **top: Any) -> Profiles:
    body: dict[str, Any] = {"apiVersion": API_VERSION, "kind": KIND, **top}
    if profile:
        body["profiles"] = list(profile)
    return profiles_from(parse_scheduler_config(body, "sched.yaml"))


def only(p: Profiles) -> Profile:
    (profile,) = p.profiles
    return profile


def args(plugin: str, **values: Any) -> dict[str, Any]:
    return {"pluginConfig": [{"name": plugin, "args": values}]}


def test_the_default_configuration_is_the_default_profile_exactly() -> None:
    p = only(default_profiles())
    assert p.plugins == DEFAULT_PROFILE.plugins
    assert [p.weight(x) for x in p.plugins] == [DEFAULT_PROFILE.weight(x) for x in DEFAULT_PROFILE.plugins]
    assert (p.scheduler_name, p.percentage_of_nodes_to_score) == ("default-scheduler", 0)
    assert default_profiles().strategies == ("spread",)


def test_weights_disabled_filters_and_scores_follow_the_configuration() -> None:
    p = only(profiles({"plugins": {"score": {"enabled": [{"name": "NodeAffinity", "weight": 7}],
                                             "disabled": [{"name": "InterPodAffinity"}]},
                                   "filter": {"disabled": [{"name": "TaintToleration"}]}}}))
    assert [x.name for x in p.filters] == ["NodeUnschedulable", "NodeName", "NodeAffinity", "NodePorts",
                                           "NodeResourcesFit", "PodTopologySpread", "InterPodAffinity"]
    scores = {x.name: p.weight(x) for x in p.scorers}
    assert scores == {"TaintToleration": 3, "NodeAffinity": 7, "NodeResourcesFit": 1, "PodTopologySpread": 2,
                      "NodeResourcesBalancedAllocation": 1}
    taint = p.plugin("TaintToleration")
    assert taint is not None and taint.encoding is not None and taint.encoding.static_mask is None


@pytest.mark.parametrize("top,profile,want", [
    ({"percentageOfNodesToScore": 30}, {}, 30),
    ({"percentageOfNodesToScore": 30}, {"percentageOfNodesToScore": 70}, 70),
    ({}, {}, 0),
], ids=["the global percentage applies to a profile without its own", "a profile's own percentage wins",
        "unset everywhere is the adaptive default"])
def test_percentage_of_nodes_to_score(top: dict[str, Any], profile: dict[str, Any], want: int) -> None:
    assert only(profiles(profile, **top)).percentage_of_nodes_to_score == want


def test_most_allocated_scores_the_fuller_node_higher() -> None:
    state = state_of([make_node("full").alloc(cpu="4").build(), make_node("empty").alloc(cpu="4").build()],
                     [make_pod("old").req(cpu="2").on("full").build()])
    pod = make_pod("new").req(cpu="1").build()
    fit = only(profiles(args("NodeResourcesFit", scoringStrategy={"type": "MostAllocated"}))).plugin("NodeResourcesFit")
    least = DEFAULT_PROFILE.plugin("NodeResourcesFit")
    assert fit is not None and least is not None
    most_scores, least_scores = run_score(fit, pod, state), run_score(least, pod, state)
    assert most_scores["full"] > most_scores["empty"]
    assert least_scores["full"] < least_scores["empty"]


def _affinity_state(required: bool) -> Any:
    """An existing db pod in zone a whose (required or preferred) affinity term selects app=web pods."""
    nodes = [make_node(f"n-{z}").label(ZONE, z).label(HOST, f"n-{z}").build() for z in ("a", "b")]
    db = make_pod("db").label("app", "db").on("n-a")
    term = pod_term(ZONE, selector(app="web"))
    db = db.pod_affinity(term) if required else db.preferred_pod_affinity(10, term)
    return state_of(nodes, [db.build(), make_pod("web-0").label("app", "web").on("n-a").build()])


@pytest.mark.parametrize("weight,want", [(1, {"n-a": 100, "n-b": 0}), (0, {"n-a": 0, "n-b": 0})],
                         ids=["hardPodAffinityWeight 1: an existing pod's required term draws the pod to its zone",
                              "hardPodAffinityWeight 0: it does not"])
def test_hard_pod_affinity_weight(weight: int, want: dict[str, int]) -> None:
    plugin = only(profiles(args("InterPodAffinity", hardPodAffinityWeight=weight))).plugin("InterPodAffinity")
    assert plugin is not None
    assert run_score(plugin, make_pod("web-1").label("app", "web").build(), _affinity_state(True)) == want


@pytest.mark.parametrize("ignore,want", [(False, {"n-a": 100, "n-b": 0}), (True, {"n-a": 0, "n-b": 0})],
                         ids=["existing pods' preferred terms score an incoming pod without terms",
                              "ignorePreferredTermsOfExistingPods skips them"])
def test_ignore_preferred_terms_of_existing_pods(ignore: bool, want: dict[str, int]) -> None:
    plugin = only(profiles(args("InterPodAffinity", ignorePreferredTermsOfExistingPods=ignore))).plugin("InterPodAffinity")
    assert plugin is not None
    assert run_score(plugin, make_pod("web-1").label("app", "web").build(), _affinity_state(False)) == want


def _served_state() -> Any:
    """Two nodes, one without a zone label; a Service selects app=web (the default selector)."""
    nodes = [make_node("zoned").label(ZONE, "a").label(HOST, "zoned").build(),
             make_node("bare").label(HOST, "bare").build()]
    return ClusterState.from_cluster(cluster_of(nodes, services=(Service("default", "web", {"app": "web"}),)))


def test_list_default_constraints_filter_a_pod_without_constraints_of_its_own() -> None:
    spread = args("PodTopologySpread", defaultingType="List", defaultConstraints=[
        {"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule"}])
    p = profiles(spread)
    plugin = only(p).plugin("PodTopologySpread")
    assert plugin is not None
    state, pod = _served_state(), make_pod("web-0").label("app", "web").build()
    assert run_filter(plugin, pod, state, "zoned") == []
    assert [r.reason for r in run_filter(plugin, pod, state, "bare")] == [
        "node(s) didn't match pod topology spread constraints (missing required label)"]
    assert run_filter(DEFAULT_PROFILE.plugin("PodTopologySpread"), pod, state, "bare") == []
    assert p.unsolvable == (p.unsolvable[0],) and "not supported yet" in p.unsolvable[0]


def test_an_empty_list_of_default_constraints_turns_the_system_defaults_off() -> None:
    plugin = only(profiles(args("PodTopologySpread", defaultingType="List"))).plugin("PodTopologySpread")
    assert plugin is not None and plugin.score_skipped is not None
    state, pod = _served_state(), make_pod("web-0").label("app", "web").build()
    assert plugin.score_skipped(plugin.pre_score(pod, state, list(state.nodes.values())))
    system = DEFAULT_PROFILE.plugin("PodTopologySpread")
    assert system is not None and not system.score_skipped(system.pre_score(pod, state, list(state.nodes.values())))
