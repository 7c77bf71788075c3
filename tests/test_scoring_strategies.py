"""NodeResourcesFit's scoring strategies (LeastAllocated, MostAllocated, RequestedToCapacityRatio) with resource
weights, and NodeResourcesBalancedAllocation over a configured resource list: upstream's table tests
(pkg/scheduler/framework/plugins/noderesources: TestLeastAllocatedScoringStrategy,
TestMostAllocatedScoringStrategy, TestRequestedToCapacityRatioScoringStrategy, TestBrokenLinearFunction,
TestResourceBinPackingSingleExtended/MultipleExtended, TestNodeResourcesBalancedAllocation) with upstream's
expected scores, run through the PreScore/Score pair a profile's plugin would get.

Upstream's nodes use `Capacity{"cpu": "4000"}` (4000 cores) or makeNode(milliCPU, bytes); a pod made by
st.MakePod().Obj() has no container, so its non-zero requests are none (`.nonzero()` below), while
`.Container("c")` has one container without requests (100m / 200Mi non-zero).
"""
from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import pytest

from builders import make_node, make_pod, state_of
from podplan.models.objects import Node, Pod
from podplan.models.schedulerconfig import (LEAST_ALLOCATED, MOST_ALLOCATED, REQUESTED_TO_CAPACITY_RATIO,
                                            ResourceSpec, ScoringStrategy)
from podplan.optimizer.noderesources import (balanced_allocation_score, balanced_scorer, broken_linear, fit_scorer,
                                             most_requested_score)

DEFAULT = (("cpu", 1), ("memory", 1))
EXT = "abc.com/xyz"  # upstream's extendedRes
EXT_SET = (("cpu", 1), ("memory", 1), (EXT, 1))  # upstream's extendedResourceSet


def node(name: str, cpu: str | None = None, memory: int | None = None, ext: dict[str, int] | None = None) -> Node:
    """st.MakeNode().Capacity(...): cpu in cores as upstream writes it ("4000"), memory in bytes."""
    named = {k: v for k, v in (("cpu", cpu), ("memory", memory)) if v is not None}
    return make_node(name).alloc(dict(ext or {}), **named).build()


def mnode(name: str, milli_cpu: int, memory: int, extended: dict[str, int] | None = None) -> Node:
    """noderesources' makeNode(name, milliCPU, memory, extendedResource)."""
    return make_node(name).alloc(dict(extended or {}), cpu=f"{milli_cpu}m", memory=memory, pods=32).build()


def pod(extra: dict[str, Any] | None = None, **requests: Any) -> Pod:
    """st.MakePod().Req(...): containers with exactly these requests (none: no container at all)."""
    b = make_pod("p").req(extra, **requests)
    return (b if requests or extra else b.nonzero()).build()


def on(node_name: str, extra: dict[str, Any] | None = None, **requests: Any) -> Pod:
    b = make_pod(f"on-{node_name}").on(node_name).req(extra, **requests)
    return (b if requests or extra else b.nonzero()).build()


def fit_scores(strategy: ScoringStrategy, incoming: Pod, nodes: Sequence[Node], running: Sequence[Pod] = ()) -> list[int]:
    pre_score, score = fit_scorer(strategy)
    state = state_of(nodes, [dataclass_named(p, i) for i, p in enumerate(running)])
    infos = [state.nodes[n.name] for n in nodes]
    pre = pre_score(incoming, state, infos)
    return [score(incoming, pre, info, state) for info in infos]


def dataclass_named(p: Pod, i: int) -> Pod:
    """Existing pods need distinct names to be counted separately."""
    return dataclasses.replace(p, name=f"{p.name}-{i}")


def strategy(kind: str, resources: Sequence[tuple[str, int]] = DEFAULT,
             shape: tuple[tuple[int, int], ...] = ()) -> ScoringStrategy:
    return ScoringStrategy(kind, tuple(ResourceSpec(n, w) for n, w in resources), shape)


