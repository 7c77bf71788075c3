"""`podplan rebalance --goal pack|spread` end to end on a running 1,000-node cluster (the scale goal:
waves within `--time-limit 60`), measured from outside as a user would see it.

The running cluster: `podplan generate --profile production --nodes 1000 --pods 10000` (every workload replica
pending), then `podplan simulate --emit state`: kube-scheduler's own placement of every pending pod, written
back as manifests with every pod bound (what the cluster looks like after kube-scheduler placed the lot).
Both steps run once and are kept in benchmarks/results/inputs/; they are not part of the measured time.

Each goal runs `/usr/bin/time -v podplan rebalance STATE --goal G --time-limit L -o json`: wall seconds of the
whole process, peak RSS, waves, moves, whether the plan is complete, the target's status, and what the goal
improves (pack: nodes in use; spread: the highest node cpu utilisation) before and after. The goal allows
10 % + 5 s of start-up over the limit.

    nice -n 10 python benchmarks/bench_rebalance.py
    python benchmarks/bench_rebalance.py --nodes 20 --pods 200 --time-limit 3 --goals pack   # toy size
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

from bench_solve import INPUTS, STARTUP_S, markdown_row, podplan, timed, write_input

COLUMNS = ("goal", "nodes", "running pods", "limit s", "wall s", "peak RSS MiB", "waves", "moves", "complete",
           "target", "before -> after", "scale goal", "met")


def running_state(nodes: int, pods: int, seed: int, inputs: Path) -> tuple[Path, float]:
    """The production cluster with every pod bound by `podplan simulate --emit state` (made once, in
    `inputs`), and the seconds that took (0 when reused)."""
    generated = write_input("production", nodes, pods, seed, inputs)
    state = generated.with_name(generated.stem + ".state.yaml")
    if state.exists():
        return state, 0.0
    started = time.perf_counter()
    tmp = state.with_suffix(".tmp")
    with tmp.open("w") as out:
        subprocess.run([podplan(), "simulate", str(generated), "--emit", "state", "--seed", str(seed)], stdout=out,
                       check=True)
    tmp.rename(state)
    return state, time.perf_counter() - started


def improvement(goal: str, doc: dict[str, Any]) -> str:
    before, after = doc.get("before") or {}, doc.get("after") or {}
    if goal == "pack":
        return f"nodes used {before.get('nodes_used', '?'):,} -> {after.get('nodes_used', '?'):,}"
    b = before.get("utilization", {}).get("cpu", {})
    a = after.get("utilization", {}).get("cpu", {})
    return (f"max cpu {b.get('max', 0):.1%} -> {a.get('max', 0):.1%}, stddev {b.get('stddev', 0):.3f} -> "
            f"{a.get('stddev', 0):.3f}")


def run_goal(goal: str, state: Path, nodes: int, limit: float, seed: int, workers: int, toy: bool,
             kill_after: float | None, max_moves: int | None) -> dict[str, Any]:
    out = state.with_name(f"{state.stem}.rebalance-{goal}.json")
    argv = [podplan(), "rebalance", str(state), "--goal", goal, "--time-limit", f"{limit:g}", "--seed", str(seed),
            "--workers", str(workers), "-o", "json"]
    if max_moves is not None:
        argv += ["--max-moves", str(max_moves)]
    wall, rss, code, err = timed(argv, out, kill_after)
    row: dict[str, Any] = {"goal": goal, "nodes": f"{nodes:,}", "limit s": f"{limit:g}", "wall s": f"{wall:.1f}",
                           "peak RSS MiB": f"{rss:,.0f}" if rss else "-",
                           "scale goal": f"waves within --time-limit {limit:g}"}
    try:
        doc = json.loads(out.read_text())
    except (OSError, json.JSONDecodeError):
        last = (f"stopped by --kill-after after {wall:.0f} s" if code == -signal.SIGKILL
                else err.strip().splitlines()[-1] if err.strip() else "")
        return {**row, "running pods": "-", "waves": "-", "moves": "-", "complete": "-",
                "target": f"no plan (exit {code})", "before -> after": "-", "met": f"not met (no plan: {last[:80]})"}
    budget = 1.1 * limit + STARTUP_S
    met = "- (toy size)" if toy else ("met" if wall <= budget else f"not met ({wall:.0f} s > {budget:.0f} s)")
    target = doc.get("target") or {}
    return {**row, "running pods": f"{bound_pods(state):,}",
            "waves": f"{len(doc.get('waves', [])):,}", "moves": f"{doc.get('moves', 0):,}",
            "complete": "yes" if doc.get("complete") else "no", "target": str(target.get("status", "-")),
            "before -> after": improvement(goal, doc), "met": met}


def bound_pods(state: Path) -> int:
    """Pod documents in the state file (their top-level `kind: Pod` line; the file is simulate's output)."""
    with state.open() as f:
        return sum(1 for line in f if line == "kind: Pod\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nodes", type=int, default=1000)
    ap.add_argument("--pods", type=int, default=10_000, help="pending pods generated, then bound by simulate")
    ap.add_argument("--time-limit", type=float, default=60.0)
    ap.add_argument("--goals", nargs="*", choices=("pack", "spread"), default=["pack", "spread"])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--kill-after", type=float, help="stop a rebalance after this many wall seconds (no plan)")
    ap.add_argument("--max-moves", type=int, help="passed to rebalance (toy runs; the goal row sets none)")
    ap.add_argument("--inputs", type=Path, default=INPUTS, help="where inputs, states and plans are kept")
    args = ap.parse_args()
    toy = args.nodes < 1000 or args.max_moves is not None
    print(f"cores: {os.cpu_count()}  load average at start: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    state, made = running_state(args.nodes, args.pods, args.seed, args.inputs)
    if made:
        print(f"running cluster: simulate --emit state took {made:.0f} s (not part of the rows)")
    print(markdown_row(list(COLUMNS)))
    print(markdown_row(["---" if c in ("goal", "complete", "target", "before -> after", "scale goal", "met")
                        else "---:" for c in COLUMNS]))
    for goal in args.goals:
        r = run_goal(goal, state, args.nodes, args.time_limit, args.seed, args.workers, toy, args.kill_after, args.max_moves)
        print(markdown_row([str(r[c]) for c in COLUMNS]), flush=True)
    print(f"load average at end: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
