"""podplan whatif at scale: engines against one another, and a long sweep.

    python benchmarks/bench_whatif.py engines   # a generated 1,000-node cluster, a 12-scenario file:
                                                # sequential (one process) vs the local pool vs Ray: wall,
                                                # ratio to sequential, identical tables, peak memory per worker
    python benchmarks/bench_whatif.py sweep     # 100 scenarios on a generated 300-node cluster (Ray by default):
                                                # wall, peak memory per worker, the bases' serialised size and
                                                # how many times they were put into the object store

Tables are compared without the WALL column (what two runs of the same input and seed must print alike).
Each run is preceded and followed by the load average: on a shared machine the ratios say little without it.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT.parent))  # run from a checkout: `podplan` is this folder (pyproject's package-dir)

from podplan.models.generate import dump_yaml, generate  # noqa: E402
from podplan.optimizer.whatif import Settings, Source, load_bases, load_scenarios, prepare, run  # noqa: E402
from podplan.optimizer.whatif.render import render_table  # noqa: E402

HEAD = {"apiVersion": "podplan.io/v1alpha1", "kind": "Scenarios"}
TYPE = "node.kubernetes.io/instance-type"
ZONE = "topology.kubernetes.io/zone"


def load() -> str:
    return "%.2f %.2f %.2f" % os.getloadavg()


def write_cluster(folder: Path, nodes: int, pods: int, seed: int) -> Path:
    path = folder / f"cluster-{nodes}.yaml"
    with path.open("w", encoding="utf-8") as f:
        dump_yaml(generate(nodes, pods, seed, "mixed", 0.6), f)
    return path


def _types(cluster: Any) -> list[str]:
    counts: dict[str, int] = {}
    for n in cluster.nodes:
        t = n.labels.get(TYPE, "")
        counts[t] = counts.get(t, 0) + 1
    return sorted(counts, key=lambda t: (-counts[t], t))


def twelve(folder: Path, cluster: Any) -> Path:
    """Twelve what-ifs a platform engineer asks of one cluster."""
    types = _types(cluster)
    deploy = next(w for w in cluster.workloads if w.kind == "Deployment")
    tenant = folder / "tenant.yaml"
    tenant.write_text(yaml.safe_dump({
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "tenant", "namespace": "default"},
        "spec": {"replicas": 40, "selector": {"matchLabels": {"app": "tenant"}},
                 "template": {"metadata": {"labels": {"app": "tenant"}}, "spec": {"containers": [
                     {"name": "t", "image": "t", "resources": {"requests": {"cpu": "500m", "memory": "1Gi"}}}]}}}}))
    sel = lambda t: {"matchLabels": {TYPE: t}}  # noqa: E731
    body = {**HEAD, "scenarios": [
        {"name": "baseline"},
        {"name": f"three-fewer-{types[0]}", "removeNodes": {"selector": sel(types[0]), "count": 3}},
        {"name": f"ten-fewer-{types[1]}", "removeNodes": {"selector": sel(types[1]), "count": 10}},
        {"name": f"four-more-{types[0]}", "addNodes": {"like": sel(types[0]), "count": 4}},
        {"name": f"twenty-more-{types[1]}", "addNodes": {"like": sel(types[1]), "count": 20}},
        {"name": "deployment-doubled", "scale": {"workload": deploy.key, "replicas": 2 * max(1, deploy.replicas)}},
        {"name": "new-tenant", "addManifests": "tenant.yaml"},
        {"name": "most-allocated", "schedulerConfig": str(ROOT / "instances" / "scheduler-configs" /
                                                          "most-allocated.yaml")},
        {"name": f"no-{types[-1]}", "removeNodes": {"selector": sel(types[-1])}},
    ], "generators": [{"name": "each-zone", "removeNodes": {"eachValueOf": ZONE}}]}
    path = folder / "twelve.yaml"
    path.write_text(yaml.safe_dump(body, sort_keys=False))
    return path


def hundred(folder: Path, cluster: Any, count: int) -> Path:
    """`count` scenarios: k fewer / k more nodes of the two commonest types, and deployments scaled."""
    types = _types(cluster)
    deploys = [w for w in cluster.workloads if w.kind == "Deployment"]
    out: list[dict[str, Any]] = []
    k = 0
    while len(out) < count:
        k += 1
        for t in types[:2]:
            out.append({"name": f"minus-{k}-{t}", "removeNodes": {"selector": {"matchLabels": {TYPE: t}}, "count": k}})
            out.append({"name": f"plus-{k}-{t}", "addNodes": {"like": {"matchLabels": {TYPE: t}}, "count": k}})
        d = deploys[k % len(deploys)]
        out.append({"name": f"scale-{k}-{d.name}", "scale": {"workload": d.key, "replicas": d.replicas + k}})
    path = folder / "sweep.yaml"
    path.write_text(yaml.safe_dump({**HEAD, "scenarios": out[:count]}, sort_keys=False))
    return path


def measure(bases: Any, tasks: Any, settings: Settings, engine: str, parallel: int) -> dict[str, Any]:
    before = load()
    t0 = time.perf_counter()
    outcome = run(bases, tasks, settings, engine=engine, parallel=parallel)
    wall = time.perf_counter() - t0
    rows = [outcome.rows[t.position] for t in tasks]
    rss = list(outcome.worker_rss.values())
    return {"engine": engine, "parallel": parallel, "wall": wall, "rows": rows,
            "table": render_table(rows, timing=False), "rss_max": max(rss) / 2**20 if rss else 0.0,
            "rss_mean": sum(rss) / len(rss) / 2**20 if rss else 0.0, "workers": len(rss),
            "bases_bytes": outcome.bases_bytes, "puts": outcome.puts, "load": f"{before} -> {load()}",
            "errors": sum(1 for r in rows if r.get("status") == "ERROR"),
            "statuses": ",".join(sorted({str(r.get("status")) for r in rows}))}


def engines_part(args: argparse.Namespace, folder: Path) -> None:
    path = write_cluster(folder, args.nodes, args.pods, args.seed)
    t0 = time.perf_counter()
    bases = load_bases([Source(path.name, (str(path),))], keep_docs=True)
    read = time.perf_counter() - t0
    scen = load_scenarios(str(twelve(folder, bases[0].cluster)))
    tasks = prepare(bases, scen)
    settings = Settings(time_limit=args.time_limit, seed=args.seed)
    c = bases[0].cluster
    print(f"cluster: {len(c.nodes)} nodes, {len(c.pods)} running and {len(c.pending)} pending pods; "
          f"{len(tasks)} scenarios; read once in {read:.1f}s; time limit {args.time_limit:g}s per scenario; "
          f"{os.cpu_count()} cores; load {load()}")
    runs = [measure(bases, tasks, settings, "local", 1)]  # sequential: one scenario after another
    for engine in args.engines.split(","):
        runs.append(measure(bases, tasks, settings, engine, args.parallel))
    seq = runs[0]
    print("\n| engine | parallel | wall s | / sequential | same table as sequential | statuses | workers | "
          "peak RSS MiB per worker (max / mean) | load before -> after |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in runs:
        print(f"| {r['engine']} | {r['parallel']} | {r['wall']:.1f} | {r['wall'] / seq['wall']:.0%} | "
              f"{'yes' if r['table'] == seq['table'] else 'NO'} | {r['statuses']} | {r['workers']} | "
              f"{r['rss_max']:.0f} / {r['rss_mean']:.0f} | {r['load']} |")
    for r in runs[1:]:
        if r["table"] != seq["table"]:
            print(f"\n{r['engine']} x{r['parallel']} table differs from sequential:\n{r['table']}\n--- sequential:\n"
                  f"{seq['table']}")
    print("\n" + render_table(seq["rows"]))


def sweep_part(args: argparse.Namespace, folder: Path) -> None:
    path = write_cluster(folder, args.nodes, args.pods, args.seed)
    bases = load_bases([Source(path.name, (str(path),))], keep_docs=True)
    tasks = prepare(bases, load_scenarios(str(hundred(folder, bases[0].cluster, args.scenarios))))
    settings = Settings(time_limit=args.time_limit, seed=args.seed)
    c = bases[0].cluster
    print(f"cluster: {len(c.nodes)} nodes, {len(c.pods)} running and {len(c.pending)} pending pods; "
          f"{len(tasks)} scenarios; time limit {args.time_limit:g}s per scenario; {os.cpu_count()} cores")
    print("\n| engine | parallel | scenarios | errors | wall s | workers | peak RSS MiB per worker (max / mean) | "
          "bases serialised MiB | puts into the object store | statuses | load before -> after |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for engine in args.engines.split(","):
        r = measure(bases, tasks, settings, engine, args.parallel)
        size = f"{r['bases_bytes'] / 2**20:.1f}" if r["bases_bytes"] else "0 (inherited by fork)"
        print(f"| {engine} | {args.parallel} | {len(tasks)} | {r['errors']} | {r['wall']:.1f} | {r['workers']} | "
              f"{r['rss_max']:.0f} / {r['rss_mean']:.0f} | {size} | {r['puts']} | {r['statuses']} | {r['load']} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("part", choices=["engines", "sweep"])
    ap.add_argument("--nodes", type=int, default=None, help="default: 1000 (engines), 300 (sweep)")
    ap.add_argument("--pods", type=int, default=None, help="default: 3 per node")
    ap.add_argument("--scenarios", type=int, default=100, help="sweep: how many")
    ap.add_argument("--time-limit", type=float, default=None, help="per scenario; default 30 (engines), 10 (sweep)")
    ap.add_argument("--engines", default=None, help="comma-separated; default local,ray (engines), ray (sweep)")
    ap.add_argument("--parallel", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    engines = args.part == "engines"
    args.nodes = args.nodes or (1000 if engines else 300)
    args.pods = args.pods or 3 * args.nodes
    args.time_limit = args.time_limit or (30.0 if engines else 10.0)
    args.engines = args.engines or ("local,ray" if engines else "ray")
    with tempfile.TemporaryDirectory() as tmp:
        (engines_part if engines else sweep_part)(args, Path(tmp))


if __name__ == "__main__":
    main()
