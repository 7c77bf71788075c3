"""CP-SAT encoding of PodTopologySpread: DoNotSchedule constraints (hard) and the ScheduleAnyway skew
penalty of the preference score.

DoNotSchedule, final state, pod p of class/holder A in domain D judged with itself removed. With
count_d = matching pods in eligible domain d (eligible: nodes with every key of A's hard constraints that
pass A's inclusion policies; counted: same namespace, not terminating, non-empty selector matching) and p
counted in count_D when it matches its own selector, upstream's skew is
count_D − min(count_D − 1, min_{d≠D} count_d) ≥ 1, so (maxSkew ≥ 1) the rule is exactly
count_D − min_d count_d ≤ maxSkew; with fewer eligible domains than minDomains the minimum is 0.
Encoded as: mn ≤ count_d for every eligible domain d (the solver may raise mn to the true minimum), and
for each domain D where A may have a pod: presence(A, D) → count_D − mn ≤ maxSkew. An empty selector
counts nothing and the pod's own +1 then gives skew 1: no constraint. Existing pods holding a hard
constraint that new pods can see keep it (unless it was already broken in the input: pre-existing).
A node lacking a hard constraint's key is static (UnschedulableAndUnresolvable, missing required label).

ScheduleAnyway term: groups (namespace, key, selector, maxSkew) over the OWN ScheduleAnyway constraints of
the final state's pods; domains from the inclusion policies of the group's first pod in input order that is
in the final state; − multiplier × max(0, max_d count_d − min_d count_d − maxSkew) while the group exists.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...models.objects import Pod
from ..framework import Reason
from ..state import NodeInfo
from ..problem import PodClass, Problem
from ..context import ModelContext
from ..policy import Policy

from .common import (DO_NOT_SCHEDULE, SCHEDULE_ANYWAY, SpreadConstraint, counts_toward, global_min,
                     has_all_keys, node_eligible, own_constraints, self_match)
from .filtering import ERR_REASON_NODE_LABEL_NOT_MATCH, NAME

TERM = "schedule_anyway_skew"
FIELD = "spec.topologySpreadConstraints"


def hard_constraints(pod: Pod) -> tuple[SpreadConstraint, ...]:
    """The pod's DoNotSchedule constraints (system defaults are all ScheduleAnyway)."""
    return own_constraints(pod, DO_NOT_SCHEDULE)


def static_reasons(problem: Problem, cls: PodClass, info: NodeInfo) -> list[Reason]:
    cons = hard_constraints(cls.rep)
    if cons and not has_all_keys(info.node.labels, cons):
        return [Reason(NAME, ERR_REASON_NODE_LABEL_NOT_MATCH, unresolvable=True)]
    return []


def _index(pod: Pod, c: SpreadConstraint) -> int:
    """Position of constraint c in the pod's spec (for naming the field)."""
    for i, raw in enumerate(pod.spread_constraints):
        if raw.topology_key == c.topology_key and raw.max_skew == c.max_skew and raw.label_selector == c.selector:
            return i
    return 0


def eligible_nodes(problem: Problem, c: SpreadConstraint, pod: Pod, cons: tuple[SpreadConstraint, ...]) -> list[int]:
    key = ("spread.eligible", c, pod.namespace, pod.affinity.node_required, tuple(sorted(pod.node_selector.items())),
           pod.tolerations, cons)
    found = problem.cache.get(key)
    if found is None:
        found = problem.cache[key] = np.flatnonzero(_eligible_mask(problem, c, pod, cons)).tolist()
    return found


def _eligible_mask(problem: Problem, c: SpreadConstraint, pod: Pod, cons: tuple[SpreadConstraint, ...]) -> np.ndarray:
    """has_all_keys(cons) and node_eligible(c, pod, .) per node, evaluated once per group of nodes equal in
    everything they read (the keys, the pod's node-affinity keys, taints, the name when matchFields pins it)."""
    nodes = problem.nodes
    keys = {k.topology_key for k in cons} | set(pod.node_selector)
    by_name = False
    required = pod.affinity.node_required
    for t in (required.terms if required else ()):
        keys |= {r.key for r in t.match_expressions}
        by_name |= bool(t.match_fields)
    ordered = tuple(sorted(keys))

    def sig(i: int) -> tuple:
        n = nodes[i]
        return (n.name if by_name else "", tuple((k in n.labels, n.labels.get(k)) for k in ordered), n.taints)
    return problem.mask_by_groups(("spread.eligible", by_name, ordered), sig,
                                  lambda i: has_all_keys(nodes[i].labels, cons) and node_eligible(c, pod, nodes[i]))


