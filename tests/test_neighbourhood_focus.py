"""A focused neighbourhood round frees the classes drawn and, of the classes in their way, only the pods on the
nodes they want (optimizer.neighbourhood.focus): the round's model keeps every other pod where it is. While pods
are pending, the nodes wanted are where one more of them lacks least room (lacking_least)."""
from __future__ import annotations

import random
import time

import numpy as np

from builders import PodBuilder, make_node, make_pod, pod_term, req, selector, spread, term
from podplan.models.objects import Cluster, Workload
from podplan.optimizer.model import build
from podplan.optimizer.neighbourhood import candidates, focus, lacking_least, room_left
from podplan.optimizer.policy import Policy
from podplan.optimizer.problem import Problem, build_problem
from podplan.optimizer.registry import DEFAULT_PROFILE
from podplan.optimizer.runner import NEVER, SolverParams
from podplan.optimizer.solve import SolveState, _solve_component

H = "kubernetes.io/hostname"


def _web_and_filler() -> tuple[Problem, int, int]:
    """A cache on n0; three web pods that prefer its node (weight 50); four filler pods. n0 has room for two
    pods besides the cache."""
    nodes = tuple(make_node(f"n{i}").label(H, f"n{i}").alloc(cpu="2", memory="8Gi", pods=3 if i == 0 else 10)
                  .build() for i in range(4))
    cache = make_pod("cache-0").label("app", "cache").req(cpu="100m").on("n0").build()
    web = make_pod("web").label("app", "web").req(cpu="100m").preferred_pod_affinity(
        50, pod_term(H, selector(app="cache")))
    filler = make_pod("filler").label("app", "filler").req(cpu="100m")
    pending = tuple(web.set(name=f"web-{i}", workload="Deployment/default/web", order=i).build() for i in range(3)) + \
        tuple(filler.set(name=f"filler-{i}", workload="Deployment/default/filler", order=10 + i).build()
              for i in range(4))
    cluster = Cluster(nodes=nodes, pods=(cache,), pending=pending,
                      workloads=(Workload("Deployment", "default", "web", replicas=3),
                                 Workload("Deployment", "default", "filler", replicas=4)))
    problem = build_problem(cluster, DEFAULT_PROFILE)
    by_name = {problem.classes[c].rep.labels["app"]: c for c in problem.components[0].classes}
    return problem, by_name["web"], by_name["filler"]


def test_a_blocker_is_freed_only_on_the_nodes_the_drawn_class_wants() -> None:
    problem, web, filler = _web_and_filler()
    comp = problem.components[0]
    # the incumbent: two filler pods hold n0's room, the webs sit apart from their cache
    incumbent = {(filler, 0): 2, (filler, 1): 1, (filler, 2): 1, (web, 1): 1, (web, 2): 1, (web, 3): 1}
    chosen = focus(problem, comp, incumbent, Policy(), {web: 150}, budget=1, rng=random.Random(0))
    assert chosen.drawn == {web}
    assert chosen.blockers == {filler: {0}}
    assert chosen.free() == {web, filler}
    assert chosen.held(incumbent) == {filler: {1: 1, 2: 1}}


def test_the_round_moves_the_blockers_pods_off_the_wanted_node_and_keeps_the_others() -> None:
    problem, web, filler = _web_and_filler()
    comp = problem.components[0]
    incumbent = {(filler, 0): 2, (filler, 1): 1, (filler, 2): 1, (web, 1): 1, (web, 2): 1, (web, 3): 1}
    chosen = focus(problem, comp, incumbent, Policy(), {web: 150}, budget=1, rng=random.Random(0))
    every = [0, 1, 2, 3]
    built = build(problem, comp, Policy(), "", symmetry=False, candidates={web: every, filler: every},
                  held=chosen.held(incumbent))
    params = SolverParams(time_limit=10, workers=1, seed=0)
    r = _solve_component(problem, comp, built, incumbent, params, time.perf_counter() + 10, SolveState(NEVER),
                         time.perf_counter())
    counts = {k: v for k, v in r.counts.items() if v}
    # two webs take n0's room next to the cache (+100); the filler keeps at least one pod on n1 and one on n2
    assert counts.get((web, 0)) == 2
    assert counts.get((filler, 1), 0) >= 1 and counts.get((filler, 2), 0) >= 1
    assert counts.get((filler, 0), 0) == 0



