"""NodeAffinity PreScore/Score/NormalizeScore, and upstream's DefaultNormalizeScore.

Reproduces Score/NormalizeScore of kubernetes/kubernetes pkg/scheduler/framework/plugins/nodeaffinity/node_affinity.go
(raw score = sum of weights of matching preferred terms, via nodeaffinity.PreferredSchedulingTerms.Score)
and pkg/scheduler/framework/plugins/helper/normalize_score.go. A pod without preferred terms makes
upstream's PreScore return Skip; here every node then scores 0, which normalizes to 0 just the same.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...models.objects import Node, Pod

from ..framework import MAX_NODE_SCORE
from ..state import ClusterState, NodeInfo


def default_normalize_score(scores: dict[str, int], reverse: bool, max_priority: int = MAX_NODE_SCORE) -> dict[str, int]:
    """helper.DefaultNormalizeScore: scale [0, max] to [0, max_priority] with integer math, optionally reversed.

    All-zero scores stay 0, or all become max_priority when reversed.
    """
    top = max(scores.values(), default=0)
    if top <= 0:
        return {name: (max_priority if reverse else score) for name, score in scores.items()}
    out: dict[str, int] = {}
    for name, score in scores.items():
        scaled = max_priority * score // top  # scores are non-negative: floor == Go's truncation
        out[name] = max_priority - scaled if reverse else scaled
    return out


def preferred_score(pod: Pod, node: Node) -> int:
    """Sum of the weights of the pod's preferred node-affinity terms that match the node.

    Terms with weight 0 or with no requirements at all are ignored, as upstream does.
    """
    total = 0
    for pref in pod.affinity.node_preferred:
        if pref.weight and pref.preference.matches(node.name, node.labels):
            total += pref.weight
    return total


def pre_score(pod: Pod, state: ClusterState, feasible: Sequence[NodeInfo]) -> Any:
    return None


def score(pod: Pod, pre: Any, node_info: NodeInfo, state: ClusterState) -> int:
    return preferred_score(pod, node_info.node)


def normalize(scores: dict[str, int], pre: Any) -> dict[str, int]:
    return default_normalize_score(scores, reverse=False)
