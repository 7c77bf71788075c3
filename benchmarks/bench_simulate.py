"""Throughput of `podplan simulate` (the kube-scheduler loop: vectorized.VectorScheduler, or with --plain the
per-node reference greedy.Scheduler), in pods/s, beside kube-scheduler's own.

Workloads follow kube-scheduler's scheduler_perf suite (test/integration/scheduler_perf/config): nodes with
hostname and zone labels, some pods already running, then a batch of pending pods of one kind:
- basic:         plain pods (SchedulingBasic);
- node-affinity: required node affinity to half the zones (SchedulingNodeAffinity);
- spread:        zone topology spread, DoNotSchedule maxSkew 1 (TopologySpreading);
- preferred-spread: the same, ScheduleAnyway (PreferredTopologySpreading);
- anti-affinity: required anti-affinity on hostname among the pending pods (SchedulingPodAntiAffinity);
- pod-affinity:  required affinity on zone to pods already running there (SchedulingPodAffinity);
- mix4:          basic, spread, anti-affinity and pod-affinity, a quarter each, interleaved;
- gen-web, gen-mixed: realistic clusters from models.generate (profiles web and mixed: Deployments with zone
  spread and preferred anti-affinity, caches co-located by required affinity, StatefulSets with hostname
  anti-affinity, DaemonSets, Jobs, gangs; part already running), when models/generate.py is present.
Pods/s = pending pods / CPU time of the scheduling loop and the scheduler's construction (state built from the
input first, not timed); CPU
time, because the loop is single-threaded and a busy machine stretches wall time (printed beside it).
The kube-scheduler workloads are built here as manifests and read through models.loader.parse_documents,
like any input (models.generate has no such single-rule profiles).

    python benchmarks/bench_simulate.py                 # 500 and 5,000 nodes
    python benchmarks/bench_simulate.py --nodes 500 --profile spread --pods 200
    python benchmarks/bench_simulate.py --profile-code basic   # cProfile top functions
    python benchmarks/bench_simulate.py --plain --nodes 5000   # the reference loop
"""
from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from podplan.models.loader import parse_documents  # noqa: E402
from podplan.models.objects import Cluster  # noqa: E402
from podplan.optimizer.greedy import Scheduler, queue_order  # noqa: E402
from podplan.optimizer.state import ClusterState  # noqa: E402
from podplan.optimizer.vectorized import VectorScheduler  # noqa: E402

PROFILES = ("basic", "node-affinity", "spread", "preferred-spread", "anti-affinity", "pod-affinity", "mix4", "gen-web",
            "gen-mixed")
# kube-scheduler's published thresholds at 5,000 nodes (scheduler_perf), pods/s.
UPSTREAM_5000 = {"basic": 680, "node-affinity": 220, "spread": 460, "preferred-spread": 340, "anti-affinity": 60,
                 "pod-affinity": 35}
ZONES = 10
ZONE_KEY = "topology.kubernetes.io/zone"
HOST_KEY = "kubernetes.io/hostname"


def node(i: int) -> dict[str, Any]:
    name = f"node-{i}"
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {HOST_KEY: name, ZONE_KEY: f"zone-{i % ZONES}"}},
            "status": {"allocatable": {"cpu": "32", "memory": "128Gi", "pods": "110"}}}


def pod(name: str, kind: str, node_name: str = "") -> dict[str, Any]:
    labels: dict[str, str] = {"app": kind}
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "pause",
                                            "resources": {"requests": {"cpu": "100m", "memory": "500Mi"}}}]}
    if kind == "node-affinity":
        spec["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": ZONE_KEY, "operator": "In",
                                   "values": [f"zone-{z}" for z in range(0, ZONES, 2)]}]}]}}}
    elif kind in ("spread", "preferred-spread"):
        labels["app"] = "spread"
        spec["topologySpreadConstraints"] = [{"maxSkew": 1, "topologyKey": ZONE_KEY,
                                              "whenUnsatisfiable": "DoNotSchedule" if kind == "spread"
                                              else "ScheduleAnyway",
                                              "labelSelector": {"matchLabels": {"app": "spread"}}}]
    elif kind == "anti-affinity":
        spec["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"topologyKey": HOST_KEY, "labelSelector": {"matchLabels": {"app": "anti-affinity"}}}]}}
    elif kind == "pod-affinity":
        spec["affinity"] = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"topologyKey": ZONE_KEY, "labelSelector": {"matchLabels": {"app": "affinity-target"}}}]}}
    if node_name:
        spec["nodeName"] = node_name
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default", "labels": labels},
            "spec": spec}


