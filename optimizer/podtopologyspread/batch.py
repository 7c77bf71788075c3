"""PodTopologySpread under podplan's batch semantics: every pod of a final state is judged with itself removed.

- `Guard` (Plugin.placed_guard): kube-scheduler checks only the incoming pod's own constraints, so it may bind a
  pod that pushes a placed pod's DoNotSchedule constraint over maxSkew: the placed pod's selector matches the
  incoming pod and it lands in the placed pod's domain. The simulator asks the guard which nodes would do that.
- `Judge` (Plugin.final_state_judge): the plugin's PreFilter for a pod with itself removed, from its group's
  whole-state counts (calPreFilterState's, over the matching pods found through the label index and the
  eligible domains), so the verifier judges every pod without recounting the cluster per pod.
"""
from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Any

from ...models.objects import Pod
from ..framework import Reason
from ..nodearrays import selector_hint
from ..state import ClusterState, NodeInfo, PodIndex, restore
from .common import (NAME, SYSTEM_DEFAULTS, Defaults, SpreadConstraint, counts_toward, eligibility_test, filter_constraints, global_min,
                     has_all_keys, node_eligible, self_match)
from .filtering import PreFilterState, filter_node

ERR_REASON_BREAKS_SPREAD = "node(s) would break a placed pod's topology spread constraints"


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


def domain_counts(state: ClusterState, index: PodIndex, pod: Pod, c: SpreadConstraint, keys: tuple[str, ...],
                  memo: dict[Hashable, dict[str, str]]) -> tuple[dict[str, str], dict[str, int]]:
    """(eligible node -> its domain, domain -> matching pods on eligible nodes) for `pod`'s constraint c:
    calPreFilterState's counts, the matching pods found through the label index."""
    domain_of = eligible_domains(state, pod, c, keys, memo)
    counts = dict.fromkeys(domain_of.values(), 0)
    for q, info in index.candidates(c.selector, (pod.namespace,)):
        domain = domain_of.get(info.name)
        if domain is not None and counts_toward(c.selector, pod.namespace, q):
            counts[domain] += 1
    return domain_of, counts


class Guard:
    """Placed pods' DoNotSchedule constraints, grouped, with their domain counts: tells in O(1) per node whether
    binding a pod there pushes a placed pod over maxSkew."""

    def __init__(self, state: ClusterState, defaults: Defaults = SYSTEM_DEFAULTS) -> None:
        self.state = state
        self.defaults = defaults
        self.index = PodIndex(state)  # grows with every bind: the guard never sees a pod leave
        self.groups: dict[Hashable, _SpreadGroup] = {}
        self.domain_maps: dict[Hashable, dict[str, str]] = {}
        # groups by (namespace, a label pair their selector requires or None), rebuilt when groups were added
        self._by_hint: dict[tuple[str, tuple[str, str] | None], list[_SpreadGroup]] = {}
        self._indexed = 0
        for pod, info in list(state.all_pods()):
            self._join(pod, info)

    def candidates(self, pod: Pod) -> list[_SpreadGroup]:
        """The groups whose selector `pod` may count toward (a superset, counts_toward decides): only they can
        change for it, out of thousands on clusters with many workloads."""
        if self._indexed != len(self.groups):  # groups are only ever added
            self._by_hint = {}
            for g in self.groups.values():
                selector = g.constraint.selector
                if selector is not None and not selector.empty:  # the others count no pod
                    self._by_hint.setdefault((g.namespace, selector_hint(selector)), []).append(g)
            self._indexed = len(self.groups)
        found = list(self._by_hint.get((pod.namespace, None), ()))
        for pair in pod.labels.items():
            found += self._by_hint.get((pod.namespace, pair), ())
        return found

    def prepare(self, pod: Pod) -> Callable[[NodeInfo], tuple[Reason, ...]] | None:
        """The per-node check for `pod`, or None when it can break nobody."""
        spread: list[tuple[_SpreadGroup, frozenset[str]]] = []
        if not pod.terminating:
            for g in self.candidates(pod):
                if g.members and counts_toward(g.constraint.selector, g.namespace, pod):
                    bad = g.broken_domains()
                    if bad:
                        spread.append((g, bad))
        if not spread:
            return None

        def check(info: NodeInfo) -> tuple[Reason, ...]:
            name = info.name
            for g, bad in spread:
                if g.domain_of.get(name) in bad:
                    return (Reason(NAME, ERR_REASON_BREAKS_SPREAD),)
            return ()

        return check

    def bound(self, pod: Pod, info: NodeInfo, pre: Any) -> None:
        """`pod` was just added to `info`."""
        name = info.name
        self.index.add(pod, info)
        for g in self.candidates(pod):
            domain = g.domain_of.get(name)
            if domain is not None and counts_toward(g.constraint.selector, g.namespace, pod):
                g.counts[domain] += 1
        self._join(pod, info)

    def _join(self, pod: Pod, info: NodeInfo) -> None:
        constraints = filter_constraints(pod, self.state, self.defaults)
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
        domain_of, counts = domain_counts(self.state, self.index, pod, c, keys, self.domain_maps)
        return _SpreadGroup(pod.namespace, c, domain_of, counts, self_match)


