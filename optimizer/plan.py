"""A plan: where each pending pod goes, which stay pending and why, and how it was found.

Produced by the greedy simulator and by the CP-SAT solve loop alike; checked by the verifier before output.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..models.objects import Pod

from .runner import Status


@dataclass(frozen=True)
class Preemption:
    """One PostFilter success: `preemptor` was nominated to `node` once `victims` were deleted (pod keys,
    most important first, as DefaultPreemption lists them)."""

    preemptor: str
    node: str
    victims: tuple[str, ...]


@dataclass(frozen=True)
class Plan:
    placements: dict[str, str]  # pending pod key ("ns/name") -> node name
    pending: dict[str, str]  # pending pod key -> why it stays pending
    status: Status = Status.FEASIBLE
    bound: dict[str, object] = field(default_factory=dict)  # proven bounds per objective level
    gap: float | None = None
    wall_seconds: float = 0.0
    workers: int = 0
    seed: int = 0
    notes: tuple[str, ...] = ()
    # per level (placed, preference): value, proven bound, absolute and relative gap (optimizer.figures.level_gaps)
    gaps: dict[str, dict[str, object]] = field(default_factory=dict)
    # Preemption (simulate): in the order it happened; the victims' controllers' new pods, pending pods of the
    # final state as well (optimizer.defaultpreemption.after_preemption gives the cluster the plan is about).
    preemptions: tuple[Preemption, ...] = ()
    recreated: tuple[Pod, ...] = ()

    @property
    def removed(self) -> frozenset[str]:
        """The keys of the pods preemption deleted (the verifier judges the final state without them)."""
        return frozenset(v for p in self.preemptions for v in p.victims)
