"""`podplan compare`: what greedy scheduling costs, side by side with the optimum.

Columns:
- greedy: the kube-scheduler simulator (optimizer.greedy.simulate) on the pending pods;
- optimal: solve() on the same pending pods, warm-started and floored by the greedy plan;
- when some running pods are movable (optimizer.movable: a controller recreates them, not DaemonSet, not
  mirror): current, the placement the real scheduler made (pending pods of the input stay pending), and
  optimal re-placement, solve() on the movable pods unbound plus the pending pods, warm-started by the
  current placement completed with greedy's (used only when the verifier accepts it).

Every number about a placement comes from the verifier: placed per priority, preference and its terms from
verify(); utilization and nodes used from the verifier's own final state (verify.final_state); the per
ScheduleAnyway-constraint skew is the breakdown of verify's schedule_anyway_skew term (same group rule as
optimizer.objective, which exposes only the total; the tests check that the breakdown sums to it).
Only status, bound, gap, time and pending reasons come from the plans themselves.
"""
from __future__ import annotations

import time

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from ..models.errors import PlanInvalidError
from ..models.objects import Cluster, Pod
from ..models.selectors import LabelSelector

from .framework import Profile
from .rebalance.movable import MovePolicy, as_pending, goes_with_node, movable
from .plan import Plan
from .podtopologyspread.common import SpreadConstraint, counts_toward, node_eligible, own_constraints
from .policy import Policy
from .problem import pod_signature, visible_label_keys
from .registry import DEFAULT_PROFILE
from .defaultpreemption import after_preemption
from .disruption import budget, guards, pod_ready, spends
from .defaultpreemption.batch import solve_preempt
from .pipeline import Deadline, greedy_plan, optimal_plan, placed_pod_rules, reserve
from .runner import NEVER, Interrupt, SolverParams, Status
from .state import ClusterState
from .verify import Report, final_state, verify

GREEDY, OPTIMAL, CURRENT, REPLACEMENT = "greedy", "optimal", "current", "replacement"
TITLES = {GREEDY: "greedy", OPTIMAL: "optimal", CURRENT: "current", REPLACEMENT: "optimal re-placement"}
TERM_TITLES = {"node_affinity": "node affinity", "pod_affinity": "pod affinity",
               "pod_anti_affinity": "pod anti-affinity", "prefer_no_schedule": "PreferNoSchedule taints",
               "schedule_anyway_skew": "ScheduleAnyway skew"}
CURRENT_STATUS = "INPUT"  # the current column is the input, not a plan
PENDING_IN_INPUT = "pending in the input (not scheduled yet)"


@dataclass(frozen=True)
class Stats:
    max: float
    mean: float
    stddev: float  # population standard deviation over all nodes


def stats(values: Sequence[float]) -> Stats:
    if not values:
        return Stats(0.0, 0.0, 0.0)
    mean = sum(values) / len(values)
    return Stats(max(values), mean, math.sqrt(sum((v - mean) ** 2 for v in values) / len(values)))


@dataclass(frozen=True)
class Usage:
    """Per node, requested / allocatable of cpu and memory (actual requests, as NodeResourcesFit counts)."""

    cpu: dict[str, float]
    memory: dict[str, float]

    @property
    def cpu_stats(self) -> Stats:
        return stats(list(self.cpu.values()))

    @property
    def memory_stats(self) -> Stats:
        return stats(list(self.memory.values()))


def _fraction(used: int, allocatable: int) -> float:
    return used / allocatable if allocatable > 0 else 0.0


def usage(state: ClusterState) -> Usage:
    cpu, mem = {}, {}
    for name, info in state.nodes.items():
        alloc = info.node.allocatable
        cpu[name] = _fraction(info.requested.get("cpu", 0), alloc.get("cpu", 0))
        mem[name] = _fraction(info.requested.get("memory", 0), alloc.get("memory", 0))
    return Usage(cpu, mem)


def describe_selector(sel: LabelSelector | None) -> str:
    """kubectl's selector text: app=web,tier in (a,b),!canary."""
    if sel is None:
        return "<none>"
    parts = [f"{k}={v}" for k, v in sel.match_labels]
    for r in sel.match_expressions:
        op = r.operator
        if op == "Exists":
            parts.append(r.key)
        elif op == "DoesNotExist":
            parts.append(f"!{r.key}")
        elif op in ("In", "NotIn"):
            parts.append(f"{r.key} {op.lower()} ({','.join(r.values)})")
        else:
            parts.append(f"{r.key} {'>' if op == 'Gt' else '<'} {r.values[0]}")
    return ",".join(parts) or "<all>"


