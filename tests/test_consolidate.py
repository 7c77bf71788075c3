"""`podplan consolidate`: the removal against an exhaustive search on tiny clusters, PDB-forced waves, pinned
nodes, cluster-autoscaler's answer beside it, the shrunk state read back by `podplan verify`, bad input."""
from __future__ import annotations

import json
from dataclasses import replace
from itertools import combinations, product
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from podplan.cli import main
from podplan.models.objects import Cluster, Pod
from podplan.optimizer import disruption
from podplan.optimizer.consolidate import ConsolidateParams, consolidate, shrunk
from podplan.optimizer.consolidate.prices import node_prices
from podplan.optimizer.rebalance.movable import MovePolicy, as_pending, goes_with_node, movable
from podplan.optimizer.rebalance.states import state_of, violations_by_pod
from podplan.optimizer.verify import verify
from tests.builders import cluster_of, make_node, make_pod, pod_term, selector, spread
from tests.test_rebalance import node, pdb, replica, rs, wave_states

ROOT = Path(__file__).resolve().parent.parent
ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"


def run(cluster: Cluster, prices: dict[str, float] | None = None, **kw) -> "object":
    unit = "node" if prices is None else "price"
    return consolidate(cluster, ConsolidateParams(time_limit=60, workers=1, **kw), prices or node_prices(cluster)[0],
                       unit)


def daemon(name: str, on: str) -> Pod:
    return make_pod(name).label("app", "agent").owner("DaemonSet", "agent").req(cpu="100m", memory="64Mi").on(on)\
        .build()


def check_waves(cluster: Cluster, plan) -> None:
    """Every wave within every PDB's budget at its start; every state after a wave passes the verifier; the
    shrunk cluster too."""
    base = replace(cluster, pending=())
    healthy = {p.key: disruption.pod_ready(p) for p in base.pods}
    for w, (after, moved) in zip(plan.waves, wave_states(base, plan)):
        pods = [(p, healthy[p.key]) for p in base.pods]
        for b in base.pdbs:
            allowed = disruption.budget(b, pods, base.workloads).allowed
            assert sum(1 for m in w.moves if disruption.guards(b, m.pod)) <= allowed
        unbound, _ = as_pending(base, [p for p in base.pods if p.key in moved])
        assert verify(unbound, {k: after[k] for k in moved}).ok
        for k in moved:
            healthy[k] = True
    state, placements = shrunk(base, plan)
    assert verify(state, placements).ok
    assert not {n.name for n in state.nodes} & set(plan.remove)


# ------------------------------------------------------------------------------------------------ exhaustive


@st.composite
def tiny_clusters(draw: st.DrawFn) -> tuple[Cluster, dict[str, float]]:
    """2-4 nodes (zones, maybe a taint, a DaemonSet pod), 1-4 replicas with host anti-affinity, zone spread or a
    node selector, maybe a bare pod (it pins its node); a price per node."""
    n_nodes = draw(st.integers(2, 4))
    nodes, pods = [], []
    for i in range(n_nodes):
        b = make_node(f"n{i}").labels({ZONE: draw(st.sampled_from("ab")), HOST: f"n{i}",
                                       "disk": draw(st.sampled_from(["ssd", "hdd"]))})
        b.alloc(cpu=str(draw(st.integers(2, 4))), memory="16Gi", pods=110)
        if draw(st.integers(0, 4)) == 0:
            b.taint("dedicated", "x", "NoSchedule")
        nodes.append(b.build())
        if draw(st.booleans()):
            pods.append(daemon(f"agent-{i}", f"n{i}"))
    for i in range(draw(st.integers(1, 4))):
        app = draw(st.sampled_from(["web", "db"]))
        p = make_pod(f"{app}-{i}").label("app", app).owner("ReplicaSet", f"{app}-rs")
        p.req(cpu=f"{draw(st.sampled_from([500, 1000, 1500, 2000]))}m", memory="1Gi")
        p.on(f"n{draw(st.integers(0, n_nodes - 1))}")
        rule = draw(st.sampled_from(["none", "none", "ssd", "anti", "spread"]))
        if rule == "ssd":
            p.node_selector(disk="ssd")
        elif rule == "anti":
            p.pod_anti_affinity(pod_term(HOST, selector(app=app)))
        elif rule == "spread":
            p.spread(spread(1, ZONE, selector(app=app)))
        pods.append(p.build())
    if draw(st.booleans()):
        pods.append(make_pod("bare").req(cpu="500m").on(f"n{draw(st.integers(0, n_nodes - 1))}").build())
    prices = {n.name: float(draw(st.integers(1, 3))) for n in nodes}
    return valid(cluster_of(nodes, pods)), prices


