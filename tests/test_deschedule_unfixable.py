"""Goals no plan can meet: which pods cannot leave their node in any plan (the filters relaxed soundly), the
nodes that then stay above targetThresholds whatever is evicted, named per goal with their blocking pods, and
the bound that leaves them out. Against exhaustive search: on tiny clusters no valid end state meets a goal
said to be unmeetable, and none meeting every other goal evicts fewer than the bound."""
from __future__ import annotations

import itertools
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from podplan.models.loader import parse_documents
from podplan.optimizer.deschedule.cycle import verdict
from podplan.optimizer.deschedule.optimal import end_state, optimum
from podplan.optimizer.deschedule.policy import parse_policy
from podplan.optimizer.deschedule.unfixable import stuck_pods
from podplan.optimizer.rebalance.plan import RebalanceParams
from podplan.optimizer.rebalance.states import state_report
from podplan.optimizer.registry import DEFAULT_PROFILE

POLICY = parse_policy({"apiVersion": "descheduler/v1alpha2", "kind": "DeschedulerPolicy", "profiles": [{
    "name": "p", "pluginConfig": [{"name": "LowNodeUtilization", "args": {
        "thresholds": {"cpu": 20, "memory": 20, "pods": 20},
        "targetThresholds": {"cpu": 50, "memory": 50, "pods": 50}}}],
    "plugins": {"balance": {"enabled": ["LowNodeUtilization"]}}}]})


def node(name: str, labels: dict | None = None, taint: bool = False, cordoned: bool = False) -> dict:
    """4 cpu, 16Gi, 20 pods."""
    spec: dict = {}
    if taint:
        spec["taints"] = [{"key": "dedicated", "value": "batch", "effect": "NoSchedule"}]
    if cordoned:
        spec["unschedulable"] = True
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {
        "kubernetes.io/hostname": name, **(labels or {})}}, "spec": spec,
        "status": {"allocatable": {"cpu": "4", "memory": "16Gi", "pods": "20"}}}


def pod(name: str, on: str, cpu: int, evictable: bool = True, selector: dict | None = None,
        tolerates: bool = False) -> dict:
    """`evictable`: owned by a ReplicaSet (the default evictor evicts it); else a bare pod (it keeps it).
    `tolerates`: the `dedicated` taint of node()."""
    meta: dict = {"name": name, "namespace": "default", "labels": {"app": name}}
    if evictable:
        meta["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": f"rs-{name}",
                                    "uid": f"u-{name}", "controller": True}]
    spec: dict = {"nodeName": on, "containers": [{"name": "c", "image": "i", "resources": {
        "requests": {"cpu": f"{cpu}m", "memory": "64Mi"}}}]}
    if selector:
        spec["nodeSelector"] = selector
    if tolerates:
        spec["tolerations"] = [{"key": "dedicated", "operator": "Exists", "effect": "NoSchedule"}]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec,
            "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}}


STUCK = [
    ("a pod with room on another node can leave",
     [node("n0"), node("n1")], [pod("web", "n0", 1000)], False),
    ("a pod its nodeSelector pins to its own node cannot leave",
     [node("n0", {"disk": "ssd"}), node("n1")], [pod("web", "n0", 1000, selector={"disk": "ssd"})], True),
    ("a pod that tolerates no taint cannot go to the tainted nodes",
     [node("n0"), node("n1", taint=True), node("n2", taint=True)], [pod("web", "n0", 1000)], True),
    ("a cordoned node takes no replacement",
     [node("n0"), node("n1", cordoned=True)], [pod("web", "n0", 1000)], True),
    ("a pod larger than the room the kept pods leave elsewhere cannot leave",
     [node("n0"), node("n1")], [pod("web", "n0", 1000), pod("db", "n1", 3500, evictable=False)], True),
    ("room held by evictable pods counts as room: they may leave",
     [node("n0"), node("n1")], [pod("web", "n0", 1000), pod("db", "n1", 3500)], False),
]


@pytest.mark.parametrize("_id, nodes, pods, stuck", STUCK, ids=[s[0] for s in STUCK])
def test_whether_a_pods_replacement_can_land_on_another_node_in_some_plan(
        _id: str, nodes: list[dict], pods: list[dict], stuck: bool) -> None:
    c = parse_documents(nodes + pods, "<test>")
    free = {p.key for p in c.pods if p.owner_refs}
    web = next(p for p in c.pods if p.name == "web")
    got = stuck_pods(c, free, [web], DEFAULT_PROFILE)
    assert (web.key in got) == stuck
    if stuck:
        assert "fits on no other node" in got[web.key] and "0/" in got[web.key]


def run(docs: list[dict]):
    c = parse_documents(docs, "<test>")
    return c, optimum(c, POLICY, RebalanceParams(time_limit=20, workers=1), time.perf_counter() + 20,
                      verdict(c, POLICY))


