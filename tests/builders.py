"""Small chainable builders for tests: models.objects Pods and Nodes without YAML.

    make_pod("web-1").namespace("shop").label("app", "web").req(cpu="500m", memory="1Gi").build()
    make_node("n1").label("zone", "a").taint("gpu", "true").alloc(cpu="4", memory="16Gi", pods=110).build()
    state_of([node, ...], [existing_pod_on_a_node, ...])

A pod built with `.on("n1")` is an existing pod bound to n1; without it the pod is pending.
Requests model ONE container: `nonzero_requests` gets upstream's scoring defaults (100m cpu, 200Mi
memory) for whichever of cpu/memory that container does not request. Use `.nonzero(...)` to override
when a test needs a multi-container pod's exact figures.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from typing import Any

from podplan.models.objects import (
    Affinity, Cluster, HostPort, Namespace, Node, OwnerRef, Pod, PodAffinityTerm, TopologySpreadConstraint,
    WeightedPodAffinityTerm,
)
from podplan.models.quantity import resource_value
from podplan.models.selectors import LabelSelector, NodeSelector, NodeSelectorTerm, PreferredSchedulingTerm, Requirement
from podplan.models.taints import Taint, Toleration
from podplan.optimizer.state import ClusterState

DEFAULT_MILLI_CPU_REQUEST = 100  # schedutil.DefaultMilliCPURequest
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024  # schedutil.DefaultMemoryRequest


def _resources(extra: Mapping[str, Any] | None, named: Mapping[str, Any]) -> dict[str, int]:
    """Merge a {name: quantity} dict (for names like example.com/gpu) with keyword quantities."""
    merged: dict[str, Any] = dict(extra or {})
    for key, value in named.items():
        merged[key.replace("_", "-")] = value  # ephemeral_storage= -> ephemeral-storage
    return {name: resource_value(name, value) for name, value in merged.items()}


class PodBuilder:
    def __init__(self, name: str) -> None:
        self._fields: dict[str, Any] = {"name": name, "namespace": "default", "labels": {}}
        self._requests: dict[str, int] = {}
        self._nonzero: dict[str, int] | None = None

    def namespace(self, ns: str) -> "PodBuilder":
        self._fields["namespace"] = ns
        return self

    def label(self, key: str, value: str) -> "PodBuilder":
        self._fields["labels"] = {**self._fields["labels"], key: value}
        return self

    def labels(self, labels: Mapping[str, str]) -> "PodBuilder":
        self._fields["labels"] = {**self._fields["labels"], **labels}
        return self

    def req(self, extra: Mapping[str, Any] | None = None, **named: Any) -> "PodBuilder":
        """Requests of the pod's single container: req(cpu="500m", memory="1Gi"), req({"example.com/gpu": 1})."""
        self._requests.update(_resources(extra, named))
        return self

    def nonzero(self, extra: Mapping[str, Any] | None = None, **named: Any) -> "PodBuilder":
        """Override the scoring (non-zero) requests outright."""
        self._nonzero = _resources(extra, named)
        return self

    def node_selector(self, selector: Mapping[str, str] | None = None, **pairs: str) -> "PodBuilder":
        self._fields["node_selector"] = {**self._fields.get("node_selector", {}), **(selector or {}), **pairs}
        return self

    def toleration(self, key: str = "", value: str = "", effect: str = "", operator: str = "Equal",
                   seconds: int | None = None) -> "PodBuilder":
        """One toleration, as in the API: operator Equal unless told Exists; empty effect = every effect."""
        tol = Toleration(key=key, operator=operator, value=value, effect=effect, toleration_seconds=seconds)
        self._fields["tolerations"] = self._fields.get("tolerations", ()) + (tol,)
        return self

    def host_port(self, port: int, protocol: str = "TCP", host_ip: str = "0.0.0.0") -> "PodBuilder":
        self._fields["host_ports"] = self._fields.get("host_ports", ()) + (HostPort(port, protocol, host_ip),)
        return self

    def affinity(self, affinity: Affinity) -> "PodBuilder":
        self._fields["affinity"] = affinity
        return self

    def node_affinity(self, *terms: NodeSelectorTerm) -> "PodBuilder":
        """Required node affinity: the terms are ORed."""
        current: Affinity = self._fields.get("affinity", Affinity())
        self._fields["affinity"] = dataclasses.replace(current, node_required=NodeSelector(tuple(terms)))
        return self

    def preferred_node_affinity(self, weight: int, term: NodeSelectorTerm) -> "PodBuilder":
        current: Affinity = self._fields.get("affinity", Affinity())
        pref = current.node_preferred + (PreferredSchedulingTerm(weight, term),)
        self._fields["affinity"] = dataclasses.replace(current, node_preferred=pref)
        return self

    def pod_affinity(self, *terms: PodAffinityTerm) -> "PodBuilder":
        """Required pod affinity: every term must hold."""
        return self._pod_terms("pod_required", terms)

    def pod_anti_affinity(self, *terms: PodAffinityTerm) -> "PodBuilder":
        """Required pod anti-affinity: any matching term forbids the domain."""
        return self._pod_terms("anti_required", terms)

    def preferred_pod_affinity(self, weight: int, term: PodAffinityTerm) -> "PodBuilder":
        return self._pod_terms("pod_preferred", (WeightedPodAffinityTerm(weight, term),))

    def preferred_pod_anti_affinity(self, weight: int, term: PodAffinityTerm) -> "PodBuilder":
        return self._pod_terms("anti_preferred", (WeightedPodAffinityTerm(weight, term),))

    def _pod_terms(self, field: str, terms: tuple[Any, ...]) -> "PodBuilder":
        current: Affinity = self._fields.get("affinity", Affinity())
        self._fields["affinity"] = dataclasses.replace(current, **{field: getattr(current, field) + tuple(terms)})
        return self

    def spread(self, constraint: TopologySpreadConstraint) -> "PodBuilder":
        self._fields["spread_constraints"] = self._fields.get("spread_constraints", ()) + (constraint,)
        return self

    def priority(self, value: int) -> "PodBuilder":
        self._fields["priority"] = value
        return self

    def owner(self, kind: str, name: str, controller: bool = True) -> "PodBuilder":
        self._fields["owner_refs"] = self._fields.get("owner_refs", ()) + (OwnerRef(kind, name, controller=controller),)
        return self

    def on(self, node_name: str) -> "PodBuilder":
        """spec.nodeName: the pod is bound (existing)."""
        self._fields["node_name"] = node_name
        return self

    def set(self, **fields: Any) -> "PodBuilder":
        """Any other Pod field, verbatim."""
        self._fields.update(fields)
        return self

    def build(self) -> Pod:
        nonzero = self._nonzero
        if nonzero is None:
            nonzero = dict(self._requests)
            nonzero.setdefault("cpu", DEFAULT_MILLI_CPU_REQUEST)
            nonzero.setdefault("memory", DEFAULT_MEMORY_REQUEST)
        return Pod(requests=dict(self._requests), nonzero_requests=nonzero, **self._fields)


