"""podplan with its defaults, as a new user runs it: generated clusters of 300, 1,000 and 5,000 nodes, each
command a process of its own (reading included), checked against what the user is promised.

    python benchmarks/bench_defaults.py                       # 300 and 1,000 nodes
    python benchmarks/bench_defaults.py --nodes 300 1000 5000 # and 5,000 (minutes, several GiB)

Per cluster (`podplan generate --nodes N --pods 10N --seed S`, the mixed profile):
- `simulate -o json`: kube-scheduler's plan, the floor; when it preempted running pods, `simulate --no-preemption`
  is the floor of compare and solve, which never evict without `--preempt`;
- `compare -o json`: its greedy column must equal simulate's placed count, per priority;
- `solve -o json` with the default limit (auto) and with `--time-limit 5` and `0.5`: it must place at least as
  many pods per priority as simulate, whatever the limit, within the limit + 10 % unless reading and greedy
  alone took longer (greedy's plan is always complete), which its notes must then say;
- `rebalance --goal pack` and `--goal spread` on simulate's end state (`simulate --emit state`): a plan or a
  reason, within its limit + 10 %.
Wall time is the process's (reading included); peak RSS is each process's own (os.wait4). The load average is
printed before and after: on a shared machine the times say little without it.
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
from collections.abc import Sequence
from pathlib import Path
from typing import Any

EXE = str(Path(sys.executable).parent / "podplan")
SLACK = 1.10  # "within its limit + 10 %"


def load() -> str:
    return "%.1f %.1f %.1f" % os.getloadavg()


def podplan(*args: str, out: Path | None = None) -> tuple[int, float, float, str]:
    """Run `podplan ARGS`; (exit code, wall s, peak RSS MiB, stdout or '' when written to `out`)."""
    t0 = time.perf_counter()
    with (out.open("w") if out else tempfile.TemporaryFile("w+")) as f:
        p = subprocess.Popen([EXE, *args], stdout=f, stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t0
        text = ""
        if out is None:
            f.seek(0)
            text = f.read()
    return os.waitstatus_to_exitcode(status), wall, usage.ru_maxrss / 1024, text


def by_priority(doc: dict[str, Any]) -> dict[str, int]:
    return {q: int(v) for q, v in doc["objective"]["placed_by_priority"].items()}


def limit_of(notes: list[str]) -> float | None:
    for n in notes:
        m = re.match(r"time limit: (?:auto, )?([\d.]+)s", n)
        if m:
            return float(m.group(1))
    return None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nodes", type=int, nargs="+", default=[300, 1000])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--limits", nargs="+", default=["auto", "5", "0.5"], help="solve's --time-limit values")
    args = ap.parse_args()
    print(f"{os.cpu_count()} cores; load before {load()}\n")
    print("| nodes | command | limit s | wall s | peak MiB | exit | status | placed | checked against simulate | ok |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    failures = 0
    details: list[str] = []  # the notes of each row that broke a promise: why it did is in them
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.nodes:
            path = Path(tmp) / f"g{n}.yaml"
            subprocess.run([EXE, "generate", "--nodes", str(n), "--pods", str(10 * n), "--seed", str(args.seed)],
                           stdout=path.open("w"), check=True)

            def row(cmd: str, limit: Any, wall: float, rss: float, code: int, status: str, placed: Any,
                    check: str, ok: bool, notes: Sequence[str] = ()) -> None:
                nonlocal failures
                failures += not ok
                if not ok:
                    details.append(f"{n:,} nodes, {cmd} {limit} ({wall:.1f} s, load {load()}):\n"
                                   + "".join(f"  - {note}\n" for note in notes))
                print(f"| {n:,} | {cmd} | {limit} | {wall:.1f} | {rss:,.0f} | {code} | {status} | {placed} | "
                      f"{check} | {'yes' if ok else 'NO'} |", flush=True)

            code, wall, rss, text = podplan("simulate", str(path), "-o", "json")
            sim = json.loads(text)
            floor = by_priority(sim)
            row("simulate", "-", wall, rss, code, sim["status"], sim["objective"]["placed"],
                f"the floor ({len(sim['preemptions'])} preemption(s))", code == 0)
            if sim["preemptions"]:
                # kube-scheduler evicted running pods to place some: compare's greedy column and solve without
                # --preempt never evict, so their floor is kube-scheduler without DefaultPreemption
                code, wall, rss, text = podplan("simulate", str(path), "--no-preemption", "-o", "json")
                sim = json.loads(text)
                floor = by_priority(sim)
                row("simulate --no-preemption", "-", wall, rss, code, sim["status"], sim["objective"]["placed"],
                    "the floor of compare and solve (neither evicts without --preempt)", code == 0)

            code, wall, rss, text = podplan("compare", str(path), "-o", "json")
            doc = json.loads(text)
            greedy = next(c for c in doc["columns"] if c["name"] == "greedy")
            g = {q: v["placed"] for q, v in greedy["placed_by_priority"].items()}
            same = {q: v for q, v in g.items() if v} == {q: v for q, v in floor.items() if v}
            limit = doc["time_limit"]["seconds"]
            row("compare", f"auto {limit:g}", wall, rss, code, "-", greedy["placed"],
                "greedy column = simulate, per priority", same and wall <= SLACK * limit)

            for lim in args.limits:
                extra = [] if lim == "auto" else ["--time-limit", lim]
                code, wall, rss, text = podplan("solve", str(path), "-o", "json", *extra)
                doc = json.loads(text)
                got = by_priority(doc)
                worse = {q: (got.get(q, 0), k) for q, k in floor.items() if got.get(q, 0) < k}
                stated = limit_of(doc["notes"]) or float(lim)
                # kube-scheduler's plan is always complete: a limit shorter than reading and greedy is exceeded,
                # and the notes must say so (by how much, and the limit a search needs)
                said = any("past the end of the" in note or "may end after its limit" in note
                           for note in doc["notes"])
                row("solve", f"{lim} {stated:g}" if lim == "auto" else lim, wall, rss, code, doc["status"],
                    doc["objective"]["placed"], "per priority >= simulate" + (f": fewer {worse}" if worse else "")
                    + ("; greedy ran past the limit, said in the notes" if said else ""),
                    not worse and code in (0, 1) and (wall <= SLACK * stated or said), doc["notes"])

            state = Path(tmp) / f"g{n}-state.yaml"
            podplan("simulate", str(path), "--emit", "state", out=state)
            for goal in ("pack", "spread"):
                code, wall, rss, text = podplan("rebalance", str(state), "--goal", goal, "-o", "json")
                doc = json.loads(text) if text.strip() else {"notes": []}
                stated = limit_of(doc.get("notes", []))
                answer = ("complete plan" if doc.get("complete") else "incomplete plan") if "moves" in doc else \
                    "no output"
                moves = doc.get("moves", "-")
                row(f"rebalance --goal {goal}", f"auto {stated:g}" if stated else "auto ?", wall, rss, code, answer,
                    f"{moves} moves", "a plan or a reason within limit + 10 %",
                    code in (0, 1) and stated is not None and wall <= SLACK * stated, doc.get("notes", []))
    print(f"\nload after {load()}; {failures} check(s) failed")
    for d in details:
        print(f"\n{d}", end="")


if __name__ == "__main__":
    main()