def _web_mid_filler() -> tuple[Problem, int, int, int]:
    """Four nodes of 1.1 cpu (room for two 500m pods), n0 and n1 gold; a cache on n0. Pending, 500m each: two web
    pods that prefer the cache's node, two mid pods that prefer gold nodes, four filler pods."""
    nodes = tuple(make_node(f"n{i}").label(H, f"n{i}").label("tier", "gold" if i < 2 else "plain")
                  .alloc(cpu="1100m", memory="8Gi", pods=10).build() for i in range(4))
    cache = make_pod("cache-0").label("app", "cache").req(cpu="100m").on("n0").build()
    web = make_pod("web").label("app", "web").req(cpu="500m").preferred_pod_affinity(
        50, pod_term(H, selector(app="cache")))
    mid = make_pod("mid").label("app", "mid").req(cpu="500m").preferred_node_affinity(
        50, term(req("tier", "In", "gold")))
    filler = make_pod("filler").label("app", "filler").req(cpu="500m")
    pending = tuple(b.set(name=f"{name}-{i}", workload=f"Deployment/default/{name}", order=10 * k + i).build()
                    for k, (name, b, n) in enumerate((("web", web, 2), ("mid", mid, 2), ("filler", filler, 4)))
                    for i in range(n))
    cluster = Cluster(nodes=nodes, pods=(cache,), pending=pending,
                      workloads=tuple(Workload("Deployment", "default", name, replicas=n)
                                      for name, n in (("web", 2), ("mid", 2), ("filler", 4))))
    problem = build_problem(cluster, DEFAULT_PROFILE)
    by_name = {problem.classes[c].rep.labels["app"]: c for c in problem.components[0].classes}
    return problem, by_name["web"], by_name["mid"], by_name["filler"]


def _round(problem: Problem, chosen, incumbent: dict[tuple[int, int], int]) -> dict[tuple[int, int], int]:
    """One focused round's plan: the free classes may use every node, the others stay where they are."""
    comp = problem.components[0]
    frozen = {c: {n: v for (k, n), v in incumbent.items() if k == c} for c in comp.classes if c not in chosen.free()}
    built = build(problem, comp, Policy(), "", symmetry=False, candidates={c: [0, 1, 2, 3] for c in comp.classes},
                  frozen=frozen, held=chosen.held(incumbent))
    params = SolverParams(time_limit=10, workers=1, seed=0)
    r = _solve_component(problem, comp, built, incumbent, params, time.perf_counter() + 10, SolveState(NEVER),
                         time.perf_counter())
    return {k: v for k, v in r.counts.items() if v}


# the incumbent: mid holds the cache's node, the fillers hold the other gold node, the webs sit on n2
WEB_MID_FILLER = {"mid": {0: 2}, "filler": {1: 2, 3: 2}, "web": {2: 2}}


def test_a_deeper_round_also_frees_the_pods_on_the_nodes_where_a_blocker_gains_as_much() -> None:
    problem, web, mid, filler = _web_mid_filler()
    of = {"web": web, "mid": mid, "filler": filler}
    incumbent = {(of[name], n): v for name, at in WEB_MID_FILLER.items() for n, v in at.items()}
    comp = problem.components[0]
    one_step = focus(problem, comp, incumbent, Policy(), {web: 100}, budget=1, rng=random.Random(0))
    assert one_step.drawn == {web} and one_step.blockers == {mid: {0}}
    deeper = focus(problem, comp, incumbent, Policy(), {web: 100}, budget=3, rng=random.Random(0), deeper=True)
    # mid's best nodes are the gold ones: the fillers on n1 are freed too (only there)
    assert deeper.drawn == {web} and deeper.blockers == {mid: {0}, filler: {1}}
    assert deeper.held(incumbent) == {mid: {}, filler: {3: 2}}
    # no further than twice the round's budget: the four pods of web and mid are already two budgets of two
    capped = focus(problem, comp, incumbent, Policy(), {web: 100}, budget=2, rng=random.Random(0), deeper=True)
    assert capped.blockers == {mid: {0}}


def test_only_the_deeper_round_reaches_the_plan_where_web_and_mid_both_gain() -> None:
    problem, web, mid, filler = _web_mid_filler()
    of = {"web": web, "mid": mid, "filler": filler}
    incumbent = {(of[name], n): v for name, at in WEB_MID_FILLER.items() for n, v in at.items()}
    comp = problem.components[0]
    # one step: the webs take the cache's node only by pushing mid off gold (100 either way: no gain)
    one_step = _round(problem, focus(problem, comp, incumbent, Policy(), {web: 100}, budget=1,
                                     rng=random.Random(0)), incumbent)
    assert one_step.get((web, 0), 0) * 50 + (one_step.get((mid, 0), 0) + one_step.get((mid, 1), 0)) * 50 == 100
    deeper = _round(problem, focus(problem, comp, incumbent, Policy(), {web: 100}, budget=3, rng=random.Random(0),
                                   deeper=True), incumbent)
    assert deeper[(web, 0)] == 2 and deeper[(mid, 1)] == 2
    assert deeper.get((filler, 2), 0) + deeper.get((filler, 3), 0) == 4



