"""`podplan compare` rendered: the `-o json` document, the text table, and the rows the HTML report shares."""
from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import asdict
from typing import Any

from ..compare import GREEDY, OPTIMAL, TERM_TITLES, TITLES, Column, Comparison, greedy_breaks
from ..objective import TERMS
from .plans import table

def _r(x: float) -> float:
    return round(x, 4)


def searched(c: Column) -> str:
    """How far the column's plan was searched, in words, from its notes: every optimal column says when it is
    greedy's plan kept (never searched), in the table and the report, not only in -o json's notes."""
    from ..timelimit import KEPT_PREFIX, kept_in_short

    if c.name in ("greedy", "current"):
        return "-"  # kube-scheduler's plan, or the input: nothing to search
    notes = c.notes
    kept = next((n for n in notes if n.startswith(KEPT_PREFIX)), None)
    if kept is not None:
        return "no: greedy's plan kept (" + kept_in_short(kept) + ")"
    if any(n.startswith("interrupted") for n in notes):
        return "interrupted: best plan so far"
    fallback = next((n for n in notes if n.startswith(("greedy fallback:", "warm start kept"))), None)
    if fallback is not None:
        return "yes, ended below its warm start: " + ("greedy's" if fallback.startswith("greedy") else
                                                         "the warm start's") + " plan kept"
    parts = next((n for n in notes if "kept greedy's placement unsearched" in n), None)
    if parts is not None:
        k = parts.split("; ")[-1].split(" part(s)")[0].split()[-1]
        return f"partly: {k} part(s) kept greedy's placement unsearched"
    return "yes"


def column_dict(c: Column) -> dict[str, Any]:
    r = c.report
    reasons = Counter(c.pending.values())
    return {
        "name": c.name,
        "title": c.title,
        "status": c.status,
        "searched": searched(c),
        "to_place": sum(c.to_place.values()),
        "placed": sum(c.placed_batch.values()),
        "placed_by_priority": {str(p): {"placed": c.placed_batch.get(p, 0), "of": n}
                               for p, n in c.to_place.items()},
        "pending": sum(c.to_place.values()) - sum(c.placed_batch.values()),
        "recreated": {"placed": c.recreated[0], "of": c.recreated[1]},
        "pdb_broken": list(c.pdb_broken),
        "pending_reasons": dict(reasons.most_common()),
        "pending_pods": [{"pod": k, "reason": v} for k, v in c.pending.items()],
        "placements": dict(c.placements),  # pod -> node, the pods this column had to place
        "running": c.running,
        "victims": c.victims,
        "violations": c.violations,
        "violations_list": [{"pod": v.pod, "node": v.node, "plugin": v.plugin, "reason": v.reason}
                            for v in r.violations if not v.preexisting],
        "preference": r.preference,
        "terms": {k: r.terms.get(k, 0) for k in TERMS},
        "schedule_anyway": [{"constraint": g.label, "namespace": g.namespace, "topology_key": g.topology_key,
                             "selector": g.selector, "max_skew": g.max_skew, "skew": g.skew, "excess": g.excess}
                            for g in c.skew],
        "nodes_used": c.nodes_used,
        "nodes_used_without_daemonsets": c.nodes_used_apps,
        "cpu": {k: _r(v) for k, v in asdict(c.usage.cpu_stats).items()},
        "memory": {k: _r(v) for k, v in asdict(c.usage.memory_stats).items()},
        "bound": c.bound or None,
        "gap": c.gap,
        "wall_seconds": None if c.wall_seconds is None else round(c.wall_seconds, 3),
        "notes": list(c.notes),
    }


def to_dict(cmp: Comparison) -> dict[str, Any]:
    """The `-o json` document; the HTML report renders the same numbers."""
    names = [c.name for c in cmp.columns]
    greedy, optimal = cmp.column(GREEDY), cmp.column(OPTIMAL)
    return {
        "columns": [column_dict(c) for c in cmp.columns],
        "greedy_breaks_rules": greedy_breaks(greedy, optimal) if greedy and optimal else "",
        "movable_pods": cmp.movable,
        "multipliers": asdict(cmp.multipliers),
        "differences": [{"between": list(pair), "count": len(diffs),
                         "pods": [{"pod": d.pod, pair[0]: d.a or None, pair[1]: d.b or None} for d in diffs]}
                        for pair, diffs in cmp.differences.items()],
        "nodes": [{"node": n, "before": {"cpu": _r(cmp.before.cpu[n]), "memory": _r(cmp.before.memory[n])},
                   **{c: {"cpu": _r(cmp.column(c).usage.cpu[n]), "memory": _r(cmp.column(c).usage.memory[n])}  # type: ignore[union-attr]
                      for c in names}}
                  for n in cmp.nodes],
    }


def pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def fmt_gap(gap: float | None) -> str:
    return "-" if gap is None else f"{gap:.2%}"


def fmt_bound(bound: Mapping[str, object] | None) -> str:
    if not bound:
        return "-"
    parts = [f"placed {bound.get('placed')}"]
    if bound.get("preference") is not None:
        parts.append(f"preference {bound['preference']}")
    return ", ".join(parts)