def _targets(ctx_or_problem: ModelContext | Problem, sel: Any, ns: str) -> tuple[Any, dict[int, int]]:
    pred = (lambda q, sel=sel, ns=ns: counts_toward(sel, ns, q))
    existing = (ctx_or_problem.problem if hasattr(ctx_or_problem, "problem") else ctx_or_problem) \
        .existing_matching(("spread", sel, ns), pred, sel)
    return pred, existing


def _domain_counts(ctx: ModelContext, targets: list[int], existing: dict[int, int], key: str, nodes: list[int]):
    """value -> (x terms, constant) of matching pods on the eligible `nodes`."""
    values, _ = ctx.problem.domains(key)
    among = set(nodes)
    out = {}
    for v in sorted({values[n] for n in nodes}):
        out[v] = ctx.count_in(targets, existing, key, v, among)
    return out


def _matching_classes(problem: Problem, sel: Any, ns: str) -> list[int]:
    key = ("spread.classes", sel, ns)
    found = problem.cache.get(key)
    if found is None:
        found = problem.cache[key] = problem.classes_matching(lambda q: counts_toward(sel, ns, q), selector=sel)
    return found


def interactions(problem: Problem) -> list[tuple[int, int]]:
    edges: list[tuple[int, int]] = []
    for cls in problem.classes:
        for c in own_constraints(cls.rep, DO_NOT_SCHEDULE) + own_constraints(cls.rep, SCHEDULE_ANYWAY):
            ns = cls.rep.namespace
            edges.extend((cls.index, t) for t in problem.classes_matching(
                lambda q: counts_toward(c.selector, ns, q), selector=c.selector))
    for h in problem.holders:
        for c in own_constraints(h.rep, DO_NOT_SCHEDULE) + own_constraints(h.rep, SCHEDULE_ANYWAY):
            ns = h.rep.namespace
            ts = _matching_classes(problem, c.selector, ns)
            edges.extend(zip(ts, ts[1:]))
    for group in _groups(problem).values():
        ts = [x for kind, x in group if kind == "class"]
        edges.extend(zip(ts, ts[1:]))
    return edges


def static_mask(problem: Problem, cls: PodClass) -> np.ndarray | None:
    cons = hard_constraints(cls.rep)
    if not cons:
        return None
    mask = np.ones(len(problem.nodes), dtype=bool)
    for c in cons:
        mask &= problem.codes(c.topology_key)[0] >= 0
    return mask


def encode(ctx: ModelContext) -> None:
    _encode_hard(ctx)
    if ctx.policy.schedule_anyway_skew:
        _encode_soft(ctx)


def encode_soft(ctx: ModelContext) -> None:
    """The ScheduleAnyway term alone: the model of a profile whose PodTopologySpread Filter is disabled."""
    if ctx.policy.schedule_anyway_skew:
        _encode_soft(ctx)


def _encode_hard(ctx: ModelContext) -> None:
    p = ctx.problem
    for a in ctx.classes:
        rep = p.classes[a].rep
        cons = hard_constraints(rep)
        for c in cons:
            if c.selector is None or c.selector.empty:
                continue  # counts nothing: skew is the pod's own +1 at most
            pred, existing = _targets(ctx, c.selector, rep.namespace)
            targets = ctx.targets(pred, c.selector)
            if a in ctx.frozen and ctx.all_frozen(targets):
                continue
            nodes = eligible_nodes(p, c, rep, cons)
            counts = _domain_counts(ctx, targets, existing, c.topology_key, nodes)
            group = (NAME, f"Pod/{rep.key}", f"{FIELD}[{_index(rep, c)}]")
            mn = _minimum(ctx, counts, c.min_domains, f"{p.classes[a].name},{c.topology_key}")
            for v in ctx.class_domains(a, c.topology_key):
                xs, const = counts.get(v, ([], 0))
                lit = ctx.presence(a, c.topology_key, v)
                if isinstance(lit, int):
                    continue
                ctx.hard(ctx.model.add(sum(xs) + const - mn <= c.max_skew).only_enforce_if(lit), group)
    for h in p.holders:
        rep = h.rep
        cons = hard_constraints(rep)
        n_e = next(iter(h.on))
        labels = p.nodes[n_e].labels
        if not cons or not has_all_keys(labels, cons):
            continue  # missing key: broken in the input already
        for c in cons:
            if c.selector is None or c.selector.empty:
                continue
            pred, existing = _targets(ctx, c.selector, rep.namespace)
            targets = ctx.targets(pred, c.selector)
            if not targets or ctx.all_frozen(targets):
                continue  # no pending pod can change its counts (targets are all in one component)
            nodes = eligible_nodes(p, c, rep, cons)
            if _broken_in_input(p, c, rep, n_e, nodes, existing):
                continue
            counts = _domain_counts(ctx, targets, existing, c.topology_key, nodes)
            v = labels[c.topology_key]
            xs, const = counts.get(v, ([], 0))
            mn = _minimum(ctx, counts, c.min_domains, f"{rep.name},{c.topology_key}")
            group = (NAME, f"Pod/{rep.key}", f"{FIELD}[{_index(rep, c)}]")
            ctx.hard(ctx.model.add(sum(xs) + const - mn <= c.max_skew), group)


