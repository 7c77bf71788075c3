"""`--time-limit`: a number of wall seconds, or `auto` (the default), which scales with the input.

The limit is a promise for the whole command (reading, greedy, search, verification, output). `auto` is
resolved once the input is read: the seconds reading took, plus one formula per command of the input's size
(docs/time-limits.md):

    solve, explain --why-pending:  clamp(10 + 3.0e-6 x nodes x pods,  10 s, 300 s)
    compare:                       2 x solve's (it solves twice when running pods can move), at most 600 s
    rebalance, deschedule:         clamp(10 + 4.0e-6 x nodes x pods,  10 s, 600 s)

where pods counts every pod of the input, running and pending. The coefficients are measured, not guessed:
on 2 busy cores kube-scheduler's greedy places 3,408 pods on 1,000 nodes in about 6 s, building the search's
model of 1,000 nodes x 10,000 pods takes 10-20 s more (on the shared 2-core machine greedy alone took 15.6 s
there, so 1.0e-6, 20 s, left no time to search), and rebalance's target search at 1,000 nodes needs
about 30 s before its first complete plan.

Also here: when greedy alone takes the time a search would need, the words that say so
(optimizer.pipeline computes the limit a search needs).
"""
from __future__ import annotations

import math
import os
import re
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass

AUTO = "auto"

# The words of a plan the wall clock cut (optimizer.solve says the same of its search): another run of the same
# input and seed may give another plan.
CUT_PREFIX = "the wall-clock time limit cut the deterministic search short"
CUT_REST = ("another run of the same input and seed may give another plan (a longer --time-limit or a less "
            "loaded machine gives the same plan every time)")


def cut_note(cuts: Sequence[str]) -> str:
    """The plan's note when the wall clock cut the deterministic work named in `cuts` (solve, rebalance, provision)."""
    return f"{CUT_PREFIX} ({', '.join(cuts)}): {CUT_REST}"
# Wall seconds a second of the deterministic search takes on a busy machine: its clock charges CP-SAT's
# deterministic time and a cost per model variable built, but not all of the Python work around them (measured:
# 300 nodes of the anti-host-30 shape, load 5-7 on 2 cores: 25 deterministic seconds took more than 32 s of wall
# time and were cut, 19.8 more than 34 s, cut too). Beside one CPU-bound process (load 1.5-2.5), a 60 s solve of
# that shape: 3 gave identical runs in 18-20 s, 1.5 identical runs in 32 s with a better plan, 1 a run cut at 55 s
# (docs/solver.md). A smaller value searches more of a quiet machine's limit; a larger one is cut less when busy.
SEARCH_WALL_PER_SECOND = 1.5

# (base seconds, seconds per node x pod, floor, ceiling) per command
FORMULAS: dict[str, tuple[float, float, float, float]] = {
    "solve": (10.0, 3.0e-6, 10.0, 300.0),
    "explain": (10.0, 3.0e-6, 10.0, 300.0),
    "compare": (20.0, 6.0e-6, 20.0, 600.0),
    "rebalance": (10.0, 4.0e-6, 10.0, 600.0),
    # rebalance's: its optimum is a rebalance target and waves, after the descheduler's simulated cycles
    "deschedule": (10.0, 4.0e-6, 10.0, 600.0),
}

# Kept for the verifier and the output, per pod of the input, on an idle machine (optimizer.pipeline.reserve scales it by this
# machine's slowdown), and never less than this share of the limit. Measured at 5,000 nodes (77,248 pods): the
# full verify gate 3.4 s on a quiet core, the gate judging only what the search changed 0.3-0.6 s, the plan's
# JSON and the exit about 2 s; so 0.25 ms per pod (19 s there) keeps three times what they take. It was 0.6 ms
# when the verifier judged every pod in 4.4 s of CPU at 1,000 nodes: 46 s of a 300 s limit at 5,000 nodes.
RESERVE_PER_POD = 2.5e-4
RESERVE_SHARE = 0.05

# A search after greedy needs at least this long, and at least this multiple of greedy's planned time: building
# the search's problem, the preference bound's LP and a first neighbourhood round (production 5,000 nodes on a
# quiet core: problem 7-13 s, the LP 27 s, a round 10 s, where greedy is planned at 82 s; 1,000 nodes: 5 s
# in all, greedy planned at 15 s).
MIN_SEARCH_SECONDS = 1.0
SEARCH_PER_GREEDY = 0.6


# How much slower than on a core of its own this process runs: reserves measured on an idle machine (verifying
# and printing a plan) are scaled by it, so that the limit holds on a loaded machine too. Measured as wall time
# over CPU time since the command started (Python's start-up, imports and reading the input are single-threaded,
# so on an idle machine the two are about equal; at load 6-9 on 2 cores the wall time was about 3 x the CPU time).
_BASELINE: dict[int, tuple[float, float]] = {}
MAX_SLOWDOWN = 4.0
MIN_MEASURED_SECONDS = 1.0  # too short to say anything: 1.0


