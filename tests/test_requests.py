"""A pod's effective requests exactly as kube-scheduler computes them (component-helpers resource.PodRequests):
max(sum of containers + sidecars, each init container on top of the sidecars started before it), pod-level
spec.resources for cpu/memory/hugepages, plus spec.overhead; requests defaulted from limits; and the
non-zero variant scoring uses (100m cpu / 200Mi memory for each container that requests none)."""
from __future__ import annotations

from typing import Any

import pytest

from builders import container, pod_manifest
from podplan.models.loader import parse_documents
from podplan.models.objects import Pod

Mi = 2**20
Gi = 2**30
DEFAULT_CPU, DEFAULT_MEM = 100, 200 * Mi


def pod(containers: list[dict[str, Any]], inits: list[dict[str, Any]] | None = None, **spec: Any) -> Pod:
    if inits:
        spec["initContainers"] = inits
    (p,) = parse_documents([pod_manifest("p", containers=containers, **spec)]).pending
    return p


def sidecar(name: str, **requests: Any) -> dict[str, Any]:
    return container(name, requests=requests, restartPolicy="Always")


CASES = [
    ("one container",
     pod([container(requests={"cpu": "500m", "memory": "1Gi"})]),
     {"cpu": 500, "memory": Gi}),
    ("containers are summed",
     pod([container("a", requests={"cpu": "500m", "memory": "1Gi"}), container("b", requests={"cpu": "1", "memory": "512Mi"})]),
     {"cpu": 1500, "memory": Gi + 512 * Mi}),
    ("extended resources are summed as whole units",
     pod([container("a", requests={"nvidia.com/gpu": 1}, limits={"nvidia.com/gpu": 1}),
          container("b", limits={"nvidia.com/gpu": 2})]),
     {"nvidia.com/gpu": 3}),
    ("a missing request is defaulted from the limit",
     pod([container(limits={"cpu": "2", "memory": "1Gi"})]),
     {"cpu": 2000, "memory": Gi}),
    ("an explicit request wins over the limit",
     pod([container(requests={"cpu": "250m"}, limits={"cpu": "2"})]),
     {"cpu": 250}),
    ("the largest init container wins when it exceeds the containers' sum",
     pod([container(requests={"cpu": "1"})], [container("init", requests={"cpu": "3", "memory": "64Mi"})]),
     {"cpu": 3000, "memory": 64 * Mi}),
    ("init containers are not summed with each other",
     pod([container(requests={"cpu": "1"})], [container("i1", requests={"cpu": "2"}), container("i2", requests={"cpu": "2"})]),
     {"cpu": 2000}),
    ("a small init container changes nothing",
     pod([container(requests={"cpu": "1"})], [container("init", requests={"cpu": "100m"})]),
     {"cpu": 1000}),
    ("a sidecar (restartPolicy: Always) is added to the containers",
     pod([container(requests={"cpu": "1"})], [sidecar("proxy", cpu="500m")]),
     {"cpu": 1500}),
    ("an init container after a sidecar runs on top of it; one before it does not",
     pod([container(requests={"cpu": "1"})],
         [container("i1", requests={"cpu": "3"}), sidecar("proxy", cpu="1"), container("i2", requests={"cpu": "2500m"})]),
     {"cpu": 3500}),
    ("sidecars accumulate for later init containers",
     pod([container(requests={"cpu": "100m"})],
         [sidecar("s1", cpu="1"), sidecar("s2", cpu="1"), container("i", requests={"cpu": "1"})]),
     {"cpu": 3000}),
    ("overhead is added on top",
     pod([container(requests={"cpu": "1", "memory": "1Gi"})], overhead={"cpu": "250m", "memory": "120Mi"}),
     {"cpu": 1250, "memory": Gi + 120 * Mi}),
    ("overhead is added after the init-container max",
     pod([container(requests={"cpu": "1"})], [container("init", requests={"cpu": "2"})], overhead={"cpu": "100m"}),
     {"cpu": 2100}),
    ("pod-level requests replace cpu and memory but not extended resources",
     pod([container(requests={"cpu": "1", "memory": "1Gi"}, limits={"example.com/dev": 1})],
         resources={"requests": {"cpu": "3", "memory": "2Gi"}}),
     {"cpu": 3000, "memory": 2 * Gi, "example.com/dev": 1}),
    ("a pod-level limit becomes the request when no container requests that resource",
     pod([container()], resources={"limits": {"cpu": "2", "memory": "1Gi"}}),
     {"cpu": 2000, "memory": Gi}),
    ("a pod-level limit does not replace the containers' own cpu request",
     pod([container(requests={"cpu": "500m"})], resources={"limits": {"cpu": "2", "memory": "1Gi"}}),
     {"cpu": 500, "memory": Gi}),
    ("pod-level requests plus overhead",
     pod([container()], resources={"requests": {"cpu": "1"}}, overhead={"cpu": "100m"}),
     {"cpu": 1100}),
    ("pod-level hugepages replace the containers'",
     pod([container(requests={"hugepages-2Mi": "4Mi"}, limits={"hugepages-2Mi": "4Mi"})],
         resources={"requests": {"hugepages-2Mi": "8Mi"}}),
     {"hugepages-2Mi": 8 * Mi}),
    ("a pod requesting nothing requests nothing",
     pod([container(), container("b")]),
     {}),
    ("an explicit zero is not kept as an entry",
     pod([container(requests={"cpu": "0", "memory": "0"})]),
     {}),
]


