"""What Filter and Score share: the effective constraints of a pod, node inclusion policies and pod counting.

Reproduces kube-scheduler pkg/scheduler/framework/plugins/podtopologyspread/common.go and plugin.go
(systemDefaultConstraints, buildDefaultConstraints, filterTopologySpreadConstraints,
matchNodeInclusionPolicies, nodeLabelsMatchSpreadConstraints, countPodsMatchSelector) and
pkg/scheduler/framework/plugins/helper/spread.go (DefaultSelector), for the default profile:
defaultingType System and the MinDomains / NodeInclusionPolicy / MatchLabelKeys features on.

Knowing differences:
- matchLabelKeys are not merged here: models.parse already ANDed them into label_selector (as kube-apiserver
  does since 1.34), so the selector is taken as is.
- DefaultSelector finds the controller of a pod by its controller ownerReference (kind + name, in the pod's
  namespace) among ClusterState.workloads, as upstream does through its listers. When that ReplicaSet is not
  in the input but the pod belongs to a Deployment (Pod.workload), the Deployment stands in for the ReplicaSet
  it would have created: its selector, without the pod-template-hash requirement the real ReplicaSet adds.
  A pod with no controller ownerReference but a Pod.workload is treated as owned by that workload.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from ...models.objects import Node, Pod, TopologySpreadConstraint, Workload
from ...models.selectors import LabelSelector, Requirement
from ...models.taints import first_untolerated
from ..state import ClusterState, NodeInfo

NAME = "PodTopologySpread"

HOSTNAME_KEY = "kubernetes.io/hostname"  # v1.LabelHostname
ZONE_KEY = "topology.kubernetes.io/zone"  # v1.LabelTopologyZone
DO_NOT_SCHEDULE = "DoNotSchedule"
SCHEDULE_ANYWAY = "ScheduleAnyway"
HONOR = "Honor"
IGNORE = "Ignore"

# plugin.go systemDefaultConstraints: used when the pod has no constraints of its own (defaultingType System).
SYSTEM_DEFAULT_CONSTRAINTS: tuple[TopologySpreadConstraint, ...] = (
    TopologySpreadConstraint(max_skew=3, topology_key=HOSTNAME_KEY, when_unsatisfiable=SCHEDULE_ANYWAY,
                             label_selector=None),
    TopologySpreadConstraint(max_skew=5, topology_key=ZONE_KEY, when_unsatisfiable=SCHEDULE_ANYWAY,
                             label_selector=None),
)



@dataclass(frozen=True)
class Defaults:
    """PodTopologySpreadArgs as the plugin uses them: the constraints a pod without any of its own gets (with
    the default selector), and whether they are the system defaults (defaultingType System: only then may a
    node without every topology key still be scored)."""

    constraints: tuple[TopologySpreadConstraint, ...] = SYSTEM_DEFAULT_CONSTRAINTS
    system: bool = True


SYSTEM_DEFAULTS = Defaults()

# helper/spread.go: only these controllers contribute a selector (Deployment: see the module docstring).
_SELECTOR_CONTROLLERS = ("ReplicationController", "ReplicaSet", "StatefulSet")


@dataclass(frozen=True)
class SpreadConstraint:
    """The internal topologySpreadConstraint: selector parsed, unset fields defaulted
    (minDomains 1, nodeAffinityPolicy Honor, nodeTaintsPolicy Ignore)."""

    max_skew: int
    topology_key: str
    selector: LabelSelector | None  # None matches nothing; empty matches every pod but counts none
    min_domains: int = 1
    node_affinity_policy: str = HONOR
    node_taints_policy: str = IGNORE


def _effective(c: TopologySpreadConstraint, selector: LabelSelector | None) -> SpreadConstraint:
    return SpreadConstraint(
        max_skew=c.max_skew,
        topology_key=c.topology_key,
        selector=selector,
        min_domains=c.min_domains if c.min_domains is not None else 1,
        node_affinity_policy=c.node_affinity_policy or HONOR,
        node_taints_policy=c.node_taints_policy or IGNORE,
    )


def own_constraints(pod: Pod, action: str) -> tuple[SpreadConstraint, ...]:
    """filterTopologySpreadConstraints: the pod's own constraints with whenUnsatisfiable == action."""
    return tuple(_effective(c, c.label_selector) for c in pod.spread_constraints if c.when_unsatisfiable == action)


