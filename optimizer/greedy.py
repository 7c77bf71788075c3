"""The greedy kube-scheduler simulator: podplan's baseline, warm start and fallback.

Reproduces kube-scheduler's scheduling loop (pkg/scheduler/schedule_one.go):
- the queue is sorted by priority, then arrival (PrioritySort: priority, then creation time; podplan uses
  input order as creation time);
- findNodesThatFitPod: Filter nodes starting where the previous cycle stopped (nextStartNodeIndex) and stop
  once numFeasibleNodesToFind nodes passed (percentageOfNodesToScore adaptive default: 50% - nodes/125,
  at least 5% and at least 100 nodes); a node's verdict is its first rejecting plugin, as upstream stops there;
- one feasible node is taken without scoring; otherwise Score the feasible nodes with the default plugin
  weights and bind to the best; ties are broken by a seeded uniform choice among the top-scoring nodes
  (upstream breaks them with its own random source);
- a pod that fits nowhere stays pending with FitError's message; the state is updated incrementally.

Knowing differences:
- no preemption (podplan plans, it does not evict to make room), no nominated nodes, no PostFilter message;
- the NodeAffinity PreFilterResult (pods pinned by matchFields metadata.name) is a per-node Filter reason
  here, so the other nodes count as processed for nextStartNodeIndex (upstream skips them);
- placed-pod guard (on by default, `protect_placed=False` turns it off): kube-scheduler checks only the
  incoming pod's own rules, so it may bind a pod that breaks a pod ALREADY placed (an existing or earlier
  pod) in the two ways podplan's batch semantics forbid (notes/semantics.md: every pod of the final state is
  judged with itself removed):
  * a DoNotSchedule spread constraint of a placed pod whose selector matches the incoming pod, when the
    incoming pod lands in that pod's domain and the skew there goes over maxSkew;
  * the required pod affinity of a placed pod that started its domain alone (upstream's first-pod rule),
    when the incoming pod matches all its terms but lands in another domain.
  Such nodes are rejected with ERR_REASON_BREAKS_* after kube-scheduler's filters passed, so the simulator's
  plans pass the verifier (property-tested); where kube-scheduler's choice breaks nothing, the result is
  identical. Every other rule is either checked from both sides by kube-scheduler itself (anti-affinity,
  ports), a node total (resources) or monotone (affinity beyond the first pod, static rules).

Speed (identical results, checked against the plain loop): verdicts and raw scores of the plugins that read
only the pod and the node (STATIC_*) are computed once per pod spec, and only the nodes the static filters
pass are visited (the others count as processed up to where the search stops, as upstream's rotation has
it); those that read only the node's own pods (NODE_LOCAL_*) are cached per pod spec and
NodeInfo.generation; a plugin whose PreFilter/PreScore says Skip is not run on every node; a static score
plugin that scores every node alike is left out of the totals (it shifts them all alike).
"""
from __future__ import annotations

import random
import time
from bisect import bisect_left
from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..models.objects import Cluster, Pod

from .framework import NodeVerdict, Plugin, Reason, fit_error_message
from .gangs import Gangs
from .interpodaffinity import AffinityTerm, merged_affinity_term
from .objective import PodIndex
from .plan import Plan
from .podtopologyspread import SpreadConstraint, counts_toward, filter_constraints
from .podtopologyspread.common import eligibility_test
from .registry import FILTER_PLUGINS, SCORE_PLUGINS
from .state import ClusterState, NodeInfo

MIN_FEASIBLE_NODES_TO_FIND = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5
BASE_PERCENTAGE_OF_NODES_TO_SCORE = 50

