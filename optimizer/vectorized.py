"""The vectorized kube-scheduler simulator: greedy.Scheduler's scheduling cycle computed over all nodes at once.

Same results as the plain loop (property-tested against it), so greedy.simulate uses it by default:
- Filter: every plugin's vectorized form (optimizer/<rule>/vector.py) gives a bool per node; their AND is the
  feasibility mask. Each mask equals the plain predicate's verdict, so a node's first rejecting plugin is the
  first mask that is False there.
- findNodesThatFitPod: the first numFeasibleNodesToFind feasible nodes in rotation order from
  nextStartNodeIndex; the rejected nodes before the last one found count as processed, exactly as the plain
  loop's arithmetic. The placed-pod guard (greedy.PlacedPodsGuard) is asked only about those candidates, in
  that order, as the plain loop does after the filters pass.
- Score: each plugin's normalized score over the candidates (in rotation order) as arrays, weighted and summed;
  the top is chosen as greedy._select_host does (same random.Random calls in the same order).
- A pod that fits nowhere: FitError's message from each node's first rejecting plugin, its reasons asked of
  that plugin only for those pods.
The arrays follow the ClusterState through its change journal: whatever added or removed pods since the
previous cycle (this scheduler's binds, a caller's removals) is replayed into them first.
"""
from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..models.objects import Pod

from .framework import NodeVerdict, Plugin, Reason, fit_error_message
from .greedy import (ERR_REASON_BREAKS_AFFINITY, ERR_REASON_BREAKS_SPREAD, GUARD_AFFINITY, GUARD_SPREAD,
                     PlacedPodsGuard, num_feasible_nodes_to_find)
from .interpodaffinity import vector as interpodaffinity_vector
from .nodeaffinity import vector as nodeaffinity_vector
from .nodearrays import NodeArrays, selector_hint
from .nodename import vector as nodename_vector
from .nodeports import vector as nodeports_vector
from .noderesources import vector as noderesources_vector
from .nodeunschedulable import vector as nodeunschedulable_vector
from .podtopologyspread import counts_toward
from .podtopologyspread import vector as podtopologyspread_vector
from .registry import FILTER_PLUGINS, SCORE_PLUGINS
from .state import ClusterState, NodeInfo
from .tainttoleration import vector as tainttoleration_vector

# Plugin name -> its vectorized form's factory (until each Plugin record carries it).
VECTOR_FACTORIES: dict[str, Callable[[ClusterState, NodeArrays], Any]] = {
    "NodeUnschedulable": nodeunschedulable_vector.new,
    "NodeName": nodename_vector.new,
    "TaintToleration": tainttoleration_vector.new,
    "NodeAffinity": nodeaffinity_vector.new,
    "NodePorts": nodeports_vector.new,
    "NodeResourcesFit": noderesources_vector.new,
    "NodeResourcesBalancedAllocation": noderesources_vector.new_balanced,
    "PodTopologySpread": podtopologyspread_vector.new,
    "InterPodAffinity": interpodaffinity_vector.new,
}

_BREAKS_SPREAD = (Reason(GUARD_SPREAD, ERR_REASON_BREAKS_SPREAD),)
_BREAKS_AFFINITY = (Reason(GUARD_AFFINITY, ERR_REASON_BREAKS_AFFINITY),)