@dataclass(frozen=True)
class SkewGroup:
    """One ScheduleAnyway group of the preference score (notes/semantics.md) and its skew in a final state."""

    namespace: str
    topology_key: str
    selector: str
    max_skew: int
    skew: int

    @property
    def excess(self) -> int:
        return max(0, self.skew - self.max_skew)

    @property
    def label(self) -> str:
        return f"{self.namespace} {self.topology_key} {self.selector} maxSkew {self.max_skew}"


def schedule_anyway_groups(state: ClusterState) -> list[SkewGroup]:
    """Each ScheduleAnyway group's skew; Σ excess × multiplier is verify's schedule_anyway_skew term."""
    groups: dict[tuple[object, ...], tuple[Pod, SpreadConstraint]] = {}
    for pod, _info in sorted(state.all_pods(), key=lambda pi: pi[0].order):
        for c in own_constraints(pod, "ScheduleAnyway"):
            groups.setdefault((pod.namespace, c.topology_key, c.selector, c.max_skew), (pod, c))
    out = []
    for first, c in groups.values():
        counts: dict[str, int] = {}
        for info in state.nodes.values():
            node = info.node
            if c.topology_key not in node.labels or not node_eligible(c, first, node):
                continue
            value = node.labels[c.topology_key]
            counts[value] = counts.get(value, 0) + sum(
                1 for q in info.pods.values() if counts_toward(c.selector, first.namespace, q))
        skew = max(counts.values()) - min(counts.values()) if counts else 0
        out.append(SkewGroup(first.namespace, c.topology_key, describe_selector(c.selector), c.max_skew, skew))
    return out


@dataclass(frozen=True)
class Column:
    """One placement judged by the verifier."""

    name: str
    status: str
    to_place: dict[int, int]  # priority -> pods this column had to place (descending priority)
    report: Report
    placements: dict[str, str]
    pending: dict[str, str]  # pod -> why it stays pending
    usage: Usage
    skew: tuple[SkewGroup, ...]
    nodes_used: int  # nodes holding any pod
    nodes_used_apps: int  # nodes holding a pod that is neither a DaemonSet pod nor a mirror pod
    running: int  # pods in the final state
    bound: dict[str, object] = field(default_factory=dict)
    gap: float | None = None
    wall_seconds: float | None = None
    notes: tuple[str, ...] = ()
    victims: int = 0  # running pods the plan's preemptions evict (compare --preempt)
    # the batch's pods placed per priority: every column counts the same pods (the input's pending ones), so a
    # column whose preemption recreated evicted pods is not judged on a larger denominator
    placed_batch: dict[int, int] = field(default_factory=dict)
    recreated: tuple[int, int] = (0, 0)  # evicted pods' replacements: (placed, made)
    pdb_broken: tuple[str, ...] = ()  # PodDisruptionBudgets the plan's preemptions evict past, in words

    @property
    def title(self) -> str:
        return TITLES[self.name]

    @property
    def violations(self) -> int:
        return sum(1 for v in self.report.violations if not v.preexisting)


@dataclass(frozen=True)
class Difference:
    pod: str
    a: str  # node in the first column of the pair, "" when pending there
    b: str


@dataclass(frozen=True)
class Comparison:
    nodes: tuple[str, ...]
    before: Usage  # the input state: existing pods only
    columns: tuple[Column, ...]
    differences: dict[tuple[str, str], tuple[Difference, ...]]
    movable: int
    multipliers: Policy

    def column(self, name: str) -> Column | None:
        return next((c for c in self.columns if c.name == name), None)


