"""The verify gate on generated clusters: how long the verifier takes to judge a whole final state, and its parts.

For each instance (production N = `podplan generate --profile production --nodes N --pods 10*N --seed 0`, the
inputs bench_io.py writes), greedy's plan is made once and kept beside the input (it takes minutes at 5,000
nodes); then, in a fresh process that loads the input and freezes it as the command line does:

- final state: the existing pods and the plan's placements as a ClusterState;
- index: the label index of every pod (PodIndex), which the Filters and the preference terms share;
- Filters: `judge_all`, every pod judged by every Filter with itself removed;
- preference: the preference terms of the final state;
- verify(): all of it as the gate runs it (a fresh state, the garbage collector paused), CPU and wall seconds.

    python benchmarks/bench_verify.py                       # production 1,000
    python benchmarks/bench_verify.py --nodes 1000 5000     # ... and 5,000 (greedy's plan: minutes, once)
    python benchmarks/bench_verify.py --nodes 12            # toy size (smoke test)

CPU seconds are what a busy machine does not inflate; the load average is printed beside each row.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_io import INPUTS, write_inputs  # noqa: E402

PLAN = """
import json, sys
from podplan.models.loader import load_paths
from podplan.optimizer.pipeline import greedy_plan
cluster = load_paths([sys.argv[1]])
json.dump(greedy_plan(cluster, 0).placements, open(sys.argv[2], "w"))
"""

PARTS = """
import gc, json, sys, time
from podplan.models.loader import load_paths
from podplan.optimizer import verify as V
from podplan.optimizer.objective import preference_terms
from podplan.optimizer.policy import Policy
from podplan.optimizer.state import PodIndex
cluster = load_paths([sys.argv[1]])
gc.freeze()  # as the command line does after loading
placements = json.load(open(sys.argv[2]))
out = []
def timed(f):
    cpu = time.process_time(); value = f(); out.append(time.process_time() - cpu); return value
with V.gc_paused():
    state = timed(lambda: V.final_state(cluster, placements))
    index = timed(lambda: PodIndex(state))
    timed(lambda: V.judge_all(state, index=index))
    timed(lambda: preference_terms(cluster, state, Policy(), index))
del state, index
cpu, wall = time.process_time(), time.perf_counter()
report = V.verify(cluster, placements)
out += [time.process_time() - cpu, time.perf_counter() - wall]
print(*out, sum(1 for _ in cluster.pods) + len(placements), report.ok)
"""


def plan_path(yaml_path: Path) -> Path:
    return yaml_path.with_suffix(".greedy-plan.json")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, nargs="*", default=[1000], help="production sizes (pods: 10 per node)")
    ap.add_argument("--inputs", type=Path, default=INPUTS, help="where the generated inputs are kept")
    args = ap.parse_args(argv)
    print(f"{os.cpu_count()} cores; load average {os.getloadavg()[0]:.1f} at the start (a shared machine)")
    print("| instance | pods judged | final state s | index s | Filters s | preference s | verify() cpu s (wall) "
          "| ok | load |")
    print("|---|---:|---:|---:|---:|---:|---:|---|---:|")
    for nodes in args.nodes:
        name = f"production-{nodes}"
        yaml_path, _ = write_inputs(name, "production", nodes, 10 * nodes, args.inputs)
        plan = plan_path(yaml_path)
        if not plan.exists():
            subprocess.run([sys.executable, "-c", PLAN, str(yaml_path), str(plan)], check=True)
        out = subprocess.run([sys.executable, "-c", PARTS, str(yaml_path), str(plan)], capture_output=True,
                             text=True, check=True).stdout.split()
        state, index, filters, pref, cpu, wall = (float(x) for x in out[:6])
        print(f"| {name} | {int(out[6]):,} | {state:.2f} | {index:.2f} | {filters:.2f} | {pref:.2f} | "
              f"{cpu:.2f} ({wall:.2f}) | {out[7]} | {os.getloadavg()[0]:.1f} |", flush=True)


if __name__ == "__main__":
    main()
