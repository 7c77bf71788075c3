"""provision's dive: the pattern program's answer rounded to whole nodes (optimizer.provision.patterns._dive), its
pods given out to nodes (packing_answer), used as a start of the large-input path when it verifies. Against the
exhaustive search of tests/test_provision.py on tiny random clusters, and on built cases. The assignment rows of a
group of several one-a-node classes (_assignment_rows) against an exhaustive search of the ways to give a group's
counts per node out to its classes."""
from __future__ import annotations

import time
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from builders import make_node, make_pod, pod_term, selector
from podplan.models.errors import PlanInvalidError
from podplan.models.nodetypes import NodeTypes
from podplan.models.objects import Cluster
from podplan.optimizer.pipeline import Deadline, check
from podplan.optimizer.plan import Plan
from podplan.optimizer.provision import offers_of, provision, verify_answer
from podplan.optimizer.provision.bound import MICRO
from podplan.optimizer.provision.core import within_limits
from podplan.optimizer.provision.patterns import _assignment_rows, _cut_coef, packing_answer, pattern_bound
from podplan.optimizer.registry import DEFAULT_PROFILE
from podplan.optimizer.runner import Clock, SolverParams, Status, clocked
from test_provision import H, Z, a_type, brute_cost, instances


def dive_answer(cluster: Cluster, types: NodeTypes):
    """The dive's answer on `cluster` as provision makes it: (its new nodes, its placements, whether it verifies
    within the types' max), or None when the dive made none."""
    offers = offers_of(types)
    pat = pattern_bound(cluster, offers, types, DEFAULT_PROFILE, 10.0, master_share=0.3)
    if pat.start is None:
        return None
    got = packing_answer(pat.data, offers, pat.start, [n.name for n in cluster.nodes])
    assert got is not None
    nodes, placements = got
    grown = replace(cluster, nodes=cluster.nodes + tuple(n for _, n in nodes))
    try:
        check(grown, Plan(placements=placements, pending={}, status=Status.FEASIBLE), None, DEFAULT_PROFILE)
        valid = within_limits([o.type for o, _ in nodes], types)
    except PlanInvalidError:
        valid = False
    return nodes, placements, valid, pat.bound_micro


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(instances())
def test_the_dive_places_every_pod_and_without_inter_pod_rules_verifies_at_no_less_than_the_optimum(
        instance: tuple[Cluster, NodeTypes]) -> None:
    cluster, types = instance
    got = dive_answer(cluster, types)
    if got is None:
        return  # (no pattern program answer: a pod no filling holds)
    nodes, placements, valid, bound_micro = got
    assert sorted(placements) == sorted(p.key for p in cluster.pending)
    cost = sum(o.type.price for o, _ in nodes)
    plain = not any(p.affinity.anti_required for p in cluster.pending)
    if plain and all(t.max is None for t in types.types):
        assert valid  # every rule of these pods is a node's: the fillings state them all
    if valid:
        best = brute_cost(cluster, types)
        assert best is not None and cost >= best - 1e-9
        assert cost * MICRO >= bound_micro - 1 and bound_micro <= best * MICRO + 1  # (the rows keep it a bound)


def three_by_first_fit() -> tuple[Cluster, NodeTypes]:
    """A full existing node; pods of 450m, 450m, 350m, 350m, 200m, 200m on 1-cpu nodes: 450m + 350m + 200m fill a
    node exactly (2 nodes), where first fit decreasing (cluster-autoscaler's estimator) pairs the 450m pods and
    needs a third node."""
    nodes = (make_node("n0").label(H, "n0").label(Z, "a").alloc(cpu="100m", memory="8Gi", pods=110).build(),)
    pending = tuple(make_pod(f"p{i}").label("app", f"a{i}").req(cpu=c).set(order=i).build()
                    for i, c in enumerate(["450m", "450m", "350m", "350m", "200m", "200m"]))
    return Cluster(nodes=nodes, pending=pending), NodeTypes((a_type("one", "1", 1.0),))


