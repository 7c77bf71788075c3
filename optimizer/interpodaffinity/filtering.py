"""InterPodAffinity PreFilter/Filter, reproducing kube-scheduler's
pkg/scheduler/framework/plugins/interpodaffinity/filtering.go (with plugin.go's namespace merge and
framework.AffinityTerm from pkg/scheduler/framework/types.go).

PreFilter counts, per topology pair (key, value):
- existing_anti_affinity_counts: existing pods whose REQUIRED anti-affinity terms match the incoming pod
  (symmetry), found through NodeInfo.pods_with_required_anti_affinity only, as upstream;
- affinity_counts: existing pods matching ALL of the incoming pod's required affinity terms, once per term;
- anti_affinity_counts: existing pods matching each of the incoming pod's required anti-affinity terms.
A pair is counted only where the existing pod's node carries the term's topology key.

Each node's share of those counts is cached per signature of the incoming side (the merged terms, or the
pod's namespace, labels and namespace labels) and reused while NodeInfo.generation is unchanged, so the
replicas of a workload pay for the nodes that changed since the previous replica, not for every pod.
This relies on pods entering and leaving a NodeInfo only through NodeInfo.add/remove.

Namespaces follow upstream exactly, and upstream is asymmetric:
- the incoming pod's terms have their namespaceSelector merged into the namespace set at PreFilter
  (mergeAffinityTermNamespacesIfNotEmpty): a non-empty selector selects only namespaces known to the
  state (Namespace objects); an empty selector `{}` stays "every namespace"; a nil one selects nothing;
- an existing pod's terms keep their selector, matched against the incoming pod's namespace labels
  (GetNamespaceLabelsSnapshot: a namespace with no Namespace object has no labels).
The two differ only for a pod whose namespace has no Namespace object and a selector that matches an
empty label set (NotIn / DoesNotExist); podplan keeps upstream's behaviour.

Knowing differences from upstream:
- Filter returns at most ONE reason, the first failing check in upstream's order (pod affinity,
  UnschedulableAndUnresolvable; pod anti-affinity; existing pods' anti-affinity), as upstream does;
  `explain` therefore lists that one reason for this plugin.
- PreFilter returning Skip upstream is represented by `pre_filter` returning None (every node passes).
- Terminating pods are NOT skipped: upstream InterPodAffinity counts them (kubernetes#112098 was closed
  unmerged); only PodTopologySpread ignores them.
- No PreFilterExtensions (AddPod/RemovePod): the state is updated incrementally instead and PreFilter is
  rerun per pod; preemption, which needs them, is not simulated.
"""
from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ...models.objects import Pod, PodAffinityTerm
from ...models.selectors import LabelSelector, selector_matches
from ..framework import Reason
from ..state import ClusterState, NodeInfo

NAME = "InterPodAffinity"

ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH = "node(s) didn't satisfy existing pods anti-affinity rules"
ERR_REASON_AFFINITY_RULES_NOT_MATCH = "node(s) didn't match pod affinity rules"
ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH = "node(s) didn't match pod anti-affinity rules"

NamespaceLabels = Mapping[str, Mapping[str, str]]
TopologyPair = tuple[str, str]
NodeCounts = tuple[tuple[TopologyPair, int], ...]  # one node's share of a topology-pair count
_NO_LABELS: Mapping[str, str] = {}


@dataclass(frozen=True)
class AffinityTerm:
    """framework.AffinityTerm: a PodAffinityTerm resolved against the pod that owns it.

    `namespace_selector` None means labels.Nothing(); an empty selector means every namespace.
    """

    namespaces: frozenset[str]
    namespace_selector: LabelSelector | None
    selector: LabelSelector | None
    topology_key: str

    def matches(self, pod: Pod, ns_labels: Mapping[str, str] | None) -> bool:
        """AffinityTerm.Matches: pod's namespace is selected and its labels match the label selector."""
        if pod.namespace in self.namespaces or (
            self.namespace_selector is not None and self.namespace_selector.matches(ns_labels or _NO_LABELS)
        ):
            return selector_matches(self.selector, pod.labels)
        return False


def affinity_term(term: PodAffinityTerm, owner: Pod) -> AffinityTerm:
    """newAffinityTerm: empty namespaces and nil namespaceSelector mean the owner's own namespace."""
    if not term.namespaces and term.namespace_selector is None:
        namespaces = frozenset((owner.namespace,))
    else:
        namespaces = frozenset(term.namespaces)
    return AffinityTerm(namespaces, term.namespace_selector, term.label_selector, term.topology_key)


