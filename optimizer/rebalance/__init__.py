"""`podplan rebalance`: a target state for the running pods that may move, and PDB-safe waves to reach it.

`rebalance()` below runs the steps, one module each:
1. who may move (movable.py, with the Eviction API's arithmetic in disruption.py): the descheduler's default
   evictor, less the pods the Eviction API refuses for the whole plan;
2. the target (target_model.py builds the CP-SAT model and its levels, target.py solves them
   lexicographically, over growing neighbourhoods for a large pack/spread, and falls back when no valid target
   exists); drain.py says why a drain leaves pods;
3. waves (waves.py): PDB-safe, every state between waves valid;
4. landing (landing.py): where kube-scheduler puts each wave's replacements, and the cordons that steer them;
5. metrics (metrics.py) before and after; the plan's vocabulary is plan.py, its states states.py.

Knowing differences and limits: cordons a plan adds are operational (kubectl cordon); states are judged on the
input's Node objects. Required affinity is IgnoredDuringExecution: an immovable pod whose required affinity
was met only by movable pods is not protected when they move (the verifier calls it pre-existing, as the
immovable pods alone already break it). Pending pods of the input are not part of a rebalance. Replacements
are assumed to become Ready (the script waits for it).
"""
from __future__ import annotations

import math
import sys
import time
from dataclasses import replace

from ...models.objects import Cluster

from ..disruption import pod_ready
from .budgets import PdbIndex
from .drain import left_on_drained
from .metrics import metrics
from .movable import who_moves
from ..runner import Clock, Status, clocked
from ..timelimit import SEARCH_WALL_PER_SECOND, cut_note, scaled_reserve
from .plan import DRAIN, GOALS, Blocked, Note, RebalanceError, RebalanceParams, RebalancePlan
from .states import state_of, violations_by_pod
from .target import find_target
from .waves import R_OUT_OF_TIME, waves_to

R_NO_TARGET = "no valid target state was found{why}"
TARGET_SHARE = 0.5  # of the time left after the reserve: the target's; the waves get the rest
RESERVE_PER_POD = 0.0006  # seconds per running pod kept for the metrics, the verify gate and the output (9 s at
# 15,449 pods: metrics before and after 3.6 s, the gate 2-3 s, the JSON 1-2 s)


