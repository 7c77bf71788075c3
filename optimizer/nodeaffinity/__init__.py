"""NodeAffinity: the pod's nodeSelector and required node affinity filter nodes; its preferred node
affinity scores them (weight 2 in the default profile).

Reproduces kubernetes/kubernetes pkg/scheduler/framework/plugins/nodeaffinity/node_affinity.go.
Knowing differences:
- addedAffinity (a KubeSchedulerConfiguration's NodeAffinityArgs) through `new(args)`: its required terms
  are checked before the pod's own (reason "node(s) didn't match scheduler-enforced node affinity"), in the
  simulator, the verifier and the model's static mask; its preferred terms add to kube-scheduler's Score
  (the greedy simulator) but not to podplan's preference objective, which scores the pods' own terms;
- upstream's PreFilterResult (the node names pinned by matchFields metadata.name In in every term) is
  applied by the framework, which marks the other nodes "node(s) didn't satisfy plugin(s) [NodeAffinity]";
  here the Filter returns that same reason for those nodes, and "pod affinity terms conflict" on every
  node when the pinned set is empty (upstream: a PreFilter rejection of the whole pod);
- requirements upstream fails to parse (e.g. NotIn with no values) are matched as written rather than
  dropping their term; API validation rejects such pods anyway.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from ...models.objects import Pod
from ...models.schedulerconfig import NodeAffinityArgs

from ..framework import Encoding, Plugin, Reads, Reason
from ..state import ClusterState, NodeInfo
from . import encoding, vector
from .filtering import (ERR_REASON_CONFLICT, ERR_REASON_ENFORCED, ERR_REASON_POD, ERR_REASON_PRE_FILTER_RESULT, NAME,
                        PreFilterState, filter_node, pre_filter, required_matches)
from .scoring import default_normalize_score, normalize, pre_score, preferred_score, score

WEIGHT = 2

PLUGIN = Plugin(
    name=NAME,
    pre_filter=pre_filter,
    filter=filter_node,
    pre_score=pre_score,
    score=score,
    normalize=normalize,
    weight=WEIGHT,
    filter_reads=Reads.NODE,
    score_reads=Reads.NODE,
    filter_skipped=lambda pre: getattr(pre, "skip", False),
    encoding=Encoding(encode=encoding.encode, static_mask=encoding.static_mask,
                      static_reasons=encoding.static_reasons, existing_terms=encoding.existing_terms,
                      blame=lambda reason: ("pod", "spec.nodeSelector / spec.affinity.nodeAffinity"),
                      soft=encoding.encode),
    vector=vector.new,
)



def new(args: NodeAffinityArgs) -> Plugin:
    """NodeAffinity with a profile's addedAffinity (PLUGIN itself when there is none)."""
    if args == NodeAffinityArgs():
        return PLUGIN
    added, added_preferred = args.added_required, args.added_preferred

    def enforced(name: str, labels: Any) -> bool:
        return added is None or added.matches(name, labels)

    def pre_filter_added(pod: Pod, state: ClusterState) -> PreFilterState:
        pre = pre_filter(pod, state)
        # upstream skips PreFilter only when neither the pod nor the profile asks for node affinity
        return PreFilterState(skip=False) if pre.skip and added is not None else pre

    def filter_added(pod: Pod, pre: PreFilterState | None, info: NodeInfo, state: ClusterState) -> list[Reason]:
        pre = pre if pre is not None else pre_filter_added(pod, state)
        if pre.node_names is not None and info.name not in pre.node_names:
            return filter_node(pod, pre, info, state)  # the PreFilterResult is applied before any Filter
        if not enforced(info.name, info.node.labels):
            return [Reason(NAME, ERR_REASON_ENFORCED, unresolvable=True)]
        return filter_node(pod, pre, info, state)

    def score_added(pod: Pod, pre: Any, info: NodeInfo, state: ClusterState) -> int:
        node = info.node
        return preferred_score(pod, node) + sum(t.weight for t in added_preferred
                                                if t.weight and t.preference.matches(node.name, node.labels))

    def static_mask(problem: Any, cls: Any) -> np.ndarray | None:
        own = encoding.static_mask(problem, cls)
        if added is None:
            return own
        key = ("nodeaffinity.added",)
        mask = problem.cache.get(key)
        if mask is None:
            mask = problem.cache[key] = np.fromiter((enforced(n.name, n.labels) for n in problem.nodes), bool,
                                                    len(problem.nodes))
        return mask if own is None else own & mask

    def static_reasons(problem: Any, cls: Any, info: NodeInfo) -> list[Reason]:
        return filter_added(cls.rep, pre_filter_added(cls.rep, problem.state), info, problem.state)

    assert PLUGIN.encoding is not None
    return replace(PLUGIN, pre_filter=pre_filter_added, filter=filter_added, score=score_added, vector=None,
                   encoding=replace(PLUGIN.encoding, static_mask=static_mask, static_reasons=static_reasons))


__all__ = ["new", "ERR_REASON_ENFORCED", "PLUGIN", "NAME", "WEIGHT", "ERR_REASON_POD", "ERR_REASON_CONFLICT", "ERR_REASON_PRE_FILTER_RESULT",
           "PreFilterState", "required_matches", "preferred_score", "default_normalize_score"]