def valid(cluster: Cluster) -> Cluster:
    """The cluster without the pods that break a rule where they run, until none does, as a real running cluster
    is (judged with itself removed). Dropping them here, not filtering whole examples out, keeps most draws: most
    random 4-node clusters have one overcommitted node or one broken spread."""
    while bad := violations_by_pod(state_of(cluster, {})):
        cluster = replace(cluster, pods=tuple(p for p in cluster.pods if p.key not in bad))
    return cluster


def free_pods(cluster: Cluster) -> list[Pod]:
    """The pods a removal may move: movable and valid now."""
    bad = violations_by_pod(state_of(cluster, {}))
    return [p for p in movable(cluster) if p.key not in bad]


def valid_removal(cluster: Cluster, free: list[Pod], gone: set[str], where: dict[str, str]) -> bool:
    """Every free pod where `where` puts it (else where it is) passes the verifier, judged against the state with
    the removed nodes still there (cordoned, empty but for DaemonSet pods) and against the cluster without them:
    a pod that stays is judged too, so a move that strands it (a DoNotSchedule spread it now breaks) is not valid."""
    unbound, _ = as_pending(cluster, free)
    where = {p.key: where.get(p.key, p.node_name) for p in free}
    if any(n in gone for n in where.values()) or not verify(unbound, where).ok:
        return False
    small = replace(unbound, nodes=tuple(n for n in cluster.nodes if n.name not in gone),
                    pods=tuple(p for p in unbound.pods if p.node_name not in gone))
    return verify(small, where).ok


def exhaustive(cluster: Cluster, prices: dict[str, float]) -> float:
    """The most any removal saves: every set of nodes, every assignment of the movable pods (those valid now) to
    the nodes that stay (valid_removal)."""
    free = free_pods(cluster)
    keys = {p.key for p in free}
    pinned = {p.node_name for p in cluster.pods if p.key not in keys and not goes_with_node(p)}
    names = [n.name for n in cluster.nodes]
    best = 0.0
    for k in range(len(names) + 1):
        for gone in combinations([n for n in names if n not in pinned], k):
            saving = sum(prices[n] for n in gone)
            if saving <= best:
                continue
            kept = [n for n in names if n not in gone]
            if any(valid_removal(cluster, free, set(gone), dict(zip((p.key for p in free), combo)))
                   for combo in product(kept, repeat=len(free))):
                best = saving
    return best


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(instance=tiny_clusters())
def test_the_removal_saves_what_an_exhaustive_search_finds_and_says_it_is_optimal(instance) -> None:
    cluster, prices = instance
    plan = run(cluster, prices)
    assert plan.saving == exhaustive(cluster, prices)
    assert plan.status == "OPTIMAL" and plan.bound == plan.saving and plan.gap == 0
    check_waves(cluster, plan)
    # never worse than cluster-autoscaler where its answer is valid as the exhaustive search judges it:
    # kube-scheduler checks only the moving pod's own rules, so CA may strand a pod that stays (a DoNotSchedule
    # spread it now breaks while the removed node is still there, cordoned), which podplan refuses
    sd = plan.scale_down
    if valid_removal(cluster, free_pods(cluster), set(sd.remove), dict(sd.where)):
        assert plan.saving >= sd.saving


# ------------------------------------------------------------------------------------------------ waves, pins