def _minimum(ctx: ModelContext, counts: dict, min_domains: int, name: str) -> Any:
    if len(counts) < min_domains or not counts:
        return 0
    hi = min(const for _, const in counts.values()) + ctx.pending_pods
    mn = ctx.new_int(0, hi, f"spread_min[{name}]")
    for xs, const in counts.values():
        ctx.model.add(mn <= sum(xs) + const)
    return mn


def _broken_in_input(problem: Problem, c: SpreadConstraint, pod: Pod, node: int, nodes: list[int],
                     existing: dict[int, int]) -> bool:
    """Was the existing pod's hard constraint already broken in the input state (itself removed)?"""
    values, _ = problem.domains(c.topology_key)
    counts: dict[str, int] = defaultdict(int)
    for n in nodes:
        counts[values[n]] += existing.get(n, 0)
    mine = values[node]
    if counts_toward(c.selector, pod.namespace, pod) and mine in counts:
        counts[mine] -= 1
    skew = counts.get(mine, 0) + int(self_match(c, pod)) - global_min(counts, c.min_domains)
    return skew > c.max_skew


# -- ScheduleAnyway --------------------------------------------------------------------------------------

def _groups(problem: Problem) -> dict[tuple, list[tuple[str, Any]]]:
    """(namespace, key, selector, maxSkew) -> holders [("class", index) | ("pod", ExistingGroup)]."""
    key = "spread.groups"
    found = problem.cache.get(key)
    if found is not None:
        return found
    groups: dict[tuple, list[tuple[str, Any]]] = defaultdict(list)
    for h in problem.holders:
        for c in own_constraints(h.rep, SCHEDULE_ANYWAY):
            groups[(h.rep.namespace, c.topology_key, c.selector, c.max_skew)].append(("pod", h))
    for cls in problem.classes:
        for c in own_constraints(cls.rep, SCHEDULE_ANYWAY):
            groups[(cls.rep.namespace, c.topology_key, c.selector, c.max_skew)].append(("class", cls.index))
    for g, holders in groups.items():
        holders.sort(key=lambda h: (h[1].rep.order if h[0] == "pod" else problem.classes[h[1]].rep.order))
        # dedupe classes listed twice (a pod may repeat a constraint)
        seen: set = set()
        holders[:] = [h for h in holders if not (id(h[1]) in seen or seen.add(id(h[1])))]
    problem.cache[key] = found = dict(groups)
    return found


def _holder_constraint(pod: Pod, g: tuple) -> SpreadConstraint:
    ns, key, sel, skew = g
    return next(c for c in own_constraints(pod, SCHEDULE_ANYWAY)
                if (c.topology_key, c.selector, c.max_skew) == (key, sel, skew))


def _soft_nodes(problem: Problem, g: tuple, pod: Pod) -> list[int]:
    c = _holder_constraint(pod, g)
    key = ("spread.soft", g, pod.affinity.node_required, tuple(sorted(pod.node_selector.items())), pod.tolerations,
           c.node_affinity_policy, c.node_taints_policy)
    found = problem.cache.get(key)
    if found is None:
        found = problem.cache[key] = np.flatnonzero(_eligible_mask(problem, c, pod, (c,))).tolist()
    return found


def group_involves(problem: Problem, g: tuple, holders: list) -> list[int]:
    ns, key, sel, skew = g
    classes = {h[1] for h in holders if h[0] == "class"}
    classes |= set(_matching_classes(problem, sel, ns))
    return sorted(classes)


