"""`podplan compare` and `podplan generate`: every number compare shows about a placement is the verifier's,
adversarial instances show greedy stranding pods the optimum places, the diff pairs identical replicas, and
the report is one self-contained file. (The report in a real browser: test_report_browser.py.)"""
from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from builders import cluster_of, make_node, make_pod
from podplan.cli import main
from podplan.models.generate import generate
from podplan.models.loader import load_paths, parse_documents
from podplan.models.objects import Cluster
from podplan.optimizer.compare import compare, differences
from podplan.optimizer.render.compare import render_table, rows, to_dict
from podplan.optimizer.rebalance.movable import as_pending, movable
from podplan.optimizer.objective import TERMS
from podplan.optimizer.policy import Policy
from podplan.optimizer.render.report import render_html
from podplan.optimizer.runner import SolverParams
from podplan.optimizer.verify import verify

ROOT = Path(__file__).resolve().parents[1]
INSTANCES = sorted((ROOT / "instances").glob("*.yaml"))
FAST = SolverParams(time_limit=3, workers=1, seed=0)


def column_cluster(cluster: Cluster, name: str) -> Cluster:
    """The cluster a column placed pods of: the input, or the input with its movable pods unbound."""
    if name in ("greedy", "optimal"):
        return cluster
    return as_pending(cluster, [p for p in movable(cluster) if p.node_name in {n.name for n in cluster.nodes}])[0]


def utilization_by_hand(cluster: Cluster, placements: dict[str, str], resource: str) -> list[float]:
    """requested / allocatable per node, summed from the pods themselves (no ClusterState)."""
    used = {n.name: 0 for n in cluster.nodes}
    for p in cluster.pods:
        if p.node_name in used:
            used[p.node_name] += p.requests.get(resource, 0)
    pending = {p.key: p for p in cluster.pending}
    for key, node in placements.items():
        used[node] += pending[key].requests.get(resource, 0)
    return [used[n.name] / n.allocatable[resource] if n.allocatable.get(resource) else 0.0 for n in cluster.nodes]


def assert_columns_are_the_verifiers(cluster: Cluster, doc: dict) -> None:
    m = Policy(**doc["multipliers"])
    for col in doc["columns"]:
        base = column_cluster(cluster, col["name"])
        report = verify(base, col["placements"], m)
        assert col["placed"] == report.placed
        assert {int(p): v["placed"] for p, v in col["placed_by_priority"].items() if v["placed"]} == \
            report.placed_by_priority
        assert col["to_place"] == len(base.pending) and col["pending"] == len(base.pending) - report.placed
        assert col["preference"] == report.preference
        assert col["terms"] == {t: report.terms[t] for t in TERMS}
        assert col["violations"] == sum(1 for v in report.violations if not v.preexisting)
        excess = sum(g["excess"] for g in col["schedule_anyway"])
        assert -m.schedule_anyway_skew * excess == report.terms["schedule_anyway_skew"]
        for resource in ("cpu", "memory"):
            values = utilization_by_hand(base, col["placements"], resource)
            mean = sum(values) / len(values)
            stddev = math.sqrt(sum((v - mean) ** 2 for v in values) / len(values))
            assert col[resource] == {"max": round(max(values), 4), "mean": round(mean, 4), "stddev": round(stddev, 4)}
        assert len(set(col["placements"]) | {p["pod"] for p in col["pending_pods"]}) == col["to_place"]


@pytest.mark.parametrize("path", INSTANCES, ids=[f"bundled instance {p.stem}" for p in INSTANCES])
def test_every_number_compare_shows_for_a_bundled_instance_is_the_verifiers(path: Path) -> None:
    cluster = load_paths([str(path)])
    doc = to_dict(compare(cluster, FAST))
    assert [c["name"] for c in doc["columns"]][:2] == ["greedy", "optimal"]
    assert_columns_are_the_verifiers(cluster, doc)
    for col in doc["columns"]:
        assert col["violations"] == 0 or col["name"] == "current"
    g, o = doc["columns"][0], doc["columns"][1]
    assert o["placed"] >= g["placed"]


@pytest.mark.parametrize("profile", ["mixed", "web"], ids=lambda p: f"generated {p} cluster of 15 nodes with running pods")
def test_every_number_compare_shows_for_a_generated_running_cluster_is_the_verifiers(profile: str) -> None:
    cluster = parse_documents(generate(15, 120, 7, profile))
    doc = to_dict(compare(cluster, FAST))
    assert [c["name"] for c in doc["columns"]] == ["greedy", "optimal", "current", "replacement"]
    assert doc["movable_pods"] == len(movable(cluster)) > 0
    assert_columns_are_the_verifiers(cluster, doc)


