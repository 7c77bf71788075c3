"""provision's covering bound, its forced bound and its large-input path, against the exhaustive search of tests/test_provision.py:
on tiny random clusters the covering program (its relaxation and its integer version) never exceeds the true
cheapest set of new nodes; the large-input path (forced by a tiny model size) prints a verified answer, never
worse than the estimator's, whose bound is valid and which is OPTIMAL only when its cost equals that bound."""
from __future__ import annotations

from dataclasses import replace

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from builders import make_node, make_pod, pod_term, selector
from podplan.models.nodetypes import NodeTypes
from podplan.models.objects import Cluster
from podplan.optimizer.pipeline import Deadline
from podplan.optimizer.provision import Impossible, offers_of, provision, verify_answer
from podplan.optimizer.provision.bound import MICRO, cover_bound
from podplan.optimizer.provision.forced import forced_bound, forced_pods
from podplan.optimizer.provision.patterns import pattern_bound
from podplan.optimizer.registry import DEFAULT_PROFILE
from podplan.optimizer.runner import SolverParams, Status
from test_provision import H, Z, a_type, brute_cost, instances


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(instances())
def test_the_covering_bound_never_exceeds_the_exhaustive_optimum(instance: tuple[Cluster, NodeTypes]) -> None:
    cluster, types = instance
    best = brute_cost(cluster, types)
    offers = offers_of(types)
    for relax in (True, False):
        b = cover_bound(cluster, offers, types, DEFAULT_PROFILE, 10.0, relax=relax)
        if best is None:
            continue  # no set of new nodes places every pod: any bound is valid
        assert b.bound_micro <= round(best * MICRO), (relax, b.bound_micro, best)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(instances())
def test_the_pattern_bound_never_exceeds_the_exhaustive_optimum_and_is_at_least_the_relaxation(
        instance: tuple[Cluster, NodeTypes]) -> None:
    cluster, types = instance
    best = brute_cost(cluster, types)
    offers = offers_of(types)
    relaxed = cover_bound(cluster, offers, types, DEFAULT_PROFILE, 10.0, relax=True)
    # with no answer known, and with the optimum as the known answer (it bounds the new nodes per offer)
    for known in (None, None if best is None else round(best * MICRO)):
        b = pattern_bound(cluster, offers, types, DEFAULT_PROFILE, 10.0, known)
        if best is not None:
            assert b.bound_micro <= round(best * MICRO), (known, b.bound_micro, best)
        if b.converged and relaxed.bound_micro < 10 ** 18:
            # each node's whole-pod fillings and each new node a bin: never weaker than the pooled relaxation
            assert b.bound_micro >= relaxed.bound_micro - 10, (b.bound_micro, relaxed.bound_micro)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(instances(), st.data())
def test_the_pattern_bound_seeded_with_any_answer_never_exceeds_the_exhaustive_optimum(
        instance: tuple[Cluster, NodeTypes], data: st.DataObject) -> None:
    # the known answer's nodes become first columns: any answer, even one that breaks the rules or the room (its
    # counts are cut to the bounds and nodes over their room left out), keeps the bound a bound
    from podplan.models.nodetypes import new_node

    cluster, types = instance
    best = brute_cost(cluster, types)
    offers = offers_of(types)
    new = [(o, new_node(o.type, f"{o.type.name}-{i}", o.zone))
           for i, o in enumerate(data.draw(st.lists(st.sampled_from(offers), max_size=4)))]
    names = [n.name for n in cluster.nodes] + [n.name for _, n in new]
    placements = {p.key: data.draw(st.sampled_from(names)) for p in cluster.pending}
    b = pattern_bound(cluster, offers, types, DEFAULT_PROFILE, 10.0, answer=(new, placements))
    if best is not None:
        assert b.bound_micro <= round(best * MICRO), (b.bound_micro, best, placements)


