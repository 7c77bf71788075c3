"""Plan output: the plan document (table, JSON, YAML), the final state as manifests, and v1 Bindings.

Everything printed here has passed the verifier first (optimizer.verify); this module only renders.
"""
from __future__ import annotations

import copy
import json
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import yaml

from ...models.objects import Cluster, Pod

from ..disruption import budget, guarding, pod_ready
from ..framework import Profile
from ..greedy import queue_order
from ..plan import Plan
from ..profiles import Profiles
from ..registry import DEFAULT_PROFILE
from ..state import ClusterState
from ..verify import Report
from .text import _Dumper, dump, table  # noqa: F401 (the light half: validate prints without the solver stack)


def plan_document(cluster: Cluster, plan: Plan, report: Report) -> dict[str, Any]:
    """The `--emit plan` document (same shape for simulate and solve)."""
    pending = {p.key: p for p in cluster.pending}
    return {
        "status": plan.status,
        "objective": {
            "placed": report.placed,
            "placed_by_priority": {str(k): v for k, v in report.placed_by_priority.items()},
            "preference": report.preference,
            "terms": dict(report.terms),
        },
        "bound": dict(plan.bound),
        "gap": plan.gap,
        "gaps": plan.gaps,
        "placements": [{"pod": k, "node": plan.placements[k], "workload": pending[k].workload}
                       for k in sorted(plan.placements, key=lambda k: pending[k].order)],
        "pending": [{"pod": k, "reason": plan.pending[k]} for k in sorted(plan.pending, key=lambda k: pending[k].order)],
        "preemptions": [{"preemptor": p.preemptor, "node": p.node, "victims": list(p.victims)}
                        for p in plan.preemptions],
        # kube-scheduler's plan (simulate): rules of pods placed before a later bind that its final state breaks
        "final_state_violations": [
            {"pod": v.pod, "node": v.node, "plugin": v.plugin, "reason": v.reason}
            for v in report.violations if not v.preexisting
        ],
        "preexisting_violations": [
            {"pod": v.pod, "node": v.node, "plugin": v.plugin, "reason": v.reason}
            for v in report.violations if v.preexisting
        ],
        "solver": {"wall_seconds": round(plan.wall_seconds, 3), "workers": plan.workers, "seed": plan.seed},
        "notes": list(plan.notes),
    }


def pod_manifest(pod: Pod, node_name: str) -> dict[str, Any]:
    """A concrete Pod manifest for a pending pod: its template (or its own manifest) with its name and node."""
    raw = copy.deepcopy(dict(pod.raw or {}))
    meta = dict(raw.get("metadata") or {})
    meta.update({"name": pod.name, "namespace": pod.namespace})
    if pod.labels:
        meta["labels"] = dict(pod.labels)
    if pod.owner_refs:
        # uid left out when unknown (a workload manifest without one, the ReplicaSet a Deployment would make):
        # an empty uid is a value the API server rejects, a made-up one would point at nothing.
        meta["ownerReferences"] = [{"apiVersion": "apps/v1" if o.kind != "Job" else "batch/v1", "kind": o.kind,
                                    "name": o.name, **({"uid": o.uid} if o.uid else {}), "controller": o.controller}
                                   for o in pod.owner_refs]
    spec = dict(raw.get("spec") or {})
    spec.pop("nodeName", None)
    if node_name:
        spec["nodeName"] = node_name
    if pod.priority and "priority" not in spec:
        spec["priority"] = pod.priority
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def state_manifests(cluster: Cluster, placements: Mapping[str, str]) -> list[dict[str, Any]]:
    """The whole final state: cluster-wide objects and workloads, existing pods unchanged, every pending pod
    as a Pod (with spec.nodeName when placed). The workloads keep each pod's owner when the state is read
    again (their pods are all there, so no replica is made up twice): a Deployment whose ReplicaSet the input
    lacks gets the one its controller would have created (replica_sets_to_create), so that the pods'
    controller chain (Pod -> ReplicaSet -> Deployment) is whole, as PodDisruptionBudgets and rebalance read it."""
    out: list[dict[str, Any]] = []
    for group in (cluster.namespaces.values(), cluster.priority_classes.values(), cluster.nodes,
                  cluster.workloads):
        out.extend(dict(o.raw) for o in group if o.raw is not None)
    out.extend(replica_sets_to_create(cluster))
    for group in (cluster.pdbs, cluster.pod_groups, cluster.services, cluster.pods):
        out.extend(dict(o.raw) for o in group if o.raw is not None)
    out.extend(pod_manifest(p, placements.get(p.key, "")) for p in cluster.pending)
    return out


