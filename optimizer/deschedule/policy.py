"""DeschedulerPolicy descheduler/v1alpha2, read with the descheduler's defaulting and validation
(sigs.k8s.io/descheduler pkg/api/v1alpha2, pkg/descheduler/policyconfig.go, each plugin's defaults.go and
validation.go). A bad policy is one InputError: file, the field's path, what is wrong (exit 2).

Defaulting as upstream: every profile gets DefaultEvictor in filter and preEvictionFilter, and its args
(the deprecated booleans off, no podProtections change) unless the profile configures it; the priority
threshold defaults to system-critical (2000000000). Plugins podplan does not simulate (they need history the
input lacks: restarts over time, metrics) are refused in one line when enabled."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import yaml

from ...models.errors import InputError, Where
from ...models.parse import Ctx, parse_label_selector
from ...models.scope import parse_selector
from ...models.selectors import LabelSelector

API_VERSION = "descheduler/v1alpha2"
KIND = "DeschedulerPolicy"
SYSTEM_CRITICAL_PRIORITY = 2_000_000_000

DEFAULT_EVICTOR = "DefaultEvictor"
LOW = "LowNodeUtilization"
HIGH = "HighNodeUtilization"
DUPLICATES = "RemoveDuplicates"
SPREAD = "RemovePodsViolatingTopologySpreadConstraint"
ANTI_AFFINITY = "RemovePodsViolatingInterPodAntiAffinity"
NODE_AFFINITY = "RemovePodsViolatingNodeAffinity"
TAINTS = "RemovePodsViolatingNodeTaints"
BALANCE_PLUGINS = (LOW, HIGH, DUPLICATES, SPREAD)
DESCHEDULE_PLUGINS = (ANTI_AFFINITY, NODE_AFFINITY, TAINTS)
SIMULATED = BALANCE_PLUGINS + DESCHEDULE_PLUGINS
# registered upstream, not simulated: they read history podplan's input does not hold
REFUSED = {
    "PodLifeTime": "it evicts by pod age and phase over time",
    "RemovePodsHavingTooManyRestarts": "it evicts by restart counts over time",
    "RemoveFailedPods": "it evicts failed pods, and podplan's input holds running pods",
}
REGISTERED = set(SIMULATED) | set(REFUSED) | {DEFAULT_EVICTOR}
EXTENSION_POINTS = ("presort", "sort", "deschedule", "balance", "filter", "preevictionfilter")

DEFAULT_PROTECTIONS = ("PodsWithLocalStorage", "SystemCriticalPods", "FailedBarePods", "DaemonSetPods")
EXTRA_PROTECTIONS = ("PodsWithPVC", "PodsWithoutPDB", "PodsWithResourceClaims")
RESOURCES = ("cpu", "memory", "pods")


@dataclass(frozen=True)
class Namespaces:
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()

    def admits(self, namespace: str) -> bool:
        if self.include:
            return namespace in self.include
        return namespace not in self.exclude


@dataclass(frozen=True)
class EvictorArgs:
    protections: frozenset[str] = frozenset(DEFAULT_PROTECTIONS)  # the effective pod protections
    priority_threshold: int = SYSTEM_CRITICAL_PRIORITY
    priority_threshold_name: str = ""  # a PriorityClass, resolved against the input by the evictor
    label_selector: LabelSelector | None = None
    namespace_label_selector: LabelSelector | None = None
    node_fit: bool = False
    min_replicas: int = 0
    min_pod_age_seconds: float | None = None
    node_selector: LabelSelector | None = None  # the policy's top-level nodeSelector (nodeFit's nodes)
    no_eviction_policy: str = ""


@dataclass(frozen=True)
class PluginArgs:
    name: str
    namespaces: Namespaces = Namespaces()
    label_selector: LabelSelector | None = None
    thresholds: dict[str, float] = field(default_factory=dict)
    target_thresholds: dict[str, float] = field(default_factory=dict)
    use_deviation: bool = False
    number_of_nodes: int = 0
    node_limit: int | None = None  # evictionLimits.node of the utilization plugins
    only_thresholding: bool = False  # HighNodeUtilization evictionModes: [OnlyThresholdingResources]
    exclude_owner_kinds: tuple[str, ...] = ()
    constraints: tuple[str, ...] = ("DoNotSchedule",)
    topology_balance_node_fit: bool = True
    node_affinity_types: tuple[str, ...] = ()
    include_prefer_no_schedule: bool = False
    excluded_taints: tuple[str, ...] = ()
    included_taints: tuple[str, ...] = ()


@dataclass(frozen=True)
class Profile:
    name: str
    evictor: EvictorArgs
    deschedule: tuple[PluginArgs, ...]
    balance: tuple[PluginArgs, ...]


@dataclass(frozen=True)
class DeschedulerPolicy:
    profiles: tuple[Profile, ...]
    node_selector: LabelSelector | None = None
    max_per_node: int | None = None
    max_per_namespace: int | None = None
    max_total: int | None = None
    source: str = ""

    def plugins(self) -> list[PluginArgs]:
        return [p for prof in self.profiles for p in prof.deschedule + prof.balance]

    def plugin(self, name: str) -> PluginArgs | None:
        return next((p for p in self.plugins() if p.name == name), None)


def load_policy_file(path: str) -> DeschedulerPolicy:
    where = Where(file=path, doc=None)
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise InputError(where, "", f"cannot read the policy: {e.strerror}") from None
    try:
        docs = [d for d in yaml.safe_load_all(text) if d is not None]
    except yaml.YAMLError as e:
        raise InputError(where, "", f"not YAML: {str(e).splitlines()[0]}") from None
    if len(docs) != 1:
        raise InputError(where, "", f"expected one DeschedulerPolicy document, got {len(docs)}")
    return parse_policy(docs[0], path)


def parse_policy(raw: Any, file: str = "<policy>") -> DeschedulerPolicy:
    """The policy document, validated and defaulted (priorityThreshold.name is resolved against the input's
    PriorityClasses by the evictor, as upstream asks the API server)."""
    ctx = Ctx(Where(file=file, doc=0, kind=KIND))
    if not isinstance(raw, dict):
        raise ctx.fail("", "expected a DeschedulerPolicy mapping")
    if raw.get("apiVersion") != API_VERSION:
        raise ctx.fail("apiVersion", f"must be {API_VERSION}, got {raw.get('apiVersion')!r}")
    if raw.get("kind") != KIND:
        raise ctx.fail("kind", f"must be {KIND}, got {raw.get('kind')!r}")
    known = {"apiVersion", "kind", "profiles", "nodeSelector", "maxNoOfPodsToEvictPerNode",
             "maxNoOfPodsToEvictPerNamespace", "maxNoOfPodsToEvictTotal", "evictionFailureEventNotification",
             "metricsCollector", "metricsProviders", "gracePeriodSeconds"}
    _known(ctx, raw, known, "")
    node_selector = None
    if raw.get("nodeSelector") is not None:
        if not isinstance(raw["nodeSelector"], str):
            raise ctx.fail("nodeSelector", "must be a label selector string")
        try:
            node_selector = parse_selector(raw["nodeSelector"])
        except Exception as e:  # the selector parser's one-line message
            raise ctx.fail("nodeSelector", str(e)) from None
    limits = [_uint(ctx, raw.get(k), k) for k in
              ("maxNoOfPodsToEvictPerNode", "maxNoOfPodsToEvictPerNamespace", "maxNoOfPodsToEvictTotal")]
    if raw.get("metricsProviders") or (raw.get("metricsCollector") or {}).get("enabled"):
        raise ctx.fail("metricsProviders" if raw.get("metricsProviders") else "metricsCollector",
                       "actual utilisation from metrics is not part of podplan's input: thresholds are judged on "
                       "requests (remove the metrics settings)")
    profiles_raw = raw.get("profiles") or []
    if not isinstance(profiles_raw, list):
        raise ctx.fail("profiles", "expected a list")
    profiles = []
    names: set[str] = set()
    for i, p in enumerate(profiles_raw):
        prof = _profile(ctx, p, f"profiles[{i}]", node_selector)
        if prof.name in names:
            raise ctx.fail(f"profiles[{i}].name", f"duplicate profile name {prof.name!r}")
        names.add(prof.name)
        profiles.append(prof)
    return DeschedulerPolicy(tuple(profiles), node_selector, *limits, source=file)


def _known(ctx: Ctx, raw: dict[str, Any], known: set[str], path: str) -> None:
    for key in raw:
        if key not in known:
            at = f"{path}.{key}" if path else str(key)
            raise ctx.fail(at, f"unknown field (expected one of {', '.join(sorted(known))})")


def _uint(ctx: Ctx, value: Any, path: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ctx.fail(path, f"must be a non-negative integer, got {value!r}")
    return value


def _bool(ctx: Ctx, value: Any, path: str, default: bool = False) -> bool:
    if value is None:
        return default
    if not isinstance(value, bool):
        raise ctx.fail(path, f"must be true or false, got {value!r}")
    return value


def _strings(ctx: Ctx, value: Any, path: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ctx.fail(path, "must be a list of strings")
    return tuple(value)


def _plugin_set(ctx: Ctx, raw: Any, path: str) -> tuple[list[str], list[str]]:
    if raw is None:
        return [], []
    if not isinstance(raw, dict):
        raise ctx.fail(path, "expected a mapping with enabled/disabled")
    _known(ctx, raw, {"enabled", "disabled"}, path)
    return list(_strings(ctx, raw.get("enabled"), f"{path}.enabled")), \
        list(_strings(ctx, raw.get("disabled"), f"{path}.disabled"))


def _profile(ctx: Ctx, raw: Any, path: str, node_selector: LabelSelector | None) -> Profile:
    if not isinstance(raw, dict):
        raise ctx.fail(path, "expected a profile mapping")
    _known(ctx, raw, {"name", "pluginConfig", "plugins"}, path)
    name = raw.get("name")
    if not isinstance(name, str) or not name:
        raise ctx.fail(f"{path}.name", "is required")
    plugins_raw = raw.get("plugins") or {}
    if not isinstance(plugins_raw, dict):
        raise ctx.fail(f"{path}.plugins", "expected a mapping")
    points: dict[str, list[str]] = {}
    for key, value in plugins_raw.items():
        point = str(key).lower()  # upstream's JSON decoding matches field names case-insensitively
        if point not in EXTENSION_POINTS:
            raise ctx.fail(f"{path}.plugins.{key}", f"unknown extension point (expected one of "
                                                   f"filter, preEvictionFilter, deschedule, balance, presort, sort)")
        enabled, disabled = _plugin_set(ctx, value, f"{path}.plugins.{key}")
        points[point] = [e for e in enabled if e not in disabled]
        for j, e in enumerate(enabled):
            if e not in REGISTERED:
                raise ctx.fail(f"{path}.plugins.{key}.enabled[{j}]", f"plugin {e} is not registered")
            if e in REFUSED:
                raise ctx.fail(f"{path}.plugins.{key}.enabled[{j}]",
                               f"{e} is not simulated: {REFUSED[e]}, which podplan's input does not hold")
            if point == "balance" and e not in BALANCE_PLUGINS or point == "deschedule" and e not in \
                    DESCHEDULE_PLUGINS or point in ("filter", "preevictionfilter") and e != DEFAULT_EVICTOR:
                raise ctx.fail(f"{path}.plugins.{key}.enabled[{j}]", f"plugin {e} does not extend {key}")
    configs: dict[str, tuple[Any, str]] = {}
    pc = raw.get("pluginConfig") or []
    if not isinstance(pc, list):
        raise ctx.fail(f"{path}.pluginConfig", "expected a list")
    for j, c in enumerate(pc):
        at = f"{path}.pluginConfig[{j}]"
        if not isinstance(c, dict):
            raise ctx.fail(at, "expected a mapping with name and args")
        _known(ctx, c, {"name", "args"}, at)
        pname = c.get("name")
        if pname not in REGISTERED:
            raise ctx.fail(f"{at}.name", f"in profile {name}: plugin {pname} in pluginConfig not registered")
        if pname in configs:
            raise ctx.fail(f"{at}.name", f"plugin {pname} configured twice")
        configs[pname] = (c.get("args") or {}, f"{at}.args")
    ev_raw, ev_path = configs.get(DEFAULT_EVICTOR, ({}, f"{path}.pluginConfig"))
    evictor = _evictor(ctx, ev_raw, ev_path, node_selector)
    desched = tuple(_plugin(ctx, n, *configs.get(n, ({}, f"{path}.pluginConfig"))) for n in points.get("deschedule", []))
    balance = tuple(_plugin(ctx, n, *configs.get(n, ({}, f"{path}.pluginConfig"))) for n in points.get("balance", []))
    return Profile(name, evictor, desched, balance)


def _evictor(ctx: Ctx, raw: Any, path: str, node_selector: LabelSelector | None) -> EvictorArgs:
    if not isinstance(raw, dict):
        raise ctx.fail(path, "expected a mapping")
    deprecated = ("evictLocalStoragePods", "evictDaemonSetPods", "evictSystemCriticalPods", "ignorePvcPods",
                  "ignorePodsWithoutPDB", "evictFailedBarePods")
    _known(ctx, raw, {"nodeSelector", "labelSelector", "namespaceLabelSelector", "priorityThreshold", "nodeFit",
                      "minReplicas", "minPodAge", "noEvictionPolicy", "podProtections", *deprecated}, path)
    flags = {k: _bool(ctx, raw.get(k), f"{path}.{k}") for k in deprecated}
    prot = raw.get("podProtections") or {}
    if not isinstance(prot, dict):
        raise ctx.fail(f"{path}.podProtections", "expected a mapping")
    _known(ctx, prot, {"extraEnabled", "defaultDisabled", "config"}, f"{path}.podProtections")
    extra = _strings(ctx, prot.get("extraEnabled"), f"{path}.podProtections.extraEnabled")
    disabled = _strings(ctx, prot.get("defaultDisabled"), f"{path}.podProtections.defaultDisabled")
    if any(flags.values()) and (extra or disabled):
        raise ctx.fail(f"{path}.podProtections", "cannot use Deprecated fields alongside PodProtections.ExtraEnabled "
                                                 "or PodProtections.DefaultDisabled")
    for i, p in enumerate(extra):
        if p not in EXTRA_PROTECTIONS:
            raise ctx.fail(f"{path}.podProtections.extraEnabled[{i}]",
                           f"invalid pod protection policy {p!r}: one of {', '.join(EXTRA_PROTECTIONS)}")
    for i, p in enumerate(disabled):
        if p not in DEFAULT_PROTECTIONS:
            raise ctx.fail(f"{path}.podProtections.defaultDisabled[{i}]",
                           f"invalid pod protection policy {p!r}: one of {', '.join(DEFAULT_PROTECTIONS)}")
    for key, items in (("defaultDisabled", disabled), ("extraEnabled", extra)):
        if len(set(items)) != len(items):
            raise ctx.fail(f"{path}.podProtections.{key}", "contains duplicate entries")
    if extra or disabled:
        protections = frozenset([p for p in DEFAULT_PROTECTIONS if p not in disabled] + list(extra))
    else:  # the deprecated booleans, as upstream's legacy mapping
        protections = frozenset(
            [p for p, off in (("PodsWithLocalStorage", "evictLocalStoragePods"), ("DaemonSetPods", "evictDaemonSetPods"),
                              ("SystemCriticalPods", "evictSystemCriticalPods"),
                              ("FailedBarePods", "evictFailedBarePods")) if not flags[off]]
            + [p for p, on in (("PodsWithPVC", "ignorePvcPods"), ("PodsWithoutPDB", "ignorePodsWithoutPDB"))
               if flags[on]])
    threshold, threshold_name = SYSTEM_CRITICAL_PRIORITY, ""
    pt = raw.get("priorityThreshold")
    if pt is not None:
        if not isinstance(pt, dict):
            raise ctx.fail(f"{path}.priorityThreshold", "expected a mapping with value or name")
        _known(ctx, pt, {"value", "name"}, f"{path}.priorityThreshold")
        if pt.get("value") is not None and pt.get("name"):
            raise ctx.fail(f"{path}.priorityThreshold",
                           "priority threshold misconfigured, only one of priorityThreshold fields can be set")
        if pt.get("value") is not None:
            if isinstance(pt["value"], bool) or not isinstance(pt["value"], int):
                raise ctx.fail(f"{path}.priorityThreshold.value", "must be an integer")
            threshold = pt["value"]
        elif pt.get("name"):
            threshold_name = str(pt["name"])
    nep = raw.get("noEvictionPolicy") or ""
    if nep not in ("", "Preferred", "Mandatory"):
        raise ctx.fail(f"{path}.noEvictionPolicy", 'noEvictionPolicy accepts only "Preferred" or "Mandatory"')
    age = raw.get("minPodAge")
    age_s = None
    if age is not None:
        age_s = _duration(ctx, age, f"{path}.minPodAge")
    evictor_ns = raw.get("nodeSelector")
    sel = node_selector
    if evictor_ns:
        try:
            sel = parse_selector(str(evictor_ns))
        except Exception as e:
            raise ctx.fail(f"{path}.nodeSelector", str(e)) from None
    return EvictorArgs(
        protections=protections, priority_threshold=threshold, priority_threshold_name=threshold_name,
        label_selector=parse_label_selector(ctx, raw.get("labelSelector"), f"{path}.labelSelector"),
        namespace_label_selector=parse_label_selector(ctx, raw.get("namespaceLabelSelector"),
                                                      f"{path}.namespaceLabelSelector"),
        node_fit=_bool(ctx, raw.get("nodeFit"), f"{path}.nodeFit"),
        min_replicas=_uint(ctx, raw.get("minReplicas"), f"{path}.minReplicas") or 0,
        min_pod_age_seconds=age_s, node_selector=sel, no_eviction_policy=nep)


def _duration(ctx: Ctx, value: Any, path: str) -> float:
    """A Go duration string (1h30m, 90s, 5m)."""
    import re
    text = str(value)
    parts = re.findall(r"(\d+(?:\.\d+)?)(h|ms|m|s)", text)
    if not parts or "".join(a + b for a, b in parts) != text:
        raise ctx.fail(path, f"not a duration (like 5m or 1h30m): {text!r}")
    unit = {"h": 3600, "m": 60, "s": 1, "ms": 0.001}
    return sum(float(a) * unit[b] for a, b in parts)


def _namespaces(ctx: Ctx, raw: Any, path: str) -> Namespaces:
    if raw is None:
        return Namespaces()
    if not isinstance(raw, dict):
        raise ctx.fail(path, "expected a mapping with include or exclude")
    _known(ctx, raw, {"include", "exclude"}, path)
    inc, exc = _strings(ctx, raw.get("include"), f"{path}.include"), _strings(ctx, raw.get("exclude"), f"{path}.exclude")
    if inc and exc:
        raise ctx.fail(path, "only one of Include/Exclude namespaces can be set")
    return Namespaces(inc, exc)


def _thresholds(ctx: Ctx, raw: Any, path: str) -> dict[str, float]:
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise ctx.fail(path, "expected a mapping of resource to percentage")
    if not raw:
        raise ctx.fail(path, "no resource threshold is configured")
    out: dict[str, float] = {}
    for k, v in raw.items():
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise ctx.fail(f"{path}.{k}", f"must be a number, got {v!r}")
        if not 0 <= v <= 100:
            raise ctx.fail(f"{path}.{k}", f"{k} threshold not in [0, 100] range")
        out[str(k)] = float(v)
    return out


def _plugin(ctx: Ctx, name: str, raw: Any, path: str) -> PluginArgs:
    if not isinstance(raw, dict):
        raise ctx.fail(path, "expected a mapping")
    common = {"namespaces", "labelSelector"}
    if name in (LOW, HIGH):
        known = {"thresholds", "numberOfNodes", "evictableNamespaces", "evictionLimits", "metricsUtilization",
                 "evictionModes"} | ({"targetThresholds", "useDeviationThresholds"} if name == LOW else set())
        _known(ctx, raw, known, path)
        if raw.get("metricsUtilization"):
            raise ctx.fail(f"{path}.metricsUtilization", "actual utilisation from metrics is not part of podplan's "
                                                          "input: thresholds are judged on requests")
        ns = _namespaces(ctx, raw.get("evictableNamespaces"), f"{path}.evictableNamespaces")
        if ns.include:
            raise ctx.fail(f"{path}.evictableNamespaces", "only Exclude namespaces can be set, inclusion is not supported")
        th = _thresholds(ctx, raw.get("thresholds"), f"{path}.thresholds")
        for r in th:
            if r not in RESOURCES:
                raise ctx.fail(f"{path}.thresholds.{r}", f"podplan judges cpu, memory and pods, not {r}")
        limits = raw.get("evictionLimits") or {}
        node_limit = _uint(ctx, limits.get("node"), f"{path}.evictionLimits.node") if isinstance(limits, dict) else None
        modes = _strings(ctx, raw.get("evictionModes"), f"{path}.evictionModes")
        for i, mode in enumerate(modes):
            if mode != "OnlyThresholdingResources":
                raise ctx.fail(f"{path}.evictionModes[{i}]", f"invalid eviction mode {mode}")
        number = _uint(ctx, raw.get("numberOfNodes"), f"{path}.numberOfNodes") or 0
        if name == HIGH:
            return PluginArgs(name, ns, thresholds=th, number_of_nodes=number, node_limit=node_limit,
                              target_thresholds={r: 100.0 for r in th}, only_thresholding=bool(modes))
        dev = _bool(ctx, raw.get("useDeviationThresholds"), f"{path}.useDeviationThresholds")
        tt = _thresholds(ctx, raw.get("targetThresholds"), f"{path}.targetThresholds")
        if set(th) != set(tt):
            raise ctx.fail(f"{path}.targetThresholds", "thresholds and targetThresholds configured different resources")
        for r, v in th.items():
            if v > tt[r] and not dev:
                raise ctx.fail(f"{path}.thresholds.{r}", f"thresholds' {r} percentage is greater than targetThresholds'")
        return PluginArgs(name, ns, thresholds=th, target_thresholds=tt, use_deviation=dev, number_of_nodes=number,
                          node_limit=node_limit)
    if name == DUPLICATES:
        _known(ctx, raw, {"namespaces", "excludeOwnerKinds"}, path)
        return PluginArgs(name, _namespaces(ctx, raw.get("namespaces"), f"{path}.namespaces"),
                          exclude_owner_kinds=_strings(ctx, raw.get("excludeOwnerKinds"), f"{path}.excludeOwnerKinds"))
    sel = parse_label_selector(ctx, raw.get("labelSelector"), f"{path}.labelSelector")
    ns = _namespaces(ctx, raw.get("namespaces"), f"{path}.namespaces")
    if name == SPREAD:
        _known(ctx, raw, common | {"constraints", "topologyBalanceNodeFit"}, path)
        cons = _strings(ctx, raw.get("constraints"), f"{path}.constraints") or ("DoNotSchedule",)
        for i, c in enumerate(cons):
            if c not in ("DoNotSchedule", "ScheduleAnyway"):
                raise ctx.fail(f"{path}.constraints[{i}]", f"constraint {c} is not one of DoNotSchedule, ScheduleAnyway")
        return PluginArgs(name, ns, sel, constraints=cons, topology_balance_node_fit=_bool(
            ctx, raw.get("topologyBalanceNodeFit"), f"{path}.topologyBalanceNodeFit", True))
    if name == NODE_AFFINITY:
        _known(ctx, raw, common | {"nodeAffinityType"}, path)
        types = _strings(ctx, raw.get("nodeAffinityType"), f"{path}.nodeAffinityType")
        if not types:
            raise ctx.fail(f"{path}.nodeAffinityType", "nodeAffinityType needs to be set")
        for i, t in enumerate(types):
            if t not in ("requiredDuringSchedulingIgnoredDuringExecution", "preferredDuringSchedulingIgnoredDuringExecution"):
                raise ctx.fail(f"{path}.nodeAffinityType[{i}]", f"nodeAffinityType {t} not supported")
        return PluginArgs(name, ns, sel, node_affinity_types=types)
    if name == TAINTS:
        _known(ctx, raw, common | {"includePreferNoSchedule", "excludedTaints", "includedTaints"}, path)
        exc, inc = (_strings(ctx, raw.get("excludedTaints"), f"{path}.excludedTaints"),
                    _strings(ctx, raw.get("includedTaints"), f"{path}.includedTaints"))
        if exc and inc:
            raise ctx.fail(path, "either includedTaints or excludedTaints can be set, but not both")
        return PluginArgs(name, ns, sel, include_prefer_no_schedule=_bool(
            ctx, raw.get("includePreferNoSchedule"), f"{path}.includePreferNoSchedule"),
                          excluded_taints=exc, included_taints=inc)
    _known(ctx, raw, common, path)  # anti-affinity
    return PluginArgs(name, ns, sel)
