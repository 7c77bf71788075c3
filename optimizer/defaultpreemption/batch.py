"""Optimal batch preemption (`solve --preempt`): place the pending pods, evicting running pods of lower priority
where that places more of the higher-priority ones ("Priority Matters", arXiv 2511.08373, over a batch).

Formulation (CP-SAT, the rule encodings unchanged): the running pods of priority strictly below the highest
pending priority are evictable; they become members of the pod classes as pending pods do (movable.as_pending),
and a `stay[c, n] <= min(x[c, n], evictable pods of c on n)` counts those that keep running where they run; an
evictable pod never moves (placed members of a class beyond those that stay are its pending pods). Lexicographic
levels:
1. per priority, highest first: the pods of that priority running in the final state (placed pending pods +
   evictable pods that stay) — so a pod is evicted only to run more pods of strictly higher priority;
2. victims weighted by priority: Σ victims × (1 + the rank of their priority among the evictable ones);
3. with --allow-pdb-violations: Σ evictions beyond each PodDisruptionBudget's disruptionsAllowed (without it,
   every budget is a hard constraint);
4. the preference score P.
A victim owned by a controller comes back as a pending pod (its replacement); the plan places none of them.

Pods of one class are interchangeable for every rule, so the counts that stay are kept per (class, node, set of
PDBs guarding the pod): only the budgets tell them apart. Knowing differences: pods that already break a static
rule on their node are not evictable (they keep running); `--gang` is not applied with --preempt; an input state
that already breaks a rule between running pods leaves no solution (status UNKNOWN, nothing placed).
"""
from __future__ import annotations

import time
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from ortools.sat.python import cp_model

from ...models.objects import Cluster, Pod
from ..context import ModelContext
from ..disruption import budget, guards, pod_ready
from ..explain import final_state_message
from ..framework import Profile
from ..greedy import simulate
from ..rebalance.movable import as_pending
from ..plan import Plan, Preemption
from ..policy import Policy
from ..problem import build_problem
from ..registry import DEFAULT_PROFILE
from ..runner import NEVER, Interrupt, Level, SolverParams, Status, complete, lexicographic
from ..verify import final_state
from .preemption import importance, recreate

NOT_PLACED = "the optimal plan with preemption leaves it pending ({why})"
RECREATED = "recreated by its controller after preemption; solve --preempt places no replacement"


def evictable(cluster: Cluster) -> list[Pod]:
    """Running pods a pending pod of higher priority may preempt (mirror and terminating pods excluded)."""
    if not cluster.pending:
        return []
    top = max(p.priority for p in cluster.pending)
    nodes = {n.name for n in cluster.nodes}
    return [p for p in cluster.pods if p.priority < top and not p.mirror and not p.terminating and p.node_name in nodes]


def solve_preempt(cluster: Cluster, params: SolverParams, policy: Policy | None = None, *, deadline: float,
                  profile: Profile = DEFAULT_PROFILE, allow_pdb_violations: bool = False,
                  interrupt: Interrupt = NEVER) -> Plan:
    """The optimal plan when lower-priority running pods may be evicted; `deadline` in perf_counter seconds."""
    started = time.perf_counter()
    policy = policy or Policy()
    free = evictable(cluster)
    built = _build(cluster, free, profile, policy, allow_pdb_violations)
    stuck = built["stuck"]
    if stuck:  # pods a static rule rejects where they run cannot "stay" in the model: they are not evictable
        free = [p for p in free if p.key not in stuck]
        built = _build(cluster, free, profile, policy, allow_pdb_violations)
    model: cp_model.CpModel = built["model"]
    incumbent = _warm_start(cluster, built, params, deadline, profile, interrupt)
    result = lexicographic(model, built["levels"], params, deadline, interrupt=interrupt, incumbent=incumbent)
    values = result.values
    if values is None:
        return Plan({}, {p.key: NOT_PLACED.format(why=result.stopped or "no solution in time") for p in cluster.pending},
                    Status.UNKNOWN, wall_seconds=time.perf_counter() - started)
    optimal = all(r.optimal for r in result.levels) and not result.stopped
    return _plan(cluster, built, values, Status.OPTIMAL if optimal else Status.FEASIBLE, started, params,
                 [f"{_in_words(r.name)}: {r.value}" + (", proven" if r.optimal else f", bound {r.bound:g}")
                  for r in result.levels])


def _in_words(level: str) -> str:
    """A level's name as the plan's notes say it (`placed_priority_1000` -> `pods placed at priority 1000`)."""
    if level.startswith("placed_priority_"):
        return f"pods placed at priority {level.removeprefix('placed_priority_')}"
    return {"victims": "victims weighted by priority", "placed_never_preempting": "pods placed that never preempt",
            "pdb_overrun": "evictions beyond a PodDisruptionBudget", "preference": "preference"}.get(level, level)


