"""CP-SAT encoding of NodeUnschedulable: purely static (the node and the pod decide), so it only removes
variables: a class gets no x on a cordoned node unless it tolerates node.kubernetes.io/unschedulable."""
from __future__ import annotations


import numpy as np

from ..framework import Reason
from ..state import NodeInfo
from ..problem import PodClass, Problem
from ..context import ModelContext

from .filtering import filter_node, fits


def static_reasons(problem: Problem, cls: PodClass, info: NodeInfo) -> list[Reason]:
    return filter_node(cls.rep, None, info, problem.state)


def static_mask(problem: Problem, cls: PodClass) -> np.ndarray | None:
    anyone = problem.cache.get("nodeunschedulable.any")
    if anyone is None:
        anyone = problem.cache["nodeunschedulable.any"] = any(n.unschedulable for n in problem.nodes)
    if not anyone:
        return None
    nodes = problem.nodes
    return problem.mask_by_groups("unschedulable", lambda i: nodes[i].unschedulable, lambda i: fits(cls.rep, nodes[i]))


def encode(ctx: ModelContext) -> None:
    """Nothing dynamic: static_reasons already kept the class off the node."""