class NodeBuilder:
    def __init__(self, name: str) -> None:
        self._name = name
        self._labels: dict[str, str] = {}
        self._taints: tuple[Taint, ...] = ()
        self._unschedulable = False
        self._alloc: dict[str, int] = {"cpu": 1_000_000, "memory": 1000 * 2**30, "pods": 1000}

    def label(self, key: str, value: str) -> "NodeBuilder":
        self._labels[key] = value
        return self

    def labels(self, labels: Mapping[str, str]) -> "NodeBuilder":
        self._labels.update(labels)
        return self

    def taint(self, key: str, value: str = "", effect: str = "NoSchedule") -> "NodeBuilder":
        self._taints += (Taint(key, value, effect),)
        return self

    def unschedulable(self, value: bool = True) -> "NodeBuilder":
        self._unschedulable = value
        return self

    def alloc(self, extra: Mapping[str, Any] | None = None, **named: Any) -> "NodeBuilder":
        """Replace allocatable (default: 1000 cpu, 1000Gi memory, 1000 pods, as upstream's tests use)."""
        self._alloc = _resources(extra, named)
        return self

    def build(self) -> Node:
        return Node(self._name, labels=dict(self._labels), taints=self._taints,
                    unschedulable=self._unschedulable, allocatable=dict(self._alloc))


