"""`podplan explain`: for each pending pod, every node's verdict with ALL failing plugins, each score
plugin's normalized score on the feasible nodes, and kube-scheduler's summary message.

Each pending pod is judged against the batch's final state: the existing pods plus every OTHER pending pod
where the greedy plan (simulate) puts it. A pod that needs a pending sibling (pod affinity to a cache being
created in the same batch) then reads as the plan sees it. The verdict against the existing pods alone (what
kube-scheduler would say if this pod were next in its queue) is kept when it differs, so the output can say
that the other pending pods change it.
"""
from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace

from ..models.objects import Cluster, Pod

from .framework import NodeVerdict, Profile, Reason, fit_error_message, run_filters, run_scores
from .profiles import Profiles
from .registry import DEFAULT_PROFILE
from .state import ClusterState


@dataclass(frozen=True)
class NodeExplanation:
    feasible: bool
    reasons: tuple[Reason, ...]
    scores: dict[str, int]


@dataclass(frozen=True)
class PodExplanation:
    pod: str
    message: str
    nodes: dict[str, NodeExplanation]
    # The greedy plan's node for this pod ("" when the plan leaves it pending), and kube-scheduler's message
    # against the existing pods only when the feasible nodes differ there ("" when they do not).
    planned: str = ""
    alone: str = ""

    def to_dict(self) -> dict[str, object]:
        return {
            "pod": self.pod,
            "message": self.message,
            "plannedNode": self.planned or None,
            "messageAgainstExistingPodsOnly": self.alone or None,
            "nodes": {
                name: {"feasible": n.feasible,
                       "reasons": [{"plugin": r.plugin, "reason": r.reason} for r in n.reasons],
                       "scores": dict(n.scores)}
                for name, n in self.nodes.items()
            },
        }


def explain_pod(pod: Pod, state: ClusterState, candidates: Sequence[str] | None = None,
                profile: Profile = DEFAULT_PROFILE) -> PodExplanation:
    """Filter verdicts on every node; scores over `candidates` (default: the feasible nodes)."""
    verdicts = run_filters(pod, state, profile.filters)
    feasible = [v.node for v in verdicts if v.feasible]
    scored = list(candidates) if candidates is not None else feasible
    scores = run_scores(pod, state, [state.nodes[n] for n in scored], profile.scorers) if scored else {}
    nodes = {
        v.node: NodeExplanation(v.feasible, v.reasons,
                                {plugin: per_node[v.node] for plugin, per_node in scores.items() if v.node in per_node})
        for v in verdicts
    }
    return PodExplanation(pod.key, _message(verdicts), nodes)


def explain(cluster: Cluster, profile: Profile | Profiles = DEFAULT_PROFILE, pods: Sequence[str] | None = None,
            placements: Mapping[str, str] | None = None, scores: bool = True) -> list[PodExplanation]:
    """Every asked pod's explanation (iter_explain, as a list)."""
    return list(iter_explain(cluster, profile, pods, placements, scores))


def iter_explain(cluster: Cluster, profile: Profile | Profiles = DEFAULT_PROFILE, pods: Sequence[str] | None = None,
                 placements: Mapping[str, str] | None = None, scores: bool = True) -> Iterator[PodExplanation]:
    """The pending pods `pods` (keys; default: all) judged against the final state of `placements` (the
    batch's plan; default: none placed, i.e. the existing pods only), each without itself. scores=False
    skips the Score plugins (the summary reads filter verdicts only). Each pod is judged with its own profile
    when given a scheduler configuration's."""
    placements = placements or {}
    by_key = {p.key: p for p in cluster.pending}
    wanted = [by_key[k] for k in pods] if pods is not None else list(cluster.pending)
    final = ClusterState.from_cluster(cluster, [*((p, p.node_name) for p in cluster.pods),
                                                *((by_key[k], n) for k, n in placements.items() if k in by_key)])
    alone = ClusterState.from_cluster(cluster) if placements else None
    none: Sequence[str] | None = None if scores else ()
    for pod in wanted:
        own = profile.judge_with(pod) if isinstance(profile, Profiles) else profile
        planned = placements.get(pod.key, "")
        if planned:
            final.remove(pod)
        e = explain_pod(pod, final, none, own)
        if planned:
            final.add(pod, planned)
        note = ""
        if alone is not None:
            feasible = {n for n, v in e.nodes.items() if v.feasible}
            verdicts = run_filters(pod, alone, own.filters)
            if {v.node for v in verdicts if v.feasible} != feasible:
                note = _message(verdicts)
        yield replace(e, planned=planned, alone=note)


def _message(verdicts: Sequence[NodeVerdict]) -> str:
    feasible = sum(1 for v in verdicts if v.feasible)
    return f"{feasible}/{len(verdicts)} nodes are available" if feasible else fit_error_message(len(verdicts), verdicts)


def final_state_message(pod: Pod, state: ClusterState, profile: Profile = DEFAULT_PROFILE) -> str | None:
    """kube-scheduler's FitError message for `pod` against `state` (a plan's final state), or None when some
    node would accept it there (it stays pending by the optimum's choice: a gang, a higher priority)."""
    verdicts = run_filters(pod, state, profile.filters)
    if any(v.feasible for v in verdicts):
        return None
    return fit_error_message(len(verdicts), verdicts)
