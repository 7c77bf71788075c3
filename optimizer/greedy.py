"""The greedy kube-scheduler simulator: podplan's baseline, warm start and fallback.

Reproduces kube-scheduler's scheduling loop (pkg/scheduler/schedule_one.go):
- the queue is sorted by priority, then arrival (PrioritySort: priority, then creation time; podplan uses
  input order as creation time);
- findNodesThatFitPod: Filter nodes starting where the previous cycle stopped (nextStartNodeIndex) and stop
  once numFeasibleNodesToFind nodes passed (percentageOfNodesToScore adaptive default: 50% - nodes/125,
  at least 5% and at least 100 nodes); a node's verdict is its first rejecting plugin, as upstream stops there;
- one feasible node is taken without scoring; otherwise Score the feasible nodes with the default plugin
  weights and bind to the best; ties are broken by a seeded uniform choice among the top-scoring nodes
  (upstream breaks them with its own random source);
- a pod that fits nowhere stays pending with FitError's message; the state is updated incrementally.

Knowing differences:
- preemption (DefaultPreemption's PostFilter, optimizer/defaultpreemption) only with `preemption=True`
  (`simulate` turns it on); its victims are always existing pods (the queue never reaches a pod before one
  of higher priority), their controllers' new pods join the queue; without it, no PostFilter message;
- the NodeAffinity PreFilterResult (pods pinned by matchFields metadata.name): the other nodes are rejected
  by the framework's reason only (no Filter runs there) and nextStartNodeIndex moves on by the result's size,
  as upstream, whose search runs over the result's nodes only (in Go map order, which matters only when the
  result holds 100 nodes or more, where podplan takes them in node order);
- placed-pod guard (on by default for solve's warm start; `protect_placed=False` turns it off, as the
  `simulate` command and compare's greedy column do, binding what kube-scheduler binds and listing what the
  final state then breaks): kube-scheduler checks only the
  incoming pod's own rules, so it may bind a pod that breaks a pod ALREADY placed (an existing or earlier
  pod) in the two ways podplan's batch semantics forbid (notes/semantics.md: every pod of the final state is
  judged with itself removed):
  * a DoNotSchedule spread constraint of a placed pod whose selector matches the incoming pod, when the
    incoming pod lands in that pod's domain and the skew there goes over maxSkew;
  * the required pod affinity of a placed pod that started its domain alone (upstream's first-pod rule),
    when the incoming pod matches all its terms but lands in another domain.
  Such nodes are rejected by the plugins' guards (Plugin.placed_guard: podtopologyspread/batch.py,
  interpodaffinity/batch.py) after kube-scheduler's filters passed, so the simulator's
  plans pass the verifier (property-tested); where kube-scheduler's choice breaks nothing, the result is
  identical. Every other rule is either checked from both sides by kube-scheduler itself (anti-affinity,
  ports), a node total (resources) or monotone (affinity beyond the first pod, static rules).

Speed (identical results, checked against the plain loop): verdicts and raw scores of the plugins that read
only the pod and the node (Plugin.filter_reads / score_reads is Reads.NODE) are computed once per pod spec, and
only the nodes the static filters pass are visited (the others count as processed up to where the search
stops, as upstream's rotation has it); those that read only the node's own pods (Reads.NODE_PODS) are cached
per pod spec and NodeInfo.generation; a plugin whose PreFilter/PreScore says Skip is not run on every node; a static score
plugin that scores every node alike is left out of the totals (it shifts them all alike).
"""
from __future__ import annotations

import heapq
import random
import time
from bisect import bisect_left
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ..models.objects import Cluster, Pod

from .defaultpreemption import Evaluator, PreemptionArgs, post_filter
from .framework import (NodeVerdict, bind_if_feasible, PlacedGuard, Plugin, Profile, Reads, Reason, fit_error_message,
                        num_feasible_nodes_to_find, outside_pre_filter_result, pre_filter_result_size)
from .gangs import Gangs
from .plan import Plan
from .profiles import NOT_OURS, Profiles
from .registry import DEFAULT_PROFILE
from .runner import NEVER, Interrupt, Status
from .state import ClusterState, NodeInfo
from .vectorized import VectorScheduler


