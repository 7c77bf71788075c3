"""Verification ahead of the gate: the search's starting plan is verified in the background, and the gate uses
that report only for the very plan it is asked to pass (so the plan printed is the plan verified)."""
from __future__ import annotations

from dataclasses import replace

import pytest

from podplan.models.errors import PlanInvalidError
from podplan.models.generate import generate
from podplan.models.loader import parse_documents
from podplan.optimizer import pipeline
from podplan.optimizer.ahead import Ahead
from podplan.optimizer.pipeline import Deadline, check, greedy_plan, optimal_plan
from podplan.optimizer.policy import Policy
from podplan.optimizer.registry import DEFAULT_PROFILE
from podplan.optimizer.runner import Interrupt, SolverParams
from podplan.optimizer.verify import verify


@pytest.fixture
def cluster():  # type: ignore[no-untyped-def]
    return parse_documents(generate(12, 60, 1, "production"))


def test_a_plan_verified_ahead_gets_the_report_the_verifier_gives(cluster) -> None:  # type: ignore[no-untyped-def]
    ahead = Ahead()
    plan = greedy_plan(cluster, 0)
    ahead.start(cluster, plan, Policy(), DEFAULT_PROFILE)
    report = ahead.take(cluster, replace(plan, notes=("printed",)), None, DEFAULT_PROFILE)
    assert report == verify(cluster, plan.placements, Policy(), DEFAULT_PROFILE)
    assert ahead.taken == 1


def test_any_other_plan_cluster_policy_or_profile_is_verified_by_the_gate_itself(cluster) -> None:  # type: ignore[no-untyped-def]
    ahead = Ahead()
    plan = greedy_plan(cluster, 0)
    ahead.start(cluster, plan, None, DEFAULT_PROFILE)
    key, node = next(iter(plan.placements.items()))
    other_node = next(n.name for n in cluster.nodes if n.name != node)
    moved = replace(plan, placements={**plan.placements, key: other_node})
    fewer = replace(plan, placements={k: v for k, v in plan.placements.items() if k != key})
    assert ahead.take(cluster, moved, None, DEFAULT_PROFILE) is None
    assert ahead.take(cluster, fewer, None, DEFAULT_PROFILE) is None
    assert ahead.take(replace(cluster), plan, None, DEFAULT_PROFILE) is None  # an equal but other input
    assert ahead.take(cluster, plan, Policy(node_affinity=7), DEFAULT_PROFILE) is None
    assert ahead.taken == 0


