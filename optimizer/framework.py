"""The plugin contract every rule package fills in, after kube-scheduler's framework
(pkg/scheduler/framework/interface.go), and the profile that orders the rules.

A rule package (optimizer/<plugin>/) exports one `PLUGIN: Plugin` (or a factory of plugins for its arguments)
stating everything the rest of podplan needs to know about it:
- Filter: `pre_filter` (PreFilter, computed once per pod) and `filter` (per node, upstream's reason strings);
  `filter_reads` says what the verdict depends on (the node only, the node's own pods, the whole cluster),
  which lets the simulator cache it; `pre_filter_skip` / `filter_skipped` are upstream's Skip: known before
  PreFilter runs, or read off its result.
- Score: `pre_score`, `score`, `normalize`, the default `weight`, the same Skip conditions and `score_reads`.
- Batch semantics (every pod of the final state judged with itself removed): `placed_guard` keeps the
  simulator from binding a pod that breaks a pod already placed; `final_state_judge` judges every pod of a
  final state without O(pods²) work (the verifier). Both default to the plain predicate.
- `encoding`: the rule's CP-SAT form (optimizer/model.py builds the model from them).
- `vector`: the rule's vectorized form over the node arrays (the fast simulator).

The greedy simulator, the verifier, explain and the model builder read these traits from the contract: no
table keyed by plugin name exists anywhere else. A Profile (optimizer/registry.py: the default one) is the
ordered list of plugins with their score weights, as a KubeSchedulerConfiguration profile is.
"""
from __future__ import annotations

import enum
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..models.objects import Pod

from .state import ClusterState, NodeInfo, PodIndex

MAX_NODE_SCORE = 100


@dataclass(frozen=True)
class Reason:
    """One failing Filter verdict. `unresolvable` = UnschedulableAndUnresolvable: preemption cannot help."""

    plugin: str
    reason: str
    unresolvable: bool = False
    # A PreFilter rejection of the whole pod (not a per-node verdict): FitError prints it once, without a count
    # ("0/3 nodes are available: pod affinity terms conflict.").
    pre_filter: bool = field(default=False, compare=False)


PreFilterFn = Callable[[Pod, ClusterState], Any]
FilterFn = Callable[[Pod, Any, NodeInfo, ClusterState], list[Reason]]
PreScoreFn = Callable[[Pod, ClusterState, Sequence[NodeInfo]], Any]
ScoreFn = Callable[[Pod, Any, NodeInfo, ClusterState], int]
NormalizeFn = Callable[[dict[str, int], Any], dict[str, int]]


class Reads(enum.Enum):
    """What a plugin's Filter or Score verdict for (pod, node) depends on besides the pod."""

    NODE = "the node object"  # labels, taints, cordon, name: cacheable per pod spec for the whole run
    NODE_PODS = "the node's own pods"  # NodeInfo totals: cacheable per pod spec and NodeInfo.generation
    CLUSTER = "the whole cluster"  # other nodes' pods (topology domains): recomputed per pod


class PlacedGuard(Protocol):
    """Batch semantics in the simulator: kube-scheduler checks only the incoming pod's own rules, so it may
    bind a pod that breaks a rule of a pod placed earlier. A guard tells which nodes would do that."""

    def prepare(self, pod: Pod) -> Callable[[NodeInfo], tuple[Reason, ...]] | None:
        """The per-node check for `pod`, or None when it can break nobody."""

    def bound(self, pod: Pod, info: NodeInfo, pre: Any) -> None:
        """`pod` was just bound to `info`; `pre` is this plugin's PreFilter result for it (None if not run)."""


class FinalStateJudge(Protocol):
    """The verifier's fast path: the plugin's Filter verdict for a pod of a final state judged with itself
    removed, computed from counts over the whole state made once (the plain path removes and re-adds it)."""

    def filter(self, pod: Pod, info: NodeInfo) -> list[Reason]:
        ...


@dataclass(frozen=True)
class Encoding:
    """A rule's CP-SAT form, used by optimizer/problem.py (static feasibility) and optimizer/model.py.

    The callables take the Problem, a PodClass or the ModelContext (typed in the rule's own encoding.py;
    named loosely here so that the contract does not depend on the solver's modules):
    - encode(ctx): the rule's constraints and preference terms for one component's model;
    - static_mask(problem, cls) -> bool per node, or None when the rule never rejects the class: the
      verdicts that depend only on the node and the existing pods, vectorised;
    - static_reasons(problem, cls, info) -> the same verdicts as Reasons (explain, why-pending);
    - upper_bound(problem, cls) -> per node, most pods of the class the node can take by this rule alone;
    - interactions(problem) -> pairs of classes the rule links (they must be solved together);
    - existing_terms(problem, policy) -> the rule's preference terms no pending pod can change;
    - blame(reason) -> (object kind "Node" | "Pod", field) a static verdict comes from (why-pending);
    - soft(ctx): encode's preference terms alone, without the rule's constraints: what the model keeps of a
      rule whose Filter a scheduler profile disables (None: the rule adds no preference terms).
    """

    encode: Callable[..., None]
    static_mask: Callable[..., Any] | None = None
    static_reasons: Callable[..., list[Reason]] | None = None
    upper_bound: Callable[..., Any] | None = None
    interactions: Callable[..., list[tuple[int, int]]] | None = None
    existing_terms: Callable[..., dict[str, int]] | None = None
    blame: Callable[[Reason], tuple[str, str]] = lambda reason: ("Node", "")
    soft: Callable[..., None] | None = None


