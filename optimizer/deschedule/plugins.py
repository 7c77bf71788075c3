"""The descheduler's strategies, as upstream runs them over one snapshot (pkg/framework/plugins/...):
LowNodeUtilization and HighNodeUtilization (nodeutilization), RemoveDuplicates, and the violation plugins
(node affinity, node taints, inter-pod anti-affinity, topology spread). Each takes the cycle's `Snapshot` and
an `Evictor` and evicts through it; a pod evicted leaves the snapshot at once (the evictor rejects terminating
pods, so later plugins of the cycle do not see it).

Usage is requests (upstream's default usage client): cpu in millicores, memory in bytes, pods as a count;
percentages of allocatable."""
from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ...models.objects import Cluster, Node, Pod
from ...models.taints import first_untolerated
from ..nodeaffinity.filtering import required_matches
from .evictor import Evictor, NamespaceLimit, NodeLimit, Refused, TotalLimit, fits_any, used
from .policy import (ANTI_AFFINITY, DUPLICATES, HIGH, LOW, NODE_AFFINITY, RESOURCES, SPREAD, TAINTS, PluginArgs)

HOSTNAME = "kubernetes.io/hostname"


@dataclass
class Snapshot:
    cluster: Cluster
    nodes: list[Node]  # the descheduler's nodes: the policy's nodeSelector
    pods_on: dict[str, list[Pod]]  # node -> its pods (input order)

    @classmethod
    def of(cls, cluster: Cluster, nodes: list[Node]) -> "Snapshot":
        on: dict[str, list[Pod]] = defaultdict(list)
        for p in cluster.pods:
            on[p.node_name].append(p)
        return cls(cluster, nodes, on)

    def drop(self, pod: Pod) -> None:
        self.pods_on[pod.node_name] = [p for p in self.pods_on[pod.node_name] if p.key != pod.key]


def qos(pod: Pod) -> int:
    """0 BestEffort, 1 Burstable, 2 Guaranteed (from the raw containers' requests and limits)."""
    spec = (pod.raw or {}).get("spec") or {}
    containers = list(spec.get("containers") or ()) + list(spec.get("initContainers") or ())
    any_set, guaranteed = False, bool(containers)
    for c in containers:
        res = c.get("resources") or {}
        req, lim = res.get("requests") or {}, res.get("limits") or {}
        if req or lim:
            any_set = True
        for r in ("cpu", "memory"):
            if r not in lim or (r in req and str(req[r]) != str(lim[r])):
                guaranteed = False
    if not any_set:
        return 0 if pod.raw is not None else (0 if not pod.requests else 1)
    return 2 if guaranteed else 1


def low_to_high(pods: list[Pod]) -> list[Pod]:
    """podutil.SortPodsBasedOnPriorityLowToHigh: priority ascending, then BestEffort, Burstable, Guaranteed
    (stable: the input order breaks ties)."""
    return sorted(pods, key=lambda p: (p.priority, qos(p)))


def _usage(pods: Sequence[Pod]) -> dict[str, int]:
    u = used(pods)
    return {r: u.get(r, 0) for r in RESOURCES}


def _pct(usage: dict[str, int], node: Node) -> dict[str, float]:
    out = {}
    for r in RESOURCES:
        cap = node.allocatable.get(r, 0)
        out[r] = usage[r] / cap * 100 if cap > 0 else 0.0
    return out


def _capped(node: Node, threshold: dict[str, float]) -> dict[str, int]:
    """capNodeCapacitiesToThreshold: the node's allocatable at `threshold` percent (whole units, truncated)."""
    out = {}
    for r in RESOURCES:
        cap = node.allocatable.get(r, 0)
        out[r] = int(threshold[r] * 0.01 * cap) if r in threshold else cap
    return out


def utilization_thresholds(args: PluginArgs, snap: Snapshot) -> dict[str, tuple[dict[str, float], dict[str, float]]]:
    """node -> (low, high) percentages per resource, static or around the average (useDeviationThresholds)."""
    th, tt = args.thresholds, args.target_thresholds
    if not args.use_deviation:
        return {n.name: (th, tt) for n in snap.nodes}
    pct = [_pct(_usage(snap.pods_on.get(n.name, [])), n) for n in snap.nodes]
    avg = {r: sum(p[r] for p in pct) / len(pct) if pct else 0.0 for r in th}
    low = {r: min(100.0, max(0.0, avg[r] - th[r])) for r in th}
    high = {r: min(100.0, max(0.0, avg[r] + tt[r])) for r in th}
    return {n.name: (low, high) for n in snap.nodes}


