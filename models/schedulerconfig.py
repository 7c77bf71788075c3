"""A KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1) read as kube-scheduler reads it: strict
decoding (an unknown field is an error), upstream's defaulting and validation, and the framework's
expansion of multiPoint into the per-extension-point plugin lists with their score weights.

Reproduces kubernetes/kubernetes pkg/scheduler/apis/config/v1 (defaults.go, default_plugins.go:
getDefaultPlugins, mergePlugins), apis/config/validation (validation.go, validation_pluginargs.go) and
framework/runtime/framework.go (expandMultiPointPlugins, getScoreWeights).

What podplan does with it, per profile (`Profile`): the ordered Filter plugins, the Score plugins with their
effective weights, every plugin's defaulted args, percentageOfNodesToScore and whether DefaultPreemption
runs at PostFilter. Plugins podplan does not model (ImageLocality, the volume plugins, DynamicResources)
are accepted, kept in the lists, and named in `Profile.notes`: podplan treats them as a Filter that
passes every node and a Score of 0 on every node (exactly what they do for pods without volumes, images
or resource claims). `Profile.modelled_filters` / `modelled_scores` leave them out.

Decisions where upstream leaves room:
- apiVersion kubescheduler.config.k8s.io/v1 only: v1beta3 was removed from kube-scheduler in 1.29, so it is
  rejected with that hint rather than read under rules kube-scheduler no longer has.
- Out-of-tree plugins (scheduler-plugins' Coscheduling, ...) and HTTP extenders are rejected: podplan cannot
  know what they decide. Removed plugins (SelectorSpread, ...) are rejected as kube-scheduler v1 does.
- A negative score weight is rejected (kube-scheduler would accept it and invert the plugin's preference;
  podplan's objective needs weights >= 0). An unset or 0 weight means 1, as in getScoreWeights.
- leaderElection, clientConnection, parallelism, the backoff seconds, enableProfiling and the like are
  validated where upstream validates them and otherwise ignored: they do not change where a pod goes.
"""
from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from .errors import InputError, Where, describe_value, quote
from .objects import TopologySpreadConstraint
from .selectors import (NODE_OPERATORS, NodeSelector, NodeSelectorTerm, PreferredSchedulingTerm, Requirement,
                        is_qualified_name)

API_VERSION = "kubescheduler.config.k8s.io/v1"
KIND = "KubeSchedulerConfiguration"
DEFAULT_SCHEDULER_NAME = "default-scheduler"

# Extension points in the order kube-scheduler lists them (config.Plugins).
PRE_ENQUEUE, QUEUE_SORT, PRE_FILTER, FILTER, POST_FILTER = "preEnqueue", "queueSort", "preFilter", "filter", "postFilter"
PRE_SCORE, SCORE, RESERVE, PERMIT = "preScore", "score", "reserve", "permit"
PRE_BIND, BIND, POST_BIND, MULTI_POINT = "preBind", "bind", "postBind", "multiPoint"
EXTENSION_POINTS = (PRE_ENQUEUE, QUEUE_SORT, PRE_FILTER, FILTER, POST_FILTER, PRE_SCORE, SCORE, RESERVE, PERMIT,
                    PRE_BIND, BIND, POST_BIND, MULTI_POINT)

# In-tree plugin names (pkg/scheduler/framework/plugins/names).
PRIORITY_SORT = "PrioritySort"
SCHEDULING_GATES = "SchedulingGates"
NODE_UNSCHEDULABLE = "NodeUnschedulable"
NODE_NAME = "NodeName"
TAINT_TOLERATION = "TaintToleration"
NODE_AFFINITY = "NodeAffinity"
NODE_PORTS = "NodePorts"
NODE_RESOURCES_FIT = "NodeResourcesFit"
VOLUME_RESTRICTIONS = "VolumeRestrictions"
NODE_VOLUME_LIMITS = "NodeVolumeLimits"
VOLUME_BINDING = "VolumeBinding"
VOLUME_ZONE = "VolumeZone"
POD_TOPOLOGY_SPREAD = "PodTopologySpread"
INTER_POD_AFFINITY = "InterPodAffinity"
DYNAMIC_RESOURCES = "DynamicResources"
DEFAULT_PREEMPTION = "DefaultPreemption"
NODE_RESOURCES_BALANCED_ALLOCATION = "NodeResourcesBalancedAllocation"
IMAGE_LOCALITY = "ImageLocality"
DEFAULT_BINDER = "DefaultBinder"

# The extension points each in-tree plugin implements: the framework expands multiPoint by these.
PLUGIN_POINTS: dict[str, frozenset[str]] = {
    PRIORITY_SORT: frozenset({QUEUE_SORT}),
    SCHEDULING_GATES: frozenset({PRE_ENQUEUE}),
    NODE_UNSCHEDULABLE: frozenset({FILTER}),
    NODE_NAME: frozenset({FILTER}),
    TAINT_TOLERATION: frozenset({FILTER, PRE_SCORE, SCORE}),
    NODE_AFFINITY: frozenset({PRE_FILTER, FILTER, PRE_SCORE, SCORE}),
    NODE_PORTS: frozenset({PRE_FILTER, FILTER}),
    NODE_RESOURCES_FIT: frozenset({PRE_FILTER, FILTER, PRE_SCORE, SCORE}),
    VOLUME_RESTRICTIONS: frozenset({PRE_FILTER, FILTER}),
    NODE_VOLUME_LIMITS: frozenset({PRE_FILTER, FILTER}),
    VOLUME_BINDING: frozenset({PRE_FILTER, FILTER, RESERVE, PRE_BIND, PRE_SCORE, SCORE}),
    VOLUME_ZONE: frozenset({PRE_FILTER, FILTER}),
    POD_TOPOLOGY_SPREAD: frozenset({PRE_FILTER, FILTER, PRE_SCORE, SCORE}),
    INTER_POD_AFFINITY: frozenset({PRE_FILTER, FILTER, PRE_SCORE, SCORE}),
    DYNAMIC_RESOURCES: frozenset({PRE_ENQUEUE, PRE_FILTER, FILTER, POST_FILTER, RESERVE, PRE_BIND}),
    DEFAULT_PREEMPTION: frozenset({POST_FILTER}),
    NODE_RESOURCES_BALANCED_ALLOCATION: frozenset({PRE_SCORE, SCORE}),
    IMAGE_LOCALITY: frozenset({SCORE}),
    DEFAULT_BINDER: frozenset({BIND}),
}
# Plugins podplan reproduces; the others are accepted and treated as pass-everything / score-0 (see notes).
MODELLED_PLUGINS = frozenset({PRIORITY_SORT, SCHEDULING_GATES, NODE_UNSCHEDULABLE, NODE_NAME, TAINT_TOLERATION,
                              NODE_AFFINITY, NODE_PORTS, NODE_RESOURCES_FIT, POD_TOPOLOGY_SPREAD, INTER_POD_AFFINITY,
                              DEFAULT_PREEMPTION, NODE_RESOURCES_BALANCED_ALLOCATION, DEFAULT_BINDER})
