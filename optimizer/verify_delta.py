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

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from threading import Lock

from ..models.objects import Cluster, Pod

from .framework import Profile, Reads, Reason
from .interpodaffinity import batch as affinity_batch
from .podtopologyspread import batch as spread_batch
from .podtopologyspread.common import counts_toward, filter_constraints
from .policy import Policy
from .profiles import Profiles
from .state import ClusterState, NodeInfo, PodIndex


@dataclass
class Basis:
    """A plan verified in full: its valid placements, every failing verdict of its final state, and (until a
    later plan takes them) that state and its label index."""

    cluster: Cluster
    placements: dict[str, str]  # pending pod key -> node, the pods on nodes of the input only
    failing: dict[str, list[Reason]]  # pod key -> its failing Filter verdicts ([] verdicts are not kept)
    policy: Policy
    terms: dict[str, int]
    state: ClusterState | None = None
    index: PodIndex | None = None
    _lock: Lock = field(default_factory=Lock, repr=False)

    def take_state(self, placements: Mapping[str, str]) -> tuple[ClusterState, PodIndex] | None:
        """The final state and index of `placements` (pending pods on nodes of the input), made from the
        basis's own by moving the pods that differ; None once taken (the basis's state is changed in place)."""
        pending = {p.key: p for p in self.cluster.pending}
        changed = changed_keys(self.placements, placements)
        nodes = {n.name for n in self.cluster.nodes}
        if any(k not in pending or placements.get(k, next(iter(nodes), "")) not in nodes for k in changed):
            return None  # not a plan of pending pods on nodes of the input: the caller builds its state
        with self._lock:
            state, index = self.state, self.index
            self.state = self.index = None
        if state is None or index is None:
            return None
        for key in changed:
            if key in state.node_of:
                state.remove(pending[key])
        moved = {id(pending[k]) for k in changed}
        _drop(index, moved, [pending[k] for k in changed])
        for key in changed:
            node = placements.get(key)
            if node is not None:
                pod = pending[key]
                state.add(pod, node)
                index.add(pod, state.nodes[node])
        return state, index


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


def affected(state: ClusterState, index: PodIndex, before: Mapping[str, str], after: Mapping[str, str],
             pending: Mapping[str, Pod], profile: Profile | Profiles) -> set[str] | None:
    """Keys of the pods of `state` (the final state of `after`) whose verdict can differ from the one they had
    in the final state of `before` (see the module docstring); None when a Filter reads the cluster in a way
    these rules do not know (judge every pod)."""
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
    changed = changed_keys(before, after)
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
    # distinct label sets of the changed pods (replicas share theirs)
    labels = list({frozenset(p.labels.items()): p.labels for p in pods}.values())
    if affinity:
        _affinity(state, index, pods, labels, out)
    if spread:
        _spread(state, pods, out)
    return out


def _selects_any(selector: object, labels: list[Mapping[str, str]]) -> bool:
    return selector is not None and any(selector.matches(lab) for lab in labels)  # type: ignore[attr-defined]


def _affinity(state: ClusterState, index: PodIndex, pods: list[Pod], labels: list[Mapping[str, str]],
              out: set[str]) -> None:
    # a pod whose own required terms select a changed pod: its incoming counts (and first-pod rule) may change
    memo: dict[tuple[int, int], bool] = {}
    for name in state.nodes_with_affinity:
        for pod in state.nodes[name].pods_with_affinity.values():
            a = pod.affinity
            if not a.pod_required and not a.anti_required:
                continue
            sig = (id(a.pod_required), id(a.anti_required))
            hit = memo.get(sig)
            if hit is None:
                hit = memo[sig] = any(_selects_any(t.label_selector, labels)
                                      for t in a.pod_required + a.anti_required)
            if hit:
                out.add(pod.key)
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


def _spread(state: ClusterState, pods: list[Pod], out: set[str]) -> None:
    # a pod whose DoNotSchedule constraints count a changed pod: its domain counts (and minimum) may change
    memo: dict[tuple[int, str], bool] = {}
    for info in state.nodes.values():
        for pod in info.pods.values():
            if not pod.spread_constraints:
                continue  # the system defaults add ScheduleAnyway constraints only: nothing Filter enforces
            sig = (id(pod.spread_constraints), pod.namespace)
            hit = memo.get(sig)
            if hit is None:
                hit = memo[sig] = any(counts_toward(c.selector, pod.namespace, q)
                                      for c in filter_constraints(pod, state) for q in pods)
            if hit:
                out.add(pod.key)


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


def pods_in(state: ClusterState, keys: Iterable[str]) -> list[tuple[Pod, NodeInfo]]:
    out = []
    for key in keys:
        info = state.nodes[state.node_of[key]]
        out.append((info.pods[key], info))
    return out


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
