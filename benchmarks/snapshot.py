"""Record what every command prints on every bundled instance, to prove a restructuring changed no output.

    python benchmarks/snapshot.py DIR            # write DIR/<instance>.<command>.<format>.txt
    diff -r BEFORE_DIR AFTER_DIR                 # identical, or the change altered behaviour

Runs the installed `podplan` (fixed seed, one CP-SAT worker so the search is deterministic). Wall-clock
figures are the only thing that legitimately differs between two runs: they are masked (`<t>`).
"""
from __future__ import annotations

import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
INSTANCES = sorted((ROOT / "instances").glob("*.yaml"))
SOLVER = ["--workers", "1", "--seed", "0", "--time-limit", "20"]

COMMANDS: list[tuple[str, list[str]]] = [
    ("validate", ["validate"]),
    ("simulate", ["simulate"]),
    ("simulate-state", ["simulate", "--emit", "state"]),
    ("simulate-bindings", ["simulate", "--emit", "bindings"]),
    ("solve", ["solve", *SOLVER]),
    ("solve-state", ["solve", *SOLVER, "--emit", "state"]),
    ("explain", ["explain"]),
    ("why-pending", ["explain", "--why-pending", "--time-limit", "20"]),
    ("compare", ["compare", *SOLVER]),
    ("rebalance-fix", ["rebalance", "--goal", "fix", "--workers", "1", "--time-limit", "20"]),
    ("rebalance-spread", ["rebalance", "--goal", "spread", "--workers", "1", "--time-limit", "20"]),
    ("rebalance-pack", ["rebalance", "--goal", "pack", "--workers", "1", "--time-limit", "20"]),
    ("rebalance-script", ["rebalance", "--goal", "pack", "--workers", "1", "--time-limit", "20", "--emit", "script"]),
    ("rebalance-evictions", ["rebalance", "--goal", "pack", "--workers", "1", "--time-limit", "20",
                             "--emit", "evictions"]),
]
FORMATS = ("table", "json")
# emitted manifests and scripts have one format
SINGLE = {"simulate-state", "simulate-bindings", "solve-state", "rebalance-script", "rebalance-evictions"}

MASKS = [
    (re.compile(r'("?wall_seconds"?:\s*)[0-9.e-]+'), r"\1<t>"),
    (re.compile(r'("?seconds"?:\s*)[0-9.e-]+'), r"\1<t>"),
    (re.compile(r"\b\d+(\.\d+)?\s?s\b"), "<t>s"),
    (re.compile(r"\b\d+(\.\d+)?s\)"), "<t>s)"),
]


def mask(text: str) -> str:
    for pattern, repl in MASKS:
        text = pattern.sub(repl, text)
    return text


def run(out: Path, instance: Path, name: str, args: list[str], fmt: str | None) -> None:
    cmd = ["podplan", *args, str(instance.relative_to(ROOT))]
    if fmt is not None:
        cmd += ["-o", fmt]
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600)
    body = f"$ {' '.join(cmd[1:])}\nexit {done.returncode}\n--- stdout\n{done.stdout}--- stderr\n{done.stderr}"
    suffix = f".{fmt}" if fmt else ""
    (out / f"{instance.stem}.{name}{suffix}.txt").write_text(mask(body))


def main() -> None:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    jobs = []
    for instance in INSTANCES:
        for name, args in COMMANDS:
            for fmt in ((None,) if name in SINGLE else FORMATS):
                jobs.append((out, instance, name, args, fmt))
    # verify judges a final state: the solved state of each instance
    with ThreadPoolExecutor(2) as pool:
        list(pool.map(lambda job: run(*job), jobs))
    for instance in INSTANCES:
        state = out / f"{instance.stem}.solve-state.txt"
        manifest = state.read_text().split("--- stdout\n", 1)[1].split("--- stderr\n", 1)[0]
        path = out / f"{instance.stem}.final.yaml"
        path.write_text(manifest)
        for fmt in FORMATS:
            done = subprocess.run(["podplan", "verify", str(path), "-o", fmt], capture_output=True, text=True)
            (out / f"{instance.stem}.verify.{fmt}.txt").write_text(
                mask(f"exit {done.returncode}\n--- stdout\n{done.stdout}--- stderr\n{done.stderr}"))
        path.unlink()
    print(f"{len(jobs) + 2 * len(INSTANCES)} outputs in {out}")


if __name__ == "__main__":
    main()
