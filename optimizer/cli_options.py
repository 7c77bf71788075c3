"""What the commands in cli.py and optimizer/commands_*.py share, defined once: loading the input with its
warnings, and the solver options (solve, compare)."""
from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import Any

import click

from ..models.errors import PodplanError
from ..models.loader import load_paths
from ..models.objects import Cluster


def load_input(files: Sequence[str]) -> Cluster:
    """Load the input (stdin when no file is given) and print its warnings on stderr; they never stop the run.

    The global --strict (on the root command's context) makes unknown fields errors."""
    if not files and sys.stdin.isatty():
        # Reading a terminal would wait silently for manifests nobody is typing.
        raise PodplanError("no input: give FILE..., - for stdin, or --cluster")
    ctx = click.get_current_context(silent=True)
    strict = bool(ctx is not None and (ctx.find_root().obj or {}).get("strict"))
    cluster = load_paths(files or ("-",), unknown_fields_fatal=strict)
    for w in cluster.warnings:
        click.echo(f"warning: {w}", err=True)
    return cluster


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
