"""PodDisruptionBudget arithmetic, as the Eviction API and the disruption controller compute it.

Reproduces:
- kubernetes/kubernetes pkg/controller/disruption/disruption.go: getPodsForPdb (the PDB's selector in its
  namespace: nil matches nothing, `{}` every pod), getExpectedPodCount / getExpectedScale (maxUnavailable or a
  percentage minAvailable: expected = Σ scale of the pods' controllers, a ReplicaSet owned by a Deployment
  counting the Deployment's replicas; an integer minAvailable: expected = matching pods), percentages through
  intstr.GetScaledValueFromIntOrPercent with roundUp=true (ceil), countHealthyPods (Ready and not being
  deleted) and updatePdbStatus (disruptionsAllowed = currentHealthy − desiredHealthy, 0 when negative or when
  expected <= 0, so a PDB with neither field allows nothing);
- pkg/registry/core/pod/storage/eviction.go: which PDBs guard a pod (same namespace, a selector that is neither
  nil nor empty and matches), more than one PDB fails the eviction, a pod in phase Pending/Succeeded/Failed or
  being deleted ignores PDBs, an unready pod is evicted without spending the budget when
  currentHealthy >= desiredHealthy > 0, otherwise each eviction needs disruptionsAllowed > 0 and spends one.

Knowing differences: readiness is read from the dump (status.conditions Ready; a pod without conditions counts
as Ready, as hand-written dumps carry none); a controller podplan does not know (absent from the input, or a
kind without a scale subresource such as Job) makes the controller fail the sync, and its failSafe sets
disruptionsAllowed to 0: podplan reports the same 0 with the controller's error text; pending pods the parser
made for missing replicas are not pods of the cluster and are not counted.
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from ..models.objects import Pod, PodDisruptionBudget, Workload

ERR_TOO_MANY_PDBS = "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."
ERR_VIOLATES_BUDGET = "Cannot evict pod as it would violate the pod's disruption budget."
CAUSE_NEEDS_HEALTHY = "The disruption budget {name} needs {desired} healthy pods and has {current} currently"
ERR_NO_CONTROLLER = "found no controllers for pod {name!r}"
ERR_NO_SCALE = "{kind} {name} has no scale subresource podplan knows"

# Controllers whose scale the disruption controller reads (its finders; anything else goes through /scale).
SCALED_KINDS = ("ReplicaSet", "StatefulSet", "ReplicationController", "Deployment")


def guards(pdb: PodDisruptionBudget, pod: Pod) -> bool:
    """Does the Eviction API check `pdb` for `pod`? A nil or empty selector guards nothing there."""
    sel = pdb.selector
    return pdb.namespace == pod.namespace and sel is not None and not sel.empty and sel.matches(pod.labels)


def guarding(pdbs: Iterable[PodDisruptionBudget], pod: Pod) -> list[PodDisruptionBudget]:
    return [b for b in pdbs if guards(b, pod)]


def counts(pdb: PodDisruptionBudget, pod: Pod) -> bool:
    """Is `pod` one of the PDB's pods for the disruption controller (getPodsForPdb)?"""
    return pdb.namespace == pod.namespace and pdb.selector is not None and pdb.selector.matches(pod.labels)


def scaled(value: int | str, total: int) -> int:
    """intstr.GetScaledValueFromIntOrPercent(value, total, roundUp=true)."""
    if isinstance(value, int):
        return value
    percent = int(value.rstrip("%"))
    return math.ceil(percent * total / 100)


def pod_phase(pod: Pod) -> str:
    status = (pod.raw or {}).get("status") or {}
    return str(status.get("phase") or "Running")


def pod_ready(pod: Pod) -> bool:
    """podutil.IsPodReady from the dump: the Ready condition is True; no conditions at all: assumed Ready."""
    if pod.terminating or pod_phase(pod) != "Running":
        return False
    conditions = ((pod.raw or {}).get("status") or {}).get("conditions")
    if not conditions:
        return True
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions if isinstance(c, Mapping))


