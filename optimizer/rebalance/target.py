"""The target: the lexicographic optimum of target_model's levels for the free pods, solved one stage at a
time (each stage fixes the level's optimum, the previous solution as hint; the first hint is every pod
staying, completed by CP-SAT with the counts fixed; a level's variables are added when its stage starts, and
the hint is completed over them the same way). Which pod of a class moves where is then chosen so that moves
stay inside their topology domains where they can (pods no PDB guards move first).

Large drain/fix problems (over FOCUS_LIMIT movable pods) first re-place only the pods that must move, which is
provably the fewest moves for a drain that empties. When no valid target exists (a free pod violates a rule
now and cannot be repaired: no node takes it, or not within --max-moves), the pods in violation are kept in
place and then released one at a time while a valid target still exists (`find_target`).
"""
from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ortools.sat.python import cp_model

from ...models.objects import Cluster, Pod

from .plan import DRAIN, FEASIBLE, OPTIMAL, RebalanceParams, Target
from .target_model import BuiltModel, build_model

FOCUS_LIMIT = 300  # movable pods above which drain/fix first re-place only the pods that must move

R_UNREPAIRED = "violates {rules} on {node} and no valid target moves it{limit}"


def _run(model: cp_model.CpModel, params: RebalanceParams, limit: float) -> tuple[cp_model.CpSolver, int]:
    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = max(0.05, limit)
    solver.parameters.num_workers = max(1, params.workers)
    solver.parameters.random_seed = params.seed
    return solver, solver.solve(model)


def _set_hint(model: cp_model.CpModel, values: Sequence[int]) -> None:
    proto = model.proto
    proto.clear_solution_hint()
    proto.solution_hint.vars.extend(range(len(values)))
    proto.solution_hint.values.extend(values)


def _feasible(cluster: Cluster, free: list[Pod], params: RebalanceParams, limit: float) -> bool | None:
    built = build_model(cluster, free, params, feasibility_only=True)
    _, status = _run(built.model, params, limit)
    if status in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return True
    return False if status == cp_model.INFEASIBLE else None



def _stay_solution(built: BuiltModel, params: RebalanceParams, limit: float) -> list[int] | None:
    """Every free pod where it runs, completed into a full solution of the model (auxiliary variables:
    presence literals, utilisation, ...) by CP-SAT with every x fixed: the first stage's hint and the
    incumbent when a stage finds nothing better in time. None when staying is not valid."""
    if not built.stay_possible:
        return None
    clone = built.model.clone()
    proto = clone.proto
    for ctx in built.ctx_list:
        for key, var in ctx.x.items():
            v = built.here.get(key, 0)
            d = proto.variables[var.index].domain  # [0, ub]: x variables are plain intervals
            d[0] = v
            d[1] = v
    solver, status = _run(clone, params, limit)
    if status in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return list(solver.response_proto.solution)
    return None


def _extend(model: cp_model.CpModel, solution: Sequence[int], params: RebalanceParams,
            limit: float) -> list[int] | None:
    """`solution` (values of the first variables) completed over the variables added since, by CP-SAT with
    the known ones fixed."""
    clone = model.clone()
    clone.clear_objective()
    for i, v in enumerate(solution):
        clone.add(clone.get_int_var_from_proto_index(i) == v)
    solver, status = _run(clone, params, limit)
    if status in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return list(solver.response_proto.solution)
    return None



def topology_keys(pod: Pod) -> list[str]:
    """The topology keys the pod's own spread constraints and pod (anti-)affinity terms read."""
    a = pod.affinity
    keys = [c.topology_key for c in pod.spread_constraints]
    keys += [t.topology_key for t in a.pod_required + a.anti_required]
    keys += [w.term.topology_key for w in a.pod_preferred + a.anti_preferred]
    return list(dict.fromkeys(keys))


def _counts_to_assignment(built: BuiltModel, solution: Sequence[int], free: list[Pod],
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
                 guarded: Mapping[str, int] | None = None) -> Target | None:
    """The lexicographic optimum for `free` pods (None: no valid target exists, or none found in time)."""
    built = build_model(cluster, free, params)
    model = built.model
    solution = _stay_solution(built, params, max(0.1, (deadline - time.perf_counter()) * 0.2))
    results: list[tuple[str, int, bool]] = []
    notes: list[str] = []
    proven = True
    for i, (name, build, sense) in enumerate(built.levels):
        expr = build()
        if isinstance(expr, int):
            results.append((name, expr, True))  # nothing the model decides
            continue
        left = max(0.05, (deadline - time.perf_counter()) / (len(built.levels) - i))
        if sense == "min":
            model.minimize(expr)
        else:
            model.maximize(expr)
        if solution is not None:
            if len(solution) < len(model.proto.variables):
                # the level added variables: complete the incumbent for them (propagation only)
                solution = _extend(model, solution, params, left * 0.2) or solution
            _set_hint(model, solution)
        solver, status = _run(model, params, left)
        if status == cp_model.INFEASIBLE:
            return None
        if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            if solution is None:
                return None
            notes.append(f"level {name}: no better solution within the time limit")
            proven = False
            break
        solution = list(solver.response_proto.solution)
        value = int(solver.value(expr))
        optimal = status == cp_model.OPTIMAL
        proven &= optimal
        results.append((name, value, optimal))
        if optimal:
            model.add(expr == value)
        elif sense == "min":
            model.add(expr <= value)
        else:
            model.add(expr >= value)
    if solution is None:
        # every level was a constant: any solution is optimal
        model.clear_objective()
        solver, status = _run(model, params, max(0.1, deadline - time.perf_counter()))
        if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            return None
        solution = list(solver.response_proto.solution)
    assignment = _counts_to_assignment(built, solution, free, guarded or {})
    return Target(assignment, OPTIMAL if proven else FEASIBLE, tuple(results), tuple(notes))



def _focused(cluster: Cluster, free: list[Pod], params: RebalanceParams, drained: set[str],
             initial_bad: Mapping[str, set[str]], deadline: float, guarded: Mapping[str, int]) -> Target | None:
    """Large clusters, drain/fix: re-place only the pods that must move. Accepted when every drained node
    empties and, for a drain, each of those pods moves once: the fewest moves possible (a drained node's pods
    all have to move); the tie-break is then over those pods only. None: solve with every movable pod."""
    must = [p for p in free if p.node_name in drained or p.key in initial_bad]
    if not must:
        return Target({}, OPTIMAL, (("moves", 0, True),))
    share = time.perf_counter() + (deadline - time.perf_counter()) * 0.5
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
    if target is None:
        target = solve_target(cluster, free, params, deadline, guarded)
    kept: dict[str, str] = {}
    if target is None:
        violators = [p for p in free if p.key in initial_bad]
        ok = [p for p in free if p.key not in initial_bad]
        budget = max(0.1, (deadline - time.perf_counter()) * 0.3 / max(1, len(violators)))
        if _feasible(cluster, ok, params, budget):
            for v in violators:
                if _feasible(cluster, ok + [v], params, budget):
                    ok.append(v)
                else:
                    limit = f" within --max-moves {params.max_moves}" if params.max_moves is not None else ""
                    kept[v.key] = R_UNREPAIRED.format(rules=", ".join(sorted(initial_bad[v.key])),
                                                      node=v.node_name, limit=limit)
            ok.sort(key=lambda p: p.order)
            target = solve_target(cluster, ok, params, max(deadline, time.perf_counter() + 1.0), guarded)
            free = ok
    return Found(target, free, kept, notes)
