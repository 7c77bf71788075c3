"""What `podplan consolidate` prints: the table (the removal, its saving, bound and gap, cluster-autoscaler's
answer and the difference, the waves as rebalance prints them), and the document for -o json|yaml.

The computation is optimizer.consolidate; this module renders plans that passed the verifier."""
from __future__ import annotations

from typing import Any

from ..consolidate.plan import ConsolidatePlan
from .plans import table
from .rebalance import listed, wave_document, waves_lines


def _money(plan: ConsolidatePlan, v: float) -> str:
    if plan.price_unit == "node":
        return f"{v:g} node(s)"
    return f"{v:.4g}"


def difference(plan: ConsolidatePlan) -> dict[str, Any]:
    ours, theirs = set(plan.remove), set(plan.scale_down.remove)
    return {"saving": round(plan.saving - plan.scale_down.saving, 6),
            "nodes": len(plan.remove) - len(plan.scale_down.remove),
            "only_podplan": sorted(ours - theirs), "only_scale_down": sorted(theirs - ours)}


def consolidate_document(plan: ConsolidatePlan) -> dict[str, Any]:
    sd = plan.scale_down
    return {
        "status": plan.status,
        "remove": list(plan.remove),
        "saving": round(plan.saving, 6),
        "bound": round(plan.bound, 6),
        "gap": round(plan.gap, 6),
        "unit": plan.price_unit,
        "target": {"remove": list(plan.target), "saving": round(plan.target_saving, 6)},
        "waves": [wave_document(w) for w in plan.waves],
        "moves": plan.moves,
        "scale_down": {"remove": list(sd.remove), "saving": round(sd.saving, 6), "complete": sd.complete,
                       "kept": [{"node": n, "why": why} for n, why in sd.kept.items()]},
        "difference": difference(plan),
        "pinned": [{"node": n, "by": why} for n, why in plan.pinned.items()],
        "blocked": [{"pod": b.pod, "reason": b.reason} for b in plan.blocked],
        "method": plan.method,
        "notes": [n.with_items(", ".join(n.items)) for n in plan.notes],
        "wall_seconds": round(plan.wall_seconds, 3),
    }


def consolidate_table(plan: ConsolidatePlan) -> str:
    sd = plan.scale_down
    diff = difference(plan)
    lines = [f"consolidate: {plan.status}: remove {len(plan.remove)} node(s), saving {_money(plan, plan.saving)}"
             f"; bound {_money(plan, plan.bound)}, gap {100 * plan.gap:.1f}%; {plan.moves} move(s) in "
             f"{len(plan.waves)} wave(s)"]
    lines.append(f"remove: {listed(list(plan.remove)) or '-'}")
    if len(plan.target) > len(plan.remove):
        lines.append(f"target: remove {len(plan.target)} node(s), saving {_money(plan, plan.target_saving)} (every movable "
                     f"pod re-placed); the waves reach {len(plan.remove)} of them within the time limit")
    lines.append(f"cluster-autoscaler scale-down: remove {len(sd.remove)} node(s), saving {_money(plan, sd.saving)}"
                 f": {listed(list(sd.remove)) or '-'}" + ("" if sd.complete else " (cut short by the time limit)"))
    sign = "+" if diff["saving"] >= 0 else ""
    nodes = "" if plan.price_unit == "node" else f" ({'+' if diff['nodes'] >= 0 else ''}{diff['nodes']} node(s))"
    lines.append(f"difference: {sign}{_money(plan, diff['saving'])}{nodes}; only podplan "
                 f"removes: {listed(diff['only_podplan']) or '-'}; only scale-down removes: "
                 f"{listed(diff['only_scale_down']) or '-'}")
    lines += waves_lines(plan.waves, plan.blocked)
    if plan.pinned:
        pins = list(plan.pinned.items())
        shown = pins[:5]
        lines += ["", table(("PINNED NODE", "BY"), shown)]
        if len(pins) > len(shown):
            lines.append(f"... and {len(pins) - len(shown)} more pinned node(s) (-o json lists them)")
    lines.append("")
    lines.append(f"method: {plan.method}")
    for note in plan.notes:
        lines.append(f"note: {note.with_items(listed(note.items))}")
    return "\n".join(lines)