def test_the_dive_finds_the_two_nodes_where_first_fit_decreasing_buys_three() -> None:
    cluster, types = three_by_first_fit()
    nodes_, placements, valid, _ = dive_answer(cluster, types)
    assert valid and sum(o.type.price for o, _ in nodes_) == 2.0 == brute_cost(cluster, types)
    a = provision(cluster, types, SolverParams(workers=1, full_model_variables=0), deadline=Deadline.start(20))
    verify_answer(a)
    assert a.estimator.cost() == 3.0 and a.cost == 2.0 and a.status is Status.OPTIMAL


def assignable(sizes: list[int], units: list[int], counts: list[int]) -> bool:
    """Can the classes' pods (sizes) be put on the nodes, at most counts[b] pods of the group and units[b] of one
    class (-1: any number) on node b? Every way tried, class by class and node by node."""
    def place(c: int, b: int, need: int, room: tuple[int, ...]) -> bool:
        if c == len(sizes):
            return True
        if need == 0:
            return place(c + 1, 0, sizes[c + 1] if c + 1 < len(sizes) else 0, room)
        if b == len(room):
            return False
        most = room[b] if units[b] < 0 else min(room[b], units[b])
        return any(place(c, b + 1, need - k, room[:b] + (room[b] - k,) + room[b + 1:])
                   for k in range(min(most, need), -1, -1))

    return place(0, 0, sizes[0], tuple(counts))


@st.composite
def groups(draw: st.DrawFn) -> tuple[list[int], list[int], list[int]]:
    """A group's classes (pods each), its per-class bound on each node, and counts of the group per node up to
    the group's most there (its classes together)."""
    sizes = draw(st.lists(st.integers(1, 4), min_size=2, max_size=4))
    units = draw(st.lists(st.sampled_from([-1, 1, 1, 2]), min_size=1, max_size=4))
    total = sum(sizes)
    caps = [total if u < 0 else min(total, u * len(sizes)) for u in units]
    counts = [draw(st.integers(0, c)) for c in caps]
    return sizes, units, counts


@settings(max_examples=300, deadline=None)
@given(groups())
def test_a_groups_counts_meet_its_assignment_rows_and_its_size_exactly_when_its_classes_can_take_them(
        group: tuple[list[int], list[int], list[int]]) -> None:
    sizes, units, counts = group
    total = sum(sizes)
    unit = np.array([units])
    cap = np.array([[total if u < 0 else min(total, u * len(sizes)) for u in units]])
    rows = _assignment_rows([sizes], np.array([total]), unit, cap)
    meets = sum(counts) >= total and all(sum(_cut_coef(u, j, k) for u, k in zip(units, counts)) >= s_j
                                         for _, j, s_j in rows)
    assert meets == assignable(sizes, units, counts)


def test_a_class_of_one_a_node_bounds_the_program_by_its_own_nodes_and_the_dive_shares_them() -> None:
    # three 1-cpu pods of app a, one a node, and two of app b (one a node too): one group of two classes, 2 a
    # node on 2-cpu nodes. Without the assignment rows the program buys 5/2 nodes for the five pods; app a needs 3
    # nodes, and b's pods share them
    nodes = (make_node("n0").label(H, "n0").label(Z, "a").alloc(cpu="100m", memory="8Gi", pods=110).build(),)
    pending = tuple(make_pod(f"{app}{i}").label("app", app).req(cpu="1")
                    .pod_anti_affinity(pod_term(H, selector(app=app))).set(order=k).build()
                    for k, (app, i) in enumerate([("a", 0), ("a", 1), ("a", 2), ("b", 0), ("b", 1)]))
    types = NodeTypes((a_type("two", "2", 1.0),))
    cluster = Cluster(nodes=nodes, pending=pending)
    nodes_, placements, valid, bound_micro = dive_answer(cluster, types)
    assert brute_cost(cluster, types) == 3.0
    assert bound_micro >= 3 * MICRO - 10
    assert valid and len(nodes_) == 3 and sorted(placements) == sorted(p.key for p in pending)


