"""The compaction's last step: a new node's pods packed anew with the room of the nodes that have the most, for
cheaper nodes in its place (none, one cheaper, or two whose prices sum to less).

The dive (optimizer.provision.patterns) fixes whole fillings and the compaction moves pods first fit; both leave the
new nodes 94-99 % full (4/plain of the 200-node family: 35 c5.2xlarge and 2 m5.4xlarge, 13.436, where 39
c5.2xlarge hold every pod, 13.26). First fit moves a pod only into room that is there. Room made by moving another
pod first (a chain: the target's memory-heavy pods onto a node whose cpu-heavy pods go to a third) takes a search.

Per target (the dearest new nodes first) and per replacement (the largest saving first), one small CP-SAT model over
pod counts: the pods of the target and of the REPACK_BINS nodes with the most room (the sum over resources of the
room's share of the node's size), each group's count on each of those nodes and on the replacement's new nodes a
variable within the node's bound on the group, each node's requests within its size, every group's total kept. The
first solution is taken: any one places every pod of the neighbourhood at the replacement's lower price. With
one worker and a deterministic time limit the models are the same every run, and what they cost is charged to
provision's clock (optimizer.provision.clock).

Groups whose counts per node the assignment rows read (`fixed`: anti-affinity per host against several classes)
stay where they are, and a target that holds some is not tried: the rows would need checking against every node the
model changes."""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from ortools.sat.python import cp_model

from ..runner import charge, now
from .clock import charge_knapsack, knapsack_limits, wall_over

# the nodes with the most room that a target's model frees with it: on 4/plain of the 200-node family the
# m5.4xlarge's pods and those of the 40 roomiest nodes went to them and two c5.2xlarge in 0.17 s (one worker), where
# 30 nodes had too little room in all and the model of 60 found no solution in 20 s; 24, 64, 80 and 100 nodes, or the
# roomiest by another measure (the least room share, the target's own most used resource), replaced no other node
REPACK_BINS = 40
REPACK_SECONDS = 2.0  # of the clock, at most per model (its deterministic time)
# CP-SAT's deterministic time per second charged for these models. On 4/plain (load 1): 153 models, 1.17 units of
# deterministic time, 3.2 s of CP-SAT's wall time, 4 s with the compactions around them: charged 19.5 s with the
# charges per model below (the budget plans 0.5 wall seconds a second: clock.WALL_PER_SECOND)
REPACK_DET_PER_SECOND = 0.2
# charged per model besides its deterministic time: CP-SAT's start and presolve, which that leaves out (79 models
# of 5/spread, every one infeasible, took 3.0 s of wall time for 0.09 units), and building it in Python
REPACK_MODEL_SECONDS = 0.08
REPACK_PY_PER_VARIABLE = 2e-5


def repack(req: np.ndarray, room: np.ndarray, cap: np.ndarray, counts: np.ndarray, offer_of: list[int | None],
           alloc: np.ndarray, cap_new: np.ndarray, zone: Sequence[str | None], price: np.ndarray,
           fixed: set[int], deadline: float) -> tuple[np.ndarray, list[int | None]]:
    """The bins' counts (bin x group) after replacing new bins where a model finds a cheaper set of nodes for their
    pods, until none does or the clock reaches `deadline`.

    room: per bin, its size (an existing node's free room, a new node's allocatable) less what `fixed` groups use
    there; cap: per bin, its bound on each group; offer_of: per bin, the offer of a new bin (None: an existing node).
    Bins bought here are appended; a bin emptied keeps its row at zero. Returns the counts and the offers per bin."""
    counts = counts.copy()
    room = room.copy()
    cap = cap.copy()
    offer_of = list(offer_of)
    free_groups = np.array([g not in fixed for g in range(req.shape[0])], dtype=bool)
    improved = True
    while improved:  # (passes over the new bins, the dearest first, until one replaces none)
        improved = False
        targets = [b for b, o in enumerate(offer_of) if o is not None and counts[b].any()
                   and not counts[b][~free_groups].any()]
        used = counts[:, free_groups] @ req[free_groups]  # bin x resource
        load = {b: float(np.max(used[b] / np.maximum(room[b], 1))) for b in targets}
        for t in sorted(targets, key=lambda b: (-price[offer_of[b]], load[b], b)):
            for option in _replacements(offer_of[t], zone, price):
                if now() >= deadline or wall_over("the compaction's repacking"):
                    return counts, offer_of
                got = _model(req, room, cap, counts, offer_of, alloc, cap_new, free_groups, t, option, REPACK_BINS)
                if got is None:
                    continue
                bins, y = got
                first = len(offer_of)
                for o in option:  # the replacement's new bins, numbered -1, -2, ... in the model
                    offer_of.append(o)
                    counts = np.vstack([counts, np.zeros(counts.shape[1], dtype=counts.dtype)])
                    room = np.vstack([room, alloc[o]])
                    cap = np.vstack([cap, cap_new[:, o]])
                counts[t][free_groups] = 0  # (its row stays, empty)
                for i, b in enumerate(bins):
                    counts[first - 1 - b if b < 0 else b][free_groups] = y[i]
                improved = True
                break
    return counts, offer_of


