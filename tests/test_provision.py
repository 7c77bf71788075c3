"""podplan provision: on tiny clusters the proven cheapest set of new nodes equals an exhaustive search (every
count of new nodes per type, every placement judged by the verifier); the estimator's answer is never cheaper;
impossible pods exit 1 with their reason; bad node types exit 2."""
from __future__ import annotations

import itertools
import json
from pathlib import Path

import yaml
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from builders import container, make_node, make_pod, node_manifest, pod_manifest, pod_term, selector
from podplan.cli import main
from podplan.models.nodetypes import NodeType, NodeTypes, new_node
from podplan.models.objects import Cluster
from podplan.optimizer.pipeline import Deadline
from podplan.optimizer.provision import Impossible, provision, verify_answer
from podplan.optimizer.runner import SolverParams, Status
from podplan.optimizer.verify import verify

H = "kubernetes.io/hostname"
Z = "topology.kubernetes.io/zone"


def runner() -> CliRunner:
    try:
        return CliRunner(mix_stderr=False)  # type: ignore[call-arg]
    except TypeError:
        return CliRunner()


def a_type(name: str, cpu: str, price: float, pods: int = 110, taint: bool = False, max_: int | None = None) -> NodeType:
    b = make_node(name).label("node.kubernetes.io/instance-type", name).alloc(cpu=cpu, memory="8Gi", pods=pods)
    if taint:
        b = b.taint("dedicated", "x")
    node = b.build()
    return NodeType(name=name, price=price, node=node, max=max_, capacity=dict(node.allocatable))


@st.composite
def instances(draw: st.DrawFn) -> tuple[Cluster, NodeTypes]:
    nodes = [make_node(f"n{i}").label(H, f"n{i}").label(Z, "a").alloc(cpu=draw(st.sampled_from(["1", "2"])),
                                                                        memory="8Gi", pods=110).build()
             for i in range(draw(st.integers(1, 2)))]
    types = [a_type("small", "1", draw(st.sampled_from([1.0, 2.0]))),
             a_type("big", "2", draw(st.sampled_from([1.5, 3.0, 4.0])), pods=draw(st.sampled_from([2, 110])))]
    if draw(st.booleans()):
        types.append(a_type("tainted", "4", 1.0, taint=True, max_=draw(st.sampled_from([None, 1]))))
    pending = []
    for i in range(draw(st.integers(1, 5))):
        b = make_pod(f"p{i}").label("app", draw(st.sampled_from(["a", "b"]))).req(
            cpu=draw(st.sampled_from(["300m", "500m", "1"])))
        kind = draw(st.sampled_from(["none", "none", "anti", "tolerate"]))
        if kind == "anti":
            b = b.pod_anti_affinity(pod_term(H, selector(app=draw(st.sampled_from(["a", "b"])))))
        elif kind == "tolerate":
            b = b.toleration("dedicated", "x", "NoSchedule")
        pending.append(b.set(order=i).build())
    existing = [make_pod(f"old{i}").req(cpu="500m").on(n.name).build() for i, n in enumerate(nodes)
                if draw(st.booleans())]
    return Cluster(nodes=tuple(nodes), pods=tuple(existing), pending=tuple(pending)), NodeTypes(tuple(types))


def brute_cost(cluster: Cluster, types: NodeTypes) -> float | None:
    """The cheapest counts of new nodes per type with which some placement of every pending pod verifies."""
    best = None
    pods = list(cluster.pending)
    caps = [min(len(pods), t.max if t.max is not None else len(pods)) for t in types.types]
    for counts in itertools.product(*(range(c + 1) for c in caps)):
        cost = sum(k * t.price for k, t in zip(counts, types.types))
        if best is not None and cost >= best:
            continue
        new = [new_node(t, f"{t.name}-{i}") for k, t in zip(counts, types.types) for i in range(k)]
        grown = Cluster(nodes=cluster.nodes + tuple(new), pods=cluster.pods, pending=cluster.pending)
        names = [n.name for n in grown.nodes]
        for choice in itertools.product(names, repeat=len(pods)):
            if verify(grown, dict(zip((p.key for p in pods), choice))).ok:
                best = cost
                break
    return best


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(instances())
def test_the_proven_cheapest_new_nodes_equal_an_exhaustive_search(instance: tuple[Cluster, NodeTypes]) -> None:
    cluster, types = instance
    try:
        a = provision(cluster, types, SolverParams(workers=1), deadline=Deadline.start(20))
    except Impossible:
        assert brute_cost(cluster, types) is None
        return
    verify_answer(a)
    assert a.status is Status.OPTIMAL and abs(a.gap) < 1e-9
    assert abs(a.cost - brute_cost(cluster, types)) < 1e-9  # type: ignore[operator]
    assert len(a.placements) == len(cluster.pending)
    if not a.estimator.pending:
        assert a.estimator.cost() >= a.cost - 1e-9