@dataclass(frozen=True)
class Classified:
    low: list[str]
    high: list[str]
    usage: dict[str, dict[str, float]]  # node -> percentage per resource


def classify(args: PluginArgs, snap: Snapshot) -> Classified:
    """Underutilised: every thresholds resource at or below its threshold (an unschedulable node never is);
    overutilised: some resource above targetThresholds (LowNodeUtilization). HighNodeUtilization: the
    underutilised nodes, and every other schedulable node as a destination."""
    bounds = utilization_thresholds(args, snap)
    low, high, usage = [], [], {}
    for n in snap.nodes:
        pct = _pct(_usage(snap.pods_on.get(n.name, [])), n)
        usage[n.name] = pct
        lo, hi = bounds[n.name]
        below = all(pct[r] <= lo[r] for r in lo)
        if args.name == HIGH:  # an unschedulable node may be emptied, never filled
            if below:
                low.append(n.name)
            elif not n.unschedulable:
                high.append(n.name)
        elif below and not n.unschedulable:
            low.append(n.name)
        elif any(pct[r] > hi[r] for r in hi):
            high.append(n.name)
    return Classified(low, high, usage)


def _tolerates_any(pod: Pod, nodes: Sequence[Node]) -> bool:
    return any(first_untolerated(n.taints, pod.tolerations) is None for n in nodes)


def node_utilization(args: PluginArgs, snap: Snapshot, ev: Evictor) -> str:
    """LowNodeUtilization / HighNodeUtilization's Balance; returns why it stopped (or "")."""
    c = classify(args, snap)
    nodes = {n.name: n for n in snap.nodes}
    # Low empties the overutilized nodes into the underutilized ones, High the other way; both stop on the same
    # checks, only the last one's words differ
    sources, dests = (c.high, c.low) if args.name == LOW else (c.low, c.high)
    if not c.low:
        return "no node is underutilized"
    if len(c.low) <= args.number_of_nodes:
        return "underutilized nodes <= numberOfNodes"
    if len(c.low) == len(snap.nodes):
        return "all nodes are underutilized"
    if not c.high:
        return "all nodes are under target utilization" if args.name == LOW else "no node to move pods to"
    bounds = utilization_thresholds(args, snap)
    usage = {n: _usage(snap.pods_on.get(n, [])) for n in sources + dests}
    avail = {n: _capped(nodes[n], bounds[n][1]) for n in sources + dests}
    counted = RESOURCES  # both count cpu, memory and pods, whatever the thresholds name
    total = {r: sum(avail[n][r] - usage[n][r] for n in dests) for r in counted}

    def above(n: str) -> bool:
        return any(usage[n][r] > avail[n][r] for r in RESOURCES)

    def go_on(n: str) -> bool:
        if args.name == LOW and not above(n):
            return False
        return all(total[r] > 0 for r in counted)

    def weight(n: str) -> int:
        return sum(usage[n].values())

    # sortNodesByUsage: the sum of the usages (cpu in millicores), descending for Low, ascending for High
    sources = sorted(sources, key=lambda n: (-weight(n), n) if args.name == LOW else (weight(n), n))
    dest_nodes = [nodes[n] for n in dests]
    for n in sources:
        removable = [p for p in snap.pods_on.get(n, []) if not ev.why_not(p)]
        if args.only_thresholding:  # evictionModes OnlyThresholdingResources: pods requesting one of them
            removable = [p for p in removable if any(
                (p.requests.get(r, 0) if r != "pods" else 1) for r in args.thresholds)]
        if not removable or not go_on(n):
            continue
        count = 0
        for pod in low_to_high(removable):
            if args.node_limit is not None and count >= args.node_limit:
                break
            if not _tolerates_any(pod, dest_nodes):
                continue
            if not args.namespaces.admits(pod.namespace) or ev.pre_eviction(pod):
                continue
            try:
                ev.evict(pod, args.name)
            except Refused:
                continue
            except (NodeLimit, NamespaceLimit):
                break
            except TotalLimit:
                return "maxNoOfPodsToEvictTotal reached"
            count += 1
            for r in counted:
                q = 1 if r == "pods" else pod.requests.get(r, 0)
                usage[n][r] -= q
                total[r] -= q
            if not go_on(n):
                break
    return ""


