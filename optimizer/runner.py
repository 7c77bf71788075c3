"""One CP-SAT runner for every search podplan makes: solve's components, rebalance's target, the relaxation
bounds and why-pending's assumption cores.

- `SolverParams`: everything that steers a search, in one dataclass.
- `Status`: the one status vocabulary of plans and searches.
- `Interrupt`: Ctrl-C as a flag. A SIGINT handler sets it and stops the CP-SAT run under way, so no
  KeyboardInterrupt ever unwinds through the solver's callbacks; long Python loops (greedy, model building)
  poll it and hand back what they have.
- `run`: one CP-SAT solve in a worker thread, with a hint, parameters and an optional progress line per
  improving solution.
- `complete`: a partial assignment (some variables fixed) completed into a full solution of a model, by
  propagation and a short search: how an incumbent from outside CP-SAT (greedy's plan, the running state)
  becomes a complete hint.
- `lexicographic`: levels maximised or minimised one after the other, each with the previous best solution
  as a complete hint and its value as a floor, then fixed for the next level.
- `Clock`, `clocked`, `now`: the search's own time. With a deterministic clock installed (solve installs one),
  every decision of the search reads `now()`, which advances by what the search is charged (CP-SAT's
  deterministic time, a fixed cost per model variable built), never by the wall clock; CP-SAT runs get
  deterministic time limits, and the wall clock only caps them (the --time-limit promise). A run the wall
  clock cut short is recorded on the clock, and the plan says so.
"""
from __future__ import annotations

import contextvars
import enum
import math
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from ortools.sat.python import cp_model, cp_model_helper

from .interrupt import NEVER, Interrupt  # noqa: F401 (re-exported: every search takes one)

# Largest component that gets the exact full model (CP-SAT proves its own bound), and the size of the
# restricted models larger components are searched in (measured: README "solve" section).
FULL_MODEL_VARIABLES = 40_000
NEIGHBOURHOOD_VARIABLES = 25_000
# The deterministic clock (see Clock). One second of search time is this much CP-SAT deterministic time. How
# much wall time a unit takes depends on the model: LNS tasks 2.6-9 s per unit, an LP or no-LP full search task
# up to 13 s per unit (one worker, 2 cores at load 6; a 248-variable completion model of a 40-node cluster). A
# conservative rate keeps most searches inside the wall clock of a loaded machine; a longer --time-limit buys
# proportionally more search. Not enough at 300 nodes: a 60 s solve of the anti-host-30 shape at load 3-4 was
# still cut (its neighbourhood rounds' model building and Python work take more wall time than the clock charges
# them), at 0.05 as at 0.1 units per second.
DET_PER_SECOND = 0.1
# Charged for a CP-SAT run that ended proven before its limit, per variable of its model (its deterministic time
# as CP-SAT reports it depends on the worker count, so it cannot be charged): 25,000 variables, 0.25 s.
PROVEN_SECONDS_PER_VARIABLE = 1e-5
PROVEN_SECONDS_MIN = 0.01  # a proven run charged by its deterministic time: at least this (starting the solver)
# A proven interleaved run whose caller asks for its work to be charged (charge_work): clock seconds per unit of
# its deterministic time, which is the same with 1 and 2 workers (both run the same batches on two threads).
# Measured on focused neighbourhood rounds at 1,000 nodes on a quiet core: spread-mixed's 0.31-0.87 units took
# 1.0-2.5 s of wall time (2.4-3.2 s a unit), where the per-variable charge said 0.17 s for their 16,500 variables.
PROVEN_SECONDS_PER_UNIT = 3.0
# Interleaved search: tasks per batch, whatever --workers (CP-SAT's default, 3 per worker, would make the
# order of the tasks, and so the plan, depend on the worker count).
INTERLEAVE_BATCH = 6
DETERMINISTIC_MIN_WORKERS = 2
# What the pipeline spends around the search per pod of the input (reading, greedy, the preference-led pass,
# verifying): 300 nodes / 4,635 pods took 22 s of a 30 s limit on 2 cores at load 4, about 1 ms per pod quiet.
PREP_SECONDS_PER_POD = 1e-3


class Status(enum.StrEnum):
    """How a plan or a search ended. Plans of `simulate` are GREEDY; a solve whose search ended below greedy
    returns greedy's plan as GREEDY_FALLBACK; a rebalance with no valid target state is NO_TARGET."""

    OPTIMAL = "OPTIMAL"
    FEASIBLE = "FEASIBLE"
    INFEASIBLE = "INFEASIBLE"
    UNKNOWN = "UNKNOWN"
    GREEDY = "GREEDY"
    GREEDY_FALLBACK = "GREEDY_FALLBACK"
    NO_TARGET = "NO_TARGET"


