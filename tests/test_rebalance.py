"""podplan rebalance: targets, PDB-safe waves, landing with cordons, and every output."""
from __future__ import annotations

import json
import subprocess
from collections.abc import Iterable, Sequence
from dataclasses import replace
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from podplan.models.loader import load_paths
from podplan.models.objects import Cluster, Node, Pod, PodDisruptionBudget, Workload
from podplan.optimizer import disruption
from podplan.optimizer.rebalance import rebalance
from podplan.optimizer.rebalance.movable import MovePolicy, as_pending
from podplan.optimizer.rebalance.plan import RebalanceParams, RebalancePlan
from podplan.optimizer.render.rebalance import evictions_text, rebalance_document, rebalance_table, script_text
from podplan.optimizer.verify import verify
from tests.builders import cluster_of, make_node, make_pod, pod_term, req, selector, spread, term

ROOT = Path(__file__).resolve().parent.parent
PDB_DRAIN = ROOT / "instances" / "pdb-drain.yaml"
ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"


# ------------------------------------------------------------------------------------------------ builders


def node(name: str, zone: str = "a", cpu: str = "4", memory: str = "8Gi", **labels: str) -> Node:
    return make_node(name).labels({ZONE: zone, HOST: name, **labels}).alloc(cpu=cpu, memory=memory, pods=110).build()


def replica(name: str, on: str, app: str, cpu: str = "1", memory: str = "1Gi"):
    """A running pod of ReplicaSet <app>-rs, labelled app=<app>."""
    return make_pod(name).label("app", app).owner("ReplicaSet", f"{app}-rs").req(cpu=cpu, memory=memory).on(on)


def pdb(app: str, min_available: int | str | None = None, max_unavailable: int | str | None = None):
    return PodDisruptionBudget("default", f"{app}-pdb", selector(app=app), min_available, max_unavailable)


def rs(app: str, replicas: int) -> Workload:
    return Workload("ReplicaSet", "default", f"{app}-rs", replicas=replicas, selector=selector(app=app))


def plan_for(cluster: Cluster, goal: str = "fix", drain: Sequence[str] = (), **kw) -> RebalancePlan:
    return rebalance(cluster, RebalanceParams(goal=goal if goal or not drain else "drain", drain=tuple(drain),
                                              time_limit=10, **kw))


# ------------------------------------------------------------------------------------------------ checks


def wave_states(cluster: Cluster, plan: RebalancePlan) -> Iterable[tuple[dict[str, str], set[str]]]:
    """(where every pod is, which pods were replaced) after each wave."""
    where = {p.key: p.node_name for p in cluster.pods}
    moved: set[str] = set()
    for w in plan.waves:
        for m in w.moves:
            assert where[m.key] == m.source, "a move starts where the pod runs"
            where[m.key] = m.target
            moved.add(m.key)
        yield dict(where), set(moved)


def check_plan(cluster: Cluster, plan: RebalancePlan) -> None:
    """Every wave within every PDB's budget at its start, and every state after a wave passes the verifier
    (pods not moved yet are existing, replacements are placed)."""
    base = replace(cluster, pending=())
    healthy = {p.key: disruption.pod_ready(p) for p in base.pods}
    where = {p.key: p.node_name for p in base.pods}
    for w, (after, moved) in zip(plan.waves, wave_states(base, plan)):
        pods = [(p, healthy[p.key]) for p in base.pods]
        for b in base.pdbs:
            allowed = disruption.budget(b, pods, base.workloads).allowed
            evicted = sum(1 for m in w.moves if disruption.guards(b, m.pod))
            assert evicted <= allowed, f"{b.key}: {evicted} evictions > {allowed} allowed"
        unbound, _ = as_pending(base, [p for p in base.pods if p.key in moved])
        report = verify(unbound, {k: after[k] for k in moved})
        assert report.ok, [v for v in report.violations if not v.preexisting]
        for k in moved:
            healthy[k] = True
        where = after
    assert where == plan.final


def final_state_violations(cluster: Cluster, plan: RebalancePlan) -> list:
    moved = {m.key for w in plan.waves for m in w.moves}
    base = replace(cluster, pending=())
    unbound, _ = as_pending(base, [p for p in base.pods if p.key in moved])
    return list(verify(unbound, {k: plan.final[k] for k in moved}).violations)


# ------------------------------------------------------------------------------------------------ the seed example


