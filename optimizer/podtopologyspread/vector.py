"""PodTopologySpread over every node at once, from per-node counts of the pods each constraint's selector
matches (NodeArrays.matching, kept up to date pod by pod) summed per domain with np.bincount.

filter(): filtering.py's verdicts — per DoNotSchedule constraint, eligible domains (nodes with every key of
the pod's constraints that pass the inclusion policies), their counts and global minimum (minDomains
applied); a node fails on a missing key or when its domain's count exceeds maxSkew + minimum - selfMatch.
score(): scoring.py's PreScore/Score/NormalizeScore over the candidates, same float64 operations in the same
order; it returns the NORMALIZED score (0..100, before the plugin weight). Nothing of its own to add/remove.
"""
from __future__ import annotations

from collections.abc import Hashable, Iterable
from typing import Any

import numpy as np

from ...models.objects import Pod
from ..framework import MAX_NODE_SCORE, Reason
from ..nodearrays import NodeArrays, selector_hint
from ..state import ClusterState
from .common import (HOSTNAME_KEY, NAME, SpreadConstraint, counts_toward, eligibility_test, filter_constraints,
                     score_constraints, self_match)
from .filtering import ERR_REASON_CONSTRAINTS_NOT_MATCH, ERR_REASON_NODE_LABEL_NOT_MATCH
from .scoring import topology_normalizing_weight

_MAX_MEMO = 4096  # label signatures whose score constraints are kept
_MISSING = (Reason(NAME, ERR_REASON_NODE_LABEL_NOT_MATCH, unresolvable=True),)
_OVER = (Reason(NAME, ERR_REASON_CONSTRAINTS_NOT_MATCH),)


