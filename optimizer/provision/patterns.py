"""provision's stronger lower bound: the covering program with every node a bin of its own (column generation).

The covering program (optimizer.provision.bound) pools the new nodes of an offer (it forgets that a pod needs all
its requests on one node), and its linear relaxation lets fractions of pods fill each existing node's room. Here
every node is a bin filled by whole pods (Gilmore and Gomory's cutting-stock formulation, Dantzig-Wolfe on each
node):

    minimise   sum_(o,p) price_o * lam[o,p]
    subject to sum_(b,q) a[q,g] * mu[b,q] + sum_(o,p) a[p,g] * lam[o,p] >= size_g   every pod placed
               sum_q mu[b,q] <= |b|                                               each kind of existing node
               the types' max and limits over sum_p lam[o,p]
               lam, mu >= 0

A filling ("pattern") p of offer o is any whole-pod filling of one empty node of the offer: a[p,g] <= ub[g,o]
(solve's per-(class, node) bound: taints, node affinity, self anti-affinity per host...) and sum_g req[g,r] *
a[p,g] <= alloc[o,r] for every resource r (cpu, memory, pods, extended ones). A filling q of an existing node's
kind b (nodes with the same free room and the same bounds) likewise within that room. Groups g are solve's
classes with one request vector and the same bounds (as in the covering program). Inter-pod affinity and topology
spread are left out, so this stays a relaxation.

There are too many fillings to list, so they are generated: the restricted program's duals pi_g (what one more pod
of group g is worth) price each node's best filling, first greedily, then by a small integer knapsack per node kind
and offer (CP-SAT, exact or with its proven bound; skipped where a solver-free bound, _knapsack_upper, says no
filling beats the kind's dual); a filling worth more than its price (or than the kind's dual) joins the program.
The program starts from each group alone on each offer and from the known answer's nodes (answer_seed: at 1,000
nodes its value starts at 93 instead of 733), and is held in one HiGHS instance that each round's columns join
(optimizer.provision.master).

A group merges classes of one request and one per-node bound each; when that bound is below the group's own (one
a node for anti-affinity per host against itself), the assignment rows (_assignment_rows) state what the merge
forgets: a node holding k_b of the group holds at most min(k_b, j * u_b) of any j of its classes. Once the program
without them converges, they join it if its answer leaves one short, and the dive keeps them, so that its
fillings can be given out to the classes (3/anti: the dive's pods on nodes 22.46 without them, 15.34 with).

Why it is a valid bound at any point: every valid answer is a solution of the full program (each new node a
filling of its offer, each existing node a filling of its kind), so the full program's optimum z* is a lower bound;
and for the restricted program's optimum z_R with duals (pi, sigma, rho), Lagrangian duality gives

    z* >= z_R + sum_b |b| * min(0, sigma_b - K_b(pi)) + sum_o N_o * min(0, price_o + rho_o - K_o(pi))

where K is at most the knapsack's proven upper bound (values rounded up), rho_o the duals of the max/limits rows
on offer o's columns, and N_o the most nodes of offer o an answer no dearer than a known one can use (floor(known
/ price), the type's max; every pod otherwise). With no filling left to add this is z_R itself. Beside it, the
same Lagrangian function at theta * pi (farley_bound: no N_o at theta = min_o price_o / K_o). The bound used is
the larger (the smaller of it and z_R at the end), less a relative 1e-6 for HiGHS's tolerances. The assignment
rows are valid rows of the full program (every answer meets them), their duals enter the knapsacks' values
(min(a_g, j * u_b) terms), and the same bound holds.

And the surrogate bound (surrogate_bound), which knows that nodes come whole: the covering rows summed at the
duals (and at each resource's requests) are rows every answer meets, in which each new node is worth at most its
offer's K_o; the cheapest whole numbers of new nodes meeting them is a bound above the program's value where that
buys a fraction of a node (1/plain: 37.6 nodes' worth, 38 whole).

When the program converges, its answer is rounded to whole nodes (the dive, _dive: the fillings it takes whole
fixed, column generation again on the pods left), compacted (_compact: the last nodes' pods moved into the room
the others leave) and given out to pods and nodes (packing_answer): a start the caller verifies (4/plain of the
200-node family: 13.26 against the bound 13.066, where the joint model's search ended at 16.84).

Measured on the 200-node family (docs/capacity.md): it converges in 5-10 s and raises the covering program's
bound by 1-2 % of the answer (2/plain 12.82 -> 13.02); the new nodes' packing barely matters there (the
relaxation with pooled existing room but whole-node fillings of new nodes: 12.06 against 12.05).
"""
from __future__ import annotations

import math
import os
import sys
import time
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace

import numpy as np
from ortools.sat.python import cp_model

from ...models.nodetypes import NodeTypes, new_node
from ...models.objects import Cluster, Node
from ..framework import Profile
from ..podtopologyspread.encoding import hard_constraints
from ..problem import build_problem
from ..runner import charge, now
from .bound import MICRO, existing_free, resources_of
from .clock import (ITER_SECONDS_MIN, ITER_SECONDS_PER_COLUMN, LP_SECONDS_PER_ITER_NONZERO, charge_knapsack, charge_lp,
                    knapsack_limits, wall_cap, wall_over)
from .estimator import Offer, fresh_name, offer_probes
from .master import Master

# of the column generation's time: when the exact knapsacks run once more whatever the greedy pricing finds, for a
# Lagrangian bound before the time is out (a round at 200 nodes: 1-3 s on a loaded machine)
FINAL_EXACT_AT = 0.85
KNAPSACK_MIN_SECONDS = 0.5
# the dive (residual rounding): when the program takes no filling whole, its largest fraction and every fraction of
# at least DIVE_UP are rounded up at once; each residual program gets DIVE_EXACT_ROUNDS rounds of exact knapsacks.
# On the tune rows of the 200-node family (after compaction): the same answers as one fraction a step and exact
# pricing to convergence (4/plain 13.26, 1/production 12.92), in 4-13 s of the clock instead of 6-111 s; greedy
# pricing alone drifts (4/plain 13.76), and DIVE_UP 0.5 rounds too much up (4/anti 13.63 against 13.26-13.30)
DIVE_UP = 0.6
DIVE_EXACT_ROUNDS = 1
# the dive's residual programs are solved cold, each from scratch, until one such solve is charged this much of the
# clock; from then on each starts from the last one's basis (optimizer.provision.master). A warm solve ends at
# another of the program's optimal vertices, and the dive's path follows it: on 1/anti of the 200-node family
# (cold solves charged 0.1 s at most) 12.964 warm against 12.920 cold; at 1,000 nodes (0.4-2 s each) the cold dive
# ran out of the clock, the warm one gave 71.592
DIVE_COLD_MAX = 0.3
# when some assignment row is short at the program's optimum: the dive's share once more (beyond `limit`, from the
# joint model's) for column generation with the rows and the dive, CUT_SHARE of what is then left for the first (its
# greedy pricing alone stopped at 17.06 on 3/anti, where the exact knapsacks reach 15.17, and the dive ran out of
# time); on 3/anti the rows' program converged in 18 rounds and the dive then took 6 s of the clock
CUT_SHARE = 0.5
CUT_EXTRA = 1.0
# of the clock's charge per simplex iteration and nonzero (clock.charge_lp), for a solve that starts from the last
# one's basis (optimizer.provision.master): its iterations update a factorisation where a cold solve also
# presolves, scales and factorises the whole program. On 1/anti at 1,000 nodes (load 2.0, --time-limit 200) the
# warm solves took 1.46 s of the wall in all where the full rate charged 28 s (19 times; the cold solves of the
# same program 5 times, the knapsacks 4): at 0.2, 5.6 s, 3.8 times their wall
WARM_LP_RATE = 0.2
# the clock's charge for one solver-free knapsack bound (_knapsack_upper: 0.3-0.6 ms at load 2.5 on 1/anti's
# knapsacks, numpy over a hundred groups)
UPPER_SECONDS = 1e-3
SCALE = 1_000_000  # knapsack values: pods' duals in millionths (rounded up, so the knapsack's bound stays an upper)


@dataclass(frozen=True)
class Packing:
    """Whole nodes: each new node's offer and filling, each existing node's filling (pods per group). Made from
    the pattern program's fillings, without inter-pod rules: a start, verified by the caller."""
    new: tuple[tuple[int, dict[int, int]], ...]  # per new node: (offer, filling)
    existing: dict[int, dict[int, int]]  # existing node index -> filling
    cost_micro: int


@dataclass(frozen=True)
class PatternBound:
    bound_micro: int  # a valid lower bound on the cheapest new nodes, in millionths (0: none)
    lp_value: float  # the restricted program's value at the end
    converged: bool  # no pattern left to add (the bound is the full program's optimum)
    columns: int
    iterations: int
    seconds: float
    start: Packing | None = None  # the program's answer rounded to whole nodes (the dive), when it ran
    data: _Data | None = None  # what turns `start` into pods and nodes (packing_answer)
    # the program's answer when it converged: (kind, the existing nodes of the column's bin kind or its offer, pods
    # per group, how many nodes take it) for every column it uses (optimizer.provision.zones reads it)
    used: tuple[tuple[str, tuple[int, ...], np.ndarray, float], ...] = ()


@dataclass
class _Data:
    res_keys: list[str]
    glist: list[list[int]]  # group -> class indices
    size: np.ndarray  # group -> pods
    req: np.ndarray  # group x resource (int)
    free: np.ndarray  # existing node x resource (int)
    alloc: np.ndarray  # offer x resource (int)
    cap_ex: np.ndarray  # group x existing node: most pods (0: not there)
    cap_new: np.ndarray  # group x offer: most pods on one new node
    # per group: its classes' pod keys, and one class's most pods per existing node and per offer (-1: no bound but
    # the class's size): what turns a filling's count of a group into pods (packing_answer)
    pods: list[list[list[str]]]
    unit_ex: np.ndarray  # group x existing node
    unit_new: np.ndarray  # group x offer
    # a pending class with a hard topology spread constraint or required pod affinity: rules the fillings do not
    # state (the dive does not run: its answers broke them, or cost more kept)
    rules: bool
    # the assignment rows of groups of several classes with a per-node bound of their own (anti-affinity per host
    # against itself, host ports: one a node): (group, j, the j largest classes' pods), see _assignment_rows
    cuts: list[tuple[int, int, int]] = field(default_factory=list)


