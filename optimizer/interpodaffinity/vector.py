"""InterPodAffinity over every node at once.

Incremental state (add/remove, upstream's AddPod/RemovePod): the terms of the pods present, grouped by
(term, owner namespace[, weight]) with, per group, how many such pods sit in each domain (value of the term's
topology key) — required anti-affinity terms for Filter's symmetry, required affinity / preferred terms for
Score's. An incoming pod finds the groups whose terms match it once per label signature (namespace, labels),
memoized and extended as new groups appear. The incoming pod's own terms count the pods they match per node
through NodeArrays.matching, summed per domain with np.bincount.

filter(): filtering.py's verdicts and its order of checks (pod affinity with the first-pod rule, pod
anti-affinity, existing pods' anti-affinity). score(): scoring.py's topology scores summed per node and
min-max normalized with the same float arithmetic; it returns the NORMALIZED score (0..100).
"""
from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping
from typing import Any
from dataclasses import dataclass

import numpy as np

from ...models.objects import Pod, PodAffinityTerm
from ..framework import MAX_NODE_SCORE, Reason
from ..nodearrays import NodeArrays, selector_hint
from ..state import ClusterState
from .filtering import (_NO_LABELS, ERR_REASON_AFFINITY_RULES_NOT_MATCH, ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH,
                        ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH, NAME, AffinityTerm, _existing_term_matches,
                        merged_affinity_term)
from .scoring import HARD_POD_AFFINITY_WEIGHT

_AFFINITY = (Reason(NAME, ERR_REASON_AFFINITY_RULES_NOT_MATCH, unresolvable=True),)
_ANTI = (Reason(NAME, ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH),)
_EXISTING = (Reason(NAME, ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH),)


@dataclass
class TermGroup:
    """Pods present carrying one term (same term, same owner namespace, same weight): how many per domain."""

    term: PodAffinityTerm
    owner: Pod  # one of them: the term's namespace defaults to its owner's
    weight: int
    counts: np.ndarray  # per value code of term.topology_key


@dataclass(frozen=True)
class FilterCounts:
    """What the placed-pod guard reads of InterPodAffinity's PreFilter state: were there pods matching all of
    the incoming pod's required affinity terms (affinity_counts non-empty)?"""

    affinity_counts: bool


class _Groups:
    """Term groups of one kind, indexed by a label pair their selector requires (None: no such pair), so an
    incoming pod is matched only against the groups it may match."""

    def __init__(self, arrays: NodeArrays) -> None:
        self.arrays = arrays
        self.groups: dict[Hashable, TermGroup] = {}
        self.by_hint: dict[tuple[str, str] | None, list[TermGroup]] = {}

    def update(self, term: PodAffinityTerm, owner: Pod, weight: int, node_index: int, delta: int) -> None:
        code = int(self.arrays.codes(term.topology_key)[node_index])
        if code < 0:
            return  # the pod's node lacks the key: the term counts nowhere
        key = (term, owner.namespace, weight)
        g = self.groups.get(key)
        if g is None:
            g = self.groups[key] = TermGroup(term, owner, weight,
                                             np.zeros(len(self.arrays.value_codes(term.topology_key)), np.int64))
            self.by_hint.setdefault(selector_hint(term.label_selector), []).append(g)
        g.counts[code] += delta

    def matching(self, pod: Pod, ns_labels: Mapping[str, str]) -> list[TermGroup]:
        """The groups whose term matches `pod` (an existing pod's term judged on the incoming pod)."""
        by_hint = self.by_hint
        candidates = list(by_hint.get(None, ()))
        for pair in pod.labels.items():
            candidates += by_hint.get(pair, ())
        return [g for g in candidates if _existing_term_matches(g.term, g.owner, pod, ns_labels)]


