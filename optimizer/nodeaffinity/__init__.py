"""NodeAffinity: the pod's nodeSelector and required node affinity filter nodes; its preferred node
affinity scores them (weight 2 in the default profile).

Reproduces kubernetes/kubernetes pkg/scheduler/framework/plugins/nodeaffinity/node_affinity.go.
Knowing differences:
- no addedAffinity plugin argument (the default profile has none);
- upstream's PreFilterResult (the node names pinned by matchFields metadata.name In in every term) is
  applied by the framework, which marks the other nodes "node(s) didn't satisfy plugin(s) [NodeAffinity]";
  here the Filter returns that same reason for those nodes, and "pod affinity terms conflict" on every
  node when the pinned set is empty (upstream: a PreFilter rejection of the whole pod);
- requirements upstream fails to parse (e.g. NotIn with no values) are matched as written rather than
  dropping their term; API validation rejects such pods anyway.
"""
from __future__ import annotations

from ..framework import Encoding, Plugin, Reads
from . import encoding, vector
from .filtering import (ERR_REASON_CONFLICT, ERR_REASON_POD, ERR_REASON_PRE_FILTER_RESULT, NAME, PreFilterState,
                        filter_node, pre_filter, required_matches)
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
                      blame=lambda reason: ("pod", "spec.nodeSelector / spec.affinity.nodeAffinity")),
    vector=vector.new,
)

__all__ = ["PLUGIN", "NAME", "WEIGHT", "ERR_REASON_POD", "ERR_REASON_CONFLICT", "ERR_REASON_PRE_FILTER_RESULT",
           "PreFilterState", "required_matches", "preferred_score", "default_normalize_score"]
