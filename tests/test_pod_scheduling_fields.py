"""The fields that decide whether kube-scheduler binds a pod at all, read from manifests: spec.schedulerName
(another scheduler's pods are not kube-scheduler's) and spec.schedulingGates (a gated pod waits outside the
queue). Parsing only: what the commands do with them is decided elsewhere."""
from __future__ import annotations

from typing import Any

import pytest

from builders import pod_manifest, workload_manifest
from podplan.models.loader import parse_documents

CASES = [
    ("a pod without gates has none", {}, ()),
    ("a Kueue-gated pod keeps its gate", {"schedulingGates": [{"name": "kueue.x-k8s.io/admission"}]},
     ("kueue.x-k8s.io/admission",)),
    ("several gates keep their order", {"schedulingGates": [{"name": "b.example/two"}, {"name": "a.example/one"}]},
     ("b.example/two", "a.example/one")),
    ("an empty list is no gate", {"schedulingGates": []}, ()),
]


@pytest.mark.parametrize("spec,gates", [(s, g) for _, s, g in CASES], ids=[i for i, _, _ in CASES])
def test_scheduling_gates_are_read_in_order(spec: dict[str, Any], gates: tuple[str, ...]) -> None:
    (pod,) = parse_documents([pod_manifest("p", **spec)]).pending
    assert pod.scheduling_gates == gates


def test_a_workload_template_passes_its_gates_to_every_replica() -> None:
    deployment = workload_manifest("Deployment", "api", {"app": "api"}, 2,
                                   template_spec={"schedulingGates": [{"name": "example.com/hold"}]})
    pending = parse_documents([deployment]).pending
    assert [p.scheduling_gates for p in pending] == [("example.com/hold",)] * 2


SCHEDULERS = [
    ("no schedulerName means kube-scheduler's default profile", {}, "default-scheduler"),
    ("an empty schedulerName is defaulted too", {"schedulerName": ""}, "default-scheduler"),
    ("another scheduler's name is kept", {"schedulerName": "volcano"}, "volcano"),
]


@pytest.mark.parametrize("spec,name", [(s, n) for _, s, n in SCHEDULERS], ids=[i for i, _, _ in SCHEDULERS])
def test_scheduler_name_is_kept(spec: dict[str, Any], name: str) -> None:
    (pod,) = parse_documents([pod_manifest("p", **spec)]).pending
    assert pod.scheduler_name == name