def _owner_images(pod: Pod) -> str:
    spec = (pod.raw or {}).get("spec") or {}
    return "#".join(sorted(str(c.get("image", "")) for c in spec.get("containers") or ()))


def remove_duplicates(args: PluginArgs, snap: Snapshot, ev: Evictor) -> str:
    """RemoveDuplicates: per owner (namespace, kind, name, images), the pods above ceil(replicas / nodes they
    may run on) on one node are evicted (the first pod on a node is never a duplicate)."""
    dups: dict[tuple, dict[str, list[Pod]]] = defaultdict(lambda: defaultdict(list))
    occurrences: dict[tuple, int] = defaultdict(int)
    order: list[tuple] = []
    for node in snap.nodes:
        seen: set[tuple] = set()
        for pod in snap.pods_on.get(node.name, []):
            if ev.why_not(pod) or ev.pre_eviction(pod) or not args.namespaces.admits(pod.namespace):
                continue
            if not pod.owner_refs or any(o.kind in args.exclude_owner_kinds for o in pod.owner_refs):
                continue
            keys = tuple(sorted((pod.namespace, o.kind, o.name, _owner_images(pod)) for o in pod.owner_refs))
            for k in keys:
                occurrences[k] += 1
            if keys in seen:
                for k in keys:
                    if k not in dups:
                        order.append(k)
                    dups[k][node.name].append(pod)
            else:
                seen.add(keys)
    for key in order:
        per_node = dups[key]
        pods = [p for ps in per_node.values() for p in ps]
        targets = _target_nodes(pods, snap.nodes)
        if len(targets) < 2:
            continue
        upper = math.ceil(occurrences[key] / len(targets))
        for name, pods_here in per_node.items():
            if len(pods_here) + 1 > upper:
                for pod in pods_here[upper - 1:]:
                    if pod.key in ev.counts.keys:
                        continue
                    try:
                        ev.evict(pod, DUPLICATES)
                    except Refused:
                        continue
                    except (NodeLimit, NamespaceLimit):
                        break
                    except TotalLimit:
                        return "maxNoOfPodsToEvictTotal reached"
    return ""


def _target_nodes(pods: list[Pod], nodes: Sequence[Node]) -> set[str]:
    out: set[str] = set()
    for pod in pods:
        matching = {n.name for n in nodes if first_untolerated(n.taints, pod.tolerations) is None
                    and required_matches(pod, n)}
        if len(matching) > 1:
            out |= matching
    return out


def _selected(args: PluginArgs, pod: Pod) -> bool:
    if not args.namespaces.admits(pod.namespace):
        return False
    return args.label_selector is None or args.label_selector.matches(pod.labels)


def _evict_each(pods: list[Pod], ev: Evictor, plugin: str) -> str:
    for pod in pods:
        try:
            ev.evict(pod, plugin)
        except Refused:
            continue
        except (NodeLimit, NamespaceLimit):
            return "limit"
        except TotalLimit:
            return "total"
    return ""


def node_affinity(args: PluginArgs, snap: Snapshot, ev: Evictor) -> str:
    """RemovePodsViolatingNodeAffinity: required (its node no longer matches) or preferred (a better node
    exists), when the pod fits some node."""
    for kind in args.node_affinity_types:
        for node in snap.nodes:
            chosen = []
            for pod in list(snap.pods_on.get(node.name, [])):
                if not _selected(args, pod) or ev.why_not(pod) or ev.pre_eviction(pod):
                    continue
                if kind.startswith("required"):
                    has = bool(pod.node_selector) or pod.affinity.node_required is not None
                    bad = has and not required_matches(pod, node)
                else:
                    from ..nodeaffinity.scoring import preferred_score
                    has = bool(pod.affinity.node_preferred)
                    bad = has and max((preferred_score(pod, n) for n in snap.nodes if fits_any(pod, [n], snap.pods_on)),
                                      default=0) > preferred_score(pod, node)
                if bad and fits_any(pod, snap.nodes, snap.pods_on):
                    chosen.append(pod)
            if _evict_each(chosen, ev, NODE_AFFINITY) == "total":
                return "maxNoOfPodsToEvictTotal reached"
    return ""


