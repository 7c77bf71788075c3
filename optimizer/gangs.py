"""Gangs: which pending pods must be placed together, and how many of them at least.

`--gang` makes every workload (Deployment, ReplicaSet, StatefulSet, Job) all-or-nothing over its pending
pods; the annotation podplan.io/gang: "true" does it per workload; a scheduler-plugins PodGroup needs
minMember pods in all, its members already running included (coscheduling's Permit semantics).
"""
from __future__ import annotations

from dataclasses import dataclass

from ..models.objects import GANG_ANNOTATION, Cluster

GANG_KINDS = ("Deployment", "ReplicaSet", "StatefulSet", "Job")


@dataclass(frozen=True)
class Gangs:
    of: dict[str, str]  # pending pod key -> gang id ("PodGroup/ns/name" or a workload key "Kind/ns/name")
    minimum: dict[str, int]  # gang id -> pending pods it must place, or place none

    def members(self) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for pod, gang in self.of.items():
            out.setdefault(gang, []).append(pod)
        return out


def find_gangs(cluster: Cluster, gang_all: bool = False) -> Gangs:
    """Gang ids are the PodGroup's key ("PodGroup/ns/name") or the workload's key ("Kind/ns/name")."""
    gang_workloads = {w.key for w in cluster.workloads
                      if w.kind in GANG_KINDS and (gang_all or w.annotations.get(GANG_ANNOTATION) == "true")}
    groups = {g.key: g for g in cluster.pod_groups}
    of: dict[str, str] = {}
    need_in_all: dict[str, int] = {}  # gang id -> pods it needs, running members included
    running: dict[str, int] = {}
    members_running: dict[str, int] = {}  # PodGroup key -> its running members, counted once
    for p in cluster.pods:
        if p.pod_group and not p.terminating:
            members_running[p.pod_group] = members_running.get(p.pod_group, 0) + 1
    for pod in cluster.pending:
        group = groups.get(pod.pod_group)
        if group is not None:
            gang = f"PodGroup/{group.key}"
            need_in_all[gang] = group.min_member
            running[gang] = members_running.get(group.key, 0)
        elif pod.workload in gang_workloads:
            gang = pod.workload
            need_in_all[gang] = need_in_all.get(gang, 0) + 1
            running[gang] = 0
        else:
            continue
        of[pod.key] = gang
    pending_count: dict[str, int] = {}
    for gang in of.values():
        pending_count[gang] = pending_count.get(gang, 0) + 1
    minimum = {g: min(pending_count[g], max(0, need_in_all[g] - running[g])) for g in pending_count}
    # A gang whose minimum running pods already meet constrains nothing.
    return Gangs({p: g for p, g in of.items() if minimum[g] > 0}, {g: m for g, m in minimum.items() if m > 0})
