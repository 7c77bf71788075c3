"""A plan: where each pending pod goes, which stay pending and why, and how it was found.

Produced by the greedy simulator and by the CP-SAT solve loop alike; checked by the verifier before output.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .runner import Status


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
    # per level (placed, preference): value, proven bound, absolute and relative gap (optimizer.solve.level_gaps)
    gaps: dict[str, dict[str, object]] = field(default_factory=dict)