def ignores_pdbs(pod: Pod) -> bool:
    """eviction.go canIgnorePDB: terminal or Pending pods, and pods being deleted, are deleted outright."""
    return pod.terminating or pod_phase(pod) in ("Pending", "Succeeded", "Failed")


@dataclass(frozen=True)
class Budget:
    """A PDB's status as the disruption controller would write it for a given set of pods."""

    pdb: str  # ns/name
    expected: int
    desired_healthy: int
    current_healthy: int
    allowed: int
    error: str = ""  # the controller's sync error; allowed is then 0 (failSafe)

    def cause(self) -> str:
        if self.error:
            return f"the disruption controller cannot compute {self.pdb}: {self.error}"
        name = self.pdb.split("/", 1)[1]
        return CAUSE_NEEDS_HEALTHY.format(name=name, desired=self.desired_healthy, current=self.current_healthy)


def _workload(workloads: Sequence[Workload], kind: str, namespace: str, name: str, uid: str) -> Workload | None:
    for w in workloads:
        if w.kind == kind and w.namespace == namespace and w.name == name and (not uid or not w.uid or uid == w.uid):
            return w
    return None


def expected_scale(pods: Sequence[Pod], workloads: Sequence[Workload]) -> tuple[int, str]:
    """getExpectedScale: Σ scale of the distinct controllers of `pods` (unmanaged pods skipped), or an error."""
    scale: dict[tuple[str, str, str], int] = {}
    for pod in pods:
        ref = pod.controller
        if ref is None:
            continue  # unmanaged: left out of the sum, as upstream (with an event)
        w = _workload(workloads, ref.kind, pod.namespace, ref.name, ref.uid)
        if w is None:
            return 0, ERR_NO_CONTROLLER.format(name=pod.name)
        if w.kind == "ReplicaSet":
            parent = next((o for o in w.owner_refs if o.controller), None)
            if parent is not None and parent.kind == "Deployment":
                d = _workload(workloads, "Deployment", w.namespace, parent.name, parent.uid)
                if d is None:
                    return 0, ERR_NO_CONTROLLER.format(name=pod.name)
                w = d
        if w.kind not in SCALED_KINDS:
            return 0, ERR_NO_SCALE.format(kind=w.kind, name=f"{w.namespace}/{w.name}")
        scale[(w.kind, w.namespace, w.name)] = w.replicas
    return sum(scale.values()), ""


def budget(pdb: PodDisruptionBudget, pods: Iterable[tuple[Pod, bool]], workloads: Sequence[Workload]) -> Budget:
    """The PDB's status over `pods` (each with whether it is healthy: Ready and not being deleted)."""
    mine = [(p, healthy) for p, healthy in pods if counts(pdb, p)]
    current = sum(1 for _, healthy in mine if healthy)
    expected, desired, error = 0, 0, ""
    if pdb.max_unavailable is not None:
        expected, error = expected_scale([p for p, _ in mine], workloads)
        desired = max(0, expected - scaled(pdb.max_unavailable, expected))
    elif pdb.min_available is not None:
        if isinstance(pdb.min_available, int):
            desired, expected = pdb.min_available, len(mine)
        else:
            expected, error = expected_scale([p for p, _ in mine], workloads)
            desired = scaled(pdb.min_available, expected)
    if error:
        return Budget(pdb.key, 0, 0, current, 0, error)
    allowed = current - desired
    if expected <= 0 or allowed <= 0:
        allowed = 0
    return Budget(pdb.key, expected, desired, current, allowed)


def spends(pod: Pod, healthy: bool, b: Budget) -> bool:
    """Does evicting `pod` go through checkAndDecrement of its PDB (rather than straight to delete)?"""
    if ignores_pdbs(pod):
        return False
    return healthy or not (b.current_healthy >= b.desired_healthy > 0)
