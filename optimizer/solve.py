"""The CP-SAT solve loop: `solve(cluster, params, policy, greedy_plan) -> Plan`.

How a solve runs:
1. optimizer.problem builds classes of identical pending pods, static feasibility and the independent
   components (scipy's connected components); each component gets its own CP-SAT model (optimizer.model).
2. Warm start: the greedy plan's counts are completed into a full assignment by a CP-SAT run with every x
   fixed (a "repair" of all auxiliary variables: presence literals, skew bounds, preference rewards). That
   complete, feasible assignment is the solution hint of the first stage AND the objective floor
   (level >= greedy's value), so the search starts from greedy's incumbent and cannot end below it. A greedy
   plan that breaks the final-state rules cannot be completed; the stage then runs with CP-SAT's own
   hint repair on the greedy x (repair_hint) and no floor.
3. Lexicographic objective by stages: placed (priority-weighted; exact: a pod of a higher priority outweighs
   every lower one, or one stage per priority when the weights would not fit), then preference P, then the
   --strategy tie-break. Each stage maximises its level with the previous stage's best solution as a complete
   hint, then fixes level >= achieved value. Time is shared between stages (unused time rolls over) and
   between components (by size). The bound and gap of each level are reported as proven by CP-SAT.
4. Never worse than greedy: the result is compared with greedy's completed objective on the lexicographic
   order; if it is worse (only possible when greedy's plan could not be used as an incumbent), the greedy plan
   is returned with status GREEDY_FALLBACK and the reason.
5. Ctrl-C stops the current stage (CP-SAT keeps its incumbent) and skips the remaining ones: the best plan
   found so far is returned.

`why_pending(...)` explains pods the plan leaves pending with CP-SAT assumptions (see its docstring).
"""
from __future__ import annotations

import random
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from contextlib import nullcontext
from dataclasses import dataclass, field, replace
from typing import Any

from ortools.sat.python import cp_model

from ..models.objects import Cluster, Pod

from .ahead import AHEAD
from .blockers import carrier, dynamic_reason
from .bound import joint_classes_left_out, node_groups, placed_bound, preference_bound_unless
from .context import TERM_KINDS, Explain
from .framework import Profile, Reason
from .model import Built, build, existing_terms, term_vars
from .explain import final_state_message
from .figures import NOT_PROVEN, level_gaps, objective_note, restate
from .neighbourhood import candidates, focus, room_left, shortfall
from .packing import packable, repair
from .plan import Plan
from .policy import Policy
from .problem import Component, Problem, build_problem, static_reasons
from .registry import DEFAULT_PROFILE
from .verify import final_state, scored_terms
from .runner import (NEVER, Clock, Interrupt, Level, LevelResult, Progress, SolverParams, Status, charge, clock,
                     clocked, complete, lexicographic, run)
from .runner import now as _now
from .timelimit import cut_note

# Measured cost of building a component's model and letting CP-SAT presolve it, per (class, node) count
# variable (1,000 nodes / 350k variables: 46 s to build on 2 cores): a model is only built when it fits in
# its time share; otherwise the incumbent is kept.
SECONDS_PER_VARIABLE = 2.0e-4
# The same for a focused round's model, whose variables are mostly frozen at the incumbent's counts (fixed, no
# constraint of their own between frozen classes): measured at 1,000 nodes on a quiet core, 1.4e-5 s per variable
# (0.10-0.16 s for 7,000-10,000 variables, 1,200-2,600 of them free); charged at SECONDS_PER_VARIABLE, the builds
# took half the deterministic budget of a 60 s solve for a tenth of its wall time. Twice the measured cost, for a
# machine with one other job.
FOCUSED_SECONDS_PER_VARIABLE = 3.0e-5
# The same for a component's full model (at most FULL_MODEL_VARIABLES, optimizer.runner), measured again once
# the model's build had been made faster: 23,468 and 35,595 variables built in 0.76 and 0.96 s (3.2e-5 and
# 2.7e-5 s per variable; 88,000-variable models of the family at 300 nodes 2.6-4.0e-5), at load 2 on 2 cores.
# Twice the most measured, for a machine with one other job. Charged at SECONDS_PER_VARIABLE, the build of a
# 23,468-variable model took 4.7 s of a 6.9 s search budget (the command's default limit at 300 nodes), and its
# levels ran out of time unproven with 9 s of the limit unused.
FULL_SECONDS_PER_VARIABLE = 8.0e-5
# A broad neighbourhood round's CP-SAT run: its bound proves nothing (optimizer.bound gives the bound), so the
# LP relaxation only costs time. Measured on production 1,000 (25,000 variables, 2 interleaved workers): with
# it, the default_lp and max_lp tasks took 16 s and 14 s each and no LNS task ran in a 20 s round. Focused
# rounds keep CP-SAT's defaults: on their few thousand free variables the LP pays (a 60 s solve of production
# 1,000 ended 0.3 % below the bound with it, 1.4 % without).
ROUND_SETTINGS = {"linearization_level": 0, "ignore_subsolvers": ["default_lp", "max_lp", "core", "reduced_costs",
                                                                   "pseudo_costs", "lb_tree_search"]}
# Focused rounds (optimizer.neighbourhood.focus): about this many free pods to start with (adapted between
# the bounds by how long rounds take), this many roomiest candidate nodes per class besides the ones its
# preferences want, at most this long each (most end proven sooner).
FOCUS_PODS, FOCUS_PODS_MIN, FOCUS_PODS_MAX = 800, 200, 10_000
FOCUS_NODES = 8
FOCUS_ROUND_SECONDS = 3.0
# A pending class that this many placing rounds drew failed to place more of is left to later rounds' chance:
# once every class of every priority is, the rounds turn to preferences (some pods may fit nowhere)
PLACING_TRIES = 3
# After this many rounds in a row that did not improve the incumbent, a preference round frees blockers one step
# further (optimizer.neighbourhood.focus `deeper`): such rounds cost more, and every round deeper made one shape
# at 1,000 nodes worse (prefs-everywhere 0.77 -> 1.27 % below the bound) where every other round did not
DEEPER_AFTER = 1
# Share of a large component's time the packing repair (optimizer.packing) may use when the incumbent leaves
# pods pending and only resources decide where they go; the neighbourhood rounds get the rest.
PACKING_SHARE = 0.85
# Least time a component gets, however small its share by size (a proven small part costs little of it).
MIN_PART_SECONDS = 1.0
# Measured cost of optimizer.bound's placed and preference bounds per (class, node group) pair (GPU cluster:
# 8,000 classes x 24 groups, built and run in 5-7 s on 2 busy cores): a packed part that leaves pods pending
# keeps that time for its bounds, which are computed after the search.
BOUND_SECONDS_PER_PAIR = 3.5e-5
# The preference bound's joint LP (optimizer.bound._joint_linear) of a large component is planned at
# (columns / LP_COLUMNS_PER_ROOT_SECOND) ** 2 seconds: HiGHS's time grows about with the square of its columns
# (2 cores, 1,000 nodes: 27,600 columns 0.2 s, 61,000 1.8 s, 145,000 8.4 s; 5,000 nodes: 622,000 more than 190 s,
# 3.4 million more than 210 s and 8 GB). It holds the columns planned within LP_SHARE of the component's time:
# the classes with the most at stake, the others bounded one at a time (at 5,000 nodes the whole LP took all the
# time the neighbourhood rounds had, and never ended).
LP_COLUMNS_PER_ROOT_SECOND = 50_000
LP_SHARE = 0.5


