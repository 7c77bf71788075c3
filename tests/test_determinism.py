"""Same input, same seed, same plan: the solve's JSON is byte-identical across runs and with 1 or 2 CP-SAT
workers, also when the search ends FEASIBLE (not proven), because the search runs on a deterministic clock
(optimizer.runner.Clock) whose budget comes from the limit the user gave, never from the wall clock.

The wall clock stays a cap: these tests give it room (time_limit) and the deterministic budget (budget) is
small, so that a loaded machine cannot cut the search short; a cut is said in the notes, checked here too."""
from __future__ import annotations

import time

import json
import re
from dataclasses import replace
from functools import cache

import pytest

from podplan.models.generate import generate_instance
from podplan.models.loader import parse_documents
from podplan.models.objects import Cluster
from podplan.optimizer.pipeline import Deadline, check, optimal_plan
from podplan.optimizer.render.plans import plan_document
from podplan.optimizer.runner import SolverParams, Status
from podplan.optimizer.timelimit import KEPT_PREFIX

CUT = "the wall-clock time limit cut the deterministic search short"


@cache
def mixed_cluster() -> Cluster:
    """40 nodes of the mixed profile: preferred hostname anti-affinity that the search cannot prove optimal in
    its small budget."""
    return parse_documents(generate_instance(40, 800, 3, "mixed").manifests, "generated-mixed")


def solve_json(cluster: Cluster, workers: int, **params: object) -> tuple[str, Status, tuple[str, ...]]:
    """`solve -o json`'s document, with the fields that report time (wall seconds, the time notes' seconds)
    and the --workers echo masked: everything else must be equal."""
    p = SolverParams(time_limit=120, workers=workers, seed=5, **params)  # type: ignore[arg-type]
    plan, _ = optimal_plan(cluster, p, deadline=Deadline.start(p.time_limit))
    doc = plan_document(cluster, plan, check(cluster, plan))
    doc["solver"].pop("wall_seconds")
    doc["solver"].pop("workers")
    doc["notes"] = [re.sub(r"\d+(\.\d+)?s\b", "_s", note) for note in doc["notes"]]
    return json.dumps(doc, sort_keys=True), plan.status, plan.notes


@pytest.mark.parametrize("search", [
    pytest.param({"full_model_variables": 0}, id="neighbourhood rounds give the same plan twice and with 1 or 2 workers"),
    pytest.param({}, id="the full model's staged search gives the same plan twice and with 1 or 2 workers"),
])
def test_same_input_and_seed_give_the_same_json_when_not_proven(search: dict[str, object]) -> None:
    cluster = mixed_cluster()
    first, status, notes = solve_json(cluster, 1, budget=3.0, **search)
    assert status is Status.FEASIBLE  # the point: a plan that is not proven optimal is reproducible too
    assert not any(n.startswith(CUT) for n in notes)
    assert solve_json(cluster, 2, budget=3.0, **search)[0] == first
    assert solve_json(cluster, 1, budget=3.0, **search)[0] == first


def test_a_larger_budget_searches_more_and_is_reproducible_too() -> None:
    cluster = mixed_cluster()
    small, _, _ = solve_json(cluster, 2, budget=2.0, full_model_variables=0)
    large, _, _ = solve_json(cluster, 2, budget=8.0, full_model_variables=0)
    assert json.loads(large)["objective"]["preference"] >= json.loads(small)["objective"]["preference"]
    assert solve_json(cluster, 1, budget=8.0, full_model_variables=0)[0] == large


def test_a_wall_clock_cut_is_said_in_the_notes() -> None:
    cluster = mixed_cluster()
    # a deterministic budget the wall clock cannot pay: a 400 s limit planned, 3 s of wall time given (with 60 s
    # of wall time a quiet machine ran the planned search to its end in 45 s, uncut)
    p = SolverParams(time_limit=0.5, workers=1, seed=5, budget=400.0, full_model_variables=0)
    plan, _ = optimal_plan(cluster, p, deadline=Deadline.start(3))
    assert any(n.startswith(CUT) for n in plan.notes)


