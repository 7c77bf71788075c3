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
- preference P: each class's pods at the best nodes they may use for the linear terms (preferred node
  affinity minus untolerated PreferNoSchedule taints), at most as many on a node as fit there alone (the exact
  model's per-node upper bounds), every preferred pod-affinity term satisfied (by at most as many pods as fit in
  the domains a matching pod can be in: those of existing matching pods, plus one per pending matching pod, the
  roomiest), no ScheduleAnyway skew above
  maxSkew (in the joint LP, the skew of a group whose counted classes are all in it, paid: _skew_rows), every
  existing pod's preferred term that pending pods could satisfy satisfied. When a plan places
  every pod of the component, every plan with the optimal placed vector places them all too, so negative
  values count in full, and a class's own preferred anti-affinity costs at least the pods that cannot be alone
  in a domain (one per domain free of matching pods at most, the rest within the other domains' room and the
  class's DoNotSchedule spread caps on the same key: _guaranteed_anti_violations); or, counted with the class's gains, at most one
  pod per free domain collects its node's gains without paying the term, every other pod pays it
  (_anti_class_bound, and the split columns of the joint LP, _joint_linear). Checked against exhaustive search on
  random clusters (tests/test_solve_property.py, tests/test_bound_joint.py, tests/test_bound_anti.py).
"""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
from ortools.sat.python import cp_model

from ..models.objects import Pod, PodAffinityTerm
from .interpodaffinity.encoding import PREF_AFF, _domain_has, _holder_pref, _pref_terms, pref_pred
from .nodeaffinity import preferred_score
from .noderesources.encoding import checked, free_vector
from .noderesources.filtering import PODS
from .packing import size_cuts
from .podtopologyspread.encoding import _targets as spread_targets
from .podtopologyspread.common import SpreadConstraint
from .podtopologyspread.encoding import SoftGroup, eligible_nodes, hard_constraints, soft_groups
from .policy import Policy
from .problem import Component, Problem
from .runner import NEVER, Interrupt, SolverParams, Status, clock, now, run
from .tainttoleration import count_intolerable_prefer_no_schedule, prefer_no_schedule_tolerations
from .tainttoleration.filtering import PREFER_NO_SCHEDULE


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


def placed_bound(problem: Problem, comp: Component, time_limit: float, workers: int = 1,
                 interrupt: Interrupt = NEVER) -> tuple[dict[int, int], bool]:
    """Lexicographic bound on pods placed per priority in `comp` (see the module docstring)."""
    started = now()  # the search's deterministic clock when one is installed
    classes = comp.classes
    groups = node_groups(problem, comp.nodes)
    m = cp_model.CpModel()
    y: dict[tuple[int, int], Any] = {}
    per_group: dict[int, list[int]] = defaultdict(list)
    placed: dict[int, Any] = {}
    # every class's room per node group at once (8,000 classes x 24 groups: 192,000 sums one by one took 0.8 s)
    rows = problem.ub.matrix[np.asarray(classes, dtype=np.int64)]
    sizes = np.array([problem.classes[c].size for c in classes], dtype=np.int64)
    caps = np.minimum(np.stack([rows[:, members].sum(axis=1) for members in groups], axis=1), sizes[:, None]) \
        if groups else np.zeros((len(classes), 0), dtype=np.int64)
    for k, c in enumerate(classes):
        terms = []
        for g in np.flatnonzero(caps[k] > 0).tolist():
            v = m.new_int_var(0, int(caps[k, g]), "")
            y[(c, g)] = v
            per_group[g].append(c)
            terms.append(v)
        pv = m.new_int_var(0, int(sizes[k]), "")
        m.add(pv == cp_model.LinearExpr.sum(terms))
        placed[c] = pv
    # each class's checked requests, read once (not once per group it may use)
    wants = {c: {r: problem.classes[c].rep.requests[r] for r in checked(problem.classes[c].rep.requests)}
             for c in classes}
    size_of = dict(zip(classes, sizes.tolist()))
    for g, members in enumerate(groups):
        cs = per_group[g]
        if not cs:
            continue
        users_of: dict[str, list[tuple[int, int]]] = {PODS: [(c, 1) for c in cs]}
        for c in cs:
            for r, q in wants[c].items():
                if r != PODS:
                    users_of.setdefault(r, []).append((c, q))
        for r in sorted(users_of):
            users = users_of[r]
            room = int(np.maximum(free_vector(problem, r)[members], 0).sum())
            if sum(q * size_of[c] for c, q in users) > room:
                m.add(cp_model.LinearExpr.weighted_sum([y[(c, g)] for c, _ in users], [q for _, q in users]) <= room)
    size_cuts(m, problem, groups, per_group, y)  # per-node packing (optimizer.packing)
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
        # an aggregated model, small beside the search's: its work units count as seconds of the search's clock
        done = run(m, SolverParams(workers=max(1, workers)), max(0.05, time_limit - (now() - started)),
                   interrupt=interrupt, det_per_second=1.0)
        if done.status is Status.OPTIMAL:
            value = int(round(done.solver.objective_value))
            out[q] = value
            m.add(level == value)
        else:
            out[q] = min(total, int(np.floor(done.bound + 1e-6))) if done.status is Status.FEASIBLE else total
            proven = False
    return out, proven


def linear_gains(problem: Problem, c: int, policy: Policy) -> tuple[np.ndarray, np.ndarray]:
    """(per feasible node of the class: the linear terms' value of one pod there, how many of its pods fit there
    by the rules that bound a node on their own), over the class's feasible nodes; computed once per problem
    (the neighbourhood search asks every round)."""
    key = ("bound.linear_gains", c, policy)
    found = problem.cache.get(key)
    if found is None:
        found = problem.cache[key] = _linear_gains(problem, c, policy)
    return found  # type: ignore[return-value]


def _linear_gains(problem: Problem, c: int, policy: Policy) -> tuple[np.ndarray, np.ndarray]:
    rep = problem.classes[c].rep
    feas = problem.feasible[c]
    tols = prefer_no_schedule_tolerations(rep)
    tainted = _tainted(problem)
    preferred = rep.affinity.node_preferred
    ub = problem.ub.matrix[c, feas].astype(np.int64)
    if not (preferred or tainted[feas].any()):
        return np.zeros(len(feas), dtype=np.int64), ub
    # the node's value depends only on the labels its preferred terms read (and the node's name, if a term
    # has matchFields) and on its taints: one evaluation per group of nodes equal in those (the groups are
    # shared by every class reading the same labels; a loop over the nodes per class took 9 s at 5,000 nodes)
    read = tuple(sorted({r.key for t in preferred for r in t.preference.match_expressions}))
    by_name = any(t.preference.match_fields for t in preferred)
    nodes = problem.nodes
    groups = problem.node_groups(
        ("bound.gains", read, by_name),
        lambda i: (nodes[i].name if by_name else tuple(nodes[i].labels.get(k) for k in read), nodes[i].taints))
    per_node = np.zeros(len(nodes), dtype=np.int64)
    for members in groups:
        node = nodes[int(members[0])]
        v = 0
        if preferred and policy.node_affinity:
            v += policy.node_affinity * preferred_score(rep, node)
        if node.taints and policy.prefer_no_schedule:
            v -= policy.prefer_no_schedule * count_intolerable_prefer_no_schedule(node, tols)
        if v:
            per_node[members] = v
    return per_node[feas], ub


def _tainted(problem: Problem) -> np.ndarray:
    """Per node: whether it has a PreferNoSchedule taint, the only effect P reads (computed once per problem: at
    5,000 classes and 5,000 nodes, asking per class was most of the bound's time; counting NoSchedule taints
    too cost 25 s on the GPU cluster, every node of which has one)."""
    found = problem.cache.get("bound.tainted")
    if found is None:
        found = problem.cache["bound.tainted"] = np.fromiter(
            (any(t.effect == PREFER_NO_SCHEDULE for t in n.taints) for n in problem.nodes), bool, len(problem.nodes))
    return found  # type: ignore[return-value]


def _best_fill(values: np.ndarray, room: np.ndarray, pods: int, every_pod: bool) -> int:
    """Most value `pods` pods can collect, at most room[i] of them worth values[i] each (the best first); with
    `every_pod` all of them must be placed, else only those worth more than 0 are counted."""
    if not len(values) or pods <= 0:
        return 0
    order = np.argsort(-values, kind="stable")
    total, left = 0, pods
    for i in order.tolist():
        v = int(values[i])
        if left <= 0 or (v <= 0 and not every_pod):
            break
        k = min(left, int(room[i]))
        total += k * v
        left -= k
    if left > 0 and every_pod:
        total += left * int(values[order[0]])  # more pods than the rooms hold alone: the best value is still a bound
    return total


def _affinity_room(problem: Problem, c: int, t: PodAffinityTerm) -> int:
    """Most pods of class c that can meet their preferred pod-affinity term `t`: a pod meets it only in a domain
    holding another matching pod, so only in the domains an existing matching pod is in, or in as many other
    domains as there are pending pods the term matches (each can open one), the roomiest first; at most as many
    pods of c in a domain as fit on its nodes alone, and (when no pending pod can open a domain) no more in a
    domain of c's DoNotSchedule spread constraints than the constraint allows there (_spread_caps)."""
    cls = problem.classes[c]
    pred = pref_pred(problem, cls.rep, t)
    codes, names = problem.codes(t.topology_key)
    feas = problem.feasible[c]
    keyed = feas[codes[feas] >= 0]
    room = np.bincount(codes[keyed], weights=problem.ub.matrix[c, keyed], minlength=len(names)).astype(np.int64)
    existing = problem.existing_matching(("ipa.pref", t, cls.rep.namespace), pred, t.label_selector)
    taken = np.zeros(len(names), dtype=bool)
    for n, k in existing.items():
        if k > 0 and codes[n] >= 0:
            taken[codes[n]] = True
    openers = sum(problem.classes[k].size for k in problem.classes_matching(pred, selector=t.label_selector))
    others = np.sort(room[~taken])[::-1]
    total = int(room[taken].sum() + others[:openers].sum())
    if openers:
        return total
    inside = keyed[taken[codes[keyed]]]  # the nodes of the domains where the term is met
    for spread_codes, cap in _spread_caps(problem, c):
        where = spread_codes[inside]
        ok = where >= 0
        per = np.bincount(where[ok], weights=problem.ub.matrix[c, inside[ok]], minlength=len(cap))
        total = min(total, int(np.minimum(per, cap).sum()))
    return total


def _spread_domains(problem: Problem, con: SpreadConstraint, rep: Pod, cons: Sequence[SpreadConstraint],
                    codes: np.ndarray, n_codes: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, Any]:
    """A DoNotSchedule spread constraint's (eligible nodes with its key, existing matching pods per domain code,
    the eligible domains' codes, the predicate of the pods it counts)."""
    eligible = np.asarray(eligible_nodes(problem, con, rep, cons), dtype=np.int64)
    eligible = eligible[codes[eligible] >= 0]
    pred, existing = spread_targets(problem, con.selector, rep.namespace)
    on = np.zeros(len(problem.nodes), dtype=np.int64)
    for n, k in existing.items():
        on[n] += k
    e = np.bincount(codes[eligible], weights=on[eligible], minlength=n_codes).astype(np.int64)
    return eligible, e, np.unique(codes[eligible]), pred


def _spread_caps(problem: Problem, c: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per DoNotSchedule spread constraint of class c: (domain code per node, most pods of c per domain).

    In the final state a domain holding a pod of c counts at most min + maxSkew matching pods (the pod is judged
    with itself removed, and removing it can only lower the minimum), and every eligible domain counts at least
    that minimum; so with D eligible domains, E existing and N pending matching pods, a domain counts at most
    (E + N + (D - 1) maxSkew) / D, less its existing matching pods (maxSkew alone when D < minDomains, where
    the minimum is taken as 0)."""
    key = ("bound.spread_caps", c)
    found = problem.cache.get(key)
    if found is not None:
        return found  # type: ignore[return-value]
    out = []
    rep = problem.classes[c].rep
    cons = hard_constraints(rep)
    for con in cons:
        if con.selector is None or con.selector.empty:
            continue
        codes, names = problem.codes(con.topology_key)
        eligible, e, domains, pred = _spread_domains(problem, con, rep, cons, codes, len(names))
        if not len(eligible):
            continue
        pending = sum(problem.classes[k].size for k in problem.classes_matching(pred, selector=con.selector))
        d = len(domains)
        top = con.max_skew if d < con.min_domains else (int(e.sum()) + pending + (d - 1) * con.max_skew) // d
        cap = np.zeros(len(names), dtype=np.int64)
        cap[domains] = np.maximum(0, top - e[domains])
        out.append((codes, cap))
    problem.cache[key] = out
    return out


def _guaranteed_anti_violations(problem: Problem, c: int, t: PodAffinityTerm) -> int:
    """Pods of class c that must break c's own preferred anti-affinity term `t` when all c's pods are placed.

    A pod escapes only alone of matching pods in its domain: so the pods that escape are at most one per domain
    free of existing matching pods, and every other pod shares a domain (a pod of c alone in a taken domain
    pays too). A domain holds at most as many pods of c as fit on its nodes alone, and at most what a
    DoNotSchedule spread constraint of c on the same key allows there (_spread_caps): with 13 pods over three
    zones and maxSkew 1 (at most 5 a zone), no pod can be alone, where without the caps 11 would pay (1, 1, 11).
    The escapers are taken from the smallest free domains, which leaves the most room for the rest; the rest
    must fit in the other domains, a free one holding none or at least two (one alone would escape too).
    Computed once per problem (the neighbourhood search asks every round)."""
    return _must_pay_cached(problem, c, t)[0]


def _guaranteed_anti_payments(problem: Problem, c: int, t: PodAffinityTerm) -> int:
    """The least payments of c's own preferred anti-affinity term `t` when all c's pods are placed, counting the
    existing pods' as well as c's: a pod of c in a domain whose one existing matching pod has the same term (a
    replica of the same workload, alone there until then) makes that pod pay too. So the pods that
    _guaranteed_anti_violations sends to domains taken by existing pods cost one payment more, unless they can
    share a free domain instead: 121 pods, 111 free nodes and 60 nodes with one existing replica each pay at least
    11 (10 on one taken node and its replica, or 11 on one free node), not 10. Only where no other pending class
    matches the term (else the replica's payment might be another class's to count). In units of the term's
    weight; at least _guaranteed_anti_violations."""
    return _must_pay_cached(problem, c, t)[1]


def _must_pay_cached(problem: Problem, c: int, t: PodAffinityTerm) -> tuple[int, int]:
    key = ("bound.must_pay", c, t)
    found = problem.cache.get(key)
    if found is None:
        found = problem.cache[key] = _must_pay(problem, c, t)
    return found  # type: ignore[return-value]


def _only_class(problem: Problem, c: int, pred: Callable[[Any], bool], selector: Any) -> bool:
    """Whether class c is the one pending class `pred` (under `selector`) matches: no other pending pod counts."""
    return problem.classes_matching(pred, selector=selector) == [c]


def _replicas_alone(problem: Problem, c: int, t: PodAffinityTerm, pred: Callable[[Any], bool], codes: np.ndarray,
                    n_domains: int) -> np.ndarray:
    """Per domain: whether it holds exactly one existing pod matching c's term `t` (`pred`), and that pod has the
    same term (_guaranteed_anti_payments). None of them when another pending class matches the term."""
    cls = problem.classes[c]
    matching = np.zeros(n_domains, dtype=np.int64)
    same = np.zeros(n_domains, dtype=np.int64)
    if not _only_class(problem, c, pred, t.label_selector):
        return matching > 0
    weight = next((wt.weight for wt in cls.rep.affinity.anti_preferred if wt.term == t), None)
    for g in problem.existing_groups_matching(pred, t.label_selector):
        twin = g.rep.namespace == cls.rep.namespace and any(
            wt.term == t and wt.weight == weight for wt in g.rep.affinity.anti_preferred)
        for n, k in g.on.items():
            if codes[n] >= 0:
                matching[codes[n]] += k
                same[codes[n]] += k if twin else 0
    return (matching == 1) & (same == 1)


def _must_pay(problem: Problem, c: int, t: PodAffinityTerm) -> tuple[int, int]:
    cls = problem.classes[c]
    pred = pref_pred(problem, cls.rep, t)
    if not pred(cls.rep):
        return 0, 0  # the term does not see the class's own pods
    codes, names = problem.codes(t.topology_key)
    feas = problem.feasible[c]
    if (codes[feas] < 0).any():
        return 0, 0  # a node without the key: pods there never break the term
    existing = problem.existing_matching(("ipa.pref", t, cls.rep.namespace), pred, t.label_selector)
    taken = np.zeros(len(names), dtype=bool)
    for n, k in existing.items():
        if k > 0 and codes[n] >= 0:
            taken[codes[n]] = True
    cap = np.bincount(codes[feas], weights=problem.ub.matrix[c, feas], minlength=len(names)).astype(np.int64)
    for spread_codes, spread_cap in _spread_caps(problem, c):
        if spread_codes is codes or np.array_equal(spread_codes, codes):
            np.minimum(cap, spread_cap, out=cap)
    size = cls.size
    free_caps = np.sort(cap[~taken & (cap > 0)])
    taken_room = int(cap[taken].sum())
    # the free domains' room beyond the escapers: suffix sums of the larger domains (a domain of room 1 is either
    # an escaper or empty)
    usable = np.where(free_caps >= 2, free_caps, 0)
    rest_room = np.concatenate((np.cumsum(usable[::-1])[::-1], [0]))
    by_room = payments = -1
    # the taken domains' room where a pod of c pays alone, and the rooms, largest first, of those where its one
    # replica starts to pay too (each used costs one payment more)
    alone = (_replicas_alone(problem, c, t, pred, codes, len(names)) & taken & (cap > 0) if taken_room
             else np.zeros_like(taken))
    quiet_room = taken_room - int(cap[alone].sum())
    loud = np.concatenate(([0], np.cumsum(np.sort(cap[alone])[::-1])))
    for s in range(min(size, len(free_caps)), -1, -1):
        left = size - s
        room = taken_room + int(rest_room[s])
        if left > room:
            continue
        if left == 1 and not taken_room:
            continue  # one pod more in a free domain would be alone too: it must share with another
        if by_room < 0:
            by_room = left  # the most escapers
        # the rest in free domains, two or more a domain; what they cannot hold in taken domains, first where
        # no replica starts to pay, then in as few domains where one does as hold it
        beyond = 1 if left == 1 else max(0, left - int(rest_room[s]))
        cost = left + int(np.searchsorted(loud, max(0, beyond - quiet_room)))
        payments = cost if payments < 0 else min(payments, cost)
        if payments <= left:
            break  # fewer escapers only cost more
    if by_room < 0:
        return 0, 0  # the pods do not fit at all: no plan places them all, nothing to count
    skew = _must_pay_by_skew(problem, c, t, codes, cap, taken)
    return max(by_room, skew), max(payments, skew)


def _must_pay_by_skew(problem: Problem, c: int, t: PodAffinityTerm, codes: np.ndarray, room: np.ndarray,
                      taken: np.ndarray) -> int:
    """Pods of class c that must break its own preferred anti-affinity term `t` by the *lower* side of a
    DoNotSchedule spread constraint of c on the same key: a domain holding a pod of c counts at most
    min + maxSkew matching pods, and every eligible domain counts at least that min (see _spread_caps), so with
    maxSkew 1 over three zones a class of 7 can only be at (2, 2, 3), where every pod pays; the caps alone
    (3 a zone) allowed (1, 3, 3). Exact over the zone count vectors these two conditions and the domains' room
    allow (a dynamic programme over domains, for each value of the min). Only where the constraint's selector
    counts no other pending pods than c's (otherwise they could raise the min anywhere); 0 when nothing is known."""
    cls = problem.classes[c]
    rep = cls.rep
    cons = hard_constraints(rep)
    best = 0
    for con in cons:
        if con.selector is None or con.selector.empty or con.topology_key != t.topology_key:
            continue
        if con.max_skew >= cls.size:
            continue  # the skew allows every vector the room allows
        eligible, e_all, domains, pred = _spread_domains(problem, con, rep, cons, codes, len(room))
        if not _only_class(problem, c, pred, con.selector):
            continue  # other pending pods count toward the domains too (or c's pods do not)
        feas = problem.feasible[c]
        if not len(eligible) or not np.isin(feas, eligible).all():
            continue  # a pod of c could stand where the constraint does not count it
        e = e_all[domains]
        cap = room[domains]
        free = ~taken[domains]
        size = cls.size
        few = len(domains) < con.min_domains  # the minimum is taken as 0
        top_l = 0 if few else (int(e.sum()) + size) // len(domains)
        inf = np.iinfo(np.int64).max // 4
        least = inf
        for low in range(top_l + 1):
            dp = np.full(size + 1, inf, dtype=np.int64)
            dp[0] = 0
            ok = True
            for j in range(len(domains)):
                new = np.full(size + 1, inf, dtype=np.int64)
                if few or e[j] >= low:
                    new = dp.copy()  # none of c's pods here
                lo = 1 if few else max(1, low - int(e[j]))
                hi = min(int(cap[j]), low + con.max_skew - int(e[j]), size)
                for m in range(lo, hi + 1):
                    pay = 0 if m == 1 and free[j] else m
                    np.minimum(new[m:], dp[:size + 1 - m] + pay, out=new[m:])
                dp = new
                if dp.min() >= inf:
                    ok = False
                    break
            if ok:
                least = min(least, int(dp[size]))
        if least < inf:
            best = max(best, least)
    return best
def _prefix_best(values: np.ndarray, counts: np.ndarray, k: int) -> np.ndarray:
    """out[j] = most j items can be worth, counts[i] items worth values[i] (best first), j = 0..min(k, items)."""
    order = np.argsort(-values, kind="stable")
    vals = np.repeat(values[order], np.minimum(counts[order], k).astype(np.int64))[:k]
    return np.concatenate(([0], np.cumsum(vals))).astype(np.int64)


def _anti_class_bound(problem: Problem, c: int, policy: Policy, all_placed: bool) -> tuple[int, int] | None:
    """(most class c's own terms can pay, its self-matching preferred anti-affinity term of largest weight
    included, that term's index) counted per domain and class together; None when c has no such term.

    A pod of c pays its anti-affinity term unless it is alone of its class in the term's domain, with no other
    matching pod: so the pods that do not pay are at most one per domain free of existing matching pods (each
    worth the best node of that domain: its linear terms plus what its preferred affinity can pay there), and
    every other pod is worth its node less the term's weight (pods on nodes without the key never pay). Without
    existing matching pods, exactly one paying pod of c alone in its domain is not possible either: it would be
    alone, so it is counted as one of the free ones. The best split between the two kinds is the bound; the
    room of a node is counted for both kinds (a relaxation)."""
    key = ("bound.anti_class", c, policy, all_placed)  # asked by the joint LP and the per-class form alike
    if key not in problem.cache:
        problem.cache[key] = _anti_class(problem, c, policy, all_placed)
    return problem.cache[key]  # type: ignore[return-value]


def _anti_class(problem: Problem, c: int, policy: Policy, all_placed: bool) -> tuple[int, int] | None:
    cls = problem.classes[c]
    rep = cls.rep
    terms = [(w, i, t) for kind, i, w, t in _pref_terms(rep)
             if kind != PREF_AFF and policy.pod_anti_affinity and pref_pred(problem, rep, t)(rep)]
    if not terms:
        return None
    w, index, t = max(terms, key=lambda x: x[0])
    m_a = policy.pod_anti_affinity * w
    gains, room = linear_gains(problem, c, policy)
    feas = problem.feasible[c]
    if not len(feas):
        return None
    met = _met_gains(problem, c, policy)
    if met is None:  # a pending pod can open a domain: every preferred affinity counted as met (its weight)
        met = sum(policy.pod_affinity * wt for kind, _, wt, _ in _pref_terms(rep) if kind == PREF_AFF)
    value = (gains + met).astype(np.int64)
    room = np.asarray(room, dtype=np.int64)
    codes, names = problem.codes(t.topology_key)
    at = codes[feas]
    pred = pref_pred(problem, rep, t)
    existing = problem.existing_matching(("ipa.pref", t, rep.namespace), pred, t.label_selector)
    taken = np.zeros(len(names) + 1, dtype=bool)  # the last: nodes without the key (never taken)
    for n, k in existing.items():
        if k > 0 and codes[n] >= 0:
            taken[codes[n]] = True
    size = cls.size
    keyed = (at >= 0) & (room > 0)
    keyless = (at < 0) & (room > 0)
    # the best node of every free domain, one pod each; nodes without the key, as many as fit
    free = keyed & ~taken[at]  # code -1 reads the last entry
    best = np.full(len(names), np.iinfo(np.int64).min, dtype=np.int64)
    np.maximum.at(best, at[free], value[free])
    singles_v = np.concatenate((best[best > np.iinfo(np.int64).min], value[keyless]))
    singles_n = np.concatenate((np.ones(int((best > np.iinfo(np.int64).min).sum()), dtype=np.int64), room[keyless]))
    alone = _prefix_best(singles_v, singles_n, size)
    paying = _prefix_best(value[keyed] - m_a, room[keyed], size)
    no_single_payer = not taken.any()
    # no more escape than the domains' room and c's spread constraints let escape (_guaranteed_anti_violations)
    must = _guaranteed_anti_violations(problem, c, t) if all_placed else 0
    top = None
    for s in range(len(alone)):
        left = size - s
        if all_placed:
            if left >= len(paying) or (left == 1 and no_single_payer) or left < must:
                continue
            v = int(alone[s] + paying[left])
        else:
            v = int(alone[s] + max(0, paying[: left + 1].max()))
        top = v if top is None else max(top, v)
    if top is None:
        return None
    by_domain = _alone_by_domain(value, room, at, keyed, keyless, taken, m_a, size, must, all_placed)
    if by_domain is not None:
        top = min(top, by_domain)
    return top, index


ANTI_SKEW_DOMAINS_MAX = 3  # _anti_skew enumerates the count vectors over at most this many domains (zones)


def _anti_skew(problem: Problem, c: int, policy: Policy) -> int | None:
    """Exactly the most class c's own terms and the skew penalty of its own ScheduleAnyway group can pay together,
    every pod placed, for a class with one preferred anti-affinity term against itself on the group's key: its
    pods want to be alone in a zone and its spread wants them even. 9 pods over three zones apart by zone
    (weight 100, multiplier 10, maxSkew 1): (1, 1, 7) pays 700 for the term and 50 for the skew, (3, 3, 3) 900
    and nothing; the per-class bound counted 700 and the skew free.

    Enumerated over the count vectors of the class's domains (up to ANTI_SKEW_DOMAINS_MAX), each domain's pods on
    its best nodes (linear gains and preferred affinity met by existing pods; every node's room taken alone: a
    relaxation), when no other pending pod matches the term, opens a domain for its preferred affinity or is
    counted by the group, and every node the class may use is one the group counts; None otherwise (the other
    bounds stand). Computed once per problem."""
    key = ("bound.anti_skew", c, policy)
    if key not in problem.cache:
        problem.cache[key] = _anti_skew_value(problem, c, policy)
    return problem.cache[key]  # type: ignore[return-value]


def _anti_skew_value(problem: Problem, c: int, policy: Policy) -> int | None:
    cls = problem.classes[c]
    rep = cls.rep
    if not (policy.schedule_anyway_skew and policy.pod_anti_affinity):
        return None
    split = _anti_split(problem, c, policy)
    if split is None or sum(kind != PREF_AFF for kind, *_ in _pref_terms(rep)) != 1:
        return None  # (none that sees the class, a second anti-affinity term, a node without its key)
    _, m_a, codes, taken, t = split
    groups = [g for g in soft_groups(problem) if g.key == t.topology_key and g.targets == (c,)
              and g.involved == (c,)]
    feas = problem.feasible[c]
    met = _met_gains(problem, c, policy)
    if len(groups) != 1 or not len(feas) or met is None:
        return None
    g = groups[0]
    if not _only_class(problem, c, pref_pred(problem, rep, t), t.label_selector):
        return None  # other pending pods decide whether a pod of c is alone
    eligible = np.zeros(len(problem.nodes), dtype=bool)
    eligible[g.nodes] = True
    if not eligible[feas].all():
        return None
    domains = sorted({int(d) for d in codes[g.nodes] if d >= 0})
    gains, room = linear_gains(problem, c, policy)
    value = (gains + met).astype(np.int64)
    room = np.asarray(room, dtype=np.int64)
    at = codes[feas]
    cap = np.bincount(at, weights=room, minlength=len(taken)).astype(np.int64)
    mine = [d for d in domains if cap[d] > 0]
    if len(mine) > ANTI_SKEW_DOMAINS_MAX or not set(at.tolist()) <= set(domains):
        return None
    size = cls.size
    # per domain of the class: the most k of its pods are worth there, k = 0..min(size, room)
    worth = [_prefix_best(value[at == d], room[at == d], size) for d in mine]
    counted = np.zeros(len(taken), dtype=np.int64)
    for n, k in g.existing.items():
        if eligible[n] and codes[n] >= 0:
            counted[codes[n]] += k
    # every vector (n_d) over c's domains summing to size within their room: all but the last free, as a grid
    axes = [np.arange(len(v)) for v in worth[:-1]]
    grid = np.stack([a.ravel() for a in np.meshgrid(*axes, indexing="ij")]) if axes else np.zeros((0, 1), np.int64)
    last = size - grid.sum(axis=0)
    ok = (last >= 0) & (last < len(worth[-1]))
    n = np.vstack([grid[:, ok], last[ok][None, :]])  # (c's domains, vectors)
    if not n.shape[1]:
        return None  # the pods do not all fit: nothing to count
    total = sum(v[k] for v, k in zip(worth, n))
    lone = (n == 1) & ~taken[mine][:, None]
    paying = size - lone.sum(axis=0)
    per = np.repeat(counted[domains][:, None], n.shape[1], axis=1)
    per[[domains.index(d) for d in mine]] += n
    excess = np.maximum(0, per.max(axis=0) - per.min(axis=0) - g.max_skew) if len(domains) > 1 else 0
    return int((total - m_a * paying - policy.schedule_anyway_skew * excess).max())


ALONE_DOMAINS_MAX = 8  # _alone_by_domain enumerates the subsets of at most this many free domains (zones)


def _alone_by_domain(value: np.ndarray, room: np.ndarray, at: np.ndarray, keyed: np.ndarray, keyless: np.ndarray,
                     taken: np.ndarray, m_a: int, size: int, must: int, all_placed: bool) -> int | None:
    """_anti_class_bound's split with the domains kept apart, for a term over few domains (zones): the pods alone
    are one in each of a set A of free domains, and every other pod is in another domain (or on a node without
    the key), not in A's. The split above let the paying pods use the alone pods' domains too: a web apart by
    zone whose cache's node in each zone holds 6 of its pods was credited 2 alone on two cache nodes and 10
    paying on the three cache nodes' 18 places, where the third zone's cache node holds only 6 of the 10. Every
    set A is tried (a plan's A is the set of free domains holding exactly one of its pods); None when there are
    more free domains than ALONE_DOMAINS_MAX."""
    from itertools import combinations

    free_codes = np.unique(at[keyed & ~taken[at]])
    if len(free_codes) > ALONE_DOMAINS_MAX:
        return None
    best_in = {int(z): int(value[keyed & (at == z)].max()) for z in free_codes.tolist()}
    rest_value = np.where(keyed, value - m_a, value)
    usable = keyed | keyless
    top: int | None = None
    for k in range(len(free_codes) + 1):
        if k > size:
            break
        for chosen in combinations(free_codes.tolist(), k):
            outside = usable & ~np.isin(at, chosen)
            rest = _prefix_best(rest_value[outside], room[outside], size - k)
            left = size - k
            if all_placed:
                if left >= len(rest) or left < must:
                    continue
                v = sum(best_in[z] for z in chosen) + int(rest[left])
            else:
                v = sum(best_in[z] for z in chosen) + int(max(0, rest.max()))
            top = v if top is None else max(top, v)
    return top


def _met_gains(problem: Problem, c: int, policy: Policy) -> np.ndarray | None:
    """Per feasible node of class c: what its preferred pod-affinity terms pay one pod there for sure (a domain
    holding an existing matching pod), when no pending pod can open another domain for any of them; None when
    one can (then the class stays in the per-class bound)."""
    cls = problem.classes[c]
    feas = problem.feasible[c]
    out = np.zeros(len(feas), dtype=np.int64)
    for kind, i, w, t in _pref_terms(cls.rep):
        if kind != PREF_AFF or not policy.pod_affinity:
            continue
        pred = pref_pred(problem, cls.rep, t)
        if problem.classes_matching(pred, selector=t.label_selector):
            return None
        codes, names = problem.codes(t.topology_key)
        existing = problem.existing_matching(("ipa.pref", t, cls.rep.namespace), pred, t.label_selector)
        taken = np.zeros(len(names) + 1, dtype=bool)
        for n, k in existing.items():
            if k > 0 and codes[n] >= 0:
                taken[codes[n]] = True
        out += policy.pod_affinity * w * taken[codes[feas]]  # code -1 (no key) reads the last, False
    return out


class _Stopped(Exception):
    """Ctrl-C while a bound was being computed: the bound is not needed any more (preference_bound_unless)."""


# Relative slack added to an LP optimum before it is rounded down to an integer bound (rounding up by a hair keeps
# an upper bound one; HiGHS's vertex after crossover is exact to about 1e-9).
LP_TOLERANCE = 1e-7
MIXED = -2  # a node group whose nodes have different codes of a topology key (in no one domain)


def _joint_linear(problem: Problem, comp: Component, policy: Policy, interrupt: Interrupt = NEVER,
                  max_columns: int | None = None) -> tuple[float, set[int], dict[int, int]] | None:
    """(most the linear terms, preferred node affinity less untolerated PreferNoSchedule taints, and the preferred
    pod-affinity terms met by existing pods, can pay over the classes that prefer some nodes to others, those
    classes) when every pod is placed: an LP over node groups.

    Each class's pods taken one class at a time may all sit on the best nodes (the per-class bound); together they
    share those nodes' room. y[class, group] >= 0 pods of the class on the group's nodes, at most the sum of the
    exact model's per-node upper bounds there; per group and resource, the classes' requests within the group's
    summed free room; each class's pods all placed; maximise sum gain[class, group] y. Every plan that places every
    pod gives a feasible y (the other classes are dropped: only more room), so the LP's optimum is a bound. Only
    classes whose gain is the same on every feasible node of a group take part (a term on the hostname is not);
    None when no class does, or the LP has no solution (then the per-class bound stands).

    Two more rows per class keep the LP a relaxation and make it tighter: a class's DoNotSchedule spread caps its
    pods per domain (_spread_caps), and a class with its own preferred anti-affinity term has each column split
    in two, the pods that do not pay the term (alone of the class in a domain free of matching pods: at most the
    free domains among the column's nodes, and over the class at most all its free domains) and the pods that
    pay it (the gain less the term's weight). A ScheduleAnyway group whose counted classes are all in the LP pays
    its skew there (_skew_rows: their columns are then one per group, each in one domain). Returns (LP optimum,
    classes in it, class -> the term split by).

    With `max_columns`, the LP holds at most that many columns (HiGHS's time grows about with their square: at
    5,000 nodes 622,000 columns ran past 190 s): the classes with the most at stake (pods times the spread of
    their gains) first, a class whose columns would not fit is left to its per-class bound (the LP without it has
    only more room: a relaxation still); joint_classes_left_out then counts them."""
    from scipy.optimize import linprog
    from scipy.sparse import coo_matrix

    # Under a deterministic clock the wall deadline caps building the LP as it caps solving it (at 5,000 nodes the
    # build alone took 130 s of a 300 s limit): a bound given up is not a wrong one (the per-class bound stands),
    # but another run may get it, so it is recorded as a cut.
    clk = clock()

    def stop() -> bool:
        """Ctrl-C raises _Stopped (the plan's bounds unknown); the wall clock run out gives the LP up (True)."""
        if interrupt.is_set():
            raise _Stopped
        return clk is not None and clk.wall_over("the preference bound's LP")

    every: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
    for c in comp.classes:
        if stop():
            return None
        gains, ub = linear_gains(problem, c, policy)
        met = _met_gains(problem, c, policy)
        if met is None:
            continue
        gains = gains + met
        if not len(gains) or gains.max() == gains.min():
            continue
        every[c] = (gains, ub, met)
    # ScheduleAnyway groups whose counted classes are all in the LP: their skew is paid in it (_skew_rows), for
    # which those classes' columns are each in one domain (their least-gain groups not merged into one column)
    in_comp = set(comp.classes)
    soft = [s for s in soft_groups(problem) if s.targets and in_comp.issuperset(s.involved)
            and every.keys() >= set(s.targets)] if policy.schedule_anyway_skew else []
    resolved = {c for s in soft for c in s.targets}
    # node groups (the hostname masked): a family of nodes alike. A class's columns are per family, and apart per
    # set of nodes of a family where a preferred affinity term of its own is met (its cache's node). The nodes
    # where any class's term is met were groups of their own for every class: at 5,000 nodes 3,000 such nodes,
    # a column each for every class preferring on-demand nodes, 3.4 million columns.
    families = node_groups(problem, comp.nodes)
    family_of = np.full(len(problem.nodes), -1, dtype=np.int64)
    for f, members in enumerate(families):
        family_of[members] = f
    groups: list[np.ndarray] = list(families)  # group g < len(families) is family g
    group_family: list[int] = list(range(len(families)))
    subgroup: dict[tuple[int, ...], int] = {}

    def class_groups(c: int, met: np.ndarray) -> np.ndarray:
        """Group per feasible node of class c: its family, or the group of its family's nodes where c's own
        affinity terms pay the same (registered on first use)."""
        feas = problem.feasible[c]
        out = family_of[feas].copy()
        if not met.any():
            return out
        for f, v in sorted({(int(family_of[n]), int(m)) for n, m in zip(feas[met > 0].tolist(),
                                                                        met[met > 0].tolist())}):
            at = np.flatnonzero((family_of[feas] == f) & (met == v))
            if len(at) == len(families[f]):
                continue  # the whole family: the family's group
            key = tuple(feas[at].tolist())
            if key not in subgroup:
                subgroup[key] = len(groups)
                groups.append(feas[at])
                group_family.append(f)
            out[at] = subgroup[key]
        return out

    cols: list[tuple[int, int, float, int]] = []  # (class, group, gain, cap)
    joint: set[int] = set()
    split: dict[int, int] = {}  # class -> the anti-affinity term its columns are split by
    free_rows: list[tuple[list[int], float]] = []  # (a class's columns that do not pay its term, free domains)
    pair_rows: list[tuple[list[int], float]] = []  # (a split column's two halves, its cap)
    spread_rows: list[tuple[int, np.ndarray, np.ndarray]] = []  # (class, spread domain per node, cap per domain)
    value_rows: list[tuple[list[int], float]] = []  # (a split class's columns, the most they are worth together)
    left_out = 0
    for c, (gains, ub, met) in sorted(every.items(), key=lambda item: (
            -problem.classes[item[0]].size * float(item[1][0].max() - item[1][0].min()), item[0])):
        if stop():
            return None
        feas = problem.feasible[c]
        if not len(feas):
            continue
        group_at = class_groups(c, met)  # per feasible node
        # per group of the class's feasible nodes: its gain (the same on every node of the group, else the
        # class stays out of the LP) and the sum of its per-node caps, by one sort and reductions (a loop over
        # groups was 3.5 million iterations, 100 s, at 5,000 nodes)
        order = np.argsort(group_at, kind="stable")
        g_sorted, gain_sorted, ub_sorted = group_at[order], gains[order], ub[order]
        starts = np.flatnonzero(np.r_[True, g_sorted[1:] != g_sorted[:-1]])
        g_min = np.minimum.reduceat(gain_sorted, starts)
        ok = bool((g_min == np.maximum.reduceat(gain_sorted, starts)).all())
        caps = np.add.reduceat(ub_sorted, starts)
        mine = [(c, g, gain, cap) for g, gain, cap in
                zip(g_sorted[starts].tolist(), g_min.astype(float).tolist(), caps.astype(int).tolist()) if cap > 0]
        if ok and sum(cap for *_, cap in mine) >= problem.classes[c].size:
            # the groups where the class gains least are one column without room constraints (dropping them
            # only loosens the LP, a relaxation still): at 1,000 nodes, one column per (class, group) was 320,000
            low = min(gain for _, _, gain, _ in mine)
            mine_cols = [col for col in mine if col[2] > low or c in resolved]
            if c not in resolved:
                mine_cols.append((c, -1, low, sum(cap for _, _, gain, cap in mine if gain == low)))
            anti = _anti_split(problem, c, policy)
            if max_columns is not None and len(cols) + len(mine_cols) * (1 if anti is None else 2) > max_columns:
                left_out += 1
                continue
            if anti is None:
                cols.extend(mine_cols)
            else:
                # the class's own anti-affinity term: a pod that does not pay it is alone of its class in a domain
                # free of matching pods, so per column at most as many as the free domains among its nodes, and
                # over the class at most the free domains in all; every other pod pays the term's weight
                index, m_a, codes, taken, term = anti
                size = problem.classes[c].size
                used, used_group = feas[ub > 0], group_at[ub > 0]
                low_nodes = used[np.isin(used_group, [g for _, g, gain, _ in mine if gain == low])]
                # free domains per group, for every group at once (one np.unique over the class's nodes per
                # column was 30 s at 5,000 nodes): the distinct (group, domain) pairs among nodes in free domains
                at = codes[used]
                free_at = ~taken[at] & (used_group >= 0)
                pairs = np.unique(used_group[free_at].astype(np.int64) * len(taken) + at[free_at])
                free_in = np.bincount(pairs // len(taken), minlength=len(groups))
                at_low = codes[low_nodes]
                free_low = len(np.unique(at_low[~taken[at_low]]))
                frees = []
                first = len(cols)
                for col in mine_cols:
                    n_free = int(free_in[col[1]]) if col[1] >= 0 else free_low
                    if n_free:
                        frees.append(len(cols))
                        pair_rows.append(([len(cols), len(cols) + 1], float(col[3])))  # the two share the cap
                        cols.append((col[0], col[1], col[2], min(col[3], n_free)))
                    cols.append((col[0], col[1], col[2] - m_a, col[3]))
                # and no fewer pay than must (_guaranteed_anti_violations: one domain holds the extra pods)
                must = _guaranteed_anti_violations(problem, c, term)
                free_rows.append((frees, float(min(len(np.unique(at[~taken[at]])), size - must))))
                split[c] = index
                # the class's columns are worth no more than its own bound with the same term (_anti_class_bound:
                # the same gains and weight, every pod placed), which keeps the alone pods' domains apart from
                # the paying ones' where the columns cannot: the LP shares room between classes, that bound
                # splits one class exactly, and a plan meets both at once
                together = _anti_class_bound(problem, c, policy, True)
                if together is not None and together[1] == index:
                    value_rows.append((list(range(first, len(cols))), float(together[0])))
            spread_rows.extend((c, sc, cap) for sc, cap in _spread_caps(problem, c))
            joint.add(c)
    if left_out:
        problem.cache[_left_out_key(comp)] = (left_out, len(joint))
    if not joint:
        return None
    rows_i, rows_j, vals, rhs = [], [], [], []
    row = 0
    # room per group: a family's row holds every column within it (its own groups' too), a family's own group
    # the columns on exactly its nodes
    by_group: dict[int, list[int]] = defaultdict(list)
    for j, (c, g, _, _) in enumerate(cols):
        if g >= 0:
            by_group[g].append(j)
            if g >= len(families):
                by_group[group_family[g]].append(j)
    for g, js in sorted(by_group.items()):
        if stop():
            return None
        members = groups[g]
        resources = {PODS} | {r for j in js for r in checked(problem.classes[cols[j][0]].rep.requests)}
        for r in sorted(resources):
            room = int(np.maximum(free_vector(problem, r)[members], 0).sum())
            for j in js:
                q = 1 if r == PODS else problem.classes[cols[j][0]].rep.requests.get(r, 0)
                if q > 0:
                    rows_i.append(row)
                    rows_j.append(j)
                    vals.append(float(q))
            rhs.append(float(room))
            row += 1
    # pods per set of columns (free domains, a split column's cap), then a split class's value over its columns
    for js, most, by_value in [(js, free, False) for js, free in free_rows + pair_rows] + \
            [(js, most, True) for js, most in value_rows]:
        rows_i.extend([row] * len(js))
        rows_j.extend(js)
        vals.extend(cols[j][2] if by_value else 1.0 for j in js)
        rhs.append(most)
        row += 1
    # a class's DoNotSchedule spread caps its pods per domain (_spread_caps): a row per domain over the class's
    # columns whose group lies in that domain (the others left out of the row: a relaxation still)
    by_class: dict[int, list[int]] = defaultdict(list)
    for j, (c, g, _, _) in enumerate(cols):
        if g >= 0:
            by_class[c].append(j)
    group_nodes = np.concatenate(groups) if groups else np.zeros(0, dtype=np.int64)
    group_index = np.repeat(np.arange(len(groups)), [len(g) for g in groups])

    def domain_of(codes: np.ndarray) -> np.ndarray:
        """Per group: the code all its nodes share (-1 none), or MIXED (the lowest and highest code disagree)."""
        lowest = np.full(len(groups), np.iinfo(np.int64).max, dtype=np.int64)
        highest = np.full(len(groups), np.iinfo(np.int64).min, dtype=np.int64)
        np.minimum.at(lowest, group_index, codes[group_nodes])
        np.maximum.at(highest, group_index, codes[group_nodes])
        return np.where(lowest == highest, lowest, MIXED)

    for c, sc, cap in spread_rows:
        if stop():
            return None
        per_domain = _by_domain(by_class[c], cols, domain_of(sc))  # columns whose group lies in one domain
        for d, js in sorted(per_domain.items()):
            if sum(cols[j][3] for j in js) > cap[d]:
                rows_i.extend([row] * len(js))
                rows_j.extend(js)
                vals.extend([1.0] * len(js))
                rhs.append(float(cap[d]))
                row += 1
    skew_vars = 0
    if soft:
        paid = [s for s in soft if set(s.targets) <= joint]
        worth = {c: v for s in paid if len(s.targets) == 1 and s.involved == s.targets
                 for c in s.targets if (v := _anti_skew(problem, c, policy)) is not None}
        row, skew_vars = _skew_rows(paid, problem, cols, by_class, domain_of, len(cols), row, rows_i, rows_j, vals,
                                    rhs, worth, policy.schedule_anyway_skew)
    n_vars = len(cols) + skew_vars
    eq_i, eq_j, eq_rhs = [], [], []
    index = {c: k for k, c in enumerate(sorted(joint))}
    for j, (c, *_rest) in enumerate(cols):
        eq_i.append(index[c])
        eq_j.append(j)
    eq_rhs = [float(problem.classes[c].size) for c in sorted(joint)]
    a_ub = coo_matrix((vals, (rows_i, rows_j)), shape=(row, n_vars)).tocsr()
    a_eq = coo_matrix(([1.0] * len(eq_i), (eq_i, eq_j)), shape=(len(joint), n_vars)).tocsr()
    # per skew group (max, min, excess): the excess costs the policy's multiplier per unit
    objective = [-gain for _, _, gain, _ in cols] + [0.0, 0.0, float(policy.schedule_anyway_skew)] * (skew_vars // 3)
    # HiGHS's interior point method (with its crossover to a vertex): at 5,000 nodes this LP has 420,000
    # columns, which the default dual simplex took 212 s of CPU to solve and the interior point 18 s (1,000
    # nodes: 0.3 s either way). Under a deterministic clock the wall deadline caps it as it capped the build.
    options: dict[str, Any] = {}
    if stop():
        return None
    if clk is not None:
        options["time_limit"] = max(0.1, clk.wall_left())
    finished, res = interrupt.unless_set(
        lambda: linprog(c=objective, A_ub=a_ub, b_ub=rhs, A_eq=a_eq, b_eq=eq_rhs,
                        bounds=[(0, cap) for *_, cap in cols] + [(0, None)] * skew_vars, method="highs-ipm",
                        options=options),
        deadline=clk.wall_deadline if clk is not None else None)
    if not finished:
        if interrupt.is_set():
            raise _Stopped  # Ctrl-C during the LP: the plan is printed now, its bounds unknown
        clk.cut("the preference bound's LP")  # type: ignore[union-attr]  # the wall deadline passed
        return None
    if res.status != 0:
        if res.status == 1 and clk is not None:
            clk.cut("the preference bound's LP")
        return None
    # an upper bound rounded up by a hair is still one: the crossover's vertex is exact to about 1e-9
    value = -float(res.fun)
    return value + LP_TOLERANCE * max(1.0, abs(value)), joint, split


def _by_domain(js: Sequence[int], cols: Sequence[tuple[int, int, float, int]], dom: np.ndarray
               ) -> dict[int, list[int]]:
    """The columns `js` whose node group lies in one domain, per domain (dom: per group, _joint_linear's
    domain_of)."""
    out: dict[int, list[int]] = defaultdict(list)
    for j in js:
        if dom[cols[j][1]] >= 0:
            out[int(dom[cols[j][1]])].append(j)
    return out


def _skew_rows(soft: list[SoftGroup], problem: Problem, cols: list[tuple[int, int, float, int]],
               by_class: Mapping[int, list[int]], domain_of: Callable[[np.ndarray], np.ndarray], first_var: int,
               row: int, rows_i: list[int], rows_j: list[int], vals: list[float], rhs: list[float],
               worth: Mapping[int, int], multiplier: int) -> tuple[int, int]:
    """The ScheduleAnyway skew of each group in `soft` in the joint LP: variables max, min and excess from
    `first_var` on, max >= count_d >= min for every domain d of the group's eligible nodes (count_d: the
    existing pods it counts there, plus the columns of its classes on nodes of d), excess >= max - min - maxSkew,
    excess >= 0; the objective pays the multiplier per unit of excess. Every plan placing every pod gives these
    a solution with excess its own (max(0, skew - maxSkew)), so the LP stays a relaxation. A group whose classes
    have a column over nodes of several domains, or partly eligible, is left out (its skew counted free, as
    before). A group of one class c with `worth[c]` (_anti_skew: what its own terms and the group's skew pay
    together at most) gets the row: c's columns' value less the multiplier times the excess, at most that (the LP
    alone could put c's alone pods in zones its paying pods also fill, and so keep it even). `by_class`: each
    class's columns on a node group (its classes have no other: the LP keeps their groups apart); `domain_of`:
    per node group, the code its nodes share. Returns (the next row, the variables added)."""
    added = 0
    for s in soft:
        codes, _ = problem.codes(s.key)
        eligible = np.zeros(len(problem.nodes), dtype=bool)
        eligible[s.nodes] = True
        domains = sorted({int(d) for d in codes[s.nodes] if d >= 0})
        if len(domains) < 2:
            continue  # one domain: no skew
        const = dict.fromkeys(domains, 0)
        for n, v in s.existing.items():
            if eligible[n] and codes[n] >= 0:
                const[int(codes[n])] += v
        # a node the group does not count is in no domain: a column over counted and uncounted nodes, or over
        # several domains, has no count per domain (MIXED), and the group is left out
        dom = domain_of(np.where(eligible, codes, -1))
        js_of = [j for c in s.targets for j in by_class[c]]
        if any(dom[cols[j][1]] == MIXED for j in js_of):
            continue
        per_domain = _by_domain(js_of, cols, dom)
        mx, mn, excess = first_var + added, first_var + added + 1, first_var + added + 2
        added += 3
        for d in domains:
            js = per_domain.get(d, [])
            # count_d - max <= -const_d  and  min - count_d <= const_d
            rows_i.extend([row] * (len(js) + 1))
            rows_j.extend(js + [mx])
            vals.extend([1.0] * len(js) + [-1.0])
            rhs.append(-float(const[d]))
            rows_i.extend([row + 1] * (len(js) + 1))
            rows_j.extend(js + [mn])
            vals.extend([-1.0] * len(js) + [1.0])
            rhs.append(float(const[d]))
            row += 2
        rows_i.extend([row] * 3)
        rows_j.extend([mx, mn, excess])
        vals.extend([1.0, -1.0, -1.0])
        rhs.append(float(s.max_skew))
        row += 1
        if len(s.targets) == 1 and s.targets[0] in worth:
            js = by_class[s.targets[0]]
            rows_i.extend([row] * (len(js) + 1))
            rows_j.extend(js + [excess])
            vals.extend([cols[j][2] for j in js] + [-float(multiplier)])
            rhs.append(float(worth[s.targets[0]]))
            row += 1
    return row, added


def _left_out_key(comp: Component) -> tuple[object, ...]:
    return ("bound.joint_left_out", comp.index, tuple(comp.classes))


def joint_classes_left_out(problem: Problem, comp: Component) -> tuple[int, int] | None:
    """(classes left out of the joint LP of `comp` for its max_columns, classes in it), or None when none was."""
    return problem.cache.get(_left_out_key(comp))  # type: ignore[return-value]


def _anti_split(problem: Problem, c: int, policy: Policy) -> tuple[int, int, np.ndarray, np.ndarray, PodAffinityTerm] | None:
    """(index, weight in P, domain code per node, taken per code, the term) of class c's own preferred anti-affinity term
    of largest weight, for the joint LP to split the class's columns by; None when it has none, or when one of
    its feasible nodes lacks the term's key (pods there never pay it)."""
    rep = problem.classes[c].rep
    terms = [(w, i, t) for kind, i, w, t in _pref_terms(rep)
             if kind != PREF_AFF and policy.pod_anti_affinity and pref_pred(problem, rep, t)(rep)]
    if not terms:
        return None
    w, index, t = max(terms, key=lambda x: x[0])
    codes, names = problem.codes(t.topology_key)
    if (codes[problem.feasible[c]] < 0).any():
        return None
    pred = pref_pred(problem, rep, t)
    taken = np.zeros(len(names), dtype=bool)
    for n, k in problem.existing_matching(("ipa.pref", t, rep.namespace), pred, t.label_selector).items():
        if k > 0 and codes[n] >= 0:
            taken[codes[n]] = True
    return index, policy.pod_anti_affinity * w, codes, taken, t


def preference_bound(problem: Problem, comp: Component, policy: Policy, all_placed: bool) -> int:
    """Upper bound on the component's part of P (see the module docstring); computed once per problem (the
    neighbourhood search asks before its rounds, the plan's bounds after them: at 1,000 nodes the joint LP's
    groups take seconds to build)."""
    key = ("bound.preference", comp.index, tuple(comp.classes), policy, all_placed, None)
    found = problem.cache.get(key)
    if found is None:
        found = problem.cache[key] = _preference_bound(problem, comp, policy, all_placed)
    return found  # type: ignore[return-value]


def preference_bound_unless(problem: Problem, comp: Component, policy: Policy, all_placed: bool,
                            interrupt: Interrupt, max_columns: int | None = None) -> int | None:
    """preference_bound, or None once `interrupt` is set (Ctrl-C): building the LP's groups takes seconds at
    1,000 nodes, and a plan printed on Ctrl-C reports its bounds unknown. A stopped bound is not remembered.
    With `max_columns`, a joint LP of more columns is not solved (the per-class form stands)."""
    key = ("bound.preference", comp.index, tuple(comp.classes), policy, all_placed, max_columns)
    found = problem.cache.get(key)
    if found is None:
        try:
            found = problem.cache[key] = _preference_bound(problem, comp, policy, all_placed, interrupt, max_columns)
        except _Stopped:
            return None
    return found  # type: ignore[return-value]


def _preference_bound(problem: Problem, comp: Component, policy: Policy, all_placed: bool,
                      interrupt: Interrupt = NEVER, max_columns: int | None = None) -> int:
    total = 0
    cls_set = set(comp.classes)
    joint = _joint_linear(problem, comp, policy, interrupt, max_columns) if all_placed else None
    # the joint form of the classes' own terms: the LP over node groups for the linear terms of the classes in it,
    # plus their affinity caps, plus the per-class bound of the others; the smaller of the two forms is the bound
    per_class_part, joint_part = 0, (joint[0] if joint is not None else 0.0)
    for c in comp.classes:
        cls = problem.classes[c]
        affinity = sum(policy.pod_affinity * w for kind, i, w, t in _pref_terms(cls.rep) if kind == PREF_AFF)
        gains, room = linear_gains(problem, c, policy)
        # every placed pod at the best node it may use (as many as fit there alone), every preferred affinity met;
        # or, the two apart, each preferred affinity met only by as many pods as fit where a matching pod can be
        every_term = _best_fill(gains + affinity, room, cls.size, all_placed)
        affinity_cap = sum(policy.pod_affinity * w * min(cls.size, _affinity_room(problem, c, t))
                           for kind, i, w, t in _pref_terms(cls.rep) if kind == PREF_AFF)
        capped = _best_fill(gains, room, cls.size, all_placed) + affinity_cap
        own = min(every_term, capped)
        # the anti-affinity terms: pods that must break them (every plan placing all pods); or one term counted
        # with the class's gains per domain (_anti_class_bound), the smaller of the two
        broken = {i: policy.pod_anti_affinity * w * _guaranteed_anti_payments(problem, c, t)
                  for kind, i, w, t in _pref_terms(cls.rep) if kind != PREF_AFF} \
            if all_placed and policy.pod_anti_affinity else {}
        alone = own - sum(broken.values())
        together = _anti_class_bound(problem, c, policy, all_placed)
        if together is not None:
            alone = min(alone, together[0] - sum(v for i, v in broken.items() if i != together[1]))
        # with its group's skew, which no other part of the per-class form counts; in the joint form only a class
        # out of the LP uses it (the LP pays the skew of the groups whose counted classes are all in it)
        skewed = _anti_skew(problem, c, policy) if all_placed else None
        if skewed is not None:
            alone = min(alone, skewed)
        per_class_part += alone
        if joint is not None and c in joint[1]:
            # the LP holds the class's gains, and the anti-affinity term it split its columns by
            joint_part -= sum(v for i, v in broken.items() if i != joint[2].get(c))
        else:
            joint_part += alone
    total += min(per_class_part, int(np.floor(joint_part + 1e-6))) if joint is not None else per_class_part
    for h, kind, i, w, t, pred, targets in _holder_pref(problem):
        if kind != PREF_AFF or not any(c in cls_set for c in targets):
            continue
        n_e = next(iter(h.on))
        if problem.nodes[n_e].labels.get(t.topology_key) is None:
            continue
        # only counted here when pending pods decide it (existing_terms holds the constant ones)
        ex = problem.existing_matching(("ipa.pref", t, h.rep.namespace), pred, t.label_selector)
        others = _domain_has(problem, ex, t.topology_key, problem.nodes[n_e].labels[t.topology_key]) - int(pred(h.rep))
        if others < 1:
            total += policy.pod_affinity * w * h.on[n_e]
    return total
