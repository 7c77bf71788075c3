"""NodeAffinity PreFilter and Filter: nodeSelector AND required node affinity.

Reproduces PreFilter/Filter of kubernetes/kubernetes pkg/scheduler/framework/plugins/nodeaffinity/node_affinity.go
with k8s.io/component-helpers/scheduling/corev1/nodeaffinity.GetRequiredNodeAffinity. The plugin's
addedAffinity argument (scheduler-enforced affinity) is applied by the package's `new(args)`.
"""
from __future__ import annotations

from dataclasses import dataclass

from ...models.objects import Node, Pod

from ..framework import Reason
from ..state import ClusterState, NodeInfo

NAME = "NodeAffinity"

ERR_REASON_POD = "node(s) didn't match Pod's node affinity/selector"
ERR_REASON_ENFORCED = "node(s) didn't match scheduler-enforced node affinity"  # errReasonEnforced
ERR_REASON_CONFLICT = "pod affinity terms conflict"
# The framework's status for nodes a PreFilterResult left out (schedule_one.go findNodesThatFitPod).
ERR_REASON_PRE_FILTER_RESULT = f"node(s) didn't satisfy plugin(s) [{NAME}]"

METADATA_NAME = "metadata.name"


@dataclass(frozen=True)
class PreFilterState:
    """skip: the pod has neither nodeSelector nor required node affinity (upstream PreFilter returns Skip).
    node_names: upstream PreFilterResult.NodeNames (None = all nodes); an empty set is the
    "pod affinity terms conflict" PreFilter rejection."""

    skip: bool
    node_names: frozenset[str] | None = None


def required_matches(pod: Pod, node: Node) -> bool:
    """GetRequiredNodeAffinity(pod).Match(node): every nodeSelector pair, and one required term."""
    labels = node.labels
    for key, value in pod.node_selector.items():
        if labels.get(key) != value:
            return False
    required = pod.affinity.node_required
    return required is None or required.matches(node.name, labels)


def _required_node_names(pod: Pod) -> frozenset[str] | None:
    """The node names every required term pins through matchFields metadata.name In; None = unpinned."""
    required = pod.affinity.node_required
    if required is None or not required.terms:
        return None
    names: set[str] = set()
    for t in required.terms:
        term_names: set[str] | None = None
        for r in t.match_fields:
            if r.key == METADATA_NAME and r.operator == "In":
                # Requirements in one term are ANDed: intersect.
                term_names = set(r.values) if term_names is None else term_names & set(r.values)
        if term_names is None:
            return None  # one unpinned term: terms are ORed, so every node stays a candidate
        names |= term_names
    return frozenset(names)


def pre_filter(pod: Pod, state: ClusterState) -> PreFilterState:
    if pod.affinity.node_required is None and not pod.node_selector:
        return PreFilterState(skip=True)
    return PreFilterState(skip=False, node_names=_required_node_names(pod))


def filter_node(pod: Pod, pre: PreFilterState | None, node_info: NodeInfo, state: ClusterState) -> list[Reason]:
    if pre is None:
        pre = pre_filter(pod, state)
    if pre.skip:
        return []
    if pre.node_names is not None:
        if not pre.node_names:
            return [Reason(NAME, ERR_REASON_CONFLICT, unresolvable=True, pre_filter=True)]
        if node_info.name not in pre.node_names:
            return [Reason(NAME, ERR_REASON_PRE_FILTER_RESULT, unresolvable=True)]
    if required_matches(pod, node_info.node):
        return []
    return [Reason(NAME, ERR_REASON_POD, unresolvable=True)]
