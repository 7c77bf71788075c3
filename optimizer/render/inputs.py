"""`podplan validate`, `verify` and `explain` rendered: what the input holds, a final state's verdicts, every
node's verdict for every pending pod."""
from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from ...models.objects import Cluster
from ...models.workloads import daemon_node_counts
from .text import table

if TYPE_CHECKING:  # annotations only: validate imports this module and must not pull in the solver stack
    from ..explain import PodExplanation
    from ..plan import Plan, Preemption
    from ..solve import Blocker
    from ..verify import Report


def summary(cluster: Cluster) -> dict[str, Any]:
    zones = Counter(n.labels.get("topology.kubernetes.io/zone", "<none>") for n in cluster.nodes)
    every = cluster.pods + cluster.pending
    rules: Counter[str] = Counter()
    # pods share their affinity and spread objects (models.parse reads each distinct one once): each distinct
    # combination is counted once, times its pods (per pod, eleven counters cost 0.3 s at 5,000 nodes)
    shapes = Counter((id(p.affinity), id(p.spread_constraints), bool(p.node_selector), bool(p.tolerations),
                      bool(p.host_ports)) for p in every)
    example = {(id(p.affinity), id(p.spread_constraints)): p for p in every}  # keeps each id's object alive
    for (aid, sid, selector, tolerations, ports), count in shapes.items():
        p = example[(aid, sid)]
        a = p.affinity
        rules["nodeSelector"] += count * selector
        rules["requiredNodeAffinity"] += count * (a.node_required is not None)
        rules["preferredNodeAffinity"] += count * bool(a.node_preferred)
        rules["requiredPodAffinity"] += count * bool(a.pod_required)
        rules["preferredPodAffinity"] += count * bool(a.pod_preferred)
        rules["requiredPodAntiAffinity"] += count * bool(a.anti_required)
        rules["preferredPodAntiAffinity"] += count * bool(a.anti_preferred)
        rules["tolerations"] += count * tolerations
        rules["hostPorts"] += count * ports
        when = {c.when_unsatisfiable for c in p.spread_constraints}
        rules["spreadDoNotSchedule"] += count * ("DoNotSchedule" in when)
        rules["spreadScheduleAnyway"] += count * ("ScheduleAnyway" in when)
    rules["taintedNodes"] = sum(1 for n in cluster.nodes if n.taints)
    rules["unschedulableNodes"] = sum(1 for n in cluster.nodes if n.unschedulable)
    rules["podDisruptionBudgets"] = len(cluster.pdbs)
    rules["podGroups"] = len(cluster.pod_groups)
    # one pass over the pending pods (per workload it was workloads x pods: 140 s at 5,000 nodes)
    pending_of = Counter(p.workload for p in cluster.pending)
    daemons = daemon_node_counts(cluster) if any(w.kind == "DaemonSet" for w in cluster.workloads) else {}
    return {
        "nodes": len(cluster.nodes),
        "nodesByZone": dict(sorted(zones.items())),
        "existingPods": len(cluster.pods),
        "pendingPods": len(cluster.pending),
        # A DaemonSet has no replicas: count the nodes it runs on or should run on.
        "workloads": [{"workload": w.key,
                       "replicas": daemons.get(w.key, 0) if w.kind == "DaemonSet" else w.replicas,
                       "pending": pending_of.get(w.key, 0)} for w in cluster.workloads],
        "rules": {k: v for k, v in rules.items() if v},
        "skipped": dict(cluster.skipped),
        "warnings": len(cluster.warnings),
    }


# validate's table lists at most this many workloads (a 300-node cluster holds hundreds); -o wide lists all.
SUMMARY_WORKLOADS = 20


def summary_table(s: dict[str, Any], wide: bool = False) -> str:
    lines = [table(("ZONE", "NODES"), list(s["nodesByZone"].items())), "",
             f"pods: {s['existingPods']} existing, {s['pendingPods']} pending"]
    if s["workloads"]:
        # the workloads with pending pods first (what a plan is about), each group in input order
        ordered = sorted(s["workloads"], key=lambda w: not w["pending"])  # stable: input order within each
        shown = ordered if wide else ordered[:SUMMARY_WORKLOADS]
        rows = [(w["workload"], w["replicas"], w["pending"]) for w in shown]
        rest = ordered[len(shown):]
        if rest:
            rows.append((f"... and {len(rest)} more (-o wide lists all)", sum(w["replicas"] for w in rest),
                         sum(w["pending"] for w in rest)))
        lines += ["", table(("WORKLOAD", "REPLICAS", "PENDING"), rows)]
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


# Above these sizes explain prints one line per pod unless --nodes asks for every node's verdict.
SUMMARY_PODS = 20
SUMMARY_NODES = 50
JUDGED = ("judged against the batch's final state: the existing pods plus the other pending pods where simulate "
          "places them, without the pods its preemptions evict (each pod without itself)")


def explain_document(pods: list[PodExplanation], preemptions: Sequence[Preemption] = ()) -> dict[str, Any]:
    """-o json|yaml: every asked pod's verdicts, and simulate's preemptions (their victims are not in the state
    the pods are judged against)."""
    return {"judgedAgainst": JUDGED, "pods": [p.to_dict() for p in pods],
            "preemptions": [{"preemptor": p.preemptor, "node": p.node, "victims": list(p.victims)}
                            for p in preemptions]}