def test_draining_node_1_then_node_2_never_goes_below_two_available_and_says_a_node_must_come_back() -> None:
    cluster = load_paths([str(PDB_DRAIN)])
    plan = plan_for(cluster, "", drain=("node-1", "node-2"))
    check_plan(cluster, plan)
    frontend = [p for p in cluster.pods if p.labels.get("app") == "frontend"]
    for w in plan.waves:
        evicted = sum(1 for m in w.moves if m.pod.labels.get("app") == "frontend")
        assert len(frontend) - evicted >= 2
    assert plan.final["default/pod-a"] != "node-1" and plan.final["default/pod-x"] != "node-1"
    assert not plan.complete
    stuck = [b for b in plan.blocked if b.pod.startswith("default/pod-")]
    assert len(stuck) == 1 and plan.final[stuck[0].pod] == "node-2"
    assert "add node-1 back" in stuck[0].reason and "node-2" in stuck[0].reason


def test_draining_node_1_alone_completes_in_one_wave_with_one_frontend_eviction() -> None:
    cluster = load_paths([str(PDB_DRAIN)])
    plan = plan_for(cluster, "", drain=("node-1",))
    check_plan(cluster, plan)
    assert plan.complete and plan.moves == 2
    assert [sorted(m.key for m in w.moves) for w in plan.waves] == [["default/pod-a", "default/pod-x"]]
    assert plan.waves[0].budgets == {"default/frontend-pdb": (1, 1)}
    assert "node-1" in plan.after["empty_nodes"] and "node-1" in plan.waves[0].cordon


# ------------------------------------------------------------------------------------------------ movable pods


def drain_cluster(extra: Pod) -> Cluster:
    return cluster_of([node("n1"), node("n2")], [replica("web-0", "n1", "web").build(), extra])


IMMOVABLE = [
    ("a bare pod", make_pod("bare").req(cpu="1").on("n1").build(), "bare pod"),
    ("a pod with an emptyDir volume", replica("cache-0", "n1", "cache").set(local_storage=True).build(),
     "local storage"),
    ("a system-critical pod", replica("dns-0", "n1", "dns").priority(2_000_000_000).build(), "system-critical"),
]


@pytest.mark.parametrize("pod,why", [c[1:] for c in IMMOVABLE], ids=[f"{c[0]} on the drained node blocks the drain"
                                                                     for c in IMMOVABLE])
def test_an_immovable_pod_on_a_drained_node_makes_the_drain_impossible(pod: Pod, why: str) -> None:
    plan = plan_for(drain_cluster(pod), "", drain=("n1",))
    assert not plan.complete
    assert [b.pod for b in plan.blocked] == [pod.key] and why in plan.blocked[0].reason
    assert plan.final["default/web-0"] == "n2"


def test_evict_local_storage_and_system_critical_flags_let_those_pods_move() -> None:
    for pod, policy in [(IMMOVABLE[1][1], MovePolicy(evict_local_storage=True)),
                        (IMMOVABLE[2][1], MovePolicy(evict_system_critical=True))]:
        plan = plan_for(drain_cluster(pod), "", drain=("n1",), move_policy=policy)
        assert plan.complete and plan.final[pod.key] == "n2"


def test_daemonset_and_mirror_pods_go_with_a_drained_node() -> None:
    ds = make_pod("agent").owner("DaemonSet", "agent").req(cpu="100m").on("n1").build()
    mirror = make_pod("etcd").set(mirror=True).on("n1").build()
    cluster = cluster_of([node("n1"), node("n2")], [replica("web-0", "n1", "web").build(), ds, mirror])
    plan = plan_for(cluster, "", drain=("n1",))
    assert plan.complete and plan.final["default/agent"] == "n1"
    assert "n1" in plan.after["empty_nodes"]


# ------------------------------------------------------------------------------------------------ PDBs


def test_a_pdb_with_zero_allowed_disruptions_blocks_the_drain_and_says_so() -> None:
    cluster = cluster_of([node("n1"), node("n2")],
                         [replica("web-0", "n1", "web").build(), replica("web-1", "n2", "web").build()],
                         pdbs=(pdb("web", min_available=2),))
    plan = plan_for(cluster, "", drain=("n1",))
    assert not plan.complete and plan.moves == 0
    assert plan.blocked[0].pod == "default/web-0"
    assert "allows 0 disruptions" in plan.blocked[0].reason and "blocks the drain of n1" in plan.blocked[0].reason
    assert "needs 2 healthy pods and has 2 currently" in plan.blocked[0].reason


def test_max_unavailable_one_drains_three_replicas_in_three_waves() -> None:
    pods = [replica(f"web-{i}", "n1", "web").build() for i in range(3)] + [replica("web-3", "n2", "web").build()]
    cluster = cluster_of([node("n1"), node("n2", cpu="8", memory="16Gi"), node("n3")], pods,
                         pdbs=(pdb("web", max_unavailable=1),), workloads=(rs("web", 4),))
    plan = plan_for(cluster, "", drain=("n1",))
    check_plan(cluster, plan)
    assert plan.complete and [len(w.moves) for w in plan.waves] == [1, 1, 1]


