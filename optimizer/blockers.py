"""Words for `explain --why-pending`: which object carries a blocking field, and upstream's reason for a rule
the CP-SAT core names without a per-node verdict (a dynamic constraint: anti-affinity between pending pods,
a spread's skew, a node's room shared by several pods).

A replica's fields come from its workload's pod template: the object to edit is `Deployment/ns/web` at
`spec.template.spec.nodeSelector`, never a sibling replica (podplan made those names up; the controller will
pick others).
"""
from __future__ import annotations

from collections.abc import Mapping

from ..models.objects import Pod
from .interpodaffinity.batch import ERR_REASON_BREAKS_AFFINITY
from .interpodaffinity.encoding import AFF_FIELD, ANTI_FIELD
from .interpodaffinity.filtering import (ERR_REASON_AFFINITY_RULES_NOT_MATCH, ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH,
                                         ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH)
from .model import GANG
from .nodeports.filtering import ERR_REASON as PORTS_REASON
from .noderesources.filtering import ERR_REASON_INSUFFICIENT, ERR_REASON_TOO_MANY_PODS
from .podtopologyspread.batch import ERR_REASON_BREAKS_SPREAD
from .podtopologyspread.encoding import FIELD as SPREAD_FIELD
from .podtopologyspread.filtering import ERR_REASON_CONSTRAINTS_NOT_MATCH

ALLOCATABLE = "status.allocatable."
# NodeAffinity's encoding blames both fields; the pod says which one it has.
NODE_AFFINITY_FIELDS = "spec.nodeSelector / spec.affinity.nodeAffinity"
NODE_SELECTOR = "spec.nodeSelector"
REQUIRED_NODE_AFFINITY = "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
GANG_REASON = "all-or-nothing: the group's pods are placed together or not at all"


def carrier(obj: str, field_path: str, pods: Mapping[str, Pod], asked: Pod, same_class: set[str]) -> tuple[str, str]:
    """(object, field) to show for a group naming `obj` ("Pod/ns/name", "Node/x", ...): a pod of a workload
    -> the workload and its template's field; a pod of the asked pod's class -> the asked pod itself."""
    if not obj.startswith("Pod/"):
        return obj, field_path
    key = obj[len("Pod/"):]
    pod = asked if key in same_class else pods.get(key)
    if pod is None:
        return obj, field_path
    if field_path == NODE_AFFINITY_FIELDS:
        if pod.node_selector and pod.affinity.node_required is None:
            field_path = NODE_SELECTOR
        elif not pod.node_selector and pod.affinity.node_required is not None:
            field_path = REQUIRED_NODE_AFFINITY
    if pod.workload and field_path.startswith("spec."):
        return pod.workload, "spec.template." + field_path
    return f"Pod/{pod.key}", field_path


def dynamic_reason(plugin: str, field_path: str, own: bool) -> str:
    """Upstream's reason for a constraint of `plugin` at `field_path`; `own`: the field is the asked pod's own
    (its class's), not another pod's term that the asked pod would break."""
    if field_path.startswith(ANTI_FIELD):
        return ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH if own else ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH
    if field_path.startswith(AFF_FIELD):
        return ERR_REASON_AFFINITY_RULES_NOT_MATCH if own else ERR_REASON_BREAKS_AFFINITY
    if field_path.startswith(SPREAD_FIELD):
        return ERR_REASON_CONSTRAINTS_NOT_MATCH if own else ERR_REASON_BREAKS_SPREAD
    if field_path.startswith("hostPort "):
        return PORTS_REASON
    if field_path == ALLOCATABLE + "pods":
        return ERR_REASON_TOO_MANY_PODS
    if field_path.startswith(ALLOCATABLE):
        return ERR_REASON_INSUFFICIENT.format(resource=field_path[len(ALLOCATABLE):])
    if plugin == GANG:
        return GANG_REASON
    return f"a required rule of {plugin}"
