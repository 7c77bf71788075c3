"""InterPodAffinity under podplan's batch semantics: every pod of a final state is judged with itself removed.

- `Guard` (Plugin.placed_guard): a placed pod with required affinity that no other pod satisfies yet is valid
  only by upstream's first-pod rule (it matches its own terms). kube-scheduler would bind a later pod matching
  all its terms in another domain, after which the placed pod is judged against that pod and fails. The
  simulator asks the guard which nodes would do that. (Anti-affinity needs no guard: kube-scheduler checks it
  from both sides.)
- `Judge` (Plugin.final_state_judge): the plugin's PreFilter for a pod with itself removed. The incoming half
  (the pod's own required terms: getIncomingAffinityAntiAffinityCounts) is counted once per (namespace, terms)
  over the whole state from the label index; the symmetric half (existing pods' required anti-affinity
  matching the pod) comes from an index of every resolved anti-affinity term -> its topology pairs; the pod's
  own contributions are subtracted.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ...models.objects import Pod
from ..framework import Reason
from ..state import ClusterState, NodeInfo, PodIndex, restore, subtract
from .filtering import (NAME, AffinityTerm, PreFilterState, affinity_term, filter, merged_affinity_term,
                        pod_matches_all_terms)

ERR_REASON_BREAKS_AFFINITY = "node(s) would break a placed pod's pod affinity rules"


@dataclass
class _Lonely:
    """A placed pod with required affinity that no other pod satisfies yet (upstream's first-pod rule)."""

    pod: Pod
    labels: dict[str, str]  # its node's labels
    terms: tuple[AffinityTerm, ...]


class Guard:
    """Placed pods valid only by the first-pod rule, with what tells in O(1) per node whether binding a pod there
    leaves one of them alone."""

    def __init__(self, state: ClusterState) -> None:
        self.state = state
        self.lonely: dict[str, _Lonely] = {}
        self._matching: dict[tuple[AffinityTerm, ...], int] = {}  # terms -> pods matching them all (initial state)
        for pod, info in list(state.all_pods()):
            self._check_lonely(pod, info, None)
        self._matching.clear()

    def prepare(self, pod: Pod) -> Callable[[NodeInfo], tuple[Reason, ...]] | None:
        """The per-node check for `pod`, or None when it can break nobody."""
        lonely = [q for q in self.lonely.values() if all(t.matches(pod, None) for t in q.terms)]
        if not lonely:
            return None

        def check(info: NodeInfo) -> tuple[Reason, ...]:
            labels = info.node.labels
            for q in lonely:
                if any(t.topology_key in labels for t in q.terms) and any(
                        labels.get(t.topology_key) != q.labels[t.topology_key] for t in q.terms):
                    return (Reason(NAME, ERR_REASON_BREAKS_AFFINITY),)
            return ()

        return check

    def bound(self, pod: Pod, info: NodeInfo, pre: Any) -> None:
        """`pod` was just added to `info`; `pre` is this plugin's PreFilterState for it, if PreFilter ran."""
        labels = info.node.labels
        for key in [k for k, q in self.lonely.items()
                    if all(t.matches(pod, None) for t in q.terms) and any(t.topology_key in labels for t in q.terms)]:
            del self.lonely[key]  # the guard let it in, so it sits in the lonely pod's domain
        self._check_lonely(pod, info, pre)

    def _check_lonely(self, pod: Pod, info: NodeInfo, pre: Any) -> None:
        """Is `pod` (just placed) valid only by the first-pod rule? Then later pods must not leave it alone."""
        required = pod.affinity.pod_required
        if not required:
            return
        labels = info.node.labels
        terms = tuple(merged_affinity_term(t, pod, self.state.namespace_labels) for t in required)
        if not all(t.topology_key in labels for t in terms) or not all(t.matches(pod, None) for t in terms):
            return  # not valid by the first-pod rule: either satisfied by others or already broken
        if pre is not None and hasattr(pre, "affinity_counts"):
            alone = not pre.affinity_counts  # counted before the pod was added
        else:
            if terms not in self._matching:
                self._matching[terms] = sum(1 for other in self.state.nodes.values()
                                            if any(t.topology_key in other.node.labels for t in terms)
                                            for q in other.pods.values() if all(t.matches(q, None) for t in terms))
            alone = self._matching[terms] == 1  # the pod itself matches and its node has the keys
        if alone:
            self.lonely[pod.key] = _Lonely(pod, labels, terms)


class Judge:
    """InterPodAffinity's PreFilter for a pod with itself removed.

    The incoming half (the pod's own required terms: getIncomingAffinityAntiAffinityCounts) is counted once
    per (namespace, terms) over the whole state from the label index; the symmetric half (existing pods'
    required anti-affinity matching the pod) comes from an index of every resolved anti-affinity term -> its
    topology pairs; the pod's own contributions are subtracted.
    """

    def __init__(self, state: ClusterState, index: PodIndex) -> None:
        self.state = state
        self.index = index
        self.incoming: dict[Hashable, Any] = {}
        self.anti_index: dict[AffinityTerm, Counter[tuple[str, str]]] = {}
        self.by_pair: dict[tuple[str, str], list[tuple[AffinityTerm, Counter[tuple[str, str]]]]] | None = None
        self.unkeyed: list[tuple[AffinityTerm, Counter[tuple[str, str]]]] = []
        for name in state.nodes_with_required_anti_affinity:
            info = state.nodes[name]
            labels = info.node.labels
            for owner in info.pods_with_required_anti_affinity.values():
                for t in owner.affinity.anti_required:
                    term = affinity_term(t, owner)
                    if term.topology_key in labels:
                        pairs = self.anti_index.setdefault(term, Counter())
                        pairs[(term.topology_key, labels[term.topology_key])] += 1

    def _anti_terms_for(self, pod: Pod) -> Iterable[tuple[AffinityTerm, Counter[tuple[str, str]]]]:
        """The indexed anti-affinity terms that could match `pod`: those whose selector's first matchLabels pair
        the pod carries, and those without matchLabels."""
        if self.by_pair is None:
            self.by_pair, self.unkeyed = {}, []
            for term, pairs in self.anti_index.items():
                sel = term.selector
                if sel is not None and sel.match_labels:
                    self.by_pair.setdefault(sel.match_labels[0], []).append((term, pairs))
                elif sel is not None:
                    self.unkeyed.append((term, pairs))
        found = list(self.unkeyed)
        for pair in pod.labels.items():
            found.extend(self.by_pair.get(pair, ()))
        return found

    def _term_candidates(self, term: AffinityTerm) -> list[tuple[Pod, NodeInfo]]:
        every_namespace = term.namespace_selector is not None and term.namespace_selector.matches({})
        return self.index.candidates(term.selector, None if every_namespace else term.namespaces)

    def _incoming(self, pod: Pod) -> Any:
        """The incoming half of PreFilter for `pod`'s required terms, over the whole state."""
        a, ns_map = pod.affinity, self.state.namespace_labels
        affinity_terms = tuple(merged_affinity_term(t, pod, ns_map) for t in a.pod_required)
        anti_terms = tuple(merged_affinity_term(t, pod, ns_map) for t in a.anti_required)
        affinity: dict[tuple[str, str], int] = {}
        anti: dict[tuple[str, str], int] = {}
        if affinity_terms:
            for q, info in self._term_candidates(affinity_terms[0]):
                labels = info.node.labels
                if all(t.matches(q, None) for t in affinity_terms):
                    for t in affinity_terms:  # once per term, as upstream
                        if t.topology_key in labels:
                            pair = (t.topology_key, labels[t.topology_key])
                            affinity[pair] = affinity.get(pair, 0) + 1
        for t in anti_terms:
            for q, info in self._term_candidates(t):
                labels = info.node.labels
                if t.topology_key in labels and t.matches(q, None):
                    pair = (t.topology_key, labels[t.topology_key])
                    anti[pair] = anti.get(pair, 0) + 1
        return PreFilterState(affinity_terms, anti_terms, {}, affinity, anti, False)

    def _existing(self, pod: Pod, labels: Mapping[str, str]) -> dict[tuple[str, str], int]:
        """getExistingAntiAffinityCounts restricted to the pairs of the pod's node, without the pod itself."""
        ns_labels = self.state.namespace_labels.get(pod.namespace, {})
        counts: dict[tuple[str, str], int] = {}
        for term, pairs in self._anti_terms_for(pod):
            value = labels.get(term.topology_key)
            if value is None:
                continue
            pair = (term.topology_key, value)
            n = pairs.get(pair, 0)
            if n and term.matches(pod, ns_labels):
                counts[pair] = counts.get(pair, 0) + n
        for t in pod.affinity.anti_required:
            term = affinity_term(t, pod)
            value = labels.get(term.topology_key)
            if value is not None and term.matches(pod, ns_labels):
                pair = (term.topology_key, value)
                counts[pair] -= 1  # the pod's own term, counted above through the index
        return {pair: n for pair, n in counts.items() if n > 0}

    def filter(self, pod: Pod, info: NodeInfo) -> list[Reason]:
        labels = info.node.labels
        existing = self._existing(pod, labels)
        a = pod.affinity
        if not a.pod_required and not a.anti_required:
            if not existing:
                return []  # PreFilter Skip
            pre = PreFilterState((), (), existing, {}, {}, False)
            return filter(pod, pre, info, self.state)
        key = (pod.namespace, a.pod_required, a.anti_required)
        full = self.incoming.get(key)
        if full is None:
            full = self.incoming[key] = self._incoming(pod)
        undo: list[tuple[dict[Any, int], Any, int]] = []
        matches_own = pod_matches_all_terms(full.affinity_terms, pod)
        if matches_own:
            for t in full.affinity_terms:
                if t.topology_key in labels:
                    subtract(full.affinity_counts, (t.topology_key, labels[t.topology_key]), undo)
        for t in full.anti_affinity_terms:
            if t.topology_key in labels and t.matches(pod, None):
                subtract(full.anti_affinity_counts, (t.topology_key, labels[t.topology_key]), undo)
        pre = PreFilterState(full.affinity_terms, full.anti_affinity_terms, existing, full.affinity_counts,
                                 full.anti_affinity_counts, matches_own)
        try:
            return filter(pod, pre, info, self.state)
        finally:
            restore(undo)
