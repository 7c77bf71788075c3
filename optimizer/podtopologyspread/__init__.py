"""PodTopologySpread: kube-scheduler's pod topology spread rule (pkg/scheduler/framework/plugins/podtopologyspread/).

`PLUGIN` is the Plugin record (weight 2); `new(args)` the record for a profile's PodTopologySpreadArgs
(defaultingType List with its defaultConstraints, threaded through as `Defaults`). Filter enforces the pod's DoNotSchedule constraints; Score prefers
nodes whose domains hold fewer matching pods under its ScheduleAnyway constraints, or, when the pod has no
constraints at all, under the system defaults (hostname maxSkew 3, zone maxSkew 5) with a selector built from
the Services / ReplicaSets / StatefulSets selecting it.

Public helpers (for the optimizer, the verifier and explain):
- filter_constraints(pod, state) / score_constraints(pod, state) -> tuple[SpreadConstraint, ...]: the
  effective hard / soft constraints (selectors final, minDomains and inclusion policies defaulted).
- default_selector(pod, state) -> LabelSelector | None: upstream helper.DefaultSelector (None: no defaults).
- node_eligible(constraint, pod, node) -> bool: nodeAffinityPolicy / nodeTaintsPolicy inclusion.
- has_all_keys(node_labels, constraints) -> bool: the node carries every constraint's topology key.
- counts_toward(selector, namespace, other_pod) -> bool: does `other_pod` count for a constraint of a pod
  in `namespace` (same namespace, not terminating, non-empty selector matching)?
- self_match(constraint, pod) -> bool: the incoming pod's own +1 in the skew.
- count_matching(constraint, pod, state, constraints=None) -> {domain: count}: PreFilter's counts; the keys
  are exactly the eligible domains (nodes with all keys of `constraints` that pass the inclusion policies).
- global_min(counts, min_domains) -> int: the global minimum (0 when fewer domains than minDomains).
- count_on_node(node_info, selector, namespace) -> int: matching pods on one node.
- pre_filter / filter_node, pre_score / score_node / normalize: the plugin's entry points.
- ERR_REASON_CONSTRAINTS_NOT_MATCH, ERR_REASON_NODE_LABEL_NOT_MATCH: upstream's reason strings.
"""
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from ...models.objects import Pod
from ...models.schedulerconfig import PodTopologySpreadArgs

from ..framework import Encoding, Plugin
from ..state import ClusterState, NodeInfo, PodIndex
from . import batch, encoding, vector
from .common import (DO_NOT_SCHEDULE, HOSTNAME_KEY, NAME, Defaults, SYSTEM_DEFAULT_CONSTRAINTS, ZONE_KEY, SpreadConstraint, count_matching,
                     count_on_node, counts_toward, default_selector, filter_constraints, global_min, has_all_keys,
                     node_eligible, required_node_affinity_matches, score_constraints, self_match)
from .filtering import (ERR_REASON_CONSTRAINTS_NOT_MATCH, ERR_REASON_NODE_LABEL_NOT_MATCH, PreFilterState,
                        filter_node, pre_filter)
from .scoring import PreScoreState, go_round, normalize, pre_score, score_node

PLUGIN = Plugin(
    name=NAME,
    pre_filter=pre_filter,
    filter=filter_node,
    pre_score=pre_score,
    score=score_node,
    normalize=normalize,
    weight=2,
    filter_skipped=lambda pre: pre is None,
    score_skipped=lambda pre: getattr(pre, "skipped", False),
    placed_guard=batch.Guard,
    final_state_judge=batch.Judge,
    encoding=Encoding(encode=encoding.encode, static_mask=encoding.static_mask,
                      static_reasons=encoding.static_reasons, interactions=encoding.interactions,
                      existing_terms=encoding.existing_terms, blame=lambda reason: ("node", "metadata.labels"),
                      soft=encoding.encode_soft),
    vector=vector.new,
)



def new(args: PodTopologySpreadArgs) -> Plugin:
    """PodTopologySpread with a profile's args (PLUGIN for the defaults). defaultingType List: a pod without
    constraints of its own gets `defaultConstraints` (none when the list is empty) with its default selector,
    in Filter (DoNotSchedule ones), Score, the simulator's guard and the verifier; a node must then carry
    every key to be scored. The model (solve) knows only the pods' own DoNotSchedule constraints:
    `solvable(args)` says whether it may run."""
    if args == PodTopologySpreadArgs():
        return PLUGIN
    defaults = Defaults(args.default_constraints, system=args.uses_system_defaults)

    def pre_filter_args(pod: Pod, state: ClusterState) -> Any:
        return pre_filter(pod, state, defaults)

    def pre_score_args(pod: Pod, state: ClusterState, feasible: Sequence[NodeInfo]) -> Any:
        return pre_score(pod, state, feasible, defaults)

    def guard(state: ClusterState) -> batch.Guard:
        return batch.Guard(state, defaults)

    def judge(state: ClusterState, index: PodIndex) -> batch.Judge:
        return batch.Judge(state, index, defaults)

    return replace(PLUGIN, pre_filter=pre_filter_args, pre_score=pre_score_args, placed_guard=guard,
                   final_state_judge=judge, vector=None)


def solvable(args: PodTopologySpreadArgs) -> bool:
    """Whether solve's model is exact under these args: it encodes only the pods' own hard constraints."""
    return not any(c.when_unsatisfiable == DO_NOT_SCHEDULE for c in args.default_constraints)


__all__ = [
    "new", "solvable", "Defaults",
    "PLUGIN", "NAME", "HOSTNAME_KEY", "ZONE_KEY", "SYSTEM_DEFAULT_CONSTRAINTS", "SpreadConstraint",
    "PreFilterState", "PreScoreState", "ERR_REASON_CONSTRAINTS_NOT_MATCH", "ERR_REASON_NODE_LABEL_NOT_MATCH",
    "filter_constraints", "score_constraints", "default_selector", "node_eligible", "has_all_keys",
    "required_node_affinity_matches", "counts_toward", "self_match", "count_matching", "global_min",
    "count_on_node", "pre_filter", "filter_node", "pre_score", "score_node", "normalize", "go_round",
]
