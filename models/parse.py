"""Manifests (already YAML-decoded mappings) -> the frozen object model, validated field by field.

Every problem raises models.errors.InputError naming file, document, object and field path, so the CLI can
print one line. What upstream's API server would default is defaulted here (pkg/apis/core/v1/defaults.go:
namespace, container requests from limits, pod-level requests from pod-level limits, hostPort from
containerPort under hostNetwork, toleration operator Equal, spread policies Honor/Ignore, the
kubernetes.io/metadata.name namespace label; the matchLabelKeys/mismatchLabelKeys merge of
pkg/registry/core/pod/strategy.go); what its validation (pkg/apis/core/validation) would reject is rejected.

Knowing differences:
- strict=False (upstream's own plugin tests, which break API validation on purpose) skips: empty pod
  affinity topologyKey, label keys without a labelSelector, empty nodeSelectorTerms, tolerationSeconds
  without NoExecute, request > limit, fractional or overcommitted extended resources, duplicate spread
  constraints, and a workload selector that does not select its template.
- Label names and values in selectors, topology keys and the like are not checked against the label syntax;
  only their type is. In a nodeSelectorTerm, a key or value upstream's labels.NewRequirement rejects makes the
  term match no node, as in kube-scheduler (models.selectors).
- strict=False also skips the name, namespace and label syntax checks (models.names): those tests name nodes
  `nodeA`.
- "key in both matchLabelKeys and labelSelector" is not rejected: a dumped pod already holds the merged
  requirement, and merging again is idempotent.

Unknown fields (a typo such as `nodeSelecter`) in the parts podplan reads are warnings naming the closest known
field (models.fields), or errors when the caller asks (`podplan --strict`).
"""
from __future__ import annotations

import difflib

import hashlib
import marshal
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from . import names
from .errors import InputError, Where, describe_value, printable, quote
from .fields import KNOWN_FIELDS, WORKLOAD_SPECS, unknown_field_message
from .objects import (
    Affinity, HostPort, Namespace, Node, OwnerRef, Pod, PodAffinityTerm, PodDisruptionBudget, PodGroup,
    PriorityClass, Service, TopologySpreadConstraint, WeightedPodAffinityTerm, Workload,
)
from .quantity import QuantityError, format_resource, parse_quantity, to_int, to_milli
from .selectors import (
    LABEL_OPERATORS, NODE_OPERATORS, LabelSelector, NodeSelector, NodeSelectorTerm, PreferredSchedulingTerm,
    Requirement, is_qualified_name,
)
from .taints import EFFECTS, Taint, Toleration

# Upstream's non-zero request defaults used by scoring (pkg/scheduler/util: DefaultMilliCPURequest/DefaultMemoryRequest).
DEFAULT_MILLI_CPU_REQUEST = 100
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024
# Resources that pod-level spec.resources may set (PodLevelResources feature).
POD_LEVEL_RESOURCES = ("cpu", "memory")  # plus every hugepages-* (resourcehelper.IsSupportedPodLevelResource)
MIRROR_ANNOTATION = "kubernetes.io/config.mirror"
WORKLOAD_KINDS = ("Deployment", "ReplicaSet", "StatefulSet", "Job", "DaemonSet")


@dataclass(frozen=True)
class Doc:
    """One decoded document (or one item of a List) and where it came from."""

    body: Any
    file: str
    index: int
    item_path: str = ""  # "items[3]" for an item of a kind: List


@dataclass
class Typos:
    """Where unknown fields go: warnings (one line each, for Cluster.warnings), or an error when `fatal`."""

    fatal: bool = False
    warnings: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Ctx:
    """Where we are while parsing one object: raises errors that point at a field."""

    where: Where
    prefix: str = ""
    # API validation rules that conformance cases knowingly break (empty topologyKey) are enforced only when strict.
    strict: bool = True
    # A re-parse (models.workloads) gets a throwaway collector: its warnings were given the first time.
    typos: Typos = field(default_factory=Typos, compare=False)

    def fail(self, path: str, message: str) -> InputError:
        return InputError(self.where, self.path(path), message)

    def path(self, path: str) -> str:
        return ".".join(p for p in (self.prefix, path) if p)

    def sub(self, path: str) -> "Ctx":
        # the constructor, not dataclasses.replace: replace costs 10 times more, and runs for every template
        return Ctx(self.where, self.path(path), self.strict, self.typos)


# ----------------------------------------------------------------------------------------------- primitives


def _map(ctx: Ctx, value: Any, path: str) -> dict[str, Any]:
    """The mapping itself when it is a dict (the parsers only read it: copying every mapping of every pod cost
    0.3 s at 5,000 nodes), else a dict of it."""
    if type(value) is dict:  # the common case, without the ABC's isinstance
        return value
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ctx.fail(path, f"expected a mapping, got {describe_value(value)}")
    return dict(value)


def _fields(ctx: Ctx, value: Any, path: str, part: str) -> dict[str, Any]:
    """A mapping whose keys are the fields of API struct `part` (models.fields): any other key is a typo."""
    raw = _map(ctx, value, path)
    known = KNOWN_FIELDS[part]
    if raw.keys() <= known:  # no typo (almost always): one C-level test instead of a look-up per key
        return raw
    for key in raw:
        if key in known:
            continue
        at = ".".join(p for p in (path, str(key)) if p)
        message = unknown_field_message(str(key), part)
        if ctx.typos.fatal:
            raise ctx.fail(at, message)
        ctx.typos.warnings.append(f"{ctx.where.describe()}: {printable(ctx.path(at))}: {message}")
    return raw


def _list(ctx: Ctx, value: Any, path: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise ctx.fail(path, f"expected a list, got {describe_value(value)}")
    return value


def _quote_hint(value: Any) -> str:
    """What to write instead when YAML read a number or a bool where Kubernetes wants a string."""
    shown = ("true" if value else "false") if isinstance(value, bool) else str(value)
    return f" (quote it: \"{shown}\")"


def _str(ctx: Ctx, value: Any, path: str, default: str = "") -> str:
    """A string field; YAML must not have turned it into a number or a bool (kubectl rejects those too)."""
    if value is None:
        return default
    if not isinstance(value, str):
        hint = _quote_hint(value) if isinstance(value, (bool, int, float)) else ""
        raise ctx.fail(path, f"expected a string, got {describe_value(value)}{hint}")
    return value


def _int(ctx: Ctx, value: Any, path: str, default: int | None = None) -> int | None:
    """An integer field: a quoted number is a string, which the API server rejects (`replicas: "3"`)."""
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int):
        raise ctx.fail(path, f"expected an integer, got {describe_value(value)}")
    return value


def _bool(ctx: Ctx, value: Any, path: str) -> bool:
    if value is None:
        return False
    if not isinstance(value, bool):
        raise ctx.fail(path, f"expected true or false, got {describe_value(value)}")
    return value


def _strict_str(ctx: Ctx, value: Any, path: str) -> str:
    """A string-typed map value or list item (label values, selector values): `version: 1.10` is a float that
    would silently read as "1.1"; kubectl rejects it, so do we."""
    if value is None:
        raise ctx.fail(path, "expected a string, got null")
    return _str(ctx, value, path)


_SYNTAX_OK: set[tuple[Callable[[str], str], str]] = set()  # (rule, text) found valid: labels repeat by thousands


def _syntax(ctx: Ctx, path: str, text: str, rule: Callable[[str], str]) -> None:
    """The API server's syntax rule for a name or label (models.names); skipped when not strict."""
    if ctx.strict and (rule, text) not in _SYNTAX_OK:
        broken = rule(text)
        if broken:
            raise ctx.fail(path, f"{quote(text)} {broken}")
        if len(_SYNTAX_OK) < 200_000:
            _SYNTAX_OK.add((rule, text))


# Label and annotation maps found valid, by (strict, annotations, their items): a workload's pods repeat them.
_LABEL_MAPS: dict[tuple[Any, ...], dict[str, str]] = {}


