"""Waves: the moves of the target in PDB-safe steps.

Moves are put in waves greedily (drained nodes first, in order). A move joins the wave when (a) its PDB still
allows a disruption in this wave (disruption.budget at the start of the wave, Eviction API arithmetic), (b) the
state after the wave stays valid: its replacement passes every Filter on its node, and every pod whose required
(anti-)affinity or DoNotSchedule spread sees it keeps its verdict. Evictions of a wave happen before its
arrivals, so a pod arrives on B in the wave where what must leave B leaves, or later. A move that does not fit
alone is tried with the moves it depends on (up to GROUP_LIMIT): the move of the pod it would break, a move off
its node, the partner its affinity needs (a swap, a co-located pair). Every state between waves is checked
with the verifier (existing = pods not moved yet, placed = the replacements); a wave that fails it is shrunk.
A wave is then landed (landing.py) in its eviction order, or in another (the moves that missed last; every
order for a small wave) when that one lands a replacement off plan: where kube-scheduler's nodes differ from the plan and make a target that
is valid and no worse on the goal's levels, the plan takes them (nothing to steer); where temporary cordons
cannot steer them either, the plan takes kube-scheduler's nodes when the target with them is no worse than
with those pods staying put (a pod off the hottest node lands on kube-scheduler's cool node, not the planned
one), and otherwise the moves wait for a later wave. When no wave can be built, each remaining move is tried
as the start of a wave of its own. Moves no wave can make are `blocked`, with the state they would break,
the budget that forbids the moves that would have to go with them, or the node kube-scheduler would bind the
replacement on.

Waves are greedy, not minimal in number; a PDB that allows one disruption makes one wave per eviction of its
pods, as the Eviction API would.
"""
from __future__ import annotations

import sys
import time
from collections import Counter
from itertools import permutations
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from typing import Any

from ...models.objects import Cluster, Pod

from ..problem import pod_signature
from ..state import ClusterState
from ..verify import judge, judge_all
from ..disruption import Budget, guarding, spends
from .budgets import PdbIndex
from .landing import Lander, assign_landing, land, mismatches
from .metrics import occupied, state_values
from .movable import as_pending
from .plan import DRAIN, Blocked, Landing, Move, RebalanceParams, Target, Wave
from .states import state_of
from .target_model import level_key, level_names

# the Filters whose verdicts on a pod that stays put change only as `_Waves._judged` says
DELTA_FILTERS = frozenset({"NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity", "NodePorts",
                           "NodeResourcesFit", "PodTopologySpread", "InterPodAffinity"})
GROUP_LIMIT = 8  # moves tried together when one does not fit alone
PERMUTE_LIMIT = 4  # waves up to which every eviction order is tried when the first one lands a replacement off plan
ORDER_LIMIT = 30  # waves up to which replacements with fewer feasible nodes are evicted first


def _selectors(holder: Pod) -> tuple[Any, ...]:
    """The selectors of `holder`'s required (anti-)affinity terms and DoNotSchedule spread constraints."""
    return tuple(sel for sel, _, _ in _counting_terms(holder))


def _sees(holder: Pod, pod: Pod) -> bool:
    """Could `pod` moving change `holder`'s verdict on required (anti-)affinity or DoNotSchedule spread?"""
    return any(s.matches(pod.labels) for s in _selectors(holder))


def _counting_terms(holder: Pod) -> tuple[tuple[Any, str, bool], ...]:
    """(selector, topology key, counted on every node) of `holder`'s required (anti-)affinity terms and
    DoNotSchedule spread constraints. A spread constraint counts a pod only on the nodes its policies admit
    (nodeAffinityPolicy Honor: the holder's node selector and required node affinity; nodeTaintsPolicy Honor:
    its tolerations), so it is counted on every node only when those policies cannot leave a node out."""
    a = holder.affinity
    terms = [(t.label_selector, t.topology_key, True) for t in a.pod_required + a.anti_required]
    filtered_nodes = bool(holder.node_selector) or a.node_required is not None
    terms += [(c.label_selector, c.topology_key,
               not (c.node_affinity_policy == "Honor" and filtered_nodes) and c.node_taints_policy != "Honor")
              for c in holder.spread_constraints if c.when_unsatisfiable == "DoNotSchedule"]
    return tuple((sel, key, everywhere) for sel, key, everywhere in terms if sel is not None)


def _over_allocatable(info: Any) -> bool:
    """Do the node's pods together exceed its allocatable (pod count or any requested resource)?"""
    alloc = info.node.allocatable
    return len(info.pods) > alloc.get("pods", 0) or any(q > alloc.get(r, 0) for r, q in info.requested.items()
                                                       if q > 0)


def _holds_terms(pod: Pod) -> bool:
    a = pod.affinity
    return bool(a.pod_required or a.anti_required or
                any(c.when_unsatisfiable == "DoNotSchedule" for c in pod.spread_constraints))