# TestLeastAllocatedScoringStrategy: (name, incoming pod, nodes, running pods, resources, expected scores)
LEAST = [
    ("nothing scheduled, nothing requested", pod(), [node("node1", "4000", 10000), node("node2", "4000", 10000)],
     [], DEFAULT, [100, 100]),
    ("nothing scheduled, resources requested, differently sized nodes", pod(cpu="3000", memory=5000),
     [node("node1", "4000", 10000), node("node2", "6000", 10000)], [], DEFAULT, [37, 50]),
    ("no resources requested, pods scheduled", pod(), [node("node1", "4000", 10000), node("node2", "4000", 10000)],
     [on("node1"), on("node1"), on("node2"), on("node2")], DEFAULT, [100, 100]),
    ("no resources requested, pods scheduled with resources", pod(),
     [node("node1", "10000", 20000), node("node2", "10000", 20000)],
     [on("node1", cpu="3000", memory=0), on("node1", cpu="3000", memory=0), on("node2", cpu="3000", memory=0),
      on("node2", cpu="3000", memory=5000)], DEFAULT, [70, 57]),
    ("resources requested, pods scheduled with resources", pod(cpu="3000", memory=5000),
     [node("node1", "10000", 20000), node("node2", "10000", 20000)],
     [on("node1", cpu="3000", memory=0), on("node2", cpu="3000", memory=5000)], DEFAULT, [57, 45]),
    ("resources requested, pods scheduled with resources, differently sized nodes", pod(cpu="3000", memory=5000),
     [node("node1", "10000", 20000), node("node2", "10000", 50000)],
     [on("node1", cpu="3000", memory=0), on("node2", cpu="3000", memory=5000)], DEFAULT, [57, 60]),
    ("requested resources exceed node capacity", pod(cpu="3000", memory=0),
     [node("node1", "4000", 10000), node("node2", "4000", 10000)],
     [on("node1", cpu="3000", memory=0), on("node2", cpu="3000", memory=5000)], DEFAULT, [50, 25]),
    ("zero node resources, pods scheduled with resources", pod(), [node("node1"), node("node2")],
     [on("node1", cpu="3000", memory=0), on("node2", cpu="3000", memory=5000)], DEFAULT, [0, 0]),
    ("different weights on cpu and memory, differently sized nodes", pod(cpu="3000", memory=5000),
     [node("node1", "4000", 10000), node("node2", "6000", 10000)], [], (("memory", 2), ("cpu", 1)), [41, 50]),
    ("bypass extended resource if the pod does not request", pod(cpu="3000", memory=5000),
     [node("node1", "6000", 10000), node("node2", "6000", 10000, ext={EXT: 4})], [], EXT_SET, [50, 50]),
    ("honor extended resource if the pod requests", pod({EXT: 2}, cpu="3000", memory=5000),
     [node("node1", "6000", 10000, ext={EXT: 4}), node("node2", "6000", 10000, ext={EXT: 10})], [], EXT_SET,
     [50, 60]),
    ("if the node doesn't have a resource", pod(cpu="3000", memory=4000),
     [node("node1", "6000", 10000), node("node2", "6000", 10000, ext={EXT: 4})], [],
     ((EXT, 2), ("cpu", 1), ("memory", 1)), [55, 55]),
]

# TestMostAllocatedScoringStrategy
MOST = [
    ("nothing scheduled, nothing requested", pod(), [node("node1", "4000", 10000), node("node2", "4000", 10000)],
     [], DEFAULT, [0, 0]),
    ("nothing scheduled, resources requested, differently sized nodes", pod(cpu="3000", memory=5000),
     [node("node1", "4000", 10000), node("node2", "6000", 10000)], [], DEFAULT, [62, 50]),
    ("no resources requested, pods scheduled with resources", pod(),
     [node("node1", "10000", 20000), node("node2", "10000", 20000)],
     [on("node1", cpu="3000", memory=0), on("node1", cpu="3000", memory=0), on("node2", cpu="3000", memory=0),
      on("node2", cpu="3000", memory=5000)], DEFAULT, [30, 42]),
    ("resources requested, pods scheduled with resources", pod(cpu="3000", memory=5000),
     [node("node1", "10000", 20000), node("node2", "10000", 20000)],
     [on("node1", cpu="3000", memory=0), on("node2", cpu="3000", memory=5000)], DEFAULT, [42, 55]),
    ("resources requested equal node capacity", pod(cpu="5000", memory=9000),
     [node("node1", "5000", 10000), node("node2", "10000", 9000)], [], DEFAULT, [95, 75]),
    ("different weights on cpu and memory, differently sized nodes", pod(cpu="3000", memory=5000),
     [node("node1", "4000", 10000), node("node2", "6000", 10000)], [], (("memory", 2), ("cpu", 1)), [58, 50]),
    ("no resources requested, pods scheduled, nonzero request for resource", make_pod("p").build(),
     [mnode("node1", 250, 1000 * 2**20), mnode("node2", 250, 1000 * 2**20)],
     [make_pod("a").on("node1").build(), make_pod("b").on("node1").build()], DEFAULT, [80, 30]),
    ("bypass extended resource if the pod does not request", pod(cpu="3000", memory=5000),
     [node("node1", "6000", 10000), node("node2", "6000", 10000, ext={EXT: 4})], [], EXT_SET, [50, 50]),
    ("honor extended resource if the pod requests", pod({EXT: 2}, cpu="3000", memory=5000),
     [node("node1", "6000", 10000, ext={EXT: 4}), node("node2", "6000", 10000, ext={EXT: 10})], [], EXT_SET,
     [50, 40]),
    ("if the node doesn't have a resource", pod(cpu="3000", memory=4000),
     [node("node1", "6000", 10000), node("node2", "6000", 10000, ext={EXT: 4})], [],
     ((EXT, 2), ("cpu", 1), ("memory", 1)), [45, 45]),
]

