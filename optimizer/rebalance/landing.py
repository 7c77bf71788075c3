"""Landing: where kube-scheduler puts the replacements of a wave, and the cordons that make it put them where
the plan says.

The replacements of a wave are scheduled by kube-scheduler's cycle without podplan's placed-pod guard
(optimizer.vectorized.VectorScheduler, identical to greedy.Scheduler; `Lander`) on the state after the wave's
evictions, in eviction order (priority, pods with
required affinity last, fewest feasible nodes first), with the drained nodes (and the nodes `pack` empties)
cordoned: where they land "if left alone". Where that differs from the plan, nodes that received a
replacement they should not are cordoned for the wave (never a node the wave must fill), until the
simulation lands every replacement as planned (`land`); what is left missing is for the caller (waves.py) to
settle: take kube-scheduler's nodes when the target stays as good, or defer the moves that took another's
node. Replacements of one controller are interchangeable: landing is compared as counts per
(controller, node).
"""
from __future__ import annotations

import random
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

import numpy as np

from ...models.objects import Node, Pod

from ..framework import Profile, Reason, run_filters
from ..greedy import Scheduler
from ..nodeunschedulable.filtering import ERR_REASON_UNSCHEDULABLE, NAME as NODE_UNSCHEDULABLE, fits
from ..registry import DEFAULT_PROFILE
from ..state import ClusterState
from ..vectorized import VectorScheduler
from ..verify import judge
from .plan import Move


TEMPORARY_CORDONS = (20, 0.05)  # a wave cordons at most max(20, 5 % of the nodes) to steer its replacements
# (kube-scheduler's next choice on a 1,000-node cluster is often yet another node: steering by cordons alone ran
# hundreds of trials per wave); the moves still missing then wait for a later wave


class _Cordons:
    """NodeUnschedulable's vectorized form with some nodes cordoned on top of the input's: a cordoned node
    rejects the pods that do not tolerate node.kubernetes.io/unschedulable:NoSchedule, with the plugin's own
    reason, as the Node objects with spec.unschedulable would (no other plugin reads it)."""

    def __init__(self, rule: Any, cordoned: np.ndarray, node: Node) -> None:
        self.rule, self.cordoned = rule, cordoned
        self.node = replace(node, unschedulable=True)  # any cordoned node: fits() reads only the flag

    def filter(self, pod: Pod) -> np.ndarray | None:
        base = self.rule.filter(pod)
        if not self.cordoned.any() or fits(pod, self.node):
            return base
        return ~self.cordoned if base is None else base & ~self.cordoned

    def reasons(self, pod: Pod, node_index: int) -> tuple[Reason, ...]:
        if self.cordoned[node_index] and not fits(pod, self.node):
            return (Reason(NODE_UNSCHEDULABLE, ERR_REASON_UNSCHEDULABLE, unresolvable=True),)
        return self.rule.reasons(pod, node_index)


class Lander:
    """kube-scheduler for a wave's replacements over the state before the wave (waves.py keeps it up to date):
    one vectorized scheduler (optimizer.vectorized, property-tested identical to greedy.Scheduler) follows the
    state through its change journal; each trial starts it afresh (seeded choice, rotation from node 0) as a
    new kube-scheduler would. A plain Scheduler per trial took a minute per wave on a 1,000-node cluster. A
    profile with a rule that has no vectorized form (a scheduler configuration's, a toy rule) gets the plain
    loop and the verifier's judge instead, as greedy.simulate does."""

    def __init__(self, state: ClusterState, seed: int, profile: Profile = DEFAULT_PROFILE) -> None:
        self.state, self.seed, self.profile = state, seed, profile
        # kube-scheduler exactly: podplan's placed-pod guard is not part of kube-scheduler
        vectorized = all(p.vector is not None for p in profile.plugins if p.filter or p.score)
        self.sched = VectorScheduler(state, seed, profile=profile, protect_placed=False) if vectorized else None
        self.at = [i for i, p in enumerate(profile.filters) if p.name == NODE_UNSCHEDULABLE]
        self.index = {name: i for i, name in enumerate(state.nodes)}
        self.max_cordons = max(TEMPORARY_CORDONS[0], int(TEMPORARY_CORDONS[1] * len(self.index)))
        # replacements are queued after every pod there is (a replacement keeps its pod's order)
        self.top = max((p.order for p, _ in state.all_pods()), default=0)

    def passes(self, pod: Pod, node: str) -> bool:
        """Does `pod`, bound to `node` in the state, pass every Filter there, judged with itself removed (the
        verifier's judge, from the vectorized filters: milliseconds where judge recounts the cluster)?"""
        if self.sched is None:
            return not judge(pod, node, self.state, self.profile)
        self.state.remove(pod)
        try:
            # spec.nodeName cleared: NodeName passes on the pod's own node either way (an existing pod runs on its
            # spec.nodeName), and the filters' per-spec caches then serve every pod of a workload, not one per node
            return bool(self.sched.feasible(replace(pod, node_name=""))[self.index[node]])
        finally:
            self.state.add(pod, node)

    def choices(self, pod: Pod) -> int:
        """The nodes `pod` (not in the state) passes every Filter on."""
        if self.sched is None:
            return sum(1 for v in run_filters(pod, self.state, self.profile.filters) if v.feasible)
        return int(self.sched.feasible(pod).sum())

    def simulate(self, wave: Sequence[Move], cordons: Iterable[str]) -> list[str]:
        """Where kube-scheduler binds each replacement of `wave` (in eviction order), with `cordons`
        unschedulable. The wave is evicted from the state, its replacements scheduled, and all of it undone:
        the state is left as it was."""
        if self.sched is None:
            return self._simulate_plain(wave, cordons)
        sched = self.sched
        cordoned = np.zeros(len(self.index), bool)
        for n in cordons:
            cordoned[self.index[n]] = True
        plain = list(sched.filters)
        first = next(iter(self.state.nodes.values())).node if self.state.nodes else None
        with self._trial(wave) as (replacements, bound):
            try:
                if self.at and first is not None:
                    sched.filters[self.at[0]] = _Cordons(plain[self.at[0]], cordoned, first)
                sched.rng, sched.next_start = random.Random(self.seed), 0
                out = _schedule_all(sched, replacements, bound)
            finally:
                sched.filters[:] = plain
        return [out[m.key] for m in wave]

    def _simulate_plain(self, wave: Sequence[Move], cordons: Iterable[str]) -> list[str]:
        """simulate() with greedy.Scheduler: a new one per trial (its caches read the cordons), the cordoned
        nodes' Node objects swapped for the trial."""
        cordoned = [self.state.nodes[n] for n in dict.fromkeys(cordons)]
        originals = [info.node for info in cordoned]
        with self._trial(wave) as (replacements, bound):
            try:
                for info in cordoned:
                    info.node = replace(info.node, unschedulable=True)
                sched = Scheduler(self.state, self.seed, profile=self.profile, protect_placed=False)
                out = _schedule_all(sched, replacements, bound)
            finally:
                for info, node in zip(cordoned, originals):
                    info.node = node
        return [out[m.key] for m in wave]

    @contextmanager
    def _trial(self, wave: Sequence[Move]) -> Iterator[tuple[list[Pod], list[Pod]]]:
        """The wave's pods evicted from the state for one trial: (their replacements, queued after every pod
        there is; the list the trial appends the pods it binds to). On exit the bound pods are unbound and the
        wave's pods put back: the state is as it was."""
        replacements = [replace(m.pod, node_name="", order=self.top + 1 + i) for i, m in enumerate(wave)]
        bound: list[Pod] = []
        for m in wave:
            self.state.remove(m.pod)
        try:
            yield replacements, bound
        finally:
            for pod in bound:
                self.state.remove(pod)
            for m in wave:
                self.state.add(m.pod, m.source)


