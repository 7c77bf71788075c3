"""Candidate nodes per class for the restricted models of large components (large-neighbourhood search).

A component whose full model (one count variable per statically feasible (class, node)) is too large to
build and search in its time share is searched in restricted models instead: class c may only use
- the nodes where the incumbent (greedy's plan first, then the best plan found so far) puts its pods, so the
  incumbent is a solution of every restricted model and each round can only improve on it;
- the `k` nodes where most more pods of c would fit in the incumbent's state (room left after the incumbent's
  pods, per-node upper bound), ties and near-ties broken at random so that rounds differ;
- `k // 2` nodes drawn at random among its feasible ones (diversity: room may be made by moving others);
- the nodes where its preferences pay most (with a policy): the best nodes of its preferred node affinity
  (and fewest untolerated PreferNoSchedule taints), and the nodes of the domains where a preferred pod-affinity
  term of it is met (an existing matching pod there, or one the incumbent placed), the roomiest `k` of each.
  Without them a round could only move a web pod to its cache's node by chance, however much room it has;
- for a class with required pod affinity, its targets' candidates too (a co-located pod can follow its
  partner), and the same the other way round.
Every restricted model is the exact model with x = 0 outside the candidates: its plans are valid plans, its
bound is not a bound (optimizer.bound gives one).

Once the incumbent places every pod, rounds are *focused* (`focus`): only the classes whose preferences the
incumbent leaves most unpaid (`shortfall`), drawn at random weighted by it, get candidates, and of the classes
occupying the nodes they want, the pods there; every other pod stays where the incumbent has it. A model of a
few thousand free variables is searched to its optimum in seconds, where one over every class (25,000 variables
at 1,000 nodes) found one or two improvements per 20 s round. After a round that did not improve, the next frees
one step further (`deeper`): the pods on the blockers' own best nodes, so that a blocker pushed off a node a drawn
class wants has a node as good to go to.

While pods are left pending, rounds are focused on placing them (`focus` with `placing`): the pending classes of
the highest priority with pods left, drawn weighted by their pending pods, want the nodes where one more of their
pods lacks least (`lacking_least`: the smallest share of its request missing, the best few per zone of its zone
spread), and the pods of other classes there are freed to make room. A round over every class found nothing in
its first seconds on a cluster 95 % full, where the pods left were 1.5-cpu pods and every node's free cpu less.
"""
from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import numpy as np

from ..models.objects import Pod, PodAffinityTerm
from .bound import _affinity_room, _guaranteed_anti_violations, linear_gains
from .interpodaffinity.encoding import PREF_AFF, _class_info, _pref_terms, pref_pred
from .noderesources.encoding import checked, free_vector
from .noderesources.filtering import PODS
from .podtopologyspread.encoding import hard_constraints
from .policy import Policy
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


def _met_domains(problem: Problem, rep: Pod, t: PodAffinityTerm,
                 nodes_of: Mapping[int, Iterable[int]]) -> tuple[list[str | None], set[str | None]]:
    """(the term's domain per node, the domains where it is met: those holding an existing pod it matches,
    or a pending pod of a class it matches on the nodes `nodes_of` gives that class)."""
    pred = pref_pred(problem, rep, t)
    values, _ = problem.domains(t.topology_key)
    met = {values[n] for n, m in problem.existing_matching(("ipa.pref", t, rep.namespace), pred,
                                                          t.label_selector).items() if m > 0}
    for other in problem.classes_matching(pred, selector=t.label_selector):
        met.update(values[n] for n in nodes_of.get(other, ()))
    met.discard(None)
    return values, met


def _attractive(problem: Problem, c: int, feas: np.ndarray, fit: np.ndarray, policy: Policy,
                incumbent_nodes: Mapping[int, set[int]], k: int) -> set[int]:
    """The roomiest `k` of the nodes where class c's preferred node affinity pays most, and of those where a
    preferred pod-affinity term of it is met (see the module docstring)."""
    out: set[int] = set()
    gains, _ = linear_gains(problem, c, policy)
    if len(gains) and gains.max() > gains.min():
        best = np.flatnonzero(gains == gains.max())
        out.update(feas[best[np.argsort(-fit[best], kind="stable")[:k]]].tolist())
    if not policy.pod_affinity:
        return out
    rep = problem.classes[c].rep
    for kind, i, w, t in _pref_terms(rep):
        if kind != PREF_AFF:
            continue
        values, met = _met_domains(problem, rep, t, incumbent_nodes)
        if not met:
            continue
        inside = np.fromiter((values[n] in met for n in feas.tolist()), bool, len(feas))
        # room may be made by moving others away: any node the class fits on alone, the roomiest now first
        where = np.flatnonzero(inside & (problem.ub.matrix[c, feas] > 0))
        out.update(feas[where[np.argsort(-fit[where], kind="stable")[:k]]].tolist())
    return out


