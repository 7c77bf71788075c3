"""The placement problem the CP-SAT model is built from: pod classes, node indices, static feasibility,
existing-pod indices and the independent parts of the problem.

- Pending pods that are identical for every rule (same namespace, the labels any selector of the input can
  see, requests, node selector, affinity, tolerations, spread constraints, host ports, priority, gang) form a
  *class*; the model places a COUNT of a class on each node, never one boolean per pod.
- Per (class, node) *static* feasibility comes from the rules that depend only on the node and the existing
  pods (NodeUnschedulable, NodeName, TaintToleration, NodeAffinity, NodePorts and NodeResourcesFit against
  the existing pods, missing topology keys, existing pods' required anti-affinity): the model only gets a
  variable where a pod could go at all. Each rule's `static_reasons` lives in its package's encoding.py.
- Existing pods are indexed twice: as *targets* (how many pods of a namespace/label signature sit on each
  node) and as *holders* (pods whose own terms or constraints depend on where pending pods go).
- The interaction graph (a sparse graph, scipy's connected components): classes are linked when they can share a node, when one's selector can
  see the other, when they sit in one gang, or when an existing pod's term sees both. Its connected
  components are solved independently.
- Nodes that are interchangeable for every rule (same labels up to per-node unique values, taints,
  allocatable, existing usage, no existing pod any selector can see) form *node classes*; the model breaks
  their symmetry.
"""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from typing import Any
from dataclasses import dataclass, field

import numpy as np
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from ..models.objects import Cluster, Node, Pod
from ..models.selectors import LabelSelector

from .framework import Profile, Reason
from .gangs import Gangs, find_gangs
from .state import ClusterState

PodPredicate = Callable[[Pod], bool]


@dataclass
class PodClass:
    """Identical pending pods: the model decides how many of them go on each node."""

    index: int
    name: str  # used in CP-SAT variable names: x[<name>,<node>]
    pods: list[Pod]  # input order; placed counts are handed to them in this order
    gang: str = ""  # gang id (optimizer.gangs) or ""

    @property
    def rep(self) -> Pod:
        return self.pods[0]

    @property
    def size(self) -> int:
        return len(self.pods)

    @property
    def priority(self) -> int:
        return self.pods[0].priority


class UpperBounds:
    """(class, node) -> most pods of the class the node can take, backed by one int matrix (0: infeasible)."""

    def __init__(self, matrix: np.ndarray):
        self.matrix = matrix

    def get(self, key: tuple[int, int], default: int = 0) -> int:
        v = int(self.matrix[key[0], key[1]])
        return v if v > 0 else default

    def __getitem__(self, key: tuple[int, int]) -> int:
        return int(self.matrix[key[0], key[1]])

    def __contains__(self, key: tuple[int, int]) -> bool:
        return bool(self.matrix[key[0], key[1]] > 0)


@dataclass
class ExistingGroup:
    """Existing pods with one signature (namespace + visible labels + terms): per-node counts."""

    rep: Pod
    on: dict[int, int] = field(default_factory=dict)  # node index -> how many


@dataclass
class Component:
    """An independent part: its classes and the nodes any of them may use."""

    index: int
    classes: list[int]
    nodes: list[int]


