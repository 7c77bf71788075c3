"""NodePorts: a pod's host ports must be free on the node.

Reproduces kubernetes/kubernetes pkg/scheduler/framework/plugins/nodeports/node_ports.go with
framework.HostPortInfo.CheckConflict (pkg/scheduler/framework/types.go): an empty host IP means 0.0.0.0
and an empty protocol TCP; a wanted 0.0.0.0 port conflicts with that (protocol, port) on any IP, and a
wanted specific IP conflicts with the same IP or 0.0.0.0; ports <= 0 never conflict. Status Unschedulable
(preemption may free the port). Which ports a pod uses (containers and restartable init containers with
hostPort > 0) is Pod.host_ports, built by models.parse. No knowing difference.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ...models.objects import HostPort, Pod

from ..framework import Reason
from ..state import ClusterState, NodeInfo

NAME = "NodePorts"

ERR_REASON = "node(s) didn't have free ports for the requested pod ports"

DEFAULT_BIND_ALL_HOST_IP = "0.0.0.0"


def sanitize(hp: HostPort) -> tuple[str, str, int]:
    return (hp.host_ip or DEFAULT_BIND_ALL_HOST_IP, hp.protocol or "TCP", hp.port)


def check_conflict(used: Mapping[tuple[str, str, int], int], host_ip: str, protocol: str, port: int) -> bool:
    """HostPortInfo.CheckConflict over NodeInfo.used_ports ((ip, protocol, port) -> pods using it)."""
    if port <= 0:
        return False
    ip = host_ip or DEFAULT_BIND_ALL_HOST_IP
    proto = protocol or "TCP"
    for (used_ip, used_proto, used_port), count in used.items():
        if count <= 0 or used_port != port or (used_proto or "TCP") != proto:
            continue
        used_ip = used_ip or DEFAULT_BIND_ALL_HOST_IP
        # 0.0.0.0 wanted: any IP holding the port conflicts; a specific IP: that IP or 0.0.0.0.
        if ip == DEFAULT_BIND_ALL_HOST_IP or used_ip in (DEFAULT_BIND_ALL_HOST_IP, ip):
            return True
    return False


def fits_ports(wanted: Iterable[HostPort], node_info: NodeInfo) -> bool:
    used = node_info.used_ports
    return not any(check_conflict(used, *sanitize(hp)) for hp in wanted)


def pre_filter(pod: Pod, state: ClusterState) -> tuple[HostPort, ...]:
    return pod.host_ports


def filter_node(pod: Pod, pre: Any, node_info: NodeInfo, state: ClusterState) -> list[Reason]:
    wanted = pre if pre is not None else pod.host_ports
    if not wanted or fits_ports(wanted, node_info):
        return []
    return [Reason(NAME, ERR_REASON)]