def merged_affinity_term(term: PodAffinityTerm, owner: Pod, namespace_labels: NamespaceLabels) -> AffinityTerm:
    """affinity_term + mergeAffinityTermNamespacesIfNotEmpty, as upstream resolves the INCOMING pod's terms:
    a non-empty namespaceSelector is replaced by the known namespaces it selects."""
    t = affinity_term(term, owner)
    sel = t.namespace_selector
    if sel is None or sel.empty:
        return t
    listed = {name for name, labels in namespace_labels.items() if sel.matches(labels)}
    return AffinityTerm(t.namespaces | listed, None, t.selector, t.topology_key)


def term_namespaces(term: PodAffinityTerm, owner: Pod, namespace_labels: NamespaceLabels) -> frozenset[str] | None:
    """The namespaces `owner`'s term selects, as upstream resolves an incoming pod's term:
    explicit namespaces ∪ known namespaces matching the selector; the owner's namespace when both are unset.
    None means every namespace (an empty selector `{}`)."""
    t = merged_affinity_term(term, owner, namespace_labels)
    return None if t.namespace_selector is not None else t.namespaces


def term_matches(term: PodAffinityTerm, owner: Pod, candidate: Pod, namespace_labels: NamespaceLabels,
                 *, owner_incoming: bool = False) -> bool:
    """Whether `candidate` matches `owner`'s term (namespace and label selector; topology not checked).

    owner_incoming=False judges the term as upstream judges an EXISTING pod's term against the incoming
    candidate (namespaceSelector on the candidate's namespace labels); True judges it as the incoming
    pod's own term against an existing candidate (selector resolved to known namespaces). See the module
    docstring for the one corner where they differ.
    """
    if owner_incoming:
        return merged_affinity_term(term, owner, namespace_labels).matches(candidate, None)
    return affinity_term(term, owner).matches(candidate, namespace_labels.get(candidate.namespace, _NO_LABELS))


def pod_matches_all_terms(terms: Iterable[AffinityTerm], pod: Pod) -> bool:
    """podMatchesAllAffinityTerms for merged (incoming) terms; False when there are no terms."""
    terms = tuple(terms)
    return bool(terms) and all(t.matches(pod, None) for t in terms)


def incoming_matcher(term: AffinityTerm) -> Callable[[Pod], bool]:
    """`lambda pod: term.matches(pod, None)` compiled for the hot loops over every existing pod.

    Used for the incoming pod's merged terms, which upstream matches with nil namespace labels.
    """
    ns = term.namespaces
    all_ns = term.namespace_selector is not None and term.namespace_selector.matches(_NO_LABELS)
    sel = term.selector
    if sel is None:
        return lambda pod: False
    pairs, exprs = sel.match_labels, sel.match_expressions
    if len(pairs) == 1 and not exprs:
        (k, v), = pairs
        if all_ns:
            return lambda pod: pod.labels.get(k) == v
        return lambda pod: pod.namespace in ns and pod.labels.get(k) == v

    def matches(pod: Pod) -> bool:
        if not all_ns and pod.namespace not in ns:
            return False
        labels = pod.labels
        for key, value in pairs:
            if labels.get(key) != value:
                return False
        for r in exprs:
            if not r.matches(labels):
                return False
        return True

    return matches


def _all_of(matchers: list[Callable[[Pod], bool]]) -> Callable[[Pod], bool] | None:
    """podMatchesAllAffinityTerms as one predicate; None when there are no terms (nothing is counted)."""
    if not matchers:
        return None
    if len(matchers) == 1:
        return matchers[0]
    return lambda pod: all(m(pod) for m in matchers)


def _existing_term_matches(term: PodAffinityTerm, owner: Pod, pod: Pod, ns_labels: Mapping[str, str]) -> bool:
    """affinity_term(term, owner).matches(pod, ns_labels) without building the term: the hot symmetric loop."""
    if not term.namespaces and term.namespace_selector is None:
        ns_ok = pod.namespace == owner.namespace
    else:
        ns_ok = pod.namespace in term.namespaces or (
            term.namespace_selector is not None and term.namespace_selector.matches(ns_labels))
    return ns_ok and selector_matches(term.label_selector, pod.labels)