def test_a_cluster_with_ScheduleAnyway_spread_reports_the_skew_of_each_constraint() -> None:
    cluster = load_paths([str(ROOT / "instances" / "zone-spread.yaml")])
    doc = to_dict(compare(cluster, FAST))
    for col in doc["columns"]:
        assert col["schedule_anyway"], "zone-spread.yaml holds a ScheduleAnyway constraint"
        for g in col["schedule_anyway"]:
            assert g["excess"] == max(0, g["skew"] - g["max_skew"])


@pytest.mark.parametrize("nodes,pods,seed", [(12, 100, 1), (12, 100, 2), (20, 200, 3)],
                         ids=lambda v: str(v))
def test_on_an_adversarial_instance_greedy_leaves_pods_pending_and_the_optimum_places_them_all(
        nodes: int, pods: int, seed: int) -> None:
    cluster = parse_documents(generate(nodes, pods, seed, "adversarial"))
    doc = to_dict(compare(cluster, SolverParams(time_limit=5, workers=2, seed=seed)))
    greedy, optimal = doc["columns"][0], doc["columns"][1]
    assert greedy["pending"] > 0
    assert optimal["pending"] == 0 and optimal["placed"] == optimal["to_place"] == len(cluster.pending)
    assert_columns_are_the_verifiers(cluster, doc)
    stranded = {d["pod"] for d in doc["differences"][0]["pods"] if d["greedy"] is None}
    assert len(stranded) == greedy["pending"]


def test_identical_replicas_swapped_between_two_nodes_are_no_difference() -> None:
    pods = [make_pod(f"web-{i}").label("app", "web").req(cpu="1").set(workload="Deployment/default/web").build()
            for i in range(3)]
    a = {"default/web-0": "n1", "default/web-1": "n2", "default/web-2": "n2"}
    assert differences(pods, a, {"default/web-0": "n2", "default/web-1": "n1", "default/web-2": "n2"}) == ()
    moved = differences(pods, a, {"default/web-0": "n2", "default/web-1": "n2", "default/web-2": "n3"})
    assert [(d.a, d.b) for d in moved] == [("n1", "n3")]


def test_a_replica_pending_in_one_plan_and_placed_in_the_other_is_a_difference() -> None:
    pods = [make_pod(f"web-{i}").label("app", "web").req(cpu="1").set(workload="Deployment/default/web").build()
            for i in range(2)]
    diff = differences(pods, {"default/web-0": "n1"}, {"default/web-0": "n1", "default/web-1": "n2"})
    assert [(d.pod, d.a, d.b) for d in diff] == [("default/web-1", "", "n2")]


def test_pods_with_different_requests_are_never_paired_up() -> None:
    small = make_pod("a").req(cpu="1").set(workload="Deployment/default/x").build()
    large = make_pod("b").req(cpu="2").set(workload="Deployment/default/x").build()
    diff = differences([small, large], {"default/a": "n1", "default/b": "n2"}, {"default/a": "n2", "default/b": "n1"})
    assert len(diff) == 2


def test_a_cluster_without_movable_pods_has_only_the_greedy_and_optimal_columns() -> None:
    nodes = [make_node(f"n{i}").alloc(cpu="2", memory="4Gi", pods=10).build() for i in range(2)]
    bare = make_pod("bare").req(cpu="1").on("n0").build()  # no controller: never moves
    cluster = cluster_of(nodes, [bare, make_pod("new").req(cpu="1").build()])
    doc = to_dict(compare(cluster, FAST))
    assert [c["name"] for c in doc["columns"]] == ["greedy", "optimal"]
    assert [d["between"] for d in doc["differences"]] == [["greedy", "optimal"]]


def test_a_running_replica_makes_the_current_and_re_placement_columns_appear() -> None:
    nodes = [make_node(f"n{i}").alloc(cpu="2", memory="4Gi", pods=10).build() for i in range(2)]
    running = make_pod("web-0").req(cpu="1").owner("ReplicaSet", "web").on("n0").build()
    cluster = cluster_of(nodes, [running, make_pod("job").req(cpu="2").build()])
    doc = to_dict(compare(cluster, FAST))
    names = [c["name"] for c in doc["columns"]]
    assert names == ["greedy", "optimal", "current", "replacement"]
    current, replacement = doc["columns"][2], doc["columns"][3]
    assert current["placed"] == 1 and current["pending"] == 1  # the replica where it runs; the job pending
    assert replacement["placed"] == 2  # the replica shares a node so the 2-cpu job gets the other


