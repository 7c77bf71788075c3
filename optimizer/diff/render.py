"""diff's outputs: the table, the JSON/YAML document, and the one-paragraph summary a manager can read."""
from __future__ import annotations

from typing import Any

from ..render.plans import table
from . import Diff, Side

TERM_NAMES = {"node_affinity": "preferred node affinity", "pod_affinity": "preferred pod affinity",
              "pod_anti_affinity": "preferred pod anti-affinity", "prefer_no_schedule": "PreferNoSchedule taints",
              "schedule_anyway_skew": "ScheduleAnyway spread"}
# the table lists at most this many pods per section; -o json lists all
ROWS = 20


def _signed(n: int) -> str:
    return f"+{n}" if n > 0 else str(n)


def _label(side: Side) -> str:
    return f"{side.source} ({side.kind}, {side.status})"


def totals(d: Diff) -> list[tuple[str, int, int]]:
    """(what, A, B) rows: placed in total and per priority, pending, broken rules, preference and its terms."""
    a, b = d.a, d.b
    rows = [("pods placed", sum(a.placed_by_priority.values()), sum(b.placed_by_priority.values()))]
    rows += [(f"  priority {p}", a.placed_by_priority.get(p, 0), b.placed_by_priority.get(p, 0)) for p in d.priorities]
    rows += [("pods pending", len(a.pending), len(b.pending)), ("rules broken", len(a.broken), len(b.broken)),
             ("preference score", a.preference, b.preference)]
    rows += [(f"  {TERM_NAMES.get(t, t)}", a.terms.get(t, 0), b.terms.get(t, 0))
             for t in dict.fromkeys([*a.terms, *b.terms])]
    return rows


def summary(d: Diff) -> str:
    """One paragraph in plain words: what B does differently from A."""
    a, b = d.a, d.b
    sentences = [f"Against {a.source}, {b.source}"]
    placed_a, placed_b = sum(a.placed_by_priority.values()), sum(b.placed_by_priority.values())
    if placed_a == placed_b:
        head = f"places the same number of pods ({placed_b})"
    else:
        by = [f"priority {p}: {_signed(b.placed_by_priority.get(p, 0) - a.placed_by_priority.get(p, 0))}"
              for p in d.priorities if b.placed_by_priority.get(p, 0) != a.placed_by_priority.get(p, 0)]
        head = (f"places {placed_b} pods instead of {placed_a} ({_signed(placed_b - placed_a)}"
                + (f"; {', '.join(by)}" if len(d.priorities) > 1 else "") + ")")
    sentences[0] += " " + head
    changes = []
    if d.placed:
        changes.append(f"{len(d.placed)} pod(s) left pending before now run")
    if d.unplaced:
        changes.append(f"{len(d.unplaced)} pod(s) that ran before are left pending")
    if d.moved:
        changes.append(f"{len(d.moved)} pod(s) sit on another node")
    sentences[0] += (": " + ", ".join(changes) if changes else ", each on the same node") + "."
    if d.newly_broken or d.fixed:
        parts = ([f"breaks {len(d.newly_broken)} rule(s) that held"] if d.newly_broken else []) + \
                ([f"fixes {len(d.fixed)} that were broken"] if d.fixed else [])
        sentences.append(f"It {' and '.join(parts)}.")
    elif not a.broken and not b.broken:
        sentences.append("Neither breaks a scheduling rule.")
    else:
        sentences.append(f"Both break the same {len(b.broken)} rule(s).")
    if a.preference != b.preference:
        moved_terms = [f"{TERM_NAMES.get(t, t)} {_signed(b.terms.get(t, 0) - a.terms.get(t, 0))}"
                       for t in dict.fromkeys([*a.terms, *b.terms]) if b.terms.get(t, 0) != a.terms.get(t, 0)]
        better = "better" if b.preference > a.preference else "worse"
        sentences.append(f"Its preference score is {better}: {a.preference} → {b.preference} "
                         f"({', '.join(moved_terms)}).")
    else:
        sentences.append(f"The preference score is unchanged ({b.preference}).")
    return " ".join(sentences)


def render_table(d: Diff) -> str:
    lines = [f"A: {_label(d.a)}", f"B: {_label(d.b)}", ""]
    sections = [
        (("MOVED POD", "A", "B"), [(m.pod, m.before, m.after) for m in d.moved]),
        (("PLACED IN B", "NODE"), list(d.placed)),
        (("PENDING IN B", "NODE IN A", "REASON"), [(p, n, why or "-") for p, n, why in d.unplaced]),
        (("NEWLY BROKEN", "NODE", "PLUGIN", "REASON"), [(r.pod, r.node, r.plugin, r.reason) for r in d.newly_broken]),
        (("FIXED", "NODE", "PLUGIN", "REASON"), [(r.pod, r.node, r.plugin, r.reason) for r in d.fixed]),
    ]
    for headers, rows in sections:
        if rows:
            shown = rows[:ROWS] + ([(f"... and {len(rows) - ROWS} more (-o json lists all)",) + ("",) * (len(headers) - 1)]
                                   if len(rows) > ROWS else [])
            lines += [table(headers, shown), ""]
    lines += [table(("", "A", "B", "CHANGE"), [(w, x, y, _signed(y - x) if y != x else "-")
                                               for w, x, y in totals(d)]), "", summary(d)]
    return "\n".join(lines)


def document(d: Diff) -> dict[str, Any]:
    def side(s: Side) -> dict[str, Any]:
        return {"source": s.source, "kind": s.kind, "status": s.status}

    return {
        "a": side(d.a), "b": side(d.b),
        "moved": [{"pod": m.pod, "from": m.before, "to": m.after} for m in d.moved],
        "placed": [{"pod": p, "node": n} for p, n in d.placed],
        "unplaced": [{"pod": p, "node_in_a": n, "reason": why} for p, n, why in d.unplaced],
        "newly_broken": [vars(r) for r in d.newly_broken],
        "fixed": [vars(r) for r in d.fixed],
        "totals": [{"what": w.strip(), "a": x, "b": y, "change": y - x} for w, x, y in totals(d)],
        "summary": summary(d),
    }


__all__ = ["document", "render_table", "summary", "totals"]
