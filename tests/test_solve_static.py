"""The vectorised static masks used to build the problem agree with each rule's static_reasons (the verdicts
explain and why-pending show) on every (class, node) of random small clusters."""
from __future__ import annotations

from hypothesis import HealthCheck, given, settings

from podplan.models.objects import Cluster
from podplan.optimizer.problem import build_problem
from podplan.optimizer.registry import DEFAULT_PROFILE
from test_solve_property import clusters


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(clusters())
def test_static_masks_agree_with_static_reasons(case: tuple[Cluster, bool]) -> None:
    cluster, gang_all = case
    problem = build_problem(cluster, DEFAULT_PROFILE, gang_all)
    for cls in problem.classes:
        for plugin in DEFAULT_PROFILE.plugins:
            rule = plugin.encoding
            if rule is None or rule.static_mask is None or rule.static_reasons is None:
                continue
            mask = rule.static_mask(problem, cls)
            for n, node in enumerate(problem.nodes):
                slow = not rule.static_reasons(problem, cls, problem.state.nodes[node.name])
                fast = True if mask is None else bool(mask[n])
                assert fast == slow, (plugin.name, cls.name, node.name)