def test_an_invalid_plan_verified_ahead_still_fails_the_gate(cluster, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    plan = greedy_plan(cluster, 0)
    full = max(cluster.nodes, key=lambda n: sum(1 for v in plan.placements.values() if v == n.name)).name
    crowded = replace(plan, placements={k: full for k in plan.placements})  # every pod on one node
    ahead = Ahead()
    monkeypatch.setattr(pipeline, "AHEAD", ahead)
    ahead.start(cluster, crowded, None, DEFAULT_PROFILE)
    with pytest.raises(PlanInvalidError):
        check(cluster, crowded)
    assert ahead.taken == 1  # the report came from ahead, and it failed the plan


def test_ctrl_c_before_the_search_improves_prints_the_starting_plan_verified_ahead(cluster, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    ahead = Ahead()
    monkeypatch.setattr(pipeline, "AHEAD", ahead)
    interrupt = Interrupt()

    def ctrl_c_at_once(cluster, params, policy, start, profile, interrupt_):  # type: ignore[no-untyped-def]
        interrupt.stop()  # the user presses Ctrl-C as the search begins: the starting plan is the best so far
        return replace(start, notes=start.notes + ("interrupted: best plan found so far",))

    monkeypatch.setattr(pipeline, "solve", ctrl_c_at_once)
    plan, _ = optimal_plan(cluster, SolverParams(time_limit=60.0), None, deadline=Deadline.start(60.0),
                           interrupt=interrupt)
    report = check(cluster, plan)
    assert ahead.started == 1 and ahead.taken == 1
    assert report == verify(cluster, plan.placements)


def verifying_slowly(cluster, monkeypatch):  # type: ignore[no-untyped-def]
    """An Ahead verifying greedy's plan of `cluster` in the background, its judging held once entered until the
    test releases it: (ahead, plan, the running entry, release)."""
    import threading

    from podplan.optimizer import verify as verify_module
    entered, release = threading.Event(), threading.Event()
    real = verify_module.judge_all

    def slow_judge_all(*args, **kwargs):  # type: ignore[no-untyped-def]
        entered.set()
        release.wait(5)
        return real(*args, **kwargs)

    monkeypatch.setattr(verify_module, "judge_all", slow_judge_all)
    ahead = Ahead()
    plan = greedy_plan(cluster, 0)
    ahead.start(cluster, plan, None, DEFAULT_PROFILE)
    running = ahead._entries[0]
    assert entered.wait(5)
    return ahead, plan, running, release


def test_the_gate_asking_about_another_input_gives_up_a_verification_still_running(cluster, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    ahead, plan, running, release = verifying_slowly(cluster, monkeypatch)
    other = replace(cluster)  # an equal but other input: no use as a basis
    assert ahead.take(other, plan, None, DEFAULT_PROFILE) is None
    assert ahead.basis(other, None, DEFAULT_PROFILE) is None  # the gate verifies this one itself
    release.set()
    assert running.done.wait(5)
    assert running.cancel.is_set() and running.report is None  # given up, not finished


def test_a_verification_still_running_for_another_plan_of_the_input_is_finished_and_becomes_the_basis(  # type: ignore[no-untyped-def]
        cluster, monkeypatch) -> None:
    ahead, plan, running, release = verifying_slowly(cluster, monkeypatch)
    fewer = dict(list(plan.placements.items())[1:])
    assert ahead.take(cluster, replace(plan, placements=fewer), None, DEFAULT_PROFILE) is None
    release.set()
    basis = ahead.basis(cluster, None, DEFAULT_PROFILE)  # waits for it
    assert basis is not None and not running.cancel.is_set() and ahead.based == 1
    monkeypatch.undo()  # the verifier judges at its own pace again
    assert verify(cluster, fewer, basis=basis) == verify(cluster, fewer)


def test_solve_says_when_the_printed_plan_was_verified_ahead(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from click.testing import CliRunner

    from podplan.cli import main

    def keep_the_start(cluster, params, policy, start, profile, interrupt_):  # type: ignore[no-untyped-def]
        return start  # a search that cannot improve returns the plan it started from

    monkeypatch.setattr(pipeline, "solve", keep_the_start)
    from pathlib import Path
    web_store = str(Path(__file__).resolve().parents[1] / "instances" / "web-store.yaml")
    result = CliRunner().invoke(main, ["--verbose", "solve", web_store, "--time-limit", "20",
                                       "-o", "json"])
    assert result.exit_code == 0, result.output
    assert "verify: the report is the one made in the background while the search ran" in result.output


def test_a_plan_the_search_moved_on_from_is_verified_to_the_end_and_the_gate_judges_the_difference(cluster) -> None:  # type: ignore[no-untyped-def]
    ahead = Ahead()
    plan = greedy_plan(cluster, 0)
    ahead.start(cluster, plan, None, DEFAULT_PROFILE)
    ahead.supersede(cluster)
    assert ahead.superseded == 1
    key, node = next(iter(plan.placements.items()))
    other_node = next(n.name for n in cluster.nodes if n.name != node)
    moved = {**plan.placements, key: other_node}
    assert ahead.take(cluster, replace(plan, placements=moved), None, DEFAULT_PROFILE) is None
    basis = ahead.basis(cluster, None, DEFAULT_PROFILE)
    assert basis is not None and basis.placements == plan.placements
    assert verify(cluster, moved, basis=basis) == verify(cluster, moved)


def test_the_gate_verifies_the_plan_the_search_moved_on_to_against_its_starting_plan(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from podplan.optimizer import solve as solve_module

    cluster = parse_documents(generate(20, 150, 1, "adversarial"))  # the packing repair changes greedy's plan
    ahead = Ahead()
    monkeypatch.setattr(pipeline, "AHEAD", ahead)
    monkeypatch.setattr(solve_module, "AHEAD", ahead)
    params = SolverParams(time_limit=10.0, full_model_variables=0, neighbourhood_variables=50, seed=0)
    plan, greedy = optimal_plan(cluster, params, Policy(), deadline=Deadline.start(10.0))
    assert plan.placements != greedy.placements
    assert (ahead.started, ahead.superseded) == (1, 1)
    report = check(cluster, plan, Policy())
    assert report.ok and report == verify(cluster, plan.placements, Policy())
    assert ahead.taken == 0 and ahead.based == 1


@pytest.mark.parametrize("ctrl_c", [True, False], ids=["ctrl-c as the search starts", "a search that keeps it"])
def test_the_real_search_that_keeps_its_start_prints_the_very_plan_verified_ahead(cluster, monkeypatch,  # type: ignore[no-untyped-def]
                                                                                   ctrl_c: bool) -> None:
    # the search works on counts per (pod class, node); a part it did not change gives each pod its starting
    # node back, so the plan printed IS the starting plan (before, the same counts came back as other pods on
    # those nodes, and the report made ahead was never used)
    from podplan.optimizer import solve as solve_module

    ahead = Ahead()
    monkeypatch.setattr(pipeline, "AHEAD", ahead)
    monkeypatch.setattr(solve_module, "AHEAD", ahead)
    started: list[object] = []
    real_start = ahead.start
    monkeypatch.setattr(ahead, "start", lambda c, plan, *rest: started.append(plan) or real_start(c, plan, *rest))
    interrupt = Interrupt()
    real_solve = pipeline.solve

    def search(*args):  # type: ignore[no-untyped-def]
        if ctrl_c:
            interrupt.stop()
        return real_solve(*args)

    monkeypatch.setattr(pipeline, "solve", search)
    params = SolverParams(time_limit=10.0, full_model_variables=0, seed=0)
    plan, _ = optimal_plan(cluster, params, Policy(), deadline=Deadline.start(10.0), interrupt=interrupt)
    assert plan.placements == started[0].placements  # type: ignore[attr-defined]
    assert check(cluster, plan) == verify(cluster, plan.placements)
    assert ahead.taken == 1