def _replacements(o: int, zone: Sequence[str | None], price: np.ndarray) -> list[tuple[int, ...]]:
    """The sets of at most two new nodes of offer o's zone cheaper in all than o, the largest saving first: none,
    one cheaper offer, two (a node split in two)."""
    same = [i for i in range(len(price)) if zone[i] == zone[o]]
    out: list[tuple[int, ...]] = [()]
    out += [(i,) for i in same if price[i] < price[o]]
    out += [(i, j) for a, i in enumerate(same) for j in same[a:] if price[i] + price[j] < price[o]]
    return sorted(out, key=lambda s: (sum(price[i] for i in s), s))


def _model(req: np.ndarray, room: np.ndarray, cap: np.ndarray, counts: np.ndarray, offer_of: list[int | None],
           alloc: np.ndarray, cap_new: np.ndarray, free_groups: np.ndarray, t: int, option: tuple[int, ...],
           size: int) -> tuple[list[int], np.ndarray] | None:
    """Target t's pods and those of the `size` roomiest other bins on those bins and the option's new nodes: the
    bins (the option's numbered -1, -2, ...) and the counts per bin and free group, or None (no solution)."""
    used = counts[:, free_groups] @ req[free_groups]  # bin x resource
    share = np.where(room > 0, (room - used) / np.maximum(room, 1), 0.0).sum(axis=1)
    others = [b for b in range(len(offer_of)) if b != t and (offer_of[b] is None or counts[b].any())]
    near = sorted(others, key=lambda b: (-share[b], b))[:size]
    bins = near + [-1 - i for i in range(len(option))]
    total = counts[near + [t]][:, free_groups].sum(axis=0)
    groups = np.flatnonzero(free_groups)
    # (their sizes in all less what the free groups' pods need: no model when some resource falls short)
    rooms = np.array([room[b] if b >= 0 else alloc[option[-1 - b]] for b in bins])
    caps = np.array([cap[b] if b >= 0 else cap_new[:, option[-1 - b]] for b in bins])  # bin x group
    need = total @ req[groups]
    if (rooms.sum(axis=0) < need).any():
        return None
    if (np.minimum(caps[:, groups], total).sum(axis=0) < total).any():
        return None
    m = cp_model.CpModel()
    y = {}
    for i, b in enumerate(bins):
        for k, g in enumerate(groups):
            top = int(min(caps[i][g], total[k]))
            if top > 0 and total[k] > 0 and (req[g] <= rooms[i]).all():
                y[i, k] = m.new_int_var(0, top, f"y[{g},{b}]")
    for k in range(len(groups)):
        if total[k] > 0:
            m.add(sum(y[i, k] for i in range(len(bins)) if (i, k) in y) == int(total[k]))
    on: dict[int, list[tuple[int, cp_model.IntVar]]] = {}
    for (i, k), v in y.items():
        on.setdefault(i, []).append((k, v))
    for i, vs in on.items():
        for r in range(req.shape[1]):
            terms = [int(req[groups[k], r]) * v for k, v in vs if req[groups[k], r]]
            if terms:
                m.add(sum(terms) <= int(rooms[i][r]))
    # the pods of a group on a node that holds some of it already: the more, the better. Without it the first
    # solution took 2.5 units of deterministic time on 4/plain's m5.4xlarge, with it 0.12
    m.minimize(-sum(v for (i, k), v in y.items() if bins[i] >= 0 and counts[bins[i]][groups[k]] > 0))
    charge(REPACK_MODEL_SECONDS + REPACK_PY_PER_VARIABLE * len(y))
    solver = cp_model.CpSolver()
    knapsack_limits(solver.parameters, REPACK_SECONDS, REPACK_DET_PER_SECOND)
    solver.parameters.stop_after_first_solution = True
    solver.parameters.catch_sigint_signal = False
    st = solver.solve(m)
    charge_knapsack(solver, "the compaction's repacking", REPACK_DET_PER_SECOND)
    if st not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return None
    out = np.zeros((len(bins), len(groups)), dtype=np.int64)
    for (i, k), v in y.items():
        out[i][k] = solver.value(v)
    return bins, out
