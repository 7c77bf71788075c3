"""NodeName over every node at once: verdicts per spec.nodeName (nodearrays.StaticRule). Filter only."""
from __future__ import annotations

from ..nodearrays import NodeArrays, StaticRule
from ..state import ClusterState
from .filtering import filter_node


def new(state: ClusterState, arrays: NodeArrays) -> StaticRule:
    return StaticRule(state, arrays, lambda pod: pod.node_name, filter_node)
