"""provision's lower bound: an integer covering program over the existing nodes and pooled node types.

Every valid answer (new nodes + a placement of every required pod that passes every filter) gives a solution of
this program of the same cost, so its optimum, and any dual bound HiGHS proves for it, is a lower bound on the
cheapest set of new nodes:

    minimise   sum_o price_o * y_o                                      (y_o: new nodes of offer o, integer)
    subject to sum_n x[g,n] + sum_o z[g,o] = size_g                     every required pod placed
               sum_g req[g,r] * x[g,n] <= free[n,r]                     each existing node, each resource
               0 <= x[g,n] <= ub[g,n], integer                          whole pods on existing nodes
               sum_g req[g,r] * z[g,o] <= alloc[o,r] * y_o              each offer's pool, each resource
               z[g,o] <= ub[g,o] * y_o                                  per-node bound on one new node
               the types' max and limits over y

- r runs over cpu, memory, pods (one per pod) and every extended resource a pod requests (GPUs...).
- ub[g,n] is solve's per-(class, node) bound (optimizer.problem: taints, node affinity and selectors, ports,
  resources, required anti-affinity of a class with itself per host...): rules that hold on one node alone.
  A class no type can hold off a subset of types has ub 0 on the others, so the program covers each group of
  pods with the types it may use.
- ub[g,o] is the same bound on an empty new node of offer o (a probe node added to the cluster): required
  hostname anti-affinity gives ub 1, so such a class needs at least size_g new nodes' worth of y.
- The new nodes of an offer are pooled (the program forgets that each is a separate bin); the existing nodes are
  not (their room is fragmented, and that is where a pooled bound is weak).
- Classes with one request vector and the same bounds everywhere are one group g (their sum: exact for the
  program, since they are interchangeable in it).
- What it leaves out (so it stays a relaxation): inter-pod affinity, topology spread, the pooling of new nodes.
"""
from __future__ import annotations

import math
import time
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ...models.nodetypes import NodeTypes
from ...models.objects import Cluster
from ..framework import Profile
from ..problem import build_problem
from .estimator import Offer, offer_probes

MICRO = 1_000_000


def micro_cost(counts: Iterable[tuple[Offer, int]]) -> int:
    """The price of `k` new nodes of each offer, in millionths (the integer prices the models and bounds use)."""
    return sum(round(o.type.price * MICRO) * k for o, k in counts)


@dataclass(frozen=True)
class CoverBound:
    bound_micro: int  # a valid lower bound on the cheapest new nodes, in millionths (0: none proven)
    counts: dict[int, int]  # offer index -> new nodes in the program's best solution (empty: none found)
    on_existing: dict[int, dict[int, int]]  # class index -> existing node index -> pods, in that solution
    proven: bool  # the program was solved to optimality (bound = its optimum)
    seconds: float
    groups: int
    variables: int


def resources_of(pods: Sequence) -> list[str]:
    keys = {"cpu", "memory"}
    for p in pods:
        keys.update(k for k, v in p.requests.items() if v > 0)
    return sorted(keys) + ["pods"]


def existing_free(base: Cluster, state: Any, res_keys: Sequence[str]) -> np.ndarray:
    """Free room per existing node of `base` and resource of `res_keys` ("pods": slots) after the pods that
    `state` (a problem's ClusterState) binds there, never below 0."""
    free = np.zeros((len(base.nodes), len(res_keys)), dtype=np.int64)
    for n, node in enumerate(base.nodes):
        info = state.nodes[node.name]
        for k, r in enumerate(res_keys):
            used = len(info.pods) if r == "pods" else info.requested.get(r, 0)
            free[n, k] = max(0, node.allocatable.get(r, 0) - used)
    return free


