"""The benchmark suite: greedy (kube-scheduler's loop) and optimal (CP-SAT) on generated clusters.

    python benchmarks/run.py                    # S, M, L
    python benchmarks/run.py --sizes S M        # a subset
    python benchmarks/run.py --xl               # also XL and SPREAD (5,000 nodes; minutes and GiBs)
    python benchmarks/run.py --out my.json --workers 2

Cases (fixed seeds; profile mixed; pods = every pod the input describes, existing + pending):

    S       50 nodes /    500 pods   seed 1   time limit  10 s
    M      500 nodes /  5,000 pods   seed 2   time limit  30 s
    L    1,000 nodes / 10,000 pods   seed 3   time limit  60 s
    XL   5,000 nodes / 50,000 pods   seed 4   time limit 300 s   (--xl)
    SPREAD 5,000 nodes, 5,000 pending replicas of one Deployment spread over zones (DoNotSchedule) and hosts
           (ScheduleAnyway), time limit 11 s: kube-scheduler's published 460 pods/s implies ~11 s (--xl)

Each (case, solver) runs in its own process, so its peak RSS (getrusage ru_maxrss) is that run's alone; it
includes generating and parsing the manifests, reported beside it as "RSS after load". greedy = simulate();
optimal = simulate() for the warm start, then solve() with the case's time limit. Pods placed and preference
are the verifier's (verify() on each plan, after the peak RSS is read). Wall time is the solver's own: greedy
is simulate(); optimal is solve() (the "e2e" column adds the greedy warm start it needs). pods/s = pods placed
/ wall ("-" for GREEDY_FALLBACK: those placements are greedy's). Gap: both rows are measured against the optimal run's proven bound — on pods placed (the bound on
placed pods) while a row places fewer, else on the preference score.

Prints one table and writes JSON (default benchmarks/results/run-<UTC time>.json; benchmarks/results/ is
gitignored).
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

GOALS = ("optimal never below greedy; L proven optimal or gap <= 0.5 % in <= 60 s and <= 4 GiB; "
         "XL gap <= 2 % in <= 300 s and <= 8 GiB; SPREAD placed optimally in < 11 s (2 cores)")


@dataclass(frozen=True)
class Case:
    name: str
    nodes: int
    pods: int
    seed: int
    time_limit: float
    profile: str = "mixed"


CASES = {
    "S": Case("S", 50, 500, 1, 10.0),
    "M": Case("M", 500, 5_000, 2, 30.0),
    "L": Case("L", 1_000, 10_000, 3, 60.0),
    "XL": Case("XL", 5_000, 50_000, 4, 300.0),
    "SPREAD": Case("SPREAD", 5_000, 5_000, 5, 11.0, profile="spread"),
}
DEFAULT = ("S", "M", "L")
XL = ("XL", "SPREAD")
ZONES = ("us-east-1a", "us-east-1b", "us-east-1c")


def spread_manifests(nodes: int, pods: int) -> list[dict[str, Any]]:
    """`nodes` identical 8-cpu nodes over 3 zones and one Deployment of `pods` replicas spread over zones
    (DoNotSchedule, maxSkew 1) and hosts (ScheduleAnyway, maxSkew 1): the optimum puts one per node."""
    out: list[dict[str, Any]] = [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "web"}}]
    for i in range(nodes):
        name = f"node-{i:05d}"
        out.append({"apiVersion": "v1", "kind": "Node",
                    "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name,
                                                          "topology.kubernetes.io/zone": ZONES[i % 3]}},
                    "status": {"allocatable": {"cpu": "7910m", "memory": "31Gi", "pods": "110"}}})
    labels = {"app": "frontend"}
    out.append({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "frontend", "namespace": "web"},
                "spec": {"replicas": pods, "selector": {"matchLabels": labels}, "template": {
                    "metadata": {"labels": labels},
                    "spec": {"containers": [{"name": "app", "image": "nginx:1.25",
                                             "resources": {"requests": {"cpu": "500m", "memory": "512Mi"}}}],
                             "topologySpreadConstraints": [
                                 {"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
                                  "whenUnsatisfiable": "DoNotSchedule", "labelSelector": {"matchLabels": labels}},
                                 {"maxSkew": 1, "topologyKey": "kubernetes.io/hostname",
                                  "whenUnsatisfiable": "ScheduleAnyway", "labelSelector": {"matchLabels": labels}}]}}}})
    return out


def rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB


def child(case: Case, solver: str, workers: int) -> dict[str, Any]:
    """One run in this process: load, place, read peak RSS, then verify."""
    from podplan.models.generate import generate
    from podplan.models.loader import parse_documents
    from podplan.optimizer.gangs import find_gangs
    from podplan.optimizer.greedy import simulate
    from podplan.optimizer.runner import SolverParams
    from podplan.optimizer.solve import solve
    from podplan.optimizer.verify import verify

    t0 = time.perf_counter()
    manifests = (spread_manifests(case.nodes, case.pods) if case.profile == "spread"
                 else generate(case.nodes, case.pods, case.seed, case.profile))
    cluster = parse_documents(manifests)
    del manifests
    load_s, rss_load = time.perf_counter() - t0, rss_mib()
    seen: set[str] = set()
    duplicates = sorted({p.key for p in cluster.pods + cluster.pending if p.key in seen or seen.add(p.key)})
    t1 = time.perf_counter()
    greedy = simulate(cluster, case.seed, gangs=find_gangs(cluster))
    greedy_s = time.perf_counter() - t1
    row: dict[str, Any] = {"case": case.name, "solver": solver, "nodes": len(cluster.nodes),
                           "pods": len(cluster.pods) + len(cluster.pending), "pending": len(cluster.pending),
                           "load_s": load_s, "rss_after_load_mib": rss_load, "workers": workers,
                           "time_limit": case.time_limit, "duplicate_pod_keys": duplicates}
    plan = greedy
    if solver == "optimal":
        plan = solve(cluster, SolverParams(time_limit=case.time_limit, workers=workers, seed=case.seed), None, greedy)
        row.update(wall_s=plan.wall_seconds, e2e_s=greedy_s + plan.wall_seconds, status=plan.status,
                   bound=plan.bound, gap=plan.gap, notes=list(plan.notes))
    else:
        row.update(wall_s=greedy_s, e2e_s=greedy_s, status=plan.status, bound=None, gap=None, notes=[])
    row["peak_rss_mib"] = rss_mib()
    report = verify(cluster, plan.placements)
    row.update(placed=report.placed, placed_by_priority={str(k): v for k, v in report.placed_by_priority.items()},
               preference=report.preference, terms=report.terms, verified=report.ok)
    return row


def run_child(case: Case, solver: str, workers: int) -> dict[str, Any]:
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", case.name, solver, "--workers", str(workers)]
    started = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    if proc.returncode != 0:
        return {"case": case.name, "solver": solver, "error": proc.stderr.strip().splitlines()[-1:] or ["failed"],
                "process_s": time.perf_counter() - started}
    row = json.loads(proc.stdout.strip().splitlines()[-1])
    row["process_s"] = time.perf_counter() - started
    return row


def gap_to(row: dict[str, Any], bound: dict[str, Any] | None) -> tuple[str, float | None]:
    """("placed" | "preference", relative gap) of a row against the optimal run's proven bound."""
    if not bound:
        return "", None
    placed_bound = int(bound.get("placed") or 0)
    if row["placed"] < placed_bound:
        return "placed", (placed_bound - row["placed"]) / max(1, placed_bound)
    pref = bound.get("preference")
    if pref is None:
        return "preference", None
    return "preference", abs(pref - row["preference"]) / max(1.0, abs(pref))


