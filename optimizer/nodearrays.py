"""The cluster as numpy arrays over its nodes (in ClusterState order), for the vectorized simulator.

NodeArrays holds what the vectorized plugins read for every node at once and keeps it up to date pod by pod
(`add` / `remove`, upstream's AddPod / RemovePod): allocatable, requested and non-zero requested amounts as
int64 matrices nodes × resources, pod counts, per-label-key value codes, and per-node counts of the pods
satisfying a predicate (a spread selector, an affinity term), registered on first use and then maintained
incrementally. Nodes never change during a simulation, so everything derived from Node objects alone
(label codes, static masks) is computed once.

StaticRule is the vectorized form of a plugin that reads only the pod and the Node object (NodeUnschedulable,
NodeName, TaintToleration, NodeAffinity): its verdicts and raw scores are computed once per pod spec with the
plain per-node functions and kept as arrays; upstream's DefaultNormalizeScore is an array expression.
"""
from __future__ import annotations

from collections.abc import Callable, Hashable

import numpy as np

from ..models.objects import Node, Pod
from ..models.selectors import LabelSelector

from .framework import MAX_NODE_SCORE, FilterFn, PreScoreFn, Reason, ScoreFn
from .state import ClusterState

PodPredicate = Callable[[Pod], bool]
LabelPair = tuple[str, str]
_MAX_SPECS = 256  # per-spec entries kept by a StaticRule (a workload's replicas share one)


def selector_hint(selector: LabelSelector | None) -> LabelPair | None:
    """A (key, value) label every pod the selector matches carries, if the selector names one; used to visit
    only the pods carrying it."""
    if selector is None:
        return None
    if selector.match_labels:
        return selector.match_labels[0]
    for r in selector.match_expressions:
        if r.operator == "In" and len(r.values) == 1:
            return r.key, r.values[0]
    return None


class NodeArrays:
    """Per-node arrays of one ClusterState, updated by add/remove as pods come and go."""

    def __init__(self, state: ClusterState) -> None:
        self.state = state
        infos = list(state.nodes.values())
        self.nodes: list[Node] = [info.node for info in infos]
        self.names: list[str] = [info.name for info in infos]
        self.index: dict[str, int] = {name: i for i, name in enumerate(self.names)}
        self.size = len(infos)
        resources = sorted({r for n in self.nodes for r in n.allocatable} | {
            r for info in infos for p in info.pods.values() for r in (*p.requests, *p.nonzero_requests)})
        self.columns: dict[str, int] = {r: i for i, r in enumerate(resources)}
        self.allocatable = np.array([[n.allocatable.get(r, 0) for r in resources] for n in self.nodes],
                                    np.int64).reshape(self.size, len(resources))
        self.requested = np.array([[info.requested.get(r, 0) for r in resources] for info in infos],
                                  np.int64).reshape(self.size, len(resources))
        self.nonzero = np.array([[info.nonzero_requested.get(r, 0) for r in resources] for info in infos],
                                np.int64).reshape(self.size, len(resources))
        self.pod_count = np.array([len(info.pods) for info in infos], np.int64)
        self.allowed_pods = np.array([n.allocatable.get("pods", 0) for n in self.nodes], np.int64)
        # label key -> (per node: value code, -1 where the key is missing; value -> code, "" is always 0)
        self._codes: dict[str, tuple[np.ndarray, dict[str, int]]] = {}
        self._node_masks: dict[Hashable, np.ndarray] = {}
        # Tracked predicates: key -> per-node count; hint pair (or None) -> keys to test on add/remove.
        self._counts: dict[Hashable, np.ndarray] = {}
        self._predicates: dict[Hashable, PodPredicate] = {}
        self._by_hint: dict[LabelPair | None, list[Hashable]] = {}
        # Inverted index of the pods present: label pair -> pod key -> (pod, node index).
        self._pods_by_pair: dict[LabelPair, dict[str, tuple[Pod, int]]] = {}
        self._pods: dict[str, tuple[Pod, int]] = {}
        for i, info in enumerate(infos):
            for pod in info.pods.values():
                self._index_pod(pod, i)

    # -- nodes -------------------------------------------------------------------------------------------

    def column(self, resource: str) -> int:
        """The column of `resource`, added on first use (0 allocatable and requested where unlisted)."""
        col = self.columns.get(resource)
        if col is None:
            col = self.columns[resource] = len(self.columns)
            infos = list(self.state.nodes.values())
            self.allocatable = np.hstack([self.allocatable, np.array(
                [[n.allocatable.get(resource, 0)] for n in self.nodes], np.int64).reshape(self.size, 1)])
            self.requested = np.hstack([self.requested, np.array(
                [[info.requested.get(resource, 0)] for info in infos], np.int64).reshape(self.size, 1)])
            self.nonzero = np.hstack([self.nonzero, np.array(
                [[info.nonzero_requested.get(resource, 0)] for info in infos], np.int64).reshape(self.size, 1)])
        return col

    def codes(self, key: str) -> np.ndarray:
        """Per node: the code of its value for label `key` (-1 where missing)."""
        return self._label(key)[0]

    def value_codes(self, key: str) -> dict[str, int]:
        """Value -> code for label `key` ("" is 0 whether a node carries it or not); codes are 0..len-1."""
        return self._label(key)[1]

    def _label(self, key: str) -> tuple[np.ndarray, dict[str, int]]:
        found = self._codes.get(key)
        if found is None:
            table: dict[str, int] = {"": 0}
            codes = np.fromiter((table.setdefault(n.labels[key], len(table)) if key in n.labels else -1
                                 for n in self.nodes), np.int64, self.size)
            found = self._codes[key] = (codes, table)
        return found

    def node_mask(self, key: Hashable, test: Callable[[Node], bool]) -> np.ndarray:
        """test(node) for every node, memoized under `key` (nodes never change)."""
        found = self._node_masks.get(key)
        if found is None:
            found = self._node_masks[key] = np.fromiter((test(n) for n in self.nodes), bool, self.size)
        return found

    # -- pods --------------------------------------------------------------------------------------------

    def matching(self, key: Hashable, predicate: PodPredicate, hint: LabelPair | None = None) -> np.ndarray:
        """Per node: how many of its pods satisfy `predicate` (registered under `key`, kept up to date).
        `hint`: a label pair every satisfying pod carries (only pods carrying it are tested)."""
        found = self._counts.get(key)
        if found is None:
            found = np.zeros(self.size, np.int64)
            pods = self._pods_by_pair.get(hint, {}) if hint is not None else self._pods
            for pod, i in pods.values():
                if predicate(pod):
                    found[i] += 1
            self._counts[key] = found
            self._predicates[key] = predicate
            self._by_hint.setdefault(hint, []).append(key)
        return found

    def _index_pod(self, pod: Pod, i: int) -> None:
        self._pods[pod.key] = (pod, i)
        for pair in pod.labels.items():
            self._pods_by_pair.setdefault(pair, {})[pod.key] = (pod, i)

    def add(self, pod: Pod, i: int) -> None:
        self._apply(pod, i, 1)
        self._index_pod(pod, i)

    def remove(self, pod: Pod, i: int) -> None:
        self._apply(pod, i, -1)
        del self._pods[pod.key]
        for pair in pod.labels.items():
            del self._pods_by_pair[pair][pod.key]

    def _apply(self, pod: Pod, i: int, delta: int) -> None:
        for r, q in pod.requests.items():
            self.requested[i, self.column(r)] += delta * q
        for r, q in pod.nonzero_requests.items():
            self.nonzero[i, self.column(r)] += delta * q
        self.pod_count[i] += delta
        counts, predicates, by_hint = self._counts, self._predicates, self._by_hint
        # Only the predicates without a hint and those whose hint the pod carries can be satisfied.
        for keys in [by_hint.get(None, ())] + [by_hint.get(pair, ()) for pair in pod.labels.items()]:
            for key in keys:
                if predicates[key](pod):
                    counts[key][i] += delta


