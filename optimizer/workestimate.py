"""What the pipeline's work around the search is expected to cost, from the input's size alone.

The pipeline decides, before and after kube-scheduler's greedy, whether a search follows and whether the
preference-led pass (optimizer.warmstart) runs. Decided by the wall clock ("is there time left?"), the same input
and seed gave a searched plan on a quiet machine and greedy's plan on a loaded one. These estimates make every
such decision a function of the input and the options: the same command decides the same way on any machine,
and the wall clock is left as the emergency cap it must be for --time-limit to hold (the plan then says it was
cut, see optimizer.pipeline).

Greedy's cost is mostly per pod (Python work per scheduling cycle) and a little per pod and node (the vectorized
filters and scores run over every node). Measured with time.process_time on the shared 2-core machine, seed 0/7,
greedy of optimizer.pipeline.greedy_plan:

    input                          nodes   pending   CPU s   per pod
    anti-host-30 shape               300     3,000    2.31   0.77 ms
    mixed profile                    300       240    0.24   1.00 ms
    mixed profile                  1,000       885    0.86   0.97 ms
    anti-host-30 shape             1,000    10,000   11.25   1.13 ms
    mixed profile                  3,000     1,178    1.62   1.38 ms

so GREEDY_SECONDS_PER_POD + GREEDY_SECONDS_PER_POD_NODE x nodes (1.0 ms + 0.2 us x nodes) is at or above every
row. A profile with a plugin that has no vectorized form (the MostAllocated scoring strategy, a scheduler
configuration with several profiles) runs the reference loop, node by node: 240 pending pods on 300 nodes took
0.87 s of CPU against 0.32 s vectorized, 930 on 1,000 nodes about 7 s (18 s of wall time at load 7, the process
getting 0.38 of a core); REFERENCE_SECONDS_PER_POD_NODE (10 us) covers both. The preference-led pass scores every
node instead of kube-scheduler's sample: it took 1.13-1.64 x greedy's CPU on the same inputs
(PREFERENCE_PER_GREEDY).

These are CPU seconds of one core. On a loaded machine the wall time of the same work is longer (about 2 x
beside one other CPU-bound job on 2 cores, 3 x at load 6-9): BUSY_FACTOR turns the estimates into wall seconds
of a busy machine, so that what the pipeline plans on fits the --time-limit there too, and the wall-clock cap
is seldom what decides.
"""
from __future__ import annotations

from ..models.objects import Cluster

from .framework import Profile
from .greedy import runs_vectorized
from .profiles import Profiles

GREEDY_SECONDS_PER_POD = 1.0e-3
GREEDY_SECONDS_PER_POD_NODE = 2.0e-7
REFERENCE_SECONDS_PER_POD_NODE = 1.0e-5
PREFERENCE_PER_GREEDY = 1.7
BUSY_FACTOR = 2.0


def greedy_seconds(cluster: Cluster, profile: Profile | Profiles) -> float:
    """Wall seconds greedy is planned to take on `cluster`'s pending pods, on a busy machine."""
    per_node = GREEDY_SECONDS_PER_POD_NODE if runs_vectorized(profile) else REFERENCE_SECONDS_PER_POD_NODE
    return BUSY_FACTOR * len(cluster.pending) * (GREEDY_SECONDS_PER_POD + per_node * len(cluster.nodes))


def preference_seconds(cluster: Cluster, profile: Profile | Profiles) -> float:
    """Wall seconds the preference-led pass is planned to take, on a busy machine."""
    return PREFERENCE_PER_GREEDY * greedy_seconds(cluster, profile)