def _labels(ctx: Ctx, value: Any, path: str, annotations: bool = False) -> dict[str, str]:
    """A label map (labels, nodeSelector, matchLabels, a Service's selector), or with `annotations` an
    annotation map: keys are qualified names either way, only label values have a syntax."""
    if value is None:
        return {}  # no map at all (most pods' annotations): what reading an empty one gives, without the walk
    if type(value) is dict:
        # Only maps of strings to strings are remembered, so a key holding anything else (a number, a bool,
        # null) never equals a remembered one and is checked, and reported, below.
        memo_key = (ctx.strict, annotations, *value.items())
        try:
            known = _LABEL_MAPS.get(memo_key)
        except TypeError:  # an unhashable value: reported below
            known = memo_key = None
        if known is not None:
            return dict(known)
    else:
        memo_key = None
    out = _labels_checked(ctx, value, path, annotations)
    if memo_key is not None and len(_LABEL_MAPS) < 200_000 and all(type(v) is str for v in value.values()) \
            and all(type(k) is str for k in value):
        _LABEL_MAPS[memo_key] = out
        return dict(out)
    return out


def _labels_checked(ctx: Ctx, value: Any, path: str, annotations: bool) -> dict[str, str]:
    out: dict[str, str] = {}
    for k, v in _map(ctx, value, path).items():
        if not isinstance(k, str) or not k:
            raise ctx.fail(path, f"keys must be non-empty strings, got {describe_value(k)}")
        _syntax(ctx, f"{path}.{k}", k.lower() if annotations else k, names.qualified_name)
        out[k] = "" if v is None else _strict_str(ctx, v, f"{path}.{k}")
        if not annotations:
            _syntax(ctx, f"{path}.{k}", out[k], names.label_value)
    return out


def is_extended_resource(name: str) -> bool:
    """v1helper.IsExtendedResourceName: a domain-prefixed name outside kubernetes.io (e.g. nvidia.com/gpu)."""
    if "/" not in name or name.startswith("requests."):
        return False
    domain = name.split("/", 1)[0]
    return domain != "kubernetes.io" and not domain.endswith(".kubernetes.io")


_UNITS: dict[tuple[str, bool], int] = {}  # (text, is cpu) -> podplan's integer unit, for valid quantities


def _quantity(ctx: Ctx, name: str, value: Any, path: str) -> int:
    cpu = name == "cpu"
    if type(value) is str:
        known = _UNITS.get((value, cpu))
        if known is not None and not is_extended_resource(name):
            return known  # checked before: valid, not negative (an extended resource is checked every time)
    try:
        exact = parse_quantity(value)
    except QuantityError as exc:
        raise ctx.fail(path, str(exc)) from None
    if exact < 0:
        raise ctx.fail(path, f"must not be negative, got {value}")
    # Devices come whole: upstream validation rejects a fractional extended resource.
    if is_extended_resource(name) and exact.denominator != 1 and ctx.strict:
        raise ctx.fail(path, f"must be a whole number for extended resource {name}, got {value}")
    amount = to_milli(exact) if cpu else to_int(exact)
    if amount > MAX_AMOUNT:
        # Node arrays and CP-SAT hold 64-bit integers: sums of such amounts would overflow them.
        raise ctx.fail(path, f"{quote(str(value))} is out of range: podplan reads at most {MAX_AMOUNT} "
                             f"{'millicores' if cpu else 'units'}")
    if type(value) is str and len(_UNITS) < 100_000:
        _UNITS[(value, cpu)] = amount
    return amount


# 2^53: far beyond any real node (8 PiB, 9 trillion cores), and sums over thousands of pods stay within int64.
MAX_AMOUNT = 2 ** 53


def _resources(ctx: Ctx, value: Any, path: str) -> dict[str, int]:
    return {str(k): _quantity(ctx, str(k), v, f"{path}.{k}") for k, v in _map(ctx, value, path).items()}


# ---------------------------------------------------------------------------------------------- selectors


def _requirement(ctx: Ctx, raw: Any, path: str, operators: tuple[str, ...]) -> Requirement:
    raw = _fields(ctx, raw, path, "NodeSelectorRequirement" if operators == NODE_OPERATORS else "LabelSelectorRequirement")
    key = _str(ctx, raw.get("key"), f"{path}.key")
    if not key:
        raise ctx.fail(f"{path}.key", "must not be empty")
    op = _str(ctx, raw.get("operator"), f"{path}.operator")
    if op not in operators:
        raise ctx.fail(f"{path}.operator", f"unknown operator {quote(op)} (expected one of {', '.join(operators)})")
    values = tuple(_strict_str(ctx, v, f"{path}.values[{i}]")
                   for i, v in enumerate(_list(ctx, raw.get("values"), f"{path}.values")))
    if op in ("In", "NotIn") and not values:
        raise ctx.fail(f"{path}.values", f"must be non-empty for operator {op}")
    if op in ("Exists", "DoesNotExist") and values:
        raise ctx.fail(f"{path}.values", f"must be empty for operator {op}")
    # The API server checks only the count for Gt/Lt, not that the value is an integer, nor that In/NotIn
    # values are label values: kube-scheduler then finds the term unparsable and it matches no node
    # (models.selectors.NodeSelectorTerm.parse_errors).
    if op in ("Gt", "Lt") and len(values) != 1:
        raise ctx.fail(f"{path}.values", f"must hold exactly one integer for operator {op}")
    return Requirement(key, op, values)


def parse_label_selector(ctx: Ctx, raw: Any, path: str) -> LabelSelector | None:
    """metav1.LabelSelector; None stays None (matches nothing), {} matches everything."""
    if raw is None:
        return None
    raw = _fields(ctx, raw, path, "LabelSelector")
    labels = _labels(ctx, raw.get("matchLabels"), f"{path}.matchLabels")
    exprs = tuple(_requirement(ctx, r, f"{path}.matchExpressions[{i}]", LABEL_OPERATORS)
                  for i, r in enumerate(_list(ctx, raw.get("matchExpressions"), f"{path}.matchExpressions")))
    return LabelSelector(tuple(sorted(labels.items())), exprs)


def _node_term(ctx: Ctx, raw: Any, path: str) -> NodeSelectorTerm:
    raw = _fields(ctx, raw, path, "NodeSelectorTerm")
    exprs = tuple(_requirement(ctx, r, f"{path}.matchExpressions[{i}]", NODE_OPERATORS)
                  for i, r in enumerate(_list(ctx, raw.get("matchExpressions"), f"{path}.matchExpressions")))
    fields = tuple(_requirement(ctx, r, f"{path}.matchFields[{i}]", NODE_OPERATORS)
                   for i, r in enumerate(_list(ctx, raw.get("matchFields"), f"{path}.matchFields")))
    for i, f in enumerate(fields):
        if f.key != "metadata.name":
            raise ctx.fail(f"{path}.matchFields[{i}].key", f"{quote(f.key)} is not supported (only metadata.name)")
        # Upstream validation: a field selector names exactly one node.
        if f.operator in ("In", "NotIn") and len(f.values) != 1:
            raise ctx.fail(f"{path}.matchFields[{i}].values",
                           f"must hold exactly one node name for operator {f.operator}, got {len(f.values)}")
    return NodeSelectorTerm(exprs, fields)


def _weight(ctx: Ctx, raw: Mapping[str, Any], path: str) -> int:
    weight = _int(ctx, raw.get("weight"), f"{path}.weight")
    if weight is None:
        raise ctx.fail(f"{path}.weight", "is required (an integer in 1..100)")
    if not 1 <= weight <= 100:
        raise ctx.fail(f"{path}.weight", f"must be an integer in 1..100, got {weight}")
    return weight


