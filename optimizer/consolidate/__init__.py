"""`podplan consolidate`: the nodes whose removal saves the most (price, else count), every movable pod re-placed
under every rule, in PodDisruptionBudget-safe waves; beside it, what cluster-autoscaler's scale-down removes.

`consolidate()` runs the steps, each on rebalance's machinery:
1. who moves (rebalance.movable.who_moves): the descheduler's evictor less what the Eviction API refuses for
   the whole plan; a pod that cannot move (no controller, local storage, system-critical, a PDB allowing 0
   disruptions, a rule it violates now) pins its node; DaemonSet and mirror pods leave with their node;
2. cluster-autoscaler's answer (scaledown.scale_down) and podplan's greedy start (scaledown.greedy_removal);
3. the optimum (model.solve_removal): CP-SAT over every movable pod and node when the model is small enough
   (FULL_MODEL cells), its bound then proven; else over a window of candidate nodes around the best start, the
   bound from model.capacity_bound;
4. the waves (rebalance.waves.waves_to) as a drain of the removed nodes: cordoned from the first wave, PDB
   budgets per wave, kube-scheduler's landing steered by temporary cordons; a node whose pods a wave cannot
   move is not removed (the figures are the plan's);
5. the verifier on the shrunk cluster (the removed nodes and their DaemonSet/mirror pods gone).
"""
from __future__ import annotations

import sys
import time
from collections.abc import Mapping
from dataclasses import replace

from ...models.errors import PlanInvalidError
from ...models.objects import Cluster, Pod

from ..disruption import pod_ready
from ..rebalance.budgets import PdbIndex
from ..rebalance.movable import goes_with_node, who_moves, why_immovable
from ..rebalance.plan import DRAIN, Blocked, Note, RebalanceParams, Target
from ..rebalance.states import state_of, violations_by_pod
from ..rebalance.waves import waves_to
from ..runner import Status
from ..verify import verify
from .model import capacity_bound, free_on, solve_removal
from .plan import ConsolidateError, ConsolidateParams, ConsolidatePlan
from .prices import PRICE_SCALE, scaled
from .scaledown import Drainer, greedy_removal, scale_down, utilization

FULL_MODEL = 60_000  # movable pods × nodes up to which the exact model over everything is built
WINDOW_NODES = 20  # candidate nodes beyond the start's a large cluster's window adds (lowest utilisation first)
RECEIVERS = 60  # nodes with the most room that may take the window's pods
# of the time left before the reserve when the step starts: the waves get what the model leaves (over half of
# the time: at 1,000 nodes a wave of a few dozen moves takes seconds to land and verify)
SHARES = {"greedy": 0.15, "scale_down": 0.1, "model": 0.3}
# the first chunk of waves takes this many times the input's judging time (idle, 2 cores: 9.5 s against 2.3 s at
# 5,000 nodes, 1.3 s against 0.35 s at 1,000; at twice, the 5,000-node chunk began with 5 s left and the command
# ended 0.5 s past its limit)
FIRST_CHUNK_JUDGES = 4.0
CHUNK_MOVES = 20  # moves the waves are planned for at a time, at least (nodes / 20 on a large cluster: each chunk
# builds the waves' states afresh, seconds at 1,000 nodes); see _waves_in_chunks
# seconds kept for the final verification and the output: a start and per running pod (besides twice the input's
# judging time, measured as the command runs). The gate and the output after the waves took 0.7 s at 300 nodes
# (4,635 pods) and 0.9 s at 1,000 (15,449) on 2 cores at load 1; at 0.6 ms a pod (an older verifier's pace) the
# reserve was 46 s of 5,000 nodes' (77,248 pods) default 30: every step had no time, and the plan removed nothing
RESERVE_START = 0.5
RESERVE_PER_POD = 6e-5

__all__ = ["consolidate", "ConsolidateError", "ConsolidateParams", "ConsolidatePlan", "shrunk"]