def _counts(cluster: Cluster, built: dict[str, Any], placements: dict[str, str], removed: frozenset[str]) -> dict[int, int]:
    """x and stay values (by variable index) of the final state where `placements` are placed and `removed` gone."""
    problem, origin, free = built["problem"], built["origin"], built["free"]
    fixed: dict[int, int] = {}
    for ctx in built["ctxs"]:
        for c in ctx.classes:
            cls = problem.classes[c]
            for n in ctx.by_class[c]:
                node = problem.nodes[n].name
                stayed = [p for p in cls.pods if p.key in free and origin[p.key] == node and p.key not in removed]
                fixed[ctx.x[(c, n)].index] = len(stayed) + sum(
                    1 for p in cls.pods if p.key not in free and placements.get(p.key) == node)
                for g in {frozenset(b.key for b in cluster.pdbs if guards(b, p))
                          for p in cls.pods if p.key in free and origin[p.key] == node}:
                    var = built["stays"].get((c, n, g))
                    if var is not None:
                        fixed[var.index] = sum(1 for p in stayed
                                               if frozenset(b.key for b in cluster.pdbs if guards(b, p)) == g)
    return fixed


def _warm_start(cluster: Cluster, built: dict[str, Any], params: SolverParams, deadline: float, profile: Profile,
                interrupt: Interrupt) -> list[int] | None:
    """A full solution to start from: kube-scheduler's plan with preemption (its victims' replacements left out),
    else every running pod where it runs and nothing placed; None when neither is a solution."""
    greedy = simulate(cluster, params.seed, profile=profile, preemption=True, interrupt=interrupt,
                      deadline=time.perf_counter() + max(0.0, deadline - time.perf_counter()) * 0.3)
    pending = {p.key for p in cluster.pending}
    tries = [({k: n for k, n in greedy.placements.items() if k in pending}, greedy.removed), ({}, frozenset())]
    for placements, removed in tries:
        if removed - built["free"]:
            continue  # a victim the model may not evict
        left = max(0.1, (deadline - time.perf_counter()) * 0.1)
        done = complete(built["model"], _counts(cluster, built, placements, removed), params, left, interrupt=interrupt)
        if done.values is not None:
            return done.values
    return None


def _build(cluster: Cluster, free: list[Pod], profile: Profile, policy: Policy, allow_pdb: bool) -> dict[str, Any]:
    unbound, origin = as_pending(cluster, free)
    problem = build_problem(unbound, profile, gang_all=False, decompose=False)
    model = cp_model.CpModel()
    free_keys = {p.key for p in free}
    kept: dict[int, list[Any]] = defaultdict(list)  # priority -> pods of it running in the final state
    victims: list[tuple[int, Any]] = []  # (priority, victims of a class)
    by_pdb: dict[str, list[Any]] = defaultdict(list)
    stays: dict[tuple[int, int], Any] = {}
    ctxs: list[ModelContext] = []
    stuck: set[str] = set()
    never: list[Any] = []  # pending pods with preemptionPolicy Never placed: a level after the victims
    for comp in problem.components:
        ctx = ModelContext(problem, comp, policy)
        ctx.model = model  # every component in one model: the levels are sums over components
        ctx.make_x()
        for enc in problem.profile.encodings:
            enc.encode(ctx)
        for c in comp.classes:
            cls = problem.classes[c]
            members = [p for p in cls.pods if p.key in free_keys]
            # members by the PDBs that guard them: within a class only the budgets tell pods apart
            group_of = {p.key: frozenset(b.key for b in cluster.pdbs if guards(b, p)) for p in members}
            here = Counter(problem.node_index[origin[p.key]] for p in members)
            stay_vars: list[Any] = []
            stay_by_group: dict[frozenset[str], list[Any]] = defaultdict(list)
            for n, k in here.items():
                if (c, n) not in ctx.x or ctx.ub[(c, n)] < k:
                    stuck.update(p.key for p in members if problem.node_index[origin[p.key]] == n)
                    continue
                on_n = Counter(group_of[p.key] for p in members if problem.node_index[origin[p.key]] == n)
                here_vars = []
                for g, kg in on_n.items():
                    s = model.new_int_var(0, kg, f"stay[{cls.name},{ctx.nname(n)},{len(stays)}]")
                    stays[(c, n, g)] = s
                    stay_by_group[g].append(s)
                    here_vars.append(s)
                model.add(sum(here_vars) <= ctx.x[(c, n)])
                stay_vars.extend(here_vars)
            new = ctx.placed[c] - sum(stay_vars)  # pending members placed: evictable pods never move
            model.add(new <= cls.size - len(members))
            if cls.rep.preemption_policy == "Never":
                kept[cls.priority].append(sum(stay_vars))
                never.append(new)
            else:
                kept[cls.priority].append(ctx.placed[c])
            for g, group in Counter(group_of.values()).items():
                gone = group - sum(stay_by_group[g])
                victims.append((cls.priority, gone))
                for pdb_key in g:
                    by_pdb[pdb_key].append(gone)
        ctxs.append(ctx)
    ranks = {q: i + 1 for i, q in enumerate(sorted({q for q, _ in victims}))}
    levels = [Level(f"placed_priority_{q}", sum(kept[q]), "max") for q in sorted(kept, reverse=True)]
    levels.append(Level("victims", sum(ranks[q] * v for q, v in victims), "min"))
    levels.append(Level("placed_never_preempting", sum(never), "max"))
    healthy = [(p, pod_ready(p)) for p in cluster.pods]
    overruns = []
    for pdb in cluster.pdbs:
        if not by_pdb.get(pdb.key):
            continue
        allowed = budget(pdb, healthy, cluster.workloads).allowed
        spent = sum(by_pdb[pdb.key])
        if allow_pdb:
            over = model.new_int_var(0, len(free), f"pdb_overrun[{pdb.key}]")
            model.add(over >= spent - allowed)
            overruns.append(over)
        else:
            model.add(spent <= allowed)
    if allow_pdb:
        levels.append(Level("pdb_overrun", sum(overruns), "min"))
    levels.append(Level("preference", sum(t for ctx in ctxs for kind in ctx.terms for t in ctx.terms[kind]), "max"))
    return {"model": model, "levels": levels, "problem": problem, "ctxs": ctxs, "stays": stays, "stuck": stuck,
            "origin": origin, "free": free_keys}


