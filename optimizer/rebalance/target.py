"""The target: the lexicographic optimum of target_model's levels for the free pods, solved one stage at a
time (each stage fixes the level's optimum, the previous solution as hint; the first hint is every pod
staying, completed by CP-SAT with the counts fixed; a level's variables are added when its stage starts, and
the hint is completed over them the same way). Which pod of a class moves where is then chosen so that moves
stay inside their topology domains where they can (pods no PDB guards move first).

Large drain/fix problems (over FOCUS_LIMIT movable pods) first re-place only the pods that must move, which is
provably the fewest moves for a drain that empties. Large pack/spread problems are searched over growing
neighbourhoods (`_neighbourhood_search`): the full model cannot be built in time at 1,000 nodes. When no valid target exists (a free pod violates a rule
now and cannot be repaired: no node takes it, or not within --max-moves), the pods in violation are kept in
place and then released one at a time while a valid target still exists (`find_target`).
"""
from __future__ import annotations

import sys
import time
from collections import defaultdict
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ortools.sat.python import cp_model

from ...models.objects import Cluster, Pod
from ...models.taints import first_untolerated
from ..solve import SECONDS_PER_VARIABLE
from ..runner import Level, Progress, SolverParams, Status, charge, clock, complete, lexicographic, now, run

from .metrics import goal_values, occupied
from .movable import goes_with_node
from .plan import DRAIN, RebalanceParams, Target
from .states import state_of
from .target_model import BuiltModel, build_model, level_key, level_names

FOCUS_LIMIT = 300  # movable pods above which drain/fix first re-place only the pods that must move
NEIGHBOURHOOD_PODS = 100  # movable pods of the first neighbourhood of a large pack/spread (doubled each round)
RECEIVERS_MIN = 20  # nodes a neighbourhood's pods may go to besides their own (at least as many as sources)
ROUND_SHARE = 0.35  # of the time left, what a later neighbourhood round may take (the last one: all of it)
FIRST_ROUND_SHARE = 0.6  # the first round's: its target may be the only one
GOAL_SHARE = 0.7  # of a target's time, what the goal's level may take (pack, spread's max utilisation, prefs)
MIN_ROUND_S = 1.0  # time left under which no new round starts
LARGE_MODEL = 20_000  # variables above which CP-SAT skips its most expensive presolve steps

R_UNREPAIRED = "violates {rules} on {node} and no valid target moves it{limit}"


def _say(params: RebalanceParams, line: str) -> None:
    if params.log_progress:
        print(f"rebalance: {line}", file=sys.stderr, flush=True)


def large_model_settings(model: cp_model.CpModel) -> dict[str, Any]:
    """CP-SAT parameters for a model of this size."""
    if len(model.proto.variables) > LARGE_MODEL:
        # a 300-node cluster's pack model (75,000 variables): presolve's probing and symmetry detection alone
        # outlast a 30 s stage on 2 cores, and CP-SAT then reports no solution, not even the complete feasible
        # hint. Without them the search starts after a few seconds and its LNS improves the hint at once.
        return {"cp_model_probing_level": 0, "symmetry_level": 0}
    return {}


def _solver(params: RebalanceParams) -> SolverParams:
    return SolverParams(workers=params.workers, seed=params.seed)


def _feasible(cluster: Cluster, free: list[Pod], params: RebalanceParams, limit: float) -> bool | None:
    built = build_model(cluster, free, params, feasibility_only=True)
    done = run(built.model, _solver(params), limit, extra=large_model_settings(built.model))
    if done.found:
        return True
    return False if done.status is Status.INFEASIBLE else None



def _stay_solution(built: BuiltModel, params: RebalanceParams, limit: float,
                   counts: Mapping[tuple[int, int], int] | None = None) -> list[int] | None:
    """Every free pod where it runs (or `counts` pods of each class on each node, from a bounded search),
    completed into a full solution of the model (auxiliary variables: presence literals, utilisation, ...) by
    CP-SAT with every x fixed: the first stage's hint and the incumbent when a stage finds nothing better in
    time. None when that placement is not valid."""
    if counts is None:
        if not built.stay_possible:
            return None
        counts = built.here
    known = {key: ctx.ub[key] for ctx in built.ctx_list for key in ctx.x}
    if any(k and (key not in known or known[key] < k) for key, k in counts.items()):
        return None  # a pod on a node where the model has no room for it
    fixed = {var.index: counts.get(key, 0) for ctx in built.ctx_list for key, var in ctx.x.items()}
    return complete(built.model, fixed, _solver(params), limit).values