def shortfall(problem: Problem, comp: Component, incumbent: Mapping[tuple[int, int], int],
              policy: Policy) -> dict[int, int]:
    """Per class of `comp`: how much more its pods' preferences could pay than in the incumbent (an estimate
    from above: every pod at its best node, every preferred pod-affinity term met, no more of its own pods
    sharing a domain of its own preferred anti-affinity than must, optimizer.bound._guaranteed_anti_violations)."""
    on: dict[int, dict[int, int]] = defaultdict(dict)
    for (c, n), v in incumbent.items():
        if v > 0:
            on[c][n] = v
    out: dict[int, int] = {}
    for c in comp.classes:
        cls = problem.classes[c]
        mine = on.get(c, {})
        missing = 0
        gains, _ = linear_gains(problem, c, policy)
        if len(gains) and gains.max() > gains.min() and mine:
            at = np.searchsorted(problem.feasible[c], np.fromiter(mine, np.int64, len(mine)))  # feasible is sorted
            missing += int(((gains.max() - gains[at]) * np.fromiter(mine.values(), np.int64, len(mine))).sum())
        rep = cls.rep
        for kind, i, w, t in _pref_terms(rep):
            if kind == PREF_AFF and policy.pod_affinity:
                values, met = _met_domains(problem, rep, t, on)
                unmet = sum(v for n, v in mine.items() if values[n] not in met)
                # no more than can meet the term at all (a web of 107 pods whose cache runs on 3 nodes, apart by
                # hostname: 3 of them, not 107; counted whole, such classes drew most focused rounds)
                more = _payable(problem, c, t, w, policy) - (sum(mine.values()) - unmet)
                missing += policy.pod_affinity * w * max(0, min(unmet, more))
            elif kind != PREF_AFF and policy.pod_anti_affinity and pref_pred(problem, rep, t)(rep):
                values, _ = problem.domains(t.topology_key)
                per: dict[object, int] = defaultdict(int)
                for n, v in mine.items():
                    if values[n] is not None:
                        per[values[n]] += v
                # owed only what it pays beyond what it must (a class of 40 pods apart by zone pays for 37 of
                # them at best: counted whole, such classes drew every focused round and no round could pay them)
                paying = sum(v for v in per.values() if v > 1)
                if paying:
                    must = _guaranteed_anti_violations(problem, c, t) if len(mine) and sum(
                        mine.values()) == cls.size else 0
                    missing += policy.pod_anti_affinity * w * max(0, paying - must)
        if missing > 0:
            out[c] = missing
    return out


def _payable(problem: Problem, c: int, t: PodAffinityTerm, w: int, policy: Policy) -> int:
    """Most pods of class c that can gain by meeting its preferred pod-affinity term `t` (of weight w): as many as
    fit where the term can be met (optimizer.bound._affinity_room); and when c's own preferred anti-affinity on
    the same key weighs at least as much, one per domain where it can be met (a second pod there pays more for
    sharing than it gains)."""
    key = ("neighbourhood.payable", c, t, w, policy)
    found = problem.cache.get(key)
    if found is not None:
        return found  # type: ignore[return-value]
    rep = problem.classes[c].rep
    most = _affinity_room(problem, c, t)
    if any(kind != PREF_AFF and a.topology_key == t.topology_key and pref_pred(problem, rep, a)(rep)
           and policy.pod_anti_affinity * wa >= policy.pod_affinity * w for kind, _, wa, a in _pref_terms(rep)):
        pred = pref_pred(problem, rep, t)
        codes, names = problem.codes(t.topology_key)
        taken = {codes[n] for n, k in problem.existing_matching(("ipa.pref", t, rep.namespace), pred,
                                                                  t.label_selector).items() if k > 0 and codes[n] >= 0}
        openers = sum(problem.classes[k].size for k in problem.classes_matching(pred, selector=t.label_selector))
        most = min(most, len(taken) + openers)
    problem.cache[key] = most
    return most


def room_left(problem: Problem, comp: Component, incumbent: Mapping[tuple[int, int], int]) -> dict[str, np.ndarray]:
    """residual_room over every resource a class of `comp` requests (and pod slots)."""
    resources = sorted({PODS} | {r for c in comp.classes for r in checked(problem.classes[c].rep.requests)})
    return residual_room(problem, comp, incumbent, resources)


