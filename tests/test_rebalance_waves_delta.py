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


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cluster_and_wave())
def test_the_pre_check_skipping_watchers_a_move_inside_their_domains_cannot_change_gives_the_same_verdict(
        case: tuple[Cluster, list[tuple[str, str]]]) -> None:
    """A wave's pre-check (is the state valid around these arrivals?) judges only the watchers whose terms count
    the moved pod per domain of a key on which its two nodes differ: the verdict is the one judging them all."""
    cluster, wave = case
    pods = {p.key: p for p in cluster.pods}
    initial_bad = violations_by_pod(state_of(cluster, {}))
    w = _Waves(cluster, RebalanceParams(), {p.key: pod_ready(p) for p in cluster.pods}, initial_bad)
    moves = [Move(pods[k], pods[k].node_name, n) for k, n in wave]
    arrivals = [(w._apply(w.state, m), m.target) for m in moves]
    touched = [(m.pod, m.source, m.target) for m in moves]
    keys = {m.key for m in moves}
    fast, _ = w._ok_after(w.state, arrivals, touched, keys)
    w._sees_move = lambda *a: True  # type: ignore[method-assign]  # every watcher judged
    every, _ = w._ok_after(w.state, arrivals, touched, keys)
    assert (fast == "") == (every == "")


def test_a_move_inside_a_zone_is_unseen_by_a_zone_term_and_seen_by_a_hostname_term_or_a_filtered_spread() -> None:
    nodes = [make_node(n).labels({ZONE: z, HOST: n}).alloc(cpu="8", memory="8Gi", pods=110).build()
             for n, z in (("a1", "a"), ("a2", "a"), ("b1", "b"))]
    web = make_pod("web-0").label("app", "web").on("a1").build()
    zone_anti = make_pod("z").pod_anti_affinity(pod_term(ZONE, selector(app="web"))).on("b1").build()
    host_anti = make_pod("h").pod_anti_affinity(pod_term(HOST, selector(app="web"))).on("b1").build()
    zone_spread = make_pod("s").label("app", "web").spread(spread(1, ZONE, selector(app="web"))).on("b1").build()
    # nodeAffinityPolicy Honor with a node selector: a node inside the zone may not count the pod at all
    filtered = make_pod("f").label("app", "web").spread(spread(1, ZONE, selector(app="web"))) \
        .node_selector(disk="ssd").on("b1").build()
    cluster = cluster_of(nodes, [web, zone_anti, host_anti, zone_spread, filtered])
    w = _Waves(cluster, RebalanceParams(), {p.key: True for p in cluster.pods}, {})
    inside, across = ("a1", "a2"), ("a1", "b1")
    assert not w._sees_move(zone_anti, web, *inside) and w._sees_move(zone_anti, web, *across)
    assert w._sees_move(host_anti, web, *inside)
    assert not w._sees_move(zone_spread, web, *inside) and w._sees_move(zone_spread, web, *across)
    assert w._sees_move(filtered, web, *inside)
