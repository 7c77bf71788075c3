"""Valid upper bounds for a component the solver only searches in restricted models (neighbourhoods).

A restricted model's own CP-SAT bound says nothing about the whole problem, so the gap of such a component is
measured against relaxations of the full model, each an upper bound on every feasible plan:

- placed (per priority, lexicographic): an aggregated model over *node groups* (nodes equal in labels up to
  values unique to one node, taints, cordon, allocatable). y[class, group] is at most the sum of the per-node
  upper bounds of the exact model (static feasibility, room, one pod per node for self-anti-affinity, host
  ports), and per group and resource the classes' requests stay within the group's summed free room; gangs
  keep their all-or-minimum. Spread, pod affinity and anti-affinity between pending pods are dropped (a
  relaxation). Solved per priority, highest first, by CP-SAT: a stage proven optimal is fixed for the next;
  the first stage that is not proven gives its CP-SAT bound and every lower priority its total.
- preference P: every pod of a class at the best node it may use for the linear terms (preferred node
  affinity minus untolerated PreferNoSchedule taints), every preferred pod-affinity term satisfied, no
  preferred anti-affinity term violated, no ScheduleAnyway skew above maxSkew, every existing pod's
  preferred term that pending pods could satisfy satisfied. When a plan places every pod of the component,
  every plan with the optimal placed vector places them all too, so negative best gains count in full.
"""
from __future__ import annotations

from collections import defaultdict
from typing import Any

import numpy as np
from ortools.sat.python import cp_model

from .interpodaffinity.encoding import PREF_AFF, _holder_pref, _pref_terms
from .nodeaffinity import preferred_score
from .noderesources.encoding import checked, free_vector
from .noderesources.filtering import PODS
from .policy import Policy
from .problem import Component, Problem
from .tainttoleration import count_intolerable_prefer_no_schedule, prefer_no_schedule_tolerations


def node_groups(problem: Problem, nodes: list[int]) -> list[np.ndarray]:
    """`nodes` grouped by labels (values unique to one node masked), taints, cordon and allocatable."""
    count: dict[tuple[str, str], int] = problem.cache.get("bound.label_count")  # type: ignore[assignment]
    if count is None:
        count = defaultdict(int)
        for n in problem.nodes:
            for kv in n.labels.items():
                count[kv] += 1
        problem.cache["bound.label_count"] = count
    by: dict[tuple, list[int]] = defaultdict(list)
    for i in nodes:
        n = problem.nodes[i]
        labels = tuple(sorted((k, v if count[(k, v)] > 1 else "\0") for k, v in n.labels.items()))
        by[(labels, n.taints, n.unschedulable, tuple(sorted(n.allocatable.items())))].append(i)
    return [np.asarray(v, dtype=np.int64) for v in by.values()]


