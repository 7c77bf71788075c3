"""Rebalance against brute force on small random clusters, pack against first-fit decreasing, and every wave
of plans on generated clusters checked for PDB budgets and the verifier."""
from __future__ import annotations

from dataclasses import replace
from itertools import product

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from podplan.models.generate import generate
from podplan.models.objects import Cluster, Pod
from podplan.models.loader import parse_documents
from podplan.optimizer.framework import run_filters
from podplan.optimizer.rebalance.movable import as_pending, movable
from podplan.optimizer.rebalance import rebalance
from podplan.optimizer.rebalance.metrics import goal_values, occupied
from podplan.optimizer.rebalance.plan import RebalanceParams
from podplan.optimizer.rebalance.target_model import SENSE, level_names
from podplan.optimizer.registry import DEFAULT_PROFILE
from podplan.optimizer.state import ClusterState
from podplan.optimizer.verify import verify
from tests.builders import cluster_of, make_node, make_pod, pod_term, req, selector, spread, term
from tests.test_rebalance import check_plan

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"
GOALS = ("fix", "spread", "pack", "prefs", "drain")


# ------------------------------------------------------------------------------------------------ instances


@st.composite
def small_clusters(draw: st.DrawFn) -> Cluster:
    """2-3 nodes (zones, disk labels, maybe a NoExecute/NoSchedule taint), 1-4 replicas of two apps with
    node selectors, host anti-affinity, zone spread or a preferred zone, and maybe a bare pod."""
    n_nodes = draw(st.integers(2, 3))
    nodes = []
    for i in range(n_nodes):
        b = make_node(f"n{i}").labels({ZONE: draw(st.sampled_from("ab")), HOST: f"n{i}",
                                       "disk": draw(st.sampled_from(["ssd", "hdd"]))})
        b.alloc(cpu=str(draw(st.integers(2, 4))), memory="16Gi", pods=110)
        taint = draw(st.sampled_from([None, None, None, "NoSchedule", "NoExecute"]))
        if taint:
            b.taint("maint", "true", taint)
        nodes.append(b.build())
    pods: list[Pod] = []
    for i in range(draw(st.integers(1, 4))):
        app = draw(st.sampled_from(["web", "db"]))
        p = make_pod(f"{app}-{i}").label("app", app).owner("ReplicaSet", f"{app}-rs")
        p.req(cpu=f"{draw(st.sampled_from([500, 1000, 1500, 2000]))}m", memory="1Gi")
        p.on(f"n{draw(st.integers(0, n_nodes - 1))}")
        rule = draw(st.sampled_from(["none", "none", "ssd", "anti", "spread", "prefer"]))
        if rule == "ssd":
            p.node_selector(disk="ssd")
        elif rule == "anti":
            p.pod_anti_affinity(pod_term(HOST, selector(app=app)))
        elif rule == "spread":
            p.spread(spread(1, ZONE, selector(app=app)))
        elif rule == "prefer":
            p.preferred_node_affinity(draw(st.integers(1, 20)), term(req(ZONE, "In", "a")))
        pods.append(p.build())
    if draw(st.booleans()):
        pods.append(make_pod("bare").req(cpu="500m").on(f"n{draw(st.integers(0, n_nodes - 1))}").build())
    return cluster_of(nodes, pods)


