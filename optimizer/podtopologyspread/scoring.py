"""PreScore, Score and NormalizeScore of PodTopologySpread: ScheduleAnyway constraints (system defaults included).

Reproduces kube-scheduler pkg/scheduler/framework/plugins/podtopologyspread/scoring.go:
- PreScore: domains are the topology values of the candidate (feasible) nodes; a candidate lacking any key is
  ignored (scores 0) unless the constraints are the system defaults, where nodes need not carry every key
  (a missing key then reads as the value ""). Matching pods are counted on ALL nodes whose value is one of
  those domains and that pass the inclusion policies. kubernetes.io/hostname is counted per node in Score.
- weight per constraint = ln(number of domains + 2); hostname: ln(candidates not ignored + 2).
- Score = Go math.Round(sum of count * weight + (maxSkew - 1)) over the constraints whose key the node has.
- NormalizeScore = 100 * (max + min - s) / max in int64 (truncating) over the non-ignored candidates,
  100 for all when max is 0, 0 for ignored nodes.

Knowing differences: a pod with no soft constraint (upstream: PreScore returns Skip and the plugin is not run)
gets a PreScoreState with no constraints here, and Score/NormalizeScore give 0 on every node.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from ...models.objects import Pod
from ..framework import MAX_NODE_SCORE
from ..state import ClusterState, NodeInfo

from .common import HOSTNAME_KEY, SYSTEM_DEFAULTS, Defaults, SpreadConstraint, count_on_node, eligibility_test, has_all_keys, score_constraints

_MAX_INT64 = 2**63 - 1


@dataclass(frozen=True)
class PreScoreState:
    """preScoreState: soft constraints, ignored candidates, pods per domain and per-constraint weights."""

    constraints: tuple[SpreadConstraint, ...] = ()
    ignored_nodes: frozenset[str] = frozenset()
    topology_value_to_pod_counts: tuple[dict[str, int], ...] = ()
    topology_normalizing_weight: tuple[float, ...] = ()
    skipped: bool = field(default=True)


SKIPPED = PreScoreState()


def topology_normalizing_weight(size: int) -> float:
    return math.log(size + 2)


def score_for_count(count: int, max_skew: int, weight: float) -> float:
    return float(count) * weight + float(max_skew - 1)


def go_round(x: float) -> int:
    """Go math.Round: half away from zero (Python's round() is half to even)."""
    floor = math.floor(x)
    return int(floor) + (1 if x - floor >= 0.5 else 0) if x >= 0 else -go_round(-x)


def pre_score(pod: Pod, state: ClusterState, feasible: Sequence[NodeInfo],
              defaults: Defaults = SYSTEM_DEFAULTS) -> PreScoreState:
    """initPreScoreState + PreScore: domains and weights from the candidates, pod counts from every node."""
    all_nodes = state.nodes.values()
    if not all_nodes:
        return SKIPPED
    constraints = score_constraints(pod, state, defaults)
    if not constraints:
        return SKIPPED
    # The pod's own or configured (List) constraints demand every key; the system defaults let zone-less nodes
    # spread by hostname (requireAllTopologies).
    require_all = bool(pod.spread_constraints) or not defaults.system
    ignored: set[str] = set()
    counts: tuple[dict[str, int], ...] = tuple({} for _ in constraints)
    for info in feasible:
        labels = info.node.labels
        if require_all and not has_all_keys(labels, constraints):
            ignored.add(info.name)
            continue
        for c, tp_counts in zip(constraints, counts):
            if c.topology_key != HOSTNAME_KEY:
                tp_counts.setdefault(labels.get(c.topology_key, ""), 0)
    weights = tuple(
        topology_normalizing_weight(len(feasible) - len(ignored) if c.topology_key == HOSTNAME_KEY else len(tp))
        for c, tp in zip(constraints, counts)
    )
    plan = [(c.topology_key, c.selector, eligibility_test(c, pod), tp)
            for c, tp in zip(constraints, counts) if c.topology_key != HOSTNAME_KEY]
    namespace = pod.namespace
    for info in all_nodes:
        node = info.node
        labels = node.labels
        if require_all and not has_all_keys(labels, constraints):
            continue
        for key, selector, eligible, tp in plan:
            value = labels.get(key, "")
            # Only the candidates' domains are counted (hostname is counted per node in Score).
            if value not in tp or (eligible is not None and not eligible(node)):
                continue
            tp[value] += count_on_node(info, selector, namespace)
    return PreScoreState(constraints, frozenset(ignored), counts, weights, skipped=False)


def score_node(pod: Pod, pre: PreScoreState, node_info: NodeInfo, state: ClusterState) -> int:
    """The raw score: high means crowded (NormalizeScore turns it around)."""
    if pre.skipped or node_info.name in pre.ignored_nodes:
        return 0
    labels = node_info.node.labels
    total = 0.0
    for i, c in enumerate(pre.constraints):
        value = labels.get(c.topology_key)
        if value is None:
            continue
        if c.topology_key == HOSTNAME_KEY:
            count = count_on_node(node_info, c.selector, pod.namespace)
        else:
            count = pre.topology_value_to_pod_counts[i].get(value, 0)
        total += score_for_count(count, c.max_skew, pre.topology_normalizing_weight[i])
    return go_round(total)


def normalize(scores: dict[str, int], pre: PreScoreState) -> dict[str, int]:
    if pre.skipped:
        return {name: 0 for name in scores}
    lowest, highest = _MAX_INT64, 0
    for name, s in scores.items():
        if name in pre.ignored_nodes:
            continue
        lowest = min(lowest, s)
        highest = max(highest, s)
    out: dict[str, int] = {}
    for name, s in scores.items():
        if name in pre.ignored_nodes:
            out[name] = 0
        elif highest == 0:
            out[name] = MAX_NODE_SCORE
        else:
            # Go int64 division truncates toward zero; the numerator is never negative here.
            out[name] = MAX_NODE_SCORE * (highest + lowest - s) // highest
    return out