def test_a_node_only_pinned_pods_could_bring_down_is_a_goal_no_plan_meets_and_the_plan_is_still_proven() -> None:
    # n0: 2,800m above 50 % of 4 cpu, its pods pinned to it by a nodeSelector; n1: 2,400m of ordinary pods,
    # one 500m eviction brings it within 50 %; n2 empty
    docs = [node("n0", {"disk": "ssd"}), node("n1"), node("n2"),
            pod("db-1", "n0", 1400, selector={"disk": "ssd"}), pod("db-2", "n0", 1400, selector={"disk": "ssd"}),
            pod("web-1", "n1", 1900), pod("web-2", "n1", 500)]
    c, o = run(docs)
    assert o.verdict.outside == ("n0",)
    assert o.plan.moves == 1 and o.bound == 1
    assert str(o.plan.status.value if hasattr(o.plan.status, "value") else o.plan.status) == "OPTIMAL"
    [u] = o.unmet
    assert (u.goal, u.node, u.proven) == ("LowNodeUtilization", "n0", True)
    assert set(u.blocking_pods) == {"default/db-1", "default/db-2"}
    assert "stays above targetThresholds in every plan" in u.why and "node(s) didn't match" in u.why


def test_the_document_and_the_table_name_the_goal_the_node_why_and_the_blocking_pods() -> None:
    from podplan.optimizer.deschedule import deschedule
    from podplan.optimizer.render.deschedule import document, render_html, render_table

    docs = [node("n0", {"disk": "ssd"}), node("n1"),
            pod("db-1", "n0", 1400, selector={"disk": "ssd"}), pod("db-2", "n0", 1400, selector={"disk": "ssd"})]
    c = parse_documents(docs, "<test>")
    doc = document(deschedule(c, POLICY, RebalanceParams(time_limit=20, workers=1), time.perf_counter() + 20, 2))
    [u] = doc["optimal"]["unmet"]
    assert {k: u[k] for k in ("goal", "node", "proven")} == {"goal": "LowNodeUtilization", "node": "n0",
                                                              "proven": True}
    assert u["blocking_pods"] == ["default/db-1", "default/db-2"] and u["why"].startswith("n0 stays above")
    assert "unmet (no plan meets it): n0 stays above targetThresholds in every plan" in render_table(doc)
    assert "Goals not met" in render_html(doc) and "default/db-1" in render_html(doc)


# ------------------------------------------------------------------------ against exhaustive search

@st.composite
def tiny(draw: st.DrawFn) -> list[dict]:
    """Three nodes (some tainted, one labelled), up to five pods: evictable or kept, some pinned by a
    nodeSelector to the labelled node."""
    tainted = {"n1": draw(st.booleans()), "n2": draw(st.booleans())}
    nodes = [node("n0", {"disk": "ssd"}), node("n1", taint=tainted["n1"]), node("n2", taint=tainted["n2"])]
    pods: list[dict] = []
    load = {"n0": 0, "n1": 0, "n2": 0}
    for k in range(draw(st.integers(1, 5))):
        cpu = draw(st.sampled_from([500, 900, 1400, 2100]))
        on = draw(st.sampled_from(["n0", "n0", "n1", "n2"]))
        if load[on] + cpu > 4000:
            continue
        load[on] += cpu
        pinned = on == "n0" and draw(st.booleans())
        # the pods of a tainted node tolerate its taint (a pod that does not is a violation of its own, which
        # a LowNodeUtilization policy does not ask to repair)
        pods.append(pod(f"p{k}", on, cpu, evictable=draw(st.booleans()) or on == "n0",
                        selector={"disk": "ssd"} if pinned else None, tolerates=tainted.get(on, False)))
    return nodes + pods


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tiny())
def test_no_valid_end_state_meets_a_goal_said_unmeetable_nor_evicts_fewer_than_the_bound(docs: list[dict]) -> None:
    c, o = run(docs)
    unmeetable = {u.node for u in o.unmet if u.proven}
    free = [p for p in c.pods if p.owner_refs]
    names = [n.name for n in c.nodes]
    fewest = None  # the fewest evictions of a valid end state meeting every goal not said unmeetable
    best = None  # the optimum: the fewest nodes outside, then the fewest evictions
    for where_to in itertools.product(names, repeat=len(free)):
        where = {p.key: p.node_name for p in c.pods}
        moved = set()
        for p, n in zip(free, where_to):
            if n != p.node_name:
                where[p.key] = n
                moved.add(p.key)
        if not state_report(c, where, moved).ok:
            continue
        outside = set(verdict(end_state(c, where), POLICY).outside)
        assert not (unmeetable - outside), f"a valid end state meets {unmeetable - outside}"
        best = (len(outside), len(moved)) if best is None else min(best, (len(outside), len(moved)))
        if outside <= unmeetable:
            fewest = len(moved) if fewest is None else min(fewest, len(moved))
    if o.bound is not None and fewest is not None:
        assert o.bound <= fewest
    if str(o.plan.status.value if hasattr(o.plan.status, "value") else o.plan.status) == "OPTIMAL":
        assert (len(o.verdict.outside), o.plan.moves) == best

