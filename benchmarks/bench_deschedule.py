"""`podplan deschedule` end to end on a running 500-node cluster with the descheduler's LowNodeUtilization
policy (thresholds cpu/memory/pods 20, targetThresholds 50/50/50): the descheduler's simulated cycle against
podplan's plan, measured from outside as a user would see it.

The running cluster: `podplan generate --profile production --nodes N --pods P --utilization U` (every workload
replica pending), `podplan simulate --emit state` (kube-scheduler's own placement of the lot), then FRESH empty
nodes joined (copies of an m5.2xlarge node of each zone in turn: the scale-up LowNodeUtilization is for). Made once per
family member and kept in benchmarks/results/inputs/; not part of the measured time.

Each member runs `/usr/bin/time -v podplan deschedule STATE --policy-file POLICY --time-limit L -o json` and
prints: wall seconds, peak RSS, the descheduler's first cycle (evictions, bounced back to their node, landed
into a new violation, could not land, nodes still above targetThresholds, cycles, loops) and podplan's plan
(evictions, nodes above targetThresholds, status, waves). The load average is printed beside: the machine
these figures come from is shared.

    nice -n 10 python benchmarks/bench_deschedule.py --seeds 1,2,3         # the 500-node cluster, three seeds
    python benchmarks/bench_deschedule.py --family                         # three utilisations, two seeds
    python benchmarks/bench_deschedule.py --nodes 30 --pods 300 --fresh 3 --time-limit 20   # toy size
"""
from __future__ import annotations

import argparse
import copy
import json
import os
import subprocess
from pathlib import Path

import yaml

from bench_solve import INPUTS, podplan, timed

POLICY = """apiVersion: "descheduler/v1alpha2"
kind: "DeschedulerPolicy"
profiles:
  - name: ProfileName
    pluginConfig:
    - name: "LowNodeUtilization"
      args:
        thresholds: {"cpu": 20, "memory": 20, "pods": 20}
        targetThresholds: {"cpu": 50, "memory": 50, "pods": 50}
    plugins:
      balance:
        enabled: ["LowNodeUtilization"]
"""
COLUMNS = ("nodes", "pods", "util", "seed", "limit s", "load", "wall s", "cycles+optimum s", "RSS MiB",
           "before: outside", "desched evictions (cycle 1)", "bounced", "new viol.", "nowhere",
           "desched: outside after", "desched cycles (evictions)", "podplan evictions", "podplan: outside after",
           "status", "bound", "gap", "waves", "complete")


def running_state(nodes: int, pods: int, util: float, seed: int, fresh: int, inputs: Path) -> Path:
    inputs.mkdir(parents=True, exist_ok=True)
    stem = f"production-{nodes}-{pods}-u{util}-seed{seed}"
    out = inputs / f"{stem}.state+{fresh}fresh.yaml"
    if out.exists():
        return out
    gen, state = inputs / f"{stem}.yaml", inputs / f"{stem}.state.yaml"
    if not gen.exists():
        with gen.open("w") as f:
            subprocess.run([podplan(), "generate", "--nodes", str(nodes), "--pods", str(pods), "--profile",
                            "production", "--seed", str(seed), "--utilization", str(util)], stdout=f, check=True)
    if not state.exists():
        with state.open("w") as f:
            subprocess.run([podplan(), "simulate", str(gen), "--emit", "state", "--seed", str(seed)], stdout=f,
                           check=True)
    text = state.read_text()
    # parse only the node to copy (PyYAML reads an 11 MB state in minutes on a loaded machine)
    protos: dict[str, dict] = {}  # zone -> the first m5.2xlarge node there: fresh nodes join every zone in turn
    for chunk in text.split("\n---\n"):
        if "kind: Node" in chunk and "m5.2xlarge" in chunk:
            d = yaml.safe_load(chunk)
            if d and d.get("kind") == "Node":
                protos.setdefault(d["metadata"].get("labels", {}).get("topology.kubernetes.io/zone", ""), d)
    zones = sorted(protos)
    extra = []
    for i in range(fresh):
        n = copy.deepcopy(protos[zones[i % len(zones)]])
        name = f"fresh-{i + 1:03d}"
        n["metadata"]["name"] = name
        n["metadata"].setdefault("labels", {})["kubernetes.io/hostname"] = name
        n["metadata"].pop("uid", None)
        extra.append(n)
    out.write_text(text.rstrip("\n") + "\n---\n" + yaml.safe_dump_all(extra, sort_keys=False))
    return out


