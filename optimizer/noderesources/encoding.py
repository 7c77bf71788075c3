"""CP-SAT encoding of NodeResourcesFit, and the --strategy tie-break level.

Hard (final state, each pod judged with itself removed): on every node, for every resource some pod there
requests (> 0), the node's total requests stay within allocatable; the pod count stays within
allocatable pods. Existing pods are constants: a node already over a resource takes no pending pod that
requests it (static, as Filter against the existing pods says), and the constraint is
Σ request × x <= allocatable − existing requests over the classes that request the resource.
Resources checked are the plugin's: cpu, memory, ephemeral-storage and scalar resources.

Strategy level (maximised after P; a tie-break, not part of the verifier's judgement):
- spread: minimise the highest node utilisation (per mille of allocatable, cpu and memory) over the nodes
  of the component — the LeastAllocated-like balance;
- pack: minimise the number of nodes that hold a pod (nodes with existing pods count as used).
"""
from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np
from ortools.sat.python import cp_model

from ..framework import Reason
from ..state import NodeInfo
from ..problem import PodClass, Problem
from ..context import ModelContext

from .filtering import FIRST_CLASS, NAME, PODS, filter_node, is_scalar_resource_name

MIB = 1024 * 1024
Ignored = Callable[[str], bool] | None  # a profile's ignoredResources / ignoredResourceGroups, as a predicate


def checked(requests: Mapping[str, int], ignored: Ignored = None) -> list[str]:
    """Resources the Filter checks for a pod with these requests (zero requests are skipped upstream; so are
    the profile's ignoredResources / ignoredResourceGroups)."""
    return [r for r, q in requests.items()
            if q > 0 and (r in FIRST_CLASS or is_scalar_resource_name(r)) and not (ignored and ignored(r))]


def static_reasons(problem: Problem, cls: PodClass, info: NodeInfo) -> list[Reason]:
    return filter_node(cls.rep, None, info, problem.state)


def free(problem: Problem, node: int) -> dict[str, int]:
    key = ("noderesources.free", node)
    found = problem.cache.get(key)
    if found is None:
        n = problem.nodes[node]
        info = problem.state.nodes[n.name]
        found = {r: q - info.requested.get(r, 0) for r, q in n.allocatable.items()}
        found[PODS] = n.allocatable.get(PODS, 0) - len(info.pods)
        problem.cache[key] = found
    return found


def free_vector(problem: Problem, resource: str) -> np.ndarray:
    """Per node index: allocatable minus the existing pods' requests of `resource` (pods: pod slots left);
    0 on nodes that do not list the resource, as `free` says."""
    key = ("noderesources.free_vector", resource)
    found = problem.cache.get(key)
    if found is None:
        found = problem.cache[key] = np.fromiter((free(problem, i).get(resource, 0) for i in range(len(problem.nodes))),
                                                 np.int64, len(problem.nodes))
    return found


def _checked(problem: Problem, cls: PodClass, ignored: Ignored = None) -> list[tuple[str, int]]:
    key = ("noderesources.checked", cls.index, ignored)
    reqs = problem.cache.get(key)
    if reqs is None:
        reqs = problem.cache[key] = [(r, cls.rep.requests[r]) for r in checked(cls.rep.requests, ignored)]
    return reqs


def upper_bound_vector(problem: Problem, cls: PodClass, ignored: Ignored = None) -> np.ndarray:
    """Per node: how many pods of the class fit in the room the existing pods leave."""
    ub = np.minimum(free_vector(problem, PODS), cls.size)
    for r, q in _checked(problem, cls, ignored):
        np.minimum(ub, free_vector(problem, r) // q, out=ub)
    return np.maximum(ub, 0)


def static_mask(problem: Problem, cls: PodClass, ignored: Ignored = None) -> np.ndarray:
    mask = free_vector(problem, PODS) >= 1
    for r, q in _checked(problem, cls, ignored):
        mask &= free_vector(problem, r) >= q
    return mask


def encode(ctx: ModelContext, ignored: Ignored = None) -> None:
    p = ctx.problem
    for n in ctx.comp.nodes:
        cs = ctx.by_node[n]
        if not cs or ctx.all_frozen(cs):
            continue
        room = free(p, n)
        node = f"Node/{ctx.nname(n)}"
        if sum(ctx.ub[(c, n)] for c in cs) > room.get(PODS, 0):
            ctx.hard(ctx.model.add(sum(ctx.x[(c, n)] for c in cs) <= max(0, room.get(PODS, 0))),
                     (NAME, node, "status.allocatable.pods"))
        resources = sorted({r for c in cs for r in checked(p.classes[c].rep.requests, ignored)})
        for r in resources:
            users = [c for c in cs if p.classes[c].rep.requests.get(r, 0) > 0]
            need = sum(p.classes[c].rep.requests[r] * ctx.ub[(c, n)] for c in users)
            if need <= room.get(r, 0):
                continue  # cannot bind: every bound already fits
            ctx.hard(ctx.model.add(cp_model.LinearExpr.weighted_sum([ctx.x[(c, n)] for c in users],
                                                                   [p.classes[c].rep.requests[r] for c in users])
                                   <= max(0, room.get(r, 0))),
                     (NAME, node, f"status.allocatable.{r}"))


def strategy_level(ctx: ModelContext, strategy: str) -> cp_model.IntVar | None:
    """The tie-break level variable (maximised), or None when the component has nothing to place."""
    p = ctx.problem
    nodes = [n for n in ctx.comp.nodes if ctx.by_node[n]]
    if not nodes or strategy not in ("spread", "pack"):
        return None
    if strategy == "pack":
        used = []
        for n in nodes:
            info = p.state.nodes[ctx.nname(n)]
            if info.pods:
                continue  # already used
            u = ctx.new_bool(f"used[{ctx.nname(n)}]")
            for c in ctx.by_node[n]:
                ctx.model.add(ctx.x[(c, n)] <= ctx.ub[(c, n)] * u)
            used.append(u)
        level = ctx.new_int(-len(used), 0, "level[strategy]")
        ctx.model.add(level == -sum(used))
        return level
    top = ctx.new_int(0, 10 ** 7, "util_max")  # above 1000 only where existing pods overcommit
    floor = 0
    for n in nodes:
        node = p.nodes[n]
        info = p.state.nodes[node.name]
        for r, scale in (("cpu", 1), ("memory", MIB)):
            alloc = node.allocatable.get(r, 0) // scale
            if alloc <= 0:
                continue
            used = -(-info.requested.get(r, 0) // scale)
            users = [c for c in ctx.by_node[n] if p.classes[c].rep.requests.get(r, 0) > 0]
            floor = max(floor, min(10 ** 7, used * 1000 // alloc))
            if not users:
                continue
            ctx.model.add(cp_model.LinearExpr.weighted_sum(
                [ctx.x[(c, n)] for c in users] + [top],
                [1000 * -(-p.classes[c].rep.requests[r] // scale) for c in users] + [-alloc]) <= -1000 * used)
    ctx.model.add(top >= floor)
    level = ctx.new_int(-(10 ** 7), 0, "level[strategy]")
    ctx.model.add(level == -top)
    return level
