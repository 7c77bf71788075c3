"""One pipeline for every optimal plan: greedy warm start (its share of the time) -> the preference-led pass
(optimizer.warmstart; the better of the two is the incumbent) -> CP-SAT search -> verify gate -> plan. solve,
compare (both optimal columns), explain --why-pending and the benchmarks all go through `optimal_plan`;
`simulate` goes through `greedy_plan`.

Time: `Deadline` starts when the command starts (before the input is read), so `--time-limit` is a promise
for the whole command: loading, greedy, search, verification and output. The greedy warm start always runs to
the end (kube-scheduler's plan is the floor of every answer: no answer places fewer pods per priority than
`simulate`). A reserve proportional to the input's size is kept for verifying and printing the plan.

Determinism: whether a search follows greedy, and whether the preference-led pass runs, are decided from the
input's size and the limit the user gave (`planned`: optimizer.workestimate's estimates of greedy's and the
pass's time on a busy machine), never from the wall clock, so that the same input and seed give the same plan
on a quiet or a loaded machine. When the plan leaves too little time to search, greedy's plan is returned as
it is, with a note that says what --time-limit a search needs (optimizer.timelimit). The wall clock stays an
emergency cap, so that the limit holds: greedy that really used the time a search needs, a pass that would
not finish (its partial plan is discarded), a search cut short; each is said in the plan's notes (CUT_PREFIX),
where another run may give another plan.

Every plan leaves through the verify gate: a plan the verifier rejects is a bug (PlanInvalidError, exit 3),
never printed.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, replace

from ..models.errors import PlanInvalidError
from ..models.objects import Cluster

from .defaultpreemption import after_preemption
from .framework import Profile
from .gangs import find_gangs
from .greedy import simulate
from .plan import Plan
from .policy import Policy
from .profiles import Profiles
from .registry import DEFAULT_PROFILE
from .runner import NEVER, Interrupt, SolverParams, Status
from .solve import solve
from .verify import Report, verify
from .ahead import AHEAD
from .figures import restate
from .timelimit import (CUT_PREFIX, KEPT_PREFIX, MIN_SEARCH_SECONDS, RESERVE_PER_POD, RESERVE_SHARE,
                        SEARCH_PER_GREEDY, SEARCH_WALL_PER_SECOND,
                        cut_note, greedy_kept_note, scaled_reserve)
from .warmstart import placed_by_priority, preference, preference_led
from .workestimate import greedy_seconds, preference_seconds


@dataclass(frozen=True)
class Deadline:
    """The command's time budget, from its start."""

    started: float
    limit: float

    @classmethod
    def start(cls, limit: float) -> "Deadline":
        return cls(time.perf_counter(), limit)

    @property
    def at(self) -> float:
        return self.started + self.limit

    def left(self) -> float:
        return max(0.0, self.at - time.perf_counter())


def placed_pod_rules(profile: Profile | Profiles) -> frozenset[str]:
    """The plugins whose rules a later bind can break for a pod already placed (those with a placed-pod guard:
    a DoNotSchedule spread, a first pod's self-affinity): kube-scheduler checks only the incoming pod's side."""
    profiles = profile.profiles if isinstance(profile, Profiles) else (profile,)
    return frozenset(p.name for prof in profiles for p in prof.filters if p.placed_guard is not None)


def check(cluster: Cluster, plan: Plan, policy: Policy | None = None,
          profile: Profile | Profiles = DEFAULT_PROFILE, *, kube: bool = False) -> Report:
    """The verify gate: the verifier's report of `plan`, or PlanInvalidError when it breaks a rule. A plan that
    preempted is judged on its final state: the victims gone, their controllers' new pods pending.

    kube: `plan` is kube-scheduler's, one pod at a time (simulate): its final state may break rules of pods
    placed before a later bind (placed_pod_rules), which the report lists; any other violation is a bug."""
    cluster = after_preemption(cluster, plan)
    # verified already, ahead of the gate (optimizer.ahead: the search's starting plan), or verified now
    report = AHEAD.take(cluster, plan, policy, profile)
    if report is None:  # judged against the plan verified ahead, if any: only what differs (verify_delta)
        basis = None if plan.preemptions or plan.recreated else AHEAD.basis(cluster, policy, profile)
        report = verify(cluster, plan.placements, policy, profile, basis=basis)
    if not report.ok:
        allowed = placed_pod_rules(profile) if kube else frozenset()
        bad = [v for v in report.violations if not v.preexisting and v.plugin not in allowed]
    if not report.ok and bad:
        first = bad[0]
        raise PlanInvalidError(f"the {plan.status} plan failed verification: "
                               f"{len(bad)} violation(s), first: {first.pod} on {first.node}: {first.plugin}: "
                               f"{first.reason}")
    return report


