"""The greedy kube-scheduler simulator: podplan's baseline, warm start and fallback.

Reproduces kube-scheduler's scheduling loop (pkg/scheduler/schedule_one.go):
- the queue is sorted by priority, then arrival (PrioritySort: priority, then creation time; podplan uses
  input order as creation time);
- findNodesThatFitPod: Filter nodes starting where the previous cycle stopped (nextStartNodeIndex) and stop
  once numFeasibleNodesToFind nodes passed (percentageOfNodesToScore adaptive default: 50% - nodes/125,
  at least 5% and at least 100 nodes);
- Score the feasible nodes with the default plugin weights, bind to the best; ties are broken by a seeded
  reservoir choice as upstream's selectHost does with its own random source;
- a pod that fits nowhere stays pending with FitError's message; the state is updated incrementally.
Known difference: no preemption (podplan plans, it does not evict to make room) and no nominated nodes.
"""
from __future__ import annotations

import random
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from models.objects import Cluster, Pod

from .gangs import Gangs
from .framework import NodeVerdict, Plugin, fit_error_message, run_scores, weighted_total
from .plan import Plan
from .registry import FILTER_PLUGINS, SCORE_PLUGINS
from .state import ClusterState, NodeInfo

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


def queue_order(pods: Iterable[Pod]) -> list[Pod]:
    """PrioritySort: higher priority first, then earlier arrival."""
    return sorted(pods, key=lambda p: (-p.priority, p.order))


@dataclass
class Scheduler:
    """One simulated kube-scheduler over a ClusterState it mutates as it binds."""

    state: ClusterState
    seed: int = 0
    percentage_of_nodes_to_score: int = 0
    filter_plugins: Sequence[Plugin] = FILTER_PLUGINS
    score_plugins: Sequence[Plugin] = SCORE_PLUGINS

    def __post_init__(self) -> None:
        self.rng = random.Random(self.seed)
        self.next_start = 0
        self.order: list[NodeInfo] = list(self.state.nodes.values())

    def _filter_one(self, pod: Pod, pres: list[tuple[Plugin, object]], info: NodeInfo) -> NodeVerdict:
        for plugin, pre in pres:
            assert plugin.filter is not None
            reasons = plugin.filter(pod, pre, info, self.state)
            if reasons:
                return NodeVerdict(info.name, tuple(reasons))  # upstream stops at the first rejecting plugin
        return NodeVerdict(info.name, ())

    def schedule(self, pod: Pod) -> tuple[str | None, str]:
        """One scheduling cycle: the chosen node (bound into the state) or None and FitError's message."""
        nodes = self.order
        if not nodes:
            return None, "0/0 nodes are available: no nodes in the input."
        pres = [(p, p.pre_filter(pod, self.state) if p.pre_filter else None) for p in self.filter_plugins if p.filter]
        want = num_feasible_nodes_to_find(len(nodes), self.percentage_of_nodes_to_score)
        feasible: list[NodeInfo] = []
        verdicts: list[NodeVerdict] = []
        processed = 0
        for i in range(len(nodes)):
            info = nodes[(self.next_start + i) % len(nodes)]
            processed += 1
            verdict = self._filter_one(pod, pres, info)
            if verdict.feasible:
                feasible.append(info)
                if len(feasible) >= want:
                    break
            else:
                verdicts.append(verdict)
        self.next_start = (self.next_start + processed) % len(nodes)
        if not feasible:
            return None, fit_error_message(len(nodes), verdicts)
        if len(feasible) == 1:
            chosen = feasible[0].name
        else:
            totals = weighted_total(run_scores(pod, self.state, feasible, self.score_plugins), self.score_plugins)
            chosen = self._select_host(feasible, totals)
        self.state.add(pod, chosen)
        return chosen, ""

    def _select_host(self, feasible: list[NodeInfo], totals: dict[str, int]) -> str:
        # Reservoir sampling over the nodes sharing the top score, as selectHost does.
        best, best_score, ties = feasible[0].name, totals.get(feasible[0].name, 0), 1
        for info in feasible[1:]:
            score = totals.get(info.name, 0)
            if score > best_score:
                best, best_score, ties = info.name, score, 1
            elif score == best_score:
                ties += 1
                if self.rng.randrange(ties) == 0:
                    best = info.name
        return best


def simulate(cluster: Cluster, seed: int = 0, *, gangs: Gangs | None = None,
             percentage_of_nodes_to_score: int = 0) -> Plan:
    """kube-scheduler on the pending pods of `cluster`, one at a time.

    With gangs (coscheduling's Permit semantics): a gang that ends below its minimum releases all its pods,
    and the pass is repeated without it, until every gang left is whole.
    """
    started = time.perf_counter()
    gangs = gangs or Gangs({}, {})
    dropped: set[str] = set()
    while True:
        state = ClusterState.from_cluster(cluster)
        sched = Scheduler(state, seed, percentage_of_nodes_to_score)
        placements: dict[str, str] = {}
        pending: dict[str, str] = {}
        for pod in queue_order(cluster.pending):
            gang = gangs.of.get(pod.key, "")
            if gang in dropped:
                pending[pod.key] = f"gang {gang} cannot reach its minimum of {gangs.minimum[gang]} pods"
                continue
            node, message = sched.schedule(pod)
            if node is None:
                pending[pod.key] = message
            else:
                placements[pod.key] = node
        short = _short_gangs(cluster, placements, gangs) - dropped
        if not short:
            break
        dropped |= short
    return Plan(placements=placements, pending=pending, status="GREEDY",
                wall_seconds=time.perf_counter() - started, seed=seed)


def _short_gangs(cluster: Cluster, placements: dict[str, str], gangs: Gangs) -> set[str]:
    """Gangs that placed some but fewer than their minimum of pods."""
    placed: dict[str, int] = {}
    for key, gang in gangs.of.items():
        if key in placements:
            placed[gang] = placed.get(gang, 0) + 1
    return {g for g, n in placed.items() if n < gangs.minimum[g]}