_MAX_SPECS = 256  # pod specs whose per-node caches are kept (a workload's replicas share one)


def queue_order(pods: Iterable[Pod]) -> list[Pod]:
    """PrioritySort: higher priority first, then earlier arrival."""
    return sorted(pods, key=lambda p: (-p.priority, p.order))


def spec_key(pod: Pod) -> Hashable:
    """Everything the static and node-local plugins read from a pod (not its name or labels)."""
    return (pod.node_name, tuple(sorted(pod.node_selector.items())), pod.affinity.node_required,
            pod.affinity.node_preferred, pod.tolerations, pod.host_ports, tuple(sorted(pod.requests.items())),
            tuple(sorted(pod.nonzero_requests.items())))


# ------------------------------------------------------------------------------------------------ scheduler


_UNKNOWN: Any = object()


@dataclass
class Scheduler:
    """One simulated kube-scheduler over a ClusterState it mutates as it binds."""

    state: ClusterState
    seed: int = 0
    percentage_of_nodes_to_score: int = 0
    profile: Profile = DEFAULT_PROFILE
    protect_placed: bool = True

    def __post_init__(self) -> None:
        self.rng = random.Random(self.seed)
        self.next_start = 0
        self.order: list[NodeInfo] = list(self.state.nodes.values())
        self.names: list[str] = [info.name for info in self.order]
        plugins = list(self.profile.filters)
        # Cached segments must come first, in filter order, so a node's first rejecting plugin is unchanged.
        n_static = next((i for i, p in enumerate(plugins) if p.filter_reads is not Reads.NODE), len(plugins))
        n_local = next((i for i, p in enumerate(plugins[n_static:], n_static) if p.filter_reads is not Reads.NODE_PODS),
                       len(plugins))
        self.static_filters = plugins[:n_static]
        self.local_filters = plugins[n_static:n_local]
        self.dynamic_filters = plugins[n_local:]
        self.scorers = [(p, self.profile.weight(p)) for p in self.profile.scorers]
        # batch semantics: the plugins' guards keep a bind from breaking a pod placed before it
        self.guards: list[tuple[str, PlacedGuard]] = [
            (p.name, p.placed_guard(self.state)) for p in plugins if self.protect_placed and p.placed_guard]
        self._static_cache: dict[Hashable, tuple[list[tuple[Reason, ...]], list[int]]] = {}  # spec -> verdicts
        self._local_cache: dict[Hashable, list[Any]] = {}  # spec -> per node index: (generation, reasons)
        self._score_cache: dict[tuple[str, Hashable], list[Any]] = {}  # (plugin, spec) -> per node: (gen, raw)
        self._static_score_cache: dict[tuple[str, Hashable], list[int] | None] = {}
        self.diagnosis: list[NodeVerdict] = []  # the last failed cycle's verdict per node (PostFilter reads it)

    def _per_node(self, cache: dict[Any, list[Any]], key: Any) -> list[Any]:
        entry = cache.get(key)
        if entry is None:
            if len(cache) >= _MAX_SPECS:
                del cache[next(iter(cache))]
            entry = cache[key] = [_UNKNOWN] * len(self.order)
        return entry

    def schedule(self, pod: Pod) -> tuple[str | None, str]:
        """One scheduling cycle: the chosen node (bound into the state) or None and FitError's message."""
        nodes = self.order
        if not nodes:
            return None, "0/0 nodes are available: no nodes in the input."
        state = self.state
        spec = spec_key(pod)
        static_pres = [(p, p.pre_filter(pod, state) if p.pre_filter else None) for p in self.static_filters]
        local_pres = [(p, p.pre_filter(pod, state) if p.pre_filter else None) for p in self.local_filters]
        dynamic_pres = []
        ran: dict[str, Any] = {}  # PreFilter results of the dynamic plugins that ran, for their guards
        for p in self.dynamic_filters:
            if p.pre_filter_skip is not None and p.pre_filter_skip(pod, state):
                continue
            pre = ran[p.name] = p.pre_filter(pod, state) if p.pre_filter else None
            if p.filter_skipped is None or not p.filter_skipped(pre):
                dynamic_pres.append((p, pre))
        static_reasons, passing = self._static_verdicts(pod, spec, static_pres)
        local = self._per_node(self._local_cache, spec)
        checks = [check for _, guard in self.guards for check in [guard.prepare(pod)] if check is not None]
        dynamic = [(p.filter, pre) for p, pre in dynamic_pres]

        want = num_feasible_nodes_to_find(len(nodes), self.percentage_of_nodes_to_score)
        feasible: list[int] = []
        rejected: list[NodeVerdict] = []
        n = len(nodes)
        start = self.next_start
        processed = n
        # Only the nodes the static filters pass are visited, in rotation order from `start`; the others are
        # rejected all the same and count as processed up to where the search stops.
        cut = bisect_left(passing, start)
        for idx in passing[cut:] + passing[:cut]:
            info = nodes[idx]
            entry = local[idx]
            if entry is _UNKNOWN or entry[0] != info.generation:
                entry = local[idx] = (info.generation, self._first_failure(pod, local_pres, info))
            reasons = entry[1]
            if not reasons:
                for plugin_filter, pre in dynamic:
                    found = plugin_filter(pod, pre, info, state)
                    if found:
                        reasons = tuple(found)  # upstream stops at the first rejecting plugin
                        break
                for check in checks:
                    if reasons:
                        break
                    reasons = check(info)
            if reasons:
                rejected.append(NodeVerdict(self.names[idx], reasons))
            else:
                feasible.append(idx)
                if len(feasible) >= want:
                    processed = (idx - start) % n + 1
                    break
        pinned = pre_filter_result_size(static_pres, state.nodes)
        if pinned is not None:
            processed = pinned  # only the PreFilterResult's nodes were processed (all of them: fewer than 100)
        self.next_start = (self.next_start + processed) % n
        if not feasible:
            rejected.extend(NodeVerdict(self.names[i], r) for i, r in enumerate(static_reasons) if r)
            self.diagnosis = rejected
            return None, fit_error_message(n, rejected)
        best = feasible[0] if len(feasible) == 1 else self._select_host(feasible, self._totals(pod, spec, feasible))
        chosen = nodes[best]
        state.add(pod, self.names[best])
        for name, guard in self.guards:
            guard.bound(pod, chosen, ran.get(name))
        return self.names[best], ""

    def evict(self, pods: Sequence[Pod]) -> None:
        """Delete bound pods (preemption's victims); the guards, which only ever see pods arrive, start over
        (when some pod of the state has what they protect: spread constraints or required pod affinity)."""
        for pod in pods:
            self.state.remove(pod)
        if self.guards and any(p.spread_constraints or p.affinity.pod_required for p, _ in self.state.all_pods()):
            self.guards = [(p.name, p.placed_guard(self.state))
                           for p in self.profile.filters if self.protect_placed and p.placed_guard]

    def bind_nominated(self, pod: Pod, node: str) -> bool:
        """evaluateNominatedNode: bind `pod` to `node` if every filter (and guard) passes there."""
        return bind_if_feasible(self.state, self.profile, self.guards, pod, node)

    def _static_verdicts(self, pod: Pod, spec: Hashable,
                         pres: Sequence[tuple[Plugin, Any]]) -> tuple[list[tuple[Reason, ...]], list[int]]:
        """The static filters' first failure on every node for this pod spec, and the indices of the nodes
        they pass (ascending); computed once per spec."""
        found = self._static_cache.get(spec)
        if found is None:
            if len(self._static_cache) >= _MAX_SPECS:
                del self._static_cache[next(iter(self._static_cache))]
            reasons = [self._first_failure(pod, pres, info) for info in self.order]
            found = self._static_cache[spec] = (reasons, [i for i, r in enumerate(reasons) if not r])
        return found

    def _first_failure(self, pod: Pod, pres: Sequence[tuple[Plugin, Any]], info: NodeInfo) -> tuple[Reason, ...]:
        outside = outside_pre_filter_result(pres, info.name)
        if outside:
            return outside  # no Filter runs on a node the PreFilterResult leaves out
        for plugin, pre in pres:
            reasons = plugin.filter(pod, pre, info, self.state)  # type: ignore[misc]
            if reasons:
                return tuple(reasons)  # upstream stops at the first rejecting plugin
        return ()

    def _totals(self, pod: Pod, spec: Hashable, feasible: list[int]) -> list[int]:
        """Σ weight × normalized score per feasible node (prioritizeNodes), in `feasible` order.

        A plugin that scores every node alike shifts every total alike and is left out: ranking and ties are
        unchanged (Skip by PreScore; a static plugin with the same raw score on every node of the cluster).
        """
        state, nodes = self.state, self.order
        infos = [nodes[i] for i in feasible]
        names = [self.names[i] for i in feasible]
        totals = [0] * len(feasible)
        for plugin, weight in self.scorers:
            if not weight:
                continue
            name = plugin.name
            if plugin.pre_score_skip is not None and plugin.pre_score_skip(pod, state):
                continue
            if plugin.score_reads is Reads.NODE:
                static = self._static_scores(plugin, pod, spec)
                if static is None:
                    continue
                pre: Any = None
                raw = dict(zip(names, [static[i] for i in feasible]))
            else:
                pre = plugin.pre_score(pod, state, infos) if plugin.pre_score else None
                if plugin.score_skipped is not None and plugin.score_skipped(pre):
                    continue
                score = plugin.score
                assert score is not None
                if plugin.score_reads is Reads.NODE_PODS:
                    cache = self._per_node(self._score_cache, (name, spec))
                    values = []
                    for i, info in zip(feasible, infos):
                        entry = cache[i]
                        if entry is _UNKNOWN or entry[0] != info.generation:
                            entry = cache[i] = (info.generation, score(pod, pre, info, state))
                        values.append(entry[1])
                    raw = dict(zip(names, values))
                else:
                    raw = dict(zip(names, [score(pod, pre, info, state) for info in infos]))
            normalized = plugin.normalize(raw, pre) if plugin.normalize else raw
            totals = [t + weight * normalized[n] for t, n in zip(totals, names)]
        return totals

    def _static_scores(self, plugin: Plugin, pod: Pod, spec: Hashable) -> list[int] | None:
        """The raw scores of a static plugin on every node for this pod spec; None when they are all equal."""
        key = (plugin.name, spec)
        if key not in self._static_score_cache:
            if len(self._static_score_cache) >= _MAX_SPECS:
                del self._static_score_cache[next(iter(self._static_score_cache))]
            pre = plugin.pre_score(pod, self.state, self.order) if plugin.pre_score else None
            assert plugin.score is not None
            raw = [plugin.score(pod, pre, info, self.state) for info in self.order]
            self._static_score_cache[key] = raw if len(set(raw)) > 1 else None
        return self._static_score_cache[key]

    def _select_host(self, feasible: list[int], totals: list[int]) -> int:
        """The top-scoring node's index; ties broken by the seeded random source, uniformly (as selectHost)."""
        best = max(totals)
        tied = [idx for idx, score in zip(feasible, totals) if score == best]
        return tied[self.rng.randrange(len(tied))] if len(tied) > 1 else tied[0]


