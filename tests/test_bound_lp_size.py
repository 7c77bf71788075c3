"""The preference bound's joint LP is planned from its columns (optimizer.solve.LP_COLUMNS_PER_ROOT_SECOND): it
holds no more columns than it can solve in its share of the time (at 5,000 nodes the whole LP took all the
neighbourhood rounds' time and never ended); the classes left out are bounded one at a time, the plan says so,
and the rounds run."""
from __future__ import annotations

import pytest
import scipy.optimize

from podplan.models.loader import parse_documents
from podplan.models.shapes import shape_instance
from podplan.optimizer import solve as solve_module
from podplan.optimizer.pipeline import check, greedy_plan
from podplan.optimizer.policy import Policy
from podplan.optimizer.runner import SolverParams

LEFT_OUT = "classes more are bounded one class at a time"


def _solve(monkeypatch: pytest.MonkeyPatch, columns_per_root_second: int) -> tuple[object, list[int]]:
    cluster = parse_documents(shape_instance("cache-heavy", 12, 0).manifests, "cache-heavy")
    greedy = greedy_plan(cluster, 0)
    solved: list[int] = []
    real = scipy.optimize.linprog
    monkeypatch.setattr(scipy.optimize, "linprog", lambda *a, **k: solved.append(len(k["c"])) or real(*a, **k))
    monkeypatch.setattr(solve_module, "LP_COLUMNS_PER_ROOT_SECOND", columns_per_root_second)
    # full_model_variables=0: the whole cluster goes to the neighbourhood search, whose cap is this bound
    plan = solve_module.solve(cluster, SolverParams(time_limit=20.0, full_model_variables=0), Policy(), greedy)
    assert check(cluster, plan).ok  # verified as every plan is
    assert len(plan.placements) >= len(greedy.placements)
    return plan, solved


def test_an_lp_too_large_for_its_share_holds_the_columns_that_fit_and_the_plan_says_the_rest_are_bounded_alone(
        monkeypatch: pytest.MonkeyPatch) -> None:
    plan, solved = _solve(monkeypatch, 2)  # planned at (columns / 2) ** 2 seconds: a few columns fit
    assert all(n <= 2 * (0.5 * 20) ** 0.5 for n in solved)  # HiGHS never saw more than planned
    assert any(LEFT_OUT in n for n in plan.notes), plan.notes
    assert any("neighbourhood rounds" in n for n in plan.notes)  # the rounds had the time
    pref = plan.gaps["preference"]
    assert pref["bound"] >= pref["value"]  # a looser bound, never a wrong one
    assert plan.status.value != "OPTIMAL" or pref["bound"] == pref["value"]


def test_an_lp_that_fits_its_share_is_solved_once_and_no_note_speaks_of_it(monkeypatch: pytest.MonkeyPatch) -> None:
    plan, solved = _solve(monkeypatch, 50_000)
    assert len(solved) == 1 and solved[0] > 2 * (0.5 * 20) ** 0.5  # solved whole once, remembered for the bound
    assert not any(LEFT_OUT in n for n in plan.notes)
    loose, _ = _solve(monkeypatch, 2)
    assert plan.gaps["preference"]["bound"] <= loose.gaps["preference"]["bound"]  # the joint form is the tighter
