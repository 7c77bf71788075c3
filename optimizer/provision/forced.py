"""The forced bound: what the pods that no existing node can ever hold cost on new nodes, at least.

A pending pod whose node-local filters (resources, pod count, taints, node affinity and selectors, host ports,
volumes: every Filter that reads only the node and its pods) fail on every existing node as it is now can never be
placed there: provision keeps the running pods where they are, and the other pending pods only take more room.
So every answer puts it on a new node. These pods (typically GPU pods on a cluster without free GPUs, or pods
larger than any node's free room) are grouped by their requests and the offers whose template node admits them,
and a small program buys new nodes for them alone:

    minimise   sum_o price_o * y_o                       y_o: new nodes of offer o (integer)
    subject to sum_o z[g,o] = size_g                     every forced pod on a new node
               sum_g req[g,r] * z[g,o] <= alloc[o,r] * y_o   each offer's new nodes, pooled, per resource
               z[g,o] <= per_node[g,o] * y_o                  at most what fits one new node, per node
               the types' max over y; z >= 0

Every valid answer gives a solution of it at most as dear (its new nodes restricted to the forced pods' use), so
its optimum is a lower bound. It is tiny (the forced groups times the offers) and solved exactly by HiGHS in
milliseconds (a node limit, not the wall clock, bounds its work), in well under a second at 1,000 nodes: it is
computed first, and it stands when the pattern program does not converge (at 1,000 nodes the pattern program's
column generation does not within a minute; this bound is then the answer's proof when the forced pods are the
only ones that need new nodes).
"""
from __future__ import annotations

import math
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from ...models.nodetypes import NodeTypes
from ...models.objects import Cluster, Pod
from ..framework import Profile, Reads
from ..problem import pod_signature
from ..state import ClusterState
from .bound import MICRO, existing_free, resources_of
from .estimator import Offer, fits, offer_probes

NODE_LIMIT = 10_000  # branch-and-bound nodes of the forced program (it is tiny: most solve at the root)


@dataclass(frozen=True)
class ForcedBound:
    bound_micro: int  # a valid lower bound on the cheapest new nodes, in millionths (0: none)
    pods: int  # forced pods (no existing node can hold them)
    groups: int
    counts: dict[int, int]  # offer index -> new nodes in the program's optimum
    proven: bool  # the program was solved to optimality (the bound is its optimum)
    seconds: float


def local_profile(profile: Profile) -> Profile:
    """The profile's Filters that read only the node and its pods (not the rest of the cluster)."""
    return replace(profile, plugins=tuple(p for p in profile.plugins
                                          if p.filter is None or p.filter_reads is not Reads.CLUSTER))


def forced_pods(base: Cluster, profile: Profile) -> list[Pod]:
    """The pending pods of `base` that no existing node can hold as it is now (by the node-local filters)."""
    local = local_profile(profile)
    state = ClusterState.from_cluster(replace(base, pending=()))
    names = [n.name for n in base.nodes]
    res_keys = resources_of(base.pending)
    free = existing_free(base, state, res_keys)
    out: list[Pod] = []
    seen: dict[tuple, bool] = {}
    for p in base.pending:
        sig = pod_signature(p, frozenset(p.labels))
        if sig not in seen:
            req = np.array([1 if r == "pods" else int(p.requests.get(r, 0)) for r in res_keys], dtype=np.int64)
            # (the resources first, as arrays: the filters then run on the few nodes with room only)
            roomy = [names[i] for i in np.flatnonzero((free >= req).all(axis=1))]
            seen[sig] = bool(roomy) and fits(p, roomy, state, local) is not None
        if not seen[sig]:
            out.append(p)
    return out