def test_a_percentage_min_available_rounds_up_like_the_disruption_controller() -> None:
    # 50% of 3 replicas is 1.5, rounded up to 2: one disruption at a time
    pods = [replica(f"web-{i}", "n1", "web").build() for i in range(2)] + [replica("web-2", "n2", "web").build()]
    cluster = cluster_of([node("n1"), node("n2"), node("n3")], pods, pdbs=(pdb("web", min_available="50%"),),
                         workloads=(rs("web", 3),))
    plan = plan_for(cluster, "", drain=("n1",))
    check_plan(cluster, plan)
    assert plan.complete and [len(w.moves) for w in plan.waves] == [1, 1]


def test_a_pod_under_two_pdbs_cannot_be_evicted_and_blocks_the_drain() -> None:
    cluster = cluster_of([node("n1"), node("n2")], [replica("web-0", "n1", "web").build()],
                         pdbs=(pdb("web", max_unavailable=1), replace(pdb("web", 0), name="other")))
    plan = plan_for(cluster, "", drain=("n1",))
    assert not plan.complete and "more than one PodDisruptionBudget" in plan.blocked[0].reason


# ------------------------------------------------------------------------------------------------ fix


def broken(name: str) -> Cluster:
    """A cluster whose running pods break one rule now, each repairable by moving a pod."""
    if name == "labels":
        pods = [replica("web-0", "n1", "web").node_selector(disktype="ssd").build()]
        return cluster_of([node("n1", disktype="hdd"), node("n2", disktype="ssd")], pods)
    if name == "noschedule":
        n1 = make_node("n1").labels({HOST: "n1"}).taint("maintenance", "true", "NoSchedule").build()
        return cluster_of([n1, node("n2")], [replica("web-0", "n1", "web").build()])
    if name == "noexecute":
        n1 = make_node("n1").labels({HOST: "n1"}).taint("gpu", "true", "NoExecute").build()
        return cluster_of([n1, node("n2")], [replica("web-0", "n1", "web").build()])
    if name == "skew":
        sc = spread(1, ZONE, selector(app="web"))
        pods = [replica(f"web-{i}", "n1", "web").spread(sc).build() for i in range(3)]
        return cluster_of([node("n1", "a"), node("n2", "b"), node("n3", "c")], pods)
    if name == "anti-affinity":
        anti = pod_term(HOST, selector(app="db"))
        pods = [replica(f"db-{i}", "n1", "db").pod_anti_affinity(anti).build() for i in range(2)]
        return cluster_of([node("n1"), node("n2")], pods)
    raise KeyError(name)


FIX_CASES = {
    "labels": "a node relabelled under a pod whose nodeSelector no longer matches",
    "noschedule": "a NoSchedule taint added under a running pod",
    "noexecute": "a NoExecute taint the pod does not tolerate",
    "skew": "three replicas in one zone with zone spread maxSkew 1",
    "anti-affinity": "two replicas on one host despite required host anti-affinity",
}


@pytest.mark.parametrize("name", list(FIX_CASES), ids=[f"fix repairs {v}" for v in FIX_CASES.values()])
def test_fix_leaves_zero_violations(name: str) -> None:
    cluster = broken(name)
    plan = plan_for(cluster, "fix")
    assert plan.before["violations"] > 0
    check_plan(cluster, plan)
    assert plan.complete and plan.after["violations"] == 0
    assert final_state_violations(cluster, plan) == []


def test_a_pod_with_a_single_valid_node_is_moved_there_for_every_goal() -> None:
    # web-0 sits under a NoSchedule taint and only n0 takes it: no level of any goal has a choice to make
    n1 = make_node("n1").labels({HOST: "n1"}).taint("maint", "true", "NoSchedule").alloc(cpu="2", pods=110).build()
    cluster = cluster_of([node("n0"), n1], [replica("web-0", "n1", "web", cpu="500m").build(),
                                            make_pod("bare").req(cpu="500m").on("n0").build()])
    for goal in ("fix", "pack", "spread", "prefs"):
        plan = plan_for(cluster, goal)
        assert plan.complete and plan.final["default/web-0"] == "n0", goal


def test_fix_moves_only_as_many_pods_as_the_repair_needs() -> None:
    plan = plan_for(broken("skew"), "fix")
    assert plan.moves == 2 and sorted(plan.final.values()) == ["n1", "n2", "n3"]


