"""Throughput of the simulator (kube-scheduler's loop), in pods/s, beside kube-scheduler's scheduler_perf thresholds.

The six workloads mirror kube-scheduler's scheduler_perf suite (test/integration/scheduler_perf/config/
performance-config.yaml, its 5000Nodes workloads and pod templates): nodes of 4 cpu / 32 GiB / 110 pods, some
pods already running (bound here round-robin instead of scheduled first), then the measured pending pods, all
asking 100m cpu / 500Mi memory:

    workload          upstream test                    nodes' zone label   running  measured  measured pods carry
    basic             SchedulingBasic                  none                1,000    1,000     nothing
    node-affinity     SchedulingNodeAffinity           zone1               5,000    1,000     required zone In [zone1, zone2]
    spread            TopologySpreading                moon-1..3           5,000    2,000     zone spread maxSkew 5, DoNotSchedule
    preferred-spread  PreferredTopologySpreading       moon-1..3           5,000    2,000     zone spread maxSkew 5, ScheduleAnyway
    anti-affinity     SchedulingPodAntiAffinity        none                1,000    1,000     required hostname anti-affinity
    affinity          SchedulingPodAffinity            zone1               5,000    1,000     required zone affinity

(running and measured at 5,000 nodes; running pods scale with --nodes, measured pods are --pods when given). The
running pods of anti-affinity and affinity carry the same rule, in namespace sched-0, the measured ones in
sched-1; their terms name both namespaces, as upstream.

Timed: the scheduling loop and the scheduler's construction (the cluster state is built first, not timed);
the vectorized scheduler when the code has one, the per-node reference loop with --plain. pods/s = pods placed /
CPU seconds of the loop (single-threaded; the machine is shared, so wall time, printed beside it, stretches
with other work). "met" compares that rate with 2x kube-scheduler's threshold (the scale goal).

    python benchmarks/bench_simulate.py                               # the six at 5,000 nodes
    python benchmarks/bench_simulate.py --nodes 500 --workloads basic spread --pods 200
    python benchmarks/bench_simulate.py --profile-code spread         # cProfile's top functions
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

try:  # the exact vectorized scheduler; an older tree lacks it, so fall back to the reference loop
    from podplan.optimizer.vectorized import VectorScheduler  # noqa: E402
except ImportError:  # pragma: no cover - gone once merged
    VectorScheduler = None  # type: ignore[assignment,misc]

ZONE_KEY = "topology.kubernetes.io/zone"
HOST_KEY = "kubernetes.io/hostname"
UPSTREAM_NODES = 5000
# name: (zone labels of the nodes, running pods at 5,000 nodes, measured pods, kube-scheduler's threshold pods/s)
WORKLOADS: dict[str, tuple[tuple[str, ...], int, int, int]] = {
    "basic": ((), 1000, 1000, 680),
    "node-affinity": (("zone1",), 5000, 1000, 220),
    "spread": (("moon-1", "moon-2", "moon-3"), 5000, 2000, 460),
    "preferred-spread": (("moon-1", "moon-2", "moon-3"), 5000, 2000, 340),
    "anti-affinity": ((), 1000, 1000, 60),
    "affinity": (("zone1",), 5000, 1000, 35),
}
COLUMNS = ("nodes", "workload", "running", "pending", "placed", "wall s", "cpu s", "pods/s", "threshold", "2x goal",
           "met")


def node(i: int, zones: tuple[str, ...]) -> dict[str, Any]:
    name = f"node-{i}"
    labels = {HOST_KEY: name}
    if zones:
        labels[ZONE_KEY] = zones[i % len(zones)]
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels},
            "status": {"allocatable": {"cpu": "4", "memory": "32Gi", "pods": "110"}}}


def pod(name: str, workload: str, namespace: str = "default", node_name: str = "") -> dict[str, Any]:
    """A pod of the workload's upstream template (the running pods of spread workloads are plain ones)."""
    labels: dict[str, str] = {}
    spec: dict[str, Any] = {}
    if workload in ("spread", "preferred-spread"):
        labels["color"] = "blue"
        spec["topologySpreadConstraints"] = [{
            "maxSkew": 5, "topologyKey": ZONE_KEY, "labelSelector": {"matchLabels": {"color": "blue"}},
            "whenUnsatisfiable": "DoNotSchedule" if workload == "spread" else "ScheduleAnyway"}]
    elif workload == "node-affinity":
        spec["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": ZONE_KEY, "operator": "In", "values": ["zone1", "zone2"]}]}]}}}
    elif workload in ("anti-affinity", "affinity"):
        color = "green" if workload == "anti-affinity" else "blue"
        labels["color"] = color
        term = {"labelSelector": {"matchLabels": {"color": color}}, "namespaces": ["sched-0", "sched-1"],
                "topologyKey": HOST_KEY if workload == "anti-affinity" else ZONE_KEY}
        kind = "podAntiAffinity" if workload == "anti-affinity" else "podAffinity"
        spec["affinity"] = {kind: {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}
    spec["containers"] = [{"name": "pause", "image": "registry.k8s.io/pause:3.10",
                           "ports": [{"containerPort": 80}],
                           "resources": {"requests": {"cpu": "100m", "memory": "500Mi"},
                                         "limits": {"cpu": "100m", "memory": "500Mi"}}}]
    if node_name:
        spec["nodeName"] = node_name
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": namespace, "labels": labels}, "spec": spec}


def build(workload: str, nodes: int, pods: int = 0) -> Cluster:
    """The workload at `nodes` nodes: running pods scaled from upstream's 5,000-node count, `pods` measured
    pods (upstream's count when 0)."""
    zones, running_5000, measured, _ = WORKLOADS[workload]
    running = running_5000 * nodes // UPSTREAM_NODES
    measured = pods or measured
    namespaced = workload in ("anti-affinity", "affinity")
    docs: list[dict[str, Any]] = [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}
                                  for ns in ("sched-0", "sched-1") if namespaced]
    docs += [node(i, zones) for i in range(nodes)]
    init_kind = workload if workload in ("node-affinity", "anti-affinity", "affinity") else "basic"
    docs += [pod(f"init-{i}", init_kind, "sched-0" if namespaced else "default", f"node-{i % nodes}")
             for i in range(running)]
    docs += [pod(f"pod-{i}", workload, "sched-1" if namespaced else "default") for i in range(measured)]
    return parse_documents(docs, f"<scheduler_perf {workload} {nodes} nodes>")


