"""podplan: batch placement optimizer for Kubernetes (also `kubectl podplan`).

Every command reads manifests (files, directories, `-` for stdin) through one path:
YAML -> Cluster -> (greedy | CP-SAT) -> Plan -> verify -> output.
Bad input: one line on stderr naming file, document, object and field, exit code 2.
"""
from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

import click

from .models.errors import PlanInvalidError, PodplanError
from .models.objects import Cluster
from .optimizer.cli_options import load_input, solver_options

OUTPUTS = click.Choice(["table", "json", "yaml"])
EMITS = click.Choice(["plan", "state", "bindings"])


class Group(click.Group):
    """Turns every PodplanError into one line and exit code 2 (3 for an invalid plan): never a traceback."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except PlanInvalidError as exc:
            click.echo(f"error: BUG: {exc}", err=True)
            sys.exit(3)
        except PodplanError as exc:
            click.echo(f"error: {exc}", err=True)
            sys.exit(2)


@click.group(cls=Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--verbose", is_flag=True, help="Print progress and details on stderr.")
@click.pass_context
def main(ctx: click.Context, verbose: bool) -> None:
    """podplan: batch placement optimizer for Kubernetes, with kube-scheduler's semantics."""
    ctx.obj = {"verbose": verbose}


def emit(text: str) -> None:
    click.echo(text.rstrip("\n"))


def files_argument(f: Callable[..., Any]) -> Callable[..., Any]:
    return click.argument("files", nargs=-1, type=click.Path(allow_dash=True))(f)


def output_option(f: Callable[..., Any]) -> Callable[..., Any]:
    return click.option("-o", "--output", "output", type=OUTPUTS, default="table", show_default=True,
                        help="Output format.")(f)


# ------------------------------------------------------------------------------------------------ validate


def summary(cluster: Cluster) -> dict[str, Any]:
    zones = Counter(n.labels.get("topology.kubernetes.io/zone", "<none>") for n in cluster.nodes)
    every = cluster.pods + cluster.pending
    rules: Counter[str] = Counter()
    for p in every:
        a = p.affinity
        rules["nodeSelector"] += bool(p.node_selector)
        rules["requiredNodeAffinity"] += a.node_required is not None
        rules["preferredNodeAffinity"] += bool(a.node_preferred)
        rules["requiredPodAffinity"] += bool(a.pod_required)
        rules["preferredPodAffinity"] += bool(a.pod_preferred)
        rules["requiredPodAntiAffinity"] += bool(a.anti_required)
        rules["preferredPodAntiAffinity"] += bool(a.anti_preferred)
        rules["tolerations"] += bool(p.tolerations)
        rules["hostPorts"] += bool(p.host_ports)
        rules["spreadDoNotSchedule"] += any(c.when_unsatisfiable == "DoNotSchedule" for c in p.spread_constraints)
        rules["spreadScheduleAnyway"] += any(c.when_unsatisfiable == "ScheduleAnyway" for c in p.spread_constraints)
    rules["taintedNodes"] = sum(1 for n in cluster.nodes if n.taints)
    rules["unschedulableNodes"] = sum(1 for n in cluster.nodes if n.unschedulable)
    rules["podDisruptionBudgets"] = len(cluster.pdbs)
    rules["podGroups"] = len(cluster.pod_groups)
    return {
        "nodes": len(cluster.nodes),
        "nodesByZone": dict(sorted(zones.items())),
        "existingPods": len(cluster.pods),
        "pendingPods": len(cluster.pending),
        "workloads": [{"workload": w.key, "replicas": w.replicas,
                       "pending": sum(1 for p in cluster.pending if p.workload == w.key)} for w in cluster.workloads],
        "rules": {k: v for k, v in rules.items() if v},
        "skipped": dict(cluster.skipped),
        "warnings": len(cluster.warnings),
    }


@main.command()
@files_argument
@output_option
def validate(files: Sequence[str], output: str) -> None:
    """Load manifests, check every object, and summarize what the input holds."""
    from .optimizer.output import dump, table

    s = summary(load_input(files))
    if output != "table":
        emit(dump(s, output))
        return
    lines = [table(("ZONE", "NODES"), list(s["nodesByZone"].items())), "",
             f"pods: {s['existingPods']} existing, {s['pendingPods']} pending"]
    if s["workloads"]:
        lines += ["", table(("WORKLOAD", "REPLICAS", "PENDING"),
                            [(w["workload"], w["replicas"], w["pending"]) for w in s["workloads"]])]
    if s["rules"]:
        lines += ["", table(("RULE", "PODS/OBJECTS"), list(s["rules"].items()))]
    if s["skipped"]:
        lines += ["", "skipped kinds: " + ", ".join(f"{k} ({v})" for k, v in sorted(s["skipped"].items()))]
    emit("\n".join(lines))


