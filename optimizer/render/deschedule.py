"""`podplan deschedule`'s output: the descheduler's cycles against the optimal plan, as a table, a document
(JSON/YAML, names as documented) and an HTML report."""
from __future__ import annotations

import html
from typing import Any

from ..deschedule import Result
from ..deschedule.cycle import NEW_VIOLATION, NOT_SIMULATED, NOWHERE, SAME_NODE
from ..deschedule.policy import HIGH
from .plans import table
from .rebalance import rebalance_document


def document(r: Result, limit: tuple[float, bool, str] | None = None) -> dict[str, Any]:
    """The comparison as JSON; `limit`: the --time-limit the command ran with (seconds, auto, its note), first
    among the notes and as `time_limit`."""
    sim, opt = r.descheduler, r.optimal
    first = sim.cycles[0] if sim.cycles else None
    evictions = [{"pod": e.pod, "from": e.source, "to": e.target or None, "landed": e.landed, "plugin": e.plugin}
                 for e in (first.evictions if first else ())]
    last = sim.cycles[-1].verdict if sim.cycles else sim.initial
    first_v = first.verdict if first else sim.initial
    plan = opt.plan
    proven = bool(plan.levels) and all(p for _, _, p in plan.levels)
    moves = plan.moves
    # the proven fewest evictions: the constructive plan's per-node bound, or a proven target's own count
    bound = opt.bound if opt.bound is not None else (moves if proven else None)
    # a plan evicting fewer than the bound leaves the goal unmet: the bound does not apply to it (no gap)
    gap = None if bound is None or moves < bound else (0.0 if moves == bound else round((moves - bound) / moves, 4))
    return {
        "descheduler": {
            "evictions": evictions,
            "nodes_outside_thresholds": list(first_v.outside),
            "violations_left": len(first_v.violations),
            "cycles": sum(1 for c in sim.cycles if c.evictions),
            "loops": sim.loops,
            "converged": sim.converged,
            "loop_returns_to": sim.loop_from,  # the cycle whose end state recurs (0: the input's state)
            "evictions_total": sum(len(c.evictions) for c in sim.cycles),
            # the time limit stopped kube-scheduler's landing of the last cycle's replacements
            "stopped": any(c.stopped for c in sim.cycles) or bool(sim.skipped),
            "not_simulated": sim.skipped or None,  # why no cycle was simulated (the time limit)
            "after_last_cycle": {"nodes_outside_thresholds": list(last.outside),
                                 "violations_left": len(last.violations), "empty_nodes": list(last.empty)},
            "empty_nodes": list(first_v.empty),
            "per_cycle": [{"evictions": len(c.evictions),
                           "bounced": sum(1 for e in c.evictions if e.landed == SAME_NODE),
                           "new_violations": sum(1 for e in c.evictions if e.landed == NEW_VIOLATION),
                           "nowhere": sum(1 for e in c.evictions if e.landed == NOWHERE),
                           "nodes_outside_thresholds": len(c.verdict.outside),
                           "violations_left": len(c.verdict.violations),
                           "preempted": list(c.preempted)} for c in sim.cycles],
        },
        "optimal": {
            "status": str(plan.status.value if hasattr(plan.status, "value") else plan.status),
            "evictions": [{"pod": m.key, "from": m.source, "to": plan.final.get(m.key, m.target)}
                          for w in plan.waves for m in w.moves],
            "bound": bound,
            "gap": gap,
            "waves": rebalance_document(plan)["waves"],
            "nodes_outside_thresholds": list(opt.verdict.outside),
            "violations_left": len(opt.verdict.violations),
            "empty_nodes": list(opt.verdict.empty),
            "unmet": [u.document() for u in opt.unmet],
            "complete": plan.complete,
            "blocked": [{"pod": b.pod, "reason": b.reason} for b in plan.blocked],
            "notes": ([limit[2]] if limit is not None else []) + [n.with_items(", ".join(n.items)) for n in plan.notes],
        },
        "before": {"nodes_outside_thresholds": list(sim.initial.outside),
                   "violations": len(sim.initial.violations),
                   "underutilised_nodes": list(sim.initial.under), "empty_nodes": list(sim.initial.empty)},
        "high_node_utilization": any(a.name == HIGH for a in r.policy.plugins()),
        "seconds": r.seconds,
    } | ({"time_limit": {"seconds": limit[0], "auto": limit[1]}} if limit is not None else {})


def _status(doc: dict[str, Any]) -> str:
    o = doc["optimal"]
    if o["gap"] == 0.0 and o["status"] == "OPTIMAL":
        return f"{o['status']} (proven)"
    if o["bound"] is not None and o["gap"] is not None:
        return f"{o['status']} (at least {o['bound']} eviction(s) needed, gap {o['gap']:.0%})"
    if o["bound"] is not None:
        return f"{o['status']} (meeting the goal needs at least {o['bound']} eviction(s))"
    return f"{o['status']} (not proven optimal)"