class AffinityVector:
    def __init__(self, state: ClusterState, arrays: NodeArrays) -> None:
        self.state, self.arrays = state, arrays
        self.anti = _Groups(arrays)  # existing pods' required anti-affinity terms (Filter)
        self.scoring = _Groups(arrays)  # existing pods' required affinity and preferred terms (Score)
        self._merged: dict[Hashable, tuple[AffinityTerm, ...]] = {}
        self._last: tuple[Pod, np.ndarray, np.ndarray, np.ndarray] | None = None
        # What the guard's bound() reads of PreFilter's result, for the last pod filtered (None: not run)
        self.guard_pre: FilterCounts | None = None
        for i, info in enumerate(state.nodes.values()):
            for pod in info.pods.values():
                self.add(pod, i)

    def _update(self, pod: Pod, node_index: int, delta: int) -> None:
        a = pod.affinity
        for t in a.anti_required:
            self.anti.update(t, pod, 0, node_index, delta)
        if a.pod_required or a.pod_preferred or a.anti_preferred:
            for t in a.pod_required:
                self.scoring.update(t, pod, HARD_POD_AFFINITY_WEIGHT, node_index, delta)
            for w in a.pod_preferred:
                self.scoring.update(w.term, pod, w.weight, node_index, delta)
            for w in a.anti_preferred:
                self.scoring.update(w.term, pod, -w.weight, node_index, delta)

    def add(self, pod: Pod, node_index: int) -> None:
        self._update(pod, node_index, 1)

    def remove(self, pod: Pod, node_index: int) -> None:
        self._update(pod, node_index, -1)

    def _merge(self, terms: tuple[PodAffinityTerm, ...], pod: Pod) -> tuple[AffinityTerm, ...]:
        key = (terms, pod.namespace)
        found = self._merged.get(key)
        if found is None:
            found = self._merged[key] = tuple(merged_affinity_term(t, pod, self.state.namespace_labels)
                                              for t in terms)
        return found

    def _per_domain(self, key: Hashable, terms: tuple[AffinityTerm, ...], topology_key: str) -> np.ndarray:
        """Pods matching all `terms` (incoming side: nil namespace labels) per value of topology_key, counted
        on the nodes carrying the key."""
        a = self.arrays
        matches = a.matching(key, lambda q: all(t.matches(q, None) for t in terms), selector_hint(terms[0].selector))
        codes = a.codes(topology_key)
        has = codes >= 0
        return np.bincount(codes[has], weights=matches[has], minlength=len(a.value_codes(topology_key))).astype(
            np.int64)

    # -- Filter --------------------------------------------------------------------------------------------

    def filter(self, pod: Pod) -> np.ndarray | None:
        a = pod.affinity
        state = self.state
        self._last = None
        self.guard_pre = None
        if not (a.pod_required or a.anti_required) and not state.nodes_with_required_anti_affinity:
            return None
        arrays = self.arrays
        ns_labels = state.namespace_labels.get(pod.namespace, _NO_LABELS)
        existing = [g for g in self.anti.matching(pod, ns_labels) if g.counts.any()]
        if not existing and not a.pod_required and not a.anti_required:
            return None  # Skip
        size = arrays.size
        affinity_fail = np.zeros(size, bool)
        anti_fail = np.zeros(size, bool)
        existing_fail = np.zeros(size, bool)
        for g in existing:
            codes = arrays.codes(g.term.topology_key)
            existing_fail |= (codes >= 0) & (g.counts[np.maximum(codes, 0)] > 0)
        if a.pod_required:
            terms = self._merge(a.pod_required, pod)
            exist = np.ones(size, bool)
            missing = np.zeros(size, bool)
            matched = 0
            for t in terms:
                codes = arrays.codes(t.topology_key)
                counts = self._per_domain(("ipa-all", terms), terms, t.topology_key)
                matched += int(counts.sum())
                missing |= codes < 0
                exist &= counts[np.maximum(codes, 0)] > 0
            # First-pod rule: nobody matches all terms anywhere and the pod matches them itself.
            first_pod = not matched and all(t.matches(pod, None) for t in terms)
            affinity_fail = missing | (~exist if not first_pod else False)
            self.guard_pre = FilterCounts(bool(matched))
        for t in self._merge(a.anti_required, pod):
            codes = arrays.codes(t.topology_key)
            counts = self._per_domain(("ipa-one", t), (t,), t.topology_key)
            anti_fail |= (codes >= 0) & (counts[np.maximum(codes, 0)] > 0)
        self._last = (pod, affinity_fail, anti_fail, existing_fail)
        return ~(affinity_fail | anti_fail | existing_fail)

    def reasons(self, pod: Pod, node_index: int) -> tuple[Reason, ...]:
        """Upstream's first failing check only (filter() must have run for this pod)."""
        if self._last is None or self._last[0] is not pod:
            if self.filter(pod) is None:
                return ()
        assert self._last is not None
        _, affinity_fail, anti_fail, existing_fail = self._last
        if affinity_fail[node_index]:
            return _AFFINITY
        if anti_fail[node_index]:
            return _ANTI
        if existing_fail[node_index]:
            return _EXISTING
        return ()

    def guard_mask(self, guard: Any, pod: Pod) -> np.ndarray | None:
        """This plugin's placed-pod guard (batch.Guard) over every node: see guard_mask below."""
        return guard_mask(guard.lonely.values(), pod, self.arrays)

    # -- Score ---------------------------------------------------------------------------------------------

    def score(self, pod: Pod, candidates: np.ndarray) -> np.ndarray:
        a = pod.affinity
        state, arrays = self.state, self.arrays
        zeros = np.zeros(len(candidates), np.int64)
        if not (a.pod_preferred or a.anti_preferred) and not state.nodes_with_affinity:
            return zeros  # Skip
        by_key: dict[str, np.ndarray] = {}

        def add(key: str, counts: np.ndarray) -> None:
            found = by_key.get(key)
            by_key[key] = counts if found is None else found + counts

        signed = [(w.term, w.weight) for w in a.pod_preferred] + [(w.term, -w.weight) for w in a.anti_preferred]
        for term, weight in signed:
            (t,) = self._merge((term,), pod)
            add(t.topology_key, weight * self._per_domain(("ipa-one", t), (t,), t.topology_key))
        ns_labels = state.namespace_labels.get(pod.namespace, _NO_LABELS)
        for g in self.scoring.matching(pod, ns_labels):
            add(g.term.topology_key, g.weight * g.counts)
        if not by_key:
            return zeros
        raw = np.zeros(len(candidates), np.int64)
        for key, per_value in by_key.items():
            codes = arrays.codes(key)[candidates]
            raw += np.where(codes >= 0, per_value[np.maximum(codes, 0)], 0)
        lo, hi = int(raw.min()), int(raw.max())
        if hi - lo <= 0:
            return zeros
        return np.trunc(float(MAX_NODE_SCORE) * ((raw - lo).astype(np.float64) / float(hi - lo))).astype(np.int64)


def guard_mask(lonely: Iterable[Any], pod: Pod, arrays: NodeArrays) -> np.ndarray | None:
    """The placed-pod guard's check (batch.Guard.prepare) over every node: the nodes
    where `pod`, matching all the terms of a placed pod still alone by the first-pod rule (`lonely`: the
    guard's _Lonely records), would land outside that pod's domain; None when there are none."""
    rejected: np.ndarray | None = None
    for q in lonely:
        if all(t.matches(pod, None) for t in q.terms):
            has_any = np.zeros(arrays.size, bool)
            differs = np.zeros(arrays.size, bool)
            for t in q.terms:
                codes = arrays.codes(t.topology_key)
                has_any |= codes >= 0
                differs |= codes != arrays.value_codes(t.topology_key)[q.labels[t.topology_key]]
            hit = has_any & differs
            rejected = hit if rejected is None else rejected | hit
    return rejected


def new(state: ClusterState, arrays: NodeArrays) -> AffinityVector:
    return AffinityVector(state, arrays)
