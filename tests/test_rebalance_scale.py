"""Large pack/spread rebalances at small size: the neighbourhood search stands in for the full target
model above FOCUS_LIMIT movable pods (made small here), and the command's deadline and Ctrl-C stop each step
with the best it has."""
from __future__ import annotations

import time

import pytest
from click.testing import CliRunner

from podplan.cli import main
from podplan.models.generate import dump_yaml, generate
from podplan.models.loader import load_paths
from podplan.models.objects import Cluster
from podplan.optimizer.rebalance import rebalance
from podplan.optimizer.rebalance import target as target_module
from podplan.optimizer.rebalance.plan import RebalanceParams, RebalancePlan, Target
from podplan.optimizer.rebalance.waves import waves_to
from podplan.optimizer.runner import Interrupt, Status
from tests.test_rebalance import check_plan


@pytest.fixture(scope="module")
def running(tmp_path_factory: pytest.TempPathFactory) -> Cluster:
    """A small production-shaped cluster as kube-scheduler left it: generated, then every pod bound by
    `podplan simulate --emit state` (12 nodes, 146 running pods)."""
    folder = tmp_path_factory.mktemp("running")
    generated = folder / "cluster.yaml"
    with generated.open("w") as out:
        dump_yaml(generate(12, 80, 3, "production"), out)
    done = CliRunner().invoke(main, ["simulate", str(generated), "--emit", "state", "--seed", "0"])
    assert done.exit_code == 0, done.output
    state = folder / "state.yaml"
    state.write_text(done.output)
    return load_paths([str(state)])


def large(monkeypatch: pytest.MonkeyPatch, pods: int = 8) -> None:
    """Every pack/spread is "large" (the neighbourhood search), its first neighbourhood `pods` pods."""
    monkeypatch.setattr(target_module, "FOCUS_LIMIT", 2)
    monkeypatch.setattr(target_module, "NEIGHBOURHOOD_PODS", pods)


def pack(cluster: Cluster, **kw) -> RebalancePlan:
    return rebalance(cluster, RebalanceParams(goal="pack", time_limit=60, **kw))


def test_a_neighbourhood_bounded_pack_frees_the_nodes_the_full_model_frees_with_max_moves_10(
        running: Cluster, monkeypatch: pytest.MonkeyPatch) -> None:
    full = pack(running, max_moves=10)
    large(monkeypatch)
    bounded = pack(running, max_moves=10)
    check_plan(running, bounded)
    assert bounded.complete and bounded.moves <= 10
    assert len(full.after["empty_nodes"]) > len(full.before["empty_nodes"]), "the full model frees nodes here"
    assert len(bounded.after["empty_nodes"]) >= len(full.after["empty_nodes"])


def test_a_neighbourhood_bounded_spread_lowers_the_spread_and_keeps_every_wave_valid(
        running: Cluster, monkeypatch: pytest.MonkeyPatch) -> None:
    large(monkeypatch, pods=20)
    plan = rebalance(running, RebalanceParams(goal="spread", time_limit=60))
    check_plan(running, plan)
    before, after = plan.before["utilization"], plan.after["utilization"]
    assert (max(after["cpu"]["max"], after["memory"]["max"]), after["cpu"]["stddev"] + after["memory"]["stddev"]) < \
        (max(before["cpu"]["max"], before["memory"]["max"]), before["cpu"]["stddev"] + before["memory"]["stddev"])


def test_ctrl_c_during_the_search_keeps_the_best_target_so_far_and_says_it_is_not_proven(
        running: Cluster, monkeypatch: pytest.MonkeyPatch) -> None:
    large(monkeypatch)
    interrupt = Interrupt()
    solve = target_module.solve_target

    def first_round_then_ctrl_c(*args, **kw) -> Target | None:
        found = solve(*args, **kw)
        interrupt.stop()  # as SIGINT does, once the first neighbourhood is solved
        return found

    monkeypatch.setattr(target_module, "solve_target", first_round_then_ctrl_c)
    plan = pack(running, interrupt=interrupt)
    assert plan.status == Status.FEASIBLE and not any(ok for _, _, ok in plan.levels)
    note = next(n.text for n in plan.notes if "neighbourhood search" in n.text)
    assert note.startswith("the target is the best found before Ctrl-C by a neighbourhood search (1 round(s)")
    assert note.endswith("not proven optimal")
    assert dict((n, v) for n, v, _ in plan.levels)["empty_nodes"] > len(plan.before["empty_nodes"])
    # the waves stop too (Ctrl-C wants the plan within 2 s): the target's moves are listed as not planned
    assert plan.waves == () and plan.blocked and all("interrupted after 0 wave(s)" in b.reason for b in plan.blocked)


def test_the_waves_stop_at_the_deadline_and_say_which_moves_were_not_planned(
        running: Cluster, monkeypatch: pytest.MonkeyPatch) -> None:
    large(monkeypatch)
    plan = pack(running)
    assert plan.moves
    moves = {m.key: m.target for w in plan.waves for m in w.moves}
    free = [p for p in running.pods if p.key in moves]
    params = RebalanceParams(goal="pack")
    healthy = {p.key: True for p in running.pods}
    waves, blocked, final = waves_to(running, Target(moves, Status.FEASIBLE, ()), free, params, healthy, {},
                                     deadline=time.perf_counter())
    assert waves == [] and final == {p.key: p.node_name for p in running.pods}
    assert {b.pod for b in blocked} == set(moves)
    assert all("was not planned: the time limit ran out after 0 wave(s)" in b.reason for b in blocked)


def test_the_same_input_and_seed_give_the_same_plan(running: Cluster, monkeypatch: pytest.MonkeyPatch) -> None:
    large(monkeypatch)
    first, second = pack(running, seed=3), pack(running, seed=3)
    assert [[(m.key, m.target) for m in w.moves] for w in first.waves] == \
        [[(m.key, m.target) for m in w.moves] for w in second.waves]
    assert first.final == second.final
