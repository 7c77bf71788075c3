"""Incremental verification: a plan that differs from a plan already verified in full (its basis) in a set of
changed pods is judged on the pods whose verdict the change can affect; every other pod keeps the verdict the
basis gave it.

A pod's Filter verdicts (judge: the pod taken off its node, every Filter run on it) read the pod, its node,
and, by what each plugin declares (Plugin.filter_reads):
- Reads.NODE (NodeUnschedulable, NodeName, TaintToleration, NodeAffinity): the node object alone. It changes
  only for a pod that moved.
- Reads.NODE_PODS (NodeResourcesFit, NodePorts): the pods on its node. It changes only for a pod on a node
  that gained or lost a pod.
- Reads.CLUSTER: pods anywhere. Two plugins are known here, with what they count:
  InterPodAffinity counts, over the whole state, the pods matching the pod's own required (anti-)affinity
  terms (the first-pod rule included) and the existing pods' required anti-affinity terms matching the pod.
  A changed pod changes those counts only if one of the pod's own required terms selects its labels, or if
  its own required anti-affinity selects the pod.
  PodTopologySpread (its system defaults: Filter enforces the pod's own DoNotSchedule constraints only)
  counts, per domain, the pods of the pod's namespace its constraints' selectors match; the eligible domains
  are read from the nodes alone. A changed pod changes the counts only if it counts toward one of them.
  Any other plugin reading the cluster, or these two configured otherwise (a scheduler configuration's
  default constraints), makes `affected` say None: the caller judges every pod.
The tests are supersets (a term's namespaces are not looked at, a changed pod counts whether it left or came):
a pod judged again that did not need to be gets the verdict it had. Since nothing else in the state changed,
every pod outside the set would be judged exactly as the basis judged it, so the report is the full
verifier's; tests/test_verify_delta.py checks it against `verify` on random plans and random changes.

The basis keeps its final state and label index after its verification; the next plan's state is made from
them by moving the changed pods (`Basis.take_state`, once), instead of building 77,000 pods' state again.
"""
from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass, field
from threading import Lock

from ..models.objects import Cluster, Pod

from .framework import Profile, Reads, Reason
from .interpodaffinity import batch as affinity_batch
from .objective import pod_terms, schedule_anyway_excess, weigh
from .podtopologyspread import batch as spread_batch
from .podtopologyspread.common import counts_toward, filter_constraints
from .policy import Policy
from .profiles import Profiles
from .state import ClusterState, PodIndex


Selectors = tuple[object, ...]


@dataclass
class Owners:
    """The pods of a basis's final state whose verdict or preference share reads other pods, grouped by what
    they read: (selectors, namespace or None, pod keys). A changed pod a group's selectors match affects them."""

    required: list[tuple[Selectors, list[str]]]  # required pod (anti-)affinity terms' label selectors
    spread: list[tuple[Selectors, str, list[str]]]  # DoNotSchedule constraints' selectors, the pods' namespace
    preferred: list[tuple[Selectors, list[str]]]  # preferred pod (anti-)affinity terms' label selectors


def owners_of(state: ClusterState) -> Owners:
    required: dict[tuple[int, int], tuple[Selectors, list[str]]] = {}
    preferred: dict[tuple[int, int], tuple[Selectors, list[str]]] = {}
    spread: dict[tuple[int, str], tuple[Selectors, str, list[str]]] = {}
    for name in state.nodes_with_affinity:
        for pod in state.nodes[name].pods_with_affinity.values():
            a = pod.affinity
            if a.pod_required or a.anti_required:
                sig = (id(a.pod_required), id(a.anti_required))
                if sig not in required:
                    required[sig] = (tuple(t.label_selector for t in a.pod_required + a.anti_required), [])
                required[sig][1].append(pod.key)
            if a.pod_preferred or a.anti_preferred:
                sig = (id(a.pod_preferred), id(a.anti_preferred))
                if sig not in preferred:
                    preferred[sig] = (tuple(w.term.label_selector for w in a.pod_preferred + a.anti_preferred), [])
                preferred[sig][1].append(pod.key)
    for info in state.nodes.values():
        for pod in info.pods.values():
            if not pod.spread_constraints:
                continue  # the system defaults add ScheduleAnyway constraints only: nothing Filter enforces
            sig2 = (id(pod.spread_constraints), pod.namespace)
            if sig2 not in spread:
                spread[sig2] = (tuple(c.selector for c in filter_constraints(pod, state)), pod.namespace, [])
            spread[sig2][2].append(pod.key)
    return Owners(list(required.values()), list(spread.values()), list(preferred.values()))