# ------------------------------------------------------------------------------------- plans (shared output)


def print_plan(cluster: Cluster, plan: Any, output: str, emit_kind: str, multipliers: Any = None) -> None:
    """Verify, then print. An invalid plan is a bug: it raises PlanInvalidError and is never printed."""
    from .optimizer.output import bindings, dump, plan_document, plan_table, state_manifests
    from .optimizer.verify import verify

    report = verify(cluster, plan.placements, multipliers)
    if not report.ok:
        bad = [v for v in report.violations if not v.preexisting]
        first = bad[0]
        raise PlanInvalidError(f"the {plan.status} plan failed verification: {len(bad)} violation(s), first: "
                               f"{first.pod} on {first.node}: {first.plugin}: {first.reason}")
    if emit_kind == "state":
        emit(dump(state_manifests(cluster, plan.placements), "json" if output == "json" else "yaml"))
    elif emit_kind == "bindings":
        docs, stuck = bindings(cluster, plan.placements)
        for pod in stuck:
            click.echo(f"warning: no binding order accepts {pod.key} before the others; bind it last", err=True)
        docs += [{"apiVersion": "v1", "kind": "Binding", "metadata": {"name": p.name, "namespace": p.namespace},
                  "target": {"apiVersion": "v1", "kind": "Node", "name": plan.placements[p.key]}} for p in stuck]
        emit(dump(docs, "json" if output == "json" else "yaml"))
    elif output == "table":
        emit(plan_table(cluster, plan, report))
    else:
        emit(dump(plan_document(cluster, plan, report), output))


@main.command()
@files_argument
@output_option
@click.option("--emit", "emit_kind", type=EMITS, default="plan", show_default=True,
              help="plan: placements and pending pods; state: the final state as manifests; bindings: v1 Bindings.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the tie-break among equal nodes.")
@click.option("--percentage-of-nodes-to-score", type=click.IntRange(0, 100), default=0, show_default=True,
              help="kube-scheduler's percentageOfNodesToScore (0: its adaptive default).")
def simulate(files: Sequence[str], output: str, emit_kind: str, seed: int, percentage_of_nodes_to_score: int) -> None:
    """Place pending pods one at a time, as kube-scheduler would."""
    from .optimizer.greedy import simulate as run

    cluster = load_input(files)
    plan = run(cluster, seed, percentage_of_nodes_to_score=percentage_of_nodes_to_score)
    print_plan(cluster, plan, output, emit_kind)


@main.command()
@files_argument
@output_option
@click.option("--emit", "emit_kind", type=EMITS, default="plan", show_default=True,
              help="plan: placements and pending pods; state: the final state as manifests; bindings: v1 Bindings.")
@solver_options(30.0, "Wall seconds for the whole solve, greedy warm start included.")
@click.pass_context
def solve(ctx: click.Context, files: Sequence[str], output: str, emit_kind: str, time_limit: float, workers: int,
          seed: int, gang: bool, strategy: str, policy_file: str | None) -> None:
    """Place all pending pods at once, optimally (CP-SAT), never worse than kube-scheduler's greedy."""
    from .optimizer.gangs import find_gangs
    from .optimizer.greedy import simulate as run_greedy
    from .optimizer.policy import load_policy
    from .optimizer.solve import SolverParams
    from .optimizer.solve import solve as run_solve

    policy = load_policy(policy_file)
    cluster = load_input(files)
    greedy = run_greedy(cluster, seed, gangs=find_gangs(cluster, gang))
    # The greedy warm start counts against --time-limit; CP-SAT keeps at least a tenth of it.
    left = max(0.1 * time_limit, time_limit - greedy.wall_seconds)
    params = SolverParams(time_limit=left, workers=workers, seed=seed, gang=gang, strategy=strategy,
                          log_progress=sys.stderr.isatty() or ctx.obj["verbose"])
    plan = run_solve(cluster, params, policy, greedy)
    print_plan(cluster, plan, output, emit_kind, policy)