def test_a_violation_no_node_can_repair_is_blocked_and_the_pod_stays() -> None:
    n1 = make_node("n1").labels({HOST: "n1"}).taint("gpu", "true", "NoExecute").build()
    cluster = cluster_of([n1], [replica("web-0", "n1", "web").build()])
    plan = plan_for(cluster, "fix")
    assert not plan.complete and plan.moves == 0
    assert plan.blocked[0].pod == "default/web-0" and "TaintToleration" in plan.blocked[0].reason


def test_max_moves_caps_the_repairs_and_names_the_cap() -> None:
    n1 = make_node("n1").labels({HOST: "n1"}).taint("gpu", "true", "NoExecute").build()
    cluster = cluster_of([n1, node("n2")], [replica(f"web-{i}", "n1", "web").build() for i in range(2)])
    plan = plan_for(cluster, "fix", max_moves=1)
    assert plan.moves == 1 and not plan.complete
    assert "--max-moves 1" in plan.blocked[0].reason


# ------------------------------------------------------------------------------------------------ goals


def test_pack_empties_a_node_reports_it_removable_and_keeps_it_cordoned() -> None:
    cluster = load_paths([str(PDB_DRAIN)])
    plan = plan_for(cluster, "pack")
    check_plan(cluster, plan)
    assert plan.complete and plan.moves == 1 and plan.after["empty_nodes"] == ["node-2"]
    assert rebalance_document(plan)["removable"] == ["node-2"]
    assert plan.waves[0].cordon == ("node-2",) and plan.waves[0].temporary == ()


def test_spread_lowers_the_highest_utilization() -> None:
    pods = [replica(f"web-{i}", "n1", "web").build() for i in range(3)]
    cluster = cluster_of([node("n1"), node("n2"), node("n3")], pods)
    plan = plan_for(cluster, "spread")
    check_plan(cluster, plan)
    assert plan.after["utilization"]["cpu"]["max"] == 0.25 < plan.before["utilization"]["cpu"]["max"]
    assert plan.moves == 2 and plan.after["utilization"]["cpu"]["stddev"] == 0


def test_prefs_moves_a_pod_to_the_node_it_prefers() -> None:
    pod = replica("web-0", "n1", "web").preferred_node_affinity(10, term(req("disktype", "In", "ssd"))).build()
    cluster = cluster_of([node("n1"), node("n2", disktype="ssd")], [pod])
    plan = plan_for(cluster, "prefs")
    assert plan.final["default/web-0"] == "n2" and plan.after["preference"] == 10 > plan.before["preference"]


# ------------------------------------------------------------------------------------------------ waves and landing


def _drain_n1_of_a_pod_preferring_n2() -> tuple[Cluster, RebalancePlan]:
    """web-0 on n1 prefers n2 (kube-scheduler's NodeAffinity score sends its replacement there); draining n1,
    the tie-break (lowest utilisation) plans n3. The plan, checked wave by wave."""
    busy = make_pod("batch").req(cpu="2", memory="4Gi").on("n2").build()
    web = replica("web-0", "n1", "web").preferred_node_affinity(100, term(req("tier", "In", "b"))).build()
    cluster = cluster_of([node("n1"), node("n2", tier="b"), node("n3")], [busy, web])
    plan = plan_for(cluster, "", drain=("n1",))
    check_plan(cluster, plan)
    return cluster, plan


def test_a_replacement_kube_scheduler_would_put_elsewhere_lands_as_planned_with_a_temporary_cordon() -> None:
    # the wave cordons n2 for the time of the wave
    _, plan = _drain_n1_of_a_pod_preferring_n2()
    (w,) = plan.waves
    assert w.moves[0].target == "n3"
    assert (w.landing[0].alone, w.landing[0].cordoned) == ("n2", "n3")
    assert w.temporary == ("n2",) and w.cordon == ("n1", "n2")


def test_a_drained_pod_no_cordon_can_steer_lands_where_kube_scheduler_binds_it(monkeypatch) -> None:
    # the case above with no temporary cordon allowed: kube-scheduler's NodeAffinity score sends the
    # replacement to n2 rather than the planned n3; leaving n1 there beats staying on the drained node
    from podplan.optimizer.rebalance import landing
    monkeypatch.setattr(landing, "TEMPORARY_CORDONS", (0, 0.0))
    _, plan = _drain_n1_of_a_pod_preferring_n2()
    (w,) = plan.waves
    assert plan.complete and w.moves[0].target == "n2" and w.temporary == ()
    assert (w.landing[0].alone, w.landing[0].cordoned) == ("n2", "n2")