def run(cluster: Cluster, plain: bool = False) -> tuple[float, float, int]:
    """(wall seconds, CPU seconds, pods placed) of the scheduling loop, the scheduler's construction included
    (the vectorized one builds its node arrays there); the cluster state is built first, not timed."""
    state = ClusterState.from_cluster(cluster)
    started, cpu = time.perf_counter(), time.process_time()
    sched = Scheduler(state, seed=0) if plain or VectorScheduler is None else VectorScheduler(state, seed=0)
    placed = sum(1 for p in queue_order(cluster.pending) if sched.schedule(p)[0] is not None)
    return time.perf_counter() - started, time.process_time() - cpu, placed


def row(workload: str, nodes: int, pods: int, plain: bool = False) -> dict[str, Any]:
    cluster = build(workload, nodes, pods)
    wall, cpu, placed = run(cluster, plain)
    threshold = WORKLOADS[workload][3]
    rate = placed / cpu if cpu > 0 else float("inf")
    at_scale = nodes == UPSTREAM_NODES
    return {"nodes": f"{nodes:,}", "workload": workload, "running": f"{len(cluster.pods):,}",
            "pending": f"{len(cluster.pending):,}", "placed": f"{placed:,}", "wall s": f"{wall:.2f}",
            "cpu s": f"{cpu:.2f}", "pods/s": f"{rate:,.0f}", "threshold": f"{threshold:,}",
            "2x goal": f"{2 * threshold:,}",
            "met": ("met" if rate >= 2 * threshold else "not met") if at_scale else "- (not 5,000 nodes)"}


def markdown_row(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nodes", type=int, nargs="*", default=[UPSTREAM_NODES])
    ap.add_argument("--workloads", choices=list(WORKLOADS), nargs="*", default=list(WORKLOADS))
    ap.add_argument("--pods", type=int, default=0, help="measured pods (default: upstream's count)")
    ap.add_argument("--profile-code", choices=list(WORKLOADS), help="print cProfile's top functions for one workload")
    ap.add_argument("--plain", action="store_true", help="time the per-node reference loop (greedy.Scheduler)")
    args = ap.parse_args()
    if args.profile_code:
        cluster = build(args.profile_code, args.nodes[-1], args.pods)
        prof = cProfile.Profile()
        prof.runcall(run, cluster, args.plain)
        pstats.Stats(prof).sort_stats("cumulative").print_stats(30)
        return
    loop = "greedy.Scheduler (reference)" if args.plain or VectorScheduler is None else "vectorized.VectorScheduler"
    print(f"scheduler: {loop}  cores: {os.cpu_count()}  python: {sys.version.split()[0]}  "
          f"load average at start: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    print(markdown_row(list(COLUMNS)))
    print(markdown_row(["---" if c in ("workload", "met") else "---:" for c in COLUMNS]))
    for n in args.nodes:
        for workload in args.workloads:
            r = row(workload, n, args.pods, args.plain)
            print(markdown_row([str(r[c]) for c in COLUMNS]), flush=True)
    print(f"load average at end: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
