"""One scenario on one cluster, answered: the row of the whatif table.

The one data path of every podplan command: the base Cluster, transformed by the scenario
(optimizer.whatif.apply) -> the batch kube-scheduler would schedule (profiles.hold_back) -> greedy and the
optimum (pipeline.optimal_plan: greedy warm start, CP-SAT) -> both judged by the verifier
(compare.judge_column, which raises on an invalid plan) -> a row, a plain dict (the `-o json` row).

Every row is computed from the plans the verifier accepted. A scenario that cannot be applied (an unknown
workload, a selector matching no node, a manifest that does not load) is a row with `status: ERROR` and its
error; it never stops the other scenarios. The time limit is per scenario and starts when the worker picks the
scenario up, so it holds wherever the scenario runs (a process of the pool, a Ray worker).
"""
from __future__ import annotations

import math
import time
from collections import Counter
from dataclasses import dataclass
from typing import Any

from ...models.errors import PlanInvalidError, PodplanError
from ...models.objects import Cluster
from ...models.parse import Doc
from ..compare import GREEDY, OPTIMAL, Column, judge_column
from ..pipeline import CUT_PREFIX, Deadline, greedy_plan, optimal_plan, reserve
from ..policy import Policy
from ..profiles import Profiles, default_profiles, hold_back, profiles_from
from ..runner import SolverParams, Status
from .apply import Base, ScenarioError, add_nodes, drain_order, remove_nodes, with_documents
from .scenarios import Scenario

ERROR = "ERROR"


@dataclass(frozen=True)
class Settings:
    """What steers every scenario of a run (the command's options)."""

    time_limit: float = 30.0  # wall seconds per scenario, on the worker
    workers: int = 1  # CP-SAT workers per scenario (scenarios already run in parallel)
    seed: int = 0
    gang: bool = False
    scheduler_config: Any = None  # models.schedulerconfig.SchedulerConfiguration of --scheduler-config, or None


@dataclass(frozen=True)
class Task:
    """One row to compute: a scenario of the file on one cluster of the run. What the scenario names on disk
    (manifests, a scheduler configuration) is read by the command before the tasks leave, so that a worker on
    another machine needs nothing but the task; a file that does not load is the task's `error`."""

    position: int  # the row's place in the output: the file's order, cluster by cluster
    cluster: int  # index of the Base
    scenario: Scenario
    manifests: tuple[Doc, ...] = ()
    scheduler_config: Any = None
    error: str = ""


def _by_priority(counter: Counter[int]) -> dict[str, int]:
    return {str(p): n for p, n in sorted(counter.items(), reverse=True)}


def _column(col: Column, pending_pods: tuple[Any, ...]) -> dict[str, Any]:
    pending = Counter(p.priority for p in pending_pods if p.key not in col.placements)
    out: dict[str, Any] = {
        "status": str(col.status),
        "placed": col.report.placed,
        "pending": sum(pending.values()),
        "pending_by_priority": _by_priority(pending),
        "nodes_used": col.nodes_used,
        "cpu": round(col.usage.cpu_stats.mean, 4),
        "memory": round(col.usage.memory_stats.mean, 4),
    }
    if col.name == OPTIMAL:
        out["gap"] = col.gap
        out["bound"] = col.bound or None
    return out


def profiles_for(settings: Settings, task: Task) -> Profiles:
    config = task.scheduler_config or settings.scheduler_config
    return profiles_from(config) if config is not None else default_profiles()


def scenario_cluster(base: Base, task: Task) -> tuple[Cluster, list[str], int]:
    """The cluster the scenario asks about (before largestCountThatPlacesAll), notes, and nodes it removed."""
    s = task.scenario
    notes: list[str] = []
    cluster = base.cluster
    if s.needs_documents:
        cluster = with_documents(base, s.scale, task.manifests)
    removed = 0
    r = s.remove
    if r is not None and not r.largest:
        if r.each_value_of:  # a generator left unexpanded: its label is on no node
            raise ScenarioError(f"removeNodes.eachValueOf: no node has the label {r.each_value_of}")
        names = drain_order(cluster, r.selector)
        if not names:
            raise ScenarioError("removeNodes.selector: matches no node")
        if r.count is not None:
            if r.count > len(names):
                raise ScenarioError(f"removeNodes.count: {r.count}, but the selector matches {len(names)} node(s)")
            names = names[:r.count]
        cluster = remove_nodes(cluster, set(names))
        removed = len(names)
    if s.add is not None:
        cluster = add_nodes(cluster, s.add)
    return cluster, notes, removed


