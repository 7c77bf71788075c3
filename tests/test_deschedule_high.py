"""HighNodeUtilization planned: the underutilised nodes emptied (the most of them, then the fewest evictions),
every evicted pod landing on a node that stays; against brute force on tiny clusters, and the bundled instance
where the descheduler (kube-scheduler's default LeastAllocated scoring) only shuffles pods between the
underutilised nodes."""
from __future__ import annotations

import itertools
import json
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from podplan.models.loader import parse_documents
from podplan.optimizer.deschedule.cycle import verdict
from podplan.optimizer.deschedule.optimal import optimum
from podplan.optimizer.deschedule.policy import parse_policy
from podplan.optimizer.rebalance.plan import RebalanceParams
from podplan.optimizer.rebalance.states import state_report

from test_deschedule import run

INSTANCES = Path(__file__).resolve().parents[1] / "instances" / "descheduler"
CPU = 1000
POLICY = parse_policy({"apiVersion": "descheduler/v1alpha2", "kind": "DeschedulerPolicy", "profiles": [{
    "name": "p", "pluginConfig": [{"name": "HighNodeUtilization", "args": {"thresholds": {"cpu": 30}}}],
    "plugins": {"balance": {"enabled": ["HighNodeUtilization"]}}}]})


def manifests(loads: list[list[int]], bare: set[tuple[int, int]] = frozenset(), daemons: bool = False) -> list[dict]:
    """One 1-cpu node per entry of `loads` (its pods' cpu in m); `bare`: (node, pod) indexes of pods with no
    controller (the evictor keeps them); `daemons`: a 50m DaemonSet pod on every node."""
    out: list[dict] = []
    for i, pods in enumerate(loads):
        out.append({"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"n{i}"},
                    "status": {"allocatable": {"cpu": f"{CPU}m", "memory": "8Gi", "pods": "10"}}})
        entries = [(f"p{i}-{k}", cpu, "ReplicaSet" if (i, k) not in bare else None) for k, cpu in enumerate(pods)]
        if daemons:
            entries.append((f"ds-{i}", 50, "DaemonSet"))
        for name, cpu, kind in entries:
            meta: dict = {"name": name, "namespace": "default"}
            if kind:
                meta["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": kind, "name": f"o-{name}",
                                            "uid": f"u-{name}", "controller": True}]
            out.append({"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": {"nodeName": f"n{i}", "containers": [
                {"name": "c", "image": "i", "resources": {"requests": {"cpu": f"{cpu}m", "memory": "1Mi"}}}]},
                "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}})
    return out


def plan(docs: list[dict]):
    c = parse_documents(docs, "<generated>")
    o = optimum(c, POLICY, RebalanceParams(time_limit=10, workers=1), time.perf_counter() + 10, verdict(c, POLICY))
    return c, o


TABLE = [
    # (id, loads, bare, want emptied nodes among the underutilised, want evictions)
    ("two underutilised nodes move onto the busy one", [[600], [100], [200]], set(), 2, 2),
    ("an underutilised node whose pod the evictor keeps is not emptied", [[600], [100], [200]], {(1, 0)}, 1, 1),
    ("no room: the busy nodes are full", [[900, 100], [250], []], set(), 0, 0),
    # n0 is empty already: filling it to empty n1 and n2 gains nothing; n2's one pod moving onto n1 does
    ("of two small nodes the one with fewer pods moves onto the other", [[], [100, 100], [200]], set(), 1, 1),
]


@pytest.mark.parametrize("_id, loads, bare, emptied, evictions", TABLE, ids=[t[0] for t in TABLE])
def test_high_node_utilization_table(_id: str, loads: list[list[int]], bare: set, emptied: int,
                                     evictions: int) -> None:
    c, o = plan(manifests(loads, bare, daemons=True))
    under = verdict(c, POLICY).under
    assert sum(1 for n in under if n in o.verdict.empty) - sum(1 for n in under if n in verdict(c, POLICY).empty) \
        == emptied
    assert o.plan.moves == evictions
    assert o.plan.complete
    where = {p.key: p.node_name for p in c.pods}
    moved: set[str] = set()
    for w in o.plan.waves:
        for m in w.moves:
            where[m.key], _ = m.target, moved.add(m.key)
        assert state_report(c, where, moved).ok


def brute_force(loads: list[list[int]]) -> tuple[int, int]:
    """(most underutilised nodes emptied, fewest evictions) over every placement of the underutilised nodes'
    pods (the others stay), no node above its cpu."""
    under = [i for i, pods in enumerate(loads) if sum(pods) * 100 <= 30 * CPU]
    movers = [(cpu, i) for i in under for cpu in loads[i]]
    best = None
    for where in itertools.product(range(len(loads)), repeat=len(movers)):
        load = [sum(pods) if i not in under else 0 for i, pods in enumerate(loads)]
        count = [len(pods) if i not in under else 0 for i, pods in enumerate(loads)]
        for (cpu, _), n in zip(movers, where):
            load[n] += cpu
            count[n] += 1
        if max(load) > CPU:
            continue
        key = (-sum(1 for i in under if count[i] == 0), sum(1 for (_, o), n in zip(movers, where) if n != o))
        best = key if best is None or key < best else best
    assert best is not None
    return -best[0], best[1]


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.lists(st.sampled_from([100, 200, 300, 500]), max_size=3), min_size=3, max_size=3))
def test_the_plan_is_brute_forces_optimum(loads: list[list[int]]) -> None:
    loads = [[c for c in pods if c][:3] for pods in loads]
    loads = [pods if sum(pods) <= CPU else pods[:1] for pods in loads]
    c, o = plan(manifests(loads))
    want_empty, want_moves = brute_force(loads)
    under = verdict(c, POLICY).under
    assert sum(1 for n in under if n in o.verdict.empty) == want_empty
    assert o.plan.moves == want_moves
    assert str(getattr(o.plan.status, "value", o.plan.status)) == "OPTIMAL"


def test_the_bundled_instance_empties_the_nodes_the_descheduler_shuffles_pods_between() -> None:
    code, out, err = run("deschedule", str(INSTANCES / "highnodeutilization.yaml"), "--policy-file",
                         str(INSTANCES / "highnodeutilization-policy.yaml"), "-o", "json", "--time-limit", "20")
    assert code == 0, err
    doc = json.loads(out)
    d, o = doc["descheduler"], doc["optimal"]
    under = set(doc["before"]["underutilised_nodes"])
    assert under == {"node-4", "node-5", "node-6"}
    # kube-scheduler's LeastAllocated scoring puts the replacements back on the underutilised nodes: a loop
    assert d["loops"] and not under & set(d["empty_nodes"])
    assert under <= set(o["empty_nodes"]) and o["status"] == "OPTIMAL" and o["unmet"] == []
    assert all(e["to"] not in under for e in o["evictions"])
