"""kube-scheduler's default profile, as far as podplan models it: which plugins run, in which order."""
from __future__ import annotations

from .framework import Plugin
from .interpodaffinity import PLUGIN as INTER_POD_AFFINITY
from .nodeaffinity import PLUGIN as NODE_AFFINITY
from .nodename import PLUGIN as NODE_NAME
from .nodeports import PLUGIN as NODE_PORTS
from .noderesources import BALANCED_PLUGIN as BALANCED_ALLOCATION
from .noderesources import PLUGIN as NODE_RESOURCES_FIT
from .nodeunschedulable import PLUGIN as NODE_UNSCHEDULABLE
from .podtopologyspread import PLUGIN as POD_TOPOLOGY_SPREAD
from .tainttoleration import PLUGIN as TAINT_TOLERATION

# Filter order of the default profile (pkg/scheduler/apis/config/v1/default_plugins.go).
FILTER_PLUGINS: tuple[Plugin, ...] = (
    NODE_UNSCHEDULABLE, NODE_NAME, TAINT_TOLERATION, NODE_AFFINITY, NODE_PORTS, NODE_RESOURCES_FIT,
    POD_TOPOLOGY_SPREAD, INTER_POD_AFFINITY,
)
# Score plugins of the default profile with their weights carried on each Plugin.
SCORE_PLUGINS: tuple[Plugin, ...] = (
    TAINT_TOLERATION, NODE_AFFINITY, NODE_RESOURCES_FIT, POD_TOPOLOGY_SPREAD, INTER_POD_AFFINITY,
    BALANCED_ALLOCATION,
)
BY_NAME: dict[str, Plugin] = {p.name: p for p in FILTER_PLUGINS + SCORE_PLUGINS}