class IndexedGuard(PlacedPodsGuard):
    """greedy.PlacedPodsGuard with its spread groups indexed by (namespace, a label pair their selector
    requires): a pod is checked against, and counted in, only the groups whose selector it may match, instead
    of every group (thousands on clusters with many workloads, for every pod). Same verdicts."""

    def __init__(self, state: ClusterState) -> None:
        self._indexed = -1
        self._by_hint: dict[tuple[str, tuple[str, str] | None], list[Any]] = {}
        super().__init__(state)

    def candidates(self, pod: Pod) -> list[Any]:
        """The spread groups whose selector `pod` may count toward (a superset: counts_toward decides)."""
        if self._indexed != len(self.groups):  # groups are only ever added
            self._by_hint = {}
            for g in self.groups.values():
                selector = g.constraint.selector
                if selector is not None and not selector.empty:  # those count no pod
                    self._by_hint.setdefault((g.namespace, selector_hint(selector)), []).append(g)
            self._indexed = len(self.groups)
        by_hint, ns = self._by_hint, pod.namespace
        found = list(by_hint.get((ns, None), ()))
        for pair in pod.labels.items():
            found += by_hint.get((ns, pair), ())
        return found

    def bound(self, pod: Pod, info: NodeInfo, affinity_pre: Any = None) -> None:
        """PlacedPodsGuard.bound, visiting only the candidate groups."""
        name, labels = info.name, info.node.labels
        self.index.add(pod, info)
        for g in self.candidates(pod):
            domain = g.domain_of.get(name)
            if domain is not None and counts_toward(g.constraint.selector, g.namespace, pod):
                g.counts[domain] += 1
        for key in [k for k, q in self.lonely.items()
                    if all(t.matches(pod, None) for t in q.terms) and any(t.topology_key in labels for t in q.terms)]:
            del self.lonely[key]  # the guard let it in, so it sits in the lonely pod's domain
        self._join(pod, info)
        self._check_lonely(pod, info, affinity_pre)


def _message(num_nodes: int, reasons: list[tuple[Reason, ...]]) -> str:
    """fit_error_message over nodes with these verdicts, each distinct verdict judged once: the message counts
    reason strings over the nodes' first rejecting plugins, so one verdict holding every node's counted
    reasons (under one plugin name) gives the same text."""
    seen: dict[tuple[Reason, ...], int] = {}
    for r in reasons:
        seen[r] = seen.get(r, 0) + 1
    counted: list[Reason] = []
    for r, k in seen.items():
        counted += [Reason("", x.reason) for x in NodeVerdict("", r).first_failure()] * k
    return fit_error_message(num_nodes, [NodeVerdict("", tuple(counted))])


