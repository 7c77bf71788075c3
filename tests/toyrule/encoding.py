"""The CP-SAT form: per labelled node, existing pods + Σ_class x[class, node] <= the label's value."""
from __future__ import annotations

import numpy as np

from podplan.optimizer.context import ModelContext
from podplan.optimizer.framework import Reason
from podplan.optimizer.problem import PodClass, Problem
from podplan.optimizer.state import NodeInfo

from .filtering import LABEL, NAME, filter_node, limit


def room(problem: Problem) -> np.ndarray:
    """Per node: how many more pods its label allows (a large number without the label)."""
    out = np.full(len(problem.nodes), 1 << 30, dtype=np.int64)
    for i, node in enumerate(problem.nodes):
        most = limit(node)
        if most is not None:
            out[i] = max(0, most - len(problem.state.nodes[node.name].pods))
    return out


def static_mask(problem: Problem, cls: PodClass) -> np.ndarray | None:
    return room(problem) > 0


def static_reasons(problem: Problem, cls: PodClass, info: NodeInfo) -> list[Reason]:
    return filter_node(cls.rep, None, info, problem.state)


def upper_bound(problem: Problem, cls: PodClass) -> np.ndarray:
    return room(problem)


def encode(ctx: ModelContext) -> None:
    left = room(ctx.problem)
    for n in ctx.comp.nodes:
        classes = ctx.by_node[n]
        if classes and limit(ctx.problem.nodes[n]) is not None:
            ctx.hard(ctx.model.add(sum(ctx.x[(c, n)] for c in classes) <= int(left[n])),
                     (NAME, f"Node/{ctx.nname(n)}", f"metadata.labels[{LABEL}]"))
