"""The pattern program's pricing and its restricted program (optimizer.provision.patterns, .master): the
solver-free knapsack bound is a bound, the greedy pricing's fillings fit, and the program grown a column at a time
(warm HiGHS) has the optimum the from-scratch reference has."""
from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from podplan.optimizer.provision.master import Master, ScratchMaster
from podplan.optimizer.provision.patterns import _greedy_fill, _greedy_segs, _knapsack_bound, _knapsack_upper, _worth


@st.composite
def knapsacks(draw: st.DrawFn):
    """A node's knapsack at some duals (>= 0, as the pricing's): 1-4 groups, 1-3 resources, up to 3 pods a group, and assignment-row terms
    (a group's pods worth more up to a cap)."""
    n_g = draw(st.integers(1, 4))
    n_r = draw(st.integers(1, 3))
    values = np.array(draw(st.lists(st.floats(0.0, 2.0), min_size=n_g, max_size=n_g)))
    most = np.array(draw(st.lists(st.integers(0, 3), min_size=n_g, max_size=n_g)), dtype=np.int64)
    req = np.array(draw(st.lists(st.lists(st.integers(0, 5), min_size=n_r, max_size=n_r), min_size=n_g,
                                 max_size=n_g)), dtype=np.int64)
    room = np.array(draw(st.lists(st.integers(0, 9), min_size=n_r, max_size=n_r)), dtype=np.int64)
    segs = draw(st.lists(st.tuples(st.integers(0, n_g - 1), st.integers(1, 3), st.floats(0.0, 1.0)), max_size=3))
    return values, most, req, room, segs


def exhaustive(values, most, req, room, segs) -> float:
    best = 0.0
    for a in itertools.product(*(range(int(m) + 1) for m in most)):
        if (np.asarray(a, dtype=np.int64) @ req <= room).all():
            best = max(best, _worth(dict(enumerate(a)), values, segs))
    return best


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(knapsacks())
# (found by the search: values of 1e-178 and 1e-272, each rounded up to a millionth in the exact knapsack's bound)
@example(knapsack=(np.array([8.14616629e-272]), np.array([3]), np.array([[0]]), np.array([0]),
                   [(0, 2, 1.0925321723828457e-178), (0, 3, 0.00390625), (0, 3, 1.0925321723828457e-178)]))
def test_the_solver_free_knapsack_bound_is_never_below_the_best_filling(knapsack) -> None:
    values, most, req, room, segs = knapsack
    best = exhaustive(values, most, req, room, segs)
    upper = _knapsack_upper(values, most, req, room, segs)
    assert upper >= best - 1e-9, (upper, best)
    # (the exact knapsack's bound counts every pod's value and every row term rounded up to a millionth: up to
    # 1e-6 above the best filling's worth for each of them)
    rounding = 1e-6 * (int(most.sum()) + sum(c for _, c, _ in segs)) + 1e-9
    assert upper >= _knapsack_bound(values, most, req, room, 5.0, segs)[0] - rounding


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(knapsacks())
def test_the_greedy_pricing_fills_within_the_room_and_the_bounds(knapsack) -> None:
    values, most, req, room, segs = knapsack
    fill = _greedy_segs(values, most, req, room, segs)
    a = np.zeros(len(values), dtype=np.int64)
    for g, k in fill.items():
        a[g] = k
    assert (a <= most).all() and (a @ req <= room).all()
    assert _worth(fill, values, segs) <= exhaustive(values, most, req, room, segs) + 1e-9


def test_the_greedy_pricing_fills_by_the_resource_that_binds() -> None:
    # 10 cpu and 10 GiB: a pod of 2 cpu and 2 GiB worth 1 (a fifth of the room, both resources), one of 4 cpu and
    # no memory worth 1.1; by their shares summed (0.4 each) the second comes first and two of it leave room for
    # one of the first (3.2); five of the first (5.0) fill the room: by the largest share they come first
    values = np.array([1.0, 1.1])
    most = np.array([5, 5], dtype=np.int64)
    req = np.array([[2, 2], [4, 0]], dtype=np.int64)
    room = np.array([10, 10], dtype=np.int64)
    fill = _greedy_fill(values, most, req, room)
    assert fill == {0: 5} and _worth(fill, values, ()) == exhaustive(values, most, req, room, ()) == 5.0


def test_the_solver_free_bound_skips_no_node_whose_knapsack_prices_out() -> None:
    # the same node: its best filling is worth 5, so a dual of 4.9 must be beaten by the bound
    values = np.array([1.0, 1.1])
    req = np.array([[2, 2], [4, 0]], dtype=np.int64)
    assert _knapsack_upper(values, np.array([5, 5]), req, np.array([10, 10])) > 4.9


@st.composite
def programs(draw: st.DrawFn):
    """A covering program min c.x, A x <= b (a slack per row, so every one is feasible), its columns in batches,
    and right-hand sides to change to after each batch."""
    m = draw(st.integers(1, 4))
    batches = draw(st.lists(st.lists(st.tuples(st.floats(0.1, 3.0), st.lists(st.integers(-3, 2), min_size=m,
                                                                              max_size=m)),
                                      min_size=1, max_size=4), min_size=1, max_size=4))
    rhs = [np.array(draw(st.lists(st.integers(-4, 3), min_size=m, max_size=m)), dtype=float) for _ in batches]
    return m, batches, rhs


@pytest.mark.parametrize("kind", [Master, ScratchMaster], ids=["grown in one HiGHS", "solved from scratch"])
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs())
def test_the_program_grown_a_column_at_a_time_has_the_from_scratch_optimum_and_its_duals_price_it(
        kind, program) -> None:
    m, batches, rhs = program
    grown = kind(rhs[0])
    for i in range(m):  # the slacks
        grown.add(10.0, [i], [-1.0])
    for step, (batch, b) in enumerate(zip(batches, rhs)):
        grown.set_rhs(b)
        reference = ScratchMaster(b)
        for i in range(m):
            reference.add(10.0, [i], [-1.0])
        for cost, col in [c for done in batches[:step + 1] for c in done]:
            reference.add(cost, [r for r in range(m) if col[r]], [float(col[r]) for r in range(m) if col[r]])
        for cost, col in batch:
            grown.add(cost, [r for r in range(m) if col[r]], [float(col[r]) for r in range(m) if col[r]])
        got, ref = grown.solve(), reference.solve()
        assert got.status == ref.status == 0
        assert abs(got.fun - ref.fun) <= 1e-6 * max(1.0, abs(ref.fun))
        # the duals: >= 0, every column's reduced cost >= 0, and the dual value the optimum
        a = np.zeros((m, grown.columns))
        for r, j, v in zip(grown.rows, grown.cols, grown.vals):
            a[r, j] += v
        y = got.duals
        assert (y >= -1e-7).all()
        assert (np.asarray(grown.cost) + a.T @ y >= -1e-6).all()
        assert abs(-b @ y - got.fun) <= 1e-6 * max(1.0, abs(got.fun))