# Plugins whose Filter / Score read only the pod and the Node object (never other pods).
STATIC_FILTERS = frozenset({"NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity"})
STATIC_SCORES = frozenset({"TaintToleration", "NodeAffinity"})
# Plugins whose Filter / Score read only the pod and the pods on the node itself (NodeInfo totals).
NODE_LOCAL_FILTERS = frozenset({"NodePorts", "NodeResourcesFit"})
NODE_LOCAL_SCORES = frozenset({"NodeResourcesFit", "NodeResourcesBalancedAllocation"})
# PreFilter / PreScore results meaning upstream's Skip: the plugin passes every node / scores them all 0.
FILTER_SKIPPED: dict[str, Callable[[Any], bool]] = {
    "InterPodAffinity": lambda pre: pre is None,
    "PodTopologySpread": lambda pre: pre is None,
    "NodeAffinity": lambda pre: getattr(pre, "skip", False),
}
SCORE_SKIPPED: dict[str, Callable[[Any], bool]] = {
    "InterPodAffinity": lambda pre: pre is None,
    "PodTopologySpread": lambda pre: getattr(pre, "skipped", False),
}

# Conditions under which a plugin's PreFilter / PreScore would return Skip, known without running it
# (upstream reads them off the snapshot's HavePodsWithRequiredAntiAffinityList / HavePodsWithAffinityList).
PRE_FILTER_SKIPS: dict[str, Callable[[Pod, ClusterState], bool]] = {
    "InterPodAffinity": lambda pod, state: not (pod.affinity.pod_required or pod.affinity.anti_required)
    and not state.nodes_with_required_anti_affinity,
}
PRE_SCORE_SKIPS: dict[str, Callable[[Pod, ClusterState], bool]] = {
    "InterPodAffinity": lambda pod, state: not (pod.affinity.pod_preferred or pod.affinity.anti_preferred)
    and not state.nodes_with_affinity,
}

GUARD_SPREAD = "PodTopologySpread"
GUARD_AFFINITY = "InterPodAffinity"
ERR_REASON_BREAKS_SPREAD = "node(s) would break a placed pod's topology spread constraints"
ERR_REASON_BREAKS_AFFINITY = "node(s) would break a placed pod's pod affinity rules"

_MAX_SPECS = 256  # pod specs whose per-node caches are kept (a workload's replicas share one)


