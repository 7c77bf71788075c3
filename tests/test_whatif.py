"""podplan whatif: the scenarios file, each operation as a user sees it in the rows, generators, error rows,
bad input (one line, exit 2), the local engine (same rows whatever --parallel), fleets and Ctrl-C."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from builders import container, node_manifest, pod_manifest, workload_manifest
from podplan.cli import main
from podplan.models.loader import load_paths, read_paths
from podplan.optimizer.whatif import Settings, Source, load_bases, prepare
from podplan.optimizer.whatif.apply import Base, add_nodes, remove_nodes
from podplan.optimizer.whatif.engines import run_local
from podplan.optimizer.whatif.render import render_table
from podplan.optimizer.whatif.run import run_task, scenario_cluster
from podplan.optimizer.whatif.scenarios import (AddNodes, ScenariosError, expand, load_scenarios,
                                                parse_scenarios)

ROOT = Path(__file__).resolve().parents[1]
HEAD = {"apiVersion": "podplan.io/v1alpha1", "kind": "Scenarios"}
ZONE = "topology.kubernetes.io/zone"
TYPE = "node.kubernetes.io/instance-type"


def write_cluster(path: Path) -> Path:
    """4 nodes (2 cpu each; zones a, a, b, b; n4 is an r5), a DaemonSet pod and one 1-cpu app pod on each, a
    mirror pod on n1, and a Deployment `web` of 2 pending 500m replicas."""
    zones = {"n1": "a", "n2": "a", "n3": "b", "n4": "b"}
    docs: list[dict[str, Any]] = []
    for n, z in zones.items():
        docs.append(node_manifest(n, {ZONE: z, TYPE: "r5" if n == "n4" else "m5", "kubernetes.io/hostname": n},
                                  cpu="2", memory="8Gi"))
    docs.append(workload_manifest("DaemonSet", "agent", {"app": "agent"},
                                  containers=[container(requests={"cpu": "100m"})]))
    for n in zones:
        docs.append(pod_manifest(f"agent-{n}", labels={"app": "agent"}, node=n, owner=("DaemonSet", "agent"),
                                 containers=[container(requests={"cpu": "100m"})]))
        docs.append(pod_manifest(f"app-{n}", labels={"app": "app"}, node=n,
                                 containers=[container(requests={"cpu": "1"})]))
    mirror = pod_manifest("etcd-n1", namespace="kube-system", node="n1")
    mirror["metadata"]["annotations"] = {"kubernetes.io/config.mirror": "x"}
    docs.append(mirror)
    docs.append(workload_manifest("Deployment", "web", {"app": "web"}, replicas=2,
                                  containers=[container(requests={"cpu": "500m"})]))
    path.write_text(yaml.safe_dump_all(docs), encoding="utf-8")
    return path


def write_scenarios(path: Path, scenarios: list[dict[str, Any]] | None = None,
                    generators: list[dict[str, Any]] | None = None) -> Path:
    body: dict[str, Any] = dict(HEAD)
    if scenarios is not None:
        body["scenarios"] = scenarios
    if generators is not None:
        body["generators"] = generators
    path.write_text(yaml.safe_dump(body), encoding="utf-8")
    return path


def whatif(*args: str) -> Any:
    return CliRunner().invoke(main, ["whatif", *args])


def rows_of(result: Any) -> list[dict[str, Any]]:
    return json.loads(result.stdout)["scenarios"]


@pytest.fixture
def cluster_file(tmp_path: Path) -> Path:
    return write_cluster(tmp_path / "cluster.yaml")


def base_of(path: Path, keep_docs: bool = True) -> Base:
    return load_bases([Source(str(path), (str(path),))], keep_docs=keep_docs)[0]


def one_task(base: Base, path: Path, scenario: dict[str, Any]) -> Any:
    file = parse_scenarios({**HEAD, "scenarios": [scenario]}, str(path / "s.yaml"))
    return prepare([base], file)[0]


# ------------------------------------------------------------------------------------------ the operations


def test_removing_a_zone_makes_its_app_pods_pending_and_its_daemon_and_mirror_pods_go(cluster_file: Path) -> None:
    base = base_of(cluster_file)
    task = one_task(base, cluster_file.parent, {"name": "lose-a", "removeNodes": {
        "selector": {"matchLabels": {ZONE: "a"}}}})
    cluster, _, removed = scenario_cluster(base, task)
    assert removed == 2
    assert [n.name for n in cluster.nodes] == ["n3", "n4"]
    assert {p.key for p in cluster.pending} >= {"default/app-n1", "default/app-n2"}
    everything = {p.key for p in cluster.pods + cluster.pending}
    assert not {"default/agent-n1", "default/agent-n2", "kube-system/etcd-n1"} & everything
    assert all(p.node_name in ("n3", "n4") for p in cluster.pods)


def test_remove_count_takes_the_least_requested_matching_nodes_first(tmp_path: Path) -> None:
    path = write_cluster(tmp_path / "c.yaml")
    docs = yaml.safe_load_all(path.read_text())
    extra = pod_manifest("big", node="n2", containers=[container(requests={"cpu": "500m"})])
    path.write_text(yaml.safe_dump_all([*docs, extra]))
    base = base_of(path)
    task = one_task(base, tmp_path, {"name": "two-fewer-m5", "removeNodes": {
        "selector": {"matchLabels": {TYPE: "m5"}}, "count": 2}})
    cluster, _, _ = scenario_cluster(base, task)
    assert [n.name for n in cluster.nodes] == ["n2", "n4"]  # n1 and n3 requested less


def test_added_nodes_are_copies_with_their_own_names_and_hostnames_and_get_daemonset_pods(cluster_file: Path) -> None:
    base = base_of(cluster_file, keep_docs=False)
    cluster = add_nodes(base.cluster, AddNodes(parse_scenarios(
        {**HEAD, "scenarios": [{"name": "x", "addNodes": {"like": {"matchLabels": {TYPE: "r5"}}, "count": 3}}]},
        "s.yaml").scenarios[0].add.like, 3))
    new = [n for n in cluster.nodes if n.name.startswith("n4-whatif-")]
    assert [n.name for n in new] == ["n4-whatif-1", "n4-whatif-2", "n4-whatif-3"]
    assert [n.labels["kubernetes.io/hostname"] for n in new] == [n.name for n in new]
    assert all(n.labels[TYPE] == "r5" and n.allocatable == base.cluster.nodes[3].allocatable for n in new)
    daemons = [p for p in cluster.pending if p.workload == "DaemonSet/default/agent"]
    pinned = sorted(p.affinity.node_required.terms[0].match_fields[0].values[0] for p in daemons)
    assert pinned == [n.name for n in new]
    assert len({p.key for p in cluster.pending}) == len(cluster.pending)


def test_scale_up_adds_pending_replicas_and_scale_down_removes_pods(cluster_file: Path, tmp_path: Path) -> None:
    out = whatif(str(cluster_file), "--scenarios", str(write_scenarios(tmp_path / "s.yaml", [
        {"name": "web-5", "scale": {"workload": "Deployment/default/web", "replicas": 5}},
        {"name": "web-0", "scale": {"workload": "Deployment/default/web", "replicas": 0}},
    ])), "-o", "json", "--time-limit", "5")
    assert out.exit_code == 0, out.output
    up, down = rows_of(out)
    assert (up["to_place"], down["to_place"]) == (5, 0)
    # 0.9 cpu free per node (a 1-cpu app and a 100m agent on each): one 500m replica per node
    assert (up["optimal"]["placed"], up["optimal"]["pending_by_priority"]) == (4, {"0": 1})
    assert up["what"] == "scale Deployment/default/web to 5"


def test_add_manifests_reads_a_path_relative_to_the_scenarios_file(cluster_file: Path, tmp_path: Path) -> None:
    folder = tmp_path / "what"
    folder.mkdir()
    (folder / "tenant.yaml").write_text(yaml.safe_dump(workload_manifest(
        "Deployment", "tenant", {"app": "tenant"}, replicas=3, containers=[container(requests={"cpu": "1"})])))
    out = whatif(str(cluster_file), "--scenarios", str(write_scenarios(folder / "s.yaml", [
        {"name": "tenant", "addManifests": "tenant.yaml"}])), "-o", "json", "--time-limit", "5")
    assert out.exit_code == 0, out.output
    row, = rows_of(out)
    assert row["to_place"] == 5  # web's 2 and tenant's 3
    assert row["optimal"]["placed"] == 5 - row["optimal"]["pending"]


def test_scheduler_config_scenario_uses_that_configuration(cluster_file: Path, tmp_path: Path) -> None:
    config = ROOT / "instances" / "scheduler-configs" / "most-allocated.yaml"
    out = whatif(str(cluster_file), "--scenarios", str(write_scenarios(tmp_path / "s.yaml", [
        {"name": "packing", "schedulerConfig": str(config)}, {"name": "broken", "schedulerConfig": "nope.yaml"}])),
        "-o", "json", "--time-limit", "5")
    packing, broken = rows_of(out)
    assert packing["status"] == "OPTIMAL" and packing["optimal"]["placed"] == 2
    assert broken["status"] == "ERROR" and "schedulerConfig" in broken["error"] and "nope.yaml" in broken["error"]
    assert out.exit_code == 1


def test_each_value_of_makes_one_scenario_per_label_value_in_sorted_order(cluster_file: Path, tmp_path: Path) -> None:
    out = whatif(str(cluster_file), "--scenarios", str(write_scenarios(
        tmp_path / "s.yaml", [{"name": "baseline"}], [{"name": "each-zone", "removeNodes": {"eachValueOf": ZONE}}])),
        "-o", "json", "--time-limit", "5")
    assert out.exit_code == 0, out.output
    rows = rows_of(out)
    assert [r["scenario"] for r in rows] == ["baseline", "each-zone/a", "each-zone/b"]
    assert [r["nodes"] for r in rows] == [4, 2, 2]
    assert rows[1]["generator"] == "each-zone"


def test_largest_count_that_places_all_is_the_brute_force_answer(cluster_file: Path, tmp_path: Path) -> None:
    # the bisection's answer is the largest k for which removing the first k nodes of the drain order places
    # every pod, found here by trying every k
    out = whatif(str(cluster_file), "--scenarios", str(write_scenarios(tmp_path / "s.yaml", [], [
        {"name": "how-many", "removeNodes": {"selector": {"matchLabels": {}}, "largestCountThatPlacesAll": True}}])),
        "-o", "json", "--time-limit", "10")
    assert out.exit_code == 0, out.output
    row, = rows_of(out)
    base = base_of(cluster_file, keep_docs=False)
    from podplan.optimizer.whatif.apply import drain_order
    from podplan.optimizer.pipeline import Deadline, optimal_plan
    from podplan.optimizer.runner import SolverParams

    order = drain_order(base.cluster, None)
    fits = []
    for k in range(len(order) + 1):
        c = remove_nodes(base.cluster, set(order[:k]))
        plan, _ = optimal_plan(c, SolverParams(time_limit=5), deadline=Deadline.start(5))
        fits.append(len(plan.placements) == len(c.pending))
    best = max(k for k, ok in enumerate(fits) if ok)
    assert row["largest_count"] == best == row["removed_nodes"]
    assert row["optimal"]["pending"] == 0 and row["nodes"] == 4 - best


# ---------------------------------------------------------------------------------------------- error rows


def test_a_scenario_that_cannot_be_applied_is_one_error_row_and_the_others_still_print(cluster_file: Path,
                                                                                       tmp_path: Path) -> None:
    scen = write_scenarios(tmp_path / "s.yaml", [
        {"name": "ok"},
        {"name": "ghost-workload", "scale": {"workload": "Deployment/shop/ghost", "replicas": 3}},
        {"name": "no-such-nodes", "removeNodes": {"selector": {"matchLabels": {ZONE: "mars"}}}},
        {"name": "missing-file", "addManifests": "absent.yaml"},
        {"name": "also-ok", "removeNodes": {"selector": {"matchLabels": {ZONE: "b"}}, "count": 1}},
    ])
    out = whatif(str(cluster_file), "--scenarios", str(scen), "--time-limit", "5")
    assert out.exit_code == 1
    lines = out.stdout.splitlines()
    assert len(lines) == 6  # the header and one row per scenario
    by_name = {line.split()[0]: line for line in lines[1:]}
    assert "error: scale.workload: no Deployment shop/ghost in the cluster" in by_name["ghost-workload"]
    assert "error: removeNodes.selector: matches no node" in by_name["no-such-nodes"]
    assert "addManifests" in by_name["missing-file"] and "absent.yaml" in by_name["missing-file"]
    assert "OPTIMAL" in by_name["ok"] and "OPTIMAL" in by_name["also-ok"]
    json_out = whatif(str(cluster_file), "--scenarios", str(scen), "--time-limit", "5", "-o", "json")
    assert [r["status"] for r in rows_of(json_out)] == ["OPTIMAL", "ERROR", "ERROR", "ERROR", "OPTIMAL"]


BAD = [
    ("a wrong kind", {"apiVersion": "podplan.io/v1alpha1", "kind": "Scenario", "scenarios": [{"name": "a"}]},
     "s.yaml: kind: must be Scenarios"),
    ("an unknown field in a scenario", {**HEAD, "scenarios": [{"name": "a", "drain": {}}]},
     "s.yaml: scenario a (scenarios[0]): drain: unknown field"),
    ("a count that is not a number", {**HEAD, "scenarios": [
        {"name": "a", "removeNodes": {"selector": {"matchLabels": {"x": "y"}}, "count": "3"}}]},
     "scenario a (scenarios[0]): removeNodes.count: must be an integer ≥ 1, not the string \"3\""),
    ("a workload that is not Kind/ns/name", {**HEAD, "scenarios": [
        {"name": "a", "scale": {"workload": "web", "replicas": 3}}]},
     "scenario a (scenarios[0]): scale.workload: must be Kind/namespace/name"),
    ("eachValueOf under scenarios", {**HEAD, "scenarios": [{"name": "a", "removeNodes": {"eachValueOf": ZONE}}]},
     "removeNodes.eachValueOf: makes one scenario per value: it belongs under generators"),
    ("a generator that generates nothing", {**HEAD, "generators": [
        {"name": "g", "removeNodes": {"selector": {"matchLabels": {"x": "y"}}}}]},
     "scenario g (generators[0]): removeNodes: a generator needs eachValueOf or largestCountThatPlacesAll"),
    ("a bad selector operator", {**HEAD, "scenarios": [{"name": "a", "removeNodes": {"selector": {
        "matchExpressions": [{"key": "x", "operator": "Near"}]}}}]},
     "removeNodes.selector.matchExpressions[0].operator: unknown operator"),
    ("a name used twice", {**HEAD, "scenarios": [{"name": "a"}, {"name": "a"}]},
     "scenario a (scenarios[1]): name: used twice (also scenarios[0])"),
    ("addNodes without a count", {**HEAD, "scenarios": [{"name": "a", "addNodes": {"like": {}}}]},
     "addNodes.count: required"),
    ("nothing to answer", {**HEAD}, "no scenarios and no generators"),
]


@pytest.mark.parametrize("body,expected", [b[1:] for b in BAD], ids=[f"{b[0]} is one line, exit 2" for b in BAD])
def test_a_malformed_scenarios_file_is_one_line_and_exit_2(cluster_file: Path, tmp_path: Path,
                                                           body: dict[str, Any], expected: str) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(body))
    out = whatif(str(cluster_file), "--scenarios", str(path))
    assert out.exit_code == 2
    assert out.stdout == ""
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and str(path) in lines[0], out.stderr
    assert expected in lines[0]


def test_the_bundled_scenarios_file_loads_and_answers_every_scenario() -> None:
    scen = ROOT / "instances" / "whatif" / "multi-tenant-scenarios.yaml"
    out = whatif(str(ROOT / "instances" / "multi-tenant.yaml"), "--scenarios", str(scen), "-o", "json",
                 "--time-limit", "5")
    assert out.exit_code == 0, out.output
    rows = rows_of(out)
    names = [s.name for s in load_scenarios(str(scen)).scenarios if not s.generator] + ["each-zone/us-east-1a",
                                                                                         "each-zone/us-east-1b",
                                                                                         "how-many-m5-can-go"]
    assert [r["scenario"] for r in rows] == names
    assert all(r["status"] == "OPTIMAL" and r["optimal"]["placed"] >= r["greedy"]["placed"] for r in rows)


# ------------------------------------------------------------------------------------- engines and fleets


def test_the_local_engine_gives_the_same_table_with_one_or_two_processes(tmp_path: Path) -> None:
    scen = ROOT / "instances" / "whatif" / "multi-tenant-scenarios.yaml"
    base = load_bases([Source("mt", (str(ROOT / "instances" / "multi-tenant.yaml"),))], keep_docs=True)
    tasks = prepare(base, load_scenarios(str(scen)))
    settings = Settings(time_limit=5, seed=3)
    one = run_local(base, tasks, settings, 1)
    two = run_local(base, tasks, settings, 2)
    table = [render_table([o.rows[t.position] for t in tasks], timing=False) for o in (one, two)]
    assert table[0] == table[1]
    inline = [run_task(base[0], t, settings) for t in tasks]
    assert render_table(inline, timing=False) == table[0]


def test_a_fleet_is_one_row_per_cluster_and_scenario(cluster_file: Path, tmp_path: Path) -> None:
    scen = write_scenarios(tmp_path / "s.yaml", [{"name": "baseline"}, {"name": "lose-a", "removeNodes": {
        "selector": {"matchLabels": {ZONE: "a"}}}}])
    out = whatif("--scenarios", str(scen), "--fleet", str(cluster_file),
                 "--fleet", str(ROOT / "instances" / "zone-spread.yaml"), "--time-limit", "5")
    lines = out.stdout.splitlines()
    assert lines[0].split()[:2] == ["CLUSTER", "SCENARIO"]
    assert [(line.split()[0].rsplit("/", 1)[-1], line.split()[1]) for line in lines[1:]] == [
        ("cluster.yaml", "baseline"), ("cluster.yaml", "lose-a"),
        ("zone-spread.yaml", "baseline"), ("zone-spread.yaml", "lose-a")]
    # zone-spread.yaml has no zone "a": that row is its error, the rest are answered
    assert out.exit_code == 1 and "matches no node" in lines[4]


def test_ctrl_c_stops_the_pool_and_keeps_the_finished_rows(cluster_file: Path, tmp_path: Path) -> None:
    scen = write_scenarios(tmp_path / "s.yaml", [{"name": f"s{i}"} for i in range(8)])
    base = load_bases([Source("c", (str(cluster_file),))], keep_docs=False)
    tasks = prepare(base, load_scenarios(str(scen)))
    seen: list[str] = []

    def press_ctrl_c(row: dict[str, Any]) -> None:  # SIGINT lands in the command while it waits for rows
        seen.append(row["scenario"])
        if len(seen) == 2:
            raise KeyboardInterrupt

    out = run_local(base, tasks, Settings(time_limit=5), 1, press_ctrl_c)
    assert out.interrupted
    assert 2 <= len(out.rows) < len(tasks)
    assert [out.rows[p]["scenario"] for p in sorted(out.rows)][:2] == ["s0", "s1"]


def test_expand_leaves_a_generator_whose_label_no_node_has_as_one_failing_scenario(cluster_file: Path) -> None:
    file = parse_scenarios({**HEAD, "generators": [{"name": "g", "removeNodes": {"eachValueOf": "rack"}}]}, "s.yaml")
    base = base_of(cluster_file, keep_docs=False)
    scenario, = expand(file.scenarios, base.cluster)
    task = prepare([base], file)[0]
    row = run_task(base, task, Settings(time_limit=2))
    assert scenario.name == "g" and row["status"] == "ERROR"
    assert row["error"] == "removeNodes.eachValueOf: no node has the label rack"


def test_reading_the_input_twice_gives_the_same_documents(cluster_file: Path) -> None:
    # the scale and addManifests operations re-read the documents: they must parse to the base cluster
    assert load_paths([str(cluster_file)]) == load_bases(
        [Source("c", (str(cluster_file),))], keep_docs=True)[0].cluster
    assert len(read_paths([str(cluster_file)])) == 15
    with pytest.raises(ScenariosError):
        parse_scenarios({**HEAD, "scenarios": "x"}, "s.yaml")


def test_the_report_has_a_chart_across_scenarios_and_every_row_with_its_error(cluster_file: Path,
                                                                                tmp_path: Path) -> None:
    scen = write_scenarios(tmp_path / "s.yaml", [{"name": "baseline"}, {"name": "ghost", "scale": {
        "workload": "Deployment/default/ghost", "replicas": 1}}])
    out = whatif(str(cluster_file), "--scenarios", str(scen), "--time-limit", "5", "--report", str(tmp_path / "r"))
    assert out.exit_code == 1
    page = (tmp_path / "r" / "report.html").read_text()
    assert page.count('src="data:image/png;base64,') == 2
    assert "baseline" in page and "error: scale.workload: no Deployment default/ghost in the cluster" in page
    assert "1 could not be answered" in page


def test_the_whatif_benchmark_prints_its_engines_table_at_toy_size() -> None:
    import subprocess
    import sys

    out = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_whatif.py"), "engines", "--nodes", "12",
                          "--pods", "40", "--time-limit", "10", "--engines", "local", "--parallel", "2"],
                         capture_output=True, text=True, check=True, timeout=300).stdout
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in out.splitlines() if line.startswith("| ")]
    header, *runs = rows
    assert header[:5] == ["engine", "parallel", "wall s", "/ sequential", "same table as sequential"]
    assert [(r[0], r[1]) for r in runs] == [("local", "1"), ("local", "2")]
    assert all(r[4] in ("yes", "NO") and r[5] == "ERROR,OPTIMAL" for r in runs), runs


def test_the_same_scenarios_give_the_same_table_in_one_process_or_two() -> None:
    import subprocess
    import sys

    out = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_whatif.py"), "engines", "--nodes", "12",
                          "--pods", "40", "--time-limit", "10", "--engines", "local", "--parallel", "2"],
                         capture_output=True, text=True, check=True, timeout=300).stdout
    runs = [[c.strip() for c in line.strip("|").split("|")] for line in out.splitlines() if line.startswith("| ")][1:]
    assert [r[4] for r in runs] == ["yes", "yes"]


@pytest.mark.parametrize("ignored", [False, True], ids=["started as a terminal starts it",
                                                      "started with Ctrl-C ignored by its parent"])
def test_ctrl_c_on_the_command_prints_the_finished_rows_and_exits_130(cluster_file: Path, tmp_path: Path,
                                                                       ignored: bool) -> None:
    import os
    import signal
    import subprocess
    import sys

    scen = write_scenarios(tmp_path / "s.yaml", [{"name": f"s{i}"} for i in range(40)])
    exe = Path(sys.executable).parent / "podplan"
    # a parent may start the command with SIGINT ignored (a non-interactive shell does so for every job it
    # starts with `&`, and the ignoring is inherited: a test suite run that way): the command takes Ctrl-C all
    # the same, as every other command does
    ignore = (lambda: signal.signal(signal.SIGINT, signal.SIG_IGN)) if ignored else None
    proc = subprocess.Popen([str(exe), "--verbose", "whatif", str(cluster_file), "--scenarios", str(scen),
                             "--parallel", "1", "--time-limit", "5"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True, preexec_fn=ignore)
    assert proc.stderr is not None
    for line in proc.stderr:  # the progress line of the first finished scenario, then Ctrl-C (the whole group)
        if line.startswith("whatif: 1/40"):
            break
    os.killpg(proc.pid, signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130
    rows = out.splitlines()[1:]
    assert 1 <= len(rows) < 40 and rows[0].split()[0] == "s0"
    assert f"interrupted: {len(rows)} of 40 scenario(s) finished and printed" in err


def test_a_fleet_member_can_be_a_kubeconfig_context_read_with_get_only(tmp_path: Path) -> None:
    from kube_stub import KubeStub, kubeconfig

    dump = ROOT / "instances" / "cluster-dump.yaml"
    run = KubeStub.of(yaml.safe_load(dump.read_text())["items"])
    served = run.start()
    try:
        config = kubeconfig(tmp_path / "kubeconfig", served.url, context="prod")
        scen = write_scenarios(tmp_path / "s.yaml", [{"name": "baseline"}],
                               [{"name": "each-zone", "removeNodes": {"eachValueOf": ZONE}}])
        out = CliRunner().invoke(main, ["whatif", "--scenarios", str(scen), "--fleet", "context:prod",
                                        "--fleet", str(dump), "-o", "json", "--time-limit", "5"],
                                 env={"KUBECONFIG": str(config)})
    finally:
        served.stop()
    assert out.exit_code == 0, out.output
    rows = rows_of(out)
    live = [r for r in rows if r["cluster"] == "prod"]
    files = [r for r in rows if r["cluster"] == str(dump)]
    assert [r["scenario"] for r in live] == [r["scenario"] for r in files] == [
        "baseline", "each-zone/eu-west-1a", "each-zone/eu-west-1b", "each-zone/eu-west-1c"]
    strip = lambda rs: [{k: v for k, v in r.items() if k not in ("cluster", "wall_seconds")} for r in rs]  # noqa: E731
    assert strip(live) == strip(files)  # the same objects, read live or from the file
    assert run.requests and {m for m, _ in run.requests} == {"GET"}


def test_a_worker_that_dies_fails_the_scenarios_in_flight_and_the_rest_still_run(cluster_file: Path, tmp_path: Path,
                                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    from podplan.optimizer.whatif import engines

    def dies_on_boom(base: Base, task: Any, settings: Settings) -> dict[str, Any]:
        if task.scenario.name == "boom":
            os._exit(9)  # as the kernel's OOM killer ends a process: no exception, no goodbye
        return run_task(base, task, settings)

    monkeypatch.setattr(engines, "run_task", dies_on_boom)  # the pool's workers are forked: they see it
    scen = write_scenarios(tmp_path / "s.yaml", [{"name": n} for n in ("a", "b", "boom", "c", "d")])
    base = load_bases([Source("c", (str(cluster_file),))], keep_docs=False)
    tasks = prepare(base, load_scenarios(str(scen)))
    out = engines.run_local(base, tasks, Settings(time_limit=5), 1)
    rows = [out.rows[t.position] for t in tasks]
    assert [r["status"] for r in rows] == ["OPTIMAL", "OPTIMAL", "ERROR", "OPTIMAL", "OPTIMAL"]
    assert "its worker process died while it ran" in rows[2]["error"]


def test_progress_is_a_bar_on_a_terminal_and_silent_in_a_pipe_unless_verbose() -> None:
    import io

    from podplan.optimizer.whatif.progress import Progress

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    rows = [{"cluster": "", "scenario": "a", "status": "OPTIMAL", "wall_seconds": 1.0},
            {"cluster": "", "scenario": "b", "status": "ERROR", "wall_seconds": 0.0}]
    term, pipe, verbose = Terminal(), io.StringIO(), io.StringIO()
    for stream, lines in ((term, False), (pipe, False), (verbose, True)):
        bar = Progress(2, stream=stream, lines=lines)
        for r in rows:
            bar(r)
        bar.close()
    assert term.getvalue().count("\rwhatif [") == 2 and "2/2, 1 error(s)" in term.getvalue()
    assert term.getvalue().endswith("\n")
    assert pipe.getvalue() == ""
    assert verbose.getvalue().splitlines() == ["whatif: 1/2 a: OPTIMAL (1.0s)", "whatif: 2/2 b: ERROR (0.0s)"]
