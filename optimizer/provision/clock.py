"""provision's time: every decision on a deterministic clock, the wall clock only a cap.

The same input, options and seed give the same answer whatever the machine's load (the contract). So no stage of
provision reads the wall clock to decide anything: how many column-generation iterations the pattern program runs,
whether the integer covering program runs and how many branch-and-bound nodes it gets, each knapsack's limit, how
many improvement rounds the joint model runs. They read runner.now(), the deterministic clock solve uses
(optimizer.runner.Clock), which advances by what the work is charged:

- a CP-SAT run through runner.run: its deterministic time limit (DET_PER_SECOND), or a cost per variable when it
  ended proven;
- a knapsack (one small CP-SAT model, one worker): CP-SAT's own deterministic time, which one worker reports the
  same on every run, over KNAPSACK_DET_PER_SECOND;
- a HiGHS linear program: its simplex iterations times its size (LP_SECONDS_PER_ITER_NONZERO); a HiGHS integer
  program (the covering program on small inputs only): its share, its work bounded by a node limit planned from
  it (MIP_NODES_PER_SECOND);
- the Python work around them (the process's start, reading, the estimator, building problems and models):
  planned per pod and per pending pod of the input before the budget is shared out (PREP_SECONDS_PER_POD,
  PREP_SECONDS_PER_PENDING).

The budget (`planned_seconds`) comes from the --time-limit the user gave and the input's size alone. The wall
clock (the --time-limit promise: the command's end less the output reserve) caps every solver run and loop; a
run or loop it stops early is recorded on the clock (a "cut"), and the answer then says that another run may
differ. The rates below were measured on a loaded machine (2 shared cores, load 2-4), and the budget is planned so
that a machine whose cores are full (load 2 on 2 cores) ends within the limit uncut (WALL_PER_SECOND); a longer
--time-limit buys proportionally more search.
"""
from __future__ import annotations

import math
import time
from typing import Any

from ..runner import charge, clock

# CP-SAT deterministic time of the small knapsacks (one node's fill, one worker) per second charged. Measured on
# 2/plain of the 200-node family (load 3.3, nice 10): the pattern program's 360 knapsacks, 0.36 units in 5.8 s.
KNAPSACK_DET_PER_SECOND = 0.06
# one column-generation iteration's Python work (the program's matrix, the greedy pricing), per column, and at
# least ITER_SECONDS_MIN: 51 iterations (up to 1,949 columns) took 3.9 s beside HiGHS and the knapsacks there
ITER_SECONDS_PER_COLUMN = 4e-5
ITER_SECONDS_MIN = 0.02
# a HiGHS simplex iteration, per nonzero of the program's matrix, in seconds charged
LP_SECONDS_PER_ITER_NONZERO = 2e-8
LP_SECONDS_MIN = 0.01  # and at least this per program (building it, HiGHS's presolve)
# a program solved through scipy's milp (no iteration count reported): per nonzero of its matrix
LP_SECONDS_PER_NONZERO = 1e-5
# branch-and-bound nodes of the integer covering program per second of its share
MIP_NODES_PER_SECOND = 20.0
# Python work that no solver measures (the process's start, reading, the estimator, building solve's problems for
# the existing nodes and probes, the pattern program's data, the joint model), per pod of the input (existing and
# pending), planned before the budget is shared: the budget is the limit less this and the output reserve. On
# 2/plain (3,107 pods, load 3.5): 4.3 s before the clock starts, 11 s uncharged after (9.5 s of it in the joint
# model's start).
PREP_SECONDS_PER_POD = 1.5e-3
PREP_SECONDS_PER_PENDING = 5e-3  # and per pending pod besides (the estimator, the classes: 15 s on 2/plain in all)
# the most of the limit planned for that work. Its largest part, the joint model's start, grows with the model,
# and a model too large to build in its share of the clock is not built (optimizer.provision.joint), so the work
# does not grow with the input past that: at 1,000 nodes (15,540 pods, 10,098 pending) the per-pod figures above
# plan 74 s, more than the limit, where the process spent 3.2 s before the clock and 11.7 s in all (load 1.9),
# and the budget fell to a tenth of the limit: too little for the pattern program, and the estimator's answer
# (gap 52 %) was printed in 12 s of the 60. At 200 and 300 nodes (15-18 s planned) the cap changes nothing.
PREP_MAX_SHARE = 0.35
# wall seconds per second of the budget. The charges above were measured at load 3-4, so a machine whose cores are
# not oversubscribed spends a clock second in less than a wall second. At 1.25 (a budget of 31.4 s on the 200-node
# family at --time-limit 60) the rows ended in 26-32 s of wall time on an idle machine and five rows of ten fell to
# or near the estimator's answer; 1.5 left too little for any search. At 0.75 the rows ended in 15-25 s of the 60
# at load 0.8-1.2 (the clock charged 3.7 times the wall time: 50 s for 13.6 s on 4/plain) and the zone-split
# program did not fit on 4/production (21.3 %). At 0.5 (the budget 1.5 times that) they end in 20-34 s at load
# 1-2, and beside one CPU-bound process (load 2: the 2 cores full) in 23-28 s with the same JSON for 1 and 2
# workers and no cut (beside two, 1/gpu in 46-47 s, not cut); 4/production 2.8 %, 3/spread 0.6 %, 300 nodes 0.7 %
# (was 12.2 %). A machine loaded further (load 3-5 on 2) is cut by the wall clock more often, and the answer says so.
WALL_PER_SECOND = 0.5


