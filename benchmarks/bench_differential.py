"""podplan's simulator against the real kube-scheduler on many random clusters: differences per kind.

Each cluster (benchmarks/differential.py: 3-60 nodes, 10-150 pods, every rule podplan models) is scheduled by
`podplan simulate --no-preemption` and by kube-scheduler v1.35.4's own framework (the kubesched tool beside the
repository, `--follow` podplan's plan through ties), profiles in turn: default, MostAllocated,
RequestedToCapacityRatio, changed weights. Every pending pod is compared until the two runs bind a pod
differently (after that their states differ): its feasible nodes, its node among kube-scheduler's best, its
FitError text byte for byte.

    python benchmarks/bench_differential.py                       # 500 clusters
    python benchmarks/bench_differential.py --clusters 40 --start 1000 --show 5

Prints one row per profile (clusters, pods compared, differences per kind) and the first differences found.
Preemption is not compared: the tool does not run PostFilter.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from differential import KUBESCHED, PROFILES, compare, kubesched_available  # noqa: E402

KINDS = ("feasible", "node", "score", "message", "invalid")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clusters", type=int, default=500)
    parser.add_argument("--start", type=int, default=0, help="seed of the first cluster")
    parser.add_argument("--show", type=int, default=10, help="differences printed in full")
    parser.add_argument("--tool", type=Path, default=KUBESCHED)
    args = parser.parse_args()
    if not kubesched_available(args.tool):
        print(f"no kube-scheduler tool at {args.tool}: nothing to compare against", file=sys.stderr)
        return 2
    names = list(PROFILES)
    clusters: Counter[str] = Counter()
    pods: Counter[str] = Counter()
    kinds: dict[str, Counter[str]] = {n: Counter() for n in names}
    shown = []
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        for seed in range(args.start, args.start + args.clusters):
            profile = names[seed % len(names)]
            diffs, compared, _ = compare(seed, Path(tmp) / str(seed), profile, args.tool)
            clusters[profile] += 1
            pods[profile] += compared
            for d in diffs:
                kinds[profile][d.kind] += 1
                if len(shown) < args.show:
                    shown.append((seed, profile, d))
            print(f"cluster {seed} ({profile}): {compared} pods, {len(diffs)} differences", file=sys.stderr)
    wall = time.perf_counter() - started
    print("| profile | clusters | pods compared | " + " | ".join(KINDS) + " |")
    print("|---|---:|---:|" + "---:|" * len(KINDS))
    for n in names:
        print(f"| {n} | {clusters[n]} | {pods[n]} | " + " | ".join(str(kinds[n][k]) for k in KINDS) + " |")
    total = Counter()
    for c in kinds.values():
        total.update(c)
    print(f"| all | {sum(clusters.values())} | {sum(pods.values())} | "
          + " | ".join(str(total[k]) for k in KINDS) + " |")
    print(f"\nwall: {wall:.0f}s")
    for seed, profile, d in shown:
        print(f"cluster {seed} ({profile}) {d.kind} {d.pod}: {d.detail}")
    return 1 if sum(total.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
