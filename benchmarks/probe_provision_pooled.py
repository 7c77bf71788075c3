"""Which side of provision's gap is loose? The covering program solved with whole pods by CP-SAT's full portfolio.

The covering program (optimizer.provision.bound) with whole pods on each existing node and the new nodes pooled
per offer (a count per offer, the pods within that many nodes' allocatable), inter-pod rules left out: a
relaxation of provision's question. Its best solution found within the time is an upper bound on the relaxation's
optimum, so no bound computed from this program (its linear relaxation, HiGHS's dual bound, the pattern program's
whole-pod fillings of existing nodes) can rise above it. Printed beside it: the pattern bound
(optimizer.provision.patterns). Not an answer: the solution is not packed on nodes nor checked against inter-pod
rules. CP-SAT runs with its default portfolio (not interleaved: not reproducible run to run).

    python benchmarks/probe_provision_pooled.py 2/plain --time-limit 90
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

import numpy as np  # noqa: E402
from ortools.sat.python import cp_model  # noqa: E402

from bench_provision import make_input  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("row", help="seed/shape, as bench_provision.py names its rows")
    ap.add_argument("--nodes", type=int, default=200)
    ap.add_argument("--pods", type=int, default=2000)
    ap.add_argument("--time-limit", type=float, default=90.0)
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()
    from podplan.cli import load_input
    from podplan.models.nodetypes import load_node_types
    from podplan.optimizer.provision.core import offers_of
    from podplan.optimizer.provision.patterns import pattern_bound, prepare
    from podplan.optimizer.registry import DEFAULT_PROFILE

    seed, shape = args.row.split("/")
    path, types_path = make_input(args.nodes, args.pods, int(seed), shape)
    cluster = load_input([str(path)])
    types = load_node_types(str(types_path))
    offers = offers_of(types)
    d = prepare(cluster, offers, DEFAULT_PROFILE)
    pb = pattern_bound(cluster, offers, types, DEFAULT_PROFILE, 120.0, data=d)
    print(f"{args.row}: {len(cluster.pending)} pending pods, {len(d.glist)} groups; pattern bound "
          f"{pb.bound_micro / 1e6:.3f} ({'converged' if pb.converged else 'stopped'}, {pb.seconds:.1f} s)", flush=True)
    n_g, n_ex, n_o, n_r = len(d.glist), d.free.shape[0], len(offers), len(d.res_keys)
    m = cp_model.CpModel()
    x = {(g, int(n)): m.new_int_var(0, int(d.cap_ex[g, n]), f"x[{g},{n}]")
         for g in range(n_g) for n in np.flatnonzero(d.cap_ex[g])}
    y = [m.new_int_var(0, int(d.size.sum()) if o.type.max is None else o.type.max, f"y[{i}]")
         for i, o in enumerate(offers)]
    z = {(g, int(o)): m.new_int_var(0, int(d.size[g]), f"z[{g},{o}]")
         for g in range(n_g) for o in np.flatnonzero(d.cap_new[g])}
    for g in range(n_g):
        m.add(sum(v for (h, _), v in x.items() if h == g) + sum(v for (h, _), v in z.items() if h == g)
              == int(d.size[g]))
    for n in range(n_ex):
        mine = [(g, v) for (g, k), v in x.items() if k == n]
        for r in range(n_r):
            terms = [(int(d.req[g, r]), v) for g, v in mine if d.req[g, r] > 0]
            if terms:
                m.add(sum(q * v for q, v in terms) <= int(d.free[n, r]))
    for o in range(n_o):
        mine = [(g, v) for (g, k), v in z.items() if k == o]
        for r in range(n_r):
            terms = [(int(d.req[g, r]), v) for g, v in mine if d.req[g, r] > 0]
            if terms:
                m.add(sum(q * v for q, v in terms) <= int(d.alloc[o, r]) * y[o])
        for g, v in mine:
            if d.cap_new[g, o] < d.size[g]:
                m.add(v <= int(d.cap_new[g, o]) * y[o])
    m.minimize(sum(round(o.type.price * 1e6) * y[i] for i, o in enumerate(offers)))
    started = time.perf_counter()

    class Progress(cp_model.CpSolverSolutionCallback):
        def on_solution_callback(self) -> None:
            print(f"  {time.perf_counter() - started:6.1f} s  solution {self.objective_value / 1e6:.3f}  "
                  f"bound {self.best_objective_bound / 1e6:.3f}", flush=True)

    solver = cp_model.CpSolver()
    solver.parameters.num_workers = args.workers
    solver.parameters.max_time_in_seconds = args.time_limit
    status = solver.solve(m, Progress())
    print(f"{solver.status_name(status)}: best {solver.objective_value / 1e6:.3f}, CP-SAT's bound "
          f"{solver.best_objective_bound / 1e6:.3f}, {time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()
