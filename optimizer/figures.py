"""Every figure of a plan computed from the plan that is printed.

A solve can end by returning a plan other than the one its search finished with: greedy's plan kept because
greedy left no time to search, the warm start returned because the search ended below it (GREEDY_FALLBACK),
the warm start printed on Ctrl-C before the search began. Its objective, gaps, gap and notes must then be the
returned plan's, not the search's own incumbent's (a complete plan printed with "placed 73" and a 99.9 % gap
misleads). `restate` recomputes them from the placements; the bound stays the problem's proven bound (it
holds for every plan), widened where needed so that it is never below what the plan itself reaches.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import replace
from typing import Any

from ..models.objects import Cluster

from .objective import preference_terms
from .plan import Plan
from .policy import Policy
from .verify import final_state

OBJECTIVE = "objective: "
NOT_PROVEN = "not proven optimal: "


def objective_note(by_prio: dict[int, int], preference: int, terms: dict[str, int]) -> str:
    """The notes' `objective:` line, for solve's search and for a restated plan alike."""
    placed = sum(by_prio.values())
    if len(by_prio) == 1:
        prio = "".join(f" (priority {q}: {k})" for q, k in by_prio.items())
    elif by_prio:
        prio = " (" + ", ".join(f"priority {q}: {k}" for q, k in sorted(by_prio.items(), reverse=True)) + ")"
    else:
        prio = ""
    return f"{OBJECTIVE}placed {placed}{prio}, preference {preference} (" \
           + ", ".join(f"{k} {v}" for k, v in terms.items()) + ")"


def restate(cluster: Cluster, plan: Plan, policy: Policy | None = None) -> Plan:
    """`plan` with objective note, bound, gaps, gap and the `not proven optimal` note computed from its own
    placements. The status is kept: a restated plan is never called OPTIMAL unless it already was."""
    policy = policy or Policy()
    priority = {p.key: p.priority for p in cluster.pending}
    total: dict[int, int] = defaultdict(int)
    for q in priority.values():
        total[q] += 1
    by_prio: dict[int, int] = {q: 0 for q in sorted(total, reverse=True)}
    for key in plan.placements:
        if key in priority:
            by_prio[priority[key]] += 1
    terms = preference_terms(cluster, final_state(cluster, plan.placements), policy)
    preference = sum(terms.values())
    old = dict(plan.bound or {})
    old_by_prio = old.get("placed_by_priority") or {}
    # the proven bound per priority (every pod, when none was proven), never below the plan itself
    bound_by_prio = {q: max(by_prio[q], int(old_by_prio.get(str(q), total[q]))) for q in by_prio}
    placed, placed_bound = sum(by_prio.values()), sum(bound_by_prio.values())
    placed_proven = all(by_prio[q] >= bound_by_prio[q] for q in by_prio)
    pref_bound = old.get("preference") if placed_proven else None
    if pref_bound is not None:
        pref_bound = max(int(pref_bound), preference)  # type: ignore[arg-type]
    bound: dict[str, Any] = {"placed": placed_bound,
                             "placed_by_priority": {str(q): k for q, k in bound_by_prio.items()},
                             "preference": pref_bound,
                             "strategy_proven": bool(old.get("strategy_proven", False))}
    gaps = level_gaps(placed, placed_bound, preference, pref_bound)
    gap = gaps["placed"]["relative"] if not placed_proven else gaps["preference"]["relative"]
    why = []
    if not placed_proven:
        why.append(f"placed: {gaps['placed']['absolute']} pod(s) below the bound")
    elif pref_bound is None:
        why.append("preference: no bound")
    elif gaps["preference"]["absolute"]:
        why.append(f"preference: {gaps['preference']['absolute']} below the bound")
    notes = [n for n in plan.notes if not n.startswith((OBJECTIVE, NOT_PROVEN))]
    at = next((i for i, n in enumerate(plan.notes) if n.startswith(OBJECTIVE)), 0)
    at = min(at, len(notes))
    fresh = [objective_note(by_prio, preference, terms)]
    if plan.status != "OPTIMAL" and why:
        fresh.append(NOT_PROVEN + "; ".join(why))
    notes[at:at] = fresh
    return replace(plan, bound=bound, gap=gap, gaps=gaps, notes=tuple(notes))


def level_gaps(placed: int, placed_bound: int, preference: int, pref_bound: int | None) -> dict[str, dict[str, Any]]:
    """Each level's value, proven bound and gap, absolute and relative. The relative preference gap is taken
    against |bound| and left out when the bound is 0 (a percentage of nothing means nothing)."""
    missing = max(0, placed_bound - placed)
    out: dict[str, dict[str, Any]] = {
        "placed": {"value": placed, "bound": placed_bound, "absolute": missing,
                   "relative": missing / placed_bound if placed_bound else 0.0}}
    if pref_bound is None:
        out["preference"] = {"value": preference, "bound": None, "absolute": None, "relative": None}
    else:
        below = max(0, pref_bound - preference)
        out["preference"] = {"value": preference, "bound": pref_bound, "absolute": below,
                             "relative": below / abs(pref_bound) if pref_bound else (0.0 if not below else None)}
    return out
