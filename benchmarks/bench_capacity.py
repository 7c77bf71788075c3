"""`podplan capacity` and `podplan provision` end to end on generated clusters, measured as a user runs them.

Rows (the time limit is the command's --time-limit; the machine's core count is printed with the load):

    capacity-1000   `podplan generate --profile mixed --nodes 1000 --pods 15000`, its running pods only (no
                    pending pod, no workload: a full cluster), 3 templates together and --each:
                    api (required anti-affinity per host), web (zone spread, maxSkew 1), worker (plain).
                    goal: OPTIMAL (proven) in <= 30 s; the table shows kube-scheduler's greedy count beside it.
    capacity-family the same three templates together on a family of generated clusters: profiles mixed, web,
                    production and batch at 300, 1,000 and 5,000 nodes (15 pods per node generated, the running
                    ones kept), seeds 3 and 5 (tuned on) and 11, 12 (held out), at the default --time-limit 30:
                    one table row each (seed/shape, nodes, greedy, podplan, bound, gap, status, wall s, limit s,
                    peak MiB, load).
    provision-200   `podplan generate --profile production --nodes 240 --pods 2000 --utilization 1.0`, then 40 of
                    its general-pool nodes removed with their pods (their Deployments' replicas come back pending):
                    200 nodes, about 2,000 pending pods, most of them beyond the nodes left; 6 node types priced
                    as on AWS (the cluster's own 4 types and 2 more shaped like its general pool).
                    goal: OPTIMAL or gap <= 1 % in <= 60 s, <= 2 GiB; the saving against cluster-autoscaler's
                    estimator (least-waste) is printed.

Each row writes its input once (benchmarks/results/inputs/, reused when present), then runs
`/usr/bin/time -v podplan ... -o json` as a subprocess: wall seconds are the whole process, peak RSS its maximum
resident set.

    nice -n 10 python benchmarks/bench_capacity.py
    python benchmarks/bench_capacity.py --rows capacity-1000
    python benchmarks/bench_capacity.py --rows capacity-family [--only mixed]
    python benchmarks/bench_capacity.py --shrink 10 --time-limit 10     # toy sizes (smoke test)
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
INPUTS = ROOT / "benchmarks" / "results" / "inputs"

TEMPLATES = {
    "api": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "api", "namespace": "default",
                                                            "labels": {"app": "bench-api"}},
            "spec": {"containers": [{"name": "api", "image": "api:1", "resources": {
                "requests": {"cpu": "500m", "memory": "1Gi"}}}],
                     "affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                         {"labelSelector": {"matchLabels": {"app": "bench-api"}},
                          "topologyKey": "kubernetes.io/hostname"}]}}}},
    "web": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web", "namespace": "default",
                                                            "labels": {"app": "bench-web"}},
            "spec": {"containers": [{"name": "web", "image": "web:1", "resources": {
                "requests": {"cpu": "250m", "memory": "512Mi"}}}],
                     "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
                                                    "whenUnsatisfiable": "DoNotSchedule",
                                                    "labelSelector": {"matchLabels": {"app": "bench-web"}}}]}},
    "worker": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "worker", "namespace": "default",
                                                               "labels": {"app": "bench-worker"}},
               "spec": {"containers": [{"name": "worker", "image": "worker:1", "resources": {
                   "requests": {"cpu": "1", "memory": "2Gi"}}}]}},
}
# AWS us-east-1 on-demand prices per hour (2025)
PRICES = {"m5.xlarge": 0.192, "m5.2xlarge": 0.384, "m5.4xlarge": 0.768, "r5.2xlarge": 0.504, "c5.2xlarge": 0.34,
          "g5.12xlarge": 5.672}
WORKLOAD_KINDS = {"Deployment", "ReplicaSet", "StatefulSet", "Job", "DaemonSet"}


def write_yaml(path: Path, docs: list[dict[str, Any]]) -> None:
    """YAML for the small files, a JSON v1 List for the clusters (.json: it loads several times faster)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    with tmp.open("w") as f:
        if path.suffix == ".json":
            json.dump({"apiVersion": "v1", "kind": "List", "items": docs}, f)
        else:
            yaml.safe_dump_all(docs, f, sort_keys=False)
    tmp.replace(path)


def capacity_input(nodes: int, pods: int, seed: int, profile: str = "mixed") -> Path:
    path = INPUTS / f"capacity-{profile}-{nodes}-{pods}-{seed}.json"
    if not path.exists():
        from podplan.models.generate import generate

        docs = [d for d in generate(nodes, pods, seed, profile, 0.6)
                if d["kind"] not in WORKLOAD_KINDS and not (d["kind"] == "Pod" and not d["spec"].get("nodeName"))]
        for d in docs:  # their controllers are not in the input: the running pods stay as they are
            if d["kind"] == "Pod":
                d["metadata"].pop("ownerReferences", None)
        write_yaml(path, docs)
    for name, body in TEMPLATES.items():
        write_yaml(INPUTS / f"template-{name}.yaml", [body])
    return path