class VectorScheduler:
    """One simulated kube-scheduler over a ClusterState it mutates as it binds; greedy.Scheduler's
    constructor arguments and schedule() (which it reproduces exactly, over all nodes at once)."""

    def __init__(self, state: ClusterState, seed: int = 0, percentage_of_nodes_to_score: int = 0,
                 filter_plugins: Sequence[Plugin] = FILTER_PLUGINS, score_plugins: Sequence[Plugin] = SCORE_PLUGINS,
                 protect_placed: bool = True) -> None:
        self.state = state
        self.seed = seed
        self.percentage_of_nodes_to_score = percentage_of_nodes_to_score
        self.filter_plugins = [p for p in filter_plugins if p.filter]
        self.score_plugins = [p for p in score_plugins if p.score is not None and p.weight]
        self.rng = random.Random(seed)
        self.next_start = 0
        self.infos = list(state.nodes.values())
        self.names = [info.name for info in self.infos]
        self.guard = IndexedGuard(state) if protect_placed else None
        self._build()

    def _build(self) -> None:
        """Arrays and every plugin's vectorized state from the ClusterState as it is now."""
        self.arrays = NodeArrays(self.state)
        made: dict[str, Any] = {}
        for p in (*self.filter_plugins, *self.score_plugins):
            if p.name not in made:
                factory = VECTOR_FACTORIES.get(p.name)
                if factory is None:
                    raise ValueError(f"plugin {p.name} has no vectorized form")
                made[p.name] = factory(self.state, self.arrays)
        self.filters = [made[p.name] for p in self.filter_plugins]
        self.scores = [(p.weight, made[p.name]) for p in self.score_plugins]
        self.incremental = [self.arrays] + [c for c in made.values() if hasattr(c, "add")]
        self.affinity = made.get("InterPodAffinity")
        self.version = self.state.version

    def _sync(self) -> None:
        """Replay the pods added and removed since the arrays were last brought up to date."""
        state = self.state
        if self.version == state.version:
            return
        changes = state.changes_since(self.version)
        if changes is None:
            self._build()
            return
        index = self.arrays.index
        for pod, node_name, delta in changes:
            i = index[node_name]
            for c in self.incremental:
                if delta > 0:
                    c.add(pod, i)
                else:
                    c.remove(pod, i)
        self.version = state.version

    def schedule(self, pod: Pod) -> tuple[str | None, str]:
        """One scheduling cycle: the chosen node (bound into the state) or None and FitError's message."""
        n = len(self.infos)
        if not n:
            return None, "0/0 nodes are available: no nodes in the input."
        self._sync()
        masks = [c.filter(pod) for c in self.filters]
        feasible_mask = np.ones(n, bool)
        for m in masks:
            if m is not None:
                feasible_mask &= m
        want = num_feasible_nodes_to_find(n, self.percentage_of_nodes_to_score)
        start = self.next_start
        positions = np.flatnonzero(np.concatenate((feasible_mask[start:], feasible_mask[:start])))
        guard = self._guard_mask(pod) if self.guard is not None else None
        if guard is not None:
            positions = positions[~np.concatenate((guard[0][start:], guard[0][:start]))[positions]]
        chosen_positions = positions[:want]
        processed = int(chosen_positions[-1]) + 1 if len(chosen_positions) >= want else n
        feasible = (chosen_positions + start) % n
        self.next_start = (start + processed) % n
        if not len(feasible):
            return None, self._fit_error(pod, masks, guard)
        if len(feasible) == 1:
            best = int(feasible[0])
        else:
            totals = np.zeros(len(feasible), np.int64)
            for weight, c in self.scores:
                totals += weight * c.score(pod, feasible)
            tied = feasible[totals == totals.max()]
            best = int(tied[self.rng.randrange(len(tied))]) if len(tied) > 1 else int(tied[0])
        counts_seen = self.affinity.counts_seen if self.affinity is not None else None
        self.state.add(pod, self.names[best])
        if self.guard is not None:
            self.guard.bound(pod, self.infos[best], counts_seen)
        return self.names[best], ""

    def _guard_mask(self, pod: Pod) -> tuple[np.ndarray, np.ndarray] | None:
        """The placed-pod guard's verdicts over every node: (rejected, rejected for spread), or None when the
        pod can break no placed pod. Spread first, as the guard's own check."""
        guard, arrays = self.guard, self.arrays
        assert guard is not None
        spread = podtopologyspread_vector.guard_mask(guard.candidates(pod), pod, arrays)
        affinity = interpodaffinity_vector.guard_mask(guard.lonely.values(), pod, arrays)
        if spread is None and affinity is None:
            return None
        if spread is None:
            assert affinity is not None
            return affinity, np.zeros(arrays.size, bool)
        return (spread if affinity is None else spread | affinity), spread

    def _fit_error(self, pod: Pod, masks: list[np.ndarray | None],
                   guard: tuple[np.ndarray, np.ndarray] | None) -> str:
        """FitError's message: every node's first rejecting plugin (the first mask False there), its reasons
        asked of that plugin; nodes every plugin passed were rejected by the guard."""
        n = len(self.infos)
        first = np.full(n, len(masks), np.int64)
        for k in range(len(masks) - 1, -1, -1):
            m = masks[k]
            if m is not None:
                first[~m] = k
        reasons: list[tuple[Reason, ...]] = [()] * n
        for k, plugin in enumerate(self.filters):
            nodes = np.flatnonzero(first == k)
            if not len(nodes):
                continue
            many = getattr(plugin, "reasons_many", None)
            found = many(pod, nodes) if many is not None else [plugin.reasons(pod, i) for i in nodes.tolist()]
            for i, r in zip(nodes.tolist(), found):
                reasons[i] = r
        if guard is not None:
            for i in np.flatnonzero((first == len(masks)) & guard[0]).tolist():
                reasons[i] = _BREAKS_SPREAD if guard[1][i] else _BREAKS_AFFINITY
        return _message(n, reasons)
