"""The optimum for the same policy: the fewest evictions whose end state meets every goal the policy states,
planned by rebalance's machinery (target, PDB-safe waves, landing steered by temporary cordons, the verifier
on every state between waves).

The policy's goals become a rebalance target (goal `fix`: every re-placed pod passes kube-scheduler's filters
on its node, which covers node affinity, taints, required anti-affinity and DoNotSchedule spread) plus
`PolicyGoals`, the params.extra hook of the target model:
- LowNodeUtilization: every node's requests within targetThresholds (a soft level, OUTSIDE, minimised before
  the moves: the nodes left outside when the goal cannot be met are the plan's answer to "which and why");
- RemoveDuplicates: at most ceil(replicas / nodes it may run on) pods of an owner per node (hard);
- maxNoOfPodsToEvictPerNode / PerNamespace / Total: hard caps on the target's moves.
Only pods the policy's DefaultEvictor may evict move. Large clusters re-place only the pods that can help: the
evictable pods on nodes outside the thresholds, in violation, or duplicates (the target is then optimal among
plans that evict only those)."""
from __future__ import annotations

import math
import time
from collections import defaultdict
from dataclasses import dataclass, replace
from typing import Any

from ...models.objects import Cluster, Pod
from ..disruption import pod_ready
from ..interpodaffinity.filtering import term_matches
from ..rebalance.budgets import PdbIndex
from ..rebalance.metrics import metrics
from ..rebalance.movable import MovePolicy, goes_with_node, who_moves
from ..rebalance.landing import Lander
from ..rebalance.plan import Blocked, Landing, Move, Note, RebalanceParams, RebalancePlan, Target, Wave
from ..rebalance.states import state_of, violations_by_pod
from ..rebalance.target import FOCUS_LIMIT, find_target, solve_target
from ..rebalance.waves import R_INTERRUPTED, R_OUT_OF_TIME, R_STUCK, R_UNPLANNED, _Waves, waves_to
from ..problem import pod_signature
from ..runner import Status
from ..solve import SECONDS_PER_VARIABLE
from ..timelimit import slowdown
from .constructive import MAX_STEERS, amount, excess, fewest_off, plan_low, undo, usage
from .unfixable import Unmet, stuck_pods
from .cycle import Verdict, nodes_of, verdict
from .evictor import Counts, Evictor
from .plugins import Snapshot, _capped, _target_nodes, utilization_thresholds
from .policy import DUPLICATES, HIGH, LOW, SPREAD, DeschedulerPolicy


MIN_PLAN_S = 0.5  # seconds the constructive plan, and then its waves, always get (when the optimum starts in time)
RECEIVERS_FROM = 60  # nodes above which the re-placed pods may go only to their own and the least used nodes
RECEIVERS_MIN = 30
# The optimum's start-up work (who may move, the input's violations, the states, the PDB index, the first
# node's plan) does not stop at the deadline: 2e-4 CPU seconds per running pod (4.7 s at 1,050 nodes and 17,449
# pods, in-process at load 4.7). The command's reserve behind the deadline (2.5e-4 s per pod, for the verify
# gate and the output, which took about 1e-4) absorbs up to about 0.7 of it, so the optimum is not searched
# when less time is left than the rest, scaled by how slowly the command has run (with the whole 2e-4 the
# 1,050-node run at load 4.5 skipped an optimum it had time for, ending at 16 s of 30)
OPTIMUM_S_PER_POD = 6e-5
ANCHOR_STEERS = 0.3  # of the nodes, the temporary cordons an anchor's landing may try (others: MAX_STEERS)
PLAN_SHARE = 0.4  # of the optimum's time, the constructive plan's (its waves get the rest)
HOPELESS_PLAN_SHARE = 0.65  # the same when no CP-SAT search could follow it (its model too large to build)
TARGET_SHARE = 0.45  # of the optimum's time, the target's; the waves (landing simulated per wave) get the rest