def build(nodes: int, pods: int, profile: str) -> Cluster:
    """`nodes` nodes, nodes/5 running pods (plain, plus affinity targets in every other zone for
    pod-affinity), then `pods` pending pods of `profile`."""
    docs = [node(i) for i in range(nodes)]
    for i in range(nodes // 5):
        docs.append(pod(f"init-{i}", "basic", f"node-{(i * 7) % nodes}"))
    kinds = [profile] if profile != "mix4" else ["basic", "spread", "anti-affinity", "pod-affinity"]
    if "pod-affinity" in kinds:
        for z in range(0, ZONES, 2):
            target = pod(f"target-{z}", "basic", f"node-{z}")
            target["metadata"]["labels"] = {"app": "affinity-target"}
            docs.append(target)
    for i in range(pods):
        docs.append(pod(f"pending-{i}", kinds[i % len(kinds)]))
    return parse_documents(docs, f"<bench {profile} {nodes}>")


def instance(nodes: int, pods: int, profile: str) -> Cluster | None:
    """The workload's cluster; None for a generated one when models/generate.py is absent."""
    if not profile.startswith("gen-"):
        return build(nodes, pods, profile)
    try:
        from podplan.models.generate import generate
    except ImportError:
        return None
    # generate() counts every pod (running + pending): ask for about twice the pending pods wanted.
    return parse_documents(generate(nodes, 2 * pods, 0, profile.removeprefix("gen-")), f"<generate {profile}>")


def run(cluster: Cluster, plain: bool = False) -> tuple[float, float, int]:
    """(wall seconds, CPU seconds, pods placed) of the scheduling loop alone (arrays built in it, timed)."""
    state = ClusterState.from_cluster(cluster)
    started, cpu = time.perf_counter(), time.process_time()
    sched = Scheduler(state, seed=0) if plain else VectorScheduler(state, seed=0)
    placed = sum(1 for p in queue_order(cluster.pending) if sched.schedule(p)[0] is not None)
    return time.perf_counter() - started, time.process_time() - cpu, placed


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, nargs="*", default=[500, 5000])
    ap.add_argument("--profile", choices=PROFILES, nargs="*", default=list(PROFILES))
    ap.add_argument("--pods", type=int, default=0, help="pending pods (default: 500 at <=500 nodes, else 1000)")
    ap.add_argument("--plain", action="store_true", help="the plain per-node loop (greedy.Scheduler), the reference")
    ap.add_argument("--profile-code", choices=PROFILES, help="print cProfile's top functions for one workload")
    args = ap.parse_args()
    if args.profile_code:
        n = args.nodes[-1]
        cluster = instance(n, args.pods or (500 if n <= 500 else 1000), args.profile_code)
        if cluster is None:
            sys.exit("models/generate.py is not there")
        prof = cProfile.Profile()
        prof.runcall(run, cluster, args.plain)
        pstats.Stats(prof).sort_stats("cumulative").print_stats(30)
        return
    scheduler = "plain" if args.plain else "vectorized"
    print(f"cores: {os.cpu_count()}  python: {sys.version.split()[0]}  scheduler: {scheduler}")
    print(f"load average: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    header = (f"{'nodes':>6}  {'workload':<14} {'running':>7} {'pending':>7} {'placed':>6} {'wall s':>7} {'cpu s':>7}"
              f" {'pods/s':>7} {'kube-scheduler':>14}")
    print(header)
    print("-" * len(header))
    for n in args.nodes:
        for profile in args.profile:
            cluster = instance(n, args.pods or (500 if n <= 500 else 1000), profile)
            if cluster is None:
                continue
            wall, cpu, placed = run(cluster, args.plain)
            count = len(cluster.pending)
            upstream = str(UPSTREAM_5000[profile]) if n == 5000 and profile in UPSTREAM_5000 else "-"
            print(f"{n:>6}  {profile:<14} {len(cluster.pods):>7} {count:>7} {placed:>6} {wall:>7.2f} {cpu:>7.2f} "
                  f"{count / cpu:>7.0f} {upstream:>14}", flush=True)

if __name__ == "__main__":
    main()