UNMODELLED_WHY = {
    IMAGE_LOCALITY: "podplan does not know which images a node holds: it scores every node 0",
    VOLUME_RESTRICTIONS: "podplan does not model volumes: it passes every node",
    NODE_VOLUME_LIMITS: "podplan does not model volumes: it passes every node",
    VOLUME_BINDING: "podplan does not model volumes: it passes every node and scores every node 0",
    VOLUME_ZONE: "podplan does not model volumes: it passes every node",
    DYNAMIC_RESOURCES: "podplan does not model ResourceClaims: it passes every node",
}
# Plugins kube-scheduler v1 no longer has (validatePluginSetForInvalidPlugins).
REMOVED_PLUGINS = ("SelectorSpread", "NodeLabel", "ServiceAffinity", "NodePreferAvoidPods", "AzureDiskLimits",
                   "CinderLimits", "EBSLimits", "GCEPDLimits")

# getDefaultPlugins (v1) with the DynamicResourceAllocation feature on (GA): multiPoint, in order, with weights.
DEFAULT_MULTI_POINT: tuple[tuple[str, int | None], ...] = (
    (SCHEDULING_GATES, None), (PRIORITY_SORT, None), (NODE_UNSCHEDULABLE, None), (NODE_NAME, None),
    (TAINT_TOLERATION, 3), (NODE_AFFINITY, 2), (NODE_PORTS, None), (NODE_RESOURCES_FIT, 1),
    (VOLUME_RESTRICTIONS, None), (NODE_VOLUME_LIMITS, None), (VOLUME_BINDING, None), (VOLUME_ZONE, None),
    (POD_TOPOLOGY_SPREAD, 2), (INTER_POD_AFFINITY, 2), (DYNAMIC_RESOURCES, None), (DEFAULT_PREEMPTION, None),
    (NODE_RESOURCES_BALANCED_ALLOCATION, 1), (IMAGE_LOCALITY, 1), (DEFAULT_BINDER, None),
)

# Scoring strategies (config.ScoringStrategyType).
LEAST_ALLOCATED = "LeastAllocated"
MOST_ALLOCATED = "MostAllocated"
REQUESTED_TO_CAPACITY_RATIO = "RequestedToCapacityRatio"
SCORING_STRATEGIES = (LEAST_ALLOCATED, MOST_ALLOCATED, REQUESTED_TO_CAPACITY_RATIO)
MAX_CUSTOM_PRIORITY_SCORE = 10  # config.MaxCustomPriorityScore: shape scores are 0..10
MAX_RESOURCE_WEIGHT = 100  # validateResources: (0, 100]
MAX_INT32 = 2 ** 31 - 1

SYSTEM_DEFAULTING = "System"
LIST_DEFAULTING = "List"

# numFeasibleNodesToFind (schedule_one.go).
MIN_FEASIBLE_NODES_TO_FIND = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5


@dataclass(frozen=True)
class PluginRef:
    """config.Plugin: a name, and a weight that only Score and multiPoint read (None: unset)."""

    name: str
    weight: int | None = None


@dataclass(frozen=True)
class PluginSet:
    enabled: tuple[PluginRef, ...] = ()
    disabled: tuple[str, ...] = ()


@dataclass(frozen=True)
class ResourceSpec:
    name: str
    weight: int = 1


DEFAULT_RESOURCE_SPEC = (ResourceSpec("cpu", 1), ResourceSpec("memory", 1))


@dataclass(frozen=True)
class ScoringStrategy:
    """NodeResourcesFit's scoringStrategy; `shape` = (utilization 0..100, score 0..10) points, only for
    RequestedToCapacityRatio."""

    type: str = LEAST_ALLOCATED
    resources: tuple[ResourceSpec, ...] = DEFAULT_RESOURCE_SPEC
    shape: tuple[tuple[int, int], ...] = ()

    @property
    def resource_weights(self) -> tuple[tuple[str, int], ...]:
        return tuple((r.name, r.weight) for r in self.resources)


@dataclass(frozen=True)
class NodeResourcesFitArgs:
    scoring_strategy: ScoringStrategy = field(default_factory=ScoringStrategy)
    ignored_resources: tuple[str, ...] = ()
    ignored_resource_groups: tuple[str, ...] = ()

    def ignores(self, resource: str, extended: bool) -> bool:
        """fitsRequest skips an extended resource named in ignoredResources or whose prefix (before '/') is
        in ignoredResourceGroups; `extended` = v1helper.IsExtendedResourceName(resource)."""
        if not extended:
            return False
        return resource in self.ignored_resources or resource.split("/", 1)[0] in self.ignored_resource_groups


@dataclass(frozen=True)
class BalancedAllocationArgs:
    resources: tuple[ResourceSpec, ...] = DEFAULT_RESOURCE_SPEC

    @property
    def resource_weights(self) -> tuple[tuple[str, int], ...]:
        return tuple((r.name, r.weight) for r in self.resources)