@dataclass
class PolicyGoals:
    caps: dict[str, dict[str, int]]  # node -> resource -> the most it may hold (targetThresholds)
    dup_upper: dict[tuple, int]  # owner key -> the most pods of it per node
    per_node: int | None = None
    per_namespace: int | None = None

    def constrain(self, built: Any) -> Any:
        model, problem = built.model, built.problem
        outside = []
        for n, node in enumerate(problem.nodes):
            cap = self.caps.get(node.name)
            if not cap:
                continue
            info = problem.state.nodes[node.name]
            xs = built.x_on.get(n, [])
            over = None
            for r, limit in cap.items():
                base = len(info.pods) if r == "pods" else info.requested.get(r, 0)
                terms = [(x, 1 if r == "pods" else req.get(r, 0)) for x, req in xs]
                terms = [(x, q) for x, q in terms if q]
                hi = base + sum(q * _ub(x) for x, q in terms)
                if hi <= limit:
                    continue
                if over is None:
                    over = model.new_bool_var(f"outside[{node.name}]")
                    outside.append(over)
                model.add(base + sum(q * x for x, q in terms) <= limit + (hi - limit) * over)
        if self.dup_upper:
            for ctx in built.ctx_list:
                by_owner_node: dict[tuple, list[Any]] = defaultdict(list)
                for (c, n), x in ctx.x.items():
                    key = owner_key(problem.classes[c].rep)
                    if key in self.dup_upper:
                        by_owner_node[(key, n)].append(x)
                for (key, n), xs in by_owner_node.items():
                    info = problem.state.nodes[problem.nodes[n].name]
                    have = sum(1 for p in info.pods.values() if owner_key(p) == key)
                    model.add(sum(xs) + have <= max(self.dup_upper[key], have))
        if self.per_node is not None or self.per_namespace is not None:
            node_moves: dict[int, list[Any]] = defaultdict(list)
            ns_moves: dict[str, list[Any]] = defaultdict(list)
            for (c, n), k in built.here.items():
                s = built.stays.get((c, n))
                term = k - s if s is not None else k
                node_moves[n].append(term)
                ns_moves[problem.classes[c].rep.namespace].append(term)
            if self.per_node is not None:
                for terms in node_moves.values():
                    model.add(sum(terms) <= self.per_node)
            if self.per_namespace is not None:
                for terms in ns_moves.values():
                    model.add(sum(terms) <= self.per_namespace)
        return sum(outside) if outside else 0

    def value(self, state: Any) -> int:
        count = 0
        for name, cap in self.caps.items():
            info = state.nodes.get(name)
            if info is None:
                continue
            if any((len(info.pods) if r == "pods" else info.requested.get(r, 0)) > limit for r, limit in cap.items()):
                count += 1
        return count


def _ub(x: Any) -> int:
    d = x.proto.domain
    return int(d[len(d) - 1])


def owner_key(pod: Pod) -> tuple:
    return tuple(sorted((pod.namespace, o.kind, o.name) for o in pod.owner_refs))


def goals_of(cluster: Cluster, policy: DeschedulerPolicy) -> PolicyGoals:
    nodes = nodes_of(cluster, policy)
    snap = Snapshot.of(cluster, nodes)
    caps: dict[str, dict[str, int]] = {}
    low = policy.plugin(LOW)
    if low is not None:
        bounds = utilization_thresholds(low, snap)
        for n in nodes:
            full = _capped(n, bounds[n.name][1])
            caps[n.name] = {r: full[r] for r in low.target_thresholds}
    dup_upper: dict[tuple, int] = {}
    dups = policy.plugin(DUPLICATES)
    if dups is not None:
        by_owner: dict[tuple, list[Pod]] = defaultdict(list)
        for p in cluster.pods:
            if p.owner_refs and dups.namespaces.admits(p.namespace) and not any(
                    o.kind in dups.exclude_owner_kinds for o in p.owner_refs):
                by_owner[owner_key(p)].append(p)
        for key, pods in by_owner.items():
            targets = _target_nodes(pods, nodes)
            if len(targets) >= 2:
                dup_upper[key] = math.ceil(len(pods) / len(targets))
    per_node = policy.max_per_node
    return PolicyGoals(caps, dup_upper, per_node, policy.max_per_namespace)


@dataclass(frozen=True)
class Optimum:
    plan: RebalancePlan
    verdict: Verdict  # the policy's verdict on the plan's end state
    unmet: tuple[Unmet, ...]  # per goal not met: which, and why (blocking pods and nodes)
    free: int  # the pods the target could re-place
    bound: int | None = None  # the fewest evictions proven necessary (None: no bound computed)