def _pod_affinity_term(ctx: Ctx, raw: Any, path: str, pod_labels: Mapping[str, str]) -> PodAffinityTerm:
    raw = _fields(ctx, raw, path, "PodAffinityTerm")
    key = _str(ctx, raw.get("topologyKey"), f"{path}.topologyKey")
    if not key and ctx.strict:
        raise ctx.fail(f"{path}.topologyKey", "must not be empty")
    selector = parse_label_selector(ctx, raw.get("labelSelector"), f"{path}.labelSelector")
    match_keys = tuple(_str(ctx, k, f"{path}.matchLabelKeys") for k in _list(ctx, raw.get("matchLabelKeys"), f"{path}.matchLabelKeys"))
    mismatch_keys = tuple(_str(ctx, k, f"{path}.mismatchLabelKeys")
                          for k in _list(ctx, raw.get("mismatchLabelKeys"), f"{path}.mismatchLabelKeys"))
    if set(match_keys) & set(mismatch_keys):
        raise ctx.fail(f"{path}.mismatchLabelKeys", "must not share keys with matchLabelKeys")
    if selector is None and ctx.strict:
        for field, keys in (("matchLabelKeys", match_keys), ("mismatchLabelKeys", mismatch_keys)):
            if keys:
                raise ctx.fail(f"{path}.{field}", "must not be specified when labelSelector is not set")
    # The API server merges the label keys into the selector at pod creation; a nil selector stays match-nothing.
    if selector is not None:
        extra = tuple(Requirement(k, "In", (pod_labels[k],)) for k in match_keys if k in pod_labels)
        extra += tuple(Requirement(k, "NotIn", (pod_labels[k],)) for k in mismatch_keys if k in pod_labels)
        selector = selector.with_requirements(extra)
    namespaces = tuple(_str(ctx, n, f"{path}.namespaces") for n in _list(ctx, raw.get("namespaces"), f"{path}.namespaces"))
    ns_selector = parse_label_selector(ctx, raw.get("namespaceSelector"), f"{path}.namespaceSelector")
    return PodAffinityTerm(selector, key, namespaces, ns_selector, match_keys, mismatch_keys)


def _affinity(ctx: Ctx, raw: Any, path: str, pod_labels: Mapping[str, str]) -> Affinity:
    raw = _fields(ctx, raw, path, "Affinity")
    node = _fields(ctx, raw.get("nodeAffinity"), f"{path}.nodeAffinity", "NodeAffinity")
    required = None
    req_raw = node.get("requiredDuringSchedulingIgnoredDuringExecution")
    if req_raw is not None:
        rpath = f"{path}.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
        req_map = _fields(ctx, req_raw, rpath, "NodeSelector")
        required = NodeSelector(tuple(_node_term(ctx, t, f"{rpath}.nodeSelectorTerms[{i}]")
                                      for i, t in enumerate(_list(ctx, req_map.get("nodeSelectorTerms"), f"{rpath}.nodeSelectorTerms"))))
        if not required.terms and ctx.strict:
            raise ctx.fail(f"{rpath}.nodeSelectorTerms", "must have at least one term")
    preferred = []
    ppath = f"{path}.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution"
    for i, p in enumerate(_list(ctx, node.get("preferredDuringSchedulingIgnoredDuringExecution"), ppath)):
        p = _fields(ctx, p, f"{ppath}[{i}]", "PreferredSchedulingTerm")
        preferred.append(PreferredSchedulingTerm(_weight(ctx, p, f"{ppath}[{i}]"),
                                                 _node_term(ctx, p.get("preference"), f"{ppath}[{i}].preference")))

    def pod_terms(kind: str) -> tuple[tuple[PodAffinityTerm, ...], tuple[WeightedPodAffinityTerm, ...]]:
        block = _fields(ctx, raw.get(kind), f"{path}.{kind}", "PodAffinity")
        rpath = f"{path}.{kind}.requiredDuringSchedulingIgnoredDuringExecution"
        req = tuple(_pod_affinity_term(ctx, t, f"{rpath}[{i}]", pod_labels)
                    for i, t in enumerate(_list(ctx, block.get("requiredDuringSchedulingIgnoredDuringExecution"), rpath)))
        wpath = f"{path}.{kind}.preferredDuringSchedulingIgnoredDuringExecution"
        pref = []
        for i, w in enumerate(_list(ctx, block.get("preferredDuringSchedulingIgnoredDuringExecution"), wpath)):
            w = _fields(ctx, w, f"{wpath}[{i}]", "WeightedPodAffinityTerm")
            pref.append(WeightedPodAffinityTerm(_weight(ctx, w, f"{wpath}[{i}]"),
                                                _pod_affinity_term(ctx, w.get("podAffinityTerm"), f"{wpath}[{i}].podAffinityTerm", pod_labels)))
        return req, tuple(pref)

    pod_req, pod_pref = pod_terms("podAffinity")
    anti_req, anti_pref = pod_terms("podAntiAffinity")
    return Affinity(required, tuple(preferred), pod_req, pod_pref, anti_req, anti_pref)


def _taint(ctx: Ctx, raw: Any, path: str) -> Taint:
    raw = _fields(ctx, raw, path, "Taint")
    key = _str(ctx, raw.get("key"), f"{path}.key")
    if not key:
        raise ctx.fail(f"{path}.key", "must not be empty")
    effect = _str(ctx, raw.get("effect"), f"{path}.effect")
    if effect not in EFFECTS:
        raise ctx.fail(f"{path}.effect", f"unknown taint effect {quote(effect)} (expected one of {', '.join(EFFECTS)})")
    return Taint(key, _str(ctx, raw.get("value"), f"{path}.value"), effect)


def _toleration(ctx: Ctx, raw: Any, path: str) -> Toleration:
    raw = _fields(ctx, raw, path, "Toleration")
    key = _str(ctx, raw.get("key"), f"{path}.key")
    op = _str(ctx, raw.get("operator"), f"{path}.operator") or "Equal"
    if op not in ("Equal", "Exists"):
        raise ctx.fail(f"{path}.operator", f"unknown toleration operator {quote(op)} (expected Equal or Exists)")
    value = _str(ctx, raw.get("value"), f"{path}.value")
    if op == "Exists" and value:
        raise ctx.fail(f"{path}.value", "must be empty when operator is Exists")
    if op == "Equal" and not key:
        raise ctx.fail(f"{path}.key", "must not be empty when operator is Equal (use operator: Exists to tolerate everything)")
    effect = _str(ctx, raw.get("effect"), f"{path}.effect")
    if effect and effect not in EFFECTS:
        raise ctx.fail(f"{path}.effect", f"unknown taint effect {quote(effect)} (expected one of {', '.join(EFFECTS)})")
    seconds = _int(ctx, raw.get("tolerationSeconds"), f"{path}.tolerationSeconds")
    if seconds is not None and effect != "NoExecute" and ctx.strict:
        raise ctx.fail(f"{path}.tolerationSeconds", f"may only be set with effect NoExecute, got effect {quote(effect) if effect else '(empty)'}")
    return Toleration(key, op, value, effect, seconds)