@dataclass
class Problem:
    cluster: Cluster
    state: ClusterState  # existing pods only
    nodes: list[Node]
    node_index: dict[str, int]
    classes: list[PodClass]
    class_of: dict[str, int]  # pending pod key -> class index
    feasible: list[np.ndarray]  # class -> statically feasible node indices (input order, int array)
    ub: "UpperBounds"  # (class, node) -> most pods of the class the node can take (0: infeasible)
    existing: list[ExistingGroup]  # target side of existing pods
    holders: list[ExistingGroup]  # existing pods with terms/constraints (grouped per node)
    gangs: Gangs
    gang_classes: dict[str, list[int]]
    profile: Profile  # the rules the problem is built for: their encodings give static feasibility and the model
    components: list[Component]
    node_class: list[int]  # node -> node-equivalence class id
    label_keys: frozenset[str]  # label keys some selector of the input reads
    _domains: dict[str, tuple[list[str | None], dict[str, list[int]]]] = field(default_factory=dict)
    _existing_match: dict[object, dict[int, int]] = field(default_factory=dict)
    cache: dict[object, object] = field(default_factory=dict)  # per-class precomputations of the encodings
    _codes: dict[str, tuple[np.ndarray, list[str]]] = field(default_factory=dict)
    _groups: dict[object, list[np.ndarray]] = field(default_factory=dict)

    # -- vectorised node data (static feasibility is computed per class over all nodes at once) --------
    def codes(self, key: str) -> tuple[np.ndarray, list[str]]:
        """(per node: index of its value of label `key` in the value list, or -1; the value list)."""
        found = self._codes.get(key)
        if found is None:
            values, members = self.domains(key)
            names = list(members)
            index = {v: i for i, v in enumerate(names)}
            arr = np.fromiter((index.get(v, -1) if v is not None else -1 for v in values), np.int32, len(values))
            found = self._codes[key] = (arr, names)
        return found

    def node_groups(self, key: object, keyfunc: Callable[[int], object]) -> list[np.ndarray]:
        """Node indices grouped by `keyfunc(node index)` (cached under `key`): the nodes a per-node rule
        cannot tell apart."""
        found = self._groups.get(key)
        if found is None:
            by: dict[object, list[int]] = defaultdict(list)
            for i in range(len(self.nodes)):
                by[keyfunc(i)].append(i)
            found = self._groups[key] = [np.asarray(v, dtype=np.int64) for v in by.values()]
        return found

    def mask_by_groups(self, key: object, keyfunc: Callable[[int], object], ok: Callable[[int], bool]) -> np.ndarray:
        """Boolean per node: `ok` evaluated once per group of `node_groups(key, keyfunc)`."""
        mask = np.zeros(len(self.nodes), dtype=bool)
        for members in self.node_groups(key, keyfunc):
            if ok(int(members[0])):
                mask[members] = True
        return mask

    # -- topology -------------------------------------------------------------------------------------
    def domains(self, key: str) -> tuple[list[str | None], dict[str, list[int]]]:
        """(value of `key` per node index or None, value -> node indices) over every node of the input."""
        found = self._domains.get(key)
        if found is None:
            values = [n.labels.get(key) for n in self.nodes]
            members: dict[str, list[int]] = defaultdict(list)
            for i, v in enumerate(values):
                if v is not None:
                    members[v].append(i)
            found = self._domains[key] = (values, dict(members))
        return found

    # -- selector-driven matching (label index: only classes/pods carrying a selector's first label) -----
    def _candidates(self, selector: LabelSelector | None, existing: bool) -> list[Any]:
        pool: list[Any] = self.existing if existing else self.classes
        if selector is None:
            return []  # a nil selector matches nothing
        if not selector.match_labels:
            return pool
        index = self.cache.get(("label-index", existing))
        if index is None:
            index = defaultdict(list)
            for item in pool:
                for kv in item.rep.labels.items():
                    index[kv].append(item)
            self.cache[("label-index", existing)] = index
        return index.get(selector.match_labels[0], [])

    def existing_matching(self, cache_key: object, pred: PodPredicate,
                          selector: LabelSelector | None | bool = True) -> dict[int, int]:
        """node index -> existing pods on it for which `pred` holds (cached under `cache_key`).
        `selector`: a selector `pred` implies (narrows the search), or True when there is none."""
        found = self._existing_match.get(cache_key)
        if found is None:
            found = defaultdict(int)
            pool = self.existing if selector is True else self._candidates(selector, True)  # type: ignore[arg-type]
            for g in pool:
                if pred(g.rep):
                    for n, k in g.on.items():
                        found[n] += k
            found = self._existing_match[cache_key] = dict(found)
        return found

    def existing_groups_matching(self, pred: PodPredicate, selector: LabelSelector | None | bool = True) -> list[Any]:
        """The groups of alike existing pods for which `pred` holds (`selector`: as in existing_matching)."""
        pool = self.existing if selector is True else self._candidates(selector, True)  # type: ignore[arg-type]
        return [g for g in pool if pred(g.rep)]

    def classes_matching(self, pred: PodPredicate, among: Iterable[int] | None = None,
                         selector: LabelSelector | None | bool = True) -> list[int]:
        if among is not None:
            return [c for c in among if pred(self.classes[c].rep)]
        pool = self.classes if selector is True else self._candidates(selector, False)  # type: ignore[arg-type]
        return sorted(c.index for c in pool if pred(c.rep))


# -- building ---------------------------------------------------------------------------------------------

def selector_keys(sel: LabelSelector | None) -> set[str]:
    if sel is None:
        return set()
    return {k for k, _ in sel.match_labels} | {r.key for r in sel.match_expressions}