class _Waves:
    """Builds waves over a mutable copy of the state (see the module docstring, step 3)."""

    def __init__(self, cluster: Cluster, params: RebalanceParams, healthy: Mapping[str, bool],
                 initial_bad: Mapping[str, set[str]], retire: Sequence[str] = (),
                 watch: "_Watch | None" = None, pdbs: PdbIndex | None = None,
                 start: "tuple[ClusterState, Lander] | None" = None) -> None:
        self.cluster = cluster
        self.params = params
        self.where: dict[str, str] = {p.key: p.node_name for p in cluster.pods}
        self.moved: set[str] = set()
        self.healthy = dict(healthy)
        self.initial_bad = initial_bad
        self.watch = watch or _Watch(cluster)
        self.pods = {p.key: p for p in cluster.pods}
        # the state before the next wave, kept up to date by commit(); trials apply moves to it and undo them
        # (a state is 0.6 s to build on a 1,000-node cluster: once per trial was most of a wave's time)
        self.state, self.lander = start or (None, None)
        if self.state is None:
            self.state = state_of(cluster, {})
            self.lander = Lander(self.state, params.seed, params.profile)
        self.pdbs = pdbs or PdbIndex.of(cluster)
        self._budgets: dict[str, Budget] | None = None
        # cordoned from the first wave to the end: drained nodes, and the nodes `pack` empties (removable)
        self.drain_cordons = tuple(dict.fromkeys(tuple(params.drain) + tuple(retire)))
        self.why: dict[str, str] = {}  # move key -> last reason it could not join a wave
        self.why_budget: dict[str, str] = {}  # move key -> the PDB that refused it (alone or in its group)

    def reason(self, key: str) -> str:
        """Why a move joins no wave: the state it would break, and the budget that forbids the moves that
        would have to happen with it."""
        invalid, budget = self.why.get(key, ""), self.why_budget.get(key, "")
        if invalid and budget:
            return f"{invalid}; the moves that would have to go with it exceed the {budget}"
        return invalid or budget or "no wave keeps every state valid"

    # -- PDB budgets at the start of a wave ------------------------------------------------------------
    def budgets(self) -> dict[str, Budget]:
        if self._budgets is None:  # they change only when a wave is committed
            self._budgets = self.pdbs.budgets(self.healthy)
        return self._budgets

    def cost(self, m: Move, budgets: Mapping[str, Budget]) -> str:
        """The PDB this eviction spends one disruption of, or ""."""
        for b in guarding(self.cluster.pdbs, m.pod):
            if spends(m.pod, self.healthy.get(m.key, True), budgets[b.key]):
                return b.key
        return ""

    # -- validity -----------------------------------------------------------------------------------------
    @staticmethod
    def _apply(state: ClusterState, m: Move) -> Pod:
        """Evict m.pod and bind its replacement (a new pod of the controller: no spec.nodeName)."""
        state.remove(m.pod)
        new = replace(m.pod, node_name="")
        state.add(new, m.target)
        return new

    @staticmethod
    def _undo(state: ClusterState, m: Move, new: Pod) -> None:
        state.remove(new)
        state.add(m.pod, m.source)

    def _ok_after(self, state: ClusterState, arrivals: Sequence[tuple[Pod, str]],
                  touched: Sequence[tuple[Pod, str, str]], wave_keys: set[str]) -> tuple[str, tuple[str, str, str]]:
        """("", ...) when the state is valid around these arrivals, else the first reason (for the blocked text)
        and the culprit: ("arrival", pod key, plugin) for a replacement rejected on its node, ("holder", pod key,
        plugin) for a pod whose verdict the moves break."""
        for new, node in arrivals:
            reasons = [] if self.lander.passes(new, node) else judge(new, node, state, self.params.profile)
            if reasons:
                return f"{node}: {reasons[0].plugin}: {reasons[0].reason}", ("arrival", new.key, reasons[0].plugin)
        verdicts: dict[tuple[Any, ...], list[Any]] = {}  # identical pods on one node get one verdict
        watching: dict[str, Pod] = {}
        for t, source, target in touched:
            watching.update((h.key, h) for h in self.watchers(t) if self._sees_move(h, t, source, target))
        for h in watching.values():
            key = h.key
            placed = _placed(state, key)
            if placed is None:
                continue
            node, pod, sig = placed
            reasons = verdicts.get(sig)
            if reasons is None:
                passes = self.lander.passes(pod, node)
                reasons = verdicts[sig] = [] if passes else judge(pod, node, state, self.params.profile)
            allowed = set() if (key in self.moved or key in wave_keys) else self.initial_bad.get(key, set())
            bad = [r for r in reasons if r.plugin not in allowed]
            if bad:
                return f"{key} on {node} would break: {bad[0].plugin}: {bad[0].reason}", ("holder", key, bad[0].plugin)
        return "", ("", "", "")

    def watchers(self, pod: Pod) -> list[Pod]:
        return self.watch.watchers(pod)

    def _sees_move(self, holder: Pod, pod: Pod, source: str, target: str) -> bool:
        """Can `pod` moving from `source` to `target` change `holder`'s verdict through a term that selects it?
        Not when every such term counts pods per domain of a key on which the two nodes agree (a move inside a
        zone leaves every zone's count as it was), on every node. Only the wave's pre-check asks: `verified`
        judges every watcher of the wave's moves all the same."""
        if source == target:
            return False
        src, dst = self.state.nodes[source].node.labels, self.state.nodes[target].node.labels
        return any(sel.matches(pod.labels) and (src.get(key) != dst.get(key) or not everywhere)
                   for sel, key, everywhere in _counting_terms(holder))

    def verified(self, wave: Sequence[Move], since: int = 0) -> bool:
        """The verifier on the state after `wave`: replacements must pass every Filter, the other pods may only
        keep the violations they had in the input. Judged are the pods whose verdict the wave can change; every
        other pod keeps the verdict it had in the state before, valid by induction from the input (see
        `_judged`; judge_all on every pod of a 1,000-node cluster: 1.8 s per wave). `since`: wave[:since] is
        known to pass (a wave grown one move at a time): only the pods the later moves can change are judged,
        by the same argument with the state after wave[:since] as the state before."""
        return self._verified(wave, fast=self.fast_delta, since=since)

    def verified_reference(self, wave: Sequence[Move]) -> bool:
        """verified() judging every pod on the nodes the wave leaves or reaches (the simple form the fast one is
        proven equal to, tests/test_rebalance_waves_delta.py)."""
        return self._verified(wave, fast=False)

    @property
    def fast_delta(self) -> bool:
        """The node-local argument of `_judged` holds for these Filters only (a scheduler configuration's or a
        toy rule's filters get the reference)."""
        return self.lander.sched is not None and all(p.name in DELTA_FILTERS for p in self.params.profile.filters)

    def _judged(self, state: ClusterState, wave: Sequence[Move], fast: bool) -> dict[str, None]:
        """The pods whose verdict the wave can change. Reference: every pod on the nodes the wave leaves or
        reaches (resources, ports), the pods whose required (anti-)affinity or DoNotSchedule spread selects a
        moved pod, and the pods a moved pod's required anti-affinity selects (`_Watch.affected`). Fast: the
        same without the pods of the nodes, except on a node whose requests or pod count now exceed its
        allocatable. Why that is the same verdict, Filter by Filter, for a pod X that stays on a node N the
        wave touches: NodeResourcesFit judges X with itself removed, so X fails only when N's totals exceed
        its allocatable (those nodes are judged whole); NodePorts' conflict is symmetric, and every arrival is
        judged against every pod of its node; InterPodAffinity and PodTopologySpread change only through pods
        X's terms select (X is then a watcher of the moved pod) or through a moved pod's anti-affinity
        selecting X (affected); NodeName, NodeAffinity, TaintToleration and NodeUnschedulable read only X and
        N, which the wave does not change (temporary cordons are not in the state)."""
        keys: dict[str, None] = {}
        for name in dict.fromkeys([m.source for m in wave] + [m.target for m in wave]):
            info = state.nodes[name]
            if not fast or _over_allocatable(info):
                keys.update(dict.fromkeys(info.pods))
        for m in wave:
            keys.update(dict.fromkeys(self.watch.affected(m.pod)))
        return keys

    def _verified(self, wave: Sequence[Move], fast: bool, since: int = 0) -> bool:
        applied = [(m, self._apply(self.state, m)) for m in wave]
        try:
            state = self.state
            keys = self._judged(state, wave[since:], fast)
            # the vectorized filters (the plain predicates' verdicts) say which pods fail; only those are judged
            # for the plugins that reject them (judge_all costs 0.3 s per call here, whatever the pods); identical
            # pods on one node (same spec and labels) get one verdict
            failing = []
            seen: dict[tuple[Any, ...], bool] = {}
            for k in keys:
                placed = _placed(state, k)
                if placed is None:
                    continue
                node, pod, sig = placed
                ok = seen.get(sig)
                if ok is None:
                    ok = seen[sig] = self.lander.passes(pod, node)
                if not ok:
                    failing.append(pod)
            verdicts = {pod.key: judge(pod, state.node_of[pod.key], state, self.params.profile) for pod in failing}
        finally:
            self._undo_all(applied)
        moved = self.moved | {m.key for m in wave}
        for key, reasons in verdicts.items():
            allowed = set() if key in moved else self.initial_bad.get(key, set())
            if any(r.plugin not in allowed for r in reasons) and not self.pods[key].mirror:
                return False
        return True

    # -- building one wave ---------------------------------------------------------------------------------
    def build(self, remaining: list[Move], exclude: set[str], starts: set[str] | None = None) -> list[Move]:
        """Moves joining the next wave: one at a time when it fits alone, else with the moves it depends on.
        `starts`: only these moves may start a group (the others may still join one as helpers)."""
        budgets = self.budgets()
        left = {k: b.allowed for k, b in budgets.items()}
        state = self.state
        wave: list[Move] = []
        keys: set[str] = set()
        by_key = {m.key: m for m in remaining}
        applied: list[tuple[Move, Pod]] = []
        progress = True
        try:
            while progress:
                progress = False
                for m in remaining:
                    if m.key in keys or m.key in exclude or (starts is not None and m.key not in starts):
                        continue
                    group = [m]
                    for _ in range(GROUP_LIMIT):
                        ok, culprit = self._try(state, group, budgets, left, keys, applied)
                        if ok or not culprit[0]:
                            break
                        helper = self._helper(culprit, group, remaining, by_key, keys | exclude)
                        if helper is None:
                            break
                        group.append(helper)
                    if ok:
                        wave.extend(group)
                        keys |= {g.key for g in group}
                        progress = True
        finally:
            self._undo_all(applied)
        return wave

    def _undo_all(self, applied: list[tuple[Move, Pod]]) -> None:
        """Take the trial moves back off self.state (last applied first)."""
        for m, new in reversed(applied):
            self._undo(self.state, m, new)
        applied.clear()

    def _try(self, state: ClusterState, group: list[Move], budgets: Mapping[str, Budget],
             left: dict[str, int], keys: set[str],
             applied: list[tuple[Move, Pod]]) -> tuple[bool, tuple[str, str, str]]:
        """Add `group` to the wave being built in `state` if the budgets allow it and the state stays valid
        (its moves then stay applied, listed in `applied`); else the culprit (see _ok_after; empty when a
        budget refused it)."""
        need = Counter(self.cost(m, budgets) for m in group)
        need.pop("", None)
        short = [k for k, n in need.items() if left[k] < n]
        if short:
            b = budgets[short[0]]
            for m in group:
                if self.cost(m, budgets) == short[0]:
                    self.why_budget[m.key] = (f"PodDisruptionBudget {b.pdb} allows {b.allowed} disruption(s) per "
                                              f"wave ({b.cause()})")
            return False, ("", "", "")
        arrivals = [(self._apply(state, m), m.target) for m in group]
        why, culprit = self._ok_after(state, arrivals, [(m.pod, m.source, m.target) for m in group],
                                      keys | {m.key for m in group})
        if why:
            for m, (new, _) in reversed(list(zip(group, arrivals))):
                self._undo(state, m, new)
            for m in group:
                self.why[m.key] = why
            return False, culprit
        for k, n in need.items():
            left[k] -= n
        applied.extend((m, new) for m, (new, _) in zip(group, arrivals))
        return True, culprit

    @staticmethod
    def _helper(culprit: tuple[str, str, str], group: list[Move], remaining: Sequence[Move],
                by_key: Mapping[str, Move], taken: set[str]) -> Move | None:
        """The remaining move most likely to make `group` valid with it: the broken pod's own move; for a
        rejected replacement, a move off its node (room, anti-affinity), then a partner its terms need moving
        to the same node, then any move its selectors or theirs see (spread groups, co-located pairs)."""
        kind, key, plugin = culprit
        inside = {g.key for g in group} | taken
        if kind == "holder":
            m = by_key.get(key)
            return m if m is not None and m.key not in inside else None
        a = by_key[key]
        free = [q for q in remaining if q.key not in inside]
        ranked = ([q for q in free if q.source == a.target],
                  [q for q in free if q.target == a.target and _sees(a.pod, q.pod)],
                  [q for q in free if _sees(a.pod, q.pod) or _sees(q.pod, a.pod)])
        if plugin in ("NodeResourcesFit", "NodePorts"):
            ranked = ranked[:1]
        return next((q for tier in ranked for q in tier), None)


    def shrink(self, wave: Sequence[Move], exclude: set[str]) -> list[Move]:
        """The wave without `exclude`, if it is still valid on its own (one check, no rebuild); else []."""
        reduced = [m for m in wave if m.key not in exclude]
        if not reduced:
            return []
        budgets = self.budgets()
        applied: list[tuple[Move, Pod]] = []
        try:
            ok, _ = self._try(self.state, reduced, budgets, {k: b.allowed for k, b in budgets.items()}, set(), applied)
        finally:
            self._undo_all(applied)
        return self.order(reduced) if ok else []

    def order(self, wave: list[Move]) -> list[Move]:
        """The wave in eviction order (see eviction_order), counting each replacement's feasible nodes on the
        state after the wave's evictions."""
        if len(wave) < 2:
            return wave
        if len(wave) > ORDER_LIMIT:
            return eviction_order(wave)  # counting every replacement's feasible nodes costs more than it helps
        state = self.state
        for m in wave:
            state.remove(m.pod)
        try:
            choices = {m.key: self.lander.choices(replace(m.pod, node_name="")) for m in wave}
        finally:
            for m in wave:
                state.add(m.pod, m.source)
        return eviction_order(wave, choices)

    def land(self, wave: list[Move]) -> tuple[tuple[str, ...], list[str], list[str], list[int]]:
        """landing.land on the state before `wave`."""
        return land(self.lander, self.drain_cordons, wave)

    def commit(self, wave: Sequence[Move]) -> None:
        changed = {m.key for m in wave if not self.healthy.get(m.key, True)}
        for m in wave:
            self._apply(self.state, m)
            self.where[m.key] = m.target
            self.moved.add(m.key)
            self.healthy[m.key] = True  # the script waits for the replacement to be Ready
        # a budget reads only its pods' health: only the PDBs of pods that were not healthy change (recomputing
        # every PDB after each wave took 14 of the 36 s of a 152-eviction plan at 1,000 nodes)
        if self._budgets is not None and changed:
            self._budgets = {**self._budgets, **self.pdbs.budgets(self.healthy, changed)}



