"""The descheduler simulated, as `simulate` is kube-scheduler's loop: one cycle (every profile's deschedule
plugins, then every profile's balance plugins, as upstream's runProfiles; one eviction counter for the cycle),
then kube-scheduler placing each evicted pod's replacement (podplan's simulator, with preemption and the
user's scheduler profiles), then the policy's verdict on the state reached. `cycles` repeats it until a cycle
evicts nothing (converged) or reaches a state seen before (a loop)."""
from __future__ import annotations

import time
from dataclasses import dataclass, replace

from ...models.objects import Cluster, Pod
from ..greedy import NOT_SCHEDULED, simulate
from ..rebalance.movable import as_pending, goes_with_node
from .evictor import Counts, Evictor
from .plugins import PLUGINS, Snapshot, classify
from .policy import HIGH, LOW, DeschedulerPolicy

MAX_CYCLES = 10
ELSEWHERE, SAME_NODE, NEW_VIOLATION, NOWHERE = "elsewhere", "same-node", "new-violation", "nowhere"
NOT_SIMULATED = "not-simulated"  # the time limit stopped kube-scheduler's simulation before this replacement


@dataclass(frozen=True)
class Eviction:
    pod: str
    plugin: str
    source: str
    target: str  # "" when the replacement stays pending
    landed: str  # elsewhere | same-node | new-violation | nowhere


@dataclass(frozen=True)
class Verdict:
    outside: tuple[str, ...]  # nodes outside the utilisation thresholds (LowNodeUtilization: above target)
    under: tuple[str, ...]  # underutilised nodes
    violations: tuple[str, ...]  # pods a plugin other than the utilisation ones would still evict
    plugins: tuple[str, ...] = ()  # the plugin that would evict each of them
    empty: tuple[str, ...] = ()  # nodes holding no pod but DaemonSet and mirror pods (removable)


@dataclass(frozen=True)
class Cycle:
    evictions: tuple[Eviction, ...]
    verdict: Verdict
    cluster: Cluster  # the state after the replacements landed
    preempted: tuple[str, ...] = ()
    stopped: bool = False  # the time limit stopped the landing: some replacements were not simulated


@dataclass(frozen=True)
class Run:
    cycles: tuple[Cycle, ...]
    converged: bool
    loops: bool
    loop_from: int | None  # loops: the cycle whose end state came back (0: the input's state); None otherwise
    initial: Verdict
    skipped: str = ""  # why no cycle was simulated (the time limit), "" when they were


def nodes_of(cluster: Cluster, policy: DeschedulerPolicy) -> list:
    sel = policy.node_selector
    return [n for n in cluster.nodes if sel is None or sel.matches(n.labels)]


def decide(cluster: Cluster, policy: DeschedulerPolicy, limits: bool = True) -> list[tuple[Pod, str]]:
    """One cycle's evictions, (pod, plugin) in order; limits=False: the policy's eviction limits lifted."""
    nodes = nodes_of(cluster, policy)
    snap = Snapshot.of(cluster, nodes)
    if not limits:
        policy = replace(policy, max_per_node=None, max_per_namespace=None, max_total=None)
    counts = Counts(policy, on_evict=snap.drop, cluster=cluster if limits else None)
    for stage in ("deschedule", "balance"):
        for prof in policy.profiles:
            ev = Evictor(prof.evictor, cluster, counts, nodes, snap.pods_on)
            for args in getattr(prof, stage):
                if not limits and args.name in (LOW, HIGH):
                    continue
                PLUGINS[args.name](args, snap, ev)
    return counts.evicted