def node_taints(args: PluginArgs, snap: Snapshot, ev: Evictor) -> str:
    """RemovePodsViolatingNodeTaints: pods that do not tolerate a NoSchedule taint of their node
    (PreferNoSchedule too with includePreferNoSchedule; excludedTaints/includedTaints as key or key=value)."""
    effects = ("NoSchedule", "PreferNoSchedule") if args.include_prefer_no_schedule else ("NoSchedule",)

    def counted(t) -> bool:
        names = (t.key, f"{t.key}={t.value}")
        if args.excluded_taints and any(x in args.excluded_taints for x in names):
            return False
        if args.included_taints:
            return any(x in args.included_taints for x in names)
        return True

    for node in snap.nodes:
        taints = tuple(t for t in node.taints if counted(t))
        chosen = [p for p in list(snap.pods_on.get(node.name, [])) if _selected(args, p) and not ev.why_not(p)
                  and not ev.pre_eviction(p) and first_untolerated(taints, p.tolerations, effects) is not None]
        if _evict_each(chosen, ev, TAINTS) == "total":
            return "maxNoOfPodsToEvictTotal reached"
    return ""


def _anti_violated(pod: Pod, node: Node, others: list[tuple[Pod, Node]]) -> bool:
    """utils.CheckPodsWithAntiAffinityExist: another pod its required anti-affinity selects runs in the same
    topology domain."""
    for term in pod.affinity.anti_required:
        namespaces = set(term.namespaces) or {pod.namespace}
        if term.label_selector is None or term.topology_key not in node.labels:
            continue
        for other, onode in others:
            if other.key == pod.key or other.namespace not in namespaces:
                continue
            if term.label_selector.matches(other.labels) and \
                    onode.labels.get(term.topology_key) == node.labels[term.topology_key]:
                return True
    return False


def anti_affinity(args: PluginArgs, snap: Snapshot, ev: Evictor) -> str:
    """RemovePodsViolatingInterPodAntiAffinity: node by node, pods lowest priority first: a pod whose required
    anti-affinity another pod breaks is evicted, and no longer counts for the pods after it."""
    nodes = {n.name: n for n in snap.nodes}
    live = [(p, nodes[p.node_name]) for n in snap.nodes for p in snap.pods_on.get(n.name, []) if _selected(args, p)]
    for node in snap.nodes:
        for pod in low_to_high([p for p in snap.pods_on.get(node.name, []) if _selected(args, p)]):
            if _anti_violated(pod, node, live) and not ev.why_not(pod) and not ev.pre_eviction(pod):
                try:
                    ev.evict(pod, ANTI_AFFINITY)
                except Refused:
                    continue
                except (NodeLimit, NamespaceLimit):
                    break
                except TotalLimit:
                    return "maxNoOfPodsToEvictTotal reached"
                live = [(p, n) for p, n in live if p.key != pod.key]
    return ""


def _spread_key(c, owner: Pod) -> tuple:
    """A constraint as upstream dedupes it per namespace: skew, key, selector (with matchLabelKeys' values
    merged in), and the inclusion policies with what they read of the pod."""
    sel = c.label_selector
    extra = tuple(sorted((k, owner.labels[k]) for k in c.match_label_keys if k in owner.labels))
    affinity = (tuple(sorted(owner.node_selector.items())), repr(owner.affinity.node_required)) \
        if c.node_affinity_policy == "Honor" else None
    tolerations = owner.tolerations if c.node_taints_policy == "Honor" else None
    return (c.max_skew, c.topology_key, repr(sel), extra, c.node_affinity_policy, affinity, c.node_taints_policy,
            tolerations)


def _includes(c, owner: Pod, node: Node) -> bool:
    """matchNodeInclusionPolicies: nodeAffinityPolicy Honor (the default) counts only nodes matching the owner's
    required node affinity and nodeSelector; nodeTaintsPolicy Honor only nodes whose taints it tolerates."""
    if c.node_affinity_policy == "Honor" and not required_matches(owner, node):
        return False
    if c.node_taints_policy == "Honor" and first_untolerated(node.taints, owner.tolerations) is not None:
        return False
    return True