def optimum(cluster: Cluster, policy: DeschedulerPolicy, base_params: RebalanceParams, deadline: float,
            initial: Verdict) -> Optimum:
    started = time.perf_counter()
    base = replace(cluster, pending=())
    nodes = nodes_of(base, policy)
    snap = Snapshot.of(base, nodes)
    evictor = Evictor(policy.profiles[0].evictor, base, Counts(policy), nodes, snap.pods_on) if policy.profiles \
        else None
    if deadline - started < OPTIMUM_S_PER_POD * len(base.pods) * slowdown():
        return _not_searched(base, policy, base_params, initial, evictor, started)
    goals = goals_of(base, policy)
    scope = (lambda p: not evictor.why_not(p) and not evictor.pre_eviction(p)) if evictor else (lambda p: False)
    params = replace(base_params, goal="fix", extra=goals, max_moves=policy.max_total,
                     move_policy=MovePolicy(True, True, scope))
    healthy = {p.key: pod_ready(p) for p in base.pods}
    state0 = state_of(base, {})
    initial_bad = violations_by_pod(state0, params.profile)
    pdbs = PdbIndex.of(base)
    movers = who_moves(base, params.move_policy, set(), healthy, pdbs.budgets(healthy), initial_bad)
    notes: list[Note] = []
    free = movers.free
    if len(free) > FOCUS_LIMIT:
        # the pods that can help: on nodes outside the thresholds, in violation, or duplicates
        helpful = set(initial.outside)
        want = set(initial.violations) | set(initial_bad)
        over_dup = {k for k, up in goals.dup_upper.items()}
        free = [p for p in free if p.node_name in helpful or p.key in want or owner_key(p) in over_dup]
        notes.append(Note(f"{len(movers.free)} evictable pods: only the {len(free)} on nodes outside the thresholds, "
                          "in violation or duplicated were re-placed (optimal among plans that evict only those)"))
    high = _high_optimum(base, policy, params, movers, healthy, initial_bad, pdbs, deadline, evictor, initial)
    if high is not None:
        return high
    # when the CP-SAT search after the constructive plan could not be built in its share anyway (below), the
    # constructive plan takes more of the time: at 5,250 nodes it stopped at its 40 % with 982 nodes still
    # above their thresholds, and the command ended 236 s before its limit
    now = time.perf_counter()
    share = (deadline - now) * TARGET_SHARE * 0.5
    # (the receivers, counted only when every node would not fit: counting them builds the state)
    hopeless = _build_seconds(free, len(base.nodes)) > share and (
        len(base.nodes) <= RECEIVERS_FROM or _build_seconds(free, len(_receivers(base, free, goals))) > share)
    fast = _low_optimum(base, state0, policy, params, goals, movers, healthy, initial_bad, pdbs, deadline, evictor,
                        plan_share=HOPELESS_PLAN_SHARE if hopeless else PLAN_SHARE)
    if fast is not None and (fast.plan.status == Status.OPTIMAL or time.perf_counter() > deadline - 1.0):
        return fast
    # not proven: the CP-SAT target (from the constructive plan when there is one) searches for better, and the
    # better of the two plans is printed
    now = time.perf_counter()
    target_end = now + (deadline - now) * TARGET_SHARE
    start = {m.key: fast.plan.final[m.key] for w in fast.plan.waves for m in w.moves} if fast is not None else {}
    restricted = len(free) < len(movers.free)
    nodes_allowed = None
    if len(base.nodes) > RECEIVERS_FROM:
        # the free pods may end on their own nodes and on the least used nodes (twice as many, at least
        # RECEIVERS_MIN): a 500-node model is not built and solved in seconds on a loaded machine
        nodes_allowed = list(dict.fromkeys(_receivers(base, free, goals) + list(start.values())))
        restricted = True
        notes.append(Note(f"the re-placed pods could go to {len(nodes_allowed)} of {len(base.nodes)} nodes: their "
                          "own and the least used (optimal among those plans, not proven against all)"))
    # the target model cannot be stopped while it is built: it is built only when its planned build (solve's
    # measured cost per (class, node) variable) fits in half of the target's share. At 5,250 nodes (1,190 above
    # the thresholds) it was built over thousands of classes and nodes: 12 GB, and minutes past the limit.
    model_nodes = len(nodes_allowed if nodes_allowed is not None else base.nodes)
    planned = _build_seconds(free, model_nodes)
    if planned > (target_end - now) * 0.5:
        why = (f"the CP-SAT search was not run: its model ({_classes(free)} pod classes x {model_nodes} nodes) "
               f"takes about {planned / slowdown():.0f}s to build, more than its share of the time left "
               f"({target_end - now:.0f}s)")
        if fast is not None:
            return replace(fast, plan=replace(fast.plan, notes=fast.plan.notes + (Note(why),)))
        return _not_searched(base, policy, params, initial, evictor, started,
                             f"{why}; try --time-limit {math.ceil(4 * planned + params.time_limit)} or more")
    if nodes_allowed is not None:
        target = solve_target(base, free, params, target_end, movers.guarded, nodes=nodes_allowed,
                              start=start or None)
    elif len(free) <= FOCUS_LIMIT:
        found = find_target(base, free, params, target_end, movers.guarded, initial_bad)
        restricted = restricted or len(found.free) < len(free)
        target, free = found.target, found.free
        notes.extend(Note(n) for n in found.notes)
        for key, why in found.unrepaired.items():
            notes.append(Note(f"{key} {why}"))
    else:
        target = solve_target(base, free, params, target_end, movers.guarded)
    where0 = {p.key: p.node_name for p in base.pods}
    # the command prints the policy's verdict and the verify gate's, not rebalance's metrics: no second judge
    # here (judging the whole state before and after took 11 s of CPU at 500 nodes, past the time limit)
    before = metrics(base, where0, (), (), params.policy, params.profile, judged=False)
    if target is None:
        plan = RebalancePlan("fix", (), False, (Blocked("-", "no target state meets the policy's hard limits"),), (),
                             before, before, Status.NO_TARGET, (), tuple(notes), time.perf_counter() - started,
                             where0)
        unmet = tuple(replace(u, why="no plan: " + u.why) for u in _unmet_reasons(base, policy, initial, evictor))
        return fast or Optimum(plan, initial, unmet or (Unmet("policy", "-", "no target state meets the policy's "
                                                              "hard limits"),), len(free))
    waves, stuck, final = waves_to(base, target, free, params, healthy, initial_bad, deadline=deadline, pdbs=pdbs)
    moved = {m.key for w in waves for m in w.moves}
    after = metrics(base, final, moved, (), params.policy, params.profile, judged=False)
    status, levels = target.status, target.levels
    if restricted and status == Status.OPTIMAL:
        # proven within the restriction only: OPTIMAL is kept for a proof against every plan
        status = Status.FEASIBLE
        levels = tuple((name, value, False) for name, value, _ in levels)
    plan = RebalancePlan("fix", (), not stuck, tuple(stuck), tuple(waves), before, after, status,
                         levels, tuple(notes) + tuple(Note(n) for n in target.notes),
                         time.perf_counter() - started, final)
    end_cluster = end_state(base, final)
    v = verdict(end_cluster, policy)
    found = Optimum(plan, v, tuple(_unmet_reasons(end_cluster, policy, v, evictor)), len(free))
    if fast is not None and _rank(fast) <= _rank(found):
        return fast
    if fast is None:
        return found
    # the goals the constructive bound proved no plan meets keep their proof in the CP-SAT plan's report
    proven = {u.node: u for u in fast.unmet if u.proven}
    found = replace(found, unmet=tuple(proven.get(u.node, u) if u.goal == LOW else u for u in found.unmet))
    # a target proven optimal is itself the bound (it can exceed the per-node count: that count does not see
    # what keeps a pod from leaving, e.g. followers' affinity)
    return replace(found, bound=found.plan.moves if found.plan.status == Status.OPTIMAL else fast.bound)


