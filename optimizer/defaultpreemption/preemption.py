"""DefaultPreemption's PostFilter, as kube-scheduler runs it when a pod fits on no node.

Reproduces kubernetes/kubernetes pkg/scheduler/framework/plugins/defaultpreemption/default_preemption.go and
pkg/scheduler/framework/preemption/preemption.go (Evaluator.Preempt):
1. PodEligibleToPreemptOthers: preemptionPolicy Never is not eligible; neither is a pod already nominated to a
   node (status.nominatedNodeName) where a lower-priority pod is terminating by preemption (deletionTimestamp
   and a DisruptionTarget condition with reason PreemptionByScheduler), unless that node is now
   UnschedulableAndUnresolvable for it;
2. candidate nodes: the nodes whose Filter status is resolvable (Reason.unresolvable is
   UnschedulableAndUnresolvable: "Preemption is not helpful for scheduling" there);
3. DryRunPreemption: from a seeded random offset, SelectVictimsOnNode on each candidate node in turn, stopping
   once a PDB-respecting candidate was found and minCandidateNodesPercentage / minCandidateNodesAbsolute
   (calculateNumCandidates) candidates are known; candidates that violate no PDB come first;
4. SelectVictimsOnNode: remove every lower-priority pod, check the pod fits (the profile's filters), then
   reprieve them most important first (priority, then earlier start), the PDB-violating ones before the
   others (filterPodsWithPDBViolation, against each PDB's disruptionsAllowed), keeping each that still fits;
5. pickOneNodeForPreemption: fewest PDB violations, lowest highest victim priority, smallest sum of victim
   priorities (each shifted by MaxInt32+1), fewest victims, latest start of the highest-priority victims,
   then the first;
6. messages word for word: FitError's text of the dry run behind "preemption: ".

Knowing differences (a simulation, not a live cluster):
- the dry run is sequential (upstream runs it in parallel, so which candidates are seen first varies);
- ties that upstream leaves to Go's unstable sort or map order are broken by input order here;
- a pod without status.startTime counts as started last (upstream takes time.Now() at each comparison);
- the preemptor is placed at once on its nominated node (upstream waits for the victims' graceful
  termination, with the node's room held by the nomination); pods that failed earlier are not retried when
  victims leave (upstream's queue would move them back to activeQ);
- PDBs' disruptionsAllowed is computed from the input's pods (optimizer.disruption) and spent by each victim.
"""
from __future__ import annotations

import copy
import math
import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, Protocol

from ..disruption import Budget, budget, counts, guards, pod_ready
from ..framework import NodeVerdict, Plugin, Profile, Reads, Reason, fit_error_message
from ..plan import Plan, Preemption
from ..state import ClusterState, NodeInfo
from ...models.objects import Cluster, Pod, PodDisruptionBudget, Workload
from ...models.parse import stable_suffix

NAME = "DefaultPreemption"
PREEMPT_NEVER = "Never"
# DefaultPreemptionArgs defaults (pkg/scheduler/apis/config/v1/defaults.go)
MIN_CANDIDATE_NODES_PERCENTAGE = 10
MIN_CANDIDATE_NODES_ABSOLUTE = 100
MAX_INT32 = 2**31 - 1

MSG_PREFIX = "preemption: "
MSG_NEVER = "not eligible due to preemptionPolicy=Never."
MSG_TERMINATING = "not eligible due to a terminating pod on the nominated node."
MSG_NOT_HELPFUL = "Preemption is not helpful for scheduling"
MSG_NO_VICTIMS = "No preemption victims found for incoming pod"
DISRUPTION_TARGET = "DisruptionTarget"
REASON_PREEMPTION_BY_SCHEDULER = "PreemptionByScheduler"

_NEVER_STARTED = math.inf


@dataclass(frozen=True)
class Candidate:
    """A node where the preemptor fits once `victims` (most important first) are gone."""

    node: str
    victims: tuple[Pod, ...]
    pdb_violations: int = 0


@dataclass(frozen=True)
class PreemptionArgs:
    """DefaultPreemptionArgs."""

    min_candidate_nodes_percentage: int = MIN_CANDIDATE_NODES_PERCENTAGE
    min_candidate_nodes_absolute: int = MIN_CANDIDATE_NODES_ABSOLUTE


