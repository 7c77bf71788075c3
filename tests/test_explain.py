"""`podplan explain`: every node's verdict with all failing plugins, scores normalized over the feasible nodes,
and kube-scheduler's summary message, in exactly the JSON shape of issue 3."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from click.testing import CliRunner

from builders import cluster_of, make_node, make_pod, pod_term, req, selector, term
from podplan.cli import main
from podplan.optimizer.explain import explain

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"
SCORE_PLUGINS = {"NodeAffinity", "TaintToleration", "PodTopologySpread", "InterPodAffinity", "NodeResourcesFit",
                 "NodeResourcesBalancedAllocation"}


def node_doc(name: str, cpu: str = "4", labels: dict[str, str] | None = None,
             taints: list[dict[str, str]] | None = None) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {HOST: name, **(labels or {})}},
            "spec": {"taints": taints or []},
            "status": {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "110"}}}


def pod_doc(name: str, cpu: str = "500m", spec: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
            "spec": {"containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": cpu}}}],
                     **(spec or {})}}


def run_json(tmp_path: Path, docs: list[dict[str, Any]]) -> dict[str, Any]:
    path = tmp_path / "in.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    result = CliRunner().invoke(main, ["explain", str(path), "-o", "json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def test_json_output_has_exactly_the_documented_shape(tmp_path: Path) -> None:
    docs = [node_doc("node-a", labels={"disk": "hdd"}), node_doc("node-b", labels={"disk": "ssd"}),
            pod_doc("incoming", spec={"nodeSelector": {"disk": "ssd"}})]
    out = run_json(tmp_path, docs)
    assert list(out) == ["pods"]
    (pod,) = out["pods"]
    assert list(pod) == ["pod", "message", "nodes"]
    assert pod["pod"] == "default/incoming" and pod["message"] == "1/2 nodes are available"
    assert pod["nodes"]["node-a"] == {
        "feasible": False, "scores": {},
        "reasons": [{"plugin": "NodeAffinity", "reason": "node(s) didn't match Pod's node affinity/selector"}]}
    b = pod["nodes"]["node-b"]
    assert list(b) == ["feasible", "reasons", "scores"] and b["feasible"] is True and b["reasons"] == []
    assert set(b["scores"]) == SCORE_PLUGINS and all(isinstance(v, int) for v in b["scores"].values())


def test_json_message_of_a_pod_that_fits_nowhere_is_kube_schedulers(tmp_path: Path) -> None:
    docs = [node_doc("small-1", cpu="1"), node_doc("small-2", cpu="1"),
            node_doc("tainted", taints=[{"key": "k", "value": "v", "effect": "NoSchedule"}]),
            pod_doc("incoming", cpu="2")]
    (pod,) = run_json(tmp_path, docs)["pods"]
    assert pod["message"] == "0/3 nodes are available: 1 node(s) had untolerated taint {k: v}, 2 Insufficient cpu."
    assert all(n["scores"] == {} for n in pod["nodes"].values())


def test_every_failing_plugin_of_a_node_is_listed_in_filter_order() -> None:
    nodes = [make_node("bad").taint("k", "v").alloc(cpu="1", memory="1Gi", pods=10).build()]
    cluster = cluster_of(nodes, [make_pod("p").req(cpu="2").node_selector(disk="ssd").host_port(80).build(),
                                 make_pod("x").host_port(80).on("bad").build()])
    (pod,) = explain(cluster)
    assert [(r.plugin, r.reason) for r in pod.nodes["bad"].reasons] == [
        ("TaintToleration", "node(s) had untolerated taint {k: v}"),
        ("NodeAffinity", "node(s) didn't match Pod's node affinity/selector"),
        ("NodePorts", "node(s) didn't have free ports for the requested pod ports"),
        ("NodeResourcesFit", "Insufficient cpu")]
    # The summary counts the node once, under the plugin kube-scheduler stops at.
    assert pod.message == "0/1 nodes are available: 1 node(s) had untolerated taint {k: v}."


def test_scores_are_normalized_over_the_feasible_nodes_only() -> None:
    # Preferred weights: full 20 (but full is infeasible), ssd 10, hdd 5. Over the feasible nodes the best
    # is ssd: 100; hdd gets half. Over all nodes ssd would get only 50.
    nodes = [make_node(n).label("tier", n).alloc(cpu=c, memory="8Gi", pods=110).build()
             for n, c in (("full", "1"), ("ssd", "4"), ("hdd", "4"))]
    pod = (make_pod("p").req(cpu="2")
           .preferred_node_affinity(20, term(req("tier", "In", "full")))
           .preferred_node_affinity(10, term(req("tier", "In", "ssd")))
           .preferred_node_affinity(5, term(req("tier", "In", "hdd"))).build())
    (out,) = explain(cluster_of(nodes, [pod]))
    assert {n: e.scores.get("NodeAffinity") for n, e in out.nodes.items()} == {"full": None, "ssd": 100, "hdd": 50}


def test_inter_pod_affinity_scores_are_min_max_normalized_over_feasible_nodes() -> None:
    nodes = [make_node(n).label(HOST, n).alloc(cpu=c, memory="8Gi", pods=110).build()
             for n, c in (("n1", "4"), ("n2", "4"), ("n3", "1"))]
    # Raw: n1 50 (one web pod), n2 0, n3 100 (two) but n3 is too small for p: over the feasible n1 and n2,
    # n1 is the best (100); over all three it would be 50.
    pods = [make_pod("web-1").label("app", "web").on("n1").build(),
            make_pod("web-3").label("app", "web").on("n3").build(),
            make_pod("web-4").label("app", "web").on("n3").build(),
            make_pod("p").req(cpu="2").preferred_pod_affinity(50, pod_term(HOST, selector(app="web"))).build()]
    (out,) = explain(cluster_of(nodes, pods))
    assert {n: e.scores.get("InterPodAffinity") for n, e in out.nodes.items()} == {"n1": 100, "n2": 0, "n3": None}


def test_each_pending_pod_is_judged_against_the_existing_pods_only() -> None:
    # Two pending pods that repel each other: each alone fits everywhere.
    anti = pod_term(HOST, selector(app="x"))
    pods = [make_pod(f"p{i}").label("app", "x").pod_anti_affinity(anti).build() for i in range(2)]
    out = explain(cluster_of([make_node("n1").label(HOST, "n1").build()], pods))
    assert [(p.pod, p.message) for p in out] == [("default/p0", "1/1 nodes are available"),
                                                  ("default/p1", "1/1 nodes are available")]


def test_table_output_names_each_node_verdict_and_scores(tmp_path: Path) -> None:
    path = tmp_path / "in.yaml"
    path.write_text(yaml.safe_dump_all([node_doc("node-a", cpu="1"), node_doc("node-b"), pod_doc("p", cpu="2")]))
    result = CliRunner().invoke(main, ["explain", str(path)])
    assert result.exit_code == 0
    lines = result.output.splitlines()
    assert lines[0] == "default/p: 1/2 nodes are available"
    assert lines[1].split() == ["NODE", "VERDICT", "SCORES"]
    assert "NodeResourcesFit: Insufficient cpu" in lines[2] and lines[2].startswith("node-a")
    assert lines[3].startswith("node-b") and "feasible" in lines[3] and "NodeResourcesFit=" in lines[3]
