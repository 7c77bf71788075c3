"""podplan: batch placement optimizer for Kubernetes (also `kubectl podplan`).

The commands are thin: load the input -> run the pipeline (optimizer.pipeline) -> render (optimizer.render).
Bad input: one line on stderr naming file, document, object and field, exit code 2. An invalid plan is a bug:
exit 3, never printed. Ctrl-C: the best plan so far is printed, exit 130.
"""
from __future__ import annotations

import gc
import os
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

import click

from . import KUBE_VERSION, __version__
from .models.errors import PlanInvalidError, PodplanError
from .models.loader import cluster_of, read_paths
from .models.objects import Cluster, Pod
from .models.parse import Doc
from .optimizer.interrupt import Interrupt, keyboard_interrupts
from .optimizer.names import REBALANCE_EMITS, REBALANCE_GOALS
from .optimizer.timelimit import begin_command, command_started

OUTPUTS = click.Choice(["table", "wide", "json", "yaml"])
EMITS = click.Choice(["plan", "state", "bindings", "evictions"])
# Exit codes (README "## Exit codes"; tests/test_exit_codes.py runs its examples).
EXIT_DONE = 0
EXIT_VIOLATIONS = 1
EXIT_BAD_INPUT = 2
EXIT_BUG = 3
EXIT_INTERRUPTED = 130
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE: what a shell reports for a writer whose reader closed the pipe


class Group(click.Group):
    """Turns every PodplanError into one line and exit code 2 (3 for an invalid plan): never a traceback.
    Run as kubectl-podplan (a kubectl plugin), help and usage say `kubectl podplan`."""

    def main(self, *args: Any, **kwargs: Any) -> Any:
        if kwargs.get("prog_name") is None and os.path.basename(sys.argv[0]).startswith("kubectl-podplan"):
            kwargs["prog_name"] = "kubectl podplan"
        return super().main(*args, **kwargs)

    def invoke(self, ctx: click.Context) -> Any:
        # What an earlier command in this process froze (tests run many commands in a process). Not unfrozen on
        # the way out: the interpreter's last collection at exit would walk the whole input again (1.1 s at 1,000
        # nodes on a busy machine, after the plan was printed or Ctrl-C was answered).
        gc.unfreeze()
        try:
            return super().invoke(ctx)
        except PlanInvalidError as exc:
            click.echo(f"error: BUG: {exc}", err=True)
            sys.exit(EXIT_BUG)
        except PodplanError as exc:
            click.echo(f"error: {exc}", err=True)
            sys.exit(EXIT_BAD_INPUT)
        except (click.exceptions.ClickException, click.exceptions.Exit, click.exceptions.Abort):
            raise  # click's own usage errors (exit 2) and exits
        except BrokenPipeError:
            # the reader went away (`podplan ... | head`): not podplan's fault, and nothing left to say. stdout
            # points at /dev/null so that the interpreter's last flush does not raise again; the exit status is
            # a shell's for a writer killed by SIGPIPE
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            sys.exit(EXIT_BROKEN_PIPE)
        except Exception as exc:  # anything else is podplan's fault, not the input's
            if _root().get("verbose"):
                import traceback

                traceback.print_exc()
            click.echo(f"error: BUG: {type(exc).__name__}: {exc} (please report it; --verbose shows the traceback)",
                       err=True)
            sys.exit(EXIT_BUG)
        except KeyboardInterrupt:
            # Ctrl-C before any plan existed (reading the input): nothing to print
            click.echo("interrupted: no plan was made yet", err=True)
            sys.exit(EXIT_INTERRUPTED)
        finally:
            # Everything the command made is frozen too on its way out, so that the interpreter's last collection at
            # exit skips it (2.3 s passed between Ctrl-C's last line and the exit at 5,000 nodes, load 11). The next
            # command in this process unfreezes it.
            gc.freeze()


# ------------------------------------------------------------------------------------------ input options


def _record(ctx: click.Context, param: click.Parameter, value: Any) -> None:
    """Keep an input option in the root context's obj, whether it was given before or after the subcommand
    (`podplan -n shop solve` and `podplan solve -n shop`); the later one wins."""
    if value not in (None, False, ()):
        ctx.find_root().ensure_object(dict).setdefault("input", {})[str(param.name)] = value


