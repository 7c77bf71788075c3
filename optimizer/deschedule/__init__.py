"""`podplan deschedule`: a DeschedulerPolicy, planned. What the descheduler would evict, cycle after cycle,
and where kube-scheduler puts each replacement (cycle.py); the fewest evictions whose end state meets the
same policy, in PodDisruptionBudget-safe waves (optimal.py); both judged by the policy (cycle.verdict).

policy.py reads descheduler/v1alpha2 with upstream's defaulting and validation; evictor.py is the
DefaultEvictor and the eviction limits; plugins.py the strategies, as upstream runs them."""
from __future__ import annotations

import time
from dataclasses import dataclass

from ...models.objects import Cluster
from ..rebalance.plan import RebalanceParams
from ..timelimit import slowdown
from .cycle import Run, run, verdict
from .optimal import Optimum, optimum
from .policy import DeschedulerPolicy

CYCLES_SHARE = 0.3  # of the time limit, at most, for the descheduler's cycles (they are fast: greedy)
LANDING_SHARE = 0.5  # of the time limit, where kube-scheduler's landing of a cycle's replacements is stopped
# CPU seconds per running pod of a cycle's decisions and the policy's verdicts on an idle machine (1,050 nodes,
# 17,449 pods: about 2 s); with less time left than that, scaled by how slowly the command has run, no cycle is
# simulated: at load 11 the first cycle's decisions, started with no time left, took 7 s past the limit
CYCLE_S_PER_POD = 1.2e-4
# seconds per running pod kept for the verify gate and the output on an idle machine (rebalance keeps 6e-4 for
# its metrics besides, which this command does not judge): at 1,050 nodes and 17,449 pods the gate took 1.1 s
# and the JSON under 1 s, and with rebalance's reserve a 30 s run ended at 22.7 s with its plan unfinished
RESERVE_PER_POD = 2.5e-4


@dataclass(frozen=True)
class Result:
    policy: DeschedulerPolicy
    descheduler: Run
    optimal: Optimum
    seconds: dict[str, float]


def deschedule(cluster: Cluster, policy: DeschedulerPolicy, params: RebalanceParams, deadline: float,
               max_cycles: int = 10) -> Result:
    t0 = time.perf_counter()
    left = max(0.0, deadline - t0)
    # no cycle starts after CYCLES_SHARE of the time; the landing of the first is stopped at LANDING_SHARE (its
    # replacements then marked not simulated), so that the optimum and the verify gate keep their time
    if left < CYCLE_S_PER_POD * len(cluster.pods) * slowdown():
        sim = Run((), False, False, None, verdict(cluster, policy),
                  skipped=f"the time limit ran out before the descheduler's cycle was simulated (reading the input "
                          f"used it); try --time-limit {max(60, round(2 * params.time_limit))} or more")
    else:
        sim = run(cluster, policy, params.profile, params.seed, max_cycles, stop_at=t0 + left * CYCLES_SHARE,
                  deadline=t0 + left * LANDING_SHARE)
    t1 = time.perf_counter()
    best = optimum(cluster, policy, params, deadline, sim.initial)
    t2 = time.perf_counter()
    return Result(policy, sim, best, {"descheduler": round(t1 - t0, 2), "optimal": round(t2 - t1, 2)})
