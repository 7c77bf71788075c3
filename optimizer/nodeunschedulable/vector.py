"""NodeUnschedulable over every node at once: its verdicts depend only on the pod's tolerations and the
Node, so they are computed once per tolerations set (nodearrays.StaticRule). Filter only."""
from __future__ import annotations

from ..nodearrays import NodeArrays, StaticRule
from ..state import ClusterState
from .filtering import filter_node


def new(state: ClusterState, arrays: NodeArrays) -> StaticRule:
    return StaticRule(state, arrays, lambda pod: pod.tolerations, filter_node)