def _not_searched(base: Cluster, policy: DeschedulerPolicy, params: RebalanceParams, initial: Verdict,
                  evictor: Evictor | None, started: float, why: str | None = None) -> Optimum:
    """No time left for the optimum (reading the input and the descheduler's cycle used the time limit, or `why`):
    an empty plan that says so, instead of a search past the limit."""
    where0 = {p.key: p.node_name for p in base.pods}
    # no utilisation metrics: the command prints none, and building the state for them took 2 s at 5,250 nodes
    # after the time was already up (the rebalance document reads only the empty nodes, none newly)
    before: dict[str, Any] = {"empty_nodes": []}
    why = why or (f"the time limit ran out before the optimum was searched (reading the input and simulating the "
                  f"descheduler's cycle used it); try --time-limit {math.ceil(2 * params.time_limit)} or more")
    plan = RebalancePlan("fix", (), False, (Blocked("-", why),), (), before, before, Status.UNKNOWN, (),
                         (Note(why),), time.perf_counter() - started, where0)
    return Optimum(plan, initial, tuple(_unmet_reasons(base, policy, initial, evictor)), 0)


def _rank(o: Optimum) -> tuple[int, int, int, int, bool]:
    """Better plans first: fewer nodes outside the thresholds, fewer violations, fewer blocked moves, fewer
    evictions, proven first."""
    return (len(o.verdict.outside), len(o.verdict.violations), len(o.plan.blocked), o.plan.moves,
            o.plan.status != Status.OPTIMAL)


def _classes(pods: list[Pod]) -> int:
    """The pod classes a target model over `pods` has (about: identical specs and labels)."""
    return len({pod_signature(p, frozenset(p.labels)) for p in pods})


def _build_seconds(pods: list[Pod], nodes: int) -> float:
    """Wall seconds a target model over `pods` and `nodes` nodes is expected to take to build on this machine
    now: solve's measured cost per (class, node) variable, scaled by how slowly the command has run."""
    return SECONDS_PER_VARIABLE * _classes(pods) * nodes * slowdown()


