"""NodeResourcesFit on a final state (Plugin.final_state_judge): every pod judged with itself removed, without
removing most of them.

Taking a pod off its node and asking whether it fits there again compares the node's final totals with its
allocatable: the pod is refused resource r iff want > cap - (used - want), i.e. iff used > cap, and refused
for the pod count iff the node holds more pods than it allows. A node within its allocatable on every resource
and within its pod count therefore passes every pod on it; the totals are read once per node. On any other
node (rare: a valid plan has none) the plugin's own Filter runs with the pod taken off, so the reasons are the
Filter's, word for word.
"""
from __future__ import annotations

from ...models.objects import Pod

from ..framework import Reason
from ..state import ClusterState, NodeInfo, PodIndex
from .filtering import PODS, filter_node


def over_allocatable(info: NodeInfo) -> bool:
    """Whether the node's final state exceeds its allocatable on any resource or its pod count."""
    allocatable = info.node.allocatable
    if len(info.pods) > allocatable.get(PODS, 0):
        return True
    return any(q > allocatable.get(r, 0) for r, q in info.requested.items() if q > 0)


class Judge:
    def __init__(self, state: ClusterState, index: PodIndex) -> None:
        self.state = state
        self.over = {name for name, info in state.nodes.items() if over_allocatable(info)}

    def filter(self, pod: Pod, info: NodeInfo) -> list[Reason]:
        if info.name not in self.over:
            return []
        node_name = self.state.remove(pod)
        try:
            return filter_node(pod, pod.requests, info, self.state)
        finally:
            self.state.add(pod, node_name)