_FROM_CP_SAT = {cp_model.OPTIMAL: Status.OPTIMAL, cp_model.FEASIBLE: Status.FEASIBLE,
                cp_model.INFEASIBLE: Status.INFEASIBLE}


@dataclass(frozen=True)
class SolverParams:
    """Everything that steers a search, in one place.

    time_limit: wall seconds for the whole command (loading, greedy, search, verification and output).
    workers: CP-SAT search workers (num_workers). seed: CP-SAT random_seed and greedy's tie-break.
    gang: --gang, every workload all-or-nothing. strategy: "spread" | "pack" tie-break.
    log_progress: one line per improving solution on stderr (objective, bound, gap, elapsed).
    log_search: CP-SAT's own log (log_search_progress) on stderr, to study presolve and the search.
    decompose: solve independent components separately. symmetry_breaking: order interchangeable nodes.
    full_model_variables: a component with more (class, node) count variables is searched in restricted
      models (neighbourhoods of about neighbourhood_variables variables) around the incumbent, with bounds
      from optimizer.bound; at most this many, it gets the exact full model and CP-SAT's own bound.
    use_hint: warm start and floor from the greedy plan. debug_hints: check every stage's hint is a solution (tests).
    stage_shares: share of the remaining time each level may use (placed, preference, strategy); a stage
      that proves its level early hands its time on.
    reserve: share of the search's time kept for assembling the plan after the last stage.
    deterministic: the same input and seed give the same plan whatever --workers and the machine's load: the
      search runs on a deterministic clock (Clock) with a budget of `search_share` of `budget` seconds, its
      CP-SAT runs interleaved in a fixed order (interleave_search, a fixed batch size); the wall clock only caps
      it (a cut is said in the plan's notes).
    budget: the --time-limit the user gave (set from time_limit when not given: pipelines pass the search a
      time_limit of what is left, which depends on the machine; the deterministic budget must not).
    search_share: of `budget`, the deterministic seconds the search may use (the rest pays for reading, greedy,
      the preference-led pass, verifying and printing on a loaded machine).
    search_budget: the deterministic seconds of search, when the caller planned them (optimizer.pipeline.planned,
      from the input's size and `budget`); None: `search_share`'s formula.
    single_thread: with `deterministic`, every CP-SAT run is one worker's sequential search on one thread
      instead of the interleaved portfolio on DETERMINISTIC_MIN_WORKERS threads: deterministic too, but another
      plan than the portfolio's. For callers that already run searches in parallel (whatif's scenarios), where a
      second thread per search only competes with the other searches for the cores.
    """

    time_limit: float = 10.0
    workers: int = 2
    seed: int = 0
    gang: bool = False
    strategy: str = "spread"
    log_progress: bool = False
    log_search: bool = False
    decompose: bool = True
    symmetry_breaking: bool = True
    use_hint: bool = True
    debug_hints: bool = False
    full_model_variables: int = FULL_MODEL_VARIABLES
    neighbourhood_variables: int = NEIGHBOURHOOD_VARIABLES
    stage_shares: tuple[float, float, float] = (0.4, 0.75, 1.0)
    reserve: float = 0.05
    deterministic: bool = True
    budget: float | None = None
    search_share: float = 0.5
    search_budget: float | None = None
    single_thread: bool = False

    def __post_init__(self) -> None:
        if self.budget is None:
            object.__setattr__(self, "budget", self.time_limit)

    def search_seconds(self, pods: int) -> float:
        """The deterministic search's budget for an input of `pods` pods (existing and pending): `search_share`
        of the limit the user gave, less what reading, greedy, the preference-led pass and the verify gate are
        expected to take at that size (PREP_SECONDS_PER_POD), and never under a tenth of the limit. A function of
        the input and the options only, never of the machine."""
        if self.search_budget is not None:
            return self.search_budget
        budget = float(self.budget if self.budget is not None else self.time_limit)
        return max(0.1 * budget, budget * self.search_share - PREP_SECONDS_PER_POD * pods)




