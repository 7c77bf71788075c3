"""InterPodAffinity PreScore/Score/NormalizeScore, reproducing kube-scheduler's
pkg/scheduler/framework/plugins/interpodaffinity/scoring.go with the default args
(hardPodAffinityWeight 1, ignorePreferredTermsOfExistingPods false).

PreScore builds topology scores {topology key: {value: weight sum}} from every existing pod on a node that
has labels and carries the term's topology key:
- the incoming pod's preferred affinity (+weight) and anti-affinity (-weight) terms matching the existing pod;
- symmetric: the existing pod's REQUIRED affinity terms matching the incoming pod (+hardPodAffinityWeight),
  its preferred affinity (+weight) and preferred anti-affinity (-weight) terms matching the incoming pod.
When the incoming pod has no preferred terms only pods with affinity are visited, as upstream.
Score is the sum over the node's labels of those topology scores; NormalizeScore maps them to
int(100 * (s - min) / (max - min)) over the scored nodes (float arithmetic, truncated), all 0 when max == min.

Knowing differences: upstream's PreScore Skip (nothing matched anywhere) is `pre_score` returning None and
every node scoring 0, which is what a skipped plugin contributes. A profile's InterPodAffinityArgs come in
through the package's `new(args)`.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from ...models.objects import Pod, PodAffinityTerm
from ..framework import MAX_NODE_SCORE
from ..state import ClusterState, NodeInfo

from .filtering import _NO_LABELS, _existing_term_matches, cached, incoming_matcher, merged_affinity_term, node_cache

HARD_POD_AFFINITY_WEIGHT = 1

TopologyScore = dict[str, dict[str, int]]


@dataclass(frozen=True)
class PreScoreState:
    topology_score: TopologyScore


def _add(scores: TopologyScore, key: str, value: str, weight: int) -> None:
    values = scores.setdefault(key, {})
    values[value] = values.get(value, 0) + weight


def _existing_terms_toward(incoming: Pod, ns_labels: Mapping[str, str], existing: Pod,
                           labels: Mapping[str, str], scores: TopologyScore, hard_weight: int) -> None:
    """The symmetric half of processExistingPod: the existing pod's own terms judged on the incoming pod
    (its required affinity terms count hardPodAffinityWeight, none when that is 0)."""
    a = existing.affinity
    weighted: list[tuple[PodAffinityTerm, int]] = [(t, hard_weight) for t in a.pod_required] if hard_weight > 0 else []
    weighted += [(w.term, w.weight) for w in a.pod_preferred]
    weighted += [(w.term, -w.weight) for w in a.anti_preferred]
    for term, weight in weighted:
        value = labels.get(term.topology_key)
        if value is not None and _existing_term_matches(term, existing, incoming, ns_labels):
            _add(scores, term.topology_key, value, weight)


def _node_scores(info: NodeInfo, pod: Pod, ns_labels: Mapping[str, str],
                 weighted: list[tuple[Callable[[Pod], bool], str, int]], hard_weight: int) -> TopologyScore:
    """processExistingPod over one node's pods: its share of the topology scores."""
    labels = info.node.labels
    scores: TopologyScore = {}
    # The incoming pod's preferred terms against every pod, with the node's pairs resolved once.
    node_terms = [(m, key, labels[key], w) for m, key, w in weighted if key in labels]
    if node_terms:
        for existing in info.pods.values():
            for matches, key, value, weight in node_terms:
                if matches(existing):
                    _add(scores, key, value, weight)
    # Only pods with affinity have terms of their own to judge the incoming pod by.
    for existing in info.pods_with_affinity.values():
        _existing_terms_toward(pod, ns_labels, existing, labels, scores, hard_weight)
    return scores


def pre_score(pod: Pod, state: ClusterState, feasible: Sequence[NodeInfo],
              hard_weight: int = HARD_POD_AFFINITY_WEIGHT) -> PreScoreState | None:
    """PreScore over the whole cluster (feasible nodes only matter to normalization); None = upstream Skip.
    `hard_weight`: the profile's hardPodAffinityWeight (InterPodAffinityArgs)."""
    a = pod.affinity
    ns_map = state.namespace_labels
    signed = [(w.term, w.weight) for w in a.pod_preferred] + [(w.term, -w.weight) for w in a.anti_preferred]
    resolved = tuple((merged_affinity_term(term, pod, ns_map), weight) for term, weight in signed)
    weighted = [(incoming_matcher(t), t.topology_key, weight) for t, weight in resolved]
    ns_labels = ns_map.get(pod.namespace, _NO_LABELS)
    cache = node_cache(("score", resolved, pod.namespace, frozenset(pod.labels.items()), frozenset(ns_labels.items()),
                        hard_weight))
    scores: TopologyScore = {}
    for info in state.nodes.values():
        # processExistingPod ignores nodes without labels; without incoming preferred terms only pods
        # with affinity can contribute.
        if not info.node.labels or not (info.pods if weighted else info.pods_with_affinity):
            continue
        node_scores = cached(cache, info)
        if node_scores is None:
            node_scores = _node_scores(info, pod, ns_labels, weighted, hard_weight)
            cache[id(info)] = (info, info.generation, node_scores)
        for key, values in node_scores.items():
            for value, weight in values.items():
                _add(scores, key, value, weight)
    return PreScoreState(scores) if scores else None


def score(pod: Pod, pre: PreScoreState | None, node_info: NodeInfo, state: ClusterState) -> int:
    """Sum of the topology scores of the node's (key, value) pairs; may be negative."""
    if pre is None:
        return 0
    labels = node_info.node.labels
    total = 0
    for key, values in pre.topology_score.items():
        value = labels.get(key)
        if value is not None:
            total += values.get(value, 0)
    return total


def normalize(scores: dict[str, int], pre: PreScoreState | None) -> dict[str, int]:
    """NormalizeScore: min-max to 0..100 with upstream's float arithmetic and truncation."""
    if pre is None or not pre.topology_score or not scores:
        return {name: 0 for name in scores}
    lo, hi = min(scores.values()), max(scores.values())
    diff = hi - lo
    if diff <= 0:
        return {name: 0 for name in scores}
    return {name: int(float(MAX_NODE_SCORE) * (float(s - lo) / float(diff))) for name, s in scores.items()}