def counts_of(built: BuiltModel, free: Sequence[Pod], where: Mapping[str, str]) -> dict[tuple[int, int], int]:
    """(class, node) -> pods of the class there, with the free pods on `where` (default: where they run)."""
    problem = built.problem
    origin = {p.key: p.node_name for p in free}
    out: dict[tuple[int, int], int] = defaultdict(int)
    for c, cls in enumerate(problem.classes):
        for p in cls.pods:
            node = where.get(p.key, origin.get(p.key, ""))
            if node in problem.node_index:
                out[(c, problem.node_index[node])] += 1
    return dict(out)


def topology_keys(pod: Pod) -> list[str]:
    """The topology keys the pod's own spread constraints and pod (anti-)affinity terms read."""
    a = pod.affinity
    keys = [c.topology_key for c in pod.spread_constraints]
    keys += [t.topology_key for t in a.pod_required + a.anti_required]
    keys += [w.term.topology_key for w in a.pod_preferred + a.anti_preferred]
    return list(dict.fromkeys(keys))


def counts_to_assignment(built: BuiltModel, solution: Sequence[int], free: list[Pod],
                          guarded: Mapping[str, int]) -> dict[str, str]:
    """Counts per (class, node) -> a node per free pod: as many pods as possible stay where they run; among
    the pods of a class on one node, those no PDB guards (then those with more budget) move first."""
    problem = built.problem
    out: dict[str, str] = {}
    origin = {p.key: p.node_name for p in free}
    for ctx in built.ctx_list:
        for c in ctx.classes:
            cls = problem.classes[c]
            want = {n: solution[ctx.x[(c, n)].index] for n in ctx.by_class[c]}
            by_node: dict[int, list[Pod]] = defaultdict(list)
            for p in cls.pods:
                by_node[problem.node_index.get(origin[p.key], -1)].append(p)
            movers: list[Pod] = []
            for n, pods in by_node.items():
                pods.sort(key=lambda p: (guarded.get(p.key, 1 << 30), p.order), reverse=True)
                keep = min(len(pods), want.get(n, 0))
                for p in pods[len(pods) - keep:]:
                    out[p.key] = problem.nodes[n].name
                movers.extend(pods[:len(pods) - keep])
            movers.sort(key=lambda p: p.order)
            slots = [n for n in sorted(want) for _ in range(max(0, want[n] - len(by_node.get(n, []))))]
            keys = topology_keys(cls.rep)
            for p in movers:
                src = problem.nodes[problem.node_index[origin[p.key]]].labels if origin[p.key] in problem.node_index \
                    else {}
                if not slots:
                    break
                # stay in the same topology domains where possible: counts per domain (spread skew, affinity
                # domains) then change only as much as the target says, so fewer moves must happen together
                best = max(range(len(slots)), key=lambda i: (
                    sum(1 for k in keys if k in src and problem.nodes[slots[i]].labels.get(k) == src[k]), -i))
                out[p.key] = problem.nodes[slots.pop(best)].name
    return out


