"""Ctrl-C during a large search: the plan comes back without waiting for the relaxation's bound, still verified;
a bound stopped half-way is given up and not remembered."""
from __future__ import annotations

import threading
import time

import pytest

from podplan.models.generate import generate
from podplan.models.loader import parse_documents
from podplan.optimizer import bound as bound_module
from podplan.optimizer import solve as solve_module
from podplan.optimizer.pipeline import check, greedy_plan
from podplan.optimizer.policy import Policy
from podplan.optimizer.problem import build_problem
from podplan.optimizer.registry import DEFAULT_PROFILE
from podplan.optimizer.runner import Interrupt, SolverParams


def test_ctrl_c_during_the_packing_repair_returns_the_incumbent_without_the_preference_lp(
        monkeypatch: pytest.MonkeyPatch) -> None:
    cluster = parse_documents(generate(12, 60, 1, "production"))
    greedy = greedy_plan(cluster, 0)
    asked: list[object] = []
    real = solve_module.preference_bound_unless
    monkeypatch.setattr(solve_module, "preference_bound_unless", lambda *a: asked.append(a) or real(*a))
    interrupt = Interrupt()

    def repair_then_ctrl_c(problem, comp, incumbent, *rest):  # type: ignore[no-untyped-def]
        interrupt.stop()  # the user presses Ctrl-C while the packing repair runs
        return incumbent

    monkeypatch.setattr(solve_module, "packable", lambda *a: True)
    monkeypatch.setattr(solve_module, "repair", repair_then_ctrl_c)
    # full_model_variables=0: every part goes to the neighbourhood search, whose first step was the LP
    plan = solve_module.solve(cluster, SolverParams(time_limit=30.0, full_model_variables=0), Policy(), greedy,
                              interrupt=interrupt)
    assert interrupt.is_set()
    assert asked == []
    assert plan.status.value != "OPTIMAL"
    assert len(plan.placements) >= len(greedy.placements)  # never worse than greedy
    assert check(cluster, plan).ok  # the verify gate passes it


def test_without_ctrl_c_the_neighbourhood_search_asks_for_the_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    cluster = parse_documents(generate(12, 60, 1, "production"))
    greedy = greedy_plan(cluster, 0)
    asked: list[object] = []
    real = solve_module.preference_bound_unless
    monkeypatch.setattr(solve_module, "preference_bound_unless", lambda *a: asked.append(a) or real(*a))
    solve_module.solve(cluster, SolverParams(time_limit=10.0, full_model_variables=0), Policy(), greedy)
    assert asked


def test_ctrl_c_while_the_preference_lp_is_built_gives_it_up_and_remembers_nothing(
        monkeypatch: pytest.MonkeyPatch) -> None:
    cluster = parse_documents(generate(12, 60, 1, "production"))
    problem = build_problem(cluster, DEFAULT_PROFILE)
    comp = max(problem.components, key=lambda c: len(c.classes))
    fresh = bound_module.preference_bound(build_problem(cluster, DEFAULT_PROFILE), comp, Policy(), True)
    interrupt = Interrupt()
    real = bound_module.linear_gains

    def gains_then_ctrl_c(*a):  # type: ignore[no-untyped-def]
        interrupt.stop()  # Ctrl-C while the LP's first class is looked at
        return real(*a)

    monkeypatch.setattr(bound_module, "linear_gains", gains_then_ctrl_c)
    assert bound_module.preference_bound_unless(problem, comp, Policy(), True, interrupt) is None
    monkeypatch.setattr(bound_module, "linear_gains", real)
    # nothing half-done was kept: the bound asked again is the whole one
    assert bound_module.preference_bound(problem, comp, Policy(), True) == fresh
    assert bound_module.preference_bound_unless(problem, comp, Policy(), True, Interrupt()) == fresh


def test_ctrl_c_while_the_lp_itself_runs_returns_at_once_without_waiting_for_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """HiGHS runs in C for seconds at scale (18 s at 5,000 nodes): Ctrl-C must not wait for it to end."""
    import scipy.optimize

    cluster = parse_documents(generate(12, 60, 1, "production"))
    problem = build_problem(cluster, DEFAULT_PROFILE)
    comp = max(problem.components, key=lambda c: len(c.classes))
    interrupt = Interrupt()
    release = threading.Event()
    real = scipy.optimize.linprog

    def lp_in_c(*a, **k):  # type: ignore[no-untyped-def]
        threading.Timer(0.2, interrupt.stop).start()  # the user presses Ctrl-C 0.2 s into the LP
        release.wait(30)  # a long call that lets go of the GIL, as HiGHS does
        return real(*a, **k)

    monkeypatch.setattr(scipy.optimize, "linprog", lp_in_c)
    started = time.monotonic()
    try:
        assert bound_module.preference_bound_unless(problem, comp, Policy(), True, interrupt) is None
        assert time.monotonic() - started < 10
    finally:
        release.set()


def test_unless_set_hands_back_the_call_s_value_or_its_exception() -> None:
    interrupt = Interrupt()
    assert interrupt.unless_set(lambda: 42) == (True, 42)
    with pytest.raises(ZeroDivisionError):
        interrupt.unless_set(lambda: 1 / 0)
    interrupt.stop()
    release = threading.Event()
    assert interrupt.unless_set(lambda: release.wait(30)) == (False, None)
    release.set()


def test_unless_set_gives_up_at_its_deadline() -> None:
    release = threading.Event()
    started = time.monotonic()
    assert Interrupt().unless_set(lambda: release.wait(30), deadline=time.perf_counter() + 0.2) == (False, None)
    assert time.monotonic() - started < 10
    release.set()


def test_an_lp_that_overruns_its_own_time_limit_is_given_up_at_the_wall_deadline(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """HiGHS's interior point method ran 330 s past a 4 s time_limit on a 5,000-node LP: the search's wall
    deadline gives it up (the per-class bound stands and the cut is noted), Ctrl-C or not."""
    import scipy.optimize

    from podplan.optimizer.runner import Clock, clocked

    cluster = parse_documents(generate(12, 60, 1, "production"))
    problem = build_problem(cluster, DEFAULT_PROFILE)
    comp = max(problem.components, key=lambda c: len(c.classes))
    release = threading.Event()
    real = scipy.optimize.linprog
    called: list[bool] = []

    def lp_past_its_limit(*a, **k):  # type: ignore[no-untyped-def]
        called.append(True)
        release.wait(30)  # a call in C that keeps going whatever its time_limit option says
        return real(*a, **k)

    monkeypatch.setattr(scipy.optimize, "linprog", lp_past_its_limit)
    started = time.monotonic()
    try:
        with clocked(Clock(time.perf_counter() + 1.0)) as clk:
            assert bound_module._joint_linear(problem, comp, Policy(), Interrupt()) is None
        assert called and time.monotonic() - started < 10
        assert "the preference bound's LP" in clk.cuts
    finally:
        release.set()
