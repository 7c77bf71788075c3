"""Label selectors and node selectors, matched as k8s.io/apimachinery/pkg/labels and
k8s.io/component-helpers/scheduling/corev1/nodeaffinity match them.

`None` and an empty selector differ, as upstream: a nil LabelSelector matches nothing, an empty one
(`{}`) matches everything.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

LABEL_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")
NODE_OPERATORS = LABEL_OPERATORS + ("Gt", "Lt")


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
            if self.key not in labels:
                return False
            try:
                have = int(labels[self.key])
            except ValueError:
                return False
            want = int(self.values[0])
            return have > want if op == "Gt" else have < want
        raise ValueError(f"unknown operator {op}")


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

    A term with neither matches no node (upstream: "an empty term matches no objects").
    """

    match_expressions: tuple[Requirement, ...] = ()
    match_fields: tuple[Requirement, ...] = ()

    def matches(self, node_name: str, labels: Mapping[str, str]) -> bool:
        if not self.match_expressions and not self.match_fields:
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