# A process older than this many seconds, and more than EXEC_GUARD_RATIO times the CPU seconds it has used, was
# started before it became podplan (see _process_age). Python's start-up at load 6-9 on 2 cores took 5-8 s of wall
# time for 1-2 s of CPU.
EXEC_GUARD_SECONDS = 20.0
EXEC_GUARD_RATIO = 10.0


def _process_age() -> float:
    """Seconds since this process started, when it is the podplan command itself (Python's start-up and imports
    took 5-8 s of wall time on the loaded 2-core machine, and --time-limit is a promise for the whole command);
    0 inside another program (a test runner calling the CLI) or where /proc is not."""
    spec = getattr(sys.modules.get("__main__"), "__spec__", None)
    if os.path.basename(sys.argv[0] if sys.argv else "") != "podplan" and \
            getattr(spec, "name", "") != "podplan.__main__":
        return 0.0
    try:
        with open("/proc/self/stat", encoding="ascii") as f:
            ticks = int(f.read().rsplit(")", 1)[1].split()[19])  # field 22: start time, clock ticks after boot
        with open("/proc/uptime", encoding="ascii") as f:
            uptime = float(f.read().split()[0])
        age = max(0.0, uptime - ticks / os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError, IndexError):
        return 0.0
    # The start time is the process's, not the program's: a shell exec's the last command of `bash -c 'a && b'`
    # in its own process, so the README's `python3 -m venv ... && pip install ... && podplan solve ...` began
    # 77 s before podplan did (its auto limit counted the install as reading, and greedy's plan was kept). Python's
    # start-up and imports are CPU work: an age far beyond the CPU this process has used is time spent before it
    # became podplan, and the command then counts from now.
    return program_age(age, time.process_time())


def program_age(process_age: float, cpu_seconds: float) -> float:
    """How long this process has been the podplan program: its age, unless that is far beyond the CPU it has
    used (then it became podplan later, by an exec, and the command counts from now: 0)."""
    return process_age if process_age <= max(EXEC_GUARD_SECONDS, EXEC_GUARD_RATIO * cpu_seconds) else 0.0


def begin_command() -> None:
    """Start this process's clocks (command_started, slowdown) at the command's start: the process's start when
    this process is the podplan command, else now (a test runner or a script calling the CLI again and again)."""
    age = _process_age()
    _BASELINE[os.getpid()] = (time.perf_counter() - age, time.process_time() if not age else 0.0)


def command_started() -> float:
    """When the command started (time.perf_counter's clock): what --time-limit counts from; now when no command
    began in this process (a library call)."""
    return _BASELINE[os.getpid()][0] if os.getpid() in _BASELINE else time.perf_counter()


def overrun_note(started: float, limit: float) -> str | None:
    """Plain words for a command whose plan is ready after its --time-limit (None when it is not): the wall
    clock's, so said in a note rather than planned. Python's start-up and reading alone can take longer than
    a short limit on a busy machine; the plan is printed all the same (kube-scheduler's plan is always complete)."""
    ready = time.perf_counter() - started
    if ready <= limit:
        return None
    return (f"past the time limit: the plan was ready {ready:.1f}s after the command started, {ready - limit:.1f}s "
            f"past its {limit:g}s limit (this machine ran the command {slowdown():.1f}x slower than a core of its "
            "own); it is printed all the same")


def slowdown() -> float:
    """Wall seconds per CPU second of this process since the command began (begin_command), between 1 and
    MAX_SLOWDOWN; 1 when no command began in this process (a library call, a forked worker). Multi-threaded
    phases (CP-SAT) count more CPU than wall time and pull it towards 1: call it before the search, where it
    only reads single-threaded work."""
    if os.getpid() not in _BASELINE:
        return 1.0
    wall0, cpu0 = _BASELINE[os.getpid()]
    wall = time.perf_counter() - wall0
    cpu = time.process_time() - cpu0
    if wall < MIN_MEASURED_SECONDS:
        return 1.0
    return min(MAX_SLOWDOWN, max(1.0, wall / max(cpu, 1e-3)))


def scaled_reserve(idle: float, limit: float) -> float:
    """A reserve of `idle` seconds, measured on an idle machine, for a command with `limit` seconds: scaled by
    how much slower this process has run so far (slowdown), never more than half the limit unless `idle` is."""
    return min(max(idle, 0.5 * limit), idle * slowdown())


class TimeLimitError(ValueError):
    """A --time-limit that is neither a positive finite number nor `auto`."""


