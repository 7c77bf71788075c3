"""TaintToleration over every node at once: Filter verdicts and raw Score per tolerations set
(nodearrays.StaticRule); score() gives the NORMALIZED score (DefaultNormalizeScore reversed)."""
from __future__ import annotations

from ..nodearrays import NodeArrays, StaticRule
from ..state import ClusterState
from .filtering import filter_node, pre_score, score


def new(state: ClusterState, arrays: NodeArrays) -> StaticRule:
    return StaticRule(state, arrays, lambda pod: pod.tolerations, filter_node, score, pre_score, reverse=True)
