"""PreFilter and Filter of PodTopologySpread: DoNotSchedule constraints.

Reproduces kube-scheduler pkg/scheduler/framework/plugins/podtopologyspread/filtering.go
(calPreFilterState, preFilterState.minMatchNum, Filter) with per-constraint match counts (upstream indexes
TpValueToMatchNum by constraint, so two constraints on one key with different selectors stay apart).

Knowing differences: none in the verdicts. Upstream keeps two "critical paths" so preemption can update the
minimum incrementally (AddPod/RemovePod); podplan recomputes the precompute instead, so it keeps the minimum
itself. A pod with no DoNotSchedule constraint gets None from pre_filter (upstream: Skip) and passes every node.
"""
from __future__ import annotations

from dataclasses import dataclass

from models.objects import Pod
from optimizer.framework import Reason
from optimizer.state import ClusterState, NodeInfo

from .common import NAME, SpreadConstraint, count_on_node, eligibility_test, filter_constraints, global_min, self_match

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


def pre_filter(pod: Pod, state: ClusterState) -> PreFilterState | None:
    """calPreFilterState over every node of the state; None when the pod has no hard constraint (Skip)."""
    constraints = filter_constraints(pod, state)
    if not constraints:
        return None
    keys = tuple(dict.fromkeys(c.topology_key for c in constraints))
    counts: tuple[dict[str, int], ...] = tuple({} for _ in constraints)
    plan = [(c.topology_key, c.selector, eligibility_test(c, pod), tp) for c, tp in zip(constraints, counts)]
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
