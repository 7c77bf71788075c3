"""Scores in P's own units for the preference-led pass (optimizer.warmstart): what placing the pod on a node
adds to the preference score P, instead of kube-scheduler's normalized counts.

kube-scheduler's InterPodAffinity scores a node by how many matching pods its domain holds (weight x count),
then maps the scores to 0..100 over the feasible nodes. P (optimizer.objective) pays a preferred term per pod,
once: a pod pays its anti-affinity term when ANY other matching pod shares its domain. The two disagree where it
matters most for terms by zone: a class of n pods apart by zone is spread evenly by counts, (2, 2, 2) for 6
pods, where every pod pays; P is best at (1, 1, n-2), where n-2 pay (two pods alone in their zones, every other
pod in the third zone pays once whatever how many share it). Scored by counts, the pass left the anti-zone
shapes 10-20 % below the bound and the search moved them one pod at a time.

`MarginalAffinity` scores a node by the change of P's pod-affinity and pod-anti-affinity terms if the pod lands
there, with every pod placed so far where it is:
- the pod's own preferred terms: + (affinity) or - (anti-affinity) its weight when a matching pod is already
  in its domain there;
- the terms of the pods already placed that match it: each such pod that has no other matching pod in the
  domain yet starts being paid (affinity) or paying (anti-affinity). A holder with no matching pod but itself
  is alone; when its term matches its own labels, one matching pod in the domain is itself.
For the class apart by zone: 0 in an empty zone, -2w in a zone holding one of its pods (it and the one there
start paying), -w in a zone holding two or more (only it). So the first three pods take a zone each, the
fourth any zone, and every later pod joins the fourth: (1, 1, n-2), where the zone's room allows.

`MarginalNodeAffinity` scores the sum of the preferred node-affinity weights the node matches, unnormalized.

Both are multiplied by the policy's multipliers and by P_UNIT, and not normalized, so that one P unit weighs the
same in both and their sum is the change of P. The other Score plugins stay normalized to 0..100: weighed up by
the pass, such a plugin counts as at most 100 / P_UNIT = 10 units of P, about one unit of its own term at the
default policy (a PreferNoSchedule taint or a unit of ScheduleAnyway skew pays 10); the resource scores, at weight
1, break ties. At P_UNIT 1, kube-scheduler's default spreading (system-default ScheduleAnyway constraints, which P
does not pay) counted as much as a web's preferred pod affinity to its cache's node (weight 50) and its node
affinity together, and the pass put 10 of 40 webs beside their cache where the count-based scores had put 40. Only the vectorized scheduler runs them (the pass's profile
replaces the two plugins' vectorized forms; a profile that runs the reference loop keeps kube-scheduler's
scores). Filters are untouched: every pod still goes where kube-scheduler could bind it.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..models.objects import Pod
from .interpodaffinity import PLUGIN as INTER_POD_AFFINITY
from .interpodaffinity.filtering import _NO_LABELS, _existing_term_matches
from .interpodaffinity.vector import AffinityVector, _Groups
from .nodeaffinity import PLUGIN as NODE_AFFINITY
from .nodeaffinity.vector import NodeAffinityVector
from .nodearrays import NodeArrays, selector_hint
from .policy import Policy
from .state import ClusterState

# Score points per unit of P (see the module docstring).
P_UNIT = 10


class MarginalAffinity(AffinityVector):
    """InterPodAffinity's vectorized form with score() = the change of P's pod (anti-)affinity terms."""

    def __init__(self, state: ClusterState, arrays: NodeArrays, policy: Policy) -> None:
        self.policy = policy
        self.preferred = _Groups(arrays)  # placed pods' preferred terms only (signed weights), per domain
        super().__init__(state, arrays)

    def _update(self, pod: Pod, node_index: int, delta: int) -> None:
        super()._update(pod, node_index, delta)
        a = pod.affinity
        for w in a.pod_preferred:
            self.preferred.update(w.term, pod, w.weight, node_index, delta)
        for w in a.anti_preferred:
            self.preferred.update(w.term, pod, -w.weight, node_index, delta)

    def _mult(self, weight: int) -> int:
        return P_UNIT * (self.policy.pod_affinity if weight > 0 else -self.policy.pod_anti_affinity) * abs(weight)

    def _matched(self, g: Any) -> np.ndarray:
        """Placed pods matching group g's term (as P judges an existing pod's term), per domain."""
        arrays, nsl = self.arrays, self.state.namespace_labels
        term, owner = g.term, g.owner
        matches = arrays.matching(("ipa-marginal", term, owner.namespace),
                                  lambda q: _existing_term_matches(term, owner, q, nsl.get(q.namespace, _NO_LABELS)),
                                  selector_hint(term.label_selector))
        codes = arrays.codes(term.topology_key)
        has = codes >= 0
        return np.bincount(codes[has], weights=matches[has],
                           minlength=len(arrays.value_codes(term.topology_key))).astype(np.int64)

    def score(self, pod: Pod, candidates: np.ndarray) -> np.ndarray:
        a = pod.affinity
        arrays, state = self.arrays, self.state
        by_key: dict[str, np.ndarray] = {}

        def add(key: str, per_value: np.ndarray) -> None:
            found = by_key.get(key)
            by_key[key] = per_value if found is None else found + per_value

        for term, weight in [(w.term, w.weight) for w in a.pod_preferred] + [(w.term, -w.weight)
                                                                              for w in a.anti_preferred]:
            if not self._mult(weight):
                continue
            (t,) = self._merge((term,), pod)
            present = self._per_domain(("ipa-one", t), (t,), t.topology_key) > 0
            add(t.topology_key, self._mult(weight) * present.astype(np.int64))
        ns_labels = state.namespace_labels.get(pod.namespace, _NO_LABELS)
        for g in self.preferred.matching(pod, ns_labels):
            if not g.counts.any() or not self._mult(g.weight):
                continue
            matched = self._matched(g)
            self_match = _existing_term_matches(g.term, g.owner, g.owner,
                                                state.namespace_labels.get(g.owner.namespace, _NO_LABELS))
            # holders with no other matching pod in the domain: all of them where nothing matches, the one
            # holder where the only matching pod is itself
            alone = np.where(matched == 0, g.counts, 0)
            if self_match:
                alone = alone + np.where((matched == 1) & (g.counts >= 1), 1, 0)
            add(g.term.topology_key, self._mult(g.weight) * alone)
        raw = np.zeros(len(candidates), np.int64)
        for key, per_value in by_key.items():
            codes = arrays.codes(key)[candidates]
            raw += np.where(codes >= 0, per_value[np.maximum(codes, 0)], 0)
        return raw


class MarginalNodeAffinity(NodeAffinityVector):
    """NodeAffinity's vectorized form with score() = the preferred weights the node matches, times the policy's
    multiplier and P_UNIT, unnormalized."""

    def __init__(self, state: ClusterState, arrays: NodeArrays, policy: Policy) -> None:
        self.policy = policy
        super().__init__(state, arrays)

    def score(self, pod: Pod, candidates: np.ndarray) -> np.ndarray:
        raw = np.zeros(len(candidates), np.int64)
        for pref in pod.affinity.node_preferred:
            if pref.weight:
                raw += np.where(self._term(pref.preference)[candidates], pref.weight, 0)
        return P_UNIT * self.policy.node_affinity * raw


def marginal_plugins(policy: Policy) -> dict[str, Any]:
    """Plugin name -> the plugin with its vectorized form scoring in P's units (for the terms the policy pays)."""
    from dataclasses import replace

    out: dict[str, Any] = {}
    if policy.pod_affinity or policy.pod_anti_affinity:
        out[INTER_POD_AFFINITY.name] = replace(INTER_POD_AFFINITY,
                                               vector=lambda state, arrays: MarginalAffinity(state, arrays, policy))
    if policy.node_affinity:
        out[NODE_AFFINITY.name] = replace(NODE_AFFINITY,
                                          vector=lambda state, arrays: MarginalNodeAffinity(state, arrays, policy))
    return out
