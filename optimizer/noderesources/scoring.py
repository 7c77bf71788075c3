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

The other scoring strategies of a KubeSchedulerConfiguration (models.schedulerconfig), as pure functions
beside the default ones (most_allocated.go, requested_to_capacity_ratio.go, helper/shape_score.go):
- MostAllocated (non-zero requests): per resource min(requested, allocatable) * 100 // allocatable,
  weighted mean truncated.
- RequestedToCapacityRatio (non-zero requests): utilization = requested * 100 // allocatable (100 when
  over), mapped through the broken linear shape whose scores (0..10) are scaled by 10 to 0..100; only
  resources scoring above 0 enter the weighted mean, which is rounded half away from zero (math.Round).
- BalancedAllocation over any resource list (its weights must be 1, so they play no part).
`fit_scorer(strategy)` and `balanced_scorer(resources)` give the PreScore/Score pair a Plugin takes.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from ...models.objects import Pod
from ...models.schedulerconfig import (LEAST_ALLOCATED, MAX_CUSTOM_PRIORITY_SCORE, MOST_ALLOCATED,
                                       REQUESTED_TO_CAPACITY_RATIO, ScoringStrategy)

from ..framework import MAX_NODE_SCORE
from ..state import ClusterState, NodeInfo
from .filtering import CPU, EPHEMERAL_STORAGE, MEMORY, is_scalar_resource_name

# config.ResourceSpec defaults for NodeResourcesFit (LeastAllocated) and NodeResourcesBalancedAllocation.
DEFAULT_RESOURCES: tuple[tuple[str, int], ...] = ((CPU, 1), (MEMORY, 1))


@dataclass(frozen=True)
class PreScoreState:
    pod_requests: tuple[int, ...]  # in the order of the resources scored (DEFAULT_RESOURCES by default)
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


def _weighted_mean(node_info: NodeInfo, pod_requests: Sequence[int], resources: Sequence[tuple[str, int]],
                   per_resource: Callable[[int, int], int]) -> int:
    """Upstream's resource scorers: the weighted mean of a per-resource score over the resources the node has."""
    requested, allocatable = _vectors(node_info, pod_requests, False, resources)
    node_score = weight_sum = 0
    for i, (_, weight) in enumerate(resources):
        if allocatable[i] == 0:
            continue
        node_score += per_resource(requested[i], allocatable[i]) * weight
        weight_sum += weight
    return node_score // weight_sum if weight_sum else 0


def least_allocated_score(node_info: NodeInfo, pod_requests: Sequence[int],
                          resources: Sequence[tuple[str, int]] = DEFAULT_RESOURCES) -> int:
    return _weighted_mean(node_info, pod_requests, resources, least_requested_score)


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


def most_requested_score(requested: int, capacity: int) -> int:
    """mostRequestedScore: a node asked for more than it has scores as full, not as 0."""
    if capacity == 0:
        return 0
    return min(requested, capacity) * MAX_NODE_SCORE // capacity


def most_allocated_score(node_info: NodeInfo, pod_requests: Sequence[int],
                         resources: Sequence[tuple[str, int]] = DEFAULT_RESOURCES) -> int:
    """mostResourceScorer: weighted mean of most_requested_score over the resources the node has."""
    return _weighted_mean(node_info, pod_requests, resources, most_requested_score)


# Shape scores are given on 0..MAX_CUSTOM_PRIORITY_SCORE (10) and scaled to 0..MAX_NODE_SCORE.
MAX_UTILIZATION = 100