@main.command()
@files_argument
@output_option
def verify(files: Sequence[str], output: str) -> None:
    """Judge a final state (pods with spec.nodeName) with every Filter; exit 1 on any violation."""
    from .optimizer.output import dump, table
    from .optimizer.verify import verify_state

    cluster = load_input(files)
    report = verify_state(cluster)
    counted = [v for v in report.violations if not v.preexisting]
    static = [v for v in report.violations if v.preexisting]
    doc = {"ok": report.ok, "pods": len(cluster.pods),
           "violations": [{"pod": v.pod, "node": v.node, "plugin": v.plugin, "reason": v.reason} for v in counted],
           "static_pod_violations": [{"pod": v.pod, "node": v.node, "plugin": v.plugin, "reason": v.reason}
                                     for v in static],
           "preference": report.preference, "terms": dict(report.terms)}
    if output != "table":
        emit(dump(doc, output))
    else:
        lines = []
        if counted:
            lines.append(table(("POD", "NODE", "PLUGIN", "REASON"),
                               [(v.pod, v.node, v.plugin, v.reason) for v in counted]))
            lines.append("")
        if static:
            lines.append("not counted (static pods: the kubelet runs them without kube-scheduler):")
            lines.append(table(("POD", "NODE", "PLUGIN", "REASON"), [(v.pod, v.node, v.plugin, v.reason) for v in static]))
            lines.append("")
        lines.append(f"{'OK' if report.ok else 'INVALID'}: {len(cluster.pods)} pods judged, {len(counted)} violation(s)"
                     + (f", {len(static)} of static pods not counted" if static else ""))
        lines.append(f"preference: {report.preference} (" + ", ".join(f"{k} {v}" for k, v in report.terms.items()) + ")")
        emit("\n".join(lines))
    if not report.ok:
        sys.exit(1)


@main.command()
@files_argument
@output_option
@click.option("--why-pending", is_flag=True,
              help="Solve first, then name the rules (object and field) that keep each pod the optimum leaves pending.")
@click.option("--time-limit", type=click.FloatRange(min=0.1), default=30.0, show_default=True,
              help="With --why-pending: wall seconds for the solve.")
@click.option("--gang", is_flag=True, help="With --why-pending: every workload all-or-nothing.")
def explain(files: Sequence[str], output: str, why_pending: bool, time_limit: float, gang: bool) -> None:
    """Every node's verdict for every pending pod: all failing plugins, and each plugin's score."""
    from .optimizer.explain import explain as run
    from .optimizer.output import dump, table

    cluster = load_input(files)
    if why_pending:
        explain_why_pending(cluster, output, time_limit, gang)
        return
    pods = run(cluster)
    if output != "table":
        emit(dump({"pods": [p.to_dict() for p in pods]}, output))
        return
    blocks = []
    for p in pods:
        rows = []
        for name, n in p.nodes.items():
            verdict = "feasible" if n.feasible else "; ".join(f"{r.plugin}: {r.reason}" for r in n.reasons)
            scores = " ".join(f"{k}={v}" for k, v in n.scores.items())
            rows.append((name, verdict, scores))
        blocks.append(f"{p.pod}: {p.message}\n" + table(("NODE", "VERDICT", "SCORES"), rows))
    emit("\n\n".join(blocks) if blocks else "no pending pods")


def explain_why_pending(cluster: Cluster, output: str, time_limit: float, gang: bool) -> None:
    from .optimizer.gangs import find_gangs
    from .optimizer.greedy import simulate as run_greedy
    from .optimizer.output import dump, table
    from .optimizer.solve import SolverParams, why_pending
    from .optimizer.solve import solve as run_solve
    from .optimizer.verify import verify as run_verify

    params = SolverParams(time_limit=time_limit, gang=gang)
    plan = run_solve(cluster, params, None, run_greedy(cluster, 0, gangs=find_gangs(cluster, gang)))
    if not run_verify(cluster, plan.placements).ok:
        raise PlanInvalidError(f"the {plan.status} plan failed verification")
    blockers = why_pending(cluster, plan, params)
    doc = {"status": plan.status,
           "pending": [{"pod": k, "reason": plan.pending[k],
                        "blockers": [{"plugin": b.plugin, "object": b.object, "field": b.field,
                                      "reason": b.reason, "nodes": list(b.nodes)} for b in blockers.get(k, [])]}
                       for k in plan.pending]}
    if output != "table":
        emit(dump(doc, output))
        return
    if not plan.pending:
        emit(f"status: {plan.status}: the optimum places every pending pod")
        return
    def nodes(names: list[str]) -> str:
        return ", ".join(names[:3]) + (f" (+{len(names) - 3})" if len(names) > 3 else "") if names else "-"

    rows = [(p["pod"], b["plugin"], b["object"], b["field"], b["reason"], nodes(b["nodes"]))
            for p in doc["pending"] for b in p["blockers"]]
    emit(f"status: {plan.status}\n" + table(("PENDING POD", "PLUGIN", "OBJECT", "FIELD", "REASON", "NODES"), rows))