@dataclass(frozen=True)
class Plugin:
    """One kube-scheduler plugin as podplan models it (see the module docstring for each trait)."""

    name: str
    pre_filter: PreFilterFn | None = None
    filter: FilterFn | None = None
    pre_score: PreScoreFn | None = None
    score: ScoreFn | None = None
    normalize: NormalizeFn | None = None
    weight: int = 0  # default score weight in kube-scheduler's default profile
    filter_reads: Reads = Reads.CLUSTER
    score_reads: Reads = Reads.CLUSTER
    # upstream's Skip: known from the pod and the snapshot before PreFilter/PreScore runs, or read off its result
    pre_filter_skip: Callable[[Pod, ClusterState], bool] | None = None
    filter_skipped: Callable[[Any], bool] | None = None
    pre_score_skip: Callable[[Pod, ClusterState], bool] | None = None
    score_skipped: Callable[[Any], bool] | None = None
    placed_guard: Callable[[ClusterState], PlacedGuard] | None = None
    final_state_judge: Callable[[ClusterState, PodIndex], FinalStateJudge] | None = None
    encoding: Encoding | None = None
    vector: Callable[..., Any] | None = None  # new(state, node arrays) -> the rule's vectorized form


# schedule_one.go: how many feasible nodes a scheduling cycle looks for (percentageOfNodesToScore).
MIN_FEASIBLE_NODES_TO_FIND = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5
BASE_PERCENTAGE_OF_NODES_TO_SCORE = 50


