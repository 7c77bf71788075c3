"""The consolidation's CP-SAT model and its bounds.

The model is rebalance's target model (rebalance.target_model.build_model: the free pods become pending pods,
every rule is encoded by its plugin's encoding with the verifier's final-state semantics, every free pod is
placed, `moves` counts the pods that leave their node) plus, per node that no immovable pod pins,
`removed[node]` ⇒ no free pod on it. The removed nodes stay in the model as empty nodes, as they stay in the
cluster (cordoned) until the waves are done: they still count as topology domains (the spread skew sees
them), as cluster-autoscaler's simulator keeps a tainted ghost of the node it removes.

Levels: saving = Σ price × removed, maximised; then moves, minimised. The first stage's bound is the proven
bound when the model holds every free pod and every node (`full`); otherwise (a large cluster searched in a
window of candidate nodes) the bound is `capacity_bound`: the most any set of nodes can save while the nodes
that stay hold every pod's requests in total, per resource (a relaxation of every rule but the resources).
"""
from __future__ import annotations

import math
import time
from collections import defaultdict
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from ortools.sat.python import cp_model

from ...models.objects import Cluster, Node, Pod
from ...models.taints import first_untolerated

from ..rebalance.movable import goes_with_node
from ..rebalance.plan import RebalanceParams
from ..rebalance.target import counts_of, counts_to_assignment, large_model_settings
from ..rebalance.target_model import build_model
from ..runner import Interrupt, Level, SolverParams, complete, lexicographic

UNSCHEDULABLE = "node.kubernetes.io/unschedulable"  # the cordon's taint (NodeUnschedulable tolerates it)


@dataclass(frozen=True)
class Solved:
    remove: tuple[str, ...]
    assignment: dict[str, str]  # free pod -> node
    saving: int  # scaled prices
    bound: float  # scaled; valid only when `full`
    proven: bool


def solve_removal(cluster: Cluster, free: list[Pod], candidates: Collection[str], prices: Mapping[str, int],
                  rparams: RebalanceParams, deadline: float, interrupt: Interrupt,
                  starts: Sequence[tuple[Collection[str], Mapping[str, str]]] = (),
                  nodes: Collection[str] | None = None, guarded: Mapping[str, int] | None = None) -> Solved | None:
    """The removal saving the most, then with the fewest moves, among `candidates` (nodes no immovable pod
    pins), re-placing `free` pods (on `nodes` only, when given). `start_*`: a valid removal to start from (the
    greedy ones: the first the model completes, i.e. valid in the verifier's final-state sense, is the hint).
    None: no solution at all within the time."""
    built = build_model(cluster, free, rparams, nodes=nodes)
    model, problem = built.model, built.problem
    xs_on: dict[int, list[cp_model.IntVar]] = defaultdict(list)
    for ctx in built.ctx_list:
        for (_, n), x in ctx.x.items():
            xs_on[n].append(x)
    removed: dict[str, cp_model.IntVar] = {}
    for name in candidates:
        n = problem.node_index.get(name)
        if n is None:
            continue
        r = model.new_bool_var(f"removed[{name}]")
        if xs_on.get(n):
            model.add(sum(xs_on[n]) == 0).only_enforce_if(r)
        removed[name] = r
    saving = sum(prices[name] * r for name, r in removed.items()) if removed else 0
    moves = dict((name, build) for name, build, _ in built.levels)["moves"]()
    # one objective, lexicographic by its weights: a removal saving more always wins, and among equal savings
    # the fewest moves (moves <= len(free) < weight). Two stages left the saving stage's solution, with pods
    # shuffled between the nodes that stay, whenever the moves stage found nothing in its time.
    weight = len(free) + 1
    solver = SolverParams(workers=rparams.workers, seed=rparams.seed)
    incumbent = None
    for start_removed, start_where in starts:
        counts = counts_of(built, free, start_where)
        fixed = {var.index: counts.get(key, 0) for key, var in _x_all(built).items()}
        fixed.update({r.index: int(name in start_removed) for name, r in removed.items()})
        done = complete(model, fixed, solver, max(0.1, (deadline - time.perf_counter()) * 0.1), interrupt=interrupt)
        if done.values is not None:
            incumbent = done.values
            break
    stages = [Level("saving", saving * weight - moves, "max")]
    done = lexicographic(model, stages, solver, deadline, incumbent=incumbent, floor=incumbent is not None,
                         interrupt=interrupt, stop_when_unimproved=True, extra=large_model_settings)
    values = done.values
    if values is None:
        return None
    first = done.levels[0] if done.levels else None
    gone = tuple(name for name, r in removed.items() if values[r.index])
    assignment = counts_to_assignment(built, values, free, guarded or {})
    value = sum(prices[n] for n in gone)
    # objective <= B and 0 <= moves <= len(free) < weight: saving <= (B + len(free)) / weight
    bound = (first.bound + len(free)) // weight if first is not None and first.bound != float("inf") else float("inf")
    proven = first is not None and first.optimal and not interrupt.is_set()
    return Solved(gone, assignment, value, max(bound, value), proven)


