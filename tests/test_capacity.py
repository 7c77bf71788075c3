"""podplan capacity: on tiny clusters the proven count equals an exhaustive search (every placement of the
copies judged by the verifier); never below kube-scheduler's greedy count; bad templates and impossible ones."""
from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from builders import make_node, make_pod, node_manifest, pod_manifest, pod_term, selector, container
from podplan.cli import main
from podplan.models.objects import Cluster, TopologySpreadConstraint
from podplan.optimizer.capacity import Template, capacity, verify_answer
from podplan.optimizer.pipeline import Deadline
from podplan.optimizer.runner import SolverParams, Status
from podplan.optimizer.verify import verify

H = "kubernetes.io/hostname"
Z = "topology.kubernetes.io/zone"
ROOT = Path(__file__).resolve().parent.parent


def runner() -> CliRunner:
    try:
        return CliRunner(mix_stderr=False)  # type: ignore[call-arg]
    except TypeError:
        return CliRunner()


@st.composite
def instances(draw: st.DrawFn) -> tuple[Cluster, list[Template]]:
    nodes = []
    for i in range(draw(st.integers(2, 3))):
        b = make_node(f"n{i}").label(H, f"n{i}").label(Z, draw(st.sampled_from(["a", "b"])))
        if draw(st.integers(0, 4)) == 0:
            b = b.taint("dedicated", "x")
        nodes.append(b.alloc(cpu=draw(st.sampled_from(["1", "2"])), memory="4Gi",
                             pods=draw(st.sampled_from([2, 3]))).build())
    n_templates = draw(st.integers(1, 3))
    apps = [f"t{i}" for i in range(n_templates)]
    templates = []
    for i, app in enumerate(apps):
        b = make_pod(app).label("app", app).req(cpu=draw(st.sampled_from(["0", "300m", "500m", "1"])))
        if draw(st.booleans()):
            b = b.toleration("dedicated", "x", "NoSchedule")
        if draw(st.integers(0, 4)) == 0:
            b = b.node_selector({Z: "a"})
        kind = draw(st.sampled_from(["none", "anti-self", "anti-other", "spread", "affinity"]))
        other = draw(st.sampled_from(apps + ["old"]))
        if kind == "anti-self":
            b = b.pod_anti_affinity(pod_term(H, selector(app=app)))
        elif kind == "anti-other":
            b = b.pod_anti_affinity(pod_term(draw(st.sampled_from([H, Z])), selector(app=other)))
        elif kind == "affinity":
            b = b.pod_affinity(pod_term(draw(st.sampled_from([H, Z])), selector(app=other)))
        elif kind == "spread":
            b = b.spread(TopologySpreadConstraint(max_skew=1, topology_key=draw(st.sampled_from([H, Z])),
                                                  when_unsatisfiable="DoNotSchedule", label_selector=selector(app=app)))
        templates.append(Template(app, b.build(), draw(st.sampled_from([1, 1, 2])) if n_templates > 1 else 1))
    existing = []
    for k in range(draw(st.integers(0, 2))):
        b = make_pod(f"old-{k}").label("app", draw(st.sampled_from(["old"] + apps))).req(cpu="500m")
        existing.append(b.on(draw(st.sampled_from([n.name for n in nodes]))).build())
    return Cluster(nodes=tuple(nodes), pods=tuple(existing)), templates