def judge_column(name: str, cluster: Cluster, plan: Plan, m: Policy, *, must_verify: bool = True,
                 profile: Profile = DEFAULT_PROFILE, kube: bool = False) -> Column:
    """Verify `plan` on `cluster` and collect the column's numbers from the verifier's final state (after the
    plan's preemptions, if any: their victims gone, their controllers' new pods pending). kube: the plan is
    kube-scheduler's, whose final state may break placed pods' rules (counted in `violations`, not refused)."""
    batch = {p.key: p.priority for p in cluster.pending}
    broken = pdb_overruns(cluster, plan.removed)
    cluster = after_preemption(cluster, plan)
    report = verify(cluster, plan.placements, m, profile)
    allowed = placed_pod_rules(profile) if kube else frozenset()
    bad = [v for v in report.violations if not v.preexisting and v.plugin not in allowed]
    if must_verify and bad:
        raise PlanInvalidError(f"the {TITLES[name]} plan ({plan.status}) failed verification: {len(bad)} "
                               f"violation(s), first: {bad[0].pod} on {bad[0].node}: {bad[0].plugin}: {bad[0].reason}")
    placed = {k: n for k, n in plan.placements.items() if n}
    state = final_state(cluster, placed)
    to_place: Counter[int] = Counter(batch.values())
    placed_batch: Counter[int] = Counter(batch[k] for k in placed if k in batch)
    made = [p.key for p in plan.recreated]
    nodes_used = sum(1 for info in state.nodes.values() if info.pods)
    apps = sum(1 for info in state.nodes.values() if any(not goes_with_node(p) for p in info.pods.values()))
    return Column(
        name=name, status=plan.status, to_place=dict(sorted(to_place.items(), reverse=True)), report=report,
        placements=placed, pending=dict(plan.pending), usage=usage(state), skew=tuple(schedule_anyway_groups(state)),
        nodes_used=nodes_used, nodes_used_apps=apps, running=len(state.node_of), bound=dict(plan.bound),
        gap=plan.gap, wall_seconds=None if name == CURRENT else plan.wall_seconds, notes=plan.notes,
        victims=len(plan.removed),
        placed_batch={q: placed_batch.get(q, 0) for q in sorted(to_place, reverse=True)},
        recreated=(sum(1 for k in made if k in placed), len(made)), pdb_broken=broken)


def pdb_overruns(cluster: Cluster, victims: frozenset[str]) -> tuple[str, ...]:
    """The PodDisruptionBudgets that evicting `victims` breaks (more evictions spending the budget than its
    disruptionsAllowed), in words. kube-scheduler's preemption breaks one when no other choice is left; solve
    --preempt never does (without --allow-pdb-violations)."""
    if not victims or not cluster.pdbs:
        return ()
    healthy = [(p, pod_ready(p)) for p in cluster.pods]
    out = []
    for pdb in cluster.pdbs:
        b = budget(pdb, healthy, cluster.workloads)
        spent = sum(1 for p, ok in healthy if p.key in victims and guards(pdb, p) and spends(p, ok, b))
        if spent > b.allowed:
            out.append(f"{pdb.key}: {spent} evicted, {b.allowed} allowed")
    return tuple(out)


def greedy_breaks(greedy: Column, optimal: Column) -> str:
    """Why the optimum places fewer pods than kube-scheduler ("" when it does not, or for another reason):
    greedy's extra pods break placed pods' rules in its final state, which podplan's plans never do."""
    broken = [v for v in greedy.report.violations if not v.preexisting]
    fewer = greedy.report.placed - optimal.report.placed
    if fewer <= 0 or not broken:
        return ""
    pods = sorted({v.pod for v in broken})
    rules = ", ".join(sorted({v.plugin for v in broken}))
    return (f"greedy places {fewer} more pod(s), but its final state breaks the {rules} rules of {len(pods)} "
            f"placed pod(s) ({', '.join(pods[:3])}{', ...' if len(pods) > 3 else ''}): kube-scheduler checks "
            "only the incoming pod's rules; the optimum keeps every pod's rules in the final state")


def differences(pods: Sequence[Pod], a: Mapping[str, str], b: Mapping[str, str]) -> tuple[Difference, ...]:
    """Pods whose node differs between placements a and b ("" = pending), identical replicas paired up.

    Pods that no rule can tell apart (same problem.pod_signature, workload and PodGroup) are interchangeable:
    b holding replica 1 where a holds replica 2 is no difference. Within such a group, each node's pods in a
    are matched with b's pods on the same node first; only the rest is listed, each beside one of b's
    unmatched nodes, in input order.
    """
    keys = visible_label_keys(pods)
    groups: dict[tuple[object, ...], list[Pod]] = {}
    for p in pods:
        groups.setdefault((pod_signature(p, keys), p.workload, p.pod_group), []).append(p)
    out: list[Difference] = []
    for members in groups.values():
        left = Counter(b.get(p.key, "") for p in members)
        unmatched = []
        for p in members:
            node = a.get(p.key, "")
            if left[node] > 0:
                left[node] -= 1
            else:
                unmatched.append(p)
        spare = []  # b's nodes left unmatched, as many as unmatched pods
        for p in members:
            node = b.get(p.key, "")
            if left[node] > 0:
                left[node] -= 1
                spare.append(node)
        out.extend(Difference(p.key, a.get(p.key, ""), n) for p, n in zip(unmatched, spare))
    order = {p.key: i for i, p in enumerate(pods)}
    return tuple(sorted(out, key=lambda d: order[d.pod]))