def _x_all(built) -> dict[tuple[int, int], cp_model.IntVar]:
    out: dict[tuple[int, int], cp_model.IntVar] = {}
    for ctx in built.ctx_list:
        out.update(ctx.x)
    return out


def capacity_bound(cluster: Cluster, pinned: Collection[str], prices: Mapping[str, int]) -> float:
    """An upper bound on any removal's saving, from resources, taints and node affinity (a relaxation of every
    other rule), by a linear program over how much of each node is kept.

    Every pod that does not leave with its node (DaemonSet and mirror pods do) ends on a node that stays: one
    whose NoSchedule/NoExecute taints it tolerates, whose labels its required node affinity and node selector
    match and whose allocatable offers every resource it requests (its `home`), or its own node. The kept
    nodes' room (allocatable less what their DaemonSet and mirror pods request; pods counted against
    allocatable pods) must hold, per resource, the requests of the pods whose homes lie inside any set of nodes.
    The sets used: every distinct home, and all the nodes. With keep[n] in [0, 1] (1 for a pinned node), the
    least Σ price·keep under those covering constraints (scipy's HiGHS) is a lower bound on what any removal
    keeps, rounded up to the prices' common divisor; saving <= total − that. It ignores pod (anti-)affinity,
    spread and ports, and lets fractions of nodes hold fractions of pods: a relaxation, never below the optimum
    (property-tested against exhaustive search on tiny clusters)."""
    import numpy as np
    from scipy.optimize import linprog

    from ..nodeaffinity.filtering import required_matches

    nodes = list(cluster.nodes)
    index = {n.name: i for i, n in enumerate(nodes)}
    resources: list[str] = sorted({"pods"} | {r for p in cluster.pods for r, v in p.requests.items() if v > 0})
    cap = np.array([[n.allocatable.get(r, 0) for r in resources] for n in nodes], dtype=float)
    homes: dict[tuple, np.ndarray] = {}  # pod signature -> nodes it may end on (its own node aside)
    demand: dict[tuple[bytes, int], np.ndarray] = defaultdict(lambda: np.zeros(len(resources)))
    masks: dict[bytes, np.ndarray] = {}
    for p in cluster.pods:
        i = index.get(p.node_name)
        if i is None:
            continue
        req = np.array([1 if r == "pods" else p.requests.get(r, 0) for r in resources], dtype=float)
        if goes_with_node(p):
            cap[i] -= req
            continue
        wanted = tuple(sorted(r for r, v in p.requests.items() if v > 0))
        sig = (repr(p.tolerations), tuple(sorted(p.node_selector.items())), repr(p.affinity.node_required), wanted)
        home = homes.get(sig)
        if home is None:
            # a cordoned node only for a pod that may tolerate its unschedulable taint (a looser home is still
            # a valid relaxation)
            cordon_ok = any(t.key in ("", UNSCHEDULABLE) for t in p.tolerations)
            home = np.array([(cordon_ok or not n.unschedulable) and first_untolerated(n.taints, p.tolerations) is None
                             and required_matches(p, n) and all(n.allocatable.get(r, 0) > 0 for r in wanted)
                             for n in nodes], bool)
            homes[sig] = home
        key = home.tobytes()
        masks[key] = home
        demand[(key, i)] += req
    np.maximum(cap, 0, out=cap)
    # the sets: every distinct home (with the own nodes of its pods) and all the nodes
    sets = {k: m.copy() for k, m in masks.items()}
    for (k, i) in demand:
        sets[k][i] = True
    sets[b"all"] = np.ones(len(nodes), bool)
    keep_fixed = np.array([n.name in pinned for n in nodes])
    price = np.array([prices[n.name] for n in nodes], dtype=float)
    rows, rhs = [], []
    for s_mask in sets.values():
        need = np.zeros(len(resources))
        for (k, i), d in demand.items():
            if s_mask[i] and not (masks[k] & ~s_mask).any():
                need += d
        need -= (cap * (s_mask & keep_fixed)[:, None]).sum(axis=0)
        for r in range(len(resources)):
            if need[r] > 0:
                rows.append(-(cap[:, r] * (s_mask & ~keep_fixed)))
                rhs.append(-need[r])
    free_nodes = ~keep_fixed
    total = float(price[free_nodes].sum())
    if not rows:
        return total
    a_ub = np.array(rows)[:, free_nodes]
    res = linprog(price[free_nodes], A_ub=a_ub, b_ub=np.array(rhs), bounds=(0, 1), method="highs")
    if res.status == 2:  # infeasible: even every node kept cannot hold the pods; nothing can go
        return 0.0
    if res.status != 0:
        return total  # no answer from the LP: the trivial bound
    unit = math.gcd(*(int(x) for x in price[free_nodes])) or 1
    # HiGHS's optimum may exceed the true LP's by its tolerances: round up only past a clear margin
    x = res.fun / unit
    keep = unit * math.ceil(x - 1e-6 * max(1.0, x))
    return float(max(0.0, total - keep))


def free_on(free: Sequence[Pod], nodes: Collection[str]) -> list[Pod]:
    wanted = set(nodes)
    return [p for p in free if p.node_name in wanted]