def rebalance(cluster: Cluster, params: RebalanceParams, deadline: float | None = None) -> RebalancePlan:
    """The whole rebalance: who moves, target, waves, landing, metrics (see the module docstring).
    `deadline` (perf_counter seconds): when the command must be done, printing included (default: the time
    limit from now). The target gets TARGET_SHARE of what is left after the RESERVE_PER_POD reserve (the
    metrics, the verify gate and the output), the waves the rest; at the deadline, or on Ctrl-C
    (params.interrupt), each stops with the best it has."""
    started = time.perf_counter()
    end = deadline if deadline is not None else started + params.time_limit
    node_names = {n.name for n in cluster.nodes}
    unknown = [d for d in params.drain if d not in node_names]
    if unknown:
        raise RebalanceError(f"--drain names node(s) not in the input: {', '.join(unknown)}")
    if params.goal not in GOALS + (DRAIN,):
        raise RebalanceError(f"unknown goal {params.goal!r}: one of {', '.join(GOALS)}")
    notes: list[Note] = []
    if cluster.pending:
        notes.append(Note(f"{len(cluster.pending)} pending pod(s) of the input are not part of a rebalance"))
    base = replace(cluster, pending=())
    drained = set(params.drain)

    healthy = {p.key: pod_ready(p) for p in base.pods}
    _say(params, f"rebalance: judging the current state's {len(base.pods)} pod(s): "
                 f"{time.perf_counter() - started:.1f}s")
    initial_bad = violations_by_pod(state_of(base, {}), params.profile)
    pdbs = PdbIndex.of(base)
    start_budgets = pdbs.budgets(healthy)
    movers = who_moves(base, params.move_policy, drained, healthy, start_budgets, initial_bad)
    blocked = [Blocked(pod, why) for pod, why in movers.blocked]
    for reason, keys in movers.kept.items():
        notes.append(Note(f"{len(keys)} pod(s) cannot be evicted ({{items}}): {reason}", tuple(keys)))

    # measured on an idle machine; scaled by how much slower this process has run so far (a loaded machine)
    reserve = scaled_reserve(RESERVE_PER_POD * len(base.pods), end - started)
    target_end = time.perf_counter() + max(0.0, end - reserve - time.perf_counter()) * TARGET_SHARE
    _say(params, f"rebalance: {len(movers.free)} pod(s) may move, {len(blocked)} blocked; the target search has "
                 f"{max(0.0, target_end - time.perf_counter()):.1f}s: {time.perf_counter() - started:.1f}s")
    # the target search runs on a deterministic clock (optimizer.runner.Clock), so that the same input and seed
    # give the same plan whatever the machine's load: its budget is planned from the limit the user gave and the
    # input's size; the wall clock (target_end) only cuts it short, and the plan then says so
    search_s = target_seconds(params.time_limit if params.budget is None else params.budget, len(base.pods))
    clk = Clock(target_end)
    with clocked(clk):
        search_end = clk.now() + search_s
        found = find_target(base, movers.free, params, search_end, movers.guarded, initial_bad)
    if clk.cuts:
        notes.append(Note(cut_note(clk.cuts)))
    _say(params, f"rebalance: target {'found' if found.target is not None else 'not found'}: "
                 f"{time.perf_counter() - started:.1f}s")
    notes.extend(Note(n) for n in found.notes)
    target, free = found.target, found.free
    if target is None:
        # out of time: name the limit and what to try (the search had TARGET_SHARE of it; a target found at
        # all is what the next limit buys, so at least twice as much)
        had = target_end - started
        why = (f" within the {params.time_limit:g}s time limit (the target search had {had:.0f}s of it); "
               f"try --time-limit {math.ceil(2 * params.time_limit)} or more"
               if clk.cuts or clk.now() >= search_end else "")
        blocked.append(Blocked("-", R_NO_TARGET.format(why=why)))
        where = {p.key: p.node_name for p in base.pods}
        before = metrics(base, where, (), params.drain, params.policy, params.profile)
        return RebalancePlan(params.goal, params.drain, False, tuple(blocked), (), before, before, Status.NO_TARGET, (),
                             tuple(notes), time.perf_counter() - started, where, len(cluster.pending))
    on_drained = {p.key for p in base.pods if p.node_name in drained}
    for key, why in found.unrepaired.items():
        if params.goal == "fix" or key in on_drained:
            blocked.append(Blocked(key, why))
        else:
            notes.append(Note(f"{key} {why}"))
    blocked += left_on_drained(base, free, target, params)

    waves, stuck, final = waves_to(base, target, free, params, healthy, initial_bad, deadline=end - reserve,
                                   pdbs=pdbs)
    _say(params, f"rebalance: {len(waves)} wave(s), {len(stuck)} move(s) left over: "
                 f"{time.perf_counter() - started:.1f}s")
    blocked += stuck
    if any(R_OUT_OF_TIME.format(waves=len(waves)) in b.reason for b in stuck):
        # the waves are planned in a fixed order; only the wall clock stops them (the limit's promise)
        notes.append(Note(cut_note(["the waves' planning"])))
    moved = {m.key for w in waves for m in w.moves}
    before = metrics(base, {p.key: p.node_name for p in base.pods}, (), params.drain, params.policy, params.profile)
    after = metrics(base, final, moved, params.drain, params.policy, params.profile)
    notes.extend(Note(n) for n in target.notes)
    return RebalancePlan(params.goal, params.drain, not blocked, tuple(blocked), tuple(waves), before, after,
                         target.status, target.levels, tuple(notes), time.perf_counter() - started, final,
                         len(cluster.pending))


def target_seconds(time_limit: float, pods: int) -> float:
    """The target search's deterministic budget: TARGET_SHARE of the limit less the reserve an idle machine
    needs for `pods` running pods, over SEARCH_WALL_PER_SECOND (wall seconds a second of search takes on a busy
    machine); never under a tenth of the limit. A function of the options and the input only."""
    room = max(0.0, time_limit - RESERVE_PER_POD * pods) * TARGET_SHARE
    return max(0.1 * time_limit, room / SEARCH_WALL_PER_SECOND)


def _say(params: RebalanceParams, line: str) -> None:
    """A progress line on stderr (--verbose, or a terminal): a long rebalance is never silent."""
    if params.log_progress:
        print(line, file=sys.stderr, flush=True)
