"""The plugin contract every rule module fulfils, after kube-scheduler's framework
(pkg/scheduler/framework/interface.go): a cheap PreFilter precompute per pod, a per-node Filter
verdict with upstream's reason strings, and PreScore/Score/NormalizeScore.

Each rule package in optimizer/ exports `PLUGIN: Plugin`. The greedy simulator, the verifier and
explain call them through `run_filters` / `run_scores`; the CP-SAT encodings live beside them.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ..models.objects import Pod

from .state import ClusterState, NodeInfo

MAX_NODE_SCORE = 100


@dataclass(frozen=True)
class Reason:
    """One failing Filter verdict. `unresolvable` = UnschedulableAndUnresolvable: preemption cannot help."""

    plugin: str
    reason: str
    unresolvable: bool = False


PreFilterFn = Callable[[Pod, ClusterState], Any]
FilterFn = Callable[[Pod, Any, NodeInfo, ClusterState], list[Reason]]
PreScoreFn = Callable[[Pod, ClusterState, Sequence[NodeInfo]], Any]
ScoreFn = Callable[[Pod, Any, NodeInfo, ClusterState], int]
NormalizeFn = Callable[[dict[str, int], Any], dict[str, int]]


@dataclass(frozen=True)
class Plugin:
    name: str
    pre_filter: PreFilterFn | None = None
    filter: FilterFn | None = None
    pre_score: PreScoreFn | None = None
    score: ScoreFn | None = None
    normalize: NormalizeFn | None = None
    weight: int = 0  # default score weight in kube-scheduler's default profile


@dataclass(frozen=True)
class NodeVerdict:
    """Every Filter verdict of one node for one pod: ALL failing plugins, in filter order."""

    node: str
    reasons: tuple[Reason, ...]

    @property
    def feasible(self) -> bool:
        return not self.reasons

    def first_failure(self) -> tuple[Reason, ...]:
        """What kube-scheduler reports: it stops at the first plugin that rejects the node."""
        if not self.reasons:
            return ()
        first = self.reasons[0].plugin
        return tuple(r for r in self.reasons if r.plugin == first)


def run_filters(pod: Pod, state: ClusterState, plugins: Sequence[Plugin],
                nodes: Sequence[NodeInfo] | None = None) -> list[NodeVerdict]:
    """PreFilter once per plugin, then every plugin's Filter on every node (no early exit, for explain)."""
    active = [(p, p.pre_filter(pod, state) if p.pre_filter else None) for p in plugins if p.filter]
    verdicts = []
    for info in nodes if nodes is not None else state.nodes.values():
        reasons: list[Reason] = []
        for plugin, pre in active:
            assert plugin.filter is not None
            reasons.extend(plugin.filter(pod, pre, info, state))
        verdicts.append(NodeVerdict(info.name, tuple(reasons)))
    return verdicts


def run_scores(pod: Pod, state: ClusterState, candidates: Sequence[NodeInfo],
               plugins: Sequence[Plugin]) -> dict[str, dict[str, int]]:
    """Each score plugin's normalized 0..100 scores over `candidates` (the nodes that passed filtering)."""
    out: dict[str, dict[str, int]] = {}
    for plugin in plugins:
        if plugin.score is None:
            continue
        pre = plugin.pre_score(pod, state, candidates) if plugin.pre_score else None
        raw = {info.name: plugin.score(pod, pre, info, state) for info in candidates}
        out[plugin.name] = plugin.normalize(raw, pre) if plugin.normalize else raw
    return out


def weighted_total(scores: dict[str, dict[str, int]], plugins: Sequence[Plugin]) -> dict[str, int]:
    """The node scores kube-scheduler ranks by: Σ plugin weight × normalized score."""
    weights = {p.name: p.weight for p in plugins}
    total: dict[str, int] = {}
    for name, per_node in scores.items():
        for node, s in per_node.items():
            total[node] = total.get(node, 0) + weights.get(name, 0) * s
    return total


def fit_error_message(num_nodes: int, verdicts: Sequence[NodeVerdict]) -> str:
    """FitError.Error(): `0/N nodes are available: <count> <reason>, ...` sorted as strings, counting each
    node's first rejecting plugin only, as the scheduling cycle stops there."""
    counts: dict[str, int] = {}
    for v in verdicts:
        for r in v.first_failure():
            counts[r.reason] = counts.get(r.reason, 0) + 1
    parts = sorted(f"{n} {reason}" for reason, n in counts.items())
    return f"0/{num_nodes} nodes are available: {', '.join(parts)}."
