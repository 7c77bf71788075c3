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
    nice -n 10 python benchmarks/bench_consolidate.py --family [--only 1000]   # the family, whole commands

--family: the command as a user runs it (`/usr/bin/time -v podplan consolidate INPUT.json --time-limit L -o json`,
a subprocess: wall seconds and peak RSS are the whole process's, reading included) on a family of running
clusters (the same generate + simulate --emit state as above, 10 pods per node, saved once as a JSON v1 List:
it reads several times faster than YAML), at 40, 50 and 60 % utilisation (the cpu requested over allocatable
is printed as measured), 300 and 1,000 nodes, seeds 1 (tuned on) and 7 (held out), and 5,000 nodes at 50 %
(seed 7, held out; making it takes about two minutes).
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


# (nodes, utilisation, seed, tuned on?)
FAMILY = [(300, u, seed, seed == 1) for u in (0.4, 0.5, 0.6) for seed in (1, 7)] + \
         [(1000, 0.5, 1, True), (1000, 0.5, 7, False), (1000, 0.4, 7, False), (1000, 0.6, 7, False)] + \
         [(5000, 0.5, 7, False)]


def running_input(nodes: int, utilization: float, seed: int, inputs: Path) -> tuple[Path, float]:
    """running_state's cluster as a JSON v1 List (read several times faster than its YAML: the command's time
    limit includes reading) and its cpu utilisation (requested / allocatable)."""
    import json

    from podplan.models.loader import cluster_of, read_paths

    path = inputs / f"running-production-{nodes}-{10 * nodes}-u{utilization:g}-seed{seed}.json"
    if not path.exists():
        import yaml

        state = running_state(nodes, 10 * nodes, utilization, seed, inputs)
        with state.open() as f:
            docs = [d for d in yaml.load_all(f, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)) if d]
        items = [i for d in docs for i in (d.get("items", []) if d.get("kind") == "List" else [d])]
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
        tmp.rename(path)
    cluster = cluster_of(read_paths([str(path)]), [str(path)])
    alloc = sum(n.allocatable.get("cpu", 0) for n in cluster.nodes)
    used = sum(p.requests.get("cpu", 0) for p in cluster.pods)
    return path, used / max(1, alloc)


def family(limit: float, inputs: Path, only: str | None) -> None:
    import json
    import re
    import shutil

    head = ("seed/shape", "nodes", "cpu used", "scale-down removes", "podplan removes", "target", "bound", "gap",
            "target gap", "status", "wall s", "limit s", "peak MiB", "load 1 min", "set")
    print(markdown_row(list(head)))
    print(markdown_row(["---"] * len(head)))
    for nodes, u, seed, tuned in FAMILY:
        if only and only != str(nodes):
            continue
        path, used = running_input(nodes, u, seed, inputs)
        cmd = ["/usr/bin/time", "-v", shutil.which("podplan") or "podplan", "consolidate", str(path), "--time-limit",
               f"{limit:g}", "--seed", str(seed), "-o", "json"]
        started = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True)
        wall = time.perf_counter() - started
        m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", proc.stderr)
        rss = int(m.group(1)) / 1024 if m else float("nan")
        name = f"{seed}/production-u{u:g}"
        try:
            doc = json.loads(proc.stdout)
        except json.JSONDecodeError:
            print(markdown_row([name, f"{nodes:,}", f"{used:.0%}", "FAILED", proc.stderr.strip()[-200:]]), flush=True)
            continue
        bound = doc["bound"]
        target_gap = 0.0 if bound <= 0 else max(0.0, (bound - doc["target"]["saving"]) / bound)
        sd = doc["scale_down"]
        print(markdown_row([name, f"{nodes:,}", f"{used:.0%}",
                            f"{len(sd['remove'])}{'' if sd['complete'] else ' (cut short)'}", str(len(doc["remove"])),
                            str(len(doc["target"]["remove"])), f"{bound:g}", f"{100 * doc['gap']:.1f}%",
                            f"{100 * target_gap:.1f}%", doc["status"], f"{wall:.1f}", f"{limit:g}", f"{rss:.0f}",
                            f"{os.getloadavg()[0]:.1f}", "tuned" if tuned else "held out"]), flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nodes", type=int, default=1000)
    ap.add_argument("--pods", type=int, default=10000)
    ap.add_argument("--utilizations", type=float, nargs="+", default=[0.4, 0.5, 0.6])
    ap.add_argument("--time-limit", type=float, default=55.0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--inputs", type=Path, default=INPUTS)
    ap.add_argument("--family", action="store_true", help="The family of running clusters, whole commands.")
    ap.add_argument("--only", default=None, help="--family: one size (300, 1000 or 5000).")
    args = ap.parse_args()
    if args.family:
        print(f"# podplan consolidate family, {os.cpu_count()} cores (shared machine: load average per row)")
        family(args.time_limit if args.time_limit != 55.0 else 30.0, args.inputs, args.only)
        return
    toy = args.nodes < 1000
    print(f"# podplan consolidate, {os.cpu_count()} cores (shared machine: see the load average per row)")
    print(markdown_row(list(COLUMNS)))
    print(markdown_row(["---"] * len(COLUMNS)))
    for u in args.utilizations:
        print(markdown_row(row(args.nodes, args.pods, u, args.seed, args.time_limit, args.inputs, toy)), flush=True)


if __name__ == "__main__":
    main()
