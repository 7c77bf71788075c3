"""The vectorized kube-scheduler simulator: greedy.Scheduler's scheduling cycle computed over all nodes at once.

Same results as the plain loop (property-tested against it), so greedy.simulate uses it by default:
- Filter: every plugin's vectorized form (optimizer/<rule>/vector.py) gives a bool per node; their AND is the
  feasibility mask. Each mask equals the plain predicate's verdict, so a node's first rejecting plugin is the
  first mask that is False there.
- findNodesThatFitPod: the first numFeasibleNodesToFind feasible nodes in rotation order from
  nextStartNodeIndex; the rejected nodes before the last one found count as processed, exactly as the plain
  loop's arithmetic. The plugins' placed-pod guards (Plugin.placed_guard) reject nodes after the filters, as
  masks when the plugin's vectorized form has a guard_mask, else node by node in rotation order.
- Score: each plugin's normalized score over the candidates (in rotation order) as arrays, weighted and summed;
  the top is chosen as greedy._select_host does (same random.Random calls in the same order).
- A pod that fits nowhere: FitError's message from each node's first rejecting plugin, its reasons asked of
  that plugin only for those pods.
The arrays follow the ClusterState through its change journal: whatever added or removed pods since the
previous cycle (this scheduler's binds, a caller's removals) is replayed into them first.
"""
from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from ..models.objects import Pod

from .framework import (NodeVerdict, bind_if_feasible, PlacedGuard, Plugin, Profile, Reason, fit_error_message,
                        num_feasible_nodes_to_find)
from .nodearrays import NodeArrays
from .registry import DEFAULT_PROFILE
from .state import ClusterState


def _message(num_nodes: int, reasons: list[tuple[Reason, ...]]) -> str:
    """fit_error_message over nodes with these verdicts, each distinct verdict judged once: the message counts
    reason strings over the nodes' first rejecting plugins, so one verdict holding every node's counted
    reasons (under one plugin name) gives the same text."""
    seen: dict[tuple[Reason, ...], int] = {}
    for r in reasons:
        seen[r] = seen.get(r, 0) + 1
    counted: list[Reason] = []
    for r, k in seen.items():
        counted += [replace(x, plugin="") for x in NodeVerdict("", r).first_failure()] * k
    return fit_error_message(num_nodes, [NodeVerdict("", tuple(counted))])


