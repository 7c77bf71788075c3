"""NodeUnschedulable: a cordoned node (spec.unschedulable) takes only pods that tolerate
node.kubernetes.io/unschedulable:NoSchedule.

Reproduces kubernetes/kubernetes pkg/scheduler/framework/plugins/nodeunschedulable/node_unschedulable.go
(Filter only, UnschedulableAndUnresolvable). No knowing difference.
"""
from __future__ import annotations

from typing import Any

from ...models.objects import Node, Pod
from ...models.taints import Taint, tolerated

from ..framework import Reason
from ..state import ClusterState, NodeInfo

NAME = "NodeUnschedulable"

ERR_REASON_UNSCHEDULABLE = "node(s) were unschedulable"

TAINT_NODE_UNSCHEDULABLE = "node.kubernetes.io/unschedulable"

# The taint a pod must tolerate to land on a cordoned node (v1.TaintNodeUnschedulable, NoSchedule, no value).
_UNSCHEDULABLE_TAINT = Taint(TAINT_NODE_UNSCHEDULABLE, "", "NoSchedule")


def fits(pod: Pod, node: Node) -> bool:
    return not node.unschedulable or tolerated(_UNSCHEDULABLE_TAINT, pod.tolerations)


def filter_node(pod: Pod, pre: Any, node_info: NodeInfo, state: ClusterState) -> list[Reason]:
    if fits(pod, node_info.node):
        return []
    return [Reason(NAME, ERR_REASON_UNSCHEDULABLE, unresolvable=True)]