def started(pod: Pod) -> float:
    """util.GetPodStartTime as a number: status.startTime, or last of all when the pod has not started."""
    if not pod.start_time:
        return _NEVER_STARTED
    try:
        return datetime.fromisoformat(pod.start_time.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return _NEVER_STARTED


def importance(pod: Pod) -> tuple[int, float]:
    """util.MoreImportantPod as a sort key: higher priority first, then the earlier start."""
    return -pod.priority, started(pod)


def terminating_by_preemption(pod: Pod) -> bool:
    """podTerminatingByPreemption: being deleted with DisruptionTarget=True, reason PreemptionByScheduler."""
    if not pod.terminating:
        return False
    conditions = ((pod.raw or {}).get("status") or {}).get("conditions") or ()
    for c in conditions:
        if isinstance(c, Mapping) and c.get("type") == DISRUPTION_TARGET:
            return c.get("status") == "True" and c.get("reason") == REASON_PREEMPTION_BY_SCHEDULER
    return False


def calculate_num_candidates(num_nodes: int, args: PreemptionArgs = PreemptionArgs()) -> int:
    n = num_nodes * args.min_candidate_nodes_percentage // 100
    return min(max(n, args.min_candidate_nodes_absolute), num_nodes)


def filter_pods_with_pdb_violation(pods: Sequence[Pod], allowed: Mapping[str, int],
                                   pdbs: Sequence[PodDisruptionBudget]) -> tuple[list[Pod], list[Pod]]:
    """(violating, non-violating), each in the order given: a pod whose eviction takes some guarding PDB's
    disruptionsAllowed below zero, counting the pods before it."""
    left = dict(allowed)
    violating, fine = [], []
    for pod in pods:
        violated = False
        if pod.labels:  # a pod with no labels matches no PDB
            for pdb in pdbs:
                if guards(pdb, pod):
                    left[pdb.key] = left.get(pdb.key, 0) - 1
                    if left[pdb.key] < 0:
                        violated = True
        (violating if violated else fine).append(pod)
    return violating, fine


def pick_one_node(candidates: Sequence[Candidate]) -> Candidate | None:
    """pickOneNodeForPreemption's criteria in order; victims are most important first."""
    if not candidates:
        return None

    def earliest_of_highest(c: Candidate) -> float:
        top = c.victims[0].priority
        return min(started(v) for v in c.victims if v.priority == top)

    criteria = (
        lambda c: -c.pdb_violations,
        lambda c: -c.victims[0].priority,
        lambda c: -sum(v.priority + MAX_INT32 + 1 for v in c.victims),
        lambda c: -len(c.victims),
        earliest_of_highest,
    )
    left = list(candidates)
    for score in criteria:
        best = max(score(c) for c in left)
        left = [c for c in left if score(c) == best]
        if len(left) == 1:
            break
    return left[0]


class Evaluator:
    """DefaultPreemption over a ClusterState (the simulator's), with its own seeded random source."""

    def __init__(self, state: ClusterState, profile: Profile, pdbs: Sequence[PodDisruptionBudget],
                 workloads: Sequence[Workload], running: Iterable[Pod], seed: int = 0,
                 args: PreemptionArgs = PreemptionArgs()) -> None:
        self.state = state
        self.filters: tuple[Plugin, ...] = profile.filters
        self.pdbs = tuple(pdbs)
        self.workloads = tuple(workloads)
        self.running = tuple(running)  # the pods the disruption controller counts
        self.args = args
        self.rng = random.Random(seed)
        self._budgets: dict[str, Budget] | None = None

    # -------------------------------------------------------------------------------------------- PDBs

    def budgets(self) -> dict[str, Budget]:
        if self._budgets is None:
            # a PDB counts only pods of its namespace: grouped once (PDBs x pods was 4 s at 500 nodes)
            by_ns: dict[str, list[tuple[Pod, bool]]] = {}
            for p in self.running:
                by_ns.setdefault(p.namespace, []).append((p, pod_ready(p)))
            self._budgets = {b.key: budget(b, by_ns.get(b.namespace, []), self.workloads) for b in self.pdbs}
        return self._budgets

    def allowed(self) -> dict[str, int]:
        return {k: b.allowed for k, b in self.budgets().items()}

    def evicted(self, victims: Iterable[Pod]) -> None:
        """The victims are gone: each healthy one lowers its PDBs' currentHealthy (and disruptionsAllowed)."""
        budgets = self.budgets()
        for victim in victims:
            if not pod_ready(victim):
                continue
            for pdb in self.pdbs:
                b = budgets[pdb.key]
                if b.error or not counts(pdb, victim):
                    continue
                current = b.current_healthy - 1
                allowed = current - b.desired_healthy if b.expected > 0 else 0
                budgets[pdb.key] = replace(b, current_healthy=current, allowed=max(0, allowed))

    # ------------------------------------------------------------------------------------------ filters

    def _fits(self, pod: Pod, info: NodeInfo, fixed: Mapping[str, Any]) -> tuple[Reason, ...]:
        """The profile's Filter verdict on `info` as the state is now (first rejecting plugin)."""
        state = self.state
        for plugin in self.filters:
            if plugin.pre_filter_skip is not None and plugin.pre_filter_skip(pod, state):
                continue
            if plugin.name in fixed:
                pre = fixed[plugin.name]
            else:
                pre = plugin.pre_filter(pod, state) if plugin.pre_filter else None
            if plugin.filter_skipped is not None and plugin.filter_skipped(pre):
                continue
            assert plugin.filter is not None
            reasons = plugin.filter(pod, pre, info, state)
            if reasons:
                return tuple(reasons)
        return ()

    def _fixed_pre_filters(self, pod: Pod) -> dict[str, Any]:
        """PreFilter results that do not depend on other nodes' pods: computed once per PostFilter."""
        return {p.name: p.pre_filter(pod, self.state) if p.pre_filter else None
                for p in self.filters if p.filter_reads is not Reads.CLUSTER
                and not (p.pre_filter_skip is not None and p.pre_filter_skip(pod, self.state))}

    # ------------------------------------------------------------------------------------- the plugin

    def eligible(self, pod: Pod, verdicts: Mapping[str, tuple[Reason, ...]]) -> str:
        """PodEligibleToPreemptOthers: "" when eligible, else upstream's reason."""
        if pod.preemption_policy == PREEMPT_NEVER:
            return MSG_NEVER
        nominated = pod.nominated_node_name
        if nominated:
            status = verdicts.get(nominated, ())
            if status and any(r.unresolvable for r in status):
                return ""
            info = self.state.nodes.get(nominated)
            if info is not None and any(p.priority < pod.priority and terminating_by_preemption(p)
                                        for p in info.pods.values()):
                return MSG_TERMINATING
        return ""

    def select_victims_on_node(self, pod: Pod, info: NodeInfo, fixed: Mapping[str, Any],
                               allowed: Mapping[str, int]) -> tuple[list[Pod], int, tuple[Reason, ...]]:
        """SelectVictimsOnNode: (victims most important first, PDB violations, failure) on a dry run of `info`;
        the state is left as it was."""
        state = self.state
        potential = [p for p in info.pods.values() if p.priority < pod.priority]
        if not potential:
            return [], 0, (Reason(NAME, MSG_NO_VICTIMS, unresolvable=True),)
        node = info.name
        for p in potential:
            state.remove(p)
        removed = list(potential)
        try:
            failure = self._fits(pod, info, fixed)
            if failure:
                return [], 0, failure
            potential.sort(key=importance)  # stable: input order breaks the remaining ties
            violating, fine = filter_pods_with_pdb_violation(potential, allowed, self.pdbs)
            victims: list[Pod] = []
            violations = 0
            for group, is_violating in ((violating, True), (fine, False)):
                for p in group:
                    state.add(p, node)
                    if self._fits(pod, info, fixed):
                        state.remove(p)
                        victims.append(p)
                        violations += is_violating
                    else:
                        removed.remove(p)
            if violating and fine:
                victims.sort(key=importance)
            return victims, violations, ()
        finally:
            for p in removed:
                state.add(p, node)

    def dry_run(self, pod: Pod, potential: Sequence[NodeInfo], offset: int,
                num_candidates: int) -> tuple[list[Candidate], dict[str, tuple[Reason, ...]]]:
        """DryRunPreemption: the candidates (PDB-respecting first) and each failed node's status."""
        fixed = self._fixed_pre_filters(pod)
        allowed = self.allowed()
        fine: list[Candidate] = []
        violating: list[Candidate] = []
        statuses: dict[str, tuple[Reason, ...]] = {}
        n = len(potential)
        for i in range(n):
            info = potential[(offset + i) % n]
            victims, violations, failure = self.select_victims_on_node(pod, info, fixed, allowed)
            if not failure and victims:
                target = fine if violations == 0 else violating
                if len(target) < num_candidates:  # candidateList's capacity
                    target.append(Candidate(info.name, tuple(victims), violations))
                if fine and len(fine) + len(violating) >= num_candidates:
                    break
                continue
            # the pod fits without removing anybody: upstream's "expected at least one victim" error
            statuses[info.name] = failure or (Reason(NAME, f"expected at least one victim pod on node {info.name!r}"),)
        return fine + violating, statuses

    def preempt(self, pod: Pod, verdicts: Sequence[NodeVerdict]) -> tuple[Candidate | None, str]:
        """Evaluator.Preempt: the chosen candidate, or None and the PostFilter message ("preemption: ...")."""
        by_node = {v.node: v.first_failure() for v in verdicts}
        why = self.eligible(pod, by_node)
        if why:
            return None, MSG_PREFIX + why
        nodes = list(self.state.nodes.values())
        potential = [info for info in nodes if not any(r.unresolvable for r in by_node.get(info.name, ()))]
        candidates: list[Candidate] = []
        statuses: dict[str, tuple[Reason, ...]] = {}
        if potential:
            offset = self.rng.randrange(len(potential))
            candidates, statuses = self.dry_run(pod, potential, offset,
                                                calculate_num_candidates(len(potential), self.args))
        if not candidates:
            not_helpful = (Reason(NAME, MSG_NOT_HELPFUL, unresolvable=True),)
            diagnosis = [NodeVerdict(info.name, statuses.get(info.name, not_helpful)) for info in nodes]
            return None, MSG_PREFIX + fit_error_message(len(nodes), diagnosis)
        return pick_one_node(candidates), ""


# -------------------------------------------------------------------------------------- after eviction


def recreate(victim: Pod, used: set[str], order: int) -> Pod | None:
    """The pod the victim's controller makes in its place (None: a bare pod, or one already being replaced).

    A StatefulSet's pod comes back with the same name; other controllers' with a new `<owner>-<5 chars>`
    (generateName), deterministic here. `used` holds the pod keys taken; the new key is added to it."""
    ref = victim.controller
    if ref is None or victim.terminating or victim.mirror:
        return None
    if ref.kind == "StatefulSet":
        name = victim.name
    else:
        i = 0
        while True:
            name = f"{ref.name}-{stable_suffix(f'{victim.key}#preempted#{i}')}"
            if f"{victim.namespace}/{name}" not in used:
                break
            i += 1
    used.add(f"{victim.namespace}/{name}")
    raw = copy.deepcopy(dict(victim.raw or {}))
    raw.pop("status", None)
    meta = dict(raw.get("metadata") or {})
    for k in ("uid", "resourceVersion", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds"):
        meta.pop(k, None)
    meta["name"] = name
    raw["metadata"] = meta
    spec = dict(raw.get("spec") or {})
    spec.pop("nodeName", None)
    raw["spec"] = spec
    return replace(victim, name=name, uid="", node_name="", nominated_node_name="", start_time="",
                   terminating=False, order=order, raw=raw)


def after_preemption(cluster: Cluster, plan: Plan) -> Cluster:
    """The cluster a preempting plan is about: the victims deleted, their controllers' new pods pending.
    Applying it twice changes nothing."""
    gone = plan.removed
    if not gone and not plan.recreated:
        return cluster
    have = {p.key for p in cluster.pending}
    return replace(cluster, pods=tuple(p for p in cluster.pods if p.key not in gone),
                   pending=cluster.pending + tuple(p for p in plan.recreated if p.key not in have))


# ------------------------------------------------------------------------------------- in the simulator


class Binder(Protocol):
    """What PostFilter needs of the simulator (optimizer.greedy.Scheduler)."""

    diagnosis: list[NodeVerdict]

    def evict(self, pods: Sequence[Pod]) -> None: ...

    def bind_nominated(self, pod: Pod, node: str) -> bool: ...

    def schedule(self, pod: Pod) -> tuple[str | None, str]: ...


@dataclass
class Outcome:
    """What one PostFilter did: where the preemptor went (None: still pending, with `message`)."""

    node: str | None
    message: str
    preemption: Preemption | None = None
    recreated: tuple[Pod, ...] = ()


def post_filter(binder: Binder, evaluator: Evaluator, pod: Pod, message: str, used: set[str],
                next_order: int) -> Outcome:
    """After a failed scheduling cycle of `pod` (FitError `message`): preempt, delete the victims, bring back
    their controllers' pods (orders from `next_order`), and bind the preemptor to its nominated node (the next
    cycle tries it first: evaluateNominatedNode), else schedule it again as any pod."""
    chosen, why = evaluator.preempt(pod, binder.diagnosis)
    if chosen is None:
        return Outcome(None, f"{message} {why}")
    victims = list(chosen.victims)
    binder.evict(victims)
    evaluator.evicted(victims)
    recreated = []
    for victim in victims:
        again = recreate(victim, used, next_order + len(recreated))
        if again is not None:
            recreated.append(again)
    done = Preemption(pod.key, chosen.node, tuple(v.key for v in victims))
    if binder.bind_nominated(pod, chosen.node):
        return Outcome(chosen.node, "", done, tuple(recreated))
    node, again_message = binder.schedule(pod)
    return Outcome(node, again_message, done, tuple(recreated))
