"""The preference bound's joint LP is planned from its columns (optimizer.solve.LP_COLUMNS_PER_ROOT_SECOND): one
too large for its share of the time is given up once its columns are counted, before HiGHS runs (at 5,000
nodes it took all the neighbourhood rounds' time and never ended); the per-class bound stands, the plan says
so, and the rounds run."""
from __future__ import annotations

import pytest
import scipy.optimize

from podplan.models.loader import parse_documents
from podplan.models.shapes import shape_instance
from podplan.optimizer import solve as solve_module
from podplan.optimizer.pipeline import check, greedy_plan
from podplan.optimizer.policy import Policy
from podplan.optimizer.runner import SolverParams

GIVEN_UP = "the joint LP over node groups has more than"


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


def test_an_lp_too_large_for_its_share_is_not_solved_and_the_plan_says_the_bound_is_the_per_class_form(
        monkeypatch: pytest.MonkeyPatch) -> None:
    plan, solved = _solve(monkeypatch, 1)  # planned at (columns / 1) ** 2 seconds: none fits
    assert solved == []  # HiGHS never ran
    assert any(GIVEN_UP in n and "per-class form" in n for n in plan.notes), plan.notes
    assert any("neighbourhood rounds" in n for n in plan.notes)  # the rounds had the time
    pref = plan.gaps["preference"]
    assert pref["bound"] >= pref["value"]  # a looser bound, never a wrong one
    assert plan.status.value != "OPTIMAL" or pref["bound"] == pref["value"]


def test_an_lp_that_fits_its_share_is_solved_once_and_no_note_speaks_of_it(monkeypatch: pytest.MonkeyPatch) -> None:
    plan, solved = _solve(monkeypatch, 50_000)
    assert len(solved) == 1  # built and solved before the rounds, remembered for the plan's bound
    assert not any(GIVEN_UP in n for n in plan.notes)
    loose, _ = _solve(monkeypatch, 1)
    assert plan.gaps["preference"]["bound"] <= loose.gaps["preference"]["bound"]  # the joint form is the tighter