def provision_input(nodes: int, pods: int, seed: int, drop: int) -> tuple[Path, Path]:
    path = INPUTS / f"provision-production-{nodes}-{pods}-{seed}-drop{drop}.json"
    types_path = INPUTS / f"provision-types-{nodes}-{seed}.yaml"
    if not path.exists() or not types_path.exists():
        from podplan.models.generate import generate

        docs = generate(nodes + drop, pods, seed, "production", 1.0)
        general = [d["metadata"]["name"] for d in docs if d["kind"] == "Node" and not d.get("spec", {}).get("taints")]
        gone = set(general[-drop:]) if drop else set()
        docs = [d for d in docs if not (d["kind"] == "Node" and d["metadata"]["name"] in gone)
                and not (d["kind"] == "Pod" and d["spec"].get("nodeName") in gone)]
        write_yaml(path, docs)
        write_yaml(types_path, [node_types(docs)])
    return path, types_path


def node_types(docs: list[dict[str, Any]]) -> dict[str, Any]:
    """The cluster's own instance types (labels, taints, allocatable of their first node) at AWS prices, plus
    m5.xlarge and c5.2xlarge shaped like its general pool: 6 types."""
    from podplan.models.generate import InstanceType, cpu_str

    first: dict[str, dict[str, Any]] = {}
    for d in docs:
        if d["kind"] == "Node":
            first.setdefault(d["metadata"]["labels"]["node.kubernetes.io/instance-type"], d)
    types = []
    drop = ("kubernetes.io/hostname", "topology.kubernetes.io/zone", "beta.kubernetes.io/instance-type")
    for name, node in first.items():
        labels = {k: v for k, v in node["metadata"]["labels"].items() if k not in drop}
        types.append({"name": name, "price": PRICES.get(name, 1.0), "zones": ["us-east-1a", "us-east-1b", "us-east-1c"],
                      "node": {"metadata": {"labels": labels}, "spec": {"taints": node.get("spec", {}).get("taints", [])},
                               "status": {"allocatable": node["status"]["allocatable"],
                                          "capacity": node["status"].get("capacity", node["status"]["allocatable"])}}})
    general = next(t for t in types if t["name"] == "m5.2xlarge")
    for name, cpu, mem in (("m5.xlarge", 4, 16), ("c5.2xlarge", 8, 16)):
        it = InstanceType(name, cpu, mem)
        labels = dict(general["node"]["metadata"]["labels"], **{"node.kubernetes.io/instance-type": name})
        labels["eks.amazonaws.com/nodegroup"] = "general-" + name.replace(".", "-")
        alloc = {"cpu": cpu_str(it.alloc_cpu_m), "memory": f"{it.alloc_mem_ki}Ki", "pods": "110"}
        types.append({"name": name, "price": PRICES[name], "zones": ["us-east-1a", "us-east-1b", "us-east-1c"],
                      "node": {"metadata": {"labels": labels}, "spec": {"taints": []},
                               "status": {"allocatable": alloc}}})
    return {"apiVersion": "podplan.io/v1alpha1", "kind": "NodeTypes", "types": types}


def timed_run(args: list[str]) -> tuple[dict[str, Any] | None, float, float, str]:
    """(the JSON document, wall seconds, peak RSS GiB, stderr tail) of `podplan ARGS -o json`."""
    podplan = shutil.which("podplan") or "podplan"
    cmd = ["/usr/bin/time", "-v", podplan, *args, "-o", "json"]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", proc.stderr)
    rss = int(m.group(1)) / 2**20 if m else float("nan")
    try:
        doc = json.loads(proc.stdout)
    except json.JSONDecodeError:
        doc = None
    tail = "\n".join(line for line in proc.stderr.splitlines() if not line.startswith("\t"))[-400:]
    return doc, wall, rss, tail


def load() -> str:
    one, five, _ = os.getloadavg()
    return f"load {one:.1f}/{five:.1f} on {os.cpu_count()} cores"