@dataclass
class SolveState:
    """What one solve carries across its components: Ctrl-C, where the time went, what rounds learned."""

    interrupt: Interrupt
    timings: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    rounds: int = 0  # neighbourhood rounds, all components together
    seconds_per_variable: float = SECONDS_PER_VARIABLE  # measured by the rounds built so far
    notes: list[str] = field(default_factory=list)  # for the plan's notes (the packing repair's outcome)
    lp_columns: dict[int, int] = field(default_factory=dict)  # component -> the most columns its joint LP may have


@dataclass
class ComponentResult:
    counts: dict[tuple[int, int], int]
    levels: list[LevelResult]
    terms: dict[str, int]
    greedy_levels: list[int] | None  # greedy's completed level values, None if unusable
    greedy_note: str = ""
    greedy_pref: int | None = None
    placed_by_priority: dict[int, int] = field(default_factory=dict)
    # restricted (neighbourhood) components: bounds from optimizer.bound instead of CP-SAT's levels
    placed_bound: dict[int, int] | None = None
    pref_bound: int | None = None
    rounds: int = 0
    kept: bool = False  # the incumbent kept unsearched (its terms are not known here)
    proven_by_bound: bool = False  # restricted search reached optimizer.bound's relaxation
    pref_relaxed: int | None = None  # optimizer.bound's P bound for a full-model part CP-SAT left unproven
    classes: list[int] = field(default_factory=list)


def _complete_greedy(built: Built, counts: dict[tuple[int, int], int], params: SolverParams,
                     limit: float, state: SolveState) -> tuple[list[int] | None, str]:
    """Greedy's counts completed into a full assignment of the model (best P for those counts)."""
    ctx = built.ctx
    for key in counts:
        if key not in ctx.x or counts[key] > ctx.ub[key]:
            return None, "greedy placed a pod where the static rules forbid it"
    fixed = {var.index: counts.get(key, 0) for key, var in ctx.x.items()}
    done = complete(ctx.model, fixed, params, limit, interrupt=state.interrupt,
                    objective=built.level_vars[built.level_names.index("preference")])
    if done.values is not None:
        if params.symmetry_breaking is False or done.status is Status.OPTIMAL:
            return done.values, ""
        return done.values, "greedy completion not proven best for P"
    if done.status is Status.INFEASIBLE:
        return None, "greedy's plan breaks a final-state rule (e.g. an earlier pod's spread or first-pod affinity)"
    return None, "greedy completion ran out of time"


def _symmetry_permuted(built: Built, counts: dict[tuple[int, int], int]) -> dict[tuple[int, int], int]:
    """Greedy counts with interchangeable nodes reordered to satisfy the symmetry-breaking order."""
    groups = built.ctx.symmetric_groups
    if not groups:
        return counts
    out = dict(counts)
    ctx = built.ctx
    for nodes in groups:
        cols = [{c: counts.get((c, n), 0) for c in ctx.by_node[n]} for n in nodes]
        cols.sort(key=lambda col: -sum(col.values()))
        for n, col in zip(nodes, cols):
            for c, v in col.items():
                out[(c, n)] = v
    return {k: v for k, v in out.items() if v}


def _solve_component(problem: Problem, comp: Component, built: Built, greedy_counts: dict[tuple[int, int], int] | None,
                     params: SolverParams, deadline: float, state: SolveState, started: float,
                     caps: dict[str, int] | None = None, skip: frozenset[str] = frozenset(),
                     rebuild: Callable[[], Built] | None = None,
                     settings: dict[str, Any] | None = None, charge_work: bool = False) -> ComponentResult:
    """The staged lexicographic search of one built model. `caps`: level values known to be upper bounds
    (a stage whose incumbent reaches its cap is skipped, proven); `skip`: levels not searched here.
    `rebuild`: a fresh model of the same part, for the canonical form (see _canonical); `charge_work`: proven
    stages are charged their deterministic time (runner.run)."""
    ctx = built.ctx
    model = ctx.model
    tvars = built.terms
    incumbent: list[int] | None = None
    greedy_levels: list[int] | None = None
    note = ""
    if greedy_counts is not None and params.use_hint:
        counts = _symmetry_permuted(built, greedy_counts) if params.symmetry_breaking else greedy_counts
        budget = max(0.05, min(5.0, (deadline - _now()) * 0.25))
        incumbent, note = _complete_greedy(built, counts, params, budget, state)
        if incumbent is not None:
            greedy_levels = [incumbent[v.index] for v in built.level_vars]
    n_levels = len(built.level_vars)
    stages = []
    for i, (name, var) in enumerate(zip(built.level_names, built.level_vars)):
        cap = _trivial_bound(problem, built, i)
        if cap is None and caps is not None:
            cap = caps.get(name)
        share = params.stage_shares[min(i, len(params.stage_shares) - 1)] if i < n_levels - 1 else 1.0
        stages.append(Level(name, var, "max", cap=cap, skip=name in skip, share=share))

    def repair(model: cp_model.CpModel) -> None:
        # no complete incumbent: greedy's counts as a partial hint, repaired by CP-SAT
        for key, v in ctx.x.items():
            model.add_hint(v, min(greedy_counts.get(key, 0), ctx.ub[key]))  # type: ignore[union-attr]

    done = lexicographic(
        model, stages, params, deadline, incumbent=incumbent, interrupt=state.interrupt,
        progress=lambda name: Progress(f"{comp.index}:{name}", started, params.log_progress),
        repair=repair if greedy_counts is not None and params.use_hint else None, check_hint=params.debug_hints,
        extra=lambda model: dict(settings or {}), charge_work=charge_work)
    if done.stopped == "infeasible":
        raise RuntimeError(f"component {comp.index}: the model is infeasible; leaving every pod pending must "
                           "always be feasible: a bug in an encoding")
    incumbent, levels = done.values, done.levels
    if rebuild is not None and incumbent is not None and levels and all(lv.optimal for lv in levels):
        canonical = _canonical(rebuild, levels, params, deadline, state)
        if canonical is not None:
            built, incumbent = canonical
            ctx, tvars = built.ctx, built.terms
    counts: dict[tuple[int, int], int] = {}
    terms = {k: 0 for k in TERM_KINDS}
    by_prio: dict[int, int] = defaultdict(int)
    if incumbent is not None:
        for key, var in ctx.x.items():
            v = incumbent[var.index]
            if v:
                counts[key] = v
        terms = {k: incumbent[v.index] for k, v in tvars.items()}
        for c in ctx.classes:
            by_prio[problem.classes[c].priority] += incumbent[ctx.placed[c].index]
    g_pref = greedy_levels[built.level_names.index("preference")] if greedy_levels is not None else None
    return ComponentResult(counts, levels, terms, greedy_levels, note, g_pref, dict(by_prio))


def _full_model(problem: Problem, comp: Component, policy: Policy, params: SolverParams) -> Built:
    built = build(problem, comp, policy, params.strategy, symmetry=params.symmetry_breaking)
    built.terms = term_vars(built.ctx)
    return built