def by_priority_at_least(a: dict[str, int], b: dict[str, int]) -> bool:
    """Is placed-per-priority vector a >= b lexicographically (higher priority first)?"""
    for p in sorted({int(k) for k in a} | {int(k) for k in b}, reverse=True):
        x, y = a.get(str(p), 0), b.get(str(p), 0)
        if x != y:
            return x > y
    return True


def fmt_gap(kind: str, gap: float | None) -> str:
    if gap is None:
        return "-"
    return f"{gap:.2%}" + (" pods" if kind == "placed" else "")


def table(rows: list[dict[str, Any]]) -> str:
    head = ("case", "nodes", "pods", "pending", "solver", "status", "placed", "preference", "gap", "wall s",
            "e2e s", "pods/s", "peak RSS MiB", "RSS after load", "ok")
    lines = []
    for r in rows:
        if "error" in r:
            lines.append((r["case"], "", "", "", r["solver"], "ERROR", " ".join(r["error"]), *[""] * 8))
            continue
        lines.append((r["case"], r["nodes"], r["pods"], r["pending"], r["solver"], r["status"], r["placed"],
                      r["preference"], fmt_gap(r["gap_kind"], r["gap_to_bound"]), f"{r['wall_s']:.1f}",
                      f"{r['e2e_s']:.1f}", "-" if r["pods_per_s"] is None else f"{r['pods_per_s']:.0f}",
                      f"{r['peak_rss_mib']:.0f}",
                      f"{r['rss_after_load_mib']:.0f}", r["ok"]))
    cells = [[str(h) for h in head]] + [[str(c) for c in row] for row in lines]
    widths = [max(len(row[i]) for row in cells) for i in range(len(head))]
    return "\n".join("  ".join(c.rjust(w) if i not in (0, 4, 5) else c.ljust(w)
                               for i, (c, w) in enumerate(zip(row, widths))).rstrip() for row in cells)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", nargs="*", choices=list(CASES), help=f"cases to run (default {' '.join(DEFAULT)})")
    ap.add_argument("--xl", action="store_true", help="also run XL and SPREAD (5,000 nodes)")
    ap.add_argument("--workers", type=int, default=2, help="CP-SAT workers (default 2: the goals are for 2 cores)")
    ap.add_argument("--out", help="JSON output path (default benchmarks/results/run-<UTC time>.json)")
    ap.add_argument("--child", nargs=2, metavar=("CASE", "SOLVER"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child(CASES[args.child[0]], args.child[1], args.workers), default=str))
        return
    names = list(args.sizes or DEFAULT) + ([c for c in XL if c not in (args.sizes or ())] if args.xl else [])
    out = Path(args.out) if args.out else ROOT / "benchmarks" / "results" / time.strftime("run-%Y%m%dT%H%M%SZ.json",
                                                                                         time.gmtime())
    rows: list[dict[str, Any]] = []
    print(f"{os.cpu_count()} cpus, {args.workers} CP-SAT workers; goals: {GOALS}", file=sys.stderr)
    for name in names:
        case = CASES[name]
        pair = {s: run_child(case, s, args.workers) for s in ("greedy", "optimal")}
        bound = pair["optimal"].get("bound")
        for solver, row in pair.items():
            if "error" not in row:
                row["gap_kind"], row["gap_to_bound"] = gap_to(row, bound)
                # A fallback's placements are greedy's, not the solver's: no solver throughput to report.
                row["pods_per_s"] = (None if row["status"] == "GREEDY_FALLBACK"
                                     else row["placed"] / max(1e-9, row["wall_s"]))
                row["ok"] = "verified" if row["verified"] else "INVALID"
            if solver == "optimal" and "error" not in row and "error" not in pair["greedy"]:
                row["never_below_greedy"] = by_priority_at_least(row["placed_by_priority"],
                                                                 pair["greedy"]["placed_by_priority"]) and (
                    row["placed_by_priority"] != pair["greedy"]["placed_by_priority"]
                    or row["preference"] >= pair["greedy"]["preference"])
                if not row["never_below_greedy"]:
                    row["ok"] += ", BELOW GREEDY"
            rows.append(row)
        dups = pair["greedy"].get("duplicate_pod_keys")
        if dups:
            print(f"{name}: the input names {len(dups)} pod(s) twice, e.g. {dups[0]}", file=sys.stderr)
        print(f"{name} done", file=sys.stderr, flush=True)
    print(table(rows))
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"goals": GOALS, "cpus": os.cpu_count(), "workers": args.workers,
                               "cases": {n: asdict(CASES[n]) for n in names}, "rows": rows}, indent=2, default=str))
    print(f"wrote {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
