"""Packing repair: more pending pods placed in a large component whose pods meet only through node resources.

A heterogeneous cluster filled close to capacity (the GPU cluster of the scale goals: 1,500 nodes, 8,000 pods whose
requests nearly all differ) is a vector bin-packing problem. kube-scheduler's greedy loop strands pods there
(a whole-GPU pod finds every node's GPUs shared out among smaller pods), and the restricted models of
optimizer.neighbourhood do not free a node for it: their candidates are the nodes where a class fits best
*now*, and each class's pods may only stay or move there.

`repair` works on the incumbent's counts instead, in rounds of a small exact model built for the stranded
pods (an ejection-chain move found by CP-SAT):
- a *seed*: a pending class (highest priority first, then the fewest failed rounds, then the largest);
- *targets*: the seed's feasible nodes that lack the least of what it requests (normalised per resource),
  ties broken at random so that rounds differ; one more per round the seed already failed (up to MAX_GROWTH);
- *sinks*: for each pod on a target, the nodes where it fits now and leaves the least room (best fit), plus,
  once the seed failed, a few of its feasible nodes at random (room there may be made in the same model);
- the model: for every class on the targets and every pending class (of the seed's priority) that may use
  them, an integer count per (class, node) within its static upper bound; a class keeps all of its pods that
  are on those nodes (they may move among them, never become pending) and may add its pending pods; the
  nodes' resources hold (requests over the room the other pods leave); maximise the pending pods added.
  The incumbent is its hint (always a solution), so a round never loses a pod.
- Every DEEP_EVERY-th failed round of a seed is *deep* (a longer chain, a larger model, more CP-SAT work):
  mostly a *chain* round, where each pod on a target may move to the CHAIN_NODES nodes that lack least for it
  (fitting now or not) and their pods move on to their best-fit sinks; otherwise the sinks' own pods may move
  too, among the targets and sinks plus random nodes the targets' pods may use. On the GPU cluster the chain
  rounds place most of the whole 4- and 8-GPU pods the others leave pending (they need a node emptied).
Before the rounds, and after every round that moved pods, each pending pod that fits somewhere as things
stand is placed on the node it fills best (its scarcest resource left smallest). The rounds end at the
deadline, when nothing is pending, or when every pending class failed GIVE_UP rounds as the seed.

Only for components where nothing but resources (and static, per-node rules) decides where a pod may go: the
profile's Filters are kube-scheduler's own (no plugin this module does not know), and no pod of the component
has pod (anti-)affinity, topology spread constraints, host ports or a gang. The counts returned place every
pod the incumbent placed (on the same or another node) and more, so the placed level per priority can only
grow; the preference level may change (it is searched afterwards by the caller's rounds).

Same input and seed, same result: the rounds' CP-SAT runs use one worker, the seed, and a deterministic time
limit (CP-SAT's work units, not seconds); the deadline is the search's deterministic clock (optimizer.runner.
Clock: each round is charged its CP-SAT work and ROUND_SECONDS), so the number of rounds does not depend on the
machine either, unless the wall clock cuts the search short.
"""
from __future__ import annotations

import random
import time
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from ortools.sat.python import cp_model

from .interpodaffinity import NAME as INTER_POD_AFFINITY
from .nodeaffinity import NAME as NODE_AFFINITY
from .nodename import NAME as NODE_NAME
from .nodeports import NAME as NODE_PORTS
from .noderesources import NAME as NODE_RESOURCES_FIT
from .noderesources.encoding import checked, free_vector
from .noderesources.filtering import PODS
from .nodeunschedulable import NAME as NODE_UNSCHEDULABLE
from .podtopologyspread import NAME as POD_TOPOLOGY_SPREAD
from .problem import Component, Problem, has_terms
from .runner import NEVER, Interrupt, SolverParams, charge, now, run
from .tainttoleration import NAME as TAINT_TOLERATION

# Filters whose verdict for a pod without terms, host ports or gang depends only on the node and the existing
# pods (static) or on the requests of the pods on the node (NodeResourcesFit).
PACKABLE_FILTERS = frozenset({NODE_UNSCHEDULABLE, NODE_NAME, TAINT_TOLERATION, NODE_AFFINITY, NODE_PORTS,
                              NODE_RESOURCES_FIT, POD_TOPOLOGY_SPREAD, INTER_POD_AFFINITY})