def eviction_order(moves: Iterable[Move], choices: Mapping[str, int] | None = None) -> list[Move]:
    """kube-scheduler queues higher priority first whatever the creation order; within a priority the
    replacements are created, and queued, in eviction order: pods with required pod affinity after the others
    (their partners must be bound first), then the ones with fewer nodes to choose from (`choices`), then
    larger requests (first-fit decreasing), then input order."""
    choices = choices or {}
    return sorted(moves, key=lambda m: (-m.pod.priority, bool(m.pod.affinity.pod_required), choices.get(m.key, 0),
                                        -m.pod.requests.get("cpu", 0), -m.pod.requests.get("memory", 0),
                                        m.pod.order))


def plan_waves(cluster: Cluster, moves: Sequence[Move], params: RebalanceParams, healthy: Mapping[str, bool],
               initial_bad: Mapping[str, set[str]], retire: Sequence[str] = (),
               accept: Callable[[Mapping[str, str], bool], bool] | None = None, deadline: float | None = None,
               watch: "_Watch | None" = None, pdbs: PdbIndex | None = None,
               start: "tuple[ClusterState, Lander] | None" = None,
               ) -> tuple[list[Wave], list[tuple[Move, str]], dict[str, str]]:
    """Waves for `moves` (in priority order: drained nodes first), the moves no wave can make with why, and
    where every pod is after the waves. `retire`: nodes the target empties, cordoned like drained ones.
    `accept(changes, or_staying)`: whether the target with these pods sent elsewhere is valid and as good (no
    level worse, lexicographically) or, with `or_staying`, no worse than with those pods not moving; then a
    wave whose replacements kube-scheduler lands differently takes kube-scheduler's nodes (no cordon needed)
    instead of being split; when cordons cannot steer them either, it takes them if they beat not moving. At
    `deadline` (or Ctrl-C) the waves planned so far stand and the moves left are returned as not made, with
    why."""
    w = _Waves(cluster, params, healthy, initial_bad, retire, watch, pdbs, start)
    drain_rank = {d: i for i, d in enumerate(params.drain)}
    # pack: the moves off the nodes with the fewest moves first, node by node, so that waves planned before a
    # deadline empty whole nodes
    off = Counter(m.source for m in moves) if params.goal == "pack" else Counter()
    remaining = sorted(moves, key=lambda m: (drain_rank.get(m.source, len(drain_rank)), off[m.source],
                                             m.source if off else "", m.pod.order))
    waves: list[Wave] = []
    stuck: list[tuple[Move, str]] = []
    def retarget(wave: list[Move], nodes: Sequence[str], or_staying: bool) -> list[Move]:
        """The wave sent to kube-scheduler's `nodes` when accept() takes them into the target, else itself."""
        nonlocal remaining
        changes = {m.key: n for m, n in zip(wave, nodes) if n != m.target}
        if not changes or accept is None or not accept(changes, or_staying):
            return wave
        remaining = [replace(m, target=changes[m.key]) if m.key in changes else m for m in remaining]
        return [replace(m, target=n) for m, n in zip(wave, nodes)]

    def settle(wave: list[Move]) -> tuple[list[Move], list[str], bool]:
        """Land `wave` (taking kube-scheduler's nodes when as good); (the wave, moves to defer, committed)."""
        if accept is not None:
            # kube-scheduler's own nodes first: when they make a target as good, nothing needs steering
            alone = w.lander.simulate(wave, w.drain_cordons)
            if all(alone) and mismatches(wave, alone):
                wave = retarget(wave, alone, False)
        temp, alone, outcome, missing = w.land(wave)
        if missing:
            # the eviction order is the plan's to choose: a replacement that takes the node another one needs
            # (or lands back because the pod it must follow is still queued) may land as planned when evicted
            # after it
            for other in _other_orders(wave, missing):
                tried = w.land(other)
                if not tried[3]:
                    wave, (temp, alone, outcome, missing) = other, tried
                    break
        if missing and accept is not None and len(wave) == 1 and all(alone):
            # a move no cordon steers, tried in a wave of its own (every larger wave failed): kube-scheduler's
            # own node, when the target with it is no worse than with the pod staying where it is
            taken = retarget(wave, alone, True)
            if taken is not wave:
                wave = taken
                temp, alone, outcome, missing = w.land(wave)
        for i in missing:
            # the reason a move left over at the end reports, unless a later trial finds another
            w.why[wave[i].key] = (f"kube-scheduler would bind its replacement on {outcome[i] or 'no node'}, and "
                                  f"cordoning {len(temp)} node(s) (at most {w.lander.max_cordons}) does not steer it")
        if missing:
            # cordons cannot steer them: the replacements that took another move's node wait for a later
            # wave (else the last one that missed)
            thieves = [wave[i].key for i in missing if outcome[i] and outcome[i] != wave[i].target]
            first = wave[missing[0]].key  # scheduled first among them: the others' arrivals cannot move it
            return wave, list(set(thieves) - {first} or set(thieves) or {wave[missing[-1]].key}), False
        if not w.verified(wave):
            w.why[wave[-1].key] = "the state after its wave fails the verifier"
            return wave, [wave[-1].key], False
        budgets = w.budgets()
        cost = {m.key: w.cost(m, budgets) for m in wave}
        spent: Counter[str] = Counter(cost.values())
        landed_alone = assign_landing(wave, alone)
        landed = assign_landing(wave, outcome)
        cordon = tuple(dict.fromkeys(w.drain_cordons + temp))
        waves.append(Wave(tuple(wave), cordon, temp,
                          tuple(Landing(m.key, m.target, a, b) for m, a, b in zip(wave, landed_alone, landed)),
                          {k: (n, budgets[k].allowed) for k, n in spent.items() if k},
                          {k: v for k, v in cost.items() if v}))
        w.commit(wave)
        return wave, [], True

    while remaining:
        if params.interrupt.is_set() or (deadline is not None and time.perf_counter() >= deadline):
            why = R_INTERRUPTED if params.interrupt.is_set() else R_OUT_OF_TIME
            stuck.extend((m, why.format(waves=len(waves))) for m in remaining)
            break
        exclude: set[str] = set()
        wave = w.order(w.build(remaining, exclude))
        committed = False
        for _ in range(len(remaining) + 1):
            if not wave:
                break
            wave, defer, committed = settle(wave)
            if committed:
                break
            exclude |= set(defer)
            wave = w.shrink(wave, exclude) or w.order(w.build(remaining, exclude))
        if not committed:
            # the deferred moves may go alone: one move (with the moves it needs) per wave
            for m in list(remaining):
                wave = w.order(w.build(remaining, set(), starts={m.key}))
                if wave:
                    wave, _, committed = settle(wave)
                    if committed:
                        break
        if not committed:
            for m in remaining:
                stuck.append((m, w.reason(m.key)))
            break
        done = {m.key for m in wave}
        remaining = [m for m in remaining if m.key not in done]
        if params.log_progress:
            print(f"rebalance: wave {len(waves)}: {len(wave)} move(s), {len(remaining)} left", file=sys.stderr,
                  flush=True)
    return waves, stuck, dict(w.where)