LEAST_TO_MOST = ((0, 10), (100, 0))  # TestRequestedToCapacityRatioScoringStrategy's shape
EMPTY_TO_FULL = ((0, 0), (100, 1))  # TestResourceBinPacking*'s shape
FOO_4_BAR_8 = {"intel.com/foo": 4, "intel.com/bar": 8}
FOO_8_BAR_4 = {"intel.com/foo": 8, "intel.com/bar": 4}
FOO_BAR = (("intel.com/foo", 3), ("intel.com/bar", 5))

# (name, incoming pod, nodes, running pods, resources, shape, expected)
RATIO = [
    ("nothing scheduled, nothing requested (least requested nodes have priority)", pod(),
     [node("node1", "4000", 10000), node("node2", "4000", 10000)], [on("node1"), on("node1")], DEFAULT,
     LEAST_TO_MOST, [100, 100]),
    ("nothing scheduled, resources requested, differently sized nodes", pod(cpu="3000", memory=5000),
     [node("node1", "4000", 10000), node("node2", "6000", 10000)], [on("node1"), on("node1")], DEFAULT,
     LEAST_TO_MOST, [38, 50]),
    ("no resources requested, pods scheduled with resources", pod(),
     [node("node1", "4000", 10000), node("node2", "6000", 10000)],
     [on("node1", cpu="3000", memory=5000), on("node2", cpu="3000", memory=5000)], DEFAULT, LEAST_TO_MOST, [38, 50]),
    # TestResourceBinPackingSingleExtended: scores land on 0..10 because the shape tops at score 1.
    ("single extended resource: nothing requested", pod(),
     [mnode("node1", 4000, 10000 * 2**20, {"intel.com/foo": 8}), mnode("node2", 4000, 10000 * 2**20, {"intel.com/foo": 4})],
     [], (("intel.com/foo", 1),), EMPTY_TO_FULL, [0, 0]),
    ("single extended resource: requested, empty nodes", pod({"intel.com/foo": 2}),
     [mnode("node1", 4000, 10000 * 2**20, {"intel.com/foo": 8}), mnode("node2", 4000, 10000 * 2**20, {"intel.com/foo": 4})],
     [on("node1")], (("intel.com/foo", 1),), EMPTY_TO_FULL, [2, 5]),
    ("single extended resource: requested, node2 holds a pod using it", pod({"intel.com/foo": 2}),
     [mnode("node1", 4000, 10000 * 2**20, {"intel.com/foo": 8}), mnode("node2", 4000, 10000 * 2**20, {"intel.com/foo": 4})],
     [on("node2", {"intel.com/foo": 2})], (("intel.com/foo", 1),), EMPTY_TO_FULL, [2, 10]),
    ("single extended resource: more requested", pod({"intel.com/foo": 4}),
     [mnode("node1", 4000, 10000 * 2**20, {"intel.com/foo": 8}), mnode("node2", 4000, 10000 * 2**20, {"intel.com/foo": 4})],
     [on("node1")], (("intel.com/foo", 1),), EMPTY_TO_FULL, [5, 10]),
    # TestResourceBinPackingMultipleExtended: weights 3 and 5, rounded weighted mean.
    ("two extended resources: nothing requested", pod(),
     [mnode("node1", 4000, 10000 * 2**20, FOO_8_BAR_4), mnode("node2", 4000, 10000 * 2**20, FOO_4_BAR_8)],
     [], FOO_BAR, EMPTY_TO_FULL, [0, 0]),
    ("two extended resources: requested, empty nodes", pod({"intel.com/foo": 2, "intel.com/bar": 2}),
     [mnode("node1", 4000, 10000 * 2**20, FOO_8_BAR_4), mnode("node2", 4000, 10000 * 2**20, FOO_4_BAR_8)],
     [on("node1")], FOO_BAR, EMPTY_TO_FULL, [4, 3]),
    ("two extended resources: requested, node2 holds a pod using them", pod({"intel.com/foo": 2, "intel.com/bar": 2}),
     [mnode("node1", 4000, 10000 * 2**20, FOO_8_BAR_4), mnode("node2", 4000, 10000 * 2**20, FOO_4_BAR_8)],
     [on("node2", {"intel.com/foo": 4, "intel.com/bar": 2})], FOO_BAR, EMPTY_TO_FULL, [4, 7]),
    ("two extended resources: more requested", pod({"intel.com/foo": 4, "intel.com/bar": 2}),
     [mnode("node1", 4000, 10000 * 2**20, FOO_8_BAR_4), mnode("node2", 4000, 10000 * 2**20, FOO_4_BAR_8)],
     [on("node1")], FOO_BAR, EMPTY_TO_FULL, [5, 5]),
]


