"""kube-scheduler's default profile as podplan models it: one line per rule, in Filter order
(pkg/scheduler/apis/config/v1/default_plugins.go). Score plugins are scored in this order too, with the
weights their packages declare. Adding a rule is one package under optimizer/ and one line here."""
from __future__ import annotations

from .framework import Plugin, Profile
from .interpodaffinity import PLUGIN as INTER_POD_AFFINITY
from .nodeaffinity import PLUGIN as NODE_AFFINITY
from .nodename import PLUGIN as NODE_NAME
from .nodeports import PLUGIN as NODE_PORTS
from .noderesources import BALANCED_PLUGIN as BALANCED_ALLOCATION
from .noderesources import PLUGIN as NODE_RESOURCES_FIT
from .nodeunschedulable import PLUGIN as NODE_UNSCHEDULABLE
from .podtopologyspread import PLUGIN as POD_TOPOLOGY_SPREAD
from .tainttoleration import PLUGIN as TAINT_TOLERATION

PLUGINS: tuple[Plugin, ...] = (
    NODE_UNSCHEDULABLE,
    NODE_NAME,
    TAINT_TOLERATION,
    NODE_AFFINITY,
    NODE_PORTS,
    NODE_RESOURCES_FIT,
    POD_TOPOLOGY_SPREAD,
    INTER_POD_AFFINITY,
    BALANCED_ALLOCATION,
)

DEFAULT_PROFILE = Profile(PLUGINS)