def _other_orders(wave: list[Move], missing: Sequence[int]) -> Iterator[list[Move]]:
    """Eviction orders to try when `wave` in its own order lands a replacement off plan: the moves that missed
    last, then, for a wave of up to PERMUTE_LIMIT moves, every other order (kube-scheduler queues replacements
    of one priority in eviction order, so the order decides which one takes a contested node)."""
    missed = {wave[i].key for i in missing}
    last = [m for m in wave if m.key not in missed] + [m for m in wave if m.key in missed]
    seen = {tuple(m.key for m in wave)}
    orders = [last]
    if len(wave) <= PERMUTE_LIMIT:
        orders += [list(p) for p in permutations(wave)]
    for order in orders:
        key = tuple(m.key for m in order)
        if key not in seen and all(a.pod.priority >= b.pod.priority for a, b in zip(order, order[1:])):
            seen.add(key)
            yield order


R_STUCK = "its move {src} -> {dst} cannot be made in any wave: {why}"
R_OUT_OF_TIME = "the time limit ran out after {waves} wave(s)"
R_INTERRUPTED = "interrupted after {waves} wave(s)"
R_UNPLANNED = "its move {src} -> {dst} was not planned: {why} (rebalance again from the state the waves reach)"


def waves_to(cluster: Cluster, target: Target, free: list[Pod], params: RebalanceParams,
             healthy: Mapping[str, bool], initial_bad: Mapping[str, set[str]], deadline: float | None = None,
             pdbs: PdbIndex | None = None, start: "tuple[ClusterState, Lander] | None" = None,
             ) -> tuple[list[Wave], list[Blocked], dict[str, str]]:
    """The waves that reach `target` from `cluster`, a blocked entry per move no wave can make, and where every
    pod is after the waves. A wave's replacements may land on kube-scheduler's nodes instead of the planned ones
    when the target stays valid and no worse (plan_waves' `accept`). `pdbs`: the cluster's PdbIndex, when the
    caller has built it; `start`: the state of `cluster` and a Lander over it, when the caller has them (the
    waves change the state: it ends as the state after the last wave)."""
    pods = {p.key: p for p in cluster.pods}
    final_target = {p.key: p.node_name for p in cluster.pods}
    final_target.update(target.assignment)
    moves = [Move(pods[k], pods[k].node_name, n) for k, n in target.assignment.items() if n != pods[k].node_name]
    retire: list[str] = []
    if params.goal == "pack":
        initial = state_of(cluster, {})
        target_state = state_of(cluster, final_target, {m.key for m in moves})
        retire = [n.name for n in cluster.nodes if n.name not in params.drain and occupied(initial.nodes[n.name])
                  and not occupied(target_state.nodes[n.name])]
    levels = level_names(params)
    planned = dict(target.assignment)
    watch = _Watch(cluster)
    accept = _Acceptance(cluster, params, free, planned, levels, watch).accept
    waves, stuck, final = plan_waves(cluster, moves, params, healthy, initial_bad, retire, accept, deadline, watch,
                                     pdbs, start)
    unplanned = (R_OUT_OF_TIME.split("{")[0], R_INTERRUPTED.split("{")[0])
    blocked = [Blocked(m.key, (R_UNPLANNED if why.startswith(unplanned) else R_STUCK).format(
        src=m.source, dst=m.target, why=why)) for m, why in stuck]
    return waves, blocked, final