NOT_SCHEDULED = "not scheduled: the simulation was stopped before this pod's turn ({why})"


def runs_vectorized(profile: Profile | Profiles) -> bool:
    """Can greedy run the vectorized scheduler for `profile`? Not for several profiles (they share one state: the
    plain per-profile Schedulers read it as it is), nor for a rule without a vectorized form (a new or toy
    rule): the reference loop runs those."""
    if isinstance(profile, Profiles):
        if len(profile.profiles) != 1:
            return False
        profile = profile.profiles[0]
    return all(p.vector is not None for p in profile.plugins if p.filter or p.score)


def simulate(cluster: Cluster, seed: int = 0, *, gangs: Gangs | None = None,
             percentage_of_nodes_to_score: int = 0, protect_placed: bool = True,
             profile: Profile | Profiles = DEFAULT_PROFILE, interrupt: Interrupt = NEVER,
             deadline: float | None = None, vectorized: bool = True, preemption: bool = False,
             fit_errors: bool = True) -> Plan:
    """kube-scheduler on the pending pods of `cluster`, one at a time.

    `profile`: one Profile schedules every pod; Profiles (a scheduler configuration): each pod is scheduled by
    the profile of its spec.schedulerName (a pod no profile names stays pending), as one kube-scheduler with
    several profiles does: one queue, one node rotation, one random source, each profile its own plugins.
    percentage_of_nodes_to_score (0: each profile's own, else the adaptive default) overrides the profiles'.

    With gangs (coscheduling's Permit semantics): a gang that ends below its minimum releases all its pods,
    and the pass is repeated without it, until every gang left is whole. protect_placed=False is
    kube-scheduler exactly, whose plans may break placed pods' spread or first-pod affinity (see above).
    Ctrl-C (`interrupt`) or `deadline` (perf_counter seconds) stop the loop: the pods bound so far are the plan,
    the others stay pending with NOT_SCHEDULED (a partial plan the search completes). A stopped pass that
    leaves a gang short returns nothing placed, as the gang's Permit would have held its pods.
    vectorized=True runs vectorized.VectorScheduler (the same results over all nodes at once) when every
    plugin of the profile has a vectorized form (Plugin.vector); otherwise, or with False, this module's plain
    per-node Scheduler, the reference.
    preemption: a pod that fits nowhere runs DefaultPreemption's PostFilter (Plan.preemptions, Plan.recreated),
    with the args of the pod's profile, unless its configuration disables DefaultPreemption at postFilter.
    fit_errors=False (vectorized, without preemption): pods left pending get no FitError message, only the count.
    """
    # DefaultPreemption per profile: its args, or None where the configuration disables it at postFilter
    preempt_args: dict[str, PreemptionArgs | None] = {}
    if isinstance(profile, Profiles):
        preempt_args = {p.scheduler_name: None if a is None else PreemptionArgs(a.min_candidate_nodes_percentage,
                                                                                a.min_candidate_nodes_absolute)
                        for p, a in zip(profile.profiles, profile.preemption)}
    if isinstance(profile, Profiles) and len(profile.profiles) == 1:
        profile = profile.profiles[0]
    vectorized = vectorized and runs_vectorized(profile)
    started = time.perf_counter()
    gangs = gangs or Gangs({}, {})
    dropped: set[str] = set()
    stopped = ""
    while True:
        state = ClusterState.from_cluster(cluster)
        if isinstance(profile, Profiles):
            sched: Any = _Schedulers(state, seed, percentage_of_nodes_to_score, profile, protect_placed)
            evaluators = {p.scheduler_name: Evaluator(state, p, cluster.pdbs, cluster.workloads, cluster.pods, seed,
                                                      args) for p in profile.profiles
                          if (args := preempt_args.get(p.scheduler_name, PreemptionArgs())) is not None} \
                if preemption else {}
        else:
            make = VectorScheduler if vectorized else Scheduler
            sched = make(state, seed, percentage_of_nodes_to_score or profile.percentage_of_nodes_to_score, profile,
                         protect_placed=protect_placed)
            sched.fit_errors = fit_errors or preemption
            args = preempt_args.get(profile.scheduler_name, PreemptionArgs())
            evaluators = {profile.scheduler_name: Evaluator(state, profile, cluster.pdbs, cluster.workloads,
                                                            cluster.pods, seed, args)} \
                if preemption and args is not None else {}
        placements: dict[str, str] = {}
        pending: dict[str, str] = {}
        preemptions, recreated = [], []
        used = {p.key for p in cluster.pods} | {p.key for p in cluster.pending}
        next_order = max((p.order for p in (*cluster.pods, *cluster.pending)), default=0) + 1
        # (priority, arrival, position) -> pod; sorted, so already a heap; recreated pods are pushed in
        queue = [(-p.priority, p.order, i, p) for i, p in enumerate(queue_order(cluster.pending))]
        while queue:
            pod = heapq.heappop(queue)[3]
            if not stopped and (interrupt.is_set() or deadline is not None and time.perf_counter() > deadline):
                stopped = "interrupted" if interrupt.is_set() else "its share of the time limit was used"
            if stopped:
                pending[pod.key] = NOT_SCHEDULED.format(why=stopped)
                continue
            gang = gangs.of.get(pod.key, "")
            if gang in dropped:
                pending[pod.key] = f"gang {gang} cannot reach its minimum of {gangs.minimum[gang]} pods"
                continue
            node, message = sched.schedule(pod)
            evaluator = evaluators.get(pod.scheduler_name) if isinstance(profile, Profiles) \
                else next(iter(evaluators.values()), None)
            if node is None and evaluator is not None:
                binder = sched.binder(pod) if isinstance(sched, _Schedulers) else sched
                outcome = post_filter(binder, evaluator, pod, message, used, next_order)
                node, message = outcome.node, outcome.message
                if outcome.preemption is not None:
                    preemptions.append(outcome.preemption)
                    recreated.extend(outcome.recreated)
                    next_order += len(outcome.recreated)
                    for again in outcome.recreated:
                        heapq.heappush(queue, (-again.priority, again.order, again.order, again))
            if node is None:
                pending[pod.key] = message
            else:
                placements[pod.key] = node
        short = _short_gangs(cluster, placements, gangs) - dropped
        if stopped and short:
            pending = {p.key: NOT_SCHEDULED.format(why=stopped) for p in cluster.pending}
            placements, preemptions, recreated = {}, [], []
            break
        if not short:
            break
        dropped |= short
    notes = (f"stopped after {len(placements)} of {len(cluster.pending)} pods were placed: {stopped}",) if stopped else ()
    return Plan(placements=placements, pending=pending, status=Status.GREEDY,
                wall_seconds=time.perf_counter() - started, seed=seed, notes=notes,
                preemptions=tuple(preemptions), recreated=tuple(recreated))