def greedy_plan(cluster: Cluster, seed: int = 0, *, gang: bool = False, profile: Profile | Profiles = DEFAULT_PROFILE,
                percentage_of_nodes_to_score: int = 0, interrupt: Interrupt = NEVER,
                deadline: float | None = None, preemption: bool = False, kube: bool = False) -> Plan:
    """kube-scheduler's greedy loop on the pending pods (interrupted: the pods bound so far); with
    `preemption`, DefaultPreemption evicts lower-priority pods for a pod that fits nowhere (simulate's default;
    the optimizer's warm start never preempts). kube: exactly what kube-scheduler binds (simulate, compare's
    greedy column), whose final state may break placed pods' rules (check(kube=True) lists them); otherwise
    the guarded loop, whose plans keep every pod's rules in the final state (solve's warm start)."""
    return simulate(cluster, seed, gangs=find_gangs(cluster, gang), profile=profile,
                    percentage_of_nodes_to_score=percentage_of_nodes_to_score, interrupt=interrupt, deadline=deadline,
                    preemption=preemption, protect_placed=not kube)


def reserve(cluster: Cluster, limit: float) -> float:
    """Seconds kept for verifying and printing a plan of `cluster`: measured on an idle machine, scaled by how
    much slower this process has run so far (optimizer.timelimit.slowdown), at most half the limit."""
    return scaled_reserve(idle_reserve(cluster, limit), limit)


def optimal_plan(cluster: Cluster, params: SolverParams, policy: Policy | None = None, *,
                 deadline: Deadline, profile: Profile = DEFAULT_PROFILE, interrupt: Interrupt = NEVER,
                 warm_start: Plan | None = None) -> tuple[Plan, Plan]:
    """(the optimal plan; the greedy plan it started from), within `deadline` less the output reserve, which
    pays for the one verify gate (`check`) every caller passes the plan through before printing it: solve's
    print_plan, compare's columns, explain --why-pending. `warm_start`: a verified plan to start from instead
    of running greedy (compare's re-placement starts from the plain optimum); the preference-led pass may
    still replace it as the incumbent, as it may replace greedy's."""
    policy = policy or Policy()
    end = deadline.at - reserve(cluster, deadline.limit)
    work = planned(cluster, params, profile)
    cuts: list[str] = []
    name = "the given warm start"
    if warm_start is None:
        # kube-scheduler's plan is the floor of every answer, so greedy always runs to the end (only Ctrl-C
        # stops it): a plan stopped at a share of the limit placed fewer pods than `simulate` does
        warm_start = greedy_plan(cluster, params.seed, gang=params.gang, profile=profile, interrupt=interrupt)
        name = "greedy's plan"
        if not interrupt.is_set():
            kept = _no_time_to_search(cluster, params, policy, deadline, warm_start, work)
            if kept is not None:
                return kept, warm_start
    start, note = _better_start(cluster, params, policy, profile, warm_start, name, end, interrupt, work, cuts)
    if interrupt.is_set():
        # Ctrl-C before the search: the warm start is the best plan there is (building the search's problem
        # alone takes 7 s at 5,000 nodes)
        # no bound, gap or objective note of its own: nothing was proven, and the printed objective is the
        # verifier's (scoring the plan once more here would cost seconds at 5,000 nodes after Ctrl-C)
        return replace(start, status=Status.FEASIBLE, wall_seconds=0.0, workers=params.workers, seed=params.seed,
                       bound={}, gap=None, gaps={}, notes=start.notes + (
                           "interrupted: best plan found so far (the search had not started)",)), warm_start
    # The search's starting plan is what Ctrl-C prints until the search improves on it (and what a search that
    # cannot improve returns): it is verified in the background meanwhile, so the gate has its report at once.
    AHEAD.start(cluster, start, policy, profile)
    # the search gets what is left (CP-SAT keeps at least a tenth of the limit, so a tiny limit still searches)
    left = max(0.1 * deadline.limit, end - time.perf_counter())
    plan = solve(cluster, replace(params, time_limit=left, search_budget=work.search_seconds), policy, start, profile,
                 interrupt)
    if plan.status is Status.GREEDY_FALLBACK and start is not warm_start:
        # the plan returned is the preference-led pass's (the search's incumbent), not greedy's: say so
        plan = replace(plan, notes=tuple(n.replace("greedy fallback: ", "warm start kept (the preference-led "
                                                   "pass's plan): ", 1).replace("(greedy could not serve as the "
                                                   "incumbent)", "(it could not serve as the incumbent)")
                                         for n in plan.notes))
    if note:
        plan = replace(plan, notes=plan.notes + (note,))
    return with_cuts(plan, cuts), warm_start