def consolidate(cluster: Cluster, params: ConsolidateParams, prices: Mapping[str, float], unit: str,
                deadline: float | None = None) -> ConsolidatePlan:
    started = time.perf_counter()
    end = deadline if deadline is not None else started + params.time_limit
    stop = params.interrupt.is_set

    def say(line: str) -> None:
        if params.log_progress:
            print(f"consolidate: {line} ({time.perf_counter() - started:.1f}s)", file=sys.stderr, flush=True)
    notes: list[Note] = []
    if cluster.pending:
        notes.append(Note(f"{len(cluster.pending)} pending pod(s) of the input are not part of the consolidation: "
                          "place them before removing any node"))
    base = replace(cluster, pending=())
    profile = params.profile
    work_end = end - RESERVE_START - RESERVE_PER_POD * len(base.pods)

    # 1. who moves, and what pins a node
    healthy = {p.key: pod_ready(p) for p in base.pods}
    judged = time.perf_counter()
    initial_bad = violations_by_pod(state_of(base, {}), profile)
    # the final gate judges the whole shrunk cluster as this did the input: keep what it took, twice (a state
    # built, every pod judged), as the machine's load makes it now, beside the per-pod reserve (four times left
    # a 1,000-node cluster no time at all at load 9; the overruns were the waves', see _waves_in_chunks)
    judge_s = time.perf_counter() - judged
    work_end = min(work_end, end - 2 * judge_s)
    # the plan is what the waves empty: their first chunk's time is kept before the steps' shares are counted (at
    # 5,000 nodes the greedy start, the scale-down and the model left it too little, and nothing was removed)
    first_chunk = FIRST_CHUNK_JUDGES * judge_s

    def until(share: str) -> float:
        return time.perf_counter() + max(0.0, work_end - first_chunk - time.perf_counter()) * SHARES[share]

    pdbs = PdbIndex.of(base)
    movers = who_moves(base, params.move_policy, set(), healthy, pdbs.budgets(healthy), initial_bad)
    held = {k: reason.replace("kept in place", "it pins its node") for reason, keys in movers.kept.items()
            for k in keys}
    free = [p for p in movers.free if p.key not in initial_bad]
    free_keys = {p.key for p in free}
    pinned: dict[str, str] = {}
    for p in base.pods:
        if p.key in free_keys or goes_with_node(p):
            continue
        why = why_immovable(p, params.move_policy) or held.get(p.key) or (
            f"violates {', '.join(sorted(initial_bad[p.key]))} now" if p.key in initial_bad else "cannot move")
        pinned.setdefault(p.node_name, f"{p.key}: {why}")
    candidates = [n.name for n in base.nodes if n.name not in pinned]
    say(f"{len(free)} movable pod(s), {len(pinned)} pinned node(s), {len(candidates)} candidate(s)")
    iprices = scaled(prices)

    # 2. cluster-autoscaler's answer, and podplan's greedy start
    # the greedy start first: the plan is built on it; cluster-autoscaler's answer is the comparison (said cut
    # short when its time runs out)
    # each gets its share once its state is built (building one takes seconds at 1,000 nodes under load: a
    # share counted from before left the greedy start no time at all)
    drainer = Drainer(base, free_keys, params.seed, profile)
    g_removed, g_where = greedy_removal(base, free_keys, prices, params.seed, profile, pinned, until("greedy"), stop,
                                        drainer)
    drainer = Drainer(base, free_keys, params.seed, profile)
    sd = scale_down(base, free_keys, prices, params.seed, profile, params.threshold, until("scale_down"), stop,
                    drainer)
    say(f"cluster-autoscaler removes {len(sd.remove)}, the greedy start {len(g_removed)}")
    starts = sorted([(tuple(sd.remove), sd.where), (tuple(g_removed), g_where)],
                    key=lambda s: (-sum(iprices[n] for n in s[0]), len(s[1])))
    start_removed, start_where = starts[0]

    # 3. the optimum (or the best found) and a bound
    bound = capacity_bound(base, set(pinned), iprices)
    say(f"capacity bound {bound / PRICE_SCALE:g}")
    rparams = RebalanceParams(goal="fix", time_limit=params.time_limit, workers=params.workers, seed=params.seed,
                              move_policy=params.move_policy, profile=profile, interrupt=params.interrupt)
    full = len(free) * len(base.nodes) <= FULL_MODEL
    if full:
        window, model_free, nodes = candidates, free, None
        method = f"exact model over all {len(free)} movable pods and {len(base.nodes)} nodes"
    else:
        window, model_free, nodes = _window(base, free, candidates, start_removed, start_where, iprices)
        method = (f"CP-SAT over a window of {len(window)} candidate nodes ({len(model_free)} movable pods, "
                  f"{len(nodes)} nodes may take them) around the best greedy start; bound: total capacity")
    inside = {p.key for p in model_free}
    solved = None
    # a large cluster whose greedy start already removes more nodes than a window holds: the waves, not the
    # search, limit the plan (at 200 nodes, a window over a 113-node start took the waves' whole time to build)
    skip = not full and len(start_removed) > WINDOW_NODES
    if skip:
        method = (f"the greedy start ({len(start_removed)} nodes; larger than a search window of {WINDOW_NODES}); "
                  "bound: total capacity")
    if not stop() and not skip:
        # the starts in the window's terms: their removed nodes inside it, their moves of the window's pods
        hints = [([n for n in r if n in window], {k: v for k, v in w.items() if k in inside}) for r, w in starts]
        solved = solve_removal(base, model_free, window, iprices, rparams, until("model"), params.interrupt,
                               hints, nodes, movers.guarded)
    if solved is not None:
        removed, assignment = solved.remove, solved.assignment
        if full:
            bound = min(bound, solved.bound)
    else:
        removed, assignment = start_removed, dict(start_where)
        if solved is None and not skip:
            notes.append(Note("CP-SAT found no removal within its time: the greedy start stands"))
    say(f"target: remove {len(removed)}")
    # every free pod of the model has a node in the target; others stay
    target_assignment = {k: v for k, v in assignment.items()}

    # 4. the waves: a drain of the removed nodes, the ones with the fewest pods to move first (the waves drain
    # in this order: at the time limit, the nodes emptied so far are the plan)
    off = dict.fromkeys(removed, 0)
    for p in free:  # one pass: removed × free pods took 6 s at 1,000 nodes (441 removed, 10,489 movable pods)
        if p.node_name in off and assignment.get(p.key, p.node_name) != p.node_name:
            off[p.node_name] += 1
    removed = tuple(sorted(removed, key=lambda n: (off[n], n)))
    dparams = replace(rparams, goal=DRAIN, drain=removed)
    waves, blocked, final, left_out = _waves_in_chunks(base, removed, target_assignment, dparams, healthy,
                                                       initial_bad, work_end, stop, first_chunk)
    if left_out:
        blocked.append(Blocked("-", f"the time limit ran out before the waves of {len(left_out)} node(s) of the target "
                                    "were planned (consolidate again from the state the plan reaches)"))
    say(f"{len(waves)} wave(s), {len(blocked)} move(s) not made")
    left = {final[p.key] for p in base.pods if not goes_with_node(p)}
    gone = tuple(n for n in removed if n not in left)
    if len(gone) < len(removed):
        notes.append(Note(f"{len(removed) - len(gone)} node(s) of the target are not removed: no wave moves all "
                          "their pods ({items})", tuple(n for n in removed if n in left)))
    saving = sum(prices[n] for n in gone)
    if stop():
        notes.append(Note("interrupted (Ctrl-C): the best plan found so far"))
    bound_value = bound / PRICE_SCALE
    proven = full and solved is not None and solved.proven and len(gone) == len(removed) and not stop()
    status = Status.OPTIMAL if proven and saving * PRICE_SCALE >= bound - 0.5 else Status.FEASIBLE
    plan = ConsolidatePlan(str(status), gone, saving, max(bound_value, saving), tuple(waves), tuple(blocked), sd,
                           dict(prices), unit, pinned, final, method, tuple(notes), time.perf_counter() - started,
                           tuple(removed), sum(prices[n] for n in removed))
    verify_shrunk(base, plan, profile)
    return replace(plan, wall_seconds=time.perf_counter() - started)