def compare(cluster: Cluster, params: SolverParams | None = None, policy: Policy | None = None,
            move_policy: MovePolicy = MovePolicy(), *, deadline: Deadline | None = None,
            interrupt: Interrupt = NEVER, profile: Profile = DEFAULT_PROFILE, preempt: bool = False,
            allow_pdb_violations: bool = False) -> Comparison:
    """Greedy vs optimal on the pending pods, and current vs optimal re-placement when pods are movable.

    Time: the whole comparison fits in `deadline` (default: params.time_limit from now). With movable pods the
    plain optimum gets the first half of what is left and the re-placement the rest; the re-placement starts
    from the plain optimum (every running pod where it is, the pending pods where the optimum puts them), so it
    can only do better: it has strictly more freedom. `profile`: the scheduler profile every column is
    scheduled and judged by (a KubeSchedulerConfiguration's, optimizer.profiles). `preempt`: greedy is
    kube-scheduler with its DefaultPreemption, the optimum is solve --preempt's (lower-priority running pods may
    be evicted), each judged after its own preemptions; the re-placement columns are left out then.
    """
    params = params or SolverParams()
    policy = policy or Policy()
    m = policy
    deadline = deadline or Deadline.start(params.time_limit)
    nodes = {n.name for n in cluster.nodes}
    moving = [p for p in movable(cluster, move_policy) if p.node_name in nodes] if not preempt else []
    # the first half keeps the command's start, so that what it reports (time spent, limit needed) is the command's
    first = deadline if not moving else Deadline(deadline.started,
                                                 time.perf_counter() - deadline.started + deadline.left() / 2)
    if preempt:
        greedy = greedy_plan(cluster, params.seed, gang=params.gang, profile=profile, interrupt=interrupt,
                             preemption=True, kube=True)
        optimal = solve_preempt(cluster, params, policy, deadline=first.at - reserve(cluster, first.limit),
                                profile=profile, allow_pdb_violations=allow_pdb_violations, interrupt=interrupt)
    else:
        # greedy is what kube-scheduler binds; the optimum starts from the guarded loop's plan (every pod's rules
        # kept in the final state), which is the same plan whenever kube-scheduler's breaks nothing
        greedy = greedy_plan(cluster, params.seed, gang=params.gang, profile=profile, interrupt=interrupt, kube=True)
        # with a second solve to come, each is planned on half the limit given (the same on every machine)
        half = replace(params, budget=params.budget / 2) if moving and params.budget is not None else params
        optimal, _ = optimal_plan(cluster, half, policy, deadline=first, interrupt=interrupt, profile=profile)
    columns = [judge_column(GREEDY, cluster, greedy, m, profile=profile, kube=True),
               judge_column(OPTIMAL, cluster, optimal, m, profile=profile)]
    diffs = {(GREEDY, OPTIMAL): differences(cluster.pending, greedy.placements, optimal.placements)}
    if moving:
        unbound, origin = as_pending(cluster, moving)
        current = Plan(origin, {p.key: PENDING_IN_INPUT for p in cluster.pending}, CURRENT_STATUS)
        current_col = judge_column(CURRENT, unbound, current, m, must_verify=False, profile=profile)
        start = Plan({**origin, **optimal.placements}, dict(optimal.pending), Status.FEASIBLE)
        start_ok = current_col.report.ok and verify(unbound, start.placements, m, profile).ok
        replaced, _ = optimal_plan(unbound, half, policy, deadline=deadline, interrupt=interrupt,
                                   warm_start=start if start_ok else None, profile=profile)
        columns += [current_col, judge_column(REPLACEMENT, unbound, replaced, m, profile=profile)]
        diffs[(CURRENT, REPLACEMENT)] = differences(unbound.pending, origin, replaced.placements)
    return Comparison(tuple(n.name for n in cluster.nodes), usage(ClusterState.from_cluster(cluster)),
                      tuple(columns), diffs, len(moving), m)