@dataclass
class Basis:
    """A plan verified in full: its valid placements, every failing verdict of its final state, its unweighted
    per-pod preference sums (objective.raw_sums), and (until a later plan takes them) that state and its label
    index, with the pods that read other pods (Owners)."""

    cluster: Cluster
    placements: dict[str, str]  # pending pod key -> node, the pods on nodes of the input only
    failing: dict[str, list[Reason]]  # pod key -> its failing Filter verdicts ([] verdicts are not kept)
    raw: tuple[int, int, int, int]
    owners: Owners
    state: ClusterState | None = None
    index: PodIndex | None = None
    _lock: Lock = field(default_factory=Lock, repr=False)
    _changed: tuple[dict[str, str], list[str]] | None = field(default=None, repr=False)

    def changed_for(self, placements: Mapping[str, str]) -> list[str]:
        """changed_keys(self.placements, placements), remembered for the last plan asked about (the optimizer's
        scoring and the gate ask about the same plan, each a pass over 50,000 placements at 5,000 nodes)."""
        kept = self._changed
        if kept is not None and kept[0] == placements:
            return kept[1]
        out = changed_keys(self.placements, placements)
        self._changed = (dict(placements), out)
        return out

    def take_state(self, placements: Mapping[str, str], policy: Policy | None = None,
                   pending: Mapping[str, Pod] | None = None
                   ) -> tuple[ClusterState, PodIndex, dict[str, int] | None] | None:
        """The final state and index of `placements` (pending pods on nodes of the input), made from the
        basis's own by moving the pods that differ; None once taken (the basis's state is changed in place).
        With `policy`, also P's terms of that state (objective.preference_terms), from the basis's sums and the
        shares of the pods the change can affect (before and after), with the ScheduleAnyway excess counted
        afresh."""
        pending = {p.key: p for p in self.cluster.pending} if pending is None else pending
        changed = self.changed_for(placements)
        nodes = {n.name for n in self.cluster.nodes}
        if any(k not in pending or placements.get(k, next(iter(nodes), "")) not in nodes for k in changed):
            return None  # not a plan of pending pods on nodes of the input: the caller builds its state
        with self._lock:
            state, index = self.state, self.index
            self.state = self.index = None
        if state is None or index is None:
            return None
        pods = [pending[k] for k in changed]
        scoring = set()
        if policy is not None:  # the pods whose share of P can change: moved ones, and those whose terms select one
            labels = _label_sets(pods)
            scoring = {k for sels, keys in self.owners.preferred if _selects_any(sels, labels) for k in keys}
            scoring.update(changed)
            old = _shares(state, index, scoring)
        for key in changed:
            if key in state.node_of:
                state.remove(pending[key])
        _drop(index, {id(p) for p in pods}, pods)
        for key in changed:
            node = placements.get(key)
            if node is not None:
                pod = pending[key]
                state.add(pod, node)
                index.add(pod, state.nodes[node])
        if policy is None:
            return state, index, None
        new = _shares(state, index, scoring)
        raw = tuple(b - o + n for b, o, n in zip(self.raw, old, new))
        return state, index, weigh(raw, schedule_anyway_excess(state, index), policy)  # type: ignore[arg-type]


def _shares(state: ClusterState, index: PodIndex, keys: Iterable[str]) -> tuple[int, int, int, int]:
    """Σ objective.pod_terms over the pods of `keys` that the state holds."""
    memo: dict[Hashable, dict[str, int]] = {}
    total = [0, 0, 0, 0]
    for key in keys:
        name = state.node_of.get(key)
        if name is None:
            continue
        info = state.nodes[name]
        for i, v in enumerate(pod_terms(info.pods[key], info, index, state, memo)):
            total[i] += v
    return total[0], total[1], total[2], total[3]


def _label_sets(pods: list[Pod]) -> list[Mapping[str, str]]:
    """The distinct label sets of `pods` (replicas share theirs)."""
    return list({frozenset(p.labels.items()): p.labels for p in pods}.values())


def _drop(index: PodIndex, ids: set[int], pods: list[Pod]) -> None:
    """Take `pods` (their ids) out of the index's lists (PodIndex itself only grows)."""
    if not pods:
        return
    index.all[:] = [e for e in index.all if id(e[0]) not in ids]
    for ns in {p.namespace for p in pods}:
        if ns in index.by_ns:
            index.by_ns[ns][:] = [e for e in index.by_ns[ns] if id(e[0]) not in ids]
    for key in {(p.namespace, k, v) for p in pods for k, v in p.labels.items()}:
        if key in index.by_ns_label:
            index.by_ns_label[key][:] = [e for e in index.by_ns_label[key] if id(e[0]) not in ids]
    for pair in {(k, v) for p in pods for k, v in p.labels.items()}:
        if pair in index.by_label:
            index.by_label[pair][:] = [e for e in index.by_label[pair] if id(e[0]) not in ids]


