"""TaintToleration: a node's NoSchedule/NoExecute taints must all be tolerated; PreferNoSchedule taints
the pod does not tolerate lower the node's score (weight 3 in the default profile).

Reproduces kubernetes/kubernetes pkg/scheduler/framework/plugins/tainttoleration/taint_toleration.go:
Filter rejects a node with an untolerated taint (v1helper.FindMatchingUntoleratedTaint) as
UnschedulableAndUnresolvable, with one reason for every taint (kube-scheduler 1.35 no longer names the taint in
the status, kubernetes#134740: the FitError counts all such nodes under one reason); Score counts intolerable PreferNoSchedule taints, judged only against the
tolerations whose effect is PreferNoSchedule or empty; NormalizeScore is DefaultNormalizeScore reversed.
No knowing difference.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...models.objects import Node, Pod
from ...models.taints import Taint, Toleration, first_untolerated, tolerated

from ..framework import Reason
from ..nodeaffinity.scoring import default_normalize_score
from ..state import ClusterState, NodeInfo

NAME = "TaintToleration"
WEIGHT = 3

# ErrReasonNotMatch, word for word (kube-scheduler 1.35; before kubernetes#134740 it named the taint).
ERR_REASON_UNTOLERATED = "node(s) had untolerated taint(s)"

FILTER_EFFECTS = ("NoSchedule", "NoExecute")
PREFER_NO_SCHEDULE = "PreferNoSchedule"


def untolerated_reason(taint: Taint) -> str:
    """The Filter's reason for a node with this untolerated taint: the same for every taint."""
    return ERR_REASON_UNTOLERATED


def untolerated_taint(pod: Pod, node: Node) -> Taint | None:
    """The first NoSchedule/NoExecute taint of the node that none of the pod's tolerations tolerates."""
    return first_untolerated(node.taints, pod.tolerations, FILTER_EFFECTS)


def filter_node(pod: Pod, pre: Any, node_info: NodeInfo, state: ClusterState) -> list[Reason]:
    taint = untolerated_taint(pod, node_info.node)
    if taint is None:
        return []
    return [Reason(NAME, untolerated_reason(taint), unresolvable=True)]


def prefer_no_schedule_tolerations(pod: Pod) -> tuple[Toleration, ...]:
    """Upstream getAllTolerationPreferNoSchedule: an empty effect means every effect, so it counts too."""
    return tuple(t for t in pod.tolerations if not t.effect or t.effect == PREFER_NO_SCHEDULE)


def count_intolerable_prefer_no_schedule(node: Node, tolerations: tuple[Toleration, ...]) -> int:
    return sum(1 for taint in node.taints if taint.effect == PREFER_NO_SCHEDULE and not tolerated(taint, tolerations))


def pre_score(pod: Pod, state: ClusterState, feasible: Sequence[NodeInfo]) -> tuple[Toleration, ...]:
    return prefer_no_schedule_tolerations(pod)


def score(pod: Pod, pre: tuple[Toleration, ...] | None, node_info: NodeInfo, state: ClusterState) -> int:
    tolerations = pre if pre is not None else prefer_no_schedule_tolerations(pod)
    return count_intolerable_prefer_no_schedule(node_info.node, tolerations)


def normalize(scores: dict[str, int], pre: Any) -> dict[str, int]:
    return default_normalize_score(scores, reverse=True)


