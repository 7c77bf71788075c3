"""NodeUnschedulable: a cordoned node (spec.unschedulable) takes only pods that tolerate
node.kubernetes.io/unschedulable:NoSchedule (Filter only).

Reproduces kubernetes/kubernetes pkg/scheduler/framework/plugins/nodeunschedulable/node_unschedulable.go; the
predicate is in .filtering, the CP-SAT form in .encoding.
"""
from __future__ import annotations

from ..framework import Encoding, Plugin, Reads
from . import encoding, vector
from .filtering import ERR_REASON_UNSCHEDULABLE, NAME, TAINT_NODE_UNSCHEDULABLE, filter_node, fits

PLUGIN = Plugin(
    name=NAME,
    filter=filter_node,
    filter_reads=Reads.NODE,
    encoding=Encoding(encode=encoding.encode, static_mask=encoding.static_mask,
                      static_reasons=encoding.static_reasons, blame=lambda reason: ("node", "spec.unschedulable")),
    vector=vector.new,
)

__all__ = ["PLUGIN", "NAME", "ERR_REASON_UNSCHEDULABLE", "TAINT_NODE_UNSCHEDULABLE", "fits"]