def topology_spread(args: PluginArgs, snap: Snapshot, ev: Evictor) -> str:
    """RemovePodsViolatingTopologySpreadConstraint (balanceDomains): per namespace and distinct constraint of
    the kinds `constraints` names, over the evictable pods the plugin selects: domains sorted by size; while
    the largest exceeds the smallest by more than maxSkew, min(distance to the ideal average, half the excess
    skew) pods of the largest are chosen (the last after sorting: non-evictable, then pods with a node
    selector or affinity, then lowest priority first; those that fit no node of a domain below the average
    before them), then evicted unless topologyBalanceNodeFit finds no such node for them."""
    nodes = {n.name: n for n in snap.nodes}
    pods = [p for n in snap.nodes for p in snap.pods_on.get(n.name, [])
            if _selected(args, p) and not ev.why_not(p)]
    by_ns: dict[str, list[Pod]] = defaultdict(list)
    for p in pods:
        by_ns[p.namespace].append(p)
    chosen: dict[str, Pod] = {}
    for ns_pods in by_ns.values():
        constraints: list[tuple] = []
        seen: set[tuple] = set()
        for owner in ns_pods:
            for c in owner.spread_constraints:
                if c.when_unsatisfiable not in args.constraints or c.label_selector is None:
                    continue
                key = _spread_key(c, owner)
                if key not in seen:
                    seen.add(key)
                    constraints.append((c, owner))
        for c, owner in constraints:
            extra = dict((k, owner.labels[k]) for k in c.match_label_keys if k in owner.labels)

            def selects(p: Pod) -> bool:
                return c.label_selector.matches(p.labels) and all(p.labels.get(k) == v for k, v in extra.items())

            eligible = [n for n in snap.nodes if c.topology_key in n.labels and _includes(c, owner, n)]
            domains: dict[str, list[Pod]] = {n.labels[c.topology_key]: [] for n in eligible}
            total = 0
            for p in ns_pods:
                node = nodes.get(p.node_name)
                if p.terminating or not selects(p) or node is None or c.topology_key not in node.labels:
                    continue
                domains.setdefault(node.labels[c.topology_key], []).append(p)
                total += 1
            sizes = [len(v) for v in domains.values()]
            if not sizes or max(sizes) - min(sizes) <= c.max_skew:
                continue
            ideal = total / len(domains)

            def pod_order(p: Pod) -> tuple:
                has_sel = bool(p.node_selector) or p.affinity.node_required is not None or bool(
                    p.affinity.node_preferred)
                return (not ev.why_not(p), not has_sel, p.priority)

            doms = sorted(([k, sorted(v, key=pod_order)] for k, v in domains.items()), key=lambda d: (len(d[1]), d[0]))
            below_domains = {d[0] for d in doms if len(d[1]) < ideal}
            below = [n for n in eligible if n.labels[c.topology_key] in below_domains]

            def fits_other(p: Pod) -> bool:
                return fits_any(p, [n for n in below if n.name != p.node_name], snap.pods_on)

            i, j = 0, len(doms) - 1
            while i < j:
                if len(doms[j][1]) <= ideal:
                    j -= 1
                skew = len(doms[j][1]) - len(doms[i][1])
                if skew <= c.max_skew:
                    i += 1
                    continue
                above = math.ceil(len(doms[j][1]) - ideal)
                under = math.ceil(ideal - len(doms[i][1]))
                move = int(min(above, under, math.ceil((skew - c.max_skew) / 2)))
                if move <= 0:
                    i += 1
                    continue
                doms[j][1] = sorted(doms[j][1], key=lambda p: fits_other(p))  # stable: the misfits first
                moving = doms[j][1][len(doms[j][1]) - move:]
                for p in moving:
                    if args.topology_balance_node_fit and not fits_other(p):
                        continue
                    chosen[p.key] = p
                doms[j][1] = doms[j][1][:len(doms[j][1]) - move]
                doms[i][1] = doms[i][1] + moving
    limited: set[str] = set()
    for pod in pods:  # upstream walks a map (no order); podplan the input order
        if pod.key not in chosen or pod.node_name in limited or ev.pre_eviction(pod):
            continue
        try:
            ev.evict(pod, SPREAD)
        except Refused:
            continue
        except NodeLimit:
            limited.add(pod.node_name)
        except NamespaceLimit:
            continue
        except TotalLimit:
            return "maxNoOfPodsToEvictTotal reached"
    return ""


PLUGINS: dict[str, Callable[[PluginArgs, Snapshot, Evictor], str]] = {
    LOW: node_utilization, HIGH: node_utilization, DUPLICATES: remove_duplicates, SPREAD: topology_spread,
    NODE_AFFINITY: node_affinity, TAINTS: node_taints, ANTI_AFFINITY: anti_affinity,
}
