"""`podplan explain`: every node's verdict with all failing plugins, scores normalized over the feasible nodes,
and kube-scheduler's summary message, in exactly the documented JSON shape."""
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
    assert list(out) == ["kubeVersion", "judgedAgainst", "pods", "preemptions"] and "final state" in out["judgedAgainst"]
    (pod,) = out["pods"]
    assert list(pod) == ["pod", "message", "plannedNode", "messageAgainstExistingPodsOnly", "nodes"]
    assert pod["plannedNode"] == "node-b" and pod["messageAgainstExistingPodsOnly"] is None
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
    assert pod["message"] == "0/3 nodes are available: 1 node(s) had untolerated taint(s), 2 Insufficient cpu."
    assert all(n["scores"] == {} for n in pod["nodes"].values())


def test_every_failing_plugin_of_a_node_is_listed_in_filter_order() -> None:
    nodes = [make_node("bad").taint("k", "v").alloc(cpu="1", memory="1Gi", pods=10).build()]
    cluster = cluster_of(nodes, [make_pod("p").req(cpu="2").node_selector(disk="ssd").host_port(80).build(),
                                 make_pod("x").host_port(80).on("bad").build()])
    (pod,) = explain(cluster)
    assert [(r.plugin, r.reason) for r in pod.nodes["bad"].reasons] == [
        ("TaintToleration", "node(s) had untolerated taint(s)"),
        ("NodeAffinity", "node(s) didn't match Pod's node affinity/selector"),
        ("NodePorts", "node(s) didn't have free ports for the requested pod ports"),
        ("NodeResourcesFit", "Insufficient cpu")]
    # The summary counts the node once, under the plugin kube-scheduler stops at.
    assert pod.message == "0/1 nodes are available: 1 node(s) had untolerated taint(s)."


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


def test_without_a_plan_each_pending_pod_is_judged_against_the_existing_pods_only() -> None:
    # Two pending pods that repel each other: each alone fits everywhere.
    anti = pod_term(HOST, selector(app="x"))
    pods = [make_pod(f"p{i}").label("app", "x").pod_anti_affinity(anti).build() for i in range(2)]
    out = explain(cluster_of([make_node("n1").label(HOST, "n1").build()], pods))
    assert [(p.pod, p.message) for p in out] == [("default/p0", "1/1 nodes are available"),
                                                  ("default/p1", "1/1 nodes are available")]


def test_with_the_batch_plan_each_pod_sees_the_other_pending_pods_where_the_plan_puts_them() -> None:
    anti = pod_term(HOST, selector(app="x"))
    pods = [make_pod(f"p{i}").label("app", "x").pod_anti_affinity(anti).build() for i in range(2)]
    out = explain(cluster_of([make_node("n1").label(HOST, "n1").build()], pods), placements={"default/p0": "n1"})
    assert [(p.pod, p.message.split(":")[0], p.planned, p.alone) for p in out] == [
        ("default/p0", "1/1 nodes are available", "n1", ""),
        ("default/p1", "0/1 nodes are available", "", "1/1 nodes are available")]


WEB_STORE = str(Path(__file__).resolve().parent.parent / "instances" / "web-store.yaml")


def test_web_store_web_pods_fit_where_simulate_puts_them_and_the_existing_only_verdict_is_a_note() -> None:
    result = CliRunner().invoke(main, ["explain", WEB_STORE])
    assert result.exit_code == 0, result.output
    assert result.output.startswith("judged against the batch's final state")
    blocks = result.output.split("\n\n")[1:]
    web = [b for b in blocks if b.startswith("default/web-server-")]
    assert len(web) == 3
    for block in web:
        head, placed, note = block.splitlines()[:3]
        assert head.endswith("1/3 nodes are available") and placed.startswith("simulate places it on worker-")
        assert note.startswith("note: against the existing pods only") and "0/3 nodes are available" in note