def _spread(ctx: Ctx, raw: Any, path: str, pod_labels: Mapping[str, str]) -> TopologySpreadConstraint:
    raw = _fields(ctx, raw, path, "TopologySpreadConstraint")
    max_skew = _int(ctx, raw.get("maxSkew"), f"{path}.maxSkew")
    if max_skew is None:
        raise ctx.fail(f"{path}.maxSkew", "is required (an integer >= 1)")
    if max_skew < 1:
        raise ctx.fail(f"{path}.maxSkew", f"must be an integer >= 1, got {max_skew}")
    key = _str(ctx, raw.get("topologyKey"), f"{path}.topologyKey")
    if not key:
        raise ctx.fail(f"{path}.topologyKey", "must not be empty")
    when = _str(ctx, raw.get("whenUnsatisfiable"), f"{path}.whenUnsatisfiable")
    if when not in ("DoNotSchedule", "ScheduleAnyway"):
        raise ctx.fail(f"{path}.whenUnsatisfiable", f"must be DoNotSchedule or ScheduleAnyway, got {quote(when)}")
    min_domains = _int(ctx, raw.get("minDomains"), f"{path}.minDomains")
    if min_domains is not None:
        if min_domains < 1:
            raise ctx.fail(f"{path}.minDomains", f"must be >= 1, got {min_domains}")
        if when != "DoNotSchedule":
            raise ctx.fail(f"{path}.minDomains", "may only be set with whenUnsatisfiable: DoNotSchedule")
    policies = {}
    for field, default in (("nodeAffinityPolicy", "Honor"), ("nodeTaintsPolicy", "Ignore")):
        value = _str(ctx, raw.get(field), f"{path}.{field}") or default
        if value not in ("Honor", "Ignore"):
            raise ctx.fail(f"{path}.{field}", f"must be Honor or Ignore, got {quote(value)}")
        policies[field] = value
    selector = parse_label_selector(ctx, raw.get("labelSelector"), f"{path}.labelSelector")
    keys = tuple(_str(ctx, k, f"{path}.matchLabelKeys") for k in _list(ctx, raw.get("matchLabelKeys"), f"{path}.matchLabelKeys"))
    if keys and selector is None and ctx.strict:
        raise ctx.fail(f"{path}.matchLabelKeys", "must not be specified when labelSelector is not set")
    # Upstream ANDs the incoming pod's values for matchLabelKeys into the selector; nil stays match-nothing.
    if selector is not None:
        selector = selector.with_requirements(tuple(Requirement(k, "In", (pod_labels[k],)) for k in keys if k in pod_labels))
    return TopologySpreadConstraint(max_skew, key, when, selector, min_domains,
                                    policies["nodeAffinityPolicy"], policies["nodeTaintsPolicy"], keys)


def _spreads(ctx: Ctx, spec: Mapping[str, Any], pod_labels: Mapping[str, str]) -> tuple[TopologySpreadConstraint, ...]:
    out: list[TopologySpreadConstraint] = []
    for i, c in enumerate(_list(ctx, spec.get("topologySpreadConstraints"), "spec.topologySpreadConstraints")):
        constraint = _spread(ctx, c, f"spec.topologySpreadConstraints[{i}]", pod_labels)
        # Upstream validation: one constraint per {topologyKey, whenUnsatisfiable} pair.
        if ctx.strict and any((o.topology_key, o.when_unsatisfiable) == (constraint.topology_key, constraint.when_unsatisfiable)
                              for o in out):
            raise ctx.fail(f"spec.topologySpreadConstraints[{i}]",
                           f"duplicate constraint for topologyKey {quote(constraint.topology_key)} and whenUnsatisfiable "
                           f"{constraint.when_unsatisfiable}")
        out.append(constraint)
    return tuple(out)


# ------------------------------------------------------------------------------------------------ requests


def _add(into: dict[str, int], more: Mapping[str, int]) -> None:
    for k, v in more.items():
        into[k] = into.get(k, 0) + v


def _max(into: dict[str, int], other: Mapping[str, int]) -> None:
    for k, v in other.items():
        if v > into.get(k, 0):
            into[k] = v


def is_pod_level_resource(name: str) -> bool:
    """resourcehelper.IsSupportedPodLevelResource: cpu, memory and hugepages-* can be set at pod level."""
    return name in POD_LEVEL_RESOURCES or name.startswith("hugepages-")


def effective_requests(containers: list[dict[str, int]], inits: list[tuple[dict[str, int], bool]],
                       pod_level: Mapping[str, int], overhead: Mapping[str, int]) -> dict[str, int]:
    """resourcehelper.PodRequests: max(sum of containers + sidecars, each init container on top of the
    sidecars started before it), pod-level requests override cpu/memory, then overhead is added."""
    reqs: dict[str, int] = {}
    for c in containers:
        _add(reqs, c)
    sidecars: dict[str, int] = {}
    init_max: dict[str, int] = {}
    for c, restartable in inits:
        if restartable:
            _add(reqs, c)
            _add(sidecars, c)
            step = dict(sidecars)
        else:
            step = dict(c)
            _add(step, sidecars)
        _max(init_max, step)
    _max(reqs, init_max)
    for name, amount in pod_level.items():
        if is_pod_level_resource(name):
            reqs[name] = amount
    _add(reqs, overhead)
    return {k: v for k, v in reqs.items() if v}


def _with_nonzero(req: Mapping[str, int]) -> dict[str, int]:
    out = dict(req)
    out.setdefault("cpu", DEFAULT_MILLI_CPU_REQUEST)
    out.setdefault("memory", DEFAULT_MEMORY_REQUEST)
    return out


def _container_requests(ctx: Ctx, raw: Mapping[str, Any], path: str) -> dict[str, int]:
    """One container's requests after API defaulting: a missing request takes the limit's value.

    An explicit request of 0 is kept (it is "set": the non-zero scoring defaults do not replace it)."""
    res = _fields(ctx, raw.get("resources"), f"{path}.resources", "ResourceRequirements")
    requests = _resources(ctx, res.get("requests"), f"{path}.resources.requests")
    limits = _resources(ctx, res.get("limits"), f"{path}.resources.limits")
    if ctx.strict:
        for name, limit in limits.items():
            request = requests.get(name)
            if request is None:
                continue
            if request > limit:
                raise ctx.fail(f"{path}.resources.requests.{name}",
                               f"{format_resource(name, request)} must be less than or equal to the limit "
                               f"{format_resource(name, limit)}")
            if is_extended_resource(name) and request != limit:
                raise ctx.fail(f"{path}.resources.requests.{name}",
                               f"must equal the limit {limit} (extended resources cannot be overcommitted)")
    for name, amount in limits.items():
        requests.setdefault(name, amount)
    return requests


# ------------------------------------------------------------------------------------------------ objects


# kube's rand.SafeEncodeString alphabet: no vowels, no look-alikes.
_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"


# byte -> its letter (_ALPHABET[b % 27]) as one translate table: a generator over the bytes cost half of each of
# the 46,000 names made at 5,000 nodes
_SUFFIX_TABLE = bytes(ord(_ALPHABET[b % len(_ALPHABET)]) for b in range(256))


def stable_suffix(seed: str, length: int = 5) -> str:
    """A deterministic stand-in for the random suffix the API server or a controller generates."""
    return hashlib.sha256(seed.encode()).digest()[:length].translate(_SUFFIX_TABLE).decode("ascii")


# The last object's metadata read: collect() reads it to find duplicates, then the object's parser reads it again
# with the same Ctx (the syntax checks of 44,000 names and namespaces twice at 5,000 nodes).
_LAST_META: list[Any] = [None]


def _meta(ctx: Ctx, body: Mapping[str, Any], namespaced: bool) -> tuple[str, str, dict[str, Any]]:
    last = _LAST_META[0]
    if last is not None and last[0] is body and last[1] is ctx and last[2] == namespaced:
        return last[3]  # type: ignore[no-any-return]
    out = _meta_read(ctx, body, namespaced)
    _LAST_META[0] = (body, ctx, namespaced, out)  # only a read without an error is remembered
    return out


def _meta_read(ctx: Ctx, body: Mapping[str, Any], namespaced: bool) -> tuple[str, str, dict[str, Any]]:
    meta = _map(ctx, body.get("metadata"), "metadata")
    name = _str(ctx, meta.get("name"), "metadata.name")
    if not name:
        # `kubectl create` names a generateName object itself; do it deterministically, from where it was read.
        prefix = _str(ctx, meta.get("generateName"), "metadata.generateName")
        if not prefix:
            raise ctx.fail("metadata.name", "is required (or metadata.generateName)")
        w = ctx.where
        name = prefix + stable_suffix(f"{w.file}#{w.doc}#{ctx.prefix}")
        _syntax(ctx, "metadata.generateName", name, _NAME_RULES.get(ctx.where.kind, names.dns1123_subdomain))
    else:
        _syntax(ctx, "metadata.name", name, _NAME_RULES.get(ctx.where.kind, names.dns1123_subdomain))
    namespace = (_str(ctx, meta.get("namespace"), "metadata.namespace") or "default") if namespaced else ""
    if namespaced:
        _syntax(ctx, "metadata.namespace", namespace, names.dns1123_label)
    return namespace, name, meta