TARGETS = 6  # nodes a round tries to make room on for its seed
SINK_PER_MOVER = 3  # nodes each pod on a target may move to: where it fits best now
DEEP_EVERY = 3  # every third failed round of a seed is deep: two chain rounds, then one with the sinks' pods moving
DEEP_SINKS = 30  # sinks of a deep round that is not a chain round
CHAIN_NODES = 2  # in a chain round, the nodes per pod on a target that it may move to, their pods moving on
MAX_GROWTH = 12  # a seed that failed k rounds gets min(k, this) more targets, and more sinks per mover
BATCH = 12  # pending classes a round may place (the seed first)
ROUND_WORK = 0.2  # CP-SAT deterministic time (work units) per round; a deep round k times that, k its tries
GIVE_UP = 4 * MAX_GROWTH  # failed rounds after which a class is no longer a seed (it may still join a batch)
ROUND_SECONDS = 0.02  # charged to the deterministic clock per round for its Python work (neighbourhood, fill)


def packable(problem: Problem, comp: Component) -> bool:
    """Do only resources and static per-node rules decide where this component's pods may go?"""
    if any(p.name not in PACKABLE_FILTERS for p in problem.profile.filters):
        return False
    for c in comp.classes:
        cls = problem.classes[c]
        if cls.gang or cls.rep.host_ports or has_terms(cls.rep):
            return False
    return True


@dataclass
class _State:
    """The incumbent as arrays: per class its requests, per node the room its pods leave."""

    req: np.ndarray  # (problem classes, resources): requests (pods: 1)
    needs: np.ndarray  # (problem classes, resources): request > 0 (a zero request is not checked)
    room: np.ndarray  # (nodes, resources): free after the existing pods and the incumbent
    scale: np.ndarray  # per resource: a typical request, to compare resources
    on: list[dict[int, int]]  # node -> {class: count}
    pending: dict[int, int]  # class -> pods not placed
    ub: np.ndarray  # the problem's (class, node) upper bounds
    where: dict[int, dict[int, int]]  # class -> {node: count}: `on` by class

    def fits(self, c: int) -> np.ndarray:
        """Per node: one more pod of class c fits there now."""
        ok = self.ub[c] > 0
        ok &= ((self.room >= self.req[c]) | ~self.needs[c]).all(axis=1)
        for n, k in self.where[c].items():
            if k >= self.ub[c, n]:
                ok[n] = False
        return ok

    def place(self, c: int, n: int, k: int = 1) -> None:
        now = self.on[n].get(c, 0) + k
        if now:
            self.on[n][c] = self.where[c][n] = now
        else:
            del self.on[n][c], self.where[c][n]
        self.room[n] -= k * self.req[c]

    def counts(self) -> dict[tuple[int, int], int]:
        return {(c, n): k for n, cs in enumerate(self.on) for c, k in cs.items() if k}


def _state(problem: Problem, comp: Component, incumbent: Mapping[tuple[int, int], int]) -> _State:
    resources = sorted({r for c in comp.classes for r in checked(problem.classes[c].rep.requests)} - {PODS}) + [PODS]
    nc = len(problem.classes)
    req = np.zeros((nc, len(resources)), dtype=np.int64)
    needs = np.zeros((nc, len(resources)), dtype=bool)
    for c in comp.classes:
        rq = problem.classes[c].rep.requests
        for j, r in enumerate(resources[:-1]):
            if r in checked(rq):
                req[c, j] = rq[r]
                needs[c, j] = True
        req[c, -1] = 1
        needs[c, -1] = True
    room = np.stack([free_vector(problem, r) for r in resources], axis=1).astype(np.int64)
    on: list[dict[int, int]] = [dict() for _ in problem.nodes]
    where: dict[int, dict[int, int]] = {c: {} for c in comp.classes}
    placed: dict[int, int] = defaultdict(int)
    for (c, n), k in incumbent.items():
        if k:
            on[n][c] = where[c][n] = on[n].get(c, 0) + k
            room[n] -= k * req[c]
            placed[c] += k
    sub = req[np.asarray(comp.classes, dtype=np.int64)].astype(float)
    scale = np.array([max(1.0, float(np.median(sub[sub[:, j] > 0, j]))) if (sub[:, j] > 0).any() else 1.0
                      for j in range(len(resources))])
    pending = {c: problem.classes[c].size - placed[c] for c in comp.classes if problem.classes[c].size > placed[c]}
    return _State(req, needs, room, scale, on, pending, problem.ub.matrix, where)


