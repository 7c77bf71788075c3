"""The descheduler's DefaultEvictor (pkg/framework/plugins/defaultevictor) and its eviction limits
(pkg/descheduler/evictions): Filter (may this pod ever be evicted), PreEvictionFilter (nodeFit,
namespaceLabelSelector) and Evict (the policy's per-node, per-namespace and total limits, counted over one
descheduling cycle, every profile together)."""
from __future__ import annotations

import datetime as dt
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from ...models.objects import Cluster, Node, Pod
from ...models.taints import first_untolerated
from ..nodeaffinity.filtering import required_matches
from .policy import DeschedulerPolicy, EvictorArgs

EVICT_ANNOTATION = "descheduler.alpha.kubernetes.io/evict"
NO_EVICTION_ANNOTATION = "descheduler.alpha.kubernetes.io/prefer-no-eviction"


class NodeLimit(Exception):
    """maxNoOfPodsToEvictPerNode reached for the pod's node."""


class NamespaceLimit(Exception):
    """maxNoOfPodsToEvictPerNamespace reached for the pod's namespace."""


class TotalLimit(Exception):
    """maxNoOfPodsToEvictTotal reached: the cycle evicts nothing more."""


class Refused(Exception):
    """The Eviction API refuses the eviction (429: a PodDisruptionBudget has no disruption left this cycle, or
    more than one PDB guards the pod); the plugin logs it and goes on with the next pod, as upstream's does."""


def _phase(pod: Pod) -> str:
    status = (pod.raw or {}).get("status") or {}
    return str(status.get("phase") or "Running")


def _has_pvc(pod: Pod) -> bool:
    spec = (pod.raw or {}).get("spec") or {}
    return any("persistentVolumeClaim" in (v or {}) for v in spec.get("volumes") or ())


def _start(pod: Pod) -> dt.datetime | None:
    if not pod.start_time:
        return None
    try:
        return dt.datetime.fromisoformat(pod.start_time.replace("Z", "+00:00"))
    except ValueError:
        return None


@dataclass
class Evictor:
    """One profile's DefaultEvictor over one cycle's `Counts` (shared by the profiles)."""
    args: EvictorArgs
    cluster: Cluster
    counts: "Counts"
    nodes: Sequence[Node]  # the descheduler's nodes (ready, the policy's nodeSelector)
    pods_on: Mapping[str, list[Pod]]  # node -> its pods now (the cycle's evictions removed)
    now: dt.datetime | None = None
    threshold: int = 0
    replicas: Counter = field(default_factory=Counter)

    def __post_init__(self) -> None:
        self.threshold = self.args.priority_threshold
        name = self.args.priority_threshold_name
        if name:
            pc = self.cluster.priority_classes.get(name)
            if pc is None:
                from ...models.errors import PodplanError
                raise PodplanError(f"DefaultEvictor priorityThreshold.name: PriorityClass {name!r} is not in the input")
            self.threshold = pc.value
        for p in list(self.cluster.pods) + list(self.cluster.pending):
            if len(p.owner_refs) == 1:
                self.replicas[p.owner_refs[0].uid or p.owner_refs[0].name] += 1
        if self.now is None:
            starts = [s for s in (_start(p) for p in self.cluster.pods) if s is not None]
            # the input's newest start time stands for "now": the ages then read as the snapshot's
            self.now = max(starts) if starts else None

    def why_not(self, pod: Pod) -> str:
        """Filter: "" when the pod may be evicted, else the first reason it may not (upstream's checks)."""
        a = self.args
        if EVICT_ANNOTATION in pod.annotations:
            return ""
        if a.no_eviction_policy == "Mandatory" and NO_EVICTION_ANNOTATION in pod.annotations:
            return "prefer-no-eviction annotation (Mandatory)"
        if pod.mirror:
            return "pod is a mirror pod"
        if pod.terminating:
            return "pod is terminating"
        owner = pod.controller if pod.owner_refs else None
        prot = a.protections
        if not pod.owner_refs:
            if "FailedBarePods" in prot or _phase(pod) != "Failed":
                return "pod does not have any ownerRefs"
        if "SystemCriticalPods" in prot:
            if pod.priority >= 2_000_000_000:
                return "pod has system critical priority and is protected against eviction"
            if pod.priority >= self.threshold:
                return "pod has higher priority than specified priority class threshold"
        if "PodsWithLocalStorage" in prot and pod.local_storage:
            return "pod has local storage and is protected against eviction"
        if "DaemonSetPods" in prot and any(o.kind == "DaemonSet" for o in pod.owner_refs):
            return "daemonset pods are protected against eviction"
        if "PodsWithPVC" in prot and _has_pvc(pod):
            return "pod with PVC is protected against eviction"
        if "PodsWithoutPDB" in prot and not any(b.namespace == pod.namespace and b.selector is not None and
                                                b.selector.matches(pod.labels) for b in self.cluster.pdbs):
            return "pod does not have a PodDisruptionBudget and is protected against eviction"
        if a.label_selector is not None and not a.label_selector.empty and not a.label_selector.matches(pod.labels):
            return "pod labels do not match the labelSelector filter"
        if a.min_replicas > 1 and len(pod.owner_refs) == 1:
            have = self.replicas[pod.owner_refs[0].uid or pod.owner_refs[0].name]
            if have < a.min_replicas:
                return f"owner has {have} replicas which is less than minReplicas of {a.min_replicas}"
        if a.min_pod_age_seconds is not None:
            start = _start(pod)
            if start is None or self.now is None or (self.now - start).total_seconds() < a.min_pod_age_seconds:
                return "pod age is not older than minPodAge"
        del owner
        return ""

    def pre_eviction(self, pod: Pod) -> str:
        """PreEvictionFilter: nodeFit (the pod fits another of the descheduler's nodes), namespaceLabelSelector."""
        a = self.args
        if a.node_fit and not fits_any(pod, [n for n in self.nodes if n.name != pod.node_name], self.pods_on):
            return "pod does not fit on any other node"
        sel = a.namespace_label_selector
        if sel is not None and not sel.empty:
            ns = self.cluster.namespaces.get(pod.namespace)
            if ns is None or not sel.matches(ns.labels):
                return "pod namespace does not match the namespaceLabelSelector"
        return ""

    def evictable(self, pod: Pod) -> bool:
        return not self.why_not(pod) and not self.pre_eviction(pod)

    def evict(self, pod: Pod, plugin: str) -> None:
        self.counts.evict(pod, plugin)