class Judge:
    """PodTopologySpread's PreFilter for a pod with itself removed, from its group's whole-state counts.

    The counts are calPreFilterState's, built from the matching pods found through the label index and the
    eligible domains (nodes with every key that pass the inclusion policies, shared by groups alike in them).
    """

    def __init__(self, state: ClusterState, index: PodIndex, defaults: Defaults = SYSTEM_DEFAULTS) -> None:
        self.state = state
        self.defaults = defaults
        self.index = index
        self.groups: dict[Hashable, tuple[Any, tuple[MinIndex, ...]]] = {}
        self.domain_maps: dict[Hashable, dict[str, str]] = {}

    def _group(self, pod: Pod, constraints: tuple[Any, ...]) -> tuple[Any, tuple[MinIndex, ...]]:
        keys = tuple(dict.fromkeys(c.topology_key for c in constraints))
        tps: list[dict[str, int]] = []
        for c in constraints:
            tps.append(domain_counts(self.state, self.index, pod, c, keys, self.domain_maps)[1])
        minimums = tuple(global_min(tp, c.min_domains) for c, tp in zip(constraints, tps))
        full = PreFilterState(constraints, tuple(tps), minimums, minimums)  # limits are set per pod
        return full, tuple(MinIndex(tp, c.min_domains) for c, tp in zip(constraints, tps))

    def filter(self, pod: Pod, info: NodeInfo) -> list[Reason]:
        constraints = filter_constraints(pod, self.state, self.defaults)
        if not constraints:
            return []  # PreFilter Skip
        key = (pod.namespace, constraints, tuple(sorted(pod.node_selector.items())), pod.affinity.node_required,
               pod.tolerations)
        group = self.groups.get(key)
        if group is None:
            group = self.groups[key] = self._group(pod, constraints)
        full, mins = group
        labels = info.node.labels
        counted = has_all_keys(labels, full.constraints)
        undo: list[tuple[dict[Any, int], Any, int]] = []
        minimums = []
        for c, tp, m in zip(full.constraints, full.tp_value_to_match_num, mins):
            if counted and node_eligible(c, pod, info.node) and counts_toward(c.selector, pod.namespace, pod):
                domain = labels[c.topology_key]
                minimums.append(m.min_with(domain, -1))
                undo.append((tp, domain, tp[domain]))
                tp[domain] -= 1  # zero counts stay: the keys are the eligible domains
            else:
                minimums.append(0 if m.too_few else m.lowest)  # global_min of the unchanged counts
        limits = tuple(c.max_skew + m - int(self_match(c, pod)) for c, m in zip(full.constraints, minimums))
        pre = dataclasses.replace(full, min_match_num=tuple(minimums), limits=limits)
        try:
            return filter_node(pod, pre, info, self.state)
        finally:
            restore(undo)