def _order(problem: Problem, st: _State, failed: Mapping[int, int]) -> list[int]:
    """Pending classes, seeds first: highest priority, fewest failed rounds, largest request (scaled)."""
    def key(c: int) -> tuple:
        return (-problem.classes[c].priority, failed.get(c, 0), -float((st.req[c] / st.scale).sum()), c)
    return sorted(st.pending, key=key)


def _fill(problem: Problem, st: _State) -> int:
    """Place each pending pod that fits somewhere now, on the node its scarcest resource fills best."""
    added = 0
    for c in _order(problem, st, {}):
        while st.pending.get(c):
            ok = st.fits(c)
            if not ok.any():
                break
            idx = np.flatnonzero(ok)
            left = (st.room[idx] - st.req[c]) / st.scale
            left = np.where(st.needs[c], left, np.inf).min(axis=1)
            n = int(idx[np.argmin(left)])
            st.place(c, n)
            st.pending[c] -= 1
            added += 1
        if not st.pending.get(c):
            st.pending.pop(c, None)
    return added


def _best_fit(st: _State, c: int, k: int, exclude: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Up to k nodes where one more pod of class c fits now and leaves the least of its scarcest resource."""
    ok = st.fits(c)
    ok[exclude] = False
    idx = np.flatnonzero(ok)
    if not len(idx):
        return idx
    left = (st.room[idx] - st.req[c]) / st.scale
    left = np.where(st.needs[c], left, np.inf).min(axis=1) + rng.random(len(idx)) * 0.05
    return idx[np.argsort(left, kind="stable")[:k]]


def _neighbourhood(problem: Problem, st: _State, seed: int, tries: int,
                  rng: np.random.Generator) -> tuple[list[int], list[int]]:
    """(targets, sinks) for `seed`, larger the more rounds it failed (see the module docstring)."""
    feas = np.flatnonzero(st.ub[seed] > 0)
    if not len(feas):
        return [], []
    grow = min(tries, MAX_GROWTH)
    lack = np.maximum(0, st.req[seed] - st.room[feas]) / st.scale
    lack = np.where(st.needs[seed], lack, 0).sum(axis=1)
    targets = feas[np.argsort(lack * (1 + rng.random(len(feas))), kind="stable")[:TARGETS + grow]]
    movers = sorted({c for n in targets for c in st.on[n]})
    sinks: set[int] = set()
    for c in movers:
        sinks.update(_best_fit(st, c, SINK_PER_MOVER + grow // 2, targets, rng).tolist())
        if grow:
            # room may also be made on a node where the mover does not fit yet: a longer chain
            feas_c = np.flatnonzero(st.ub[c] > 0)
            sinks.update(rng.choice(feas_c, size=min(len(feas_c), grow // 2), replace=False).tolist())
    return sorted(targets.tolist()), sorted(sinks - set(targets.tolist()))


def _deep_sinks(st: _State, targets: list[int], sinks: list[int], rng: np.random.Generator) -> list[int]:
    """A deep round's sinks: every node the targets' pods may use when they are few, else a random share of them
    beside the best-fit sinks."""
    movers = {c for n in targets for c in st.on[n]}
    usable = np.zeros(len(st.on), dtype=bool)
    for c in movers:
        usable |= st.ub[c] > 0
    usable[targets] = False
    pool = np.flatnonzero(usable)
    if len(pool) <= 2 * DEEP_SINKS:
        return pool.tolist()
    keep = sinks[:DEEP_SINKS // 2] if len(sinks) > DEEP_SINKS // 2 else sinks
    rest = np.setdiff1d(pool, keep)
    picked = rng.choice(rest, size=min(len(rest), DEEP_SINKS - len(keep)), replace=False).tolist()
    return sorted(set(keep) | set(picked))


def _lack(st: _State, c: int, nodes: np.ndarray) -> np.ndarray:
    """Per node of `nodes`: how much of what one more pod of class c requests is missing there (per resource,
    in units of a typical request, summed)."""
    lack = np.maximum(0, st.req[c] - st.room[nodes]) / st.scale
    return np.where(st.needs[c], lack, 0).sum(axis=1)


def _chain(st: _State, targets: list[int], rng: np.random.Generator) -> tuple[list[int], list[int]]:
    """A chain round's (movable nodes, fixed sinks): for each pod on the targets, the CHAIN_NODES nodes that lack
    least for it (its pods may move on in turn), and for each pod there, its best-fit sinks."""
    movable = set(targets)
    for c in sorted({c for n in targets for c in st.on[n]}):
        feas = np.flatnonzero(st.ub[c] > 0)
        feas = feas[~np.isin(feas, targets)]
        if len(feas):
            movable.update(feas[np.argsort(_lack(st, c, feas) + rng.random(len(feas)) * 0.1,
                                           kind="stable")[:CHAIN_NODES]].tolist())
    moved = np.asarray(sorted(movable), dtype=np.int64)
    sinks: set[int] = set()
    for c in sorted({c for n in movable for c in st.on[n]}):
        sinks.update(_best_fit(st, c, 1, moved, rng).tolist())
    return sorted(movable), sorted(sinks - movable)


def _round(problem: Problem, st: _State, seed: int, targets: list[int], movable: list[int], fixed: list[int],
           work: float, params: SolverParams, limit: float, interrupt: Interrupt) -> int:
    """One exact model (see the module docstring) in which the pods on `movable` may move to `movable` and
    `fixed` (whose pods stay); applied when it adds pods. Pods added."""
    prio = problem.classes[seed].priority
    nodes = movable + fixed
    node_set = np.asarray(targets, dtype=np.int64)
    movers = {c for n in movable for c in st.on[n]}
    batch = [seed] + [c for c in _order(problem, st, {}) if c != seed and problem.classes[c].priority == prio
                      and (st.ub[c, node_set] > 0).any()][:BATCH - 1]
    model_classes = sorted(movers | set(batch))
    m = cp_model.CpModel()
    x: dict[tuple[int, int], cp_model.IntVar] = {}
    added = []
    for c in model_classes:
        vs = []
        here = 0
        for n in nodes:
            k = st.on[n].get(c, 0)
            here += k
            u = int(st.ub[c, n])
            if u > 0:
                v = m.new_int_var(0, u, "")
                x[(c, n)] = v
                m.add_hint(v, k)
                vs.append(v)
        extra = st.pending.get(c, 0) if c in batch else 0
        if extra:
            y = m.new_int_var(0, extra, "")
            m.add_hint(y, 0)
            m.add(sum(vs) == here + y)
            added.append((y, c))
        else:
            m.add(sum(vs) == here)
    if not added:
        return 0
    mine = set(model_classes)
    for n in nodes:
        base = st.room[n] + sum(k * st.req[c] for c, k in st.on[n].items() if c in mine)
        users = [c for c in model_classes if (c, n) in x]
        for j in range(st.req.shape[1]):
            us = [c for c in users if st.needs[c, j]]
            if us and sum(int(st.req[c, j]) * int(st.ub[c, n]) for c in us) > base[j]:
                m.add(cp_model.LinearExpr.weighted_sum([x[(c, n)] for c in us], [int(st.req[c, j]) for c in us])
                      <= max(0, int(base[j])))
    m.maximize(sum(y for y, _ in added))
    # a small model: its work units are charged as seconds of the deterministic clock (they run about that fast)
    done = run(m, SolverParams(workers=1, seed=params.seed, deterministic=True), limit, interrupt=interrupt,
               extra={"max_deterministic_time": work}, det_per_second=1.0, portfolio=False)
    gain = int(round(done.solver.objective_value)) if done.values is not None else 0
    if gain <= 0 or done.values is None:
        return 0
    for n in nodes:
        for c in [c for c in st.on[n] if c in mine]:
            st.place(c, n, -st.on[n][c])
    for (c, n), v in x.items():
        k = int(done.solver.value(v))
        if k:
            st.place(c, n, k)
    for y, c in added:
        k = int(done.solver.value(y))
        if k:
            st.pending[c] -= k
            if not st.pending[c]:
                del st.pending[c]
    return gain


def repair(problem: Problem, comp: Component, incumbent: Mapping[tuple[int, int], int], deadline: float,
           params: SolverParams, interrupt: Interrupt = NEVER, log: list[str] | None = None) -> dict[tuple[int, int], int]:
    """The incumbent's counts with more pending pods placed, by `deadline` (see the module docstring); the
    incumbent itself when no pod could be added."""
    st = _state(problem, comp, incumbent)
    if not st.pending:
        return dict(incumbent)
    started = time.perf_counter()
    gained = _fill(problem, st)
    charge(ROUND_SECONDS)
    rng = np.random.default_rng(random.Random(params.seed).randrange(2 ** 32))
    failed: dict[int, int] = defaultdict(int)
    rounds = 0
    while st.pending and not interrupt.is_set():
        left = deadline - now()
        seeds = [c for c in _order(problem, st, failed) if failed[c] < GIVE_UP and (st.ub[c] > 0).any()]
        if left < 0.2 or not seeds:
            break  # out of time, or every pending class tried as often as it is worth (the rest of the time
            # goes to the caller's rounds)
        seed = seeds[0]
        targets, sinks = _neighbourhood(problem, st, seed, failed[seed], rng)
        rounds += 1
        deep = failed[seed] % DEEP_EVERY == DEEP_EVERY - 1
        work = ROUND_WORK * (min(failed[seed], MAX_GROWTH) if deep else 1)
        movable, fixed = targets, sinks
        if deep and failed[seed] % (3 * DEEP_EVERY) != 3 * DEEP_EVERY - 1:
            movable, fixed = _chain(st, targets[:TARGETS], rng)
        elif deep:
            movable, fixed = targets + _deep_sinks(st, targets, sinks, rng), []
        gain = _round(problem, st, seed, targets, movable, fixed, work, params, min(left, 5.0), interrupt)
        charge(ROUND_SECONDS)
        failed[seed] += 1
        if gain:
            gained += gain + _fill(problem, st)
    if log is not None:
        log.append(f"packing repair: {gained} more pod(s) placed in {rounds} round(s), "
                   f"{time.perf_counter() - started:.1f}s, {sum(st.pending.values())} still pending")
    return st.counts() if gained else dict(incumbent)


# -- the placed bound's per-node packing cuts ------------------------------------------------------------

CUT_PODS_PER_NODE = 3  # cuts for pods that take more than a quarter of a node's free room (smaller ones rarely bind)


def size_cuts(m: cp_model.CpModel, problem: Problem, groups: list[np.ndarray], per_group: Mapping[int, list[int]],
              y: Mapping[tuple[int, int], cp_model.IntVar]) -> int:
    """Per-node packing cuts for optimizer.bound's aggregated placed model (y[class, group]: pods of the class on
    the group's nodes); the number added.

    The aggregated model only says that a group's pods fit in its summed free room: three pods of 0.55, 0.6
    and 0.65 GPU "fit" on two free GPUs. On one node, pods that each request at least q of a resource number at
    most floor(free / q); so over a group, for every request q of its classes,
        sum over classes requesting >= q of y[class, group]  <=  sum over its nodes of floor(free_n / q),
    valid for every plan. Only thresholds where some node holds at most CUT_PODS_PER_NODE such pods are used,
    and of thresholds with the same right-hand side only the smallest (it includes the others' classes)."""
    added = 0
    every = sorted({c for cs in per_group.values() for c in cs})
    resources = sorted({r for c in every for r in checked(problem.classes[c].rep.requests)} - {PODS})
    row = {c: i for i, c in enumerate(every)}
    asks = np.zeros((len(every), len(resources)), dtype=np.int64)  # 0: not requested (not checked)
    for c in every:
        rq = checked(problem.classes[c].rep.requests)
        for j, r in enumerate(resources):
            if r in rq:
                asks[row[c], j] = problem.classes[c].rep.requests[r]
    for g, members in enumerate(groups):
        cs = np.asarray(per_group.get(g, []), dtype=np.int64)
        if len(cs) < 2:
            continue  # one class: its own per-node upper bounds already say as much
        rows = np.fromiter((row[int(c)] for c in cs), np.int64, len(cs))
        for j, r in enumerate(resources):
            free = np.maximum(free_vector(problem, r)[members], 0)
            top = int(free.max()) if len(free) else 0
            q_all = asks[rows, j]
            big = q_all * (CUT_PODS_PER_NODE + 1) > top  # smaller pods: many fit on a node, a cut rarely binds
            if big.sum() < 2:
                continue
            order = np.argsort(-q_all[big], kind="stable")
            users, qs = cs[big][order], q_all[big][order]
            # users by decreasing request: the threshold qs[i] covers users[:i + 1] and any equal after it; of
            # thresholds with the same right-hand side the smallest covers the most classes
            widest: dict[int, int] = {}
            for i in np.flatnonzero(np.append(qs[1:] != qs[:-1], True)):
                widest[int((free // qs[i]).sum())] = int(i) + 1
            most = np.cumsum([min(problem.classes[int(c)].size, int(problem.ub.matrix[c, members].sum()))
                              for c in users[:max(widest.values())]])
            for rhs, k in widest.items():
                if most[k - 1] > rhs:
                    m.add(cp_model.LinearExpr.sum([y[(int(c), g)] for c in users[:k] if (int(c), g) in y]) <= rhs)
                    added += 1
    return added