def test_summary_is_one_line_per_pod_with_failing_nodes_counted_by_plugin() -> None:
    result = CliRunner().invoke(main, ["explain", WEB_STORE, "--summary"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[2].split()[:5] == ["POD", "SIMULATE", "AVAILABLE", "EXISTING", "PODS"]
    web = [line.split() for line in lines if line.startswith("default/web-server-")]
    assert [row[2:] for row in web] == [["1/3", "0/3", "InterPodAffinity", "2"]] * 3
    assert "note: 3 pod(s) fit only thanks to other pending pods" in result.output


def test_more_than_twenty_pending_pods_get_the_summary_unless_nodes_is_asked(tmp_path: Path) -> None:
    path = tmp_path / "in.yaml"
    path.write_text(yaml.safe_dump_all([node_doc("n1", cpu="64")] + [pod_doc(f"p{i}") for i in range(21)]))
    summary = CliRunner().invoke(main, ["explain", str(path)])
    assert summary.exit_code == 0 and "NODE " not in summary.output
    assert sum(line.startswith("default/p") for line in summary.output.splitlines()) == 21
    full = CliRunner().invoke(main, ["explain", str(path), "--nodes"])
    assert full.output.count("NODE ") == 21


def test_pod_asks_about_some_pods_while_the_others_still_count(tmp_path: Path) -> None:
    anti = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"topologyKey": HOST, "labelSelector": {"matchLabels": {"app": "x"}}}]}}
    docs = [node_doc("n1")] + [{**pod_doc(f"p{i}", spec={"affinity": anti}),
                                "metadata": {"name": f"p{i}", "namespace": "default", "labels": {"app": "x"}}}
                               for i in range(2)]
    path = tmp_path / "in.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    out = json.loads(CliRunner().invoke(main, ["explain", str(path), "--pod", "default/p1", "-o", "json"]).output)
    assert [(p["pod"], p["message"].split(":")[0]) for p in out["pods"]] == [("default/p1", "0/1 nodes are available")]
    by_name = json.loads(CliRunner().invoke(main, ["explain", str(path), "--pod", "p*", "-o", "json"]).output)
    assert [p["pod"] for p in by_name["pods"]] == ["default/p0", "default/p1"]


def test_pod_that_matches_no_pending_pod_is_one_line_and_exit_2() -> None:
    result = CliRunner().invoke(main, ["explain", WEB_STORE, "--pod", "default/nope"])
    assert result.exit_code == 2
    assert result.output.splitlines() == [
        "error: --pod default/nope: no pending pod of the batch matches (explain lists pending pods only)"]


def test_table_output_names_each_node_verdict_and_scores(tmp_path: Path) -> None:
    path = tmp_path / "in.yaml"
    path.write_text(yaml.safe_dump_all([node_doc("node-a", cpu="1"), node_doc("node-b"), pod_doc("p", cpu="2")]))
    result = CliRunner().invoke(main, ["explain", str(path)])
    assert result.exit_code == 0
    lines = result.output.splitlines()[2:]
    assert lines[0] == "default/p: 1/2 nodes are available"
    assert lines[1] == "simulate places it on node-b"
    assert lines[2].split() == ["NODE", "VERDICT", "SCORES"]
    assert "NodeResourcesFit: Insufficient cpu" in lines[3] and lines[3].startswith("node-a")
    assert lines[4].startswith("node-b") and "feasible" in lines[4] and "NodeResourcesFit=" in lines[4]


def test_why_pending_names_the_deployments_template_and_a_reason_on_every_row(tmp_path: Path) -> None:
    # 4 replicas, one per host (anti-affinity), on ssd only: 2 ssd nodes place 2, the other 2 stay pending.
    anti = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"topologyKey": HOST, "labelSelector": {"matchLabels": {"app": "web"}}}]}}
    template = {"metadata": {"labels": {"app": "web"}},
                "spec": {"nodeSelector": {"disk": "ssd"}, "affinity": anti,
                         "containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": "100m"}}}]}}
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "default"},
                  "spec": {"replicas": 4, "selector": {"matchLabels": {"app": "web"}}, "template": template}}
    path = tmp_path / "in.yaml"
    path.write_text(yaml.safe_dump_all([node_doc("n1", labels={"disk": "ssd"}), node_doc("n2", labels={"disk": "ssd"}),
                                        node_doc("n3", labels={"disk": "hdd"}), deployment]))
    result = CliRunner().invoke(main, ["explain", str(path), "--why-pending", "-o", "json"])
    assert result.exit_code == 0, result.output
    pending = json.loads(result.output)["pending"]
    assert len(pending) == 2
    for p in pending:
        assert sorted((b["object"], b["field"], b["reason"]) for b in p["blockers"]) == [
            ("Deployment/default/web", "spec.template.spec.affinity.podAntiAffinity."
             "requiredDuringSchedulingIgnoredDuringExecution[0]", "node(s) didn't match pod anti-affinity rules"),
            ("Deployment/default/web", "spec.template.spec.nodeSelector",
             "node(s) didn't match Pod's node affinity/selector")]


def test_a_pending_pod_without_a_blocker_still_gets_a_row_with_the_plans_reason() -> None:
    from podplan.optimizer.render.inputs import why_pending_table

    doc = {"status": "FEASIBLE", "pending": [{"pod": "default/p", "reason": "kept out: its gang cannot start",
                                              "blockers": []}]}
    assert [c.strip() for c in why_pending_table(doc).splitlines()[2].split("   ") if c.strip()] == [
        "default/p", "-", "Pod/default/p", "-", "kept out: its gang cannot start", "-"]