@pytest.mark.parametrize("incoming,nodes,running,resources,expected", [c[1:] for c in LEAST], ids=[c[0] for c in LEAST])
def test_least_allocated(incoming: Pod, nodes: list[Node], running: list[Pod], resources: Any, expected: list[int]) -> None:
    assert fit_scores(strategy(LEAST_ALLOCATED, resources), incoming, nodes, running) == expected


@pytest.mark.parametrize("incoming,nodes,running,resources,expected", [c[1:] for c in MOST], ids=[c[0] for c in MOST])
def test_most_allocated(incoming: Pod, nodes: list[Node], running: list[Pod], resources: Any, expected: list[int]) -> None:
    assert fit_scores(strategy(MOST_ALLOCATED, resources), incoming, nodes, running) == expected


@pytest.mark.parametrize("incoming,nodes,running,resources,shape,expected", [c[1:] for c in RATIO],
                         ids=[c[0] for c in RATIO])
def test_requested_to_capacity_ratio(incoming: Pod, nodes: list[Node], running: list[Pod], resources: Any,
                                     shape: Any, expected: list[int]) -> None:
    assert fit_scores(strategy(REQUESTED_TO_CAPACITY_RATIO, resources, shape), incoming, nodes, running) == expected


# TestBrokenLinearFunction: (points, {utilization: expected})
BROKEN_LINEAR = [
    (((10, 1), (90, 9)), {-10: 1, 0: 1, 9: 1, 10: 1, 15: 1, 19: 1, 20: 2, 89: 8, 90: 9, 99: 9, 100: 9, 110: 9}),
    (((0, 2), (40, 10), (100, 0)), {-10: 2, 0: 2, 20: 6, 30: 8, 40: 10, 70: 5, 100: 0, 110: 0}),
    (((0, 2), (40, 2), (100, 2)), {-10: 2, 0: 2, 20: 2, 30: 2, 40: 2, 70: 2, 100: 2, 110: 2}),
]


@pytest.mark.parametrize("points,expected", BROKEN_LINEAR,
                         ids=["rising from 1 to 9", "up to 10 then down to 0", "flat at 2"])
def test_broken_linear_function(points: Any, expected: dict[int, int]) -> None:
    assert {p: broken_linear(points, p) for p in expected} == expected


def test_a_falling_shape_truncates_toward_zero_as_go_does() -> None:
    # 10 + (0 - 10) * (15 - 0) / (100 - 0) = 10 - 1.5: Go truncates to 9 (floor division would give 8).
    assert broken_linear(((0, 10), (100, 0)), 15) == 9


def test_most_requested_caps_an_overcommitted_resource_at_full() -> None:
    assert most_requested_score(300, 250) == 100
    assert most_requested_score(100, 0) == 0


