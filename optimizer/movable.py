"""Which running pods may move, after the descheduler's default evictor (sigs.k8s.io/descheduler
pkg/framework/plugins/defaultevictor): a pod is movable when a controller recreates it and none of these
hold: it is a mirror/static pod, a DaemonSet pod, terminating, uses local storage (emptyDir/hostPath) unless
allowed, has system-critical priority (>= 2000000000) unless allowed. Bare pods never move.

`as_pending` turns the movable pods of a running cluster back into pending pods (their replacements), so
the same solve/simulate path can re-place them; the original node of each is returned beside it.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from ..models.objects import Cluster, Pod

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
