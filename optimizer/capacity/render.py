"""`podplan capacity` output: the JSON/YAML document (names kept stable for scripts) and the table."""
from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

from ..render.plans import table
from .core import CapacityAnswer


def _template_of(key: str) -> str:
    return key.split("/", 1)[1].rsplit("-capacity-", 1)[0]


def capacity_document(a: CapacityAnswer) -> dict[str, Any]:
    order = {p.key: i for i, p in enumerate(a.final.pending)}
    doc: dict[str, Any] = {
        "status": str(a.status),
        "templates": [{"name": t.name, "ratio": t.ratio, "count": t.count, "bound": t.bound,
                       "greedy": {"count": t.greedy.count, "stopped_by": t.greedy.stopped_by}}
                      for t in a.templates],
    }
    if a.scale is not None:
        doc["scale"] = a.scale
        doc["scale_greedy"] = a.greedy_scale
    doc.update({
        "bound": a.bound,
        "gap": a.gap,
        "each": a.each,
        "placements": [{"pod": k, "node": a.placements[k]} for k in sorted(a.placements, key=lambda k: order.get(k, 0))],
        "input": None if a.input_plan is None else {
            "status": str(a.input_plan.status), "placed": len(a.input_plan.placements),
            "pending": sorted(a.input_plan.pending)},
        "wall_seconds": round(a.wall_seconds, 3),
        "notes": list(a.notes),
    })
    return doc


def capacity_table(a: CapacityAnswer) -> str:
    rows = [(t.name, t.ratio, t.count, t.bound, t.greedy.count, t.greedy.stopped_by or "-") for t in a.templates]
    lines = [table(("TEMPLATE", "RATIO", "COUNT", "BOUND", "GREEDY", "GREEDY STOPPED BY"), rows)]
    per_node: dict[str, Counter[str]] = defaultdict(Counter)
    for key, node in a.placements.items():
        per_node[node][_template_of(key)] += 1
    if per_node:
        names = [t.name for t in a.templates if any(t.name in c for c in per_node.values())]
        node_rows = [(n.name, *(per_node[n.name].get(t, 0) for t in names)) for n in a.final.nodes
                     if n.name in per_node]
        lines += ["", table(("NODE", *(f"+{t}" for t in names)), node_rows)]
    lines.append("")
    lines.append(f"status: {a.status}")
    if a.scale is not None:
        mix = ":".join(str(t.ratio) for t in a.templates)
        lines.append(f"scale: {a.scale} ({mix} copies per unit; kube-scheduler's greedy: {a.greedy_scale})")
    lines.append(f"bound: {a.bound}" + (" (scale)" if a.scale is not None else " copies"))
    rel = f" ({a.gap / a.bound:.2%})" if a.bound else ""
    lines.append(f"gap: {a.gap}{rel}")
    if a.each:
        lines.append("each: every template's own maximum, alone on the cluster")
    lines.append(f"time: {a.wall_seconds:.2f}s")
    lines.extend(f"note: {n}" for n in a.notes)
    return "\n".join(lines)
