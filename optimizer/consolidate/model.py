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
    """An upper bound on any removal's saving, from resources and taints alone (a relaxation of every rule).

    Nodes fall into pools by their NoSchedule/NoExecute taints (and cordon); a pod may only end in a pool whose
    taints it tolerates and that offers every resource it requests, or stay in its own node's pool. The nodes
    kept in a pool must offer, per resource, what the pods confined to that pool request (DaemonSet and mirror
    pods' requests taken off their node's allocatable; pods counted against allocatable pods); the cheapest
    way to offer it even with fractions of nodes (cheapest per unit first: the LP optimum of a one-constraint
    covering problem) is a lower bound on what the pool keeps. Pools are disjoint, so their bounds add up;
    the same over the whole cluster (every pod, every node) is another. saving <= total price − the larger."""
    resources: set[str] = {"pods"}
    for p in cluster.pods:
        resources.update(r for r, v in p.requests.items() if v > 0)
    cap: dict[str, dict[str, int]] = {n.name: {r: n.allocatable.get(r, 0) for r in resources} for n in cluster.nodes}
    pool_of: dict[str, tuple] = {}
    pools: dict[tuple, list[Node]] = defaultdict(list)
    for n in cluster.nodes:
        key = tuple(sorted((t.key, t.value, t.effect) for t in n.taints if t.effect in ("NoSchedule", "NoExecute")))
        key += (("cordoned",) if n.unschedulable else ())
        pool_of[n.name] = key
        pools[key].append(n)
    offers = {key: {r for r in resources if any(n.allocatable.get(r, 0) > 0 for n in nodes)}
              for key, nodes in pools.items()}
    demand: dict[tuple | None, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for p in cluster.pods:
        if p.node_name not in cap:
            continue
        if goes_with_node(p):
            for r in resources:
                cap[p.node_name][r] -= 1 if r == "pods" else p.requests.get(r, 0)
            continue
        wanted = {r for r, v in p.requests.items() if v > 0}
        homes = {key for key, nodes in pools.items() if "cordoned" not in key and wanted <= offers[key]
                 and first_untolerated(nodes[0].taints, p.tolerations) is None}
        homes.add(pool_of[p.node_name])
        for r in resources:
            v = 1 if r == "pods" else p.requests.get(r, 0)
            demand[None][r] += v  # the whole cluster
            if len(homes) == 1:
                demand[next(iter(homes))][r] += v

    def keep_cost(nodes: list[str], need_of: Mapping[str, int]) -> float | None:
        """The LP lower bound on the price of the nodes of `nodes` kept (None: they cannot offer it)."""
        must = 0.0
        for r in resources:
            need = need_of.get(r, 0) - sum(max(0, cap[n][r]) for n in nodes if n in pinned)
            if need <= 0:
                continue
            cost = 0.0
            for per_unit, c in sorted((prices[n] / cap[n][r], cap[n][r]) for n in nodes
                                      if n not in pinned and cap[n][r] > 0):
                take = min(c, need)
                cost += per_unit * take
                need -= take
                if need <= 0:
                    break
            if need > 0:
                return None
            must = max(must, cost)
        return must

    total = sum(prices[n] for n in cap if n not in pinned)
    whole = keep_cost(list(cap), demand[None])
    split = 0.0
    for key, nodes in pools.items():
        c = keep_cost([n.name for n in nodes], demand.get(key, {}))
        split = split + c if c is not None and split is not None else None
    if whole is None or split is None:
        return 0.0  # the pods do not fit even in total: nothing can go
    return float(total - math.ceil(max(whole, split) - 1e-9))


def free_on(free: Sequence[Pod], nodes: Collection[str]) -> list[Pod]:
    wanted = set(nodes)
    return [p for p in free if p.node_name in wanted]
