"""Pod templates for `capacity --pod FILE`: a Pod, or a workload whose pod template is used.

Each Pod or workload (Deployment, ReplicaSet, StatefulSet, Job) of a file is one template. Its priority is
resolved against the input's PriorityClasses (the template file usually holds none). Copies are named
`<template>-capacity-<i>` in the template's namespace, with its labels and owner, as the controller's own
replicas would be: every selector of the cluster sees them as it would see real replicas.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from ...models.errors import InputError, Where
from ...models.loader import read_paths
from ...models.objects import Cluster, Pod
from ...models.parse import WORKLOAD_KINDS, collect
from ...models.workloads import build_cluster

TEMPLATE_KINDS = ("Pod",) + tuple(k for k in WORKLOAD_KINDS if k != "DaemonSet")


@dataclass(frozen=True)
class Template:
    name: str  # the workload's or the pod's name
    pod: Pod  # the pod template as a pending Pod (its name is the template's)
    ratio: int = 1  # copies per unit of scale (--ratio)

    def copies(self, count: int, start_order: int = 0) -> list[Pod]:
        return [self.copy(i, start_order + i) for i in range(count)]

    def copy(self, i: int, order: int | None = None) -> Pod:
        """The i-th copy (0-based; named `<template>-capacity-<i+1>`): made one at a time where a count may be
        large (a plain template's per-node bounds sum to tens of thousands at 1,000 nodes)."""
        return replace(self.pod, name=f"{self.name}-capacity-{i + 1}", uid="", node_name="",
                       order=i if order is None else order)


def _priority(pod: Pod, cluster: Cluster) -> Pod:
    """The priority the Priority admission plugin would give the template in the input cluster."""
    classes = cluster.priority_classes
    if pod.priority_class_name:
        pc = classes.get(pod.priority_class_name)
        if pc is None:
            raise InputError(pod.where, "spec.priorityClassName",
                             f"no PriorityClass {pod.priority_class_name!r} in the input")
        return replace(pod, priority=pc.value)
    default = next((pc for pc in classes.values() if pc.global_default), None)
    if default is not None and pod.priority == 0 and "priority" not in ((pod.raw or {}).get("spec") or {}):
        return replace(pod, priority=default.value)
    return pod


def load_templates(paths: Sequence[str], cluster: Cluster) -> list[Template]:
    """The templates of `paths`, in order; InputError (one line) for anything that is not a template."""
    out: list[Template] = []
    names: set[str] = set()
    for path in paths:
        docs = read_paths([path])
        found = 0
        for doc in docs:
            body = doc.body
            if body is None:
                continue
            kind = body.get("kind") if isinstance(body, dict) else None
            if kind not in TEMPLATE_KINDS:
                meta = body.get("metadata") if isinstance(body, dict) else None
                name = meta.get("name", "") if isinstance(meta, dict) and isinstance(meta.get("name"), str) else ""
                raise InputError(Where(doc.file, doc.index, kind if isinstance(kind, str) else "", "", name), "kind",
                                 f"--pod takes a Pod or a workload ({', '.join(TEMPLATE_KINDS)}), got "
                                 f"{kind if isinstance(kind, str) and kind else 'no kind'}")
        parsed = build_cluster(collect(docs))
        for w in parsed.workloads:
            if w.template is None:
                continue
            out.append(Template(w.name, replace(_priority(w.template, cluster), name=w.name)))
            found += 1
        for pod in parsed.pods:
            raise InputError(pod.where, "spec.nodeName", "a template must not be bound to a node (it is a copy "
                                                         "podplan places)")
        for pod in parsed.pending:
            if pod.workload:
                continue  # a workload's replicas: the workload is the template
            out.append(Template(pod.name, _priority(pod, cluster)))
            found += 1
        if not found:
            raise InputError(Where(path, None), "", "no Pod or workload in the file")
    for t in out:
        if t.name in names:
            raise InputError(t.pod.where, "metadata.name", f"two templates are named {t.name!r}")
        names.add(t.name)
    return out


def parse_ratio(text: str, count: int) -> list[int]:
    """`--ratio 3:1:1`: copies of each template (in --pod order) per unit of scale."""
    parts = text.split(":")
    if len(parts) != count or not all(p.isdigit() and int(p) > 0 for p in parts):
        raise InputError(Where("--ratio", None), "", f"expected {count} positive integers separated by ':' (one per "
                                                     f"template), got {text!r}")
    return [int(p) for p in parts]