def test_the_pattern_bound_counts_pods_that_cannot_share_a_new_node() -> None:
    # two 600m pods and one 500m pod on 1-cpu nodes (the existing node is full): no two share a node, 3 nodes;
    # pooled, their 1.7 cpu fit 2 nodes
    nodes = (make_node("n0").label(H, "n0").label(Z, "a").alloc(cpu="100m", memory="8Gi", pods=110).build(),)
    pending = tuple(make_pod(f"p{i}").label("app", "a").req(cpu=c).set(order=i).build()
                    for i, c in enumerate(["600m", "600m", "500m"]))
    types = NodeTypes((a_type("one", "1", 1.0),))
    cluster = Cluster(nodes=nodes, pending=pending)
    offers = offers_of(types)
    assert cover_bound(cluster, offers, types, DEFAULT_PROFILE, 10.0).bound_micro < 3 * MICRO - 10
    b = pattern_bound(cluster, offers, types, DEFAULT_PROFILE, 10.0)
    assert b.converged and 3 * MICRO - 10 <= b.bound_micro <= 3 * MICRO
    assert brute_cost(cluster, types) == 3.0


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(instances())
def test_the_large_input_path_is_verified_never_worse_than_the_estimator_and_honest(
        instance: tuple[Cluster, NodeTypes]) -> None:
    cluster, types = instance
    params = SolverParams(workers=1, full_model_variables=0)  # every input takes the large-input path
    try:
        a = provision(cluster, types, params, deadline=Deadline.start(20))
    except Impossible:
        return
    verify_answer(a)
    assert len(a.placements) == len(cluster.pending)
    best = brute_cost(cluster, types)
    assert best is not None and a.bound <= best + 1e-9 <= a.cost + 2e-9
    if not a.estimator.pending:
        assert a.cost <= a.estimator.cost() + 1e-9
    if a.status is Status.OPTIMAL:
        assert abs(a.cost - best) < 1e-9


def test_required_anti_affinity_per_host_forces_one_new_node_per_replica_in_the_bound() -> None:
    # 3 replicas that repel each other per host, no room on the one existing node: 3 new nodes at least,
    # though one node's cpu would hold them all
    nodes = (make_node("n0").label(H, "n0").label(Z, "a").alloc(cpu="50m", memory="8Gi", pods=110).build(),)
    pending = tuple(make_pod(f"p{i}").label("app", "a").req(cpu="100m")
                    .pod_anti_affinity(pod_term(H, selector(app="a"))).set(order=i).build() for i in range(3))
    types = NodeTypes((a_type("big", "8", 1.0),))
    b = cover_bound(Cluster(nodes=nodes, pending=pending), offers_of(types), types, DEFAULT_PROFILE, 10.0)
    assert b.bound_micro >= 3 * MICRO - 10


def test_a_gpu_pod_is_covered_by_the_only_type_with_gpus() -> None:
    nodes = (make_node("n0").label(H, "n0").alloc(cpu="8", memory="8Gi", pods=110).build(),)
    gpu = make_node("gpu").label("node.kubernetes.io/instance-type", "gpu").alloc(
        cpu="8", memory="8Gi", pods=110).build()
    gpu = replace(gpu, allocatable={**gpu.allocatable, "nvidia.com/gpu": 1})
    from podplan.models.nodetypes import NodeType

    types = NodeTypes((a_type("cpu", "8", 0.1), NodeType(name="gpu", price=3.0, node=gpu,
                                                         capacity=dict(gpu.allocatable))))
    pod = make_pod("train").req(cpu="1").build()
    pod = replace(pod, requests={**pod.requests, "nvidia.com/gpu": 1})
    b = cover_bound(Cluster(nodes=nodes, pending=(pod,)), offers_of(types), types, DEFAULT_PROFILE, 10.0)
    assert b.bound_micro >= 3 * MICRO - 10


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(instances())
def test_the_forced_bound_never_exceeds_the_exhaustive_optimum(instance: tuple[Cluster, NodeTypes]) -> None:
    cluster, types = instance
    best = brute_cost(cluster, types)
    f = forced_bound(cluster, offers_of(types), types, DEFAULT_PROFILE)
    if best is not None:
        assert f.bound_micro <= round(best * MICRO), (f, best)
    if not forced_pods(cluster, DEFAULT_PROFILE):
        assert f.bound_micro == 0  # nothing is forced onto new nodes: it says nothing


def gpu_node(name: str, gpus: int, cpu: str = "8"):
    n = make_node(name).label(H, name).label("node.kubernetes.io/instance-type", "gpu").alloc(
        cpu=cpu, memory="8Gi", pods=110).build()
    return replace(n, allocatable={**n.allocatable, "nvidia.com/gpu": gpus})


def gpu_pod(name: str, gpus: int, cpu: str, order: int):
    p = make_pod(name).req(cpu=cpu).set(order=order).build()
    return replace(p, requests={**p.requests, "nvidia.com/gpu": gpus})


def gpu_types() -> NodeTypes:
    from podplan.models.nodetypes import NodeType

    g = gpu_node("gpu", 4)
    return NodeTypes((a_type("cpu", "8", 0.1), NodeType(name="gpu", price=3.0, node=g, capacity=dict(g.allocatable))))