def _low_optimum(base: Cluster, state: Any, policy: DeschedulerPolicy, params: RebalanceParams, goals: PolicyGoals,
                 movers: Any, healthy: dict[str, bool], initial_bad: dict[str, set[str]], pdbs: PdbIndex,
                 deadline: float, evictor: Evictor | None, plan_share: float = PLAN_SHARE) -> Optimum | None:
    """A policy whose only goal is LowNodeUtilization's: the constructive plan and its bound (constructive.py),
    landed in PDB-safe waves. None when the policy states other goals or limits the plan must meet together.
    `state`: the input's state (changed: the plan is built on it)."""
    low = policy.plugin(LOW)
    if low is None or any(a.name != LOW for a in policy.plugins()) or policy.max_per_namespace is not None:
        return None
    started = time.perf_counter()
    lander = Lander(state, params.seed, params.profile)
    movable: dict[str, list[Pod]] = defaultdict(list)
    for p in movers.free:
        if p.node_name in goals.caps and low.namespaces.admits(p.namespace):
            movable[p.node_name].append(p)
    guarded = movers.guarded
    # only the pods of the nodes above their caps are ever evicted (at 1,000 nodes, judging every movable pod
    # below took 4 s of CPU)
    over = [n for n, cap in goals.caps.items() if n in state.nodes and excess(usage(state, n), cap)]
    candidates = [p for n in over for p in movable.get(n, [])]
    # pods other pods' required affinity points at (a cache its frontends must share a zone with): moving one
    # drags or strands its followers, so they are evicted last
    terms = {t.label_selector for p in base.pods for t in p.affinity.pod_required if t.label_selector is not None}
    anchors = {p.key for p in candidates if any(t.matches(p.labels) for t in terms)}
    stay = anchor_domains(base, [p for p in candidates if p.key in anchors])
    node_labels = {n.name: n.labels for n in base.nodes}

    def may_land(pod: Pod, node: str) -> bool:
        # an anchor's replacement stays in the domains where its followers run: moved out, it would leave them
        # violating their required affinity (the verifier refuses that state) and no replacement of theirs
        # could land there (seed 2 of the 500-node benchmark: a zone's cache moved away, its zone's frontends
        # became unmovable and two nodes stayed above the target)
        return all(node_labels[node].get(k) == v for k, v in stay.get(pod.key, ()))

    # an anchor kept in its zone needs more temporary cordons than other pods: kube-scheduler's first choices
    # there are the zone's nodes with the most room in cpu and memory, often at their pod-count cap (seed 2 of
    # the 500-node benchmark: the two caches' waves cordoned 133 and 135 nodes, for a plan at the bound; with 40
    # tries the caches were kept and two more pods evicted). The cordons last while the anchor's wave runs
    anchor_steers = max(MAX_STEERS, int(ANCHOR_STEERS * len(base.nodes)))
    # the pods whose replacement lands on no other node in any plan: they cannot bring their node down, so the
    # bound leaves them out, and a node only they could bring down is a goal no plan meets (unfixable.py)
    stuck = stuck_pods(base, {p.key for p in movers.free}, candidates, params.profile)

    def preference(p: Pod) -> tuple:
        # pods no PDB guards first (then more budget left), not followed, lower priority, no placement rules
        return (p.key in guarded, -guarded.get(p.key, 0), p.key in anchors, p.priority, _holds_rules(p), p.order)

    def eviction_key(p: Pod) -> tuple:
        return (-p.priority, bool(p.affinity.pod_required), -p.requests.get("cpu", 0),
                -p.requests.get("memory", 0), p.order)

    # the plan takes at most `plan_share` of the time left (PLAN_SHARE: a kube-scheduler landing per eviction,
    # more with steering: 106 evictions took most of a minute on a loaded machine), the waves the rest; a node
    # not planned in time is named in the notes
    # like the descheduler's first cycle, the plan always gets MIN_PLAN_S (a small cluster's plan takes
    # milliseconds; with no time left at all the command would otherwise print no plan)
    now = time.perf_counter()
    stop_at = max(now + max(0.0, deadline - now) * plan_share, now + MIN_PLAN_S)
    deadline = max(deadline, now + 2 * MIN_PLAN_S)
    lp = plan_low(state, lander, goals.caps, movable, preference, eviction_key,
                  stop=lambda: params.interrupt.is_set() or time.perf_counter() > stop_at, may_land=may_land,
                  steers=lambda p: anchor_steers if p.key in stay else MAX_STEERS, stuck=stuck)
    per_node = min((v for v in (policy.max_per_node, low.node_limit) if v is not None), default=None)
    sources: dict[str, int] = defaultdict(int)
    pods = {p.key: p for p in movers.free}
    for key in lp.assignment:
        sources[pods[key].node_name] += 1
    if (per_node is not None and any(v > per_node for v in sources.values())) or \
            (policy.max_total is not None and len(lp.assignment) > policy.max_total):
        return None  # the eviction limits bind: the CP-SAT target weighs them against the thresholds
    proven_outside = len(lp.outside) == lp.outside_bound
    proven = proven_outside and len(lp.assignment) == lp.bound
    target = Target(dict(lp.assignment), Status.OPTIMAL if proven else Status.FEASIBLE,
                    (("outside", len(lp.outside), proven_outside), ("moves", len(lp.assignment), proven)))
    chosen = [pods[k] for k in lp.assignment]
    undo(state, chosen, lp.assignment)  # the input's state again, for the waves (with its lander)
    if len(base.nodes) <= RECEIVERS_FROM:
        # rebalance's wave builder: it tries groups and takes kube-scheduler's nodes when as good (fewer waves),
        # and is fast at this size
        waves, stuck_moves, final = waves_to(base, target, chosen, params, healthy, initial_bad, deadline=deadline,
                                             pdbs=pdbs, start=(state, lander))
    else:
        waves, stuck_moves, final = _waves_of_steps(base, lp.steps, params, healthy, initial_bad, pdbs, state,
                                                    lander, deadline)
    moved = {m.key for w in waves for m in w.moves}
    where0 = {p.key: p.node_name for p in base.pods}
    # the command prints the policy's verdict and the verify gate's, not rebalance's metrics: no second judge here
    before = metrics(base, where0, (), (), params.policy, params.profile, judged=False)
    after = metrics(base, final, moved, (), params.policy, params.profile, judged=False)
    status, levels = target.status, target.levels
    if stuck_moves:
        status = Status.FEASIBLE
        levels = tuple((name, value, False) for name, value, _ in levels)
    meets = "the thresholds" if not lp.hopeless else "the thresholds on every node that can be brought within them"
    notes = [Note(f"{len(movers.free)} evictable pods; every plan that meets {meets} evicts at least "
                  f"{lp.bound} (per node above targetThresholds, the fewest of its evictable pods whose requests "
                  "cover the excess); each replacement landed by kube-scheduler, steered by temporary cordons")]
    if lp.hopeless:
        notes.append(Note(f"{len(lp.hopeless)} node(s) no plan brings within targetThresholds (named in unmet) are "
                          "left out of the bound: it is the fewest evictions that meet every other goal"))
    notes += [Note(f"{n}: {why}") for n, why in sorted(lp.why.items()) if n not in lp.hopeless]
    plan = RebalancePlan("fix", (), not stuck_moves, tuple(stuck_moves), tuple(waves), before, after, status,
                         levels, tuple(notes), time.perf_counter() - started, final)
    end_cluster = end_state(base, final)
    v = verdict(end_cluster, policy)
    proven = {n: _hopeless(base, n, goals.caps[n], movable.get(n, []), stuck, evictor) for n in lp.hopeless}
    return Optimum(plan, v, tuple(_unmet_reasons(end_cluster, policy, v, evictor, proven=proven, plan_why=lp.why)),
                   len(chosen), lp.bound)