def num_feasible_nodes_to_find(num_all_nodes: int, percentage: int = 0) -> int:
    """schedule_one.go numFeasibleNodesToFind with percentageOfNodesToScore (0 = adaptive)."""
    if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND:
        return num_all_nodes
    if percentage == 0:
        percentage = BASE_PERCENTAGE_OF_NODES_TO_SCORE - num_all_nodes // 125
        percentage = max(percentage, MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND)
    if percentage >= 100:
        return num_all_nodes
    return max(num_all_nodes * percentage // 100, MIN_FEASIBLE_NODES_TO_FIND)


@dataclass(frozen=True)
class Profile:
    """A scheduling profile: the plugins in Filter order and the Score plugins with their weights.

    `plugins` holds every plugin once, in Filter order (plugins without a Filter, such as
    NodeResourcesBalancedAllocation, anywhere: their place matters only for the order scores are listed in).
    """

    plugins: tuple[Plugin, ...]
    weights: tuple[tuple[str, int], ...] = ()  # overrides of the plugins' default weights (0 disables scoring)
    scheduler_name: str = "default-scheduler"
    percentage_of_nodes_to_score: int = 0  # 0: kube-scheduler's adaptive default
    _weight: dict[str, int] = field(init=False, repr=False, compare=False, hash=False)

    def __post_init__(self) -> None:
        given = dict(self.weights)
        object.__setattr__(self, "_weight", {p.name: given.get(p.name, p.weight) for p in self.plugins})

    @property
    def filters(self) -> tuple[Plugin, ...]:
        return tuple(p for p in self.plugins if p.filter is not None)

    @property
    def scorers(self) -> tuple[Plugin, ...]:
        return tuple(p for p in self.plugins if p.score is not None)

    @property
    def encodings(self) -> tuple[Encoding, ...]:
        return tuple(p.encoding for p in self.plugins if p.encoding is not None)

    def weight(self, plugin: Plugin) -> int:
        return self._weight.get(plugin.name, plugin.weight)

    def plugin(self, name: str) -> Plugin | None:
        return next((p for p in self.plugins if p.name == name), None)


@dataclass(frozen=True)
class NodeVerdict:
    """Every Filter verdict of one node for one pod: ALL failing plugins, in filter order."""

    node: str
    reasons: tuple[Reason, ...]

    @property
    def feasible(self) -> bool:
        return not self.reasons

    def first_failure(self) -> tuple[Reason, ...]:
        """What kube-scheduler reports: it stops at the first plugin that rejects the node."""
        if not self.reasons:
            return ()
        first = self.reasons[0].plugin
        return tuple(r for r in self.reasons if r.plugin == first)


PRE_FILTER_RESULT_REASON = "node(s) didn't satisfy plugin(s) [{plugins}]"


def outside_pre_filter_result(pres: Sequence[tuple[Plugin, Any]], node: str) -> tuple[Reason, ...]:
    """The framework's verdict on a node a PreFilterResult leaves out (schedule_one.go findNodesThatFitPod):
    no Filter runs there, and FitError counts it under "node(s) didn't satisfy plugin(s) [...]". A PreFilter
    state restricts the nodes through its `node_names` (None: every node; empty: the plugin rejected the pod,
    which its Filter reports itself)."""
    for plugin, pre in pres:
        names = getattr(pre, "node_names", None)
        if names and node not in names:
            return (Reason(plugin.name, PRE_FILTER_RESULT_REASON.format(plugins=plugin.name), unresolvable=True),)
    return ()


def pre_filter_result_size(pres: Sequence[tuple[Plugin, Any]], nodes: Any) -> int | None:
    """How many nodes of `nodes` (names) the PreFilterResult keeps (None: it keeps every node). Upstream's
    findNodesThatPassFilters then runs over those nodes only, and nextStartNodeIndex moves on by that many
    (by none when the PreFilter rejected the pod: an empty set)."""
    size = None
    for _, pre in pres:
        names = getattr(pre, "node_names", None)
        if names is not None:
            size = sum(1 for n in names if n in nodes) if names else 0
    return size


def run_filters(pod: Pod, state: ClusterState, plugins: Sequence[Plugin],
                nodes: Sequence[NodeInfo] | None = None) -> list[NodeVerdict]:
    """PreFilter once per plugin, then every plugin's Filter on every node (no early exit, for explain); a
    node outside a PreFilterResult gets the framework's verdict only, as no Filter runs there."""
    active = [(p, p.pre_filter(pod, state) if p.pre_filter else None) for p in plugins if p.filter]
    verdicts = []
    for info in nodes if nodes is not None else state.nodes.values():
        outside = outside_pre_filter_result(active, info.name)
        if outside:
            verdicts.append(NodeVerdict(info.name, outside))
            continue
        reasons: list[Reason] = []
        for plugin, pre in active:
            assert plugin.filter is not None
            reasons.extend(plugin.filter(pod, pre, info, state))
        verdicts.append(NodeVerdict(info.name, tuple(reasons)))
    return verdicts


def run_scores(pod: Pod, state: ClusterState, candidates: Sequence[NodeInfo],
               plugins: Sequence[Plugin]) -> dict[str, dict[str, int]]:
    """Each score plugin's normalized 0..100 scores over `candidates` (the nodes that passed filtering)."""
    out: dict[str, dict[str, int]] = {}
    for plugin in plugins:
        if plugin.score is None:
            continue
        pre = plugin.pre_score(pod, state, candidates) if plugin.pre_score else None
        raw = {info.name: plugin.score(pod, pre, info, state) for info in candidates}
        out[plugin.name] = plugin.normalize(raw, pre) if plugin.normalize else raw
    return out


def fit_error_message(num_nodes: int, verdicts: Sequence[NodeVerdict]) -> str:
    """FitError.Error(): `0/N nodes are available: <count> <reason>, ...` sorted as strings, counting each
    node's first rejecting plugin only, as the scheduling cycle stops there. A PreFilter rejection is the
    whole message: `0/N nodes are available: <reason>.`"""
    counts: dict[str, int] = {}
    for v in verdicts:
        for r in v.first_failure():
            if r.pre_filter:
                return f"0/{num_nodes} nodes are available: {r.reason}."
            counts[r.reason] = counts.get(r.reason, 0) + 1
    parts = sorted(f"{n} {reason}" for reason, n in counts.items())
    return f"0/{num_nodes} nodes are available: {', '.join(parts)}."


def bind_if_feasible(state: ClusterState, profile: Profile, guards: Sequence[tuple[str, PlacedGuard]], pod: Pod,
                     node: str) -> bool:
    """evaluateNominatedNode on one node: bind `pod` to `node` when every Filter of `profile` (PreFilter and
    its Skip honoured) and every placed-pod guard (by plugin name) pass there; the guards hear of the bind."""
    info = state.nodes[node]
    ran: dict[str, Any] = {}
    for p in profile.filters:
        if p.pre_filter_skip is not None and p.pre_filter_skip(pod, state):
            continue
        pre = ran[p.name] = p.pre_filter(pod, state) if p.pre_filter else None
        if (p.filter_skipped is None or not p.filter_skipped(pre)) and p.filter(pod, pre, info, state):  # type: ignore[misc]
            return False
    for _, guard in guards:
        check = guard.prepare(pod)
        if check is not None and check(info):
            return False
    state.add(pod, node)
    for name, guard in guards:
        guard.bound(pod, info, ran.get(name))
    return True
