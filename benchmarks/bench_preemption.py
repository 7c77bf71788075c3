"""Greedy preemption (`simulate`) against optimal batch preemption (`solve --preempt`) on a full cluster.

The cluster: N nodes of 8 CPU / 32 GiB, each running 7 pods of 1 CPU / 4 GiB from seven ReplicaSets, at priority
0, 100 or 500 (seeded), started at different times; three PDBs (minAvailable 90%) over three of the ReplicaSets;
then P pending pods of priority 1000 asking 1.5, 2 or 3 CPU. Every pending pod needs victims. Both plans are
verified; the table shows the high-priority pods placed, the pods of each lower priority left running, victims,
PDB overruns (computed against the input's budgets) and the wall time.

    python benchmarks/bench_preemption.py                      # 500 nodes, 300 pending pods, 60 s for solve
    python benchmarks/bench_preemption.py --nodes 100 --pods 60 --time-limit 20
"""
from __future__ import annotations

import argparse
import random
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from podplan.models.objects import Cluster, Node, OwnerRef, Pod, PodDisruptionBudget  # noqa: E402
from podplan.models.selectors import LabelSelector  # noqa: E402
from podplan.optimizer.defaultpreemption.batch import solve_preempt  # noqa: E402
from podplan.optimizer.disruption import budget, guards, pod_ready  # noqa: E402
from podplan.optimizer.greedy import simulate  # noqa: E402
from podplan.optimizer.pipeline import check  # noqa: E402
from podplan.optimizer.plan import Plan  # noqa: E402
from podplan.optimizer.runner import SolverParams  # noqa: E402

GI = 2**30


def full_cluster(nodes: int, pending: int, seed: int) -> Cluster:
    rng = random.Random(seed)
    node_objs = tuple(Node(f"n{i}", {"kubernetes.io/hostname": f"n{i}", "topology.kubernetes.io/zone": f"z{i % 3}"},
                           allocatable={"cpu": 8000, "memory": 32 * GI, "pods": 110}) for i in range(nodes))
    pods, order = [], 0
    for i in range(nodes):
        for j in range(7):
            pods.append(Pod("default", f"run-{i}-{j}", labels={"app": f"a{j}"}, priority=rng.choice((0, 100, 500)),
                            owner_refs=(OwnerRef("ReplicaSet", f"rs{j}", controller=True),), node_name=f"n{i}",
                            requests={"cpu": 1000, "memory": 4 * GI}, nonzero_requests={"cpu": 1000, "memory": 4 * GI},
                            start_time=f"2024-01-01T00:{j:02d}:{rng.randrange(60):02d}Z", order=order))
            order += 1
    waiting = []
    for k in range(pending):
        cpu = rng.choice((1500, 2000, 3000))
        waiting.append(Pod("default", f"hi-{k}", labels={"app": "hi"}, priority=1000, order=order,
                           requests={"cpu": cpu, "memory": 4 * GI}, nonzero_requests={"cpu": cpu, "memory": 4 * GI}))
        order += 1
    pdbs = tuple(PodDisruptionBudget("default", f"pdb{j}", LabelSelector((("app", f"a{j}"),)), min_available="90%")
                 for j in range(3))
    return Cluster(nodes=node_objs, pods=tuple(pods), pending=tuple(waiting), pdbs=pdbs)


def row(name: str, cluster: Cluster, plan: Plan, seconds: float) -> str:
    check(cluster, plan)
    high = sum(1 for k in plan.placements if k.startswith("default/hi-"))
    left = Counter(p.priority for p in cluster.pods if p.key not in plan.removed)
    healthy = [(p, pod_ready(p)) for p in cluster.pods]
    over = sum(max(0, sum(1 for p in cluster.pods if p.key in plan.removed and guards(b, p))
                   - budget(b, healthy, ()).allowed) for b in cluster.pdbs)
    return (f"{name:<40} {high:>5} {left[500]:>6} {left[100]:>6} {left[0]:>6} {len(plan.removed):>8} {over:>6} "
            f"{plan.status:>9} {seconds:>7.1f}s")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nodes", type=int, default=500)
    ap.add_argument("--pods", type=int, default=300, help="pending high-priority pods")
    ap.add_argument("--time-limit", type=float, default=60.0)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    cluster = full_cluster(args.nodes, args.pods, args.seed)
    print(f"{args.nodes} nodes, {len(cluster.pods)} running pods, {args.pods} pending pods of priority 1000")
    print(f"{'plan':<40} {'high':>5} {'p500':>6} {'p100':>6} {'p0':>6} {'victims':>8} {'pdb+':>6} {'status':>9} {'wall':>8}")
    started = time.perf_counter()
    greedy = simulate(cluster, args.seed, preemption=True)
    print(row("simulate (kube-scheduler)", cluster, greedy, time.perf_counter() - started))
    for allow in (False, True):
        started = time.perf_counter()
        plan = solve_preempt(cluster, SolverParams(time_limit=args.time_limit, seed=args.seed),
                             deadline=started + args.time_limit, allow_pdb_violations=allow)
        name = "solve --preempt" + (" --allow-pdb-violations" if allow else "")
        print(row(name, cluster, plan, time.perf_counter() - started))


if __name__ == "__main__":
    main()