def make_pod(name: str) -> PodBuilder:
    return PodBuilder(name)


def make_node(name: str) -> NodeBuilder:
    return NodeBuilder(name)


def term(*requirements: Requirement, fields: Iterable[Requirement] = ()) -> NodeSelectorTerm:
    """A nodeSelectorTerm: matchExpressions, plus matchFields on metadata.name via `fields`."""
    return NodeSelectorTerm(tuple(requirements), tuple(fields))


def req(key: str, operator: str, *values: str) -> Requirement:
    return Requirement(key, operator, tuple(values))


def state_of(nodes: Iterable[Node], pods: Iterable[Pod] = (),
             namespaces: Mapping[str, Mapping[str, str]] | None = None) -> ClusterState:
    """A ClusterState with `pods` bound where their spec.nodeName says."""
    cluster = Cluster(nodes=tuple(nodes), pods=tuple(pods),
                      namespaces={n: Namespace(n, dict(l)) for n, l in (namespaces or {}).items()})
    return ClusterState.from_cluster(cluster)


def cluster_of(nodes: Iterable[Node], pods: Iterable[Pod] = (),
               namespaces: Mapping[str, Mapping[str, str]] | None = None, **fields: Any) -> Cluster:
    """A Cluster: pods built with `.on(node)` are existing, the others pending; input order = list order
    (Pod.order is set from it, as the parser does, so queue order ties break by position)."""
    ordered = [dataclasses.replace(p, order=i) for i, p in enumerate(pods)]
    return Cluster(nodes=tuple(nodes), pods=tuple(p for p in ordered if p.node_name),
                   pending=tuple(p for p in ordered if not p.node_name),
                   namespaces={n: Namespace(n, dict(l)) for n, l in (namespaces or {}).items()}, **fields)


def selector(*requirements: Requirement, **match_labels: str) -> LabelSelector:
    """A LabelSelector: matchLabels from keywords, matchExpressions from req(...); selector() is `{}` (all)."""
    return LabelSelector(tuple(sorted(match_labels.items())), tuple(requirements))


def pod_term(topology_key: str, label_selector: LabelSelector | None, namespaces: Iterable[str] = (),
             namespace_selector: LabelSelector | None = None) -> PodAffinityTerm:
    """A pod (anti-)affinity term as the API server stores it (matchLabelKeys already merged)."""
    return PodAffinityTerm(label_selector, topology_key, tuple(namespaces), namespace_selector)


def run_filter(plugin: Any, pod: Pod, state: ClusterState, node_name: str) -> list[Any]:
    """One plugin's PreFilter + Filter verdict for `pod` on one node: the list of Reasons ([] = passes)."""
    pre = plugin.pre_filter(pod, state) if plugin.pre_filter else None
    return plugin.filter(pod, pre, state.nodes[node_name], state)


def feasible_nodes(plugin: Any, pod: Pod, state: ClusterState) -> list[str]:
    return [name for name in state.nodes if not run_filter(plugin, pod, state, name)]


def run_score(plugin: Any, pod: Pod, state: ClusterState, candidates: Iterable[str] | None = None) -> dict[str, int]:
    """One plugin's PreScore + Score + NormalizeScore over `candidates` (default: every node)."""
    infos = [state.nodes[n] for n in (candidates if candidates is not None else state.nodes)]
    pre = plugin.pre_score(pod, state, infos) if plugin.pre_score else None
    raw = {info.name: plugin.score(pod, pre, info, state) for info in infos}
    return plugin.normalize(raw, pre) if plugin.normalize else raw


def spread(max_skew: int, topology_key: str, label_selector: LabelSelector | None, when: str = "DoNotSchedule",
           min_domains: int | None = None, affinity_policy: str = "Honor",
           taints_policy: str = "Ignore") -> TopologySpreadConstraint:
    """A topologySpreadConstraint as the API server stores it (matchLabelKeys already merged into the selector)."""
    return TopologySpreadConstraint(max_skew, topology_key, when, label_selector, min_domains,
                                    affinity_policy, taints_policy)


