"""The whatif table and `-o json|yaml` document, from the rows (optimizer.whatif.run), in the file's order.

The table's columns: [CLUSTER] SCENARIO NODES TO-PLACE GREEDY OPTIMAL PENDING (greedy -> optimal, by priority)
USED CPU MEM STATUS GAP WALL NOTE. `timing=False` leaves WALL out: what two runs of the same input and seed
must print identically (the tests and the benchmark compare tables that way).
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..render.plans import table
from .run import ERROR

API_VERSION = "podplan.io/v1alpha1"


def document(rows: Sequence[Mapping[str, Any]], *, interrupted: bool = False, missing: int = 0) -> dict[str, Any]:
    doc: dict[str, Any] = {"apiVersion": API_VERSION, "kind": "WhatIfResult", "scenarios": list(rows)}
    if interrupted:
        doc["interrupted"] = True
        doc["not_finished"] = missing
    return doc


def _pending(by_priority: Mapping[str, int] | None) -> str:
    """`0` or `3 (p100:1 p0:2)`."""
    if not by_priority:
        return "0"
    total = sum(by_priority.values())
    if len(by_priority) == 1:
        (p, n), = by_priority.items()
        return f"{n} (p{p})"
    return f"{total} (" + " ".join(f"p{p}:{n}" for p, n in by_priority.items()) + ")"


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.0f}%"


def _gap(g: float | None) -> str:
    return "-" if g is None else f"{g:.1%}"


def _note(row: Mapping[str, Any]) -> str:
    if row.get("status") == ERROR:
        return f"error: {row.get('error')}"
    notes = [n for n in row.get("notes") or [] if n]
    if row.get("held"):
        notes.append(f"{row['held']} pod(s) held back (gated or other schedulers)")
    return "; ".join(notes)


def table_rows(rows: Sequence[Mapping[str, Any]], fleet: bool, timing: bool) -> tuple[list[str], list[list[str]]]:
    headers = (["CLUSTER"] if fleet else []) + ["SCENARIO", "NODES", "TO PLACE", "GREEDY", "OPTIMAL",
                                                "PENDING GREEDY", "PENDING OPTIMAL", "USED", "CPU", "MEM",
                                                "STATUS", "GAP"] + (["WALL"] if timing else []) + ["NOTE"]
    out = []
    for r in rows:
        head = [r["cluster"]] if fleet else []
        wall = ["-" if r.get("wall_seconds") is None else f"{r['wall_seconds']:.1f}s"] if timing else []
        if r.get("status") == ERROR:
            out.append(head + [r["scenario"]] + ["-"] * 7 + ["-", "-", ERROR, "-"] + wall + [_note(r)])
            continue
        g, o = r["greedy"], r["optimal"]
        out.append(head + [r["scenario"], str(r["nodes"]), str(r["to_place"]), str(g["placed"]), str(o["placed"]),
                           _pending(g["pending_by_priority"]), _pending(o["pending_by_priority"]),
                           str(o["nodes_used"]), _pct(o["cpu"]), _pct(o["memory"]), r["status"], _gap(r.get("gap"))]
                   + wall + [_note(r)])
    return headers, out


def render_table(rows: Sequence[Mapping[str, Any]], *, timing: bool = True) -> str:
    fleet = len({r["cluster"] for r in rows}) > 1
    headers, cells = table_rows(rows, fleet, timing)
    return table(headers, cells)