@dataclass(frozen=True)
class PreFilterState:
    """preFilterState: the incoming pod's merged required terms and the three topology-pair counts."""

    affinity_terms: tuple[AffinityTerm, ...]
    anti_affinity_terms: tuple[AffinityTerm, ...]
    existing_anti_affinity_counts: dict[TopologyPair, int]
    affinity_counts: dict[TopologyPair, int]
    anti_affinity_counts: dict[TopologyPair, int]
    # podMatchesAllAffinityTerms(own terms, pod) for the first-pod rule, computed once.
    matches_own_affinity: bool


# Per-node results of the precompute loops, per signature of what they depend on besides the node's pods:
# reused while NodeInfo.generation is unchanged, so replicas of one workload recount only the nodes that
# changed since the previous replica. The NodeInfo is held so its id cannot be reused while cached.
_MAX_SIGNATURES = 64
_node_caches: dict[Hashable, dict[int, tuple[NodeInfo, int, Any]]] = {}


def node_cache(signature: Hashable) -> dict[int, tuple[NodeInfo, int, Any]]:
    """The per-node cache for one signature (oldest signature evicted beyond _MAX_SIGNATURES)."""
    cache = _node_caches.get(signature)
    if cache is None:
        if len(_node_caches) >= _MAX_SIGNATURES:
            del _node_caches[next(iter(_node_caches))]
        cache = _node_caches[signature] = {}
    return cache


def cached(cache: dict[int, tuple[NodeInfo, int, Any]], info: NodeInfo) -> Any:
    """The cached result for `info` if its pods have not changed since, else None."""
    entry = cache.get(id(info))
    if entry is not None and entry[0] is info and entry[1] == info.generation:
        return entry[2]
    return None


def _count(counts: dict[TopologyPair, int], node_counts: Iterable[tuple[TopologyPair, int]]) -> None:
    for pair, n in node_counts:
        counts[pair] = counts.get(pair, 0) + n


def _node_existing_anti(info: NodeInfo, pod: Pod, ns_labels: Mapping[str, str]) -> NodeCounts:
    labels = info.node.labels
    counts: dict[TopologyPair, int] = {}
    for existing in info.pods_with_required_anti_affinity.values():
        for term in existing.affinity.anti_required:
            value = labels.get(term.topology_key)
            if value is not None and _existing_term_matches(term, existing, pod, ns_labels):
                pair = (term.topology_key, value)
                counts[pair] = counts.get(pair, 0) + 1
    return tuple(counts.items())


def existing_anti_affinity_counts(pod: Pod, state: ClusterState) -> dict[TopologyPair, int]:
    """getExistingAntiAffinityCounts: only pods with required anti-affinity are visited (symmetry)."""
    ns_labels = state.namespace_labels.get(pod.namespace, _NO_LABELS)
    cache = node_cache(("existing-anti", pod.namespace, frozenset(pod.labels.items()), frozenset(ns_labels.items())))
    counts: dict[TopologyPair, int] = {}
    for info in state.nodes.values():
        if not info.pods_with_required_anti_affinity:
            continue
        node_counts = cached(cache, info)
        if node_counts is None:
            node_counts = _node_existing_anti(info, pod, ns_labels)
            cache[id(info)] = (info, info.generation, node_counts)
        _count(counts, node_counts)
    return counts


def _node_incoming(info: NodeInfo, affinity_terms: tuple[AffinityTerm, ...], match_all: Callable[[Pod], bool] | None,
                   anti_match: list[tuple[Callable[[Pod], bool], str]]) -> tuple[NodeCounts, NodeCounts]:
    labels = info.node.labels
    # The node's topology pairs per term, resolved once for all its pods.
    affinity_pairs = [(t.topology_key, labels[t.topology_key]) for t in affinity_terms if t.topology_key in labels]
    node_anti = [(m, (key, labels[key])) for m, key in anti_match if key in labels]
    affinity: dict[TopologyPair, int] = {}
    anti: dict[TopologyPair, int] = {}
    for existing in info.pods.values():
        if match_all is not None and affinity_pairs and match_all(existing):
            for pair in affinity_pairs:
                affinity[pair] = affinity.get(pair, 0) + 1
        for m, pair in node_anti:
            if m(existing):
                anti[pair] = anti.get(pair, 0) + 1
    return tuple(affinity.items()), tuple(anti.items())


