"""From parsed objects to a Cluster: workloads expanded into pending pods, priorities resolved, gangs linked.

A Deployment/ReplicaSet/StatefulSet/Job becomes its missing replicas as concrete pending Pods, named as
Kubernetes would name them (`web-0`.. for StatefulSets, `<rs>-<5 chars>` for ReplicaSets, `<job>-<5 chars>`
for Jobs). Running pods linked through ownerReferences (Deployment -> ReplicaSet -> Pod) count toward the
replicas, so a dump holding a controller and its pods is never double counted. A DaemonSet gets one pending
pod per node it should run on and does not yet, pinned there by node affinity on metadata.name, as the
DaemonSet controller does.
"""
from __future__ import annotations

import hashlib
from collections import defaultdict
from dataclasses import replace

from .errors import Where
from .objects import (
    POD_GROUP_LABEL, Affinity, Cluster, Node, OwnerRef, Pod, Workload,
)
from .parse import Collected
from .selectors import NodeSelector, NodeSelectorTerm, Requirement
from .taints import Toleration, first_untolerated

# kube's rand.SafeEncodeString alphabet: no vowels, no look-alikes.
_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
# Tolerations the DaemonSet controller adds to every daemon pod (pkg/controller/daemon/util).
_DAEMON_TOLERATIONS = tuple(
    Toleration(key, "Exists", "", effect)
    for key, effect in (
        ("node.kubernetes.io/not-ready", "NoExecute"), ("node.kubernetes.io/unreachable", "NoExecute"),
        ("node.kubernetes.io/disk-pressure", "NoSchedule"), ("node.kubernetes.io/memory-pressure", "NoSchedule"),
        ("node.kubernetes.io/pid-pressure", "NoSchedule"), ("node.kubernetes.io/unschedulable", "NoSchedule"),
    )
)


def stable_suffix(seed: str, length: int = 5) -> str:
    """A deterministic stand-in for the random suffix the API server generates."""
    digest = hashlib.sha256(seed.encode()).digest()
    return "".join(_ALPHABET[b % len(_ALPHABET)] for b in digest[:length])


def _owner_chain(pod: Pod, by_uid: dict[tuple[str, str, str], Workload]) -> Workload | None:
    """The top workload controlling a pod: its controller, or the controller's controller (Deployment)."""
    ref = pod.controller
    current: Workload | None = None
    namespace = pod.namespace
    while ref is not None:
        owner = by_uid.get((ref.kind, namespace, ref.name))
        if owner is None:
            break
        current = owner
        ref = next((o for o in owner.owner_refs if o.controller), None)
    return current


def _node_fits_daemon(template: Pod, node: Node) -> bool:
    """DaemonSet controller's predicate: node selector/affinity match and NoSchedule/NoExecute taints tolerated."""
    if any(node.labels.get(k) != v for k, v in template.node_selector.items()):
        return False
    required = template.affinity.node_required
    if required is not None and not required.matches(node.name, node.labels):
        return False
    return first_untolerated(node.taints, template.tolerations + _DAEMON_TOLERATIONS) is None