@dataclass(frozen=True)
class Planned:
    """What the pipeline plans to do around the search, from the input's size and the limit the user gave
    (params.budget) alone: the same on every machine (see the module docstring). Seconds are wall seconds of a
    busy machine (optimizer.workestimate)."""

    limit: float  # the limit the plan is made for
    greedy: float  # greedy's planned time
    room: float  # what the limit leaves after greedy and the output reserve
    search: bool  # a search follows greedy
    preference: bool  # the preference-led pass runs before it
    needed: float  # the --time-limit a search needs on this input
    search_seconds: float  # the search's deterministic budget (SolverParams.search_budget)


def idle_reserve(cluster: Cluster, limit: float) -> float:
    """The output reserve as planned: reserve() before it is scaled by this machine's slowdown."""
    return max(RESERVE_SHARE * limit, RESERVE_PER_POD * (len(cluster.pods) + len(cluster.pending)))


def planned(cluster: Cluster, params: SolverParams, profile: Profile | Profiles = DEFAULT_PROFILE) -> Planned:
    """The pipeline's decisions for `cluster` under `params` (a function of the two only). A search follows
    when the limit leaves, after greedy and the output reserve, at least what a search needs (MIN_SEARCH_SECONDS,
    and SEARCH_PER_GREEDY x greedy's time: building the search's problem and model costs about what greedy
    did); the preference-led pass runs when that much is still left after the pass. The search's deterministic
    budget is what is left then, over SEARCH_WALL_PER_SECOND."""
    limit = float(params.budget if params.budget is not None else params.time_limit)
    g = greedy_seconds(cluster, profile)
    room = limit - idle_reserve(cluster, limit) - g
    search_min = max(MIN_SEARCH_SECONDS, SEARCH_PER_GREEDY * g)
    per_pod = RESERVE_PER_POD * (len(cluster.pods) + len(cluster.pending))
    needed = float(math.ceil(max(g + search_min + per_pod, (g + search_min) / (1 - RESERVE_SHARE))))
    led = room - preference_seconds(cluster, profile) >= search_min
    after = room - (preference_seconds(cluster, profile) if led else 0.0)
    return Planned(limit, g, room, room >= search_min, led, needed, max(0.0, after) / SEARCH_WALL_PER_SECOND)


def with_cuts(plan: Plan, cuts: list[str]) -> Plan:
    """`plan` with the pipeline's wall-clock cuts said: in the search's own cut note when it has one (one note
    lists every cut), else in a note of their own."""
    if not cuts:
        return plan
    notes = list(plan.notes)
    for i, n in enumerate(notes):
        if n.startswith(CUT_PREFIX + " ("):
            notes[i] = f"{CUT_PREFIX} ({', '.join(cuts)}, {n[len(CUT_PREFIX) + 2:]}"
            return replace(plan, notes=tuple(notes))
    return replace(plan, notes=plan.notes + (cut_note(cuts),))


def search_needs(cluster: Cluster, deadline: Deadline, greedy_seconds: float) -> float:
    """The --time-limit that leaves a search room after greedy on this input: the time spent so far, a search of
    at least greedy's own time, and the output reserve (which grows with the limit)."""
    elapsed = time.perf_counter() - deadline.started
    search = max(MIN_SEARCH_SECONDS, SEARCH_PER_GREEDY * greedy_seconds)
    per_pod = RESERVE_PER_POD * (len(cluster.pods) + len(cluster.pending))
    return float(math.ceil(max(elapsed + search + per_pod, (elapsed + search) / (1 - RESERVE_SHARE))))