def _params(settings: Settings, seconds: float, budget: float, profiles: Profiles, profile: Any) -> SolverParams:
    """A scenario's search: `seconds` of wall time, its decisions and deterministic budget planned from
    `budget` seconds (a function of the options, never of how long the scenario has run). With --workers 1
    (the default) each CP-SAT run is one thread's sequential search: the scenarios themselves run in parallel,
    and a second thread per search only competed with the other scenario for the cores."""
    return SolverParams(time_limit=seconds, workers=settings.workers, seed=settings.seed, gang=settings.gang,
                        strategy=profiles.strategy(profile), budget=budget, single_thread=settings.workers == 1)


def _answer(cluster: Cluster, profiles: Profiles, settings: Settings, deadline: Deadline,
            budget: float) -> dict[str, Any]:
    batch, held = hold_back(cluster, profiles)
    profile = profiles.for_batch(batch.pending)
    params = _params(settings, deadline.limit, budget, profiles, profile)
    # optimal_plan keeps a reserve for one verification; the row verifies two plans (greedy's and the optimum)
    inner = Deadline(deadline.started, max(0.1, deadline.limit - reserve(batch, deadline.limit)))
    optimal, greedy = optimal_plan(batch, params, Policy(), deadline=inner, profile=profile)
    g = judge_column(GREEDY, batch, greedy, Policy(), profile=profile)
    o = judge_column(OPTIMAL, batch, optimal, Policy(), profile=profile)
    to_place = Counter(p.priority for p in batch.pending)
    notes = []
    cut = next((n for n in optimal.notes if n.startswith(CUT_PREFIX)), None)
    if cut is not None:
        # the only case where another run may print another row: say so in the row itself
        notes.append("cut by the wall clock (" + cut[len(CUT_PREFIX) + 2:cut.index("):")] + "): another run may "
                     "give another row; give more --time-limit")
    if any(n.startswith("stopped after") for n in greedy.notes):
        # kube-scheduler's plan is always complete: a greedy column cut by its share of the time is not it
        notes.append(f"greedy stopped at its share of the time limit ({len(greedy.placements)} of "
                     f"{len(batch.pending)} pods placed by then): its column is partial; give more --time-limit")
    return {
        "nodes": len(cluster.nodes),
        "to_place": sum(to_place.values()),
        "to_place_by_priority": _by_priority(to_place),
        "held": len(held.pending),
        "greedy": {**_column(g, batch.pending), "complete": not notes},
        "optimal": _column(o, batch.pending),
        "status": str(optimal.status),
        "gap": optimal.gap,
        # what the search says about itself, without its timings (the rows of two runs compare equal but for
        # wall_seconds)
        "solver_notes": [n for n in optimal.notes if not n.startswith(("time:", "warm start:"))],
        "notes": notes,
    }


def _places_all(cluster: Cluster, profiles: Profiles, settings: Settings, seconds: float,
                budget: float) -> tuple[bool, bool]:
    """(every pending pod placed, that answer proven): greedy first, the optimum when greedy leaves some.
    `seconds`: the probe's wall cap; `budget`: what its decisions are planned from."""
    batch, _ = hold_back(cluster, profiles)
    profile = profiles.for_batch(batch.pending)
    started = Deadline.start(seconds)
    # kube-scheduler's plan runs to the end (the wall cap is the search's): a greedy stopped by the clock would
    # make the probe's answer, and so the largest count, depend on the machine
    greedy = greedy_plan(batch, settings.seed, gang=settings.gang, profile=profile)
    if not greedy.pending and len(greedy.placements) == len(batch.pending):
        return True, True
    params = _params(settings, seconds, budget, profiles, profile)
    plan, _ = optimal_plan(batch, params, Policy(), deadline=started, profile=profile, warm_start=greedy)
    if len(plan.placements) == len(batch.pending):
        return True, True
    return False, plan.status in (Status.OPTIMAL, Status.INFEASIBLE)