# ------------------------------------------------------------- manifests: dicts as kubectl would print them


def container(name: str = "c", requests: Mapping[str, Any] | None = None, limits: Mapping[str, Any] | None = None,
              **fields: Any) -> dict[str, Any]:
    """One container manifest; requests/limits as the user writes them ({"cpu": "500m"})."""
    c: dict[str, Any] = {"name": name, "image": "registry.k8s.io/pause:3.9", **fields}
    resources = {k: dict(v) for k, v in (("requests", requests), ("limits", limits)) if v is not None}
    if resources:
        c["resources"] = resources
    return c


def node_manifest(name: str, labels: Mapping[str, str] | None = None, taints: Iterable[Mapping[str, str]] = (),
                  **allocatable: Any) -> dict[str, Any]:
    """A Node manifest; allocatable defaults to 4 cpu, 16Gi memory, 110 pods (ephemeral_storage= for dashes)."""
    alloc = {"cpu": "4", "memory": "16Gi", "pods": "110"}
    alloc.update({k.replace("_", "-"): str(v) for k, v in allocatable.items()})
    body: dict[str, Any] = {"apiVersion": "v1", "kind": "Node",
                            "metadata": {"name": name, "labels": dict(labels or {})},
                            "status": {"allocatable": alloc}}
    if taints:
        body["spec"] = {"taints": [dict(t) for t in taints]}
    return body


def pod_manifest(name: str, namespace: str = "default", labels: Mapping[str, str] | None = None, node: str = "",
                 containers: Iterable[Mapping[str, Any]] | None = None, owner: tuple[str, str] | None = None,
                 **spec: Any) -> dict[str, Any]:
    """A Pod manifest: bound when `node` is given (existing), pending otherwise; `owner` = (kind, name) controller."""
    meta: dict[str, Any] = {"name": name, "namespace": namespace, "labels": dict(labels or {})}
    if owner:
        meta["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": owner[0], "name": owner[1], "controller": True}]
    body_spec: dict[str, Any] = {"containers": [dict(c) for c in (containers or [container()])], **spec}
    if node:
        body_spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": body_spec}


def workload_manifest(kind: str, name: str, labels: Mapping[str, str], replicas: int | None = None,
                      namespace: str = "default", containers: Iterable[Mapping[str, Any]] | None = None,
                      owner: tuple[str, str] | None = None, template_spec: Mapping[str, Any] | None = None,
                      **spec: Any) -> dict[str, Any]:
    """A Deployment/ReplicaSet/StatefulSet/Job/DaemonSet manifest selecting `labels`, its template labelled so."""
    meta: dict[str, Any] = {"name": name, "namespace": namespace}
    if owner:
        meta["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": owner[0], "name": owner[1], "controller": True}]
    body_spec: dict[str, Any] = {
        "template": {"metadata": {"labels": dict(labels)},
                     "spec": {"containers": [dict(c) for c in (containers or [container()])], **(template_spec or {})}},
        **spec,
    }
    if kind != "Job":
        body_spec["selector"] = {"matchLabels": dict(labels)}
    if replicas is not None:
        body_spec["replicas"] = replicas
    api = "batch/v1" if kind == "Job" else "apps/v1"
    return {"apiVersion": api, "kind": kind, "metadata": meta, "spec": body_spec}


# ------------------------------------------------------------- the command line


def run_cli(*args: str) -> tuple[int, str]:
    """`podplan ARGS...` in-process: its exit code and stdout (stderr kept apart where click can)."""
    from click.testing import CliRunner  # here, not at the top: the model builders stay free of the CLI

    from podplan.cli import main
    try:
        runner = CliRunner(mix_stderr=False)  # type: ignore[call-arg]
    except TypeError:  # click >= 8.2 keeps stderr apart always and dropped the argument
        runner = CliRunner()
    result = runner.invoke(main, list(args))
    return result.exit_code, result.stdout