def test_a_move_no_cordon_can_steer_and_worth_less_than_staying_is_blocked_naming_kube_schedulers_node(
        monkeypatch) -> None:
    # pack plans web-0 onto n2 to empty n1; kube-scheduler's LeastAllocated binds the replacement on the empty
    # n3 instead, which empties no node for a move: worse than not moving, so the move is left over, and says why
    from podplan.optimizer.rebalance import landing
    monkeypatch.setattr(landing, "TEMPORARY_CORDONS", (0, 0.0))
    busy = make_pod("batch").req(cpu="2", memory="4Gi").on("n2").build()
    web = replica("web-0", "n1", "web").build()
    cluster = cluster_of([node("n1"), node("n2"), node("n3")], [busy, web])
    plan = plan_for(cluster, "pack")
    assert not plan.waves and not plan.complete
    (blocked,) = plan.blocked
    assert blocked.pod == "default/web-0"
    assert "kube-scheduler would bind its replacement on n3, and cordoning 0 node(s) (at most 0) does not " \
           "steer it" in blocked.reason


def test_two_pods_that_must_swap_full_nodes_move_in_one_wave() -> None:
    a = replica("a-0", "n1", "a", cpu="3").node_selector(disk="ssd").build()
    b = replica("b-0", "n2", "b", cpu="3").node_selector(disk="hdd").build()
    cluster = cluster_of([node("n1", disk="hdd"), node("n2", disk="ssd")], [a, b])
    plan = plan_for(cluster, "fix")
    check_plan(cluster, plan)
    assert plan.complete and [len(w.moves) for w in plan.waves] == [2]


def test_a_cache_that_requires_its_web_pod_on_the_same_host_moves_with_it() -> None:
    web = replica("web-0", "n1", "web").build()
    cache = replica("cache-0", "n1", "cache").pod_affinity(pod_term(HOST, selector(app="web"))).build()
    cluster = cluster_of([node("n1"), node("n2")], [web, cache])
    plan = plan_for(cluster, "", drain=("n1",))
    check_plan(cluster, plan)
    assert plan.complete and [sorted(m.key for m in w.moves) for w in plan.waves] == [
        ["default/cache-0", "default/web-0"]]
    assert [m.key for m in plan.waves[0].moves][-1] == "default/cache-0", "the affine pod is evicted last"


def test_a_pod_arrives_on_a_node_in_the_wave_its_occupant_leaves_or_later() -> None:
    # b breaks its nodeSelector on n2 and can only go to n3; a, drained off n1, then only fits n2
    n2 = make_node("n2").labels({HOST: "n2"}).alloc(cpu="4", memory="8Gi", pods=110).build()
    a = replica("a-0", "n1", "a", cpu="3").build()
    b = replica("b-0", "n2", "b", cpu="3").node_selector(pool="b").build()
    cluster = cluster_of([node("n1"), n2, node("n3", pool="b")], [a, b])
    plan = plan_for(cluster, "", drain=("n1",))
    check_plan(cluster, plan)
    assert plan.complete and plan.final["default/a-0"] == "n2" and plan.final["default/b-0"] == "n3"
    wave_of = {m.key: i for i, w in enumerate(plan.waves) for m in w.moves}
    assert wave_of["default/b-0"] <= wave_of["default/a-0"]


# ------------------------------------------------------------------------------------------------ outputs


def test_the_plan_document_has_the_issue_shape() -> None:
    doc = rebalance_document(plan_for(load_paths([str(PDB_DRAIN)]), "", drain=("node-1", "node-2")))
    assert {"goal", "complete", "blocked", "waves", "moves", "before", "after"} <= set(doc)
    assert doc["goal"] == "drain" and doc["complete"] is False and doc["moves"] == 2
    assert doc["blocked"][0]["pod"] == "default/pod-b" and doc["blocked"][0]["reason"]
    wave = doc["waves"][0]
    assert wave["cordon"] == ["node-1", "node-2"]
    assert all(set(e) == {"pod", "from", "to"} for e in wave["evictions"])
    assert set(doc["before"]) == {"utilization", "nodes_used", "empty_nodes", "violations", "preference"}
    assert set(doc["before"]["utilization"]["cpu"]) == {"max", "mean", "stddev"}
    json.dumps(doc)