def planned_seconds(limit: float, pods: int, reserve: float, pending: int = 0) -> float:
    """The deterministic seconds provision shares out after the estimator: the --time-limit less the output
    reserve and the planned Python work (at most PREP_MAX_SHARE of the limit), at least a tenth of the limit. A
    function of the limit the user gave and the input's size only, never of the machine."""
    prep = min(PREP_SECONDS_PER_POD * pods + PREP_SECONDS_PER_PENDING * pending, PREP_MAX_SHARE * limit)
    return max(0.1 * limit, (limit - reserve - prep) / WALL_PER_SECOND)


def wall_cap() -> float:
    """Wall seconds left for a solver run (the cap): the installed clock's, else unbounded."""
    c = clock()
    return max(0.01, c.wall_left()) if c is not None else math.inf


def wall_over(what: str) -> bool:
    """Has the wall clock run out? Recorded as a cut of `what` when it has."""
    c = clock()
    return c is not None and c.wall_over(what)


def cut(what: str) -> None:
    c = clock()
    if c is not None:
        c.cut(what)


def knapsack_limits(parameters: Any, seconds: float, rate: float = KNAPSACK_DET_PER_SECOND) -> None:
    """A knapsack's CP-SAT parameters: `seconds` of the clock as deterministic time (`rate` units a second), one
    worker, the wall cap."""
    parameters.num_workers = 1
    parameters.max_deterministic_time = max(0.001, seconds * rate)
    cap = wall_cap()
    parameters.max_time_in_seconds = cap if math.isfinite(cap) else 1e9


TALLY: dict[str, list[float]] = {}  # what -> [runs, seconds charged, wall seconds] (PODPLAN_CLOCK_LOG)


def _tally(what: str, charged: float, wall: float) -> None:
    t = TALLY.setdefault(what, [0, 0.0, 0.0])
    t[0] += 1
    t[1] += charged
    t[2] += wall


def charge_knapsack(solver: Any, what: str, rate: float = KNAPSACK_DET_PER_SECOND) -> None:
    """Charge a knapsack's deterministic time (`rate` units a second); a knapsack the wall cap stopped is a cut."""
    charge(solver.response_proto.deterministic_time / rate)
    _tally(what, solver.response_proto.deterministic_time / rate, solver.wall_time)
    c = clock()
    if c is not None and time.perf_counter() >= c.wall_deadline:
        c.cut(what)


def lp_options(**more: Any) -> dict[str, Any]:
    """HiGHS options for a linear program: no time limit of its own (its iterations decide), the wall cap."""
    cap = wall_cap()
    opts: dict[str, Any] = {"disp": False}
    if math.isfinite(cap):
        opts["time_limit"] = cap
    opts.update(more)
    return opts


def charge_lp(res: Any, nonzeros: int, what: str, wall: float = 0.0, rate: float = 1.0) -> None:
    """Charge a HiGHS run by its simplex iterations and size; one the wall cap stopped is a cut."""
    nit = getattr(res, "nit", None)
    if nit is None:
        cost = max(LP_SECONDS_MIN, nonzeros * LP_SECONDS_PER_NONZERO)
    else:
        cost = max(LP_SECONDS_MIN, int(nit) * max(1, nonzeros) * LP_SECONDS_PER_ITER_NONZERO * rate)
    charge(cost)
    _tally(what + " (lp)", cost, wall)
    if getattr(res, "status", 0) == 1 and clock() is not None and clock().wall_left() <= 0.05:
        cut(what)


def stamp(what: str) -> None:
    """With PODPLAN_CLOCK_LOG set: the clock's seconds used and the wall seconds since it started, on stderr (how
    the rates above are calibrated)."""
    import os
    import sys

    c = clock()
    if c is not None and os.environ.get("PODPLAN_CLOCK_LOG"):
        print(f"[clock] {what}: charged {c.used:.2f}s, wall {time.perf_counter() - c.origin:.2f}s",
              file=sys.stderr, flush=True)
        for k, (n, ch, w) in TALLY.items():
            print(f"[clock]   {k}: {n:.0f} runs, charged {ch:.2f}s, wall {w:.2f}s", file=sys.stderr, flush=True)
