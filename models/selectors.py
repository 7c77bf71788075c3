"""Label selectors and node selectors, matched as k8s.io/apimachinery/pkg/labels and
k8s.io/component-helpers/scheduling/corev1/nodeaffinity match them.

`None` and an empty selector differ, as upstream: a nil LabelSelector matches nothing, an empty one
(`{}`) matches everything.

A nodeSelectorTerm is converted to a labels.Selector lazily upstream (nodeaffinity.LazyErrorNodeSelector):
a term holding a requirement labels.NewRequirement rejects (a key that is not a qualified name, a value that
is not a label value such as "invalid value: ___@#$%^", a Gt/Lt value that is not an int64) matches no node,
and its error is only reported, never raised. The API server accepts such values (it checks keys, not
values), so models.parse accepts them and NodeSelectorTerm.matches answers False for every node; the other
terms of the same selector still match. `NodeSelectorTerm.parse_errors` says why.

Knowing difference: an unparsable *preferred* term makes upstream's NodeAffinity PreScore fail
(NewPreferredSchedulingTerms returns the error), so kube-scheduler does not schedule such a pod when more than
one node is feasible; here the term only adds no weight.
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property

LABEL_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")
NODE_OPERATORS = LABEL_OPERATORS + ("Gt", "Lt")
FIELD_OPERATORS = ("In", "NotIn")  # nodeSelectorRequirementsAsFieldSelector's validFieldSelectorOperators

# k8s.io/apimachinery/pkg/util/validation: qualified names, label values, DNS-1123 subdomains.
_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")
_DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_INT64 = re.compile(r"^[+-]?[0-9]+$")
_INT64_MIN, _INT64_MAX = -(2 ** 63), 2 ** 63 - 1


def parse_int64(text: str) -> int | None:
    """strconv.ParseInt(text, 10, 64): optional sign, decimal digits only, in int64 range; None if not.

    Python's int() is laxer (" 5", "1_000"), which would let a node label match that upstream ignores.
    """
    if not _INT64.match(text):
        return None
    value = int(text)
    return value if _INT64_MIN <= value <= _INT64_MAX else None


def is_qualified_name(key: str) -> bool:
    """validation.IsQualifiedName: [prefix/]name, name <= 63 chars, prefix a DNS-1123 subdomain <= 253."""
    parts = key.split("/")
    if len(parts) == 2:
        prefix, name = parts
        if not prefix or len(prefix) > 253 or not _DNS1123_SUBDOMAIN.match(prefix):
            return False
    elif len(parts) == 1:
        name = parts[0]
    else:
        return False
    return 0 < len(name) <= 63 and bool(_NAME.match(name))


def is_label_value(value: str) -> bool:
    """validation.IsValidLabelValue: empty, or <= 63 alphanumerics with -_. inside."""
    return len(value) <= 63 and bool(_LABEL_VALUE.match(value))


@dataclass(frozen=True)
class Requirement:
    """One matchExpressions entry: key, operator, values."""

    key: str
    operator: str
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        op = self.operator
        if op == "In":
            return self.key in labels and labels[self.key] in self.values
        if op == "NotIn":
            return self.key not in labels or labels[self.key] not in self.values
        if op == "Exists":
            return self.key in labels
        if op == "DoesNotExist":
            return self.key not in labels
        if op in ("Gt", "Lt"):
            # Upstream parses both sides as int64; a label that is not an integer never matches.
            have = parse_int64(labels[self.key]) if self.key in labels else None
            want = parse_int64(self.values[0]) if len(self.values) == 1 else None
            if have is None or want is None:
                return False
            return have > want if op == "Gt" else have < want
        raise ValueError(f"unknown operator {op}")


def label_requirement_error(r: Requirement) -> str:
    """Why labels.NewRequirement rejects a nodeSelectorTerm's matchExpressions entry; "" if it does not."""
    if not is_qualified_name(r.key):
        return f"key {r.key!r}: not a valid label key (qualified name)"
    if r.operator in ("In", "NotIn") and not r.values:
        return "values: for 'in', 'notin' operators, values set can't be empty"
    if r.operator in ("Exists", "DoesNotExist") and r.values:
        return "values: values set must be empty for exists and does not exist"
    if r.operator in ("Gt", "Lt"):
        if len(r.values) != 1:
            return "values: for 'Gt', 'Lt' operators, exactly one value is required"
        if parse_int64(r.values[0]) is None:
            return f"values[0] {r.values[0]!r}: for 'Gt', 'Lt' operators, the value must be an integer"
    if r.operator not in NODE_OPERATORS:
        return f"operator {r.operator!r}: not supported"
    for i, v in enumerate(r.values):
        if not is_label_value(v):
            return f"values[{i}] {v!r}: not a valid label value"
    return ""