def load() -> str:
    return "%.1f" % os.getloadavg()[0]


def row(nodes: int, pods: int, util: float, seed: int, fresh: int, limit: float, inputs: Path) -> list[str]:
    state = running_state(nodes, pods, util, seed, fresh, inputs)
    policy = inputs / "lownodeutilization-20-50.yaml"
    policy.write_text(POLICY)
    out = inputs / f"{state.stem}.deschedule.json"
    before = load()
    wall, rss, code, err = timed([podplan(), "deschedule", str(state), "--policy-file", str(policy), "--time-limit",
                                  str(limit), "-o", "json"], out, kill_after=limit * 3 + 60)
    if code not in (0, 1):
        return [str(nodes), str(pods), str(util), str(seed), str(limit), before, f"{wall:.1f}", "-", "-", f"exit {code}: "
                + err.strip().splitlines()[-1][:80] if err.strip() else f"exit {code}"] + ["-"] * (len(COLUMNS) - 10)
    doc = json.loads(out.read_text())
    d, o = doc["descheduler"], doc["optimal"]
    ev = d["evictions"]
    secs = doc.get("seconds", {})
    return [str(nodes + fresh), str(pods), str(util), str(seed), f"{limit:g}",
            f"{before}->{load()}", f"{wall:.1f}", f"{secs.get('descheduler', 0) + secs.get('optimal', 0):.1f}",
            f"{rss:.0f}" if rss else "-",
            str(len(doc["before"]["nodes_outside_thresholds"])), str(len(ev)),
            str(sum(1 for e in ev if e["landed"] == "same-node")),
            str(sum(1 for e in ev if e["landed"] == "new-violation")),
            str(sum(1 for e in ev if e["landed"] == "nowhere")), str(len(d["nodes_outside_thresholds"])),
            f"{d['cycles']}{' (loops)' if d['loops'] else ''} ({d['evictions_total']})", str(len(o["evictions"])),
            str(len(o["nodes_outside_thresholds"])), str(o["status"]),
            "-" if o["bound"] is None else str(o["bound"]), "-" if o["gap"] is None else f"{o['gap']:.0%}",
            str(len(o["waves"])), "yes" if o["complete"] else f"no ({len(o['blocked'])} blocked)"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nodes", type=int, default=500)
    ap.add_argument("--pods", type=int, default=6000, help="workload replicas given to `podplan generate`")
    ap.add_argument("--utilization", type=float, default=0.45)
    ap.add_argument("--fresh", type=int, default=25, help="empty nodes joined to the running cluster")
    ap.add_argument("--seeds", default="1", help="comma-separated seeds of `podplan generate` (and simulate)")
    ap.add_argument("--time-limit", type=float, default=60.0)
    ap.add_argument("--family", action="store_true", help="utilisation 0.40/0.45/0.50 x seeds 1, 2")
    ap.add_argument("--inputs", type=Path, default=INPUTS)
    a = ap.parse_args()
    seeds = [int(x) for x in a.seeds.split(",") if x.strip()]
    members = [(u, s) for u in (0.40, 0.45, 0.50) for s in (1, 2)] if a.family else [(a.utilization, s) for s in seeds]
    print(f"cpu count {os.cpu_count()}, load average at start {load()} (a shared machine: figures vary with load)")
    print("| " + " | ".join(COLUMNS) + " |")
    print("|" + "---|" * len(COLUMNS))
    for util, seed in members:
        print("| " + " | ".join(row(a.nodes, a.pods, util, seed, a.fresh, a.time_limit, a.inputs)) + " |",
              flush=True)


if __name__ == "__main__":
    main()