def num_feasible_nodes_to_find(num_all_nodes: int, percentage: int = 0) -> int:
    """schedule_one.go numFeasibleNodesToFind with percentageOfNodesToScore (0 = adaptive)."""
    if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND:
        return num_all_nodes
    if percentage == 0:
        percentage = BASE_PERCENTAGE_OF_NODES_TO_SCORE - num_all_nodes // 125
        percentage = max(percentage, MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND)
    if percentage >= 100:
        return num_all_nodes
    return max(num_all_nodes * percentage // 100, MIN_FEASIBLE_NODES_TO_FIND)


def queue_order(pods: Iterable[Pod]) -> list[Pod]:
    """PrioritySort: higher priority first, then earlier arrival."""
    return sorted(pods, key=lambda p: (-p.priority, p.order))


def spec_key(pod: Pod) -> Hashable:
    """Everything the static and node-local plugins read from a pod (not its name or labels)."""
    return (pod.node_name, tuple(sorted(pod.node_selector.items())), pod.affinity.node_required,
            pod.affinity.node_preferred, pod.tolerations, pod.host_ports, tuple(sorted(pod.requests.items())),
            tuple(sorted(pod.nonzero_requests.items())))


# ------------------------------------------------------------------------------------------ placed-pod guard


class MinIndex:
    """The global minimum of a domain -> count map after changing ONE domain, in O(1) (minDomains applied)."""

    def __init__(self, counts: dict[str, int], min_domains: int) -> None:
        self.counts = counts
        self.too_few = len(counts) < min_domains or not counts
        values = sorted(counts.values())
        self.lowest = values[0] if values else 0
        self.ties = values.count(self.lowest)
        self.second = next((v for v in values if v > self.lowest), None)

    def min_with(self, domain: str, delta: int) -> int:
        """global_min(counts with counts[domain] += delta)."""
        if self.too_few:
            return 0
        value = self.counts[domain]
        if value == self.lowest and self.ties == 1:
            others = self.second  # the only domain at the minimum changes: the others' minimum is the next value
        else:
            others = self.lowest
        return value + delta if others is None else min(others, value + delta)


def eligible_domains(state: ClusterState, pod: Pod, c: SpreadConstraint, keys: tuple[str, ...],
                     memo: dict[Hashable, dict[str, str]]) -> dict[str, str]:
    """Node name -> domain, for the nodes that hold a domain of `pod`'s constraint c: they carry every key of
    the pod's constraints (`keys`) and pass c's inclusion policies for the pod. Memoized in `memo` by what
    that depends on (nothing of the pod when the policies let every node in)."""
    eligible = eligibility_test(c, pod)
    key: Hashable = (keys, c.topology_key) if eligible is None else (
        keys, c.topology_key, c.node_affinity_policy, c.node_taints_policy,
        tuple(sorted(pod.node_selector.items())), pod.affinity.node_required, pod.tolerations)
    found = memo.get(key)
    if found is None:
        found = memo[key] = {info.name: info.node.labels[c.topology_key] for info in state.nodes.values()
                             if all(k in info.node.labels for k in keys) and (eligible is None or eligible(info.node))}
    return found


@dataclass
class _SpreadGroup:
    """Placed pods sharing one DoNotSchedule constraint and everything its verdict depends on."""

    namespace: str
    constraint: SpreadConstraint
    domain_of: dict[str, str]  # eligible node -> its domain (value of the topology key)
    counts: dict[str, int]  # domain -> matching pods on eligible nodes
    self_match: bool  # a member matches its own selector (its +1 in Filter)
    # (domain, whether the member counts itself there) -> members placed so
    members: Counter[tuple[str, bool]] = field(default_factory=Counter)

    def broken_domains(self) -> frozenset[str]:
        """Domains where one more matching pod pushes a member over maxSkew (that was not over already).

        A member q in domain d is judged with itself removed: counts - (1 at d if q counts itself); adding
        the incoming pod at d gives counts + (0 or 1 at d); q breaks when count_d + self_match - minimum > maxSkew.
        """
        c, counts = self.constraint, self.counts
        mins = MinIndex(counts, c.min_domains)
        bad = set()
        for (domain, counted), n in self.members.items():
            if not n or domain not in counts or domain in bad:
                continue  # a domain without eligible nodes never receives a counted pod
            value = counts[domain]
            if counted:
                after, before = value + self.self_match - mins.min_with(domain, 0), \
                    value - 1 + self.self_match - mins.min_with(domain, -1)
            else:
                after, before = value + 1 + self.self_match - mins.min_with(domain, 1), \
                    value + self.self_match - mins.min_with(domain, 0)
            if after > c.max_skew and before <= c.max_skew:
                bad.add(domain)
        return frozenset(bad)


@dataclass
class _Lonely:
    """A placed pod with required affinity that no other pod satisfies yet (upstream's first-pod rule)."""

    pod: Pod
    labels: dict[str, str]  # its node's labels
    terms: tuple[AffinityTerm, ...]


class PlacedPodsGuard:
    """Keeps what is needed to tell, in O(1) per node, whether binding a pod there breaks a placed pod."""

    def __init__(self, state: ClusterState) -> None:
        self.state = state
        self.index = PodIndex(state)  # grows with every bind: the guard never sees a pod leave
        self.groups: dict[Hashable, _SpreadGroup] = {}
        self.domain_maps: dict[Hashable, dict[str, str]] = {}
        self.lonely: dict[str, _Lonely] = {}
        self._matching: dict[tuple[AffinityTerm, ...], int] = {}  # terms -> pods matching them all (initial state)
        for pod, info in list(state.all_pods()):
            self._join(pod, info)
            self._check_lonely(pod, info, None)
        self._matching.clear()

    # -- per incoming pod ---------------------------------------------------------------------------------

    def prepare(self, pod: Pod) -> Callable[[NodeInfo], tuple[Reason, ...]] | None:
        """The per-node check for `pod`, or None when it can break nobody."""
        spread: list[tuple[_SpreadGroup, frozenset[str]]] = []
        if not pod.terminating:
            for g in self.groups.values():
                if g.members and counts_toward(g.constraint.selector, g.namespace, pod):
                    bad = g.broken_domains()
                    if bad:
                        spread.append((g, bad))
        lonely = [q for q in self.lonely.values() if all(t.matches(pod, None) for t in q.terms)]
        if not spread and not lonely:
            return None

        def check(info: NodeInfo) -> tuple[Reason, ...]:
            name, labels = info.name, info.node.labels
            for g, bad in spread:
                if g.domain_of.get(name) in bad:
                    return (Reason(GUARD_SPREAD, ERR_REASON_BREAKS_SPREAD),)
            for q in lonely:
                if any(t.topology_key in labels for t in q.terms) and any(
                        labels.get(t.topology_key) != q.labels[t.topology_key] for t in q.terms):
                    return (Reason(GUARD_AFFINITY, ERR_REASON_BREAKS_AFFINITY),)
            return ()

        return check

    # -- after a bind --------------------------------------------------------------------------------------

    def bound(self, pod: Pod, info: NodeInfo, affinity_pre: Any = None) -> None:
        """`pod` was just added to `info`; `affinity_pre` is InterPodAffinity's PreFilterState for it, if run."""
        name, labels = info.name, info.node.labels
        self.index.add(pod, info)
        for g in self.groups.values():
            domain = g.domain_of.get(name)
            if domain is not None and counts_toward(g.constraint.selector, g.namespace, pod):
                g.counts[domain] += 1
        for key in [k for k, q in self.lonely.items()
                    if all(t.matches(pod, None) for t in q.terms) and any(t.topology_key in labels for t in q.terms)]:
            del self.lonely[key]  # the guard let it in, so it sits in the lonely pod's domain
        self._join(pod, info)
        self._check_lonely(pod, info, affinity_pre)

    def _join(self, pod: Pod, info: NodeInfo) -> None:
        constraints = filter_constraints(pod, self.state)
        if not constraints:
            return
        labels = info.node.labels
        keys = tuple(c.topology_key for c in constraints)
        for c in constraints:
            if c.topology_key not in labels:
                continue  # it already breaks its own constraint (missing label): nothing to protect
            self_match = c.selector is not None and c.selector.matches(pod.labels)
            key = (pod.namespace, c, keys, tuple(sorted(pod.node_selector.items())), pod.affinity.node_required,
                   pod.tolerations, self_match)
            g = self.groups.get(key)
            if g is None:
                g = self.groups[key] = self._new_group(pod, c, keys, self_match)
            counted = info.name in g.domain_of and counts_toward(c.selector, pod.namespace, pod)
            g.members[(labels[c.topology_key], counted)] += 1

    def _new_group(self, pod: Pod, c: SpreadConstraint, keys: tuple[str, ...], self_match: bool) -> _SpreadGroup:
        domain_of = eligible_domains(self.state, pod, c, keys, self.domain_maps)
        counts = dict.fromkeys(domain_of.values(), 0)
        for q, info in self.index.candidates(c.selector, (pod.namespace,)):
            domain = domain_of.get(info.name)
            if domain is not None and counts_toward(c.selector, pod.namespace, q):
                counts[domain] += 1
        return _SpreadGroup(pod.namespace, c, domain_of, counts, self_match)

    def _check_lonely(self, pod: Pod, info: NodeInfo, affinity_pre: Any) -> None:
        """Is `pod` (just placed) valid only by the first-pod rule? Then later pods must not leave it alone."""
        required = pod.affinity.pod_required
        if not required:
            return
        labels = info.node.labels
        terms = tuple(merged_affinity_term(t, pod, self.state.namespace_labels) for t in required)
        if not all(t.topology_key in labels for t in terms) or not all(t.matches(pod, None) for t in terms):
            return  # not valid by the first-pod rule: either satisfied by others or already broken
        if affinity_pre is not None and hasattr(affinity_pre, "affinity_counts"):
            alone = not affinity_pre.affinity_counts  # counted before the pod was added
        else:
            if terms not in self._matching:
                self._matching[terms] = sum(1 for other in self.state.nodes.values()
                                            if any(t.topology_key in other.node.labels for t in terms)
                                            for q in other.pods.values() if all(t.matches(q, None) for t in terms))
            alone = self._matching[terms] == 1  # the pod itself matches and its node has the keys
        if alone:
            self.lonely[pod.key] = _Lonely(pod, labels, terms)


# ------------------------------------------------------------------------------------------------ scheduler


_UNKNOWN: Any = object()


@dataclass
class Scheduler:
    """One simulated kube-scheduler over a ClusterState it mutates as it binds."""

    state: ClusterState
    seed: int = 0
    percentage_of_nodes_to_score: int = 0
    filter_plugins: Sequence[Plugin] = FILTER_PLUGINS
    score_plugins: Sequence[Plugin] = SCORE_PLUGINS
    protect_placed: bool = True

    def __post_init__(self) -> None:
        self.rng = random.Random(self.seed)
        self.next_start = 0
        self.order: list[NodeInfo] = list(self.state.nodes.values())
        self.names: list[str] = [info.name for info in self.order]
        plugins = [p for p in self.filter_plugins if p.filter]
        # Cached segments must come first, in filter order, so a node's first rejecting plugin is unchanged.
        n_static = next((i for i, p in enumerate(plugins) if p.name not in STATIC_FILTERS), len(plugins))
        n_local = next((i for i, p in enumerate(plugins[n_static:], n_static) if p.name not in NODE_LOCAL_FILTERS),
                       len(plugins))
        self.static_filters = plugins[:n_static]
        self.local_filters = plugins[n_static:n_local]
        self.dynamic_filters = plugins[n_local:]
        self.guard = PlacedPodsGuard(self.state) if self.protect_placed else None
        self._static_cache: dict[Hashable, tuple[list[tuple[Reason, ...]], list[int]]] = {}  # spec -> verdicts
        self._local_cache: dict[Hashable, list[Any]] = {}  # spec -> per node index: (generation, reasons)
        self._score_cache: dict[tuple[str, Hashable], list[Any]] = {}  # (plugin, spec) -> per node: (gen, raw)
        self._static_score_cache: dict[tuple[str, Hashable], list[int] | None] = {}

    def _per_node(self, cache: dict[Any, list[Any]], key: Any) -> list[Any]:
        entry = cache.get(key)
        if entry is None:
            if len(cache) >= _MAX_SPECS:
                del cache[next(iter(cache))]
            entry = cache[key] = [_UNKNOWN] * len(self.order)
        return entry

    def schedule(self, pod: Pod) -> tuple[str | None, str]:
        """One scheduling cycle: the chosen node (bound into the state) or None and FitError's message."""
        nodes = self.order
        if not nodes:
            return None, "0/0 nodes are available: no nodes in the input."
        state = self.state
        spec = spec_key(pod)
        static_pres = [(p, p.pre_filter(pod, state) if p.pre_filter else None) for p in self.static_filters]
        local_pres = [(p, p.pre_filter(pod, state) if p.pre_filter else None) for p in self.local_filters]
        dynamic_pres = []
        affinity_pre = None
        for p in self.dynamic_filters:
            shortcut = PRE_FILTER_SKIPS.get(p.name)
            if shortcut is not None and shortcut(pod, state):
                continue
            pre = p.pre_filter(pod, state) if p.pre_filter else None
            if p.name == "InterPodAffinity":
                affinity_pre = pre
            skipped = FILTER_SKIPPED.get(p.name)
            if skipped is None or not skipped(pre):
                dynamic_pres.append((p, pre))
        static_reasons, passing = self._static_verdicts(pod, spec, static_pres)
        local = self._per_node(self._local_cache, spec)
        guard = self.guard.prepare(pod) if self.guard is not None else None
        dynamic = [(p.filter, pre) for p, pre in dynamic_pres]

        want = num_feasible_nodes_to_find(len(nodes), self.percentage_of_nodes_to_score)
        feasible: list[int] = []
        rejected: list[NodeVerdict] = []
        n = len(nodes)
        start = self.next_start
        processed = n
        # Only the nodes the static filters pass are visited, in rotation order from `start`; the others are
        # rejected all the same and count as processed up to where the search stops.
        cut = bisect_left(passing, start)
        for idx in passing[cut:] + passing[:cut]:
            info = nodes[idx]
            entry = local[idx]
            if entry is _UNKNOWN or entry[0] != info.generation:
                entry = local[idx] = (info.generation, self._first_failure(pod, local_pres, info))
            reasons = entry[1]
            if not reasons:
                for plugin_filter, pre in dynamic:
                    found = plugin_filter(pod, pre, info, state)
                    if found:
                        reasons = tuple(found)  # upstream stops at the first rejecting plugin
                        break
                if not reasons and guard is not None:
                    reasons = guard(info)
            if reasons:
                rejected.append(NodeVerdict(self.names[idx], reasons))
            else:
                feasible.append(idx)
                if len(feasible) >= want:
                    processed = (idx - start) % n + 1
                    break
        self.next_start = (self.next_start + processed) % n
        if not feasible:
            rejected.extend(NodeVerdict(self.names[i], r) for i, r in enumerate(static_reasons) if r)
            return None, fit_error_message(n, rejected)
        best = feasible[0] if len(feasible) == 1 else self._select_host(feasible, self._totals(pod, spec, feasible))
        chosen = nodes[best]
        state.add(pod, self.names[best])
        if self.guard is not None:
            self.guard.bound(pod, chosen, affinity_pre)
        return self.names[best], ""

    def _static_verdicts(self, pod: Pod, spec: Hashable,
                         pres: Sequence[tuple[Plugin, Any]]) -> tuple[list[tuple[Reason, ...]], list[int]]:
        """The static filters' first failure on every node for this pod spec, and the indices of the nodes
        they pass (ascending); computed once per spec."""
        found = self._static_cache.get(spec)
        if found is None:
            if len(self._static_cache) >= _MAX_SPECS:
                del self._static_cache[next(iter(self._static_cache))]
            reasons = [self._first_failure(pod, pres, info) for info in self.order]
            found = self._static_cache[spec] = (reasons, [i for i, r in enumerate(reasons) if not r])
        return found

    def _first_failure(self, pod: Pod, pres: Sequence[tuple[Plugin, Any]], info: NodeInfo) -> tuple[Reason, ...]:
        for plugin, pre in pres:
            reasons = plugin.filter(pod, pre, info, self.state)  # type: ignore[misc]
            if reasons:
                return tuple(reasons)  # upstream stops at the first rejecting plugin
        return ()

    def _totals(self, pod: Pod, spec: Hashable, feasible: list[int]) -> list[int]:
        """Σ weight × normalized score per feasible node (prioritizeNodes), in `feasible` order.

        A plugin that scores every node alike shifts every total alike and is left out: ranking and ties are
        unchanged (Skip by PreScore; a static plugin with the same raw score on every node of the cluster).
        """
        state, nodes = self.state, self.order
        infos = [nodes[i] for i in feasible]
        names = [self.names[i] for i in feasible]
        totals = [0] * len(feasible)
        for plugin in self.score_plugins:
            if plugin.score is None or not plugin.weight:
                continue
            name = plugin.name
            shortcut = PRE_SCORE_SKIPS.get(name)
            if shortcut is not None and shortcut(pod, state):
                continue
            if name in STATIC_SCORES:
                static = self._static_scores(plugin, pod, spec)
                if static is None:
                    continue
                pre: Any = None
                raw = dict(zip(names, [static[i] for i in feasible]))
            else:
                pre = plugin.pre_score(pod, state, infos) if plugin.pre_score else None
                skipped = SCORE_SKIPPED.get(name)
                if skipped is not None and skipped(pre):
                    continue
                score = plugin.score
                if name in NODE_LOCAL_SCORES:
                    cache = self._per_node(self._score_cache, (name, spec))
                    values = []
                    for i, info in zip(feasible, infos):
                        entry = cache[i]
                        if entry is _UNKNOWN or entry[0] != info.generation:
                            entry = cache[i] = (info.generation, score(pod, pre, info, state))
                        values.append(entry[1])
                    raw = dict(zip(names, values))
                else:
                    raw = dict(zip(names, [score(pod, pre, info, state) for info in infos]))
            normalized = plugin.normalize(raw, pre) if plugin.normalize else raw
            weight = plugin.weight
            totals = [t + weight * normalized[n] for t, n in zip(totals, names)]
        return totals

    def _static_scores(self, plugin: Plugin, pod: Pod, spec: Hashable) -> list[int] | None:
        """The raw scores of a static plugin on every node for this pod spec; None when they are all equal."""
        key = (plugin.name, spec)
        if key not in self._static_score_cache:
            if len(self._static_score_cache) >= _MAX_SPECS:
                del self._static_score_cache[next(iter(self._static_score_cache))]
            pre = plugin.pre_score(pod, self.state, self.order) if plugin.pre_score else None
            assert plugin.score is not None
            raw = [plugin.score(pod, pre, info, self.state) for info in self.order]
            self._static_score_cache[key] = raw if len(set(raw)) > 1 else None
        return self._static_score_cache[key]

    def _select_host(self, feasible: list[int], totals: list[int]) -> int:
        """The top-scoring node's index; ties broken by the seeded random source, uniformly (as selectHost)."""
        best = max(totals)
        tied = [idx for idx, score in zip(feasible, totals) if score == best]
        return tied[self.rng.randrange(len(tied))] if len(tied) > 1 else tied[0]


def simulate(cluster: Cluster, seed: int = 0, *, gangs: Gangs | None = None,
             percentage_of_nodes_to_score: int = 0, protect_placed: bool = True, vectorized: bool = True) -> Plan:
    """kube-scheduler on the pending pods of `cluster`, one at a time.

    With gangs (coscheduling's Permit semantics): a gang that ends below its minimum releases all its pods,
    and the pass is repeated without it, until every gang left is whole. protect_placed=False is
    kube-scheduler exactly, whose plans may break placed pods' spread or first-pod affinity (see above).
    vectorized=True runs vectorized.VectorScheduler (the same results over all nodes at once); False this
    module's plain per-node Scheduler, the reference.
    """
    from .vectorized import VectorScheduler  # late: vectorized builds on this module's guard
    started = time.perf_counter()
    gangs = gangs or Gangs({}, {})
    dropped: set[str] = set()
    while True:
        state = ClusterState.from_cluster(cluster)
        make = VectorScheduler if vectorized else Scheduler
        sched = make(state, seed, percentage_of_nodes_to_score, protect_placed=protect_placed)
        placements: dict[str, str] = {}
        pending: dict[str, str] = {}
        for pod in queue_order(cluster.pending):
            gang = gangs.of.get(pod.key, "")
            if gang in dropped:
                pending[pod.key] = f"gang {gang} cannot reach its minimum of {gangs.minimum[gang]} pods"
                continue
            node, message = sched.schedule(pod)
            if node is None:
                pending[pod.key] = message
            else:
                placements[pod.key] = node
        short = _short_gangs(cluster, placements, gangs) - dropped
        if not short:
            break
        dropped |= short
    return Plan(placements=placements, pending=pending, status="GREEDY",
                wall_seconds=time.perf_counter() - started, seed=seed)


def _short_gangs(cluster: Cluster, placements: dict[str, str], gangs: Gangs) -> set[str]:
    """Gangs that placed some but fewer than their minimum of pods."""
    placed: dict[str, int] = {}
    for key, gang in gangs.of.items():
        if key in placements:
            placed[gang] = placed.get(gang, 0) + 1
    return {g for g, n in placed.items() if n < gangs.minimum[g]}