def build_cluster(c: Collected, extra_warnings: tuple[str, ...] = ()) -> Cluster:
    warnings: list[str] = list(extra_warnings)
    default_priority = next((pc.value for pc in c.priority_classes.values() if pc.global_default), 0)

    def priority_of(pod: Pod, explicit: bool) -> int:
        if explicit:
            return pod.priority
        if pod.priority_class_name:
            pc = c.priority_classes.get(pod.priority_class_name)
            if pc is None:
                if pod.priority_class_name not in ("system-cluster-critical", "system-node-critical"):
                    warnings.append(f"{pod.where.describe()}: spec.priorityClassName {pod.priority_class_name!r} "
                                    "is not in the input; priority 0 assumed")
                    return 0
                # Built-in classes exist in every cluster.
                return 2000000000 if pod.priority_class_name == "system-cluster-critical" else 2000001000
            return pc.value
        return default_priority

    by_uid = {(w.kind, w.namespace, w.name): w for w in c.workloads}
    node_names = {n.name for n in c.nodes}
    existing: list[Pod] = []
    bare_pending: list[Pod] = []
    running: dict[str, list[Pod]] = defaultdict(list)  # workload key -> its pods present in the input
    for pod, explicit in c.pods:
        owner = _owner_chain(pod, by_uid)
        pod = replace(pod, priority=priority_of(pod, explicit), workload=owner.key if owner else "",
                      pod_group=_group_of(pod))
        if owner is not None and not pod.terminating:
            running[owner.key].append(pod)
        if pod.node_name:
            if pod.node_name not in node_names:
                warnings.append(f"{pod.where.describe()}: bound to node {pod.node_name!r} that is not in the input; "
                                "it counts nowhere")
            existing.append(pod)
        else:
            bare_pending.append(pod)

    generated: list[Pod] = []
    order = len(c.pods)
    for w in c.workloads:
        if w.template is None:
            continue
        # A ReplicaSet owned by a Deployment in the input is expanded through that Deployment.
        if w.kind == "ReplicaSet" and _owner_chain_ref(w, by_uid) is not None:
            continue
        present = running.get(w.key, [])
        template = replace(w.template, priority=priority_of(w.template, _explicit_priority(w)))
        if w.kind == "DaemonSet":
            have = {p.node_name for p in present}
            for node in c.nodes:
                if node.name in have or not _node_fits_daemon(template, node):
                    continue
                pinned = _pin_to_node(template, node.name)
                generated.append(_instance(pinned, w, f"{w.name}-{stable_suffix(w.key + node.name)}", order, ds=True))
                order += 1
            continue
        missing = w.replicas - len(present)
        if missing <= 0:
            continue
        if w.kind == "StatefulSet":
            taken = {p.name for p in present}
            ordinal = 0
            names = []
            while len(names) < missing:
                if f"{w.name}-{ordinal}" not in taken:
                    names.append(f"{w.name}-{ordinal}")
                ordinal += 1
        else:
            prefix = _pod_prefix(w, c.workloads)
            names = []
            i = 0
            taken = {p.name for p in present}
            while len(names) < missing:
                name = f"{prefix}-{stable_suffix(f'{w.key}#{i}')}"
                if name not in taken:
                    names.append(name)
                i += 1
        for name in names:
            generated.append(_instance(template, w, name, order))
            order += 1

    groups = {g.key for g in c.pod_groups}
    for pod in bare_pending + generated:
        if pod.pod_group and pod.pod_group not in groups:
            warnings.append(f"{pod.where.describe()}: label {POD_GROUP_LABEL}={pod.pod_group.split('/', 1)[1]} "
                            "names a PodGroup that is not in the input; the pod is scheduled alone")
    for n in c.nodes:
        if not n.allocatable:
            warnings.append(f"{n.where.describe()}: no status.allocatable or status.capacity; it fits no pod")
    return Cluster(
        nodes=tuple(c.nodes),
        pods=tuple(existing),
        pending=tuple(sorted(bare_pending + generated, key=lambda p: p.order)),
        namespaces=dict(c.namespaces),
        pdbs=tuple(c.pdbs),
        priority_classes=dict(c.priority_classes),
        workloads=tuple(c.workloads),
        pod_groups=tuple(c.pod_groups),
        services=tuple(c.services),
        warnings=tuple(warnings),
        skipped=dict(c.skipped),
    )


def _group_of(pod: Pod) -> str:
    name = pod.labels.get(POD_GROUP_LABEL)
    return f"{pod.namespace}/{name}" if name else ""


def _explicit_priority(w: Workload) -> bool:
    # A template with priority 0 and no class resolves through PriorityClasses like a bare pod would.
    return w.template is not None and w.template.priority != 0


def _owner_chain_ref(w: Workload, by_uid: dict[tuple[str, str, str], Workload]) -> Workload | None:
    ref = next((o for o in w.owner_refs if o.controller), None)
    return by_uid.get((ref.kind, w.namespace, ref.name)) if ref else None


def _pod_prefix(w: Workload, workloads: tuple[Workload, ...] | list[Workload]) -> str:
    """Deployments name pods after their newest ReplicaSet (`<deploy>-<pod-template-hash>`)."""
    if w.kind != "Deployment":
        return w.name
    owned = [r for r in workloads if r.kind == "ReplicaSet" and r.namespace == w.namespace
             and any(o.controller and o.kind == "Deployment" and o.name == w.name for o in r.owner_refs)]
    if owned:
        return max(owned, key=lambda r: r.replicas).name
    return f"{w.name}-{stable_suffix(w.key, 10)}"


def _pin_to_node(template: Pod, node_name: str) -> Pod:
    term = NodeSelectorTerm((), (Requirement("metadata.name", "In", (node_name,)),))
    a = template.affinity
    return replace(template, affinity=Affinity(NodeSelector((term,)), a.node_preferred, a.pod_required,
                                               a.pod_preferred, a.anti_required, a.anti_preferred),
                   tolerations=template.tolerations + _DAEMON_TOLERATIONS)


def _instance(template: Pod, w: Workload, name: str, order: int, ds: bool = False) -> Pod:
    labels = dict(template.labels)
    if w.kind == "StatefulSet":
        labels["statefulset.kubernetes.io/pod-name"] = name
    owner_kind, owner_name = w.kind, w.name
    if w.kind == "Deployment":
        owner_kind, owner_name = "ReplicaSet", name.rsplit("-", 1)[0]
    pod = replace(template, name=name, labels=labels, uid="",
                  owner_refs=(OwnerRef(owner_kind, owner_name, "", True),), node_name="", order=order,
                  workload=w.key, where=Where(w.where.file, w.where.doc, w.kind, w.namespace, w.name))
    return replace(pod, pod_group=_group_of(pod))