@dataclass(frozen=True)
class Focus:
    """A focused round's free part (see `focus`): the classes drawn, free on their candidate nodes, and the
    blockers, classes on the nodes a drawn class wants, of which only the pods on those nodes are free."""

    drawn: frozenset[int]
    blockers: dict[int, frozenset[int]]  # class -> the nodes its pods are freed from
    wanted: dict[int, frozenset[int]] = field(default_factory=dict)  # drawn class -> nodes among its candidates

    def free(self) -> set[int]:
        """Every class the round's model does not freeze."""
        return set(self.drawn) | set(self.blockers)

    def held(self, incumbent: Mapping[tuple[int, int], int]) -> dict[int, dict[int, int]]:
        """Per blocker, its incumbent counts on every other node: the round keeps at least those there."""
        out: dict[int, dict[int, int]] = {b: {} for b in self.blockers}
        for (c, n), v in incumbent.items():
            if v > 0 and c in out and n not in self.blockers[c]:
                out[c][n] = v
        return out


def focus(problem: Problem, comp: Component, incumbent: Mapping[tuple[int, int], int], policy: Policy,
          owed: Mapping[int, float], budget: int, rng: random.Random,
          room: Mapping[str, np.ndarray] | None = None, placing: bool = False, deeper: bool = False) -> Focus:
    """Classes for a focused round (see the module docstring): drawn weighted by what they are owed until
    about `budget` pods are free, with the pods of other classes on the nodes they would want. Only those pods
    of a blocker are freed, not the whole class: a web's cache nodes hold pods of some thirty classes, whole
    hundreds of pods each, and rounds that freed them all ran out of time without a gain. `placing`: `owed`
    counts pending pods, and the nodes wanted are where one more pod lacks least room (`lacking_least`). `deeper`
    (a preference round): the blockers' own best nodes' pods are freed too, while fewer than CHAIN_BUDGET times
    `budget` pods are free."""
    order = sorted(owed)
    weights = np.asarray([owed[c] for c in order], dtype=float)
    if not order:
        return Focus(frozenset(), {})
    nprng = np.random.default_rng(rng.randrange(2 ** 32))
    # Efraimidis–Spirakis: a weighted sample without replacement, as one sort
    keys = np.log(nprng.random(len(order))) / weights
    drawn: set[int] = set()
    blockers: dict[int, set[int]] = {}  # in the order they were first met
    pods = 0
    on_node: dict[int, list[tuple[int, int]]] = defaultdict(list)
    for (c, n), v in incumbent.items():
        if v > 0:
            on_node[n].append((c, v))
    room = room if room is not None else room_left(problem, comp, incumbent)
    members = set(comp.classes)
    wanted: dict[int, frozenset[int]] = {}
    of_class: dict[int, dict[int, int]] = defaultdict(dict)
    if placing:
        for (c, n), v in incumbent.items():
            if v > 0:
                of_class[c][n] = v

    def best_nodes(c: int) -> frozenset[int]:
        """The roomiest three of each kind of node class c's preferences pay most on (_attractive)."""
        feas = problem.feasible[c]
        fit = np.minimum(problem.ub.matrix[c, feas].astype(np.int64), room[PODS][feas])
        return frozenset(_attractive(problem, c, feas, fit, policy, {}, 3))

    def free_on(nodes: Iterable[int], owner: int) -> int:
        """Frees the pods of the classes neither drawn nor `owner` on `nodes` (blockers); the pods freed."""
        freed = 0
        for node in sorted(nodes):
            for b, v in on_node.get(node, ()):
                if b not in drawn and b != owner and b in members and node not in blockers.get(b, ()):
                    blockers.setdefault(b, set()).add(node)
                    freed += v
        return freed

    for j in np.argsort(-keys, kind="stable").tolist():
        if pods >= budget:
            break
        c = order[j]
        drawn.add(c)
        blockers.pop(c, None)
        pods += problem.classes[c].size
        if placing:
            nodes = wanted[c] = frozenset(lacking_least(problem, c, room, of_class[c], nprng))
        else:
            nodes = best_nodes(c)
        pods += free_on(nodes, c)
    if deeper and not placing:
        # a blocker freed from a node a drawn class wants needs a node as good to go to, and its own best nodes
        # are often full of pods that gain nothing there: those pods are freed too, one step further (a web's
        # cache node held another class's pods, at their best only there and on two nodes full of such pods:
        # rounds freeing one step never moved them; 300 nodes, cache-zone-anti, 1.60 -> 0.37 % below the bound)
        for b in list(blockers):
            if pods >= CHAIN_BUDGET * budget:
                break
            pods += free_on(best_nodes(b), b)
    return Focus(frozenset(drawn), {b: frozenset(ns) for b, ns in sorted(blockers.items())},
                 {c: ns for c, ns in sorted(wanted.items()) if c in drawn})


