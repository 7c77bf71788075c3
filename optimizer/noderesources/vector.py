"""NodeResourcesFit (Filter + LeastAllocated Score) and NodeResourcesBalancedAllocation (Score) over every node
at once, from NodeArrays' allocatable / requested / non-zero requested matrices (kept up to date by NodeArrays
itself, so add/remove have nothing to do here). Same arithmetic as filtering.py and scoring.py: integer
LeastAllocated, float64 BalancedAllocation in the same order of operations. Neither plugin normalizes, so
score() gives the plugin's final score. `new` is NodeResourcesFit's factory, `new_balanced`
NodeResourcesBalancedAllocation's.
"""
from __future__ import annotations

import numpy as np

from ...models.objects import Pod
from ..framework import MAX_NODE_SCORE, Reason
from ..nodearrays import NodeArrays
from ..state import ClusterState
from .filtering import (ERR_REASON_INSUFFICIENT, ERR_REASON_TOO_MANY_PODS, FIRST_CLASS, NAME, filter_node,
                        is_scalar_resource_name)
from .scoring import DEFAULT_RESOURCES, pod_request_list


class FitVector:
    def __init__(self, state: ClusterState, arrays: NodeArrays) -> None:
        self.state, self.arrays = state, arrays
        self.infos = list(state.nodes.values())

    def filter(self, pod: Pod) -> np.ndarray | None:
        a = self.arrays
        mask = a.pod_count < a.allowed_pods
        for r, q in pod.requests.items():
            if q > 0 and (r in FIRST_CLASS or is_scalar_resource_name(r)):
                col = a.column(r)
                mask &= a.allocatable[:, col] - a.requested[:, col] >= q
        return mask

    def reasons(self, pod: Pod, node_index: int) -> tuple[Reason, ...]:
        return tuple(filter_node(pod, None, self.infos[node_index], self.state))

    def reasons_many(self, pod: Pod, nodes: np.ndarray) -> list[tuple[Reason, ...]]:
        """reasons() of several nodes at once (FitError's message on large clusters): each node's shortfalls as
        a bit pattern, the reasons built once per pattern, in insufficient_resources' order."""
        a = self.arrays
        names = [r for r in FIRST_CLASS if pod.requests.get(r, 0) > 0]
        names += sorted(r for r, q in pod.requests.items()
                        if q > 0 and r not in FIRST_CLASS and is_scalar_resource_name(r))
        pattern = (a.pod_count[nodes] + 1 > a.allowed_pods[nodes]).astype(np.int64)
        unresolvable = np.zeros(len(nodes), bool)
        for bit, r in enumerate(names, 1):
            col, want = a.column(r), pod.requests[r]
            cap = a.allocatable[nodes, col]
            pattern |= (want > cap - a.requested[nodes, col]).astype(np.int64) << bit
            unresolvable |= want > cap
        pattern |= unresolvable.astype(np.int64) << (len(names) + 1)
        texts = [ERR_REASON_TOO_MANY_PODS] + [ERR_REASON_INSUFFICIENT.format(resource=r) for r in names]
        built: dict[int, tuple[Reason, ...]] = {}
        for p in np.unique(pattern).tolist():
            flag = bool(p >> (len(names) + 1) & 1)
            built[p] = tuple(Reason(NAME, text, flag) for bit, text in enumerate(texts) if p >> bit & 1)
        return [built[p] for p in pattern.tolist()]

    def score(self, pod: Pod, candidates: np.ndarray) -> np.ndarray:
        """LeastAllocated on the non-zero requests (least_allocated_score)."""
        a = self.arrays
        total = np.zeros(len(candidates), np.int64)
        weights = np.zeros(len(candidates), np.int64)
        for (name, weight), want in zip(DEFAULT_RESOURCES, pod_request_list(pod, use_requested=False)):
            col = a.column(name)
            alloc = a.allocatable[candidates, col]
            requested = a.nonzero[candidates, col] + want
            listed = alloc != 0
            safe = np.where(listed, alloc, 1)
            score = np.where(listed & (requested <= alloc), (alloc - requested) * MAX_NODE_SCORE // safe, 0)
            total += score * weight
            weights += np.where(listed, weight, 0)
        return np.where(weights > 0, total // np.maximum(weights, 1), 0)


class BalancedVector:
    def __init__(self, state: ClusterState, arrays: NodeArrays) -> None:
        self.arrays = arrays

    def score(self, pod: Pod, candidates: np.ndarray) -> np.ndarray:
        """balanced_resource_score on the actual requests; 0 everywhere for a pod requesting none (Skip)."""
        wants = pod_request_list(pod, use_requested=True)
        if not any(wants):
            return np.zeros(len(candidates), np.int64)
        a = self.arrays
        fractions, listed = [], []
        for (name, _), want in zip(DEFAULT_RESOURCES, wants):
            col = a.column(name)
            alloc = a.allocatable[candidates, col]
            requested = a.requested[candidates, col] + want
            ok = alloc != 0
            fractions.append(np.minimum(requested.astype(np.float64) / np.where(ok, alloc, 1).astype(np.float64),
                                        1.0))
            listed.append(ok)
        assert len(fractions) == 2  # DEFAULT_RESOURCES: cpu and memory
        both = listed[0] & listed[1]
        std = np.where(both, np.abs((fractions[0] - fractions[1]) / 2), 0.0)
        return np.trunc((1 - std) * float(MAX_NODE_SCORE)).astype(np.int64)


def new(state: ClusterState, arrays: NodeArrays) -> FitVector:
    return FitVector(state, arrays)


def new_balanced(state: ClusterState, arrays: NodeArrays) -> BalancedVector:
    return BalancedVector(state, arrays)
