"""TaintToleration: a node's NoSchedule/NoExecute taints must all be tolerated; PreferNoSchedule taints the
pod does not tolerate lower the node's score (weight 3 in the default profile).

Reproduces kubernetes/kubernetes pkg/scheduler/framework/plugins/tainttoleration/taint_toleration.go; the
predicate and score are in .filtering, the CP-SAT form in .encoding.
"""
from __future__ import annotations

from ..framework import Encoding, Plugin, Reads
from . import encoding, vector
from .filtering import (ERR_REASON_UNTOLERATED, NAME, WEIGHT, count_intolerable_prefer_no_schedule, filter_node,
                        normalize, pre_score, prefer_no_schedule_tolerations, score, untolerated_reason,
                        untolerated_taint)

PLUGIN = Plugin(
    name=NAME,
    filter=filter_node,
    pre_score=pre_score,
    score=score,
    normalize=normalize,
    weight=WEIGHT,
    filter_reads=Reads.NODE,
    score_reads=Reads.NODE,
    encoding=Encoding(encode=encoding.encode, static_mask=encoding.static_mask,
                      static_reasons=encoding.static_reasons, existing_terms=encoding.existing_terms,
                      blame=lambda reason: ("node", "spec.taints"),
                      soft=encoding.encode),
    vector=vector.new,
)

__all__ = ["PLUGIN", "NAME", "WEIGHT", "ERR_REASON_UNTOLERATED", "count_intolerable_prefer_no_schedule",
           "prefer_no_schedule_tolerations", "untolerated_reason", "untolerated_taint"]
