"""A wave's state is verified on its delta: the fast check (the arrivals, the pods whose terms see a moved pod,
and the whole of a node only when it is over its allocatable) gives the reference's verdict (every pod on every
node the wave leaves or reaches judged) on small random clusters and random waves, with host ports, pod
counts, required (anti-)affinity, spread and taints, also when only the last move of a wave that passed without
it is judged; and both agree with the verifier on the whole state."""
from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from podplan.models.objects import Cluster, Pod
from podplan.optimizer.disruption import pod_ready
from podplan.optimizer.rebalance.plan import Move, RebalanceParams
from podplan.optimizer.rebalance.states import state_of, state_report, violations_by_pod
from podplan.optimizer.rebalance.waves import _Waves
from tests.builders import cluster_of, make_node, make_pod, pod_term, selector, spread

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"


@st.composite
def cluster_and_wave(draw: st.DrawFn) -> tuple[Cluster, list[tuple[str, str]]]:
    """3-4 nodes in two zones (few pod slots, maybe a taint), 2-8 pods of three apps with random rules, and a
    wave: some pods, each to another node."""
    n_nodes = draw(st.integers(3, 4))
    nodes = []
    for i in range(n_nodes):
        b = make_node(f"n{i}").labels({ZONE: "ab"[i % 2], HOST: f"n{i}"})
        b.alloc(cpu=str(draw(st.integers(2, 3))), memory="8Gi", pods=draw(st.sampled_from([3, 4, 110])))
        if draw(st.integers(0, 5)) == 0:
            b.taint("maint", "true", "NoSchedule")
        nodes.append(b.build())
    pods: list[Pod] = []
    for i in range(draw(st.integers(2, 8))):
        app = draw(st.sampled_from(["web", "db", "cache"]))
        p = make_pod(f"{app}-{i}").label("app", app).owner("ReplicaSet", f"{app}-rs")
        p.req(cpu=f"{draw(st.sampled_from([250, 500, 1000, 1500]))}m", memory="1Gi")
        p.on(f"n{draw(st.integers(0, n_nodes - 1))}")
        rule = draw(st.sampled_from(["none", "port", "anti", "anti-zone", "affinity", "spread", "tolerate"]))
        if rule == "port":
            p.host_port(8080)
        elif rule == "anti":
            p.pod_anti_affinity(pod_term(HOST, selector(app=draw(st.sampled_from(["web", "db", "cache"])))))
        elif rule == "anti-zone":
            p.pod_anti_affinity(pod_term(ZONE, selector(app=app)))
        elif rule == "affinity":
            p.pod_affinity(pod_term(ZONE, selector(app="cache")))
        elif rule == "spread":
            p.spread(spread(1, ZONE, selector(app=app)))
        elif rule == "tolerate":
            p.toleration("maint", "true", "NoSchedule")
        pods.append(p.build())
    keys = [p.key for p in pods]
    chosen = draw(st.lists(st.sampled_from(keys), min_size=1, max_size=min(4, len(keys)), unique=True))
    where = {p.key: p.node_name for p in pods}
    wave = [(k, draw(st.sampled_from([f"n{i}" for i in range(n_nodes) if f"n{i}" != where[k]]))) for k in chosen]
    return cluster_of(nodes, pods), wave


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cluster_and_wave())
def test_the_fast_delta_check_gives_the_references_verdict(case: tuple[Cluster, list[tuple[str, str]]]) -> None:
    cluster, wave = case
    pods = {p.key: p for p in cluster.pods}
    params = RebalanceParams()
    initial_bad = violations_by_pod(state_of(cluster, {}))
    w = _Waves(cluster, params, {p.key: pod_ready(p) for p in cluster.pods}, initial_bad)
    assert w.fast_delta
    moves = [Move(pods[k], pods[k].node_name, n) for k, n in wave]
    fast = w.verified(moves)
    assert fast == w.verified_reference(moves)
    # a wave grown one move at a time: when its first moves passed, judging the last move's delta suffices
    if len(moves) > 1 and w.verified(moves[:-1]):
        assert w.verified(moves, since=len(moves) - 1) == fast
    # and both are the verifier's verdict on the whole state after the wave (violations the input had allowed)
    where = {p.key: p.node_name for p in cluster.pods}
    where.update(dict(wave))
    report = state_report(cluster, where, {k for k, _ in wave})
    new = [v for v in report.violations
           if v.pod in dict(wave) or v.plugin not in initial_bad.get(v.pod, set())]
    assert fast == (not new)