class _Acceptance:
    """plan_waves' `accept` for waves_to: is the target with some pods on kube-scheduler's nodes instead as good
    on every level, and valid (the verifier's verdict: the free pods are placed pods, the others existing,
    their violations pre-existing when the input without the free pods has them)? Then it becomes the target.
    One state of the target is kept and changed in place (goal_values plus verify rebuilt three states per
    question: 4 s on a 1,000-node cluster)."""

    def __init__(self, cluster: Cluster, params: RebalanceParams, free: list[Pod], planned: dict[str, str],
                 levels: list[str], watch: "_Watch") -> None:
        self.cluster, self.params, self.free, self.planned, self.levels = cluster, params, free, planned, levels
        self.watch = watch
        self.keys = {p.key for p in free}
        self.full = {p.key: p.node_name for p in cluster.pods}
        self.full.update(planned)
        self.state = state_of(cluster, self.full, moved=self.keys)
        self.best = state_values(cluster, params, self.state, self.full, free, levels)
        self.pods = {p.key: p for p in cluster.pods}
        self._before: ClusterState | None = None
        self._before_bad: dict[str, set[str]] = {}
        self._judge: Lander | None = None  # the vectorized filters over the target state, made on first use
        self.origin = {p.key: p.node_name for p in free}

    def accept(self, changes: Mapping[str, str], or_staying: bool = False) -> bool:
        """Take `changes` (pod -> kube-scheduler's node) into the target when the target stays as good or gets
        better; `or_staying`: also when it is at least as good as those pods not moving at all (what the plan
        reaches when no cordon steers them to the planned nodes)."""
        nodes = {self.full[k] for k in changes} | set(changes.values())
        old = {k: self.full[k] for k in changes}
        floor = self.best
        if or_staying:
            stay = {k: self.origin[k] for k in changes}
            around = nodes | set(stay.values())
            occupied_planned = {n: occupied(self.state.nodes[n]) for n in around if n not in self.params.drain}
            self._move(stay)
            try:
                staying = self._values(stay, old, occupied_planned)
            finally:
                self._move(old)
            floor = min(floor, staying, key=lambda v: level_key(v, self.levels))
        occupied_before = {n: occupied(self.state.nodes[n]) for n in nodes if n not in self.params.drain}
        self._move(changes)
        ok = False
        try:
            values = self._values(changes, old, occupied_before)
            ok = level_key(values, self.levels) >= level_key(floor, self.levels) and self._valid(changes, nodes)
        finally:
            if not ok:
                self._move({k: self.planned[k] for k in changes})
        if ok:
            self.planned.update(changes)
            self.best = values
        return ok

    def _values(self, changes: Mapping[str, str], old: Mapping[str, str],
                occupied_before: Mapping[str, bool]) -> dict[str, int]:
        """The levels after `changes`, from the current target's (equal to `best`, every accepted change keeps
        them): counted on the nodes and pods they touch; utilisation and preference over the state."""
        out = dict(self.best)
        rest = [n for n in self.levels if n in ("utilization_max", "utilization_variance", "preference", "outside")]
        if rest:
            out.update(state_values(self.cluster, self.params, self.state, self.full, self.free, rest))
        if "empty_nodes" in out:
            out["empty_nodes"] += sum(int(was) - int(occupied(self.state.nodes[n]))
                                      for n, was in occupied_before.items())
        out["moves"] += sum(int(changes[k] != self.origin[k]) - int(old[k] != self.origin[k]) for k in changes)
        for d in self.params.drain:
            out[f"{DRAIN}:{d}"] += sum(int(changes[k] == d) - int(old[k] == d) for k in changes)
        return out

    def _move(self, where: Mapping[str, str]) -> None:
        for key, node in where.items():
            pod = self.state.nodes[self.state.node_of[key]].pods[key]
            self.state.remove(pod)
            self.state.add(pod, node)
            self.full[key] = node

    def _valid(self, changes: Mapping[str, str], nodes: set[str]) -> bool:
        """The verifier's verdict on the pods the changes can affect (as _Waves.verified: the target was valid,
        every other pod keeps its verdict)."""
        state = self.state
        keys: dict[str, None] = {}
        for name in nodes:
            keys.update(dict.fromkeys(state.nodes[name].pods))
        for k in changes:
            keys.update(dict.fromkeys(self.watch.affected(self.pods[k])))
        if self._judge is None:
            self._judge = Lander(state, self.params.seed, self.params.profile)
        judge_ = self._judge
        # the vectorized filters say which pods fail; only those are judged for their reasons
        failing = [pod for k in keys if k in state.node_of
                   for pod in [state.nodes[state.node_of[k]].pods[k]] if not judge_.passes(pod, state.node_of[k])]
        if any(pod.key in self.keys for pod in failing):
            return False
        verdicts = {pod.key: judge(pod, state.node_of[pod.key], state, self.params.profile) for pod in failing}
        suspects = [k for k, reasons in verdicts.items() if reasons and k not in self.keys and not self.pods[k].mirror]
        if any(reasons for k, reasons in verdicts.items() if k in self.keys):
            return False
        if not suspects:
            return True
        if self._before is None:
            unbound, _ = as_pending(self.cluster, self.free)
            self._before = ClusterState.from_cluster(unbound)
        todo = [k for k in suspects if k not in self._before_bad]
        if todo:
            found = judge_all(self._before, [self.pods[k] for k in todo], self.params.profile)
            self._before_bad.update((k, {r.plugin for r in found[k]}) for k in todo)
        return all(r.plugin in self._before_bad[k] for k in suspects for r in verdicts[k])