class Clock:
    """The search's time (see the module docstring). `now()` is `origin` plus what was charged; the wall
    clock only enters through `wall_deadline` (the promise), which caps every CP-SAT run, and `cuts`, the runs
    and loops it cut short (then the plan may differ from another run's, and says so)."""

    def __init__(self, wall_deadline: float, single_thread: bool = False) -> None:
        self.single_thread = single_thread  # every run one worker's sequential search (SolverParams.single_thread)
        self.origin = time.perf_counter()
        self.used = 0.0
        self.wall_deadline = wall_deadline
        self.cuts: list[str] = []

    def now(self) -> float:
        return self.origin + self.used

    def charge(self, seconds: float) -> None:
        self.used += max(0.0, seconds)

    def wall_left(self) -> float:
        return self.wall_deadline - time.perf_counter()

    def wall_over(self, what: str = "") -> bool:
        """Has the wall clock run out? (recorded as a cut, naming `what`, when it has)"""
        if time.perf_counter() < self.wall_deadline:
            return False
        if what:
            self.cut(what)
        return True

    def cut(self, what: str) -> None:
        if what not in self.cuts:
            self.cuts.append(what)

    @contextmanager
    def holding(self, seconds: float) -> Iterator[None]:
        """The wall deadline `seconds` earlier while the block runs: wall time kept for work that follows it
        (the placed bound built after a search that may leave pods pending). Only a run the wall clock cuts
        sees it; the deterministic budget is as it was."""
        self.wall_deadline -= seconds
        try:
            yield
        finally:
            self.wall_deadline += seconds


_CLOCK: contextvars.ContextVar[Clock | None] = contextvars.ContextVar("podplan_clock", default=None)


def now() -> float:
    """The deterministic clock's time when one is installed, else the wall clock's (perf_counter)."""
    clock = _CLOCK.get()
    return clock.now() if clock is not None else time.perf_counter()


def charge(seconds: float) -> None:
    """Charge the installed deterministic clock (work CP-SAT does not measure: building a model)."""
    clock = _CLOCK.get()
    if clock is not None:
        clock.charge(seconds)


def clock() -> Clock | None:
    return _CLOCK.get()


@contextmanager
def clocked(c: Clock) -> Iterator[Clock]:
    """Install `c` as the search's clock for the block (this thread and context only)."""
    token = _CLOCK.set(c)
    try:
        yield c
    finally:
        _CLOCK.reset(token)


class Progress(cp_model.CpSolverSolutionCallback):
    """Prints improving solutions on stderr; CP-SAT itself keeps the incumbent."""

    def __init__(self, label: str, started: float, enabled: bool):
        super().__init__()
        self.label = label
        self.started = started
        self.enabled = enabled

    def on_solution_callback(self) -> None:
        if not self.enabled:
            return
        # whole numbers: f"{-0.0:.0f}" would print "-0"
        obj, bound = round(self.objective_value), round(self.best_objective_bound)
        print(f"  [{self.label}] objective {obj}  bound {bound}  gap {abs(bound - obj)}  "
              f"{time.perf_counter() - self.started:.1f}s", file=sys.stderr, flush=True)


@dataclass
class Run:
    """One finished CP-SAT run: its status, the solution's values (None without one) and the solver."""

    status: Status
    solver: cp_model.CpSolver
    values: list[int] | None = None

    @property
    def found(self) -> bool:
        return self.values is not None

    @property
    def bound(self) -> float:
        return self.solver.best_objective_bound


def _integral(bound: float, maximize: bool) -> float:
    """CP-SAT's objective bound of an integer objective as the integer it stands for. It comes as a float
    (-12.999999999999998 for -13): truncated by int() it read -12, and a proven optimum of -13 was printed as 1
    below its bound. Rounded down when maximising, up when minimising (valid for an integer objective), after
    1e-6 for the float's own error."""
    if not math.isfinite(bound):
        return bound
    return float(math.floor(bound + 1e-6) if maximize else math.ceil(bound - 1e-6))


def set_hint(model: cp_model.CpModel, values: Sequence[int]) -> None:
    """A complete hint: `values` are the first len(values) variables of the model, in index order."""
    proto = model.proto
    proto.clear_solution_hint()
    proto.solution_hint.vars.extend(range(len(values)))
    proto.solution_hint.values.extend(values)


