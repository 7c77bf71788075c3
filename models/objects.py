"""The Kubernetes object model podplan reads: frozen dataclasses, one per kind, holding only what
scheduling needs. Built by models.parse from manifests; never mutated afterwards.

Resource amounts are ints: cpu in millicores, memory/storage/hugepages in bytes, everything else
(extended resources, pods) in whole units.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .errors import Where
from .selectors import LabelSelector, NodeSelector, PreferredSchedulingTerm
from .taints import Taint, Toleration

Resources = dict[str, int]


@dataclass(frozen=True)
class PodAffinityTerm:
    """v1.PodAffinityTerm after the API server's merge of matchLabelKeys/mismatchLabelKeys into the
    selector (done in models.parse, with the owning pod's labels)."""

    label_selector: LabelSelector | None
    topology_key: str
    namespaces: tuple[str, ...] = ()
    namespace_selector: LabelSelector | None = None
    match_label_keys: tuple[str, ...] = ()
    mismatch_label_keys: tuple[str, ...] = ()


@dataclass(frozen=True)
class WeightedPodAffinityTerm:
    weight: int
    term: PodAffinityTerm


@dataclass(frozen=True)
class Affinity:
    node_required: NodeSelector | None = None
    node_preferred: tuple[PreferredSchedulingTerm, ...] = ()
    pod_required: tuple[PodAffinityTerm, ...] = ()
    pod_preferred: tuple[WeightedPodAffinityTerm, ...] = ()
    anti_required: tuple[PodAffinityTerm, ...] = ()
    anti_preferred: tuple[WeightedPodAffinityTerm, ...] = ()


@dataclass(frozen=True)
class TopologySpreadConstraint:
    """v1.TopologySpreadConstraint; label_selector already ANDed with matchLabelKeys values."""

    max_skew: int
    topology_key: str
    when_unsatisfiable: str  # DoNotSchedule | ScheduleAnyway
    label_selector: LabelSelector | None
    min_domains: int | None = None
    node_affinity_policy: str = "Honor"
    node_taints_policy: str = "Ignore"
    match_label_keys: tuple[str, ...] = ()


@dataclass(frozen=True)
class HostPort:
    port: int
    protocol: str = "TCP"
    host_ip: str = "0.0.0.0"


@dataclass(frozen=True)
class OwnerRef:
    kind: str
    name: str
    uid: str = ""
    controller: bool = False


@dataclass(frozen=True)
class Pod:
    namespace: str
    name: str
    uid: str = ""
    labels: dict[str, str] = field(default_factory=dict)
    annotations: dict[str, str] = field(default_factory=dict)
    owner_refs: tuple[OwnerRef, ...] = ()
    priority: int = 0
    priority_class_name: str = ""
    node_name: str = ""
    node_selector: dict[str, str] = field(default_factory=dict)
    affinity: Affinity = field(default_factory=Affinity)
    tolerations: tuple[Toleration, ...] = ()
    spread_constraints: tuple[TopologySpreadConstraint, ...] = ()
    host_ports: tuple[HostPort, ...] = ()
    # Effective requests as the scheduler computes them (resourcehelper.PodRequests); no "pods" entry.
    requests: Resources = field(default_factory=dict)
    # The same with upstream's non-zero defaults (100m cpu, 200Mi memory per container) used by scoring.
    nonzero_requests: Resources = field(default_factory=dict)
    scheduler_name: str = "default-scheduler"
    # spec.schedulingGates names: while any is left kube-scheduler keeps the pod out of its queue (SchedulingGated).
    scheduling_gates: tuple[str, ...] = ()
    terminating: bool = False
    # spec.preemptionPolicy ("" = unset: the Priority admission plugin copies its PriorityClass's, else
    # PreemptLowerPriority); status.nominatedNodeName; status.startTime (RFC 3339, "" = not started yet).
    preemption_policy: str = ""
    nominated_node_name: str = ""
    start_time: str = ""
    local_storage: bool = False  # has emptyDir/hostPath volumes (descheduler's eviction policy)
    mirror: bool = False  # a static pod's mirror (kubernetes.io/config.mirror annotation)
    order: int = 0  # position in the input: kube-scheduler's queue breaks priority ties by arrival
    workload: str = ""  # "Kind/ns/name" of the workload it belongs to, "" for a bare pod
    pod_group: str = ""  # "ns/name" of its scheduler-plugins PodGroup, if any
    where: Where = field(default_factory=Where, compare=False, repr=False)
    # The manifest it was read from (a Pod made from a workload: the pod template), for --emit state.
    raw: Mapping[str, Any] | None = field(default=None, compare=False, repr=False)

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def controller(self) -> OwnerRef | None:
        return next((o for o in self.owner_refs if o.controller), None)


@dataclass(frozen=True)
class Node:
    name: str
    labels: dict[str, str] = field(default_factory=dict)
    taints: tuple[Taint, ...] = ()
    unschedulable: bool = False
    allocatable: Resources = field(default_factory=dict)  # includes "pods"
    where: Where = field(default_factory=Where, compare=False, repr=False)
    # The manifest it was read from (a Pod made from a workload: the pod template), for --emit state.
    raw: Mapping[str, Any] | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class Namespace:
    name: str
    labels: dict[str, str] = field(default_factory=dict)
    raw: Mapping[str, Any] | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class PodDisruptionBudget:
    namespace: str
    name: str
    selector: LabelSelector | None
    min_available: int | str | None = None  # int or "50%"
    max_unavailable: int | str | None = None
    raw: Mapping[str, Any] | None = field(default=None, compare=False, repr=False)

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


@dataclass(frozen=True)
class PriorityClass:
    name: str
    value: int
    global_default: bool = False
    raw: Mapping[str, Any] | None = field(default=None, compare=False, repr=False)
    preemption_policy: str = "PreemptLowerPriority"


@dataclass(frozen=True)
class Service:
    """Only its selector matters: the system default spread constraints select pods by it."""

    namespace: str
    name: str
    selector: dict[str, str] = field(default_factory=dict)
    raw: Mapping[str, Any] | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class Workload:
    """A controller that makes identical pods: Deployment, ReplicaSet, StatefulSet, Job, DaemonSet."""

    kind: str
    namespace: str
    name: str
    uid: str = ""
    replicas: int = 1  # Job: parallelism capped by completions; DaemonSet: unused
    selector: LabelSelector | None = None
    template: Pod | None = None  # the pod template as a (pending) Pod
    annotations: dict[str, str] = field(default_factory=dict)
    owner_refs: tuple[OwnerRef, ...] = ()
    where: Where = field(default_factory=Where, compare=False, repr=False)
    # The manifest it was read from (a Pod made from a workload: the pod template), for --emit state.
    raw: Mapping[str, Any] | None = field(default=None, compare=False, repr=False)
    start_ordinal: int = 0  # StatefulSet spec.ordinals.start: its first pod is <name>-<start_ordinal>

    @property
    def key(self) -> str:
        return f"{self.kind}/{self.namespace}/{self.name}"


@dataclass(frozen=True)
class PodGroup:
    """scheduler-plugins PodGroup (scheduling.x-k8s.io/v1alpha1): all-or-minMember gang."""

    namespace: str
    name: str
    min_member: int
    raw: Mapping[str, Any] | None = field(default=None, compare=False, repr=False)

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


POD_GROUP_LABEL = "scheduling.x-k8s.io/pod-group"
GANG_ANNOTATION = "podplan.io/gang"


@dataclass(frozen=True)
class Cluster:
    """Everything read from the input. `pods` are existing (bound), `pending` are to be placed."""

    nodes: tuple[Node, ...] = ()
    pods: tuple[Pod, ...] = ()
    pending: tuple[Pod, ...] = ()
    namespaces: dict[str, Namespace] = field(default_factory=dict)
    pdbs: tuple[PodDisruptionBudget, ...] = ()
    priority_classes: dict[str, PriorityClass] = field(default_factory=dict)
    workloads: tuple[Workload, ...] = ()
    pod_groups: tuple[PodGroup, ...] = ()
    services: tuple[Service, ...] = ()
    warnings: tuple[str, ...] = ()
    skipped: dict[str, int] = field(default_factory=dict)  # unknown kinds and how many

    def namespace_labels(self, name: str) -> dict[str, str]:
        ns = self.namespaces.get(name)
        return ns.labels if ns else {}