def _find_workload(state: ClusterState, kind: str, namespace: str, name: str) -> Workload | None:
    """The first of the state's workloads of that kind, namespace and name: looked up in an index built once
    per state (a scan of 10,500 workloads per pod was a sixth of greedy's time at 5,000 nodes)."""
    index = state.memo.get(_WORKLOAD_INDEX)
    if index is None:
        index = state.memo[_WORKLOAD_INDEX] = {}
        for w in state.workloads:
            index.setdefault((w.kind, w.namespace, w.name), w)
    return index.get((kind, namespace, name))


_WORKLOAD_INDEX = ("podtopologyspread", "workloads by kind, namespace and name")


def _controller_workload(pod: Pod, state: ClusterState) -> Workload | None:
    """The ReplicationController / ReplicaSet / StatefulSet whose selector DefaultSelector adds, if any."""
    owner = pod.controller
    if owner is not None:
        if owner.kind not in _SELECTOR_CONTROLLERS:
            return None  # a Job, DaemonSet, ... contributes no selector upstream
        found = _find_workload(state, owner.kind, pod.namespace, owner.name)
        if found is not None or owner.kind != "ReplicaSet":
            return found
    kind, _, rest = pod.workload.partition("/")
    namespace, _, name = rest.partition("/")
    if namespace != pod.namespace:
        return None
    # The ReplicaSet a Deployment creates may be absent from the input: the Deployment stands in for it.
    if kind == "Deployment" or (owner is None and kind in _SELECTOR_CONTROLLERS):
        return _find_workload(state, kind, namespace, name)
    return None


def default_selector(pod: Pod, state: ClusterState) -> LabelSelector | None:
    """helper.DefaultSelector: the Services of the pod's namespace selecting it, ANDed with the selector of its
    ReplicationController / ReplicaSet / StatefulSet. None when that is empty (no default constraints)."""
    label_set: dict[str, str] = {}
    for svc in state.services:
        if svc.namespace != pod.namespace:
            continue
        # An empty selector selects every pod and merges nothing, so it can be skipped as a nil one is.
        if svc.selector and all(pod.labels.get(k) == v for k, v in svc.selector.items()):
            label_set.update(svc.selector)
    extra: tuple[Requirement, ...] = ()
    workload = _controller_workload(pod, state)
    if workload is not None and workload.selector is not None:
        sel = workload.selector
        if workload.kind == "ReplicationController":
            # An RC selector is a plain map, merged into the set (later keys win) as labels.Merge does.
            label_set.update(dict(sel.match_labels))
        else:
            extra = tuple(Requirement(k, "In", (v,)) for k, v in sel.match_labels) + sel.match_expressions
    if not label_set and not extra:
        return None
    return LabelSelector(match_labels=tuple(sorted(label_set.items())), match_expressions=extra)


def default_constraints(pod: Pod, state: ClusterState, action: str,
                        defaults: Defaults = SYSTEM_DEFAULTS) -> tuple[SpreadConstraint, ...]:
    """buildDefaultConstraints: the profile's default constraints of `action` with the pod's default selector
    (the system defaults are all ScheduleAnyway, so DoNotSchedule gets none from them)."""
    picked = [c for c in defaults.constraints if c.when_unsatisfiable == action]
    if not picked:
        return ()
    selector = default_selector(pod, state)
    if selector is None:
        return ()
    return tuple(_effective(c, selector) for c in picked)


def constraints_for(pod: Pod, state: ClusterState, action: str,
                    defaults: Defaults = SYSTEM_DEFAULTS) -> tuple[SpreadConstraint, ...]:
    """The pod's own constraints of `action` if it has ANY constraint, else the profile's defaults."""
    if pod.spread_constraints:
        return own_constraints(pod, action)
    return default_constraints(pod, state, action, defaults)


def filter_constraints(pod: Pod, state: ClusterState, defaults: Defaults = SYSTEM_DEFAULTS) -> tuple[SpreadConstraint, ...]:
    """The hard (DoNotSchedule) constraints Filter enforces for `pod`."""
    return constraints_for(pod, state, DO_NOT_SCHEDULE, defaults)


def score_constraints(pod: Pod, state: ClusterState, defaults: Defaults = SYSTEM_DEFAULTS) -> tuple[SpreadConstraint, ...]:
    """The soft (ScheduleAnyway) constraints Score uses for `pod`, default constraints included."""
    return constraints_for(pod, state, SCHEDULE_ANYWAY, defaults)


def has_all_keys(labels: Mapping[str, str], constraints: Sequence[SpreadConstraint]) -> bool:
    """nodeLabelsMatchSpreadConstraints: the node carries every constraint's topology key."""
    return all(c.topology_key in labels for c in constraints)


