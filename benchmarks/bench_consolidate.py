"""`podplan consolidate` on running generated clusters at 40-60 % utilisation (issue goal: a plan in <= 60 s
with bound and gap at 1,000 nodes), one row per utilisation (a family of shapes, not one instance).

Each cluster: `podplan generate --profile production --nodes N --pods P --utilization U` (every workload
replica pending), then `podplan simulate --emit state` (kube-scheduler's placement of all of it, every pod bound):
made once and kept in benchmarks/results/inputs/. The cluster is read once (the read is timed apart: YAML of
15,000 pods takes tens of seconds and is the same for every command); the plan is `consolidate()` with
`--time-limit` L, timed in-process: the search, the waves and the verifier on the shrunk cluster. `removed`:
the nodes the waves empty within the limit; `target`: the removal the search found. Beside it,
cluster-autoscaler's scale-down on the same state ("cut short" when the limit stopped its simulation). The load average is printed with each row: the machine
may be shared.

    nice -n 10 python benchmarks/bench_consolidate.py                       # 1,000 nodes, U = 0.4 0.5 0.6
    python benchmarks/bench_consolidate.py --nodes 20 --pods 200 --time-limit 5 --utilizations 0.5   # toy
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT.parent))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_solve import INPUTS, markdown_row, podplan  # noqa: E402

GOAL_S = 60.0
COLUMNS = ("nodes", "utilisation", "running pods", "read s", "limit s", "plan s", "status", "removed", "bound",
           "gap", "target", "moves", "waves", "not made", "scale-down removes", "load avg (1 min)", "goal", "met")


def running_state(nodes: int, pods: int, utilization: float, seed: int, inputs: Path) -> Path:
    inputs.mkdir(parents=True, exist_ok=True)
    stem = f"production-{nodes}-{pods}-u{utilization:g}-seed{seed}"
    state = inputs / f"{stem}.state.yaml"
    if state.exists():
        return state
    generated = inputs / f"{stem}.yaml"
    if not generated.exists():
        with generated.with_suffix(".tmp").open("w") as out:
            subprocess.run([podplan(), "generate", "--nodes", str(nodes), "--pods", str(pods), "--seed", str(seed),
                            "--profile", "production", "--utilization", str(utilization)], stdout=out, check=True)
        generated.with_suffix(".tmp").rename(generated)
    with state.with_suffix(".tmp").open("w") as out:
        subprocess.run([podplan(), "simulate", str(generated), "--emit", "state", "--seed", str(seed)], stdout=out,
                       check=True)
    state.with_suffix(".tmp").rename(state)
    return state


def row(nodes: int, pods: int, utilization: float, seed: int, limit: float, inputs: Path, toy: bool) -> list[str]:
    from podplan.models.loader import cluster_of, read_paths
    from podplan.optimizer.consolidate import ConsolidateParams, consolidate
    from podplan.optimizer.consolidate.prices import node_prices

    state = running_state(nodes, pods, utilization, seed, inputs)
    started = time.perf_counter()
    cluster = cluster_of(read_paths([str(state)]), [str(state)])
    read_s = time.perf_counter() - started
    prices, unit = node_prices(cluster)
    started = time.perf_counter()
    plan = consolidate(cluster, ConsolidateParams(time_limit=limit, seed=seed), prices, unit)
    plan_s = time.perf_counter() - started
    met = "- (toy size)" if toy else ("yes" if plan_s <= GOAL_S and plan.bound >= plan.saving else "NO")
    return [f"{len(cluster.nodes):,}", f"{utilization:.0%}", f"{len(cluster.pods):,}", f"{read_s:.1f}", f"{limit:g}",
            f"{plan_s:.1f}", plan.status, f"{len(plan.remove)}", f"{plan.bound:g}", f"{100 * plan.gap:.1f}%",
            str(len(plan.target)), str(plan.moves), str(len(plan.waves)), str(len(plan.blocked)),
            f"{len(plan.scale_down.remove)}{'' if plan.scale_down.complete else ' (cut short)'}",
            f"{os.getloadavg()[0]:.1f}", f"plan <= {GOAL_S:g} s with bound and gap", met]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nodes", type=int, default=1000)
    ap.add_argument("--pods", type=int, default=10000)
    ap.add_argument("--utilizations", type=float, nargs="+", default=[0.4, 0.5, 0.6])
    ap.add_argument("--time-limit", type=float, default=55.0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--inputs", type=Path, default=INPUTS)
    args = ap.parse_args()
    toy = args.nodes < 1000
    print(f"# podplan consolidate, {os.cpu_count()} cores (shared machine: see the load average per row)")
    print(markdown_row(list(COLUMNS)))
    print(markdown_row(["---"] * len(COLUMNS)))
    for u in args.utilizations:
        print(markdown_row(row(args.nodes, args.pods, u, args.seed, args.time_limit, args.inputs, toy)), flush=True)


if __name__ == "__main__":
    main()