def test_the_forced_bound_buys_the_gpu_nodes_that_pods_no_existing_node_holds_need() -> None:
    # one existing node without GPUs; five 1-GPU pods (4 GPUs per new node): two GPU nodes, whatever the cpu
    nodes = (make_node("n0").label(H, "n0").alloc(cpu="8", memory="8Gi", pods=110).build(),)
    pods = tuple(gpu_pod(f"t{i}", 1, "100m", i) for i in range(5))
    types = gpu_types()
    f = forced_bound(Cluster(nodes=nodes, pending=pods), offers_of(types), types, DEFAULT_PROFILE)
    assert f.pods == 5 and f.proven and f.bound_micro == 6 * MICRO


def test_gpu_pods_that_kube_scheduler_spreads_are_packed_onto_the_existing_gpu_nodes() -> None:
    # two GPU nodes of 2 GPUs: kube-scheduler spreads the two 1-GPU pods (the least allocated cpu), the 2-GPU pod then
    # fits neither and the estimator buys a GPU node; packed, the 1-GPU pods share a node and nothing is bought
    nodes = (gpu_node("g0", 2), gpu_node("g1", 2))
    pods = (gpu_pod("one-a", 1, "2", 0), gpu_pod("one-b", 1, "2", 1), gpu_pod("two", 2, "100m", 2))
    types = gpu_types()
    params = SolverParams(workers=1, full_model_variables=0)  # the large-input path
    a = provision(Cluster(nodes=nodes, pending=pods), types, params, deadline=Deadline.start(30))
    verify_answer(a)
    assert a.estimator.cost() > 0
    assert a.cost == 0 and a.status is Status.OPTIMAL and len(a.placements) == 3


def test_the_pods_a_tainted_gpu_type_cannot_take_need_nodes_of_the_other_types_whatever_gpus_are_left_over() -> None:
    # five 1-GPU pods (4 GPUs a node, tainted: two GPU nodes) and pods of 600m, 600m and 500m (one a 1-cpu node),
    # the existing node full: 2 x 5.0 + 3 x 0.3. The covering rows summed at the duals count the second GPU node (one
    # GPU pod, three GPUs left over) at four GPU pods' worth, more than the other pods', and the cpu row at 1.7 cpu
    # buys two 1-cpu nodes: 10.6. The other pods' rows alone, in which a GPU node is worth nothing, buy three
    from podplan.models.nodetypes import NodeType

    nodes = (make_node("n0").label(H, "n0").label(Z, "a").alloc(cpu="100m", memory="8Gi", pods=110).build(),)
    g = replace(gpu_node("gpu", 4), taints=make_node("t").taint("nvidia.com/gpu", "present").build().taints)
    types = NodeTypes((a_type("cpu", "1", 0.3), NodeType(name="gpu", price=5.0, node=g, capacity=dict(g.allocatable))))
    gpus = tuple(replace(gpu_pod(f"t{i}", 1, "100m", i), tolerations=make_pod("x").toleration(
        "nvidia.com/gpu", "present", "NoSchedule").build().tolerations) for i in range(5))
    cpus = tuple(make_pod(f"c{i}").label("app", "c").req(cpu=c).set(order=5 + i).build()
                 for i, c in enumerate(["600m", "600m", "500m"]))
    cluster = Cluster(nodes=nodes, pending=gpus + cpus)
    pat = pattern_bound(cluster, offers_of(types), types, DEFAULT_PROFILE, 10.0)
    exact = provision(cluster, types, SolverParams(workers=1), deadline=Deadline.start(30))  # (the exact model)
    assert exact.status is Status.OPTIMAL and round(exact.cost * MICRO) == round(10.9 * MICRO)
    assert pat.converged and pat.bound_micro == round(10.9 * MICRO)


def _bounds_at(cluster: Cluster, types: NodeTypes, pi, known: int | None) -> tuple[float, float]:
    """The pattern program's scaled Lagrangian bound and its surrogate bound (whole new nodes, with the rows of the
    groups some offer cannot take) at duals `pi` of one's choice (both hold at any pi >= 0)."""
    import numpy as np

    from podplan.optimizer.provision.patterns import (_knapsack_bound, _offer_subsets, _pi_row, _resource_rows,
                                                      _setup, _subset_row, _type_rows_int, farley_bound, prepare,
                                                      surrogate_bound)

    offers = offers_of(types)
    d = prepare(cluster, offers, DEFAULT_PROFILE)
    price, most_nodes, bins, _ = _setup(d, offers, types, known)
    pi = np.asarray(pi, dtype=float)[:len(d.size)]
    k_ex = sum(len(nodes) * _knapsack_bound(pi, d.cap_ex[:, nodes[0]], d.req, d.free[nodes[0]], 5.0)[0]
               for nodes in bins)
    k_new = np.array([_knapsack_bound(pi, d.cap_new[:, o], d.req, d.alloc[o], 5.0)[0] for o in range(len(offers))])
    scaled = farley_bound(float(pi @ d.size), k_ex, k_new, price, most_nodes)
    cover = [*_resource_rows(d), _pi_row(float(pi @ d.size) - k_ex, k_new)]
    mult = np.array([len(nodes) for nodes in bins])
    cover += [_subset_row(d, pi, mask, d.size, bins, mult, d.size, d.cap_new, 5.0)
              for mask in _offer_subsets(d, d.size)]
    return scaled, surrogate_bound(cover, price, most_nodes, _type_rows_int(offers, types), 5.0) / MICRO