def forced_bound(base: Cluster, offers: Sequence[Offer], node_types: NodeTypes, profile: Profile) -> ForcedBound:
    """The forced bound of `base` (its pending pods: the required ones); see the module docstring."""
    from scipy.optimize import Bounds, LinearConstraint, milp

    started = time.perf_counter()
    pods = forced_pods(base, profile)
    if not pods or not offers:
        return ForcedBound(0, len(pods), 0, {}, True, time.perf_counter() - started)
    local = local_profile(profile)
    templates = offer_probes(offers, "forced-probe")
    tstate = ClusterState.from_cluster(Cluster(nodes=tuple(templates)))
    res_keys = resources_of(pods)
    alloc = np.array([[int(t.allocatable.get(r, 110 if r == "pods" else 0)) for r in res_keys] for t in templates],
                     dtype=np.int64)
    # groups: one request vector and the same admitting offers
    admits: dict[tuple, tuple[int, ...]] = {}
    groups: dict[tuple, int] = defaultdict(int)
    reqs: dict[tuple, tuple[int, ...]] = {}
    for p in pods:
        sig = pod_signature(p, frozenset(p.labels))
        if sig not in admits:
            admits[sig] = tuple(i for i, t in enumerate(templates) if fits(p, [t.name], tstate, local) is not None)
        req = tuple(1 if r == "pods" else int(p.requests.get(r, 0)) for r in res_keys)
        key = (req, admits[sig])
        groups[key] += 1
        reqs[key] = req
    keys = [k for k in groups if k[1]]  # (a pod no offer admits: no answer at all; the others still bound it)
    n_o = len(offers)
    cols: list[tuple[int, int]] = []  # z columns (group, offer) after the n_o y columns
    per_node: list[int] = []
    for g, (req, ok) in enumerate(keys):
        for o in ok:
            fit = min((int(alloc[o, k]) // v for k, v in enumerate(req) if v > 0), default=groups[keys[g]])
            if fit > 0:
                cols.append((g, o))
                per_node.append(min(fit, groups[keys[g]]))
    n = n_o + len(cols)
    price = np.array([round(o.type.price * MICRO) for o in offers] + [0] * len(cols), dtype=float)
    rows, cs, vals, lo, hi = [], [], [], [], []

    def row(entries: list[tuple[int, float]], low: float, high: float) -> None:
        r = len(lo)
        for c, v in entries:
            rows.append(r)
            cs.append(c)
            vals.append(v)
        lo.append(low)
        hi.append(high)

    by_group: dict[int, list[int]] = defaultdict(list)
    by_offer: dict[int, list[tuple[int, int]]] = defaultdict(list)
    for j, (g, o) in enumerate(cols):
        by_group[g].append(n_o + j)
        by_offer[o].append((g, n_o + j))
        row([(n_o + j, 1.0), (o, -float(per_node[j]))], -np.inf, 0.0)
    for g in range(len(keys)):
        if not by_group[g]:
            continue  # fits no offer's empty node by its size: no answer; bound the others
        row([(c, 1.0) for c in by_group[g]], float(groups[keys[g]]), float(groups[keys[g]]))
    for o, members in by_offer.items():
        for k in range(len(res_keys)):
            entries = [(c, reqs[keys[g]][k] / max(1.0, alloc[o, k])) for g, c in members if reqs[keys[g]][k] > 0]
            if entries:
                row(entries + [(o, -float(alloc[o, k]) / max(1.0, alloc[o, k]))], -np.inf, 0.0)
    for t in node_types.types:
        mine = [i for i, o in enumerate(offers) if o.type is t]
        if t.max is not None and mine:
            row([(i, 1.0) for i in mine], -np.inf, float(t.max))
    if not lo:
        return ForcedBound(0, len(pods), len(keys), {}, True, time.perf_counter() - started)
    from scipy.sparse import coo_matrix

    a = coo_matrix((vals, (rows, cs)), shape=(len(lo), n)).tocsr()
    integral = np.array([1] * n_o + [0] * len(cols))
    res = milp(price, integrality=integral, bounds=Bounds(np.zeros(n), np.full(n, np.inf)),
               constraints=LinearConstraint(a, np.array(lo), np.array(hi)),
               options={"disp": False, "mip_rel_gap": 0.0, "node_limit": NODE_LIMIT})
    seconds = time.perf_counter() - started
    if res.status == 2:  # no new nodes within the types' max hold them: no bound here (the caller says infeasible)
        return ForcedBound(0, len(pods), len(keys), {}, False, seconds)
    counts: dict[int, int] = {}
    if res.status == 0 and res.x is not None and all(abs(res.x[i] - round(res.x[i])) < 1e-6 for i in range(n_o)):
        # optimal: its integer node counts, priced exactly (prices are whole millionths in every model)
        counts = {i: int(round(res.x[i])) for i in range(n_o) if round(res.x[i]) > 0}
        return ForcedBound(int(sum(price[i] * k for i, k in counts.items())), len(pods), len(keys), counts, True,
                           seconds)
    dual = getattr(res, "mip_dual_bound", None)
    if dual is None or not math.isfinite(dual):
        return ForcedBound(0, len(pods), len(keys), {}, False, seconds)
    # HiGHS's dual bound, less a margin for its tolerances
    return ForcedBound(max(0, int(math.floor(dual * (1 - 1e-6) - 1))), len(pods), len(keys), {}, False, seconds)
