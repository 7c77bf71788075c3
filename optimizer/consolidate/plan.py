"""The vocabulary of `podplan consolidate`: its parameters, the removal it finds, cluster-autoscaler's answer
beside it, and the plan (frozen dataclasses)."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from ...models.errors import PodplanError

from ..framework import Profile
from ..rebalance.movable import MovePolicy
from ..rebalance.plan import Blocked, Note, Wave
from ..registry import DEFAULT_PROFILE
from ..runner import NEVER, Interrupt

SCALE_DOWN_UTILIZATION_THRESHOLD = 0.5  # cluster-autoscaler's --scale-down-utilization-threshold default


class ConsolidateError(PodplanError):
    """Arguments or a node-types file that do not apply to the input."""


@dataclass(frozen=True)
class ConsolidateParams:
    time_limit: float = 30.0
    workers: int = 2
    seed: int = 0
    move_policy: MovePolicy = MovePolicy()
    profile: Profile = DEFAULT_PROFILE
    threshold: float = SCALE_DOWN_UTILIZATION_THRESHOLD  # cluster-autoscaler's, for the comparison
    log_progress: bool = False
    interrupt: Interrupt = NEVER


@dataclass(frozen=True)
class ScaleDown:
    """What cluster-autoscaler's scale-down would remove, loop after loop, on the same input."""
    remove: tuple[str, ...]
    saving: float
    where: dict[str, str]  # moved pod -> the node kube-scheduler puts its replacement on
    kept: dict[str, str] = field(default_factory=dict)  # node it keeps -> why
    complete: bool = True  # False: the time limit (or Ctrl-C) cut the simulation short


@dataclass(frozen=True)
class ConsolidatePlan:
    status: str  # OPTIMAL | FEASIBLE | INTERRUPTED (the best so far)
    remove: tuple[str, ...]
    saving: float
    bound: float
    waves: tuple[Wave, ...]
    blocked: tuple[Blocked, ...]  # moves no wave could make (their nodes are then not removed)
    scale_down: ScaleDown
    prices: Mapping[str, float]
    price_unit: str  # "node" (count) or the node-types file's
    pinned: dict[str, str]  # node -> why it cannot go (a pod that cannot move)
    final: dict[str, str]  # every pod that stays in the cluster -> its node after the waves
    method: str
    notes: tuple[Note, ...]
    wall_seconds: float
    target: tuple[str, ...] = ()  # the removal found (every movable pod re-placed); `remove`: what the waves reach
    target_saving: float = 0.0

    @property
    def gap(self) -> float:
        """(bound − saving) / bound: 0 when proven, and when nothing can be saved."""
        return 0.0 if self.bound <= 0 else max(0.0, (self.bound - self.saving) / self.bound)

    @property
    def moves(self) -> int:
        return sum(len(w.moves) for w in self.waves)
