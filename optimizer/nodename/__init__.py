"""NodeName: a pod that names a node in spec.nodeName fits only that node (Filter only).

Reproduces kubernetes/kubernetes pkg/scheduler/framework/plugins/nodename/node_name.go; the predicate is in
.filtering, the CP-SAT form in .encoding.
"""
from __future__ import annotations

from ..framework import Encoding, Plugin, Reads
from . import encoding, vector
from .filtering import ERR_REASON, NAME, filter_node, fits

PLUGIN = Plugin(
    name=NAME,
    filter=filter_node,
    filter_reads=Reads.NODE,
    encoding=Encoding(encode=encoding.encode, static_mask=encoding.static_mask,
                      static_reasons=encoding.static_reasons, blame=lambda reason: ("pod", "spec.nodeName")),
    vector=vector.new,
)

__all__ = ["PLUGIN", "NAME", "ERR_REASON", "fits"]
