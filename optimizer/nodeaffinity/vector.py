"""NodeAffinity over every node at once: Filter verdicts per (nodeSelector, required node affinity) and raw
Score per preferred terms (nodearrays.StaticRule); score() gives the NORMALIZED score (DefaultNormalizeScore).
The filter and the score read different parts of the pod, but one key covering both keeps it simple."""
from __future__ import annotations

from ..nodearrays import NodeArrays, StaticRule
from ..state import ClusterState
from . import PLUGIN


def new(state: ClusterState, arrays: NodeArrays) -> StaticRule:
    return StaticRule(state, arrays, PLUGIN, lambda pod: (
        tuple(sorted(pod.node_selector.items())), pod.affinity.node_required, pod.affinity.node_preferred))