class VectorScheduler:
    """One simulated kube-scheduler over a ClusterState it mutates as it binds; greedy.Scheduler's
    constructor arguments and schedule() (which it reproduces exactly, over all nodes at once)."""

    def __init__(self, state: ClusterState, seed: int = 0, percentage_of_nodes_to_score: int = 0,
                 profile: Profile = DEFAULT_PROFILE, protect_placed: bool = True, plain_fallback: bool = False,
                 fit_errors: bool = True) -> None:
        self.state = state
        # fit_errors=False: a pod that fits nowhere gets no FitError message (a caller that only needs where pods
        # go, e.g. provision's estimator: the messages were a third of its kube-scheduler pass at 1,000 nodes)
        self.fit_errors = fit_errors
        self.seed = seed
        self.percentage_of_nodes_to_score = percentage_of_nodes_to_score
        self.profile = profile
        self.rng = random.Random(seed)
        self.next_start = 0
        self.infos = list(state.nodes.values())
        self.names = [info.name for info in self.infos]
        # batch semantics: the plugins' guards keep a bind from breaking a pod placed before it
        self.protect_placed = protect_placed
        self.guards: list[tuple[Plugin, PlacedGuard]] = [
            (p, p.placed_guard(state)) for p in profile.filters if protect_placed and p.placed_guard]
        self.diagnosis: list[NodeVerdict] = []  # the last failed cycle's verdict per node (PostFilter reads it)
        # plain_fallback: a plugin without a vectorized form runs its plain predicate node by node (PlainVector)
        self.plain_fallback = plain_fallback
        self._build()

    def _build(self) -> None:
        """Arrays and every plugin's vectorized state from the ClusterState as it is now."""
        self.arrays = NodeArrays(self.state)
        made: dict[str, Any] = {}
        scorers = [(p, self.profile.weight(p)) for p in self.profile.scorers]
        for p in (*self.profile.filters, *(p for p, weight in scorers if weight)):
            if p.name not in made:
                if p.vector is None and not self.plain_fallback:
                    raise ValueError(f"plugin {p.name} has no vectorized form")
                made[p.name] = p.vector(self.state, self.arrays) if p.vector is not None \
                    else PlainVector(p, self.state, self.infos)
        self.made = made
        self.filters = [made[p.name] for p in self.profile.filters]
        self.scores = [(weight, made[p.name]) for p, weight in scorers if weight]
        self.incremental = [self.arrays] + [c for c in made.values() if hasattr(c, "add")]
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
        guarded, checks = self._guard_masks(pod)
        if guarded is not None:
            positions = positions[~np.concatenate((guarded[start:], guarded[:start]))[positions]]
        if not checks:
            chosen = positions[:want]
            processed = int(chosen[-1]) + 1 if len(chosen) >= want else n
            feasible = (chosen + start) % n
        else:  # a guard without a vectorized form: asked node by node, in rotation order, as the plain loop does
            found: list[int] = []
            processed = n
            for pos in positions.tolist():
                i = (pos + start) % n
                if any(check(self.infos[i]) for check in checks):
                    continue
                found.append(i)
                if len(found) >= want:
                    processed = pos + 1
                    break
            feasible = np.array(found, np.int64)
        for c in self.filters:  # a PreFilterResult: only its nodes were processed (greedy.Scheduler says why)
            size = getattr(c, "pre_filter_result_size", None)
            if size is not None and (pinned := size(pod)) is not None:
                processed = pinned
        self.next_start = (start + processed) % n
        if not len(feasible):
            return None, self._fit_error(pod, masks) if self.fit_errors else "0/%d nodes are available." % n
        if len(feasible) == 1:
            best = int(feasible[0])
        else:
            totals = np.zeros(len(feasible), np.int64)
            for weight, c in self.scores:
                totals += weight * c.score(pod, feasible)
            tied = feasible[totals == totals.max()]
            best = int(tied[self.rng.randrange(len(tied))]) if len(tied) > 1 else int(tied[0])
        pres = {p.name: getattr(self.made[p.name], "guard_pre", None) for p, _ in self.guards}
        self.state.add(pod, self.names[best])
        for p, guard in self.guards:
            guard.bound(pod, self.infos[best], pres[p.name])
        return self.names[best], ""

    def feasible(self, pod: Pod) -> np.ndarray:
        """Per node: does `pod` pass every Filter there, against the state as it is now (nothing is bound; the
        placed-pod guards are not asked)? The plain predicates' verdicts (rebalance judges states with it)."""
        self._sync()
        mask = np.ones(len(self.infos), bool)
        for c in self.filters:
            m = c.filter(pod)
            if m is not None:
                mask &= m
        return mask

    def evict(self, pods: Sequence[Pod]) -> None:
        """Delete bound pods (preemption's victims): the arrays catch up through the state's change journal;
        the guards, which only ever see pods arrive, start over (when some pod of the state has what they
        protect: spread constraints or required pod affinity), as greedy.Scheduler.evict."""
        for pod in pods:
            self.state.remove(pod)
        if self.guards and any(p.spread_constraints or p.affinity.pod_required for p, _ in self.state.all_pods()):
            self.guards = [(p, p.placed_guard(self.state))
                           for p in self.profile.filters if self.protect_placed and p.placed_guard]

    def bind_nominated(self, pod: Pod, node: str) -> bool:
        """evaluateNominatedNode: bind `pod` to `node` if every filter (and guard) passes there (the plain
        predicates: one node, once per preemption)."""
        return bind_if_feasible(self.state, self.profile, [(p.name, g) for p, g in self.guards], pod, node)

    def _guard_masks(self, pod: Pod) -> tuple[np.ndarray | None, list[Any]]:
        """The nodes the placed-pod guards reject for `pod` (None: none), from the guards whose plugin's
        vectorized form has a guard_mask; the per-node checks of the others (those that can reject)."""
        rejected: np.ndarray | None = None
        checks = []
        for p, guard in self.guards:
            vector_form = getattr(self.made[p.name], "guard_mask", None)
            if vector_form is None:
                check = guard.prepare(pod)
                if check is not None:
                    checks.append(check)
                continue
            mask = vector_form(guard, pod)
            if mask is not None:
                rejected = mask if rejected is None else rejected | mask
        return rejected, checks

    def _fit_error(self, pod: Pod, masks: list[np.ndarray | None]) -> str:
        """FitError's message: every node's first rejecting plugin (the first mask False there), its reasons
        asked of that plugin; nodes every plugin passed were rejected by a guard, whose own check says why."""
        n = len(self.infos)
        first = np.full(n, len(masks), np.int64)
        for k in range(len(masks) - 1, -1, -1):
            m = masks[k]
            if m is not None:
                first[~m] = k
        for k in range(len(masks) - 1, -1, -1):  # outside a PreFilterResult no Filter runs: its plugin's verdict
            outside = getattr(self.filters[k], "outside_pre_filter_result", None)
            if outside is not None and masks[k] is not None and (m := outside(pod)) is not None:
                first[m] = k
        reasons: list[tuple[Reason, ...]] = [()] * n
        for k, plugin in enumerate(self.filters):
            nodes = np.flatnonzero(first == k)
            if not len(nodes):
                continue
            many = getattr(plugin, "reasons_many", None)
            found = many(pod, nodes) if many is not None else [plugin.reasons(pod, i) for i in nodes.tolist()]
            for i, r in zip(nodes.tolist(), found):
                reasons[i] = r
        passed = np.flatnonzero(first == len(masks)).tolist()
        if passed and self.guards:
            checks = [check for _, guard in self.guards for check in [guard.prepare(pod)] if check is not None]
            for i in passed:
                for check in checks:
                    found_reasons = check(self.infos[i])
                    if found_reasons:
                        reasons[i] = found_reasons
                        break
        self.diagnosis = [NodeVerdict(self.names[i], r) for i, r in enumerate(reasons) if r]
        return _message(n, reasons)