def _scaled_bound_at(cluster: Cluster, types: NodeTypes, pi, known: int | None) -> float:
    return _bounds_at(cluster, types, pi, known)[0]


def test_the_scaled_lagrangian_bound_counts_pods_that_cannot_share_a_new_node_where_the_covering_bound_does_not(
        ) -> None:
    # the case above, at duals of one per pod (no unscaled bound: no answer known, so every offer may take every
    # pod's node): three 1-cpu nodes (one 2-cpu node dearer), where the covering bound pools 1.7 cpu into 2
    nodes = (make_node("n0").label(H, "n0").label(Z, "a").alloc(cpu="100m", memory="8Gi", pods=110).build(),)
    pending = tuple(make_pod(f"p{i}").label("app", "a").req(cpu=c).set(order=i).build()
                    for i, c in enumerate(["600m", "600m", "500m"]))
    types = NodeTypes((a_type("one", "1", 1.0), a_type("two", "2", 3.5)))
    cluster = Cluster(nodes=nodes, pending=pending)
    cover = cover_bound(cluster, offers_of(types), types, DEFAULT_PROFILE, 10.0).bound_micro / MICRO
    scaled = _scaled_bound_at(cluster, types, [1.0] * 12, None)
    assert cover < 3 - 1e-6 and 3 - 1e-6 <= scaled <= brute_cost(cluster, types) == 3.0


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(instances(), st.lists(st.floats(0.0, 3.0), min_size=12, max_size=12))
def test_the_scaled_and_the_surrogate_bound_at_any_duals_never_exceed_the_exhaustive_optimum_and_whole_is_larger(
        instance: tuple[Cluster, NodeTypes], pi: list[float]) -> None:
    # column generation stopped early has duals far from the optimum's: the bounds must hold at any of them
    cluster, types = instance
    best = brute_cost(cluster, types)  # (None: no set of new nodes places every pod, any bound is valid)
    for known in (None, None if best is None else round(best * MICRO)):
        scaled, whole = _bounds_at(cluster, types, pi, known)
        if best is not None:
            assert scaled <= best + 1e-6 and whole <= best + 1e-6, (known, pi, best, scaled, whole)
        if whole >= 0:
            # (the scaled bound is the surrogate program's relaxation at one weight; 1e-5: the need rounded down)
            assert whole >= scaled - 1e-5, (known, pi, scaled, whole)


def _three_halves(types: NodeTypes) -> Cluster:
    # three 500m pods, the existing node full: two fit a 1-cpu node
    nodes = (make_node("n0").label(H, "n0").label(Z, "a").alloc(cpu="100m", memory="8Gi", pods=110).build(),)
    pending = tuple(make_pod(f"p{i}").label("app", "a").req(cpu="500m").set(order=i).build() for i in range(3))
    return Cluster(nodes=nodes, pending=pending)


def test_the_pattern_bound_buys_whole_nodes_where_its_program_buys_one_and_a_half() -> None:
    types = NodeTypes((a_type("one", "1", 1.0),))
    cluster = _three_halves(types)
    b = pattern_bound(cluster, offers_of(types), types, DEFAULT_PROFILE, 10.0)
    assert b.converged and abs(b.lp_value - 1.5) < 1e-6
    assert b.bound_micro == 2 * MICRO == round(brute_cost(cluster, types) * MICRO)


def test_the_pattern_bound_finishes_the_last_half_node_with_the_cheaper_small_type() -> None:
    # the 1-cpu type is cheaper per pod (0.5 against 0.6), so the program buys 1.5 of it; whole, one of each
    # (1.6) is cheapest: two of the large type cost 2.0, three small ones 1.8
    types = NodeTypes((a_type("one", "1", 1.0), a_type("half", "500m", 0.6)))
    cluster = _three_halves(types)
    b = pattern_bound(cluster, offers_of(types), types, DEFAULT_PROFILE, 10.0)
    assert b.converged and abs(b.lp_value - 1.5) < 1e-6
    assert b.bound_micro == round(1.6 * MICRO) == round(brute_cost(cluster, types) * MICRO)
