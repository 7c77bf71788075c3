"""The scheduler's view of a cluster: per-node pod lists and running totals, updated incrementally.

Mirrors kube-scheduler's framework.NodeInfo / snapshot: Requested, NonZeroRequested, UsedPorts,
PodsWithAffinity, PodsWithRequiredAntiAffinity. The greedy simulator, the verifier and explain all
judge pods against a ClusterState; where a pod sits is known only here (`node_of`), never from
Pod.node_name, so a pending pod can be placed without building a new Pod.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ..models.objects import Cluster, Node, Pod, Service, Workload
from ..models.selectors import LabelSelector


MAX_CHANGES = 200_000  # journal entries kept; older precomputes recount from scratch


def has_affinity(pod: Pod) -> bool:
    a = pod.affinity
    return bool(a.pod_required or a.pod_preferred or a.anti_required or a.anti_preferred)


@dataclass
class NodeInfo:
    node: Node
    pods: dict[str, Pod] = field(default_factory=dict)
    requested: Counter[str] = field(default_factory=Counter)
    nonzero_requested: Counter[str] = field(default_factory=Counter)
    # (host_ip, protocol, port) -> how many pods use it
    used_ports: Counter[tuple[str, str, int]] = field(default_factory=Counter)
    pods_with_affinity: dict[str, Pod] = field(default_factory=dict)
    pods_with_required_anti_affinity: dict[str, Pod] = field(default_factory=dict)
    generation: int = 0  # bumped on every change, so per-node caches know when to recount (upstream Generation)

    @property
    def name(self) -> str:
        return self.node.name

    def add(self, pod: Pod) -> None:
        self.generation += 1
        key = pod.key
        self.pods[key] = pod
        # plain dict arithmetic: Counter.update/subtract are Python loops behind an isinstance(Mapping) check,
        # the largest cost of building a 77,000-pod state (same totals, zeros kept as Counter keeps them)
        requested, nonzero = self.requested, self.nonzero_requested
        for r, q in pod.requests.items():
            requested[r] = requested.get(r, 0) + q
        for r, q in pod.nonzero_requests.items():
            nonzero[r] = nonzero.get(r, 0) + q
        for hp in pod.host_ports:
            self.used_ports[(hp.host_ip, hp.protocol, hp.port)] += 1
        if has_affinity(pod):
            self.pods_with_affinity[key] = pod
        if pod.affinity.anti_required:
            self.pods_with_required_anti_affinity[key] = pod

    def remove(self, pod: Pod) -> None:
        self.generation += 1
        del self.pods[pod.key]
        requested, nonzero = self.requested, self.nonzero_requested
        for r, q in pod.requests.items():
            requested[r] = requested.get(r, 0) - q
        for r, q in pod.nonzero_requests.items():
            nonzero[r] = nonzero.get(r, 0) - q
        for hp in pod.host_ports:
            self.used_ports[(hp.host_ip, hp.protocol, hp.port)] -= 1
        self.pods_with_affinity.pop(pod.key, None)
        self.pods_with_required_anti_affinity.pop(pod.key, None)


@dataclass
class ClusterState:
    """Nodes (in input order) with the pods bound to them, plus the cluster-wide objects rules read."""

    nodes: dict[str, NodeInfo]
    namespace_labels: dict[str, dict[str, str]]
    services: tuple[Service, ...] = ()
    workloads: tuple[Workload, ...] = ()
    node_of: dict[str, str] = field(default_factory=dict)  # pod key -> node name
    # Snapshot indexes (upstream HavePodsWithAffinityList / HavePodsWithRequiredAntiAffinityList): names of the
    # nodes holding at least one such pod, in no particular order; maintained by add/remove.
    nodes_with_affinity: set[str] = field(default_factory=set)
    nodes_with_required_anti_affinity: set[str] = field(default_factory=set)
    # Change journal: (pod, node name, +1 added / -1 removed), oldest first; changes_base is the absolute
    # position of changes[0] (old entries are dropped beyond MAX_CHANGES). Lets a plugin bring a precompute
    # made at position v up to date from changes_since(v) instead of recounting every node.
    changes: list[tuple[Pod, str, int]] = field(default_factory=list)
    changes_base: int = 0
    # Per-state memo for plugins' incremental precomputes (keyed by the plugin's own hashable keys).
    memo: dict[Any, Any] = field(default_factory=dict)

    @classmethod
    def from_cluster(cls, cluster: Cluster, pods: Iterable[tuple[Pod, str]] | None = None) -> "ClusterState":
        """A state holding `pods` (default: the cluster's existing pods on their spec.nodeName).

        Pods bound to a node absent from the input count nowhere, as in kube-scheduler's snapshot.
        """
        state = cls(
            nodes={n.name: NodeInfo(n) for n in cluster.nodes},
            namespace_labels={name: ns.labels for name, ns in cluster.namespaces.items()},
            services=cluster.services,
            workloads=cluster.workloads,
        )
        placed = pods if pods is not None else ((p, p.node_name) for p in cluster.pods)
        for pod, node_name in placed:
            if node_name in state.nodes:
                state.add(pod, node_name)
        return state

    @property
    def version(self) -> int:
        """Absolute position after the last change: a precompute made now is up to date at this version."""
        return self.changes_base + len(self.changes)

    def changes_since(self, version: int) -> list[tuple[Pod, str, int]] | None:
        """The changes after `version`, or None when they are no longer kept (recompute from scratch)."""
        if version < self.changes_base:
            return None
        return self.changes[version - self.changes_base:]

    def _record(self, pod: Pod, node_name: str, delta: int) -> None:
        self.changes.append((pod, node_name, delta))
        if len(self.changes) > MAX_CHANGES:
            drop = len(self.changes) // 2
            del self.changes[:drop]
            self.changes_base += drop

    def add(self, pod: Pod, node_name: str) -> None:
        info = self.nodes[node_name]
        info.add(pod)
        self.node_of[pod.key] = node_name
        self._record(pod, node_name, 1)
        if info.pods_with_affinity:
            self.nodes_with_affinity.add(node_name)
        if info.pods_with_required_anti_affinity:
            self.nodes_with_required_anti_affinity.add(node_name)

    def remove(self, pod: Pod) -> str:
        node_name = self.node_of.pop(pod.key)
        info = self.nodes[node_name]
        info.remove(pod)
        self._record(pod, node_name, -1)
        if not info.pods_with_affinity:
            self.nodes_with_affinity.discard(node_name)
        if not info.pods_with_required_anti_affinity:
            self.nodes_with_required_anti_affinity.discard(node_name)
        return node_name

    def all_pods(self) -> Iterable[tuple[Pod, NodeInfo]]:
        for info in self.nodes.values():
            for pod in info.pods.values():
                yield pod, info

    def node_infos(self) -> list[NodeInfo]:
        return list(self.nodes.values())


class PodIndex:
    """Every pod of a state by namespace and by label pair, to find a selector's candidates quickly."""

    def __init__(self, state: ClusterState) -> None:
        self.by_ns: dict[str, list[tuple[Pod, NodeInfo]]] = {}
        self.by_ns_label: dict[tuple[str, str, str], list[tuple[Pod, NodeInfo]]] = {}
        self.by_label: dict[tuple[str, str], list[tuple[Pod, NodeInfo]]] = {}
        self.all: list[tuple[Pod, NodeInfo]] = []
        for pod, info in state.all_pods():
            self.add(pod, info)

    def add(self, pod: Pod, info: NodeInfo) -> None:
        """Index one more pod (the index only grows: build it again after pods leave)."""
        entry = (pod, info)
        self.all.append(entry)
        self.by_ns.setdefault(pod.namespace, []).append(entry)
        for k, v in pod.labels.items():
            self.by_ns_label.setdefault((pod.namespace, k, v), []).append(entry)
            self.by_label.setdefault((k, v), []).append(entry)

    def candidates(self, selector: LabelSelector | None,
                   namespaces: Iterable[str] | None) -> list[tuple[Pod, NodeInfo]]:
        """A superset of the pods in `namespaces` (None: all) that `selector` matches; callers test each."""
        if selector is None:
            return []
        if namespaces is None:
            if not selector.match_labels:
                return self.all
            return min((self.by_label.get(pair, []) for pair in selector.match_labels), key=len)
        ns = list(namespaces)
        if not selector.match_labels:
            return [e for n in ns for e in self.by_ns.get(n, [])]
        lists = [[e for n in ns for e in self.by_ns_label.get((n, k, v), [])] for k, v in selector.match_labels]
        return min(lists, key=len)


# Undo logs for precomputed counts that are changed for one pod and put back (the verifier's judges).


def subtract(counts: dict[Any, int], key: Any, undo: list[tuple[dict[Any, int], Any, int]]) -> None:
    """counts[key] -= 1 in place (dropping it at 0, as the plugins never store zero pairs); remembered in undo."""
    value = counts[key]
    undo.append((counts, key, value))
    if value == 1:
        del counts[key]
    else:
        counts[key] = value - 1


def restore(undo: list[tuple[dict[Any, int], Any, int]]) -> None:
    for counts, key, value in reversed(undo):
        counts[key] = value
    undo.clear()
