"""NodeResourcesFit's LeastAllocated score and NodeResourcesBalancedAllocation's score.

Reproduces kubernetes/kubernetes pkg/scheduler/framework/plugins/noderesources/resource_allocation.go
(calculateResourceAllocatableRequest, calculatePodResourceRequest), least_allocated.go and
balanced_allocation.go, with the default profile's resources: cpu and memory, weight 1 each.

- LeastAllocated (useRequested=false): cpu/memory use the non-zero requests (100m / 200Mi per container
  that requests none) for the pod (Pod.nonzero_requests) and the node (NodeInfo.nonzero_requested).
  Per resource (allocatable - requested) * 100 // allocatable, 0 when over; node score = weighted mean,
  truncated. No NormalizeScore.
- BalancedAllocation (useRequested=true): actual requests (Pod.requests, NodeInfo.requested); fraction
  requested/allocatable capped at 1; score = int((1 - std) * 100) with std = |f1 - f2| / 2 for two
  resources, the population standard deviation for more. No NormalizeScore. A pod that requests none
  of the resources makes upstream's PreScore return Skip (kubernetes#129138); here every node then scores 0,
  which ranks nodes identically.
Resources with zero allocatable are left out of both scores; a scalar resource the pod does not request
is too. Knowing difference: no DRA-backed extended resources.
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ...models.objects import Pod

from ..framework import MAX_NODE_SCORE
from ..state import ClusterState, NodeInfo
from .filtering import CPU, EPHEMERAL_STORAGE, MEMORY, is_scalar_resource_name

# config.ResourceSpec defaults for NodeResourcesFit (LeastAllocated) and NodeResourcesBalancedAllocation.
DEFAULT_RESOURCES: tuple[tuple[str, int], ...] = ((CPU, 1), (MEMORY, 1))


@dataclass(frozen=True)
class PreScoreState:
    pod_requests: tuple[int, ...]  # in DEFAULT_RESOURCES order
    skip: bool = False


def pod_request_list(pod: Pod, use_requested: bool,
                     resources: Sequence[tuple[str, int]] = DEFAULT_RESOURCES) -> tuple[int, ...]:
    """calculatePodResourceRequestList: non-zero requests unless use_requested."""
    source = pod.requests if use_requested else pod.nonzero_requests
    return tuple(source.get(name, 0) for name, _ in resources)


def allocatable_and_requested(node_info: NodeInfo, resource: str, pod_request: int,
                              use_requested: bool) -> tuple[int, int]:
    """calculateResourceAllocatableRequest: (allocatable, node's requested + pod's request), (0, 0) to skip."""
    if pod_request == 0 and is_scalar_resource_name(resource):
        return 0, 0
    allocatable = node_info.node.allocatable
    if resource in (CPU, MEMORY):
        requested: Mapping[str, int] = node_info.requested if use_requested else node_info.nonzero_requested
        return allocatable.get(resource, 0), requested.get(resource, 0) + pod_request
    if resource == EPHEMERAL_STORAGE:
        return allocatable.get(resource, 0), node_info.requested.get(resource, 0) + pod_request
    if resource in allocatable:
        return allocatable[resource], node_info.requested.get(resource, 0) + pod_request
    return 0, 0


def _vectors(node_info: NodeInfo, pod_requests: Sequence[int], use_requested: bool,
             resources: Sequence[tuple[str, int]]) -> tuple[list[int], list[int]]:
    requested = [0] * len(resources)
    allocatable = [0] * len(resources)
    for i, (name, _) in enumerate(resources):
        alloc, req = allocatable_and_requested(node_info, name, pod_requests[i], use_requested)
        if alloc == 0:
            continue
        allocatable[i], requested[i] = alloc, req
    return requested, allocatable


def least_requested_score(requested: int, capacity: int) -> int:
    if capacity == 0 or requested > capacity:
        return 0
    return (capacity - requested) * MAX_NODE_SCORE // capacity


def least_allocated_score(node_info: NodeInfo, pod_requests: Sequence[int],
                          resources: Sequence[tuple[str, int]] = DEFAULT_RESOURCES) -> int:
    requested, allocatable = _vectors(node_info, pod_requests, False, resources)
    node_score = weight_sum = 0
    for i, (_, weight) in enumerate(resources):
        if allocatable[i] == 0:
            continue
        node_score += least_requested_score(requested[i], allocatable[i]) * weight
        weight_sum += weight
    return node_score // weight_sum if weight_sum else 0


def balanced_resource_score(requested: Sequence[int], allocatable: Sequence[int]) -> int:
    """balancedResourceScorer, in float64 as upstream (Python floats are IEEE doubles too)."""
    fractions: list[float] = []
    total = 0.0
    for req, alloc in zip(requested, allocatable):
        if alloc == 0:
            continue
        fraction = min(float(req) / float(alloc), 1.0)
        total += fraction
        fractions.append(fraction)
    std = 0.0
    if len(fractions) == 2:
        std = abs((fractions[0] - fractions[1]) / 2)
    elif len(fractions) > 2:
        mean = total / len(fractions)
        acc = 0.0
        for f in fractions:
            acc = acc + (f - mean) * (f - mean)
        std = math.sqrt(acc / len(fractions))
    return int((1 - std) * float(MAX_NODE_SCORE))  # int() truncates toward zero like Go's int64()


def balanced_allocation_score(node_info: NodeInfo, pod_requests: Sequence[int],
                              resources: Sequence[tuple[str, int]] = DEFAULT_RESOURCES) -> int:
    requested, allocatable = _vectors(node_info, pod_requests, True, resources)
    return balanced_resource_score(requested, allocatable)


# Plugin entry points -------------------------------------------------------------------------------

def fit_pre_score(pod: Pod, state: ClusterState, feasible: Sequence[NodeInfo]) -> PreScoreState:
    return PreScoreState(pod_request_list(pod, use_requested=False))


def fit_score(pod: Pod, pre: PreScoreState | None, node_info: NodeInfo, state: ClusterState) -> int:
    pre = pre or fit_pre_score(pod, state, ())
    return least_allocated_score(node_info, pre.pod_requests)


def balanced_pre_score(pod: Pod, state: ClusterState, feasible: Sequence[NodeInfo]) -> PreScoreState:
    requests = pod_request_list(pod, use_requested=True)
    return PreScoreState(requests, skip=not any(requests))  # best-effort pod: upstream Skip


def balanced_score(pod: Pod, pre: PreScoreState | None, node_info: NodeInfo, state: ClusterState) -> int:
    pre = pre or balanced_pre_score(pod, state, ())
    if pre.skip:
        return 0
    return balanced_allocation_score(node_info, pre.pod_requests)


def identity(scores: dict[str, int], pre: object) -> dict[str, int]:
    """Neither plugin has a NormalizeScore."""
    return dict(scores)
