"""podplan says which kube-scheduler it models: `--version` and every -o json document ("kubeVersion"), while
manifests (--emit state, bindings) stay plain Kubernetes objects."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from builders import run_cli
from podplan import KUBE_VERSION, __version__

INSTANCE = str(Path(__file__).resolve().parents[1] / "instances" / "zone-spread.yaml")


def test_the_modelled_kube_scheduler_is_1_35_4() -> None:
    assert KUBE_VERSION == "1.35.4"


def test_version_prints_podplans_version_and_the_kube_scheduler_it_models() -> None:
    code, out = run_cli("--version")
    assert code == 0
    assert out.strip() == f"podplan {__version__} (kube-scheduler v1.35.4 semantics)"


@pytest.mark.parametrize("args", [
    ("validate",), ("simulate",), ("simulate", "--no-preemption"), ("solve", "--time-limit", "5"), ("verify",),
    ("explain",), ("compare", "--time-limit", "5"),
], ids=lambda a: " ".join(a) + " -o json says kubeVersion first")
def test_every_json_document_says_kube_version_first(args: tuple[str, ...]) -> None:
    code, out = run_cli(*args, INSTANCE, "-o", "json")
    assert code in (0, 1), out
    doc = json.loads(out)
    assert next(iter(doc)) == "kubeVersion" and doc["kubeVersion"] == KUBE_VERSION


def test_manifests_stay_plain_kubernetes_objects() -> None:
    code, out = run_cli("simulate", INSTANCE, "--emit", "state", "-o", "json")
    assert code == 0
    doc = json.loads(out)
    assert doc["kind"] == "List" and "kubeVersion" not in doc
    assert all("kubeVersion" not in item for item in doc["items"])