def test_evictions_are_a_yaml_stream_of_policy_v1_evictions_with_a_comment_per_wave() -> None:
    cluster = cluster_of([node("n1"), node("n2"), node("n3")],
                         [replica(f"web-{i}", "n1", "web").build() for i in range(2)],
                         pdbs=(pdb("web", max_unavailable=1),), workloads=(rs("web", 2),))
    plan = plan_for(cluster, "", drain=("n1",))
    text = evictions_text(plan, "yaml")
    assert [line.split(":")[0] for line in text.splitlines() if line.startswith("# wave")] == ["# wave 1", "# wave 2"]
    docs = list(yaml.safe_load_all(text))
    assert [d["kind"] for d in docs] == ["Eviction", "Eviction"]
    assert docs[0] == {"apiVersion": "policy/v1", "kind": "Eviction",
                       "metadata": {"name": plan.waves[0].moves[0].pod.name, "namespace": "default"}}
    assert [len(w["items"]) for w in json.loads(evictions_text(plan, "json"))["waves"]] == [1, 1]


def test_the_script_is_valid_bash_that_cordons_evicts_through_the_api_and_waits_for_readiness(tmp_path: Path) -> None:
    cluster = load_paths([str(PDB_DRAIN)])
    plan = plan_for(cluster, "pack")
    text = script_text(cluster, plan)
    path = tmp_path / "plan.sh"
    path.write_text(text)
    subprocess.run(["bash", "-n", str(path)], check=True)
    assert "set -euo pipefail" in text
    assert 'kubectl create --raw "$url" -f -' in text
    lines = text.splitlines()
    order = [next(i for i, l in enumerate(lines) if l.startswith(p))
             for p in ("cordon node-2", "evict default pod-b", "gone default pod-b",
                       "ready default app=frontend,pod-template-hash=5d8b7f9c6d 2 node-3")]
    assert order == sorted(order)


def test_the_script_lifts_temporary_cordons_but_keeps_drained_nodes_cordoned(tmp_path: Path) -> None:
    busy = make_pod("batch").req(cpu="2", memory="4Gi").on("n2").build()
    web = replica("web-0", "n1", "web").preferred_node_affinity(100, term(req("tier", "In", "b"))).build()
    cluster = cluster_of([node("n1"), node("n2", tier="b"), node("n3")], [busy, web])
    text = script_text(cluster, plan_for(cluster, "", drain=("n1",)))
    assert "\ncordon n1 n2\n" in text and "\nuncordon n2\n" in text and "uncordon n1" not in text
    path = tmp_path / "plan.sh"
    path.write_text(text)
    subprocess.run(["bash", "-n", str(path)], check=True)


def test_the_table_shows_each_wave_where_replacements_land_and_the_metrics() -> None:
    text = rebalance_table(plan_for(load_paths([str(PDB_DRAIN)]), "", drain=("node-1", "node-2")))
    assert "WAVE 1   cordon: node-1, node-2" in text
    assert "IF LEFT ALONE" in text and "default/frontend-pdb (1 of 1 allowed)" in text
    assert "INCOMPLETE" in text and "add node-1 back" in text and "cpu utilization max" in text


def test_the_command_prints_json_and_rejects_an_unknown_drain_node() -> None:
    from podplan.cli import main

    runner = CliRunner()
    ok = runner.invoke(main, ["rebalance", str(PDB_DRAIN), "--drain", "node-1", "-o", "json"])
    assert ok.exit_code == 0, ok.output
    assert json.loads(ok.output)["complete"] is True
    bad = runner.invoke(main, ["rebalance", str(PDB_DRAIN), "--drain", "node-9"])
    assert bad.exit_code == 2 and "node-9" in bad.output


def test_the_command_emits_a_script_that_passes_bash_n(tmp_path: Path) -> None:
    from podplan.cli import main

    out = CliRunner().invoke(main, ["rebalance", str(PDB_DRAIN), "--drain", "node-1", "--drain", "node-2",
                                    "--emit", "script"])
    assert out.exit_code == 1, "an incomplete plan is printed, and exits 1"
    path = tmp_path / "plan.sh"
    path.write_text(out.output)
    subprocess.run(["bash", "-n", str(path)], check=True)
    assert "# blocked: default/pod-b" in out.output


STUB_KUBECTL = r'''#!/usr/bin/env bash
# records every call; evictions' bodies (stdin) go to the log too; pods are gone and replacements Ready at once
echo "kubectl $*" >> "$LOG"
if [ "$1" = "create" ]; then
  cat >> "$LOG"
  echo >> "$LOG"
elif [ "$1" = "get" ] && [ "$2" = "pods" ]; then
  printf 'True\nTrue\nTrue\nTrue\n'
fi
'''


