"""`podplan solve` end to end at the scale goals (docs/benchmarks.md), measured from outside as a user would see it.

Rows (2 cores; the time limit is `podplan solve --time-limit`):

    production-1000   generate --profile production --nodes 1000 --pods 10000   limit  60 s
                      goal: every pod placed, OPTIMAL or gap <= 0.5 % on each level, <= 4 GiB
    production-5000   generate --profile production --nodes 5000 --pods 50000   limit 300 s
                      goal: gap <= 2 % on each level, <= 8 GiB
    spread-5000       5,000 replicas of one zone-spread Deployment on 5,000 nodes (benchmarks/run.py's SPREAD)
                      goal: all placed and OPTIMAL end to end in < 11 s (kube-scheduler's 460 pods/s)
    gpu-1500          generate --profile gpu --nodes 1500 --pods 8000                limit  60 s
                      goal: gap <= 1 % on each level

Each row writes its input once (benchmarks/results/inputs/, reused when present: same arguments, same bytes),
then runs `/usr/bin/time -v podplan solve INPUT --time-limit L --seed 0 -o json` as a subprocess of the
installed `podplan`: wall seconds are the whole process (start-up, loading, greedy, search, verify, output),
"solver s" is what the plan document itself reports (solver.wall_seconds), peak RSS is the process's maximum
resident set. The time-limit goals allow 10 % + 5 s of start-up over the
limit ("--time-limit is a promise for the whole command").

Gap per level, from the plan document: for each priority level, the pods the bound says could be placed and
were not (absolute, and relative to the bound); for the preference score, bound - score (absolute, and relative
to |bound| when the bound is not 0). The document's own "gap" is printed beside it as reported.

    nice -n 10 python benchmarks/bench_solve.py                           # all four rows
    python benchmarks/bench_solve.py --rows production-1000 gpu-1500
    python benchmarks/bench_solve.py --shrink 50 --time-limit 3           # toy sizes (smoke test)
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
INPUTS = ROOT / "benchmarks" / "results" / "inputs"
STARTUP_S = 5.0  # what the time-limit goals allow over the limit, beside 10 %


@dataclass(frozen=True)
class Row:
    name: str
    profile: str  # a `podplan generate` profile, or "spread"
    nodes: int
    pods: int
    time_limit: float
    goal: str
    max_gap: float | None  # per level; None: must be proven (OPTIMAL)
    max_rss_gib: float | None
    max_wall_s: float | None  # None: the time limit's promise
    all_placed: bool


ROWS = {
    "production-1000": Row("production-1000", "production", 1000, 10_000, 60.0,
                           "all placed, OPTIMAL or gap <= 0.5 % per level, <= 4 GiB", 0.005, 4.0, None, True),
    "production-5000": Row("production-5000", "production", 5000, 50_000, 300.0,
                           "gap <= 2 % per level, <= 8 GiB", 0.02, 8.0, None, False),
    "spread-5000": Row("spread-5000", "spread", 5000, 5000, 11.0,
                       "all placed, OPTIMAL, < 11 s end to end", None, None, 11.0, True),
    "gpu-1500": Row("gpu-1500", "gpu", 1500, 8000, 60.0, "gap <= 1 % per level", 0.01, None, None, False),
}
COLUMNS = ("row", "nodes", "pending", "limit s", "wall s", "solver s", "peak RSS MiB", "status", "placed/total",
           "gap per level", "reported gap", "goal", "met")


def podplan() -> str:
    """The `podplan` installed beside this interpreter (a venv's), else the one on PATH."""
    beside = Path(sys.executable).parent / "podplan"
    found = str(beside) if beside.exists() else shutil.which("podplan")
    if not found:
        sys.exit("podplan is not installed (pip install -e .)")
    return found


def write_input(profile: str, nodes: int, pods: int, seed: int, inputs: Path = INPUTS) -> Path:
    """The row's input file in `inputs`, generated once (same arguments and seed, same bytes)."""
    inputs.mkdir(parents=True, exist_ok=True)
    path = inputs / f"{profile}-{nodes}-{pods}-seed{seed}.yaml"
    if path.exists():
        return path
    tmp = path.with_suffix(".tmp")
    if profile == "spread":
        sys.path.insert(0, str(ROOT / "benchmarks"))
        from run import spread_manifests  # the SPREAD case of the benchmark suite

        from podplan.models.generate import dump_yaml
        with tmp.open("w") as out:
            dump_yaml(spread_manifests(nodes, pods), out)
    else:
        with tmp.open("w") as out:
            subprocess.run([podplan(), "generate", "--nodes", str(nodes), "--pods", str(pods), "--seed", str(seed),
                            "--profile", profile], stdout=out, check=True)
    tmp.rename(path)
    return path


_TIME_FIELDS = {"wall": re.compile(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (\S+)"),
                "rss": re.compile(r"Maximum resident set size \(kbytes\): (\d+)")}


def timed(argv: list[str], stdout: Path, kill_after: float | None) -> tuple[float, float | None, int, str]:
    """Run argv under /usr/bin/time -v: (wall seconds, peak RSS MiB or None, exit code, stderr without time's
    report). Killed (exit -9) after kill_after seconds."""
    started = time.perf_counter()
    with stdout.open("w") as out:
        # Its own session: on timeout, the group (time and the podplan it runs) is stopped, nothing else.
        proc = subprocess.Popen(["/usr/bin/time", "-v", *argv], stdout=out, stderr=subprocess.PIPE, text=True,
                                start_new_session=True)
        try:
            _, err = proc.communicate(timeout=kill_after)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            _, err = proc.communicate()
    wall = time.perf_counter() - started
    rss = _TIME_FIELDS["rss"].search(err)
    clock = _TIME_FIELDS["wall"].search(err)
    if clock:
        parts = [float(p) for p in clock.group(1).split(":")]
        wall = sum(p * 60 ** i for i, p in enumerate(reversed(parts)))
    text = err.split("\tCommand being timed:")[0]
    return wall, int(rss.group(1)) / 1024 if rss else None, proc.returncode, text


def level_gaps(doc: dict[str, Any]) -> tuple[list[tuple[str, int, float | None]], str]:
    """[(level, absolute gap, relative gap or None)] for each priority level's placed pods and the preference,
    and the printed form."""
    obj, bound = doc.get("objective", {}), doc.get("bound") or {}
    out: list[tuple[str, int, float | None]] = []
    placed, bound_placed = obj.get("placed_by_priority", {}), bound.get("placed_by_priority") or {}
    for level in sorted(bound_placed, key=lambda p: -int(p)):
        b = int(bound_placed[level])
        missing = b - int(placed.get(level, 0))
        out.append((f"priority {level}", missing, missing / b if b else None))
    if bound.get("preference") is not None and obj.get("preference") is not None:
        b, p = bound["preference"], obj["preference"]
        out.append(("preference", b - p, (b - p) / abs(b) if b else None))
    text = "; ".join(f"{name}: {gap:,}" + (f" ({rel:.2%})" if rel is not None and gap else "") for name, gap, rel in out
                     if gap or name == "preference")
    missing_levels = sum(1 for name, gap, _ in out if name != "preference" and gap == 0)
    prefix = f"placed: 0 missing on {missing_levels} level(s)" if missing_levels else ""
    return out, "; ".join(t for t in (prefix, text) if t) or "-"


def _count(value: Any) -> str:
    """An absolute gap as printed: thousands separated; '-' when the level has no bound (None)."""
    return f"{value:,}" if isinstance(value, (int, float)) else "-"


def reported_gap(reported: Any) -> str:
    """The plan document's own gap: one ratio (c9c987b) or per level {absolute, relative} (later)."""
    if isinstance(reported, (int, float)):
        return f"{reported:.2%}"
    if isinstance(reported, dict):
        return "; ".join(f"{level}: {_count(g.get('absolute'))}" + (f" ({g['relative']:.2%})" if isinstance(
            g.get("relative"), (int, float)) else "") for level, g in reported.items() if isinstance(g, dict))
    return json.dumps(reported)


def judge(row: Row, status: str, wall: float, rss: float | None, placed: int, total: int,
          gaps: list[tuple[str, int, float | None]], toy: bool) -> str:
    if toy:
        return "- (toy size)"
    misses = []
    if row.all_placed and placed < total:
        misses.append(f"{total - placed:,} not placed")
    # OPTIMAL counts only with a zero gap on every level (a status that says OPTIMAL beside a gap is not proof).
    proven = status == "OPTIMAL" and not any(gap for _, gap, _ in gaps)
    if status == "OPTIMAL" and not proven:
        misses.append("OPTIMAL reported beside a nonzero gap")
    elif row.max_gap is None and not proven:
        misses.append("not proven optimal")
    if row.max_gap is not None and not proven:
        worst = [name for name, gap, rel in gaps if gap and (rel is None or rel > row.max_gap)]
        if worst:
            misses.append("gap over goal: " + ", ".join(worst))
    limit = row.max_wall_s if row.max_wall_s is not None else 1.1 * row.time_limit + STARTUP_S
    if wall > limit:
        misses.append(f"{wall:.0f} s > {limit:.0f} s")
    if row.max_rss_gib is not None and rss is not None and rss > row.max_rss_gib * 1024:
        misses.append(f"RSS {rss / 1024:.1f} GiB")
    return "met" if not misses else "not met (" + "; ".join(misses) + ")"


def run_row(row: Row, seed: int, time_limit: float | None, shrink: int, workers: int,
            kill_after: float | None, inputs: Path) -> dict[str, Any]:
    nodes, pods = max(row.nodes // shrink, 8), max(row.pods // shrink, 8)
    limit = time_limit or row.time_limit
    path = write_input(row.profile, nodes, pods, seed, inputs)
    out = path.with_name(f"{row.name}-{nodes}-{pods}.plan.json")
    argv = [podplan(), "solve", str(path), "--time-limit", f"{limit:g}", "--workers", str(workers),
            "--seed", str(seed), "-o", "json"]
    wall, rss, code, err = timed(argv, out, kill_after)
    result: dict[str, Any] = {"row": row.name, "nodes": f"{nodes:,}", "limit s": f"{limit:g}",
                              "wall s": f"{wall:.1f}", "peak RSS MiB": f"{rss:,.0f}" if rss else "-", "goal": row.goal}
    try:
        doc = json.loads(out.read_text())
    except (OSError, json.JSONDecodeError):
        last = (f"stopped by --kill-after after {wall:.0f} s" if code == -signal.SIGKILL
                else err.strip().splitlines()[-1] if err.strip() else "")
        return {**result, "pending": "-", "solver s": "-", "status": f"no plan (exit {code})", "placed/total": "-",
                "gap per level": "-", "reported gap": "-", "met": f"not met (no plan: {last[:80]})"}
    placed = int(doc["objective"]["placed"])
    total = placed + len(doc.get("pending", []))
    gaps, text = level_gaps(doc)
    reported = doc.get("gaps", doc.get("gap"))  # main's plan documents report {"level": {absolute, relative}}
    solver = (doc.get("solver") or {}).get("wall_seconds")
    return {**result, "pending": f"{total:,}", "solver s": f"{solver:.1f}" if isinstance(solver, (int, float)) else "-",
            "status": doc.get("status", "?"), "placed/total": f"{placed:,}/{total:,}",
            "gap per level": text,
            "reported gap": reported_gap(reported),
            "met": judge(row, doc.get("status", ""), wall, rss, placed, total, gaps, shrink > 1 or time_limit is not None)}


def markdown_row(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", nargs="*", choices=list(ROWS), default=list(ROWS))
    ap.add_argument("--time-limit", type=float, help="override every row's time limit (goals then read '-')")
    ap.add_argument("--shrink", type=int, default=1, help="divide nodes and pods by this (toy sizes; goals '-')")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--kill-after", type=float, help="stop a solve after this many wall seconds (no plan)")
    ap.add_argument("--inputs", type=Path, default=INPUTS, help="where inputs and plans are kept")
    args = ap.parse_args()
    print(f"cores: {os.cpu_count()}  load average at start: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    print(markdown_row(list(COLUMNS)))
    print(markdown_row(["---" if c in ("row", "status", "gap per level", "goal", "met") else "---:" for c in COLUMNS]))
    for name in args.rows:
        r = run_row(ROWS[name], args.seed, args.time_limit, args.shrink, args.workers, args.kill_after, args.inputs)
        print(markdown_row([str(r[c]) for c in COLUMNS]), flush=True)
    print(f"load average at end: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