class PlainVector:
    """A plugin without a vectorized form, in the vectorized scheduler's terms: its plain PreFilter/Filter and
    PreScore/Score/NormalizeScore run node by node (Skip honoured as the plain loop does). It lets the other
    plugins' vectorized forms be checked against the reference under any profile (a scoring strategy that
    has no vectorized form)."""

    def __init__(self, plugin: Plugin, state: ClusterState, infos: Sequence[Any]) -> None:
        self.plugin, self.state, self.infos = plugin, state, list(infos)
        self._last: tuple[Pod, Any] | None = None

    def _pre(self, pod: Pod) -> tuple[bool, Any]:
        p = self.plugin
        if p.pre_filter_skip is not None and p.pre_filter_skip(pod, self.state):
            return False, None
        pre = p.pre_filter(pod, self.state) if p.pre_filter else None
        return not (p.filter_skipped is not None and p.filter_skipped(pre)), pre

    def filter(self, pod: Pod) -> np.ndarray | None:
        p = self.plugin
        if p.filter is None:
            return None
        run, pre = self._pre(pod)
        self._last = (pod, pre)
        if not run:
            return None
        return np.fromiter((not p.filter(pod, pre, info, self.state) for info in self.infos), bool, len(self.infos))

    def reasons(self, pod: Pod, node_index: int) -> tuple[Reason, ...]:
        if self._last is None or self._last[0] is not pod:
            self.filter(pod)
        assert self._last is not None and self.plugin.filter is not None
        return tuple(self.plugin.filter(pod, self._last[1], self.infos[node_index], self.state))

    def score(self, pod: Pod, candidates: np.ndarray) -> np.ndarray:
        p = self.plugin
        if p.score is None or (p.pre_score_skip is not None and p.pre_score_skip(pod, self.state)):
            return np.zeros(len(candidates), np.int64)
        infos = [self.infos[i] for i in candidates.tolist()]
        pre = p.pre_score(pod, self.state, infos) if p.pre_score else None
        if p.score_skipped is not None and p.score_skipped(pre):
            return np.zeros(len(candidates), np.int64)
        raw = {info.name: p.score(pod, pre, info, self.state) for info in infos}
        normalized = p.normalize(raw, pre) if p.normalize else raw
        return np.array([normalized[info.name] for info in infos], np.int64)