def _encode_soft(ctx: ModelContext) -> None:
    p = ctx.problem
    m = ctx.policy.schedule_anyway_skew
    for g, holders in _groups(p).items():
        involved = group_involves(p, g, holders)
        if not involved or not set(involved) <= ctx.class_set:
            continue
        ns, key, sel, max_skew = g
        pred, existing = _targets(ctx, sel, ns)
        targets = ctx.targets(pred, sel)
        # which holder's inclusion policies define the domains: the first one (input order) that is placed
        firsts: dict[tuple[int, ...], list[Any]] = defaultdict(list)
        earlier: list[Any] = []
        for kind, h in holders:
            pod = h.rep if kind == "pod" else p.classes[h].rep
            nodes = tuple(_soft_nodes(p, g, pod))
            if kind == "pod":
                if earlier:
                    lit = ctx.new_bool(f"spread_first[{pod.name},{key}]")
                    ctx.model.add_bool_and([e.Not() for e in earlier]).only_enforce_if(lit)
                    ctx.model.add_bool_or(earlier + [lit])
                    firsts[nodes].append(lit)
                else:
                    firsts[nodes].append(True)  # an existing pod: always in the final state
                break
            present = ctx.new_bool(f"spread_present[{p.classes[h].name},{key}]")
            ctx.model.add(ctx.placed[h] >= 1).only_enforce_if(present)
            ctx.model.add(ctx.placed[h] == 0).only_enforce_if(present.Not())
            lit = ctx.new_bool(f"spread_first[{p.classes[h].name},{key}]")
            ctx.model.add_bool_and([present] + [e.Not() for e in earlier]).only_enforce_if(lit)
            ctx.model.add_bool_or([present.Not()] + earlier + [lit])
            firsts[nodes].append(lit)
            earlier.append(present)
        total = sum(p.classes[c].size for c in targets)
        for nodes, lits in firsts.items():
            counts = _domain_counts(ctx, targets, existing, key, list(nodes))
            if len(counts) < 2:
                continue  # one domain or none: no skew
            consts = [const for _, const in counts.values()]
            if any(lit is True for lit in lits):
                on = None
            else:
                on = ctx.new_bool(f"spread_group[{ns},{key},{len(nodes)}]")
                ctx.model.add_bool_or([l for l in lits]).only_enforce_if(on)
                for l in lits:
                    ctx.model.add_implication(l, on)
            hi = max(consts) + total
            mx = ctx.new_int(0, hi, f"spread_max[{ns},{key}]")
            mn = ctx.new_int(0, hi, f"spread_min[{ns},{key}]")
            for xs, const in counts.values():
                ctx.model.add(mx >= sum(xs) + const)
                ctx.model.add(mn <= sum(xs) + const)
            excess = ctx.new_int(0, hi, f"skew_excess[{ns},{key},{max_skew}]")
            ct = ctx.model.add(excess >= mx - mn - max_skew)
            if on is not None:
                ct.only_enforce_if(on)
            ctx.add_term(TERM, -m * excess)


def existing_terms(problem: Problem, policy: Policy) -> dict[str, int]:
    """Groups no pending pod can join or change: their skew penalty is a constant."""
    total = 0
    for g, holders in _groups(problem).items():
        if group_involves(problem, g, holders):
            continue
        ns, key, sel, max_skew = g
        first = holders[0][1].rep
        nodes = _soft_nodes(problem, g, first)
        _, existing = _targets(problem, sel, ns)
        values, _ = problem.domains(key)
        counts: dict[str, int] = defaultdict(int)
        for n in nodes:
            counts[values[n]] += existing.get(n, 0)
        if counts:
            total += max(0, max(counts.values()) - min(counts.values()) - max_skew)
    return {TERM: -policy.schedule_anyway_skew * total}


@dataclass(frozen=True)
class SoftGroup:
    """A ScheduleAnyway group as optimizer.bound's joint LP reads it, when every pending pod is placed (the
    group's first holder in input order is then in the final state, and its inclusion policies give the
    domains)."""

    key: str  # the topology key
    max_skew: int
    nodes: np.ndarray  # the eligible nodes: counted per their value of `key`
    involved: tuple[int, ...]  # classes holding it or counted by it (the group's penalty depends on them only)
    targets: tuple[int, ...]  # classes whose pods it counts
    existing: dict[int, int]  # node -> existing pods it counts


def soft_groups(problem: Problem) -> list[SoftGroup]:
    """Every ScheduleAnyway group a pending pod can join or change (existing_terms holds the others); computed
    once per problem (the bound asks per class)."""
    found = problem.cache.get("spread.soft_groups")
    if found is None:
        found = problem.cache["spread.soft_groups"] = _soft_groups(problem)
    return found  # type: ignore[return-value]


def _soft_groups(problem: Problem) -> list[SoftGroup]:
    out = []
    for g, holders in _groups(problem).items():
        involved = group_involves(problem, g, holders)
        if not involved:
            continue
        ns, key, sel, max_skew = g
        kind, first = holders[0]
        rep = first.rep if kind == "pod" else problem.classes[first].rep
        _, existing = _targets(problem, sel, ns)
        out.append(SoftGroup(key, max_skew, np.asarray(_soft_nodes(problem, g, rep), dtype=np.int64),
                             tuple(involved), tuple(_matching_classes(problem, sel, ns)), dict(existing)))
    return out