def _waves_in_chunks(base: Cluster, removed: tuple[str, ...], assignment: Mapping[str, str], dparams: RebalanceParams,
                     healthy: Mapping[str, bool], initial_bad: Mapping[str, set[str]], deadline: float,
                     stop, first_chunk: float = 0.0) -> tuple[list, list[Blocked], dict[str, str], list[str]]:
    """rebalance's waves for the target, CHUNK_MOVES moves at a time: the removed nodes in drain order, a chunk
    being the next nodes whose moves reach CHUNK_MOVES (the moves that make room on nodes that stay go with the
    first). Each chunk's waves start from the state the previous ones reached; every removed node is cordoned
    from the first wave (dparams.drain), so no replacement lands on a node still to be emptied. The wave builder
    tries every remaining move for every wave: a 1,000-move target in one piece never finished its first wave.
    (waves, blocked moves, where every pod ends, removed nodes whose chunk the deadline left unplanned)."""
    pods = {p.key: p for p in base.pods}
    off: dict[str, dict[str, str]] = {}
    for k, n in assignment.items():
        if n != pods[k].node_name:
            off.setdefault(pods[k].node_name, {})[k] = n
    gone = set(removed)
    chunks: list[tuple[list[str], dict[str, str]]] = []
    current: tuple[list[str], dict[str, str]] = ([], {k: n for src, d in off.items() if src not in gone
                                                      for k, n in d.items()})
    for node in removed:
        current[0].append(node)
        current[1].update(off.get(node, {}))
        if len(current[1]) >= max(CHUNK_MOVES, len(base.nodes) // 20):
            chunks.append(current)
            current = ([], {})
    if current[0]:
        chunks.append(current)
    cluster = base
    healthy = dict(healthy)
    where = {p.key: p.node_name for p in base.pods}
    waves: list = []
    blocked: list[Blocked] = []
    # a chunk builds its states, landing simulation and budgets before its first wave (seconds at 1,000 nodes)
    # and cannot stop inside that: one is started only when the time left covers what the last one took (the
    # first: `first_chunk`, what the caller expects it to take), so that the deadline holds
    expect = first_chunk
    for i, (nodes, sub) in enumerate(chunks):
        if stop() or time.perf_counter() + expect >= deadline:
            return waves, blocked, where, [n for _, (ns, _) in enumerate(chunks[i:]) for n in ns]
        began = time.perf_counter()
        now = {p.key: p for p in cluster.pods}
        free = [now[k] for k in sub]
        w, b, final = waves_to(cluster, Target(dict(sub), Status.OPTIMAL, ()), free, dparams, healthy, initial_bad,
                               deadline=deadline)
        moved = {m.key for wave in w for m in wave.moves}
        cluster = replace(cluster, pods=tuple(replace(p, node_name=final[p.key]) if p.key in moved else p
                                              for p in cluster.pods))
        healthy.update(dict.fromkeys(moved, True))  # the plan waits for every replacement to be Ready
        where.update(final)
        waves.extend(w)
        blocked.extend(b)
        expect = time.perf_counter() - began
    return waves, blocked, where, []


def _window(cluster: Cluster, free: list[Pod], candidates: list[str], start_removed, start_where,
            prices: Mapping[str, int]) -> tuple[list[str], list[Pod], list[str]]:
    """A large cluster's model: the start's removed nodes and the WINDOW_NODES other candidates that save most
    per unit of utilisation; their movable pods may go to those nodes and the RECEIVERS with the most room."""
    state = state_of(cluster, {})
    rest = sorted((n for n in candidates if n not in start_removed),
                  key=lambda n: (utilization(state, n) / max(1, prices[n]), n))
    window = list(start_removed) + rest[:WINDOW_NODES]
    pods = free_on(free, window)
    inside = set(window)
    room = sorted((n.name for n in cluster.nodes if n.name not in inside),
                  key=lambda n: (utilization(state, n), n))[:RECEIVERS]
    nodes = list(dict.fromkeys(window + room + [start_where[p.key] for p in pods if p.key in start_where]))
    return window, pods, nodes


def shrunk(cluster: Cluster, plan: ConsolidatePlan) -> tuple[Cluster, dict[str, str]]:
    """The cluster after the plan: the removed nodes and the pods that go with them gone; the pods that moved
    as pending pods (their replacements) with where they are placed."""
    gone = set(plan.remove)
    moved = {m.key for w in plan.waves for m in w.moves}
    stay = tuple(p for p in cluster.pods if p.key not in moved and not (p.node_name in gone and goes_with_node(p)))
    replacements = tuple(replace(p, node_name="") for p in cluster.pods if p.key in moved)
    out = replace(cluster, nodes=tuple(n for n in cluster.nodes if n.name not in gone), pods=stay,
                  pending=replacements)
    return out, {p.key: plan.final[p.key] for p in replacements}


def verify_shrunk(cluster: Cluster, plan: ConsolidatePlan, profile) -> None:
    """The gate: the shrunk cluster passes the verifier (violations the input already had aside)."""
    state, placements = shrunk(cluster, plan)
    report = verify(state, placements, None, profile)
    bad = [v for v in report.violations if not v.preexisting]
    if bad:
        raise PlanInvalidError(f"the consolidated cluster failed verification: {len(bad)} violation(s), first: "
                               f"{bad[0].pod} on {bad[0].node}: {bad[0].plugin}: {bad[0].reason}")
