"""Ctrl-C during a large search: the plan comes back without waiting for the relaxation's bound, still verified."""
from __future__ import annotations

import pytest

from podplan.models.generate import generate
from podplan.models.loader import parse_documents
from podplan.optimizer import solve as solve_module
from podplan.optimizer.pipeline import check, greedy_plan
from podplan.optimizer.policy import Policy
from podplan.optimizer.runner import Interrupt, SolverParams


def test_ctrl_c_during_the_packing_repair_returns_the_incumbent_without_the_preference_lp(
        monkeypatch: pytest.MonkeyPatch) -> None:
    cluster = parse_documents(generate(12, 60, 1, "production"))
    greedy = greedy_plan(cluster, 0)
    asked: list[object] = []
    real = solve_module.preference_bound
    monkeypatch.setattr(solve_module, "preference_bound", lambda *a: asked.append(a) or real(*a))
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
    real = solve_module.preference_bound
    monkeypatch.setattr(solve_module, "preference_bound", lambda *a: asked.append(a) or real(*a))
    solve_module.solve(cluster, SolverParams(time_limit=10.0, full_model_variables=0), Policy(), greedy)
    assert asked