def run(model: cp_model.CpModel, params: SolverParams, limit: float, *, interrupt: Interrupt = NEVER,
        progress: Progress | None = None, extra: dict[str, Any] | None = None,
        det_per_second: float = DET_PER_SECOND, portfolio: bool = True, charge_work: bool = False) -> Run:
    """One CP-SAT run in a worker thread: the main thread stays free to take Ctrl-C (Interrupt). On a
    deterministic clock, `det_per_second` converts its deterministic time to the clock's seconds (a caller that
    sets max_deterministic_time itself in `extra`, for small models whose units run faster, may say so).
    `portfolio` False: one worker's sequential search, deterministic by itself (a completion over fixed
    variables, a packing round: the interleaved portfolio's batches cost them ten times the wall time).
    `charge_work`: a run that ends proven is charged its deterministic time, which one worker (`portfolio`
    False) or the interleaved batches report the same on every run, rather than per variable of the model (for
    small neighbourhoods of a large model, whose fixed variables presolve removes at once, and whose search may
    take seconds all the same)."""
    solver = cp_model.CpSolver()
    sp = solver.parameters
    sp.max_time_in_seconds = max(0.01, limit)
    sp.num_workers = max(1, params.workers)
    sp.random_seed = params.seed
    # CP-SAT's own SIGINT handler outlives the solve and aborts the process (std::bad_function_call) on a later
    # Ctrl-C: podplan's Interrupt handles SIGINT and stops the search itself.
    sp.catch_sigint_signal = False
    clk = _CLOCK.get() if params.deterministic else None
    if clk is not None and (not portfolio or clk.single_thread):
        sp.max_deterministic_time = max(0.01, limit) * det_per_second
        sp.max_time_in_seconds = max(0.01, clk.wall_left())
        sp.num_workers = 1
    elif clk is not None:
        # the limit is the clock's: deterministic time; the wall clock only caps it. The same tasks in the same
        # order with 1 or 2 workers: a fixed batch, and no feasibility-jump first-solution task (CP-SAT adds
        # it with one worker only)
        sp.max_deterministic_time = max(0.01, limit) * det_per_second
        sp.max_time_in_seconds = max(0.01, clk.wall_left())
        sp.interleave_search = True
        sp.interleave_batch_size = INTERLEAVE_BATCH
        sp.use_feasibility_jump = False
        # CP-SAT's interleaved search with one worker is another portfolio (measured: its own first-solution
        # tasks, and other plans from the same tasks): the work is fixed by the deterministic budget whatever
        # the thread count, so --workers 1 shares it between two threads like --workers 2
        sp.num_workers = max(DETERMINISTIC_MIN_WORKERS, params.workers)
        # the core-based search does far more per unit of deterministic time than the others (3.2 s of wall
        # time for 0.35 units, where LNS tasks take 0.1 units in 0.26 s): its tasks overran the wall clock
        sp.ignore_subsolvers.append("core")
    elif params.deterministic and params.workers > 1:
        sp.interleave_search = True
    sp.log_search_progress = params.log_search
    if params.log_search:
        sp.log_to_stdout = False
        solver.log_callback = lambda line: print(line, file=sys.stderr)
    for k, v in (extra or {}).items():
        if k == "repair_hint" and sp.interleave_search:
            # OR-Tools 9.15 aborts the process (CHECK heuristics.fixed_search != nullptr) on repair_hint with
            # interleave_search; seen once in a focused neighbourhood round. The hint stays a plain hint.
            continue
        if isinstance(v, (list, tuple)):
            getattr(sp, k).extend(v)  # a repeated field (e.g. ignore_subsolvers)
        else:
            setattr(sp, k, v)
    out: dict[str, int] = {}

    def work() -> None:
        out["status"] = solver.solve(model, progress) if progress is not None else solver.solve(model)

    t0 = time.perf_counter()
    with interrupt.running(solver):
        t = threading.Thread(target=work, daemon=True)
        t.start()
        while t.is_alive():
            t.join(0.1)
    status = _FROM_CP_SAT.get(out.get("status", cp_model.UNKNOWN), Status.UNKNOWN)
    if clk is not None:
        budget = sp.max_deterministic_time / det_per_second
        if status in (Status.OPTIMAL, Status.INFEASIBLE) and charge_work and not portfolio:
            clk.charge(min(budget, max(PROVEN_SECONDS_MIN, solver.response_proto.deterministic_time / det_per_second)))
        elif status in (Status.OPTIMAL, Status.INFEASIBLE) and charge_work:
            clk.charge(min(budget, max(PROVEN_SECONDS_PER_VARIABLE * len(model.proto.variables),
                                       PROVEN_SECONDS_PER_UNIT * solver.response_proto.deterministic_time)))
        elif status in (Status.OPTIMAL, Status.INFEASIBLE):
            clk.charge(min(budget, PROVEN_SECONDS_PER_VARIABLE * len(model.proto.variables)))
        else:
            clk.charge(budget)
            if not interrupt.is_set() and time.perf_counter() - t0 >= 0.95 * sp.max_time_in_seconds:
                clk.cut("a CP-SAT run")
    values = list(solver.response_proto.solution) if status in (Status.OPTIMAL, Status.FEASIBLE) else None
    return Run(status, solver, values)