def _canonical(rebuild: Callable[[], Built], levels: list[LevelResult], params: SolverParams, deadline: float,
               state: SolveState) -> tuple[Built, list[int]] | None:
    """The same optimum, found the same way whatever --workers: every level proven, so its value is the same
    for every run; a fresh model with each level fixed at it is searched by one worker, without hints (which
    would carry the multi-worker search's choice), for its first solution. That search is a pure function of
    the input and the seed. None when it does not finish in the time left (the plan then depends on the run)."""
    left = deadline - _now()
    if left < 0.05 or state.interrupt.is_set():
        return None
    t0 = time.perf_counter()
    built = rebuild()
    charge(FULL_SECONDS_PER_VARIABLE * len(built.ctx.x))
    for lv, var in zip(levels, built.level_vars):
        built.ctx.model.add(var == lv.value)
    state.timings["canonical"] += time.perf_counter() - t0
    single = replace(params, workers=1)
    t0 = time.perf_counter()
    done = run(built.ctx.model, single, max(0.05, deadline - _now()), interrupt=state.interrupt,
               extra={"stop_after_first_solution": True}, portfolio=False)
    state.timings["canonical"] += time.perf_counter() - t0
    return (built, done.values) if done.values is not None else None


def _trivial_bound(problem: Problem, built: Built, i: int) -> int | None:
    """A level's bound known without search: every pod placed for the placed level."""
    if built.level_names[i] != "placed":
        return None
    prios = built.level_priorities[i]
    return sum(built.weights[problem.classes[c].priority] * problem.classes[c].size
               for c in built.ctx.classes if problem.classes[c].priority in prios)


def _nonzero(counts: dict[tuple[int, int], int]) -> dict[tuple[int, int], int]:
    return {k: v for k, v in counts.items() if v}


def _greedy_counts(problem: Problem, plan: Plan) -> dict[tuple[int, int], int]:
    counts: dict[tuple[int, int], int] = defaultdict(int)
    for pod, node in plan.placements.items():
        c = problem.class_of.get(pod)
        n = problem.node_index.get(node)
        if c is not None and n is not None:
            counts[(c, n)] += 1
    return dict(counts)


def _by_priority(problem: Problem, counts: dict[tuple[int, int], int]) -> dict[int, int]:
    out: dict[int, int] = defaultdict(int)
    for (c, _), k in counts.items():
        out[problem.classes[c].priority] += k
    return dict(out)


def plan_from_counts(problem: Problem, counts: dict[tuple[int, int], int],
                     start: Mapping[str, str] | None = None) -> dict[str, str]:
    """Hand each class's placed count to its pods in input order, nodes in input order. With `start` (the plan
    the search started from), a pod first keeps its node there while its class has room left on that node, so a
    part the search did not change comes back exactly as it started: the plan printed on an early Ctrl-C, or by
    a search that kept its start, is then the very plan optimizer.ahead verified in the background."""
    per_class: dict[int, list[tuple[int, int]]] = defaultdict(list)
    for (c, n), k in counts.items():
        if k > 0:  # (the search's counts hold zeros too: no pod goes there, and no room is made there)
            per_class[c].append((n, k))
    out: dict[str, str] = {}
    for c, nodes in per_class.items():
        pods = problem.classes[c].pods
        if start:
            room = {problem.nodes[n].name: k for n, k in nodes}
            rest = []
            for pod in pods:
                key = pod.key  # (a property: computed once, 50,000 pods at 5,000 nodes)
                where = start.get(key)
                if where is not None and room.get(where, 0) > 0:
                    room[where] -= 1
                    out[key] = where
                else:
                    rest.append(pod)
            left = iter(rest)
            for n, _ in sorted(nodes):
                for _ in range(room[problem.nodes[n].name]):
                    out[next(left).key] = problem.nodes[n].name
            continue
        it = iter(pods)
        for n, k in sorted(nodes):
            for _ in range(k):
                out[next(it).key] = problem.nodes[n].name
    return out


def solve(cluster: Cluster, params: SolverParams | None = None, policy: Policy | None = None,
          greedy_plan: Plan | None = None, profile: Profile = DEFAULT_PROFILE, interrupt: Interrupt = NEVER) -> Plan:
    """Place every pending pod of `cluster` optimally (see the module docstring); anytime and interruptible.
    With params.deterministic, on a deterministic clock (optimizer.runner.Clock): the same input and seed give
    the same plan unless the wall clock cuts the search short, which the plan's notes then say."""
    params = params or SolverParams()
    if not params.deterministic:
        return _solve(cluster, params, policy, greedy_plan, profile, interrupt)
    with clocked(Clock(time.perf_counter() + params.time_limit * (1 - params.reserve), params.single_thread)):
        return _solve(cluster, params, policy, greedy_plan, profile, interrupt)


def _solve(cluster: Cluster, params: SolverParams, policy: Policy | None, greedy_plan: Plan | None,
           profile: Profile, interrupt: Interrupt) -> Plan:
    policy = policy or Policy()
    started = time.perf_counter()
    # the search's time: deterministic seconds from the limit the user gave, or what the wall clock leaves
    search_time = params.search_seconds(len(cluster.pods) + len(cluster.pending)) if params.deterministic \
        else params.time_limit
    deadline = _now() + search_time * (1 - params.reserve)
    state = SolveState(interrupt)
    problem = build_problem(cluster, profile, gang_all=params.gang, decompose=params.decompose)
    state.timings["problem"] = time.perf_counter() - started
    greedy_counts = _greedy_counts(problem, greedy_plan) if greedy_plan is not None else None
    sizes = {comp.index: 1 + sum(len(problem.feasible[c]) for c in comp.classes) for comp in problem.components}
    # time shares by the size of the model actually built; small components first, their unused time rolls on
    cap = max(4 * params.full_model_variables, params.neighbourhood_variables, 1)  # large parts: rounds use time
    effective = {i: min(v, cap) if v > params.full_model_variables else v for i, v in sizes.items()}
    left = sum(effective.values())
    results: dict[int, ComponentResult] = {}
    models: dict[int, Built] = {}
    for comp in sorted(problem.components, key=lambda comp: (effective[comp.index], comp.index)):
        now = _now()
        # a small part gets at least MIN_PART_SECONDS (its share by size alone was ~0 s at 1,000 nodes: never searched)
        comp_deadline = now + max(min(MIN_PART_SECONDS, max(0.0, deadline - now)),
                                  max(0.0, deadline - now) * effective[comp.index] / max(1, left))
        left -= effective[comp.index]
        gc = None
        if greedy_counts is not None:
            cls = set(comp.classes)
            gc = {k: v for k, v in greedy_counts.items() if k[0] in cls}
        if state.interrupt.is_set():
            results[comp.index] = _kept(problem, comp, gc, "interrupted before this component was searched")
        elif (clk := clock()) is not None and clk.wall_over("components"):
            results[comp.index] = _kept(problem, comp, gc, f"component {comp.index}: the wall-clock time limit ran "
                                        "out before it was searched: greedy's placement kept")
        elif sizes[comp.index] > params.full_model_variables:
            # when greedy left pods of it pending, the placed bound is built after the search: its wall time is
            # kept from a search the wall clock cuts (else it ran past the limit at load 3: GPU 1,500 nodes)
            pending = gc is not None and sum(gc.values()) < sum(problem.classes[c].size for c in comp.classes)
            with (clk.holding(_bound_seconds(problem, comp)) if pending and (clk := clock()) is not None
                  else nullcontext()):
                results[comp.index] = _solve_large(problem, comp, policy, params, gc, comp_deadline, state, started)
        elif gc is not None and sizes[comp.index] * FULL_SECONDS_PER_VARIABLE > comp_deadline - now:
            # Building and searching this component would overrun the time limit: keep greedy's placement.
            results[comp.index] = _kept(problem, comp, gc,
                                        f"component {comp.index} ({sizes[comp.index]} count variables) cannot be "
                                        f"built and searched in its {comp_deadline - now:.0f}s share of the time "
                                        "limit: greedy's placement kept")
        else:
            t0 = time.perf_counter()
            built = _full_model(problem, comp, policy, params)
            charge(FULL_SECONDS_PER_VARIABLE * sizes[comp.index])
            state.timings["build"] += time.perf_counter() - t0
            t0 = time.perf_counter()
            results[comp.index] = _solve_component(
                problem, comp, built, gc, params, comp_deadline, state, started,
                rebuild=(lambda comp=comp: _full_model(problem, comp, policy, params)) if params.deterministic else None)
            state.timings["search"] += time.perf_counter() - t0
            models[comp.index] = built
    _more_time(problem, policy, params, results, models, sizes, deadline, state, started)
    # components that did not get a proof from CP-SAT get the relaxation bounds of optimizer.bound
    for comp in problem.components:
        r = results[comp.index]
        r.classes = comp.classes
        if state.interrupt.is_set():
            continue  # Ctrl-C: the plan now, its bounds unknown (the plan says it is not proven)
        if r.placed_bound is None and not (r.levels and r.levels[0].optimal):
            _relaxation_bounds(problem, comp, r, policy, params, deadline + search_time * params.reserve / 2, state)
        elif r.placed_bound is None and not _proven(r):
            # CP-SAT proved placed but not P: the relaxation's P bound may be the tighter one
            r.pref_relaxed = preference_bound_unless(
                problem, comp, policy, _places_all(r.placed_by_priority, _pods_by_priority(problem, r.classes)),
                state.interrupt)
    ordered = [results[comp.index] for comp in problem.components]
    return _assemble(problem, cluster, params, policy, greedy_plan, ordered, started, state)


