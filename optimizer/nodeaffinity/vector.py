"""NodeAffinity over every node at once, from per-node masks of each nodeSelector pair and each node selector
term (nodes never change, so a mask is computed once per pair or term and shared by every pod that uses it).

filter(): filtering.py's verdicts — Skip without nodeSelector and required affinity; the PreFilterResult
cases (terms pinning node names through matchFields metadata.name) reject the other nodes with
ERR_REASON_PRE_FILTER_RESULT, an empty pinned set every node with ERR_REASON_CONFLICT; otherwise nodeSelector
AND one required term, ERR_REASON_POD. score(): the summed weights of the matching preferred terms, then
DefaultNormalizeScore; it returns the NORMALIZED score. Nothing of its own to add/remove.
"""
from __future__ import annotations

import numpy as np

from ...models.objects import Pod
from ...models.selectors import NodeSelectorTerm
from ..framework import Reason
from ..nodearrays import NodeArrays, default_normalize
from ..state import ClusterState
from .filtering import ERR_REASON_CONFLICT, ERR_REASON_POD, ERR_REASON_PRE_FILTER_RESULT, NAME, pre_filter

_POD = (Reason(NAME, ERR_REASON_POD, unresolvable=True),)
_CONFLICT = (Reason(NAME, ERR_REASON_CONFLICT, unresolvable=True, pre_filter=True),)
_PRE_FILTER_RESULT = (Reason(NAME, ERR_REASON_PRE_FILTER_RESULT, unresolvable=True),)


class NodeAffinityVector:
    def __init__(self, state: ClusterState, arrays: NodeArrays) -> None:
        self.state, self.arrays = state, arrays
        self._last: tuple[Pod, np.ndarray | None, np.ndarray] | None = None  # pod, pinned mask, required mask
        self._conflict = False

    def _term(self, t: NodeSelectorTerm) -> np.ndarray:
        return self.arrays.node_mask(("node-term", t), lambda node: t.matches(node.name, node.labels))

    def _required(self, pod: Pod) -> np.ndarray:
        """GetRequiredNodeAffinity(pod).Match(node) on every node."""
        a = self.arrays
        mask = np.ones(a.size, bool)
        for key, value in pod.node_selector.items():
            mask &= a.codes(key) == a.value_codes(key).get(value, -2)
        required = pod.affinity.node_required
        if required is not None:
            any_term = np.zeros(a.size, bool)
            for t in required.terms:
                any_term |= self._term(t)
            mask &= any_term
        return mask

    def filter(self, pod: Pod) -> np.ndarray | None:
        pre = pre_filter(pod, self.state)
        if pre.skip:
            self._last = None
            return None
        pinned = None
        # an empty pinned set is PreFilter's "conflict"; a set naming no node of the cluster is not
        self._conflict = pre.node_names is not None and not pre.node_names
        if pre.node_names is not None:
            index = self.arrays.index
            pinned = np.zeros(self.arrays.size, bool)
            pinned[[index[n] for n in pre.node_names if n in index]] = True
        required = self._required(pod)
        self._last = (pod, pinned, required)
        return required if pinned is None else pinned & required

    def reasons(self, pod: Pod, node_index: int) -> tuple[Reason, ...]:
        if self._last is None or self._last[0] is not pod:
            if self.filter(pod) is None:
                return ()
        assert self._last is not None
        _, pinned, required = self._last
        if pinned is not None and self._conflict:
            return _CONFLICT
        if pinned is not None and not pinned[node_index]:
            return _PRE_FILTER_RESULT
        return () if required[node_index] else _POD

    def pre_filter_result_size(self, pod: Pod) -> int | None:
        """How many nodes the pod's PreFilterResult keeps (None: no PreFilterResult; 0: a conflict)."""
        if self._last is None or self._last[0] is not pod:
            if self.filter(pod) is None:
                return None
        assert self._last is not None
        pinned = self._last[1]
        return None if pinned is None else 0 if self._conflict else int(pinned.sum())

    def outside_pre_filter_result(self, pod: Pod) -> np.ndarray | None:
        """The nodes the pod's PreFilterResult leaves out (None: none), where no other Filter runs."""
        if self._last is None or self._last[0] is not pod:
            if self.filter(pod) is None:
                return None
        assert self._last is not None
        pinned = self._last[1]
        return None if pinned is None or self._conflict else ~pinned

    def score(self, pod: Pod, candidates: np.ndarray) -> np.ndarray:
        raw = np.zeros(len(candidates), np.int64)
        for pref in pod.affinity.node_preferred:
            if pref.weight:
                raw += np.where(self._term(pref.preference)[candidates], pref.weight, 0)
        return default_normalize(raw, reverse=False)


def new(state: ClusterState, arrays: NodeArrays) -> NodeAffinityVector:
    return NodeAffinityVector(state, arrays)
