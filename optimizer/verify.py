"""The verifier: judges a final state exactly as kube-scheduler's Filters would, pod by pod.

Every pod of the final state (existing pods and newly placed ones) is removed from the state, run through
every Filter plugin on its node, and put back: as if it were the last pod scheduled. A violation by an
existing pod that already held before anything was placed is reported as pre-existing and does not fail
the plan. It shares nothing with the CP-SAT encodings beyond the models/ layer and the rules' predicates.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from models.objects import Cluster, Pod

from .framework import Plugin, Reason
from .objective import Multipliers, preference_terms
from .registry import FILTER_PLUGINS
from .state import ClusterState


@dataclass(frozen=True)
class Violation:
    pod: str
    node: str
    plugin: str
    reason: str
    preexisting: bool = False


@dataclass(frozen=True)
class Report:
    violations: tuple[Violation, ...]
    terms: dict[str, int] = field(default_factory=dict)
    placed: int = 0
    placed_by_priority: dict[int, int] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not any(not v.preexisting for v in self.violations)

    @property
    def preference(self) -> int:
        return sum(self.terms.values())


def judge(pod: Pod, node_name: str, state: ClusterState, plugins: Sequence[Plugin] = FILTER_PLUGINS) -> list[Reason]:
    """All Filter verdicts for `pod` on `node_name`, judged with the pod removed from `state`."""
    state.remove(pod)
    try:
        info = state.nodes[node_name]
        reasons: list[Reason] = []
        for plugin in plugins:
            if plugin.filter is None:
                continue
            pre = plugin.pre_filter(pod, state) if plugin.pre_filter else None
            reasons.extend(plugin.filter(pod, pre, info, state))
        return reasons
    finally:
        state.add(pod, node_name)


def final_state(cluster: Cluster, placements: Mapping[str, str]) -> ClusterState:
    """Existing pods where they are plus every placed pending pod on its node."""
    pending = {p.key: p for p in cluster.pending}
    placed = [(pending[k], n) for k, n in placements.items()]
    return ClusterState.from_cluster(cluster, [(p, p.node_name) for p in cluster.pods] + placed)


def verify(cluster: Cluster, placements: Mapping[str, str], multipliers: Multipliers | None = None) -> Report:
    """Violations of the final state and its preference terms (see optimizer.objective)."""
    pending = {p.key: p for p in cluster.pending}
    unknown = [k for k in placements if k not in pending]
    violations: list[Violation] = []
    for key in unknown:
        violations.append(Violation(key, placements[key], "Plan", "pod is not a pending pod of the input"))
    nodes = {n.name for n in cluster.nodes}
    good = {k: n for k, n in placements.items() if k in pending and n in nodes}
    for key, node in placements.items():
        if key in pending and node not in nodes:
            violations.append(Violation(key, node, "Plan", "node is not in the input"))
    state = final_state(cluster, good)
    before: ClusterState | None = None
    for pod, info in list(state.all_pods()):
        reasons = judge(pod, info.name, state)
        if not reasons:
            continue
        pre_plugins: set[str] = set()
        if pod.key not in good:
            # An existing pod: was it already in violation before anything was placed?
            before = before or ClusterState.from_cluster(cluster)
            pre_plugins = {r.plugin for r in judge(pod, info.name, before)}
        violations.extend(Violation(pod.key, info.name, r.plugin, r.reason, r.plugin in pre_plugins) for r in reasons)
    by_priority: dict[int, int] = {}
    for key in good:
        prio = pending[key].priority
        by_priority[prio] = by_priority.get(prio, 0) + 1
    terms = preference_terms(cluster, state, multipliers or Multipliers())
    return Report(tuple(violations), terms, len(good), dict(sorted(by_priority.items(), reverse=True)))


def verify_state(cluster: Cluster, multipliers: Multipliers | None = None) -> Report:
    """`podplan verify`: the input IS the final state (pods with spec.nodeName); every violation counts."""
    state = ClusterState.from_cluster(cluster)
    violations = [Violation(pod.key, info.name, r.plugin, r.reason)
                  for pod, info in list(state.all_pods()) for r in judge(pod, info.name, state)]
    terms = preference_terms(cluster, state, multipliers or Multipliers())
    return Report(tuple(violations), terms, 0, {})
