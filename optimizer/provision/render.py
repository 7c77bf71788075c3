"""`podplan provision` output: the JSON/YAML document (names kept stable for scripts) and the table."""
from __future__ import annotations

from collections import defaultdict
from typing import Any

from ..render.plans import table
from .core import Added, ProvisionAnswer, summary


def _money(x: float) -> float:
    return round(x, 6)


def _add(rows: list[Added]) -> list[dict[str, Any]]:
    return [{"type": a.type, "zone": a.zone, "count": a.count, "price": _money(a.price)} for a in rows]


def estimator_rows(a: ProvisionAnswer, types) -> list[Added]:
    est = a.estimator
    offers = [o for o, k in est.add for _ in range(k)]
    return summary(list(zip(offers, est.nodes)), types)


def provision_document(a: ProvisionAnswer, types) -> dict[str, Any]:
    est_rows = estimator_rows(a, types)
    est_cost = sum(r.price * r.count for r in est_rows)
    order = {p.key: i for i, p in enumerate(a.grown.pending)}
    return {
        "status": str(a.status),
        "add": _add(list(a.add)),
        "cost": _money(a.cost),
        "nodes": len(a.nodes),
        "bound": _money(a.bound),
        "gap": _money(a.gap),
        "relative_gap": round(a.relative_gap, 6),
        "estimator": {"add": _add(est_rows), "cost": _money(est_cost), "nodes": a.estimator.count(),
                      "pending": sorted(a.estimator.pending)},
        "saving": {"price": _money(est_cost - a.cost), "nodes": a.estimator.count() - len(a.nodes)}
        if not a.estimator.pending else None,
        "new_nodes": [n.name for n in a.nodes],
        "placements": [{"pod": k, "node": a.placements[k]} for k in sorted(a.placements, key=lambda k: order.get(k, 0))],
        "pending": [{"pod": k, "reason": v} for k, v in sorted(a.pending.items(), key=lambda kv: order.get(kv[0], 0))],
        "wall_seconds": round(a.wall_seconds, 3),
        "notes": list(a.notes),
    }


def provision_table(a: ProvisionAnswer, types) -> str:
    est_rows = estimator_rows(a, types)
    est_cost = sum(r.price * r.count for r in est_rows)
    mine = {(r.type, r.zone): r for r in a.add}
    theirs = {(r.type, r.zone): r for r in est_rows}
    keys = [(r.type, r.zone) for r in a.add] + [k for k in theirs if k not in mine]
    price = {t.name: t.price for t in types.types}
    rows = [(t, z or "-", f"{price[t]:g}", mine[(t, z)].count if (t, z) in mine else 0,
             theirs[(t, z)].count if (t, z) in theirs else 0) for t, z in keys]
    lines = []
    if rows:
        lines.append(table(("TYPE", "ZONE", "PRICE", "ADD", "ESTIMATOR"), rows))
    elif a.status == "UNKNOWN":
        lines.append("no new node chosen: the time ran out before the estimator's first expansion (see the note)")
    else:
        lines.append("no new node needed: every pending pod fits the existing nodes")
    on_new: dict[str, int] = defaultdict(int)
    for node in a.placements.values():
        on_new[node] += 1
    if a.nodes:
        lines += ["", table(("NEW NODE", "ZONE", "PODS"), [(n.name, n.labels.get("topology.kubernetes.io/zone", "-"),
                                                            on_new.get(n.name, 0)) for n in a.nodes])]
    if a.pending:
        lines += ["", table(("PENDING POD", "REASON"), sorted(a.pending.items()))]
    lines.append("")
    lines.append(f"status: {a.status}")
    lines.append(f"cost: {a.cost:g} for {len(a.nodes)} new node(s); placed {len(a.placements)} pending pod(s)")
    lines.append(f"bound: {a.bound:g}")
    lines.append(f"gap: {a.gap:g} ({a.relative_gap:.2%})")
    if a.estimator.pending:
        lines.append(f"estimator (cluster-autoscaler, least-waste): {est_cost:g} for {a.estimator.count()} node(s), "
                     f"{len(a.estimator.pending)} pod(s) still pending")
    else:
        lines.append(f"estimator (cluster-autoscaler, least-waste): {est_cost:g} for {a.estimator.count()} node(s); "
                     f"saving {est_cost - a.cost:g} ({(est_cost - a.cost) / est_cost if est_cost else 0:.1%}) and "
                     f"{a.estimator.count() - len(a.nodes)} node(s)")
    lines.append(f"time: {a.wall_seconds:.2f}s")
    lines.extend(f"note: {n}" for n in a.notes)
    return "\n".join(lines)
