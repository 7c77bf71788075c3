"""DefaultPreemption (PostFilter): when a pod fits on no node, evict lower-priority pods to make room.

The simulator (optimizer/greedy.py) calls `Evaluator.preempt` after a failed scheduling cycle; the rules are
in .preemption (kube-scheduler's defaultpreemption and preemption packages).
"""
from __future__ import annotations

from .preemption import (
    MIN_CANDIDATE_NODES_ABSOLUTE, MIN_CANDIDATE_NODES_PERCENTAGE, MSG_NEVER, MSG_NO_VICTIMS, MSG_NOT_HELPFUL,
    MSG_PREFIX, MSG_TERMINATING, NAME, Candidate, Evaluator, PreemptionArgs, after_preemption,
    Outcome, calculate_num_candidates, filter_pods_with_pdb_violation, pick_one_node, post_filter, recreate,
)

__all__ = ["MIN_CANDIDATE_NODES_ABSOLUTE", "MIN_CANDIDATE_NODES_PERCENTAGE", "MSG_NEVER", "MSG_NO_VICTIMS",
           "MSG_NOT_HELPFUL", "MSG_PREFIX", "MSG_TERMINATING", "NAME", "Candidate", "Evaluator", "PreemptionArgs",
           "Outcome", "after_preemption", "calculate_num_candidates", "filter_pods_with_pdb_violation",
           "pick_one_node", "post_filter", "recreate"]
