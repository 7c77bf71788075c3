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
This module shares no code with the CP-SAT encoding; the solver must reach the same number.
"""
from __future__ import annotations

from dataclasses import dataclass

from models.objects import Cluster, Pod, WeightedPodAffinityTerm

from .interpodaffinity import term_matches
from .nodeaffinity.scoring import preferred_score
from .podtopologyspread.common import SpreadConstraint, counts_toward, node_eligible, own_constraints
from .state import ClusterState
from .tainttoleration import count_intolerable_prefer_no_schedule, prefer_no_schedule_tolerations

TERMS = ("node_affinity", "pod_affinity", "pod_anti_affinity", "prefer_no_schedule", "schedule_anyway_skew")


@dataclass(frozen=True)
class Multipliers:
    """How much each preference term weighs in P; the policy file sets them (defaults documented in README)."""

    node_affinity: int = 1
    pod_affinity: int = 1
    pod_anti_affinity: int = 1
    prefer_no_schedule: int = 10
    schedule_anyway_skew: int = 10


def _term_hits(p: Pod, node_labels: dict[str, str], weighted_terms: tuple[WeightedPodAffinityTerm, ...],
               by_domain: "DomainIndex", state: ClusterState) -> int:
    """Σ weights of `weighted_terms` that some other pod in p's domain matches."""
    total = 0
    for wt in weighted_terms:
        key = wt.term.topology_key
        if key not in node_labels:
            continue
        if any(q.key != p.key and term_matches(wt.term, p, q, state.namespace_labels)
               for q in by_domain.pods(key, node_labels[key])):
            total += wt.weight
    return total


class DomainIndex:
    """Pods of the final state grouped by (topology key, value), built per key on first use."""

    def __init__(self, state: ClusterState) -> None:
        self.state = state
        self.index: dict[str, dict[str, list[Pod]]] = {}

    def pods(self, key: str, value: str) -> list[Pod]:
        if key not in self.index:
            per_value: dict[str, list[Pod]] = {}
            for info in self.state.nodes.values():
                if key in info.node.labels:
                    per_value.setdefault(info.node.labels[key], []).extend(info.pods.values())
            self.index[key] = per_value
        return self.index[key].get(value, [])


def _schedule_anyway_excess(state: ClusterState) -> int:
    groups: dict[tuple[object, ...], tuple[Pod, SpreadConstraint]] = {}
    for pod, _info in sorted(state.all_pods(), key=lambda pi: pi[0].order):
        for c in own_constraints(pod, "ScheduleAnyway"):
            groups.setdefault((pod.namespace, c.topology_key, c.selector, c.max_skew), (pod, c))
    excess = 0
    for first, c in groups.values():
        counts: dict[str, int] = {}
        for info in state.nodes.values():
            node = info.node
            if c.topology_key not in node.labels or not node_eligible(c, first, node):
                continue
            value = node.labels[c.topology_key]
            counts[value] = counts.get(value, 0) + sum(
                1 for q in info.pods.values() if counts_toward(c.selector, first.namespace, q))
        if counts:
            excess += max(0, max(counts.values()) - min(counts.values()) - c.max_skew)
    return excess


def preference_terms(cluster: Cluster, state: ClusterState, m: Multipliers) -> dict[str, int]:
    """Each term of P, multiplied and signed; they sum to P."""
    node_aff = pod_aff = anti = pns = 0
    by_domain = DomainIndex(state)
    for pod, info in state.all_pods():
        node = info.node
        node_aff += preferred_score(pod, node)
        a = pod.affinity
        if a.pod_preferred:
            pod_aff += _term_hits(pod, node.labels, a.pod_preferred, by_domain, state)
        if a.anti_preferred:
            anti += _term_hits(pod, node.labels, a.anti_preferred, by_domain, state)
        pns += count_intolerable_prefer_no_schedule(node, prefer_no_schedule_tolerations(pod))
    return {
        "node_affinity": m.node_affinity * node_aff,
        "pod_affinity": m.pod_affinity * pod_aff,
        "pod_anti_affinity": -m.pod_anti_affinity * anti,
        "prefer_no_schedule": -m.prefer_no_schedule * pns,
        "schedule_anyway_skew": -m.schedule_anyway_skew * _schedule_anyway_excess(state),
    }
