"""CP-SAT encoding of NodeName: static only. A pending pod has no spec.nodeName, so this never removes a
variable in practice; it is kept so every filter of the default profile has its encoding."""
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
    if not cls.rep.node_name:
        return None
    return np.fromiter((fits(cls.rep, n.name) for n in problem.nodes), bool, len(problem.nodes))


def encode(ctx: ModelContext) -> None:
    """Nothing dynamic."""