def land(lander: Lander, cordoned: tuple[str, ...], wave: list[Move],
         ) -> tuple[tuple[str, ...], list[str], list[str], list[int]]:
    """(temporary cordons, outcome left alone, outcome with cordons, indexes of moves that still miss);
    `cordoned`: the nodes cordoned for the whole plan (drained, and those `pack` empties)."""
    alone = lander.simulate(wave, cordoned)
    targets = {m.target for m in wave}
    temp: list[str] = []
    outcome = alone
    while True:
        missing = mismatches(wave, outcome)
        if not missing:
            return tuple(temp), alone, outcome, []
        extra = [outcome[i] for i in missing if outcome[i] and outcome[i] not in targets and outcome[i] not in temp]
        extra += [n for n in _over_receivers(wave, outcome) if n not in targets and n not in temp]
        extra = list(dict.fromkeys(extra))
        if not extra or len(temp) + len(extra) > lander.max_cordons:
            return tuple(temp), alone, outcome, missing
        temp.extend(extra)
        outcome = lander.simulate(wave, cordoned + tuple(temp))


def controller_key(pod: Pod) -> str:
    """Replacements of one controller are interchangeable: the controller names them."""
    owner = pod.controller
    return f"{pod.namespace}/{owner.kind}/{owner.name}" if owner else pod.key


def mismatches(wave: Sequence[Move], outcome: Sequence[str]) -> list[int]:
    """Indexes of moves whose controller's replacements do not land on the planned nodes (as counts)."""
    planned: dict[str, Counter[str]] = defaultdict(Counter)
    got: dict[str, Counter[str]] = defaultdict(Counter)
    for m, node in zip(wave, outcome):
        planned[controller_key(m.pod)][m.target] += 1
        got[controller_key(m.pod)][node] += 1
    bad = {k for k in planned if planned[k] != got[k]}
    return [i for i, m in enumerate(wave) if controller_key(m.pod) in bad]


def _over_receivers(wave: Sequence[Move], outcome: Sequence[str]) -> list[str]:
    planned: Counter[str] = Counter(m.target for m in wave)
    got: Counter[str] = Counter(n for n in outcome if n)
    return [n for n in got if got[n] > planned.get(n, 0)]


def assign_landing(wave: Sequence[Move], outcome: Sequence[str]) -> list[str]:
    """Per move, the node its controller's replacement lands on: the planned one where the counts allow."""
    pool: dict[str, Counter[str]] = defaultdict(Counter)
    for m, node in zip(wave, outcome):
        pool[controller_key(m.pod)][node] += 1
    out = []
    for m in wave:
        c = pool[controller_key(m.pod)]
        if c[m.target] > 0:
            c[m.target] -= 1
            out.append(m.target)
        else:
            other = next((n for n, k in sorted(c.items()) if k > 0), "")
            if other:
                c[other] -= 1
            out.append(other)
    return out


def _schedule_all(sched: Any, pods: Sequence[Pod], bound: list[Pod]) -> dict[str, str]:
    """Each pod scheduled in queue order (priority, then order): pod key -> node ("" when it stays pending);
    the pods bound are appended to `bound` (the caller unbinds them)."""
    out = {}
    for pod in sorted(pods, key=lambda p: (-p.priority, p.order)):
        node, _ = sched.schedule(pod)
        out[pod.key] = node or ""
        if node:
            bound.append(pod)
    return out
