"""NodeResourcesFit Filter: pod count and every requested resource against allocatable minus requested.

Reproduces fitsRequest / Filter of kubernetes/kubernetes pkg/scheduler/framework/plugins/noderesources/fit.go
(v1.34+ shape): "Too many pods" when the node is full; "Insufficient <resource>" for cpu, memory,
ephemeral-storage and every scalar resource (extended, hugepages-*, *kubernetes.io/*, attachable-volumes-*)
the pod requests a positive amount of; all reasons are returned. The node's status is
UnschedulableAndUnresolvable when some request exceeds the node's whole allocatable (preemption cannot
help), so every reason of that node carries unresolvable=True then. The pod's effective requests
(init containers, sidecars, overhead, pod-level resources) are Pod.requests, computed by models.parse.
A profile's ignoredResources / ignoredResourceGroups are applied by the package's `new(args)` (its PreFilter
leaves those extended resources out of the requests Filter checks). Knowing differences: no DRA-backed
extended resources; the scalar reasons come in sorted name order (upstream: Go map order, i.e. random).
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from functools import lru_cache
from dataclasses import dataclass
from typing import Any

from ...models.objects import Pod

from ..framework import Reason
from ..state import ClusterState, NodeInfo

NAME = "NodeResourcesFit"

ERR_REASON_TOO_MANY_PODS = "Too many pods"
ERR_REASON_INSUFFICIENT = "Insufficient {resource}"  # fmt.Sprintf("Insufficient %v", resourceName)

PODS = "pods"
CPU = "cpu"
MEMORY = "memory"
EPHEMERAL_STORAGE = "ephemeral-storage"
FIRST_CLASS = (CPU, MEMORY, EPHEMERAL_STORAGE)

_NATIVE_PREFIX = "kubernetes.io/"  # v1.ResourceDefaultNamespacePrefix
_REQUESTS_PREFIX = "requests."  # v1.DefaultResourceRequestsPrefix
_QUALIFIED_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


def _is_qualified_name(value: str) -> bool:
    """apimachinery validation.IsQualifiedName: [prefix/]name."""
    parts = value.split("/")
    if len(parts) == 1:
        prefix, name = "", parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix or len(prefix) > 253 or not _DNS1123_SUBDOMAIN.match(prefix):
            return False
    else:
        return False
    return 0 < len(name) <= 63 and bool(_QUALIFIED_NAME.match(name))


def is_extended_resource_name(name: str) -> bool:
    """v1helper.IsExtendedResourceName: a domain-prefixed name outside kubernetes.io/."""
    native = "/" not in name or _NATIVE_PREFIX in name
    if native or name.startswith(_REQUESTS_PREFIX):
        return False
    return _is_qualified_name(_REQUESTS_PREFIX + name)


@lru_cache(maxsize=1024)  # called per node per pod by Filter and Score; names are few
def is_scalar_resource_name(name: str) -> bool:
    """schedutil.IsScalarResourceName: extended, hugepages-*, *kubernetes.io/*, attachable-volumes-*."""
    return (is_extended_resource_name(name) or name.startswith("hugepages-") or _NATIVE_PREFIX in name
            or name.startswith("attachable-volumes-"))


@dataclass(frozen=True)
class InsufficientResource:
    resource: str
    reason: str
    requested: int
    used: int
    capacity: int
    unresolvable: bool = False


def insufficient_resources(requests: Mapping[str, int], node_info: NodeInfo) -> list[InsufficientResource]:
    """Everything the node lacks for a pod with these effective requests, in upstream's order."""
    out: list[InsufficientResource] = []
    allocatable = node_info.node.allocatable
    used = node_info.requested
    allowed_pods = allocatable.get(PODS, 0)
    if len(node_info.pods) + 1 > allowed_pods:
        out.append(InsufficientResource(PODS, ERR_REASON_TOO_MANY_PODS, 1, len(node_info.pods), allowed_pods))
    names = [r for r in FIRST_CLASS if requests.get(r, 0) > 0]
    # Zero requests are skipped (upstream: "Skip in case request quantity is zero").
    names += sorted(r for r, q in requests.items() if q > 0 and r not in FIRST_CLASS and is_scalar_resource_name(r))
    for resource in names:
        want, have, cap = requests[resource], used.get(resource, 0), allocatable.get(resource, 0)
        if want > cap - have:
            out.append(InsufficientResource(resource, ERR_REASON_INSUFFICIENT.format(resource=resource),
                                            want, have, cap, unresolvable=want > cap))
    return out


def fits(pod: Pod, node_info: NodeInfo) -> bool:
    return not insufficient_resources(pod.requests, node_info)


def pre_filter(pod: Pod, state: ClusterState) -> Mapping[str, int]:
    """Upstream computePodResourceRequest; podplan's parser already folded it into Pod.requests."""
    return pod.requests


def filter_node(pod: Pod, pre: Any, node_info: NodeInfo, state: ClusterState) -> list[Reason]:
    requests = pre if pre is not None else pod.requests
    short = insufficient_resources(requests, node_info)
    unresolvable = any(s.unresolvable for s in short)  # one status per node: its code covers every reason
    return [Reason(NAME, s.reason, unresolvable) for s in short]
