"""`podplan solve` over the shape-diverse benchmark family (models/shapes.py), not one instance.

For each shape and size: the input is written once (benchmarks/results/inputs/, `podplan generate --shape NAME
--nodes N --seed S`), kube-scheduler's greedy plan is counted in-process (optimizer.pipeline.greedy_plan: every
pending pod in queue order, no preemption), then `/usr/bin/time -v podplan solve INPUT --time-limit L --seed S
-o json` runs as a user would run it. One row per (shape, size): status, pods placed by solve and by greedy,
the plan's reported gap, wall and peak RSS, time to proof (the wall time of a run that ends OPTIMAL); then one row
per size and set (tune, held out): median, p90 and max gap, how many placed every pod, how many were proven.

The family: models.shapes.TUNE (what the search may be tuned on) and HELD_OUT (reported apart);
BENCH_5000 are the shapes also run at 5,000 nodes.

    python benchmarks/bench_shapes.py --nodes 1000 --time-limit 60                  # 24 shapes at 1,000 nodes
    python benchmarks/bench_shapes.py --nodes 5000 --time-limit 300 --set bench5000 # 5 shapes at 5,000 nodes
    python benchmarks/bench_shapes.py --nodes 1000 --shapes anti-host-30 eks-default --time-limit 60
    python benchmarks/bench_shapes.py --nodes 12 --shapes eks-default --time-limit 4 # toy size (smoke test)
    python benchmarks/bench_shapes.py --nodes 1000 --time-limit 60 --wall 600        # the plans of a quiet machine

With `--wall W`, each shape is solved in this process instead (optimizer.pipeline.optimal_plan, every plan through
the verify gate), its decisions and deterministic budget planned from --time-limit as `solve --time-limit L`
plans them, under a wall-clock cap of W seconds: the plan a machine where the wall clock never cuts prints, the
same on a loaded one (peak RSS is then not per row). The wall time is the pipeline's, without reading.

The machine's core count and load average are printed above the table: the project's machines are shared.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_solve import podplan, timed  # noqa: E402

from podplan.models.generate import dump_yaml  # noqa: E402
from podplan.models.loader import load_paths  # noqa: E402
from podplan.models.objects import Cluster  # noqa: E402
from podplan.models.shapes import BENCH_5000, HELD_OUT, SHAPES, TUNE, shape_instance  # noqa: E402
from podplan.optimizer.pipeline import greedy_plan  # noqa: E402

INPUTS = ROOT / "benchmarks" / "results" / "inputs"
SETS = {"tune": TUNE, "held-out": HELD_OUT, "all": tuple(SHAPES), "bench5000": BENCH_5000}


def write_input(name: str, nodes: int, seed: int, inputs: Path) -> Path:
    inputs.mkdir(parents=True, exist_ok=True)
    path = inputs / f"shape-{name}-{nodes}-seed{seed}.yaml"
    if not path.exists():
        tmp = path.with_suffix(".tmp")
        with tmp.open("w") as out:
            dump_yaml(shape_instance(name, nodes, seed).manifests, out)
        tmp.rename(path)
    return path


def quantile(values: list[float], q: float) -> float:
    """The q-quantile by the nearest-rank method (p90 of 10 values: the 9th smallest)."""
    ordered = sorted(values)
    return ordered[max(0, min(len(ordered) - 1, -(-int(q * 100) * len(ordered) // 100) - 1))]


def shape_row(name: str, nodes: int, seed: int, time_limit: float,
              inputs: Path) -> tuple[Path, Cluster, dict[str, Any]]:
    """The input of a shape (written once), read, and its row's first cells: what it is, and greedy's count
    in-process."""
    path = write_input(name, nodes, seed, inputs)
    cluster = load_paths([str(path)])
    greedy = greedy_plan(cluster, seed)
    return path, cluster, {"shape": name, "set": "tune" if name in TUNE else "held-out", "nodes": nodes,
                  "pending": len(cluster.pending), "greedy": len(greedy.placements), "limit": time_limit}


def run_shape(name: str, nodes: int, seed: int, time_limit: float, workers: int, inputs: Path) -> dict[str, Any]:
    path, _, row = shape_row(name, nodes, seed, time_limit, inputs)
    out = inputs / f"shape-{name}-{nodes}-seed{seed}.plan.json"
    wall, rss, code, err = timed([podplan(), "solve", str(path), "--time-limit", str(time_limit), "--seed", str(seed),
                                  "--workers", str(workers), "-o", "json"], out, kill_after=3 * time_limit + 120)
    row.update(wall=wall, rss=rss, exit=code)
    try:
        doc = json.loads(out.read_text())
    except (OSError, json.JSONDecodeError):
        row.update(status=f"exit {code}", placed=None, gap=None, error=err.strip().splitlines()[-1:] or [""])
        return row
    row.update(status=doc["status"], placed=doc["objective"]["placed"], gap=doc.get("gap"),
               preference=doc["objective"].get("preference"), bound=(doc.get("bound") or {}).get("preference"),
               cut=any("cut the deterministic search short" in n for n in doc.get("notes", [])))
    return row


def run_planned(name: str, nodes: int, seed: int, time_limit: float, workers: int, inputs: Path,
                wall_cap: float) -> dict[str, Any]:
    """run_shape's row, solved in this process: planned from `time_limit`, capped by `wall_cap`."""
    import time

    from podplan.optimizer.pipeline import Deadline, check, optimal_plan
    from podplan.optimizer.runner import SolverParams

    _, cluster, row = shape_row(name, nodes, seed, time_limit, inputs)
    t0 = time.perf_counter()
    params = SolverParams(time_limit=wall_cap, workers=workers, seed=seed, budget=time_limit)
    plan, _ = optimal_plan(cluster, params, deadline=Deadline.start(wall_cap))
    check(cluster, plan)
    row.update(wall=time.perf_counter() - t0, rss=None, exit=0, status=str(plan.status), placed=len(plan.placements),
               gap=plan.gap, preference=plan.gaps.get("preference", {}).get("value"),
               bound=plan.gaps.get("preference", {}).get("bound"),
               cut=any("cut the deterministic search short" in n for n in plan.notes))
    return row