def test_the_program_stopped_short_in_its_share_goes_on_in_its_stretch_and_dives() -> None:
    # the case first fit decreasing buys 3 nodes for and the dive 2, with a share of the clock too short for column
    # generation: without a stretch no start; with one the program converges and the dive finds the 2
    cluster, types = three_by_first_fit()
    offers = offers_of(types)
    got = {}
    for stretch in (0.0, 10.0):
        with clocked(Clock(time.perf_counter() + 60)):
            got[stretch] = pattern_bound(cluster, offers, types, DEFAULT_PROFILE, 0.03, master_share=0.3,
                                         stretch=stretch)
    assert not got[0.0].converged and got[0.0].start is None
    assert got[10.0].converged and got[10.0].start is not None and got[10.0].start.cost_micro == 2 * MICRO
    assert got[10.0].bound_micro >= got[0.0].bound_micro


def test_the_compaction_moves_pods_of_a_half_full_new_node_into_room_left_so_the_rest_takes_a_smaller_type() -> None:
    # four 500m pods on two full 1-cpu new nodes, the existing node's 500m unused: neither new node empties, but
    # one of its pods fits the existing node and the other a 500m node (1.0 + 0.6, where the two cost 2.0)
    from podplan.optimizer.provision.patterns import Packing, _compact, prepare

    nodes = (make_node("n0").label(H, "n0").label(Z, "a").alloc(cpu="500m", memory="8Gi", pods=110).build(),)
    pending = tuple(make_pod(f"p{i}").label("app", "a").req(cpu="500m").set(order=i).build() for i in range(4))
    types = NodeTypes((a_type("one", "1", 1.0), a_type("half", "500m", 0.6)))
    cluster = Cluster(nodes=nodes, pending=pending)
    offers = offers_of(types)
    d = prepare(cluster, offers, DEFAULT_PROFILE)
    one = next(i for i, o in enumerate(offers) if o.type.name == "one")
    got = _compact(d, offers, Packing(((one, {0: 2}), (one, {0: 2})), {}, 2 * MICRO))
    assert got.cost_micro == round(1.6 * MICRO) == round(brute_cost(cluster, types) * MICRO)
    assert sorted(offers[o].type.name for o, _ in got.new) == ["half", "one"]
    assert got.existing == {0: {0: 1}} and sum(f[0] for _, f in got.new) == 3
    answer = packing_answer(d, offers, got, [n.name for n in nodes])
    assert answer is not None and sum(o.type.price for o, _ in answer[0]) == 1.6


def _dive_out_of_time(monkeypatch) -> None:
    """The dive's clock already out when it starts: what is left is every pod."""
    import math

    from podplan.optimizer.provision import patterns

    dive = patterns._dive
    monkeypatch.setattr(patterns, "_dive", lambda *a, **k: dive(*a[:8], -math.inf, *a[9:], **k))


def _residual_programs_stop_without_a_solution(monkeypatch) -> None:
    """Every residual program of the dive (after its first fillings are fixed) stopped by the clock before HiGHS had
    a solution, as on a large input whose clock runs out mid-dive."""
    from dataclasses import replace as copy

    from podplan.optimizer.provision import patterns

    generate = patterns._generate
    monkeypatch.setattr(patterns, "_generate", lambda *a, **k: copy(generate(*a, **k), x=None)
                        if k.get("exact_rounds") else generate(*a, **k))


@pytest.mark.parametrize("stop", [_dive_out_of_time, _residual_programs_stop_without_a_solution],
                         ids=["its clock out when it starts", "its residual programs stopped without a solution"])
@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(instances())
def test_a_dive_stopped_by_the_clock_still_places_every_pod_and_verifies_at_no_less_than_the_optimum(
        stop, monkeypatch, instance: tuple[Cluster, NodeTypes]) -> None:
    stop(monkeypatch)
    cluster, types = instance
    got = dive_answer(cluster, types)
    if got is None:
        return  # (no pattern program answer, or no offer's room left for a group's pods within the types' max)
    nodes, placements, valid, _ = got
    assert sorted(placements) == sorted(p.key for p in cluster.pending)
    if not any(p.affinity.anti_required for p in cluster.pending):
        assert valid
    if valid:
        best = brute_cost(cluster, types)
        assert best is not None and sum(o.type.price for o, _ in nodes) >= best - 1e-9