class _Watch:
    """Which pods' verdicts a pod moving can change, beyond the pods on the nodes it leaves and reaches: the pods
    whose required (anti-)affinity or DoNotSchedule spread selects it (`watchers`), and the pods its own required
    anti-affinity selects (their verdicts count it as an existing pod's term). Cached per pod."""

    def __init__(self, cluster: Cluster) -> None:
        self.pods = cluster.pods
        self.holders = [p for p in cluster.pods if _holds_terms(p)]
        # holders grouped by their selectors (a workload's replicas share them): a pod is matched once per group
        # (every holder asked, per pod: 18 s of a 500-node plan)
        self.groups: dict[tuple[Any, ...], list[int]] = {}
        for i, h in enumerate(self.holders):
            self.groups.setdefault(_selectors(h), []).append(i)
        self._watchers: dict[str, list[Pod]] = {}
        self._affected: dict[str, list[str]] = {}

    def watchers(self, pod: Pod) -> list[Pod]:
        found = self._watchers.get(pod.key)
        if found is None:
            hits = sorted(i for sels, idx in self.groups.items() if any(s.matches(pod.labels) for s in sels)
                          for i in idx)
            found = self._watchers[pod.key] = [self.holders[i] for i in hits]
        return found

    def affected(self, pod: Pod) -> list[str]:
        """The keys of the watchers and of the pods its required anti-affinity selects, and its own."""
        found = self._affected.get(pod.key)
        if found is None:
            sels = [t.label_selector for t in pod.affinity.anti_required if t.label_selector is not None]
            anti = [p.key for p in self.pods if any(s.matches(p.labels) for s in sels)] if sels else []
            keys = [pod.key] + [h.key for h in self.watchers(pod)] + anti
            found = self._affected[pod.key] = list(dict.fromkeys(keys))
        return found


def _placed(state: ClusterState, key: str) -> tuple[str, Pod, tuple[Any, ...]] | None:
    """(node, pod, what identical pods on that node share: one verdict) of a placed pod; None when it is not placed."""
    node = state.node_of.get(key)
    if node is None:
        return None
    pod = state.nodes[node].pods[key]
    return node, pod, (node, pod_signature(pod, frozenset(pod.labels)), tuple(sorted(pod.labels.items())))