def test_the_estimator_packs_first_fit_decreasing_and_least_waste_picks_the_type() -> None:
    # 3 pods of 1.5 cpu: first-fit on 2-cpu nodes needs 3 of them (cpu waste 1.5/6 = 0.25), on 4-cpu nodes 2
    # (waste 3.5/8 = 0.44): least waste picks three 2-cpu nodes at 3.0; one of each type holds them at 2.5
    nodes = (make_node("n0").label(H, "n0").alloc(cpu="1", memory="8Gi", pods=110).build(),)
    pending = tuple(make_pod(f"p{i}").req(cpu="1500m").set(order=i).build() for i in range(3))
    types = NodeTypes((a_type("two", "2", 1.0), a_type("four", "4", 1.5)))
    a = provision(Cluster(nodes=nodes, pending=pending), types, SolverParams(workers=1), deadline=Deadline.start(20))
    verify_answer(a)
    assert [(o.type.name, k) for o, k in a.estimator.add] == [("two", 3)]
    assert a.estimator.cost() == 3.0
    assert [(x.type, x.count) for x in a.add] == [("two", 1), ("four", 1)] and a.cost == 2.5


def write(tmp_path: Path, name: str, *docs: object) -> str:
    p = tmp_path / name
    p.write_text(yaml.safe_dump_all(list(docs)))
    return str(p)


def types_doc(*types: dict) -> dict:
    return {"apiVersion": "podplan.io/v1alpha1", "kind": "NodeTypes", "types": list(types)}


def type_doc(name: str, cpu: str, price: float) -> dict:
    return {"name": name, "price": price, "zones": ["z1", "z2"],
            "node": {"metadata": {"labels": {"node.kubernetes.io/instance-type": name}},
                     "status": {"allocatable": {"cpu": cpu, "memory": "8Gi"}}}}


def test_json_names_the_issue_lists_and_new_nodes_get_hostnames_and_zones(tmp_path: Path) -> None:
    c = write(tmp_path, "c.yaml", node_manifest("n0", {H: "n0", Z: "z1"}, cpu="1"),
              *(pod_manifest(f"p{i}", containers=[container(requests={"cpu": "900m"})]) for i in range(3)))
    t = write(tmp_path, "t.yaml", types_doc(type_doc("small", "1", 0.1), type_doc("big", "4", 0.3)))
    r = runner().invoke(main, ["provision", c, "--node-types", t, "-o", "json"])
    assert r.exit_code == 0, r.stderr
    doc = json.loads(r.stdout)
    assert {"status", "add", "cost", "bound", "gap", "estimator", "placements", "pending"} <= set(doc)
    assert set(doc["add"][0]) == {"type", "zone", "count", "price"} and set(doc["estimator"]) >= {"add", "cost"}
    assert doc["status"] == "OPTIMAL" and abs(doc["cost"] - 0.2) < 1e-9
    r = runner().invoke(main, ["provision", c, "--node-types", t, "--emit", "nodes"])
    nodes = list(yaml.safe_load_all(r.stdout))
    assert len(nodes) == 2 and all(n["metadata"]["labels"][H] == n["metadata"]["name"] for n in nodes)
    assert all(n["metadata"]["labels"][Z] in ("z1", "z2") for n in nodes)
    r = runner().invoke(main, ["provision", c, "--node-types", t, "--emit", "state"])
    state = write(tmp_path, "state.yaml", *yaml.safe_load_all(r.stdout))
    v = runner().invoke(main, ["verify", state])
    assert v.exit_code == 0, v.stdout + v.stderr


def test_a_pod_no_type_can_hold_gives_its_reason_and_exit_1(tmp_path: Path) -> None:
    c = write(tmp_path, "c.yaml", node_manifest("n0", {H: "n0"}, cpu="1"),
              pod_manifest("huge", containers=[container(requests={"cpu": "16"})]))
    t = write(tmp_path, "t.yaml", types_doc(type_doc("small", "1", 0.1)))
    r = runner().invoke(main, ["provision", c, "--node-types", t])
    assert r.exit_code == 1
    assert r.stderr.strip().startswith("error: default/huge fits on no node type: 0/2 nodes are available: 2 "
                                       "Insufficient cpu.")


def test_priority_at_least_leaves_lower_pods_pending(tmp_path: Path) -> None:
    c = write(tmp_path, "c.yaml", node_manifest("n0", {H: "n0"}, cpu="1"),
              pod_manifest("low", containers=[container(requests={"cpu": "900m"})], priority=1),
              pod_manifest("high", containers=[container(requests={"cpu": "900m"})], priority=100),
              pod_manifest("high2", containers=[container(requests={"cpu": "900m"})], priority=100))
    t = write(tmp_path, "t.yaml", types_doc(type_doc("small", "1", 0.1)))
    r = runner().invoke(main, ["provision", c, "--node-types", t, "--priority-at-least", "50", "-o", "json"])
    assert r.exit_code == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["cost"] == 0.1 and [p["pod"] for p in doc["pending"]] == ["default/low"]


def test_a_node_type_with_a_negative_price_is_one_line_exit_2(tmp_path: Path) -> None:
    c = write(tmp_path, "c.yaml", node_manifest("n0", {H: "n0"}, cpu="1"))
    t = write(tmp_path, "t.yaml", types_doc(type_doc("small", "1", -0.1)))
    r = runner().invoke(main, ["provision", c, "--node-types", t])
    assert r.exit_code == 2
    assert r.stderr.strip() == (f"error: {t}[0] NodeType/small types[0].price: must be a number of 0 or more, "
                                "got -0.1")