def prepare(base: Cluster, offers: Sequence[Offer], profile: Profile) -> _Data:
    n_ex = len(base.nodes)
    probes = offer_probes(offers)
    problem = build_problem(replace(base, nodes=tuple(base.nodes) + tuple(probes)), profile)
    classes = problem.classes
    res_keys = resources_of(base.pending)
    ub = problem.ub.matrix
    state = problem.state
    free = existing_free(base, state, res_keys)
    alloc = np.array([[int(o.type.node.allocatable.get(r, 0)) for r in res_keys] for o in offers],
                     dtype=np.int64).reshape(len(offers), len(res_keys))

    def req_of(c) -> tuple[int, ...]:
        return tuple(1 if r == "pods" else int(c.rep.requests.get(r, 0)) for r in res_keys)

    def fit(room: np.ndarray, req: np.ndarray) -> np.ndarray:
        pos = req > 0
        return np.min(np.where(pos, room // np.where(pos, req, 1), 1 << 40), axis=1)

    groups: dict[tuple, list[int]] = defaultdict(list)
    rows: dict[tuple, tuple[np.ndarray, np.ndarray]] = {}
    for c in classes:
        req = np.array(req_of(c), dtype=np.int64)
        row = ub[c.index].astype(np.int64)
        ex = np.minimum(np.minimum(row[:n_ex], fit(free, req)), c.size)
        new = np.minimum(np.minimum(row[n_ex:], fit(alloc, req)), c.size)
        # a bound at least the class's size says "unbounded" for the class: merged with other sizes as such
        key = (tuple(req), np.where(ex >= c.size, -1, ex).tobytes(), np.where(new >= c.size, -1, new).tobytes())
        groups[key].append(c.index)
        rows.setdefault(key, (row[:n_ex], row[n_ex:]))
    glist = list(groups.values())
    keys = list(groups)
    size = np.array([sum(classes[c].size for c in m) for m in glist], dtype=np.int64)
    req = np.array([k[0] for k in keys], dtype=np.int64).reshape(len(glist), len(res_keys))
    cap_ex = np.zeros((len(glist), n_ex), dtype=np.int64)
    cap_new = np.zeros((len(glist), len(offers)), dtype=np.int64)
    for g, (k, members) in enumerate(zip(keys, glist)):
        ex = np.frombuffer(k[1], dtype=np.int64)
        new = np.frombuffer(k[2], dtype=np.int64)
        cap_ex[g] = np.where(ex < 0, size[g], np.minimum(ex * len(members), size[g]))
        cap_new[g] = np.where(new < 0, size[g], np.minimum(new * len(members), size[g]))
        cap_ex[g] = np.minimum(cap_ex[g], fit(free, req[g]))
        cap_new[g] = np.minimum(cap_new[g], fit(alloc, req[g]))
    pods = [[[p.key for p in classes[c].pods] for c in members] for members in glist]
    unit_ex = np.array([np.frombuffer(k[1], dtype=np.int64) for k in keys], dtype=np.int64).reshape(len(glist), n_ex)
    unit_new = np.array([np.frombuffer(k[2], dtype=np.int64) for k in keys], dtype=np.int64).reshape(len(glist),
                                                                                                      len(offers))
    rules = any(c.rep.affinity.pod_required or hard_constraints(c.rep) for c in classes)
    cuts = _assignment_rows([[classes[c].size for c in members] for members in glist], size,
                            np.concatenate([unit_ex, unit_new], axis=1), np.concatenate([cap_ex, cap_new], axis=1))
    return _Data(res_keys, glist, size, req, free, alloc, cap_ex, cap_new, pods, unit_ex, unit_new, rules, cuts)


def _assignment_rows(class_sizes: list[list[int]], size: np.ndarray, unit: np.ndarray, cap: np.ndarray
                     ) -> list[tuple[int, int, int]]:
    """The rows that make a group's counts per node assignable to its classes: a group merges classes of one
    request and one per-node bound u_b each (one a node for anti-affinity per host against itself), so a filling's
    count k_b of the group on node b holds at most min(k_b, j * u_b) pods of any j of its classes. The j largest
    classes' pods S_j therefore need

        sum over the nodes b of min(k_b, j * u_b) >= S_j           for j = 1 .. (classes - 1)

    which every answer meets (a valid row of the pattern program: the bound stays a bound), and which together
    with the covering row (j = all) are exactly max-flow's condition for giving the counts out to the classes
    (the cut of the j largest classes is the smallest). Without them a group of classes of 55, 8, 5 and 5 pods,
    one a node, fills 4 a node on 19 nodes where its largest class needs 55 (3/anti of the 200-node family).
    Only the rows that can bind: S_j above the j / classes share of the group's pods (equal classes need none),
    and some node where j * u_b is below the group's most pods on it (elsewhere the row reads the count itself)."""
    out: list[tuple[int, int, int]] = []
    for g, sizes in enumerate(class_sizes):
        m = len(sizes)
        if m < 2:
            continue
        sizes = sorted(sizes, reverse=True)
        on = cap[g] > 0
        u, c = unit[g][on], cap[g][on]
        for j in range(1, m):
            s_j = sum(sizes[:j])
            if s_j * m > int(size[g]) * j and np.any((u >= 0) & (j * u < c)):
                out.append((g, j, s_j))
    return out


def _knapsack_bound(values: np.ndarray, most: np.ndarray, req: np.ndarray, room: np.ndarray, seconds: float,
                    segs: Sequence[tuple[int, int, float]] = ()) -> tuple[float, dict[int, int]]:
    """max sum_g values[g] * a[g] + sum_(g,c,v in segs) v * min(a[g], c) over whole pods a[g] <= most[g] within
    `room`: (an upper bound on it, the best filling found). Values are rounded up to millionths, so the bound holds
    for the exact values. segs: the assignment rows' terms (_assignment_rows) at their duals."""
    segs = [(g, min(int(c), int(most[g])), v) for g, c, v in segs if most[g] > 0 and c > 0 and v > 0]
    worth = {g for g, _, _ in segs}
    gs = [g for g in range(len(values)) if most[g] > 0 and (values[g] > 0 or g in worth)]
    if not gs:
        return 0.0, {}
    m = cp_model.CpModel()
    xs = {g: m.new_int_var(0, int(most[g]), f"a[{g}]") for g in gs}
    bs = []
    for t, (g, c, v) in enumerate(segs):
        b = m.new_int_var(0, c, f"b[{t}]")
        m.add(b <= xs[g])
        bs.append((int(math.ceil(v * SCALE)), b, c))
    for r in range(len(room)):
        terms = [(int(req[g, r]), xs[g]) for g in gs if req[g, r] > 0]
        if terms and sum(q * int(most[g]) for (q, _), g in zip(terms, [g for g in gs if req[g, r] > 0])) > room[r]:
            m.add(sum(q * x for q, x in terms) <= int(room[r]))
    coef = {g: int(math.ceil(max(0.0, values[g]) * SCALE)) for g in gs}
    m.maximize(sum(coef[g] * xs[g] for g in gs) + sum(v * b for v, b, _ in bs))
    solver = cp_model.CpSolver()
    knapsack_limits(solver.parameters, max(0.01, seconds))
    solver.parameters.catch_sigint_signal = False
    st = solver.solve(m)
    charge_knapsack(solver, "the pattern program's knapsacks")
    if st not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return float(sum(coef[g] * int(most[g]) for g in gs) + sum(v * c for v, _, c in bs)) / SCALE, {}
    upper = solver.objective_value if st == cp_model.OPTIMAL else solver.best_objective_bound
    return float(upper) / SCALE, {g: int(solver.value(xs[g])) for g in gs if solver.value(xs[g]) > 0}


def _shares(req: np.ndarray, room: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A pod's share of a node's room, two ways: summed over the resources, and its largest (the resource it binds).
    The greedy pricing orders by value per each and keeps the better filling: by the summed share alone it found
    no filling that prices out in 1,128 of the 1,152 knapsacks of 1/anti at 1,000 nodes that found one (0.31 of a
    bin kind's dual 0.35 where the knapsack reached 0.43), by the largest it reached 0.39 (memory binds there, and
    the pods' cpu and memory shares summed rank them as if both did)."""
    share = req / np.maximum(room, 1)
    return share.sum(axis=1), share.max(axis=1)


def _knapsack_upper(values: np.ndarray, most: np.ndarray, req: np.ndarray, room: np.ndarray,
                    segs: Sequence[tuple[int, int, float]] = (), sweeps: int = 3) -> float:
    """An upper bound on _knapsack_bound's optimum without a solver: the knapsack's rows relaxed with multipliers
    lam_r >= 0, which for any lam gives

        max_a sum_g w_g(a_g) <= sum_r lam_r room_r + sum_g max over a_g of (w_g(a_g) - a_g lam.req_g)

    where w_g is the group's worth (values[g] per pod, plus each assignment-row term up to its cap: concave, so
    the inner maximum is over its pieces, each taken whole or not at all). The multipliers: a few sweeps over the
    resources, each lam_r the minimiser with the others fixed (the weighted median of the pieces' breakpoints);
    any lam gives a bound, these come near the knapsack's linear relaxation (on 1/anti at 1,000 nodes 0.5-2 %
    above the exact optimum, where the greedy pricing is 2 % below). A group's pods are first cut to what one node's
    room holds of them alone (every filling meets that). Raised by a relative 1e-9 against the float sums."""
    caps: dict[int, list[tuple[int, float]]] = defaultdict(list)
    for g, c, v in segs:
        if c > 0 and v > 0:
            caps[g].append((int(c), v))
    pos = req > 0
    alone = np.min(np.where(pos, room[None, :] // np.where(pos, req, 1), 1 << 40), axis=1)
    most = np.minimum(most, alone)
    pg: list[int] = []
    pw: list[float] = []
    pn: list[int] = []
    for g in range(len(values)):
        if most[g] <= 0 or (values[g] <= 0 and g not in caps):
            continue
        lo = 0
        for hi in sorted({c for c, _ in caps.get(g, ()) if c < most[g]}) + [int(most[g])]:
            w = float(values[g]) + sum(v for c, v in caps.get(g, ()) if c > lo)
            if w > 0 and hi > lo:
                pg.append(g); pw.append(w); pn.append(hi - lo)
            lo = hi
    if not pg:
        return 0.0
    w_, n_ = np.array(pw), np.array(pn, dtype=float)
    q_ = req[np.array(pg)].astype(float)
    room_f = room.astype(float)
    lam = np.zeros(len(room))
    for _ in range(sweeps):
        for r in range(len(room)):
            on = q_[:, r] > 0
            if not on.any():
                continue
            rest = w_[on] - q_[on] @ lam + q_[on, r] * lam[r]  # each piece's worth less the other resources' price
            t = rest / q_[on, r]
            order = np.argsort(-t, kind="stable")
            weight = np.cumsum((n_[on] * q_[on, r])[order])
            k = int(np.searchsorted(weight, room_f[r], side="right"))
            lam[r] = max(0.0, float(t[order[k]])) if k < len(order) else 0.0
    return float(lam @ room_f + n_ @ np.maximum(0.0, w_ - q_ @ lam)) * (1 + 1e-9) + 1e-9


def _price(values: np.ndarray, most: np.ndarray, req: np.ndarray, room: np.ndarray, seconds: float,
           segs: Sequence[tuple[int, int, float]], beat: float) -> tuple[float, dict[int, int]]:
    """A node's best filling at the duals for the exact pricing: (an upper bound on its worth, a filling), as
    _knapsack_bound's, which runs only when the solver-free bound (_knapsack_upper) leaves room for a filling worth
    more than `beat` (the node's price or its kind's dual): else that bound and no filling. Where the bound is at
    most a bin kind's dual it is that kind's best filling's worth (up to 1e-9: at the program's optimum some column
    of a kind whose dual is positive is worth its dual), so the Lagrangian and surrogate bounds lose nothing. At
    1,000 nodes the dive's residual programs, near their optimum from the start, spent most of their time there."""
    charge(UPPER_SECONDS)
    upper = _knapsack_upper(values, most, req, room, segs)
    if upper <= beat + 1e-9:
        return upper, {}
    return _knapsack_bound(values, most, req, room, seconds, segs)


def _greedy_fill(values: np.ndarray, most: np.ndarray, req: np.ndarray, room: np.ndarray) -> dict[int, int]:
    """A good filling fast (the pricing heuristic): groups by value per share of the room, as many as fit (the
    better of the two shares' fillings, _shares)."""
    return _greedy_segs(values, most, req, room, ())


def _greedy_segs(values: np.ndarray, most: np.ndarray, req: np.ndarray, room: np.ndarray,
                 segs: Sequence[tuple[int, int, float]]) -> dict[int, int]:
    """_greedy_fill with the assignment rows' terms: a group's t-th pod is worth values[g] plus the values of its
    terms whose cap is at least t (less for each pod more: the pods are taken in pieces, the most worth first)."""
    caps: dict[int, list[tuple[int, float]]] = defaultdict(list)
    for g, c, v in segs:
        if c > 0 and v > 0:
            caps[g].append((int(c), v))
    pieces: list[tuple[float, int, int, int]] = []  # (worth, group, piece, pods)
    for g in range(len(values)):
        if most[g] <= 0:
            continue
        cuts = sorted({c for c, _ in caps.get(g, ()) if c < most[g]}) + [int(most[g])]
        lo = 0
        for p, hi in enumerate(cuts):
            worth = values[g] + sum(v for c, v in caps.get(g, ()) if c > lo)
            if worth > 0 and hi > lo:
                pieces.append((worth, g, p, hi - lo))
            lo = hi
    best: dict[int, int] = {}
    best_worth = -math.inf
    for share in _shares(req, room):
        left = room.astype(np.int64).copy()
        out: dict[int, int] = {}
        for _, _, g, _, n in sorted((-(w / max(share[g], 1e-12)), i, g, p, n) for i, (w, g, p, n) in enumerate(pieces)):
            q = req[g]
            pos = q > 0
            k = int(min(n, np.min(np.where(pos, left // np.where(pos, q, 1), 1 << 40))))
            if k > 0:
                out[g] = out.get(g, 0) + k
                left -= k * q
        worth = _worth(out, values, segs)
        if worth > best_worth + 1e-12:
            best, best_worth = out, worth
    return best


def _worth(fill: dict[int, int], pi: np.ndarray, segs: Sequence[tuple[int, int, float]]) -> float:
    """A filling's worth at the duals: its pods' and the assignment rows' terms (_knapsack_bound's objective)."""
    return sum(pi[g] * k for g, k in fill.items()) + sum(v * min(fill.get(g, 0), c) for g, c, v in segs)


def _cut_coef(u: int, j: int, k: int) -> int:
    """A count k of a group on a node whose per-class bound is u (-1: none) in the group's j-th assignment row."""
    return k if u < 0 else min(k, j * u)


def farley_bound(worth: float, k_ex: float, k_new: np.ndarray, price: np.ndarray, most_nodes: np.ndarray) -> float:
    """The Lagrangian bound at the duals pi scaled by theta (Farley's bound of column generation stopped early).

    Relax the covering rows with multipliers theta * pi (the type rows dropped: a relaxation too). A knapsack's
    value scales with its values, so for any theta >= 0

        z* >= theta * (pi.size - sum_b |b| K_b) + sum_o N_o * min(0, price_o - theta * K_o)

    (worth = pi.size, k_ex = sum_b |b| K_b, k_new[o] = K_o: upper bounds on the best fillings at pi). This is
    concave in theta and linear between the points price_o / K_o, so its maximum is at one of them (or at 1, where
    it is the unscaled bound). At theta = min_o price_o / K_o no offer's term is negative: the bound then needs no
    N_o, which is what makes it useful far from convergence, where the unscaled bound multiplies each priced-out
    offer's reduced cost by the N_o nodes it might take."""
    thetas = {1.0} | {float(price[o] / k_new[o]) for o in range(len(price)) if k_new[o] > 0}
    best = -math.inf
    for theta in sorted(thetas):
        value = theta * (worth - k_ex) + float(np.sum(most_nodes * np.minimum(0.0, price - theta * k_new)))
        best = max(best, value)
    return best


def _type_rows_int(offers: Sequence[Offer], node_types: NodeTypes) -> list[tuple[np.ndarray, int, int]]:
    """The types' max and limits and the overall limits over the new nodes per offer, in whole units: per row, an
    integer coefficient per offer, the right-hand side, and the scale the linear program divides both by."""
    out: list[tuple[np.ndarray, int, int]] = []
    for t in node_types.types:
        mine = np.array([1 if o.type is t else 0 for o in offers], dtype=np.int64)
        if not mine.any():
            continue
        if t.max is not None:
            out.append((mine, int(t.max), 1))
        for r, lim in t.limits.items():
            if lim > 0:
                out.append((mine * int(t.capacity.get(r, 0)), int(lim), int(lim)))
    for r, lim in node_types.limits.items():
        if lim > 0:
            out.append((np.array([int(o.type.capacity.get(r, 0)) for o in offers], dtype=np.int64), int(lim),
                        int(lim)))
    return out


def _type_rows(offers: Sequence[Offer], node_types: NodeTypes) -> list[tuple[np.ndarray, float]]:
    """The types' max and limits and the overall limits: per row, a coefficient per offer and its right-hand side
    (a limit's row divided by the limit, for the linear program's numerics)."""
    return [(coef / scale, rhs / scale) for coef, rhs, scale in _type_rows_int(offers, node_types)]


def _pi_row(need: float, k_new: np.ndarray) -> tuple[np.ndarray, int]:
    """The covering rows summed with the weights pi, in millionths: each offer's best filling's worth K_o (rounded
    up) and what the new nodes must be worth, pi.size less the existing nodes' best fillings (rounded down)."""
    k = np.array([int(math.ceil(max(0.0, float(v)) * SCALE)) for v in k_new], dtype=np.int64)
    return k, int(math.floor(need * SCALE)) - 1


def _resource_rows(d: _Data) -> list[tuple[np.ndarray, int]]:
    """The covering rows summed with each resource's requests as weights: the new nodes hold what the pending pods
    request beyond the existing nodes' room (a node counted for at most what its groups' pods can take there)."""
    out = []
    for r in range(len(d.res_keys)):
        need = int(d.size @ d.req[:, r])
        have = int(np.minimum(d.free[:, r], d.req[:, r] @ d.cap_ex).sum())
        worth = np.minimum(d.alloc[:, r], d.req[:, r] @ d.cap_new).astype(np.int64)
        if need > have:
            out.append((worth, need - have))
    return out


def _offer_subsets(d: _Data, sizes: np.ndarray) -> list[np.ndarray]:
    """The groups some offer takes none of (its taints, its resources), one mask per distinct set: their pods need
    the other offers' nodes (_subset_row)."""
    has = sizes > 0
    out: dict[bytes, np.ndarray] = {}
    for o in range(d.cap_new.shape[1]):
        mask = (d.cap_new[:, o] == 0) & has
        if mask.any() and not np.array_equal(mask, has):
            out.setdefault(mask.tobytes(), mask)
    return list(out.values())


def _subset_row(d: _Data, pi: np.ndarray, mask: np.ndarray, sizes: np.ndarray, bins: list[list[int]],
                mult: np.ndarray, reach: np.ndarray, most_g_new: np.ndarray, seconds: float
                ) -> tuple[np.ndarray, int]:
    """The covering rows of the groups in `mask` alone summed at the duals: a row every answer meets, as _pi_row's,
    in which each node is worth at most its best filling of those groups' pods (the exact knapsack's bound,
    `seconds` each). An offer that takes none of them is worth nothing there, where the whole row counts a GPU
    node at the worth of GPU pods it cannot get once the GPU pods are all placed (1/gpu of the 200-node family:
    the 18th g5.12xlarge, which the GPU pods need for 3 of its 4 GPUs, counted as 4 c5.2xlarge's worth of the
    other pods)."""
    v = np.where(mask, np.maximum(pi, 0.0), 0.0)
    # (_price: the exact knapsack where the solver-free bound is above nothing; an existing node's worth bounded by
    # that alone left 1/gpu's bound at 109.576, the exact ones prove its 110.596)
    k_ex = sum(float(mult[b]) * _price(v, np.minimum(d.cap_ex[:, nodes[0]], reach), d.req, d.free[nodes[0]],
                                       seconds, (), 0.0)[0] for b, nodes in enumerate(bins) if mult[b] > 0)
    cache: dict[bytes, float] = {}
    k_new = np.zeros(d.alloc.shape[0])
    for o in range(len(k_new)):
        key = d.alloc[o].tobytes() + most_g_new[:, o].tobytes()
        if key not in cache:
            cache[key] = _price(v, most_g_new[:, o], d.req, d.alloc[o], seconds, (), 0.0)[0]
        k_new[o] = cache[key]
    return _pi_row(float(v @ sizes) - k_ex, k_new)


def surrogate_bound(cover: Sequence[tuple[np.ndarray, int]], price: np.ndarray, most_nodes: np.ndarray,
                    rows: Sequence[tuple[np.ndarray, int, int]], seconds: float) -> int:
    """The surrogate bound: the cheapest whole new nodes whose best fillings are worth what the pods need.

    Any answer meets the covering rows; summed with weights pi >= 0 (and the assignment rows' duals) they give one
    row every answer meets too: its nodes' fillings are worth at least pi.size (+ the assignment rows' terms). An
    existing node's filling is worth at most K_b, a new node of offer o's at most K_o (the knapsacks' upper
    bounds), so the new nodes n_o of any answer meet

        sum_o K_o n_o >= pi.size - sum_b |b| K_b,     n_o whole, n_o <= N_o, the types' max and limits

    `cover` holds such rows (K, need) in whole units: one per round of exact knapsacks (_pi_row), one per
    resource (_resource_rows: pi a resource's requests) and, at the last round's duals, one per set of groups some
    offer takes none of (_subset_row: pi on those groups alone). The cheapest n meeting them all is a lower bound, in
    millionths (CP-SAT on a knapsack over the offers; -1: none proven). It is exact in whole units (the worths
    rounded up, the needs down), so unlike the program's value it needs no allowance for HiGHS's tolerances. It is
    never below the Lagrangian bound at any theta * pi (that bound is this program's relaxation with the row
    priced at theta), and above it where the nodes' worth comes in whole pieces: on 1/plain of the 200-node family
    the converged program needs 37.6 nodes' worth of the offers that are worth their price, which buys 38 of them,
    or others whose worth per price is less."""
    cover = [(k, need) for k, need in cover if need > 0]
    if not cover:
        return 0
    m = cp_model.CpModel()
    n = []
    for o in range(len(price)):
        top = max((-(-need // int(k[o])) for k, need in cover if k[o] > 0), default=0)
        n.append(m.new_int_var(0, int(min(most_nodes[o], top)), f"n[{o}]"))
    for k, need in cover:
        m.add(sum(int(k[o]) * n[o] for o in range(len(price)) if k[o] > 0) >= need)
    for coef, rhs, _ in rows:
        m.add(sum(int(coef[o]) * n[o] for o in range(len(price)) if coef[o]) <= rhs)
    m.minimize(sum(round(float(price[o]) * MICRO) * n[o] for o in range(len(price))))
    solver = cp_model.CpSolver()
    knapsack_limits(solver.parameters, max(0.01, seconds))
    solver.parameters.catch_sigint_signal = False
    st = solver.solve(m)
    charge_knapsack(solver, "the pattern program's surrogate bound")
    if st == cp_model.OPTIMAL:
        return round(solver.objective_value)
    if st == cp_model.FEASIBLE:
        return int(math.ceil(solver.best_objective_bound - 1e-9))
    return -1  # (stopped before a bound, or no whole n within N_o: no claim)


@dataclass
class _Columns:
    """The columns generated so far: ("new", offer, a) and ("ex", bin kind, a), a = pods per group."""
    n_g: int
    cols: list[tuple[str, int, np.ndarray]]
    index: dict  # (kind, i, a's bytes) -> its column
    cut_rows: dict[int, list[tuple[int, int]]] = field(default_factory=dict)  # column -> its assignment rows' coefs

    def add(self, kind: str, i: int, fill: dict[int, int]) -> bool:
        """Add the column; False when it is there already (or empty)."""
        return self.column(kind, i, fill)[1]

    def column(self, kind: str, i: int, fill: dict[int, int]) -> tuple[int, bool]:
        """The column's index (-1 for an empty filling), and whether it was added now."""
        a = np.zeros(self.n_g, dtype=np.int64)
        for g, k in fill.items():
            a[g] = k
        key = (kind, i, a.tobytes())
        if key in self.index or not a.any():
            return self.index.get(key, -1), False
        self.index[key] = len(self.cols)
        self.cols.append((kind, i, a))
        return len(self.cols) - 1, True

    def rows_of(self, j: int, d: _Data, bins: list[list[int]]) -> list[tuple[int, int]]:
        """Column j's coefficients in the assignment rows (_cut_rows), computed once per column."""
        if j not in self.cut_rows:
            kind, i, a = self.cols[j]
            self.cut_rows[j] = _cut_rows(d, bins, kind, i, a)
        return self.cut_rows[j]


@dataclass(frozen=True)
class _LP:
    value: float  # the restricted program's optimum
    lower: float  # a valid lower bound on the full program's optimum (-inf: none proven)
    converged: bool  # no column left to add (the exact knapsacks' fillings beat no price)
    x: np.ndarray | None  # per column (then the slacks: one per covering row, then one per assignment row)
    slack: float  # pods no column places at the optimum (> 0: the program is infeasible)
    iterations: int
    solved: int = 0  # the columns x has (those added after the last solve come later)
    whole_micro: int = -1  # the surrogate bound in millionths (surrogate_bound; -1: not taken)


def _units(d: _Data, bins: list[list[int]], kind: str, i: int) -> np.ndarray:
    """Each group's per-class bound on a column's node (-1: none): the assignment rows' u_b."""
    return d.unit_ex[:, bins[i][0]] if kind == "ex" else d.unit_new[:, i]


def _cut_rows(d: _Data, bins: list[list[int]], kind: str, i: int, a: np.ndarray) -> list[tuple[int, int]]:
    u = _units(d, bins, kind, i)
    return [(r, _cut_coef(int(u[g]), j, int(a[g]))) for r, (g, j, _) in enumerate(d.cuts) if a[g] > 0]


def _segs(d: _Data, u: np.ndarray, pi_cut: np.ndarray) -> list[tuple[int, int, float]]:
    """The assignment rows' terms of a node whose per-class bounds are u, at the rows' duals: (group, cap, value)."""
    return [(g, (1 << 40) if u[g] < 0 else j * int(u[g]), float(pi_cut[r]))
            for r, (g, j, _) in enumerate(d.cuts) if pi_cut[r] > 1e-12]


def _generate(d: _Data, offers: Sequence[Offer], type_rows: list, price: np.ndarray, most_nodes: np.ndarray,
              sizes: np.ndarray, bins: list[list[int]], mult: np.ndarray, columns: _Columns, deadline: float,
              exact: bool, log=None, interrupt=None, exact_rounds: int = 0, cut_rhs: np.ndarray | None = None,
              whole_rows: Sequence[tuple[np.ndarray, int, int]] | None = None, kept: dict | None = None) -> _LP:
    """Column generation on the program with `sizes` pods per group and `mult[b]` nodes of existing kind b, until
    `deadline`. exact: end with the exact knapsacks and their Lagrangian bound (and once when FINAL_EXACT_AT of the time is gone); else stop
    when the greedy pricing finds nothing. exact_rounds > 0: after that many rounds of exact knapsacks, the
    program is solved once more with their fillings and stops (the dive's residual programs: near enough).
    cut_rhs: the assignment rows' right-hand sides (d.cuts' own, or the dive's residual ones); None: the program
    without them. whole_rows: the type rows in whole units (_type_rows_int); given, each round of exact knapsacks
    also takes the surrogate bound (the program's own bound: not the dive's residual programs). kept: the restricted
    program is left in it for the next call on the same rows and columns (other right-hand sides: the stretch, the
    dive's steps), which starts from its basis once a cold solve was charged kept["cold_max"] (0: the first)."""
    n_g, n_b, n_o, n_t = d.size.shape[0], len(bins), len(offers), len(type_rows)
    if cut_rhs is None:
        cut_rhs = np.zeros(0, dtype=np.int64)
    n_c = len(cut_rhs)
    rhs = np.concatenate([-sizes.astype(float), mult.astype(float), np.array([b for _, b in type_rows]),
                          -cut_rhs.astype(float)])
    # a group's pods may be priced beyond its count while one of its assignment rows is short (the dive)
    reach = sizes.astype(np.int64).copy()
    for r in range(n_c):
        reach[d.cuts[r][0]] = max(reach[d.cuts[r][0]], int(cut_rhs[r]))
    slack_cost = float(price.max() * max(1.0, float(d.size.sum())) + 1.0)
    best_lb = -math.inf
    best_whole = -1  # the surrogate bound in millionths (whole nodes): valid alone, never cut to the program's value
    cover = _resource_rows(d) if whole_rows is not None else []  # its rows (surrogate_bound)
    iterations = 0
    res = None
    value = math.inf
    converged = False
    # the exact knapsacks are the slow part (one per node kind and offer): they run when the greedy pricing finds
    # nothing, and once when this share of the time is gone (its Lagrangian bound, then the program stops)
    final_at = now() + FINAL_EXACT_AT * max(0.0, deadline - now())
    forced = False
    rounds_done = 0  # rounds of exact knapsacks
    # the restricted program, grown by each round's columns and solved from the last basis (optimizer.provision
    # .master); a slack per covering row and per assignment row first, then the columns in their order
    n_slack = n_g + n_c
    master = kept.get(len(rhs)) if kept is not None and kept.get("warm") else None
    if master is not None:
        master.set_rhs(rhs)
    else:
        master = Master(rhs)
        for g in range(n_slack):
            master.add(slack_cost, [g if g < n_g else n_b + n_t + g], [-1.0])
        if kept is not None:
            kept[len(rhs)] = master
    while True:
        iterations += 1
        cols = columns.cols
        # (the Python work of a round: its new columns' entries, and the pricing below)
        charge(ITER_SECONDS_MIN + ITER_SECONDS_PER_COLUMN * (len(cols) + n_slack - master.columns))
        for j in range(master.columns - n_slack, len(cols)):
            kind, i, a = cols[j]
            nz = np.flatnonzero(a)
            rows_: list[int] = nz.tolist()
            vals_: list[float] = (-a[nz]).astype(float).tolist()
            if kind == "ex":
                # (no column bound: the bin kind's row bounds it, and its dual is what the Lagrangian bound reads;
                # a column bound would take that dual and leave the row's at 0)
                rows_.append(n_g + i); vals_.append(1.0)
            else:
                for t, (coef, _) in enumerate(type_rows):
                    if coef[i] != 0:
                        rows_.append(n_g + n_b + t); vals_.append(float(coef[i]))
            if n_c:
                for r, k in columns.rows_of(j, d, bins):
                    rows_.append(n_g + n_b + n_t + r); vals_.append(-float(k))
            master.add(0.0 if kind == "ex" else float(price[i]), rows_, vals_)
        if deadline - now() <= 0.02 or wall_over("the pattern program") or (interrupt is not None and interrupt.is_set()):
            break
        t0 = time.perf_counter()
        cap = wall_cap()
        warm = master.warm
        res = master.solve(cap if math.isfinite(cap) else None)
        charge_lp(res, master.nonzeros, "the pattern program" + (" (warm)" if warm else ""), time.perf_counter() - t0,
                  rate=WARM_LP_RATE if warm else 1.0)
        if kept is not None and not warm and \
                res.nit * master.nonzeros * LP_SECONDS_PER_ITER_NONZERO >= kept.get("cold_max", 0.0):
            kept["warm"] = True  # (from now on the next call starts from this program's basis)
        if res.status != 0:
            res = None
            break
        value = float(res.fun)
        if exact_rounds and rounds_done >= exact_rounds:
            break
        duals = res.duals  # >= 0 for <= rows of a minimisation
        pi = np.maximum(duals[:n_g], 0.0)
        sigma = np.maximum(duals[n_g:n_g + n_b], 0.0)
        rho = np.maximum(duals[n_g + n_b:n_g + n_b + n_t], 0.0)
        pi_cut = np.maximum(duals[n_g + n_b + n_t:], 0.0)
        extra = np.array([sum(rho[t] * coef[o] for t, (coef, _) in enumerate(type_rows)) for o in range(n_o)])
        live = reach > 0
        most_g_new = np.where(live[:, None], np.minimum(d.cap_new, reach[:, None]), 0)
        seg_ex = [_segs(d, _units(d, bins, "ex", b), pi_cut) if n_c else [] for b in range(n_b)]  # (n_c: all)
        seg_new = [_segs(d, d.unit_new[:, o], pi_cut) if n_c else [] for o in range(n_o)]
        added = 0
        # the greedy pricing first (fast); the exact knapsacks when it finds nothing, or at the last round
        forced = exact and now() >= final_at
        if not forced:
            for b, nodes in enumerate(bins):
                if mult[b] <= 0:
                    continue
                n = nodes[0]
                fill = _greedy_segs(pi, np.minimum(d.cap_ex[:, n], reach), d.req, d.free[n], seg_ex[b])
                if fill and _worth(fill, pi, seg_ex[b]) > sigma[b] + 1e-9:
                    added += columns.add("ex", b, fill)
            for o in range(n_o):
                fill = _greedy_segs(pi, most_g_new[:, o], d.req, d.alloc[o], seg_new[o])
                if fill and _worth(fill, pi, seg_new[o]) > price[o] + extra[o] + 1e-9:
                    added += columns.add("new", o, fill)
            if added == 0 and not exact:
                converged = True
                break
        if (added == 0 or forced) and exact:
            added = 0
            lagr = value
            # (at least KNAPSACK_MIN_SECONDS of the clock each, whatever the share: a knapsack stopped short gives a
            # weaker bound and no column, and the program does not converge; most take a thirtieth of it)
            per = max(KNAPSACK_MIN_SECONDS, (deadline - now()) / max(1, 2 * (n_b + n_o)))
            cache: dict[bytes, tuple[float, dict[int, int]]] = {}
            k_ex = 0.0  # sum_b |b| K_b: the most the existing nodes' fillings are worth at pi
            k_new = np.zeros(n_o)  # K_o per offer
            for b, nodes in enumerate(bins):
                if mult[b] <= 0:
                    continue
                n = nodes[0]
                upper_k, fill = _price(pi, np.minimum(d.cap_ex[:, n], reach), d.req, d.free[n], per, seg_ex[b],
                                       sigma[b])
                lagr += float(mult[b]) * min(0.0, sigma[b] - upper_k)
                k_ex += float(mult[b]) * upper_k
                if fill and _worth(fill, pi, seg_ex[b]) > sigma[b] + 1e-9:
                    added += columns.add("ex", b, fill)
            for o in range(n_o):
                key = d.alloc[o].tobytes() + most_g_new[:, o].tobytes() + (d.unit_new[:, o].tobytes() if n_c else b"")
                if key not in cache:
                    # (the dive's programs, whose bound is not read, cut their knapsacks short as the bin kinds'; the
                    # program's own solves its offers' whole: the surrogate bound reads the offers' best fillings,
                    # where a bound above one would weaken it)
                    cache[key] = _price(pi, most_g_new[:, o], d.req, d.alloc[o], per, seg_new[o],
                                        price[o] + extra[o] if whole_rows is None else -math.inf)
                upper_k, fill = cache[key]
                k_new[o] = upper_k
                rc = price[o] + extra[o] - upper_k
                if rc < 0:
                    lagr += float(most_nodes[o]) * rc
                if fill and _worth(fill, pi, seg_new[o]) > price[o] + extra[o] + 1e-9:
                    added += columns.add("new", o, fill)
            worth = float(pi @ sizes + pi_cut @ cut_rhs)
            best_lb = max(best_lb, lagr, farley_bound(worth, k_ex, k_new, price, most_nodes))
            if whole_rows is not None:
                cover.append(_pi_row(worth - k_ex, k_new))
                if added == 0 or forced:  # (the last round's duals: the groups some offer cannot take, alone)
                    cover += [_subset_row(d, pi, mask, sizes, bins, mult, reach, most_g_new, per)
                              for mask in _offer_subsets(d, sizes)]
                best_whole = max(best_whole, surrogate_bound(cover, price, most_nodes, whole_rows, per))
            if added == 0:
                converged = True
                break
            rounds_done += 1
            if forced:
                break  # out of time: the Lagrangian bound of this round stands
        if log:
            log(f"iter {iterations}: lp {value:.4f} best bound {best_lb:.4f} whole {best_whole / MICRO:.4f} columns "
                f"{len(columns.cols)} added {added} {deadline - now():.1f}s left")
    x = None if res is None else np.concatenate([res.x[n_slack:], res.x[:n_slack]])  # (the columns, then slacks)
    slack = 0.0 if x is None else float(x[len(x) - n_g - n_c:].sum())  # columns added after the solve come later
    lower = best_lb
    if converged and exact:
        lower = min(best_lb, value)  # the two agree up to the knapsacks' rounding; the smaller is safe
    return _LP(value, lower, converged, x, slack, iterations, 0 if x is None else len(x) - n_g - n_c, best_whole)


def _setup(d: _Data, offers: Sequence[Offer], node_types: NodeTypes, known_micro: int | None, units: bool = False):
    """The program's prices, most nodes per offer, existing nodes' kinds and first columns. units: the kinds also
    by the per-class bounds of the groups with assignment rows (their coefficients), for the dive."""
    n_g, n_ex, n_o = len(d.glist), d.free.shape[0], len(offers)
    price = np.array([o.type.price for o in offers], dtype=float)
    most_nodes = np.full(n_o, float(d.size.sum()))
    for i, o in enumerate(offers):
        if known_micro is not None and o.type.price > 0:
            most_nodes[i] = min(most_nodes[i], math.floor(known_micro / MICRO / o.type.price + 1e-9))
        if o.type.max is not None:
            most_nodes[i] = min(most_nodes[i], o.type.max)
    # existing nodes with the same room and the same bounds are one bin kind with a multiplicity
    kinds: dict[bytes, list[int]] = defaultdict(list)
    cut_groups = sorted({g for g, _, _ in d.cuts}) if units else []
    for n in range(n_ex):
        if d.cap_ex[:, n].any():
            kinds[d.free[n].tobytes() + d.cap_ex[:, n].tobytes() + d.unit_ex[cut_groups, n].tobytes()].append(n)
    bins = list(kinds.values())
    columns = _Columns(n_g, [], {})
    for g in range(n_g):  # the start: each group alone on each offer, each bin kind filled by the pods' sizes
        for o in np.flatnonzero(d.cap_new[g]):
            columns.add("new", int(o), {g: int(d.cap_new[g, o])})
    for b, nodes in enumerate(bins):
        columns.add("ex", b, _greedy_fill(np.ones(n_g), d.cap_ex[:, nodes[0]], d.req, d.free[nodes[0]]))
    return price, most_nodes, bins, columns


def _dive(d: _Data, offers: Sequence[Offer], node_types: NodeTypes, price: np.ndarray, most_nodes: np.ndarray,
          bins: list[list[int]], columns: _Columns, lp: _LP, deadline: float, log=None, interrupt=None,
          rows: bool = True, exact: bool = True) -> Packing | None:
    """Residual rounding (a dive): the fillings the linear program takes whole are fixed (its value rounded down;
    when none is whole, the largest fraction and those of at least DIVE_UP rounded up), the pods and existing nodes
    they use leave the program, and column generation runs again on what is left (its new fillings fit the pods
    left), until every pod is placed and (rows) every assignment row met. None when `deadline` (of the clock)
    comes first. exact: each step's column generation ends with a round of exact knapsacks (else greedy only)."""
    x, solved = lp.x, lp.solved
    rows = rows and bool(d.cuts)
    sizes = d.size.astype(np.int64).copy()
    cut_rhs = np.array([s for _, _, s in d.cuts] if rows else [], dtype=np.int64)  # the rows less what is fixed
    mult = np.array([len(b) for b in bins], dtype=np.int64)
    count: dict[int, int] = defaultdict(int)  # column -> copies fixed
    base_rows = _type_rows(offers, node_types)
    # the residual programs' restricted program, kept from step to step (_generate) once a cold solve is charged
    # DIVE_COLD_MAX or more
    kept: dict = {"cold_max": DIVE_COLD_MAX}
    while sizes.any() or cut_rhs.any():
        if x is None or (interrupt is not None and interrupt.is_set()):
            return None
        if now() >= deadline:
            # out of time with a few pods left: each group's on new nodes of its own, the cheapest a pod first (the
            # compaction then moves them into the room left); at 1,000 nodes the dive reached 13 pods of 10,098
            if cut_rhs.any() or not _finish_alone(d, offers, base_rows, price, sizes, columns, count):
                return None
            break
        whole = [(j, int(math.floor(x[j] + 1e-6))) for j in range(solved) if x[j] >= 1 - 1e-6]
        if not whole:
            j = max(range(solved), key=lambda j: (x[j], -j))
            if x[j] <= 1e-6:
                return None
            whole = [(j, 1)] + [(i, 1) for i in range(solved) if i != j and x[i] >= DIVE_UP]
        for j, k in whole:
            kind, i, a = columns.cols[j]
            if kind == "ex":
                k = min(k, int(mult[i]))
            coefs = columns.rows_of(j, d, bins) if rows else []
            if k <= 0 or not (np.any(np.minimum(a, sizes)) or any(cut_rhs[r] > 0 for r, _ in coefs)):
                continue  # (its pods are placed already)
            if kind == "ex":
                mult[i] -= k
            count[j] += k
            sizes = np.maximum(0, sizes - k * a)
            for r, c in coefs:
                cut_rhs[r] = max(0, cut_rhs[r] - k * c)
        if not sizes.any() and not cut_rhs.any():
            break
        # the types' max and limits less what is fixed
        used = _bought(columns, count, len(offers))
        type_rows = [(coef, rhs - float(coef @ used)) for coef, rhs in base_rows]
        lp = _generate(d, offers, type_rows, price, most_nodes, sizes, bins, mult, columns, deadline, exact,
                       interrupt=interrupt, exact_rounds=DIVE_EXACT_ROUNDS, cut_rhs=cut_rhs if rows else None,
                       kept=kept)
        if lp.x is None or lp.slack > 1e-6:
            # a residual program the deadline stopped before it had a solution, or before its fillings held the
            # pods left: those are finished alone as above (1/production at 1,000 nodes: the zone-split program's
            # dive stopped at 58 pods of 10,098, and its answer was lost)
            if not cut_rhs.any() and _finish_alone(d, offers, base_rows, price, sizes, columns, count):
                break
            return None
        x, solved = lp.x, lp.solved
        if log:
            fixed = sum(price[columns.cols[j][1]] * k for j, k in count.items() if columns.cols[j][0] == "new")
            log(f"dive: fixed {fixed:.3f} + residual lp {lp.value:.3f} = {fixed + lp.value:.3f}, {int(sizes.sum())} pods left, "
                f"{deadline - now():.1f}s left")
    nodes: list[tuple[int, dict[int, int]]] = []
    existing: dict[int, dict[int, int]] = {}
    taken = [0] * len(bins)
    cost = 0
    for j, k in sorted(count.items()):
        kind, i, a = columns.cols[j]
        fill = {int(g): int(a[g]) for g in np.flatnonzero(a)}
        for _ in range(k):
            if kind == "new":
                nodes.append((i, fill))
                cost += round(price[i] * MICRO)
            else:
                existing[bins[i][taken[i]]] = fill
                taken[i] += 1
    if log:
        log(f"dive: {cost / MICRO:g}, {len(nodes)} new nodes, {len(columns.cols)} fillings")
    return Packing(tuple(nodes), existing, cost)


def _bought(columns: _Columns, count: dict[int, int], n_offers: int) -> np.ndarray:
    """The new nodes per offer that the fixed fillings (`count`: column -> copies) buy."""
    used = np.zeros(n_offers)
    for j, k in count.items():
        if columns.cols[j][0] == "new":
            used[columns.cols[j][1]] += k
    return used


def _finish_alone(d: _Data, offers: Sequence[Offer], base_rows: list, price: np.ndarray, sizes: np.ndarray,
                  columns: _Columns, count: dict[int, int]) -> bool:
    """The pods left (`sizes`) each group alone on new nodes, the offers cheapest per pod first, as many of each as
    the types' max and limits leave room for; added to `count` as columns. False when a group's pods do not fit."""
    used = _bought(columns, count, len(offers))
    for g in np.flatnonzero(sizes):
        left = int(sizes[g])
        for o in sorted(np.flatnonzero(d.cap_new[g]), key=lambda o: (price[o] / d.cap_new[g, o], o)):
            per = int(min(d.cap_new[g, o], left))
            room = [math.floor((rhs - float(coef @ used)) / float(coef[o]) + 1e-9) for coef, rhs in base_rows
                    if coef[o] > 0]
            k = min([-(-left // per), *room])
            if k <= 0:
                continue
            j, _ = columns.column("new", int(o), {int(g): per})
            count[j] += k
            used[o] += k
            left = max(0, left - k * per)
            if left == 0:
                break
        if left > 0:
            return False
        sizes[g] = 0
    return True


def _compact(d: _Data, offers: Sequence[Offer], packing: Packing, rows: bool = True) -> Packing:
    """A packing's fillings cut to the pods there are (the fillings cover more), then its new nodes emptied where
    their pods fit the room the others leave (the least loaded first; the existing nodes first, within each
    group's bound on the node), then each new node shrunk: enough of its pods moved into that room, the largest
    first, that the rest fits a cheaper offer of its zone, and each new node left on the cheapest offer that holds
    it. The dive fixes a filling for a node's worth of pods and leaves its spare room unused: its last nodes hold
    a pod or two, or the part of a node the program bought as a fraction (2/plain: 38 c5.2xlarge and a 39th
    half full, where its pods fit an m5.xlarge and the others' room)."""
    left = d.size.astype(np.int64).copy()
    n_g = len(left)
    # every existing node is a bin, those the packing leaves empty too: their room takes the last nodes' pods
    existing_fills = {n: packing.existing.get(n, {}) for n in range(d.free.shape[0])}
    where: list[tuple[str, int]] = [("ex", n) for n in existing_fills] + [("new", o) for o, _ in packing.new]
    counts = np.zeros((len(where), n_g), dtype=np.int64)  # per bin (a row), pods per group
    fills = list(existing_fills.values()) + [fill for _, fill in packing.new]
    cut_groups = {g for g, _, _ in d.cuts} if rows else set()
    for b, fill in enumerate(fills):
        for g, k in fill.items():
            take = k if g in cut_groups else min(k, int(left[g]))
            counts[b][g] = take
            left[g] -= take
    # a group with assignment rows is cut on the nodes that hold the most of it, one pod at a time: the rows read
    # how many nodes hold the group, which cutting the last nodes' pods would lower
    for g in sorted(cut_groups):
        while left[g] < 0:
            b = max(range(len(counts)), key=lambda b: (counts[b][g], -b))
            counts[b][g] -= 1
            left[g] += 1

    units = [d.unit_ex[:, i] if kind == "ex" else d.unit_new[:, i] for kind, i in where]
    rows_of: dict[int, list[tuple[int, int, int]]] = defaultdict(list)  # group -> (row, j, S_j)
    for r, (g, j, s_j) in enumerate(d.cuts):
        if g in cut_groups:
            rows_of[g].append((r, j, s_j))

    def row_total(r: int) -> int:
        g, j, _ = d.cuts[r]
        return sum(_cut_coef(int(units[b][g]), j, int(counts[b][g])) for b in range(len(where)) if counts[b][g])

    totals = {r: row_total(r) for rows in rows_of.values() for r, _, _ in rows}

    def rows_met(plan: dict[int, np.ndarray], t: int, keep: np.ndarray | None = None) -> bool:
        """The assignment rows after moving `plan`'s pods off bin t (`keep` staying there; none: all go): none short
        that was met, none shorter (what changes: bin t's term and the terms of the bins that take its pods)."""
        for g in sorted({int(g) for g in np.flatnonzero(counts[t])} & cut_groups):
            for r, j, s_j in rows_of[g]:
                after = totals[r] - _cut_coef(int(units[t][g]), j, int(counts[t][g]))
                if keep is not None:
                    after += _cut_coef(int(units[t][g]), j, int(keep[g]))
                for b, more in plan.items():
                    if more[g]:
                        k = int(counts[b][g])
                        after += _cut_coef(int(units[b][g]), j, k + int(more[g])) - _cut_coef(int(units[b][g]), j, k)
                if after < min(totals[r], s_j):
                    return False
        return True

    def room(b: int) -> np.ndarray:
        kind, i = where[b]
        return (d.free[i] if kind == "ex" else d.alloc[i]) - d.req.T @ counts[b]

    def cap(b: int) -> np.ndarray:
        kind, i = where[b]
        return (d.cap_ex[:, i] if kind == "ex" else d.cap_new[:, i]) - counts[b]

    gone = np.zeros(len(where), dtype=bool)
    is_new = np.array([kind == "new" for kind, _ in where], dtype=bool)
    # every bin's room and per-group bound left, kept up to date as pods move (refresh): a move scans them all
    rooms = np.array([room(b) for b in range(len(where))], dtype=np.int64).reshape(len(where), -1)
    caps = np.array([cap(b) for b in range(len(where))], dtype=np.int64).reshape(len(where), n_g)

    def refresh(bins_: Iterable[int]) -> None:
        for b in bins_:
            rooms[b], caps[b] = room(b), cap(b)

    def move_off(t: int, g: int, k: int, plan: dict[int, np.ndarray]) -> int:
        """Up to k pods of group g off bin t into the other bins' room (first fit, in bin order: the existing nodes
        first; none into a new bin left empty), added to `plan` (the pods each bin takes, not yet applied): the
        pods moved."""
        q = d.req[g]
        pos = q > 0
        fit = np.minimum(caps[:, g], np.min(np.where(pos, rooms // np.where(pos, q, 1), 1 << 40), axis=1))
        for b, more in plan.items():  # (what the plan already puts there)
            fit[b] = min(caps[b, g] - more[g], int(np.min(np.where(pos, (rooms[b] - d.req.T @ more)
                                                                    // np.where(pos, q, 1), 1 << 40))))
        fit[t] = 0
        fit[gone | (is_new & ~counts.any(axis=1))] = 0
        moved = 0
        for b in np.flatnonzero(fit > 0):
            take = int(min(fit[b], k - moved))
            plan.setdefault(int(b), np.zeros(n_g, dtype=np.int64))[g] += take
            moved += take
            if moved == k:
                break
        return moved

    def apply(plan: dict[int, np.ndarray], t: int, keep: np.ndarray) -> None:
        moved = {int(g) for g in np.flatnonzero(counts[t] - keep)} & cut_groups
        for b, more in plan.items():
            counts[b] += more
        counts[t][:] = keep
        refresh([t, *plan])
        for g in moved:
            for r, _, _ in rows_of[g]:
                totals[r] = row_total(r)

    def cheapest(b: int) -> int:
        """The cheapest offer of new bin b's zone that holds its pods (its own when none is cheaper)."""
        i = where[b][1]
        need = d.req.T @ counts[b]
        fits = [o for o in range(len(offers)) if (d.alloc[o] >= need).all() and (d.cap_new[:, o] >= counts[b]).all()
                and offers[o].zone == offers[i].zone]
        return min(fits, key=lambda o: (offers[o].type.price, o)) if fits else i

    def priced(b: int) -> int:
        return round(offers[cheapest(b)].type.price * MICRO)

    def shrink(t: int) -> bool:
        """Bin t's pods moved off, the largest in the resource most over first, until the rest fits a cheaper offer
        of its zone (the cheapest for which that works): the bin is then that offer's."""
        now_price = offers[cheapest(t)].type.price
        zone = offers[where[t][1]].zone
        for o in sorted((o for o in range(len(offers)) if offers[o].zone == zone and offers[o].type.price < now_price),
                        key=lambda o: (offers[o].type.price, o)):
            keep = counts[t].copy()
            plan: dict[int, np.ndarray] = {}
            ok = True
            for g in np.flatnonzero(keep > d.cap_new[:, o]):  # beyond the offer's bound on the group first
                k = int(keep[g] - d.cap_new[g, o])
                ok = move_off(t, int(g), k, plan) == k
                keep[g] -= k
                if not ok:
                    break
            while ok:
                over = (d.req.T @ keep - d.alloc[o]) / np.maximum(d.alloc[o], 1)
                r = int(np.argmax(over))
                if over[r] <= 0:
                    break
                gs = [int(g) for g in np.flatnonzero(keep) if d.req[g, r] > 0]
                if not gs:
                    ok = False
                    break
                g = max(gs, key=lambda g: (int(d.req[g, r]), -g))
                ok = move_off(t, g, 1, plan) == 1
                keep[g] -= 1
            if ok and cut_groups and not rows_met(plan, t, keep):
                ok = False
            if not ok:
                continue
            # (the new nodes that take its pods may then need a dearer offer than before: kept only when cheaper)
            touched = [t] + [b for b in plan if where[b][0] == "new"]
            saved = {b: counts[b].copy() for b in [t, *plan]}  # (every bin the move changes, to undo it)
            price_before, offer_before = sum(priced(b) for b in touched), where[t]
            apply(plan, t, keep)
            where[t] = ("new", o)
            refresh([t])
            if sum(priced(b) for b in touched) < price_before:
                return True
            for b, c in saved.items():
                counts[b][:] = c
            where[t] = offer_before
            refresh(saved)
            for g in cut_groups:
                for r, _, _ in rows_of[g]:
                    totals[r] = row_total(r)
        return False

    changed = True
    while changed:
        changed = False
        new_bins = [b for b in range(len(where)) if where[b][0] == "new" and not gone[b] and counts[b].any()]
        load = {b: float(np.max((d.req.T @ counts[b]) / np.maximum(d.alloc[where[b][1]], 1))) for b in new_bins}
        for t in sorted(new_bins, key=lambda b: (load[b], b)):
            plan: dict[int, np.ndarray] = {}
            ok = all(move_off(t, int(g), int(counts[t][g]), plan) == int(counts[t][g])
                     for g in np.flatnonzero(counts[t]))
            if ok and cut_groups and not rows_met(plan, t):
                ok = False
            if ok:
                apply(plan, t, np.zeros(n_g, dtype=np.int64))
                gone[t] = True
                changed = True
                break
        if not changed:
            # no node empties: shrink one (the least loaded first), then try emptying again
            for t in sorted(new_bins, key=lambda b: (load[b], b)):
                if shrink(t):
                    changed = True
                    break
    nodes: list[tuple[int, dict[int, int]]] = []
    existing: dict[int, dict[int, int]] = {}
    cost = 0
    for b, (kind, i) in enumerate(where):
        fill = {int(g): int(counts[b][g]) for g in np.flatnonzero(counts[b])}
        if not fill:
            continue
        if kind == "ex":
            existing[i] = fill
            continue
        o = cheapest(b)
        nodes.append((o, fill))
        cost += round(offers[o].type.price * MICRO)
    return Packing(tuple(nodes), existing, cost)


def _settled(d: _Data, offers: Sequence[Offer], packing: Packing, deadline: float, rows: bool = True) -> Packing:
    """The dive's packing compacted (_compact), then its new nodes replaced by cheaper ones where a small model
    finds their pods a place with the roomiest nodes' (optimizer.provision.repack) until the clock reaches
    `deadline`, then compacted again (a node the models filled may now fit a cheaper offer)."""
    from .repack import repack

    packing = _compact(d, offers, packing, rows)
    n_ex = d.free.shape[0]
    new_offers = [o for o, _ in packing.new]
    counts = np.zeros((n_ex + len(new_offers), len(d.size)), dtype=np.int64)
    for b, fill in enumerate([packing.existing.get(n, {}) for n in range(n_ex)] + [f for _, f in packing.new]):
        for g, k in fill.items():
            counts[b][g] = k
    fixed = sorted({g for g, _, _ in d.cuts}) if rows else []
    room = np.vstack([d.free, d.alloc[new_offers]]) - counts[:, fixed] @ d.req[fixed]
    cap = np.hstack([d.cap_ex, d.cap_new[:, new_offers]]).T
    price = np.array([o.type.price for o in offers])
    got, offer_of = repack(d.req, room, cap, counts, [None] * n_ex + new_offers, d.alloc, d.cap_new,
                           [o.zone for o in offers], price, set(fixed), deadline)
    if len(offer_of) == n_ex + len(new_offers) and np.array_equal(got, counts):
        return packing
    fills = [{int(g): int(got[b][g]) for g in np.flatnonzero(got[b])} for b in range(len(offer_of))]
    new = tuple((o, fills[b]) for b, o in enumerate(offer_of) if o is not None and fills[b])
    existing = {b: fills[b] for b in range(n_ex) if fills[b]}
    return _compact(d, offers, Packing(new, existing, sum(round(price[o] * MICRO) for o, _ in new)), rows)


def _empty(d: _Data, where: list[tuple[str, int]], room: list[np.ndarray], on: list[list[str]],
           mine: dict[tuple[int, int, int], int], unit) -> None:
    """The new nodes emptied, the fewest pods first, where each of their pods fits another node's room left (at
    most a class's own bound a node): the pods the fillings' groups could not give out whole opened nodes of their
    own (3/anti: 37.08 -> 22.46). In place."""
    of = {key: (g, c) for g, group in enumerate(d.pods) for c, keys in enumerate(group) for key in keys}
    changed = True
    while changed:
        changed = False
        full = [b for b in range(len(where)) if where[b][0] == "ex" or on[b]]
        for t in sorted((b for b in full if where[b][0] == "new"), key=lambda b: (len(on[b]), b)):
            moves: list[tuple[str, int]] = []
            left = {b: room[b].copy() for b in full if b != t}
            count: dict[tuple[int, int, int], int] = {}
            for key in on[t]:
                g, c = of[key]
                q = d.req[g]
                dest = next((b for b in left if (left[b] >= q).all()
                             and count.get((g, c, b), mine[(g, c, b)]) < unit(g, b)), None)
                if dest is None:
                    break
                left[dest] -= q
                count[(g, c, dest)] = count.get((g, c, dest), mine[(g, c, dest)]) + 1
                moves.append((key, dest))
            if len(moves) < len(on[t]):
                continue
            for key, dest in moves:
                g, c = of[key]
                on[dest].append(key)
                room[dest] -= d.req[g]
                mine[(g, c, dest)] += 1
                mine[(g, c, t)] -= 1
            on[t].clear()
            changed = True
            break


def packing_answer(d: _Data, offers: Sequence[Offer], packing: Packing, existing_names: Sequence[str]
                   ) -> tuple[list[tuple[Offer, Node]], dict[str, str]] | None:
    """The packing as pods on nodes: each filling's count of a group taken from the group's classes (the ones with
    the most pods left first, at most a class's own bound on the node), the existing nodes first. The pods a
    class's bound leaves over (a group's bound on a node is its classes' together) go first fit to the room left,
    then to new nodes of the cheapest offer that holds them. New nodes left empty (the fillings cover more than
    the pods) are not bought. None when a pod fits nowhere."""
    left = [[list(keys) for keys in group] for group in d.pods]
    where: list[tuple[str, int]] = [("ex", n) for n in sorted(packing.existing)] + [("new", o) for o, _ in packing.new]
    fills = [packing.existing[n] for n in sorted(packing.existing)] + [fill for _, fill in packing.new]
    room = [(d.free[i] if kind == "ex" else d.alloc[i]).astype(np.int64).copy() for kind, i in where]
    on: list[list[str]] = [[] for _ in where]  # pods per bin
    mine: dict[tuple[int, int, int], int] = defaultdict(int)  # (group, class, bin) -> pods

    def unit(g: int, b: int) -> int:
        kind, i = where[b]
        u = int(d.unit_ex[g, i] if kind == "ex" else d.unit_new[g, i])
        return 1 << 40 if u < 0 else u

    def take(g: int, k: int, b: int) -> int:
        placed = 0
        q = d.req[g]
        pos = q > 0
        k = int(min(k, np.min(np.where(pos, room[b] // np.where(pos, q, 1), 1 << 40))))
        for c in sorted(range(len(left[g])), key=lambda c: (-len(left[g][c]), c)):
            n = min(len(left[g][c]), k - placed, unit(g, b) - mine[(g, c, b)])
            if n <= 0:
                continue
            on[b].extend(left[g][c][:n])
            del left[g][c][:n]
            mine[(g, c, b)] += n
            room[b] -= n * q
            placed += n
        return placed

    # per group, the bins with the most of its pods first and the classes with the most pods left first: classes
    # that take one pod a node (anti-affinity per host, host ports) then spread over the most nodes
    for g in range(len(left)):
        for b in sorted((b for b, fill in enumerate(fills) if fill.get(g, 0) > 0), key=lambda b: (-fills[b][g], b)):
            take(g, fills[b][g], b)
    for g in range(len(left)):
        while any(left[g]):
            k = sum(len(keys) for keys in left[g])
            for b in range(len(where)):
                if (where[b][0] == "ex" or on[b]) and take(g, k, b) >= k:
                    break
                k = sum(len(keys) for keys in left[g])
            if not any(left[g]):
                break
            fits = [o for o in range(len(offers)) if d.cap_new[g, o] > 0 and (d.alloc[o] >= d.req[g]).all()]
            if not fits:
                return None
            o = min(fits, key=lambda o: (offers[o].type.price, o))
            where.append(("new", o))
            room.append(d.alloc[o].astype(np.int64).copy())
            on.append([])
            if take(g, k, len(where) - 1) == 0:
                return None
    _empty(d, where, room, on, mine, unit)
    placements: dict[str, str] = {}
    taken = set(existing_names)
    seq: dict[int, int] = defaultdict(int)
    nodes: list[tuple[Offer, Node]] = []
    for b, (kind, i) in enumerate(where):
        if kind == "ex":
            name = existing_names[i]
        elif on[b]:
            seq[i] += 1
            name = fresh_name(offers[i], seq[i], taken)
            nodes.append((offers[i], new_node(offers[i].type, name, offers[i].zone)))
        for key in on[b]:
            placements[key] = name
    return nodes, placements


def answer_seed(d: _Data, base: Cluster, offers: Sequence[Offer], nodes: Sequence[tuple[Offer, Node]],
                placements: dict[str, str]) -> list[tuple[str, int, dict[int, int]]]:
    """A known answer's nodes as first columns (pattern_bound's seed): per existing node and per new node, its
    pending pods counted per group. Each count is cut to the group's bound on the node and a node whose pods then
    exceed its room is left out, so every column is a filling of the program (the bound stays a bound) whatever
    rules the answer kept."""
    group_of = {key: g for g, classes in enumerate(d.pods) for keys in classes for key in keys}
    where: dict[str, tuple[str, int]] = {n.name: ("ex", i) for i, n in enumerate(base.nodes)}
    index = {id(o): i for i, o in enumerate(offers)}
    for o, node in nodes:
        if id(o) in index:
            where[node.name] = ("new", index[id(o)])
    counts: dict[tuple[str, int], np.ndarray] = {}
    for key, name in placements.items():
        g, at = group_of.get(key), where.get(name)
        if g is None or at is None:
            continue
        counts.setdefault(at, np.zeros(len(d.glist), dtype=np.int64))[g] += 1
    out = []
    for (kind, i), a in sorted(counts.items(), key=lambda kv: (kv[0][0], kv[0][1])):
        cap, room = (d.cap_ex[:, i], d.free[i]) if kind == "ex" else (d.cap_new[:, i], d.alloc[i])
        a = np.minimum(a, cap)
        if a.any() and (d.req.T @ a <= room).all():
            out.append((kind, i, {int(g): int(a[g]) for g in np.flatnonzero(a)}))
    return out


def _micro(lp: _LP) -> int:
    """The program's bound in millionths (a program no filling completes, slack used, proves nothing here: the
    covering program says infeasible)."""
    if lp.slack >= 1e-6:
        return 0
    return max(0, int(math.floor(max(0.0, lp.lower) * MICRO * (1 - 1e-6) - 1)), lp.whole_micro)


def _with_assignment_rows(d: _Data, offers: Sequence[Offer], type_rows: list, price: np.ndarray,
                          most_nodes: np.ndarray, bins: list[list[int]], mult: np.ndarray, columns: _Columns, lp: _LP,
                          deadline: float, log=None, interrupt=None,
                          whole_rows: Sequence[tuple[np.ndarray, int, int]] | None = None, kept: dict | None = None) -> _LP:
    """The converged program `lp` with the assignment rows: itself when its answer meets them all, else column
    generation again from its fillings with the rows until `deadline`."""
    x = lp.x
    assert x is not None
    met = np.zeros(len(d.cuts))
    for j in range(lp.solved):
        if x[j] > 1e-9:
            for r, k in columns.rows_of(j, d, bins):
                met[r] += x[j] * k
    short = [r for r, (_, _, s) in enumerate(d.cuts) if met[r] < s - 1e-6]
    if log:
        log(f"assignment rows: {len(short)} of {len(d.cuts)} short at the program's optimum")
    if not short:
        return lp
    cut_rhs = np.array([s for _, _, s in d.cuts], dtype=np.int64)
    return _generate(d, offers, type_rows, price, most_nodes, d.size.astype(np.int64), bins, mult, columns, deadline,
                     True, log, interrupt, cut_rhs=cut_rhs, whole_rows=whole_rows)


def pattern_bound(base: Cluster, offers: Sequence[Offer], node_types: NodeTypes, profile: Profile, limit: float,
                  known_micro: int | None = None, data: _Data | None = None, log=None, interrupt=None,
                  master_share: float = 0.0, stretch: float = 0.0,
                  seed: Sequence[tuple[str, int, dict[int, int]]] = (), exact: bool = True,
                  answer: tuple[Sequence[tuple[Offer, Node]], dict[str, str]] | None = None) -> PatternBound:
    """Column generation on the pattern program of `base` (its pending pods: the required ones) within `limit`
    seconds. known_micro: the cost of a known answer (it bounds how many nodes of an offer can help).
    master_share > 0: this share of `limit` (and what column generation leaves of the rest) is kept for rounding
    the program's answer into whole nodes (the dive), whose answer is the result's `start`. stretch: the clock
    seconds beyond `limit` that column generation may go on for when it has not converged in its share and the
    dive can run (no zone rules), the dive then following in its share. answer: a known answer's new nodes
    (offer, node) and placements, whose nodes' fillings are first columns (answer_seed).
"""
    started = time.perf_counter()
    d = data or prepare(base, offers, profile)
    master = 0.0 if d.rules else limit * master_share
    started_clock = now()  # (the deterministic clock's: optimizer.provision.clock)
    deadline = started_clock + limit - master
    price, most_nodes, bins, columns = _setup(d, offers, node_types, known_micro, master > 0)
    bin_of = {n: b for b, members in enumerate(bins) for n in members}
    if answer is not None:
        seed = list(seed) + answer_seed(d, base, offers, *answer)
    for kind, i, fill in seed:
        if kind == "new" or i in bin_of:
            columns.add(kind, i if kind == "new" else bin_of[i], fill)
    type_rows = _type_rows(offers, node_types)
    whole = _type_rows_int(offers, node_types)
    mult = np.array([len(b) for b in bins], dtype=np.int64)
    if log is None and os.environ.get("PODPLAN_PATTERN_LOG"):
        def log(line: str) -> None:  # (a reading aid: the program's rounds on stderr)
            print(f"pattern program: {line}", file=sys.stderr, flush=True)
    if log:
        log(f"{len(d.glist)} groups ({int(d.size.sum())} pods), {d.free.shape[0]} existing nodes in {len(bins)} bin "
            f"kinds, {len(offers)} offers, {len(columns.cols)} first fillings, {deadline - now():.1f}s")
    kept: dict = {}  # the restricted program, for the stretch (_generate)
    lp = _generate(d, offers, type_rows, price, most_nodes, d.size.astype(np.int64), bins, mult, columns, deadline,
                   exact, log, interrupt, whole_rows=whole, kept=kept)
    # a program no filling completes (slack used) proves nothing here: the covering program says infeasible
    bound_micro = _micro(lp)
    start = None
    end = started_clock + limit
    if master > 0 and stretch > 0 and not lp.converged and not (interrupt is not None and interrupt.is_set()):
        lp = _generate(d, offers, type_rows, price, most_nodes, d.size.astype(np.int64), bins, mult, columns,
                       deadline + stretch, True, log, interrupt, whole_rows=whole, kept=kept)
        bound_micro = max(bound_micro, _micro(lp))
        end += stretch
    rows = False  # the dive keeps the assignment rows
    # (not with zone spread or required pod affinity: the fillings' answer broke them or, kept by zone quotas and
    # its new nodes moved between zones, cost more than the joint model's: 1/spread 19.98, 5/spread 15.90 against
    # 13.88 and 14.94, and the joint model's rounds lost the time)
    # (nor when column generation stopped short: from its program's answer the dive ran out of time on 4/anti, and
    # the joint model's rounds lost it: 16.96 -> 17.39)
    if master > 0 and lp.converged and lp.slack < 1e-6 and not (interrupt is not None and interrupt.is_set()) and \
            not wall_over("the pattern program's dive") and d.cuts and exact:
        # the assignment rows (_assignment_rows) once the program without them converged: at its optimum they
        # seldom bind (3/anti: 15.169 with and without), and with them from the start column generation needs
        # more rounds than its share has (89 against 70 there); the dive then keeps them
        before = lp
        shares_end = end
        end = shares_end + master * CUT_EXTRA
        lp = _with_assignment_rows(d, offers, type_rows, price, most_nodes, bins, mult, columns, lp,
                                   now() + (end - now()) * CUT_SHARE, log, interrupt, whole)
        bound_micro = max(bound_micro, _micro(lp))
        rows = lp is not before
        if not rows:
            end = shares_end
        elif not lp.converged or lp.slack > 1e-6:
            lp, rows = before, False  # (the dive as without the rows, in the time left)
    if master > 0 and lp.converged and lp.slack < 1e-6 and not (interrupt is not None and interrupt.is_set()) and \
            not wall_over("the pattern program's dive"):
        # (the rows only when some was short: where none is, they changed the dive's path for nothing, 4/plain
        # 13.26 -> 13.304)
        dived = _dive(d, offers, node_types, price, most_nodes, bins, columns, lp, end, log, interrupt,
                      rows=rows, exact=exact)
        if dived is not None:
            start, rows_kept = _compact(d, offers, dived), True
            names = [f"{n}" for n in range(d.free.shape[0])]
            if d.cuts:
                # the compaction that keeps the assignment rows, or the one that does not (the pods a group's
                # classes cannot take then go where the others' room holds them): the cheaper given out to pods
                cost = {}
                for keep in (True, False):
                    packing = start if keep else _compact(d, offers, dived, rows=False)
                    got = packing_answer(d, offers, packing, names)
                    if got is not None:
                        cost[keep] = (round(sum(o.type.price for o, _ in got[0]) * MICRO), packing)
                if cost:
                    rows_kept, (_, start) = min(cost.items(), key=lambda kv: (kv[1][0], not kv[0]))
                    if log:
                        log(f"dive: given out {', '.join(f'{c / MICRO:g}' for c, _ in cost.values())}")
            # then its new nodes replaced by cheaper ones where a small model finds their pods room, in the time
            # left of the program's share (run on both compactions, each in half of it, 4/plain got half as far)
            settled = _settled(d, offers, start, end, rows_kept)
            if settled.cost_micro < start.cost_micro and packing_answer(d, offers, settled, names) is not None:
                if log:
                    log(f"dive: repacked {start.cost_micro / MICRO:g} -> {settled.cost_micro / MICRO:g}")
                start = settled
            if log:
                log(f"dive: {dived.cost_micro / MICRO:g}, compacted {start.cost_micro / MICRO:g} "
                    f"({len(start.new)} new nodes), lp {lp.value:.4f}")
    used = ()
    if lp.converged and lp.x is not None:
        used = tuple((kind, tuple(bins[i]) if kind == "ex" else (i,), a, float(lp.x[c]))
                     for c, (kind, i, a) in enumerate(columns.cols[:lp.solved]) if lp.x[c] > 1e-9)
    return PatternBound(bound_micro, lp.value, lp.converged, len(columns.cols), lp.iterations,
                        time.perf_counter() - started, start, d, used)
