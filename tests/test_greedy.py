"""The greedy kube-scheduler simulator: queue order, FitError messages, the seeded tie-break,
numFeasibleNodesToFind, and the guard that keeps placed pods valid."""
from __future__ import annotations

import pytest

from builders import cluster_of, make_node, make_pod, pod_term, req, selector, spread, term
from podplan.optimizer.greedy import num_feasible_nodes_to_find, queue_order, simulate
from podplan.optimizer.interpodaffinity.batch import ERR_REASON_BREAKS_AFFINITY
from podplan.optimizer.podtopologyspread.batch import ERR_REASON_BREAKS_SPREAD
from podplan.optimizer.verify import verify

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"


def node(name: str, cpu: str = "4", zone: str = "a", **labels: str):
    return make_node(name).label(HOST, name).label(ZONE, zone).labels(labels).alloc(cpu=cpu, memory="16Gi",
                                                                                     pods=110).build()


# ------------------------------------------------------------------------------------------------ the queue


@pytest.mark.parametrize("priorities, expected", [
    pytest.param([0, 0, 0], ["p0", "p1", "p2"], id="equal priorities keep input order"),
    pytest.param([0, 10, 5], ["p1", "p2", "p0"], id="higher priority goes first"),
    pytest.param([5, 10, 5, 10], ["p1", "p3", "p0", "p2"], id="within one priority, earlier input goes first"),
    pytest.param([-1, 0], ["p1", "p0"], id="a negative priority goes after the default"),
])
def test_queue_order_is_priority_then_input_order(priorities, expected):
    cluster = cluster_of([node("n")], [make_pod(f"p{i}").priority(p).build() for i, p in enumerate(priorities)])
    assert [p.name for p in queue_order(cluster.pending)] == expected


def test_the_only_free_slot_goes_to_the_higher_priority_pod_though_it_comes_later():
    cluster = cluster_of([node("n", cpu="1")], [make_pod("early").req(cpu="1").build(),
                                                make_pod("urgent").req(cpu="1").priority(100).build()])
    plan = simulate(cluster)
    assert plan.placements == {"default/urgent": "n"}
    assert plan.pending == {"default/early": "0/1 nodes are available: 1 Insufficient cpu."}


# -------------------------------------------------------------------------------------------- FitError text


def test_fit_error_counts_each_node_once_by_its_first_rejecting_plugin_sorted_as_strings():
    nodes = [node("small-1", cpu="1"), node("small-2", cpu="1"),
             make_node("tainted").label(HOST, "tainted").taint("k", "v").alloc(cpu="1", memory="16Gi", pods=110).build()]
    cluster = cluster_of(nodes, [make_pod("big").req(cpu="2").build()])
    # The tainted node is short of cpu too, but TaintToleration rejects it first and the cycle stops there.
    assert simulate(cluster).pending == {
        "default/big": "0/3 nodes are available: 1 node(s) had untolerated taint(s), 2 Insufficient cpu."}


def test_fit_error_lists_every_resource_one_plugin_finds_short_on_a_node():
    cluster = cluster_of([node("n", cpu="1")], [make_pod("big").req(cpu="2", memory="32Gi").build()])
    assert simulate(cluster).pending == {
        "default/big": "0/1 nodes are available: 1 Insufficient cpu, 1 Insufficient memory."}


def test_fit_error_with_no_nodes_says_so():
    assert simulate(cluster_of([], [make_pod("p").build()])).pending == {
        "default/p": "0/0 nodes are available: no nodes in the input."}


# ------------------------------------------------------------------------------------------------ tie-break


def test_equal_nodes_are_chosen_the_same_way_for_the_same_seed():
    cluster = cluster_of([node(f"n{i}") for i in range(8)], [make_pod(f"p{i}").build() for i in range(6)])
    assert simulate(cluster, seed=7).placements == simulate(cluster, seed=7).placements


def test_equal_nodes_are_chosen_differently_under_other_seeds():
    cluster = cluster_of([node(f"n{i}") for i in range(8)], [make_pod("p").build()])
    assert len({simulate(cluster, seed=s).placements["default/p"] for s in range(20)}) > 1


def test_the_best_scoring_node_wins_whatever_the_seed():
    nodes = [node("hdd"), node("ssd", disk="ssd")]
    pod = make_pod("p").preferred_node_affinity(10, term(req("disk", "In", "ssd"))).build()
    assert {simulate(cluster_of(nodes, [pod]), seed=s).placements["default/p"] for s in range(10)} == {"ssd"}