def test_the_script_runs_against_a_stub_kubectl_in_the_planned_order(tmp_path: Path) -> None:
    cluster = load_paths([str(PDB_DRAIN)])
    busy_plan = plan_for(cluster, "", drain=("node-1",))
    stub = tmp_path / "bin" / "kubectl"
    stub.parent.mkdir()
    stub.write_text(STUB_KUBECTL)
    stub.chmod(0o755)
    script = tmp_path / "plan.sh"
    script.write_text(script_text(cluster, busy_plan))
    log = tmp_path / "calls.log"
    env = {"PATH": f"{stub.parent}:/usr/bin:/bin", "LOG": str(log), "TIMEOUT": "5"}
    done = subprocess.run(["bash", str(script)], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    lines = log.read_text().splitlines()
    calls = [l for l in lines if l.startswith("kubectl ")]
    assert calls[0] == "kubectl cordon node-1"
    assert calls[1] == "kubectl create --raw /api/v1/namespaces/default/pods/pod-a/eviction -f -"
    bodies = [json.loads(l) for l in lines if l.startswith("{")]
    assert bodies[0] == {"apiVersion": "policy/v1", "kind": "Eviction",
                         "metadata": {"name": "pod-a", "namespace": "default"},
                         "deleteOptions": {"preconditions": {"uid": "a1b2c3d4-0001-4e5f-8a9b-0c1d2e3f4a5b"}}}
    assert any(c.startswith("kubectl get pods -n default -l app=frontend,pod-template-hash=5d8b7f9c6d") for c in calls)
    assert "2 move(s) done" in done.stdout


def test_a_large_drain_re_places_only_the_drained_nodes_pods(monkeypatch: pytest.MonkeyPatch) -> None:
    import podplan.optimizer.rebalance.target as target_module

    monkeypatch.setattr(target_module, "FOCUS_LIMIT", 2)  # "large" from 3 movable pods on
    pods = [replica("a-0", "n1", "a").build(), replica("b-0", "n2", "b").build(), replica("c-0", "n3", "c").build()]
    cluster = cluster_of([node("n1"), node("n2"), node("n3")], pods)
    plan = plan_for(cluster, "", drain=("n1",))
    check_plan(cluster, plan)
    assert plan.complete and plan.moves == 1 and plan.final["default/a-0"] != "n1"
    assert any("only the 1 that must move" in n.text for n in plan.notes)


def test_max_moves_stops_a_drain_and_says_the_cap_is_why() -> None:
    pods = [replica(f"web-{i}", "n1", "web").build() for i in range(2)]
    plan = plan_for(cluster_of([node("n1"), node("n2")], pods), "", drain=("n1",), max_moves=1)
    assert plan.moves == 1 and not plan.complete
    assert "--max-moves 1 is reached" in plan.blocked[0].reason


def test_exit_codes_say_whether_the_plan_is_complete_and_refuse_options_that_do_not_apply() -> None:
    from podplan.cli import main

    runner = CliRunner()
    done = runner.invoke(main, ["rebalance", str(PDB_DRAIN), "--drain", "node-1"])
    assert done.exit_code == 0 and "complete" in done.output
    blocked = runner.invoke(main, ["rebalance", str(PDB_DRAIN), "--drain", "node-1", "--drain", "node-2"])
    assert blocked.exit_code == 1 and "INCOMPLETE" in blocked.output
    script_json = runner.invoke(main, ["rebalance", str(PDB_DRAIN), "--emit", "script", "-o", "json"])
    assert script_json.exit_code == 2
    assert script_json.output == "error: --emit script prints a bash script: -o json does not apply\n"


def idle_nodes_and_one_pod_to_pack(n: int) -> Cluster:
    """Two half-full nodes (pack moves one pod) and `n` idle nodes, with one pod pending."""
    nodes = [node("busy-1"), node("busy-2")] + [node(f"idle-{i:02d}") for i in range(n)]
    pods = [replica("a-0", "busy-1", "a", cpu="1").build(), replica("b-0", "busy-2", "b", cpu="1").build()]
    pending = [make_pod("waiting").req(cpu="100").build()]
    return cluster_of(nodes, pods + pending)


def test_tables_count_long_lists_and_json_lists_them_all() -> None:
    plan = plan_for(idle_nodes_and_one_pod_to_pack(12), "pack")
    text = rebalance_table(plan)
    row = next(l for l in text.splitlines() if l.startswith("empty nodes"))
    assert "idle-00, idle-01, idle-02 and 9 more" in row and "idle-11" not in row
    assert len(plan.after["empty_nodes"]) == 13
    assert rebalance_document(plan)["after"]["empty_nodes"][-1] == "idle-11"


def test_pack_says_in_its_headline_that_pods_are_pending() -> None:
    plan = plan_for(idle_nodes_and_one_pod_to_pack(1), "pack")
    headline = rebalance_table(plan).splitlines()[0]
    assert "1 node(s) removable while 1 pod(s) are pending" in headline


FAKE_KUBECTL = r'''#!/usr/bin/env bash
# the API server of a PDB that allows no disruption for the first REFUSALS evictions, then one
echo "kubectl $*" >> "$LOG"
cat > /dev/null
n=$(grep -c "^kubectl create" "$LOG")
if [ "$1" = create ] && [ "$n" -le "$REFUSALS" ]; then
  echo "Error from server (TooManyRequests): Cannot evict pod as it would violate the pod's disruption budget." >&2
  exit 1
fi
echo '{"kind": "Status", "status": "Success"}'
'''


def run_evict(tmp_path: Path, refusals: int, **env: str) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    """Source the script (its functions only) and evict one pod against a fake kubectl on PATH."""
    cluster = load_paths([str(PDB_DRAIN)])
    script = tmp_path / "plan.sh"
    script.write_text(script_text(cluster, plan_for(cluster, "", drain=("node-1",))))
    fake = tmp_path / "bin" / "kubectl"
    fake.parent.mkdir()
    fake.write_text(FAKE_KUBECTL)
    fake.chmod(0o755)
    log = tmp_path / "calls.log"
    log.touch()
    done = subprocess.run(["bash", "-c", f"source {script} && evict default pod-a uid-1"], capture_output=True,
                          text=True, env={"PATH": f"{fake.parent}:/usr/bin:/bin", "LOG": str(log),
                                          "REFUSALS": str(refusals), "EVICT_INTERVAL": "0", **env})
    return done, log.read_text().splitlines()


def test_the_script_retries_an_eviction_a_pdb_refuses_and_reports_the_pod_evicted(tmp_path: Path) -> None:
    done, calls = run_evict(tmp_path, refusals=2)
    assert done.returncode == 0, done.stderr
    assert calls == ["kubectl create --raw /api/v1/namespaces/default/pods/pod-a/eviction -f -"] * 3
    assert done.stderr.count("waiting 0s to retry default/pod-a") == 2
    assert done.stdout == "evicted default/pod-a\n"


def test_the_script_gives_up_on_a_refused_eviction_after_its_timeout(tmp_path: Path) -> None:
    done, calls = run_evict(tmp_path, refusals=99, EVICT_TIMEOUT="0")
    assert done.returncode == 1 and len(calls) == 1
    assert "gave up default/pod-a: refused 1 time(s) in 0s" in done.stderr


def test_the_scripts_server_dry_run_sends_every_request_with_dry_run(tmp_path: Path) -> None:
    done, calls = run_evict(tmp_path, refusals=0, DRY_RUN="server")
    assert done.returncode == 0, done.stderr
    assert calls == ["kubectl create --raw /api/v1/namespaces/default/pods/pod-a/eviction?dryRun=All -f -"]
    assert done.stdout == "evicted default/pod-a (dry run)\n"
    log = tmp_path / "calls.log"
    log.write_text("")
    whole = subprocess.run(["bash", str(tmp_path / "plan.sh"), "--dry-run=server"], capture_output=True, text=True,
                           env={"PATH": f"{tmp_path / 'bin'}:/usr/bin:/bin", "LOG": str(log), "REFUSALS": "0"})
    assert whole.returncode == 0, whole.stderr
    calls = log.read_text().splitlines()
    assert calls[0] == "kubectl cordon --dry-run=server node-1"
    assert all("dryRun=All" in c for c in calls[1:]) and len(calls) == 3, "no waits in a dry run"
    assert "dry run: nothing changed" in whole.stdout


def test_a_large_pack_searches_the_nodes_easiest_to_empty_first_and_still_empties_them(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import podplan.optimizer.rebalance.target as target_module

    monkeypatch.setattr(target_module, "FOCUS_LIMIT", 2)  # "large" from 3 movable pods on
    monkeypatch.setattr(target_module, "NEIGHBOURHOOD_PODS", 2)  # the first neighbourhood: the pods of two nodes
    pods = [replica(f"{app}-0", f"n{i}", app).build() for i, app in enumerate("abcd", 1)]
    cluster = cluster_of([node(f"n{i}") for i in range(1, 5)], pods)
    plan = plan_for(cluster, "pack")
    check_plan(cluster, plan)
    assert plan.complete and len(plan.after["empty_nodes"]) == 3 and plan.moves == 3


def test_verbose_prints_a_line_per_target_stage_and_wave() -> None:
    from podplan.cli import main

    out = CliRunner().invoke(main, ["--verbose", "rebalance", str(PDB_DRAIN), "--goal", "pack"])
    assert out.exit_code == 0
    assert "rebalance: empty_nodes: searching for" in out.output
    assert "rebalance: wave 1: 1 move(s), 0 left" in out.output