def visible_label_keys(pods: Iterable[Pod]) -> frozenset[str]:
    """Every label key a pod selector of the input reads: labels outside it cannot change any verdict."""
    keys: set[str] = set()
    for p in pods:
        a = p.affinity
        for t in a.pod_required + a.anti_required:
            keys |= selector_keys(t.label_selector)
        for w in a.pod_preferred + a.anti_preferred:
            keys |= selector_keys(w.term.label_selector)
        for c in p.spread_constraints:
            keys |= selector_keys(c.label_selector)
    return frozenset(keys)


def pod_signature(pod: Pod, keys: frozenset[str]) -> tuple:
    """Everything any hard rule or preference term reads from a pod, labels projected on `keys`."""
    return (
        pod.namespace,
        tuple(sorted((k, v) for k, v in pod.labels.items() if k in keys)),
        tuple(sorted(pod.requests.items())),
        tuple(sorted(pod.node_selector.items())),
        pod.affinity, pod.tolerations, pod.spread_constraints, pod.host_ports,
        pod.priority, pod.node_name, pod.terminating,
        pod.preemption_policy == "Never",  # solve --preempt: such a pod never evicts (its own level)
    )


def has_terms(pod: Pod) -> bool:
    a = pod.affinity
    return bool(a.pod_required or a.anti_required or a.pod_preferred or a.anti_preferred or pod.spread_constraints)


def _safe(name: str) -> str:
    return name.replace(",", "_").replace("[", "(").replace("]", ")")


def build_problem(cluster: Cluster, profile: Profile, gang_all: bool = False, decompose: bool = True) -> Problem:
    """Classes, static feasibility, existing-pod indices, components and node classes for `cluster`, under the
    rules of `profile`."""
    state = ClusterState.from_cluster(cluster)
    nodes = list(cluster.nodes)
    node_index = {n.name: i for i, n in enumerate(nodes)}
    keys = visible_label_keys(list(cluster.pods) + list(cluster.pending))
    gangs = find_gangs(cluster, gang_all)

    # pending classes
    by_key: dict[tuple, int] = {}
    classes: list[PodClass] = []
    class_of: dict[str, int] = {}
    used_names: set[str] = set()
    for pod in cluster.pending:
        gang = gangs.of.get(pod.key, "")
        k = (pod_signature(pod, keys), gang, pod.workload if gang else "")
        c = by_key.get(k)
        if c is None:
            base = _safe(pod.workload.split("/")[-1] if pod.workload else pod.name)
            name, i = base, 2
            while name in used_names:
                name, i = f"{base}#{i}", i + 1
            used_names.add(name)
            c = by_key[k] = len(classes)
            classes.append(PodClass(c, name, [], gang))
        classes[c].pods.append(pod)
        class_of[pod.key] = c

    # existing pods: targets grouped by signature, holders by (signature, node)
    ex_by: dict[tuple, ExistingGroup] = {}
    hold_by: dict[tuple, ExistingGroup] = {}
    for pod in cluster.pods:
        n = node_index.get(pod.node_name)
        if n is None:
            continue  # bound to a node absent from the input: counts nowhere, as in kube-scheduler
        sig = pod_signature(pod, keys)
        g = ex_by.setdefault(sig, ExistingGroup(pod))
        g.on[n] = g.on.get(n, 0) + 1
        if has_terms(pod):
            h = hold_by.setdefault((sig, n), ExistingGroup(pod))
            h.on[n] = h.on.get(n, 0) + 1

    problem = Problem(cluster, state, nodes, node_index, classes, class_of, [], UpperBounds(np.zeros((0, 0))),
                      list(ex_by.values()),
                      list(hold_by.values()), gangs, {}, profile, [], [], keys)
    for c in classes:
        if c.gang:
            problem.gang_classes.setdefault(c.gang, []).append(c.index)

    # static feasibility and per-(class, node) bounds, one vector over all nodes per class
    matrix = np.zeros((len(classes), len(nodes)), dtype=np.int32)
    masks = [enc.static_mask for enc in profile.encodings if enc.static_mask is not None]
    for c in classes:
        ub = upper_bound_vector(problem, c)
        for static_mask in masks:
            if not ub.any():
                break
            mask = static_mask(problem, c)
            if mask is not None:
                ub[~mask] = 0
        matrix[c.index] = ub
    problem.ub = UpperBounds(matrix)
    problem.feasible = [np.flatnonzero(row) for row in matrix]

    problem.components = _components(problem, decompose)
    problem.node_class = _node_classes(problem)
    return problem