def _largest(cluster: Cluster, s: Scenario, profiles: Profiles, settings: Settings,
             deadline: Deadline) -> tuple[Cluster, int, list[str]]:
    """The largest k such that removing the first k matching nodes (least requested first) still places every
    pending pod, by bisection (assumes fewer nodes never place more); half the scenario's time goes to the
    probes, the rest to the row's own greedy and optimum at k."""
    assert s.remove is not None
    order = drain_order(cluster, s.remove.selector)
    if not order:
        raise ScenarioError("removeNodes.selector: matches no node")
    probes = 1 + math.ceil(math.log2(len(order) + 1))
    budget = Deadline(time.perf_counter(), deadline.left() / 2)
    unproven = False

    def ok(k: int, left: int) -> bool:
        nonlocal unproven
        # each probe's search is planned from an equal share of half the limit (the same on every machine);
        # the wall clock only caps it at what is left of that half
        yes, proven = _places_all(remove_nodes(cluster, set(order[:k])), profiles, settings,
                                  max(0.2, budget.left() / max(1, left)), settings.time_limit / 2 / probes)
        unproven |= not yes and not proven
        return yes

    notes = []
    lo, hi, left = 0, len(order) + 1, probes
    if not ok(0, left):
        notes.append("even with no node removed, some pods stay pending: largest count 0")
        hi = 1
    left -= 1
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if ok(mid, left):
            lo = mid
        else:
            hi = mid
        left -= 1
    notes.append(f"largest count that places all: {lo} of {len(order)} matching node(s), least requested first"
                 + (" (at least: a probe ended at its time limit without a proof)" if unproven else ""))
    return remove_nodes(cluster, set(order[:lo])), lo, notes


def run_task(base: Base, task: Task, settings: Settings) -> dict[str, Any]:
    """The row of `task`: never raises for anything the scenario or the input causes."""
    started = time.perf_counter()
    deadline = Deadline.start(settings.time_limit)
    s = task.scenario
    row: dict[str, Any] = {"cluster": base.name, "scenario": s.name, "what": s.what}
    if s.generator:
        row["generator"] = s.generator
    try:
        if task.error:
            raise ScenarioError(task.error)
        profiles = profiles_for(settings, task)
        cluster, notes, removed = scenario_cluster(base, task)
        budget = settings.time_limit
        if s.remove is not None and s.remove.largest:
            cluster, removed, more = _largest(cluster, s, profiles, settings, deadline)
            row["largest_count"] = removed
            notes += more
            budget /= 2  # the probes had the other half
        row["removed_nodes"] = removed
        row["added_nodes"] = s.add.count if s.add is not None else 0
        answer = _answer(cluster, profiles, settings, deadline, budget)
        notes += answer.pop("notes")
        row.update(answer)
        row["notes"] = notes
        row["error"] = None
    except PlanInvalidError as exc:  # the verifier rejected a plan: podplan's bug, shown as such
        row.update(status=ERROR, error=f"BUG: {exc}")
    except PodplanError as exc:
        row.update(status=ERROR, error=str(exc))
    except Exception as exc:  # noqa: BLE001 - one scenario's failure must not take the others down
        row.update(status=ERROR, error=f"BUG: {type(exc).__name__}: {exc}")
    row["wall_seconds"] = round(time.perf_counter() - started, 3)
    return row


def error_row(base_name: str, scenario: Scenario, message: str) -> dict[str, Any]:
    """The row of a scenario that never ran (its worker died, or the engine failed it)."""
    return {"cluster": base_name, "scenario": scenario.name, "what": scenario.what, "status": ERROR,
            "error": message, "wall_seconds": None}

