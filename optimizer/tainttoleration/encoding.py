"""CP-SAT encoding of TaintToleration.

Hard: untolerated NoSchedule/NoExecute taints are static (no x on that node).
Preference term `prefer_no_schedule`: − multiplier × (PreferNoSchedule taints of the pod's node the pod does
not tolerate), per pod, so a linear term on x; existing pods add a constant.
"""
from __future__ import annotations


import numpy as np

from ..framework import Reason
from ..state import NodeInfo
from ..problem import PodClass, Problem
from ..context import ModelContext
from ..policy import Policy

from .filtering import count_intolerable_prefer_no_schedule, filter_node, prefer_no_schedule_tolerations, untolerated_taint

TERM = "prefer_no_schedule"


def static_reasons(problem: Problem, cls: PodClass, info: NodeInfo) -> list[Reason]:
    return filter_node(cls.rep, None, info, problem.state)


def static_mask(problem: Problem, cls: PodClass) -> np.ndarray | None:
    nodes = problem.nodes
    anyone = problem.cache.get("tainttoleration.any")
    if anyone is None:
        anyone = problem.cache["tainttoleration.any"] = any(n.taints for n in nodes)
    if not anyone:
        return None
    return problem.mask_by_groups("taints", lambda i: nodes[i].taints,
                                  lambda i: untolerated_taint(cls.rep, nodes[i]) is None)


def encode(ctx: ModelContext) -> None:
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


def existing_terms(problem: Problem, policy: Policy) -> dict[str, int]:
    total = 0
    for g in problem.existing:
        tols = prefer_no_schedule_tolerations(g.rep)
        for n, k in g.on.items():
            total += k * count_intolerable_prefer_no_schedule(problem.nodes[n], tols)
    return {TERM: -policy.prefer_no_schedule * total}
