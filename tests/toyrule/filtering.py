"""The predicate: a node labelled example.com/max-pods takes at most that many pods."""
from __future__ import annotations

from typing import Any

from podplan.models.objects import Node, Pod
from podplan.optimizer.framework import Reason
from podplan.optimizer.state import ClusterState, NodeInfo

NAME = "ExampleMaxPods"
LABEL = "example.com/max-pods"
ERR_REASON = "node(s) hold the most pods their example.com/max-pods label allows"


def limit(node: Node) -> int | None:
    value = node.labels.get(LABEL)
    return int(value) if value is not None and value.isdigit() else None


def filter_node(pod: Pod, pre: Any, node_info: NodeInfo, state: ClusterState) -> list[Reason]:
    most = limit(node_info.node)
    if most is None or len(node_info.pods) + 1 <= most:
        return []
    return [Reason(NAME, ERR_REASON)]