@dataclass(frozen=True)
class PodTopologySpreadArgs:
    """defaultingType System: the system defaults (hostname maxSkew 3, zone maxSkew 5, ScheduleAnyway, in
    optimizer.podtopologyspread); List: exactly `default_constraints` (possibly none)."""

    default_constraints: tuple[TopologySpreadConstraint, ...] = ()
    defaulting_type: str = SYSTEM_DEFAULTING

    @property
    def uses_system_defaults(self) -> bool:
        return self.defaulting_type == SYSTEM_DEFAULTING


@dataclass(frozen=True)
class InterPodAffinityArgs:
    hard_pod_affinity_weight: int = 1
    ignore_preferred_terms_of_existing_pods: bool = False


@dataclass(frozen=True)
class NodeAffinityArgs:
    """addedAffinity: ANDed with every pod's own node affinity (required) and added to its preferences."""

    added_required: NodeSelector | None = None
    added_preferred: tuple[PreferredSchedulingTerm, ...] = ()


@dataclass(frozen=True)
class DefaultPreemptionArgs:
    min_candidate_nodes_percentage: int = 10
    min_candidate_nodes_absolute: int = 100


@dataclass(frozen=True)
class Profile:
    """One KubeSchedulerProfile after defaulting and multiPoint expansion."""

    scheduler_name: str = DEFAULT_SCHEDULER_NAME
    # Enabled plugin names per extension point (multiPoint expanded), in the order the framework runs them.
    points: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # Score plugins in order with their effective weights.
    score_weights: tuple[tuple[str, int], ...] = ()
    percentage_of_nodes_to_score: int | None = None  # None: the configuration's global value
    fit: NodeResourcesFitArgs = field(default_factory=NodeResourcesFitArgs)
    balanced_allocation: BalancedAllocationArgs = field(default_factory=BalancedAllocationArgs)
    pod_topology_spread: PodTopologySpreadArgs = field(default_factory=PodTopologySpreadArgs)
    inter_pod_affinity: InterPodAffinityArgs = field(default_factory=InterPodAffinityArgs)
    node_affinity: NodeAffinityArgs = field(default_factory=NodeAffinityArgs)
    default_preemption: DefaultPreemptionArgs = field(default_factory=DefaultPreemptionArgs)

    def enabled(self, point: str) -> tuple[str, ...]:
        return self.points.get(point, ())

    @property
    def filters(self) -> tuple[str, ...]:
        return self.enabled(FILTER)

    @property
    def scores(self) -> dict[str, int]:
        return dict(self.score_weights)

    def weight(self, plugin: str) -> int:
        """The plugin's score weight, 0 when it does not score in this profile."""
        return self.scores.get(plugin, 0)

    @property
    def preemption(self) -> bool:
        """DefaultPreemption runs at PostFilter."""
        return DEFAULT_PREEMPTION in self.enabled(POST_FILTER)

    @property
    def modelled_filters(self) -> tuple[str, ...]:
        return tuple(p for p in self.filters if p in MODELLED_PLUGINS)

    @property
    def modelled_scores(self) -> tuple[tuple[str, int], ...]:
        return tuple((p, w) for p, w in self.score_weights if p in MODELLED_PLUGINS)

    @property
    def notes(self) -> tuple[str, ...]:
        """One line per enabled plugin podplan accepts but does not model."""
        seen: dict[str, None] = {}
        for point in EXTENSION_POINTS:
            for name in self.enabled(point):
                if name not in MODELLED_PLUGINS:
                    seen[name] = None
        return tuple(f"profile {self.scheduler_name}: {name}: {UNMODELLED_WHY[name]}" for name in seen)