# ---------------------------------------------------------------------------------- numFeasibleNodesToFind


@pytest.mark.parametrize("nodes, percentage, expected", [
    pytest.param(50, 0, 50, id="below 100 nodes every node is scored"),
    pytest.param(100, 0, 100, id="100 nodes: 50 percent would be 50, the floor of 100 wins"),
    pytest.param(1000, 0, 420, id="1000 nodes: 50 - 1000/125 = 42 percent"),
    pytest.param(5000, 0, 500, id="5000 nodes: 50 - 40 = 10 percent"),
    pytest.param(10000, 0, 500, id="10000 nodes: the 5 percent floor"),
    pytest.param(1000, 30, 300, id="an explicit percentage is used as given"),
    pytest.param(1000, 5, 100, id="an explicit percentage still finds at least 100 nodes"),
    pytest.param(1000, 100, 1000, id="100 percent scores every node"),
])
def test_num_feasible_nodes_to_find_follows_schedule_one(nodes, percentage, expected):
    assert num_feasible_nodes_to_find(nodes, percentage) == expected


def test_only_the_first_feasible_nodes_found_are_scored():
    # 200 nodes, 100 to find: the first 100 nodes from where the search starts are all kube-scheduler scores,
    # so the pod goes to the emptiest of those even though a better node lies beyond them.
    nodes = [node(f"n{i:03}") for i in range(199)] + [node("n199", cpu="64")]
    plan = simulate(cluster_of(nodes, [make_pod("p").req(cpu="1").build()]), percentage_of_nodes_to_score=50)
    assert plan.placements["default/p"] != "n199"
    everywhere = simulate(cluster_of(nodes, [make_pod("p").req(cpu="1").build()]), percentage_of_nodes_to_score=100)
    assert everywhere.placements["default/p"] == "n199"


# -------------------------------------------------------------------------------------- placed-pod guard


def spread_holder():
    """An existing pod whose zone spread (maxSkew 1) counts app=x pods, alone in zone a."""
    return (make_pod("holder").label("app", "x").on("a1")
            .spread(spread(1, ZONE, selector(app="x"))).build())


def lured_to_zone_a(name: str = "newcomer"):
    """A pending app=x pod with no rule of its own that prefers zone a."""
    return make_pod(name).label("app", "x").preferred_node_affinity(100, term(req(ZONE, "In", "a"))).build()


def test_kube_scheduler_alone_would_break_an_existing_pods_spread():
    cluster = cluster_of([node("a1", zone="a"), node("b1", zone="b")], [spread_holder(), lured_to_zone_a()])
    plan = simulate(cluster, protect_placed=False)
    assert plan.placements == {"default/newcomer": "a1"}
    report = verify(cluster, plan.placements)
    assert [(v.pod, v.plugin, v.preexisting) for v in report.violations] == [
        ("default/holder", "PodTopologySpread", False)]


def test_the_simulator_keeps_an_existing_pods_spread_by_going_elsewhere():
    cluster = cluster_of([node("a1", zone="a"), node("b1", zone="b")], [spread_holder(), lured_to_zone_a()])
    plan = simulate(cluster)
    assert plan.placements == {"default/newcomer": "b1"}
    assert verify(cluster, plan.placements).violations == ()


def test_a_pod_every_node_of_which_would_break_a_placed_pods_spread_stays_pending_saying_why():
    cluster = cluster_of([node("a1", zone="a"), node("b1", zone="b", cpu="1")],
                         [spread_holder(), make_pod("big").label("app", "x").req(cpu="2").build()])
    assert simulate(cluster).pending == {
        "default/big": f"0/2 nodes are available: 1 Insufficient cpu, 1 {ERR_REASON_BREAKS_SPREAD}."}


def test_a_pod_placed_earlier_in_the_same_plan_is_protected_too():
    # The first pod is sent to zone a (its spread counts zone b too: nodeAffinityPolicy Ignore); the second
    # matches its selector and would crowd zone a.
    cluster = cluster_of([node("a1", zone="a"), node("b1", zone="b")],
                         [make_pod("first").label("app", "x").priority(10).node_selector({ZONE: "a"})
                          .spread(spread(1, ZONE, selector(app="x"), affinity_policy="Ignore")).build(),
                          lured_to_zone_a("second")])
    plan = simulate(cluster)
    assert plan.placements == {"default/first": "a1", "default/second": "b1"}
    assert verify(cluster, plan.placements).ok