from .optimizer.commands_compare import compare_command, generate_command  # noqa: E402

main.add_command(compare_command)
main.add_command(generate_command)


# ------------------------------------------------------------------------------------------------ rebalance

from .optimizer.rebalance.plan import EMITS as REBALANCE_EMITS, GOALS as REBALANCE_GOALS  # noqa: E402


@main.command("rebalance")
@files_argument
@click.option("--goal", type=click.Choice(REBALANCE_GOALS), default=None,
              help="fix: repair every rule violated now; spread: lowest max utilisation, then stddev; pack: empty "
                   "as many nodes as possible; prefs: highest preference score. Default: fix (drain with --drain).")
@click.option("--drain", multiple=True, metavar="NODE",
              help="What-if: the node must end empty of movable pods (repeatable, emptied in this order).")
@click.option("--max-moves", type=click.IntRange(min=0), default=None, help="At most this many evictions.")
@click.option("--time-limit", type=click.FloatRange(min=0.1), default=10.0, show_default=True,
              help="Wall seconds for the target computation.")
@click.option("--workers", type=click.IntRange(min=1), default=2, show_default=True, help="CP-SAT search workers.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of CP-SAT and of the landing simulation.")
@click.option("--evict-local-storage", is_flag=True, help="Pods with emptyDir/hostPath volumes may move.")
@click.option("--evict-system-critical", is_flag=True, help="Pods with system-critical priority may move.")
@click.option("--policy", "policy_file", type=click.Path(dir_okay=False), default=None,
              help="YAML policy file with the preference multipliers (goal prefs).")
@click.option("-o", "--output", "output", type=OUTPUTS, default=None,
              help="Output format: table (default) for the plan, yaml (default) or json for the evictions; the "
                   "script has none.")
@click.option("--emit", "emit_kind", type=click.Choice(REBALANCE_EMITS), default="plan",
              show_default=True,
              help="plan: the waves; evictions: policy/v1 Eviction objects per wave; script: a bash script.")
@click.pass_context
def rebalance(ctx: click.Context, files: Sequence[str], goal: str | None, drain: Sequence[str],
              max_moves: int | None, time_limit: float, workers: int, seed: int, evict_local_storage: bool,
              evict_system_critical: bool, policy_file: str | None, output: str | None, emit_kind: str) -> None:
    """Plan evictions that move running pods to a better state, in PodDisruptionBudget-safe waves.

    Exit 0: the plan is complete; 1: it is INCOMPLETE (blocked pods or moves); 2: bad input; 3: a bug."""
    from .optimizer.output import dump
    from .optimizer.policy import load_policy
    from .optimizer.rebalance import rebalance as run
    from .optimizer.rebalance.movable import MovePolicy
    from .optimizer.rebalance.plan import DRAIN, RebalanceError, RebalanceParams
    from .optimizer.rebalance.states import verify_final
    from .optimizer.render.rebalance import evictions_text, rebalance_document, rebalance_table, script_text

    if emit_kind == "script" and output is not None:
        raise RebalanceError(f"--emit script prints a bash script: -o {output} does not apply")
    if emit_kind == "evictions" and output == "table":
        raise RebalanceError("--emit evictions prints manifests: -o yaml or -o json, not -o table")
    policy = load_policy(policy_file)
    cluster = load_input(files)
    params = RebalanceParams(goal=goal or (DRAIN if drain else "fix"), drain=tuple(drain), max_moves=max_moves,
                             time_limit=time_limit, workers=workers, seed=seed,
                             move_policy=MovePolicy(evict_local_storage, evict_system_critical), policy=policy,
                             log_progress=sys.stderr.isatty() or ctx.obj["verbose"])
    plan = run(cluster, params)
    verify_final(cluster, plan)
    if emit_kind == "evictions":
        emit(evictions_text(plan, output or "yaml"))
    elif emit_kind == "script":
        emit(script_text(cluster, plan))
    elif output in (None, "table"):
        emit(rebalance_table(plan))
    else:
        emit(dump(rebalance_document(plan), output))
    if not plan.complete:
        sys.exit(1)


if __name__ == "__main__":
    main()
