"""The plugin contract every rule module fulfils, after kube-scheduler's framework
(pkg/scheduler/framework/interface.go): a cheap PreFilter precompute per pod, a per-node Filter
verdict with upstream's reason strings, and PreScore/Score/NormalizeScore.

Each rule package in optimizer/ exports `PLUGIN: Plugin`. The greedy simulator, the verifier and
explain call them through `run_filters` / `run_scores`; the CP-SAT encodings live beside them.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from models.objects import Pod

from .state import ClusterState, NodeInfo

MAX_NODE_SCORE = 100


@dataclass(frozen=True)
class Reason:
    """One failing Filter verdict. `unresolvable` = UnschedulableAndUnresolvable: preemption cannot help."""

    plugin: str
    reason: str
    unresolvable: bool = False


PreFilterFn = Callable[[Pod, ClusterState], Any]
FilterFn = Callable[[Pod, Any, NodeInfo, ClusterState], list[Reason]]
PreScoreFn = Callable[[Pod, ClusterState, Sequence[NodeInfo]], Any]
ScoreFn = Callable[[Pod, Any, NodeInfo, ClusterState], int]
NormalizeFn = Callable[[dict[str, int], Any], dict[str, int]]


@dataclass(frozen=True)
class Plugin:
    name: str
    pre_filter: PreFilterFn | None = None
    filter: FilterFn | None = None
    pre_score: PreScoreFn | None = None
    score: ScoreFn | None = None
    normalize: NormalizeFn | None = None
    weight: int = 0  # default score weight in kube-scheduler's default profile