def lonely_db():
    """An existing db pod whose required affinity (hostname, app=db) holds only by the first-pod rule."""
    return make_pod("lonely").label("app", "db").on("n0").pod_affinity(pod_term(HOST, selector(app="db"))).build()


def db_lured_to_n1():
    return make_pod("newcomer").label("app", "db").preferred_node_affinity(100, term(req(HOST, "In", "n1"))).build()


def test_kube_scheduler_alone_would_leave_a_first_pod_outside_its_group():
    cluster = cluster_of([node("n0"), node("n1")], [lonely_db(), db_lured_to_n1()])
    plan = simulate(cluster, protect_placed=False)
    assert plan.placements == {"default/newcomer": "n1"}
    assert [(v.pod, v.plugin, v.preexisting) for v in verify(cluster, plan.placements).violations] == [
        ("default/lonely", "InterPodAffinity", False)]


def test_the_simulator_joins_a_first_pod_instead():
    cluster = cluster_of([node("n0"), node("n1")], [lonely_db(), db_lured_to_n1()])
    plan = simulate(cluster)
    assert plan.placements == {"default/newcomer": "n0"}
    assert verify(cluster, plan.placements).violations == ()


def test_a_pod_that_cannot_join_a_first_pod_stays_pending_saying_why():
    cluster = cluster_of([node("n0", cpu="1"), node("n1")],
                         [lonely_db(), make_pod("big").label("app", "db").req(cpu="2").build()])
    assert simulate(cluster).pending == {
        "default/big": f"0/2 nodes are available: 1 Insufficient cpu, 1 {ERR_REASON_BREAKS_AFFINITY}."}


def test_a_placed_pod_already_breaking_its_spread_does_not_block_anyone():
    # holder-2 already crowds zone a in the input (pre-existing); a newcomer there changes nothing for it.
    cluster = cluster_of([node("a1", zone="a"), node("b1", zone="b", cpu="1")],
                         [spread_holder(), make_pod("holder-2").label("app", "x").on("a1")
                          .spread(spread(1, ZONE, selector(app="x"))).build(),
                          make_pod("big").label("app", "x").req(cpu="2").build()])
    plan = simulate(cluster)
    assert plan.placements == {"default/big": "a1"}
    assert verify(cluster, plan.placements).ok


def test_each_cycle_searches_on_from_where_the_previous_one_stopped_counting_rejected_nodes():
    # 300 nodes, the first 50 tainted: 144 feasible nodes are wanted (48 percent). The first pod's search
    # passes the 50 tainted nodes and stops at n193; the second starts at n194, wraps around, skips the
    # tainted ones again and stops at n087.
    nodes = [make_node(f"n{i:03}").taint("k", "v").build() if i < 50 else node(f"n{i:03}") for i in range(300)]
    plan = simulate(cluster_of(nodes, [make_pod("first").build(), make_pod("second").build()]), seed=3)
    first = int(plan.placements["default/first"][1:])
    second = int(plan.placements["default/second"][1:])
    assert 50 <= first <= 193
    assert 194 <= second <= 299 or 50 <= second <= 87


@pytest.mark.parametrize("vectorized", [False, True], ids=["plain loop", "vectorized"])
def test_a_pod_pinned_by_a_prefilter_result_moves_the_node_rotation_on_by_the_results_size_only(vectorized):
    # 150 nodes: kube-scheduler searches only the PreFilterResult's nodes (n005, n007) for the pinned pod, so
    # nextStartNodeIndex moves on by 2, not by every node of the cluster
    from podplan.optimizer.greedy import Scheduler
    from podplan.optimizer.state import ClusterState
    from podplan.optimizer.vectorized import VectorScheduler

    nodes = [node(f"n{i:03}") for i in range(150)]
    pinned = make_pod("pinned").node_affinity(term(fields=[req("metadata.name", "In", "n005")]),
                                              term(fields=[req("metadata.name", "In", "n007")])).build()
    cluster = cluster_of(nodes, [pinned])
    sched = (VectorScheduler if vectorized else Scheduler)(ClusterState.from_cluster(cluster), 0)
    assert sched.schedule(pinned)[0] in ("n005", "n007")
    assert sched.next_start == 2