def test_a_pdb_allowing_one_disruption_makes_one_wave_per_eviction_and_daemonset_pods_leave_with_the_node():
    nodes = [node("n1"), node("n2"), node("n3")]
    pods = [replica("web-1", "n1", "web", cpu="900m").build(), replica("web-2", "n1", "web", cpu="900m").build(),
            replica("web-3", "n2", "web", cpu="900m").build(), replica("web-4", "n3", "web", cpu="900m").build()]
    pods += [daemon(f"agent-{n}", n) for n in ("n1", "n2", "n3")]
    cluster = cluster_of(nodes, pods, pdbs=(pdb("web", max_unavailable=1),), workloads=(rs("web", 4),))
    plan = run(cluster)
    assert plan.status == "OPTIMAL" and len(plan.remove) == 2 and plan.saving == 2
    assert plan.moves == 2 and len(plan.waves) == 2  # the fewest moves: n1 keeps its two replicas
    assert all(w.budgets == {"default/web-pdb": (1, 1)} for w in plan.waves)
    check_waves(cluster, plan)
    state, _ = shrunk(cluster, plan)
    assert [p.name for p in state.pods if p.labels.get("app") == "agent"] == ["agent-n1"]


def test_a_bare_pod_pins_its_node_and_local_storage_pins_unless_allowed():
    nodes = [node("n1"), node("n2")]
    bare = make_pod("bare").req(cpu="100m").on("n2").build()
    plan = run(cluster_of(nodes, [replica("web-1", "n1", "web").build(), bare]))
    assert plan.remove == ("n1",) and "bare pod" in plan.pinned["n2"]
    scratch = replica("cache-1", "n2", "cache").set(local_storage=True).build()
    cluster = cluster_of(nodes, [replica("web-1", "n1", "web", cpu="2").build(), scratch])
    plan = run(cluster)
    assert plan.remove == ("n1",) and "local storage" in plan.pinned["n2"]
    allowed = run(cluster, move_policy=MovePolicy(evict_local_storage=True))
    assert len(allowed.remove) == 1 and not allowed.pinned


def test_a_pod_that_must_wait_for_another_to_leave_its_zone_is_evicted_after_it():
    """n1 goes: its anti-affine db-2 can only take n0, where db-0 runs; db-0 can only leave for n2 once db-2
    has left zone a (its zone spread). One wave, db-2 evicted first: kube-scheduler lands both as planned."""
    nodes = [make_node(n).labels({ZONE: z, HOST: n}).alloc(cpu=c, memory="16Gi", pods=110).build()
             for n, z, c in (("n0", "b", "2"), ("n1", "a", "2"), ("n2", "a", "3"))]
    db = lambda name, on, cpu: make_pod(name).label("app", "db").owner("ReplicaSet", "db-rs").req(cpu=cpu).on(on)
    pods = [db("db-0", "n0", "500m").spread(spread(1, ZONE, selector(app="db"))).build(),
            db("db-1", "n2", "2").build(),
            db("db-2", "n1", "500m").pod_anti_affinity(pod_term(HOST, selector(app="db"))).build()]
    cluster = cluster_of(nodes, pods)
    plan = run(cluster)
    assert plan.status == "OPTIMAL" and plan.remove == ("n1",) and not plan.blocked
    assert [[m.pod.name for m in w.moves] for w in plan.waves] == [["db-2", "db-0"]]
    check_waves(cluster, plan)


def test_cluster_autoscaler_keeps_nodes_above_its_threshold_that_podplan_empties():
    nodes = [node(f"n{i}", cpu="8", memory="32Gi") for i in range(3)]
    pods = [replica(f"web-{n}-{i}", f"n{n}", "web", cpu="700m").build() for n in range(3) for i in range(6)]
    plan = run(cluster_of(nodes, pods))  # 4.2 of 8 cpu each: 52.5 %, 12.6 cpu fits on two nodes
    assert plan.scale_down.remove == () and "not below the threshold" in plan.scale_down.kept["n0"]
    assert len(plan.remove) == 1 and plan.status == "OPTIMAL"
    check_waves(cluster_of(nodes, pods), plan)


# ------------------------------------------------------------------------------------------------ the command


def runner() -> CliRunner:
    try:
        return CliRunner(mix_stderr=False)  # type: ignore[call-arg]
    except TypeError:
        return CliRunner()