def test_table_shows_rows_pending_reasons_and_the_pods_that_differ() -> None:
    cluster = parse_documents(generate(12, 100, 1, "adversarial"))
    doc = to_dict(compare(cluster, FAST))
    text = render_table(doc)
    header = text.splitlines()[0].split()
    assert header == ["GREEDY", "OPTIMAL"]
    for label, _cells in rows(doc):
        assert label in text
    assert "WHY PENDING" in text and "Insufficient cpu" in text
    assert re.search(r"greedy vs optimal: \d+ pod\(s\) on a different node", text)
    placed = next(line for line in text.splitlines() if line.startswith("pods placed"))
    assert placed.split()[2:] == [f"{doc['columns'][0]['placed']}/{len(cluster.pending)}",
                                  f"{len(cluster.pending)}/{len(cluster.pending)}"]


def test_cli_compare_json_numbers_are_the_verifiers_and_the_report_is_written(tmp_path: Path) -> None:
    source = tmp_path / "cluster.yaml"
    result = CliRunner().invoke(main, ["generate", "--nodes", "12", "--pods", "100", "--seed", "2",
                                       "--profile", "adversarial"])
    assert result.exit_code == 0, result.output
    source.write_text(result.output)
    out = CliRunner().invoke(main, ["compare", str(source), "--time-limit", "3", "--workers", "1", "-o", "json",
                                    "--report", str(tmp_path / "r")])
    assert out.exit_code == 0, out.output
    doc = json.loads(out.stdout)
    assert_columns_are_the_verifiers(load_paths([str(source)]), doc)
    page = (tmp_path / "r" / "report.html").read_text()
    assert f'data-col="optimal" data-key="placed">{doc["columns"][1]["placed"]}<' in page


def test_cli_compare_table_on_a_running_cluster_shows_current_and_re_placement() -> None:
    out = CliRunner().invoke(main, ["compare", str(ROOT / "instances" / "cluster-dump.yaml"), "--time-limit", "2",
                                    "--workers", "1"])
    assert out.exit_code == 0, out.output
    assert out.stdout.splitlines()[0].split() == ["GREEDY", "OPTIMAL", "CURRENT", "OPTIMAL", "RE-PLACEMENT"]
    assert "current vs optimal re-placement:" in out.stdout


def test_cli_compare_names_a_bad_policy_file_and_exits_2(tmp_path: Path) -> None:
    policy = tmp_path / "p.yaml"
    policy.write_text("apiVersion: podplan.io/v1alpha1\nkind: Policy\nmultipliers: {podAffinity: -1}\n")
    out = CliRunner().invoke(main, ["compare", str(ROOT / "instances" / "web-store.yaml"), "--policy", str(policy)])
    assert out.exit_code == 2
    assert "multipliers.podAffinity" in out.output


def test_report_is_one_self_contained_page_with_four_charts_and_the_table_numbers() -> None:
    cluster = load_paths([str(ROOT / "instances" / "cluster-dump.yaml")])
    doc = to_dict(compare(cluster, FAST))
    page = render_html(doc)
    assert len(re.findall(r'<img alt="[^"]+" src="data:image/png;base64,', page)) == 4
    assert not re.search(r'(src|href)="(https?:|//|[^"#d])', page), "the page must not load anything else"
    for label, cells in rows(doc):
        for col, cell in zip(doc["columns"], cells):
            assert f'data-col="{col["name"]}" data-row="{label.strip()}">{cell}<' in page.replace("&amp;", "&")


def test_generate_prints_the_generators_manifests_as_multi_document_yaml() -> None:
    out = CliRunner().invoke(main, ["generate", "--nodes", "10", "--pods", "80", "--seed", "4", "--profile", "web",
                                    "--utilization", "0.6"])
    assert out.exit_code == 0, out.output
    assert list(yaml.safe_load_all(out.stdout)) == generate(10, 80, 4, "web", 0.6)


@pytest.mark.parametrize("args,message", [
    (["--nodes", "1", "--pods", "500"], "cannot fit"),
    (["--nodes", "5", "--pods", "50", "--utilization", "1.5"], "--utilization"),
    (["--nodes", "5", "--pods", "3", "--profile", "adversarial"], "adversarial"),
], ids=["more pods than the nodes can hold", "utilization above 1", "adversarial with fewer pods than nodes"])
def test_generate_refuses_arguments_it_cannot_honour_in_one_line_with_exit_2(args: list[str], message: str) -> None:
    out = CliRunner().invoke(main, ["generate", *args])
    assert out.exit_code == 2
    assert message in out.output and len(out.output.strip().splitlines()) == 1
