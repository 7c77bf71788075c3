"""What the commands in cli.py and optimizer/commands_*.py share, defined once: loading the input with its
warnings, and the solver options (solve, compare)."""
from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

import click

from ..models.loader import read_paths
from ..models.objects import Cluster, Pod
from ..models.parse import Doc, collect
from ..models.workloads import build_cluster


def _record(ctx: click.Context, param: click.Parameter, value: Any) -> None:
    """Keep an input option in the root context's obj, whether it was given before or after the subcommand
    (`podplan -n shop solve` and `podplan solve -n shop`); the later one wins."""
    if value not in (None, False, ()):
        ctx.find_root().ensure_object(dict).setdefault("input", {})[str(param.name)] = value


def input_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """--cluster, --kubeconfig, --context and kubectl's scope flags (-n, -A, -l), on the group and on every
    command that reads input; the values go to ctx.obj["input"], read by load_input, never to the function."""
    options = [
        click.option("--cluster", is_flag=True, expose_value=False, callback=_record,
                     help="Read the cluster of the kubeconfig's context (read-only lists); files given too are added "
                          "on top (what-if)."),
        click.option("--kubeconfig", metavar="PATH", expose_value=False, callback=_record,
                     help="With --cluster: the kubeconfig file (default: $KUBECONFIG, else ~/.kube/config)."),
        click.option("--context", metavar="NAME", expose_value=False, callback=_record,
                     help="With --cluster: the kubeconfig context (default: its current context)."),
        click.option("-n", "--namespace", metavar="NS", expose_value=False, callback=_record,
                     help="Scope: only pending pods of NS are placed (rebalance: only its pods move). Default: every "
                          "namespace for files; with --cluster the context's namespace, else default."),
        click.option("-A", "--all-namespaces", is_flag=True, expose_value=False, callback=_record,
                     help="Scope: every namespace (the default for files)."),
        click.option("-l", "--selector", metavar="SELECTOR", expose_value=False, callback=_record,
                     help="Scope: only pods whose labels match (kubectl syntax: a=b,c!=d,e in (x,y),!f,g)."),
    ]

    def decorate(g: Callable[..., Any]) -> Callable[..., Any]:
        for option in reversed(options):
            g = option(g)
        return g

    return decorate(f)


def _settings() -> dict[str, Any]:
    ctx = click.get_current_context(silent=True)
    return dict(((ctx.find_root().obj or {}).get("input", {})) if ctx else {})


def load_input(files: Sequence[str], batch: bool = True) -> Cluster:
    """Load the input and print its warnings on stderr; they never stop the run. The input: the live cluster
    with --cluster (files given too are added on top), else the files (stdin when none). Then the scope
    (-n/-A/-l) is kept for movable_scope and, with `batch` (commands that place pending pods), keeps only its
    pending pods in the batch and says how many it left out."""
    from ..models.scope import in_scope, parse_selector, scope

    opts = _settings()
    default_namespace = None  # files: every namespace
    docs: list[Doc] = []
    if opts.get("cluster"):
        from ..models.live import read_cluster

        started = time.monotonic()
        live = read_cluster(opts.get("kubeconfig"), opts.get("context"))
        docs, default_namespace = live.docs, live.namespace
        ctx = click.get_current_context(silent=True)
        if ctx is not None and (ctx.find_root().obj or {}).get("verbose"):
            click.echo(f"cluster:{live.context}: read {len(docs)} objects in {time.monotonic() - started:.2f}s "
                       f"(context namespace {live.namespace})", err=True)
    elif opts.get("kubeconfig") or opts.get("context"):
        raise click.UsageError("--kubeconfig and --context need --cluster")
    if files or not opts.get("cluster"):
        docs = docs + read_paths(files or ("-",))
    cluster = build_cluster(collect(docs))
    for w in cluster.warnings:
        click.echo(f"warning: {w}", err=True)
    # -A wins over -n, as in kubectl get.
    namespace = None if opts.get("all_namespaces") else opts.get("namespace", default_namespace)
    selector = parse_selector(opts["selector"]) if "selector" in opts else None
    ctx = click.get_current_context(silent=True)
    if ctx is not None:
        whole = namespace is None and selector is None
        ctx.find_root().ensure_object(dict)["scope"] = None if whole else in_scope(namespace, selector)
    if not batch or (namespace is None and selector is None):
        return cluster
    scoped = scope(cluster, namespace, selector)
    left = len(cluster.pending) - len(scoped.pending)
    if left:
        where = " and ".join(w for w in (f"namespace {namespace}" if namespace else "",
                                         f"selector {opts['selector']!r}" if selector else "") if w)
        click.echo(f"note: {left} pending pod(s) outside the scope ({where}) are not part of the batch; "
                   "use -A or another -n/-l to include them", err=True)
    return scoped


def movable_scope() -> Callable[[Pod], bool] | None:
    """After load_input: which running pods may move (rebalance), None for all."""
    ctx = click.get_current_context(silent=True)
    return (ctx.find_root().obj or {}).get("scope") if ctx else None


def wide_as_table(ctx: click.Context, param: click.Parameter, value: str) -> str:
    """`-o wide` is the table with more columns: commands see "table", and ctx.obj["wide"] says to add them."""
    if value == "wide":
        ctx.find_root().ensure_object(dict)["wide"] = True
        return "table"
    return value


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