def fmt_seconds(s: float | None) -> str:
    return "-" if s is None else f"{s:.2f}s"


def rows(doc: Mapping[str, Any]) -> list[tuple[str, list[str]]]:
    """The comparison's rows (label, one cell per column), shared by the text table and the HTML report."""
    cols = doc["columns"]
    prios: list[str] = []
    for c in cols:
        prios += [p for p in c["placed_by_priority"] if p not in prios]
    prios.sort(key=int, reverse=True)
    out: list[tuple[str, list[str]]] = [("status", [c["status"] for c in cols]),
                                        ("searched", [c.get("searched", "-") for c in cols]),
                                        ("pods placed", [f"{c['placed']}/{c['to_place']}" for c in cols])]
    for p in prios:
        out.append((f"  priority {p}", [f"{c['placed_by_priority'][p]['placed']}/{c['placed_by_priority'][p]['of']}"
                                        if p in c["placed_by_priority"] else "-" for c in cols]))
    out.append(("pods pending", [str(c["pending"]) for c in cols]))
    out.append(("pods running (final state)", [str(c["running"]) for c in cols]))
    if any(c.get("victims") for c in cols):
        out.append(("pods evicted by preemption", [str(c.get("victims", 0)) for c in cols]))
        out.append(("  their replacements placed", [f"{c['recreated']['placed']}/{c['recreated']['of']}"
                                                   for c in cols]))
        out.append(("  PodDisruptionBudgets broken", [
            (f"{len(c['pdb_broken'])}: " + "; ".join(c["pdb_broken"])) if c.get("pdb_broken") else "0"
            for c in cols]))
    out.append(("violations", [str(c["violations"]) for c in cols]))
    out.append(("preference score", [str(c["preference"]) for c in cols]))
    for t in TERMS:
        out.append((f"  {TERM_TITLES[t]}", [str(c["terms"][t]) for c in cols]))
    labels: list[str] = []
    for c in cols:
        labels += [g["constraint"] for g in c["schedule_anyway"] if g["constraint"] not in labels]
    for label in labels:
        cells = []
        for c in cols:
            g = next((g for g in c["schedule_anyway"] if g["constraint"] == label), None)
            cells.append("-" if g is None else f"skew {g['skew']} (excess {g['excess']})")
        out.append((f"    {label}", cells))
    out.append(("nodes used", [str(c["nodes_used"]) for c in cols]))
    out.append(("  without DaemonSet pods", [str(c["nodes_used_without_daemonsets"]) for c in cols]))
    for res in ("cpu", "memory"):
        out.append((f"{res} utilization max/mean/stddev",
                    [f"{pct(c[res]['max'])} / {pct(c[res]['mean'])} / {pct(c[res]['stddev'])}" for c in cols]))
    out.append(("bound", [fmt_bound(c["bound"]) for c in cols]))
    out.append(("gap", [fmt_gap(c["gap"]) for c in cols]))
    out.append(("time", [fmt_seconds(c["wall_seconds"]) for c in cols]))
    return out


def render_table(doc: Mapping[str, Any]) -> str:
    """The `-o table` text: the comparison rows, pending reasons, then the pods whose node differs."""
    cols = doc["columns"]
    lines = [table(["", *(c["title"].upper() for c in cols)], [(label, *cells) for label, cells in rows(doc)])]
    reasons: list[str] = []
    for c in cols:
        reasons += [r for r in c["pending_reasons"] if r not in reasons]
    if reasons:
        lines += ["", table(["WHY PENDING", *(c["title"].upper() for c in cols)],
                            [(r, *(str(c["pending_reasons"].get(r, 0)) for c in cols)) for r in reasons])]
    for c in cols:
        if c.get("violations_list"):
            lines += ["", f"{c['title']}: the final state breaks rules of pods placed before a later bind "
                          "(kube-scheduler checks only the incoming pod's rules)",
                      table(["POD", "NODE", "PLUGIN", "REASON"],
                            [(v["pod"], v["node"], v["plugin"], v["reason"]) for v in c["violations_list"]])]
    if doc.get("greedy_breaks_rules"):
        lines += ["", f"note: {doc['greedy_breaks_rules']}"]
    for d in doc["differences"]:
        a, b = d["between"]
        head = f"{TITLES[a]} vs {TITLES[b]}: {d['count']} pod(s) on a different node (identical replicas paired up)"
        if not d["pods"]:
            lines += ["", head.replace(f"{d['count']} pod(s)", "no pod")]
            continue
        lines += ["", head, table(["POD", TITLES[a].upper(), TITLES[b].upper()],
                                  [(p["pod"], p[a] or "(pending)", p[b] or "(pending)") for p in d["pods"]])]
    if doc["movable_pods"]:
        lines += ["", f"movable pods re-placed: {doc['movable_pods']} (owned by a controller, not DaemonSet, "
                      "not mirror: the descheduler's default eviction policy, see README \"Which pods move\")"]
    return "\n".join(lines)
