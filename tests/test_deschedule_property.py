"""The optimum for a LowNodeUtilization policy equals brute force on small random clusters: the fewest nodes
left above targetThresholds, then the fewest evictions, over every placement of the pods."""
from __future__ import annotations

import itertools
import time

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from podplan.models.loader import parse_documents
from podplan.optimizer.deschedule.cycle import verdict
from podplan.optimizer.deschedule.optimal import optimum
from podplan.optimizer.deschedule.policy import parse_policy
from podplan.optimizer.rebalance.plan import RebalanceParams

NODES, CPU = 3, 1000
POLICY = parse_policy({"apiVersion": "descheduler/v1alpha2", "kind": "DeschedulerPolicy", "profiles": [{
    "name": "p", "pluginConfig": [{"name": "LowNodeUtilization", "args": {
        "thresholds": {"cpu": 20}, "targetThresholds": {"cpu": 50}}}],
    "plugins": {"balance": {"enabled": ["LowNodeUtilization"]}}}]})


def manifests(pods: list[tuple[int, int]]) -> list[dict]:
    out: list[dict] = [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"n{i}"},
                        "status": {"allocatable": {"cpu": f"{CPU}m", "memory": "8Gi", "pods": "10"}}}
                       for i in range(NODES)]
    for k, (cpu, node) in enumerate(pods):
        out.append({"apiVersion": "v1", "kind": "Pod", "metadata": {
            "name": f"p{k}", "namespace": "default", "ownerReferences": [
                {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": f"rs{k}", "uid": f"u{k}", "controller": True}]},
            "spec": {"nodeName": f"n{node}", "containers": [
                {"name": "c", "image": "i", "resources": {"requests": {"cpu": f"{cpu}m", "memory": "1Mi"}}}]},
            "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}})
    return out


def brute_force(pods: list[tuple[int, int]]) -> tuple[int, int]:
    best = None
    for where in itertools.product(range(NODES), repeat=len(pods)):
        load = [0] * NODES
        for (cpu, _), n in zip(pods, where):
            load[n] += cpu
        if max(load) > CPU:
            continue
        key = (sum(1 for x in load if x > CPU // 2), sum(1 for (_, o), n in zip(pods, where) if n != o))
        best = key if best is None or key < best else best
    assert best is not None
    return best


@st.composite
def clusters(draw: st.DrawFn) -> list[tuple[int, int]]:
    n = draw(st.integers(2, 5))
    pods: list[tuple[int, int]] = []
    load = [0] * NODES
    for _ in range(n):
        cpu = draw(st.sampled_from([100, 200, 300, 400, 600]))
        node = draw(st.sampled_from([i for i in range(NODES) if load[i] + cpu <= CPU] or [0]))
        if load[node] + cpu > CPU:
            continue
        load[node] += cpu
        pods.append((cpu, node))
    return pods


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(clusters())
def test_the_target_is_brute_forces_optimum(pods: list[tuple[int, int]]) -> None:
    cluster = parse_documents(manifests(pods), "<random>")
    found = optimum(cluster, POLICY, RebalanceParams(time_limit=10, workers=1), time.perf_counter() + 10,
                    verdict(cluster, POLICY))
    levels = {name: value for name, value, _ in found.plan.levels}
    want_outside, want_moves = brute_force(pods)
    assert (levels.get("outside", 0), levels.get("moves", 0)) == (want_outside, want_moves)
    assert all(proven for _, _, proven in found.plan.levels)
