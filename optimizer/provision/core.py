"""`podplan provision`: the cheapest set of new nodes with which every pending pod is placed, proven minimal.

How the answer is made (input -> Cluster -> Problem -> CP-SAT -> Plan -> verify, on the grown cluster):
1. Offers: each node type in each of its zones (`zones`, or `--zones`), or zoneless.
2. cluster-autoscaler's answer (optimizer.provision.estimator) comes first: it is the comparison, the hint,
   and its price P_E bounds how many nodes of a type an optimal answer can use (floor(P_E / price)).
3. Candidate nodes: for each offer as many copies of the type's template as any optimal answer could use
   (the type's `max`, its `limits` and the overall `limits` over its capacity, floor(P_E / price), one per
   required pod). The grown cluster (existing + candidates) is solve's Problem and model
   (optimizer.problem / optimizer.model: every rule, final-state semantics), with the required pods' classes
   held at "all placed". Added here: open[j] per candidate (its pods only when open, open only with pods,
   candidates of one offer opened in order), the type's max and the resource limits over open nodes, and
   the objective: minimise the sum of open prices (integer micro-units).
4. The open candidates become new nodes named `<type>-<zone>-<i>` with the type's labels, its zone label and
   their own hostname; the plan is verified on the grown cluster. OPTIMAL: CP-SAT proved no cheaper set of
   new nodes exists (among at most the candidates listed, which every optimal answer fits in).
5. Never worse than the estimator: if the search ends above its price, the estimator's nodes and placement
   are the answer (GREEDY_FALLBACK) when they pass the verifier.

One difference from the grown cluster, stated where it matters: a candidate left unopened still counts as a
topology domain in the model. For a DoNotSchedule spread constraint over a key whose values only candidates
carry (typically kubernetes.io/hostname when every existing node already holds a matching pod), the model is
stricter than the grown cluster: the answer stays valid but is not proven minimal (status FEASIBLE, a note).
"""
from __future__ import annotations

import math
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from ...models.nodetypes import ZONE_LABEL, NodeTypes, new_node, node_name_part
from ...models.objects import Cluster, Node, Pod
from ..framework import Profile, Reads
from ..model import build
from ..pipeline import Deadline, check
from ..plan import Plan
from ..policy import Policy
from ..problem import PodClass, build_problem, pod_signature, upper_bound_vector
from ..registry import DEFAULT_PROFILE
from ..runner import NEVER, Interrupt, SolverParams, Status, _integral, run
from ..state import ClusterState
from .estimator import Estimate, Offer, estimate, fits

MICRO = 1_000_000  # prices are integers of a millionth in the model
ESTIMATOR_SHARE = 0.3  # of the time left: cluster-autoscaler's loops (they stop where they are when it is used)


class Impossible(Exception):
    """A required pod no node type (nor any existing node, emptied) can hold: exit 1 with the reasons."""

    def __init__(self, reasons: dict[str, str]) -> None:
        self.reasons = reasons
        super().__init__("; ".join(f"{k}: {v}" for k, v in reasons.items()))


@dataclass(frozen=True)
class Added:
    type: str
    zone: str | None
    count: int
    price: float  # per node


@dataclass(frozen=True)
class ProvisionAnswer:
    status: Status
    add: tuple[Added, ...]
    cost: float
    bound: float
    nodes: tuple[Node, ...]  # the new nodes
    placements: dict[str, str]
    pending: dict[str, str]  # pods left pending (below --priority-at-least, or impossible within limits)
    grown: Cluster  # existing + new nodes, every pending pod pending: the verifier's and --emit state's input
    estimator: Estimate
    wall_seconds: float
    notes: tuple[str, ...] = ()

    @property
    def gap(self) -> float:
        return self.cost - self.bound

    @property
    def relative_gap(self) -> float:
        return 0.0 if self.cost <= 0 else self.gap / self.cost


