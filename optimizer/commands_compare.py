"""The `compare` and `generate` commands, registered on cli.main with main.add_command(...).

Kept out of cli.py so that cli.py imports nothing heavy at start-up; errors are PodplanError, which cli's
Group turns into one line and exit code 2 (3 for a plan that fails the verifier).
"""
from __future__ import annotations

import sys
from collections.abc import Sequence

import click


from .cli_options import load_input, solver_options


@click.command("compare")
@click.argument("files", nargs=-1, type=click.Path(allow_dash=True))
@solver_options(10.0, "Seconds for each optimal solve (the re-placement gets its own).")
@click.option("-o", "--output", "output", type=click.Choice(["table", "json", "yaml"]), default="table",
              show_default=True, help="Output format.")
@click.option("--report", "report_dir", type=click.Path(file_okay=False), default=None,
              help="Also write DIR/report.html: charts and tables, self-contained.")
def compare_command(files: Sequence[str], time_limit: float, workers: int, seed: int, gang: bool, strategy: str,
                    policy_file: str | None, output: str, report_dir: str | None) -> None:
    """Greedy (kube-scheduler) against the optimum, side by side; and, when running pods can move,
    the current placement against an optimal re-placement."""
    from .compare import compare, render_table, to_dict
    from .output import dump
    from .policy import load_policy
    from .solve import SolverParams

    policy = load_policy(policy_file)
    cluster = load_input(files)
    params = SolverParams(time_limit=time_limit, workers=workers, seed=seed, gang=gang, strategy=strategy,
                          log_progress=sys.stderr.isatty())
    doc = to_dict(compare(cluster, params, policy))
    if report_dir is not None:
        from .report import write_report

        path = write_report(doc, report_dir)
        click.echo(f"report: {path}", err=True)
    click.echo(render_table(doc) if output == "table" else dump(doc, output).rstrip("\n"))


@click.command("generate")
@click.option("--nodes", type=int, required=True, help="Number of nodes.")
@click.option("--pods", type=int, required=True,
              help="Pods the input describes (existing + pending); production and gpu: pending pods only.")
@click.option("--seed", type=int, default=0, show_default=True, help="Same arguments and seed, same manifests.")
@click.option("--profile", type=click.Choice(["web", "batch", "mixed", "adversarial", "production", "gpu"]),
              default="mixed", show_default=True,
              help="Workload mix; adversarial: greedy strands pods a full placement holds; production: the EKS "
                   "cluster of the scale goals; gpu: heterogeneous GPU packing at 98 % of the GPUs.")
@click.option("--utilization", type=float, default=0.7, show_default=True,
              help="Fraction of allocatable cpu all pods together request.")
def generate_command(nodes: int, pods: int, seed: int, profile: str, utilization: float) -> None:
    """Print a realistic cluster as multi-document YAML (node pools, zones, DaemonSets, workloads)."""
    from ..models.generate import dump_yaml, generate

    dump_yaml(generate(nodes, pods, seed, profile, utilization), sys.stdout)
