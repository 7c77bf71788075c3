"""`podplan explain`: for each pending pod, every node's verdict with ALL failing plugins, each score
plugin's normalized score on the feasible nodes, and kube-scheduler's summary message.

Each pending pod is judged against the existing pods only, as the scheduler would judge it next.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..models.objects import Cluster, Pod

from .framework import Profile, Reason, fit_error_message, run_filters, run_scores
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

    def to_dict(self) -> dict[str, object]:
        return {
            "pod": self.pod,
            "message": self.message,
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
    if feasible:
        message = f"{len(feasible)}/{len(verdicts)} nodes are available"
    else:
        message = fit_error_message(len(verdicts), verdicts)
    return PodExplanation(pod.key, message, nodes)


def explain(cluster: Cluster, profile: Profile | Profiles = DEFAULT_PROFILE) -> list[PodExplanation]:
    """explain_pod for every pending pod, each with its own profile when given a scheduler configuration's."""
    state = ClusterState.from_cluster(cluster)
    return [explain_pod(p, state, profile=profile.judge_with(p) if isinstance(profile, Profiles) else profile)
            for p in cluster.pending]


def final_state_message(pod: Pod, state: ClusterState, profile: Profile = DEFAULT_PROFILE) -> str | None:
    """kube-scheduler's FitError message for `pod` against `state` (a plan's final state), or None when some
    node would accept it there (it stays pending by the optimum's choice: a gang, a higher priority)."""
    verdicts = run_filters(pod, state, profile.filters)
    if any(v.feasible for v in verdicts):
        return None
    return fit_error_message(len(verdicts), verdicts)