class _Schedulers:
    """One Scheduler per profile over one state, sharing the node rotation and the random source. Preemption
    (PostFilter) runs with the pod's own profile's Scheduler as its binder."""

    def __init__(self, state: ClusterState, seed: int, percentage: int, profile: Profile | Profiles,
                 protect_placed: bool) -> None:
        table = profile.profiles if isinstance(profile, Profiles) else (profile,)
        self.by_name = {p.scheduler_name: Scheduler(state, seed, percentage or p.percentage_of_nodes_to_score, p,
                                                    protect_placed=protect_placed) for p in table}
        self.single = None if isinstance(profile, Profiles) else self.by_name[profile.scheduler_name]
        first = next(iter(self.by_name.values()))
        for other in self.by_name.values():
            other.rng = first.rng
        self.next_start = 0

    def binder(self, pod: Pod) -> Scheduler:
        sched = self.single or self.by_name[pod.scheduler_name]
        sched.next_start = self.next_start
        return sched

    def schedule(self, pod: Pod) -> tuple[str | None, str]:
        sched = self.single or self.by_name.get(pod.scheduler_name)
        if sched is None:
            return None, NOT_OURS.format(name=pod.scheduler_name)
        sched.next_start = self.next_start
        node, message = sched.schedule(pod)
        self.next_start = sched.next_start
        if node is not None:
            for other in self.by_name.values():
                if other is not sched:  # the other profiles' guards protect this pod too
                    for _, guard in other.guards:
                        guard.bound(pod, other.state.nodes[node], None)
        return node, message


def _short_gangs(cluster: Cluster, placements: dict[str, str], gangs: Gangs) -> set[str]:
    """Gangs that placed some but fewer than their minimum of pods."""
    placed: dict[str, int] = {}
    for key, gang in gangs.of.items():
        if key in placements:
            placed[gang] = placed.get(gang, 0) + 1
    return {g for g, n in placed.items() if n < gangs.minimum[g]}
