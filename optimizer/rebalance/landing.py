"""Landing: where kube-scheduler puts the replacements of a wave, and the cordons that make it put them where
the plan says.

The replacements of a wave are scheduled by optimizer.greedy.Scheduler (kube-scheduler's cycle, without
podplan's placed-pod guard) on the state after the wave's evictions, in eviction order (priority, pods with
required affinity last, fewest feasible nodes first), with the drained nodes (and the nodes `pack` empties)
cordoned: where they land "if left alone". Where that differs from the plan, nodes that received a
replacement they should not are cordoned for the wave (never a node the wave must fill), until the
simulation lands every replacement as planned (`land`); what is left missing is for the caller (waves.py) to
settle: take kube-scheduler's nodes when the target stays as good, or defer the moves that took another's
node. Replacements of one controller are interchangeable: landing is compared as counts per
(controller, node).
"""
from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace

from ...models.objects import Cluster, Pod

from ..framework import Profile
from ..greedy import Scheduler
from ..registry import DEFAULT_PROFILE
from ..state import ClusterState
from .plan import Move


def simulate(cluster: Cluster, where: Mapping[str, str], moved: set[str], seed: int, wave: Sequence[Move],
             cordons: Iterable[str], profile: Profile = DEFAULT_PROFILE) -> list[str]:
    """Where kube-scheduler binds each replacement of `wave` (in eviction order), with `cordons`
    unschedulable; `where`/`moved`: every pod's node before the wave, and the pods already replaced."""
    cordons = set(cordons)
    nodes = [replace(n, unschedulable=True) if n.name in cordons else n for n in cluster.nodes]
    keys = {m.key for m in wave}
    rest = {k: v for k, v in where.items() if k not in keys}
    pods = [(replace(p, node_name="") if p.key in moved else p, rest[p.key])
            for p in cluster.pods if p.key not in keys]
    state = ClusterState.from_cluster(replace(cluster, nodes=tuple(nodes)), pods)
    sched = _scheduler(state, seed, profile)
    top = max((p.order for p in cluster.pods), default=0)
    replacements = [replace(m.pod, node_name="", order=top + 1 + i) for i, m in enumerate(wave)]
    out = {}
    for pod in sorted(replacements, key=lambda p: (-p.priority, p.order)):
        node, _ = sched.schedule(pod)
        out[pod.key] = node or ""
    return [out[m.key] for m in wave]


def land(cluster: Cluster, where: Mapping[str, str], moved: set[str], seed: int, cordoned: tuple[str, ...],
         wave: list[Move], profile: Profile = DEFAULT_PROFILE) -> tuple[tuple[str, ...], list[str], list[str], list[int]]:
    """(temporary cordons, outcome left alone, outcome with cordons, indexes of moves that still miss);
    `cordoned`: the nodes cordoned for the whole plan (drained, and those `pack` empties)."""
    alone = simulate(cluster, where, moved, seed, wave, cordoned, profile)
    targets = {m.target for m in wave}
    temp: list[str] = []
    outcome = alone
    while True:
        missing = _mismatches(wave, outcome)
        if not missing:
            return tuple(temp), alone, outcome, []
        extra = [outcome[i] for i in missing if outcome[i] and outcome[i] not in targets and outcome[i] not in temp]
        extra += [n for n in _over_receivers(wave, outcome) if n not in targets and n not in temp]
        extra = list(dict.fromkeys(extra))
        if not extra:
            return tuple(temp), alone, outcome, missing
        temp.extend(extra)
        outcome = simulate(cluster, where, moved, seed, wave, cordoned + tuple(temp), profile)


def _scheduler(state: ClusterState, seed: int, profile: Profile) -> Scheduler:
    # kube-scheduler exactly: podplan's placed-pod guard is not part of kube-scheduler
    return Scheduler(state, seed, profile=profile, protect_placed=False)


def controller_key(pod: Pod) -> str:
    """Replacements of one controller are interchangeable: the controller names them."""
    owner = pod.controller
    return f"{pod.namespace}/{owner.kind}/{owner.name}" if owner else pod.key


def _mismatches(wave: Sequence[Move], outcome: Sequence[str]) -> list[int]:
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