# The API server's rule for each kind's name (ValidateNamespaceName, ValidateServiceName); the others
# (Pod, Node, workloads, PodDisruptionBudget, PriorityClass, PodGroup) are DNS-1123 subdomains.
_NAME_RULES = {"Namespace": names.dns1123_label, "Service": names.dns1035_label}


def _owner_refs(ctx: Ctx, meta: Mapping[str, Any]) -> tuple[OwnerRef, ...]:
    refs = []
    for i, r in enumerate(_list(ctx, meta.get("ownerReferences"), "metadata.ownerReferences")):
        r = _fields(ctx, r, f"metadata.ownerReferences[{i}]", "OwnerReference")
        refs.append(OwnerRef(_str(ctx, r.get("kind"), f"metadata.ownerReferences[{i}].kind"),
                             _str(ctx, r.get("name"), f"metadata.ownerReferences[{i}].name"),
                             _str(ctx, r.get("uid"), f"metadata.ownerReferences[{i}].uid"),
                             _bool(ctx, r.get("controller"), f"metadata.ownerReferences[{i}].controller")))
    return tuple(refs)


_PROTOCOLS = ("TCP", "UDP", "SCTP")
PREEMPTION_POLICIES = ("PreemptLowerPriority", "Never")


def _preemption_policy(ctx: Ctx, value: Any, path: str) -> str:
    policy = _str(ctx, value, path)
    if policy and policy not in PREEMPTION_POLICIES:
        raise ctx.fail(path, f"must be one of {', '.join(PREEMPTION_POLICIES)}, got {quote(policy)}")
    return policy


def _host_ports(ctx: Ctx, container: Mapping[str, Any], path: str, host_network: bool) -> list[HostPort]:
    """The container's host ports; with hostNetwork the API server defaults hostPort to containerPort."""
    out = []
    for j, p in enumerate(_list(ctx, container.get("ports"), f"{path}.ports")):
        ppath = f"{path}.ports[{j}]"
        p = _fields(ctx, p, ppath, "ContainerPort")
        container_port = _int(ctx, p.get("containerPort"), f"{ppath}.containerPort", 0) or 0
        if not 0 <= container_port <= 65535:
            raise ctx.fail(f"{ppath}.containerPort", f"must be in 1..65535, got {container_port}")
        host_port = _int(ctx, p.get("hostPort"), f"{ppath}.hostPort", 0) or 0
        if not 0 <= host_port <= 65535:
            raise ctx.fail(f"{ppath}.hostPort", f"must be in 1..65535 (or 0 for none), got {host_port}")
        if host_network and not host_port:
            host_port = container_port
        protocol = _str(ctx, p.get("protocol"), f"{ppath}.protocol") or "TCP"
        if protocol not in _PROTOCOLS:
            raise ctx.fail(f"{ppath}.protocol", f"must be one of {', '.join(_PROTOCOLS)}, got {quote(protocol)}")
        if host_port:
            out.append(HostPort(host_port, protocol, _str(ctx, p.get("hostIP"), f"{ppath}.hostIP") or "0.0.0.0"))
    return out


def _scheduling_gates(ctx: Ctx, spec: Mapping[str, Any]) -> tuple[str, ...]:
    """spec.schedulingGates as validateSchedulingGates checks them: qualified names, no duplicates."""
    names: list[str] = []
    for i, gate in enumerate(_list(ctx, spec.get("schedulingGates"), "spec.schedulingGates")):
        path = f"spec.schedulingGates[{i}]"
        name = _str(ctx, _fields(ctx, gate, path, "PodSchedulingGate").get("name"), f"{path}.name")
        if not is_qualified_name(name):
            raise ctx.fail(f"{path}.name", f"{quote(name)} is not a qualified name (e.g. example.com/gate)")
        if name in names:
            raise ctx.fail(f"{path}.name", f"duplicate scheduling gate {quote(name)}")
        names.append(name)
    return tuple(names)


def _text(part: Any) -> bytes | str:
    """A memo key for a decoded part: equal only for parts equal in value and type (`1` is not `true` nor `1.0`).
    marshal's bytes (version 2: no back-references, strings as UTF-8) decode to the one value they were written
    from, and cost a third less than the part's repr (0.1 s over production 5,000's 37,748 pod specs); a value
    marshal cannot write (a date, a dict subclass, a cycle) is keyed by its repr, which never equals bytes."""
    try:
        return marshal.dumps(part, 2)
    except ValueError:
        return repr(part)


def _names_label_keys(text: bytes | str) -> bool:
    """Whether a part keyed by _text may hold `matchLabelKeys` or `mismatchLabelKeys` (then the pod's labels are
    part of its key)."""
    return (b"LabelKeys" if type(text) is bytes else "LabelKeys") in text  # type: ignore[operator]


# Parts of pod specs parsed before, by what they were parsed from (the part's _text, and what else it depends on):
# the pods of a workload, or of a DaemonSet on every node, repeat the same containers, tolerations and affinity.
_PARTS: dict[tuple[Any, ...], Any] = {}
_NONE = object()


def _once(ctx: Ctx, key: tuple[Any, ...], compute: Callable[[], Any]) -> Any:
    """compute(), or its value for the same key before. Only a part parsed without an error or a warning is
    remembered: those belong to each object that has them, and a part read again raises or warns again."""
    key = (ctx.strict, *key)
    hit = _PARTS.get(key, _NONE)
    if hit is not _NONE:
        return hit
    before = len(ctx.typos.warnings)
    value = compute()
    if len(ctx.typos.warnings) == before and len(_PARTS) < 200_000:
        _PARTS[key] = value
    return value


def _with_labels_if_keyed(part: bytes | str, labels: Mapping[str, str]) -> tuple[bytes | str, ...]:
    """The memo key of an affinity or spread part (its _text): the pod's labels matter only to matchLabelKeys and
    mismatchLabelKeys, so they are in the key only when the part may name such keys (a pod's labels are often
    its own: a StatefulSet's pod-name, a DaemonSet's node)."""
    return (part, _text(labels)) if _names_label_keys(part) else (part,)


# Whole pod specs read before (but for the fields each pod has its own: nodeName, and the affinity that pins a
# daemon pod to its node), by their _text: most pods repeat a workload's spec, and reading it again part by part
# was most of the 37,748 specs' cost at 5,000 nodes. What a spec gives every pod, as Pod fields.
MEMO_SPECS = True  # False: every spec read part by part (the reference the tests compare the memo with)
_SPECS: dict[tuple[Any, ...], dict[str, Any]] = {}
_OWN_SPEC_FIELDS = ("nodeName", "affinity")


