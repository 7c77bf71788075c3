"""CP-SAT encoding of NodeUnschedulable: purely static (the node and the pod decide), so it only removes
variables: a class gets no x on a cordoned node unless it tolerates node.kubernetes.io/unschedulable."""
from __future__ import annotations

from typing import Any

from optimizer.framework import Reason
from optimizer.state import NodeInfo

from . import filter_node


def static_reasons(problem: Any, cls: Any, info: NodeInfo) -> list[Reason]:
    return filter_node(cls.rep, None, info, problem.state)


def encode(ctx: Any) -> None:
    """Nothing dynamic: static_reasons already kept the class off the node."""
