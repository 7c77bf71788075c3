"""Goals no plan can meet, and the pods that block them: what the optimum's bound leaves out, proven.

A plan evicts pods the policy's evictor may evict and re-places each one where kube-scheduler's filters pass
in the end state. A pod whose replacement passes the filters on no node but its own cannot help bring its node
down: evicting it only puts it back. `stuck_pods` finds such pods with a relaxation of the filters that holds
for every plan:

- the filters that read only the node object (NodeName, NodeAffinity, TaintToleration, NodeUnschedulable) are
  judged exactly: no eviction changes them;
- NodeResourcesFit and NodePorts are judged against the node holding only the pods no plan can move (those
  the evictor keeps): every plan leaves at least those there, and both filters only get harder with more pods;
- the filters that read other nodes' pods (InterPodAffinity, PodTopologySpread) and any other plugin are
  assumed to pass: other evictions could change their verdict.

A node above its targetThresholds whose other evictable pods cannot cover its excess (`constructive.bound`
without the stuck pods) is a goal no plan meets: named in `unmet` with the blocking pods, counted in the
bound's "nodes left outside", and left out of the evictions bound, so that a plan meeting every other goal
with the fewest evictions is proven optimal.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

from ...models.objects import Cluster, Pod
from ..framework import Profile, Reads, fit_error_message, outside_pre_filter_result, run_filters
from ..state import ClusterState

MONOTONE = ("NodeResourcesFit", "NodePorts")  # node-pods filters that only get harder with more pods on the node


@dataclass(frozen=True)
class Unmet:
    """One goal the plan does not meet: which (the plugin's goal, the node or pod), why, and what blocks it.
    `proven`: no plan meets it (shown by the relaxation above), not only this one."""
    goal: str  # LowNodeUtilization | HighNodeUtilization | a violation plugin's name
    node: str
    why: str
    blocking_pods: tuple[str, ...] = ()
    proven: bool = False
    pod: str = ""  # a violation's pod

    def line(self) -> str:
        return self.why

    def document(self) -> dict:
        out = {"goal": self.goal, "node": self.node, "why": self.why, "blocking_pods": list(self.blocking_pods),
               "proven": self.proven}
        if self.pod:
            out["pod"] = self.pod
        return out


def _spec_key(pod: Pod) -> tuple:
    """What the relaxed filters read of a pod: identical pods share one verdict."""
    return (pod.namespace, tuple(sorted(pod.requests.items())), tuple(sorted(pod.node_selector.items())),
            pod.affinity.node_required, pod.tolerations, pod.host_ports, pod.scheduler_name)


def stuck_pods(cluster: Cluster, free: Iterable[str], candidates: Iterable[Pod], profile: Profile,
               ) -> dict[str, str]:
    """candidate pod key -> why its replacement passes the relaxed filters on no node but its own. `free`: the
    keys of every pod a plan may move (the others stay where they are in every plan)."""
    free = set(free)
    fixed = ClusterState.from_cluster(replace(cluster, pods=tuple(p for p in cluster.pods if p.key not in free),
                                              pending=()))
    plugins = [p for p in profile.filters if p.filter_reads == Reads.NODE or p.name in MONOTONE]
    somewhere: dict[tuple, list[str]] = {}
    out: dict[str, str] = {}
    for pod in candidates:
        key = _spec_key(pod)
        if key not in somewhere:
            somewhere[key] = _first_feasible(replace(pod, node_name=""), fixed, plugins)
        if any(n != pod.node_name for n in somewhere[key]):
            continue
        # stuck: every node judged again, all of them, for kube-scheduler's message
        others = [v for v in run_filters(replace(pod, node_name=""), fixed, plugins) if v.node != pod.node_name]
        out[pod.key] = (f"its replacement fits on no other node even with every evictable pod gone "
                        f"({fit_error_message(len(others), others)})")
    return out


def _first_feasible(pod: Pod, state: ClusterState, plugins: list) -> list[str]:
    """The first two nodes where `pod` passes every plugin (one may be its own node). Stops at the first
    rejecting plugin of a node and at the second feasible node: at 1,000 nodes judging every node for every
    candidate took 12 s of CPU, and almost every pod passes on one of the first nodes."""
    active = [(p, p.pre_filter(pod, state) if p.pre_filter else None) for p in plugins if p.filter]
    found: list[str] = []
    for info in state.nodes.values():
        if outside_pre_filter_result(active, info.name):
            continue
        if all(not plugin.filter(pod, pre, info, state) for plugin, pre in active):
            found.append(info.name)
            if len(found) == 2:
                break
    return found
