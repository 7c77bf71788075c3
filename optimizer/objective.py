"""The preference score P of a final state, computed directly from its pods (the verifier's half).

P = Σ over every pod p of the final state of
    + node_affinity      × weights of p's preferred node-affinity terms its node matches
    + pod_affinity       × weights of p's preferred pod-affinity terms some OTHER pod satisfies in p's domain
    − pod_anti_affinity  × weights of p's preferred anti-affinity terms some OTHER pod violates in p's domain
    − prefer_no_schedule × PreferNoSchedule taints on p's node that p does not tolerate
  − schedule_anyway_skew × Σ over ScheduleAnyway groups g of max(0, skew_g − maxSkew_g)
A ScheduleAnyway group is a distinct (namespace, topologyKey, selector, maxSkew) among the pods' own
ScheduleAnyway constraints; its domains are the topology values of nodes that carry the key and pass the
inclusion policies of the group's first pod (input order); skew_g = max − min of the matching pods per domain.
A pod q matches p's preferred term as an existing pod's term is judged upstream (interpodaffinity.term_matches:
the term's namespaceSelector against q's namespace labels). Matching pods are counted once per (term, p's
namespace) and domain from a label index, so P costs O(pods) per distinct term, not per pod pair.
This module shares no code with the CP-SAT encoding; the solver must reach the same number.
"""
from __future__ import annotations

from collections.abc import Hashable, Mapping

from ..models.objects import Cluster, Pod, PodAffinityTerm, WeightedPodAffinityTerm

from .interpodaffinity import term_matches
from .policy import Policy
from .nodeaffinity.scoring import preferred_score
from .podtopologyspread.common import SpreadConstraint, counts_toward, node_eligible, own_constraints
from .state import ClusterState, NodeInfo, PodIndex
from .tainttoleration import count_intolerable_prefer_no_schedule, prefer_no_schedule_tolerations

TERMS = ("node_affinity", "pod_affinity", "pod_anti_affinity", "prefer_no_schedule", "schedule_anyway_skew")


def _domain_counts(term: PodAffinityTerm, owner: Pod, index: PodIndex,
                   namespace_labels: Mapping[str, Mapping[str, str]]) -> dict[str, int]:
    """Pods of the final state matching `owner`'s term, per value of its topology key (keyed nodes only)."""
    key = term.topology_key
    namespaces = None
    if term.namespace_selector is None:
        namespaces = term.namespaces or (owner.namespace,)
    counts: dict[str, int] = {}
    for q, info in index.candidates(term.label_selector, namespaces):
        value = info.node.labels.get(key)
        if value is not None and term_matches(term, owner, q, namespace_labels):
            counts[value] = counts.get(value, 0) + 1
    return counts


def _term_hits(p: Pod, node_labels: Mapping[str, str], weighted_terms: tuple[WeightedPodAffinityTerm, ...],
               index: PodIndex, state: ClusterState, memo: dict[Hashable, dict[str, int]]) -> int:
    """Σ weights of `weighted_terms` that some OTHER pod in p's domain matches."""
    total = 0
    for wt in weighted_terms:
        key = wt.term.topology_key
        value = node_labels.get(key)
        if value is None:
            continue
        # Whether a pod matches a term depends on the owner only through its namespace.
        sig = (wt.term, p.namespace)
        counts = memo.get(sig)
        if counts is None:
            counts = memo[sig] = _domain_counts(wt.term, p, index, state.namespace_labels)
        others = counts.get(value, 0) - int(term_matches(wt.term, p, p, state.namespace_labels))
        if others > 0:
            total += wt.weight
    return total


def _schedule_anyway_excess(state: ClusterState, index: PodIndex) -> int:
    groups: dict[tuple[object, ...], tuple[Pod, SpreadConstraint]] = {}
    # (only pods with constraints of their own can start a group: sorting every pod of the state cost 0.3 s)
    for pod, _info in sorted(((p, i) for p, i in state.all_pods() if p.spread_constraints), key=lambda pi: pi[0].order):
        for c in own_constraints(pod, "ScheduleAnyway"):
            groups.setdefault((pod.namespace, c.topology_key, c.selector, c.max_skew), (pod, c))
    excess = 0
    for first, c in groups.values():
        domain_of = {info.name: info.node.labels[c.topology_key] for info in state.nodes.values()
                     if c.topology_key in info.node.labels and node_eligible(c, first, info.node)}
        counts = dict.fromkeys(domain_of.values(), 0)
        for q, info in index.candidates(c.selector, (first.namespace,)):
            domain = domain_of.get(info.name)
            if domain is not None and counts_toward(c.selector, first.namespace, q):
                counts[domain] += 1
        if counts:
            excess += max(0, max(counts.values()) - min(counts.values()) - c.max_skew)
    return excess


def pod_terms(pod: Pod, info: NodeInfo, index: PodIndex, state: ClusterState,
              memo: dict[Hashable, dict[str, int]]) -> tuple[int, int, int, int]:
    """One pod's unweighted share of P's per-pod terms (node_affinity, pod_affinity, pod_anti_affinity,
    prefer_no_schedule) on its node of `state`; `memo`: one per state (matching pods per term and domain)."""
    node = info.node
    a = pod.affinity
    return (preferred_score(pod, node),
            _term_hits(pod, node.labels, a.pod_preferred, index, state, memo) if a.pod_preferred else 0,
            _term_hits(pod, node.labels, a.anti_preferred, index, state, memo) if a.anti_preferred else 0,
            count_intolerable_prefer_no_schedule(node, prefer_no_schedule_tolerations(pod)))


def weigh(raw: tuple[int, int, int, int], excess: int, m: Policy) -> dict[str, int]:
    """P's terms from the per-pod sums (pod_terms) and the ScheduleAnyway excess, multiplied and signed."""
    node_aff, pod_aff, anti, pns = raw
    return {
        "node_affinity": m.node_affinity * node_aff,
        "pod_affinity": m.pod_affinity * pod_aff,
        "pod_anti_affinity": -m.pod_anti_affinity * anti,
        "prefer_no_schedule": -m.prefer_no_schedule * pns,
        "schedule_anyway_skew": -m.schedule_anyway_skew * excess,
    }


def preference_terms(cluster: Cluster, state: ClusterState, m: Policy, index: PodIndex | None = None) -> dict[str, int]:
    """Each term of P, multiplied and signed; they sum to P. `index`: the state's PodIndex if the caller has one."""
    index = index if index is not None else PodIndex(state)
    return weigh(raw_sums(state, index), _schedule_anyway_excess(state, index), m)


def raw_sums(state: ClusterState, index: PodIndex) -> tuple[int, int, int, int]:
    """Σ pod_terms over every pod of the state."""
    node_aff = pod_aff = anti = pns = 0
    memo: dict[Hashable, dict[str, int]] = {}
    for pod, info in state.all_pods():
        n, p, a, t = pod_terms(pod, info, index, state, memo)
        node_aff, pod_aff, anti, pns = node_aff + n, pod_aff + p, anti + a, pns + t
    return node_aff, pod_aff, anti, pns


def schedule_anyway_excess(state: ClusterState, index: PodIndex | None = None) -> int:
    """Σ over ScheduleAnyway groups of max(0, skew - maxSkew) (see the module docstring)."""
    return _schedule_anyway_excess(state, index if index is not None else PodIndex(state))