def _proven(r: ComponentResult) -> bool:
    """Placed and preference proven for this component (by CP-SAT's full model, or reaching the relaxation)."""
    if r.kept:
        return False
    if r.rounds:
        return r.proven_by_bound
    by = {lv.name: lv.optimal for lv in r.levels}
    return by.get("placed", False) and by.get("preference", False)


def _more_time(problem: Problem, policy: Policy, params: SolverParams, results: dict[int, ComponentResult],
               models: dict[int, Built], sizes: dict[int, int], deadline: float, state: SolveState,
               started: float) -> None:
    """Time left after every component had its share goes to the unproven ones, smallest first, each
    continuing from its incumbent (which stays the floor)."""
    while not state.interrupt.is_set():
        todo = sorted((i for i, r in results.items() if not _proven(r) and (i in models or r.rounds)),
                      key=lambda i: sizes[i])
        if not todo or deadline - _now() < 1.0:
            return
        searched = False  # a part whose search has nothing left to try (no class owed more) charges no time
        for j, i in enumerate(todo):
            now = _now()
            if deadline - now < 1.0 or state.interrupt.is_set():
                return
            if (clk := clock()) is not None and clk.wall_over("more time for unproven parts"):
                return
            share = now + (deadline - now) / (len(todo) - j)
            comp = problem.components[i]
            old = results[i]
            t0 = time.perf_counter()
            if i in models:
                new = _solve_component(
                    problem, comp, models[i], old.counts, params, share, state, started,
                    rebuild=(lambda: _full_model(problem, comp, policy, params)) if params.deterministic else None)
            else:
                new = _solve_large(problem, comp, policy, params, old.counts, share, state, started)
            state.timings["search"] += time.perf_counter() - t0
            searched |= bool(new.levels or new.rounds)
            if _lex_key(problem, new) >= _lex_key(problem, old) and (new.levels or new.rounds):
                new.greedy_levels, new.greedy_pref, new.greedy_note = old.greedy_levels, old.greedy_pref, old.greedy_note
                results[i] = new
        if all(_proven(results[i]) for i in todo) or not searched:
            return  # (without a search the deterministic clock stands still: the loop never ended)


def _kept(problem: Problem, comp: Component, gc: dict[tuple[int, int], int] | None, why: str) -> ComponentResult:
    """The incumbent (greedy's counts) kept unsearched; its terms are unknown here (0), bounds come later."""
    gc = gc or {}
    return ComponentResult(gc, [], {k: 0 for k in TERM_KINDS}, None, why, placed_by_priority=_by_priority(problem, gc),
                           kept=True)


def _relaxation_bounds(problem: Problem, comp: Component, r: ComponentResult, policy: Policy, params: SolverParams,
                       deadline: float, state: SolveState) -> None:
    """Fill r.placed_bound and r.pref_bound from optimizer.bound (valid for the full model)."""
    t0 = time.perf_counter()
    total = _pods_by_priority(problem, comp.classes)
    all_placed = _places_all(r.placed_by_priority, total)
    if all_placed:
        r.placed_bound = dict(total)
    else:
        limit = max(0.05, min(10.0, deadline - _now()))
        r.placed_bound, _ = placed_bound(problem, comp, limit, params.workers, state.interrupt)
    # None on Ctrl-C during the LP: the bound is then unknown, as for every part after Ctrl-C
    r.pref_bound = preference_bound_unless(problem, comp, policy, all_placed, state.interrupt,
                                           state.lp_columns.get(comp.index))
    state.timings["bound"] += time.perf_counter() - t0


def _lex_key(problem: Problem, r: ComponentResult) -> tuple[tuple[int, ...], int]:
    prios = sorted({c.priority for c in problem.classes}, reverse=True)
    pref = sum(r.terms.values())
    return tuple(r.placed_by_priority.get(q, 0) for q in prios), pref


def _pending_top(problem: Problem, comp: Component, incumbent: Mapping[tuple[int, int], int],
                 stuck: Mapping[int, int]) -> dict[int, int]:
    """Pending pods per class of `comp`, of the highest priority with a class that fewer than PLACING_TRIES
    rounds failed to place more of (placed is lexicographic by priority: the higher ones first)."""
    placed: dict[int, int] = defaultdict(int)
    for (c, _), v in incumbent.items():
        placed[c] += v
    pending = {c: problem.classes[c].size - placed[c] for c in comp.classes if problem.classes[c].size > placed[c]}
    for q in sorted({problem.classes[c].priority for c in pending}, reverse=True):
        tier = {c: v for c, v in pending.items() if problem.classes[c].priority == q}
        if any(stuck.get(c, 0) < PLACING_TRIES for c in tier):
            return tier
    return {}


def _bound_seconds(problem: Problem, comp: Component) -> float:
    """The time the placed bound of `comp` is planned to take to build and solve (BOUND_SECONDS_PER_PAIR)."""
    return BOUND_SECONDS_PER_PAIR * len(comp.classes) * len(node_groups(problem, comp.nodes))


