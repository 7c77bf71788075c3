"""The final state the optimizer scored for the plan it returns is judged by the verify gate of that very plan
(instead of being built again): the report is exactly the one the verifier gives on its own."""
from __future__ import annotations

from dataclasses import replace

import pytest

from podplan.models.generate import generate
from podplan.models.loader import parse_documents
from podplan.optimizer import verify as verify_module
from podplan.optimizer.pipeline import greedy_plan
from podplan.optimizer.policy import Policy
from podplan.optimizer.verify import scored_terms, verify


def _fresh(cluster, placements, policy=None):  # type: ignore[no-untyped-def]
    verify_module._SCORED.clear()
    return verify(cluster, placements, policy)


@pytest.mark.parametrize("profile", ["production", "mixed", "adversarial"])
def test_the_gate_judging_the_scored_state_reports_what_the_verifier_reports(profile: str) -> None:
    cluster = parse_documents(generate(15, 120, 2, profile))
    placements = greedy_plan(cluster, 0).placements
    expected = _fresh(cluster, placements)
    terms = scored_terms(cluster, placements, Policy())
    assert terms == expected.terms  # the optimizer's figure is the verifier's
    assert verify(cluster, placements) == expected
    assert verify_module._SCORED == []  # it was taken, once


def test_an_invalid_plan_gets_the_same_violations_in_the_same_order_from_the_scored_state() -> None:
    cluster = parse_documents(generate(15, 120, 2, "production"))
    placements = greedy_plan(cluster, 0).placements
    crowded = {k: cluster.nodes[0].name for k in placements}  # every pod on one node
    expected = _fresh(cluster, crowded)
    assert not expected.ok
    scored_terms(cluster, crowded, Policy())
    assert verify(cluster, crowded) == expected


def test_another_plan_input_or_policy_is_judged_on_a_state_of_its_own() -> None:
    cluster = parse_documents(generate(15, 120, 2, "production"))
    placements = greedy_plan(cluster, 0).placements
    key = next(iter(placements))
    fewer = {k: v for k, v in placements.items() if k != key}
    for other_cluster, other_placements, policy in ((cluster, fewer, None), (replace(cluster), placements, None),
                                                    (cluster, placements, Policy(node_affinity=7))):
        expected = _fresh(other_cluster, other_placements, policy)
        scored_terms(cluster, placements, Policy())
        assert verify(other_cluster, other_placements, policy) == expected
        assert len(verify_module._SCORED) == 1  # not taken: it is another plan's