def field_requirement_error(r: Requirement) -> str:
    """Why nodeSelectorRequirementsAsFieldSelector rejects a matchFields entry; "" if it does not."""
    if r.operator not in FIELD_OPERATORS:
        return f"operator {r.operator!r}: not supported (supported values: In, NotIn)"
    if len(r.values) != 1:
        return "values: must have one element"
    return ""


@dataclass(frozen=True)
class LabelSelector:
    """metav1.LabelSelector: matchLabels AND matchExpressions. Empty matches everything."""

    match_labels: tuple[tuple[str, str], ...] = ()
    match_expressions: tuple[Requirement, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        for k, v in self.match_labels:
            if labels.get(k) != v:
                return False
        return all(r.matches(labels) for r in self.match_expressions)

    @property
    def empty(self) -> bool:
        return not self.match_labels and not self.match_expressions

    def with_requirements(self, extra: tuple[Requirement, ...]) -> "LabelSelector":
        return LabelSelector(self.match_labels, self.match_expressions + extra)


def selector_matches(selector: LabelSelector | None, labels: Mapping[str, str]) -> bool:
    """A nil selector matches nothing; an empty one matches everything (metav1.LabelSelectorAsSelector)."""
    return selector is not None and selector.matches(labels)


@dataclass(frozen=True)
class NodeSelectorTerm:
    """One nodeSelectorTerm: matchExpressions on labels AND matchFields on metadata.name.

    A term with neither matches no node (upstream: "an empty term matches no objects"); nor does a term
    with a requirement upstream fails to parse (see the module docstring).
    """

    match_expressions: tuple[Requirement, ...] = ()
    match_fields: tuple[Requirement, ...] = ()

    @cached_property
    def parse_errors(self) -> tuple[str, ...]:
        """newNodeSelectorTerm's parse errors, "matchExpressions[i].<what>" each; () for a usable term."""
        out = [f"matchExpressions[{i}].{e}" for i, r in enumerate(self.match_expressions)
               if (e := label_requirement_error(r))]
        out += [f"matchFields[{i}].{e}" for i, r in enumerate(self.match_fields) if (e := field_requirement_error(r))]
        return tuple(out)

    def matches(self, node_name: str, labels: Mapping[str, str]) -> bool:
        if not self.match_expressions and not self.match_fields:
            return False
        if self.parse_errors:
            return False
        if not all(r.matches(labels) for r in self.match_expressions):
            return False
        fields = {"metadata.name": node_name}
        return all(r.matches(fields) for r in self.match_fields)


@dataclass(frozen=True)
class NodeSelector:
    """requiredDuringScheduling node affinity: the terms are ORed."""

    terms: tuple[NodeSelectorTerm, ...] = ()

    def matches(self, node_name: str, labels: Mapping[str, str]) -> bool:
        return any(t.matches(node_name, labels) for t in self.terms)


@dataclass(frozen=True)
class PreferredSchedulingTerm:
    weight: int
    preference: NodeSelectorTerm = field(default_factory=NodeSelectorTerm)
