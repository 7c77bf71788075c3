"""`podplan validate`: the summary of every bundled instance as a table or JSON, and warnings on stderr that
never stop the run (exit 0)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from builders import node_manifest, pod_manifest, workload_manifest
from podplan.cli import main
from podplan.models.loader import load_paths

ROOT = Path(__file__).resolve().parents[1]
# Every top-level file of instances/ is a cluster; its folders hold what other options read (scheduler
# configurations, node types, pod templates, scenarios, descheduler policies and their clusters).
INSTANCES = sorted(p for p in (ROOT / "instances").iterdir() if p.is_file() and p.suffix in (".yaml", ".yml", ".json"))


def runner() -> CliRunner:
    try:
        return CliRunner(mix_stderr=False)  # type: ignore[call-arg]  # click < 8.2 mixes streams by default
    except TypeError:
        return CliRunner()


def test_there_are_bundled_instances() -> None:
    assert len(INSTANCES) >= 7


@pytest.mark.parametrize("instance", INSTANCES, ids=[p.name for p in INSTANCES])
def test_validate_prints_the_summary_table_of_every_bundled_instance(instance: Path) -> None:
    result = runner().invoke(main, ["validate", str(instance)])
    assert result.exit_code == 0, result.stderr
    cluster = load_paths([str(instance)])
    out = result.stdout
    assert out.startswith("ZONE")
    assert f"pods: {len(cluster.pods)} existing, {len(cluster.pending)} pending" in out
    for w in cluster.workloads:
        assert w.key in out


@pytest.mark.parametrize("instance", INSTANCES, ids=[p.name for p in INSTANCES])
def test_validate_json_of_every_bundled_instance(instance: Path) -> None:
    result = runner().invoke(main, ["validate", "-o", "json", str(instance)])
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    assert {"nodes", "nodesByZone", "existingPods", "pendingPods", "workloads", "rules"} <= doc.keys()
    cluster = load_paths([str(instance)])
    assert doc["nodes"] == len(cluster.nodes) == sum(doc["nodesByZone"].values())
    assert (doc["existingPods"], doc["pendingPods"]) == (len(cluster.pods), len(cluster.pending))
    assert [w["workload"] for w in doc["workloads"]] == [w.key for w in cluster.workloads]
    assert isinstance(doc["rules"], dict)


def write(tmp_path: Path, *docs: dict[str, Any]) -> str:
    f = tmp_path / "c.yaml"
    f.write_text(yaml.safe_dump_all(list(docs)))
    return str(f)


ZONE = "topology.kubernetes.io/zone"


def test_the_summary_counts_what_the_input_holds(tmp_path: Path) -> None:
    f = write(tmp_path,
              node_manifest("a1", {ZONE: "a", "kubernetes.io/hostname": "a1"}),
              node_manifest("b1", {ZONE: "b", "kubernetes.io/hostname": "b1"}),
              node_manifest("b2", {ZONE: "b", "kubernetes.io/hostname": "b2"}, taints=[{"key": "gpu", "effect": "NoSchedule"}]),
              pod_manifest("running", node="a1"),
              workload_manifest("Deployment", "web", {"app": "web"}, 3, template_spec={"topologySpreadConstraints": [
                  {"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule",
                   "labelSelector": {"matchLabels": {"app": "web"}}}]}),
              {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cfg"}})
    result = runner().invoke(main, ["validate", "-o", "json", f])
    assert result.exit_code == 0 and result.stderr == ""
    doc = json.loads(result.stdout)
    assert doc["nodesByZone"] == {"a": 1, "b": 2}
    assert (doc["existingPods"], doc["pendingPods"]) == (1, 3)
    assert doc["workloads"] == [{"workload": "Deployment/default/web", "replicas": 3, "pending": 3}]
    assert doc["rules"] == {"spreadDoNotSchedule": 3, "taintedNodes": 1}
    assert doc["skipped"] == {"ConfigMap": 1}
    table = runner().invoke(main, ["validate", f]).stdout
    assert "skipped kinds: ConfigMap (1)" in table


def test_validate_reads_stdin() -> None:
    text = yaml.safe_dump_all([node_manifest("n1"), pod_manifest("p")])
    result = runner().invoke(main, ["validate", "-o", "json", "-"], input=text)
    assert result.exit_code == 0
    assert json.loads(result.stdout)["pendingPods"] == 1


def test_the_verbose_flag_is_global() -> None:
    result = runner().invoke(main, ["--verbose", "validate", "-o", "json", str(INSTANCES[0])])
    assert result.exit_code == 0


# ---------------------------------------------------------------------------------------------- warnings


def warnings_of(tmp_path: Path, *docs: dict[str, Any]) -> list[str]:
    result = runner().invoke(main, ["validate", write(tmp_path, *docs)])
    assert result.exit_code == 0, result.stderr
    assert result.stdout.startswith("ZONE")  # the run went on
    lines = result.stderr.splitlines()
    assert all(line.startswith("warning: ") for line in lines)
    return lines


def spread_pod(name: str) -> dict[str, Any]:
    return pod_manifest(name, labels={"app": "web"}, topologySpreadConstraints=[
        {"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule", "labelSelector": {"matchLabels": {"app": "web"}}}])


def test_nodes_lacking_a_topology_key_warn_once_per_key(tmp_path: Path) -> None:
    anti = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": "kubernetes.io/hostname"}]}}
    lines = warnings_of(tmp_path,
                        node_manifest("a1", {ZONE: "a", "kubernetes.io/hostname": "a1"}),
                        node_manifest("x1", {"kubernetes.io/hostname": "x1"}),
                        node_manifest("x2", {"kubernetes.io/hostname": "x2"}),
                        spread_pod("p1"), spread_pod("p2"),
                        pod_manifest("p3", affinity=anti))
    assert lines == [
        f"warning: 2 of 3 nodes (x1, x2) lack the label '{ZONE}', a topologyKey of 2 pods: those nodes are in no {ZONE} "
        "domain, so they fail required terms and DoNotSchedule spread constraints and score nothing for the others"]


def test_no_topology_warning_when_every_node_has_the_key(tmp_path: Path) -> None:
    assert warnings_of(tmp_path, node_manifest("a1", {ZONE: "a"}), spread_pod("p1")) == []


def test_a_pod_bound_to_a_node_absent_from_the_input_warns(tmp_path: Path) -> None:
    lines = warnings_of(tmp_path, node_manifest("n1"), pod_manifest("a", node="gone"), pod_manifest("b", node="gone"))
    assert len(lines) == 1
    assert "[1] Pod/default/a: bound to node 'gone', which is not in the input (and 1 more); " \
           "it counts nowhere, as in kube-scheduler" in lines[0]


def test_an_unknown_priority_class_warns(tmp_path: Path) -> None:
    lines = warnings_of(tmp_path, node_manifest("n1"), pod_manifest("a", priorityClassName="gold"))
    assert len(lines) == 1
    assert "[1] Pod/default/a: spec.priorityClassName 'gold' is not in the input; priority 0 assumed" in lines[0]


def test_namespaces_without_namespace_objects_warn_when_a_namespace_selector_is_used(tmp_path: Path) -> None:
    anti = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {}, "namespaceSelector": {"matchLabels": {"tenant": "a"}}, "topologyKey": "kubernetes.io/hostname"}]}}
    lines = warnings_of(tmp_path, node_manifest("n1", {"kubernetes.io/hostname": "n1"}),
                        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "known"}},
                        pod_manifest("a", namespace="known", affinity=anti), pod_manifest("b", namespace="unknown"))
    assert lines == ["warning: a namespaceSelector is used, but namespace unknown has pods and no Namespace object "
                     "in the input: namespaceSelectors see no labels on it"]


def test_the_installed_command_runs_in_a_real_process(tmp_path: Path) -> None:
    f = write(tmp_path, node_manifest("n1"), pod_manifest("a", node="gone"))
    ok = subprocess.run([sys.executable, "-m", "podplan", "validate", f], capture_output=True, text=True, cwd=ROOT, check=False)
    assert ok.returncode == 0 and ok.stderr.startswith("warning: ")
    bad = tmp_path / "bad.yaml"
    bad.write_text("kind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, resources: {requests: {cpu: 1.2.3}}}]}\n")
    failed = subprocess.run([sys.executable, "-m", "podplan", "validate", str(bad)], capture_output=True, text=True, cwd=ROOT, check=False)
    assert failed.returncode == 2 and failed.stdout == ""
    assert failed.stderr == f"error: {bad}[0] Pod/default/p spec.containers[0].resources.requests.cpu: " \
                            '"1.2.3" is not a quantity (expected e.g. 500m, 1.5, 2Gi, 1e3)\n'


def test_validate_runs_without_loading_the_solver_stack() -> None:
    # validate never solves: OR-Tools, SciPy and pandas took seconds to import on a busy machine
    import subprocess
    import sys
    code = ("import sys; from click.testing import CliRunner; from podplan.cli import main; "
            "r = CliRunner().invoke(main, ['validate', 'instances/web-store.yaml']); assert r.exit_code == 0, r.output; "
            "print(sorted(m for m in ('ortools', 'scipy', 'pandas') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=__import__("pathlib").Path(__file__).resolve().parents[1])
    assert out.stdout.strip() == "[]"