def changed_keys(before: Mapping[str, str], after: Mapping[str, str]) -> list[str]:
    """Pending pods placed in one plan and not the other, or on another node (in a fixed order)."""
    out = [k for k, n in before.items() if after.get(k) != n]
    out += [k for k in after if k not in before]
    return out


def _plugins(profile: Profile | Profiles) -> list:  # type: ignore[type-arg]
    profiles = profile.profiles if isinstance(profile, Profiles) else (profile,)
    return [p for prof in profiles for p in prof.filters]


def affected(state: ClusterState, index: PodIndex, basis: Basis, after: Mapping[str, str],
             pending: Mapping[str, Pod], profile: Profile | Profiles,
             changed: list[str] | None = None) -> set[str] | None:
    """Keys of the pods of `state` (the final state of `after`) whose verdict can differ from the one they had
    in the basis's final state (see the module docstring); None when a Filter reads the cluster in a way
    these rules do not know (judge every pod). `changed`: changed_keys(basis.placements, after), if known."""
    node_pods = affinity = spread = False
    for p in _plugins(profile):
        if p.filter_reads is Reads.NODE:
            continue
        if p.filter_reads is Reads.NODE_PODS:
            node_pods = True
        elif p.final_state_judge is affinity_batch.Judge:
            affinity = True
        elif p.final_state_judge is spread_batch.Judge:
            spread = True
        else:
            return None
    before = basis.placements
    changed = changed if changed is not None else changed_keys(before, after)
    out: set[str] = {k for k in changed if k in after}  # moved and added pods, on their new node
    if not changed:
        return out
    pods = [pending[k] for k in changed]
    if node_pods:
        touched = {before[k] for k in changed if k in before} | {after[k] for k in changed if k in after}
        for name in touched:
            info = state.nodes.get(name)
            if info is not None:
                out.update(info.pods)
    labels = _label_sets(pods)
    held = state.node_of
    if affinity:
        # a pod whose own required terms select a changed pod: its incoming counts (and first-pod rule) may change
        for sels, keys in basis.owners.required:
            if _selects_any(sels, labels):
                out.update(k for k in keys if k in held)
        # a pod a changed pod's required anti-affinity selects: its existing-anti-affinity counts may change
        seen: set[int] = set()
        for q in pods:
            for t in q.affinity.anti_required:
                if id(t) in seen:
                    continue
                seen.add(id(t))
                for other, _info in index.candidates(t.label_selector, None):
                    if t.label_selector is not None and t.label_selector.matches(other.labels):
                        out.add(other.key)
    if spread:
        # a pod whose DoNotSchedule constraints count a changed pod: its domain counts (and minimum) may change
        for sels, ns, keys in basis.owners.spread:
            if any(counts_toward(sel, ns, q) for sel in sels for q in pods):  # type: ignore[arg-type]
                out.update(k for k in keys if k in held)
    return out


def _selects_any(selectors: Selectors, labels: list[Mapping[str, str]]) -> bool:
    return any(sel is not None and sel.matches(lab) for sel in selectors for lab in labels)  # type: ignore[attr-defined]


def in_state_order(cluster: Cluster, placements: Mapping[str, str], state: ClusterState,
                   keys: Iterable[str]) -> list[str]:
    """`keys` in the order `verify` judges the pods of a freshly built final state (final_state): nodes in
    input order, on each node the existing pods in input order, then the placed ones in the plan's order."""
    keys = list(keys)
    if len(keys) < 2:
        return keys
    node_pos = {n.name: i for i, n in enumerate(cluster.nodes)}
    pod_pos = {p.key: i for i, p in enumerate(cluster.pods)}
    base = len(cluster.pods)
    pod_pos.update((k, base + i) for i, k in enumerate(placements))
    return sorted(keys, key=lambda k: (node_pos[state.node_of[k]], pod_pos[k]))


LAST_DELTA: list[tuple[int, int, int]] = []  # the last incremental verification: (changed, judged, pods) for --verbose

_LATEST: list[Basis] = []  # the latest basis made (verify_basis), for scored_terms to take its state
_LATEST_LOCK = Lock()


def publish(basis: Basis) -> None:
    with _LATEST_LOCK:
        _LATEST[:] = [basis]


def latest(cluster: Cluster) -> Basis | None:
    with _LATEST_LOCK:
        return next((b for b in _LATEST if b.cluster is cluster), None)


def forget(cluster: Cluster | None = None) -> None:
    with _LATEST_LOCK:
        _LATEST[:] = [b for b in _LATEST if cluster is not None and b.cluster is not cluster]
