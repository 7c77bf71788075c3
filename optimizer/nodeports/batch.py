"""NodePorts on a final state (Plugin.final_state_judge): a pod without host ports passes on any node (the Filter
looks at nothing else), so only pods with host ports are taken off their node and judged by the Filter itself."""
from __future__ import annotations

from ...models.objects import Pod

from ..framework import Reason
from ..state import ClusterState, NodeInfo, PodIndex
from .filtering import filter_node


class Judge:
    def __init__(self, state: ClusterState, index: PodIndex) -> None:
        self.state = state

    def filter(self, pod: Pod, info: NodeInfo) -> list[Reason]:
        if not pod.host_ports:
            return []
        node_name = self.state.remove(pod)
        try:
            return filter_node(pod, pod.host_ports, info, self.state)
        finally:
            self.state.add(pod, node_name)