def default_normalize(raw: np.ndarray, reverse: bool) -> np.ndarray:
    """helper.DefaultNormalizeScore over the candidates' raw scores (non-negative), as nodeaffinity.scoring's."""
    top = int(raw.max()) if raw.size else 0
    if top <= 0:
        return np.full(raw.shape, MAX_NODE_SCORE, np.int64) if reverse else raw.astype(np.int64)
    scaled = MAX_NODE_SCORE * raw // top
    return MAX_NODE_SCORE - scaled if reverse else scaled


class StaticRule:
    """A plugin reading only the pod and the Node object: verdicts and raw scores per pod spec, as arrays.

    Built from the plugin's plain functions (not its Plugin record, so that the record can carry this
    factory); `spec` picks what the plugin reads from the pod (the cache key); `reverse` is the plugin's
    DefaultNormalizeScore direction. score() returns NORMALIZED scores of the candidates.
    """

    def __init__(self, state: ClusterState, arrays: NodeArrays, spec: Callable[[Pod], Hashable],
                 filter_fn: FilterFn, score_fn: ScoreFn | None = None, pre_score: PreScoreFn | None = None,
                 reverse: bool = False) -> None:
        self.state, self.arrays, self.spec, self.reverse = state, arrays, spec, reverse
        self.filter_fn, self.score_fn, self.pre_score = filter_fn, score_fn, pre_score
        self._verdicts: dict[Hashable, tuple[np.ndarray | None, list[tuple[Reason, ...]]]] = {}
        self._raw: dict[Hashable, np.ndarray | None] = {}

    def _entry(self, pod: Pod) -> tuple[np.ndarray | None, list[tuple[Reason, ...]]]:
        key = self.spec(pod)
        found = self._verdicts.get(key)
        if found is None:
            if len(self._verdicts) >= _MAX_SPECS:
                del self._verdicts[next(iter(self._verdicts))]
            reasons = [tuple(self.filter_fn(pod, None, info, self.state)) for info in self.state.nodes.values()]
            mask = np.fromiter((not r for r in reasons), bool, len(reasons))
            found = self._verdicts[key] = (None if mask.all() else mask, reasons)
        return found

    def filter(self, pod: Pod) -> np.ndarray | None:
        return self._entry(pod)[0]

    def reasons(self, pod: Pod, node_index: int) -> tuple[Reason, ...]:
        return self._entry(pod)[1][node_index]

    def raw_scores(self, pod: Pod) -> np.ndarray | None:
        """The raw score of every node for this pod spec; None when they are all equal (a constant shift)."""
        key = self.spec(pod)
        if key not in self._raw:
            if len(self._raw) >= _MAX_SPECS:
                del self._raw[next(iter(self._raw))]
            score = self.score_fn
            assert score is not None
            infos = list(self.state.nodes.values())
            pre = self.pre_score(pod, self.state, infos) if self.pre_score else None
            raw = np.fromiter((score(pod, pre, info, self.state) for info in infos), np.int64, len(infos))
            self._raw[key] = raw if raw.size and (raw != raw[0]).any() else None
        return self._raw[key]

    def score(self, pod: Pod, candidates: np.ndarray) -> np.ndarray:
        """Normalized scores of the candidates (node indices). All equal raw scores give 0 everywhere: they
        would shift every candidate's total alike."""
        raw = self.raw_scores(pod)
        if raw is None:
            return np.zeros(len(candidates), np.int64)
        return default_normalize(raw[candidates], self.reverse)
