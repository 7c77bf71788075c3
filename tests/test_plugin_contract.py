"""A rule added through the plugin contract alone (tests/toyrule: one package, one registry line) is honoured
by the greedy simulator, the verifier and the CP-SAT solve, with no other change anywhere."""
from __future__ import annotations

from builders import cluster_of, make_node, make_pod
from podplan.optimizer.framework import Profile
from podplan.optimizer.greedy import simulate
from podplan.optimizer.registry import PLUGINS
from podplan.optimizer.runner import SolverParams
from podplan.optimizer.solve import solve
from podplan.optimizer.verify import verify
from toyrule import PLUGIN as EXAMPLE_MAX_PODS
from toyrule.filtering import ERR_REASON, LABEL

WITH_TOY = Profile(PLUGINS + (EXAMPLE_MAX_PODS,))  # the one registry line


def _cluster():
    # node-a is roomy, so LeastAllocated sends every pod there; its label allows one pod
    a = make_node("node-a").label(LABEL, "1").alloc(cpu="8", memory="8Gi", pods=110).build()
    b = make_node("node-b").alloc(cpu="2", memory="8Gi", pods=110).build()
    pods = [make_pod(f"p{i}").req(cpu="1").build() for i in range(3)]
    return cluster_of([a, b], pods)


def _on(plan, node):
    return sorted(p for p, n in plan.placements.items() if n == node)


def test_without_the_rule_greedy_puts_every_pod_on_the_roomy_node() -> None:
    plan = simulate(_cluster())
    assert len(_on(plan, "node-a")) == 3


def test_greedy_honours_the_added_rule() -> None:
    plan = simulate(_cluster(), profile=WITH_TOY)
    assert len(_on(plan, "node-a")) == 1 and len(_on(plan, "node-b")) == 2


def test_the_verifier_judges_with_the_added_rule() -> None:
    cluster = _cluster()
    default_plan = simulate(cluster)
    assert verify(cluster, default_plan.placements).ok
    report = verify(cluster, default_plan.placements, profile=WITH_TOY)
    assert not report.ok
    assert {(v.node, v.plugin, v.reason) for v in report.violations} == {("node-a", "ExampleMaxPods", ERR_REASON)}


def test_solve_honours_the_added_rule_through_its_encoding() -> None:
    cluster = _cluster()
    greedy = simulate(cluster, profile=WITH_TOY)
    plan = solve(cluster, SolverParams(time_limit=10, workers=1), None, greedy, WITH_TOY)
    assert plan.status == "OPTIMAL" and len(plan.placements) == 3
    assert len(_on(plan, "node-a")) == 1
    assert verify(cluster, plan.placements, profile=WITH_TOY).ok
