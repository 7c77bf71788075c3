"""How `podplan solve` (CP-SAT) does against greedy on generated clusters, beside the goals of issue 4:
1,000 nodes / 10,000 pods proven optimal or gap <= 0.5 % in <= 60 s and <= 4 GiB; 5,000 nodes / 50,000 pods
gap <= 2 % in <= 300 s and <= 8 GiB (2 cores).

Each size runs in its own process (so peak RSS is that run's): models.generate builds the manifests
(profile mixed by default), models.loader parses them, the greedy simulator gives the baseline and warm
start, solve() runs with the size's time limit, the verifier checks both plans. One table row per size:

    nodes/pods, pending, classes/components, count variables, status, placed (solve vs greedy), preference
    (solve vs greedy), bound (placed; preference), gap, greedy s, solve wall s split into building the
    problem, building models and searching (incl. bounds), the time limit, peak RSS, verifier verdict.

    python benchmarks/bench_solve.py                      # 100, 1,000, 5,000 nodes, >= 10 pods per node
    python benchmarks/bench_solve.py --sizes 100:1000 --time-limit 20 --workers 2
    python benchmarks/bench_solve.py --profile adversarial --sizes 100:1000
"""
from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import resource
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

DEFAULT_SIZES = ((100, 1_000, 30.0), (1_000, 10_000, 60.0), (5_000, 50_000, 300.0))


def _timings(notes: list[str]) -> dict[str, float]:
    """solve()'s own split of its wall time, from its "time: ..." note."""
    out: dict[str, float] = {}
    for note in notes:
        if note.startswith("time: "):
            for part in note[len("time: "):].split(", "):
                words = part.split()
                if len(words) == 2 and words[1].endswith("s"):
                    out[words[0]] = float(words[1][:-1])
    return out


def run_one(nodes: int, pods: int, time_limit: float, workers: int, seed: int, profile: str,
            strategy: str, queue: Any) -> None:
    from podplan.models.generate import generate
    from podplan.models.loader import parse_documents
    from podplan.optimizer.gangs import find_gangs
    from podplan.optimizer.greedy import simulate
    from podplan.optimizer.runner import SolverParams
    from podplan.optimizer.solve import solve
    from podplan.optimizer.verify import verify

    t0 = time.perf_counter()
    cluster = parse_documents(generate(nodes, pods, seed, profile))
    t1 = time.perf_counter()
    greedy = simulate(cluster, seed, gangs=find_gangs(cluster, False))
    t2 = time.perf_counter()
    plan = solve(cluster, SolverParams(time_limit=time_limit, workers=workers, seed=seed, strategy=strategy),
                 None, greedy)
    t3 = time.perf_counter()
    g, s = verify(cluster, greedy.placements), verify(cluster, plan.placements)
    classes = next((n for n in plan.notes if "pod classes" in n), "")
    split = _timings(list(plan.notes))
    queue.put({
        "nodes": nodes, "pods": len(cluster.pods) + len(cluster.pending), "pending": len(cluster.pending),
        "classes": classes.split(" pod classes")[0], "components": classes.split(", ")[1].split()[0] if classes else "",
        "variables": classes.split(", ")[2].split()[0] if classes else "",
        "status": plan.status, "placed": s.placed, "greedy_placed": g.placed, "preference": s.preference,
        "greedy_preference": g.preference, "gap": plan.gap, "bound": plan.bound, "verified": s.ok,
        "greedy_verified": g.ok, "parse_s": t1 - t0, "greedy_s": t2 - t1, "solve_s": t3 - t2,
        "problem_s": split.get("problem", 0.0), "build_s": split.get("build", 0.0),
        "search_s": split.get("search", 0.0) + split.get("bound", 0.0),
        "time_limit": time_limit, "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "notes": list(plan.notes),
    })


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", nargs="*", help="NODES:PODS[:TIME_LIMIT] ...")
    ap.add_argument("--time-limit", type=float, help="override every size's time limit")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--profile", default="mixed")
    ap.add_argument("--strategy", default="spread")
    ap.add_argument("--json", help="also write the rows to this file")
    args = ap.parse_args()
    sizes = []
    for spec in args.sizes or []:
        parts = spec.split(":")
        sizes.append((int(parts[0]), int(parts[1]), float(parts[2]) if len(parts) > 2 else 60.0))
    sizes = sizes or list(DEFAULT_SIZES)
    print("| nodes/pods | pending | classes/parts | variables | status | placed solve vs greedy | "
          "preference solve vs greedy | bound (placed; P) | gap | greedy s | solve s (problem+build+search) | "
          "limit s | peak RSS MiB | verified |")
    print("|" + " --- |" * 14)
    rows = []
    ctx = mp.get_context("fork")
    for nodes, pods, limit in sizes:
        limit = args.time_limit or limit
        q = ctx.Queue()
        p = ctx.Process(target=run_one, args=(nodes, pods, limit, args.workers, args.seed, args.profile,
                                                args.strategy, q))
        p.start()
        row = q.get()
        p.join()
        rows.append(row)
        gap = "-" if row["gap"] is None else f"{row['gap']:.3%}"
        b = row["bound"]
        print(f"| {row['nodes']:,}/{row['pods']:,} | {row['pending']:,} | {row['classes']}/{row['components']} | "
              f"{int(row['variables'] or 0):,} | {row['status']} | {row['placed']:,} vs {row['greedy_placed']:,} | "
              f"{row['preference']:,} vs {row['greedy_preference']:,} | {b.get('placed')}; {b.get('preference')} | "
              f"{gap} | {row['greedy_s']:.1f} | {row['solve_s']:.1f} ({row['problem_s']:.1f}+{row['build_s']:.1f}+"
              f"{row['search_s']:.1f}) | {row['time_limit']:.0f} | {row['peak_rss_mib']:,.0f} | "
              f"{'yes' if row['verified'] else 'NO'} |", flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2, default=str))


if __name__ == "__main__":
    main()