def test_json_names_the_removal_saving_bound_gap_waves_and_scale_down():
    out = runner().invoke(main, ["consolidate", str(ROOT / "instances" / "pdb-drain.yaml"), "-o", "json",
                                 "--node-types", str(ROOT / "instances" / "node-types" / "cloud-mix.yaml")])
    assert out.exit_code == 0, out.stderr
    doc = json.loads(out.stdout)
    assert {"status", "remove", "saving", "bound", "gap", "waves", "scale_down"} <= set(doc)
    assert doc["status"] == "OPTIMAL" and len(doc["remove"]) == 1 and doc["saving"] == pytest.approx(0.192)
    assert {"remove", "saving"} <= set(doc["scale_down"])


def test_the_shrunk_state_is_read_back_by_verify(tmp_path: Path):
    out = runner().invoke(main, ["consolidate", str(ROOT / "instances" / "pdb-drain.yaml"), "--emit", "state"])
    assert out.exit_code == 0, out.stderr
    state = tmp_path / "state.yaml"
    state.write_text(out.stdout)
    nodes = [d["metadata"]["name"] for d in yaml.safe_load_all(out.stdout) if d and d.get("kind") == "Node"]
    assert len(nodes) == 2
    checked = runner().invoke(main, ["verify", str(state)])
    assert checked.exit_code == 0 and "0 violation(s)" in checked.stdout


@pytest.mark.parametrize("types, says", [
    ("apiVersion: podplan.io/v1alpha1\nkind: NodeTypes\ntypes:\n- name: m5.xlarge\n  price: -1\n"
     "  node: {status: {allocatable: {cpu: '4', memory: 16Gi}}}\n", "price"),
    ("apiVersion: podplan.io/v1alpha1\nkind: NodeTypes\ntypes:\n- name: c5.large\n  price: 0.1\n"
     "  node: {metadata: {labels: {node.kubernetes.io/instance-type: c5.large}}, "
     "status: {allocatable: {cpu: '2', memory: 4Gi}}}\n", "no node type describes"),
], ids=["a price below 0", "a node no type describes"])
def test_bad_node_types_get_one_line_and_exit_2(tmp_path: Path, types: str, says: str):
    f = tmp_path / "types.yaml"
    f.write_text(types)
    out = runner().invoke(main, ["consolidate", str(ROOT / "instances" / "pdb-drain.yaml"), "--node-types", str(f)])
    assert out.exit_code == 2
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and says in lines[0], lines


def test_the_bundled_node_group_saves_more_than_cluster_autoscaler_at_its_prices():
    out = runner().invoke(main, ["consolidate", str(ROOT / "instances" / "consolidate.yaml"), "-o", "json",
                                 "--node-types", str(ROOT / "instances" / "node-types" / "cloud-mix.yaml")])
    assert out.exit_code == 0, out.stderr
    doc = json.loads(out.stdout)
    assert doc["status"] == "OPTIMAL" and doc["gap"] == 0
    assert doc["saving"] == pytest.approx(3 * 0.384) and doc["scale_down"]["saving"] == pytest.approx(2 * 0.384)
    assert doc["difference"]["only_podplan"] == ["ip-10-0-2-12.ec2.internal"]
    assert [p["node"] for p in doc["pinned"]] == ["ip-10-0-3-13.ec2.internal"]  # the cache's emptyDir
    # the web PDB allows one disruption: one web eviction per wave
    assert all(sum(1 for e in w["evictions"] if "/web-" in e["pod"]) <= 1 for w in doc["waves"])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(instance=tiny_clusters())
def test_the_capacity_bound_is_never_below_an_exhaustive_search(instance) -> None:
    """The bound large clusters report (an LP over how much of each node is kept) holds on every tiny cluster."""
    from podplan.optimizer.consolidate.model import capacity_bound
    from podplan.optimizer.consolidate.prices import PRICE_SCALE, scaled

    cluster, prices = instance
    keys = {p.key for p in movable(cluster)}
    pinned = {p.node_name for p in cluster.pods if p.key not in keys and not goes_with_node(p)}
    assert capacity_bound(cluster, pinned, scaled(prices)) >= exhaustive(cluster, prices) * PRICE_SCALE