# TestNodeResourcesBalancedAllocation (resources as configured): the incoming pod requests what is listed.
CPU_AND_MEMORY = dict(cpu="3000m", memory=5000)
CPU_ONLY = dict(cpu="3000m", memory=0)
BALANCED = [
    ("nothing scheduled, nothing requested", pod(), [mnode("node1", 4000, 10000), mnode("node2", 4000, 10000)],
     [], DEFAULT, [100, 100]),
    ("nothing scheduled, resources requested, differently sized nodes", pod(**CPU_AND_MEMORY),
     [mnode("node1", 4000, 10000), mnode("node2", 6000, 10000)], [], DEFAULT, [87, 100]),
    ("no resources requested, pods scheduled with resources", pod(),
     [mnode("node1", 10000, 20000), mnode("node2", 10000, 20000)],
     [on("node1", **CPU_ONLY), on("node1", **CPU_ONLY), on("node2", **CPU_ONLY), on("node2", **CPU_AND_MEMORY)],
     DEFAULT, [70, 82]),
    ("resources requested, pods scheduled with resources", pod(**CPU_AND_MEMORY),
     [mnode("node1", 10000, 20000), mnode("node2", 10000, 20000)],
     [on("node1", **CPU_ONLY), on("node2", **CPU_AND_MEMORY)], DEFAULT, [82, 95]),
    ("resources requested, pods scheduled with resources, differently sized nodes", pod(**CPU_AND_MEMORY),
     [mnode("node1", 10000, 20000), mnode("node2", 10000, 50000)],
     [on("node1", **CPU_ONLY), on("node2", **CPU_AND_MEMORY)], DEFAULT, [82, 80]),
    ("requested resources at node capacity", pod(**CPU_ONLY), [mnode("node1", 6000, 10000), mnode("node2", 6000, 10000)],
     [on("node1", **CPU_ONLY), on("node2", **CPU_AND_MEMORY)], DEFAULT, [50, 75]),
    ("include scalar resource on a node for balanced resource allocation", pod({"nvidia.com/gpu": 1}, memory=0),
     [mnode("node1", 3500, 40000, {"nvidia.com/gpu": 8}), mnode("node2", 3500, 40000, {"nvidia.com/gpu": 8})],
     [on("node2", **CPU_AND_MEMORY), on("node1", {"nvidia.com/gpu": 3}, **CPU_AND_MEMORY)],
     (("cpu", 1), ("memory", 1), ("nvidia.com/gpu", 1)), [70, 65]),
    ("a scalar resource the pod does not request is skipped", pod(),
     [mnode("node1", 3500, 40000, {"nvidia.com/gpu": 8}), mnode("node2", 3500, 40000)],
     [on("node1", **CPU_ONLY), on("node2", **CPU_ONLY)], (("cpu", 1), ("nvidia.com/gpu", 1)), [100, 100]),
]


@pytest.mark.parametrize("incoming,nodes,running,resources,expected", [c[1:] for c in BALANCED],
                         ids=[c[0] for c in BALANCED])
def test_balanced_allocation_over_configured_resources(incoming: Pod, nodes: list[Node], running: list[Pod],
                                                       resources: Any, expected: list[int]) -> None:
    state = state_of(nodes, [dataclass_named(p, i) for i, p in enumerate(running)])
    requests = tuple(incoming.requests.get(name, 0) for name, _ in resources)
    assert [balanced_allocation_score(state.nodes[n.name], requests, resources) for n in nodes] == expected


def test_the_balanced_plugin_skips_a_pod_requesting_none_of_its_resources() -> None:
    # kubernetes#129138: PreScore returns Skip; here every node scores 0, which ranks nodes alike.
    pre_score, score = balanced_scorer((("cpu", 1), ("nvidia.com/gpu", 1)))
    state = state_of([mnode("node1", 3500, 40000, {"nvidia.com/gpu": 8})])
    info = state.nodes["node1"]
    best_effort = pod(memory="1Gi")
    assert score(best_effort, pre_score(best_effort, state, [info]), info, state) == 0
    gpu = pod({"nvidia.com/gpu": 4})
    assert score(gpu, pre_score(gpu, state, [info]), info, state) == 75


def test_most_allocated_packs_where_least_allocated_spreads() -> None:
    nodes = [node("busy", "4", 4 * 2**30), node("idle", "4", 4 * 2**30)]
    running = [on("busy", cpu="3", memory=3 * 2**30)]
    incoming = pod(cpu="500m", memory=2**29)
    least = fit_scores(strategy(LEAST_ALLOCATED), incoming, nodes, running)
    most = fit_scores(strategy(MOST_ALLOCATED), incoming, nodes, running)
    assert least[0] < least[1] and most[0] > most[1]
