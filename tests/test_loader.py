"""Loading manifests: files, directories, `-` for stdin, multi-document YAML, `kind: List` dumps, JSON,
unknown kinds skipped with a count, empty documents ignored."""
from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from builders import node_manifest, pod_manifest, workload_manifest
from podplan.models.loader import load_paths


def write(path: Path, *docs: dict[str, Any] | None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump_all(list(docs), sort_keys=False))
    return path


def test_one_file_with_several_documents(tmp_path: Path) -> None:
    f = write(tmp_path / "c.yaml", node_manifest("n1"), pod_manifest("a", node="n1"), pod_manifest("b"))
    c = load_paths([str(f)])
    assert [n.name for n in c.nodes] == ["n1"]
    assert [p.name for p in c.pods] == ["a"] and [p.name for p in c.pending] == ["b"]
    assert (c.pending[0].where.file, c.pending[0].where.doc) == (str(f), 2)


def test_empty_documents_and_comment_only_files_are_ignored(tmp_path: Path) -> None:
    f = tmp_path / "c.yaml"
    f.write_text("---\n# nothing here\n---\n" + yaml.safe_dump(pod_manifest("a")) + "---\n---\n")
    (tmp_path / "empty.yaml").write_text("# just a comment\n")
    c = load_paths([str(f), str(tmp_path / "empty.yaml")])
    assert [p.name for p in c.pending] == ["a"]
    assert c.pending[0].where.doc == 1  # empty documents still count in the index the user sees


def test_a_directory_is_read_sorted_with_only_manifest_suffixes(tmp_path: Path) -> None:
    write(tmp_path / "b.yml", pod_manifest("from-b"))
    write(tmp_path / "a.yaml", pod_manifest("from-a"))
    (tmp_path / "c.json").write_text(json.dumps(pod_manifest("from-c")))
    write(tmp_path / "sub" / "d.yaml", pod_manifest("from-sub"))
    (tmp_path / "notes.txt").write_text("kind: nonsense")
    (tmp_path / "README.md").write_text("# not a manifest")
    write(tmp_path / ".git" / "config.yaml", {"not": "a manifest"})
    write(tmp_path / ".hidden.yaml", {"not": "a manifest"})
    c = load_paths([str(tmp_path)])
    assert [p.name for p in c.pending] == ["from-a", "from-b", "from-c", "from-sub"]


def test_files_and_directories_mix_in_the_order_given(tmp_path: Path) -> None:
    write(tmp_path / "dir" / "x.yaml", pod_manifest("in-dir"))
    single = write(tmp_path / "single.yaml", pod_manifest("single"))
    c = load_paths([str(single), str(tmp_path / "dir")])
    assert [p.name for p in c.pending] == ["single", "in-dir"]


def test_dash_reads_stdin(monkeypatch: pytest.MonkeyPatch) -> None:
    text = yaml.safe_dump_all([node_manifest("n1"), pod_manifest("p")])
    monkeypatch.setattr("sys.stdin", io.StringIO(text))
    c = load_paths(["-"])
    assert [n.name for n in c.nodes] == ["n1"] and [p.name for p in c.pending] == ["p"]
    assert c.pending[0].where.file == "<stdin>"


def kubectl_list(*items: dict[str, Any]) -> dict[str, Any]:
    """What `kubectl get ... -o yaml` prints."""
    return {"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": list(items)}


def test_a_kubectl_list_dump_yields_every_item(tmp_path: Path) -> None:
    f = write(tmp_path / "dump.yaml", kubectl_list(
        node_manifest("n1"),
        pod_manifest("running", node="n1"),
        kubectl_list(pod_manifest("nested")),
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cfg"}, "data": {"a": "b"}},
    ))
    c = load_paths([str(f)])
    assert [p.name for p in c.pods] == ["running"] and [p.name for p in c.pending] == ["nested"]
    assert c.skipped == {"ConfigMap": 1}


def test_json_files_including_a_kubectl_json_list(tmp_path: Path) -> None:
    f = tmp_path / "dump.json"
    f.write_text(json.dumps(kubectl_list(node_manifest("n1"), pod_manifest("p", node="n1")), indent="\t"))
    c = load_paths([str(f)])
    assert [p.name for p in c.pods] == ["p"]


def test_unknown_kinds_are_skipped_and_counted(tmp_path: Path) -> None:
    other = [{"apiVersion": "v1", "kind": k, "metadata": {"name": f"x{i}"}}
             for i, k in enumerate(["ConfigMap", "Secret", "ConfigMap", "CronJob", "Ingress"])]
    f = write(tmp_path / "c.yaml", *other, pod_manifest("p"))
    c = load_paths([str(f)])
    assert c.skipped == {"ConfigMap": 2, "Secret": 1, "CronJob": 1, "Ingress": 1}
    assert [p.name for p in c.pending] == ["p"]


def test_known_kinds_are_all_read(tmp_path: Path) -> None:
    f = write(
        tmp_path / "c.yaml",
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "shop", "labels": {"team": "a"}}},
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"}, "value": 100},
        {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "pdb", "namespace": "shop"},
         "spec": {"maxUnavailable": "50%", "selector": {"matchLabels": {"app": "web"}}}},
        {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web", "namespace": "shop"},
         "spec": {"selector": {"app": "web"}}},
        {"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup", "metadata": {"name": "g", "namespace": "shop"},
         "spec": {"minMember": 2}},
        workload_manifest("Deployment", "web", {"app": "web"}, 1, namespace="shop"),
        node_manifest("n1"),
    )
    c = load_paths([str(f)])
    # The API server labels every namespace with its own name.
    assert c.namespaces["shop"].labels == {"kubernetes.io/metadata.name": "shop", "team": "a"}
    assert c.priority_classes["high"].value == 100
    assert [(p.key, p.max_unavailable, p.min_available) for p in c.pdbs] == [("shop/pdb", "50%", None)]
    assert [(s.namespace, s.name, s.selector) for s in c.services] == [("shop", "web", {"app": "web"})]
    assert [g.key for g in c.pod_groups] == ["shop/g"]
    assert [w.key for w in c.workloads] == ["Deployment/shop/web"]
    assert c.skipped == {}


def test_the_bundled_cluster_dump_reads_as_a_list() -> None:
    root = Path(__file__).resolve().parents[1] / "instances" / "cluster-dump.yaml"
    c = load_paths([str(root)])
    assert len(c.nodes) == 4
    # Every running pod of a Deployment is linked to it; its ReplicaSets add no pods of their own.
    assert all(p.workload.startswith("Deployment/") for p in c.pending if p.workload)
    assert not [p for p in c.pending if p.workload.startswith("ReplicaSet/")]
