"""`simulate --emit state` writes what the workloads' controllers would have created: a Deployment whose
ReplicaSet the input lacks gets that ReplicaSet (owned by the Deployment, the pods' owner), so that reading the
state back sees the same controllers and PodDisruptionBudgets as the input, and rebalance says the same."""
from __future__ import annotations

import json
from pathlib import Path

import yaml

from builders import container, node_manifest, run_cli, workload_manifest
from podplan.models.loader import load_paths
from podplan.optimizer.disruption import expected_scale


def deployment_without_replica_set(tmp_path: Path) -> Path:
    """Three nodes, a Deployment of 4 replicas whose ReplicaSet is not in the input (podplan makes its pods up)
    guarded by a PodDisruptionBudget (maxUnavailable 1: its budget reads the Deployment's scale through the
    pods' ReplicaSet), and a bare ReplicaSet of 2 already running."""
    docs = [node_manifest(f"n{i}", {"kubernetes.io/hostname": f"n{i}"}) for i in range(3)]
    docs.append(workload_manifest("Deployment", "web", {"app": "web"}, replicas=4,
                                  containers=[container(requests={"cpu": "500m"})]))
    docs.append({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "web"},
                 "spec": {"maxUnavailable": 1, "selector": {"matchLabels": {"app": "web"}}}})
    path = tmp_path / "input.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    return path


def test_the_state_holds_the_replica_set_the_deployment_controller_would_create(tmp_path: Path) -> None:
    code, out = run_cli("simulate", str(deployment_without_replica_set(tmp_path)), "--emit", "state", "-o", "json")
    assert code == 0, out
    items = json.loads(out)["items"]
    (rs,) = [i for i in items if i["kind"] == "ReplicaSet"]
    pods = [i for i in items if i["kind"] == "Pod"]
    assert len(pods) == 4 and all(p["spec"].get("nodeName") for p in pods)
    assert {p["metadata"]["ownerReferences"][0]["name"] for p in pods} == {rs["metadata"]["name"]}
    assert rs["metadata"]["ownerReferences"][0]["kind"] == "Deployment"
    assert rs["metadata"]["ownerReferences"][0]["name"] == "web"
    assert rs["spec"]["replicas"] == 4
    hash_ = rs["metadata"]["name"].removeprefix("web-")
    assert rs["spec"]["selector"]["matchLabels"] == {"app": "web", "pod-template-hash": hash_}
    assert all(p["metadata"]["labels"]["pod-template-hash"] == hash_ for p in pods)


def test_read_back_every_pod_finds_its_controller_and_no_replica_is_made_up_twice(tmp_path: Path) -> None:
    code, out = run_cli("simulate", str(deployment_without_replica_set(tmp_path)), "--emit", "state", "-o", "yaml")
    assert code == 0
    state = tmp_path / "state.yaml"
    state.write_text(out)
    cluster = load_paths([str(state)])
    assert len(cluster.pods) == 4 and not cluster.pending
    assert expected_scale(list(cluster.pods), cluster.workloads) == (4, "")


def test_rebalance_on_the_emitted_state_finds_every_controller_and_says_it_again_on_the_state_of_that_state(
        tmp_path: Path) -> None:
    """rebalance reads the Deployment's budget through the emitted ReplicaSet (no 'found no controllers for
    pod'), and the state emitted from the state gives the same notes: the round trip is a fixed point."""
    source = deployment_without_replica_set(tmp_path)
    code, out = run_cli("simulate", str(source), "--emit", "state", "-o", "yaml")
    assert code == 0
    state = tmp_path / "state.yaml"
    state.write_text(out)
    code, doc = run_cli("rebalance", str(state), "--time-limit", "5", "-o", "json")
    assert code in (0, 1), doc
    notes = json.loads(doc)["notes"]
    assert not any("found no controllers" in n for n in notes), notes
    code, again = run_cli("simulate", str(state), "--emit", "state", "-o", "yaml")
    assert code == 0
    state2 = tmp_path / "state2.yaml"
    state2.write_text(again)
    code, doc2 = run_cli("rebalance", str(state2), "--time-limit", "5", "-o", "json")
    assert json.loads(doc2)["notes"] == notes