def replica_sets_to_create(cluster: Cluster) -> list[dict[str, Any]]:
    """The ReplicaSets the Deployment controller would create for the pods podplan made up for a Deployment
    whose ReplicaSet the input does not hold (they name it `<deployment>-<pod-template-hash>`): owned by the
    Deployment, with its replicas, its selector plus the hash label, its template labelled with the hash."""
    have = {(w.namespace, w.name) for w in cluster.workloads if w.kind == "ReplicaSet"}
    deployments = {w.key: w for w in cluster.workloads if w.kind == "Deployment"}
    out: list[dict[str, Any]] = []
    made: set[tuple[str, str]] = set()
    for pod in cluster.pending:
        ref, deploy = pod.controller, deployments.get(pod.workload)
        if ref is None or ref.kind != "ReplicaSet" or deploy is None or deploy.raw is None:
            continue
        key = (pod.namespace, ref.name)
        if key in have or key in made or not ref.name.startswith(deploy.name + "-"):
            continue
        made.add(key)
        hash_ = ref.name[len(deploy.name) + 1:]
        spec = deploy.raw.get("spec") or {}
        template = copy.deepcopy(dict(spec.get("template") or {}))
        template_meta = dict(template.get("metadata") or {})
        template_meta["labels"] = {**(template_meta.get("labels") or {}), "pod-template-hash": hash_}
        template["metadata"] = template_meta
        selector = copy.deepcopy(dict(spec.get("selector") or {}))
        selector["matchLabels"] = {**(selector.get("matchLabels") or {}), "pod-template-hash": hash_}
        owner = {"apiVersion": "apps/v1", "kind": "Deployment", "name": deploy.name,
                 **({"uid": deploy.uid} if deploy.uid else {}), "controller": True, "blockOwnerDeletion": True}
        out.append({"apiVersion": "apps/v1", "kind": "ReplicaSet",
                    "metadata": {"name": ref.name, "namespace": pod.namespace,
                                 "labels": dict(template_meta["labels"]), "ownerReferences": [owner]},
                    "spec": {"replicas": deploy.replicas, "selector": selector, "template": template}})
    return out


def accepts(pod: Pod, node_name: str, state: ClusterState, profile: Profile = DEFAULT_PROFILE) -> bool:
    """Would kube-scheduler's filters let `pod` bind to `node_name` now? Stops at the first rejection and
    skips a PreFilter known to return Skip (Plugin.pre_filter_skip)."""
    info = state.nodes[node_name]
    for plugin in profile.filters:
        assert plugin.filter is not None
        if plugin.pre_filter_skip is not None and plugin.pre_filter_skip(pod, state):
            continue
        pre = plugin.pre_filter(pod, state) if plugin.pre_filter else None
        if plugin.filter(pod, pre, info, state):
            return False
    return True


def binding_order(cluster: Cluster, placements: Mapping[str, str],
                  profile: Profile | Profiles = DEFAULT_PROFILE) -> tuple[list[Pod], list[Pod]]:
    """An order in which kube-scheduler's filters accept each binding, starting from the existing pods.

    Passes over the remaining pods in queue order, binding every pod its node accepts now; pods left when a
    pass binds nothing have no such order (returned second). Each pod is judged by its own profile's filters.
    """
    state = ClusterState.from_cluster(cluster)
    remaining = [p for p in queue_order(cluster.pending) if p.key in placements]
    ordered: list[Pod] = []
    while remaining:
        left = []
        for pod in remaining:
            node = placements[pod.key]
            if accepts(pod, node, state, profile.judge_with(pod) if isinstance(profile, Profiles) else profile):
                state.add(pod, node)
                ordered.append(pod)
            else:
                left.append(pod)
        if len(left) == len(remaining):
            return ordered, left
        remaining = left
    return ordered, []


def to_create(pod: Pod) -> bool:
    """A replica podplan made from its workload (not a Pod of the input): the controller will create it under
    a name of its own, so no Binding can name it."""
    return bool(pod.workload) and pod.where.kind == pod.workload.split("/", 1)[0]


def binding(pod: Pod, node_name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": pod.name, "namespace": pod.namespace},
            "target": {"apiVersion": "v1", "kind": "Node", "name": node_name}}


def bindings(cluster: Cluster, placements: Mapping[str, str], profile: Profile | Profiles = DEFAULT_PROFILE
             ) -> tuple[list[dict[str, Any]], list[Pod], list[Pod]]:
    """(Bindings in an order the filters accept, pods of the input with no such order, placed replicas the
    controllers will create). The order is worked out with the replicas where the plan puts them."""
    ordered, stuck = binding_order(cluster, placements, profile)
    docs = [binding(p, placements[p.key]) for p in ordered if not to_create(p)]
    return docs, [p for p in stuck if not to_create(p)], [p for p in (*ordered, *stuck) if to_create(p)]