def offers_of(node_types: NodeTypes, zones: Sequence[str] | None = None) -> list[Offer]:
    """Each type in each zone: the type's own zones, or `zones` (--zones) for every type."""
    out = []
    for t in node_types.types:
        for z in (tuple(zones) if zones else t.zones) or (None,):
            out.append(Offer(t, z))
    return out


def rooms(node_types: NodeTypes, pods: int) -> dict[str, int]:
    """Most new nodes of each type: its max, its own limits and the overall limits over its capacity, and never
    more than one per pod (an optimal answer opens no empty node)."""
    out = {}
    for t in node_types.types:
        room = pods if t.max is None else min(t.max, pods)
        for limits in (t.limits, node_types.limits):
            for r, cap in limits.items():
                per = t.capacity.get(r, 0)
                if per > 0:
                    room = min(room, cap // per)
        out[t.name] = max(0, room)
    return out


def impossible(cluster: Cluster, required: Sequence[Pod], offers: Sequence[Offer], profile: Profile
               ) -> dict[str, str]:
    """Required pods that fit neither a new node of any offer nor any existing node emptied, by the rules that
    read only the node and its own pods; with the FitError message on the offers' template nodes."""
    local = replace(profile, plugins=tuple(p for p in profile.plugins
                                           if p.filter is None or p.filter_reads is not Reads.CLUSTER))
    templates = [new_node(o.type, f"template-{i}", o.zone) for i, o in enumerate(offers)]
    empty = replace(cluster, nodes=tuple(cluster.nodes) + tuple(templates), pods=(), pending=())
    state = ClusterState.from_cluster(empty)
    names = list(state.nodes)
    out: dict[str, str] = {}
    seen: dict[tuple, str | None] = {}
    from ..greedy import Scheduler
    from ..problem import pod_signature

    for p in required:
        sig = pod_signature(p, frozenset(p.labels))
        if sig not in seen:
            if fits(p, names, state, local) is not None:
                seen[sig] = None
            else:
                only = replace(empty, nodes=tuple(templates))
                _, message = Scheduler(ClusterState.from_cluster(only), profile=local).schedule(p)
                seen[sig] = message
        if seen[sig] is not None:
            out[p.key] = seen[sig]  # type: ignore[assignment]
    return out


def _stricter_domains(problem, candidates: set[int]) -> list[str]:
    """Spread keys (DoNotSchedule) whose values only candidates carry: the model's domains exceed the grown
    cluster's there."""
    keys = {c.topology_key for cls in problem.classes for c in cls.rep.spread_constraints
            if c.when_unsatisfiable == "DoNotSchedule"}
    out = []
    for key in sorted(keys):
        values, _ = problem.domains(key)
        existing = {v for i, v in enumerate(values) if i not in candidates and v is not None}
        if any(values[i] is not None and values[i] not in existing for i in candidates):
            out.append(key)
    return out


def provision(cluster: Cluster, node_types: NodeTypes, params: SolverParams, policy: Policy | None = None, *,
              deadline: Deadline, profile: Profile = DEFAULT_PROFILE, priority_at_least: int | None = None,
              zones: Sequence[str] | None = None, interrupt: Interrupt = NEVER) -> ProvisionAnswer:
    policy = policy or Policy()
    started = deadline.started
    notes: list[str] = []
    required = [p for p in cluster.pending if priority_at_least is None or p.priority >= priority_at_least]
    below = {p.key: f"priority {p.priority} is below --priority-at-least {priority_at_least}"
             for p in cluster.pending if priority_at_least is not None and p.priority < priority_at_least}
    offers = offers_of(node_types, zones)
    bad = impossible(cluster, required, offers, profile)
    if bad:
        raise Impossible(bad)
    room = rooms(node_types, len(required))
    end = deadline.at - max(0.05 * deadline.limit, 2.5e-4 * (len(cluster.pods) + len(cluster.pending)))
    # cluster-autoscaler's answer on the required pods (the others stay where kube-scheduler puts them)
    base = replace(cluster, pending=tuple(required))
    est = estimate(base, required, offers, profile, room, params.seed,
                   deadline=time.perf_counter() + max(0.0, end - time.perf_counter()) * ESTIMATOR_SHARE,
                   interrupt=interrupt)
    if est.stopped:
        notes.append(f"the estimator stopped early ({est.stopped}): its answer is partial")
    est_cost = est.cost() if not est.pending else math.inf
    # candidates per offer
    taken = {n.name for n in cluster.nodes}
    cand: list[tuple[Offer, Node]] = []
    per_type_cap: dict[str, int] = {}
    for t in node_types.types:
        cap = room[t.name]
        if math.isfinite(est_cost) and t.price > 0:
            cap = min(cap, int(math.floor(est_cost / t.price + 1e-9)))
        per_type_cap[t.name] = cap
    for o in offers:
        for i in range(per_type_cap[o.type.name]):
            name = f"{node_name_part(o.type.name)}" + (f"-{node_name_part(o.zone)}" if o.zone else "") + \
                f"-candidate-{i + 1}"
            cand.append((o, new_node(o.type, name, o.zone)))
    n_classes = len({pod_signature(p, frozenset(p.labels)) for p in required})
    if n_classes * (len(cluster.nodes) + len(cand)) > params.full_model_variables:
        return _large(cluster, base, required, below, offers, node_types, est, est_cost, profile, policy, params,
                      end, started, notes, interrupt)
    grown = replace(base, nodes=tuple(cluster.nodes) + tuple(n for _, n in cand))
    problem = build_problem(grown, profile, decompose=False)
    first_cand = len(cluster.nodes)
    cand_idx = set(range(first_cand, first_cand + len(cand)))
    comp = problem.components[0] if problem.components else None
    result_values = None
    status = Status.OPTIMAL
    bound_micro = 0
    if comp is not None and not interrupt.is_set():
        built = build(problem, comp, policy, params.strategy)
        ctx = built.ctx
        m = ctx.model
        for c in ctx.classes:
            m.add(ctx.placed[c] == problem.classes[c].size)
        opened: dict[int, object] = {}
        by_offer: dict[Offer, list[int]] = defaultdict(list)
        by_type: dict[str, list[int]] = defaultdict(list)
        for j, (o, node) in enumerate(cand):
            n = first_cand + j
            y = m.new_bool_var(f"open[{node.name}]")
            opened[n] = y
            xs = [ctx.x[(c, n)] for c in ctx.by_node.get(n, [])]
            for c in ctx.by_node.get(n, []):
                m.add(ctx.x[(c, n)] <= ctx.ub[(c, n)] * y)
            if xs:
                m.add(sum(xs) >= y)
            else:
                m.add(y == 0)
            by_offer[o].append(n)
            by_type[o.type.name].append(n)
        for nodes in by_offer.values():
            for a, b in zip(nodes, nodes[1:]):
                m.add(opened[a] >= opened[b])
        for t in node_types.types:
            ys = [opened[n] for n in by_type.get(t.name, [])]
            if ys and t.max is not None:
                m.add(sum(ys) <= t.max)
            for r, lim in t.limits.items():
                if ys:
                    m.add(sum(y * t.capacity.get(r, 0) for y in ys) <= lim)
        for r, lim in node_types.limits.items():
            terms = [opened[n] * cand[n - first_cand][0].type.capacity.get(r, 0) for n in opened]
            if terms:
                m.add(sum(terms) <= lim)
        price = {n: round(cand[n - first_cand][0].type.price * MICRO) for n in opened}
        cost = sum(price[n] * y for n, y in opened.items())
        m.minimize(cost)
        # the estimator's answer as the hint: its nodes on the first candidates of their offer
        hint_node: dict[str, int] = {n.name: i for i, n in enumerate(cluster.nodes)}
        used: dict[Offer, int] = defaultdict(int)
        est_names = iter(est.nodes)
        for o, count in est.add:
            for _ in range(count):
                node = next(est_names)
                k = used[o]
                used[o] += 1
                if k < len(by_offer[o]):
                    hint_node[node.name] = by_offer[o][k]
        counts: dict[tuple[int, int], int] = defaultdict(int)
        for key, node_name in est.placements.items():
            c = problem.class_of.get(key)
            n = hint_node.get(node_name)
            if c is not None and n is not None:
                counts[(c, n)] += 1
        for key, var in ctx.x.items():
            m.add_hint(var, counts.get(key, 0))
        for n, y in opened.items():
            m.add_hint(y, int(any(counts.get((c, n), 0) for c in ctx.by_node.get(n, []))))
        res = run(m, params, max(0.05, end - time.perf_counter()), interrupt=interrupt)
        if res.values is not None:
            result_values = res.values
            value = sum(price[n] * res.values[y.index] for n, y in opened.items())
            bound_micro = value if res.status is Status.OPTIMAL else int(_integral(res.bound, False))
            status = Status.OPTIMAL if res.status is Status.OPTIMAL else Status.FEASIBLE
        else:
            status = Status.INFEASIBLE if res.status is Status.INFEASIBLE else Status.UNKNOWN
            bound_micro = int(_integral(res.bound, False)) if res.status is not Status.UNKNOWN else 0
    placements: dict[str, str] = {}
    new_nodes: list[tuple[Offer, Node]] = []
    if result_values is not None:
        rename: dict[int, str] = {}
        seq: dict[Offer, int] = defaultdict(int)
        for j, (o, node) in enumerate(cand):
            n = first_cand + j
            if result_values[opened[n].index]:  # type: ignore[union-attr]
                seq[o] += 1
                base_name = node_name_part(o.type.name) + (f"-{node_name_part(o.zone)}" if o.zone else "")
                i = seq[o]
                while f"{base_name}-{i}" in taken:
                    i += 1
                name = f"{base_name}-{i}"
                taken.add(name)
                rename[n] = name
                new_nodes.append((o, new_node(o.type, name, o.zone)))
        wanted: dict[int, list[Pod]] = {c.index: list(c.pods) for c in problem.classes}
        for (c, n), var in sorted(ctx.x.items()):
            for _ in range(result_values[var.index]):
                placements[wanted[c].pop(0).key] = rename.get(n, problem.nodes[n].name)
    model_cost = sum(o.type.price for o, _ in new_nodes)
    if math.isfinite(est_cost) and (result_values is None or model_cost > est_cost + 1e-9):
        est_offers = [o for o, k in est.add for _ in range(k)]
        new_nodes = list(zip(est_offers, est.nodes))
        required_keys = {p.key for p in required}
        placements = {k: v for k, v in est.placements.items() if k in required_keys}
        status = Status.GREEDY_FALLBACK
        notes.append("the search found no cheaper answer than the estimator's within the time limit")
    elif result_values is None:
        raise Impossible({"(all)": "no set of new nodes within the types' max and limits places every required pod"
                          if status is Status.INFEASIBLE else "no answer found within the time limit"})
    if status is Status.OPTIMAL:
        stricter = _stricter_domains(problem, cand_idx)
        if stricter:
            status = Status.FEASIBLE
            notes.append(f"not proven minimal: unopened candidate nodes count as empty {', '.join(stricter)} "
                         "domains for DoNotSchedule spread constraints, which the grown cluster does not have")
    grown_final = replace(cluster, nodes=tuple(cluster.nodes) + tuple(n for _, n in new_nodes))
    add = summary(new_nodes, node_types)
    cost = sum(a.price * a.count for a in add)
    bound = min(cost, bound_micro / MICRO)
    if status is Status.OPTIMAL:
        bound = cost
    return ProvisionAnswer(status, tuple(add), cost, bound, tuple(n for _, n in new_nodes), placements, dict(below),
                           grown_final, est, time.perf_counter() - started, tuple(notes))


def _relaxation(base: Cluster, offers: Sequence[Offer], node_types: NodeTypes, profile: Profile,
                params: SolverParams, limit: float, interrupt: Interrupt) -> tuple[int, dict[int, int]]:
    """A lower bound on the cheapest new nodes (micro-units), and the relaxation's node counts per offer index
    (rounded up).

    The relaxation forgets which node a pod is on and that nodes come whole: the existing nodes' free cpu,
    memory and pod slots are one pool (each class within what its own feasible nodes could take), the new
    nodes of an offer a pool of y (fractional) copies of the type, each class at most its per-node bound per
    copy. Every real answer is a solution of it, so its optimum (a linear program, scipy's HiGHS) is a lower
    bound for provision's."""
    import numpy as np
    from scipy.optimize import linprog
    from scipy.sparse import coo_matrix

    problem = build_problem(base, profile)
    classes = problem.classes
    probes = [new_node(o.type, f"probe-{i}", o.zone) for i, o in enumerate(offers)]
    probe_problem = build_problem(replace(base, nodes=tuple(probes), pods=()), profile)
    masks = [enc.static_mask for enc in profile.encodings if enc.static_mask is not None]
    resources = ("cpu", "memory", "pods")
    free = {r: sum(max(0, n.allocatable.get(r, 0) - problem.state.nodes[n.name].requested.get(r, 0))
                   for n in problem.nodes) for r in resources[:2]}
    free["pods"] = sum(max(0, n.allocatable.get("pods", 0) - len(problem.state.nodes[n.name].pods))
                       for n in problem.nodes)
    n_off = len(offers)
    cols: list[tuple[str, int, int]] = [("y", i, -1) for i in range(n_off)] + [("e", -1, c.index) for c in classes]
    ub_co: dict[tuple[int, int], int] = {}
    for c in classes:
        pc = probe_problem.classes[probe_problem.class_of[c.rep.key]]
        big = PodClass(pc.index, pc.name, [pc.rep] * c.size, pc.gang)
        ub = upper_bound_vector(probe_problem, big)
        for mask in masks:
            mk = mask(probe_problem, big)
            if mk is not None:
                ub[~mk] = 0
        for i in range(n_off):
            if ub[i] > 0:
                ub_co[(c.index, i)] = int(ub[i])
                cols.append(("x", i, c.index))
    col = {k: j for j, k in enumerate(cols)}

    def req(c: int, r: str) -> float:
        return 1.0 if r == "pods" else float(classes[c].rep.requests.get(r, 0))

    rows, cs, vals, rhs = [], [], [], []
    eq_rows, eq_cs, eq_vals, eq_rhs = [], [], [], []
    row = 0
    for c in classes:  # every pod placed somewhere
        eq_rows.append(c.index); eq_cs.append(col[("e", -1, c.index)]); eq_vals.append(1.0)
        for i in range(n_off):
            if (c.index, i) in ub_co:
                eq_rows.append(c.index); eq_cs.append(col[("x", i, c.index)]); eq_vals.append(1.0)
        eq_rhs.append(float(c.size))
    for r in resources:  # the existing nodes' free room
        for c in classes:
            rows.append(row); cs.append(col[("e", -1, c.index)]); vals.append(req(c.index, r) / max(1.0, free[r] or 1.0))
        rhs.append(1.0 if free[r] > 0 else 0.0)
        row += 1
    for i, o in enumerate(offers):  # each offer's pool of nodes
        for r in resources:
            cap = float(o.type.allocatable.get(r, 0))
            members = [c.index for c in classes if (c.index, i) in ub_co and req(c.index, r) > 0]
            if not members:
                continue
            scale = max(cap, 1.0)
            for c in members:
                rows.append(row); cs.append(col[("x", i, c)]); vals.append(req(c, r) / scale)
            rows.append(row); cs.append(col[("y", i, -1)]); vals.append(-cap / scale)
            rhs.append(0.0)
            row += 1
        for c in classes:
            if (c.index, i) in ub_co:
                rows += [row, row]; cs += [col[("x", i, c.index)], col[("y", i, -1)]]
                vals += [1.0, -float(ub_co[(c.index, i)])]
                rhs.append(0.0)
                row += 1
    for t in node_types.types:
        mine = [i for i, o in enumerate(offers) if o.type is t]
        if t.max is not None and mine:
            for i in mine:
                rows.append(row); cs.append(col[("y", i, -1)]); vals.append(1.0)
            rhs.append(float(t.max)); row += 1
        for r, lim in t.limits.items():
            for i in mine:
                rows.append(row); cs.append(col[("y", i, -1)]); vals.append(t.capacity.get(r, 0) / max(lim, 1))
            rhs.append(1.0); row += 1
    for r, lim in node_types.limits.items():
        for i, o in enumerate(offers):
            rows.append(row); cs.append(col[("y", i, -1)]); vals.append(o.type.capacity.get(r, 0) / max(lim, 1))
        rhs.append(1.0); row += 1
    # node-aware cut: solve's placed bound (optimizer.bound: node groups, per-node packing cuts) on the existing
    # nodes, all priorities as one, caps how many pods the existing nodes can take at all
    from ..bound import placed_bound

    flat = replace(base, pending=tuple(replace(p, priority=0) for p in base.pending))
    flat_problem = build_problem(flat, profile)
    fits_existing = 0
    started = time.perf_counter()
    for comp in flat_problem.components:
        got, _ = placed_bound(flat_problem, comp, max(0.5, limit * 0.5 - (time.perf_counter() - started)),
                              params.workers, interrupt)
        fits_existing += sum(got.values())
    for c in classes:
        rows.append(row); cs.append(col[("e", -1, c.index)]); vals.append(1.0)
    rhs.append(float(fits_existing)); row += 1
    cost = np.zeros(len(cols))
    for i, o in enumerate(offers):
        cost[col[("y", i, -1)]] = o.type.price
    bounds = [(0, None)] * len(cols)
    for c in classes:
        bounds[col[("e", -1, c.index)]] = (0, float(min(c.size, int(problem.ub.matrix[c.index].sum()))))
    a_ub = coo_matrix((vals, (rows, cs)), shape=(row, len(cols))).tocsr()
    a_eq = coo_matrix((eq_vals, (eq_rows, eq_cs)), shape=(len(classes), len(cols))).tocsr()
    res = linprog(cost, A_ub=a_ub, b_ub=rhs, A_eq=a_eq, b_eq=eq_rhs, bounds=bounds, method="highs",
                  options={"time_limit": max(1.0, limit)})
    if res.status == 2:  # infeasible: no set of new nodes places every pod
        return 10 ** 18, {}
    if res.status != 0:
        return 0, {}
    lb = getattr(res, "fun", 0.0) or 0.0
    # HiGHS's optimum to a millionth, rounded down after a margin for its tolerance: a valid bound
    lb_micro = max(0, int(math.floor(lb * MICRO * (1 - 1e-7) - 1)))
    return lb_micro, {i: int(math.ceil(res.x[col[("y", i, -1)]] - 1e-9)) for i in range(n_off)}


def _large(cluster: Cluster, base: Cluster, required: Sequence[Pod], below: dict[str, str], offers: Sequence[Offer],
           node_types: NodeTypes, est: Estimate, est_cost: float, profile: Profile, policy: Policy,
           params: SolverParams, end: float, started: float, notes: list[str], interrupt: Interrupt
           ) -> ProvisionAnswer:
    """Too many (class, node) pairs for the exact model: the bound comes from the relaxation (_relaxation); the
    answer keeps kube-scheduler's placement on the existing nodes (as cluster-autoscaler does) and places the
    pods left over on the fewest-cost candidates of the offers the relaxation or the estimator uses, by CP-SAT
    (the estimator's nodes are among them: never worse than it)."""
    lb, relaxed = _relaxation(base, offers, node_types, profile, params,
                              (end - time.perf_counter()) * 0.25, interrupt)
    existing_names = {n.name for n in cluster.nodes}
    on_existing = {k: v for k, v in est.placements.items() if v in existing_names}
    # solve's plan on the existing nodes usually leaves fewer pods over than kube-scheduler's: the one that
    # leaves fewer is kept
    from ..pipeline import optimal_plan

    if not interrupt.is_set():
        share = Deadline(time.perf_counter(), max(1.0, (end - time.perf_counter()) * 0.5))
        solved, _ = optimal_plan(base, params, policy, deadline=share, profile=profile, interrupt=interrupt)
        if len(solved.placements) > len(on_existing):
            check(base, solved, policy, profile)
            on_existing = dict(solved.placements)
            notes.append(f"the existing nodes hold {len(on_existing)} of the pending pods as solve places them "
                         f"({solved.status})")
    est_count: dict[int, int] = defaultdict(int)
    for o, k in est.add:
        est_count[offers.index(o)] += k
    left = [p for p in required if p.key not in on_existing]
    placed = [replace(p, node_name=on_existing[p.key]) for p in required if p.key in on_existing]
    bound_cluster = replace(base, pods=base.pods + tuple(placed), pending=tuple(left))
    cand: list[tuple[Offer, Node]] = []
    for i, o in enumerate(offers):
        k = max(relaxed.get(i, 0) + (1 if relaxed.get(i, 0) else 0), est_count.get(i, 0))
        for j in range(k):
            cand.append((o, new_node(o.type, f"{node_name_part(o.type.name)}" +
                                     (f"-{node_name_part(o.zone)}" if o.zone else "") + f"-candidate-{j + 1}", o.zone)))
    status = Status.FEASIBLE
    new_nodes: list[tuple[Offer, Node]] = []
    placements: dict[str, str] = dict(on_existing)
    values = None
    if left and cand and not interrupt.is_set():
        grown = replace(bound_cluster, nodes=tuple(cluster.nodes) + tuple(n for _, n in cand))
        problem = build_problem(grown, profile, decompose=False)
        if problem.components:
            built = build(problem, problem.components[0], policy, params.strategy)
            ctx = built.ctx
            mdl = ctx.model
            for c in ctx.classes:
                mdl.add(ctx.placed[c] == problem.classes[c].size)
            first_cand = len(cluster.nodes)
            opened = {}
            by_offer: dict[Offer, list[int]] = defaultdict(list)
            for j, (o, node) in enumerate(cand):
                n = first_cand + j
                y = mdl.new_bool_var(f"open[{node.name}]")
                opened[n] = y
                cs = ctx.by_node.get(n, [])
                for c in cs:
                    mdl.add(ctx.x[(c, n)] <= ctx.ub[(c, n)] * y)
                if cs:
                    mdl.add(sum(ctx.x[(c, n)] for c in cs) >= y)
                else:
                    mdl.add(y == 0)
                by_offer[o].append(n)
            for ns in by_offer.values():
                for a, b in zip(ns, ns[1:]):
                    mdl.add(opened[a] >= opened[b])
            for t in node_types.types:
                mine = [opened[n] for o, ns in by_offer.items() if o.type is t for n in ns]
                if mine and t.max is not None:
                    mdl.add(sum(mine) <= t.max)
                for r, lim in t.limits.items():
                    if mine:
                        mdl.add(sum(y * t.capacity.get(r, 0) for y in mine) <= lim)
            for r, lim in node_types.limits.items():
                mdl.add(sum(y * cand[n - first_cand][0].type.capacity.get(r, 0) for n, y in opened.items()) <= lim)
            price = {n: round(cand[n - first_cand][0].type.price * MICRO) for n in opened}
            mdl.minimize(sum(price[n] * y for n, y in opened.items()))
            # hint: the estimator's nodes on the first candidates of their offers
            where: dict[str, int] = {}
            used: dict[Offer, int] = defaultdict(int)
            it = iter(est.nodes)
            for o, k in est.add:
                for _ in range(k):
                    node = next(it)
                    if used[o] < len(by_offer[o]):
                        where[node.name] = by_offer[o][used[o]]
                    used[o] += 1
            counts: dict[tuple[int, int], int] = defaultdict(int)
            for key, node_name in est.placements.items():
                c = problem.class_of.get(key)
                if c is not None and node_name in where:
                    counts[(c, where[node_name])] += 1
            for key, var in ctx.x.items():
                mdl.add_hint(var, counts.get(key, 0))
            res = run(mdl, params, max(0.1, end - time.perf_counter()), interrupt=interrupt)
            values = res.values
            if values is not None:
                seq: dict[Offer, int] = defaultdict(int)
                rename: dict[int, str] = {}
                taken = set(existing_names)
                for j, (o, node) in enumerate(cand):
                    n = first_cand + j
                    if values[opened[n].index]:
                        seq[o] += 1
                        base_name = node_name_part(o.type.name) + (f"-{node_name_part(o.zone)}" if o.zone else "")
                        i = seq[o]
                        while f"{base_name}-{i}" in taken:
                            i += 1
                        taken.add(f"{base_name}-{i}")
                        rename[n] = f"{base_name}-{i}"
                        new_nodes.append((o, new_node(o.type, rename[n], o.zone)))
                wanted = {c.index: list(c.pods) for c in problem.classes}
                for (c, n), var in sorted(ctx.x.items()):
                    for _ in range(values[var.index]):
                        placements[wanted[c].pop(0).key] = rename.get(n, problem.nodes[n].name)
    model_cost = sum(o.type.price for o, _ in new_nodes)
    if left and (values is None or (math.isfinite(est_cost) and model_cost > est_cost + 1e-9)):
        if not math.isfinite(est_cost):
            raise Impossible({"(all)": "no answer found within the time limit"})
        est_offers = [o for o, k in est.add for _ in range(k)]
        new_nodes = list(zip(est_offers, est.nodes))
        keys = {p.key for p in required}
        placements = {k: v for k, v in est.placements.items() if k in keys}
        status = Status.GREEDY_FALLBACK
        notes.append("the search found no cheaper answer than the estimator's within the time limit")
    notes.append("large input: the bound is the relaxation's (pods pooled per node type, the existing nodes "
                 "capped by solve's placed bound); the answer fixes the placement on the existing nodes and "
                 "searches the new nodes for the rest")
    add = summary(new_nodes, node_types)
    cost = sum(a.price * a.count for a in add)
    bound = min(cost, lb / MICRO)
    if status is Status.FEASIBLE and cost - bound <= 1e-9:
        status = Status.OPTIMAL
    grown_final = replace(cluster, nodes=tuple(cluster.nodes) + tuple(n for _, n in new_nodes))
    return ProvisionAnswer(status, tuple(add), cost, bound, tuple(n for _, n in new_nodes), placements, dict(below),
                           grown_final, est, time.perf_counter() - started, tuple(notes))


def summary(nodes: Sequence[tuple[Offer, Node]], node_types: NodeTypes) -> list[Added]:
    """Per type and zone: how many, at what price; in the node types' order, then by zone."""
    counts: dict[tuple[str, str | None], int] = defaultdict(int)
    for o, _ in nodes:
        counts[(o.type.name, o.zone)] += 1
    out = []
    for t in node_types.types:
        for (name, zone), k in sorted(counts.items(), key=lambda kv: kv[0][1] or ""):
            if name == t.name:
                out.append(Added(t.name, zone, k, t.price))
    return out


def verify_answer(a: ProvisionAnswer, policy: Policy | None = None, profile: Profile = DEFAULT_PROFILE) -> None:
    check(a.grown, Plan(placements=a.placements, pending=a.pending, status=a.status), policy, profile)