def brute_force(cluster: Cluster, params: RebalanceParams) -> tuple | None:
    """The lexicographic optimum over every assignment of the movable pods (levels up to moves), judged by the
    verifier and scored by goal_values; None when no assignment is valid."""
    free = movable(cluster)
    unbound, _ = as_pending(cluster, free)
    names = [n for n in level_names(params)]
    names = names[:names.index("moves") + 1]
    best = None
    for combo in product([n.name for n in cluster.nodes], repeat=len(free)):
        where = {p.key: n for p, n in zip(free, combo)}
        if any(n in params.drain and n != p.node_name for p, n in zip(free, combo)):
            continue  # a drained node takes nothing new
        if not verify(unbound, where).ok:
            continue
        values = goal_values(cluster, params, where, free)
        key = tuple(values[n] if SENSE.get(n, "min") == "min" else -values[n] for n in names)
        best = key if best is None or key < best else best
    return best


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cluster=small_clusters(), goal=st.sampled_from(GOALS))
def test_the_target_reaches_the_brute_force_optimum_with_the_fewest_moves(cluster: Cluster, goal: str) -> None:
    params = RebalanceParams(goal=goal, drain=("n0",) if goal == "drain" else (), time_limit=10, workers=1)
    best = brute_force(cluster, params)
    assume(best is not None)
    plan = rebalance(cluster, params)
    assert plan.status == "OPTIMAL"
    names = level_names(params)
    names = names[:names.index("moves") + 1]
    got = dict((n, v) for n, v, _ in plan.levels)
    assert tuple(got[n] if SENSE.get(n, "min") == "min" else -got[n] for n in names) == best
    target_moves = got["moves"]
    # the waves make every move of the target (nothing is blocked in these PDB-free clusters) or say why
    assert plan.moves == target_moves or not plan.complete
    check_plan(cluster, plan)


# ------------------------------------------------------------------------------------------------ pack vs FFD


def first_fit_decreasing(cluster: Cluster) -> int | None:
    """Empty nodes after re-placing the movable pods largest first, each on the first node whose filters
    accept it (None if one fits nowhere or the result breaks a rule)."""
    free = movable(cluster)
    unbound, _ = as_pending(cluster, free)
    state = ClusterState.from_cluster(unbound)
    where: dict[str, str] = {}
    for pod in sorted(unbound.pending, key=lambda p: (-p.requests.get("cpu", 0), -p.requests.get("memory", 0))):
        for info in state.nodes.values():
            if run_filters(pod, state, DEFAULT_PROFILE.filters, [info])[0].feasible:
                state.add(pod, info.name)
                where[pod.key] = info.name
                break
        else:
            return None
    if not verify(unbound, where).ok:
        return None
    return sum(1 for info in state.nodes.values() if not occupied(info))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cluster=small_clusters())
def test_pack_frees_at_least_as_many_nodes_as_first_fit_decreasing_on_small_clusters(cluster: Cluster) -> None:
    ffd = first_fit_decreasing(cluster)
    assume(ffd is not None)
    plan = rebalance(cluster, RebalanceParams(goal="pack", time_limit=10, workers=1))
    assert dict((n, v) for n, v, _ in plan.levels)["empty_nodes"] >= ffd


# ------------------------------------------------------------------------------------------------ generated clusters

GENERATED = [(4, 40, 2), (4, 40, 3), (6, 60, 1), (6, 60, 2), (6, 60, 3)]


def generated(nodes: int, pods: int, seed: int) -> Cluster:
    return replace(parse_documents(generate(nodes, pods, seed, "mixed", 0.6)), pending=())


@pytest.mark.parametrize("size", GENERATED, ids=[f"generated {n} nodes, {p} pods, seed {s}" for n, p, s in GENERATED])
@pytest.mark.parametrize("goal", GOALS)
def test_every_wave_on_a_generated_cluster_respects_every_pdb_and_passes_the_verifier(size: tuple, goal: str) -> None:
    cluster = generated(*size)
    params = RebalanceParams(goal=goal, drain=(cluster.nodes[0].name,) if goal == "drain" else (), time_limit=5)
    plan = rebalance(cluster, params)
    check_plan(cluster, plan)
    if goal == "fix":
        assert plan.after["violations"] == 0


@pytest.mark.parametrize("size", GENERATED, ids=[f"generated {n} nodes, {p} pods, seed {s}" for n, p, s in GENERATED])
def test_pack_frees_at_least_as_many_nodes_as_first_fit_decreasing_on_generated_clusters(size: tuple) -> None:
    cluster = generated(*size)
    ffd = first_fit_decreasing(cluster)
    plan = rebalance(cluster, RebalanceParams(goal="pack", time_limit=10))
    if ffd is not None:
        assert dict((n, v) for n, v, _ in plan.levels)["empty_nodes"] >= ffd