def _record_verbose(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    """--verbose before or after the subcommand (`podplan --verbose solve` and `podplan solve --verbose`)."""
    if value:
        ctx.find_root().ensure_object(dict)["verbose"] = True


def _record_strict(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    """--strict before or after the subcommand (`podplan --strict solve` and `podplan solve --strict`)."""
    if value:
        ctx.find_root().ensure_object(dict)["strict"] = True


def progress(message: str) -> None:
    """A progress or timing line on stderr, with --verbose only."""
    if _root().get("verbose"):
        click.echo(message, err=True)


@contextmanager
def timed(what: str) -> Iterator[None]:
    """`what: 0.12s` on stderr with --verbose, once the block is done."""
    started = time.perf_counter()
    yield
    progress(f"{what}: {time.perf_counter() - started:.2f}s")


def input_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """--cluster, --kubeconfig, --context, kubectl's scope flags (-n, -A, -l) and --verbose, on the group and on
    every command that reads input; the values go to ctx.obj, read by load_input, never to the function."""
    options = [
        click.option("--verbose", is_flag=True, expose_value=False, callback=_record_verbose,
                     help="Progress and timing lines on stderr (loading, greedy, search, verify)."),
        click.option("--strict", is_flag=True, expose_value=False, callback=_record_strict,
                     help="Unknown fields and kinds in the input (typos) are errors, not warnings."),
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
    for option in reversed(options):
        f = option(f)
    return f


@click.group(cls=Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="podplan",
                      message=f"%(prog)s %(version)s (kube-scheduler v{KUBE_VERSION} semantics)")
@input_options
@click.pass_context
def main(ctx: click.Context) -> None:
    """podplan: batch placement optimizer for Kubernetes, with kube-scheduler's semantics."""
    # update, not assign: the input options (and --verbose) already keep theirs in ctx.obj; "verbose" is always
    # there (False until --verbose is given, before or after the subcommand)
    obj = ctx.ensure_object(dict)
    obj.setdefault("strict", False)
    obj.setdefault("verbose", False)
    begin_command()  # --time-limit counts from here; how much slower than idle the run goes scales reserves


def emit(text: str) -> None:
    click.echo(text.rstrip("\n"))


def _root() -> dict[str, Any]:
    ctx = click.get_current_context(silent=True)
    return ctx.find_root().ensure_object(dict) if ctx is not None else {}


def load_input(files: Sequence[str], batch: bool = True, unscoped: str = "") -> Cluster:
    """Load the input and print its warnings on stderr; they never stop the run. The input: the live cluster
    with --cluster (files given too are added on top), else the files (stdin when none). The global --strict
    makes unknown fields errors. Then the scope (-n/-A/-l) is kept for movable_scope and, with `batch`
    (commands that place pending pods), keeps only its pending pods in the batch and says how many it left out.
    `unscoped` names a command that reads the whole input: -n/-A/-l are refused there, rather than ignored."""
    from .models.scope import in_scope, parse_selector, scope

    started = time.perf_counter()
    root = _root()
    opts = dict(root.get("input", {}))
    flags = [f for f, k in (("-n", "namespace"), ("-A", "all_namespaces"), ("-l", "selector")) if k in opts]
    if unscoped and flags:
        refuse(f"{'/'.join(flags)}: {unscoped} is not scoped: it judges the whole input (every namespace, every pod)")
    default_namespace = None  # files: every namespace
    docs: list[Doc] = []
    sources: list[str] = []
    if opts.get("cluster"):
        from .models.live import read_cluster

        started = time.monotonic()
        live = read_cluster(opts.get("kubeconfig"), opts.get("context"))
        docs, default_namespace = live.docs, live.namespace
        sources.append(f"cluster:{live.context}")
        if root.get("verbose"):
            click.echo(f"cluster:{live.context}: read {len(docs)} objects in {time.monotonic() - started:.2f}s "
                       f"(context namespace {live.namespace})", err=True)
    elif opts.get("kubeconfig") or opts.get("context"):
        refuse("--kubeconfig and --context need --cluster")
    if files or not opts.get("cluster"):
        if not files and sys.stdin.isatty():
            # Reading a terminal would wait silently for manifests nobody is typing.
            raise PodplanError("no input: give FILE..., - for stdin, or --cluster")
        docs = docs + read_paths(files or ("-",))
        sources.extend(files or ("-",))
    cluster = cluster_of(docs, sources, unknown_fields_fatal=bool(root.get("strict")))
    # The input lives as long as the command: the collector's full passes (greedy, search, verify) skip it.
    gc.freeze()
    for w in cluster.warnings:
        click.echo(f"warning: {w}", err=True)
    if batch and cluster.pending and not cluster.nodes:
        raise PodplanError(f"{', '.join(sources)}: no Node in the input, so none of its {len(cluster.pending)} pending "
                           "pod(s) can be placed (add the nodes: kubectl get nodes -o yaml)")
    progress(f"load: {len(cluster.nodes)} node(s), {len(cluster.pods)} existing and {len(cluster.pending)} pending "
             f"pod(s), {len(cluster.workloads)} workload(s) from {', '.join(sources)}: "
             f"{time.perf_counter() - started:.2f}s")
    # -A wins over -n, as in kubectl get.
    namespace = None if opts.get("all_namespaces") else opts.get("namespace", default_namespace)
    selector = parse_selector(opts["selector"]) if "selector" in opts else None
    whole = namespace is None and selector is None
    root["scope"] = None if whole else in_scope(namespace, selector)
    if not batch or whole:
        return cluster
    scoped = scope(cluster, namespace, selector)
    left = len(cluster.pending) - len(scoped.pending)
    if left:
        where = " and ".join(w for w in (f"namespace {namespace}" if namespace else "",
                                         f'selector "{opts["selector"]}"' if selector else "") if w)
        # -A given: only the selector leaves pods out
        widen = "another -l" if opts.get("all_namespaces") else "-A or another -n/-l"
        click.echo(f"note: {left} pending pod(s) outside the scope ({where}) are not part of the batch; "
                   f"use {widen} to include them", err=True)
    return scoped


def movable_scope() -> Callable[[Pod], bool] | None:
    """After load_input: which running pods may move (rebalance), None for all."""
    return _root().get("scope")


def wide_as_table(ctx: click.Context, param: click.Parameter, value: str) -> str:
    """`-o wide` is the table with more columns: commands see "table", and ctx.obj["wide"] says to add them."""
    if value == "wide":
        ctx.find_root().ensure_object(dict)["wide"] = True
        return "table"
    return value


def files_argument(f: Callable[..., Any]) -> Callable[..., Any]:
    """FILES... and the input options (--cluster, -n, -A, -l...) of every command that reads input."""
    return click.argument("files", nargs=-1, type=click.Path(allow_dash=True))(input_options(f))


def output_option(f: Callable[..., Any]) -> Callable[..., Any]:
    return click.option("-o", "--output", "output", type=OUTPUTS, default="table", show_default=True,
                        callback=wide_as_table, help="Output format (wide: the table, with node details).")(f)


class TimeLimit(click.ParamType):
    """--time-limit: seconds (a positive finite number) or `auto` -> float, or None for auto (resolved from the
    input's size once it is read: optimizer.timelimit). nan, inf, 0 and negative numbers are refused in one
    line, exit 2."""

    name = "SECONDS|auto"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> float | None:
        from .optimizer.timelimit import TimeLimitError, parse

        if value is None or isinstance(value, float):
            return value
        try:
            return parse(value)
        except TimeLimitError as exc:
            raise PodplanError(str(exc)) from None


TIME_LIMIT = TimeLimit()


class Seconds(TimeLimit):
    """--time-limit of the commands without an `auto` default (whatif per scenario, capacity, provision,
    consolidate, deschedule): a positive finite number of seconds; nan, inf, 0, negatives and `auto` refused."""

    name = "SECONDS"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> float | None:
        try:
            seconds = super().convert(value, param, ctx)
        except PodplanError as exc:
            raise PodplanError(str(exc).replace(" (or 'auto')", "")) from None
        if seconds is None:
            raise PodplanError(f"--time-limit {value}: this command takes a number of seconds (auto is for solve, "
                               "compare, rebalance and explain)")
        return seconds


SECONDS = Seconds()
AUTO_HELP = " Default auto: scaled to the input's nodes x pods (docs/time-limits.md), shown in the notes."


def resolve_limit(command: str, given_seconds: float | None, cluster: Cluster, started: float) -> Any:
    """The --time-limit this command runs with (optimizer.timelimit.Resolved), from the input read; `started`:
    the command's start (perf_counter), so that auto adds the time reading took."""
    from .optimizer.timelimit import resolve

    limit = resolve(command, given_seconds, len(cluster.nodes), len(cluster.pods) + len(cluster.pending),
                    reading=time.perf_counter() - started, pending=len(cluster.pending))
    progress(limit.note())
    return limit


def with_limit_note(plan: Any, limit: Any, started: float, note: Callable[[str], Any] = str) -> Any:
    """The plan with the time limit it ran with as its first note (-o table and -o json show notes), and a
    last one when the plan was ready after the limit (`started`: the command's start); `note` makes the notes
    (rebalance's notes are optimizer.rebalance.plan.Note)."""
    from dataclasses import replace

    from .optimizer.timelimit import overrun_note

    late = overrun_note(started, limit.seconds)
    return replace(plan, notes=(note(limit.note()), *plan.notes, *((note(late),) if late else ())))


def solver_options(time_limit: float, time_help: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """--time-limit, --workers, --seed, --gang, --strategy, --policy (solve, compare)."""
    options = [
        click.option("--time-limit", type=TIME_LIMIT, default="auto", show_default=True,
                     help=time_help + AUTO_HELP),
        click.option("--workers", type=click.IntRange(min=1), default=2, show_default=True,
                     help="CP-SAT search workers."),
        click.option("--seed", type=int, default=0, show_default=True,
                     help="Seed of CP-SAT and of the greedy tie-break."),
        click.option("--gang", is_flag=True,
                     help="Every workload (Deployment, ReplicaSet, StatefulSet, Job) all-or-nothing."),
        click.option("--strategy", type=click.Choice(["spread", "pack"]), default=None,
                     help="Tie-break after pods placed and preference: balance load, or use the fewest nodes "
                          "[default: pack under a MostAllocated scoring strategy (--scheduler-config), else spread]."),
        click.option("--policy", "policy_file", type=click.Path(dir_okay=False), default=None,
                     help="YAML policy file with the preference multipliers."),
    ]

    def decorate(f: Callable[..., Any]) -> Callable[..., Any]:
        for option in reversed(options):
            f = option(f)
        return f

    return decorate


def scheduler_config_option(f: Callable[..., Any]) -> Callable[..., Any]:
    return click.option("--scheduler-config", "scheduler_config", metavar="FILE", type=click.Path(dir_okay=False),
                        default=None, help="kube-scheduler's KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1): "
                                           "its profiles (by spec.schedulerName), plugins, weights and plugin args.")(f)


def load_profiles(path: str | None) -> Any:
    """The scheduler profiles (optimizer.profiles.Profiles): the file's, else kube-scheduler's defaults. An invalid
    file is an InputError (one line naming file and field, exit 2). With --verbose, the plugins podplan accepts
    without modelling them (volumes, images, resource claims) are named once per profile on stderr."""
    from .models.schedulerconfig import load_scheduler_config
    from .optimizer.profiles import default_profiles, profiles_from

    if path is None:
        return default_profiles()
    profiles = profiles_from(load_scheduler_config(path))
    by_profile: dict[str, list[str]] = {}
    for note in profiles.notes:  # "profile NAME: PLUGIN: why"
        head, plugin, _ = note.split(": ", 2)
        by_profile.setdefault(head, []).append(plugin)
    for head, plugins in by_profile.items() if _root().get("verbose") else ():
        click.echo(f"note: {head}: {', '.join(plugins)} not modelled (they pass every node and score 0: no volumes, "
                   f"images or resource claims in podplan's input)", err=True)
    return profiles


def held_back(cluster: Cluster, profiles: Any) -> tuple[Cluster, Any]:
    """The batch kube-scheduler would schedule, and the pending pods it would not bind (gated, other
    schedulers), which no command places."""
    from .optimizer.profiles import hold_back

    batch, held = hold_back(cluster, profiles)
    note = held.note()
    if note is not None and _root().get("verbose"):
        click.echo(f"note: {note}", err=True)
    return batch, held


def emit_option(f: Callable[..., Any]) -> Callable[..., Any]:
    return click.option("--emit", "emit_kind", type=EMITS, default="plan", show_default=True,
                        help="plan: placements and pending pods; state: the final state as manifests; "
                             "bindings: v1 Bindings; evictions: policy/v1 Evictions of the pods preemption "
                             "evicts, in PodDisruptionBudget-safe waves.")(f)


def refuse(message: str) -> None:
    """An option that does not apply to this combination: one line, exit 2 (as bad input), before any work."""
    raise PodplanError(message)


def given(name: str) -> bool:
    """Was option `name` given on the command line (not left at its default)?"""
    ctx = click.get_current_context()
    return ctx.get_parameter_source(name) not in (None, click.core.ParameterSource.DEFAULT)


def check_emit(output: str, emit_kind: str) -> None:
    """--emit state/bindings print manifests (YAML, or JSON with -o json): an explicit -o table/wide is refused."""
    if emit_kind != "plan" and output == "table" and given("output"):
        refuse(f"--emit {emit_kind} prints manifests: use -o yaml (the default with --emit {emit_kind}) or -o json, "
               f"not -o {'wide' if _root().get('wide') else 'table'}")


def print_plan(cluster: Cluster, plan: Any, output: str, emit_kind: str, policy: Any = None,
               profile: Any = None, evictions_from: Cluster | None = None, kube: bool = False) -> None:
    """Verify (the gate, with the plan's scheduler profile(s)), then print in the requested form. kube: the plan
    is kube-scheduler's (simulate): the rules of placed pods its final state breaks are listed, not refused."""
    from .optimizer.pipeline import check
    from .optimizer.registry import DEFAULT_PROFILE
    from .optimizer.render.plans import (binding, bindings, dump, node_details, plan_document, plan_table,
                                         preemption_evictions, replicas_to_create, state_manifests)

    from .optimizer.ahead import AHEAD

    profile = DEFAULT_PROFILE if profile is None else profile
    taken, based = AHEAD.taken, AHEAD.based
    with timed(f"verify: {len(plan.placements)} placement(s) judged"):
        report = check(cluster, plan, policy, profile, kube=kube)
    if AHEAD.taken > taken:
        progress("verify: the report is the one made in the background while the search ran (the same plan)")
    elif AHEAD.based > based:
        from .optimizer.verify_delta import LAST_DELTA
        if LAST_DELTA:
            changed, judged, pods = LAST_DELTA[-1]
            progress(f"verify: against the starting plan verified in the background: {changed} pod(s) changed, "
                     f"{judged} of {pods} judged again")
    if emit_kind == "state":
        emit(dump(state_manifests(cluster, plan.placements), "json" if output == "json" else "yaml"))
    elif emit_kind == "evictions":
        # the victims as they run in the input: print_plan's cluster holds the state after preemption
        emit(preemption_evictions(evictions_from or cluster, plan, "json" if output == "json" else "yaml"))
    elif emit_kind == "bindings":
        docs, stuck, created = bindings(cluster, plan.placements, profile)
        for pod in stuck:
            click.echo(f"warning: no binding order accepts {pod.key} before the others; bind it last", err=True)
        docs += [binding(p, plan.placements[p.key]) for p in stuck]
        if created:
            # Replicas podplan named itself: a Binding would get NotFound. The controller creates them.
            click.echo(f"note: no Binding for {len(created)} replica(s) their controllers will create (podplan "
                       "named them itself); where the plan puts them:", err=True)
            for line in replicas_to_create(created, plan.placements):
                click.echo(f"note:   {line}", err=True)
        if docs or output == "json":  # YAML: no document at all; JSON: an empty List
            emit(dump(docs, "json" if output == "json" else "yaml"))
    elif output == "table":
        emit(plan_table(cluster, plan, report))
        if _root().get("wide"):
            emit("\n" + node_details(cluster, plan.placements))
    else:
        emit(dump(plan_document(cluster, plan, report), output))


def finish(interrupt: Interrupt) -> None:
    """Exit 130 after printing the best plan so far when Ctrl-C was pressed."""
    if interrupt.is_set():
        click.echo("interrupted: the best plan found so far is printed", err=True)
        sys.exit(EXIT_INTERRUPTED)


# ------------------------------------------------------------------------------------------------ commands


@main.command()
@files_argument
@output_option
def validate(files: Sequence[str], output: str) -> None:
    """Load manifests, check every object, and summarize what the input holds."""
    from .optimizer.render.inputs import summary, summary_table
    from .optimizer.render.text import dump  # not render.plans: validate never loads the solver stack

    cluster = load_input(files, batch=False, unscoped="validate")
    s = summary(cluster)
    emit(summary_table(s, wide=bool(_root().get("wide"))) if output == "table" else dump(s, output))
    left_to_exit(cluster)


def left_to_exit(obj: Any) -> None:
    """`obj` is never freed object by object: freeing production 5,000's input (77,000 pods, their manifests) took
    0.15-0.3 s after validate's output was written. It is put in a cycle of its own and frozen with everything the
    command made (Group.invoke), which the interpreter's last collection skips: the operating system takes the
    memory back at once. A later command in the same process (the tests) unfreezes it and the collector frees it."""
    cycle: list[Any] = [obj]
    cycle.append(cycle)
    gc.freeze()


@main.command()
@files_argument
@output_option
@emit_option
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the tie-break among equal nodes.")
@click.option("--percentage-of-nodes-to-score", type=click.IntRange(0, 100), default=0, show_default=True,
              help="kube-scheduler's percentageOfNodesToScore (0: the scheduler configuration's, else its adaptive "
                   "default).")
@click.option("--no-preemption", is_flag=True,
              help="Never evict lower-priority pods for a pod that fits nowhere (DefaultPreemption is on by default).")
@scheduler_config_option
def simulate(files: Sequence[str], output: str, emit_kind: str, seed: int, percentage_of_nodes_to_score: int,
             no_preemption: bool, scheduler_config: str | None) -> None:
    """Place pending pods one at a time, as kube-scheduler would (each with its own profile, preempting
    lower-priority pods)."""
    from .optimizer.defaultpreemption import after_preemption
    from .optimizer.pipeline import greedy_plan

    check_emit(output, emit_kind)
    profiles = load_profiles(scheduler_config)
    cluster = load_input(files)
    batch, held = held_back(cluster, profiles)
    with Interrupt().install() as interrupt:
        plan = greedy_plan(batch, seed, percentage_of_nodes_to_score=percentage_of_nodes_to_score, profile=profiles,
                           interrupt=interrupt, preemption=not no_preemption, kube=True)
    progress(f"greedy: {len(plan.placements)} placed, {len(plan.pending)} pending: {plan.wall_seconds:.2f}s"
             + (f" ({len(plan.preemptions)} preemption(s))" if plan.preemptions else ""))
    # the final state has no victims and holds their controllers' new pods (pending, or placed by the plan)
    print_plan(after_preemption(cluster, plan), held.into(plan), output, emit_kind, profile=profiles,
               evictions_from=cluster, kube=True)
    finish(interrupt)


@main.command()
@files_argument
@output_option
@emit_option
@solver_options(0.0, "Wall seconds for the whole command: reading, greedy warm start, search, output.")
@scheduler_config_option
@click.option("--preempt", is_flag=True,
              help="Running pods of lower priority than a pending pod may be evicted to place it (optimal batch "
                   "preemption: fewest victims weighted by priority).")
@click.option("--allow-pdb-violations", is_flag=True,
              help="With --preempt: PodDisruptionBudgets become a cost instead of a constraint.")
@click.pass_context
def solve(ctx: click.Context, files: Sequence[str], output: str, emit_kind: str, time_limit: float, workers: int,
          seed: int, gang: bool, strategy: str | None, policy_file: str | None, scheduler_config: str | None,
          preempt: bool, allow_pdb_violations: bool) -> None:
    """Place all pending pods at once, optimally (CP-SAT), never worse than kube-scheduler's greedy."""
    from .optimizer.defaultpreemption import after_preemption
    from .optimizer.defaultpreemption.batch import solve_preempt
    from .optimizer.pipeline import Deadline, optimal_plan, reserve
    from .optimizer.policy import load_policy
    from .optimizer.runner import SolverParams

    check_emit(output, emit_kind)
    if not preempt and (allow_pdb_violations or emit_kind == "evictions"):
        refuse(f"{'--allow-pdb-violations' if allow_pdb_violations else '--emit evictions'} needs --preempt "
               "(without it solve evicts nobody)")
    started = command_started()  # the limit is the whole command's: start-up and reading the input included
    policy = load_policy(policy_file)
    profiles = load_profiles(scheduler_config)
    cluster = load_input(files)
    batch, held = held_back(cluster, profiles)
    limit = resolve_limit("solve", time_limit, batch, started)
    time_limit = limit.seconds
    deadline = Deadline(started, time_limit)
    profile = profiles.for_batch(batch.pending)
    params = SolverParams(time_limit=time_limit, workers=workers, seed=seed, gang=gang,
                          strategy=strategy or profiles.strategy(profile), budget=limit.budget,
                          log_progress=sys.stderr.isatty() or bool(_root().get("verbose")))
    with Interrupt().install() as interrupt:
        if preempt:
            plan = solve_preempt(batch, params, policy, deadline=deadline.at - reserve(batch, time_limit),
                                 profile=profile, allow_pdb_violations=allow_pdb_violations, interrupt=interrupt)
        else:
            plan, greedy = optimal_plan(batch, params, policy, deadline=deadline, interrupt=interrupt,
                                        profile=profile)
            progress(f"greedy (warm start): {len(greedy.placements)} placed: {greedy.wall_seconds:.2f}s")
            for note in plan.notes:
                if note.startswith("warm start:"):
                    progress(note)
    progress(f"search: {plan.status}, {len(plan.placements)} placed: {plan.wall_seconds:.2f}s")
    plan = with_limit_note(plan, limit, started)
    # with --preempt the final state has no victims and holds their controllers' new pods
    print_plan(after_preemption(cluster, plan), held.into(plan), output, emit_kind, policy, profile,
               evictions_from=cluster)
    finish(interrupt)


@main.command()
@files_argument
@output_option
@click.option("--policy", "policy_file", type=click.Path(dir_okay=False), default=None,
              help="YAML policy file with the preference multipliers (the one solve was given).")
@scheduler_config_option
def verify(files: Sequence[str], output: str, policy_file: str | None, scheduler_config: str | None) -> None:
    """Judge a final state (pods with spec.nodeName) with every Filter of each pod's profile; exit 1 on any
    violation (a pod bound to a node the input does not hold is one)."""
    from .optimizer.policy import load_policy
    from .optimizer.render.inputs import verify_document, verify_table
    from .optimizer.render.plans import dump
    from .optimizer.verify import verify_state

    policy = load_policy(policy_file)
    profiles = load_profiles(scheduler_config)
    cluster = load_input(files, batch=False, unscoped="verify")
    if cluster.pending:
        click.echo(f"note: {len(cluster.pending)} pending pod(s) (no spec.nodeName, or replicas a workload still "
                   "needs) skipped: verify judges bound pods only; place them first (podplan solve --emit state "
                   "| podplan verify -)", err=True)
    with timed(f"verify: {len(cluster.pods)} pod(s) judged"):
        report = verify_state(cluster, policy, profile=profiles)
    emit(verify_table(cluster, report) if output == "table" else dump(verify_document(cluster, report), output))
    if not report.ok:
        sys.exit(EXIT_VIOLATIONS)


@main.command()
@files_argument
@output_option
@click.option("--pod", "pod_patterns", metavar="NS/NAME", multiple=True,
              help="Only this pending pod (repeatable; NAME alone matches any namespace; shell globs: 'shop/web-*'). "
                   "The other pending pods still count in the final state.")
@click.option("--nodes", "nodes_flag", is_flag=True,
              help="Every node's verdict and scores per pod. Default: --nodes up to 20 pending pods and 50 nodes, "
                   "else --summary (-o json: always every node).")
@click.option("--summary", "summary_flag", is_flag=True, help="One line per pod, whatever the input's size.")
@click.option("--why-pending", is_flag=True,
              help="Solve first, then name the rules (object and field) that keep each pod the optimum leaves pending.")
@click.option("--time-limit", type=TIME_LIMIT, default="auto", show_default=True,
              help="With --why-pending: wall seconds for the solve." + AUTO_HELP)
@click.option("--gang", is_flag=True, help="With --why-pending: every workload all-or-nothing.")
@scheduler_config_option
def explain(files: Sequence[str], output: str, pod_patterns: Sequence[str], nodes_flag: bool, summary_flag: bool,
            why_pending: bool, time_limit: float, gang: bool, scheduler_config: str | None) -> None:
    """Each pending pod's verdict on every node (all failing plugins, each plugin's score), judged against the
    batch's final state: the existing pods plus the other pending pods where simulate places them (each pod
    with its own profile's plugins)."""
    from .optimizer.explain import explain as run
    from .optimizer.render.inputs import (SUMMARY_NODES, SUMMARY_PODS, explain_summary,
                                          explain_table, why_pending_document, why_pending_table)
    from .optimizer.render.plans import dump

    if not why_pending:
        for name, flag in (("gang", "--gang"), ("time_limit", "--time-limit")):
            if given(name):
                refuse(f"{flag} applies to explain --why-pending only (explain alone runs no solve)")
    if nodes_flag and summary_flag:
        refuse("--nodes and --summary choose one explain table each: give one of them")
    per_node = True if nodes_flag else False if summary_flag else None
    if per_node is not None and (why_pending or output != "table"):
        refuse(f"--nodes/--summary choose the explain table: not with "
               f"{'--why-pending' if why_pending else '-o ' + output} (" 
               f"{'it has one row per blocking rule' if why_pending else 'which always holds every node'})")
    profiles = load_profiles(scheduler_config)
    cluster, held = held_back(load_input(files), profiles)
    for key, why in held.pending.items():
        click.echo(f"note: {key}: {why}", err=True)
    asked = _asked_pods(cluster, pod_patterns)
    if not why_pending:
        from .optimizer.pipeline import greedy_plan

        from .optimizer.defaultpreemption import after_preemption

        with timed("greedy (the batch's final state)"):
            plan = greedy_plan(cluster, profile=profiles, preemption=True, kube=True)
        # simulate's final state: its preemptions' victims gone, their controllers' new pods pending
        final = after_preemption(cluster, plan)
        if per_node is None:
            per_node = len(asked or cluster.pending) <= SUMMARY_PODS and len(cluster.nodes) <= SUMMARY_NODES
        full = output != "table" or per_node
        if output != "table":
            # written one pod at a time: every node of every pod does not fit in memory as one document
            from .optimizer.explain import iter_explain
            from .optimizer.render.inputs import stream_explain_document

            with timed("judge and write: every node for each asked pod"):
                stream_explain_document(iter_explain(final, profiles, pods=asked, placements=plan.placements),
                                        lambda: plan.preemptions, output,
                                        lambda text: click.echo(text, nl=False))
            return
        with timed("judge: every node for each asked pod"):
            pods = run(final, profiles, pods=asked, placements=plan.placements, scores=full)
        emit(explain_table(pods) if full else explain_summary(pods))
        for p in plan.preemptions:
            emit(f"preemption: {p.preemptor} on {p.node} evicts {', '.join(p.victims)}")
        return
    from .optimizer.pipeline import Deadline, check, optimal_plan
    from .optimizer.runner import SolverParams
    from .optimizer.solve import why_pending as blockers_of

    profile = profiles.for_batch(cluster.pending)
    limit = resolve_limit("explain", time_limit, cluster, command_started())
    params = SolverParams(time_limit=limit.seconds, gang=gang, strategy=profiles.strategy(profile), budget=limit.budget)
    with timed("solve"):
        plan, _ = optimal_plan(cluster, params, deadline=Deadline(command_started(), limit.seconds), profile=profile)
        check(cluster, plan, profile=profile)  # the verify gate: its pending pods are printed
    with timed(f"why pending: {len(plan.pending)} pod(s)"):
        doc = why_pending_document(plan, blockers_of(cluster, plan, params, pods=asked, profile=profile))
    emit(why_pending_table(doc) if output == "table" else dump(doc, output))


def _asked_pods(cluster: Cluster, patterns: Sequence[str]) -> list[str] | None:
    """Keys of the pending pods --pod names (NS/NAME or NAME, globs allowed), in input order; None: all."""
    from fnmatch import fnmatchcase

    if not patterns:
        return None
    keys = [p.key for p in cluster.pending]
    for pattern in patterns:
        if not any(fnmatchcase(k if "/" in pattern else k.split("/", 1)[1], pattern) for k in keys):
            refuse(f"--pod {pattern}: no pending pod of the batch matches (explain lists pending pods only)")
    return [k for k in keys
            if any(fnmatchcase(k if "/" in pat else k.split("/", 1)[1], pat) for pat in patterns)]


def report_dir_writable(path: str) -> None:
    """--report DIR is created (or exists) and takes a file, checked before any work: one line, exit 2."""
    try:
        os.makedirs(path, exist_ok=True)
        probe = os.path.join(path, ".podplan-write-check")
        with open(probe, "w", encoding="utf-8"):
            pass
        os.remove(probe)
    except OSError as exc:
        refuse(f"--report {path}: {exc.strerror or exc}")


@main.command("compare")
@files_argument
@solver_options(0.0, "Wall seconds for the whole comparison (with movable pods: half for the optimum, half "
                      "for the re-placement, which starts from the optimum).")
@output_option
@click.option("--report", "report_dir", type=click.Path(file_okay=False), default=None,
              help="Also write DIR/report.html: charts and tables, self-contained.")
@scheduler_config_option
@click.option("--preempt", is_flag=True,
              help="Greedy preempts as kube-scheduler does, the optimum as solve --preempt (no re-placement columns).")
@click.option("--allow-pdb-violations", is_flag=True,
              help="With --preempt: the optimum may break PodDisruptionBudgets at a cost.")
def compare(files: Sequence[str], time_limit: float, workers: int, seed: int, gang: bool, strategy: str | None,
            policy_file: str | None, output: str, report_dir: str | None, scheduler_config: str | None,
            preempt: bool, allow_pdb_violations: bool) -> None:
    """Greedy (kube-scheduler) against the optimum, side by side; and, when running pods can move,
    the current placement against an optimal re-placement."""
    from .optimizer.compare import compare as run
    from .optimizer.pipeline import Deadline
    from .optimizer.rebalance.movable import MovePolicy
    from .optimizer.policy import load_policy
    from .optimizer.render.compare import render_table, to_dict
    from .optimizer.render.plans import dump
    from .optimizer.runner import SolverParams

    if allow_pdb_violations and not preempt:
        refuse("--allow-pdb-violations needs --preempt (without it compare evicts nobody)")
    if report_dir is not None:
        report_dir_writable(report_dir)
    started = command_started()  # the limit is the whole command's: start-up and reading the input included
    policy = load_policy(policy_file)
    profiles = load_profiles(scheduler_config)
    cluster, held = held_back(load_input(files), profiles)
    note = held.note()
    if note is not None:
        click.echo(f"note: {note}", err=True)
    limit = resolve_limit("compare", time_limit, cluster, started)
    time_limit = limit.seconds
    deadline = Deadline(started, time_limit)
    profile = profiles.for_batch(cluster.pending)
    params = SolverParams(time_limit=time_limit, workers=workers, seed=seed, gang=gang,
                          strategy=strategy or profiles.strategy(profile), budget=limit.budget,
                          log_progress=sys.stderr.isatty() or bool(_root().get("verbose")))
    with Interrupt().install() as interrupt, timed("compare: greedy, optimum, verify"):
        # -n/-l scope the re-placement as they scope rebalance: only the pods in scope may move
        doc = to_dict(run(cluster, params, policy, MovePolicy(scope=movable_scope()), deadline=deadline,
                          interrupt=interrupt, profile=profile, preempt=preempt,
                          allow_pdb_violations=allow_pdb_violations))
    doc["time_limit"] = {"seconds": limit.seconds, "auto": limit.auto, "formula": limit.formula or None}
    if report_dir is not None:
        from .optimizer.render.report import write_report

        try:
            click.echo(f"report: {write_report(doc, report_dir)}", err=True)
        except OSError as exc:
            refuse(f"--report {report_dir}: {exc.strerror or exc}")
    emit(render_table(doc) if output == "table" else dump(doc, output))
    finish(interrupt)


@main.command("generate")
@click.option("--nodes", type=int, required=True, help="Number of nodes.")
@click.option("--pods", type=int, default=None,
              help="Pods the input describes (existing + pending); production, gpu and --shape: pending pods only "
                   "(required, except with --shape: 10 per node).")
@click.option("--seed", type=int, default=0, show_default=True, help="Same arguments and seed, same manifests.")
@click.option("--profile", type=click.Choice(["web", "batch", "mixed", "adversarial", "production", "gpu"]),
              default="mixed", show_default=True,
              help="Workload mix; adversarial: greedy strands pods a full placement holds; production: the EKS "
                   "cluster of the scale goals; gpu: heterogeneous GPU packing at 98 % of the GPUs.")
@click.option("--utilization", type=float, default=0.7, show_default=True,
              help="Fraction of allocatable cpu all pods together request.")
@click.option("--shape", default=None, metavar="NAME",
              help="A shape of the benchmark family (docs/benchmark-family.md; its own mix and utilisation, "
                   "--profile and --utilization do not apply).")
def generate(nodes: int, pods: int | None, seed: int, profile: str, utilization: float, shape: str | None) -> None:
    """Print a realistic cluster as multi-document YAML (node pools, zones, DaemonSets, workloads)."""
    from .models.generate import dump_yaml, generate as make

    if shape is not None:
        from .models.shapes import shape_instance

        dump_yaml(shape_instance(shape, nodes, seed, pods).manifests, sys.stdout)
        return
    if pods is None:
        raise click.UsageError("Missing option '--pods' (required without --shape).")
    dump_yaml(make(nodes, pods, seed, profile, utilization), sys.stdout)




@main.command("rebalance")
@files_argument
@click.option("--goal", type=click.Choice(REBALANCE_GOALS), default=None,
              help="fix: repair every rule violated now; spread: lowest max utilisation, then stddev; pack: empty "
                   "as many nodes as possible; prefs: highest preference score. Default: fix (drain with --drain).")
@click.option("--drain", multiple=True, metavar="NODE",
              help="What-if: the node must end empty of movable pods (repeatable, emptied in this order).")
@click.option("--max-moves", type=click.IntRange(min=0), default=None, help="At most this many evictions.")
@click.option("--time-limit", type=TIME_LIMIT, default="auto", show_default=True,
              help="Wall seconds for the whole command (load, target, waves, output); Ctrl-C prints the best "
                   "plan so far." + AUTO_HELP)
@click.option("--workers", type=click.IntRange(min=1), default=2, show_default=True, help="CP-SAT search workers.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of CP-SAT and of the landing simulation.")
@click.option("--evict-local-storage", is_flag=True, help="Pods with emptyDir/hostPath volumes may move.")
@click.option("--evict-system-critical", is_flag=True, help="Pods with system-critical priority may move.")
@click.option("--policy", "policy_file", type=click.Path(dir_okay=False), default=None,
              help="YAML policy file with the preference multipliers (goal prefs).")
@click.option("-o", "--output", "output", type=OUTPUTS, default=None, callback=wide_as_table,
              help="Output format: table (default; wide: the same) for the plan, yaml (default) or json for the "
                   "evictions; the script has none.")
@click.option("--emit", "emit_kind", type=click.Choice(REBALANCE_EMITS), default="plan",
              show_default=True,
              help="plan: the waves; evictions: policy/v1 Eviction objects per wave; script: a bash script.")
@scheduler_config_option
@click.pass_context
def rebalance(ctx: click.Context, files: Sequence[str], goal: str | None, drain: Sequence[str],
              max_moves: int | None, time_limit: float, workers: int, seed: int, evict_local_storage: bool,
              evict_system_critical: bool, policy_file: str | None, output: str | None, emit_kind: str,
              scheduler_config: str | None) -> None:
    """Plan evictions that move running pods to a better state, in PodDisruptionBudget-safe waves.

    Exit 0: the plan is complete; 1: it is INCOMPLETE (blocked pods or moves); 2: bad input; 3: a bug."""
    from .optimizer.pipeline import Deadline
    from .optimizer.policy import load_policy
    from .optimizer.rebalance import rebalance as run
    from .optimizer.rebalance.movable import MovePolicy
    from .optimizer.rebalance.plan import DRAIN, Note, RebalanceError, RebalanceParams
    from .optimizer.rebalance.states import verify_final
    from .optimizer.render.plans import dump
    from .optimizer.render.rebalance import evictions_text, rebalance_document, rebalance_table, script_text

    if emit_kind == "script" and output is not None:
        raise RebalanceError(f"--emit script prints a bash script: -o {output} does not apply")
    if emit_kind == "evictions" and output == "table":
        raise RebalanceError("--emit evictions prints manifests: -o yaml or -o json, not -o table")
    started = command_started()  # the whole command: start-up, loading and printing included
    policy = load_policy(policy_file)
    profiles = load_profiles(scheduler_config)
    cluster = load_input(files, batch=False)  # the scope says which running pods may move
    limit = resolve_limit("rebalance", time_limit, cluster, started)
    time_limit = limit.seconds
    deadline = Deadline(started, time_limit)
    profile = profiles.for_batch(cluster.pods)  # the replacements are scheduled by their pods' profile
    params = RebalanceParams(goal=goal or (DRAIN if drain else "fix"), drain=tuple(drain), max_moves=max_moves,
                             time_limit=time_limit, budget=limit.budget, workers=workers, seed=seed,
                             move_policy=MovePolicy(evict_local_storage, evict_system_critical, movable_scope()),
                             policy=policy, log_progress=sys.stderr.isatty() or ctx.obj["verbose"], profile=profile,
                             interrupt=Interrupt())
    with params.interrupt.install() as interrupt:
        plan = run(cluster, params, deadline=deadline.at)
    verify_final(cluster, plan, profile)
    plan = with_limit_note(plan, limit, started, note=Note)
    if emit_kind == "evictions":
        emit(evictions_text(plan, output or "yaml"))
    elif emit_kind == "script":
        emit(script_text(cluster, plan))
    elif output in (None, "table"):
        emit(rebalance_table(plan))
    else:
        emit(dump(rebalance_document(plan), output))
    finish(interrupt)
    if not plan.complete:
        sys.exit(EXIT_VIOLATIONS)


@main.command("diff")
@click.argument("a", metavar="A")
@click.argument("b", metavar="B")
@output_option
@click.option("--strict", is_flag=True, expose_value=False, callback=_record_strict,
              help="Unknown fields and kinds in a state (typos) are errors, not warnings.")
def diff_command(a: str, b: str, output: str) -> None:
    """What changed from A to B: two plan documents (simulate/solve -o json|yaml) or two states (--emit state,
    cluster dumps): pods moved, placed, left pending, rules newly broken or fixed, per-priority and preference
    deltas, and a one-paragraph summary. A or B may be - (stdin)."""
    from .optimizer.diff import read_and_diff
    from .optimizer.diff.render import document, render_table
    from .optimizer.render.plans import dump

    with timed("diff: read, judge and compare both sides"):
        d = read_and_diff(a, b, strict=bool(_root().get("strict")))
    for w in (*d.a.warnings, *d.b.warnings):
        click.echo(f"warning: {w}", err=True)
    emit(render_table(d) if output == "table" else dump(document(d), output))



@main.command("whatif")
@files_argument
@click.option("--scenarios", "scenarios_file", required=True, type=click.Path(dir_okay=False),
              help="The scenarios file (apiVersion podplan.io/v1alpha1, kind Scenarios).")
@click.option("--fleet", multiple=True, metavar="PATH|context:NAME",
              help="One cluster of a fleet (repeatable): a file or directory, or a kubeconfig context read live; "
                   "one row per cluster and scenario. Instead of FILES/--cluster.")
@click.option("--engine", type=click.Choice(["local", "ray"]), default="local", show_default=True,
              help="local: a process pool; ray: Ray tasks (the podplan[ray] extra).")
@click.option("--parallel", type=click.IntRange(min=1), default=None,
              help="Scenarios at once (local: worker processes; ray: the local Ray's CPUs) [default: the cores].")
@click.option("--ray-address", metavar="ADDRESS", default=None,
              help="With --engine ray: join this Ray cluster (ray://head:10001, auto); default: start a local Ray.")
@click.option("--time-limit", type=SECONDS, default=30.0, show_default=True,
              help="Wall seconds per scenario, on the worker (greedy, search, verification).")
@click.option("--workers", type=click.IntRange(min=1), default=1, show_default=True,
              help="CP-SAT search workers per scenario.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of CP-SAT and of the greedy tie-break.")
@click.option("--gang", is_flag=True, help="Every workload all-or-nothing.")
@scheduler_config_option
@output_option
@click.option("--report", "report_dir", type=click.Path(file_okay=False), default=None,
              help="Also write DIR/report.html: a chart across scenarios and the table, self-contained.")
def whatif(files: Sequence[str], scenarios_file: str, fleet: Sequence[str], engine: str, parallel: int | None,
           ray_address: str | None, time_limit: float, workers: int, seed: int, gang: bool,
           scheduler_config: str | None, output: str, report_dir: str | None) -> None:
    """Answer many what-ifs (nodes removed or added, workloads scaled, manifests added, another scheduler
    configuration), each applied to the same cluster(s): greedy and the optimum per scenario, one row each.

    Exit 0: every scenario answered; 1: some scenario could not be (its row says why); 2: bad input."""
    from .models.schedulerconfig import load_scheduler_config
    from .optimizer.whatif import Settings, Source, fleet_sources, load_bases, load_scenarios, prepare, run
    from .optimizer.whatif.progress import Progress
    from .optimizer.whatif.render import document, render_table
    from .optimizer.render.plans import dump

    opts = dict(_root().get("input", {}))
    if opts.get("namespace") or opts.get("selector"):
        refuse("whatif places every pending pod of each scenario: -n/-l do not apply")
    if engine != "ray" and ray_address:
        refuse("--ray-address applies to --engine ray")
    scenarios = load_scenarios(scenarios_file)
    config = load_scheduler_config(scheduler_config) if scheduler_config else None
    if fleet:
        if files or opts.get("cluster"):
            refuse("--fleet names every cluster of the run: not with FILES or --cluster")
        sources = fleet_sources(fleet)
    else:
        if not files and not opts.get("cluster"):
            refuse("no input: give FILE..., --cluster or --fleet")
        sources = [Source("cluster" if opts.get("cluster") else ",".join(files), tuple(files),
                          opts.get("context"), bool(opts.get("cluster")))]
    bases = load_bases(sources, keep_docs=any(s.needs_documents for s in scenarios.scenarios),
                       strict=bool(_root().get("strict")), kubeconfig=opts.get("kubeconfig"),
                       warn=lambda line: click.echo(f"warning: {line}", err=True))
    for b in bases:
        progress(f"load: {b.name}: {len(b.cluster.nodes)} node(s), {len(b.cluster.pods)} existing and "
                 f"{len(b.cluster.pending)} pending pod(s)")
    tasks = prepare(bases, scenarios)
    progress(f"whatif: {len(tasks)} scenario(s) on {engine}")
    settings = Settings(time_limit=time_limit, workers=workers, seed=seed, gang=gang, scheduler_config=config)
    bar = Progress(len(tasks), lines=bool(_root().get("verbose")))
    try:
        with keyboard_interrupts():
            outcome = run(bases, tasks, settings, engine=engine, parallel=parallel, ray_address=ray_address,
                          on_row=bar)
    finally:
        bar.close()
    rows = [outcome.rows[t.position] for t in tasks if t.position in outcome.rows]
    if outcome.worker_rss:
        progress(f"whatif: {len(outcome.worker_rss)} worker(s), peak memory "
                 f"{max(outcome.worker_rss.values()) / 2**20:.0f} MiB per worker")
    doc = document(rows, interrupted=outcome.interrupted, missing=len(tasks) - len(rows))
    if report_dir is not None:
        from .optimizer.whatif.report import write_report

        click.echo(f"report: {write_report(doc, report_dir)}", err=True)
    emit(render_table(rows) if output == "table" else dump(doc, output))
    if outcome.interrupted:
        click.echo(f"interrupted: {len(rows)} of {len(tasks)} scenario(s) finished and printed", err=True)
        sys.exit(EXIT_INTERRUPTED)
    if any(r.get("status") == "ERROR" for r in rows):
        sys.exit(EXIT_VIOLATIONS)



@main.command("deschedule")
@files_argument
@click.option("--policy-file", "policy_file", required=True, type=click.Path(dir_okay=False),
              help="The DeschedulerPolicy (descheduler/v1alpha2) the descheduler runs with.")
@click.option("--time-limit", type=TIME_LIMIT, default="auto", show_default=True,
              help="Wall seconds for the whole command (the descheduler's cycles, the optimum, output)." + AUTO_HELP)
@click.option("--workers", type=click.IntRange(min=1), default=2, show_default=True, help="CP-SAT search workers.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of CP-SAT and of the scheduling simulation.")
@click.option("--max-cycles", type=click.IntRange(min=1), default=10, show_default=True,
              help="Descheduler cycles simulated at most, looking for convergence or a loop.")
@click.option("-o", "--output", "output", type=OUTPUTS, default="table", show_default=True,
              callback=wide_as_table, help="Output format.")
@click.option("--emit", "emit_kind", type=click.Choice(["plan", "state"]), default="plan", show_default=True,
              help="plan: the side-by-side comparison; state: the optimal plan's end state as manifests "
                   "(podplan verify reads them).")
@click.option("--report", "report_dir", type=click.Path(file_okay=False), default=None,
              help="Also write an HTML report (index.html) into this directory.")
@scheduler_config_option
def deschedule(files: Sequence[str], policy_file: str, time_limit: float | None, workers: int, seed: int,
               max_cycles: int, output: str, emit_kind: str, report_dir: str | None, scheduler_config: str | None) -> None:
    """What a DeschedulerPolicy would evict, where kube-scheduler puts each replacement, and the fewest
    evictions that meet the same policy, in PodDisruptionBudget-safe waves.

    Exit 0: the optimal plan meets the policy; 1: some goal cannot be met; 2: bad input; 3: a bug."""
    from pathlib import Path

    from .optimizer.deschedule import deschedule as run
    from .optimizer.deschedule.policy import load_policy_file
    from .optimizer.pipeline import Deadline
    from .optimizer.rebalance.plan import RebalanceParams
    from .optimizer.rebalance.states import verify_final
    from .optimizer.render.deschedule import document, render_html, render_table
    from .optimizer.render.plans import dump, state_manifests

    started = command_started()  # the whole command: start-up, loading and printing included
    policy = load_policy_file(policy_file)
    profiles = load_profiles(scheduler_config)
    cluster = load_input(files, batch=False)
    limit = resolve_limit("deschedule", time_limit, cluster, started)
    time_limit = limit.seconds
    deadline = Deadline(started, time_limit)
    profile = profiles.for_batch(cluster.pods)
    params = RebalanceParams(time_limit=time_limit, budget=limit.budget, workers=workers, seed=seed, profile=profile,
                             log_progress=bool(_root().get("verbose")), interrupt=Interrupt())
    from .optimizer.deschedule import RESERVE_PER_POD
    from .optimizer.timelimit import scaled_reserve

    # kept for the verify gate and the output, as rebalance keeps it (scaled by how slow this machine runs)
    reserve = scaled_reserve(1.0 + RESERVE_PER_POD * len(cluster.pods), time_limit)
    # Ctrl-C: the optimum stops (its plan and waves check it) and the best plan so far is verified and printed
    with params.interrupt.install() as interrupt:
        result = run(cluster, policy, params, deadline.at - reserve, max_cycles)
    progress(f"descheduler: {len(result.descheduler.cycles)} cycle(s) simulated: {result.seconds['descheduler']:.2f}s")
    progress(f"optimum: {result.optimal.plan.status}, {result.optimal.plan.moves} eviction(s): "
             f"{result.seconds['optimal']:.2f}s")
    if result.optimal.plan.moves:  # no eviction: the end state is the input, whose violations are never failures
        with timed("verify: the optimal plan's end state judged"):
            verify_final(cluster, result.optimal.plan, profile)
    doc = document(result, (limit.seconds, limit.auto, limit.note()))
    if report_dir is not None:
        Path(report_dir).mkdir(parents=True, exist_ok=True)
        (Path(report_dir) / "index.html").write_text(render_html(doc), encoding="utf-8")
    if emit_kind == "state":
        from dataclasses import replace

        from .optimizer.rebalance.movable import as_pending

        plan = result.optimal.plan
        moved = [p for p in cluster.pods if plan.final.get(p.key, p.node_name) != p.node_name]
        unbound, _ = as_pending(replace(cluster, pending=()), moved)  # the replacements, placed where they land
        emit(dump(state_manifests(unbound, {p.key: plan.final[p.key] for p in moved}),
                  "json" if output == "json" else "yaml"))
    elif output == "table":
        emit(render_table(doc))
    else:
        emit(dump(doc, output))
    finish(interrupt)
    if result.optimal.unmet:
        sys.exit(EXIT_VIOLATIONS)


# ------------------------------------------------------------------------------------------- capacity answers


@main.command("capacity")
@files_argument
@click.option("--pod", "pod_files", metavar="FILE", multiple=True, required=True, type=click.Path(allow_dash=True),
              help="A Pod or a workload (Deployment, ReplicaSet, StatefulSet, Job) whose pod template is copied; "
                   "repeat for several templates (every Pod or workload of a file is one).")
@click.option("--each", is_flag=True, help="Several templates: each one's own maximum, instead of the largest k "
                                           "with k copies of every template together.")
@click.option("--ratio", metavar="A:B:...", default=None,
              help="Several templates: copies of each per unit of scale, in --pod order (default 1:1:...).")
@output_option
@click.option("--emit", "emit_kind", type=click.Choice(["plan", "state"]), default="plan", show_default=True,
              help="plan: the answer; state: the filled cluster (input, its pending pods placed, the copies) as "
                   "manifests that `podplan verify` reads.")
@click.option("--time-limit", type=SECONDS, default=30.0, show_default=True,
              help="Wall seconds for the whole command.")
@click.option("--workers", type=click.IntRange(min=1), default=2, show_default=True, help="CP-SAT search workers.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of CP-SAT and of the greedy tie-break.")
@scheduler_config_option
def capacity(files: Sequence[str], pod_files: Sequence[str], each: bool, ratio: str | None, output: str,
             emit_kind: str, time_limit: float, workers: int, seed: int, scheduler_config: str | None) -> None:
    """How many more copies of a pod (or of a set of pods) fit, proven; beside it kube-scheduler's greedy count.

    Exit 0: answered; 1: a template fits on no node even of the empty cluster; 2: bad input; 3: a bug."""
    from .optimizer.capacity import NeverFits, capacity as answer, load_templates, parse_ratio, verify_answer
    from .optimizer.capacity.render import capacity_document, capacity_table
    from .optimizer.pipeline import Deadline
    from .optimizer.render.plans import dump, state_manifests
    from .optimizer.runner import SolverParams

    check_emit(output, emit_kind)
    deadline = Deadline(command_started(), time_limit)
    profiles = load_profiles(scheduler_config)
    cluster = load_input(files)
    templates = load_templates(pod_files, cluster)
    if ratio is not None:
        if each or len(templates) < 2:
            refuse("--ratio needs several templates and no --each")
        templates = [replace(t, ratio=r) for t, r in zip(templates, parse_ratio(ratio, len(templates)))]
    batch, held = held_back(cluster, profiles)
    profile = profiles.for_batch(batch.pending + tuple(t.pod for t in templates))
    params = SolverParams(time_limit=time_limit, workers=workers, seed=seed, strategy=profiles.strategy(profile))
    with Interrupt().install() as interrupt:
        try:
            result = answer(batch, templates, params, deadline=deadline, profile=profile, each=each,
                            interrupt=interrupt)
        except NeverFits as exc:
            for name, why in exc.reasons.items():
                click.echo(f"error: template {name} fits on no node, even with the cluster empty: {why}", err=True)
            sys.exit(EXIT_VIOLATIONS)
    with timed("verify"):
        verify_answer(result, profile=profile)
    if emit_kind == "state":
        emit(dump(state_manifests(result.final, result.placements), "json" if output == "json" else "yaml"))
    elif output == "table":
        emit(capacity_table(result))
    else:
        emit(dump(capacity_document(result), output))
    finish(interrupt)


@main.command("provision")
@files_argument
@click.option("--node-types", "node_types_file", metavar="FILE", type=click.Path(allow_dash=True), default=None,
              help="A NodeTypes file (types with price, max, zones, limits and a node template); default: one type "
                   "per existing instance type at price 1.")
@click.option("--priority-at-least", type=int, default=None, metavar="N",
              help="Only pending pods of priority N or more must be placed; the others stay pending.")
@click.option("--zones", metavar="Z1,Z2,...", default=None,
              help="Offer every type in each of these zones (instead of the types' own zones).")
@output_option
@click.option("--emit", "emit_kind", type=click.Choice(["plan", "state", "nodes"]), default="plan", show_default=True,
              help="plan: the answer; state: the grown cluster with every pod placed, as manifests that `podplan "
                   "verify` reads; nodes: the new Node manifests.")
@click.option("--time-limit", type=SECONDS, default=60.0, show_default=True,
              help="Wall seconds for the whole command.")
@click.option("--workers", type=click.IntRange(min=1), default=2, show_default=True, help="CP-SAT search workers.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of CP-SAT and of the greedy tie-break.")
@scheduler_config_option
def provision(files: Sequence[str], node_types_file: str | None, priority_at_least: int | None, zones: str | None,
              output: str, emit_kind: str, time_limit: float, workers: int, seed: int,
              scheduler_config: str | None) -> None:
    """The cheapest new nodes with which every pending pod is placed, proven; beside it cluster-autoscaler's.

    Exit 0: answered; 1: a pending pod no node type can hold (or none within the limits); 2: bad input; 3: a bug."""
    from .models.nodetypes import default_node_types, load_node_types
    from .optimizer.pipeline import Deadline
    from .optimizer.runner import SolverParams
    from .optimizer.provision import Impossible, provision as answer, verify_answer
    from .optimizer.provision.render import provision_document, provision_table
    from .optimizer.render.plans import dump, state_manifests

    check_emit(output, emit_kind)
    deadline = Deadline(command_started(), time_limit)
    profiles = load_profiles(scheduler_config)
    cluster = load_input(files)
    types = load_node_types(node_types_file) if node_types_file else default_node_types(cluster)
    if not types.types:
        refuse("no node types: the input has no nodes to copy; give --node-types FILE")
    zone_list = [z for z in (zones or "").split(",") if z] or None
    batch, held = held_back(cluster, profiles)
    profile = profiles.for_batch(batch.pending)
    params = SolverParams(time_limit=time_limit, workers=workers, seed=seed, strategy=profiles.strategy(profile))
    with Interrupt().install() as interrupt:
        try:
            result = answer(batch, types, params, deadline=deadline, profile=profile,
                            priority_at_least=priority_at_least, zones=zone_list, interrupt=interrupt)
        except Impossible as exc:
            for pod, why in exc.reasons.items():
                click.echo(f"error: {pod} fits on no node type: {why}", err=True)
            sys.exit(EXIT_VIOLATIONS)
    with timed("verify"):
        verify_answer(result, profile=profile)
    fmt = "json" if output == "json" else "yaml"
    if emit_kind == "state":
        emit(dump(state_manifests(result.grown, result.placements), fmt))
    elif emit_kind == "nodes":
        emit(dump([dict(n.raw) for n in result.nodes if n.raw is not None], fmt))
    elif output == "table":
        emit(provision_table(result, types))
    else:
        emit(dump(provision_document(result, types), output))


@main.command("consolidate")
@files_argument
@click.option("--time-limit", type=SECONDS, default=30.0, show_default=True,
              help="Wall seconds for the whole command (load, search, waves, output); Ctrl-C prints the best "
                   "plan so far.")
@click.option("--workers", type=click.IntRange(min=1), default=2, show_default=True, help="CP-SAT search workers.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of CP-SAT and of the landing simulation.")
@click.option("--evict-local-storage", is_flag=True, help="Pods with emptyDir/hostPath volumes may move.")
@click.option("--evict-system-critical", is_flag=True, help="Pods with system-critical priority may move.")
@click.option("--node-types", "node_types_file", metavar="FILE", type=click.Path(dir_okay=False), default=None,
              help="NodeTypes file: each node saves its type's price (default: every node saves 1, the count).")
@click.option("--threshold", type=click.FloatRange(0.0, 1.0), default=0.5, show_default=True,
              help="cluster-autoscaler's --scale-down-utilization-threshold, for its answer beside podplan's.")
@click.option("-o", "--output", "output", type=OUTPUTS, default=None, callback=wide_as_table,
              help="Output format: table (default) or json|yaml for the plan; yaml (default) or json for --emit "
                   "state|evictions.")
@click.option("--emit", "emit_kind", type=click.Choice(["plan", "state", "evictions"]), default="plan",
              show_default=True,
              help="plan: the removal and its waves; state: the shrunk cluster as manifests (podplan verify reads "
                   "it); evictions: policy/v1 Evictions per wave.")
@scheduler_config_option
@click.pass_context
def consolidate(ctx: click.Context, files: Sequence[str], time_limit: float, workers: int, seed: int,
                evict_local_storage: bool, evict_system_critical: bool, node_types_file: str | None,
                threshold: float, output: str | None,
                emit_kind: str, scheduler_config: str | None) -> None:
    """The nodes whose removal saves the most, every movable pod re-placed in PodDisruptionBudget-safe waves,
    beside what cluster-autoscaler's scale-down would remove.

    Exit 0: a plan (possibly removing nothing); 2: bad input; 3: a bug."""
    from .optimizer.consolidate import ConsolidateParams, consolidate as run, shrunk
    from .optimizer.consolidate.prices import node_prices
    from .optimizer.pipeline import Deadline
    from .optimizer.rebalance.movable import MovePolicy
    from .optimizer.render.consolidate import consolidate_document, consolidate_table
    from .optimizer.render.plans import dump, state_manifests
    from .optimizer.render.rebalance import evictions_text

    if emit_kind != "plan" and output == "table":
        refuse(f"--emit {emit_kind} prints manifests: -o yaml or -o json, not -o table")
    deadline = Deadline(command_started(), time_limit)
    profiles = load_profiles(scheduler_config)
    cluster = load_input(files, batch=False)
    profile = profiles.for_batch(cluster.pods)
    node_types = None
    if node_types_file is not None:
        from .models.nodetypes import load_node_types

        node_types = load_node_types(node_types_file)
    prices, unit = node_prices(cluster, node_types)
    params = ConsolidateParams(time_limit=time_limit, workers=workers, seed=seed,
                               move_policy=MovePolicy(evict_local_storage, evict_system_critical, movable_scope()),
                               profile=profile, threshold=threshold,
                               log_progress=sys.stderr.isatty() or bool(ctx.obj.get("verbose")), interrupt=Interrupt())
    with params.interrupt.install() as interrupt:
        plan = run(cluster, params, prices, unit, deadline=deadline.at)
    if emit_kind == "state":
        state, placements = shrunk(cluster, plan)
        emit(dump(state_manifests(state, placements), output or "yaml"))
    elif emit_kind == "evictions":
        emit(evictions_text(plan, output or "yaml"))  # type: ignore[arg-type]
    elif output in (None, "table"):
        emit(consolidate_table(plan))
    else:
        emit(dump(consolidate_document(plan), output))
    finish(interrupt)


if __name__ == "__main__":
    main()