def stream_explain_document(pods: Iterable[PodExplanation], preemptions: Callable[[], Sequence[Preemption]],
                            fmt: str, write: Callable[[str], None]) -> None:
    """explain_document as text (the same text `dump` gives), written one pod at a time: every node's verdict
    and scores for thousands of pods does not fit in memory as one document (1,000 nodes x 3,400 pods ran out
    of 8 GB). `preemptions` is called once the pods are written."""
    import yaml

    from ... import KUBE_VERSION
    from .text import _Dumper, dump

    if fmt == "json":
        write("{\n" + f'  "kubeVersion": {json.dumps(KUBE_VERSION)},\n  "judgedAgainst": {json.dumps(JUDGED)},\n'
              '  "pods": [')
        first = True
        for p in pods:
            body = json.dumps(p.to_dict(), indent=2)
            write(("\n" if first else ",\n") + "\n".join("    " + line for line in body.splitlines()))
            first = False
        write(("]" if first else "\n  ]") + ",\n")
        tail = json.dumps({"preemptions": _preemptions(preemptions())}, indent=2)
        write("\n".join(tail.splitlines()[1:]) + "\n")
        return
    write(dump({"judgedAgainst": JUDGED}, "yaml"))
    first = True
    for p in pods:
        write(("pods:\n" if first else "") + yaml.dump([p.to_dict()], Dumper=_Dumper, sort_keys=False))
        first = False
    if first:
        write("pods: []\n")
    # not through dump: the document's head (kubeVersion) is written once, above
    write(yaml.dump({"preemptions": _preemptions(preemptions())}, Dumper=_Dumper, sort_keys=False))


def _preemptions(preemptions: Sequence[Preemption]) -> list[dict[str, Any]]:
    return [{"preemptor": p.preemptor, "node": p.node, "victims": list(p.victims)} for p in preemptions]


def _failing_by_plugin(p: PodExplanation) -> str:
    """`TaintToleration 4, NodeAffinity 2`: nodes failing each plugin (a node failing two counts under both)."""
    # a node counts once per plugin, however many reasons it gives (Insufficient cpu and memory: one node)
    counts: Counter[str] = Counter(plugin for n in p.nodes.values() for plugin in {r.plugin for r in n.reasons})
    return ", ".join(f"{plugin} {k}" for plugin, k in counts.most_common()) or "-"


def _changed(p: PodExplanation) -> str:
    return f"note: against the existing pods only (without the other pending pods): {p.alone}"


def explain_summary(pods: list[PodExplanation]) -> str:
    if not pods:
        return "no pending pods"
    rows = [(p.pod, p.planned or "pending", p.message.split()[0], p.alone.split()[0] if p.alone else "same",
             _failing_by_plugin(p)) for p in pods]
    lines = [JUDGED, "", table(("POD", "SIMULATE", "AVAILABLE", "EXISTING PODS ONLY", "FAILING NODES BY PLUGIN"),
                               rows)]
    # The verdict changes when the pod fits somewhere in one state and nowhere in the other.
    blocked = sum(1 for p in pods if p.alone and p.message.startswith("0/") and not p.alone.startswith("0/"))
    helped = sum(1 for p in pods if p.alone and p.alone.startswith("0/") and not p.message.startswith("0/"))
    if blocked:
        lines += ["", f"note: {blocked} pod(s) fit nowhere once the other pending pods are placed, but fit against "
                      "the existing pods only"]
    if helped:
        lines += ["", f"note: {helped} pod(s) fit only thanks to other pending pods (e.g. pod affinity to a pod of "
                      "the same batch): against the existing pods only they fit nowhere"]
    lines += ["", "one line per pod; --nodes (or --pod NS/NAME, -o json) for every node's verdict and scores"]
    return "\n".join(lines)


def explain_table(pods: list[PodExplanation]) -> str:
    blocks = [JUDGED]
    for p in pods:
        rows = []
        for name, n in p.nodes.items():
            verdict = "feasible" if n.feasible else "; ".join(f"{r.plugin}: {r.reason}" for r in n.reasons)
            scores = " ".join(f"{k}={v}" for k, v in n.scores.items())
            rows.append((name, verdict, scores))
        head = [f"{p.pod}: {p.message}",
                f"simulate places it on {p.planned}" if p.planned else "simulate leaves it pending"]
        if p.alone:
            head.append(_changed(p))
        blocks.append("\n".join(head) + "\n" + table(("NODE", "VERDICT", "SCORES"), rows))
    return "\n\n".join(blocks) if pods else "no pending pods"


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

    # A pod with no blocker from the solver (gated, another scheduler's, kept out by a gang) still gets a row:
    # the plan's own reason for it.
    rows = [(p["pod"], b["plugin"], b["object"], b["field"], b["reason"], nodes(b["nodes"]))
            for p in doc["pending"] for b in (p["blockers"] or [{"plugin": "-", "object": f"Pod/{p['pod']}",
                                                                  "field": "-", "reason": p["reason"], "nodes": []}])]
    return f"status: {doc['status']}\n" + table(("PENDING POD", "PLUGIN", "OBJECT", "FIELD", "REASON", "NODES"), rows)