def pct(v: float | None) -> str:
    return "-" if v is None else f"{100 * v:.2f} %"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nodes", type=int, nargs="+", default=[1000])
    ap.add_argument("--set", choices=sorted(SETS), default="all")
    ap.add_argument("--shapes", nargs="+", default=None, help="these shapes instead of a set")
    ap.add_argument("--time-limit", type=float, default=60.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--inputs", type=Path, default=INPUTS)
    ap.add_argument("--json", type=Path, default=None, help="also write the rows here")
    ap.add_argument("--wall", type=float, default=None,
                    help="solve in this process, planned from --time-limit, under this wall-clock cap")
    args = ap.parse_args()
    names = args.shapes or list(SETS[args.set])
    unknown = [n for n in names if n not in SHAPES]
    if unknown:
        sys.exit(f"unknown shape(s): {', '.join(unknown)}; known: {', '.join(SHAPES)}")
    load = os.getloadavg()
    print(f"{os.cpu_count()} cores, load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} at the start; "
          f"solve --time-limit {args.time_limit:g} --workers {args.workers} --seed {args.seed}\n")
    rows = []
    print("| shape | set | nodes | pending | status | placed | greedy | gap | time to proof s | wall s | "
          "peak RSS MiB | note |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for nodes in args.nodes:
        for name in names:
            r = (run_planned(name, nodes, args.seed, args.time_limit, args.workers, args.inputs, args.wall)
                 if args.wall else run_shape(name, nodes, args.seed, args.time_limit, args.workers, args.inputs))
            rows.append(r)
            note = "wall clock cut the budget" if r.get("cut") else (r.get("error") or [""])[0]
            proof = f"{r['wall']:.1f}" if r["status"] == "OPTIMAL" else "-"
            rss = "-" if r["rss"] is None else f"{r['rss']:.0f}"
            print(f"| {name} | {r['set']} | {nodes} | {r['pending']} | {r['status']} | "
                  f"{'-' if r['placed'] is None else r['placed']} | {r['greedy']} | {pct(r['gap'])} | {proof} | "
                  f"{r['wall']:.1f} | {rss} | {note} |", flush=True)
    print("\n| nodes | set | shapes | all placed | proven | median gap | p90 gap | max gap | max peak RSS MiB |")
    print("|---|---|---|---|---|---|---|---|---|")
    for nodes in args.nodes:
        for label in ("tune", "held-out", "all"):
            rs = [r for r in rows if r["nodes"] == nodes and (label == "all" or r["set"] == label)]
            gaps = [r["gap"] for r in rs if r["gap"] is not None]
            if not rs:
                continue
            peaks = [r["rss"] for r in rs if r["rss"] is not None]
            peak = f"{max(peaks):.0f}" if peaks else "-"
            print(f"| {nodes} | {label} | {len(rs)} | {sum(1 for r in rs if r['placed'] == r['pending'])} | "
                  f"{sum(1 for r in rs if r['status'] == 'OPTIMAL')} | "
                  f"{pct(statistics.median(gaps)) if gaps else '-'} | {pct(quantile(gaps, 0.9)) if gaps else '-'} | "
                  f"{pct(max(gaps)) if gaps else '-'} | {peak} |")
    load = os.getloadavg()
    print(f"\nload average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} at the end")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