def test_a_proven_optimum_is_the_same_plan_in_every_fresh_process(tmp_path) -> None:
    """An input with many equally good optima: once every level is proven, the plan printed is the canonical
    one (a single worker's first solution with the levels fixed), so fresh processes, whatever their hash seed
    and thread timing, print the same placements. Measured before the canonical search ran on one thread: one
    run in eight printed another optimum."""
    import subprocess
    import sys
    from pathlib import Path

    from podplan.models.generate import dump_yaml, generate

    path = tmp_path / "c.yaml"
    with path.open("w") as f:
        dump_yaml(generate(12, 40, 0, "mixed", 0.6), f)
    tenant = tmp_path / "tenant.yaml"  # 40 identical replicas: many nodes hold them equally well
    tenant.write_text("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: tenant, namespace: default}\n"
                      "spec:\n  replicas: 40\n  selector: {matchLabels: {app: tenant}}\n  template:\n"
                      "    metadata: {labels: {app: tenant}}\n    spec:\n      containers:\n"
                      "      - {name: t, image: t, resources: {requests: {cpu: 500m, memory: 1Gi}}}\n")
    exe = Path(sys.executable).parent / "podplan"
    outs = set()
    for hash_seed in range(10):
        out = subprocess.run([str(exe), "solve", str(path), str(tenant), "--seed", "0", "--time-limit", "20", "-o", "json"],
                             capture_output=True, text=True, env={"PYTHONHASHSEED": str(hash_seed), "PATH": "/usr/bin:/bin"})
        doc = json.loads(out.stdout)
        assert doc["status"] == "OPTIMAL"
        outs.add(json.dumps(doc["placements"]))
    assert len(outs) == 1


# ------------------------------------------------------------------ the pipeline's decisions are planned