def parse_pod_spec(ctx: Ctx, namespace: str, name: str, meta: Mapping[str, Any], spec: Any, order: int,
                   raw: Mapping[str, Any] | None = None, status: Mapping[str, Any] | None = None) -> Pod:
    """A Pod (or a workload's pod template) from its metadata and spec, and its status when it is a mapping (what
    preemption reads: the pod's nomination and when it started); `ctx` points at the spec's parent."""
    if not MEMO_SPECS or type(spec) is not dict:
        return _parse_pod_spec(ctx, namespace, name, meta, spec, order, raw, status)
    shared = {k: v for k, v in spec.items() if k not in _OWN_SPEC_FIELDS}
    text = _text(shared)
    labels_raw = meta.get("labels")
    # the pod's labels matter to the spec only through matchLabelKeys (of a spread constraint; the affinity is
    # read per pod below)
    key = (ctx.strict, text, _text(labels_raw)) if _names_label_keys(text) else (ctx.strict, text)
    common = _SPECS.get(key)
    if common is None:
        before = len(ctx.typos.warnings)
        pod = _parse_pod_spec(ctx, namespace, name, meta, spec, order, raw, status)
        if len(ctx.typos.warnings) == before and len(_SPECS) < 50_000:
            # only a spec read without an error or a warning: those belong to each pod that has them
            _SPECS[key] = {f: getattr(pod, f) for f in _FROM_SPEC}
        return pod
    # The spec but its own fields is one read before without an error or warning: only the metadata, nodeName,
    # the affinity and the status can fail here, in the order the full read meets them.
    labels = _labels(ctx, labels_raw, "metadata.labels")
    annotations = _labels(ctx, meta.get("annotations"), "metadata.annotations", annotations=True)
    uid = _str(ctx, meta.get("uid"), "metadata.uid")
    owner_refs = _once(ctx, ("owners", _text(meta.get("ownerReferences"))), lambda: _owner_refs(ctx, meta))
    node_name = _str(ctx, spec.get("nodeName"), "spec.nodeName")
    affinity = _once(ctx, ("affinity", *_with_labels_if_keyed(_text(spec.get("affinity")), labels)),
                     lambda: _affinity(ctx, spec.get("affinity"), "spec.affinity", labels))
    nominated = _str(ctx, status.get("nominatedNodeName"), "status.nominatedNodeName") if status else ""
    start_time = _str(ctx, status.get("startTime"), "status.startTime") if status else ""
    # Pod has no __post_init__: a new instance with its fields set is what the constructor makes (as evolve)
    pod = object.__new__(Pod)
    state = pod.__dict__
    state.update(common)
    state.update(
        namespace=namespace, name=name, uid=uid, labels=labels, annotations=annotations, owner_refs=owner_refs,
        node_name=node_name, node_selector=dict(common["node_selector"]), affinity=affinity,
        terminating=meta.get("deletionTimestamp") is not None, nominated_node_name=nominated,
        start_time=start_time, mirror=MIRROR_ANNOTATION in annotations, order=order, where=ctx.where, raw=raw,
    )
    return pod


# The Pod fields a spec alone decides (with the pod's labels where the spec has matchLabelKeys), and those
# every pod parse_pod_spec makes leaves at their default.
_FROM_SPEC = ("priority", "priority_class_name", "tolerations", "spread_constraints", "host_ports", "requests",
              "nonzero_requests", "scheduler_name", "scheduling_gates", "preemption_policy", "local_storage",
              "node_selector", "workload", "pod_group")


def _parse_pod_spec(ctx: Ctx, namespace: str, name: str, meta: Mapping[str, Any], spec: Any, order: int,
                    raw: Mapping[str, Any] | None = None, status: Mapping[str, Any] | None = None) -> Pod:
    """parse_pod_spec, every part of the spec read (each part remembered on its own by _once)."""
    spec = _fields(ctx, spec, "spec", "PodSpec")
    labels = _labels(ctx, meta.get("labels"), "metadata.labels")
    annotations = _labels(ctx, meta.get("annotations"), "metadata.annotations", annotations=True)
    host_network = _bool(ctx, spec.get("hostNetwork"), "spec.hostNetwork")

    def resources() -> tuple[dict[str, int], dict[str, int], tuple[HostPort, ...]]:
        containers, ports = [], []
        for i, c in enumerate(_list(ctx, spec.get("containers"), "spec.containers")):
            c = _fields(ctx, c, f"spec.containers[{i}]", "Container")
            containers.append(_container_requests(ctx, c, f"spec.containers[{i}]"))
            ports.extend(_host_ports(ctx, c, f"spec.containers[{i}]", host_network))
        inits = []
        for i, c in enumerate(_list(ctx, spec.get("initContainers"), "spec.initContainers")):
            c = _fields(ctx, c, f"spec.initContainers[{i}]", "Container")
            # Only Always makes a sidecar (isRestartableInitContainer); newer per-container policies are not sidecars.
            policy = _str(ctx, c.get("restartPolicy"), f"spec.initContainers[{i}].restartPolicy")
            inits.append((_container_requests(ctx, c, f"spec.initContainers[{i}]"), policy == "Always"))
        pod_res = _fields(ctx, spec.get("resources"), "spec.resources", "ResourceRequirements")
        pod_level = _resources(ctx, pod_res.get("requests"), "spec.resources.requests")
        # defaultPodRequests: a pod-level limit becomes the pod-level request only where no container requests
        # that resource (cpu/memory; where one does, the default is the containers' own aggregate, a no-op here).
        requested_by_containers = {k for c in containers for k in c} | {k for c, _ in inits for k in c}
        for rname, amount in _resources(ctx, pod_res.get("limits"), "spec.resources.limits").items():
            if not is_pod_level_resource(rname) or rname in pod_level:
                continue
            if rname in POD_LEVEL_RESOURCES and rname in requested_by_containers:
                continue
            pod_level[rname] = amount
        overhead = _resources(ctx, spec.get("overhead"), "spec.overhead")
        requests = effective_requests(containers, inits, pod_level, overhead)
        nonzero = effective_requests([_with_nonzero(c) for c in containers],
                                     [(_with_nonzero(c), r) for c, r in inits], pod_level, overhead)
        return requests, nonzero, tuple(ports)

    requests, nonzero, ports = _once(ctx, ("resources", _text(spec.get("containers")), _text(spec.get("initContainers")),
                                           _text(spec.get("resources")), _text(spec.get("overhead")), host_network),
                                     resources)
    priority = _int(ctx, spec.get("priority"), "spec.priority")
    volumes = _list(ctx, spec.get("volumes"), "spec.volumes")
    local = any(isinstance(v, Mapping) and ("emptyDir" in v or "hostPath" in v) for v in volumes)
    node_selector = _labels(ctx, spec.get("nodeSelector"), "spec.nodeSelector")
    return Pod(
        namespace=namespace, name=name,
        uid=_str(ctx, meta.get("uid"), "metadata.uid"),
        labels=labels, annotations=annotations,
        owner_refs=_once(ctx, ("owners", _text(meta.get("ownerReferences"))), lambda: _owner_refs(ctx, meta)),
        priority=priority if priority is not None else 0,
        priority_class_name=_str(ctx, spec.get("priorityClassName"), "spec.priorityClassName"),
        node_name=_str(ctx, spec.get("nodeName"), "spec.nodeName"),
        node_selector=node_selector,
        affinity=_once(ctx, ("affinity", *_with_labels_if_keyed(_text(spec.get("affinity")), labels)),
                       lambda: _affinity(ctx, spec.get("affinity"), "spec.affinity", labels)),
        tolerations=_once(ctx, ("tolerations", _text(spec.get("tolerations"))),
                          lambda: tuple(_toleration(ctx, t, f"spec.tolerations[{i}]")
                                        for i, t in enumerate(_list(ctx, spec.get("tolerations"), "spec.tolerations")))),
        spread_constraints=_once(ctx, ("spreads", *_with_labels_if_keyed(_text(spec.get("topologySpreadConstraints")),
                                                                         labels)),
                                 lambda: _spreads(ctx, spec, labels)),
        host_ports=ports,
        requests=requests, nonzero_requests=nonzero,
        scheduler_name=_str(ctx, spec.get("schedulerName"), "spec.schedulerName", "default-scheduler") or "default-scheduler",
        scheduling_gates=_scheduling_gates(ctx, spec),
        terminating=meta.get("deletionTimestamp") is not None,
        preemption_policy=_preemption_policy(ctx, spec.get("preemptionPolicy"), "spec.preemptionPolicy"),
        # read after the whole spec (below: nothing after them can fail), so that a spec's error is reported first
        nominated_node_name=_str(ctx, status.get("nominatedNodeName"), "status.nominatedNodeName") if status else "",
        start_time=_str(ctx, status.get("startTime"), "status.startTime") if status else "",
        local_storage=local,
        mirror=MIRROR_ANNOTATION in annotations,
        order=order,
        where=ctx.where,
        raw=raw,
    )


def parse_pod(ctx: Ctx, body: Mapping[str, Any], order: int) -> tuple[Pod, bool]:
    """A Pod and whether its spec.priority was set explicitly (else PriorityClass resolution applies)."""
    namespace, name, meta = _meta(ctx, body, True)
    status = body.get("status")
    pod = parse_pod_spec(ctx, namespace, name, meta, body.get("spec"), order, body,
                         status if _is_map(status) else None)
    spec = _map(ctx, body.get("spec"), "spec")
    return pod, spec.get("priority") is not None


