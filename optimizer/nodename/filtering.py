"""NodeName: a pod that names a node in spec.nodeName fits only that node.

Reproduces kubernetes/kubernetes pkg/scheduler/framework/plugins/nodename/node_name.go (Filter only,
UnschedulableAndUnresolvable). Knowing difference: none in the predicate. In podplan a pending pod has
node_name "" and so passes every node; a pod whose spec.nodeName is set is an existing pod, so this
filter matters mostly to the verifier, which judges final states where a pod sits where it names.
"""
from __future__ import annotations

from typing import Any

from ...models.objects import Pod

from ..framework import Reason
from ..state import ClusterState, NodeInfo

NAME = "NodeName"

ERR_REASON = "node(s) didn't match the requested node name"


def fits(pod: Pod, node_name: str) -> bool:
    """Upstream nodename.Fits: no requested name, or the requested name is this node."""
    return not pod.node_name or pod.node_name == node_name


def filter_node(pod: Pod, pre: Any, node_info: NodeInfo, state: ClusterState) -> list[Reason]:
    if fits(pod, node_info.name):
        return []
    return [Reason(NAME, ERR_REASON, unresolvable=True)]