@dataclass
class Counts:
    """The cycle's evictions and the policy's limits on them."""
    policy: DeschedulerPolicy
    evicted: list[tuple[Pod, str]] = field(default_factory=list)  # (pod, plugin) in eviction order
    per_node: Counter = field(default_factory=Counter)
    per_namespace: Counter = field(default_factory=Counter)
    keys: set[str] = field(default_factory=set)
    on_evict: object = None  # callable(pod): the snapshot drops the pod
    cluster: Cluster | None = None  # with it, the PodDisruptionBudgets the Eviction API checks
    refused: list[tuple[Pod, str, str]] = field(default_factory=list)  # (pod, plugin, why)
    _budgets: dict | None = None
    _guards: dict | None = None

    def _pdb_check(self, pod: Pod) -> str:
        """The Eviction API's verdict on this pod given the cycle's evictions so far: "" or why it refuses.
        Replacements are not Ready within one cycle, so a PDB's disruptions allowed only go down."""
        if self.cluster is None or not self.cluster.pdbs:
            return ""
        from ..disruption import guarding, pod_ready, spends
        from ..rebalance.budgets import PdbIndex
        if self._budgets is None:
            healthy = {q.key: pod_ready(q) for q in self.cluster.pods}
            self._budgets = {k: b for k, b in PdbIndex.of(self.cluster).budgets(healthy).items()}
            self._left = {k: b.allowed for k, b in self._budgets.items()}
            self._healthy = healthy
        pdbs = guarding([b for b in self.cluster.pdbs if b.namespace == pod.namespace], pod)
        if len(pdbs) > 1:
            return "more than one PodDisruptionBudget guards the pod"
        if not pdbs:
            return ""
        b = self._budgets[pdbs[0].key]
        if not spends(pod, self._healthy.get(pod.key, True), b):
            return ""
        if self._left[b.pdb] <= 0:
            return f"PodDisruptionBudget {b.pdb} allows no more disruptions"
        self._left[b.pdb] -= 1
        return ""

    def evict(self, pod: Pod, plugin: str) -> None:
        p = self.policy
        if p.max_total is not None and len(self.evicted) + 1 > p.max_total:
            raise TotalLimit()
        if p.max_per_node is not None and self.per_node[pod.node_name] + 1 > p.max_per_node:
            raise NodeLimit()
        if p.max_per_namespace is not None and self.per_namespace[pod.namespace] + 1 > p.max_per_namespace:
            raise NamespaceLimit()
        why = self._pdb_check(pod)
        if why:
            self.refused.append((pod, plugin, why))
            raise Refused(why)
        self.evicted.append((pod, plugin))
        self.keys.add(pod.key)
        self.per_node[pod.node_name] += 1
        self.per_namespace[pod.namespace] += 1
        if callable(self.on_evict):
            self.on_evict(pod)


def used(pods: Sequence[Pod], without: str = "") -> dict[str, int]:
    out: Counter = Counter()
    for p in pods:
        if p.key == without:
            continue
        for r, v in p.requests.items():
            out[r] += v
        out["pods"] += 1
    return out


def node_fit(pod: Pod, node: Node, pods_on: Mapping[str, list[Pod]]) -> bool:
    """The descheduler's NodeFit: taints (NoSchedule, NoExecute), nodeSelector/required node affinity, the
    node schedulable, and room for the pod's requests beside the pods already there."""
    if node.unschedulable:
        return False
    if first_untolerated(node.taints, pod.tolerations) is not None:
        return False
    if not required_matches(pod, node):
        return False
    have = used(pods_on.get(node.name, ()), without=pod.key)
    for r, v in pod.requests.items():
        if v and have.get(r, 0) + v > node.allocatable.get(r, 0):
            return False
    return have.get("pods", 0) + 1 <= node.allocatable.get("pods", 110)


def fits_any(pod: Pod, nodes: Sequence[Node], pods_on: Mapping[str, list[Pod]]) -> bool:
    return any(node_fit(pod, n, pods_on) for n in nodes)