def parse_node(ctx: Ctx, body: Mapping[str, Any]) -> Node:
    _, name, meta = _meta(ctx, body, False)
    spec = _fields(ctx, body.get("spec"), "spec", "NodeSpec")
    status = _fields(ctx, body.get("status"), "status", "NodeStatus")
    alloc_raw = status.get("allocatable")
    path = "status.allocatable"
    if alloc_raw is None:
        alloc_raw, path = status.get("capacity"), "status.capacity"
    return Node(
        name=name,
        labels=_labels(ctx, meta.get("labels"), "metadata.labels"),
        taints=tuple(_taint(ctx, t, f"spec.taints[{i}]") for i, t in enumerate(_list(ctx, spec.get("taints"), "spec.taints"))),
        unschedulable=_bool(ctx, spec.get("unschedulable"), "spec.unschedulable"),
        allocatable=_resources(ctx, alloc_raw, path),
        where=ctx.where,
        raw=body,
    )


def _int_or_percent(ctx: Ctx, value: Any, path: str) -> int | str | None:
    """An IntOrString as PDB validation accepts it: a non-negative integer or "0%".."100%"."""
    if value is None:
        return None
    if isinstance(value, str):
        # IntOrString: a string must be a percentage (ValidatePositiveIntOrPercent); "3" is not 3.
        digits = value[:-1] if value.endswith("%") else ""
        if not digits.isdigit():
            raise ctx.fail(path, f"expected an integer or a percentage like \"50%\", got {describe_value(value)}")
        if int(digits) > 100:
            raise ctx.fail(path, f"must not be greater than 100%, got {value}")
        return value
    number = _int(ctx, value, path)
    if number is not None and number < 0:
        raise ctx.fail(path, f"must not be negative, got {number}")
    return number


def parse_pdb(ctx: Ctx, body: Mapping[str, Any]) -> PodDisruptionBudget:
    namespace, name, _ = _meta(ctx, body, True)
    spec = _fields(ctx, body.get("spec"), "spec", "PodDisruptionBudgetSpec")
    min_available = _int_or_percent(ctx, spec.get("minAvailable"), "spec.minAvailable")
    max_unavailable = _int_or_percent(ctx, spec.get("maxUnavailable"), "spec.maxUnavailable")
    if min_available is not None and max_unavailable is not None:
        raise ctx.fail("spec", "minAvailable and maxUnavailable are mutually exclusive")
    return PodDisruptionBudget(namespace, name, parse_label_selector(ctx, spec.get("selector"), "spec.selector"),
                               min_available, max_unavailable, raw=body)


def parse_workload(ctx: Ctx, kind: str, body: Mapping[str, Any]) -> Workload:
    namespace, name, meta = _meta(ctx, body, True)
    spec = _fields(ctx, body.get("spec"), "spec", WORKLOAD_SPECS[kind])
    start_ordinal = 0
    if kind == "Job":
        parallelism = _int(ctx, spec.get("parallelism"), "spec.parallelism", 1)
        completions = _int(ctx, spec.get("completions"), "spec.completions")
        for field, value in (("spec.parallelism", parallelism), ("spec.completions", completions)):
            if value is not None and value < 0:
                raise ctx.fail(field, f"must not be negative, got {value}")
        assert parallelism is not None
        # The Job controller keeps min(parallelism, completions still to go) pods active; none when suspended.
        status = _map(ctx, body.get("status"), "status")
        succeeded = _int(ctx, status.get("succeeded"), "status.succeeded", 0) or 0
        replicas = parallelism if completions is None else max(0, min(parallelism, completions - succeeded))
        if _bool(ctx, spec.get("suspend"), "spec.suspend"):
            replicas = 0
    elif kind == "DaemonSet":
        replicas = 0
    else:
        replicas = _int(ctx, spec.get("replicas"), "spec.replicas", 1)
        assert replicas is not None
        if replicas < 0:
            raise ctx.fail("spec.replicas", f"must not be negative, got {replicas}")
        if kind == "StatefulSet":
            ordinals = _fields(ctx, spec.get("ordinals"), "spec.ordinals", "StatefulSetOrdinals")
            start_ordinal = _int(ctx, ordinals.get("start"), "spec.ordinals.start", 0) or 0
            if start_ordinal < 0:
                raise ctx.fail("spec.ordinals.start", f"must not be negative, got {start_ordinal}")
    template = _fields(ctx, spec.get("template"), "spec.template", "PodTemplateSpec")
    tctx = ctx.sub("spec.template")
    tmeta = _fields(tctx, template.get("metadata"), "metadata", "ObjectMeta")
    template_pod = parse_pod_spec(tctx, namespace, name, tmeta, template.get("spec"), 0, template)
    selector = parse_label_selector(ctx, spec.get("selector"), "spec.selector")
    # apps/v1 validation: the selector is required and must select the template's own pods.
    if kind != "Job" and ctx.strict:
        if selector is None or selector.empty:
            raise ctx.fail("spec.selector", f"is required for a {kind} and must not be empty")
        if not selector.matches(template_pod.labels):
            raise ctx.fail("spec.template.metadata.labels", "do not match spec.selector: the "
                           f"{kind} would not own its own pods")
    return Workload(kind, namespace, name, _str(ctx, meta.get("uid"), "metadata.uid"), replicas, selector,
                    template_pod, _labels(ctx, meta.get("annotations"), "metadata.annotations", annotations=True),
                    _owner_refs(ctx, meta), ctx.where, body, start_ordinal=start_ordinal)


def parse_pod_group(ctx: Ctx, body: Mapping[str, Any]) -> PodGroup:
    namespace, name, _ = _meta(ctx, body, True)
    spec = _fields(ctx, body.get("spec"), "spec", "PodGroupSpec")
    min_member = _int(ctx, spec.get("minMember"), "spec.minMember", 1)
    assert min_member is not None
    if min_member < 1:
        raise ctx.fail("spec.minMember", f"must be >= 1, got {min_member}")
    return PodGroup(namespace, name, min_member, raw=body)


def parse_priority_class(ctx: Ctx, body: Mapping[str, Any]) -> PriorityClass:
    _, name, _ = _meta(ctx, body, False)
    value = _int(ctx, body.get("value"), "value")
    if value is None:
        raise ctx.fail("value", "is required")
    return PriorityClass(name, value, _bool(ctx, body.get("globalDefault"), "globalDefault"), raw=body,
                         preemption_policy=_preemption_policy(ctx, body.get("preemptionPolicy"), "preemptionPolicy")
                         or "PreemptLowerPriority")


def parse_service(ctx: Ctx, body: Mapping[str, Any]) -> Service:
    namespace, name, _ = _meta(ctx, body, True)
    spec = _fields(ctx, body.get("spec"), "spec", "ServiceSpec")
    return Service(namespace, name, _labels(ctx, spec.get("selector"), "spec.selector"), raw=body)


def parse_namespace(ctx: Ctx, body: Mapping[str, Any]) -> Namespace:
    _, name, meta = _meta(ctx, body, False)
    # SetDefaults_Namespace: every namespace carries its own name as a label.
    labels = {"kubernetes.io/metadata.name": name, **_labels(ctx, meta.get("labels"), "metadata.labels")}
    return Namespace(name, labels, raw=body)


# ------------------------------------------------------------------------------------------------ documents


@dataclass
class Collected:
    """What the documents held, before workloads are expanded into pending pods."""

    nodes: list[Node]
    pods: list[tuple[Pod, bool]]
    namespaces: dict[str, Namespace]
    pdbs: list[PodDisruptionBudget]
    priority_classes: dict[str, PriorityClass]
    workloads: list[Workload]
    pod_groups: list[PodGroup]
    services: list[Service]
    skipped: dict[str, int]
    warnings: list[str]  # unknown fields (typos), in input order


Parser = Callable[[Ctx, Mapping[str, Any]], Any]


