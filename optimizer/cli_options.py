"""Click options every solving command shares (solve, compare, explain --why-pending), defined once."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click


def solver_options(time_limit: float, time_help: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """--time-limit, --workers, --seed, --gang, --strategy, --policy."""
    options = [
        click.option("--time-limit", type=click.FloatRange(min=0.1), default=time_limit, show_default=True,
                     help=time_help),
        click.option("--workers", type=click.IntRange(min=1), default=2, show_default=True,
                     help="CP-SAT search workers."),
        click.option("--seed", type=int, default=0, show_default=True,
                     help="Seed of CP-SAT and of the greedy tie-break."),
        click.option("--gang", is_flag=True,
                     help="Every workload (Deployment, ReplicaSet, StatefulSet, Job) all-or-nothing."),
        click.option("--strategy", type=click.Choice(["spread", "pack"]), default="spread", show_default=True,
                     help="Tie-break after pods placed and preference: balance load, or use the fewest nodes."),
        click.option("--policy", "policy_file", type=click.Path(dir_okay=False), default=None,
                     help="YAML policy file with the preference multipliers."),
    ]

    def decorate(f: Callable[..., Any]) -> Callable[..., Any]:
        for option in reversed(options):
            f = option(f)
        return f

    return decorate