@pytest.mark.parametrize("p,expected", [(p, e) for _, p, e in CASES], ids=[i for i, *_ in CASES])
def test_effective_requests(p: Pod, expected: dict[str, int]) -> None:
    assert p.requests == expected
    assert all(isinstance(v, int) for v in p.requests.values())


NONZERO = [
    ("a container without requests counts 100m cpu and 200Mi memory",
     pod([container()]), {"cpu": DEFAULT_CPU, "memory": DEFAULT_MEM}),
    ("each container gets its own defaults",
     pod([container("a"), container("b")]), {"cpu": 2 * DEFAULT_CPU, "memory": 2 * DEFAULT_MEM}),
    ("only the missing resource is defaulted",
     pod([container(requests={"cpu": "1"})]), {"cpu": 1000, "memory": DEFAULT_MEM}),
    ("an explicit zero request is kept at zero",
     pod([container(requests={"cpu": "0", "memory": "0"})]), {}),
    ("a request defaulted from a limit is not missing",
     pod([container(limits={"memory": "1Gi"})]), {"cpu": DEFAULT_CPU, "memory": Gi}),
    ("sidecars get the defaults too",
     pod([container()], [sidecar("proxy")]), {"cpu": 2 * DEFAULT_CPU, "memory": 2 * DEFAULT_MEM}),
    ("init containers get the defaults before the max",
     pod([container(requests={"cpu": "50m", "memory": "10Mi"})], [container("init")]),
     {"cpu": DEFAULT_CPU, "memory": DEFAULT_MEM}),
    ("pod-level requests still replace cpu",
     pod([container()], resources={"requests": {"cpu": "2"}}), {"cpu": 2000, "memory": DEFAULT_MEM}),
    ("extended resources get no default",
     pod([container(requests={"example.com/dev": 1}, limits={"example.com/dev": 1})]),
     {"cpu": DEFAULT_CPU, "memory": DEFAULT_MEM, "example.com/dev": 1}),
]


@pytest.mark.parametrize("p,expected", [(p, e) for _, p, e in NONZERO], ids=[i for i, *_ in NONZERO])
def test_nonzero_requests(p: Pod, expected: dict[str, int]) -> None:
    assert p.nonzero_requests == expected


def test_workload_template_requests_are_computed_the_same_way() -> None:
    deploy = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
              "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}}, "template": {
                  "metadata": {"labels": {"app": "web"}},
                  "spec": {"initContainers": [sidecar("proxy", cpu="200m")],
                           "containers": [container(requests={"cpu": "1", "memory": "1Gi"})]}}}}
    pending = parse_documents([deploy]).pending
    assert [p.requests for p in pending] == [{"cpu": 1200, "memory": Gi}] * 2
    assert [p.nonzero_requests for p in pending] == [{"cpu": 1200, "memory": Gi + DEFAULT_MEM}] * 2


def test_node_allocatable_falls_back_to_capacity_and_includes_pods() -> None:
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"},
            "status": {"capacity": {"cpu": "4", "memory": "16Gi", "pods": "110", "ephemeral-storage": "100Gi"}}}
    (n,) = parse_documents([node]).nodes
    assert n.allocatable == {"cpu": 4000, "memory": 16 * Gi, "pods": 110, "ephemeral-storage": 100 * Gi}


def test_node_allocatable_wins_over_capacity() -> None:
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"},
            "status": {"capacity": {"cpu": "4", "pods": "110"}, "allocatable": {"cpu": "3920m", "pods": "110"}}}
    (n,) = parse_documents([node]).nodes
    assert n.allocatable == {"cpu": 3920, "pods": 110}


def test_host_network_turns_container_ports_into_host_ports() -> None:
    p = pod([container(ports=[{"containerPort": 8080}, {"containerPort": 53, "protocol": "UDP"}])], hostNetwork=True)
    assert [(h.port, h.protocol) for h in p.host_ports] == [(8080, "TCP"), (53, "UDP")]
    plain = pod([container(ports=[{"containerPort": 8080}, {"containerPort": 9100, "hostPort": 9100, "hostIP": "10.0.0.1"}])])
    assert [(h.port, h.host_ip) for h in plain.host_ports] == [(9100, "10.0.0.1")]