def _waves_of_steps(base: Cluster, steps: Any, params: RebalanceParams, healthy: dict[str, bool],
                    initial_bad: dict[str, set[str]], pdbs: PdbIndex, state: Any, lander: Lander, deadline: float,
                    ) -> tuple[list[Wave], list[Blocked], dict[str, str]]:
    """The constructive plan's evictions as waves, in its order, from the input's `state`. Each eviction joins
    the wave being built when the wave's replacements, scheduled together under the union of their cordons,
    still land each on its planned node, the PodDisruptionBudgets allow the wave's evictions together, and the
    state after the wave passes the verifier (rebalance's incremental check: the pods the wave can affect
    judged, the others keep their verdict); else the wave is closed and the eviction starts the next one (alone:
    under the cordons it was planned with, where it lands on its planned node). rebalance's wave builder steers
    every replacement to its planned node with a bounded number of cordons, trying groups; here each planned
    node is kube-scheduler's own choice under the eviction's cordons, so the waves are built directly (on a
    500-node cluster the builder made about one wave of one eviction a second on a loaded machine and ran out
    of time)."""
    w = _Waves(base, params, healthy, initial_bad, (), None, pdbs, (state, lander))
    waves: list[Wave] = []
    blocked: list[Blocked] = []
    wave: list[Move] = []
    cordons: set[str] = set()

    def allowed(moves: list[Move]) -> str:
        """The PDB the wave's evictions together exceed, or ""."""
        budgets = w.budgets()
        spent: dict[str, int] = defaultdict(int)
        for m in moves:
            key = w.cost(m, budgets)
            if key:
                spent[key] += 1
                if spent[key] > budgets[key].allowed:
                    return key
        return ""

    def fits(moves: list[Move], cords: set[str], since: int = 0) -> bool:
        """`since`: moves[:since] is a wave that passed the verifier (only the new moves' delta is judged)."""
        landed = lander.simulate(moves, sorted(cords))
        return all(n == m.target for m, n in zip(moves, landed)) and not allowed(moves) and \
            w.verified(moves, since)

    def close() -> None:
        if not wave:
            return
        budgets = w.budgets()
        cost = {m.key: w.cost(m, budgets) for m in wave}
        spent: dict[str, int] = defaultdict(int)
        for key in cost.values():
            if key:
                spent[key] += 1
        alone = lander.simulate(wave, ())
        cords = tuple(sorted(cordons))
        waves.append(Wave(tuple(wave), cords, cords,
                          tuple(Landing(m.key, m.target, a, m.target) for m, a in zip(wave, alone)),
                          {k: (n, budgets[k].allowed) for k, n in spent.items()},
                          {k: v for k, v in cost.items() if v}))
        w.commit(wave)
        wave.clear()
        cordons.clear()

    for i, (pod, to, cords) in enumerate(steps):
        m = Move(pod, pod.node_name, to)
        if params.interrupt.is_set() or time.perf_counter() >= deadline:
            close()
            why = (R_INTERRUPTED if params.interrupt.is_set() else R_OUT_OF_TIME).format(waves=len(waves))
            blocked += [Blocked(p.key, R_UNPLANNED.format(src=p.node_name, dst=n, why=why)) for p, n, _ in steps[i:]]
            break
        if wave and fits(wave + [m], cordons | set(cords), since=len(wave)):
            wave.append(m)
            cordons.update(cords)
            continue
        close()
        if fits([m], set(cords)):
            wave.append(m)
            cordons.update(cords)
            continue
        landed = lander.simulate([m], cords)[0]
        why = (f"kube-scheduler would bind its replacement on {landed or 'no node'} after the waves before it"
               if landed != to else allowed([m]) and f"its PodDisruptionBudget {allowed([m])} allows no disruption"
               or "the state after its wave fails the verifier")
        blocked.append(Blocked(pod.key, R_STUCK.format(src=pod.node_name, dst=to, why=why)))
    close()
    return waves, blocked, dict(w.where)