@pytest.fixture
def slow_machine(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """A machine on which kube-scheduler's greedy "takes" `jump[0]` seconds more than it does (the wall clock,
    perf_counter as every module reads it, jumps when it returns) and the preference-led pass `jump[1]` more
    (the clock jumps as it starts, so that its own deadline sees it). Nothing is timed."""
    import time

    from podplan.optimizer import pipeline, timelimit

    # a library call, not a command: a command run in this process before (another test file's CLI test) would
    # have the jumping clock read as this process running slow, and the output reserve scaled up by it
    monkeypatch.setattr(timelimit, "_BASELINE", {})
    jump = [0.0, 0.0]
    offset = [0.0]
    real_clock = time.perf_counter
    real_greedy, real_led = pipeline.greedy_plan, pipeline.preference_led

    def clock() -> float:
        return real_clock() + offset[0]

    def greedy(*args: object, **kwargs: object):  # type: ignore[no-untyped-def]
        plan = real_greedy(*args, **kwargs)
        offset[0] += jump[0]
        return replace(plan, wall_seconds=plan.wall_seconds + jump[0])

    def led(*args: object, **kwargs: object):  # type: ignore[no-untyped-def]
        offset[0] += jump[1]
        return real_led(*args, **kwargs)

    monkeypatch.setattr(time, "perf_counter", clock)
    monkeypatch.setattr(pipeline, "greedy_plan", greedy)
    monkeypatch.setattr(pipeline, "preference_led", led)
    return jump


def solve_with(cluster: Cluster, limit: float, budget: float) -> tuple[str, Status, tuple[str, ...]]:
    p = SolverParams(time_limit=limit, workers=2, seed=5, budget=budget, full_model_variables=0)
    plan, _ = optimal_plan(cluster, p, deadline=Deadline.start(limit))
    doc = plan_document(cluster, plan, check(cluster, plan))
    doc["solver"].pop("wall_seconds")
    doc["notes"] = [re.sub(r"\d+(\.\d+)?s\b", "_s", note) for note in doc["notes"]]
    return json.dumps(doc, sort_keys=True), plan.status, plan.notes


def test_a_slow_greedy_and_pass_do_not_change_the_plan_while_the_limit_still_holds_them(
        slow_machine: list[float]) -> None:
    """Before, the wall time greedy took decided whether the preference-led pass ran (it needed twice greedy's
    time left): 50 s of greedy in a 120 s limit skipped it, and the search started from another incumbent."""
    cluster = mixed_cluster()
    quiet, status, notes = solve_with(cluster, 120, 8.0)
    assert status is Status.FEASIBLE and any(n.startswith("warm start: ") for n in notes)  # the pass ran
    slow_machine[:] = [50.0, 4.0]
    slow, _, notes = solve_with(cluster, 120, 8.0)
    assert not any(n.startswith(CUT) for n in notes)
    assert slow == quiet


def test_a_greedy_that_really_takes_the_searchs_time_keeps_greedys_plan_and_says_it_was_cut(
        slow_machine: list[float]) -> None:
    cluster = mixed_cluster()
    slow_machine[0] = 118.0
    _, status, notes = solve_with(cluster, 120, 8.0)
    assert status is Status.GREEDY_FALLBACK
    assert any(n.startswith(f"{CUT} (greedy took the search's time)") for n in notes), notes


def test_a_pass_the_wall_clock_stops_is_said_as_a_cut_and_its_partial_plan_not_used(
        slow_machine: list[float]) -> None:
    cluster = mixed_cluster()
    slow_machine[:] = [10.0, 100.0]  # the pass would run past the time the search needs
    _, status, notes = solve_with(cluster, 120, 8.0)
    assert status is not Status.GREEDY_FALLBACK
    assert any(n.startswith("warm start: greedy's plan (the preference-led pass was stopped") for n in notes), notes
    cut = next(n for n in notes if n.startswith(CUT))
    assert "the preference-led pass" in cut


def test_a_limit_too_small_for_a_search_keeps_greedys_plan_on_any_machine(slow_machine: list[float]) -> None:
    """Planned from the input's size: 383 pending pods on 40 nodes need --time-limit 2 to be searched, however
    fast greedy ran, and the note says so without a cut."""
    cluster = mixed_cluster()
    quiet, status, notes = solve_with(cluster, 60, 1.5)
    assert status is Status.GREEDY_FALLBACK
    note = next(n for n in notes if n.startswith(KEPT_PREFIX))
    assert "is planned at" in note and note.endswith("a search needs --time-limit 2 or more")
    assert not any(n.startswith(CUT) for n in notes)
    slow_machine[0] = 5.0
    assert solve_with(cluster, 60, 1.5)[0] == quiet


def test_one_thread_per_search_gives_the_same_plan_twice_and_uses_one_cp_sat_worker(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """whatif's default (--workers 1): every CP-SAT run of the search is one thread's sequential search, so that
    two scenarios at once get a core each; deterministic by itself."""
    from podplan.optimizer import runner

    threads: set[int] = set()
    real_run = runner.run

    def spy(model, params, limit, **kwargs):  # type: ignore[no-untyped-def]
        done = real_run(model, params, limit, **kwargs)
        threads.add(done.solver.parameters.num_workers)
        return done

    monkeypatch.setattr(runner, "run", spy)
    import podplan.optimizer.solve as solve_module
    monkeypatch.setattr(solve_module, "run", spy, raising=False)
    cluster = mixed_cluster()
    p = SolverParams(time_limit=120, workers=1, seed=5, budget=8.0, full_model_variables=0, single_thread=True)
    first, _ = optimal_plan(cluster, p, deadline=Deadline.start(120))
    again, _ = optimal_plan(cluster, p, deadline=Deadline.start(120))
    assert first.status is Status.FEASIBLE and not any(n.startswith(CUT) for n in first.notes)
    assert first.placements == again.placements and first.notes[1] == again.notes[1]  # the objective note
    assert threads == {1}


@pytest.mark.parametrize("nodes,running,pending", [(300, 1608, 3000), (1000, 5280, 10000), (100, 200, 4000),
                                                   (40, 417, 383)])
def test_the_auto_limit_always_leaves_a_planned_search(nodes: int, running: int, pending: int) -> None:
    """`--time-limit auto` is raised for pending-heavy inputs so that the pipeline's plan searches: before, the
    300-node anti-host-30 shape (3,000 pending pods) got 14 s, too little for greedy, the pass and a search."""
    from types import SimpleNamespace

    from podplan.optimizer.pipeline import planned
    from podplan.optimizer.timelimit import auto_limit

    sized = SimpleNamespace(nodes=[None] * nodes, pods=[None] * running, pending=[None] * pending)
    limit = auto_limit("solve", nodes, running + pending, reading=5.0, pending=pending)
    plan = planned(sized, SolverParams(time_limit=limit.seconds, budget=limit.budget))  # type: ignore[arg-type]
    assert plan.search and plan.preference, (limit.note(), plan)
    assert limit.budget == limit.seconds - 5.0  # the decisions never depend on the time reading took


def test_wall_time_held_for_the_bound_ends_the_clock_s_wall_earlier_only_inside_the_block() -> None:
    """A search that leaves pods pending keeps the placed bound's wall time: inside the block the wall clock
    runs out that much earlier (a cut, said in the notes); the deterministic budget is untouched."""
    from podplan.optimizer.runner import Clock

    clk = Clock(time.perf_counter() + 5.0)
    clk.charge(1.0)
    with clk.holding(10.0):
        assert clk.wall_over("the search")
        assert clk.now() == clk.origin + 1.0
    assert not clk.wall_over("the bound") and clk.wall_left() > 4.0
    assert clk.cuts == ["the search"]


def _a_big_model_with_few_free_variables():
    """20,000 variables fixed by their domains and a small free part: a neighbourhood of a large model."""
    from ortools.sat.python import cp_model

    m = cp_model.CpModel()
    for i in range(20_000):
        m.new_int_var(3, 3, f"fixed[{i}]")
    xs = [m.new_int_var(0, 5, f"x[{i}]") for i in range(6)]
    m.add(sum(xs) >= 7)
    m.minimize(sum((i + 1) * x for i, x in enumerate(xs)))
    return m


def test_a_proven_sequential_run_that_asks_to_be_charged_its_work_is_charged_its_deterministic_time() -> None:
    from podplan.optimizer.runner import PROVEN_SECONDS_PER_VARIABLE, Clock, Status, clocked, run

    params = SolverParams(time_limit=10, deterministic=True)
    charged = {}
    for charge_work in (False, True):
        with clocked(Clock(time.perf_counter() + 60.0)) as clk:
            got = run(_a_big_model_with_few_free_variables(), params, 5.0, portfolio=False, charge_work=charge_work)
            assert got.status is Status.OPTIMAL
            charged[charge_work] = (clk.used, got.solver.response_proto.deterministic_time)
    # by the model's size (0.2 s for 20,006 variables), or by what the one worker did, the same on every run
    assert charged[False][0] == PROVEN_SECONDS_PER_VARIABLE * 20_006
    assert charged[True][0] < charged[False][0]
    with clocked(Clock(time.perf_counter() + 60.0)) as clk:
        again = run(_a_big_model_with_few_free_variables(), params, 5.0, portfolio=False, charge_work=True)
        assert clk.used == charged[True][0]
        assert again.solver.response_proto.deterministic_time == charged[True][1]


def _a_small_model_that_takes_a_search():
    """14 jobs of prime lengths on 4 machines, the longest machine as short as can be: 57 variables, proven
    only after a real search (about a unit of deterministic time)."""
    from ortools.sat.python import cp_model

    m = cp_model.CpModel()
    w = [37, 41, 43, 47, 53, 59, 61, 67, 71, 73, 79, 83, 89, 97]
    x = [[m.new_bool_var(f"x[{i},{k}]") for k in range(4)] for i in range(len(w))]
    for row in x:
        m.add_exactly_one(row)
    span = m.new_int_var(0, 2000, "span")
    for k in range(4):
        m.add(sum(w[i] * x[i][k] for i in range(len(w))) <= span)
    m.minimize(span)
    return m


def test_a_proven_interleaved_run_that_asks_to_be_charged_its_work_is_charged_the_same_with_one_and_two_workers() -> None:
    # a focused neighbourhood round: few variables, a search of seconds; charged per variable it cost the clock
    # a tenth of its wall time, and the rounds of a 60 s solve ran past the limit on a quiet machine
    from podplan.optimizer.runner import PROVEN_SECONDS_PER_UNIT, PROVEN_SECONDS_PER_VARIABLE, Clock, Status, clocked, run

    charged = {}
    for workers in (1, 2):
        for charge_work in (False, True):
            with clocked(Clock(time.perf_counter() + 60.0)) as clk:
                got = run(_a_small_model_that_takes_a_search(), SolverParams(time_limit=10, workers=workers,
                                                                           deterministic=True), 5.0,
                          charge_work=charge_work)
                assert got.status is Status.OPTIMAL
                charged[(workers, charge_work)] = clk.used
                work = got.solver.response_proto.deterministic_time
    assert charged[(1, False)] == charged[(2, False)] == PROVEN_SECONDS_PER_VARIABLE * 57
    assert charged[(1, True)] == charged[(2, True)] == min(5.0, PROVEN_SECONDS_PER_UNIT * work)
    assert charged[(1, True)] > 100 * charged[(1, False)]
