"""A toy rule added through the plugin contract, as README "How to add a rule" shows it: a node labelled
`example.com/max-pods: "N"` takes at most N pods in all. One package (this one) and one registry line
(`Profile(PLUGINS + (PLUGIN,))` in the test) are everything greedy, verify and solve need."""
from __future__ import annotations

from podplan.optimizer.framework import Encoding, Plugin, Reads

from . import encoding
from .filtering import NAME, filter_node

PLUGIN = Plugin(
    name=NAME,
    filter=filter_node,
    filter_reads=Reads.NODE_PODS,  # the node's own pods: the simulator caches it per node generation
    encoding=Encoding(encode=encoding.encode, static_mask=encoding.static_mask,
                      static_reasons=encoding.static_reasons, upper_bound=encoding.upper_bound,
                      blame=lambda reason: ("node", f"metadata.labels[{encoding.LABEL}]")),
)