def incoming_affinity_counts(affinity_terms: tuple[AffinityTerm, ...], anti_affinity_terms: tuple[AffinityTerm, ...],
                             state: ClusterState) -> tuple[dict[TopologyPair, int], dict[TopologyPair, int]]:
    """getIncomingAffinityAntiAffinityCounts: every existing pod against the incoming pod's merged terms."""
    affinity: dict[TopologyPair, int] = {}
    anti: dict[TopologyPair, int] = {}
    if not affinity_terms and not anti_affinity_terms:
        return affinity, anti
    keys = {t.topology_key for t in affinity_terms} | {t.topology_key for t in anti_affinity_terms}
    match_all = _all_of([incoming_matcher(t) for t in affinity_terms])
    anti_match = [(incoming_matcher(t), t.topology_key) for t in anti_affinity_terms]
    cache = node_cache(("incoming", affinity_terms, anti_affinity_terms))
    for info in state.nodes.values():
        # A node without any of the topology keys contributes nothing: skip its pods.
        if not info.pods or not any(k in info.node.labels for k in keys):
            continue
        node_counts = cached(cache, info)
        if node_counts is None:
            node_counts = _node_incoming(info, affinity_terms, match_all, anti_match)
            cache[id(info)] = (info, info.generation, node_counts)
        _count(affinity, node_counts[0])
        _count(anti, node_counts[1])
    return affinity, anti


def pre_filter(pod: Pod, state: ClusterState) -> PreFilterState | None:
    """PreFilter; None stands for upstream's Skip (no incoming required terms, no matching existing anti-affinity)."""
    a = pod.affinity
    affinity_terms = tuple(merged_affinity_term(t, pod, state.namespace_labels) for t in a.pod_required)
    anti_terms = tuple(merged_affinity_term(t, pod, state.namespace_labels) for t in a.anti_required)
    existing = existing_anti_affinity_counts(pod, state)
    if not existing and not affinity_terms and not anti_terms:
        return None
    affinity, anti = incoming_affinity_counts(affinity_terms, anti_terms, state)
    return PreFilterState(
        affinity_terms=affinity_terms,
        anti_affinity_terms=anti_terms,
        existing_anti_affinity_counts=existing,
        affinity_counts=affinity,
        anti_affinity_counts=anti,
        matches_own_affinity=pod_matches_all_terms(affinity_terms, pod),
    )


def satisfies_existing_pods_anti_affinity(pre: PreFilterState, labels: Mapping[str, str]) -> bool:
    counts = pre.existing_anti_affinity_counts
    if not counts:
        return True
    return not any(counts.get(pair, 0) > 0 for pair in labels.items())


def satisfies_pod_anti_affinity(pre: PreFilterState, labels: Mapping[str, str]) -> bool:
    counts = pre.anti_affinity_counts
    if not counts:
        return True
    for t in pre.anti_affinity_terms:
        value = labels.get(t.topology_key)
        if value is not None and counts.get((t.topology_key, value), 0) > 0:
            return False
    return True


def satisfies_pod_affinity(pre: PreFilterState, labels: Mapping[str, str]) -> bool:
    """Every term's domain must hold a matching pod; the node must carry every topology key.

    First-pod rule: when no pod anywhere matches all terms and the pod matches its own terms, any node
    carrying all the keys passes, so a self-affine group can start.
    """
    pods_exist = True
    for t in pre.affinity_terms:
        value = labels.get(t.topology_key)
        if value is None:
            return False
        if pre.affinity_counts.get((t.topology_key, value), 0) <= 0:
            pods_exist = False
    if pods_exist:
        return True
    return not pre.affinity_counts and pre.matches_own_affinity


def filter(pod: Pod, pre: PreFilterState | None, node_info: NodeInfo, state: ClusterState) -> list[Reason]:
    """Filter: upstream's first failing check only, in upstream's order."""
    if pre is None:
        return []
    labels = node_info.node.labels
    if not satisfies_pod_affinity(pre, labels):
        return [Reason(NAME, ERR_REASON_AFFINITY_RULES_NOT_MATCH, unresolvable=True)]
    if not satisfies_pod_anti_affinity(pre, labels):
        return [Reason(NAME, ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH)]
    if not satisfies_existing_pods_anti_affinity(pre, labels):
        return [Reason(NAME, ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH)]
    return []
