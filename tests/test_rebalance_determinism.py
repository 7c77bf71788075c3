"""Same input, same seed, same rebalance plan: the target search runs on a deterministic clock
(optimizer.runner.Clock) whose budget comes from the limit the user gave (RebalanceParams.budget) and the
input's size, never from the wall clock; a wall clock that runs slow (a loaded machine) does not change the
plan while the limit still holds it. These tests give the wall clock room (time_limit) and the deterministic
budget is small, so that a loaded machine cannot cut the search short."""
from __future__ import annotations

import json
import re
from dataclasses import replace
from functools import cache

import pytest

from podplan.models.generate import generate_instance
from podplan.models.loader import parse_documents
from podplan.models.objects import Cluster
from podplan.optimizer.rebalance import rebalance
from podplan.optimizer.rebalance.plan import RebalanceParams
from podplan.optimizer.render.rebalance import rebalance_document

CUT = "the wall-clock time limit cut the deterministic search short"


@cache
def running_cluster() -> Cluster:
    """40 nodes of the mixed profile, its pending pods left out: 500 running pods, more than a pack's full
    model takes (the neighbourhood search's rounds decide what the plan is)."""
    cluster = parse_documents(generate_instance(40, 700, 3, "mixed").manifests, "generated-mixed")
    return replace(cluster, pending=())


def pack_json(workers: int, budget: float = 4.0) -> tuple[str, str, tuple[str, ...]]:
    """`rebalance --goal pack -o json`'s document with its wall seconds masked: everything else must be equal."""
    params = RebalanceParams(goal="pack", time_limit=300, budget=budget, workers=workers, seed=5)
    plan = rebalance(running_cluster(), params)
    doc = rebalance_document(plan)
    doc.pop("wall_seconds", None)
    doc["notes"] = [re.sub(r"\d+(\.\d+)?s\b", "_s", n) for n in doc["notes"]]
    return json.dumps(doc, sort_keys=True), str(plan.status), tuple(n.text for n in plan.notes)


def test_a_pack_that_is_not_proven_is_the_same_plan_twice_and_with_1_or_2_workers() -> None:
    first, status, notes = pack_json(1)
    assert len(running_cluster().pods) > 300 and json.loads(first)["moves"] > 0
    assert status == "FEASIBLE" and not any(n.startswith(CUT) for n in notes)
    assert pack_json(2)[0] == first
    assert pack_json(1)[0] == first


@pytest.fixture
def slow_builds(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """A machine on which building a target model "takes" `jump[0]` seconds more than it does: the wall clock
    (perf_counter, as every module reads it) jumps when a build returns. Nothing is timed."""
    import time

    from podplan.optimizer.rebalance import target

    jump, offset = [0.0], [0.0]
    real_clock, real_build = time.perf_counter, target.build_model

    def build(*args: object, **kwargs: object):  # type: ignore[no-untyped-def]
        built = real_build(*args, **kwargs)
        offset[0] += jump[0]
        return built

    monkeypatch.setattr(time, "perf_counter", lambda: real_clock() + offset[0])
    monkeypatch.setattr(target, "build_model", build)
    return jump


def test_slow_model_builds_do_not_change_the_plan_while_the_limit_still_holds_them(slow_builds: list[float]) -> None:
    """Before, the wall time a neighbourhood's model took to build decided whether the next, larger round ran
    (and the rounds' time shares): two runs of the same pack differed on a loaded machine."""
    quiet, _, notes = pack_json(2, budget=18.0)  # two neighbourhood rounds
    assert any("(2 round(s)" in n for n in notes)
    slow_builds[0] = 5.0
    slow, _, notes = pack_json(2, budget=18.0)
    assert not any(n.startswith(CUT) for n in notes)
    assert slow == quiet
