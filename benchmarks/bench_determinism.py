"""Same input, same seed, same plan: one shape of the benchmark family solved several times with `podplan solve
-o json` (the command itself, a fresh process per run), with 2 and 1 CP-SAT workers, and the documents compared
byte for byte. Optionally beside CPU-bound processes (`--busy N`), to see it on a loaded machine.

Masked before comparing, because they report time or echo an option, never a decision:
- solver.wall_seconds (how long the search took on this machine);
- solver.workers (echoes --workers, which the runs vary on purpose);
- every number of seconds inside the notes ("time: problem 0.7s, ...", "time limit: auto, 17s (3s start-up and
  reading + 14s ...)"): the regex `\\d+(\\.\\d+)?s\\b` -> `_s`.
Everything else (placements, pending pods and their reasons, objective, bound, gaps, status, every other note)
must be equal. A run the wall clock cut says so in its notes ("the wall-clock time limit cut the deterministic
search short (...)"): the table shows what was cut; such a run may differ.

    python benchmarks/bench_determinism.py --time-limit 60                     # 300 nodes, cache-zone-anti, seed 7
    python benchmarks/bench_determinism.py --time-limit 60 --busy 1            # beside one CPU-bound process
    python benchmarks/bench_determinism.py --time-limit auto --busy 1          # the default limit
    python benchmarks/bench_determinism.py --nodes 20 --time-limit 10          # toy size
    python benchmarks/bench_determinism.py --budget 30 --wall 400              # in one process: the limit the
                                                                               # decisions are planned from,
                                                                               # under a separate wall cap
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT.parent))  # run from a checkout: `podplan` is this folder (pyproject's package-dir)

from podplan.models.generate import dump_yaml  # noqa: E402
from podplan.models.shapes import SHAPES, shape_instance  # noqa: E402

CUT = "the wall-clock time limit cut the deterministic search short"
BUSY = "while True: pass"


def masked(doc: dict) -> str:
    doc["solver"].pop("wall_seconds", None)
    doc["solver"].pop("workers", None)
    doc["notes"] = [re.sub(r"\d+(\.\d+)?s\b", "_s", n) for n in doc["notes"]]
    return json.dumps(doc, sort_keys=True)


def load() -> str:
    return "%.1f %.1f %.1f" % os.getloadavg()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shape", choices=sorted(SHAPES), default="cache-zone-anti")  # ends FEASIBLE at 300 nodes
    ap.add_argument("--nodes", type=int, default=300)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--time-limit", default="60", help="podplan solve --time-limit (a number or auto)")
    ap.add_argument("--workers", type=int, nargs="+", default=[2, 2, 1])
    ap.add_argument("--busy", type=int, default=0, help="CPU-bound processes to run beside the solves")
    ap.add_argument("--budget", type=float, default=None,
                    help="in one process instead of the command: the limit the decisions are planned from")
    ap.add_argument("--wall", type=float, default=400.0, help="with --budget: the wall-clock cap")
    args = ap.parse_args()
    if args.budget is not None:
        busy = [subprocess.Popen([sys.executable, "-c", BUSY]) for _ in range(args.busy)]
        try:
            in_process(args)
        finally:
            for p in busy:
                p.kill()
                p.wait()
        print(f"\nload after: {load()}")
        return
    exe = Path(sys.executable).parent / "podplan"
    busy: list[subprocess.Popen[bytes]] = []
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"{args.shape}-{args.nodes}.yaml"
        with path.open("w", encoding="utf-8") as f:
            dump_yaml(shape_instance(args.shape, args.nodes, args.seed).manifests, f)
        print(f"{os.cpu_count()} cores, shared; shape {args.shape}, {args.nodes} nodes, seed {args.seed}; "
              f"podplan solve --time-limit {args.time_limit}; {args.busy} CPU-bound process(es) beside\n")
        print("| run | workers | load before | status | placed | preference | bound | wall s | wall-clock cut | "
              "same JSON as the first run not cut | time limit | greedy and search notes |")
        print("|---|---|---|---|---|---|---|---|---|---|---|---|")
        try:
            busy = [subprocess.Popen([sys.executable, "-c", BUSY]) for _ in range(args.busy)]
            first = None
            for i, w in enumerate(args.workers, 1):
                before = load()
                t0 = time.perf_counter()
                out = subprocess.run([str(exe), "solve", str(path), "--seed", str(args.seed), "--workers", str(w),
                                      "--time-limit", args.time_limit, "-o", "json"],
                                     capture_output=True, text=True, check=False)
                wall = time.perf_counter() - t0
                if out.returncode != 0:
                    print(f"| {i} | {w} | {before} | exit {out.returncode}: {out.stderr.strip()[-200:]} |")
                    continue
                doc = json.loads(out.stdout)
                notes = doc["notes"]
                text = masked(json.loads(out.stdout))
                cut = next((n for n in notes if n.startswith(CUT)), "")
                cut = cut[len(CUT) + 2:cut.index("):")] if cut else "no"
                # a run the wall clock cut may differ (its notes say so): the runs are compared with the first one
                # it did not cut
                if cut == "no":
                    first = first or text
                same = "yes" if text == first else ("cut, may differ" if cut != "no" else "NO")
                said = "; ".join(n for n in notes if n.startswith(("time: ", "greedy's plan kept", "warm start:")))
                print(f"| {i} | {w} | {before} | {doc['status']} | {doc['objective']['placed']} | "
                      f"{doc['objective']['preference']} | {doc['bound'].get('preference')} | {wall:.0f} | {cut} | "
                      f"{same} | {notes[0]} | {said} |", flush=True)
        finally:
            for p in busy:
                p.kill()
                p.wait()
    print(f"\nload after: {load()}")


def in_process(args: argparse.Namespace) -> None:
    """optimal_plan in this process, planned from --budget seconds under a --wall cap (the wall clock's room
    separated from the decisions): how determinism looks when the wall clock never cuts."""
    from podplan.models.loader import parse_documents
    from podplan.optimizer.pipeline import Deadline, check, optimal_plan
    from podplan.optimizer.render.plans import plan_document
    from podplan.optimizer.runner import SolverParams

    cluster = parse_documents(shape_instance(args.shape, args.nodes, args.seed).manifests, args.shape)
    print(f"{os.cpu_count()} cores, shared; shape {args.shape}, {args.nodes} nodes, {len(cluster.pending)} pending, "
          f"seed {args.seed}, budget {args.budget:g} s, wall cap {args.wall:g} s; {args.busy} CPU-bound process(es) "
          "beside\n")
    print("| run | workers | load before | status | placed | preference | bound | wall s | wall-clock cut | "
          "same JSON as run 1 |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    first = None
    for i, w in enumerate(args.workers, 1):
        before = load()
        t0 = time.perf_counter()
        params = SolverParams(time_limit=args.wall, workers=w, seed=args.seed, budget=args.budget)
        plan, _ = optimal_plan(cluster, params, deadline=Deadline.start(args.wall))
        doc = plan_document(cluster, plan, check(cluster, plan))
        text = masked(doc)
        first = first or text
        cut = next((n for n in plan.notes if n.startswith(CUT)), "")
        print(f"| {i} | {w} | {before} | {plan.status} | {len(plan.placements)} | {doc['objective']['preference']} | "
              f"{doc['bound'].get('preference')} | {time.perf_counter() - t0:.0f} | "
              f"{cut[len(CUT) + 2:cut.index('):')] if cut else 'no'} | {'yes' if text == first else 'NO'} |",
              flush=True)


if __name__ == "__main__":
    main()