def _plan(cluster: Cluster, built: dict[str, Any], values: Sequence[int], status: Status, started: float,
          params: SolverParams, level_notes: list[str]) -> Plan:
    problem, origin, free = built["problem"], built["origin"], built["free"]
    placements: dict[str, str] = {}
    gone: list[Pod] = []
    for ctx in built["ctxs"]:
        for c in ctx.classes:
            cls = problem.classes[c]
            pending = [p for p in cls.pods if p.key not in free]
            for n in ctx.by_class[c]:
                x = values[ctx.x[(c, n)].index]
                node = problem.nodes[n].name
                on = [p for p in cls.pods if p.key in free and origin[p.key] == node]
                stayed = 0
                for g in {frozenset(b.key for b in cluster.pdbs if guards(b, p)) for p in on}:
                    mine = [p for p in on if frozenset(b.key for b in cluster.pdbs if guards(b, p)) == g]
                    s = values[built["stays"][(c, n, g)].index] if (c, n, g) in built["stays"] else 0
                    gone.extend(mine[s:])
                    stayed += s
                for _ in range(x - stayed):
                    placements[pending.pop(0).key] = node
    running = {p.key: p for p in cluster.pods}
    victims = [running[p.key] for p in gone]
    used = {p.key for p in cluster.pods} | {p.key for p in cluster.pending}
    order = max((p.order for p in (*cluster.pods, *cluster.pending)), default=0) + 1
    recreated = []
    for v in victims:
        again = recreate(v, used, order + len(recreated))
        if again is not None:
            recreated.append(again)
    pending_pods = {p.key: p for p in cluster.pending}
    preemptions = []
    by_node: dict[str, list[Pod]] = defaultdict(list)
    for v in victims:
        by_node[v.node_name].append(v)
    placed_on: dict[str, list[Pod]] = defaultdict(list)
    for key, node in placements.items():
        placed_on[node].append(pending_pods[key])
    everyone = sorted((pending_pods[k] for k in placements), key=lambda p: (-p.priority, p.order))
    notes = list(level_notes)
    for node in (n.name for n in cluster.nodes):
        if node not in by_node:
            continue
        here = sorted(placed_on.get(node, []), key=lambda p: (-p.priority, p.order)) or everyone
        preemptor = here[0].key if here else ""
        vs = sorted(by_node[node], key=importance)
        preemptions.append(Preemption(preemptor, node, tuple(v.key for v in vs)))
        for v in vs:
            notes.append(f"{v.key} (priority {v.priority}) evicted from {node} to make room for {preemptor}"
                         + (f" (priority {pending_pods[preemptor].priority})" if preemptor else ""))
    final = final_state(replace(cluster, pods=tuple(p for p in cluster.pods if p.key not in {v.key for v in victims})),
                        placements)
    pending: dict[str, str] = {}
    for p in cluster.pending:
        if p.key not in placements:
            pending[p.key] = final_state_message(p, final) or NOT_PLACED.format(why="no room")
    for p in recreated:
        pending[p.key] = RECREATED
    return Plan(placements, pending, status, wall_seconds=time.perf_counter() - started, workers=params.workers,
                seed=params.seed, notes=tuple(notes), preemptions=tuple(preemptions), recreated=tuple(recreated))
