"""NodePorts: a pod's host ports must be free on the node (Filter only).

Reproduces kubernetes/kubernetes pkg/scheduler/framework/plugins/nodeports/node_ports.go; the predicate is in
.filtering, the CP-SAT form in .encoding.
"""
from __future__ import annotations

from ..framework import Encoding, Plugin, Reads
from . import batch, encoding, vector
from .filtering import ERR_REASON, NAME, check_conflict, filter_node, fits_ports, pre_filter, sanitize

PLUGIN = Plugin(
    name=NAME,
    pre_filter=pre_filter,
    filter=filter_node,
    filter_reads=Reads.NODE_PODS,
    final_state_judge=batch.Judge,
    encoding=Encoding(encode=encoding.encode, static_mask=encoding.static_mask,
                      static_reasons=encoding.static_reasons, upper_bound=encoding.upper_bound_vector,
                      blame=lambda reason: ("pod", "spec.containers[].ports[].hostPort")),
    vector=vector.new,
)

__all__ = ["PLUGIN", "NAME", "ERR_REASON", "check_conflict", "fits_ports", "sanitize"]