def cover_bound(base: Cluster, offers: Sequence[Offer], node_types: NodeTypes, profile: Profile, limit: float,
                relax: bool = False) -> CoverBound:
    """The covering program's bound on `base` (its pending pods: the required ones), within `limit` seconds.
    relax: its linear relaxation only (every variable continuous: a weaker bound, found in a second or two;
    its solution's counts are fractional, rounded up)."""
    from scipy.optimize import LinearConstraint, milp
    from scipy.sparse import coo_matrix

    started = time.perf_counter()
    n_ex = len(base.nodes)
    probes = offer_probes(offers)
    problem = build_problem(replace(base, nodes=tuple(base.nodes) + tuple(probes)), profile)
    classes = problem.classes
    res_keys = resources_of(base.pending)
    ub = problem.ub.matrix  # classes x (existing + probes)
    state = problem.state
    free = np.zeros((n_ex, len(res_keys)))
    for n, node in enumerate(base.nodes):
        info = state.nodes[node.name]
        for k, r in enumerate(res_keys):
            if r == "pods":
                free[n, k] = max(0, node.allocatable.get("pods", 0) - len(info.pods))
            else:
                free[n, k] = max(0, node.allocatable.get(r, 0) - info.requested.get(r, 0))
    alloc = np.array([[float(o.type.node.allocatable.get(r, 0)) for r in res_keys] for o in offers]).reshape(
        len(offers), len(res_keys))

    def req_of(c) -> tuple[float, ...]:
        rep = c.rep
        return tuple(1.0 if r == "pods" else float(rep.requests.get(r, 0)) for r in res_keys)

    # per node, the most pods of a request vector its free room takes: bounds above it say nothing more
    groups: dict[tuple, list[int]] = defaultdict(list)
    for c in classes:
        req = np.array(req_of(c))
        pos = req > 0
        fit_ex = np.floor(np.min(np.where(pos, free / np.where(pos, req, 1), np.inf), axis=1)).astype(np.int64)
        fit_new = np.floor(np.min(np.where(pos, alloc / np.where(pos, req, 1), np.inf), axis=1)).astype(np.int64)
        row = ub[c.index].astype(np.int64)
        ex = np.minimum(row[:n_ex], fit_ex)
        new = np.minimum(row[n_ex:], fit_new)
        # a bound at least the class's size says "unbounded" for this class; keep it as such in the key
        ex_key = np.where(ex >= c.size, -1, ex)
        new_key = np.where(new >= c.size, -1, new)
        groups[(req_of(c), ex_key.tobytes(), new_key.tobytes())].append(c.index)
    glist = list(groups.items())
    sizes = [sum(classes[c].size for c in members) for _, members in glist]
    # columns: y per offer, then x[g,n] (existing, integer), then z[g,o] (new, continuous)
    cols_lb: list[float] = []
    cols_ub: list[float] = []
    integral: list[int] = []
    cost: list[float] = []
    for o in offers:
        cols_lb.append(0.0)
        cap = o.type.max if o.type.max is not None else sum(sizes)
        cols_ub.append(float(cap))
        integral.append(1)
        cost.append(o.type.price)
    xcol: dict[tuple[int, int], int] = {}
    zcol: dict[tuple[int, int], int] = {}
    for gi, ((req, ex_b, new_b), members) in enumerate(glist):
        ex = np.frombuffer(ex_b, dtype=np.int64)
        new = np.frombuffer(new_b, dtype=np.int64)
        for n in np.flatnonzero(ex != 0):
            bound = sizes[gi] if ex[n] < 0 else min(sizes[gi], int(ex[n]) * len(members))
            xcol[(gi, int(n))] = len(cost)
            cols_lb.append(0.0); cols_ub.append(float(bound)); integral.append(1); cost.append(0.0)
        for o in np.flatnonzero(new != 0):
            zcol[(gi, int(o))] = len(cost)
            cols_lb.append(0.0); cols_ub.append(float(sizes[gi])); integral.append(0); cost.append(0.0)
    rows: list[int] = []
    cs: list[int] = []
    vals: list[float] = []
    lo: list[float] = []
    hi: list[float] = []

    def add_row(entries: list[tuple[int, float]], low: float, high: float) -> None:
        r = len(lo)
        for c, v in entries:
            rows.append(r); cs.append(c); vals.append(v)
        lo.append(low); hi.append(high)

    of_group: dict[int, list[int]] = defaultdict(list)
    for (g, _), col in list(xcol.items()) + list(zcol.items()):
        of_group[g].append(col)
    for gi in range(len(glist)):  # every pod placed
        entries = [(col, 1.0) for col in of_group[gi]]
        if not entries:
            return CoverBound(10 ** 18, {}, {}, True, time.perf_counter() - started, len(glist), len(cost))
        add_row(entries, float(sizes[gi]), float(sizes[gi]))
    by_node: dict[int, list[tuple[int, int]]] = defaultdict(list)
    for (gi, n), col in xcol.items():
        by_node[n].append((gi, col))
    for n, members in by_node.items():  # each existing node's free room (rows scaled to its room)
        for k in range(len(res_keys)):
            entries = [(col, glist[gi][0][0][k]) for gi, col in members if glist[gi][0][0][k] > 0]
            if entries:
                scale = max(free[n, k], 1.0)
                add_row([(c, v / scale) for c, v in entries], -np.inf, free[n, k] / scale)
    by_offer: dict[int, list[tuple[int, int]]] = defaultdict(list)
    for (gi, o), col in zcol.items():
        by_offer[o].append((gi, col))
    for o, members in by_offer.items():  # each offer's pool
        for k in range(len(res_keys)):
            entries = [(col, glist[gi][0][0][k]) for gi, col in members if glist[gi][0][0][k] > 0]
            if entries:
                scale = max(alloc[o, k], 1.0)
                add_row([(c, v / scale) for c, v in entries] + [(o, -alloc[o, k] / scale)], -np.inf, 0.0)
        for gi, col in members:
            per = int(np.frombuffer(glist[gi][0][2], dtype=np.int64)[o])
            if per > 0:  # a bound below the group's size: per new node
                add_row([(col, 1.0), (o, -float(per * len(glist[gi][1])))], -np.inf, 0.0)
    for t in node_types.types:
        mine = [i for i, o in enumerate(offers) if o.type is t]
        if t.max is not None and mine:
            add_row([(i, 1.0) for i in mine], -np.inf, float(t.max))
        for r, lim in t.limits.items():
            if mine and lim > 0:
                add_row([(i, t.capacity.get(r, 0) / lim) for i in mine], -np.inf, 1.0)
    for r, lim in node_types.limits.items():
        if lim > 0:
            add_row([(i, o.type.capacity.get(r, 0) / lim) for i, o in enumerate(offers)], -np.inf, 1.0)
    a = coo_matrix((vals, (rows, cs)), shape=(len(lo), len(cost))).tocsr()
    from scipy.optimize import Bounds

    from .clock import MIP_NODES_PER_SECOND, charge_lp, lp_options

    if relax:
        integral = [0] * len(integral)
        options = lp_options(mip_rel_gap=1e-6)
    else:
        # the integer program's work is its branch-and-bound nodes, planned from its share of the clock (HiGHS's own
        # time limit only as the wall cap): the same bound on every run
        options = lp_options(mip_rel_gap=1e-6, node_limit=max(1, int(limit * MIP_NODES_PER_SECOND)))
    t0 = time.perf_counter()
    res = milp(np.array(cost), integrality=np.array(integral), bounds=Bounds(np.array(cols_lb), np.array(cols_ub)),
               constraints=LinearConstraint(a, np.array(lo), np.array(hi)), options=options)
    if relax:
        charge_lp(res, a.nnz, "the covering program", time.perf_counter() - t0)
    else:
        from ..runner import charge

        charge(limit)  # its share, as planned (the node limit)
        if res.status == 1 and getattr(res, "mip_node_count", 0) < options["node_limit"]:
            from .clock import cut

            cut("the integer covering program")
    seconds = time.perf_counter() - started
    if res.status == 2:  # infeasible: no set of new nodes places every pod
        return CoverBound(10 ** 18, {}, {}, True, seconds, len(glist), len(cost))
    dual = getattr(res, "mip_dual_bound", None)
    if dual is None or not math.isfinite(dual):
        dual = res.fun if res.status == 0 and res.fun is not None else 0.0
    proven = res.status == 0
    # HiGHS's bound to a millionth, less a margin for its tolerances (feasibility 1e-7 on rows scaled to 1)
    lb = max(0, int(math.floor(max(0.0, dual) * MICRO * (1 - 1e-6) - 1)))
    counts: dict[int, int] = {}
    on_existing: dict[int, dict[int, int]] = defaultdict(dict)
    if res.x is not None:
        counts = {i: int(math.ceil(res.x[i] - 1e-6)) for i in range(len(offers)) if res.x[i] > 1e-6}
        for (gi, n), col in xcol.items():
            k = int(math.floor(res.x[col] + 1e-6))
            for c in glist[gi][1]:  # the group's pods back to its classes, in order
                if k <= 0:
                    break
                take = min(k, classes[c].size - sum(on_existing[c].values()), int(ub[c, n]))
                if take > 0:
                    on_existing[c][n] = on_existing[c].get(n, 0) + take
                    k -= take
    return CoverBound(lb, counts, dict(on_existing), proven, seconds, len(glist), len(cost))