def solve_target(cluster: Cluster, free: list[Pod], params: RebalanceParams, deadline: float,
                 guarded: Mapping[str, int] | None = None, start: Mapping[str, str] | None = None,
                 nodes: Collection[str] | None = None, timing: dict[str, float] | None = None,
                 takers: Collection[str] | None = None) -> Target | None:
    """The lexicographic optimum for `free` pods (None: no valid target exists, or none found in time).
    `start`: a valid placement of some free pods (the others stay) to start from instead of every pod staying;
    `nodes`: the only nodes they may end on (a neighbourhood; None: every node), `takers` the only ones that may
    gain pods (build_model); `timing` gets the seconds the model took to build and its variables."""
    built = build_model(cluster, free, params, nodes=nodes, takers=takers)
    # the build is charged by its size, not timed: with rebalance's deterministic clock installed, what the
    # search does next must not depend on how busy the machine was while the model was built
    built_s = SECONDS_PER_VARIABLE * len(built.model.proto.variables)
    charge(built_s)
    if timing is not None:
        timing.update(build=built_s, variables=len(built.model.proto.variables))
    model = built.model
    limit = max(0.1, (deadline - now()) * 0.2)
    solution = _stay_solution(built, params, limit, counts_of(built, free, start)) if start else None
    if solution is None:
        solution = _stay_solution(built, params, limit)
    # the goal's level first and most: the moves are a tie-break (a 1,000-node pack stage found 42 empty nodes
    # in 3.6 s and 1 in 1.2 s)
    goal = next((i for i, (name, _, _) in enumerate(built.levels) if name != "moves" and ":" not in name), None)
    stages = [Level(name, build, sense, share=GOAL_SHARE if i == goal and len(built.levels) - i > 1 else None)
              for i, (name, build, sense) in enumerate(built.levels)]
    done = lexicographic(model, stages, _solver(params), deadline, incumbent=solution, floor=False,
                         interrupt=params.interrupt,
                         stop_when_unimproved=True, extra=large_model_settings, say=lambda line: _say(params, line),
                         progress=lambda name: Progress(f"rebalance {name}", time.perf_counter(), params.log_progress))
    if done.values is None and done.stopped:
        return None  # no valid target, or none found in time
    results = [(lv.name, lv.value, lv.optimal) for lv in done.levels]
    proven = all(ok for _, _, ok in results) and not done.stopped
    notes = [done.stopped] if done.stopped else []
    solution = done.values
    if solution is None:
        # every level was a constant: any solution is optimal
        model.clear_objective()
        found = run(model, _solver(params), max(0.1, deadline - now()), extra=large_model_settings(model))
        if found.values is None:
            return None
        solution = found.values
    assignment = counts_to_assignment(built, solution, free, guarded or {})
    # an unproven moves level counts stays the solver left below min(x, here); the assignment keeps every pod
    # it can in place: report the moves it makes
    moved = sum(1 for p in free if assignment.get(p.key, p.node_name) != p.node_name)
    results = [(n, moved if n == "moves" and not ok else v, ok) for n, v, ok in results]
    if len(results) < len(built.levels):
        # the levels no stage reached: their values in the incumbent, not proven
        values = goal_values(cluster, params, assignment, free)
        results += [(name, values[name], False) for name, _, _ in built.levels[len(results):]]
    return Target(assignment, Status.OPTIMAL if proven else Status.FEASIBLE, tuple(results), tuple(notes))



def _focused(cluster: Cluster, free: list[Pod], params: RebalanceParams, drained: set[str],
             initial_bad: Mapping[str, set[str]], deadline: float, guarded: Mapping[str, int]) -> Target | None:
    """Large clusters, drain/fix: re-place only the pods that must move. Accepted when every drained node
    empties and, for a drain, each of those pods moves once: the fewest moves possible (a drained node's pods
    all have to move); the tie-break is then over those pods only. None: solve with every movable pod."""
    must = [p for p in free if p.node_name in drained or p.key in initial_bad]
    if not must:
        return Target({}, Status.OPTIMAL, (("moves", 0, True),))
    share = now() + (deadline - now()) * 0.5
    target = solve_target(cluster, must, params, share, guarded)
    if target is None:
        return None
    values = dict((name, v) for name, v, _ in target.levels)
    if any(values.get(f"{DRAIN}:{d}", 0) for d in params.drain):
        return None
    if params.goal == DRAIN and values.get("moves") != sum(1 for p in must if p.node_name in drained):
        return None
    return target



@dataclass(frozen=True)
class Found:
    target: Target | None  # None: no valid target state, or none found in time
    free: list[Pod]  # the pods the target re-places (the other movable pods stay, as existing pods)
    unrepaired: dict[str, str]  # pod in violation that no valid target moves -> why (kept in place)
    notes: list[str]


