"""A scenario applied to a base cluster: the Cluster the scenario asks about.

Node operations work on the parsed Cluster (fast: no re-reading of thousands of objects per scenario):
- removeNodes: the nodes go; their DaemonSet pods and mirror pods go with them (the node's own), terminating
  pods go; every other pod on them becomes pending again (its controller would recreate it; a bare pod is
  counted as if its owner re-submitted it) and is placed with everything else pending.
- addNodes: copies of a template node, each with its own name and kubernetes.io/hostname, schedulable (a new
  node is not cordoned); every DaemonSet whose pods fit the copy gets its pending pod pinned to it, as the
  DaemonSet controller creates them.
Workload operations work on the input's documents, which are read again (the loader then expands workloads as
it does for any input):
- scale: the workload's replicas (a Job's parallelism) set; scaling down deletes pods as the controllers do
  (pending ones first, then the newest; a StatefulSet its highest ordinals).
- addManifests: the files' objects are added to the input.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from ...models.errors import PodplanError
from ...models.loader import cluster_of
from ...models.objects import Cluster, Node, OwnerRef, Pod
from ...models.parse import Doc, stable_suffix
from ...models.selectors import LabelSelector
from ...models.workloads import _daemon_node, _instance, _node_fits_daemon, _pin_to_node
from ..rebalance.movable import goes_with_node
from .scenarios import AddNodes, Scale

HOSTNAME = "kubernetes.io/hostname"
UNSCHEDULABLE_TAINT = "node.kubernetes.io/unschedulable"


class ScenarioError(PodplanError):
    """The scenario cannot be applied to this cluster (it is one row with this error, not an exit 2)."""


@dataclass(frozen=True)
class Base:
    """One cluster of the run, as it travels to the workers (once per worker process or Ray object):
    its name in the table, the parsed Cluster and, when a scenario re-reads documents, the documents."""

    name: str
    cluster: Cluster
    docs: tuple[Doc, ...] | None = None
    sources: tuple[str, ...] = ()


def requested(cluster: Cluster) -> dict[str, tuple[int, int]]:
    """Per node, (cpu, memory) its running pods request."""
    out = {n.name: (0, 0) for n in cluster.nodes}
    for p in cluster.pods:
        if p.node_name in out:
            cpu, mem = out[p.node_name]
            out[p.node_name] = (cpu + p.requests.get("cpu", 0), mem + p.requests.get("memory", 0))
    return out


def drain_order(cluster: Cluster, selector: LabelSelector | None) -> list[str]:
    """The nodes `selector` matches, least-requested first (cpu, memory, name): the ones a person drains first."""
    load = requested(cluster)
    names = [n.name for n in cluster.nodes if selector is None or selector.matches(n.labels)]
    return sorted(names, key=lambda n: (load[n], n))


def remove_nodes(cluster: Cluster, names: set[str]) -> Cluster:
    pods: list[Pod] = []
    again: list[Pod] = []
    for p in cluster.pods:
        if p.node_name not in names:
            pods.append(p)
        elif not goes_with_node(p) and not p.terminating:
            again.append(replace(p, node_name="", nominated_node_name=""))
    pending = [p if p.nominated_node_name not in names else replace(p, nominated_node_name="")
               for p in cluster.pending if not (goes_with_node(p) and _daemon_node(p) in names)]
    return replace(cluster, nodes=tuple(n for n in cluster.nodes if n.name not in names), pods=tuple(pods),
                   pending=tuple(sorted(pending + again, key=lambda p: p.order)))


def _daemon_priority(cluster: Cluster, key: str, template: Pod) -> tuple[int, str]:
    """(priority, preemptionPolicy) of a new DaemonSet pod: its siblings', else its PriorityClass's."""
    sibling = next((p for p in cluster.pods + cluster.pending if p.workload == key), None)
    if sibling is not None:
        return sibling.priority, sibling.preemption_policy
    pc = cluster.priority_classes.get(template.priority_class_name) if template.priority_class_name else \
        next((c for c in cluster.priority_classes.values() if c.global_default), None)
    return (pc.value, template.preemption_policy or pc.preemption_policy) if pc else (template.priority, "")


def add_nodes(cluster: Cluster, add: AddNodes) -> Cluster:
    matches = sorted((n for n in cluster.nodes if add.like.matches(n.labels)), key=lambda n: (n.unschedulable, n.name))
    if not matches:
        raise ScenarioError("addNodes.like: the selector matches no node (nothing to copy)")
    template = matches[0]
    taken = {n.name for n in cluster.nodes}
    keys = {p.key for p in cluster.pods + cluster.pending}
    order = max((p.order for p in cluster.pods + cluster.pending), default=0) + 1
    nodes: list[Node] = []
    daemons: list[Pod] = []
    i = 0
    while len(nodes) < add.count:
        i += 1
        name = f"{template.name}-whatif-{i}"
        if name in taken:
            continue
        taken.add(name)
        labels = {**template.labels, HOSTNAME: name}
        raw: Any = None
        if template.raw is not None:
            meta = {k: v for k, v in (template.raw.get("metadata") or {}).items() if k not in ("uid", "resourceVersion")}
            raw = {**template.raw, "metadata": {**meta, "name": name, "labels": labels}}
        node = replace(template, name=name, labels=labels, unschedulable=False, raw=raw,
                       taints=tuple(t for t in template.taints if t.key != UNSCHEDULABLE_TAINT))
        nodes.append(node)
        for w in cluster.workloads:
            if w.kind != "DaemonSet" or w.template is None or not _node_fits_daemon(w.template, node):
                continue
            j = 0
            pod_name = f"{w.name}-{stable_suffix(w.key + '@' + name)}"
            while f"{w.namespace}/{pod_name}" in keys:
                j += 1
                pod_name = f"{w.name}-{stable_suffix(w.key + '@' + name + f'#{j}')}"
            keys.add(f"{w.namespace}/{pod_name}")
            priority, policy = _daemon_priority(cluster, w.key, w.template)
            pod = _instance(_pin_to_node(w.template, name), w, pod_name, OwnerRef(w.kind, w.name, w.uid, True), order)
            daemons.append(replace(pod, priority=priority, preemption_policy=policy or pod.preemption_policy))
            order += 1
    return replace(cluster, nodes=cluster.nodes + tuple(nodes), pending=cluster.pending + tuple(daemons))


def _scaled_body(body: Any, kind: str, replicas: int) -> dict[str, Any]:
    spec = dict(body.get("spec") or {})
    if kind == "Job":
        spec["parallelism"] = replicas
        if spec.get("completions") is not None and spec["completions"] < replicas:
            spec["completions"] = replicas
        spec.pop("suspend", None)
    else:
        spec["replicas"] = replicas
    return {**body, "spec": spec}


def _ordinal(pod: Pod) -> int:
    tail = pod.name.rsplit("-", 1)[-1]
    return int(tail) if tail.isdigit() else -1


def scaled_documents(base: Base, scale: Scale) -> list[Doc]:
    """The base's documents with the workload scaled; on scale-down, the pods its controller deletes left out."""
    assert base.docs is not None
    c = base.cluster
    w = next((w for w in c.workloads if w.key == scale.workload), None)
    if w is None:
        kind, ns, name = scale.workload.split("/")
        raise ScenarioError(f"scale.workload: no {kind} {ns}/{name} in the cluster")
    own = [p for p in c.pods + c.pending if p.workload == w.key and not p.terminating and p.raw is not None]
    drop: set[int] = set()
    if w.kind == "StatefulSet":
        drop = {id(p.raw) for p in own if _ordinal(p) >= w.start_ordinal + scale.replicas}
    elif len(own) > scale.replicas:
        # pending pods first, then the newest (the ReplicaSet controller deletes unscheduled pods first)
        doomed = sorted(own, key=lambda p: (bool(p.node_name), -p.order))[:len(own) - scale.replicas]
        drop = {id(p.raw) for p in doomed}
    out = []
    for d in base.docs:
        if d.body is w.raw:
            out.append(replace(d, body=_scaled_body(d.body, w.kind, scale.replicas)))
        elif id(d.body) not in drop:
            out.append(d)
    return out


def with_documents(base: Base, scale: Scale | None, manifests: Sequence[Doc]) -> Cluster:
    """The cluster read again from the base's documents, scaled and with the manifests added."""
    if base.docs is None:
        raise ScenarioError("the base cluster's documents were not kept (internal: needs_documents)")
    docs = scaled_documents(base, scale) if scale is not None else list(base.docs)
    return cluster_of(docs + list(manifests), list(base.sources))
