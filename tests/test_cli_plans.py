"""The plan commands end to end: `podplan simulate` (plan, state, bindings) and `podplan verify`, on the bundled
instances and on small clusters."""
from __future__ import annotations

import dataclasses

import json
from collections import Counter
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from builders import cluster_of, make_node, make_pod, pod_term, selector
from podplan.cli import main
from podplan.models.loader import load_paths
from podplan.optimizer.framework import run_filters
from podplan.optimizer.render.plans import binding_order, bindings
from podplan.optimizer.registry import DEFAULT_PROFILE
from podplan.optimizer.state import ClusterState

INSTANCES = Path(__file__).resolve().parents[1] / "instances"
FILES = sorted(INSTANCES.glob("*.yaml"))
HOST = "kubernetes.io/hostname"


def runner() -> CliRunner:
    try:
        return CliRunner(mix_stderr=False)  # type: ignore[call-arg]  # click < 8.2 mixes streams by default
    except TypeError:
        return CliRunner()


def run(*args: str, stdin: str | None = None) -> tuple[int, str]:
    """Exit code and stdout (notes and warnings go to stderr)."""
    result = runner().invoke(main, list(args), input=stdin)
    return result.exit_code, result.stdout


@pytest.mark.parametrize("path", FILES, ids=[f"simulate {f.stem} --emit state, piped into verify, exits 0" for f in FILES])
def test_simulated_state_round_trips_through_verify(path: Path) -> None:
    code, state = run("simulate", str(path), "--emit", "state", "-o", "yaml")
    assert code == 0, state
    code, out = run("verify", "-", stdin=state)
    assert code == 0, out
    assert out.splitlines()[-2].startswith("OK: ")


@pytest.mark.parametrize("path", FILES, ids=[f"the bindings of {f.stem} are accepted one by one in their order" for f in FILES])
def test_emitted_bindings_are_accepted_by_the_filters_in_order(path: Path) -> None:
    code, out = run("simulate", str(path), "--emit", "bindings", "-o", "yaml")
    assert code == 0, out
    docs = [d for d in yaml.safe_load_all(out) if d and d.get("kind") == "Binding"]
    simulated = json.loads(run("simulate", str(path), "-o", "json")[1])
    victims = {v for p in simulated["preemptions"] for v in p["victims"]}
    loaded = load_paths([str(path)])
    cluster = dataclasses.replace(loaded, pods=tuple(p for p in loaded.pods if p.key not in victims))
    placements = {p["pod"]: p["node"] for p in simulated["placements"]}
    # The order is worked out with the replicas the controllers create where the plan puts them.
    ordered, stuck = binding_order(cluster, placements)
    assert stuck == []
    state = ClusterState.from_cluster(cluster)
    for pod in ordered:  # (preemption's victims are deleted before any binding)
        (verdict,) = run_filters(pod, state, DEFAULT_PROFILE.filters, [state.nodes[placements[pod.key]]])
        assert verdict.feasible, (pod.key, placements[pod.key], verdict.reasons)
        state.add(pod, placements[pod.key])
    # Bindings: exactly the placed pods of the input, in that order; never a replica podplan named itself.
    assert [(f"{d['metadata']['namespace']}/{d['metadata']['name']}", d["target"]["name"]) for d in docs] == [
        (p.key, placements[p.key]) for p in ordered if p.where.kind == "Pod"]


def test_bindings_name_only_pods_of_the_input_and_list_the_replicas_to_create_on_stderr() -> None:
    result = runner().invoke(main, ["simulate", str(INSTANCES / "cluster-dump.yaml"), "--emit", "bindings"])
    assert result.exit_code == 0
    names = [d["metadata"]["name"] for d in yaml.safe_load_all(result.stdout) if d]
    assert names == ["debug-shell"]
    lines = result.stderr.splitlines()
    assert lines[0] == ("note: no Binding for 2 replica(s) their controllers will create (podplan named them itself);"
                        " where the plan puts them:")
    assert lines[1].startswith("note:   Deployment/shop/frontend: 2 pod(s) to create, placed on k8s-worker-")


def test_emitted_state_has_no_empty_owner_uid_and_reads_back() -> None:
    code, out = run("simulate", str(INSTANCES / "web-store.yaml"), "--emit", "state", "-o", "yaml")
    assert code == 0
    refs = [r for d in yaml.safe_load_all(out) if d for r in d.get("metadata", {}).get("ownerReferences", [])]
    assert refs and all(r.get("uid", "x") != "" for r in refs)
    assert run("verify", "-", stdin=out)[0] == 0