def test_a_dive_out_of_time_buys_the_cheapest_a_pod_within_the_types_max_and_the_compaction_shrinks_the_rest(
        monkeypatch) -> None:
    # six 500m pods, the existing node full: the 2-cpu type holds four for 1.5 (0.375 a pod), the 1-cpu type two
    # for 1.0; with at most one 2-cpu node, the other two pods take a 1-cpu node: 2.5, the optimum
    _dive_out_of_time(monkeypatch)
    nodes = (make_node("n0").label(H, "n0").label(Z, "a").alloc(cpu="100m", memory="8Gi", pods=110).build(),)
    pending = tuple(make_pod(f"p{i}").label("app", "a").req(cpu="500m").set(order=i).build() for i in range(6))
    cluster = Cluster(nodes=nodes, pending=pending)
    for two_max in (None, 1):
        types = NodeTypes((a_type("one", "1", 1.0), a_type("two", "2", 1.5, max_=two_max)))
        got = dive_answer(cluster, types)
        assert got is not None
        new, placements, valid, _ = got
        assert valid and len(placements) == 6
        assert sorted(o.type.name for o, _ in new) == ["one", "two"], two_max
        assert sum(o.type.price for o, _ in new) == 2.5 == brute_cost(cluster, types)


def test_a_dive_stopped_after_its_first_fillings_keeps_them_and_finishes_the_pods_left_alone(monkeypatch) -> None:
    # five 1-cpu pods, the existing node full: the program takes one 4-cpu node whole (four pods) and a fifth of
    # another; its residual program then has no solution in time, and the fifth pod goes alone on the 1-cpu type
    _residual_programs_stop_without_a_solution(monkeypatch)
    nodes = (make_node("n0").label(H, "n0").label(Z, "a").alloc(cpu="100m", memory="8Gi", pods=110).build(),)
    pending = tuple(make_pod(f"p{i}").label("app", "a").req(cpu="1").set(order=i).build() for i in range(5))
    cluster = Cluster(nodes=nodes, pending=pending)
    types = NodeTypes((a_type("one", "1", 0.3), a_type("four", "4", 1.0)))
    got = dive_answer(cluster, types)
    assert got is not None
    new, placements, valid, _ = got
    assert valid and len(placements) == 5
    assert sorted(o.type.name for o, _ in new) == ["four", "one"]
    assert sum(o.type.price for o, _ in new) == 1.3 == brute_cost(cluster, types)


@st.composite
def packings(draw: st.DrawFn):
    """Existing nodes with some room, two or three priced types, pods of a few sizes, and a packing of them: each
    pod on an existing node's room or on a new node of a random offer, several pods a new node while it holds them."""
    from podplan.optimizer.provision.patterns import Packing, prepare

    nodes = tuple(make_node(f"n{i}").label(H, f"n{i}").label(Z, "a").alloc(
        cpu=draw(st.sampled_from(["0", "500m", "1", "1500m"])), memory="8Gi", pods=110).build()
        for i in range(draw(st.integers(1, 3))))
    types = NodeTypes(tuple(a_type(f"t{i}", cpu, price) for i, (cpu, price) in enumerate(draw(st.lists(
        st.tuples(st.sampled_from(["500m", "1", "2", "3"]), st.sampled_from([0.5, 0.6, 1.0, 1.5, 2.0])),
        min_size=2, max_size=3, unique_by=lambda t: t[0])))))
    pending = tuple(make_pod(f"p{i}").label("app", f"a{c}").req(cpu=c).set(order=i).build()
                    for i, c in enumerate(draw(st.lists(st.sampled_from(["250m", "500m", "1"]), min_size=2,
                                                        max_size=12))))
    cluster = Cluster(nodes=nodes, pending=pending)
    offers = offers_of(types)
    d = prepare(cluster, offers, DEFAULT_PROFILE)
    n_g = len(d.size)
    bins: list[tuple[str, int, np.ndarray]] = []
    for g, size in enumerate(d.size):
        for _ in range(int(size)):
            one = np.eye(n_g, dtype=np.int64)[g]
            fits = [i for i, (kind, at, a) in enumerate(bins)
                    if ((a + one) <= (d.cap_ex[:, at] if kind == "ex" else d.cap_new[:, at])).all()
                    and (d.req.T @ (a + one) <= (d.free[at] if kind == "ex" else d.alloc[at])).all()]
            fits += [("ex", n) for n in range(d.free.shape[0]) if not any(k == "ex" and at == n for k, at, _ in bins)
                     and d.cap_ex[g, n] > 0 and (d.req[g] <= d.free[n]).all()]
            fits += [("new", o) for o in range(len(offers)) if d.cap_new[g, o] > 0]
            if not fits:
                return None
            pick = draw(st.sampled_from(fits))
            if isinstance(pick, int):
                kind, at, a = bins[pick]
                bins[pick] = (kind, at, a + one)
            else:
                bins.append((pick[0], pick[1], one))
    existing = {at: {int(g): int(a[g]) for g in np.flatnonzero(a)} for kind, at, a in bins if kind == "ex"}
    new = tuple((at, {int(g): int(a[g]) for g in np.flatnonzero(a)}) for kind, at, a in bins if kind == "new")
    cost = sum(round(offers[o].type.price * MICRO) for o, _ in new)
    return d, offers, Packing(new, existing, cost)


