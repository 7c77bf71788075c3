"""NodePorts over every node at once. Host ports are rare: only the nodes holding a pod with host ports can
reject a pod, so the plain predicate runs on those nodes only (the others pass). Filter only."""
from __future__ import annotations

import numpy as np

from ...models.objects import Pod
from ..framework import Reason
from ..nodearrays import NodeArrays
from ..state import ClusterState
from .filtering import filter_node


class NodePortsVector:
    def __init__(self, state: ClusterState, arrays: NodeArrays) -> None:
        self.state, self.arrays = state, arrays
        self.infos = list(state.nodes.values())
        self.with_ports: dict[int, int] = {}  # node index -> pods with host ports on it
        for i, info in enumerate(self.infos):
            for pod in info.pods.values():
                self.add(pod, i)

    def filter(self, pod: Pod) -> np.ndarray | None:
        if not pod.host_ports or not self.with_ports:
            return None
        mask = np.ones(self.arrays.size, bool)
        for i in self.with_ports:
            mask[i] = not filter_node(pod, None, self.infos[i], self.state)
        return mask

    def reasons(self, pod: Pod, node_index: int) -> tuple[Reason, ...]:
        return tuple(filter_node(pod, None, self.infos[node_index], self.state))

    def add(self, pod: Pod, node_index: int) -> None:
        if pod.host_ports:
            self.with_ports[node_index] = self.with_ports.get(node_index, 0) + 1

    def remove(self, pod: Pod, node_index: int) -> None:
        if pod.host_ports:
            self.with_ports[node_index] -= 1
            if not self.with_ports[node_index]:
                del self.with_ports[node_index]


def new(state: ClusterState, arrays: NodeArrays) -> NodePortsVector:
    return NodePortsVector(state, arrays)