def _high_optimum(base: Cluster, policy: DeschedulerPolicy, params: RebalanceParams, movers: Any,
                  healthy: dict[str, bool], initial_bad: dict[str, set[str]], pdbs: PdbIndex, deadline: float,
                  evictor: Evictor | None, initial: Verdict) -> Optimum | None:
    """HighNodeUtilization's goal: the underutilised nodes emptied (every pod but DaemonSet and mirror pods off
    them, each landing on a node that stays), so that they can be removed; the most nodes emptied, then the
    fewest evictions. That is rebalance's `pack` target with only the evictable pods of the underutilised
    nodes free to move (empty nodes counted over the cluster: only those nodes can newly become empty), and
    its waves (the nodes it empties cordoned from the first wave). None when the policy states other goals."""
    high = policy.plugin(HIGH)
    if high is None or any(a.name != HIGH for a in policy.plugins()) or policy.max_per_namespace is not None \
            or policy.max_per_node is not None or high.node_limit is not None:
        return None
    started = time.perf_counter()
    under = set(initial.under)
    free = [p for p in movers.free if p.node_name in under and high.namespaces.admits(p.namespace)
            and not goes_with_node(p)]
    pparams = replace(params, goal="pack", extra=None)
    found = find_target(base, free, pparams, started + (deadline - started) * TARGET_SHARE, movers.guarded,
                        initial_bad)
    where0 = {p.key: p.node_name for p in base.pods}
    before = metrics(base, where0, (), (), params.policy, params.profile, judged=False)
    notes = [Note(n) for n in found.notes] + [Note(f"{k} {why}") for k, why in found.unrepaired.items()]
    if found.target is None:
        plan = RebalancePlan("pack", (), False, (Blocked("-", "no target state found in time"),), (), before, before,
                             Status.NO_TARGET, (), tuple(notes), time.perf_counter() - started, where0)
        return Optimum(plan, initial, tuple(_unmet_reasons(base, policy, initial, evictor)), len(free))
    target = found.target
    waves, stuck, final = waves_to(base, target, found.free, pparams, healthy, initial_bad, deadline=deadline,
                                   pdbs=pdbs)
    moved = {m.key for w in waves for m in w.moves}
    after = metrics(base, final, moved, (), params.policy, params.profile, judged=False)
    status, levels = target.status, target.levels
    if stuck:
        status = Status.FEASIBLE
        levels = tuple((name, value, False) for name, value, _ in levels)
    proven = status == Status.OPTIMAL
    plan = RebalancePlan("pack", (), not stuck, tuple(stuck), tuple(waves), before, after, status, levels,
                         tuple(notes) + tuple(Note(n) for n in target.notes), time.perf_counter() - started, final)
    end_cluster = end_state(base, final)
    v = verdict(end_cluster, policy)
    return Optimum(plan, v, tuple(_unmet_reasons(end_cluster, policy, v, evictor, initial.under)), len(found.free),
                   len(moved) if proven else None)


def anchor_domains(cluster: Cluster, anchors: list[Pod]) -> dict[str, tuple[tuple[str, str], ...]]:
    """anchor pod key -> the (topology key, value) pairs its replacement must keep: those of the required
    pod-affinity terms of other pods (followers) that select it and run in its domain. Followers are grouped by
    (term, namespace, domain value), so a Deployment's many replicas cost one check."""
    labels = {n.name: n.labels for n in cluster.nodes}
    ns_labels = {name: ns.labels for name, ns in cluster.namespaces.items()}
    groups: dict[tuple, Pod] = {}
    for f in cluster.pods:
        for t in f.affinity.pod_required:
            value = labels.get(f.node_name, {}).get(t.topology_key)
            if value is not None:
                groups.setdefault((t, f.namespace, t.topology_key, value), f)
    out: dict[str, tuple[tuple[str, str], ...]] = {}
    for a in anchors:
        mine = labels.get(a.node_name, {})
        keep = set()
        for (t, _, key, value), f in groups.items():
            if f.key != a.key and mine.get(key) == value and term_matches(t, f, a, ns_labels, owner_incoming=True):
                keep.add((key, value))
        if keep:
            out[a.key] = tuple(sorted(keep))
    return out


def _holds_rules(pod: Pod) -> bool:
    a = pod.affinity
    return bool(a.pod_required or a.anti_required or a.node_required
                or any(c.when_unsatisfiable == "DoNotSchedule" for c in pod.spread_constraints))


def _receivers(cluster: Cluster, free: list[Pod], goals: PolicyGoals) -> list[str]:
    """The free pods' own nodes, then the nodes with the most room under their caps (or allocatable)."""
    own = list(dict.fromkeys(p.node_name for p in free))
    state = state_of(cluster, {})

    def room(name: str) -> float:
        info = state.nodes[name]
        cap = goals.caps.get(name, {})
        alloc = info.node.allocatable
        shares = [(cap.get(r, alloc.get(r, 0)) - info.requested.get(r, 0)) / alloc[r]
                  for r in ("cpu", "memory") if alloc.get(r, 0) > 0]
        return min(shares) if shares else 0.0

    others = sorted((n.name for n in cluster.nodes if n.name not in own and not n.unschedulable),
                    key=lambda n: (-room(n), n))
    return own + others[:max(RECEIVERS_MIN, 2 * len(own))]


def end_state(cluster: Cluster, final: dict[str, str]) -> Cluster:
    return replace(cluster, pods=tuple(replace(p, node_name=final.get(p.key, p.node_name)) for p in cluster.pods),
                   pending=())