def placed_bound(problem: Problem, comp: Component, time_limit: float, workers: int = 1) -> tuple[dict[int, int], bool]:
    """Lexicographic bound on pods placed per priority in `comp` (see the module docstring)."""
    started = cp_model_time()
    classes = comp.classes
    groups = node_groups(problem, comp.nodes)
    m = cp_model.CpModel()
    y: dict[tuple[int, int], Any] = {}
    per_group: dict[int, list[int]] = defaultdict(list)
    placed: dict[int, Any] = {}
    for c in classes:
        cls = problem.classes[c]
        row = problem.ub.matrix[c]
        terms = []
        for g, members in enumerate(groups):
            cap = int(min(cls.size, row[members].sum()))
            if cap > 0:
                v = m.new_int_var(0, cap, "")
                y[(c, g)] = v
                per_group[g].append(c)
                terms.append(v)
        pv = m.new_int_var(0, cls.size, "")
        m.add(pv == sum(terms))
        placed[c] = pv
    for g, members in enumerate(groups):
        cs = per_group[g]
        if not cs:
            continue
        resources = {PODS} | {r for c in cs for r in checked(problem.classes[c].rep.requests)}
        for r in sorted(resources):
            room = int(np.maximum(free_vector(problem, r)[members], 0).sum())
            if r == PODS:
                users = [(c, 1) for c in cs]
            else:
                users = [(c, problem.classes[c].rep.requests[r]) for c in cs if problem.classes[c].rep.requests.get(r, 0) > 0]
            if sum(q * problem.classes[c].size for c, q in users) > room:
                m.add(sum(q * y[(c, g)] for c, q in users) <= room)
    for gang, members in problem.gang_classes.items():
        members = [c for c in members if c in placed]
        if not members:
            continue
        on = m.new_bool_var("")
        total = sum(problem.classes[c].size for c in members)
        s = sum(placed[c] for c in members)
        m.add(s >= problem.gangs.minimum.get(gang, 0) * on)
        m.add(s <= total * on)
    prios = sorted({problem.classes[c].priority for c in classes}, reverse=True)
    out: dict[int, int] = {}
    proven = True
    for q in prios:
        total = sum(problem.classes[c].size for c in classes if problem.classes[c].priority == q)
        if not proven:
            out[q] = total
            continue
        level = sum(placed[c] for c in classes if problem.classes[c].priority == q)
        m.maximize(level)
        solver = cp_model.CpSolver()
        solver.parameters.max_time_in_seconds = max(0.05, time_limit - (cp_model_time() - started))
        solver.parameters.num_workers = max(1, workers)
        status = solver.solve(m)
        if status == cp_model.OPTIMAL:
            value = int(round(solver.objective_value))
            out[q] = value
            m.add(level == value)
        else:
            out[q] = min(total, int(np.floor(solver.best_objective_bound + 1e-6))) if status == cp_model.FEASIBLE \
                else total
            proven = False
    return out, proven


def cp_model_time() -> float:
    import time
    return time.perf_counter()


def _best_linear_gain(problem: Problem, c: int, policy: Policy) -> int:
    """Best per-pod value of the linear terms over the class's feasible nodes."""
    rep = problem.classes[c].rep
    feas = problem.feasible[c]
    if not len(feas):
        return 0
    tols = prefer_no_schedule_tolerations(rep)
    memo: dict[tuple, int] = {}
    best: int | None = None
    for n in feas.tolist():
        node = problem.nodes[n]
        key = (tuple(sorted(node.labels.items())) if rep.affinity.node_preferred else (), node.taints)
        v = memo.get(key)
        if v is None:
            v = 0
            if rep.affinity.node_preferred and policy.node_affinity:
                v += policy.node_affinity * preferred_score(rep, node)
            if node.taints and policy.prefer_no_schedule:
                v -= policy.prefer_no_schedule * count_intolerable_prefer_no_schedule(node, tols)
            memo[key] = v
        best = v if best is None else max(best, v)
        if not node.taints and not rep.affinity.node_preferred:
            break  # nothing to gain or lose anywhere: 0
    return best or 0


def preference_bound(problem: Problem, comp: Component, policy: Policy, all_placed: bool) -> int:
    """Upper bound on the component's part of P (see the module docstring)."""
    total = 0
    cls_set = set(comp.classes)
    for c in comp.classes:
        cls = problem.classes[c]
        gain = _best_linear_gain(problem, c, policy)
        for kind, i, w, t in _pref_terms(cls.rep):
            if kind == PREF_AFF:
                gain += policy.pod_affinity * w
        if gain >= 0 or all_placed:
            total += cls.size * gain
    for h, kind, i, w, t, pred, targets in _holder_pref(problem):
        if kind != PREF_AFF or not any(c in cls_set for c in targets):
            continue
        n_e = next(iter(h.on))
        if problem.nodes[n_e].labels.get(t.topology_key) is None:
            continue
        # only counted here when pending pods decide it (existing_terms holds the constant ones)
        from .interpodaffinity.encoding import _domain_has
        ex = problem.existing_matching(("ipa.pref", t, h.rep.namespace), pred, t.label_selector)
        others = _domain_has(problem, ex, t.topology_key, problem.nodes[n_e].labels[t.topology_key]) - int(pred(h.rep))
        if others < 1:
            total += policy.pod_affinity * w * h.on[n_e]
    return total