CHAIN_BUDGET = 2  # a preference round frees blockers one step further while its pods are fewer than this times
# its budget (focus)
LACKING_NODES = 4  # nodes a pending class wants in a placing round (per domain of its hard spread)
LACKING_DOMAINS = 8  # a hard spread over more domains than this: the best nodes overall


def lacking_least(problem: Problem, c: int, room: Mapping[str, np.ndarray], mine: Mapping[int, int],
                  nprng: np.random.Generator, k: int = LACKING_NODES) -> list[int]:
    """The feasible nodes of class c where one more of its pods lacks the smallest share of its request (the
    largest over its resources; 0 where it fits now), ties at random; with a hard topology spread over a few
    domains (zones) the best `k` of each (the pod may only go to some of them), else the best `k`."""
    feas = problem.feasible[c]
    rep = problem.classes[c].rep
    slots = problem.ub.matrix[c, feas].astype(np.int64) - np.fromiter((mine.get(n, 0) for n in feas.tolist()),
                                                                      np.int64, len(feas))
    short = np.maximum(0, 1 - room[PODS][feas]).astype(float)
    for r in checked(rep.requests):
        if r != PODS:
            q = rep.requests[r]
            np.maximum(short, np.maximum(0, q - room[r][feas]) / q, out=short)
    score = short + 1e-3 * nprng.random(len(feas))
    score[slots <= 0] = np.inf  # no pod more of it may go there (its own per-node bound)
    groups = [np.arange(len(feas))]
    for s in hard_constraints(rep):
        codes, names = problem.codes(s.topology_key)
        if 1 < len(names) <= LACKING_DOMAINS:
            domain = codes[feas]
            groups = [np.flatnonzero(domain == d) for d in range(len(names))]
            break
    out: list[int] = []
    for g in groups:
        best = g[np.argsort(score[g], kind="stable")[:k]]
        out.extend(feas[best[np.isfinite(score[best])]].tolist())
    return out


def candidates(problem: Problem, comp: Component, incumbent: Mapping[tuple[int, int], int], k: int,
               rng: random.Random, policy: Policy | None = None, focused: set[int] | None = None,
               room: Mapping[str, np.ndarray] | None = None,
               wanted: Mapping[int, Iterable[int]] | None = None) -> dict[int, list[int]]:
    """Candidate node indices per class of `comp` (see the module docstring); `room`: room_left of the
    incumbent, when the caller has it already; `wanted`: more nodes per class (a placing round's targets)."""
    room = room if room is not None else room_left(problem, comp, incumbent)
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
        if focused is not None and c not in focused:
            out[c] = chosen  # stays where the incumbent has it (the caller fixes it there)
            continue
        if len(feas) <= k + len(chosen):
            out[c] = set(feas.tolist())
            continue
        fit = np.minimum(problem.ub.matrix[c, feas].astype(np.int64), room[PODS][feas])
        for r, q in ((r, cls.rep.requests[r]) for r in checked(cls.rep.requests)):
            np.minimum(fit, room[r][feas] // q, out=fit)
        score = np.minimum(fit, cls.size) + nprng.random(len(feas))  # noise: rounds and ties differ
        top = feas[np.argsort(-score, kind="stable")[:k]]
        chosen.update(top.tolist())
        if policy is not None:
            chosen.update(_attractive(problem, c, feas, fit, policy, mine, k))
        chosen.update(nprng.choice(feas, size=min(len(feas), max(1, k // 2)), replace=False).tolist())
        if wanted is not None:
            chosen.update(wanted.get(c, ()))
        out[c] = chosen
    # co-location: a class with required pod affinity may follow its targets, and they it
    for c in comp.classes:
        cls = problem.classes[c]
        if not cls.rep.affinity.pod_required or (focused is not None and c not in focused):
            continue
        feas_c = set(problem.feasible[c].tolist())
        for t in _class_info(problem, cls).get("aff_targets", []):
            if t in out and t != c and (focused is None or t in focused):
                out[c] |= out[t] & feas_c
                out[t] |= out[c] & set(problem.feasible[t].tolist())
    return {c: sorted(v) for c, v in out.items()}