def _is_map(value: Any) -> bool:
    """isinstance(value, Mapping), without the ABC's check for a dict (what a decoded manifest holds)."""
    return type(value) is dict or isinstance(value, Mapping)


def _where(doc: Doc, body: Mapping[str, Any], kind: str) -> Where:
    meta = body.get("metadata")
    if not _is_map(meta):
        meta = {}
    name = meta.get("name") if isinstance(meta.get("name"), str) else ""
    if not name and isinstance(meta.get("generateName"), str):
        name = meta["generateName"] + "*"
    ns = meta.get("namespace") if isinstance(meta.get("namespace"), str) else ""
    if not ns and kind in _NAMED_KINDS and kind not in CLUSTER_SCOPED_KINDS:
        ns = "default"
    return Where(doc.file, doc.index, kind, ns, name)


def collect(docs: list[Doc], strict: bool = True, unknown_fields_fatal: bool = False) -> Collected:
    """Parse every document into objects; unknown kinds are counted and skipped.

    strict=False skips the API-validation checks that upstream's own plugin tests break on purpose.
    unknown_fields_fatal makes an unknown field an InputError instead of a warning (`podplan --strict`).
    """
    typos = Typos(unknown_fields_fatal)
    out = Collected([], [], {}, [], {}, [], [], [], {}, typos.warnings)
    _collect_into(docs, out, {}, strict, typos)
    return out


CLUSTER_SCOPED_KINDS = ("Node", "Namespace", "PriorityClass")
_NAMED_KINDS = ("Node", "Namespace", "PriorityClass", "Pod", "PodDisruptionBudget", "PodGroup", "Service") + WORKLOAD_KINDS


# scheduler-plugins' PodGroup API groups (coscheduling); Volcano's or Kueue's PodGroup are other kinds of object.
POD_GROUP_API_GROUPS = ("scheduling.x-k8s.io", "scheduling.sigs.k8s.io")
# kube-scheduler's informer never sees finished pods (status.phase!=Succeeded,status.phase!=Failed).
FINISHED_PHASES = ("Succeeded", "Failed")


# The API group each kind podplan reads is served in (core = ""): `apiVersion: v1` with `kind: Deployment` is an
# object the API server refuses ("no matches for kind"), so it is not read as a Deployment.
KIND_GROUPS = {"Pod": "", "Node": "", "Namespace": "", "Service": "", "Deployment": "apps", "ReplicaSet": "apps",
               "StatefulSet": "apps", "DaemonSet": "apps", "Job": "batch", "PodDisruptionBudget": "policy",
               "PriorityClass": "scheduling.k8s.io"}


def _kind_doubt(kind: str, api_version: Any) -> tuple[str, str] | None:
    """(field, what is wrong) when `kind` looks like a typo of a kind podplan reads, or `apiVersion` is not one
    the kind is served in; None when the object is read (or is simply a kind podplan skips, such as ConfigMap)."""
    if kind in KIND_GROUPS:
        if not isinstance(api_version, str) or not api_version:
            return None  # reported (or defaulted) where apiVersion is read; the kind is what matters here
        group = api_version.split("/", 1)[0] if "/" in api_version else ""
        if group != KIND_GROUPS[kind]:
            right = f"{KIND_GROUPS[kind]}/v1" if KIND_GROUPS[kind] else "v1"
            return "apiVersion", (f"{api_version} has no kind {kind} ({kind} is {right}; the API server would refuse "
                                  "it)")
        return None
    if kind in _NAMED_KINDS or kind == "List":
        return None
    known = (*KIND_GROUPS, "PodGroup", "List")
    same = [k for k in known if k.lower() == kind.lower()]
    close = same or difflib.get_close_matches(kind, known, n=1, cutoff=0.75)
    if close:
        return "kind", f"unknown kind {kind!r} (did you mean {close[0]}?)"
    return None


def _skip_reason(kind: str, body: Mapping[str, Any]) -> str:
    """Why a known kind is skipped anyway ("" to keep it): the label it is counted under in Cluster.skipped."""
    if kind == "Pod":
        status = body.get("status")
        phase = status.get("phase") if _is_map(status) else None
        if phase in FINISHED_PHASES:
            return f"Pod (phase {phase})"
        spec, meta = body.get("spec"), body.get("metadata")
        unbound = not (_is_map(spec) and spec.get("nodeName"))
        if unbound and _is_map(meta) and meta.get("deletionTimestamp") is not None:
            # The scheduler skips a pod being deleted.
            return "Pod (terminating, unbound)"
    if kind == "PodGroup":
        api = body.get("apiVersion")
        if isinstance(api, str) and api.split("/", 1)[0] not in POD_GROUP_API_GROUPS:
            return f"PodGroup ({api})"
    return ""


def _collect_into(docs: list[Doc], out: Collected, seen: dict[tuple[str, str, str], Where], strict: bool,
                  typos: Typos) -> None:
    for doc in docs:
        body = doc.body
        if body is None:
            continue  # an empty document (`---` twice, or a comment-only file)
        if not _is_map(body):
            raise InputError(Where(doc.file, doc.index), doc.item_path,
                             f"expected a mapping with apiVersion, kind and metadata, got {describe_value(body)}")
        kind = body.get("kind")
        if not isinstance(kind, str) or not kind:
            raise InputError(_where(doc, body, ""), ".".join(p for p in (doc.item_path, "kind") if p),
                             "is required (every object needs apiVersion and kind)" if kind in (None, "")
                             else f"expected a string, got {describe_value(kind)}")
        ctx = Ctx(_where(doc, body, kind), doc.item_path, strict, typos)
        if kind == "List":
            _fields(ctx, body, "", "List")
            prefix = doc.item_path + "." if doc.item_path else ""
            items = _list(ctx, body.get("items"), "items")
            _collect_into([Doc(item, doc.file, doc.index, f"{prefix}items[{i}]") for i, item in enumerate(items)],
                          out, seen, strict, typos)
            continue
        doubt = _kind_doubt(kind, body.get("apiVersion"))
        if doubt:
            at = ".".join(p for p in (doc.item_path, doubt[0]) if p)
            if typos.fatal:
                raise InputError(ctx.where, at, doubt[1])
            typos.warnings.append(f"{ctx.where.describe()}: {at}: {doubt[1]}; the object is skipped")
            out.skipped[kind] = out.skipped.get(kind, 0) + 1
            continue
        skip = _skip_reason(kind, body) if kind in _NAMED_KINDS else kind
        if skip:
            out.skipped[skip] = out.skipped.get(skip, 0) + 1
            continue
        # Checked once here: _meta runs again inside each parser.
        _fields(ctx, body, "", "PriorityClass" if kind == "PriorityClass" else "object")
        _fields(ctx, body.get("metadata"), "metadata", "ObjectMeta")
        namespace, name, _ = _meta(ctx, body, kind not in CLUSTER_SCOPED_KINDS)
        ident = (kind, namespace, name)
        if ident in seen:
            first = seen[ident]
            raise ctx.fail("metadata.name", f"{kind} {namespace + '/' if namespace else ''}{name} is defined twice "
                                            f"(first in {first.file}[{first.doc}])")
        seen[ident] = ctx.where
        if kind == "Node":
            out.nodes.append(parse_node(ctx, body))
        elif kind == "Pod":
            out.pods.append(parse_pod(ctx, body, len(out.pods)))
        elif kind == "Namespace":
            ns = parse_namespace(ctx, body)
            out.namespaces[ns.name] = ns
        elif kind == "PodDisruptionBudget":
            out.pdbs.append(parse_pdb(ctx, body))
        elif kind == "PriorityClass":
            pc = parse_priority_class(ctx, body)
            out.priority_classes[pc.name] = pc
        elif kind in WORKLOAD_KINDS:
            out.workloads.append(parse_workload(ctx, kind, body))
        elif kind == "PodGroup":
            out.pod_groups.append(parse_pod_group(ctx, body))
        elif kind == "Service":
            out.services.append(parse_service(ctx, body))
