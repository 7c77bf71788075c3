"""Same input, same seed, same answer: `provision -o json` is byte-identical across runs and with 1 or 2 CP-SAT
workers, on a generated cluster that takes the large-input path (the pattern program, the joint model's knapsack
fills, its CP-SAT runs and improvement rounds), because every stage is planned on the deterministic clock
(optimizer.provision.clock) from the limit the user gave, never from the wall clock.

The wall clock stays a cap: these runs give it room (a long deadline) and plan from a small limit (`budget`), so
that a loaded machine cannot cut them; a cut would be said in the notes, checked here too."""
from __future__ import annotations

import json
import re
from functools import cache

from podplan.models.generate import generate
from podplan.models.loader import parse_documents
from podplan.models.nodetypes import NodeTypes, default_node_types
from podplan.models.objects import Cluster
from podplan.optimizer.pipeline import Deadline
from podplan.optimizer.provision import provision, verify_answer
from podplan.optimizer.provision.render import provision_document
from podplan.optimizer.runner import SolverParams

CUT = "the wall-clock time limit cut"


@cache
def grown_short() -> tuple[Cluster, NodeTypes]:
    """A production-profile cluster of 24 nodes filled to the brim, its last 4 general-pool nodes removed with
    their pods (their Deployments' replicas come back pending): 20 nodes and pending pods beyond their room."""
    docs = generate(24, 300, 2, "production", 1.0)
    general = [d["metadata"]["name"] for d in docs if d["kind"] == "Node" and not d.get("spec", {}).get("taints")]
    gone = set(general[-4:])
    docs = [d for d in docs if not (d["kind"] == "Node" and d["metadata"]["name"] in gone)
            and not (d["kind"] == "Pod" and d["spec"].get("nodeName") in gone)]
    cluster = parse_documents(docs, "generated-production")
    return cluster, default_node_types(cluster)


def provision_json(workers: int) -> tuple[str, tuple[str, ...]]:
    """`provision -o json`'s document with what reports time masked (wall seconds, the seconds in the notes)."""
    cluster, types = grown_short()
    # every input takes the large-input path; plan from 12 s, with the wall clock far away
    params = SolverParams(time_limit=300, budget=12.0, workers=workers, seed=3, full_model_variables=0)
    answer = provision(cluster, types, params, deadline=Deadline.start(300))
    verify_answer(answer)
    doc = provision_document(answer, types)
    doc.pop("wall_seconds", None)
    doc["notes"] = [re.sub(r"\d+(\.\d+)?s\b", "_s", n) for n in doc["notes"]]
    return json.dumps(doc, sort_keys=True), answer.notes


def test_the_same_input_and_seed_give_the_same_answer_twice_and_with_1_or_2_workers() -> None:
    cluster, _ = grown_short()
    assert len(cluster.pending) > 20  # the point: new nodes are bought, by the searches
    first, notes = provision_json(1)
    assert not any(n.startswith(CUT) for n in notes), notes
    assert any(n.startswith("joint model:") for n in notes), notes  # the joint model's stages ran
    assert any(n.startswith("pattern bound") for n in notes), notes  # and the pattern program
    assert provision_json(2)[0] == first
    assert provision_json(1)[0] == first


def test_ctrl_c_during_the_searches_prints_a_verified_answer_at_once() -> None:
    import threading
    import time

    from podplan.optimizer.interrupt import Interrupt

    cluster, types = grown_short()
    params = SolverParams(time_limit=300, budget=300.0, workers=1, seed=3, full_model_variables=0)
    interrupt = Interrupt()
    timer = threading.Timer(4.0, interrupt.stop)  # (after the estimator, in the bounds or the searches)
    timer.start()
    t0 = time.perf_counter()
    try:
        answer = provision(cluster, types, params, deadline=Deadline.start(300), interrupt=interrupt)
    finally:
        timer.cancel()
    assert time.perf_counter() - t0 < 60  # a budget of 300 s, stopped within seconds of Ctrl-C
    verify_answer(answer)
    assert len(answer.placements) + len(answer.pending) == len(cluster.pending)
    if not answer.estimator.stopped:
        assert not answer.pending and answer.cost <= answer.estimator.cost() + 1e-9


def test_a_large_input_keeps_most_of_its_time_limit_for_the_searches_and_a_small_one_its_planned_python_work(
        ) -> None:
    # the planned Python work grows per pod, but at most to PREP_MAX_SHARE of the limit: 1,000 nodes (15,540 pods,
    # 10,098 pending) were planned 74 s of work for a 60 s limit, and the searches got a tenth of it
    from podplan.optimizer.provision.clock import PREP_MAX_SHARE, WALL_PER_SECOND, planned_seconds

    big = planned_seconds(60.0, 15_540, 11.7, 10_098)
    assert big == (60.0 - 11.7 - PREP_MAX_SHARE * 60.0) / WALL_PER_SECOND > 0.4 * 60.0
    small = planned_seconds(60.0, 3_107, 6.0, 2_025)  # (200 nodes: what it was before the cap)
    assert 0.5 * 60.0 < small < (60.0 - 6.0) / WALL_PER_SECOND
    assert planned_seconds(5.0, 15_540, 11.7, 10_098) == 0.5  # (never below a tenth of the limit)