def row_capacity(shrink: int, limit: float) -> None:
    nodes, pods = 1000 // shrink, 15000 // shrink
    path = capacity_input(nodes, pods, 3)
    t = [str(INPUTS / f"template-{n}.yaml") for n in TEMPLATES]
    for mode in ([], ["--each"]):
        before = load()
        doc, wall, rss, tail = timed_run(["capacity", str(path), *sum((["--pod", x] for x in t), []),
                                          "--time-limit", str(limit), *mode])
        if doc is None:
            print(f"capacity-{nodes} {' '.join(mode) or 'together'}: FAILED\n{tail}")
            continue
        counts = ", ".join(f"{x['name']} {x['count']} (bound {x['bound']}, greedy {x['greedy']['count']})"
                           for x in doc["templates"])
        scale = f"scale {doc['scale']} (greedy {doc['scale_greedy']}); " if "scale" in doc else ""
        ok = doc["status"] == "OPTIMAL" and wall <= 30
        print(f"capacity-{nodes} {' '.join(mode) or 'together':8s} {doc['status']:9s} {scale}{counts}; "
              f"wall {wall:.1f}s, peak {rss:.2f} GiB; {before} -> {load()}; goal {'MET' if ok else 'NOT MET'}")


# (profile, nodes, seed, tuned on?) of the family; the held-out seeds were never run while tuning
FAMILY = [(profile, nodes, seed, seed in (3, 5)) for nodes in (300, 1000) for profile in ("mixed", "web", "production",
                                                                                          "batch")
          for seed in (3, 11)] + [("mixed", 1000, 5, True), ("mixed", 1000, 12, False), ("mixed", 5000, 3, True)]


def row_family(shrink: int, limit: float, only: str | None) -> None:
    t = [str(INPUTS / f"template-{n}.yaml") for n in TEMPLATES]
    head = ("seed/shape", "nodes", "greedy", "podplan", "bound", "gap", "status", "wall s", "limit s", "peak MiB",
            "load 1 min", "set")
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for profile, nodes, seed, tuned in FAMILY:
        name = f"{seed}/{profile}"
        if only and only not in (name, f"{name}-{nodes}", profile, str(nodes), f"{profile}-{nodes}"):
            continue
        n = max(3, nodes // shrink)
        path = capacity_input(n, 15 * n, seed, profile)
        doc, wall, rss, tail = timed_run(["capacity", str(path), *sum((["--pod", x] for x in t), []),
                                          "--time-limit", str(limit)])
        if doc is None:
            print(f"| {name} | {n} | FAILED: {tail.splitlines()[-1] if tail else ''} |", flush=True)
            continue
        gap = f"{doc['gap'] / doc['bound']:.1%}" if doc["bound"] else "0.0%"
        print(f"| {name} | {n:,} | {doc['scale_greedy']} | {doc['scale']} | {doc['bound']} | {gap} | {doc['status']} | "
              f"{wall:.1f} | {limit:g} | {rss * 1024:.0f} | {os.getloadavg()[0]:.1f} | "
              f"{'tuned' if tuned else 'held out'} |", flush=True)


def row_provision(shrink: int, limit: float) -> None:
    nodes, pods, drop = 200 // shrink, 2000 // shrink, 40 // shrink
    path, types = provision_input(nodes, pods, 1, drop)
    before = load()
    doc, wall, rss, tail = timed_run(["provision", str(path), "--node-types", str(types), "--time-limit", str(limit)])
    if doc is None:
        print(f"provision-{nodes}: FAILED\n{tail}")
        return
    add = ", ".join(f"{a['count']}x {a['type']} {a['zone']}" for a in doc["add"])
    est = doc["estimator"]
    est_add = ", ".join(f"{a['count']}x {a['type']} {a['zone']}" for a in est["add"])
    saving = doc["saving"]
    ok = (doc["status"] == "OPTIMAL" or doc["relative_gap"] <= 0.01) and wall <= limit * 1.1 + 5 and rss <= 2
    print(f"provision-{nodes}: {len(doc['placements'])} pending pods placed; {doc['status']} cost {doc['cost']} "
          f"({doc['nodes']} nodes: {add}); bound {doc['bound']}, gap {doc['relative_gap']:.2%}; "
          f"estimator {est['cost']} ({est['nodes']} nodes: {est_add}); "
          f"saving {saving['price'] if saving else '-'} and {saving['nodes'] if saving else '-'} node(s); "
          f"wall {wall:.1f}s, peak {rss:.2f} GiB; {before} -> {load()}; goal {'MET' if ok else 'NOT MET'}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", nargs="*", default=["capacity-1000", "provision-200"])
    ap.add_argument("--shrink", type=int, default=1, help="Divide every size by this (smoke tests).")
    ap.add_argument("--time-limit", type=float, default=None, help="Override each row's time limit.")
    ap.add_argument("--only", default=None, help="capacity-family: one profile, or one seed/profile[-nodes].")
    args = ap.parse_args()
    print(f"podplan capacity / provision benchmarks; {load()} (the machine is shared)")
    if "capacity-1000" in args.rows:
        row_capacity(args.shrink, args.time_limit or 30.0)
    if "capacity-family" in args.rows:
        row_family(args.shrink, args.time_limit or 30.0, args.only)
    if "provision-200" in args.rows:
        row_provision(args.shrink, args.time_limit or 60.0)


if __name__ == "__main__":
    main()