def replicas_to_create(pods: Sequence[Pod], placements: Mapping[str, str]) -> list[str]:
    """One line per workload: how many placed replicas its controller will create and where the plan puts them
    (node counts, the first 5 nodes named)."""
    by_workload: dict[str, Counter[str]] = {}
    for p in pods:
        by_workload.setdefault(p.workload, Counter())[placements[p.key]] += 1
    lines = []
    for workload, nodes in by_workload.items():
        named = [f"{n} ({k})" if k > 1 else n for n, k in sorted(nodes.items())]
        more = f" and {len(named) - 5} more node(s)" if len(named) > 5 else ""
        lines.append(f"{workload}: {sum(nodes.values())} pod(s) to create, placed on {', '.join(named[:5])}{more}")
    return lines


# A table cell names at most this many objects, then counts the rest (-o json lists them all).
CELL_NAMES = 4


def names_cell(names: Sequence[str], limit: int = CELL_NAMES) -> str:
    """`a, b, c, d and 6 more (-o json lists all)`; `-` for none."""
    if len(names) <= limit:
        return ", ".join(names) or "-"
    return f"{', '.join(names[:limit])} and {len(names) - limit} more (-o json lists all)"


def plan_table(cluster: Cluster, plan: Plan, report: Report) -> str:
    """Placements per node, pending pods with their reason, then status and objective."""
    pending = {p.key: p for p in cluster.pending}
    by_node: dict[str, list[str]] = {}
    for k, n in plan.placements.items():
        by_node.setdefault(n, []).append(k)
    lines = []
    rows = [(n.name, len(by_node[n.name]), names_cell(sorted(by_node[n.name]))) for n in cluster.nodes
            if n.name in by_node]
    if rows:
        lines.append(table(("NODE", "NEW PODS", "PODS"), rows))
    if plan.preemptions:
        lines.append("")
        lines.append(table(("PREEMPTOR", "NODE", "VICTIMS"),
                           [(p.preemptor, p.node, ", ".join(p.victims)) for p in plan.preemptions]))
    if plan.pending:
        lines.append("")
        lines.append(table(("PENDING POD", "REASON"),
                           [(k, plan.pending[k]) for k in sorted(plan.pending, key=lambda k: pending[k].order)]))
    lines.append("")
    lines.append(f"status: {plan.status}")
    by_prio = ", ".join(f"priority {p}: {n}" for p, n in report.placed_by_priority.items()) or "none"
    lines.append(f"placed: {report.placed}/{len(cluster.pending)} ({by_prio})")
    terms = ", ".join(f"{k} {v}" for k, v in report.terms.items())
    lines.append(f"preference: {report.preference} ({terms})")
    if plan.bound:
        lines.append(f"bound: {bound_line(plan.bound)}")
    if plan.gaps:
        lines.append(f"gap: {gap_line(plan.gaps)}")
    lines.append(f"time: {plan.wall_seconds:.2f}s")
    for note in plan.notes:
        lines.append(f"note: {note}")
    broken = [v for v in report.violations if not v.preexisting]
    if broken:
        lines.append(f"final-state violations (pods whose rules a later bind broke, as kube-scheduler binds one pod "
                     f"at a time): {len(broken)}")
        for v in broken:
            lines.append(f"  {v.pod} on {v.node}: {v.plugin}: {v.reason}")
    pre = [v for v in report.violations if v.preexisting]
    if pre:
        lines.append(f"pre-existing violations (not caused by this plan): {len(pre)}")
        for v in pre:
            lines.append(f"  {v.pod} on {v.node}: {v.plugin}: {v.reason}")
    return "\n".join(lines)


def node_details(cluster: Cluster, placements: Mapping[str, str]) -> str:
    """-o wide: every node after the plan: zone, pods (new), cpu and memory requested of allocatable."""
    pending = {p.key: p for p in cluster.pending}
    on: dict[str, list[Pod]] = {}
    new: dict[str, int] = {}
    for p in cluster.pods:
        on.setdefault(p.node_name, []).append(p)
    for k, node in placements.items():
        on.setdefault(node, []).append(pending[k])
        new[node] = new.get(node, 0) + 1
    rows = []
    for n in cluster.nodes:
        pods = on.get(n.name, [])
        cpu = sum(p.requests.get("cpu", 0) for p in pods)
        mem = sum(p.requests.get("memory", 0) for p in pods)
        alloc_cpu, alloc_mem = n.allocatable.get("cpu", 0), n.allocatable.get("memory", 0)
        rows.append((n.name, n.labels.get("topology.kubernetes.io/zone", "-"), f"{len(pods)} (+{new.get(n.name, 0)})",
                     f"{cpu}m/{alloc_cpu}m ({100 * cpu // max(alloc_cpu, 1)}%)",
                     f"{mem // 2**20}Mi/{alloc_mem // 2**20}Mi ({100 * mem // max(alloc_mem, 1)}%)"))
    return table(("NODE", "ZONE", "PODS (NEW)", "CPU REQUESTED", "MEMORY REQUESTED"), rows)