def _go_div(a: int, b: int) -> int:
    """Go's integer division truncates toward zero; Python's // floors (they differ on a falling shape)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def broken_linear(shape: Sequence[tuple[int, int]], p: int) -> int:
    """helper.BuildBrokenLinearFunction: piecewise linear through (utilization, score) points sorted by
    utilization; flat before the first and after the last point."""
    for i, (u, score) in enumerate(shape):
        if p <= u:
            if i == 0:
                return score
            u0, s0 = shape[i - 1]
            return s0 + _go_div((score - s0) * (p - u0), u - u0)
    return shape[-1][1]


def _round_half_away(x: float) -> int:
    """Go's math.Round (Python's round() rounds half to even)."""
    return int(math.floor(x + 0.5)) if x >= 0 else -int(math.floor(-x + 0.5))


def requested_to_capacity_ratio_score(node_info: NodeInfo, pod_requests: Sequence[int],
                                      resources: Sequence[tuple[str, int]],
                                      shape: Sequence[tuple[int, int]]) -> int:
    """requestedToCapacityRatioScorer; `shape` holds (utilization 0..100, score 0..10) as configured."""
    scaled = [(u, score * (MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE)) for u, score in shape]
    requested, allocatable = _vectors(node_info, pod_requests, False, resources)
    node_score = weight_sum = 0
    for i, (_, weight) in enumerate(resources):
        if allocatable[i] == 0:
            continue
        if requested[i] > allocatable[i]:
            utilization = MAX_UTILIZATION
        else:
            utilization = max(requested[i], 0) * MAX_UTILIZATION // allocatable[i]
        resource_score = broken_linear(scaled, utilization)
        if resource_score > 0:  # a resource scoring 0 leaves the mean (upstream's choice, kept)
            node_score += resource_score * weight
            weight_sum += weight
    return _round_half_away(node_score / weight_sum) if weight_sum else 0


def strategy_score(strategy: ScoringStrategy, node_info: NodeInfo, pod_requests: Sequence[int]) -> int:
    """NodeResourcesFit's Score under a configured scoring strategy; pod_requests in strategy.resources order."""
    resources = strategy.resource_weights
    if strategy.type == MOST_ALLOCATED:
        return most_allocated_score(node_info, pod_requests, resources)
    if strategy.type == REQUESTED_TO_CAPACITY_RATIO:
        return requested_to_capacity_ratio_score(node_info, pod_requests, resources, strategy.shape)
    assert strategy.type == LEAST_ALLOCATED, strategy.type
    return least_allocated_score(node_info, pod_requests, resources)


PreScoreFn = Callable[[Pod, ClusterState, Sequence[NodeInfo]], PreScoreState]
ScoreFn = Callable[[Pod, "PreScoreState | None", NodeInfo, ClusterState], int]


def fit_scorer(strategy: ScoringStrategy) -> tuple[PreScoreFn, ScoreFn]:
    """NodeResourcesFit's PreScore and Score for a configured strategy (all three use non-zero requests)."""
    resources = strategy.resource_weights

    def pre_score(pod: Pod, state: ClusterState, feasible: Sequence[NodeInfo]) -> PreScoreState:
        return PreScoreState(pod_request_list(pod, False, resources))

    def score(pod: Pod, pre: PreScoreState | None, node_info: NodeInfo, state: ClusterState) -> int:
        pre = pre or pre_score(pod, state, ())
        return strategy_score(strategy, node_info, pre.pod_requests)
    return pre_score, score


def balanced_scorer(resources: Sequence[tuple[str, int]]) -> tuple[PreScoreFn, ScoreFn]:
    """NodeResourcesBalancedAllocation's PreScore and Score over a configured resource list."""
    def pre_score(pod: Pod, state: ClusterState, feasible: Sequence[NodeInfo]) -> PreScoreState:
        requests = pod_request_list(pod, True, resources)
        return PreScoreState(requests, skip=not any(requests))  # requests none of them: upstream Skip

    def score(pod: Pod, pre: PreScoreState | None, node_info: NodeInfo, state: ClusterState) -> int:
        pre = pre or pre_score(pod, state, ())
        return 0 if pre.skip else balanced_allocation_score(node_info, pre.pod_requests, resources)
    return pre_score, score


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
