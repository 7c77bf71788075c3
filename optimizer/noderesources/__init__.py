"""NodeResourcesFit (Filter + LeastAllocated Score, weight 1) and NodeResourcesBalancedAllocation
(Score, weight 1): the two resource plugins of kube-scheduler's default profile.

Reproduces kubernetes/kubernetes pkg/scheduler/framework/plugins/noderesources/fit.go,
resource_allocation.go, least_allocated.go and balanced_allocation.go; see filtering.py and scoring.py
for the details and knowing differences. PLUGIN is NodeResourcesFit, BALANCED_PLUGIN is
NodeResourcesBalancedAllocation; `new(args)` and `new_balanced(args)` build them for a scheduler profile's
plugin arguments (scoring strategy, ignored resources, BalancedAllocation's resources).
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from ...models.objects import Pod
from ...models.schedulerconfig import BalancedAllocationArgs, NodeResourcesFitArgs, ScoringStrategy

from ..framework import Encoding, Plugin, Reads, Reason
from ..state import ClusterState, NodeInfo
from . import batch, encoding, vector
from .filtering import (ERR_REASON_INSUFFICIENT, ERR_REASON_TOO_MANY_PODS, NAME, InsufficientResource, filter_node,
                        fits, insufficient_resources, is_extended_resource_name, is_scalar_resource_name, pre_filter)
from .scoring import (DEFAULT_RESOURCES, PreScoreState, balanced_allocation_score, balanced_pre_score,
                      balanced_resource_score, balanced_score, balanced_scorer, broken_linear, fit_pre_score,
                      fit_score, fit_scorer, identity, least_allocated_score, least_requested_score,
                      most_allocated_score, most_requested_score, pod_request_list,
                      requested_to_capacity_ratio_score, strategy_score)

BALANCED_NAME = "NodeResourcesBalancedAllocation"
WEIGHT = 1
BALANCED_WEIGHT = 1



def _blame(reason: Reason) -> tuple[str, str]:
    """The allocatable field a static NodeResourcesFit verdict comes from (why-pending)."""
    resource = reason.reason.removeprefix("Insufficient ") if reason.reason.startswith("Insufficient ") else "pods"
    return ("node", f"status.allocatable.{resource}")


PLUGIN = Plugin(
    name=NAME,
    pre_filter=pre_filter,
    filter=filter_node,
    pre_score=fit_pre_score,
    score=fit_score,
    normalize=identity,
    weight=WEIGHT,
    filter_reads=Reads.NODE_PODS,
    score_reads=Reads.NODE_PODS,
    final_state_judge=batch.Judge,
    encoding=Encoding(encode=encoding.encode, static_mask=encoding.static_mask,
                      static_reasons=encoding.static_reasons, upper_bound=encoding.upper_bound_vector,
                      blame=_blame),
    vector=vector.new,
)

BALANCED_PLUGIN = Plugin(name=BALANCED_NAME, pre_score=balanced_pre_score, score=balanced_score,
                         normalize=identity, weight=BALANCED_WEIGHT, score_reads=Reads.NODE_PODS,
                         vector=vector.new_balanced)



def new(args: NodeResourcesFitArgs) -> Plugin:
    """NodeResourcesFit with a profile's arguments (PLUGIN itself for the defaults): the scoring strategy's
    Score, and a Filter (and model) that skip the ignored extended resources, as fitsRequest does."""
    if args == NodeResourcesFitArgs():
        return PLUGIN
    plugin = PLUGIN
    if args.scoring_strategy != ScoringStrategy():
        pre_score, score = fit_scorer(args.scoring_strategy)
        plugin = replace(plugin, pre_score=pre_score, score=score, vector=None)  # the vector form is LeastAllocated's
    if not (args.ignored_resources or args.ignored_resource_groups):
        return plugin

    def ignored(resource: str) -> bool:
        return args.ignores(resource, is_extended_resource_name(resource))

    def pre_filter_ignoring(pod: Pod, state: ClusterState) -> Mapping[str, int]:
        return {r: q for r, q in pod.requests.items() if not ignored(r)}

    def filter_ignoring(pod: Pod, pre: Any, info: NodeInfo, state: ClusterState) -> list[Reason]:
        return filter_node(pod, pre if pre is not None else pre_filter_ignoring(pod, state), info, state)

    assert plugin.encoding is not None
    enc = replace(plugin.encoding,
                  encode=lambda ctx: encoding.encode(ctx, ignored),
                  static_mask=lambda problem, cls: encoding.static_mask(problem, cls, ignored),
                  upper_bound=lambda problem, cls: encoding.upper_bound_vector(problem, cls, ignored),
                  static_reasons=lambda problem, cls, info: filter_ignoring(cls.rep, None, info, problem.state))
    # final_state_judge=None: the verifier's fast path knows the default Filter only; it runs this one per pod
    return replace(plugin, pre_filter=pre_filter_ignoring, filter=filter_ignoring, encoding=enc, vector=None,
                   final_state_judge=None)


def new_balanced(args: BalancedAllocationArgs) -> Plugin:
    """NodeResourcesBalancedAllocation over a profile's resources (BALANCED_PLUGIN for the defaults)."""
    if args == BalancedAllocationArgs():
        return BALANCED_PLUGIN
    pre_score, score = balanced_scorer(args.resource_weights)
    return replace(BALANCED_PLUGIN, pre_score=pre_score, score=score, vector=None)


__all__ = ["new", "new_balanced", "PLUGIN", "BALANCED_PLUGIN", "NAME", "BALANCED_NAME", "ERR_REASON_TOO_MANY_PODS", "ERR_REASON_INSUFFICIENT",
           "InsufficientResource", "insufficient_resources", "fits", "is_extended_resource_name",
           "is_scalar_resource_name", "DEFAULT_RESOURCES", "PreScoreState", "pod_request_list",
           "least_requested_score", "least_allocated_score", "balanced_resource_score", "balanced_allocation_score",
           "most_requested_score", "most_allocated_score", "broken_linear", "requested_to_capacity_ratio_score",
           "strategy_score", "fit_scorer", "balanced_scorer"]