@dataclass(frozen=True)
class SchedulerConfiguration:
    profiles: tuple[Profile, ...]
    percentage_of_nodes_to_score: int = 0  # 0: kube-scheduler's adaptive default
    source: str = "<default>"

    def profile(self, scheduler_name: str) -> Profile | None:
        """The profile that schedules pods with this spec.schedulerName; None: kube-scheduler ignores them."""
        return next((p for p in self.profiles if p.scheduler_name == scheduler_name), None)

    def nodes_to_score(self, profile: Profile, num_all_nodes: int) -> int:
        """numFeasibleNodesToFind: how many feasible nodes kube-scheduler looks for before it stops filtering."""
        if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND:
            return num_all_nodes
        percentage = profile.percentage_of_nodes_to_score
        if percentage is None:
            percentage = self.percentage_of_nodes_to_score
        if percentage == 0:
            percentage = max(50 - num_all_nodes // 125, MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND)
        return max(num_all_nodes * percentage // 100, MIN_FEASIBLE_NODES_TO_FIND)


# --------------------------------------------------------------------------------------------- decoding


@dataclass(frozen=True)
class _Ctx:
    where: Where

    def fail(self, path: str, message: str) -> InputError:
        return InputError(self.where, path, message)


def _map(ctx: _Ctx, value: Any, path: str, known: tuple[str, ...]) -> dict[str, Any]:
    """A mapping with only `known` keys: kube-scheduler decodes its configuration strictly."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ctx.fail(path, f"must be a mapping, got {type(value).__name__}")
    for key in value:
        if key not in known:
            at = f"{path}.{key}" if path else str(key)
            raise ctx.fail(at, f"unknown field {quote(str(key))} (known here: {', '.join(known)})")
    return dict(value)


def _list(ctx: _Ctx, value: Any, path: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise ctx.fail(path, f"must be a list, got {type(value).__name__}")
    return value


def _str(ctx: _Ctx, value: Any, path: str) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise ctx.fail(path, f"expected a string, got {describe_value(value)}")
    return value


def _int(ctx: _Ctx, value: Any, path: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise ctx.fail(path, f"expected an integer, got {describe_value(value)}")
    if not -MAX_INT32 - 1 <= value <= MAX_INT32:
        raise ctx.fail(path, f"must fit in 32 bits, got {value}")
    return value


def _bool(ctx: _Ctx, value: Any, path: str) -> bool:
    if value is None:
        return False
    if not isinstance(value, bool):
        raise ctx.fail(path, f"expected true or false, got {describe_value(value)}")
    return value


def _percentage(ctx: _Ctx, value: Any, path: str) -> int | None:
    """validatePercentageOfNodesToScore: 0..100 (0 = adaptive)."""
    pct = _int(ctx, value, path)
    if pct is not None and not 0 <= pct <= 100:
        raise ctx.fail(path, f"not in valid range [0-100], got {pct}")
    return pct


def _plugin_set(ctx: _Ctx, raw: Any, path: str, point: str) -> PluginSet:
    body = _map(ctx, raw, path, ("enabled", "disabled"))
    enabled: list[PluginRef] = []
    for i, item in enumerate(_list(ctx, body.get("enabled"), f"{path}.enabled")):
        ipath = f"{path}.enabled[{i}]"
        entry = _map(ctx, item, ipath, ("name", "weight"))
        name = _plugin_name(ctx, entry.get("name"), f"{ipath}.name", allow_star=False)
        if point != MULTI_POINT and point not in PLUGIN_POINTS[name]:
            raise ctx.fail(f"{ipath}.name", f"plugin {quote(str(name))} does not extend {point} "
                                            f"(it implements {', '.join(sorted(PLUGIN_POINTS[name]))})")
        if any(e.name == name for e in enabled):
            raise ctx.fail(f"{ipath}.name", f"plugin {quote(str(name))} is enabled twice at {point}")
        weight = _int(ctx, entry.get("weight"), f"{ipath}.weight")
        if weight is not None and weight < 0:
            raise ctx.fail(f"{ipath}.weight", f"must not be negative, got {weight} (a weight of 0 means 1; "
                                              "disable the plugin to switch its score off)")
        enabled.append(PluginRef(name, weight))
    disabled: list[str] = []
    for i, item in enumerate(_list(ctx, body.get("disabled"), f"{path}.disabled")):
        ipath = f"{path}.disabled[{i}]"
        entry = _map(ctx, item, ipath, ("name", "weight"))
        disabled.append(_plugin_name(ctx, entry.get("name"), f"{ipath}.name", allow_star=True))
    return PluginSet(tuple(enabled), tuple(disabled))


def _plugin_name(ctx: _Ctx, value: Any, path: str, allow_star: bool) -> str:
    name = _str(ctx, value, path)
    if not name:
        raise ctx.fail(path, "is required")
    if name == "*" and allow_star:
        return name
    if name in REMOVED_PLUGINS:
        raise ctx.fail(path, f"plugin {quote(str(name))} was removed from kube-scheduler and is not in {API_VERSION}")
    if name not in PLUGIN_POINTS:
        close = [k for k in PLUGIN_POINTS if k.lower() == name.lower()] or \
            difflib.get_close_matches(name, list(PLUGIN_POINTS), n=1, cutoff=0.7)
        why = (f"did you mean {close[0]}?" if close
               else "not an in-tree kube-scheduler plugin (out-of-tree plugins cannot be simulated)")
        raise ctx.fail(path, f"unknown plugin {quote(str(name))}: {why}")
    return name


def _merge_plugin_set(default: PluginSet, custom: PluginSet) -> PluginSet:
    """mergePluginSet: defaults not disabled (all of them unless "*"), a default re-enabled by the user takes
    the user's entry in the default's place, then the user's other plugins."""
    disabled = set(custom.disabled) | set(default.disabled)
    custom_by_name = {p.name: i for i, p in enumerate(custom.enabled)}
    replaced: set[int] = set()
    enabled: list[PluginRef] = []
    if "*" not in disabled:
        for p in default.enabled:
            if p.name in disabled:
                continue
            if p.name in custom_by_name:
                replaced.add(custom_by_name[p.name])
                p = custom.enabled[custom_by_name[p.name]]
            enabled.append(p)
    enabled += [p for i, p in enumerate(custom.enabled) if i not in replaced]
    return PluginSet(tuple(enabled), custom.disabled + default.disabled)


def _expand(ctx: _Ctx, path: str, point: str, own: PluginSet, multi: PluginSet) -> tuple[str, ...]:
    """expandMultiPointPlugins for one extension point."""
    enabled = [p.name for p in own.enabled]
    if "*" in own.disabled:
        return tuple(enabled)
    overrides: list[str] = []
    from_multi: list[str] = []
    for p in multi.enabled:
        if point not in PLUGIN_POINTS[p.name] or p.name in own.disabled:
            continue
        if p.name in enabled:
            overrides.append(p.name)
            continue
        if p.name in from_multi:
            raise ctx.fail(f"{path}.plugins.multiPoint", f"plugin {quote(str(p.name))} already registered as {point}")
        from_multi.append(p.name)
    first = [n for n in enabled if n in overrides]
    rest = [n for n in enabled if n not in overrides]
    return tuple(first + from_multi + rest)


def _score_weights(points: dict[str, tuple[str, ...]], score: PluginSet, multi: PluginSet) -> tuple[tuple[str, int], ...]:
    """getScoreWeights: the Score extension point's own weight first, then multiPoint's; unset or 0 is 1."""
    weights: dict[str, int] = {}
    for p in score.enabled + multi.enabled:
        if SCORE in PLUGIN_POINTS[p.name] and p.name not in weights:
            weights[p.name] = p.weight or 1
    return tuple((name, weights[name]) for name in points[SCORE])


def _resources(ctx: _Ctx, raw: Any, path: str) -> tuple[ResourceSpec, ...]:
    out: list[ResourceSpec] = []
    for i, item in enumerate(_list(ctx, raw, path)):
        entry = _map(ctx, item, f"{path}[{i}]", ("name", "weight"))
        name = _str(ctx, entry.get("name"), f"{path}[{i}].name")
        if not name:
            raise ctx.fail(f"{path}[{i}].name", "is required")
        weight = _int(ctx, entry.get("weight"), f"{path}[{i}].weight")
        out.append(ResourceSpec(name, weight or 1))  # SetDefaults_*Args: an unset or 0 weight is 1
    return tuple(out)


def _check_weights(ctx: _Ctx, resources: tuple[ResourceSpec, ...], path: str) -> None:
    """validateResources: every weight in (0, 100]."""
    for i, r in enumerate(resources):
        if not 0 < r.weight <= MAX_RESOURCE_WEIGHT:
            raise ctx.fail(f"{path}[{i}].weight", f"resource weight of {r.name} not in valid range (0, 100], got {r.weight}")


def _args_map(ctx: _Ctx, raw: Any, path: str, plugin: str, known: tuple[str, ...]) -> dict[str, Any]:
    body = _map(ctx, raw, path, ("apiVersion", "kind") + known)
    kind = body.get("kind")
    if kind is not None and kind != f"{plugin}Args":
        raise ctx.fail(f"{path}.kind", f"must be {plugin}Args for plugin {plugin}, got {quote(str(kind))}")
    api = body.get("apiVersion")
    if api is not None and api != API_VERSION:
        raise ctx.fail(f"{path}.apiVersion", f"must be {API_VERSION}, got {quote(str(api))}")
    return body


def _fit_args(ctx: _Ctx, raw: Any, path: str) -> NodeResourcesFitArgs:
    body = _args_map(ctx, raw, path, NODE_RESOURCES_FIT, ("ignoredResources", "ignoredResourceGroups", "scoringStrategy"))
    ignored = tuple(_str(ctx, v, f"{path}.ignoredResources[{i}]")
                    for i, v in enumerate(_list(ctx, body.get("ignoredResources"), f"{path}.ignoredResources")))
    for i, name in enumerate(ignored):
        if not is_qualified_name(name):
            raise ctx.fail(f"{path}.ignoredResources[{i}]", f"{quote(str(name))} is not a valid resource name (qualified name)")
    groups = tuple(_str(ctx, v, f"{path}.ignoredResourceGroups[{i}]")
                   for i, v in enumerate(_list(ctx, body.get("ignoredResourceGroups"), f"{path}.ignoredResourceGroups")))
    for i, group in enumerate(groups):
        if "/" in group:
            raise ctx.fail(f"{path}.ignoredResourceGroups[{i}]", f"resource group name can't contain '/', got {quote(str(group))}")
        if not is_qualified_name(group):
            raise ctx.fail(f"{path}.ignoredResourceGroups[{i}]", f"{quote(str(group))} is not a valid resource group name")
    spath = f"{path}.scoringStrategy"
    raw_strategy = body.get("scoringStrategy")
    if raw_strategy is None:
        return NodeResourcesFitArgs(ScoringStrategy(), ignored, groups)
    s = _map(ctx, raw_strategy, spath, ("type", "resources", "requestedToCapacityRatio"))
    stype = _str(ctx, s.get("type"), f"{spath}.type")
    if stype not in SCORING_STRATEGIES:
        raise ctx.fail(f"{spath}.type", f"unsupported value {quote(str(stype))}: supported values: {', '.join(SCORING_STRATEGIES)}")
    resources = _resources(ctx, s.get("resources"), f"{spath}.resources") or DEFAULT_RESOURCE_SPEC
    _check_weights(ctx, resources, f"{spath}.resources")
    shape: tuple[tuple[int, int], ...] = ()
    rpath = f"{spath}.requestedToCapacityRatio"
    if s.get("requestedToCapacityRatio") is not None:
        r = _map(ctx, s.get("requestedToCapacityRatio"), rpath, ("shape",))
        shape = _shape(ctx, r.get("shape"), f"{rpath}.shape")
    if stype == REQUESTED_TO_CAPACITY_RATIO and not shape:
        # NewFit dereferences requestedToCapacityRatio for this type: kube-scheduler would not start.
        raise ctx.fail(f"{rpath}.shape", "at least one point must be specified for type RequestedToCapacityRatio")
    return NodeResourcesFitArgs(ScoringStrategy(stype, resources, shape), ignored, groups)


def _shape(ctx: _Ctx, raw: Any, path: str) -> tuple[tuple[int, int], ...]:
    """validateFunctionShape: at least one point, utilization strictly increasing in 0..100, score 0..10."""
    points: list[tuple[int, int]] = []
    for i, item in enumerate(_list(ctx, raw, path)):
        entry = _map(ctx, item, f"{path}[{i}]", ("utilization", "score"))
        u = _int(ctx, entry.get("utilization"), f"{path}[{i}].utilization") or 0
        score = _int(ctx, entry.get("score"), f"{path}[{i}].score") or 0
        if not 0 <= u <= 100:
            raise ctx.fail(f"{path}[{i}].utilization", f"not in valid range [0, 100], got {u}")
        if not 0 <= score <= MAX_CUSTOM_PRIORITY_SCORE:
            raise ctx.fail(f"{path}[{i}].score", f"not in valid range [0, {MAX_CUSTOM_PRIORITY_SCORE}], got {score}")
        if points and points[-1][0] >= u:
            raise ctx.fail(f"{path}[{i}].utilization", "utilization values must be sorted in increasing order")
        points.append((u, score))
    if not points:
        raise ctx.fail(path, "at least one point must be specified")
    return tuple(points)


def _balanced_args(ctx: _Ctx, raw: Any, path: str) -> BalancedAllocationArgs:
    body = _args_map(ctx, raw, path, NODE_RESOURCES_BALANCED_ALLOCATION, ("resources",))
    resources = _resources(ctx, body.get("resources"), f"{path}.resources") or DEFAULT_RESOURCE_SPEC
    seen: set[str] = set()
    for i, r in enumerate(resources):
        if r.name in seen:
            raise ctx.fail(f"{path}.resources[{i}].name", f"duplicate resource {quote(str(r.name))}")
        seen.add(r.name)
        if r.weight != 1:
            raise ctx.fail(f"{path}.resources[{i}].weight", f"must be 1, got {r.weight}")
    return BalancedAllocationArgs(resources)


_WHEN_UNSATISFIABLE = ("DoNotSchedule", "ScheduleAnyway")


def _spread_args(ctx: _Ctx, raw: Any, path: str) -> PodTopologySpreadArgs:
    body = _args_map(ctx, raw, path, POD_TOPOLOGY_SPREAD, ("defaultConstraints", "defaultingType"))
    dtype = _str(ctx, body.get("defaultingType"), f"{path}.defaultingType") or SYSTEM_DEFAULTING
    if dtype not in (SYSTEM_DEFAULTING, LIST_DEFAULTING):
        raise ctx.fail(f"{path}.defaultingType", f"unsupported value {quote(str(dtype))}: supported values: System, List")
    constraints: list[TopologySpreadConstraint] = []
    cpath = f"{path}.defaultConstraints"
    for i, item in enumerate(_list(ctx, body.get("defaultConstraints"), cpath)):
        ipath = f"{cpath}[{i}]"
        c = _map(ctx, item, ipath, ("maxSkew", "topologyKey", "whenUnsatisfiable", "labelSelector", "minDomains",
                                     "nodeAffinityPolicy", "nodeTaintsPolicy", "matchLabelKeys"))
        if c.get("labelSelector") is not None:
            raise ctx.fail(f"{ipath}.labelSelector", "constraint must not define a selector, as they deduced for each pod")
        if c.get("matchLabelKeys"):
            raise ctx.fail(f"{ipath}.matchLabelKeys", "is not supported in default constraints")
        skew = _int(ctx, c.get("maxSkew"), f"{ipath}.maxSkew") or 0
        if skew <= 0:
            raise ctx.fail(f"{ipath}.maxSkew", f"not in valid range (0, inf), got {skew}")
        key = _str(ctx, c.get("topologyKey"), f"{ipath}.topologyKey")
        if not key:
            raise ctx.fail(f"{ipath}.topologyKey", "can not be empty")
        if not is_qualified_name(key):
            raise ctx.fail(f"{ipath}.topologyKey", f"{quote(str(key))} is not a valid label key (qualified name)")
        when = _str(ctx, c.get("whenUnsatisfiable"), f"{ipath}.whenUnsatisfiable")
        if when not in _WHEN_UNSATISFIABLE:
            raise ctx.fail(f"{ipath}.whenUnsatisfiable", f"unsupported value {quote(str(when))}: supported values: "
                                                         f"{', '.join(_WHEN_UNSATISFIABLE)}")
        if any(o.topology_key == key and o.when_unsatisfiable == when for o in constraints):
            raise ctx.fail(ipath, f"duplicate constraint on topologyKey {quote(str(key))} with whenUnsatisfiable {when}")
        min_domains = _int(ctx, c.get("minDomains"), f"{ipath}.minDomains")
        if min_domains is not None and (min_domains <= 0 or when != "DoNotSchedule"):
            raise ctx.fail(f"{ipath}.minDomains", "must be > 0 and only set with whenUnsatisfiable DoNotSchedule")
        policies = {}
        for fname, default in (("nodeAffinityPolicy", "Honor"), ("nodeTaintsPolicy", "Ignore")):
            value = _str(ctx, c.get(fname), f"{ipath}.{fname}") or default
            if value not in ("Honor", "Ignore"):
                raise ctx.fail(f"{ipath}.{fname}", f"unsupported value {quote(str(value))}: supported values: Honor, Ignore")
            policies[fname] = value
        constraints.append(TopologySpreadConstraint(skew, key, when, None, min_domains,
                                                    policies["nodeAffinityPolicy"], policies["nodeTaintsPolicy"]))
    if dtype == SYSTEM_DEFAULTING and constraints:
        raise ctx.fail(f"{path}.defaultingType", "System is invalid when .defaultConstraints are not empty (use List)")
    return PodTopologySpreadArgs(tuple(constraints), dtype)


def _inter_pod_args(ctx: _Ctx, raw: Any, path: str) -> InterPodAffinityArgs:
    body = _args_map(ctx, raw, path, INTER_POD_AFFINITY, ("hardPodAffinityWeight", "ignorePreferredTermsOfExistingPods"))
    weight = _int(ctx, body.get("hardPodAffinityWeight"), f"{path}.hardPodAffinityWeight")
    weight = 1 if weight is None else weight
    if not 0 <= weight <= 100:
        raise ctx.fail(f"{path}.hardPodAffinityWeight", f"not in valid range [0, 100], got {weight}")
    ignore = _bool(ctx, body.get("ignorePreferredTermsOfExistingPods"), f"{path}.ignorePreferredTermsOfExistingPods")
    return InterPodAffinityArgs(weight, ignore)


def _requirement(ctx: _Ctx, raw: Any, path: str, fields: bool) -> Requirement:
    """ValidateNodeAffinityArgs' requirement rules: keys and values are validated here (unlike in pods)."""
    body = _map(ctx, raw, path, ("key", "operator", "values"))
    key = _str(ctx, body.get("key"), f"{path}.key")
    op = _str(ctx, body.get("operator"), f"{path}.operator")
    values = tuple(_str(ctx, v, f"{path}.values[{i}]") for i, v in enumerate(_list(ctx, body.get("values"), f"{path}.values")))
    req = Requirement(key, op, values)
    if fields:
        if key != "metadata.name":
            raise ctx.fail(f"{path}.key", "only metadata.name is supported in matchFields")
        if op not in ("In", "NotIn"):
            raise ctx.fail(f"{path}.operator", "matchFields supports only In or NotIn")
        if len(values) != 1:
            raise ctx.fail(f"{path}.values", "matchFields requires exactly one value")
        return req
    if op not in NODE_OPERATORS:
        raise ctx.fail(f"{path}.operator", f"unsupported value {quote(str(op))}: supported values: {', '.join(NODE_OPERATORS)}")
    problem = NodeSelectorTerm((req,)).parse_errors
    if problem:
        raise ctx.fail(path, problem[0].split(".", 1)[1])
    return req


def _term(ctx: _Ctx, raw: Any, path: str) -> NodeSelectorTerm:
    body = _map(ctx, raw, path, ("matchExpressions", "matchFields"))
    exprs = tuple(_requirement(ctx, r, f"{path}.matchExpressions[{i}]", False)
                  for i, r in enumerate(_list(ctx, body.get("matchExpressions"), f"{path}.matchExpressions")))
    fields = tuple(_requirement(ctx, r, f"{path}.matchFields[{i}]", True)
                   for i, r in enumerate(_list(ctx, body.get("matchFields"), f"{path}.matchFields")))
    return NodeSelectorTerm(exprs, fields)


def _node_affinity_args(ctx: _Ctx, raw: Any, path: str) -> NodeAffinityArgs:
    body = _args_map(ctx, raw, path, NODE_AFFINITY, ("addedAffinity",))
    if body.get("addedAffinity") is None:
        return NodeAffinityArgs()
    apath = f"{path}.addedAffinity"
    added = _map(ctx, body["addedAffinity"], apath, ("requiredDuringSchedulingIgnoredDuringExecution",
                                                    "preferredDuringSchedulingIgnoredDuringExecution"))
    required = None
    rpath = f"{apath}.requiredDuringSchedulingIgnoredDuringExecution"
    if added.get("requiredDuringSchedulingIgnoredDuringExecution") is not None:
        r = _map(ctx, added["requiredDuringSchedulingIgnoredDuringExecution"], rpath, ("nodeSelectorTerms",))
        terms = tuple(_term(ctx, t, f"{rpath}.nodeSelectorTerms[{i}]")
                      for i, t in enumerate(_list(ctx, r.get("nodeSelectorTerms"), f"{rpath}.nodeSelectorTerms")))
        if not terms:
            raise ctx.fail(f"{rpath}.nodeSelectorTerms", "at least one node selector term is required")
        required = NodeSelector(terms)
    preferred: list[PreferredSchedulingTerm] = []
    ppath = f"{apath}.preferredDuringSchedulingIgnoredDuringExecution"
    for i, item in enumerate(_list(ctx, added.get("preferredDuringSchedulingIgnoredDuringExecution"), ppath)):
        entry = _map(ctx, item, f"{ppath}[{i}]", ("weight", "preference"))
        weight = _int(ctx, entry.get("weight"), f"{ppath}[{i}].weight") or 0
        if not 1 <= weight <= 100:
            raise ctx.fail(f"{ppath}[{i}].weight", f"must be in the range 1-100, got {weight}")
        preferred.append(PreferredSchedulingTerm(weight, _term(ctx, entry.get("preference"), f"{ppath}[{i}].preference")))
    return NodeAffinityArgs(required, tuple(preferred))


def _preemption_args(ctx: _Ctx, raw: Any, path: str) -> DefaultPreemptionArgs:
    body = _args_map(ctx, raw, path, DEFAULT_PREEMPTION, ("minCandidateNodesPercentage", "minCandidateNodesAbsolute"))
    pct = _int(ctx, body.get("minCandidateNodesPercentage"), f"{path}.minCandidateNodesPercentage")
    absolute = _int(ctx, body.get("minCandidateNodesAbsolute"), f"{path}.minCandidateNodesAbsolute")
    pct = 10 if pct is None else pct
    absolute = 100 if absolute is None else absolute
    if not 0 <= pct <= 100:
        raise ctx.fail(f"{path}.minCandidateNodesPercentage", f"not in valid range [0, 100], got {pct}")
    if absolute < 0:
        raise ctx.fail(f"{path}.minCandidateNodesAbsolute", f"not in valid range [0, inf), got {absolute}")
    if pct == 0 and absolute == 0:
        raise ctx.fail(path, "minCandidateNodesPercentage and minCandidateNodesAbsolute cannot both be zero")
    return DefaultPreemptionArgs(pct, absolute)


_ARGS_READERS = {
    NODE_RESOURCES_FIT: ("fit", _fit_args),
    NODE_RESOURCES_BALANCED_ALLOCATION: ("balanced_allocation", _balanced_args),
    POD_TOPOLOGY_SPREAD: ("pod_topology_spread", _spread_args),
    INTER_POD_AFFINITY: ("inter_pod_affinity", _inter_pod_args),
    NODE_AFFINITY: ("node_affinity", _node_affinity_args),
    DEFAULT_PREEMPTION: ("default_preemption", _preemption_args),
}


def _profile(ctx: _Ctx, raw: Any, path: str, single: bool) -> Profile:
    body = _map(ctx, raw, path, ("schedulerName", "percentageOfNodesToScore", "plugins", "pluginConfig"))
    name = _str(ctx, body.get("schedulerName"), f"{path}.schedulerName")
    if not name:
        # SetDefaults_KubeSchedulerConfiguration names a profile only when it is the only one.
        if not single:
            raise ctx.fail(f"{path}.schedulerName", "is required when there are several profiles")
        name = DEFAULT_SCHEDULER_NAME
    pct = _percentage(ctx, body.get("percentageOfNodesToScore"), f"{path}.percentageOfNodesToScore")
    plugins_raw = _map(ctx, body.get("plugins"), f"{path}.plugins", EXTENSION_POINTS)
    custom = {point: _plugin_set(ctx, plugins_raw.get(point), f"{path}.plugins.{point}", point)
              for point in EXTENSION_POINTS}
    default_multi = PluginSet(tuple(PluginRef(n, w) for n, w in DEFAULT_MULTI_POINT))
    merged = {point: _merge_plugin_set(default_multi if point == MULTI_POINT else PluginSet(), custom[point])
              for point in EXTENSION_POINTS}
    multi = merged[MULTI_POINT]
    if len({p.name for p in multi.enabled}) != len(multi.enabled):
        dup = next(p.name for i, p in enumerate(multi.enabled) if any(q.name == p.name for q in multi.enabled[:i]))
        raise ctx.fail(f"{path}.plugins.multiPoint", f"plugin {quote(str(dup))} already registered at multiPoint")
    points = {point: _expand(ctx, path, point, merged[point], multi) for point in EXTENSION_POINTS if point != MULTI_POINT}
    if len(points[QUEUE_SORT]) != 1:
        raise ctx.fail(f"{path}.plugins.queueSort", f"only one queue sort plugin required for profile with scheduler "
                                                    f"name {quote(str(name))}, but got {len(points[QUEUE_SORT])}")
    if not points[BIND]:
        raise ctx.fail(f"{path}.plugins.bind", f"at least one bind plugin is needed for profile with scheduler name {quote(str(name))}")
    args: dict[str, Any] = {}
    seen: set[str] = set()
    for i, item in enumerate(_list(ctx, body.get("pluginConfig"), f"{path}.pluginConfig")):
        ipath = f"{path}.pluginConfig[{i}]"
        entry = _map(ctx, item, ipath, ("name", "args"))
        plugin = _plugin_name(ctx, entry.get("name"), f"{ipath}.name", allow_star=False)
        if plugin in seen:
            raise ctx.fail(f"{ipath}.name", f"duplicate pluginConfig for {quote(str(plugin))}")
        seen.add(plugin)
        if plugin in _ARGS_READERS:
            attr, reader = _ARGS_READERS[plugin]
            args[attr] = reader(ctx, entry.get("args"), f"{ipath}.args")
        elif entry.get("args") is not None and not isinstance(entry.get("args"), Mapping):
            raise ctx.fail(f"{ipath}.args", f"must be a mapping, got {type(entry.get('args')).__name__}")
        # Args of plugins podplan does not model (VolumeBindingArgs, DynamicResourcesArgs) are not read.
    return Profile(name, points, _score_weights(points, merged[SCORE], multi), pct, **args)


def parse_scheduler_config(body: Any, file: str = "<input>") -> SchedulerConfiguration:
    """A decoded KubeSchedulerConfiguration document; every problem is an InputError naming file and field."""
    ctx = _Ctx(Where(file, 0, KIND))
    if not isinstance(body, Mapping):
        raise ctx.fail("", f"must be a {KIND} mapping, got {type(body).__name__}")
    api = body.get("apiVersion")
    if api != API_VERSION:
        hint = (" (v1beta3 was removed from kube-scheduler in 1.29: change apiVersion to v1)"
                if isinstance(api, str) and api.startswith("kubescheduler.config.k8s.io/") else "")
        raise ctx.fail("apiVersion", f"must be {API_VERSION}, got {quote(str(api))}{hint}")
    if body.get("kind") != KIND:
        raise ctx.fail("kind", f"must be {KIND}, got {body.get('kind')!r}")
    top = _map(ctx, body, "", ("apiVersion", "kind", "parallelism", "leaderElection", "clientConnection",
                               "enableProfiling", "enableContentionProfiling", "percentageOfNodesToScore",
                               "podInitialBackoffSeconds", "podMaxBackoffSeconds", "profiles", "extenders",
                               "delayCacheUntilActive"))
    parallelism = _int(ctx, top.get("parallelism"), "parallelism")
    if parallelism is not None and parallelism <= 0:
        raise ctx.fail("parallelism", f"should be an integer value greater than zero, got {parallelism}")
    initial = _int(ctx, top.get("podInitialBackoffSeconds"), "podInitialBackoffSeconds")
    initial = 1 if initial is None else initial
    maximum = _int(ctx, top.get("podMaxBackoffSeconds"), "podMaxBackoffSeconds")
    maximum = 10 if maximum is None else maximum
    if initial <= 0:
        raise ctx.fail("podInitialBackoffSeconds", f"must be greater than 0, got {initial}")
    if maximum < initial:
        raise ctx.fail("podMaxBackoffSeconds", f"must be greater than or equal to podInitialBackoffSeconds ({initial}), got {maximum}")
    for name in ("enableProfiling", "enableContentionProfiling", "delayCacheUntilActive"):
        _bool(ctx, top.get(name), name)
    for name in ("leaderElection", "clientConnection"):
        if top.get(name) is not None and not isinstance(top.get(name), Mapping):
            raise ctx.fail(name, f"must be a mapping, got {type(top.get(name)).__name__}")
    if _list(ctx, top.get("extenders"), "extenders"):
        raise ctx.fail("extenders", "scheduler extenders are HTTP services podplan cannot call; remove them to simulate "
                                    "kube-scheduler without them")
    pct = _percentage(ctx, top.get("percentageOfNodesToScore"), "percentageOfNodesToScore")
    raw_profiles = _list(ctx, top.get("profiles"), "profiles") or [{}]  # SetDefaults: one default profile
    profiles: list[Profile] = []
    for i, raw in enumerate(raw_profiles):
        profile = _profile(ctx, raw, f"profiles[{i}]", single=len(raw_profiles) == 1)
        if any(p.scheduler_name == profile.scheduler_name for p in profiles):
            raise ctx.fail(f"profiles[{i}].schedulerName", f"duplicate profile for scheduler {quote(str(profile.scheduler_name))}")
        profiles.append(profile)
    return SchedulerConfiguration(tuple(profiles), pct or 0, file)


def load_scheduler_config(path: str) -> SchedulerConfiguration:
    """Read --scheduler-config FILE (YAML or JSON, one document) as kube-scheduler's --config would."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(Where(path, None), "", f"cannot read: {exc}") from None
    try:
        docs = [d for d in yaml.safe_load_all(text) if d is not None]
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" (line {mark.line + 1}, column {mark.column + 1})" if mark else ""
        raise InputError(Where(path, 0), "", f"not valid YAML{at}: {getattr(exc, 'problem', None) or exc}") from None
    if len(docs) != 1:
        raise InputError(Where(path, None), "", f"must hold exactly one {KIND} document, found {len(docs)}")
    return parse_scheduler_config(docs[0], path)


def default_configuration() -> SchedulerConfiguration:
    """kube-scheduler's configuration when it is given none: one default-scheduler profile, upstream defaults."""
    return parse_scheduler_config({"apiVersion": API_VERSION, "kind": KIND}, "<default>")