@pytest.mark.parametrize("repack", [False, True], ids=["the compaction", "the compaction then the repacking"])
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(packings())
def test_a_settled_packing_keeps_every_pod_once_within_each_nodes_room_and_bounds_and_never_costs_more(
        repack: bool, drawn) -> None:
    import math

    from podplan.optimizer.provision.patterns import _compact, _settled

    if drawn is None:
        return  # (a pod no node holds)
    d, offers, packing = drawn
    compacted = _compact(d, offers, packing)
    got = _settled(d, offers, packing, math.inf) if repack else compacted
    # every pending pod once, each node within its room and its bound on each group, the cost the new nodes' prices
    placed = np.zeros(len(d.size), dtype=np.int64)
    for n, fill in got.existing.items():
        a = np.array([fill.get(g, 0) for g in range(len(d.size))])
        assert (a <= d.cap_ex[:, n]).all() and (d.req.T @ a <= d.free[n]).all()
        placed += a
    for o, fill in got.new:
        a = np.array([fill.get(g, 0) for g in range(len(d.size))])
        assert (a <= d.cap_new[:, o]).all() and (d.req.T @ a <= d.alloc[o]).all()
        placed += a
    assert (placed == d.size).all()
    assert got.cost_micro == sum(round(offers[o].type.price * MICRO) for o, _ in got.new)
    assert got.cost_micro <= compacted.cost_micro <= packing.cost_micro


def test_the_repacking_drains_a_new_node_by_a_chain_first_fit_cannot_make() -> None:
    # a 2-cpu 2Gi pod alone on a new node; the existing nodes' room: 1 cpu and 1Gi on each, one of them a 2-cpu 2Gi
    # node that holds a 1-cpu 1Gi pod. First fit finds no node with room for the big pod; moving the small pod to the
    # other node first makes it: no new node at all
    import math

    from podplan.optimizer.provision.patterns import Packing, _compact, _settled, prepare

    nodes = (make_node("n0").label(H, "n0").label(Z, "a").alloc(cpu="2", memory="2Gi", pods=110).build(),
             make_node("n1").label(H, "n1").label(Z, "a").alloc(cpu="1", memory="1Gi", pods=110).build())
    pending = (make_pod("big").label("app", "big").req(cpu="2", memory="2Gi").set(order=0).build(),
               make_pod("small").label("app", "small").req(cpu="1", memory="1Gi").set(order=1).build())
    cluster = Cluster(nodes=nodes, pending=pending)
    types = NodeTypes((a_type("two", "2", 1.0),))
    offers = offers_of(types)
    d = prepare(cluster, offers, DEFAULT_PROFILE)
    big, small = (int(np.argmax(d.req[:, 0])), int(np.argmin(d.req[:, 0])))
    packing = Packing(((0, {big: 1}),), {0: {small: 1}}, round(1.0 * MICRO))
    assert _compact(d, offers, packing).cost_micro == round(1.0 * MICRO)
    got = _settled(d, offers, packing, math.inf)
    assert got.new == () and got.cost_micro == 0
    assert got.existing == {0: {big: 1}, 1: {small: 1}}
    answer = packing_answer(d, offers, got, [n.name for n in nodes])
    assert answer is not None and answer[0] == [] and answer[1] == {"default/big": "n0", "default/small": "n1"}
