"""provision's search on large inputs: the pods the existing nodes leave over, placed by CP-SAT on solve's model
of the grown cluster (the existing nodes' remaining room plus candidate new nodes per offer), minimising the sum
of open prices. Every kube-scheduler rule holds there (solve's model, final-state semantics); the plan is
verified again before it is printed."""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from ...models.nodetypes import NodeTypes, new_node
from ...models.objects import Cluster, Node
from ..framework import Profile
from ..model import build
from ..policy import Policy
from ..problem import build_problem
from ..runner import NEVER, Interrupt, SolverParams, Status, run, now
from .estimator import Offer, fresh_name, offer_name

MICRO = 1_000_000




def add_type_limits(model: Any, node_types: NodeTypes, opened: dict[int, Any], type_of: Callable[[int], Any]) -> None:
    """The node types' own `max` and `limits`, and the file's overall `limits` (Karpenter's NodePool limits), on the
    candidate new nodes: `opened` maps a candidate's node index to its 0/1 variable, `type_of` to its node type."""
    for t in node_types.types:
        ys = [y for n, y in opened.items() if type_of(n).name == t.name]
        if ys and t.max is not None:
            model.add(sum(ys) <= t.max)
        for r, lim in t.limits.items():
            if ys:
                model.add(sum(y * t.capacity.get(r, 0) for y in ys) <= lim)
    for r, lim in node_types.limits.items():
        terms = [y * type_of(n).capacity.get(r, 0) for n, y in opened.items()]
        if terms:
            model.add(sum(terms) <= lim)


@dataclass(frozen=True)
class Found:
    nodes: list[tuple[Offer, Node]]
    placements: dict[str, str]  # the searched pods
    status: Status  # the CP-SAT run's


def candidate_counts(counts: dict[int, int], offers: Sequence[Offer], margin: int = 1) -> dict[int, int]:
    """Per offer: the relaxation's nodes of its type (over all its zones) in each of the type's zones (spread
    constraints and zone affinity may want them all in one zone the relaxation did not pick), plus a margin
    for packing whole pods."""
    per_type: dict[str, int] = defaultdict(int)
    for i, k in counts.items():
        per_type[offers[i].type.name] += k
    return {i: per_type[o.type.name] + margin for i, o in enumerate(offers) if per_type.get(o.type.name, 0) > 0}


def search_new(cluster: Cluster, fixed_cluster: Cluster, counts: dict[int, int], offers: Sequence[Offer],
               node_types: NodeTypes, profile: Profile, policy: Policy, params: SolverParams, limit: float,
               interrupt: Interrupt = NEVER, hint: Found | None = None) -> Found | None:
    """CP-SAT on solve's model of `fixed_cluster` (its pending pods: the ones to place) grown by `counts`
    candidate nodes per offer, minimising the open candidates' price. None: no solution in time. `hint`: an
    answer to start from (its new nodes go on the first candidates of their offer)."""
    started = now()  # the deterministic clock's (optimizer.provision.clock)
    existing_names = {n.name for n in cluster.nodes}
    cand: list[tuple[Offer, Node]] = []
    for i, o in enumerate(offers):
        for j in range(counts.get(i, 0)):
            cand.append((o, new_node(o.type, f"{offer_name(o)}-candidate-{j + 1}",
                                     o.zone)))
    if not fixed_cluster.pending:
        return Found([], {}, Status.OPTIMAL)
    grown = replace(fixed_cluster, nodes=tuple(cluster.nodes) + tuple(n for _, n in cand))
    problem = build_problem(grown, profile, decompose=False)
    if not problem.components:
        return None
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
    for ns in by_offer.values():  # identical candidates of one offer open in order (symmetry)
        for a, b in zip(ns, ns[1:]):
            mdl.add(opened[a] >= opened[b])
    add_type_limits(mdl, node_types, opened, lambda n: cand[n - first_cand][0].type)
    price = {n: round(cand[n - first_cand][0].type.price * MICRO) for n in opened}
    mdl.minimize(sum(price[n] * y for n, y in opened.items()))
    if hint is not None:
        where: dict[str, int] = {n.name: i for i, n in enumerate(cluster.nodes)}
        used: dict[Offer, int] = defaultdict(int)
        for o, node in hint.nodes:
            if used[o] < len(by_offer[o]):
                where[node.name] = by_offer[o][used[o]]
            used[o] += 1
        hc: dict[tuple[int, int], int] = defaultdict(int)
        for key, node_name in hint.placements.items():
            c = problem.class_of.get(key)
            if c is not None and node_name in where:
                hc[(c, where[node_name])] += 1
        for key, var in ctx.x.items():
            mdl.add_hint(var, hc.get(key, 0))
        for n, y in opened.items():
            mdl.add_hint(y, int(any(hc.get((c, n), 0) for c in ctx.by_node.get(n, []))))
    res = run(mdl, params, max(0.1, limit - (now() - started)), interrupt=interrupt)
    values = res.values
    if values is None:
        return None
    seq: dict[Offer, int] = defaultdict(int)
    rename: dict[int, str] = {}
    taken = set(existing_names)
    nodes: list[tuple[Offer, Node]] = []
    for j, (o, node) in enumerate(cand):
        n = first_cand + j
        if values[opened[n].index]:
            seq[o] += 1
            rename[n] = fresh_name(o, seq[o], taken)
            nodes.append((o, new_node(o.type, rename[n], o.zone)))
    wanted = {c.index: list(c.pods) for c in problem.classes}
    placements: dict[str, str] = {}
    for (c, n), var in sorted(ctx.x.items()):
        for _ in range(values[var.index]):
            placements[wanted[c].pop(0).key] = rename.get(n, problem.nodes[n].name)
    return Found(nodes, placements, res.status)