def render_table(doc: dict[str, Any]) -> str:
    d, o = doc["descheduler"], doc["optimal"]
    bounced = sum(1 for e in d["evictions"] if e["landed"] == SAME_NODE)
    newv = sum(1 for e in d["evictions"] if e["landed"] == NEW_VIOLATION)
    nowhere = sum(1 for e in d["evictions"] if e["landed"] == NOWHERE)
    unsimulated = sum(1 for e in d["evictions"] if e["landed"] == NOT_SIMULATED)
    if d["loops"]:
        back = "the input's state" if d["loop_returns_to"] == 0 else f"the state after cycle {d['loop_returns_to']}"
        conv = f"loops: cycle {d['cycles']} returns to {back}"
    elif d.get("not_simulated"):
        conv = "not simulated (time limit)"
    elif d.get("stopped"):
        conv = f"cycle {d['cycles']}'s landing stopped by the time limit"
    elif d["converged"]:
        conv = f"converges after {d['cycles']} cycle(s)"
    else:
        conv = f"not converged after {d['cycles']} cycles"
    rows = [
        ["evictions", len(d["evictions"]), len(o["evictions"])],
        ["  landed back on their node", bounced, 0],
        ["  landed into a new violation", newv, "-"],
        ["  could not land", nowhere, 0],
    ] + ([["  not simulated (time limit)", unsimulated, "-"]] if unsimulated else []) + [
        ["nodes outside thresholds after", len(d["nodes_outside_thresholds"]), len(o["nodes_outside_thresholds"])],
        ["violations left after", d["violations_left"], o["violations_left"]],
    ] + ([["empty nodes after (removable)", len(d["empty_nodes"]), len(o["empty_nodes"])]]
         if doc.get("high_node_utilization") else []) + [
        ["cycles to converge", conv, f"{len(o['waves'])} wave(s)"],
    ]
    high = (f", {len(doc['before']['underutilised_nodes'])} underutilised, {len(doc['before']['empty_nodes'])} "
            "empty") if doc.get("high_node_utilization") else ""
    out = [f"before: {len(doc['before']['nodes_outside_thresholds'])} node(s) outside thresholds, "
           f"{doc['before']['violations']} violation(s){high}", "",
           table(["", "descheduler (1 cycle)", "podplan optimal"], rows), "",
           f"optimal: {_status(doc)}, {len(o['evictions'])} eviction(s) in {len(o['waves'])} wave(s)"]
    if d["evictions"]:
        out += ["", "descheduler's evictions (first cycle):",
                table(["POD", "PLUGIN", "FROM", "TO", "LANDED"],
                      [[e["pod"], e["plugin"], e["from"], e["to"] or "-", e["landed"]] for e in d["evictions"][:40]])]
        if len(d["evictions"]) > 40:
            out.append(f"... and {len(d['evictions']) - 40} more (-o json lists them all)")
    if len(d["per_cycle"]) > 1:
        out += ["", "descheduler's cycles:",
                table(["CYCLE", "EVICTIONS", "BOUNCED", "NEW VIOLATION", "NOWHERE", "OUTSIDE", "VIOLATIONS"],
                      [[i + 1, c["evictions"], c["bounced"], c["new_violations"], c["nowhere"],
                        c["nodes_outside_thresholds"], c["violations_left"]] for i, c in enumerate(d["per_cycle"])])]
    if o["evictions"]:
        rows = []
        for i, w in enumerate(o["waves"], 1):
            for m in w["evictions"]:
                rows.append([i, m["pod"], m["from"], m["to"]])
        out += ["", "optimal plan:", table(["WAVE", "POD", "FROM", "TO"], rows[:60])]
        if len(rows) > 60:
            out.append(f"... and {len(rows) - 60} more (-o json lists them all)")
    if d.get("not_simulated"):
        out.append(f"descheduler: {d['not_simulated']}")
    for u in o["unmet"]:
        out.append(f"unmet{' (no plan meets it)' if u['proven'] else ''}: {u['why']}")
    for b in o["blocked"]:
        out.append(f"blocked: {b['pod']}: {b['reason']}")
    for n in o["notes"]:
        out.append(f"note: {n}")
    return "\n".join(out)


def render_html(doc: dict[str, Any], title: str = "podplan deschedule") -> str:
    e = html.escape
    d, o = doc["descheduler"], doc["optimal"]

    def tbl(headers: list[str], rows: list[list[Any]]) -> str:
        head = "".join(f"<th>{e(str(h))}</th>" for h in headers)
        body = "".join("<tr>" + "".join(f"<td>{e(str(c))}</td>" for c in r) + "</tr>" for r in rows)
        return f"<table><tr>{head}</tr>{body}</table>"

    text = render_table(doc)
    parts = [f"<!doctype html><html><head><meta charset='utf-8'><title>{e(title)}</title><style>"
             "body{font-family:sans-serif;margin:2em}table{border-collapse:collapse;margin:1em 0}"
             "td,th{border:1px solid #ccc;padding:.25em .6em;text-align:left}.bad{color:#a00}</style></head><body>",
             f"<h1>{e(title)}</h1>",
             f"<p>descheduler: {len(d['evictions'])} eviction(s) in its first cycle; "
             f"{'<b class=bad>it loops</b>' if d['loops'] else ('converges' if d['converged'] else 'does not converge')}"
             f" after {d['cycles']} cycle(s). podplan: {len(o['evictions'])} eviction(s), {e(_status(doc))}.</p>",
             f"<pre>{e(text)}</pre>",
             "<h2>Descheduler cycles</h2>",
             tbl(["cycle", "evictions", "bounced", "new violation", "nowhere", "outside", "violations"],
                 [[i + 1, c["evictions"], c["bounced"], c["new_violations"], c["nowhere"],
                   c["nodes_outside_thresholds"], c["violations_left"]] for i, c in enumerate(d["per_cycle"])]),
             "<h2>Goals not met</h2>" if o["unmet"] else "",
             tbl(["goal", "node", "no plan meets it", "why", "blocking pods"],
                 [[u["goal"], u["node"], "yes" if u["proven"] else "not proven", u["why"],
                   ", ".join(u["blocking_pods"][:20]) + (" ..." if len(u["blocking_pods"]) > 20 else "")]
                  for u in o["unmet"]]) if o["unmet"] else "",
             "<h2>Optimal plan</h2>",
             tbl(["wave", "pod", "from", "to"], [[i, m["pod"], m["from"], m["to"]]
                                                 for i, w in enumerate(o["waves"], 1) for m in w["evictions"]]),
             "</body></html>"]
    return "\n".join(parts)