Z = "topology.kubernetes.io/zone"


def _fillers_and_big(big: PodBuilder, zones: str = "aaaa") -> tuple[Problem, int, int]:
    """Four empty nodes of 1 cpu; pending: two pods `big` builds (1 cpu each) and fourteen 100m filler pods."""
    nodes = tuple(make_node(f"n{i}").label(H, f"n{i}").label(Z, zones[i]).alloc(cpu="1", memory="16Gi", pods=20)
                  .build() for i in range(4))
    pending = tuple(big.set(name=f"big-{i}", workload="Deployment/default/big", order=i).build() for i in range(2))
    pending += tuple(make_pod(f"filler-{i}").label("app", "filler").req(cpu="100m")
                     .set(workload="Deployment/default/filler", order=5 + i).build() for i in range(14))
    cluster = Cluster(nodes=nodes, pending=pending,
                      workloads=(Workload("Deployment", "default", "big", replicas=2),
                                 Workload("Deployment", "default", "filler", replicas=14)))
    problem = build_problem(cluster, DEFAULT_PROFILE)
    by_name = {problem.classes[c].rep.labels["app"]: c for c in problem.components[0].classes}
    return problem, by_name["big"], by_name["filler"]


# the fillers of the incumbent: 800m on n0, 100m on n1, 500m on n2, none on n3; one more big pod lacks 80 %,
# 10 %, 50 % and 0 % of its cpu there
SPREAD_FILLERS = {0: 8, 1: 1, 2: 5}


def _room(problem: Problem, filler: int, extra: dict[tuple[int, int], int] | None = None) -> dict:
    incumbent = {(filler, n): v for n, v in SPREAD_FILLERS.items()} | (extra or {})
    return room_left(problem, problem.components[0], incumbent)


def test_a_pending_class_wants_the_nodes_where_one_more_pod_lacks_the_smallest_share_of_its_request() -> None:
    problem, big, filler = _fillers_and_big(make_pod("big").label("app", "big").req(cpu="1"))
    rng = np.random.default_rng(0)
    assert lacking_least(problem, big, _room(problem, filler), {}, rng, k=2) == [3, 1]
    assert lacking_least(problem, big, _room(problem, filler), {}, rng, k=4) == [3, 1, 2, 0]


def test_a_node_where_the_class_may_put_no_more_pods_is_not_wanted() -> None:
    # required anti-affinity per host against itself: n3 already holds one of its pods and takes no other
    big = make_pod("big").label("app", "big").req(cpu="1").pod_anti_affinity(pod_term(H, selector(app="big")))
    problem, big_c, filler = _fillers_and_big(big)
    room = _room(problem, filler, {(big_c, 3): 1})
    assert lacking_least(problem, big_c, room, {3: 1}, np.random.default_rng(0), k=2) == [1, 2]


def test_with_a_hard_zone_spread_the_class_wants_the_best_nodes_of_every_zone() -> None:
    big = make_pod("big").label("app", "big").req(cpu="1").spread(spread(1, Z, selector(app="big")))
    problem, big_c, filler = _fillers_and_big(big, zones="aabb")
    assert lacking_least(problem, big_c, _room(problem, filler), {}, np.random.default_rng(0), k=1) == [1, 3]


def test_a_placing_round_moves_the_pods_in_the_way_and_places_the_pending_ones() -> None:
    # the incumbent spreads the fillers so that no node has a whole cpu left: both big pods are pending; a round
    # drawn for them frees the fillers on the nodes they want, gathers them and places both
    problem, big, filler = _fillers_and_big(make_pod("big").label("app", "big").req(cpu="1"))
    comp = problem.components[0]
    incumbent = {(filler, 0): 4, (filler, 1): 4, (filler, 2): 3, (filler, 3): 3}
    chosen = focus(problem, comp, incumbent, Policy(), {big: 2}, budget=1, rng=random.Random(0), placing=True)
    assert chosen.drawn == {big} and chosen.wanted[big] == {0, 1, 2, 3}
    assert chosen.blockers == {filler: {0, 1, 2, 3}} and chosen.held(incumbent) == {filler: {}}
    cands = candidates(problem, comp, incumbent, 1, random.Random(0), Policy(), chosen.free(), wanted=chosen.wanted)
    built = build(problem, comp, Policy(), "", symmetry=False, candidates=cands, held=chosen.held(incumbent))
    params = SolverParams(time_limit=10, workers=1, seed=0)
    r = _solve_component(problem, comp, built, incumbent, params, time.perf_counter() + 10, SolveState(NEVER),
                         time.perf_counter())
    placed = {c: sum(v for (k, _), v in r.counts.items() if k == c) for c in (big, filler)}
    assert placed == {big: 2, filler: 14}
