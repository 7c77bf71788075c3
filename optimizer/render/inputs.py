"""`podplan validate`, `verify` and `explain` rendered: what the input holds, a final state's verdicts, every
node's verdict for every pending pod."""
from __future__ import annotations

from collections import Counter
from typing import Any

from ...models.objects import Cluster
from ...models.workloads import daemon_nodes
from ..explain import PodExplanation
from ..plan import Plan
from ..solve import Blocker
from ..verify import Report
from .plans import table


def summary(cluster: Cluster) -> dict[str, Any]:
    zones = Counter(n.labels.get("topology.kubernetes.io/zone", "<none>") for n in cluster.nodes)
    every = cluster.pods + cluster.pending
    rules: Counter[str] = Counter()
    for p in every:
        a = p.affinity
        rules["nodeSelector"] += bool(p.node_selector)
        rules["requiredNodeAffinity"] += a.node_required is not None
        rules["preferredNodeAffinity"] += bool(a.node_preferred)
        rules["requiredPodAffinity"] += bool(a.pod_required)
        rules["preferredPodAffinity"] += bool(a.pod_preferred)
        rules["requiredPodAntiAffinity"] += bool(a.anti_required)
        rules["preferredPodAntiAffinity"] += bool(a.anti_preferred)
        rules["tolerations"] += bool(p.tolerations)
        rules["hostPorts"] += bool(p.host_ports)
        rules["spreadDoNotSchedule"] += any(c.when_unsatisfiable == "DoNotSchedule" for c in p.spread_constraints)
        rules["spreadScheduleAnyway"] += any(c.when_unsatisfiable == "ScheduleAnyway" for c in p.spread_constraints)
    rules["taintedNodes"] = sum(1 for n in cluster.nodes if n.taints)
    rules["unschedulableNodes"] = sum(1 for n in cluster.nodes if n.unschedulable)
    rules["podDisruptionBudgets"] = len(cluster.pdbs)
    rules["podGroups"] = len(cluster.pod_groups)
    return {
        "nodes": len(cluster.nodes),
        "nodesByZone": dict(sorted(zones.items())),
        "existingPods": len(cluster.pods),
        "pendingPods": len(cluster.pending),
        # A DaemonSet has no replicas: count the nodes it runs on or should run on.
        "workloads": [{"workload": w.key,
                       "replicas": daemon_nodes(cluster, w) if w.kind == "DaemonSet" else w.replicas,
                       "pending": sum(1 for p in cluster.pending if p.workload == w.key)} for w in cluster.workloads],
        "rules": {k: v for k, v in rules.items() if v},
        "skipped": dict(cluster.skipped),
        "warnings": len(cluster.warnings),
    }


def summary_table(s: dict[str, Any]) -> str:
    lines = [table(("ZONE", "NODES"), list(s["nodesByZone"].items())), "",
             f"pods: {s['existingPods']} existing, {s['pendingPods']} pending"]
    if s["workloads"]:
        lines += ["", table(("WORKLOAD", "REPLICAS", "PENDING"),
                            [(w["workload"], w["replicas"], w["pending"]) for w in s["workloads"]])]
    if s["rules"]:
        lines += ["", table(("RULE", "PODS/OBJECTS"), list(s["rules"].items()))]
    if s["skipped"]:
        lines += ["", "skipped kinds: " + ", ".join(f"{k} ({v})" for k, v in sorted(s["skipped"].items()))]
    return "\n".join(lines)


def verify_document(cluster: Cluster, report: Report) -> dict[str, Any]:
    counted = [v for v in report.violations if not v.preexisting]
    static = [v for v in report.violations if v.preexisting]
    return {"ok": report.ok, "pods": len(cluster.pods),
            "violations": [{"pod": v.pod, "node": v.node, "plugin": v.plugin, "reason": v.reason} for v in counted],
            "static_pod_violations": [{"pod": v.pod, "node": v.node, "plugin": v.plugin, "reason": v.reason}
                                      for v in static],
            "preference": report.preference, "terms": dict(report.terms)}


def verify_table(cluster: Cluster, report: Report) -> str:
    counted = [v for v in report.violations if not v.preexisting]
    static = [v for v in report.violations if v.preexisting]
    lines = []
    if counted:
        lines.append(table(("POD", "NODE", "PLUGIN", "REASON"), [(v.pod, v.node, v.plugin, v.reason) for v in counted]))
        lines.append("")
    if static:
        lines.append("not counted (static pods: the kubelet runs them without kube-scheduler):")
        lines.append(table(("POD", "NODE", "PLUGIN", "REASON"), [(v.pod, v.node, v.plugin, v.reason) for v in static]))
        lines.append("")
    lines.append(f"{'OK' if report.ok else 'INVALID'}: {len(cluster.pods)} pods judged, {len(counted)} violation(s)"
                 + (f", {len(static)} of static pods not counted" if static else ""))
    lines.append(f"preference: {report.preference} (" + ", ".join(f"{k} {v}" for k, v in report.terms.items()) + ")")
    return "\n".join(lines)


def explain_table(pods: list[PodExplanation]) -> str:
    blocks = []
    for p in pods:
        rows = []
        for name, n in p.nodes.items():
            verdict = "feasible" if n.feasible else "; ".join(f"{r.plugin}: {r.reason}" for r in n.reasons)
            scores = " ".join(f"{k}={v}" for k, v in n.scores.items())
            rows.append((name, verdict, scores))
        blocks.append(f"{p.pod}: {p.message}\n" + table(("NODE", "VERDICT", "SCORES"), rows))
    return "\n\n".join(blocks) if blocks else "no pending pods"


def why_pending_document(plan: Plan, blockers: dict[str, list[Blocker]]) -> dict[str, Any]:
    return {"status": plan.status,
            "pending": [{"pod": k, "reason": plan.pending[k],
                         "blockers": [{"plugin": b.plugin, "object": b.object, "field": b.field,
                                       "reason": b.reason, "nodes": list(b.nodes)} for b in blockers.get(k, [])]}
                        for k in plan.pending]}


def why_pending_table(doc: dict[str, Any]) -> str:
    if not doc["pending"]:
        return f"status: {doc['status']}: the optimum places every pending pod"

    def nodes(names: list[str]) -> str:
        return ", ".join(names[:3]) + (f" (+{len(names) - 3})" if len(names) > 3 else "") if names else "-"

    rows = [(p["pod"], b["plugin"], b["object"], b["field"], b["reason"], nodes(b["nodes"]))
            for p in doc["pending"] for b in p["blockers"]]
    return f"status: {doc['status']}\n" + table(("PENDING POD", "PLUGIN", "OBJECT", "FIELD", "REASON", "NODES"), rows)
