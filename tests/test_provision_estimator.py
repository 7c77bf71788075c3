"""The estimator's fast path (identical local pods placed as blocks, one PreFilter per pod signature shared by
the probes) gives the reference's answer, pod by pod, on random clusters: same expansions, same new nodes, same
placements; and a deadline stops it within a pod, its answer honest about the pods left."""
from __future__ import annotations

import time

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from builders import make_node, make_pod, pod_term, selector, spread
from podplan.models.nodetypes import NodeType, NodeTypes
from podplan.models.objects import Cluster
from podplan.optimizer.provision.core import offers_of, rooms
from podplan.optimizer.provision.estimator import estimate
from podplan.optimizer.registry import DEFAULT_PROFILE
from podplan.optimizer.verify import verify

H = "kubernetes.io/hostname"
Z = "topology.kubernetes.io/zone"


def a_type(name: str, cpu: str, price: float, pods: int, zones: tuple[str, ...], gpu: int = 0,
           max_: int | None = None) -> NodeType:
    extra = {"nvidia.com/gpu": gpu} if gpu else {}
    node = make_node(name).label("node.kubernetes.io/instance-type", name).alloc(
        extra, cpu=cpu, memory="8Gi", pods=pods).build()
    return NodeType(name=name, price=price, node=node, max=max_, zones=zones, capacity=dict(node.allocatable))


@st.composite
def instances(draw: st.DrawFn) -> tuple[Cluster, NodeTypes]:
    zones = ("a", "b")
    nodes = [make_node(f"n{i}").label(H, f"n{i}").label(Z, zones[i % 2]).alloc(
        cpu=draw(st.sampled_from(["1", "2"])), memory="8Gi", pods=draw(st.sampled_from([3, 110]))).build()
        for i in range(draw(st.integers(1, 3)))]
    types = NodeTypes((
        a_type("small", "2", draw(st.sampled_from([1.0, 2.0])), draw(st.sampled_from([3, 110])), zones),
        a_type("big", "4", 3.0, 110, zones[:1], max_=draw(st.sampled_from([None, 1, 2]))),
        a_type("gpu", "4", 5.0, 110, zones[1:], gpu=2)))
    pending = []
    order = 0
    for w in range(draw(st.integers(1, 4))):
        app = f"w{w}"
        kind = draw(st.sampled_from(["plain", "plain", "plain", "gpu", "anti", "spread", "spread", "host-spread",
                                     "pinned-spread", "affinity", "port", "matched"]))
        cpu = draw(st.sampled_from(["300m", "500m", "700m", "1", "1500m"]))
        for i in range(draw(st.integers(1, 7))):
            b = make_pod(f"{app}-{i}").label("app", app).req(cpu=cpu).set(
                order=order, workload=f"Deployment/default/{app}")
            if kind == "gpu":
                b = b.req({"nvidia.com/gpu": 1}, cpu=cpu)
            elif kind == "anti":
                b = b.pod_anti_affinity(pod_term(H, selector(app=app)))
            elif kind == "spread":
                b = b.spread(spread(1, Z, selector(app=app)))
            elif kind == "host-spread":  # new nodes are new domains
                b = b.spread(spread(1, H, selector(app=app)))
            elif kind == "pinned-spread":  # the node inclusion policy counts only the big type's nodes
                b = b.spread(spread(2, Z, selector(app=app))).node_selector(
                    {"node.kubernetes.io/instance-type": "big"})
            elif kind == "affinity":
                b = b.pod_affinity(pod_term(Z, selector(app="w0")))
            elif kind == "port":
                b = b.host_port(8080)
            elif kind == "matched":  # plain pods that another workload's anti-affinity counts against
                b = b.label("role", "db")
                if i == 0:
                    b = b.pod_anti_affinity(pod_term(Z, selector(role="db")))
            pending.append(b.build())
            order += 1
    existing = [make_pod(f"old{i}").label("app", "w0").req(cpu="500m").on(n.name).build()
                for i, n in enumerate(nodes) if draw(st.booleans())]
    return Cluster(nodes=tuple(nodes), pods=tuple(existing), pending=tuple(pending)), types