def find_target(cluster: Cluster, free: list[Pod], params: RebalanceParams, deadline: float,
                guarded: Mapping[str, int], initial_bad: Mapping[str, set[str]]) -> Found:
    """The target for `free` pods: focused on the pods that must move when the problem is large, then with
    every free pod; with no valid target, the pods in violation are released one at a time (module docstring)."""
    notes: list[str] = []
    target = None
    if params.goal in ("fix", DRAIN) and len(free) > FOCUS_LIMIT and params.max_moves is None:
        target = _focused(cluster, free, params, set(params.drain), initial_bad, deadline, guarded)
        if target is not None:
            notes.append(f"{len(free)} movable pods: only the {len(target.assignment)} that must move (on drained "
                         "nodes, or in violation) were re-placed; the others stayed where they run")
            free = [p for p in free if p.key in target.assignment]  # the others count as existing pods
    if target is None and params.goal in ("pack", "spread") and len(free) > FOCUS_LIMIT and not params.drain:
        target = _neighbourhood_search(cluster, free, params, deadline, guarded)
    elif target is None:
        target = solve_target(cluster, free, params, deadline, guarded)
    kept: dict[str, str] = {}
    violating = any(p.key in initial_bad for p in free)
    if target is None and not violating and (len(free) > FOCUS_LIMIT or now() >= deadline):
        # Nothing to release: the search above simply ran out of time. The release loop would build the full
        # model of every free pod (10,000 pods x 1,000 nodes: 10 minutes and 2.5 GB past a 50 s limit) to learn
        # what the search already could not say in time; the command reports it instead, within its limit.
        return Found(None, free, kept, notes)
    if target is None:
        violators = [p for p in free if p.key in initial_bad]
        ok = [p for p in free if p.key not in initial_bad]
        budget = max(0.1, (deadline - now()) * 0.3 / max(1, len(violators)))
        if _feasible(cluster, ok, params, budget):
            for v in violators:
                if _feasible(cluster, ok + [v], params, budget):
                    ok.append(v)
                else:
                    limit = f" within --max-moves {params.max_moves}" if params.max_moves is not None else ""
                    kept[v.key] = R_UNREPAIRED.format(rules=", ".join(sorted(initial_bad[v.key])),
                                                      node=v.node_name, limit=limit)
            ok.sort(key=lambda p: p.order)
            target = solve_target(cluster, ok, params, max(deadline, now() + 1.0), guarded)
            free = ok
    return Found(target, free, kept, notes)


def _neighbourhoods(cluster: Cluster, free: list[Pod], params: RebalanceParams) -> tuple[list[str], list[str]]:
    """(sources, receivers) of the neighbourhood search, in the order it grows: the nodes whose movable pods
    are re-placed, and the nodes that only take pods. As the descheduler's strategies pick them:
    HighNodeUtilization (pack) evicts from the least used nodes, those with the fewest pods first, whose pods
    may all move (a node with an immovable pod cannot empty), onto the nodes with the most room;
    LowNodeUtilization (spread) evicts from the fullest nodes onto the least used ones."""
    state = state_of(cluster, {})
    on: dict[str, list[Pod]] = defaultdict(list)
    for p in free:
        on[p.node_name].append(p)
    mine = {p.key for p in free}
    kept = [n.name for n in cluster.nodes if n.name not in params.drain]

    def load(name: str) -> float:
        info = state.nodes[name]
        return max((info.requested.get(r, 0) / a for r, a in info.node.allocatable.items()
                    if r in ("cpu", "memory") and a > 0), default=0.0)

    loads = {n: load(n) for n in kept}
    if params.goal == "pack":
        sources = sorted((n for n in kept if occupied(state.nodes[n]) and all(
            p.key in mine or goes_with_node(p) for p in state.nodes[n].pods.values())),
            key=lambda n: (len(on[n]), loads[n], n))
    else:
        sources = sorted((n for n in kept if on[n]), key=lambda n: (-loads[n], n))
    receivers = sorted(kept, key=lambda n: (loads[n], n))
    return sources, receivers