def complete(model: cp_model.CpModel, fixed: dict[int, int], params: SolverParams, limit: float, *,
             interrupt: Interrupt = NEVER, objective: Any = None, maximize: bool = True) -> Run:
    """A full solution of `model` with the variables `fixed` ({index: value}) at those values (their domain
    narrowed in a clone), optimising `objective` if given (else none). INFEASIBLE: those values break a
    constraint."""
    clone = model.clone()
    proto = clone.proto
    clone.clear_objective()
    for index, value in fixed.items():
        domain = proto.variables[index].domain
        if len(domain) == 2:  # an interval: narrowed in place (cheaper than a constraint)
            domain[0] = value
            domain[1] = value
        else:
            clone.add(clone.get_int_var_from_proto_index(index) == value)
    if objective is not None:
        target = _cloned(clone, objective)
        if maximize:
            clone.maximize(target)
        else:
            clone.minimize(target)
    single = SolverParams(workers=params.workers, seed=params.seed, deterministic=params.deterministic)
    # mostly propagation over fixed variables: one worker's search, its work units counted as seconds of the
    # deterministic clock (at the search's rate a 25,000-variable completion at 1,000 nodes got 0.05 units and
    # never finished)
    return run(clone, single, limit, interrupt=interrupt, det_per_second=1.0, portfolio=False)


def _cloned(clone: cp_model.CpModel, var: Any) -> Any:
    """The clone's variable of the same index (a level variable of the original model)."""
    return clone.get_int_var_from_proto_index(var.index)


# ------------------------------------------------------------------------------------------ lexicographic


@dataclass
class Level:
    """One objective level. `expr` is a variable or linear expression, or a callable that builds it (adding
    its variables to the model when its stage starts), or an int when nothing the model decides changes it.
    `cap`: a value known to be the level's best (a stage whose incumbent reaches it is proven without search);
    `skip`: leave the level unsearched when an incumbent exists; `share`: of the time left for this stage."""

    name: str
    expr: Any
    sense: str = "max"  # "max" | "min"
    cap: int | None = None
    skip: bool = False
    share: float | None = None  # None: an equal share of the time left among the remaining levels


@dataclass
class LevelResult:
    name: str
    value: int
    bound: float
    optimal: bool


@dataclass
class Lexicographic:
    """The outcome of a staged search: the best complete solution found, each level's value and bound."""

    values: list[int] | None
    levels: list[LevelResult] = field(default_factory=list)
    stopped: str = ""  # why the stages ended early ("" when every level ran)