def outcome(cluster: Cluster, types: NodeTypes, fast: bool) -> tuple:
    offers = offers_of(types)
    e = estimate(cluster, list(cluster.pending), offers, DEFAULT_PROFILE, rooms(types, len(cluster.pending)),
                 fast=fast)
    return [(o.name, k) for o, k in e.add], [n.name for n in e.nodes], e.placements, e.pending


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(instances())
def test_the_fast_estimator_gives_the_reference_answer_pod_by_pod(instance: tuple[Cluster, NodeTypes]) -> None:
    cluster, types = instance
    assert outcome(cluster, types, fast=True) == outcome(cluster, types, fast=False)


def many(n: int) -> tuple[Cluster, NodeTypes]:
    nodes = (make_node("n0").label(H, "n0").label(Z, "a").alloc(cpu="1", memory="8Gi", pods=110).build(),)
    pending = tuple(make_pod(f"p{i}").label("app", f"w{i % 7}").req(cpu="700m").set(order=i).build()
                    for i in range(n))
    return Cluster(nodes=nodes, pending=pending), NodeTypes((a_type("small", "2", 1.0, 110, ("a",)),))


def test_identical_pods_fill_new_nodes_in_order_and_the_answer_verifies() -> None:
    cluster, types = many(40)
    e = estimate(cluster, list(cluster.pending), offers_of(types), DEFAULT_PROFILE, rooms(types, 40))
    assert not e.pending and not e.stopped
    assert e.count() == 20  # two 700m pods per 2-cpu node; the existing 1-cpu node holds one
    grown = Cluster(nodes=cluster.nodes + tuple(e.nodes), pending=cluster.pending)
    assert verify(grown, e.placements).ok


def test_a_deadline_stops_the_estimator_and_says_which_pods_are_left() -> None:
    cluster, types = many(40)
    e = estimate(cluster, list(cluster.pending), offers_of(types), DEFAULT_PROFILE, rooms(types, 40),
                 deadline=time.perf_counter() - 1)
    assert e.stopped == "out of time"
    assert len(e.placements) + len(e.pending) == 40 and e.pending
    assert all("stopped" in why for why in e.pending.values())
    assert verify(Cluster(nodes=cluster.nodes + tuple(e.nodes), pending=cluster.pending), e.placements).ok


def test_provision_out_of_time_in_the_estimator_prints_its_answer_so_far_with_the_pods_left_pending() -> None:
    from podplan.optimizer.pipeline import Deadline
    from podplan.optimizer.provision import provision, verify_answer
    from podplan.optimizer.runner import SolverParams, Status

    cluster, types = many(40)
    a = provision(cluster, types, SolverParams(workers=1), deadline=Deadline.start(1e-3))
    verify_answer(a)
    assert a.status is Status.UNKNOWN and a.bound == 0
    assert a.pending and len(a.placements) + len(a.pending) == 40
    assert any("did not finish within the time limit" in n for n in a.notes)


def test_the_command_out_of_time_says_so_exits_0_and_lists_every_pod_left(tmp_path) -> None:
    import json

    import yaml
    from click.testing import CliRunner

    from builders import container, node_manifest, pod_manifest
    from podplan.cli import main

    c = tmp_path / "c.yaml"
    c.write_text(yaml.safe_dump_all([node_manifest("n0", {H: "n0", Z: "z1"}, cpu="1")] + [
        pod_manifest(f"p{i}", containers=[container(requests={"cpu": "900m"})]) for i in range(3)]))
    t = tmp_path / "t.yaml"
    t.write_text(yaml.safe_dump({"apiVersion": "podplan.io/v1alpha1", "kind": "NodeTypes", "types": [
        {"name": "small", "price": 0.1, "zones": ["z1"], "node": {"status": {"allocatable": {"cpu": "1"}}}}]}))
    r = CliRunner().invoke(main, ["provision", str(c), "--node-types", str(t), "--time-limit", "0.001"])
    assert r.exit_code == 0, r.output
    assert "status: UNKNOWN" in r.output and "the time ran out" in r.output
    assert r.output.count("not placed: the estimator stopped") == 3
    r = CliRunner().invoke(main, ["provision", str(c), "--node-types", str(t), "--time-limit", "0.001", "-o", "json"])
    doc = json.loads(r.output)
    assert doc["status"] == "UNKNOWN" and len(doc["pending"]) == 3 and doc["saving"] is None