class SpreadVector:
    def __init__(self, state: ClusterState, arrays: NodeArrays) -> None:
        self.state, self.arrays = state, arrays
        self._constraints: dict[Hashable, tuple[SpreadConstraint, ...]] = {}
        self._last: tuple[Pod, list[tuple[np.ndarray, np.ndarray]]] | None = None  # per constraint: missing, over

    # -- shared pieces -------------------------------------------------------------------------------------

    def _matches(self, c: SpreadConstraint, namespace: str) -> np.ndarray:
        """Per node: pods counting toward constraint c of a pod in `namespace` (countPodsMatchSelector)."""
        selector = c.selector
        return self.arrays.matching(("spread", selector, namespace),
                                    lambda q: counts_toward(selector, namespace, q), selector_hint(selector))

    def _has_keys(self, keys: tuple[str, ...]) -> np.ndarray:
        a = self.arrays
        return a.node_mask(("spread-keys", keys), lambda node: all(k in node.labels for k in keys))

    def _eligible(self, c: SpreadConstraint, pod: Pod, has_keys: np.ndarray) -> np.ndarray:
        test = eligibility_test(c, pod)
        if test is None:
            return has_keys
        key = ("spread-eligible", c.node_affinity_policy, c.node_taints_policy,
               tuple(sorted(pod.node_selector.items())), pod.affinity.node_required, pod.tolerations)
        return has_keys & self.arrays.node_mask(key, test)

    # -- Filter --------------------------------------------------------------------------------------------

    def filter(self, pod: Pod) -> np.ndarray | None:
        constraints = filter_constraints(pod, self.state)
        if not constraints:
            self._last = None
            return None
        a = self.arrays
        has_keys = self._has_keys(tuple(dict.fromkeys(c.topology_key for c in constraints)))
        verdicts = []
        ok = np.ones(a.size, bool)
        for c in constraints:
            eligible = self._eligible(c, pod, has_keys)
            codes = a.codes(c.topology_key)
            values = len(a.value_codes(c.topology_key))
            domains = codes[eligible]
            counts = np.bincount(domains, weights=self._matches(c, pod.namespace)[eligible],
                                 minlength=values).astype(np.int64)
            present = np.zeros(values, bool)
            present[domains] = True
            n_domains = int(present.sum())
            minimum = 0 if n_domains < c.min_domains or not n_domains else int(counts[present].min())
            limit = c.max_skew + minimum - int(self_match(c, pod))
            missing = codes < 0
            over = ~missing & (counts[np.maximum(codes, 0)] > limit)
            verdicts.append((missing, over))
            ok &= ~(missing | over)
        self._last = (pod, verdicts)
        return ok

    def reasons(self, pod: Pod, node_index: int) -> tuple[Reason, ...]:
        """The first constraint the node breaks decides (filter() must have run for this pod)."""
        if self._last is None or self._last[0] is not pod:
            if self.filter(pod) is None:
                return ()
        assert self._last is not None
        for missing, over in self._last[1]:
            if missing[node_index]:
                return _MISSING
            if over[node_index]:
                return _OVER
        return ()

    def guard_mask(self, guard: Any, pod: Pod) -> np.ndarray | None:
        """This plugin's placed-pod guard (batch.Guard) over every node: see guard_mask below."""
        return guard_mask(guard.candidates(pod), pod, self.arrays)

    # -- Score ---------------------------------------------------------------------------------------------

    def _score_constraints(self, pod: Pod) -> tuple[SpreadConstraint, ...]:
        """score_constraints, memoized by what it reads (services and workloads do not change)."""
        key = (pod.namespace, frozenset(pod.labels.items()), pod.owner_refs, pod.workload, pod.spread_constraints)
        found = self._constraints.get(key)
        if found is None:
            if len(self._constraints) >= _MAX_MEMO:
                self._constraints.clear()
            found = self._constraints[key] = score_constraints(pod, self.state)
        return found

    def score(self, pod: Pod, candidates: np.ndarray) -> np.ndarray:
        constraints = self._score_constraints(pod)
        if not constraints:
            return np.zeros(len(candidates), np.int64)  # Skip
        a = self.arrays
        # Only the pod's own constraints demand every key; system defaults let zone-less nodes spread by hostname.
        require_all = bool(pod.spread_constraints)
        has_keys = self._has_keys(tuple(dict.fromkeys(c.topology_key for c in constraints))) if require_all else None
        ignored = ~has_keys[candidates] if has_keys is not None else np.zeros(len(candidates), bool)
        scored = candidates[~ignored]
        total = np.zeros(len(candidates), np.float64)
        for c in constraints:
            codes = a.codes(c.topology_key)
            matches = self._matches(c, pod.namespace)
            if c.topology_key == HOSTNAME_KEY:
                weight = topology_normalizing_weight(len(scored))
                count = matches[candidates]
            else:
                values = len(a.value_codes(c.topology_key))
                domain = np.maximum(codes, 0)  # a missing key reads as the value "" (code 0)
                present = np.zeros(values, bool)
                present[domain[scored]] = True
                weight = topology_normalizing_weight(int(present.sum()))
                counted = present[domain]
                if has_keys is not None:
                    counted = counted & has_keys
                counted = self._eligible(c, pod, counted)
                counts = np.bincount(domain[counted], weights=matches[counted], minlength=values).astype(np.int64)
                count = counts[domain[candidates]]
            contribution = count * weight + float(c.max_skew - 1)
            total = total + np.where(codes[candidates] >= 0, contribution, 0.0)
        floor = np.floor(total)
        raw = floor.astype(np.int64) + (total - floor >= 0.5)  # Go math.Round (scores are never negative)
        raw[ignored] = 0
        if not scored.size:
            return np.zeros(len(candidates), np.int64)
        kept = raw[~ignored]
        lowest, highest = int(kept.min()), max(0, int(kept.max()))
        if highest == 0:
            out = np.full(len(candidates), MAX_NODE_SCORE, np.int64)
        else:
            out = MAX_NODE_SCORE * (highest + lowest - raw) // highest
        out[ignored] = 0
        return out


def guard_mask(groups: Iterable[Any], pod: Pod, arrays: NodeArrays) -> np.ndarray | None:
    """The placed-pod guard's check (batch.Guard.prepare) over every node: the nodes where
    `pod` would push a member of one of `groups` (its _SpreadGroups the pod may count toward) over maxSkew;
    None when there are none."""
    if pod.terminating:
        return None
    rejected: np.ndarray | None = None
    for g in groups:
        if g.members and counts_toward(g.constraint.selector, g.namespace, pod):
            bad = g.broken_domains()
            if bad:
                key = g.constraint.topology_key
                domain_of = g.domain_of  # the group's eligible nodes (memoized by the guard, shared, never changed)
                eligible = arrays.node_mask(("guard-domain", id(domain_of)), lambda node: node.name in domain_of)
                values = arrays.value_codes(key)
                hit = eligible & np.isin(arrays.codes(key), [values[d] for d in bad])
                rejected = hit if rejected is None else rejected | hit
    return rejected


def new(state: ClusterState, arrays: NodeArrays) -> SpreadVector:
    return SpreadVector(state, arrays)