def brute_scale(cluster: Cluster, templates: list[Template]) -> int:
    """The largest k with ratio·k copies of every template placed validly, by trying every placement."""
    names = [n.name for n in cluster.nodes]
    slots = sum(n.allocatable["pods"] for n in cluster.nodes) - len(cluster.pods)
    best = 0
    for k in range(1, slots // sum(t.ratio for t in templates) + 1):
        copies = [t.copies(t.ratio * k) for t in templates]
        test = Cluster(nodes=cluster.nodes, pods=cluster.pods, pending=tuple(p for c in copies for p in c))
        choices = [itertools.combinations_with_replacement(names, len(c)) for c in copies]
        for choice in itertools.product(*choices):
            placements = {p.key: n for c, nodes in zip(copies, choice) for p, n in zip(c, nodes)}
            if verify(test, placements).ok:
                best = k
                break
    return best


def answer(cluster: Cluster, templates: list[Template], each: bool = False):
    a = capacity(cluster, templates, SolverParams(workers=1), deadline=Deadline.start(20), each=each)
    verify_answer(a)
    return a


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(instances())
def test_the_proven_scale_equals_an_exhaustive_search(instance: tuple[Cluster, list[Template]]) -> None:
    cluster, templates = instance
    from podplan.optimizer.capacity import NeverFits
    try:
        a = answer(cluster, templates)
    except NeverFits:
        assert brute_scale(cluster, templates) == 0
        return
    assert a.status is Status.OPTIMAL and a.gap == 0
    assert a.count == brute_scale(cluster, templates)
    greedy = a.greedy_scale if a.scale is not None else a.templates[0].greedy.count
    assert a.count >= greedy
    assert len(a.placements) == sum(t.count for t in a.templates)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(instances(), st.integers(1, 2))
def test_the_bound_that_can_prove_without_search_is_never_below_an_exhaustive_search(
        instance: tuple[Cluster, list[Template]], skew: int) -> None:
    """k_bound (per-node bounds summed, total free room, the spread's emptiest domain) may end the search the
    moment a placement reaches it: it must hold for every instance, with maxSkew 1 and 2."""
    from dataclasses import replace
    from podplan.optimizer.capacity.core import k_bound, node_bounds
    from podplan.optimizer.registry import DEFAULT_PROFILE

    cluster, templates = instance
    templates = [replace(t, pod=replace(t.pod, spread_constraints=tuple(replace(c, max_skew=skew)
                                                                         for c in t.pod.spread_constraints)))
                 for t in templates]
    ubs, problem = node_bounds(cluster, templates, DEFAULT_PROFILE)
    cap, why = k_bound(problem, templates, ubs)
    assert cap >= brute_scale(cluster, templates), why


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(instances())
def test_each_templates_own_maximum_equals_an_exhaustive_search(instance: tuple[Cluster, list[Template]]) -> None:
    cluster, templates = instance
    from podplan.optimizer.capacity import NeverFits
    from dataclasses import replace
    templates = [replace(t, ratio=1) for t in templates]
    try:
        a = answer(cluster, templates, each=True)
    except NeverFits:
        return
    assert [t.count for t in a.templates] == [brute_scale(cluster, [t]) for t in templates]


def test_greedy_stops_where_cluster_capacity_would_and_says_why() -> None:
    nodes = tuple(make_node(f"n{i}").label(H, f"n{i}").alloc(cpu="2", memory="4Gi", pods=110).build()
                  for i in range(3))
    t = Template("web", make_pod("web").label("app", "web").req(cpu="600m").build())
    a = answer(Cluster(nodes=nodes), [t])
    assert (a.templates[0].count, a.templates[0].bound, a.templates[0].greedy.count) == (9, 9, 9)
    assert a.templates[0].greedy.stopped_by == "0/3 nodes are available: 3 Insufficient cpu."


def test_the_inputs_pending_pods_are_placed_first() -> None:
    nodes = (make_node("n0").label(H, "n0").alloc(cpu="2", memory="4Gi", pods=110).build(),)
    pending = (make_pod("big").req(cpu="1500m").build(),)
    t = Template("web", make_pod("web").req(cpu="500m").build())
    a = answer(Cluster(nodes=nodes, pending=pending), [t])
    assert a.templates[0].count == 1 and a.input_plan is not None and a.input_plan.placements == {"default/big": "n0"}


# ------------------------------------------------------------------------------------------------------ CLI


def write(tmp_path: Path, name: str, *docs: object) -> str:
    p = tmp_path / name
    p.write_text(yaml.safe_dump_all(list(docs)))
    return str(p)


def cluster_file(tmp_path: Path) -> str:
    return write(tmp_path, "c.yaml", *(node_manifest(f"n{i}", {H: f"n{i}", Z: "a"}, cpu="2") for i in range(2)))


def test_json_names_the_issue_lists(tmp_path: Path) -> None:
    t = write(tmp_path, "t.yaml", pod_manifest("web", labels={"app": "web"},
                                               containers=[container(requests={"cpu": "500m"})]))
    r = runner().invoke(main, ["capacity", cluster_file(tmp_path), "--pod", t, "-o", "json"])
    assert r.exit_code == 0, r.stderr
    doc = json.loads(r.stdout)
    assert {"status", "templates", "bound", "gap", "placements"} <= set(doc)
    assert doc["templates"][0]["count"] == 8 and doc["templates"][0]["greedy"]["count"] == 8
    assert set(doc["templates"][0]) >= {"name", "count", "bound", "greedy"}
    assert set(doc["templates"][0]["greedy"]) == {"count", "stopped_by"}
    assert set(doc["placements"][0]) == {"pod", "node"}


def test_several_templates_report_the_scale(tmp_path: Path) -> None:
    a = write(tmp_path, "a.yaml", pod_manifest("a", containers=[container(requests={"cpu": "1"})]))
    b = write(tmp_path, "b.yaml", pod_manifest("b", containers=[container(requests={"cpu": "500m"})]))
    r = runner().invoke(main, ["capacity", cluster_file(tmp_path), "--pod", a, "--pod", b, "--ratio", "1:2",
                               "-o", "json"])
    assert r.exit_code == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["scale"] == 2 and [t["count"] for t in doc["templates"]] == [2, 4]


def test_emit_state_is_a_final_state_podplan_verify_accepts(tmp_path: Path) -> None:
    t = write(tmp_path, "t.yaml", pod_manifest("web", labels={"app": "web"},
                                               containers=[container(requests={"cpu": "500m"})]))
    r = runner().invoke(main, ["capacity", cluster_file(tmp_path), "--pod", t, "--emit", "state"])
    assert r.exit_code == 0, r.stderr
    state = write(tmp_path, "state.yaml", *yaml.safe_load_all(r.stdout))
    assert sum(1 for d in yaml.safe_load_all(r.stdout) if d["kind"] == "Pod" and d["spec"].get("nodeName")) == 8
    v = runner().invoke(main, ["verify", state])
    assert v.exit_code == 0, v.stdout + v.stderr


def test_a_template_that_fits_no_node_says_why_and_exits_1(tmp_path: Path) -> None:
    t = write(tmp_path, "t.yaml", pod_manifest("huge", containers=[container(requests={"cpu": "64"})]))
    r = runner().invoke(main, ["capacity", cluster_file(tmp_path), "--pod", t])
    assert r.exit_code == 1
    assert r.stderr.strip() == ("error: template huge fits on no node, even with the cluster empty: "
                                "0/2 nodes are available: 2 Insufficient cpu.")


@pytest.mark.parametrize("doc,message", [
    pytest.param(node_manifest("x"), "t.yaml[0] Node/x kind: --pod takes a Pod or a workload", id="a Node as template"),
    pytest.param({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"}},
                 "t.yaml[0] Service/s kind: --pod takes a Pod or a workload", id="a Service as template"),
    pytest.param(pod_manifest("p", node="n0"), "t.yaml[0] Pod/default/p spec.nodeName: a template must not be bound",
                 id="a bound pod as template"),
])
def test_a_template_that_is_not_a_pod_or_workload_is_one_line_exit_2(tmp_path: Path, doc: dict, message: str) -> None:
    t = write(tmp_path, "t.yaml", doc)
    r = runner().invoke(main, ["capacity", cluster_file(tmp_path), "--pod", t])
    assert r.exit_code == 2
    assert len(r.stderr.strip().splitlines()) == 1 and message in r.stderr, r.stderr


def test_a_ratio_that_does_not_match_the_templates_is_exit_2(tmp_path: Path) -> None:
    a = write(tmp_path, "a.yaml", pod_manifest("a"))
    b = write(tmp_path, "b.yaml", pod_manifest("b"))
    r = runner().invoke(main, ["capacity", cluster_file(tmp_path), "--pod", a, "--pod", b, "--ratio", "1:x"])
    assert r.exit_code == 2
    assert r.stderr.strip() == "error: --ratio: expected 2 positive integers separated by ':' (one per template), got '1:x'"


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(instances())
def test_greedys_one_step_count_equals_copies_scheduled_one_at_a_time(instance) -> None:
    """For templates only per-node rules place, greedy's count is computed in one step: it must be the count
    the simulator reaches scheduling copies one at a time, with the same stop message."""
    import time
    from podplan.optimizer.capacity.core import _node_local, copy_bounds, greedy
    from podplan.optimizer.registry import DEFAULT_PROFILE
    from dataclasses import replace
    cluster, templates = instance
    for t in (replace(t, ratio=1) for t in templates):
        if not _node_local(cluster, t):
            continue
        (limit,) = copy_bounds(cluster, [t], DEFAULT_PROFILE)
        fast = greedy(cluster, [t], [limit], DEFAULT_PROFILE, 0, time.perf_counter() + 60)
        slow = greedy(cluster, [t], [limit], DEFAULT_PROFILE, 0, time.perf_counter() + 60, shortcut=False)
        assert (fast.count, fast.stopped_by) == (slow.count, slow.stopped_by)
        assert sorted(fast.placements.values()) == sorted(slow.placements.values())


class _Ticks:
    """A clock for greedy's time checks: each reading is a millisecond after the last."""

    def __init__(self) -> None:
        self.t = 0.0

    def perf_counter(self) -> float:
        self.t += 0.001
        return self.t


@pytest.mark.parametrize("stretch, reaches_bound", [
    pytest.param(None, False, id="without a stretch the count stops at its share"),
    pytest.param(1e6, True, id="a stretch its pace reaches the bound within lets it go on to the bound"),
    pytest.param(0.008, False, id="a stretch too close for its pace stops it at its share"),
])
def test_greedys_count_goes_past_its_share_only_when_its_pace_reaches_the_bound(monkeypatch, stretch,
                                                                                 reaches_bound) -> None:
    from podplan.optimizer.capacity import core
    from podplan.optimizer.registry import DEFAULT_PROFILE
    nodes = [make_node(f"n{i}").label(H, f"n{i}").alloc(cpu="4", memory="4Gi", pods=110).build() for i in range(6)]
    t = Template("api", make_pod("api").label("app", "api").req(cpu="1")
                 .pod_anti_affinity(pod_term(H, selector(app="api"))).build())
    cluster = Cluster(nodes=tuple(nodes), pods=(), pending=())
    sched = core._scheduler(core.ClusterState.from_cluster(cluster), DEFAULT_PROFILE, 0)
    clock = _Ticks()
    monkeypatch.setattr(core, "time", clock)
    # its share ends three readings in: a copy or two, of the six the anti-affinity allows (one per node)
    g = core.greedy(cluster, [t], [6], DEFAULT_PROFILE, 0, 0.003, sched=sched, stretch=stretch, rounds_at_most=6)
    assert (g.count == 6) is reaches_bound
    assert g.count >= 1
    if reaches_bound:
        assert g.stopped_by.startswith("0/6 nodes are available")
