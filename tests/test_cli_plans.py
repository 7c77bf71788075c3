"""The plan commands end to end: `podplan simulate` (plan, state, bindings) and `podplan verify`, on the bundled
instances and on small clusters."""
from __future__ import annotations

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
from podplan.optimizer.render.plans import bindings
from podplan.optimizer.registry import DEFAULT_PROFILE
from podplan.optimizer.state import ClusterState

INSTANCES = Path(__file__).resolve().parents[1] / "instances"
FILES = sorted(INSTANCES.glob("*.yaml"))
HOST = "kubernetes.io/hostname"


def run(*args: str, stdin: str | None = None) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args), input=stdin)
    return result.exit_code, result.output


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
    docs = [d for d in yaml.safe_load_all(out) if d]
    cluster = load_paths([str(path)])
    pending = {p.key: p for p in cluster.pending}
    state = ClusterState.from_cluster(cluster)
    # the bindings come after preemption's victims are deleted
    preemptions = json.loads(run("simulate", str(path), "-o", "json")[1])["preemptions"]
    for victim in {v for p in preemptions for v in p["victims"]}:
        state.remove(next(p for p in cluster.pods if p.key == victim))
    for doc in docs:
        assert doc["kind"] == "Binding" and doc["apiVersion"] == "v1"
        pod = pending[f"{doc['metadata']['namespace']}/{doc['metadata']['name']}"]
        target = doc["target"]["name"]
        (verdict,) = run_filters(pod, state, DEFAULT_PROFILE.filters, [state.nodes[target]])
        assert verdict.feasible, (pod.key, target, verdict.reasons)
        state.add(pod, target)
    assert len(docs) == len(json.loads(run("simulate", str(path), "-o", "json")[1])["placements"])


def test_binding_order_puts_a_pod_after_the_pod_its_affinity_needs() -> None:
    # The queue would bind the high-priority pod first, before the db pod its required affinity needs.
    cluster = cluster_of([make_node("n1").label(HOST, "n1").build()],
                         [make_pod("needs-db").priority(10).pod_affinity(pod_term(HOST, selector(app="db"))).build(),
                          make_pod("db").label("app", "db").build()])
    docs, stuck = bindings(cluster, {"default/needs-db": "n1", "default/db": "n1"})
    assert [d["metadata"]["name"] for d in docs] == ["db", "needs-db"] and stuck == []


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
            "2 node(s) had untolerated taint {dedicated: groupName}, 2 node(s) had untolerated taint "
            "{nvidia.com/gpu: }.") in out
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
