"""CP-SAT encoding of TaintToleration.

Hard: untolerated NoSchedule/NoExecute taints are static (no x on that node).
Preference term `prefer_no_schedule`: − multiplier × (PreferNoSchedule taints of the pod's node the pod does
not tolerate), per pod, so a linear term on x; existing pods add a constant.
"""
from __future__ import annotations

from collections import defaultdict
from typing import Any

from optimizer.framework import Reason
from optimizer.state import NodeInfo

from . import count_intolerable_prefer_no_schedule, filter_node, prefer_no_schedule_tolerations, untolerated_taint

TERM = "prefer_no_schedule"


def static_reasons(problem: Any, cls: Any, info: NodeInfo) -> list[Reason]:
    return filter_node(cls.rep, None, info, problem.state)


def static_check(problem: Any, cls: Any):
    memo: dict[tuple, bool] = {}
    rep = cls.rep

    def check(n: int) -> bool:
        node = problem.nodes[n]
        if not node.taints:
            return True
        found = memo.get(node.taints)
        if found is None:
            found = memo[node.taints] = untolerated_taint(rep, node) is None
        return found
    return check


def encode(ctx: Any) -> None:
    m = ctx.policy.prefer_no_schedule
    if not m:
        return
    p = ctx.problem
    for c in ctx.classes:
        tols = prefer_no_schedule_tolerations(p.classes[c].rep)
        for n in ctx.by_class[c]:
            k = count_intolerable_prefer_no_schedule(p.nodes[n], tols)
            if k:
                ctx.add_term(TERM, -m * k * ctx.x[(c, n)])


def existing_terms(problem: Any, policy: Any) -> dict[str, int]:
    total = 0
    for g in problem.existing:
        tols = prefer_no_schedule_tolerations(g.rep)
        for n, k in g.on.items():
            total += k * count_intolerable_prefer_no_schedule(problem.nodes[n], tols)
    return {TERM: -policy.prefer_no_schedule * total}
