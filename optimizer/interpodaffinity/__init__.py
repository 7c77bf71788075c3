"""InterPodAffinity: kube-scheduler's pkg/scheduler/framework/plugins/interpodaffinity/ (plugin.go,
filtering.go, scoring.go). Filter semantics and their knowing differences are in .filtering, scoring in
.scoring. Default score weight 2.

Public API (other modules — the verifier, the preference objective — call these, not the internals):

- `PLUGIN: Plugin` — the framework record (pre_filter, filter, pre_score, score, normalize, weight 2).
- Reason constants, upstream text word for word:
  ERR_REASON_AFFINITY_RULES_NOT_MATCH (UnschedulableAndUnresolvable),
  ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH, ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH (Unschedulable).
- `HARD_POD_AFFINITY_WEIGHT` (1): score an existing pod's REQUIRED affinity gives a matching incoming pod.
- `term_namespaces(term, owner, namespace_labels) -> frozenset[str] | None`: the namespaces a term selects
  (explicit ∪ known namespaces matching namespaceSelector; owner's own namespace when both unset);
  None means every namespace (namespaceSelector `{}`).
- `term_matches(term, owner, candidate, namespace_labels, *, owner_incoming=False) -> bool`: whether a
  candidate pod matches the owner's term by namespace and label selector (topology is the caller's job).
- `affinity_term(term, owner)` / `merged_affinity_term(term, owner, namespace_labels) -> AffinityTerm`:
  the resolved term (framework.AffinityTerm) with `.matches(pod, ns_labels)`, for callers that evaluate
  one term against many pods.
- `PreFilterState` / `PreScoreState`: what pre_filter / pre_score return (pre_filter None = upstream Skip).

`namespace_labels` is ClusterState.namespace_labels: {namespace name: its labels} for known namespaces.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from ...models.objects import Pod
from ...models.schedulerconfig import InterPodAffinityArgs

from ..framework import Encoding, Plugin
from ..state import ClusterState, NodeInfo
from . import batch, encoding, vector

from .filtering import (
    ERR_REASON_AFFINITY_RULES_NOT_MATCH,
    ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH,
    ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH,
    NAME,
    AffinityTerm,
    PreFilterState,
    affinity_term,
    filter,
    merged_affinity_term,
    pod_matches_all_terms,
    pre_filter,
    term_matches,
    term_namespaces,
)
from .scoring import HARD_POD_AFFINITY_WEIGHT, PreScoreState, normalize, pre_score, score

WEIGHT = 2

PLUGIN = Plugin(
    name=NAME,
    pre_filter=pre_filter,
    filter=filter,
    pre_score=pre_score,
    score=score,
    normalize=normalize,
    weight=WEIGHT,
    # upstream's Skip, read off the snapshot's HavePodsWithRequiredAntiAffinityList / HavePodsWithAffinityList
    pre_filter_skip=lambda pod, state: not (pod.affinity.pod_required or pod.affinity.anti_required)
    and not state.nodes_with_required_anti_affinity,
    filter_skipped=lambda pre: pre is None,
    pre_score_skip=lambda pod, state: not (pod.affinity.pod_preferred or pod.affinity.anti_preferred)
    and not state.nodes_with_affinity,
    score_skipped=lambda pre: pre is None,
    placed_guard=batch.Guard,
    final_state_judge=batch.Judge,
    encoding=Encoding(encode=encoding.encode, static_mask=encoding.static_mask,
                      static_reasons=encoding.static_reasons, upper_bound=encoding.upper_bound_vector,
                      interactions=encoding.interactions, existing_terms=encoding.existing_terms,
                      blame=lambda reason: ("pod", "spec.affinity"), soft=encoding.encode_soft),
    vector=vector.new,
)



def _has_preferred(pod: Pod) -> bool:
    return bool(pod.affinity.pod_preferred or pod.affinity.anti_preferred)


def new(args: InterPodAffinityArgs) -> Plugin:
    """InterPodAffinity with a profile's args (PLUGIN for the defaults): hardPodAffinityWeight weighs the
    existing pods' required affinity terms in Score (0: not at all); ignorePreferredTermsOfExistingPods skips
    Score for a pod without preferred terms of its own (upstream's PreScore Skip). Filter is unchanged."""
    if args == InterPodAffinityArgs():
        return PLUGIN
    ignore = args.ignore_preferred_terms_of_existing_pods

    def pre_score_args(pod: Pod, state: ClusterState, feasible: Sequence[NodeInfo]) -> PreScoreState | None:
        if ignore and not _has_preferred(pod):
            return None
        return pre_score(pod, state, feasible, args.hard_pod_affinity_weight)

    skip = PLUGIN.pre_score_skip
    if ignore:
        skip = lambda pod, state: not _has_preferred(pod)  # noqa: E731
    return replace(PLUGIN, pre_score=pre_score_args, pre_score_skip=skip, vector=None)


__all__ = [
    "new",
    "AffinityTerm",
    "ERR_REASON_AFFINITY_RULES_NOT_MATCH",
    "ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH",
    "ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH",
    "HARD_POD_AFFINITY_WEIGHT",
    "NAME",
    "PLUGIN",
    "PreFilterState",
    "PreScoreState",
    "WEIGHT",
    "affinity_term",
    "merged_affinity_term",
    "pod_matches_all_terms",
    "term_matches",
    "term_namespaces",
]
