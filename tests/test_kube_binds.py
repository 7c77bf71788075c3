"""simulate binds what kube-scheduler binds: no batch rule. kube-scheduler checks only the incoming pod's own
rules, so a later bind may break a rule of a pod placed before it (a DoNotSchedule spread, a first pod's
self-affinity). simulate lists those final-state violations (table and JSON), compare counts them in its greedy
column and says why the optimum places fewer pods when greedy's extra pods are the ones breaking rules."""
from __future__ import annotations

import json
from pathlib import Path

import yaml

from builders import container, node_manifest, pod_manifest, run_cli

ZONE = "topology.kubernetes.io/zone"


def holder_and_newcomer(tmp_path: Path, newcomer_cpu: str = "100m") -> str:
    """Zone a holds an existing app=x pod whose zone spread (maxSkew 1, DoNotSchedule) counts app=x pods; a
    pending app=x pod with no rule of its own prefers zone a (and, with newcomer_cpu=2, fits only there)."""
    docs = [
        node_manifest("a1", {ZONE: "a", "kubernetes.io/hostname": "a1"}),
        node_manifest("b1", {ZONE: "b", "kubernetes.io/hostname": "b1"}, cpu="1"),
        pod_manifest("holder", labels={"app": "x"}, node="a1", topologySpreadConstraints=[
            {"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule",
             "labelSelector": {"matchLabels": {"app": "x"}}}]),
        pod_manifest("newcomer", labels={"app": "x"}, containers=[container(requests={"cpu": newcomer_cpu})],
                     affinity={"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                         {"weight": 100, "preference": {"matchExpressions": [
                             {"key": ZONE, "operator": "In", "values": ["a"]}]}}]}}),
    ]
    path = tmp_path / "cluster.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    return str(path)


def test_simulate_binds_the_pod_kube_scheduler_binds_and_lists_the_spread_it_breaks_in_json(tmp_path: Path) -> None:
    code, out = run_cli("simulate", holder_and_newcomer(tmp_path), "-o", "json")
    assert code == 0, out
    doc = json.loads(out)
    assert [(p["pod"], p["node"]) for p in doc["placements"]] == [("default/newcomer", "a1")]
    assert doc["final_state_violations"] == [{
        "pod": "default/holder", "node": "a1", "plugin": "PodTopologySpread",
        "reason": "node(s) didn't match pod topology spread constraints"}]
    assert doc["preexisting_violations"] == []


def test_simulate_table_lists_the_final_state_violations(tmp_path: Path) -> None:
    code, out = run_cli("simulate", holder_and_newcomer(tmp_path))
    assert code == 0, out
    assert "final-state violations (pods whose rules a later bind broke" in out
    assert "  default/holder on a1: PodTopologySpread: node(s) didn't match pod topology spread constraints" in out


def test_solve_keeps_the_placed_pods_spread(tmp_path: Path) -> None:
    code, out = run_cli("solve", holder_and_newcomer(tmp_path), "-o", "json", "--time-limit", "10")
    assert code == 0, out
    doc = json.loads(out)
    assert [(p["pod"], p["node"]) for p in doc["placements"]] == [("default/newcomer", "b1")]
    assert doc["final_state_violations"] == []


def test_compare_counts_greedys_violations_and_says_why_the_optimum_places_fewer(tmp_path: Path) -> None:
    # the newcomer fits only on a1, where it breaks the holder's spread: kube-scheduler binds it, the optimum not
    code, out = run_cli("compare", holder_and_newcomer(tmp_path, newcomer_cpu="2"), "-o", "json", "--time-limit", "10")
    assert code == 0, out
    doc = json.loads(out)
    greedy, optimal = doc["columns"][0], doc["columns"][1]
    assert (greedy["placed"], greedy["violations"], optimal["placed"], optimal["violations"]) == (1, 1, 0, 0)
    assert greedy["violations_list"][0]["pod"] == "default/holder"
    assert doc["greedy_breaks_rules"].startswith(
        "greedy places 1 more pod(s), but its final state breaks the PodTopologySpread rules of 1 placed pod(s) "
        "(default/holder)")
    code, table = run_cli("compare", holder_and_newcomer(tmp_path, newcomer_cpu="2"), "--time-limit", "10")
    assert code == 0
    assert "note: greedy places 1 more pod(s)" in table


def test_the_html_reports_verdict_says_why_the_optimum_places_fewer(tmp_path: Path) -> None:
    code, _ = run_cli("compare", holder_and_newcomer(tmp_path, newcomer_cpu="2"), "--time-limit", "10",
                  "--report", str(tmp_path / "report"))
    assert code == 0
    html = next((tmp_path / "report").glob("*.html")).read_text()
    assert "Why fewer: greedy places 1 more pod(s), but its final state breaks the PodTopologySpread rules" in html
