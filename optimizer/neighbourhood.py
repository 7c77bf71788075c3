"""Candidate nodes per class for the restricted models of large components (large-neighbourhood search).

A component whose full model (one count variable per statically feasible (class, node)) is too large to
build and search in its time share is searched in restricted models instead: class c may only use
- the nodes where the incumbent (greedy's plan first, then the best plan found so far) puts its pods, so the
  incumbent is a solution of every restricted model and each round can only improve on it;
- the `k` nodes where most more pods of c would fit in the incumbent's state (room left after the incumbent's
  pods, per-node upper bound), ties and near-ties broken at random so that rounds differ;
- `k // 2` nodes drawn at random among its feasible ones (diversity: room may be made by moving others);
- for a class with required pod affinity, its targets' candidates too (a co-located pod can follow its
  partner), and the same the other way round.
Every restricted model is the exact model with x = 0 outside the candidates: its plans are valid plans, its
bound is not a bound (optimizer.bound gives one).
"""
from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Mapping

import numpy as np

from .interpodaffinity.encoding import _class_info
from .noderesources.encoding import checked, free_vector
from .noderesources.filtering import PODS
from .problem import Component, Problem


def residual_room(problem: Problem, comp: Component, incumbent: Mapping[tuple[int, int], int],
                  resources: list[str]) -> dict[str, np.ndarray]:
    """Per resource, per node: free room left after the existing pods and the incumbent's pending pods."""
    out = {r: free_vector(problem, r).copy() for r in resources}
    for (c, n), k in incumbent.items():
        req = problem.classes[c].rep.requests
        out[PODS][n] -= k
        for r in resources:
            if r != PODS and req.get(r, 0) > 0 and r in checked(req):
                out[r][n] -= k * req[r]
    return out


def candidates(problem: Problem, comp: Component, incumbent: Mapping[tuple[int, int], int], k: int,
               rng: random.Random) -> dict[int, list[int]]:
    """Candidate node indices per class of `comp` (see the module docstring)."""
    resources = sorted({PODS} | {r for c in comp.classes for r in checked(problem.classes[c].rep.requests)})
    room = residual_room(problem, comp, incumbent, resources)
    mine: dict[int, set[int]] = defaultdict(set)
    for (c, n), v in incumbent.items():
        if v > 0:
            mine[c].add(n)
    nprng = np.random.default_rng(rng.randrange(2 ** 32))
    out: dict[int, set[int]] = {}
    for c in comp.classes:
        cls = problem.classes[c]
        feas = problem.feasible[c]
        chosen = set(mine.get(c, ()))
        if len(feas) <= k + len(chosen):
            out[c] = set(feas.tolist())
            continue
        fit = np.minimum(problem.ub.matrix[c, feas].astype(np.int64), room[PODS][feas])
        for r, q in ((r, cls.rep.requests[r]) for r in checked(cls.rep.requests)):
            np.minimum(fit, room[r][feas] // q, out=fit)
        score = np.minimum(fit, cls.size) + nprng.random(len(feas))  # noise: rounds and ties differ
        top = feas[np.argsort(-score, kind="stable")[:k]]
        chosen.update(top.tolist())
        chosen.update(nprng.choice(feas, size=min(len(feas), max(1, k // 2)), replace=False).tolist())
        out[c] = chosen
    # co-location: a class with required pod affinity may follow its targets, and they it
    for c in comp.classes:
        cls = problem.classes[c]
        if not cls.rep.affinity.pod_required:
            continue
        feas_c = set(problem.feasible[c].tolist())
        for t in _class_info(problem, cls).get("aff_targets", []):
            if t in out and t != c:
                out[c] |= out[t] & feas_c
                out[t] |= out[c] & set(problem.feasible[t].tolist())
    return {c: sorted(v) for c, v in out.items()}