def verdict(cluster: Cluster, policy: DeschedulerPolicy) -> Verdict:
    """The policy's goals on a state: nodes outside the utilisation thresholds, and the pods the other plugins
    would evict (their violations), limits lifted."""
    nodes = nodes_of(cluster, policy)
    snap = Snapshot.of(cluster, nodes)
    outside: list[str] = []
    under: list[str] = []
    for args in policy.plugins():
        if args.name == LOW:
            c = classify(args, snap)
            outside += [n for n in c.high if n not in outside]
            under += [n for n in c.low if n not in under]
        elif args.name == HIGH:
            c = classify(args, snap)
            under += [n for n in c.low if n not in under]
    empty = [n.name for n in nodes if all(goes_with_node(p) for p in snap.pods_on.get(n.name, []))]
    found = decide(cluster, policy, limits=False)
    bad = dict((p.key, plugin) for p, plugin in reversed(found))
    keys = tuple(dict.fromkeys(p.key for p, _ in found))
    return Verdict(tuple(outside), tuple(under), keys, tuple(bad[k] for k in keys), tuple(empty))


def one_cycle(cluster: Cluster, policy: DeschedulerPolicy, profile, seed: int = 0,
              deadline: float | None = None) -> Cycle:
    """`deadline` (perf_counter seconds): kube-scheduler's simulation of the replacements stops there (the
    command's time limit); the replacements it did not reach are NOT_SIMULATED, and the verdict is the state's
    with them not bound anywhere."""
    evicted = decide(cluster, policy)
    if not evicted:
        return Cycle((), verdict(cluster, policy), cluster)
    pods = [p for p, _ in evicted]
    unbound, origin = as_pending(replace(cluster, pending=()), pods)
    plan = simulate(unbound, seed, profile=profile, protect_placed=False, preemption=True, deadline=deadline)
    unreached = {k for k, why in plan.pending.items() if why.startswith(NOT_SCHEDULED.split("(")[0])}
    removed = plan.removed
    placed = plan.placements
    after_pods = tuple(p for p in unbound.pods if p.key not in removed) + tuple(
        replace(p, node_name=placed[p.key]) for p in unbound.pending if p.key in placed)
    after = replace(cluster, pods=after_pods, pending=())
    v = verdict(after, policy)
    bad = set(v.violations)
    out = []
    for pod, plugin in evicted:
        to = placed.get(pod.key, "")
        if pod.key in unreached:
            landed = NOT_SIMULATED
        elif not to:
            landed = NOWHERE
        elif to == origin[pod.key]:
            landed = SAME_NODE
        elif pod.key in bad or to in v.outside:
            landed = NEW_VIOLATION
        else:
            landed = ELSEWHERE
        out.append(Eviction(pod.key, plugin, origin[pod.key], to, landed))
    return Cycle(tuple(out), v, after, tuple(sorted(removed)), bool(unreached))


def _signature(cluster: Cluster) -> frozenset:
    return frozenset((p.key, p.node_name) for p in cluster.pods)


def run(cluster: Cluster, policy: DeschedulerPolicy, profile, seed: int = 0, max_cycles: int = MAX_CYCLES,
        stop_at: float | None = None, deadline: float | None = None) -> Run:
    """Cycles until one evicts nothing (converged), a state comes back (loops), max_cycles, or `stop_at`
    (perf_counter seconds: no new cycle starts after it; the first always runs); `deadline`: the landing of a
    cycle's replacements stops there (the cycle is then the last, marked `stopped`)."""
    base = replace(cluster, pending=())
    seen = {_signature(base): 0}
    cycles: list[Cycle] = []
    state = base
    for i in range(1, max_cycles + 1):
        c = one_cycle(state, policy, profile, seed, deadline)
        if not c.evictions:
            if not cycles:
                cycles.append(c)
            return Run(tuple(cycles), True, False, None, verdict(base, policy))
        cycles.append(c)
        sig = _signature(c.cluster)
        if sig in seen:
            return Run(tuple(cycles), False, True, seen[sig], verdict(base, policy))
        seen[sig] = i
        state = c.cluster
        if c.stopped or (stop_at is not None and time.perf_counter() >= stop_at):
            break
    return Run(tuple(cycles), False, False, None, verdict(base, policy))
