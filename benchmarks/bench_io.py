"""Reading the input, `podplan validate`, and Ctrl-C to printed plan, over generated clusters.

For each instance the input is written once as YAML (what `podplan generate` prints) and as JSON (the same
objects in one `kind: List`, as `kubectl get -o json` dumps them), into benchmarks/results/inputs/. Then, each in a
fresh process, one at a time:

- read YAML / read JSON: `models.loader.load_paths` (reading and parsing into a Cluster), CPU and wall seconds;
- validate: `podplan validate FILE` as a user runs it, wall seconds, CPU seconds and peak RSS;
- Ctrl-C: `podplan --verbose solve FILE --time-limit 600 -o json` in its own process group; SIGINT goes to the
  group --ctrl-c-after seconds after the first search progress line (`[0:preference] objective ...`), and the
  figure is the time from the signal to the process's exit with its plan printed (the plan is parsed and checked
  to be one); the verify gate's own seconds (solve's `verify:` line) are shown beside it.

    python benchmarks/bench_io.py                          # production 1,000 and three shapes at 1,000 nodes
    python benchmarks/bench_io.py --production-5000        # ... and production 5,000 (minutes on 2 cores)
    python benchmarks/bench_io.py --rows production-1000 --no-ctrl-c
    python benchmarks/bench_io.py --nodes 12 --no-ctrl-c                # toy size (smoke test)
    python benchmarks/bench_io.py --production-5000 --rows production-5000 --no-ctrl-c --repeat 5

With --repeat N each reading and validate runs N times (fresh processes, interleaved: YAML, JSON, validate, then
again), and each cell shows min / median / max.

Instances: production N = `podplan generate --profile production --nodes N --pods 10*N --seed 0`;
shape S = `podplan generate --shape S --nodes 1000 --seed 0`. The machine's cores and load average are printed
with the table: on a shared machine compare CPU seconds, and read wall seconds with the load beside them.
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
INPUTS = ROOT / "benchmarks" / "results" / "inputs"
SHAPE_ROWS = ("eks-default", "anti-host-30", "spread-anyway")


def rows(production_5000: bool, nodes: int = 1000) -> dict[str, tuple[str, int, int]]:
    """name: (profile or shape, nodes, pods or 0 for the shape's own count)."""
    out = {f"production-{nodes}": ("production", nodes, 10 * nodes)}
    if production_5000:
        out["production-5000"] = ("production", 5000, 50000)
    out.update({f"shape {s}": (f"shape:{s}", nodes, 0) for s in SHAPE_ROWS})
    return out


def write_inputs(name: str, what: str, nodes: int, pods: int, inputs: Path = INPUTS) -> tuple[Path, Path]:
    """The instance as YAML and as JSON (written once; later runs reuse them)."""
    from podplan.models.generate import dump_yaml, generate
    from podplan.models.shapes import shape_instance

    inputs.mkdir(parents=True, exist_ok=True)
    stem = inputs / f"io-{name.replace(' ', '-')}-{nodes}-seed0"
    yaml_path, json_path = stem.with_suffix(".yaml"), stem.with_suffix(".json")
    if yaml_path.exists() and json_path.exists():
        return yaml_path, json_path
    if what.startswith("shape:"):
        manifests = shape_instance(what.split(":", 1)[1], nodes, 0).manifests
    else:
        manifests = generate(nodes, pods, 0, what)
    with yaml_path.with_suffix(".tmp").open("w") as out:
        dump_yaml(manifests, out)
    yaml_path.with_suffix(".tmp").rename(yaml_path)
    json_path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": manifests}, default=str))
    return yaml_path, json_path


READ = """
import sys, time
from podplan.models.loader import load_paths
wall, cpu = time.perf_counter(), time.process_time()
c = load_paths([sys.argv[1]])
print(time.process_time() - cpu, time.perf_counter() - wall, len(c.nodes), len(c.pods), len(c.pending))
"""


def read_seconds(path: Path) -> tuple[float, float, str]:
    """(CPU s, wall s, 'nodes/existing/pending') of reading `path` into a Cluster, in a fresh process."""
    out = subprocess.run([sys.executable, "-c", READ, str(path)], capture_output=True, text=True, check=True)
    cpu, wall, nodes, pods, pending = out.stdout.split()
    return float(cpu), float(wall), f"{nodes}/{pods}/{pending}"


def podplan() -> str:
    exe = Path(sys.executable).with_name("podplan")
    return str(exe) if exe.exists() else "podplan"


def validate(path: Path) -> tuple[float, float, float]:
    """(wall s, CPU s, peak RSS MiB) of `podplan validate FILE`."""
    wall = time.perf_counter()
    proc = subprocess.Popen([podplan(), "validate", str(path)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, _, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - wall
    proc.returncode = 0
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def ctrl_c(path: Path, after: float, fallback: float = 240.0) -> tuple[float, str]:
    """(seconds from SIGINT to exit, what was printed) for solve interrupted `after` s into the search."""
    proc = subprocess.Popen([podplan(), "--verbose", "solve", str(path), "--time-limit", "600", "-o", "json"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    searching = threading.Event()
    err: list[str] = []

    def watch() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            err.append(line)
            if "] objective" in line:  # a CP-SAT progress line: the search is under way
                searching.set()
        searching.set()

    threading.Thread(target=watch, daemon=True).start()
    out: list[str] = []
    reader = threading.Thread(target=lambda: out.append(proc.stdout.read() if proc.stdout else ""), daemon=True)
    reader.start()
    # the search's first progress line; failing that (a long greedy warm start), `fallback` s after the start
    searching.wait(timeout=fallback)
    time.sleep(after)
    if proc.poll() is not None:
        return float("nan"), "ended before the signal"
    stage = err[-1].strip()[:60] if err else "?"
    signalled = time.perf_counter()
    os.killpg(proc.pid, signal.SIGINT)
    proc.wait()
    gone = time.perf_counter() - signalled
    reader.join()
    gate = next((line.rsplit(":", 1)[1].strip() for line in err if line.startswith("verify:")), "?")
    try:
        plan = json.loads(out[0])
        what = (f"exit {proc.returncode}, {plan.get('status', '?')}, {len(plan.get('placements', []))} placed, "
                f"verify gate {gate}; signalled after: {stage}")
    except (ValueError, IndexError, AttributeError):
        what = f"exit {proc.returncode}, no plan: {''.join(err[-2:]).strip()}"
    return gone, what


def spread(values: list[float]) -> str:
    """min / median / max of several runs (the one value of a single run)."""
    if len(values) == 1:
        return f"{values[0]:.1f}"
    return f"{min(values):.1f} / {statistics.median(values):.1f} / {max(values):.1f}"


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--production-5000", action="store_true", help="add production 5,000 nodes / 50,000 pods")
    ap.add_argument("--rows", nargs="*", help="only these rows (names as printed)")
    ap.add_argument("--no-ctrl-c", action="store_true", help="skip the Ctrl-C column (it runs solve)")
    ap.add_argument("--ctrl-c-after", type=float, default=5.0, help="seconds into the search before SIGINT")
    ap.add_argument("--nodes", type=int, default=1000, help="nodes of the production and shape rows (toy sizes "
                                                             "for a smoke test)")
    ap.add_argument("--inputs", type=Path, default=INPUTS, help="where the generated inputs are kept")
    ap.add_argument("--repeat", type=int, default=1, help="runs of each reading and validate (min / median / max)")
    args = ap.parse_args(argv)
    chosen = rows(args.production_5000, args.nodes)
    if args.rows:
        chosen = {k: v for k, v in chosen.items() if k in args.rows}
    print(f"{os.cpu_count()} cores; load average {os.getloadavg()[0]:.1f} at the start (a shared machine)")
    print("| instance | nodes/existing/pending | YAML MB | read YAML cpu s (wall) | JSON MB | read JSON cpu s (wall) "
          "| validate wall s (cpu) | validate peak MiB | Ctrl-C to print s | after Ctrl-C | load |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---|---:|")
    for name, (what, nodes, pods) in chosen.items():
        yaml_path, json_path = write_inputs(name, what, nodes, pods, args.inputs)
        runs: dict[str, list[float]] = {}
        for _ in range(max(1, args.repeat)):
            y_cpu, y_wall, counts = read_seconds(yaml_path)
            j_cpu, j_wall, _ = read_seconds(json_path)
            v_wall, v_cpu, v_rss = validate(yaml_path)
            for key, value in (("y_cpu", y_cpu), ("y_wall", y_wall), ("j_cpu", j_cpu), ("j_wall", j_wall),
                               ("v_wall", v_wall), ("v_cpu", v_cpu), ("v_rss", v_rss)):
                runs.setdefault(key, []).append(value)
        gone, what_printed = (float("nan"), "-") if args.no_ctrl_c else ctrl_c(yaml_path, args.ctrl_c_after)
        row: list[Any] = [name, counts, f"{yaml_path.stat().st_size / 1e6:.1f}",
                          f"{spread(runs['y_cpu'])} ({spread(runs['y_wall'])})",
                          f"{json_path.stat().st_size / 1e6:.1f}", f"{spread(runs['j_cpu'])} ({spread(runs['j_wall'])})",
                          f"{spread(runs['v_wall'])} ({spread(runs['v_cpu'])})", f"{max(runs['v_rss']):.0f}",
                          "-" if gone != gone else f"{gone:.1f}", what_printed, f"{os.getloadavg()[0]:.1f}"]
        print("| " + " | ".join(str(x) for x in row) + " |", flush=True)


if __name__ == "__main__":
    main()