def required_node_affinity_matches(pod: Pod, node: Node) -> bool:
    """nodeaffinity.GetRequiredNodeAffinity(pod).Match(node): nodeSelector AND required node affinity."""
    labels = node.labels
    if any(labels.get(k) != v for k, v in pod.node_selector.items()):
        return False
    required = pod.affinity.node_required
    return required is None or required.matches(node.name, labels)


def node_eligible(constraint: SpreadConstraint, pod: Pod, node: Node) -> bool:
    """matchNodeInclusionPolicies: may `node` hold a domain of `constraint` for `pod`?

    Honor nodeAffinityPolicy: the pod's nodeSelector + required node affinity must match the node.
    Honor nodeTaintsPolicy: every NoSchedule/NoExecute taint of the node must be tolerated.
    """
    if constraint.node_affinity_policy == HONOR and not required_node_affinity_matches(pod, node):
        return False
    if constraint.node_taints_policy == HONOR and first_untolerated(node.taints, pod.tolerations) is not None:
        return False
    return True


def eligibility_test(constraint: SpreadConstraint, pod: Pod) -> Callable[[Node], bool] | None:
    """node_eligible(constraint, pod, .) as a function, or None when every node is eligible for this pod
    (the policies are Ignore, or Honor affinity for a pod without nodeSelector or required node affinity)."""
    check_affinity = constraint.node_affinity_policy == HONOR and (
        bool(pod.node_selector) or pod.affinity.node_required is not None)
    if not check_affinity and constraint.node_taints_policy != HONOR:
        return None
    return lambda node: node_eligible(constraint, pod, node)


def counts_toward(selector: LabelSelector | None, namespace: str, other: Pod) -> bool:
    """countPodsMatchSelector for one pod: same namespace, not terminating, selector non-empty and matching."""
    if selector is None or selector.empty:
        return False
    return other.namespace == namespace and not other.terminating and selector.matches(other.labels)


def self_match(constraint: SpreadConstraint, pod: Pod) -> bool:
    """Does the incoming pod match its own constraint (an empty selector matches it, a nil one does not)?"""
    return constraint.selector is not None and constraint.selector.matches(pod.labels)


def count_on_node(info: NodeInfo, selector: LabelSelector | None, namespace: str) -> int:
    """countPodsMatchSelector over the pods on one node, as counts_toward judges each pod.

    An empty selector counts no pod (upstream returns 0 for selector.Empty()), though it matches the incoming
    pod itself in Filter's self-match; a nil selector counts none and matches nothing.
    """
    if selector is None or selector.empty:
        return 0
    if not selector.match_expressions:
        # The common case, matchLabels only: test the pairs inline (several times faster than matches()).
        pairs = selector.match_labels
        if len(pairs) == 1:
            ((k, v),) = pairs
            return sum(1 for p in info.pods.values()
                       if p.labels.get(k) == v and p.namespace == namespace and not p.terminating)
        return sum(1 for p in info.pods.values()
                   if p.namespace == namespace and not p.terminating
                   and all(p.labels.get(k) == v for k, v in pairs))
    return sum(1 for p in info.pods.values()
               if p.namespace == namespace and not p.terminating and selector.matches(p.labels))


def count_matching(constraint: SpreadConstraint, pod: Pod, state: ClusterState,
                   constraints: Sequence[SpreadConstraint] | None = None) -> dict[str, int]:
    """PreFilter's TpValueToMatchNum for one constraint of `pod`: topology value -> matching pods.

    The keys are exactly the eligible domains: values of the topology key on nodes that carry the keys of
    all `constraints` (default: just this one) and pass the constraint's inclusion policies; domains without
    a matching pod map to 0. Pods counted: same namespace as `pod`, not terminating, matching the selector.
    """
    keys = constraints if constraints is not None else (constraint,)
    eligible = eligibility_test(constraint, pod)
    counts: dict[str, int] = {}
    tp_key = constraint.topology_key
    for info in state.nodes.values():
        node = info.node
        if not has_all_keys(node.labels, keys) or (eligible is not None and not eligible(node)):
            continue
        value = node.labels[tp_key]
        counts[value] = counts.get(value, 0) + count_on_node(info, constraint.selector, pod.namespace)
    return counts


def global_min(counts: Mapping[str, int], min_domains: int) -> int:
    """preFilterState.minMatchNum: the smallest domain count, or 0 with fewer domains than minDomains."""
    if len(counts) < min_domains or not counts:
        return 0
    return min(counts.values())
