"""Which running pods may move, after the descheduler's default evictor (sigs.k8s.io/descheduler
pkg/framework/plugins/defaultevictor): a pod is movable when a controller recreates it and none of these
hold: it is a mirror/static pod, a DaemonSet pod, terminating, uses local storage (emptyDir/hostPath) unless
allowed, has system-critical priority (>= 2000000000) unless allowed. Bare pods never move.

`as_pending` turns the movable pods of a running cluster back into pending pods (their replacements), so
the same solve/simulate path can re-place them; the original node of each is returned beside it.

`who_moves` is the rebalance's first step: the movable pods, less those the Eviction API would refuse for the
whole operation (kept in place up front): a pod guarded by more than one PDB (eviction.go fails it), or by a
PDB that allows 0 disruptions now (its budget does not grow while the plan runs: every replacement is Ready
before the next wave). Those the plan needed moved are blocked.
"""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from collections.abc import Callable
from dataclasses import dataclass, replace

from ...models.objects import Cluster, Pod, PodDisruptionBudget

from ..disruption import ERR_TOO_MANY_PDBS, Budget, guarding, spends

# reasons, as sentences ({what}: what keeping the pod in place costs)
R_IMMOVABLE_ON_DRAINED = "cannot leave {node}: {why}; the drain of {node} cannot complete"
R_PDB_ZERO = "PodDisruptionBudget {pdb} allows 0 disruptions ({cause}): {what}"
R_MANY_PDBS = "{err} ({pdbs}): {what}"

SYSTEM_CRITICAL_PRIORITY = 2_000_000_000  # scheduling.SystemCriticalPriority
EVICT_ANNOTATION = "descheduler.alpha.kubernetes.io/evict"  # forces a pod evictable, as in the descheduler


OUT_OF_SCOPE = "outside the scope (-n/-A/-l)"


@dataclass(frozen=True)
class MovePolicy:
    evict_local_storage: bool = False
    evict_system_critical: bool = False
    scope: Callable[[Pod], bool] | None = None  # -n/-l: only the pods in scope may move; None: every pod


def why_immovable(pod: Pod, policy: MovePolicy = MovePolicy()) -> str:
    """The reason a running pod may not move, or "" when it may."""
    if pod.terminating:
        return "terminating"
    if pod.mirror:
        return "mirror (static) pod"
    if policy.scope is not None and not policy.scope(pod):
        return OUT_OF_SCOPE
    owner = pod.controller
    if owner is None:
        return "bare pod: no controller recreates it"
    if owner.kind == "DaemonSet":
        return "DaemonSet pod"
    if pod.annotations.get(EVICT_ANNOTATION) is not None:
        return ""
    if pod.local_storage and not policy.evict_local_storage:
        return "uses local storage (emptyDir/hostPath); allow with --evict-local-storage"
    if pod.priority >= SYSTEM_CRITICAL_PRIORITY and not policy.evict_system_critical:
        return "system-critical priority; allow with --evict-system-critical"
    return ""


def movable(cluster: Cluster, policy: MovePolicy = MovePolicy()) -> list[Pod]:
    return [p for p in cluster.pods if not why_immovable(p, policy)]


def as_pending(cluster: Cluster, pods: list[Pod]) -> tuple[Cluster, dict[str, str]]:
    """`cluster` with `pods` unbound (pending, original order kept) and where each of them was."""
    keys = {p.key for p in pods}
    origin = {p.key: p.node_name for p in pods}
    freed = tuple(replace(p, node_name="") for p in cluster.pods if p.key in keys)
    return replace(cluster, pods=tuple(p for p in cluster.pods if p.key not in keys),
                   pending=freed + cluster.pending), origin


def goes_with_node(pod: Pod) -> bool:
    """DaemonSet and mirror pods are not drained (kubectl drain --ignore-daemonsets) and leave with the node."""
    owner = pod.controller
    return pod.mirror or (owner is not None and owner.kind == "DaemonSet")


@dataclass(frozen=True)
class Movers:
    free: list[Pod]  # the pods the target may re-place
    guarded: dict[str, int]  # free pod -> the allowed disruptions of its PDB (moves prefer unguarded pods)
    blocked: list[tuple[str, str]]  # (pod, reason): pods the plan needed moved that cannot be
    kept: dict[str, list[str]]  # reason -> movable pods the Eviction API keeps in place, harmlessly


def who_moves(cluster: Cluster, policy: MovePolicy, drained: set[str], healthy: Mapping[str, bool],
              budgets: Mapping[str, Budget], initial_bad: Mapping[str, set[str]]) -> Movers:
    """Who may move in a rebalance of `cluster` (see the module docstring). `budgets`: each PDB's at the start;
    `initial_bad`: pod -> the rules it violates now (a held pod in violation cannot be repaired)."""
    free: list[Pod] = []
    blocked: list[tuple[str, str]] = []
    held: dict[str, str] = {}  # movable pods the Eviction API refuses for the whole plan -> why
    guarded: dict[str, int] = {}
    pdbs_in: dict[str, list[PodDisruptionBudget]] = defaultdict(list)  # a PDB guards pods of its namespace only
    for b in cluster.pdbs:
        pdbs_in[b.namespace].append(b)
    for p in cluster.pods:
        why = why_immovable(p, policy)
        if why:
            if p.node_name in drained and not goes_with_node(p):
                blocked.append((p.key, R_IMMOVABLE_ON_DRAINED.format(node=p.node_name, why=why)))
            continue
        pdbs = guarding(pdbs_in.get(p.namespace, ()), p)
        if len(pdbs) > 1:
            held[p.key] = R_MANY_PDBS.format(err=ERR_TOO_MANY_PDBS, pdbs=", ".join(b.key for b in pdbs),
                                             what="{what}")
            continue
        if pdbs:
            b = budgets[pdbs[0].key]
            if spends(p, healthy[p.key], b) and b.allowed <= 0:
                held[p.key] = R_PDB_ZERO.format(pdb=b.pdb, cause=b.cause(), what="{what}")
                continue
            guarded[p.key] = b.allowed
        free.append(p)
    kept: dict[str, list[str]] = defaultdict(list)
    for p in cluster.pods:
        if p.key in held:
            if p.node_name in drained:
                blocked.append((p.key, held[p.key].format(what=f"it blocks the drain of {p.node_name}")))
            elif p.key in initial_bad:
                blocked.append((p.key, held[p.key].format(
                    what=f"its violation of {', '.join(sorted(initial_bad[p.key]))} cannot be repaired")))
            else:
                kept[held[p.key].format(what="kept in place")].append(p.key)
    return Movers(free, guarded, blocked, dict(kept))
