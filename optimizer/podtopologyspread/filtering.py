"""PreFilter and Filter of PodTopologySpread: DoNotSchedule constraints.

Reproduces kube-scheduler pkg/scheduler/framework/plugins/podtopologyspread/filtering.go
(calPreFilterState, preFilterState.minMatchNum, Filter) with per-constraint match counts (upstream indexes
TpValueToMatchNum by constraint, so two constraints on one key with different selectors stay apart).

Knowing differences: none in the verdicts. Upstream keeps two "critical paths" so preemption can update the
minimum incrementally (AddPod/RemovePod); podplan keeps the counts per (namespace, constraints, inclusion
inputs) in the state's memo, brings them up to date from the state's change journal, and recomputes the
minimum itself. A pod with no DoNotSchedule constraint gets None from pre_filter (upstream: Skip) and passes every node.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...models.objects import Pod
from ..framework import Reason
from ..state import ClusterState, NodeInfo

from .common import (NAME, SYSTEM_DEFAULTS, Defaults, SpreadConstraint, count_on_node, counts_toward, eligibility_test, filter_constraints,
                     global_min, self_match)

ERR_REASON_CONSTRAINTS_NOT_MATCH = "node(s) didn't match pod topology spread constraints"
ERR_REASON_NODE_LABEL_NOT_MATCH = ERR_REASON_CONSTRAINTS_NOT_MATCH + " (missing required label)"


@dataclass(frozen=True)
class PreFilterState:
    """preFilterState: for each hard constraint, matching pods per eligible domain and the global minimum."""

    constraints: tuple[SpreadConstraint, ...]
    tp_value_to_match_num: tuple[dict[str, int], ...]
    min_match_num: tuple[int, ...]  # minMatchNum with minDomains applied
    # Per constraint, the most matching pods a domain may hold: maxSkew + minimum - (1 if the pod self-matches).
    limits: tuple[int, ...]


_MEMO = "PodTopologySpread.pre_filter"


def _count_all(pod: Pod, constraints: tuple[SpreadConstraint, ...], keys: tuple[str, ...],
               eligibles: tuple[Any, ...], state: ClusterState) -> tuple[dict[str, int], ...]:
    """TpValueToMatchNum per constraint over every node of the state."""
    counts: tuple[dict[str, int], ...] = tuple({} for _ in constraints)
    plan = [(c.topology_key, c.selector, eligible, tp) for c, eligible, tp in zip(constraints, eligibles, counts)]
    namespace = pod.namespace
    for info in state.nodes.values():
        node = info.node
        labels = node.labels
        if not all(k in labels for k in keys):
            continue
        for key, selector, eligible, tp in plan:
            if eligible is not None and not eligible(node):
                continue
            value = labels[key]
            tp[value] = tp.get(value, 0) + count_on_node(info, selector, namespace)
    return counts


def _replay(pod: Pod, constraints: tuple[SpreadConstraint, ...], keys: tuple[str, ...], eligibles: tuple[Any, ...],
            counts: tuple[dict[str, int], ...], changes: list[tuple[Pod, str, int]], state: ClusterState) -> None:
    """Bring counts made earlier up to date with the pods added (+1) and removed (-1) since."""
    for other, node_name, delta in changes:
        if other.namespace != pod.namespace or other.terminating:
            continue  # counts_toward would say no for every constraint
        node = state.nodes[node_name].node
        labels = node.labels
        if not all(k in labels for k in keys):
            continue
        for c, eligible, tp in zip(constraints, eligibles, counts):
            if (eligible is None or eligible(node)) and counts_toward(c.selector, pod.namespace, other):
                value = labels[c.topology_key]
                tp[value] = tp.get(value, 0) + delta


def pre_filter(pod: Pod, state: ClusterState, defaults: Defaults = SYSTEM_DEFAULTS) -> PreFilterState | None:
    """calPreFilterState over every node of the state; None when the pod has no hard constraint (Skip).

    The counts depend on the pod only through its namespace, constraints and inclusion inputs: they are kept
    per such key in state.memo and brought up to date from the state's change journal, so the replicas of a
    workload do not recount every node (a recount happens when more pods changed than there are nodes)."""
    constraints = filter_constraints(pod, state, defaults)
    if not constraints:
        return None
    keys = tuple(dict.fromkeys(c.topology_key for c in constraints))
    eligibles = tuple(eligibility_test(c, pod) for c in constraints)
    memo_key = (_MEMO, pod.namespace, constraints, tuple(sorted(pod.node_selector.items())),
                pod.affinity.node_required, pod.tolerations)
    entry = state.memo.get(memo_key)
    changes = state.changes_since(entry[0]) if entry is not None else None
    if changes is None or len(changes) > len(state.nodes):
        counts = _count_all(pod, constraints, keys, eligibles, state)
    else:
        counts = entry[1]
        _replay(pod, constraints, keys, eligibles, counts, changes, state)
    state.memo[memo_key] = (state.version, counts)
    counts = tuple(dict(tp) for tp in counts)  # the memo's own dicts stay private
    minimums = tuple(global_min(tp, c.min_domains) for c, tp in zip(constraints, counts))
    limits = tuple(c.max_skew + m - int(self_match(c, pod)) for c, m in zip(constraints, minimums))
    return PreFilterState(constraints, counts, minimums, limits)


def filter_node(pod: Pod, pre: PreFilterState | None, node_info: NodeInfo, state: ClusterState) -> list[Reason]:
    """Filter: the first constraint the node breaks decides, in the pod's constraint order.

    Missing topology key: UnschedulableAndUnresolvable. Skew = matches in the node's domain + (1 if the pod
    matches its own selector) - global minimum; above maxSkew: Unschedulable (preemption may help).
    """
    if pre is None:
        return []
    labels = node_info.node.labels
    for c, tp, limit in zip(pre.constraints, pre.tp_value_to_match_num, pre.limits):
        value = labels.get(c.topology_key)
        if value is None:
            return [Reason(NAME, ERR_REASON_NODE_LABEL_NOT_MATCH, unresolvable=True)]
        if tp.get(value, 0) > limit:
            return [Reason(NAME, ERR_REASON_CONSTRAINTS_NOT_MATCH)]
    return []
