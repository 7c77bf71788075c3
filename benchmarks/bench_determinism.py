"""Same input, same seed, same plan: one shape of the benchmark family solved several times, with 2 and 1 CP-SAT
workers, and the `solve -o json` documents compared byte for byte (the fields that report time masked:
solver.wall_seconds, the seconds in the notes, and solver.workers, which echoes the option).

The search's deterministic budget comes from `--budget` (what `--time-limit` sets on the command line) and the
wall clock only caps it at `--wall`: give the wall clock room to see determinism on a loaded machine, or set both
equal to see what `podplan solve --time-limit` does there (a run the wall clock cuts says so in its notes, and may
differ).

    python benchmarks/bench_determinism.py --shape anti-host-30 --nodes 300 --seed 7 --budget 30 --wall 400
    python benchmarks/bench_determinism.py --nodes 20 --budget 4 --wall 60            # toy size
"""
from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from podplan.models.loader import parse_documents  # noqa: E402
from podplan.models.shapes import SHAPES, shape_instance  # noqa: E402
from podplan.optimizer.pipeline import Deadline, check, optimal_plan  # noqa: E402
from podplan.optimizer.render.plans import plan_document  # noqa: E402
from podplan.optimizer.runner import SolverParams  # noqa: E402

CUT = "cut the deterministic search short"


def masked(doc: dict) -> str:
    doc["solver"].pop("wall_seconds", None)
    doc["solver"].pop("workers", None)
    doc["notes"] = [re.sub(r"\d+(\.\d+)?s\b", "_s", n) for n in doc["notes"]]
    return json.dumps(doc, sort_keys=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shape", choices=sorted(SHAPES), default="anti-host-30")
    ap.add_argument("--nodes", type=int, default=300)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--budget", type=float, default=30.0, help="the --time-limit the search's budget comes from")
    ap.add_argument("--wall", type=float, default=400.0, help="the wall-clock cap")
    ap.add_argument("--workers", type=int, nargs="+", default=[2, 2, 1])
    args = ap.parse_args()
    cluster = parse_documents(shape_instance(args.shape, args.nodes, args.seed).manifests, args.shape)
    print(f"{os.cpu_count()} cores; shape {args.shape}, {args.nodes} nodes, {len(cluster.pending)} pending, seed "
          f"{args.seed}, budget {args.budget:g} s, wall cap {args.wall:g} s\n")
    print("| run | workers | load | status | placed | preference | bound | wall s | wall clock cut | same JSON as run 1 |"
          " phases (wall s) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    first = None
    for i, w in enumerate(args.workers, 1):
        load = os.getloadavg()[0]
        params = SolverParams(time_limit=args.wall, workers=w, seed=args.seed, budget=args.budget)
        t0 = time.perf_counter()
        plan, greedy = optimal_plan(cluster, params, deadline=Deadline.start(args.wall))
        doc = plan_document(cluster, plan, check(cluster, plan))
        wall = time.perf_counter() - t0
        text = masked(doc)
        first = first or text
        cut = next((n for n in plan.notes if CUT in n), "")
        cut = cut[cut.index("(") + 1:cut.index("):")] if "):" in cut else ("yes" if cut else "no")
        phases = next((n[len("time: "):] for n in plan.notes if n.startswith("time: ")), "")
        print(f"| {i} | {w} | {load:.1f} | {plan.status} | {len(plan.placements)} | "
              f"{doc['objective']['preference']} | {doc['bound'].get('preference')} | {wall:.0f} | "
              f"{cut} | {'yes' if text == first else 'NO'} | greedy {greedy.wall_seconds:.1f}, {phases} |",
              flush=True)


if __name__ == "__main__":
    main()
