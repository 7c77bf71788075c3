"""What the pipeline's work around the search is expected to cost, from the input's size alone.

The pipeline decides, before and after kube-scheduler's greedy, whether a search follows and whether the
preference-led pass (optimizer.warmstart) runs. Decided by the wall clock ("is there time left?"), the same input
and seed gave a searched plan on a quiet machine and greedy's plan on a loaded one. These estimates make every
such decision a function of the input and the options: the same command decides the same way on any machine,
and the wall clock is left as the emergency cap it must be for --time-limit to hold (the plan then says it was
cut, see optimizer.pipeline).

Greedy's cost is mostly per pending pod (Python work per scheduling cycle), a little per node (building the
node arrays) and very little per pod and node (the vectorized filters and scores run over every node). The
preference-led pass scores every node instead of kube-scheduler's sample, so its cost per pod grows with the
nodes. Measured with time.process_time (CPU seconds of one core), seed 0, `podplan generate --profile
production` and `podplan generate --shape NAME`, 10 pending pods per node:

    input                        nodes   pending   greedy CPU s   per pod    pass CPU s   per pod
    production                   1,000    10,000       7.26       0.73 ms       8.76      0.88 ms
    anti-host-30                 1,000    10,000       5.87       0.59 ms       7.47      0.75 ms
    prefs-everywhere             1,000    10,000       8.62       0.86 ms       9.17      0.92 ms
    anti-zone-40                 1,000    10,000      10.77       1.08 ms       8.21      0.82 ms
    eks-default                  1,000    10,000       7.04       0.70 ms       9.33      0.93 ms
    util-90                      1,000    10,000       6.89       0.69 ms       7.29      0.73 ms
    anti-zone-40                 5,000    50,000      55.99       1.12 ms      87.83      1.76 ms
    eks-default                  5,000    50,000      64.97       1.30 ms      80.94      1.62 ms
    mixed profile                3,000     1,178       1.62       1.38 ms          -

(eks-default at 5,000 nodes before the spread plugin's workload look-up was indexed: a scan of every workload
per pod, which grew with the cluster.) So greedy is planned at GREEDY_SECONDS_PER_NODE x nodes +
pending x (GREEDY_SECONDS_PER_POD + GREEDY_SECONDS_PER_POD_NODE x nodes), at or above every row, and the pass at
pending x (PASS_SECONDS_PER_POD + PASS_SECONDS_PER_POD_NODE x nodes). A profile with a plugin that has no
vectorized form (the MostAllocated scoring strategy, a scheduler configuration with several profiles) runs the
reference loop, node by node: 240 pending pods on 300 nodes took 0.87 s of CPU against 0.32 s vectorized, 930
on 1,000 nodes about 7 s; REFERENCE_SECONDS_PER_POD_NODE (10 us) covers both, for greedy and the pass.

These are CPU seconds of one core. BUSY_FACTOR turns them into the wall seconds planned on: a little above one,
so that a machine where podplan has a core of its own (a quiet one, or 2 cores beside one other CPU-bound job)
runs what was planned, with the coefficients' own margin. A machine loaded far beyond that (the 2-core shared
machine these were measured on ran greedy at 2-3 x its CPU time at load 3-4) reaches the wall-clock cap
instead, which the plan's notes then say. Planned at twice the CPU time with a per-node term of 0.2 us,
production 5,000 planned greedy at 200 s where it takes 36 s, and kept greedy's plan under a 300 s limit.
"""
from __future__ import annotations

from ..models.objects import Cluster

from .framework import Profile
from .greedy import runs_vectorized
from .profiles import Profiles

GREEDY_SECONDS_PER_NODE = 2.0e-4
GREEDY_SECONDS_PER_POD = 1.2e-3
GREEDY_SECONDS_PER_POD_NODE = 2.0e-8
PASS_SECONDS_PER_POD = 8.0e-4
PASS_SECONDS_PER_POD_NODE = 2.0e-7
REFERENCE_SECONDS_PER_POD_NODE = 1.0e-5
BUSY_FACTOR = 1.25


def greedy_seconds_for(nodes: int, pending: int, vectorized: bool = True) -> float:
    """Wall seconds greedy is planned to take on `pending` pods and `nodes` nodes (see the module docstring)."""
    per_node = GREEDY_SECONDS_PER_POD_NODE if vectorized else REFERENCE_SECONDS_PER_POD_NODE
    return BUSY_FACTOR * (GREEDY_SECONDS_PER_NODE * nodes + pending * (GREEDY_SECONDS_PER_POD + per_node * nodes))


def preference_seconds_for(nodes: int, pending: int, vectorized: bool = True) -> float:
    """Wall seconds the preference-led pass is planned to take on `pending` pods and `nodes` nodes."""
    per_node = PASS_SECONDS_PER_POD_NODE if vectorized else REFERENCE_SECONDS_PER_POD_NODE
    return BUSY_FACTOR * pending * (PASS_SECONDS_PER_POD + per_node * nodes)


def greedy_seconds(cluster: Cluster, profile: Profile | Profiles) -> float:
    """Wall seconds greedy is planned to take on `cluster`'s pending pods."""
    return greedy_seconds_for(len(cluster.nodes), len(cluster.pending), runs_vectorized(profile))


def preference_seconds(cluster: Cluster, profile: Profile | Profiles) -> float:
    """Wall seconds the preference-led pass is planned to take on `cluster`'s pending pods."""
    return preference_seconds_for(len(cluster.nodes), len(cluster.pending), runs_vectorized(profile))