def test_verify_with_the_policy_solve_used_reports_solves_preference(tmp_path: Path) -> None:
    policy = tmp_path / "policy.yaml"
    policy.write_text("apiVersion: podplan.io/v1alpha1\nkind: Policy\nmultipliers: {scheduleAnywaySkew: 3}\n")
    path = str(INSTANCES / "zone-spread.yaml")
    code, plan = run("solve", path, "--policy", str(policy), "-o", "json")
    assert code == 0
    preference = json.loads(plan)["objective"]["preference"]
    code, state = run("solve", path, "--policy", str(policy), "--emit", "state", "-o", "yaml")
    with_policy = json.loads(run("verify", "-", "--policy", str(policy), "-o", "json", stdin=state)[1])
    without = json.loads(run("verify", "-", "-o", "json", stdin=state)[1])
    assert with_policy["preference"] == preference != 0 and without["preference"] != preference


def test_binding_order_puts_a_pod_after_the_pod_its_affinity_needs() -> None:
    # The queue would bind the high-priority pod first, before the db pod its required affinity needs.
    cluster = cluster_of([make_node("n1").label(HOST, "n1").build()],
                         [make_pod("needs-db").priority(10).pod_affinity(pod_term(HOST, selector(app="db"))).build(),
                          make_pod("db").label("app", "db").build()])
    docs, stuck, created = bindings(cluster, {"default/needs-db": "n1", "default/db": "n1"})
    assert [d["metadata"]["name"] for d in docs] == ["db", "needs-db"] and stuck == [] and created == []


def test_simulate_web_store_puts_one_web_and_one_cache_pod_on_each_node() -> None:
    code, out = run("simulate", str(INSTANCES / "web-store.yaml"), "-o", "json")
    assert code == 0
    doc = json.loads(out)
    per_node = Counter((p["node"], p["workload"].split("/")[-1]) for p in doc["placements"])
    assert per_node == Counter({(f"worker-{i}", app): 1 for i in (1, 2, 3) for app in ("redis-cache", "web-server")})
    assert doc["pending"] == [] and doc["status"] == "GREEDY"


def test_simulate_pdb_drain_leaves_nothing_pending() -> None:
    code, out = run("simulate", str(INSTANCES / "pdb-drain.yaml"), "-o", "json")
    assert code == 0
    doc = json.loads(out)
    assert doc["pending"] == [] and doc["preexisting_violations"] == []


def test_simulate_table_names_pending_pods_with_kube_schedulers_message() -> None:
    code, out = run("simulate", str(INSTANCES / "taints-dedicated-gpu.yaml"))
    assert code == 0
    assert ("default/gpu-no-toleration         0/6 nodes are available: 2 Insufficient nvidia.com/gpu, "
            "4 node(s) had untolerated taint(s).") in out
    assert "placed: 9/11 (priority 0: 9)" in out


def test_verify_exits_1_and_prints_each_violation(tmp_path: Path) -> None:
    def pod(name: str) -> dict:
        return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": {"app": "db"}},
                "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "i"}],
                         "affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                             {"topologyKey": HOST, "labelSelector": {"matchLabels": {"app": "db"}}}]}}}}

    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1", "labels": {HOST: "n1"}},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}
    path = tmp_path / "state.yaml"
    path.write_text(yaml.safe_dump_all([node, pod("db-0"), pod("db-1")]))
    code, out = run("verify", str(path))
    assert code == 1
    rows = [line.split(None, 3) for line in out.splitlines()[1:3]]
    assert sorted(rows) == [["default/db-0", "n1", "InterPodAffinity", "node(s) didn't match pod anti-affinity rules"],
                            ["default/db-1", "n1", "InterPodAffinity", "node(s) didn't match pod anti-affinity rules"]]
    assert "INVALID: 2 pods judged, 2 violation(s)" in out
    code, out = run("verify", str(path), "-o", "json")
    assert code == 1 and json.loads(out)["ok"] is False and len(json.loads(out)["violations"]) == 2


def test_a_node_with_many_new_pods_names_four_and_counts_the_rest(tmp_path: Path) -> None:
    docs = [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
             "status": {"allocatable": {"cpu": "8", "memory": "8Gi", "pods": "110"}}}]
    docs += [{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"p{i}", "namespace": "default"},
              "spec": {"containers": [{"name": "c", "image": "i"}]}} for i in range(7)]
    path = tmp_path / "in.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    code, out = run("simulate", str(path))
    assert code == 0
    assert out.splitlines()[1].split(None, 2) == [
        "n1", "7", "default/p0, default/p1, default/p2, default/p3 and 3 more (-o json lists all)"]
    assert len(json.loads(run("simulate", str(path), "-o", "json")[1])["placements"]) == 7
