"""--scheduler-config FILE: a KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1) read with kube-scheduler's
defaulting (default plugins, merged with the user's; default args), the framework's multiPoint expansion and
score weights, and its validation: a bad file is ONE line naming the file and the field."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from podplan.models.errors import InputError
from podplan.models.schedulerconfig import (API_VERSION, KIND, LIST_DEFAULTING, MOST_ALLOCATED,
                                            REQUESTED_TO_CAPACITY_RATIO, SchedulerConfiguration,
                                            default_configuration, load_scheduler_config, parse_scheduler_config)

INSTANCES = Path(__file__).resolve().parents[1] / "instances"


def config(*profiles: dict[str, Any], **top: Any) -> SchedulerConfiguration:
    body: dict[str, Any] = {"apiVersion": API_VERSION, "kind": KIND, **top}
    if profiles:
        body["profiles"] = list(profiles)
    return parse_scheduler_config(body, "sched.yaml")


def only(cfg: SchedulerConfiguration) -> Any:
    (profile,) = cfg.profiles
    return profile


def fit(**args: Any) -> dict[str, Any]:
    return {"name": "NodeResourcesFit", "args": args}


# ----------------------------------------------------------------------------------------- the default


def test_the_default_profile_scores_with_upstreams_weights() -> None:
    p = only(default_configuration())
    assert p.scheduler_name == "default-scheduler"
    assert p.scores == {"TaintToleration": 3, "NodeAffinity": 2, "NodeResourcesFit": 1, "PodTopologySpread": 2,
                        "InterPodAffinity": 2, "NodeResourcesBalancedAllocation": 1, "ImageLocality": 1,
                        "VolumeBinding": 1}
    assert p.modelled_scores == (("TaintToleration", 3), ("NodeAffinity", 2), ("NodeResourcesFit", 1),
                                 ("PodTopologySpread", 2), ("InterPodAffinity", 2), ("NodeResourcesBalancedAllocation", 1))


def test_the_default_profile_filters_in_upstreams_order_and_preempts() -> None:
    p = only(default_configuration())
    assert p.modelled_filters == ("NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity", "NodePorts",
                                  "NodeResourcesFit", "PodTopologySpread", "InterPodAffinity")
    assert p.filters[:6] == p.modelled_filters[:6] and "VolumeBinding" in p.filters
    assert p.preemption and p.enabled("queueSort") == ("PrioritySort",) and p.enabled("bind") == ("DefaultBinder",)


def test_the_default_args_are_upstreams() -> None:
    p = only(default_configuration())
    assert (p.fit.scoring_strategy.type, p.fit.scoring_strategy.resource_weights) == ("LeastAllocated", (("cpu", 1), ("memory", 1)))
    assert p.balanced_allocation.resource_weights == (("cpu", 1), ("memory", 1))
    assert p.pod_topology_spread.uses_system_defaults and p.pod_topology_spread.default_constraints == ()
    assert (p.inter_pod_affinity.hard_pod_affinity_weight, p.inter_pod_affinity.ignore_preferred_terms_of_existing_pods) == (1, False)
    assert (p.default_preemption.min_candidate_nodes_percentage, p.default_preemption.min_candidate_nodes_absolute) == (10, 100)
    assert p.node_affinity.added_required is None and p.percentage_of_nodes_to_score is None


def test_a_configuration_without_profiles_is_the_default() -> None:
    assert config() == default_configuration().__class__(default_configuration().profiles, 0, "sched.yaml")


def test_plugins_podplan_does_not_model_are_accepted_with_a_note() -> None:
    notes = only(default_configuration()).notes
    assert any("ImageLocality" in n and "scores every node 0" in n for n in notes)
    assert any("VolumeBinding" in n for n in notes)
    trimmed = only(config({"plugins": {"multiPoint": {"disabled": [{"name": n} for n in (
        "ImageLocality", "VolumeBinding", "VolumeZone", "VolumeRestrictions", "NodeVolumeLimits", "DynamicResources")]}}}))
    assert trimmed.notes == ()


# ------------------------------------------------------------------------------------------- profiles


def test_the_bundled_most_allocated_configuration() -> None:
    cfg = load_scheduler_config(str(INSTANCES / "scheduler-configs" / "most-allocated.yaml"))
    packing = cfg.profile("default-scheduler")
    assert packing is not None and packing.fit.scoring_strategy.type == MOST_ALLOCATED
    assert packing.fit.scoring_strategy.resource_weights == (("cpu", 1), ("memory", 1), ("nvidia.com/gpu", 3))
    assert packing.weight("NodeResourcesFit") == 5 and packing.weight("NodeResourcesBalancedAllocation") == 0
    spread = cfg.profile("spread-scheduler")
    assert spread is not None and spread.fit.scoring_strategy.type == "LeastAllocated"
    assert spread.weight("NodeResourcesBalancedAllocation") == 1 and spread.percentage_of_nodes_to_score == 100
    assert cfg.profile("volcano") is None  # pods of other schedulers are not kube-scheduler's


WEIGHTS = [
    ("a multiPoint weight replaces the default's in place",
     {"multiPoint": {"enabled": [{"name": "TaintToleration", "weight": 10}]}}, {"TaintToleration": 10}),
    ("a Score weight wins over the multiPoint weight",
     {"score": {"enabled": [{"name": "NodeAffinity", "weight": 7}]},
      "multiPoint": {"enabled": [{"name": "NodeAffinity", "weight": 4}]}}, {"NodeAffinity": 7}),
    ("a weight of 0 means 1", {"score": {"enabled": [{"name": "InterPodAffinity", "weight": 0}]}}, {"InterPodAffinity": 1}),
    ("an unset weight means 1", {"score": {"enabled": [{"name": "PodTopologySpread"}]}}, {"PodTopologySpread": 1}),
    ("disabling a score plugin takes it out of Score only",
     {"score": {"disabled": [{"name": "NodeResourcesBalancedAllocation"}]}}, {"NodeResourcesBalancedAllocation": 0}),
    ("disabling every score plugin leaves only those enabled again",
     {"score": {"disabled": [{"name": "*"}], "enabled": [{"name": "NodeResourcesFit", "weight": 2}]}},
     {"NodeResourcesFit": 2, "TaintToleration": 0, "ImageLocality": 0}),
]


@pytest.mark.parametrize("plugins,expected", [(p, e) for _, p, e in WEIGHTS], ids=[i for i, _, _ in WEIGHTS])
def test_score_weights(plugins: dict[str, Any], expected: dict[str, int]) -> None:
    p = only(config({"plugins": plugins}))
    assert {name: p.weight(name) for name in expected} == expected


def test_disabling_a_filter_keeps_the_plugins_score() -> None:
    p = only(config({"plugins": {"filter": {"disabled": [{"name": "TaintToleration"}]}}}))
    assert "TaintToleration" not in p.filters and p.weight("TaintToleration") == 3


def test_a_filter_enabled_at_its_point_runs_before_the_multipoint_ones() -> None:
    # expandMultiPointPlugins: plugins re-enabled at the extension point come first, in their own order.
    p = only(config({"plugins": {"filter": {"enabled": [{"name": "NodePorts"}, {"name": "NodeName"}]}}}))
    assert p.filters[:3] == ("NodePorts", "NodeName", "NodeUnschedulable")


def test_switching_off_every_default_needs_a_queue_sort_and_a_binder() -> None:
    minimal = {"multiPoint": {"disabled": [{"name": "*"}], "enabled": [
        {"name": "PrioritySort"}, {"name": "DefaultBinder"}, {"name": "NodeResourcesFit", "weight": 3}]}}
    p = only(config({"plugins": minimal}))
    assert p.filters == ("NodeResourcesFit",) and p.scores == {"NodeResourcesFit": 3} and not p.preemption


# TestNewFrameworkMultiPointExpansion, with in-tree plugins: every default is switched off ("*") and the case's
# multiPoint plugins enabled after PrioritySort and DefaultBinder. (id, multiPoint, other points, point, expected)
BASE = [{"name": "PrioritySort"}, {"name": "DefaultBinder"}]
EXPANSION = [
    ("a multiPoint plugin lands at every point it implements, its weight at Score",
     [{"name": "NodeAffinity", "weight": 5}], {}, ["preFilter", "filter", "preScore", "score"],
     [("NodeAffinity",), ("NodeAffinity",), ("NodeAffinity",), (("NodeAffinity", 5),)]),
    ("disabled at some points, it runs at the others",
     [{"name": "NodeAffinity"}], {"preScore": {"disabled": [{"name": "NodeAffinity"}]}, "score": {"disabled": [{"name": "NodeAffinity"}]}},
     ["filter", "preScore", "score"], [("NodeAffinity",), (), ()]),
    ("disabling '*' at preScore keeps Score",
     [{"name": "NodeAffinity"}, {"name": "ImageLocality"}], {"preScore": {"disabled": [{"name": "*"}]}},
     ["preScore", "score"], [(), (("NodeAffinity", 1), ("ImageLocality", 1))]),
    ("plugins named at Score come first, in Score's order",
     [{"name": "TaintToleration"}, {"name": "NodeAffinity"}, {"name": "ImageLocality"}],
     {"score": {"enabled": [{"name": "ImageLocality"}, {"name": "NodeAffinity"}]}},
     ["score"], [(("ImageLocality", 1), ("NodeAffinity", 1), ("TaintToleration", 1))]),
    ("Score weights override multiPoint's, and a Score-only plugin comes last",
     [{"name": "TaintToleration"}, {"name": "NodeAffinity"}],
     {"score": {"enabled": [{"name": "NodeAffinity", "weight": 5}, {"name": "ImageLocality", "weight": 5},
                            {"name": "TaintToleration", "weight": 3}]}},
     ["score"], [(("NodeAffinity", 5), ("TaintToleration", 3), ("ImageLocality", 5))]),
]


@pytest.mark.parametrize("multi,others,points,expected", [c[1:] for c in EXPANSION], ids=[c[0] for c in EXPANSION])
def test_multipoint_expansion(multi: list[dict[str, Any]], others: dict[str, Any], points: list[str], expected: list[Any]) -> None:
    plugins = {"multiPoint": {"disabled": [{"name": "*"}], "enabled": BASE + multi}, **others}
    p = only(config({"plugins": plugins}))
    assert [p.score_weights if point == "score" else p.enabled(point) for point in points] == expected


def test_a_plugin_twice_at_multipoint_is_already_registered() -> None:
    with pytest.raises(InputError, match="already registered|enabled twice"):
        config({"plugins": {"multiPoint": {"enabled": [{"name": "NodeAffinity"}, {"name": "NodeAffinity"}]}}})


def test_disabling_default_preemption_switches_preemption_off() -> None:
    p = only(config({"plugins": {"postFilter": {"disabled": [{"name": "DefaultPreemption"}]}}}))
    assert not p.preemption


def test_two_profiles_by_scheduler_name() -> None:
    cfg = config({"schedulerName": "default-scheduler"},
                 {"schedulerName": "batch", "plugins": {"score": {"disabled": [{"name": "*"}]}}})
    assert [p.scheduler_name for p in cfg.profiles] == ["default-scheduler", "batch"]
    batch = cfg.profile("batch")
    assert batch is not None and batch.scores == {}


# ------------------------------------------------------------------------------------------------ args


def test_requested_to_capacity_ratio_args() -> None:
    shape = [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}]
    p = only(config({"pluginConfig": [fit(scoringStrategy={
        "type": "RequestedToCapacityRatio", "resources": [{"name": "intel.com/foo", "weight": 3}],
        "requestedToCapacityRatio": {"shape": shape}})]}))
    s = p.fit.scoring_strategy
    assert (s.type, s.resource_weights, s.shape) == (REQUESTED_TO_CAPACITY_RATIO, (("intel.com/foo", 3),), ((0, 0), (100, 10)))


def test_a_strategy_without_resources_gets_cpu_and_memory() -> None:
    p = only(config({"pluginConfig": [fit(scoringStrategy={"type": "MostAllocated"})]}))
    assert p.fit.scoring_strategy.resource_weights == (("cpu", 1), ("memory", 1))


IGNORED = [
    ("a resource named in ignoredResources", "example.com/fpga", True),
    ("a resource of an ignored group", "nvidia.com/gpu", True),
    ("another extended resource", "intel.com/qat", False),
]


@pytest.mark.parametrize("resource,ignored", [(r, i) for _, r, i in IGNORED], ids=[i for i, _, _ in IGNORED])
def test_ignored_resources(resource: str, ignored: bool) -> None:
    p = only(config({"pluginConfig": [fit(ignoredResources=["example.com/fpga"], ignoredResourceGroups=["nvidia.com"])]}))
    assert p.fit.ignores(resource, extended=True) is ignored
    assert not p.fit.ignores("cpu", extended=False)


def test_the_other_plugin_args() -> None:
    added = {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "pool", "operator": "In", "values": ["batch"]}]}]},
        "preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 20, "preference": {"matchExpressions": [{"key": "spot", "operator": "Exists"}]}}]}
    p = only(config({"percentageOfNodesToScore": 30, "pluginConfig": [
        {"name": "NodeResourcesBalancedAllocation", "args": {"resources": [{"name": "cpu"}, {"name": "nvidia.com/gpu", "weight": 1}]}},
        {"name": "PodTopologySpread", "args": {"defaultingType": "List", "defaultConstraints": [
            {"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "DoNotSchedule"}]}},
        {"name": "InterPodAffinity", "args": {"hardPodAffinityWeight": 0, "ignorePreferredTermsOfExistingPods": True}},
        {"name": "NodeAffinity", "args": {"apiVersion": API_VERSION, "kind": "NodeAffinityArgs", "addedAffinity": added}},
        {"name": "DefaultPreemption", "args": {"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 5}},
        {"name": "VolumeBinding", "args": {"bindTimeoutSeconds": 600}},
    ]}))
    assert p.balanced_allocation.resource_weights == (("cpu", 1), ("nvidia.com/gpu", 1))
    (c,) = p.pod_topology_spread.default_constraints
    assert p.pod_topology_spread.defaulting_type == LIST_DEFAULTING and not p.pod_topology_spread.uses_system_defaults
    assert (c.max_skew, c.topology_key, c.when_unsatisfiable, c.label_selector) == (1, "topology.kubernetes.io/zone", "DoNotSchedule", None)
    assert (p.inter_pod_affinity.hard_pod_affinity_weight, p.inter_pod_affinity.ignore_preferred_terms_of_existing_pods) == (0, True)
    assert p.node_affinity.added_required is not None
    assert p.node_affinity.added_required.matches("n", {"pool": "batch"}) and not p.node_affinity.added_required.matches("n", {})
    assert [t.weight for t in p.node_affinity.added_preferred] == [20]
    assert (p.default_preemption.min_candidate_nodes_percentage, p.default_preemption.min_candidate_nodes_absolute) == (0, 5)
    assert p.percentage_of_nodes_to_score == 30


def test_list_defaulting_without_constraints_means_no_default_spreading() -> None:
    p = only(config({"pluginConfig": [{"name": "PodTopologySpread", "args": {"defaultingType": "List"}}]}))
    assert p.pod_topology_spread.default_constraints == () and not p.pod_topology_spread.uses_system_defaults


# numFeasibleNodesToFind: (profile %, global %, nodes, nodes kube-scheduler looks for)
NODES_TO_SCORE = [
    (None, 0, 50, 50), (None, 0, 99, 99), (None, 0, 1000, 420), (None, 0, 5000, 500), (None, 0, 10000, 500),
    (None, 10, 500, 100), (None, 10, 5000, 500), (30, 10, 5000, 1500), (100, 0, 5000, 5000), (0, 50, 1000, 420),
]


@pytest.mark.parametrize("profile_pct,global_pct,nodes,expected", NODES_TO_SCORE,
                         ids=[f"profile {p} global {g}: {n} nodes look for {e}" for p, g, n, e in NODES_TO_SCORE])
def test_percentage_of_nodes_to_score(profile_pct: int | None, global_pct: int, nodes: int, expected: int) -> None:
    profile = {} if profile_pct is None else {"percentageOfNodesToScore": profile_pct}
    cfg = config(profile, percentageOfNodesToScore=global_pct)
    assert cfg.nodes_to_score(cfg.profiles[0], nodes) == expected


# ----------------------------------------------------------------------------------------------- rejected

BAD = [
    ("an old apiVersion", {"apiVersion": "kubescheduler.config.k8s.io/v1beta3"}, "apiVersion", "v1beta3 was removed"),
    ("another kind", {"kind": "Pod"}, "kind", "must be KubeSchedulerConfiguration"),
    ("an unknown top-level field", {"percentOfNodes": 5}, "percentOfNodes", 'unknown field "percentOfNodes"'),
    ("a global percentage above 100", {"percentageOfNodesToScore": 101}, "percentageOfNodesToScore", "not in valid range [0-100]"),
    ("extenders", {"extenders": [{"urlPrefix": "http://x"}]}, "extenders", "podplan cannot call"),
    ("two profiles with one name", {"profiles": [{"schedulerName": "a"}, {"schedulerName": "a"}]},
     "profiles[1].schedulerName", 'duplicate profile for scheduler "a"'),
    ("an unnamed profile among several", {"profiles": [{"schedulerName": "a"}, {}]},
     "profiles[1].schedulerName", "is required when there are several profiles"),
    ("an unknown profile field", {"profiles": [{"plugin": {}}]}, "profiles[0].plugin", 'unknown field "plugin"'),
    ("an unknown extension point", {"profiles": [{"plugins": {"scoring": {}}}]}, "profiles[0].plugins.scoring", "unknown field"),
    ("an unknown plugin", {"profiles": [{"plugins": {"score": {"enabled": [{"name": "Coscheduling"}]}}}]},
     "profiles[0].plugins.score.enabled[0].name", 'unknown plugin "Coscheduling"'),
    ("a removed plugin", {"profiles": [{"plugins": {"score": {"enabled": [{"name": "SelectorSpread"}]}}}]},
     "profiles[0].plugins.score.enabled[0].name", "was removed"),
    ("a plugin at a point it does not extend", {"profiles": [{"plugins": {"filter": {"enabled": [{"name": "ImageLocality"}]}}}]},
     "profiles[0].plugins.filter.enabled[0].name", "does not extend filter"),
    ("a negative weight", {"profiles": [{"plugins": {"score": {"enabled": [{"name": "NodeAffinity", "weight": -1}]}}}]},
     "profiles[0].plugins.score.enabled[0].weight", "must not be negative"),
    ("a weight that is not a number", {"profiles": [{"plugins": {"multiPoint": {"enabled": [{"name": "NodeAffinity", "weight": "2"}]}}}]},
     "profiles[0].plugins.multiPoint.enabled[0].weight", "expected an integer, got the string \"2\""),
    ("a plugin enabled twice", {"profiles": [{"plugins": {"score": {"enabled": [{"name": "NodeAffinity"}, {"name": "NodeAffinity"}]}}}]},
     "profiles[0].plugins.score.enabled[1].name", "enabled twice"),
    ("no queue sort plugin left", {"profiles": [{"plugins": {"multiPoint": {"disabled": [{"name": "*"}]}}}]},
     "profiles[0].plugins.queueSort", "only one queue sort plugin required"),
    ("two pluginConfig entries for one plugin", {"profiles": [{"pluginConfig": [fit(), fit()]}]},
     "profiles[0].pluginConfig[1].name", "duplicate pluginConfig"),
    ("an unknown scoring strategy", {"profiles": [{"pluginConfig": [fit(scoringStrategy={"type": "Packed"})]}]},
     "profiles[0].pluginConfig[0].args.scoringStrategy.type", "supported values: LeastAllocated, MostAllocated"),
    ("a resource weight above 100", {"profiles": [{"pluginConfig": [fit(scoringStrategy={
        "type": "MostAllocated", "resources": [{"name": "cpu", "weight": 101}]})]}]},
     "profiles[0].pluginConfig[0].args.scoringStrategy.resources[0].weight", "not in valid range (0, 100]"),
    ("RequestedToCapacityRatio without a shape", {"profiles": [{"pluginConfig": [fit(scoringStrategy={
        "type": "RequestedToCapacityRatio"})]}]},
     "profiles[0].pluginConfig[0].args.scoringStrategy.requestedToCapacityRatio.shape", "at least one point"),
    ("a shape score above 10", {"profiles": [{"pluginConfig": [fit(scoringStrategy={
        "type": "RequestedToCapacityRatio", "requestedToCapacityRatio": {"shape": [{"utilization": 0, "score": 100}]}})]}]},
     "requestedToCapacityRatio.shape[0].score", "not in valid range [0, 10]"),
    ("a shape not sorted by utilization", {"profiles": [{"pluginConfig": [fit(scoringStrategy={
        "type": "RequestedToCapacityRatio", "requestedToCapacityRatio": {"shape": [
            {"utilization": 50, "score": 1}, {"utilization": 50, "score": 2}]}})]}]},
     "requestedToCapacityRatio.shape[1].utilization", "sorted in increasing order"),
    ("an ignored resource group with a slash", {"profiles": [{"pluginConfig": [fit(ignoredResourceGroups=["nvidia.com/gpu"])]}]},
     "args.ignoredResourceGroups[0]", "can't contain '/'"),
    ("an unknown args field", {"profiles": [{"pluginConfig": [fit(scoringStrategyType="MostAllocated")]}]},
     "profiles[0].pluginConfig[0].args.scoringStrategyType", "unknown field"),
    ("args of another plugin's kind", {"profiles": [{"pluginConfig": [fit(kind="InterPodAffinityArgs")]}]},
     "args.kind", "must be NodeResourcesFitArgs"),
    ("a balanced allocation weight other than 1", {"profiles": [{"pluginConfig": [
        {"name": "NodeResourcesBalancedAllocation", "args": {"resources": [{"name": "cpu", "weight": 2}]}}]}]},
     "args.resources[0].weight", "must be 1"),
    ("System defaulting with constraints", {"profiles": [{"pluginConfig": [{"name": "PodTopologySpread", "args": {
        "defaultConstraints": [{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "ScheduleAnyway"}]}}]}]},
     "args.defaultingType", "System is invalid when .defaultConstraints are not empty"),
    ("a default constraint with a selector", {"profiles": [{"pluginConfig": [{"name": "PodTopologySpread", "args": {
        "defaultingType": "List", "defaultConstraints": [{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "ScheduleAnyway",
                                                          "labelSelector": {}}]}}]}]},
     "args.defaultConstraints[0].labelSelector", "must not define a selector"),
    ("hardPodAffinityWeight above 100", {"profiles": [{"pluginConfig": [{"name": "InterPodAffinity", "args": {"hardPodAffinityWeight": 101}}]}]},
     "args.hardPodAffinityWeight", "not in valid range [0, 100]"),
    ("an addedAffinity value that is not a label value", {"profiles": [{"pluginConfig": [{"name": "NodeAffinity", "args": {"addedAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "pool", "operator": "In", "values": ["a b"]}]}]}}}}]}]},
     "nodeSelectorTerms[0].matchExpressions[0]", "not a valid label value"),
    ("both preemption minimums zero", {"profiles": [{"pluginConfig": [{"name": "DefaultPreemption", "args": {
        "minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 0}}]}]},
     "args", "cannot both be zero"),
]


@pytest.mark.parametrize("body,field,message", [(b, f, m) for _, b, f, m in BAD], ids=[i for i, _, _, _ in BAD])
def test_a_bad_configuration_is_one_line_naming_file_and_field(tmp_path: Path, body: dict[str, Any], field: str,
                                                               message: str) -> None:
    path = tmp_path / "sched.yaml"
    path.write_text(yaml.safe_dump({"apiVersion": API_VERSION, "kind": KIND, **body}))
    with pytest.raises(InputError) as err:
        load_scheduler_config(str(path))
    line = str(err.value)
    assert "\n" not in line and line.startswith(f"{path}[0] KubeSchedulerConfiguration")
    assert field in err.value.field and message in err.value.message, line


def test_a_file_with_two_documents_or_none_is_rejected(tmp_path: Path) -> None:
    path = tmp_path / "two.yaml"
    doc = {"apiVersion": API_VERSION, "kind": KIND}
    path.write_text(yaml.safe_dump_all([doc, doc]))
    with pytest.raises(InputError, match="exactly one KubeSchedulerConfiguration document, found 2"):
        load_scheduler_config(str(path))
    with pytest.raises(InputError, match="cannot read"):
        load_scheduler_config(str(tmp_path / "missing.yaml"))