def _hopeless(cluster: Cluster, node: str, cap: dict[str, int], movable: list[Pod], stuck: dict[str, str],
              evictor: Evictor | None) -> Unmet:
    """A node above its caps that no plan brings within them: its evictable pods whose replacement can land
    elsewhere do not cover its excess. Blocking: the pods the evictor keeps there, and those that cannot land
    on another node (with kube-scheduler's reasons)."""
    on = [p for p in cluster.pods if p.node_name == node]
    used = {"cpu": sum(p.requests.get("cpu", 0) for p in on), "memory": sum(p.requests.get("memory", 0) for p in on),
            "pods": len(on)}
    over = excess(used, cap)
    helpful = [p for p in movable if p.key not in stuck]
    kept = [p for p in on if evictor is not None and evictor.why_not(p)]
    blocked = [p for p in movable if p.key in stuck]
    gives = {r: sum(amount(p, r) for p in helpful) for r in over}
    short = ", ".join(f"{r} {_fmt(r, gives[r])} of {_fmt(r, over[r])}" for r in sorted(over) if gives[r] < over[r])
    parts = [f"{node} stays above targetThresholds in every plan: the pods that can leave it cover only {short} "
             "of its excess"]
    if kept:
        parts.append(f"the evictor keeps {len(kept)} pod(s) there ({_few([p.key for p in kept])}: "
                     f"{evictor.why_not(kept[0]) if evictor else ''})")
    if blocked:
        parts.append(f"{len(blocked)} evictable pod(s) there ({_few([p.key for p in blocked])}) can leave it in no "
                     f"plan ({blocked[0].key}: {stuck[blocked[0].key]})")
    return Unmet("LowNodeUtilization", node, "; ".join(parts), tuple(p.key for p in kept + blocked), True)


def _fmt(resource: str, value: int) -> str:
    if resource == "cpu":
        return f"{value}m"
    if resource == "memory":
        return f"{value / 2 ** 20:.0f}Mi"
    return str(value)


def _few(keys: list[str], n: int = 5) -> str:
    return ", ".join(keys[:n]) + (" ..." if len(keys) > n else "")


def _unmet_reasons(cluster: Cluster, policy: DeschedulerPolicy, v: Verdict, evictor: Evictor | None,
                   to_empty: tuple[str, ...] = (), proven: dict[str, Unmet] | None = None,
                   plan_why: dict[str, str] | None = None) -> list[Unmet]:
    """Per goal not met, which and why. `to_empty`: HighNodeUtilization's underutilised nodes (before the plan),
    each still holding pods other than DaemonSet and mirror pods is named. `proven`: node -> the goal no plan
    meets there (its entry replaces the generic one); `plan_why`: node -> why this plan left it outside."""
    proven, plan_why = proven or {}, plan_why or {}
    out = []
    on: dict[str, list[Pod]] = defaultdict(list)
    for p in cluster.pods:
        on[p.node_name].append(p)
    for n in to_empty:
        left = [p for p in on[n] if not goes_with_node(p)]
        if not left:
            continue
        kept = [p.key for p in left if evictor is None or evictor.why_not(p)]
        why = (f"the evictor keeps {', '.join(kept[:5])}{' ...' if len(kept) > 5 else ''}" if kept else
               "no other node takes all of its pods (or the time limit ran out)")
        out.append(Unmet("HighNodeUtilization", n, f"{n} is underutilised and not emptied ({len(left)} pod(s) "
                         f"left): {why}", tuple(kept)))
    for n in v.outside:
        if n in proven:
            out.append(proven[n])
            continue
        stuck = [p.key for p in on[n] if evictor is None or evictor.why_not(p)]
        if n in plan_why:
            out.append(Unmet("LowNodeUtilization", n, f"{n} stays above targetThresholds in this plan (another plan "
                             f"may bring it within them): {plan_why[n]}", ()))
            continue
        why = (f"its pods the evictor keeps ({', '.join(stuck[:5])}{' ...' if len(stuck) > 5 else ''}) already "
               "hold it above targetThresholds, or no other node has room within the thresholds") if stuck else \
            "no other node has room for its pods within the thresholds (or the eviction limits stop the plan)"
        out.append(Unmet("LowNodeUtilization", n, f"{n} stays above targetThresholds: {why}", tuple(stuck)))
    for key, plugin in zip(v.violations, v.plugins or ("",) * len(v.violations)):
        pod = next((p for p in cluster.pods if p.key == key), None)
        where = pod.node_name if pod else "?"
        if plugin == SPREAD:
            out.append(Unmet(SPREAD, where, f"{key} on {where}: {SPREAD} still picks it; the plugin counts only the "
                             "pods the evictor may evict in each domain, while kube-scheduler counts every matching "
                             "pod: the plan meets kube-scheduler's spread rule, and evicting for the plugin's count "
                             "only repeats", (key,), pod=key))
            continue
        reason = evictor.why_not(pod) if evictor is not None and pod is not None else ""
        name = plugin or "a violation plugin"
        why = reason or "no valid node takes it within the policy's limits"
        out.append(Unmet(plugin or "violation", where, f"{key} still violates the policy ({name}) on {where}: {why}",
                         (key,), pod=key))
    return out
