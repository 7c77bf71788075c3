"""The rebalance's vocabulary: its parameters, a move, a wave, the target and the plan (frozen dataclasses),
and the goal and status names every module of optimizer.rebalance shares."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ...models.errors import PodplanError
from ...models.objects import Pod

from ..framework import Profile
from ..names import REBALANCE_DRAIN as DRAIN
from ..names import REBALANCE_EMITS as EMITS
from ..names import REBALANCE_GOALS as GOALS
from ..policy import Policy
from ..registry import DEFAULT_PROFILE
from ..runner import NEVER, Interrupt, Status
from .movable import MovePolicy

__all__ = ["DRAIN", "EMITS", "GOALS"]  # names every module of optimizer.rebalance imports from here

class RebalanceError(PodplanError):
    """Arguments that name nothing in the input (an unknown --drain node), or that do not apply together."""


@dataclass(frozen=True)
class RebalanceParams:
    goal: str = "fix"  # fix | spread | pack | prefs | drain (only --drain)
    drain: tuple[str, ...] = ()
    max_moves: int | None = None
    time_limit: float = 10.0
    # the seconds the target search's deterministic budget comes from: the --time-limit given, or auto's formula
    # without the time reading took (timelimit.Resolved.budget); None: time_limit
    budget: float | None = None
    workers: int = 2
    seed: int = 0
    move_policy: MovePolicy = MovePolicy()
    policy: Policy = Policy()
    log_progress: bool = False  # a line per target stage and improving solution on stderr
    profile: Profile = DEFAULT_PROFILE  # the scheduler profile the states are judged and landed by
    interrupt: Interrupt = NEVER  # Ctrl-C: every step stops and the best plan so far is printed
    # goals beyond the scheduler's rules (podplan deschedule: a DeschedulerPolicy's thresholds, duplicates):
    # .constrain(built) adds its constraints to the target model and returns the expression of the level
    # OUTSIDE (minimised before the moves), .value(state) that level's value on a state (target_model)
    extra: Any = None


@dataclass(frozen=True)
class Move:
    pod: Pod  # the evicted pod
    source: str
    target: str

    @property
    def key(self) -> str:
        return self.pod.key


@dataclass(frozen=True)
class Blocked:
    pod: str
    reason: str


@dataclass(frozen=True)
class Landing:
    pod: str  # the evicted pod whose replacement this is
    planned: str
    alone: str  # where kube-scheduler puts it with only the drained nodes cordoned ("" = stays pending)
    cordoned: str  # with the wave's cordons


@dataclass(frozen=True)
class Wave:
    moves: tuple[Move, ...]  # in eviction order
    cordon: tuple[str, ...]  # nodes cordoned while the wave runs (drained nodes included)
    temporary: tuple[str, ...]  # of those, the ones uncordoned after the wave
    landing: tuple[Landing, ...]
    budgets: dict[str, tuple[int, int]] = field(default_factory=dict)  # pdb -> (evictions, allowed)
    spends: dict[str, str] = field(default_factory=dict)  # evicted pod -> the PDB whose disruption it spends


@dataclass(frozen=True)
class Target:
    assignment: dict[str, str]  # every free pod -> its node in the target
    status: Status  # OPTIMAL | FEASIBLE | NO_TARGET
    levels: tuple[tuple[str, int, bool], ...]  # (level, value, proven optimal)
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Note:
    """A note of the plan. `{items}` in `text` stands for `items` (pods, nodes): JSON and YAML list them all,
    tables count them past a few (render.rebalance)."""
    text: str
    items: tuple[str, ...] = ()

    def with_items(self, items: str) -> str:
        return self.text.replace("{items}", items) if self.items else self.text


@dataclass(frozen=True)
class RebalancePlan:
    goal: str
    drain: tuple[str, ...]
    complete: bool
    blocked: tuple[Blocked, ...]
    waves: tuple[Wave, ...]
    before: dict[str, Any]
    after: dict[str, Any]
    status: str
    levels: tuple[tuple[str, int, bool], ...]
    notes: tuple[Note, ...]
    wall_seconds: float
    final: dict[str, str]  # every pod of the cluster -> its node after the waves
    pending: int = 0  # pending pods of the input (not part of a rebalance: they may need the nodes it frees)

    @property
    def moves(self) -> int:
        return sum(len(w.moves) for w in self.waves)