def bound_line(bound: Mapping[str, object]) -> str:
    """A plan's proven bounds in words: `placed 6 (priority 0: 6), preference 0; tie-break proven`."""
    parts = []
    if "placed" in bound:
        by = bound.get("placed_by_priority") or {}
        parts.append(f"placed {bound['placed']}" + (" (" + ", ".join(f"priority {q}: {k}" for q, k in by.items()) + ")"
                                                   if by else ""))  # type: ignore[union-attr]
    if "preference" in bound:
        parts.append("preference " + ("unknown until placed is proven" if bound["preference"] is None
                                      else str(bound["preference"])))
    line = ", ".join(parts)
    if "strategy_proven" in bound:
        line += "; tie-break " + ("proven" if bound["strategy_proven"] else "not proven")
    return line


def gap_line(gaps: Mapping[str, Mapping[str, object]]) -> str:
    """Each level's distance to its proven bound, absolute and relative (relative only against a non-zero bound)."""
    parts = []
    placed = gaps.get("placed")
    if placed:
        parts.append(f"placed {placed['absolute']} pod(s) ({placed['relative']:.2%})")
    pref = gaps.get("preference")
    if pref:
        if pref["bound"] is None:
            parts.append("preference unknown (no bound yet)")
        elif pref["relative"] is None:
            parts.append(f"preference {pref['absolute']} below its bound of {pref['bound']}")
        else:
            parts.append(f"preference {pref['absolute']} ({pref['relative']:.2%})")
    return ", ".join(parts)


def preemption_evictions(cluster: Cluster, plan: Plan, fmt: str) -> str:
    """policy/v1 Evictions for the victims of a plan's preemptions, in PDB-safe waves: the first wave holds
    every victim its PodDisruptionBudget allows to go now (the Eviction API's arithmetic, optimizer.disruption);
    victims beyond a budget (solve --preempt --allow-pdb-violations) come last, with the budget they exceed:
    the Eviction API will answer 429 for them until the budget allows it, so a person decides. A YAML stream
    with a comment line per wave, or JSON waves."""
    by_key = {p.key: p for p in cluster.pods}
    victims = [by_key[v] for pre in plan.preemptions for v in pre.victims if v in by_key]
    spent: dict[str, int] = {}
    allowed: dict[str, int] = {}
    now, later = [], []
    healthy = [(p, pod_ready(p)) for p in cluster.pods]
    for pod in victims:
        over = []
        for pdb in guarding(cluster.pdbs, pod):
            if pdb.key not in allowed:
                allowed[pdb.key] = budget(pdb, healthy, cluster.workloads).allowed
            if spent.get(pdb.key, 0) + 1 > allowed[pdb.key]:
                over.append(pdb.key)
        if over:
            later.append((pod, over))
            continue
        for pdb in guarding(cluster.pdbs, pod):
            spent[pdb.key] = spent.get(pdb.key, 0) + 1
        now.append(pod)
    waves = [("wave 1: within every PodDisruptionBudget", [(p, []) for p in now])] if now else []
    if later:
        waves.append(("wave 2: beyond a PodDisruptionBudget (the Eviction API refuses these with 429 until it "
                      "allows them)", later))
    if fmt == "json":
        return json.dumps({"waves": [{"wave": i, "note": title, "items": [eviction(p) for p, _ in items],
                                      "exceeds": {p.key: over for p, over in items if over}}
                                     for i, (title, items) in enumerate(waves, 1)]}, indent=2)
    parts = []
    for title, items in waves:
        parts.append(f"# {title}")
        for pod, over in items:
            if over:
                parts.append(f"# {pod.key} exceeds {', '.join(over)}")
            parts.append("---\n" + yaml.safe_dump(eviction(pod), sort_keys=False).rstrip("\n"))
    return "\n".join(parts) if parts else "# nothing to evict: the plan preempts no pod"


def eviction(pod: Pod) -> dict[str, Any]:
    """A policy/v1 Eviction, with the pod's uid from the input as a precondition (a pod recreated since is
    refused, 409, rather than evicted)."""
    body: dict[str, Any] = {"apiVersion": "policy/v1", "kind": "Eviction",
                            "metadata": {"name": pod.name, "namespace": pod.namespace}}
    if pod.uid:
        body["deleteOptions"] = {"preconditions": {"uid": pod.uid}}
    return body