def _neighbourhood_search(cluster: Cluster, free: list[Pod], params: RebalanceParams, deadline: float,
                          guarded: Mapping[str, int]) -> Target | None:
    """Large pack/spread problems: the target model over every movable pod and every node (15,000 pods ×
    1,000 nodes) cannot even be built in the limit. Instead a neighbourhood: the movable pods of the first
    source nodes (`_neighbourhoods`), free to go to those nodes and to as many receiver nodes; everything
    else stays, as existing pods. Solved lexicographically, then grown (twice the pods, twice the nodes) from
    the best target so far, as long as time is left; each round keeps its result only when it is better on
    the levels. Deadline or Ctrl-C: the best target so far, whose notes say it is not proven."""
    sources, receivers = _neighbourhoods(cluster, free, params)
    taints = {n.name: n.taints for n in cluster.nodes}
    on: dict[str, list[Pod]] = defaultdict(list)
    for p in free:
        on[p.node_name].append(p)
    best: Target | None = None
    names = level_names(params)
    best_values = goal_values(cluster, params, {}, free, names=names)  # every pod where it runs
    pods_wanted, rounds, covered = NEIGHBOURHOOD_PODS, 0, False
    chosen_nodes: dict[str, None] = {}
    sources_taken: set[str] = set()
    size = (0, 0)
    timing: dict[str, float] = {}
    while not covered:
        left = deadline - now()
        # the next model is about four times the last one (twice the pods, twice the nodes): its build alone
        # must leave most of the time left to the search
        if params.interrupt.is_set() or left < MIN_ROUND_S or 4 * timing.get("build", 0.0) > left * 0.5:
            break
        if (clk := clock()) is not None and clk.wall_over("the neighbourhood search's rounds"):
            break
        chosen: list[Pod] = []
        taken = 0
        for name in sources:
            if chosen and len(chosen) + len(on[name]) > pods_wanted:
                break
            chosen.extend(on[name])
            chosen_nodes[name] = None
            sources_taken.add(name)
            taken += 1
        covered = len(chosen) == len(free)
        wanted_receivers = max(RECEIVERS_MIN, taken)
        # a receiver whose taints none of the pods tolerates (a GPU pool, idle because of them) takes nothing
        tolerations = {p.tolerations for p in chosen}
        extra = [n for n in receivers if n not in chosen_nodes and any(
            first_untolerated(taints[n], t) is None for t in tolerations)][:wanted_receivers]
        chosen_nodes.update(dict.fromkeys(extra))
        if best is not None:
            chosen_nodes.update(dict.fromkeys(best.assignment.values()))
        chosen.sort(key=lambda p: p.order)
        rounds += 1
        size = (len(chosen), len(chosen_nodes))
        _say(params, f"neighbourhood {rounds}: the {len(chosen)} movable pods of {taken} node(s), onto "
                     f"{len(chosen_nodes)} node(s) ({left:.0f}s left)")
        # a round may take ROUND_SHARE of the time left, the last one (everything covered) all of it
        end = deadline if covered else now() + left * (FIRST_ROUND_SHARE if rounds == 1 else ROUND_SHARE)
        start = best.assignment if best is not None else None
        # spread: the fullest nodes only give pods (LowNodeUtilization): an exchange between two of them is a
        # cycle of moves that waves under PodDisruptionBudgets often cannot order
        takers = None if params.goal == "pack" or covered else [n for n in chosen_nodes if n not in sources_taken]
        found = solve_target(cluster, chosen, params, end, guarded, start,
                             nodes=None if covered else list(chosen_nodes), timing=timing, takers=takers)
        if found is not None:
            values = goal_values(cluster, params, found.assignment, free, names=names)
            if _better(params, values, best_values):
                best, best_values = found, values
                _say(params, "neighbourhood " + str(rounds) + ": " + ", ".join(
                    f"{n} {values[n]}" for n in level_names(params)))
            if covered and found.status is Status.OPTIMAL and best is found:
                return found  # every movable pod on every node it may take: the target is proven
        pods_wanted *= 2
    if best is None:
        return None
    why = "before Ctrl-C" if params.interrupt.is_set() else "within the time limit"
    notes = (f"the target is the best found {why} by a neighbourhood search ({rounds} round(s), the last "
             f"over {size[0]} of the {len(free)} movable pods and {size[1]} of {len(cluster.nodes)} nodes): not "
             "proven optimal",)
    return Target(best.assignment, Status.FEASIBLE,
                  tuple((n, best_values[n], False) for n in level_names(params)), notes)


def _better(params: RebalanceParams, a: Mapping[str, int], b: Mapping[str, int]) -> bool:
    """Is `a` lexicographically better than `b` on the target's levels?"""
    names = level_names(params)
    return level_key(a, names) > level_key(b, names)