def lexicographic(model: cp_model.CpModel, levels: Sequence[Level], params: SolverParams, deadline: float, *,
                  incumbent: list[int] | None = None, interrupt: Interrupt = NEVER,
                  progress: Callable[[str], Progress | None] = lambda name: None,
                  repair: Callable[[cp_model.CpModel], None] | None = None, floor: bool = True,
                  stop_when_unimproved: bool = False, check_hint: bool = False,
                  extra: Callable[[cp_model.CpModel], dict[str, Any]] = lambda model: {},
                  say: Callable[[str], None] = lambda line: None, charge_work: bool = False) -> Lexicographic:
    """Optimise `levels` one after the other (see Level). Each stage hints the incumbent (completed over the
    variables the level added) and, with `floor`, requires the level to be at least as good as the
    incumbent's value; then the level is fixed at its optimum (or at least at the value reached) for the next.
    Without an incumbent, `repair` may put a partial hint on the model (CP-SAT's repair_hint is set).
    `stop_when_unimproved`: a stage that finds no solution within its time ends the search (the incumbent
    stands for every later level). INFEASIBLE at the first stage without an incumbent: no solution exists
    (values None, stopped "infeasible"). `extra`: CP-SAT parameters for a stage's model; `say`: a line per stage
    (what is searched for how long, what it found); `charge_work`: as run's, for every stage."""
    out = Lexicographic(incumbent)
    clk = _CLOCK.get()
    for i, level in enumerate(levels):
        if interrupt.is_set():
            out.stopped = "interrupted"
            break
        if clk is not None and out.values is not None and clk.wall_over("the staged search"):
            out.stopped = "the wall-clock time limit"
            break
        expr = level.expr() if callable(level.expr) else level.expr
        if isinstance(expr, int):
            out.levels.append(LevelResult(level.name, expr, expr, True))  # nothing the model decides
            continue
        maximize = level.sense == "max"
        values = out.values
        if values is not None and len(values) < len(model.proto.variables):
            # the level added variables: complete the incumbent over them (propagation and a short search)
            left = max(0.05, (deadline - now()) * 0.2)
            done = complete(model, dict(enumerate(values)), params, left, interrupt=interrupt)
            values = out.values = done.values or values
        current = _value(expr, values) if values is not None and len(values) == len(model.proto.variables) else None
        if current is not None and level.cap is not None and (current >= level.cap if maximize else current <= level.cap):
            out.levels.append(LevelResult(level.name, current, level.cap, True))
            _fix(model, expr, current, maximize, optimal=False)
            continue
        if current is not None and level.skip:
            out.levels.append(LevelResult(level.name, current, float("inf") if maximize else float("-inf"), False))
            continue
        share = level.share if level.share is not None else 1.0 / (len(levels) - i)
        limit = max(0.05, (deadline - now()) * share)
        if maximize:
            model.maximize(expr)
        else:
            model.minimize(expr)
        settings = dict(extra(model))
        if values is not None:
            set_hint(model, values)
            if floor and current is not None:
                model.add(expr >= current if maximize else expr <= current)
            if check_hint:
                _check_hint(model)
        elif repair is not None:
            model.proto.clear_solution_hint()
            repair(model)
            settings["repair_hint"] = True
        say(f"{level.name}: searching for {limit:.1f}s ({len(model.proto.variables)} variables)")
        result = run(model, params, limit, interrupt=interrupt, progress=progress(level.name), extra=settings,
                     charge_work=charge_work)
        if result.values is not None:
            out.values = result.values
            value = _value(expr, result.values)
            out.levels.append(LevelResult(level.name, value, _integral(result.bound, maximize),
                                          result.status is Status.OPTIMAL))
            say(f"{level.name}: {value} ({'optimal' if result.status is Status.OPTIMAL else 'not proven'})")
        elif current is not None:
            bound = _integral(result.bound, maximize) if result.status is not Status.UNKNOWN else (
                float("inf") if maximize else float("-inf"))
            out.levels.append(LevelResult(level.name, current, max(bound, current) if maximize else min(bound, current),
                                          False))
            value = current
            say(f"{level.name}: no solution in {limit:.1f}s")
            if stop_when_unimproved:
                out.stopped = f"level {level.name}: no better solution within the time limit"
                break
        else:
            out.stopped = "infeasible" if result.status is Status.INFEASIBLE else "no solution within the time limit"
            break
        _fix(model, expr, value, maximize, optimal=out.levels[-1].optimal and not floor)
    return out


def _value(expr: Any, values: Sequence[int]) -> int:
    """The value of a variable or linear expression under a complete solution."""
    if isinstance(expr, cp_model.IntVar):
        return values[expr.index]
    flat = cp_model_helper.FlatIntExpr(expr)
    return int(flat.offset) + sum(int(c) * values[v.index] for v, c in zip(flat.vars, flat.coeffs))


def _fix(model: cp_model.CpModel, expr: Any, value: int, maximize: bool, optimal: bool) -> None:
    """Keep the level at its optimum (==) or at least as good as reached (>= / <=) for the later levels."""
    if optimal:
        model.add(expr == value)
    elif maximize:
        model.add(expr >= value)
    else:
        model.add(expr <= value)


def _check_hint(model: cp_model.CpModel) -> None:
    """Tests: the complete hint must be a feasible solution of the model as it stands.

    (debug_crash_on_bad_hint is no oracle here: CP-SAT's presolve can lose a feasible complete hint, which
    is exactly why every stage carries the incumbent's objective as a floor and keeps the incumbent.)
    """
    done = run(model, SolverParams(workers=1), 10, extra={"fix_variables_to_their_hinted_value": True})
    if not done.found:
        raise AssertionError(f"the stage's complete hint is not a solution of the model: {done.status}")