def parse(value: object) -> float | None:
    """`auto` -> None; a positive finite number of seconds -> float; anything else -> TimeLimitError."""
    if value is None:
        return None
    if isinstance(value, str) and value.strip().lower() == AUTO:
        return None
    try:
        seconds = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise TimeLimitError(f"--time-limit {value}: not a number of seconds nor 'auto'") from None
    if math.isnan(seconds) or math.isinf(seconds):
        raise TimeLimitError(f"--time-limit {value}: must be a finite number of seconds (or 'auto')")
    if seconds <= 0:
        raise TimeLimitError(f"--time-limit {value}: must be more than 0 seconds (or 'auto')")
    return seconds


@dataclass(frozen=True)
class Resolved:
    """The limit a command runs with, and how it was chosen (for the notes and -o json)."""

    seconds: float
    auto: bool
    formula: str = ""  # the formula with the input's numbers, when auto
    work: float = 0.0  # auto: the formula's seconds, without the time reading took

    @property
    def budget(self) -> float:
        """The seconds the search's deterministic budget comes from (SolverParams.budget): the limit given, or
        auto's formula of the input's size, without the time reading took (which depends on the machine)."""
        return self.work if self.auto and self.work > 0 else self.seconds

    def note(self) -> str:
        if not self.auto:
            return f"time limit: {self.seconds:g}s (--time-limit)"
        return f"time limit: auto, {self.seconds:g}s ({self.formula})"


# The pipeline plans a search only when the limit holds greedy, the preference-led pass and a search of at least
# SEARCH_PER_GREEDY x greedy (optimizer.pipeline.planned): `auto` for solve-like commands holds at least those and
# as much search again, on top of the output reserve, so that a pending-heavy input is searched.
AUTO_SEARCHES = 2.0


def auto_limit(command: str, nodes: int, pods: int, reading: float = 0.0, pending: int = 0) -> Resolved:
    """The `auto` limit of `command` for an input of `nodes` nodes and `pods` pods (running + pending, `pending`
    of them pending), on top of the `reading` seconds already spent reading it (the limit counts from the
    command's start, and how long reading takes depends on the machine's load more than on anything podplan
    chooses)."""
    from .workestimate import greedy_seconds_for, preference_seconds_for

    base, per, floor, ceiling = FORMULAS[command]
    raw = base + per * nodes * pods
    work = float(round(min(ceiling, max(floor, raw))))
    formula = (f"{base:g} + {per:.1e} x {nodes} nodes x {pods} pods, between {floor:g} and {ceiling:g} seconds")
    if command != "rebalance" and pending:
        greedy = greedy_seconds_for(nodes, pending)
        planned = greedy + preference_seconds_for(nodes, pending) + AUTO_SEARCHES * SEARCH_PER_GREEDY * greedy
        runs = 2 if command == "compare" else 1
        # plus the output reserve as the pipeline plans it: RESERVE_SHARE of the limit, at least RESERVE_PER_POD
        search = min(ceiling, float(math.ceil(runs * max(planned / (1 - RESERVE_SHARE),
                                                         planned + RESERVE_PER_POD * pods))))
        if search > work:
            work = search
            formula += (f"; raised to {search:g}s: greedy planned at {greedy:.1f}s for {pending} pending pods, "
                        f"the preference-led pass and a search{' per solve, 2 solves' if runs == 2 else ''}")
    seconds = float(math.ceil(reading + work))
    return Resolved(seconds, True, f"{reading:.0f}s start-up and reading + {work:g}s: {formula}", work)


def resolve(command: str, given: float | None, nodes: int, pods: int, reading: float = 0.0,
            pending: int = 0) -> Resolved:
    """`given` seconds (not auto), else the auto limit for this input read in `reading` seconds."""
    if given is not None:
        return Resolved(given, False)
    return auto_limit(command, nodes, pods, reading, pending)


def greedy_kept_note(greedy_seconds: float, left: float, limit: float, needed: float, past: float = 0.0) -> str:
    """Plain words for a plan that is greedy's because greedy left no time to search: greedy's time, what
    the search had left of the command's --time-limit `limit` (`left`, before the time kept for verifying and
    printing; `past`, seconds beyond the limit itself when greedy ended after it), and the limit a search needs."""
    if past > 0:
        where = f"{past:.1f}s past the end of the {limit:g}s time limit"
    elif left < 0:
        where = (f"ending {-left:.1f}s into the time the {limit:g}s time limit keeps for verifying and printing "
                 "the plan")
    else:
        where = f"leaving {left:.1f}s of the {limit:g}s time limit, too little to search"
    return (f"{KEPT_PREFIX}: kube-scheduler's greedy took {greedy_seconds:.1f}s, {where}; "
            f"a search needs --time-limit {needed:g} or more")


def kept_in_short(note: str) -> str:
    """compare's table cell for a kept-greedy note: greedy's time and the limit needed."""
    m = re.search(r"greedy (took|is planned at) ([\d.]+s).*--time-limit ([\d.]+)", note)
    return f"greedy {m[1]} {m[2]}; a search needs --time-limit {m[3]}" if m else note


KEPT_PREFIX = "greedy's plan kept, not searched"