def upper_bound_vector(problem: Problem, cls: PodClass) -> np.ndarray:
    """Per node index: most pods of `cls` the node can take, by every rule that bounds it on its own."""
    ub = np.full(len(problem.nodes), cls.size, dtype=np.int64)
    for enc in problem.profile.encodings:
        if enc.upper_bound is not None:
            np.minimum(ub, enc.upper_bound(problem, cls), out=ub)
    return np.maximum(ub, 0).astype(np.int32)


def static_reasons(problem: Problem, c: PodClass, node: int) -> list[Reason]:
    """Every static rule's reasons for class `c` on node index `node` (explain / why-pending)."""
    info = problem.state.nodes[problem.nodes[node].name]
    out: list[Reason] = []
    for enc in problem.profile.encodings:
        if enc.static_reasons is not None:
            out.extend(enc.static_reasons(problem, c, info))
    return out


def _components(problem: Problem, decompose: bool) -> list[Component]:
    """Connected components of the interaction graph: classes linked to the nodes they may use and to each
    other by `interactions` (sparse graph, scipy's connected_components: it has millions of edges at scale)."""
    n_cls, n_nodes = len(problem.classes), len(problem.nodes)
    rows: list[np.ndarray] = []
    cols: list[np.ndarray] = []
    for c, feas in enumerate(problem.feasible):
        if len(feas):
            rows.append(np.full(len(feas), c, dtype=np.int64))
            cols.append(feas.astype(np.int64) + n_cls)
    # edges beyond shared nodes: classes a rule links (selectors, domains) and the members of a gang
    pairs = [pair for enc in problem.profile.encodings if enc.interactions is not None
             for pair in enc.interactions(problem)]
    for members in problem.gang_classes.values():
        pairs.extend(zip(members, members[1:]))
    if not decompose:
        pairs.extend((c, c + 1) for c in range(n_cls - 1))
    if pairs:
        arr = np.asarray(pairs, dtype=np.int64)
        rows.append(arr[:, 0])
        cols.append(arr[:, 1])
    size = n_cls + n_nodes
    if rows:
        r, k = np.concatenate(rows), np.concatenate(cols)
    else:
        r = k = np.zeros(0, dtype=np.int64)
    graph = coo_matrix((np.ones(len(r), dtype=np.int8), (r, k)), shape=(size, size))
    _, labels = connected_components(graph, directed=False)
    by_label: dict[int, list[int]] = defaultdict(list)
    for c in range(n_cls):
        by_label[int(labels[c])].append(c)
    node_label = labels[n_cls:]
    out: list[Component] = []
    for label, cls in by_label.items():
        out.append(Component(0, cls, np.flatnonzero(node_label == label).tolist()))
    out.sort(key=lambda comp: comp.classes[0])
    for i, comp in enumerate(out):
        comp.index = i
    return out


def _node_classes(problem: Problem) -> list[int]:
    """Nodes interchangeable for every rule: equal up to label values unique to one node (hostname),
    same taints, allocatable and existing usage, and no existing pod any rule could see."""
    count: dict[tuple[str, str], int] = defaultdict(int)
    for n in problem.nodes:
        for kv in n.labels.items():
            count[kv] += 1
    node_selector_keys: set[str] = set()
    names_used = False
    for p in list(problem.cluster.pending) + list(problem.cluster.pods):
        node_selector_keys |= set(p.node_selector)
        a = p.affinity
        terms = list(a.node_required.terms if a.node_required else ()) + [t.preference for t in a.node_preferred]
        for t in terms:
            node_selector_keys |= {r.key for r in t.match_expressions}
            names_used |= bool(t.match_fields)
    has_pods = set()
    for g in problem.existing:
        if problem.label_keys and any(k in problem.label_keys for k in g.rep.labels) or has_terms(g.rep) \
                or g.rep.host_ports:
            has_pods |= set(g.on)
    ids: dict[tuple, int] = {}
    out: list[int] = []
    for i, n in enumerate(problem.nodes):
        info = problem.state.nodes[n.name]
        labels = tuple(sorted((k, v if (count[(k, v)] > 1 or k in node_selector_keys) else "\0unique")
                              for k, v in n.labels.items()))
        key = (labels, n.taints, n.unschedulable, tuple(sorted(n.allocatable.items())),
               tuple(sorted((k, v) for k, v in info.requested.items() if v)), len(info.pods),
               n.name if (names_used or i in has_pods) else "")
        out.append(ids.setdefault(key, len(ids)))
    return out
