"""A focused neighbourhood round frees the classes drawn and, of the classes in their way, only the pods on the
nodes they want (optimizer.neighbourhood.focus): the round's model keeps every other pod where it is."""
from __future__ import annotations

import random
import time

from builders import make_node, make_pod, pod_term, selector
from podplan.models.objects import Cluster, Workload
from podplan.optimizer.model import build
from podplan.optimizer.neighbourhood import focus
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
