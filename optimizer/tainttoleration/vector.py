"""TaintToleration over every node at once: Filter verdicts and raw Score per tolerations set
(nodearrays.StaticRule); score() gives the NORMALIZED score (DefaultNormalizeScore reversed)."""
from __future__ import annotations

from ..nodearrays import NodeArrays, StaticRule
from ..state import ClusterState
from . import PLUGIN


def new(state: ClusterState, arrays: NodeArrays) -> StaticRule:
    return StaticRule(state, arrays, PLUGIN, lambda pod: pod.tolerations, reverse=True)