def _no_time_to_search(cluster: Cluster, params: SolverParams, policy: Policy, deadline: Deadline,
                       greedy: Plan, work: Planned) -> Plan | None:
    """Greedy's plan, as it is, when no search follows (None when one does): status GREEDY_FALLBACK, every
    figure computed from greedy's plan, and a note that says why and what limit a search needs. Planned
    (`work.search` False): the same on every machine. Or the emergency cap: greedy really took the time a
    search needs (a machine far slower than planned), said as a wall-clock cut."""
    end = deadline.at - reserve(cluster, deadline.limit)
    left = end - time.perf_counter()
    if work.search and left >= max(MIN_SEARCH_SECONDS, SEARCH_PER_GREEDY * greedy.wall_seconds):
        return None
    if not work.search:
        # planned, so the same words on every machine: whether greedy really ran past the limit is the wall
        # clock's, so a plan whose planned greedy does not fit says the command may end after its limit
        where = (f"more than the {work.limit:g}s time limit leaves it: the command may end after its limit, since "
                 "kube-scheduler's plan is always printed complete" if work.room < 0 else
                 f"leaving {work.room:.1f}s of the {work.limit:g}s time limit, too little to search")
        note = (f"{KEPT_PREFIX}: kube-scheduler's greedy is planned at {work.greedy:.1f}s for "
                f"{len(cluster.pending)} pending pods on {len(cluster.nodes)} nodes, {where}; a search "
                f"needs --time-limit {work.needed:g} or more")
        notes: tuple[str, ...] = (note,)
    else:
        needed = max(work.needed, search_needs(cluster, deadline, greedy.wall_seconds))
        if 0 < deadline.limit < params.time_limit:
            # this search has a share of the command's limit (compare's first half): the command needs as much more
            needed = float(math.ceil(needed * params.time_limit / deadline.limit))
        notes = (greedy_kept_note(greedy.wall_seconds, left, params.time_limit, needed,
                                  time.perf_counter() - deadline.at),
                 cut_note(["greedy took the search's time"]))
    return restate(cluster, replace(greedy, status=Status.GREEDY_FALLBACK, workers=params.workers,
                                    seed=params.seed, wall_seconds=greedy.wall_seconds,
                                    notes=greedy.notes + notes), policy)


def _better_start(cluster: Cluster, params: SolverParams, policy: Policy, profile: Profile, given: Plan, name: str,
                  end: float, interrupt: Interrupt, work: Planned, cuts: list[str]) -> tuple[Plan, str]:
    """The search's incumbent: `given` (greedy's plan, or compare's plain optimum), or the preference-led
    pass's (optimizer.warmstart) when that is better on the objective (placed per priority, then P); with a
    note saying which and why. Whether the pass runs is planned (`work.preference`); the wall clock only caps
    it, leaving the search at least what it needs: a pass skipped or stopped by the cap is recorded in `cuts`."""
    if interrupt.is_set() or not work.preference:
        return given, ""  # planned: the pass would leave the search too little of the limit
    cap = end - max(MIN_SEARCH_SECONDS, SEARCH_PER_GREEDY * given.wall_seconds)
    t0 = time.perf_counter()
    if cap - t0 < MIN_SEARCH_SECONDS:
        cuts.append("the preference-led pass, skipped")
        return given, ""
    led = preference_led(cluster, params.seed, gangs=find_gangs(cluster, params.gang), profile=profile,
                         policy=policy, interrupt=interrupt, deadline=cap,
                         all_placed=len(given.placements) == len(cluster.pending))
    if led is None or interrupt.is_set():
        return given, ""
    spent = time.perf_counter() - t0
    if any(n.startswith("stopped after") for n in led.notes):
        # stopped by the cap: its partial plan places fewer pods than it would have; not used
        cuts.append("the preference-led pass")
        return given, f"warm start: {name} (the preference-led pass was stopped at {spent:.1f}s)"
    g_placed, l_placed = placed_by_priority(cluster, given), placed_by_priority(cluster, led)
    if l_placed < g_placed:
        return given, (f"warm start: {name} (the preference-led pass, {spent:.1f}s, placed {sum(l_placed)}: "
                       "fewer)")
    g_pref, l_pref = preference(cluster, given, policy), preference(cluster, led, policy)
    if (l_placed, l_pref) > (g_placed, g_pref):
        return led, (f"warm start: the preference-led pass ({spent:.1f}s; placed {sum(l_placed)}, preference "
                     f"{l_pref}; {name}: placed {sum(g_placed)}, preference {g_pref})")
    return given, (f"warm start: {name} (the preference-led pass, {spent:.1f}s, placed {sum(l_placed)}, "
                   f"preference {l_pref}: no better)")
