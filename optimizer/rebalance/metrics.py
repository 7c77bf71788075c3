"""What a rebalance measures: per-mille utilisation (the spread goal's levels), empty nodes (pack), every
objective level of an assignment computed in plain Python (`goal_values`: CP-SAT's levels reach the same
numbers, and the hypothesis test's brute force uses it), and the before/after metrics of a plan."""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ...models.objects import Cluster, Pod

from ..objective import preference_terms
from ..policy import Policy
from ..state import ClusterState, NodeInfo
from .movable import goes_with_node
from .plan import DRAIN, RebalanceParams
from ..framework import Profile
from ..registry import DEFAULT_PROFILE
from .states import state_of, violations_by_pod

RESOURCES = ("cpu", "memory")
PERMILLE = 1000


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def loads(state: ClusterState, nodes: Sequence[str], resource: str) -> list[tuple[int, int]]:
    """(requested, allocatable) of `resource` on each node of `nodes` that has some of it."""
    out = []
    for name in nodes:
        info = state.nodes[name]
        alloc = info.node.allocatable.get(resource, 0)
        if alloc > 0:
            out.append((info.requested.get(resource, 0), alloc))
    return out


def utilization_permille(state: ClusterState, nodes: Sequence[str]) -> dict[str, list[int]]:
    """resource -> ceil(1000 × requested / allocatable) per node of `nodes` that has the resource."""
    return {r: [ceil_div(PERMILLE * req, alloc) for req, alloc in loads(state, nodes, r)] for r in RESOURCES}


def spread_levels(state: ClusterState, nodes: Sequence[str]) -> tuple[int, int]:
    """(U, V): the highest per-mille utilisation, and Σ_r N·Σu² − (Σu)² (N² × variance)."""
    u = utilization_permille(state, nodes)
    top = max((v for vals in u.values() for v in vals), default=0)
    var = sum(len(vals) * sum(v * v for v in vals) - sum(vals) ** 2 for vals in u.values())
    return top, var


def occupied(info: NodeInfo) -> bool:
    """Does the node hold a pod that does not go with it (anything but DaemonSet and mirror pods)?"""
    return any(not goes_with_node(p) for p in info.pods.values())


def goal_values(cluster: Cluster, params: RebalanceParams, where: Mapping[str, str], free: Iterable[Pod],
                policy: Policy | None = None, names: Iterable[str] | None = None) -> dict[str, int]:
    """Every objective level of `where` (pod key -> node for every free pod), computed directly.

    Keys: drain:<node> (pods of `free` left there), utilization_max, utilization_variance, empty_nodes, preference,
    moves. The CP-SAT levels reach the same numbers. `names`: only these levels (and drain:*, moves)."""
    free = list(free)
    keys = {p.key for p in free}
    full = {p.key: where.get(p.key, p.node_name) for p in cluster.pods}
    state = state_of(cluster, full, moved=keys)
    return state_values(cluster, params, state, full, free, names, policy)


def state_values(cluster: Cluster, params: RebalanceParams, state: ClusterState, full: Mapping[str, str],
                 free: Iterable[Pod], names: Iterable[str] | None = None,
                 policy: Policy | None = None) -> dict[str, int]:
    """goal_values on a state already built (`full`: every pod's node in it); `names`: only these levels (the
    preference score is the costly one)."""
    wanted = set(names) if names is not None else None
    kept_nodes = [n.name for n in cluster.nodes if n.name not in params.drain]
    out: dict[str, int] = {}
    for d in params.drain:
        out[f"{DRAIN}:{d}"] = sum(1 for p in free if full[p.key] == d)
    if wanted is None or wanted & {"utilization_max", "utilization_variance"}:
        out["utilization_max"], out["utilization_variance"] = spread_levels(state, kept_nodes)
    if wanted is None or "empty_nodes" in wanted:
        out["empty_nodes"] = sum(1 for n in kept_nodes if not occupied(state.nodes[n]))
    if wanted is None or "preference" in wanted:
        out["preference"] = sum(preference_terms(cluster, state, policy or params.policy).values())
    out["moves"] = sum(1 for p in free if full[p.key] != p.node_name)
    if params.extra is not None:
        out["outside"] = params.extra.value(state)
    return out


def metrics(cluster: Cluster, where: Mapping[str, str], moved: Iterable[str], drain: Sequence[str],
            policy: Policy | None = None, profile: Profile = DEFAULT_PROFILE,
            bad: Mapping[str, set[str]] | None = None, judged: bool = True) -> dict[str, Any]:
    """Utilisation (max/mean/stddev per resource over the nodes not drained), nodes used, empty nodes,
    violations (every pod judged with itself removed, pre-existing ones included) and the preference score.
    `bad`: violations_by_pod of this state when the caller has it (a 500-node cluster's takes seconds);
    `judged=False`: violations and preference not computed (None), for callers that print neither."""
    moved = set(moved)
    state = state_of(cluster, where, moved)
    kept = [n.name for n in cluster.nodes if n.name not in drain]
    util: dict[str, dict[str, float]] = {}
    for r in RESOURCES:
        vals = [req / alloc for req, alloc in loads(state, kept, r)]
        if vals:
            mean = sum(vals) / len(vals)
            std = (sum((v - mean) ** 2 for v in vals) / len(vals)) ** 0.5
            util[r] = {"max": round(max(vals), 4), "mean": round(mean, 4), "stddev": round(std, 4)}
        else:
            util[r] = {"max": 0.0, "mean": 0.0, "stddev": 0.0}
    if bad is None and judged:
        bad = violations_by_pod(state, profile)
    empty = [n.name for n in cluster.nodes if not occupied(state.nodes[n.name])]
    return {
        "utilization": util,
        "nodes_used": len(cluster.nodes) - len(empty),
        "empty_nodes": empty,
        "violations": sum(len(v) for v in bad.values()) if bad is not None else None,
        "preference": sum(preference_terms(cluster, state, policy or Policy()).values()) if judged else None,
    }