def _lp_columns(problem: Problem, comp: Component, deadline: float, state: SolveState) -> int:
    """The most columns the joint LP of `comp` may have: planned within LP_SHARE of the component's time, from
    the deterministic clock (the same on every machine), once per component (a later share must not build it
    again). Classes beyond them are left out of the LP; the plan's notes say so."""
    if comp.index not in state.lp_columns:
        seconds = LP_SHARE * max(0.0, deadline - _now())
        state.lp_columns[comp.index] = int(LP_COLUMNS_PER_ROOT_SECOND * seconds ** 0.5)
    return state.lp_columns[comp.index]


def _solve_large(problem: Problem, comp: Component, policy: Policy, params: SolverParams,
                 gc: dict[tuple[int, int], int] | None, deadline: float, state: SolveState,
                 started: float) -> ComponentResult:
    """Large-neighbourhood search: rounds of restricted models (optimizer.neighbourhood) around the incumbent,
    greedy's plan first; each round's hint and floor is the incumbent, so no round ends below it."""
    rng = random.Random(params.seed)
    incumbent: dict[tuple[int, int], int] = dict(gc or {})
    total = _pods_by_priority(problem, comp.classes)
    repaired = False
    if gc is not None and packable(problem, comp):
        t0 = time.perf_counter()
        v0 = _now()
        keep = _bound_seconds(problem, comp)
        incumbent = repair(problem, comp, incumbent, v0 + PACKING_SHARE * max(0.0, deadline - keep - v0), params,
                           state.interrupt, state.notes)
        repaired = incumbent != gc
        if repaired:
            AHEAD.supersede(problem.cluster)  # the starting plan cannot be the one printed any more
        if sum(incumbent.values()) < sum(total.values()):
            deadline -= keep  # pods left pending: the placed bound will be built after the search
        state.timings["packing"] += time.perf_counter() - t0
    best: ComponentResult | None = None
    first: ComponentResult | None = None
    # After Ctrl-C no round runs and the plan's bounds stay unknown: the relaxation's LP (seconds to build at
    # 1,000 nodes) would only delay the plan, so it is not started, or given up, on Ctrl-C
    cap = None if state.interrupt.is_set() else preference_bound_unless(
        problem, comp, policy, True, state.interrupt, _lp_columns(problem, comp, deadline, state))
    pref_cap_all = float("inf") if cap is None else cap
    if (left_out := joint_classes_left_out(problem, comp)) is not None:
        note = (f"component {comp.index}: the preference bound's joint LP over node groups holds {left_out[1]} "
                f"classes, within the {state.lp_columns[comp.index]} columns it can solve in {LP_SHARE:.0%} of the "
                f"part's time; {left_out[0]} classes more are bounded one class at a time")
        if note not in state.notes:
            state.notes.append(note)
            if params.log_progress:
                print(f"  [{comp.index}] {note}", file=sys.stderr, flush=True)

    def reaches_bounds(r: ComponentResult) -> bool:
        """Every pod placed and P at the relaxation's bound: the part is proven optimal."""
        return _places_all(r.placed_by_priority, total) and sum(r.terms.values()) >= pref_cap_all

    full_size = sum(len(problem.feasible[c]) for c in comp.classes)
    per_var = state.seconds_per_variable  # measured by earlier rounds, if any
    rounds = 0
    logged: tuple[int, int] | None = None  # --verbose: the last round outcome printed, and rounds since
    quiet = 0
    stuck: dict[int, int] = {}  # class -> focused rounds that did not pay it more
    # larger parts start with larger rounds: each round rebuilds the whole part's model, so its cost grows
    # with the part even when it frees few pods
    # (one size per kind of round, placing or preferences: a placing round that ends quickly says nothing of
    # how long a preference round of that size takes)
    focus_pods = dict.fromkeys((True, False), min(FOCUS_PODS_MAX, max(FOCUS_PODS, sum(total.values()) // 25)))
    focused_before: set[int] | None = None
    owed_before: dict[int, int] = {}
    placing = False  # the last focused round was on pending pods
    stuck_placing: dict[int, int] = {}  # class -> placing rounds that did not place more of it
    idle = 0  # rounds in a row that did not improve the incumbent
    while not state.interrupt.is_set():
        if (clk := clock()) is not None and clk.wall_over("neighbourhood rounds"):
            break
        now = _now()
        remaining = deadline - now
        fixed = len(incumbent)
        every_pod = bool(incumbent) and _places_all(_by_priority(problem, incumbent), total)
        focused: set[int] | None = None
        held: dict[int, dict[int, int]] | None = None
        room = room_left(problem, comp, incumbent)  # for focus and candidates alike
        wanted: dict[int, frozenset[int]] | None = None
        if incumbent:
            # every pod placed: focused rounds on the classes whose preferences are left unpaid; else on the
            # pending pods of the highest priority that has any (a round over every class found nothing in its
            # first seconds on a cluster 95 % full: optimizer.neighbourhood's docstring)
            owed = {} if every_pod else _pending_top(problem, comp, incumbent, stuck_placing)
            now_placing = bool(owed)  # else pods left pending that PLACING_TRIES rounds each could not place
            owed = owed or shortfall(problem, comp, incumbent, policy)
            if not owed:
                break  # nothing is owed: the incumbent meets the estimate everywhere
            tally = stuck_placing if now_placing else stuck
            if focused_before is not None and placing == now_placing:
                # a class a round could not improve is owed what it cannot get (no room where it wants to
                # be): drawn less often, so that later rounds go where gains are left
                for c in focused_before:
                    if owed.get(c, 0) >= owed_before.get(c, 0):
                        tally[c] = tally.get(c, 0) + 1
            placing = now_placing
            weights = {c: v / (1 + 4 * tally.get(c, 0)) for c, v in owed.items()}
            drawn = focus(problem, comp, incumbent, policy, weights, focus_pods[placing], rng, room, placing=placing,
                          deeper=idle >= DEEPER_AFTER)
            focused, held, wanted = drawn.free(), drawn.held(incumbent), drawn.wanted
            focused_before, owed_before = set(drawn.drawn), owed
            k = FOCUS_NODES
        else:
            k = max(1, int((params.neighbourhood_variables - fixed) / (1.5 * max(1, len(comp.classes)))))
        cands = candidates(problem, comp, incumbent, k, rng, policy, focused, room, wanted)
        nvars = sum(len(v) for v in cands.values())
        if nvars * per_var * 2 > remaining and rounds > 0 or nvars * per_var > remaining:
            break  # building and searching another round would overrun the component's share
        t0 = time.perf_counter()
        v0 = _now()
        frozen: dict[int, dict[int, int]] | None = None
        if focused is not None:
            frozen = defaultdict(dict)
            for (c, n), v in incumbent.items():
                if c not in focused and v > 0:
                    frozen[c][n] = v
            frozen.update({c: {} for c in comp.classes if c not in focused and c not in frozen})
        # no symmetry breaking in a focused round: frozen counts need not follow its node order
        # nor a tie-break level: focused rounds never search it (a focused round searching it took half its time)
        built = build(problem, comp, policy, params.strategy if frozen is None else "",
                      symmetry=params.symmetry_breaking and frozen is None,
                      candidates=cands, frozen=frozen, held=held)
        built.terms = term_vars(built.ctx)
        state.timings["build"] += time.perf_counter() - t0
        # the deterministic clock's cost of a build (without one: a no-op)
        charge((SECONDS_PER_VARIABLE if frozen is None else FOCUSED_SECONDS_PER_VARIABLE) * nvars)
        spent = _now() - v0
        per_var = state.seconds_per_variable = max(per_var / 4, spent / max(1, nvars))
        remaining = deadline - _now()
        # a focused round searches at least twice as long as its model took to build (at 5,000 nodes a build
        # takes seconds: shorter rounds would spend most of their time building)
        round_limit = max(FOCUS_ROUND_SECONDS, 2 * spent)
        round_deadline = _now() + (min(remaining, round_limit) if focused is not None
                                                else max(min(remaining, 5.0), remaining * 0.5))
        all_placed = best is not None and _places_all(best.placed_by_priority, total)
        caps = {"preference": pref_cap_all} if all_placed or every_pod else {}
        t0 = time.perf_counter()
        v0 = _now()
        r = _solve_component(problem, comp, built, incumbent, params, round_deadline, state, started,
                             caps=caps, skip=frozenset({"strategy"}) if remaining > 20 else frozenset(),
                             settings=ROUND_SETTINGS if focused is None else {},
                             # a focused round's model is mostly frozen variables: charged per variable, its
                             # proven search (seconds on spread shapes) was charged a tenth of its wall time
                             charge_work=focused is not None)
        searched = _now() - v0
        state.timings["search"] += time.perf_counter() - t0
        rounds += 1
        if focused is not None:
            # a round whose search took less than its build frees more pods next time (building is the cost to
            # amortise: at 5,000 nodes it takes seconds); one that runs out of time, fewer
            if searched < spent:
                focus_pods[placing] = min(FOCUS_PODS_MAX, int(focus_pods[placing] * 1.5))
            elif searched >= 0.95 * round_limit:
                focus_pods[placing] = max(FOCUS_PODS_MIN, int(focus_pods[placing] * 0.75))
        if nvars >= full_size and first is None and frozen is None:
            # the candidates were every feasible pair and no class was frozen: this was the full model, with
            # CP-SAT's proof (a focused round whose frozen classes' incumbent nodes are all their feasible ones
            # has every pair too, but proves only its restriction)
            return r
        outcome = (sum(r.placed_by_priority.values()), sum(r.terms.values()))
        if params.log_progress and outcome == logged:
            quiet += 1  # --verbose prints changes: 150 identical round lines would say nothing
        elif params.log_progress:
            if quiet:
                print(f"  [{comp.index}] {quiet} round(s) without change", file=sys.stderr, flush=True)
            logged, quiet = outcome, 0
            print(f"  [{comp.index}] round {rounds}: {nvars} variables"
                  f"{f' ({len(focused)} classes free)' if focused is not None else ''}, built in {spent:.1f}s, searched in "
                  f"{time.perf_counter() - t0:.1f}s: placed {outcome[0]}, "
                  f"preference {outcome[1]} (cap {pref_cap_all})", file=sys.stderr, flush=True)
        if first is None:
            first = r
        r_key, best_key = _lex_key(problem, r), (_lex_key(problem, best) if best is not None else None)
        idle = idle + 1 if best_key is not None and r_key <= best_key else 0
        if best_key is None or r_key >= best_key:
            best = r
            if _nonzero(r.counts) != _nonzero(incumbent):
                AHEAD.supersede(problem.cluster)  # the starting plan cannot be the one printed any more
            incumbent = dict(r.counts)
        if reaches_bounds(best):
            break
    if quiet:
        print(f"  [{comp.index}] {quiet} round(s) without change", file=sys.stderr, flush=True)
    if best is None:
        if not repaired:
            return _kept(problem, comp, gc, f"component {comp.index}: no time to build a neighbourhood model")
        state.notes.append(f"component {comp.index}: the packing repair's plan kept (no time left to build a "
                           "neighbourhood model)")
        kept = _kept(problem, comp, incumbent, "")
        kept.kept = False  # searched (by the repair): its terms are scored from the final state all the same
        return kept
    best.rounds = rounds
    best.proven_by_bound = reaches_bounds(best)
    if first is not None:
        best.greedy_levels, best.greedy_pref, best.greedy_note = first.greedy_levels, first.greedy_pref, first.greedy_note
    best.levels = []  # a restricted model's levels prove nothing: bounds come from optimizer.bound
    state.rounds += rounds
    return best


def _assemble(problem: Problem, cluster: Cluster, params: SolverParams, policy: Policy, greedy_plan: Plan | None,
              results: list[ComponentResult], started: float, state: SolveState) -> Plan:
    """One plan from the components' results, with the bound and gap of the lexicographic objective.

    Per component, placed is proven when CP-SAT proved the full model's placed level or when the placed
    vector reaches optimizer.bound's relaxation; the preference bound is CP-SAT's (full model, placed
    proven) or the relaxation's. gap: while placed is not proven everywhere, the share of the bound's pods
    (per priority) not placed; once it is, |bound(P) - P| / max(1, |bound(P)|) with P over the whole state.
    """
    counts: dict[tuple[int, int], int] = {}
    for r in results:
        counts.update(r.counts)
    placements = plan_from_counts(problem, counts, greedy_plan.placements if greedy_plan is not None else None)
    if any(r.kept or not _pref_tight(r) for r in results):
        # a kept part's terms were never computed, and a part whose P stage did not end proven may hold slack
        # penalty variables (they are only bounded one way): score the final state as the verifier does
        # (kept for the verify gate, which judges this state instead of building it again: scored_terms)
        terms = scored_terms(cluster, placements, policy)
    else:
        const = existing_terms(problem, policy)  # (computed only where needed: 0.3 s at 5,000 nodes)
        terms = {k: const.get(k, 0) + sum(r.terms.get(k, 0) for r in results) for k in TERM_KINDS}
    preference = sum(terms.values())
    by_prio: dict[int, int] = defaultdict(int)
    for r in results:
        for q, k in r.placed_by_priority.items():
            by_prio[q] += k
    total_by_prio: dict[int, int] = defaultdict(int)
    for c in problem.classes:
        total_by_prio[c.priority] += c.size

    def level(r: ComponentResult, name: str) -> LevelResult | None:
        return next((lv for lv in r.levels if lv.name == name), None)

    placed_bound_by_prio: dict[int, int] = defaultdict(int)
    placed_proven = True
    pref_bound: float = 0.0  # + the existing pods' terms, once the components' bounds are known to be finite
    for r in results:
        if r.placed_bound is not None:
            proven = _places_all(r.placed_by_priority, r.placed_bound)
            for q, k in r.placed_bound.items():
                placed_bound_by_prio[q] += max(k, r.placed_by_priority.get(q, 0))
            bound_p = r.pref_bound if r.pref_bound is not None else float("inf")
        else:
            lv = level(r, "placed")
            proven = lv is not None and lv.optimal
            for q, k in r.placed_by_priority.items():
                placed_bound_by_prio[q] += k
            if not proven:
                # CP-SAT's weighted bound does not split by priority: every pod of the component counts
                for q, k in r.placed_by_priority.items():
                    placed_bound_by_prio[q] -= k
                for q, k in _pods_by_priority(problem, r.classes).items():
                    placed_bound_by_prio[q] += k
            pv = level(r, "preference")
            bound_p = pv.bound if pv is not None else float("inf")  # integral (runner._integral)
            if r.pref_relaxed is not None:
                bound_p = min(bound_p, r.pref_relaxed)
        placed_proven &= proven
        pref_bound += bound_p
    if pref_bound != float("inf"):  # (after Ctrl-C it is not: existing_terms took 0.3 s at 5,000 nodes)
        pref_bound += sum(existing_terms(problem, policy).values())
    placed = sum(by_prio.values())
    placed_bound_total = sum(placed_bound_by_prio.values())
    pref_bound_value = (int(pref_bound) if pref_bound != float("inf") else None) if placed_proven else None
    bound: dict[str, object] = {
        "placed": placed_bound_total,
        "placed_by_priority": {str(q): placed_bound_by_prio.get(q, 0) for q in sorted(total_by_prio, reverse=True)},
        "preference": pref_bound_value,
        "strategy_proven": all(lv.optimal for r in results for lv in [level(r, "strategy")] if lv is not None),
    }
    # Proven on every level: placed meets its bound per priority, and P (the final state's, as the verifier
    # scores it) meets the sum of the components' P bounds. A part kept unsearched proves nothing by itself.
    pref_proven = placed_proven and pref_bound_value is not None and preference >= pref_bound_value
    gaps = level_gaps(placed, placed_bound_total, preference, pref_bound_value)
    gap: float | None = gaps["placed"]["relative"] if not placed_proven else gaps["preference"]["relative"]
    why_not = []
    if not placed_proven:
        why_not.append(f"placed: {gaps['placed']['absolute']} pod(s) below the bound")
    elif pref_bound_value is None:
        why_not.append("preference: no bound")
    elif not pref_proven:
        why_not.append(f"preference: {gaps['preference']['absolute']} below the bound")
    kept = sum(1 for r in results if r.kept)
    if kept:
        why_not.append(f"{kept} part(s) kept greedy's placement unsearched")
    status = Status.OPTIMAL if placed_proven and pref_proven else Status.FEASIBLE
    timings = state.timings
    notes = [f"{_count(len(problem.classes), 'pod class', 'pod classes')}, "
             f"{_count(len(problem.components), 'component')}, "
             f"{_count(sum(len(f) for f in problem.feasible), '(class, node) variable')}",
             objective_note(by_prio, preference, terms),
             *([f"{NOT_PROVEN}{'; '.join(why_not)}"] if status is not Status.OPTIMAL else []),
             "time: " + ", ".join(f"{k} {v:.1f}s" for k, v in timings.items())
             + (f", {state.rounds} neighbourhood rounds" if state.rounds else ""),
             *state.notes]
    if (clk := clock()) is not None and clk.cuts:
        notes.append(cut_note(clk.cuts))
    if state.interrupt.is_set():
        notes.append("interrupted: best plan found so far")
    greedy_notes = {r.greedy_note for r in results if r.greedy_note}
    notes.extend(f"greedy warm start: {n}" for n in sorted(greedy_notes))
    pending = {}
    final = None
    placed_in: dict[int, int] = defaultdict(int)  # class -> its pods placed (a class placed whole is skipped)
    for (ci, _), k in counts.items():
        placed_in[ci] += k
    for c in problem.classes:
        if placed_in.get(c.index, 0) >= c.size:
            continue  # (looking up its 50,000 pods' keys in the plan took 0.15 s after Ctrl-C at 5,000 nodes)
        left = [pod for pod in c.pods if pod.key not in placements]
        if not left:
            continue
        if final is None:
            final = final_state(cluster, placements)
        # Identical pods get one message: kube-scheduler's summary against the plan's final state, while the time
        # limit allows (it runs every filter on every node); past it, the static rules' summary.
        in_time = time.perf_counter() < started + params.time_limit
        if not in_time and (clk := clock()) is not None:
            clk.cut("the pending pods' reasons")
        reason = (final_state_message(left[0], final, problem.profile) if in_time else None) \
            or _pending_reason(problem, c)
        for pod in left:
            pending[pod.key] = reason
    wall = time.perf_counter() - started
    plan = Plan(placements, pending, status, bound, gap, wall, params.workers, params.seed, tuple(notes), gaps)
    if greedy_plan is not None:
        worse = _worse_than_greedy(problem, policy, results, by_prio, preference, greedy_plan)
        if worse:
            # every figure is the returned plan's, not the search's incumbent's (optimizer.figures)
            return restate(cluster, Plan(dict(greedy_plan.placements), dict(greedy_plan.pending),
                                         Status.GREEDY_FALLBACK, bound, gap, wall, params.workers, params.seed,
                                         tuple(notes) + (f"greedy fallback: {worse}",), gaps), policy)
    return plan


def _count(n: int, one: str, many: str = "") -> str:
    return f"{n} {one if n == 1 else many or one + 's'}"


def _pref_tight(r: ComponentResult) -> bool:
    """Are the part's penalty/reward variables at their true values (its P stage ended proven)?"""
    if r.rounds:
        return r.proven_by_bound
    return any(lv.name == "preference" and lv.optimal for lv in r.levels)


def _pods_by_priority(problem: Problem, classes: Iterable[int]) -> dict[int, int]:
    """How many pending pods the classes hold, per priority."""
    out: dict[int, int] = defaultdict(int)
    for c in classes:
        out[problem.classes[c].priority] += problem.classes[c].size
    return dict(out)


def _places_all(placed: Mapping[int, int], total: Mapping[int, int]) -> bool:
    """Do the pods placed per priority reach `total` on every priority?"""
    return all(placed.get(q, 0) >= k for q, k in total.items())


def _worse_than_greedy(problem: Problem, policy: Policy, results: list[ComponentResult], by_prio: dict[int, int],
                       preference: int, greedy_plan: Plan) -> str:
    """Why the solver's plan is below greedy's on the lexicographic objective ("" if it is not)."""
    g_prio: dict[int, int] = defaultdict(int)
    for pod in greedy_plan.placements:
        c = problem.class_of.get(pod)
        if c is not None:
            g_prio[problem.classes[c].priority] += 1
    for q in sorted(set(g_prio) | set(by_prio), reverse=True):
        if by_prio.get(q, 0) != g_prio.get(q, 0):
            if by_prio.get(q, 0) < g_prio.get(q, 0):
                return (f"the solver placed {by_prio.get(q, 0)} pods of priority {q}, greedy {g_prio[q]} "
                        "(greedy could not serve as the incumbent)")
            return ""
    if all(r.greedy_pref is not None for r in results):
        g_pref = sum(existing_terms(problem, policy).values()) + sum(r.greedy_pref for r in results)  # type: ignore[misc]
        if preference < g_pref:
            return f"the solver's preference {preference} is below greedy's {g_pref}"
    return ""


def _pending_reason(problem: Problem, c: Any) -> str:
    """A short reason: kube-scheduler's summary over the static verdicts, or that the optimum chose so."""
    if len(problem.feasible[c.index]):
        if c.gang:
            return f"gang {c.gang}: the optimum cannot place its minimum together (see explain --why-pending)"
        return "no room in this plan for this pod (see explain --why-pending)"
    counts: dict[str, int] = defaultdict(int)
    for n in range(len(problem.nodes)):
        rs = static_reasons(problem, c, n)
        for r in rs:
            counts[r.reason] += 1
    parts = ", ".join(f"{k} {r}" for r, k in sorted(counts.items(), key=lambda kv: (kv[0])))
    return f"0/{len(problem.nodes)} nodes are available: {parts}."


# -- why pending -------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Blocker:
    """One rule that keeps a pod pending: plugin, the object and field it comes from, upstream's reason
    text where there is one, and the nodes it blocks (empty: it does not depend on one node)."""

    plugin: str
    object: str
    field: str
    reason: str = ""
    nodes: tuple[str, ...] = ()

    def describe(self) -> str:
        where = f" on {len(self.nodes)} node(s) ({', '.join(self.nodes[:5])}{', ...' if len(self.nodes) > 5 else ''})" \
            if self.nodes else ""
        why = f": {self.reason}" if self.reason else ""
        return f"{self.plugin} {self.object} {self.field}{why}{where}"


def _static_group(problem: Problem, pod_key: str, node: str, reason: Reason) -> tuple[str, str, str]:
    """The (plugin, object, field) group of a static verdict: the plugin's encoding names the field."""
    plugin = problem.profile.plugin(reason.plugin)
    kind, field_name = plugin.encoding.blame(reason) if plugin is not None and plugin.encoding else ("node", "")
    obj = f"Node/{node}" if kind == "node" else f"Pod/{pod_key}"
    return (reason.plugin, obj, f"{field_name}|{reason.reason}|{node}")


def why_pending(cluster: Cluster, plan: Plan, params: SolverParams | None = None, policy: Policy | None = None,
                pods: list[str] | None = None, time_limit: float = 10.0,
                profile: Profile = DEFAULT_PROFILE) -> dict[str, list[Blocker]]:
    """For pods `plan` leaves pending (default: all), the rules that keep each one pending.

    Question asked of CP-SAT, per class of identical pending pods: with every other pod where the plan puts
    it, can one more pod of this class be placed? Every hard constraint of the component's model is guarded
    by an assumption literal per (plugin, object, field) group (static per-node verdicts become guarded
    x = 0); the answer INFEASIBLE comes with sufficient_assumptions_for_infeasibility, shrunk by deletion
    to a minimal set when small: those groups are the blockers, named by object and field. FEASIBLE means the
    plan was not proven optimal (time limit): reported as such.
    """
    params = params or SolverParams()
    policy = policy or Policy()
    problem = build_problem(cluster, profile, gang_all=params.gang, decompose=params.decompose)
    counts: dict[tuple[int, int], int] = defaultdict(int)
    for key, node in plan.placements.items():
        c, n = problem.class_of.get(key), problem.node_index.get(node)
        if c is not None and n is not None:
            counts[(c, n)] += 1
    wanted = set(pods) if pods is not None else set(plan.pending)
    by_key = {p.key: p for p in (*cluster.pods, *cluster.pending)}
    out: dict[str, list[Blocker]] = {}
    comp_of = {c: comp for comp in problem.components for c in comp.classes}
    for cls in problem.classes:
        keys = [p.key for p in cls.pods if p.key in wanted and p.key not in plan.placements]
        if not keys:
            continue
        blockers = _why_class(problem, comp_of[cls.index], cls.index, counts, params, policy, time_limit)
        same_class = {p.key for p in cls.pods}
        for k in keys:
            out[k] = _in_words(blockers, by_key, by_key[k], same_class)
    return out


def _in_words(blockers: list[Blocker], pods: dict[str, Pod], asked: Pod, same_class: set[str]) -> list[Blocker]:
    """Each blocker named for `asked`: the object that carries the field (a replica's workload template, never
    a sibling replica) and a reason (upstream's, for rules without a per-node verdict); merged when two
    blockers then read the same."""
    merged: dict[tuple[str, str, str, str], list[str]] = {}
    for b in blockers:
        own = b.object.startswith("Pod/") and b.object[len("Pod/"):] in same_class
        obj, fld = carrier(b.object, b.field, pods, asked, same_class)
        nodes = merged.setdefault((b.plugin, obj, fld, b.reason or dynamic_reason(b.plugin, b.field, own)), [])
        nodes.extend(n for n in b.nodes if n not in nodes)
    return [Blocker(plugin, obj, fld, reason, tuple(nodes)) for (plugin, obj, fld, reason), nodes in merged.items()]


def _why_class(problem: Problem, comp: Component, c: int, counts: dict[tuple[int, int], int], params: SolverParams,
               policy: Policy, time_limit: float) -> list[Blocker]:
    cls = problem.classes[c]
    all_nodes = list(range(len(problem.nodes)))
    built = build(problem, comp, policy, params.strategy, explain=Explain(free={c: all_nodes}), symmetry=False)
    ctx = built.ctx
    m = ctx.model
    feasible = set(problem.feasible[c].tolist())
    for n in all_nodes:
        if n in feasible or (c, n) not in ctx.x:
            continue
        for r in static_reasons(problem, cls, n):
            g = _static_group(problem, cls.rep.key, problem.nodes[n].name, r)
            m.add(ctx.x[(c, n)] == 0).only_enforce_if(ctx.guard(g))
    for (k, n), var in ctx.x.items():
        if k == c:
            m.add(var >= counts.get((k, n), 0))
        else:
            m.add(var == counts.get((k, n), 0))
    m.add(ctx.placed[c] >= sum(counts.get((c, n), 0) for n in all_nodes) + 1)
    guards = list(ctx.guards.items())
    lits = [lit for _, lit in guards]
    group_of = {lit.index: g for g, lit in guards}

    single = SolverParams(workers=1, seed=params.seed)

    def infeasible_with(active: list[Any]) -> tuple[bool, list[int]]:
        m.clear_assumptions()
        m.add_assumptions(active)
        done = run(m, single, time_limit)
        if done.status is Status.INFEASIBLE:
            return True, list(done.solver.sufficient_assumptions_for_infeasibility())
        return False, []

    ok, core = infeasible_with(lits)
    if not ok:
        return [Blocker("Objective", "plan", "placements", "one more pod fits with every other pod where the plan "
                        "puts it: the plan is not proven optimal (time limit)")]
    core_lits = [lit for lit in lits if lit.index in set(core)]
    if len(core_lits) <= 40:
        # deletion filter: drop every assumption the infeasibility does not need
        i = 0
        while i < len(core_lits):
            trial = core_lits[:i] + core_lits[i + 1:]
            still, _ = infeasible_with(trial)
            if still:
                core_lits = trial
            else:
                i += 1
    return _summarise([group_of[lit.index] for lit in core_lits], problem)


def _summarise(groups: list[tuple[str, str, str]], problem: Problem) -> list[Blocker]:
    """Per-node static groups merged by (plugin, field, reason); the rest one blocker each."""
    merged: dict[tuple[str, str, str, str], list[str]] = defaultdict(list)
    order: list[tuple[str, str, str, str]] = []
    for plugin, obj, fld in groups:
        if fld.count("|") == 2:
            field_name, reason, node = fld.split("|")
            key = (plugin, "Node" if obj.startswith("Node/") else obj, field_name, reason)
            if key not in merged:
                order.append(key)
            merged[key].append(node)
        else:
            node = obj[len("Node/"):] if obj.startswith("Node/") else ""
            key = (plugin, "Node" if node else obj, fld, "")
            if key not in merged:
                order.append(key)
            if node:
                merged[key].append(node)
            else:
                merged.setdefault(key, [])
    return [Blocker(p, o, f, r, tuple(merged[(p, o, f, r)])) for p, o, f, r in order]
