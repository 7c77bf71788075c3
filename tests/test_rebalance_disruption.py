"""PodDisruptionBudget arithmetic as the disruption controller and the Eviction API compute it."""
from __future__ import annotations

import pytest

from podplan.models.objects import OwnerRef, PodDisruptionBudget, Workload
from podplan.models.selectors import LabelSelector
from podplan.optimizer import disruption
from tests.builders import make_pod, selector

WEB = selector(app="web")


def web_pods(n: int, owner: str = "web-rs", ready: int | None = None) -> list[tuple]:
    """n pods of ReplicaSet `owner` labelled app=web; the first `ready` of them healthy (default all)."""
    ready = n if ready is None else ready
    return [(make_pod(f"web-{i}").label("app", "web").owner("ReplicaSet", owner).build(), i < ready)
            for i in range(n)]


def rs(name: str, replicas: int, deployment: str = "") -> Workload:
    owners = (OwnerRef("Deployment", deployment, controller=True),) if deployment else ()
    return Workload("ReplicaSet", "default", name, replicas=replicas, owner_refs=owners)


def pdb(min_available: int | str | None = None, max_unavailable: int | str | None = None,
        sel: LabelSelector | None = WEB) -> PodDisruptionBudget:
    return PodDisruptionBudget("default", "web-pdb", sel, min_available, max_unavailable)


CASES = [
    # (id, pdb, pods, workloads, expected, desired healthy, allowed)
    ("minAvailable 2 of 3 healthy pods allows one disruption", pdb(2), web_pods(3), [rs("web-rs", 3)], 3, 2, 1),
    ("minAvailable 3 of 3 allows none", pdb(3), web_pods(3), [rs("web-rs", 3)], 3, 3, 0),
    ("minAvailable counts the matching pods, not the controller's scale, when it is an integer",
     pdb(2), web_pods(3), [rs("web-rs", 10)], 3, 2, 1),
    ("minAvailable 50% of 3 replicas rounds up to 2", pdb("50%"), web_pods(3), [rs("web-rs", 3)], 3, 2, 1),
    ("minAvailable 34% of 3 replicas rounds up to 2", pdb("34%"), web_pods(3), [rs("web-rs", 3)], 3, 2, 1),
    ("minAvailable 100% allows none", pdb("100%"), web_pods(4), [rs("web-rs", 4)], 4, 4, 0),
    ("maxUnavailable 1 of 3 replicas allows one", pdb(max_unavailable=1), web_pods(3), [rs("web-rs", 3)], 3, 2, 1),
    ("maxUnavailable 0 allows none", pdb(max_unavailable=0), web_pods(3), [rs("web-rs", 3)], 3, 3, 0),
    ("maxUnavailable 25% of 5 replicas rounds up to 2", pdb(max_unavailable="25%"), web_pods(5), [rs("web-rs", 5)],
     5, 3, 2),
    ("maxUnavailable takes the Deployment's replicas for a ReplicaSet it owns",
     pdb(max_unavailable=1), web_pods(3), [rs("web-rs", 3, deployment="web"),
                                           Workload("Deployment", "default", "web", replicas=4)], 4, 3, 0),
    ("an unready pod lowers the healthy count", pdb(2), web_pods(3, ready=2), [rs("web-rs", 3)], 3, 2, 0),
    ("a PDB with neither field expects nothing and allows nothing", pdb(), web_pods(3), [rs("web-rs", 3)], 0, 0, 0),
    ("a nil selector selects no pod", pdb(0, sel=None), web_pods(3), [rs("web-rs", 3)], 0, 0, 0),
    ("an empty selector selects every pod of the namespace", pdb(1, sel=selector()), web_pods(3), [rs("web-rs", 3)],
     3, 1, 2),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_budget_follows_the_disruption_controller(case: tuple) -> None:
    _, b, pods, workloads, expected, desired, allowed = case
    got = disruption.budget(b, pods, workloads)
    assert (got.expected, got.desired_healthy, got.allowed) == (expected, desired, allowed)
    selected = [h for p, h in pods if disruption.counts(b, p)]
    assert got.current_healthy == sum(selected)


def test_a_percentage_over_pods_whose_controller_is_missing_fails_safe_to_zero() -> None:
    got = disruption.budget(pdb("50%"), web_pods(3, owner="gone"), [rs("web-rs", 3)])
    assert got.allowed == 0 and "found no controllers for pod 'web-0'" in got.error


def test_a_percentage_over_job_pods_has_no_scale_and_allows_nothing() -> None:
    pods = [(make_pod("j").label("app", "web").owner("Job", "batch").build(), True)]
    got = disruption.budget(pdb(max_unavailable="50%"), pods, [Workload("Job", "default", "batch", replicas=1)])
    assert got.allowed == 0 and got.error


def test_the_eviction_api_ignores_pdbs_whose_selector_is_empty_or_nil() -> None:
    pod = make_pod("web-0").label("app", "web").build()
    assert disruption.guarding([pdb(1), pdb(1, sel=selector()), pdb(1, sel=None)], pod) == [pdb(1)]


def test_a_pdb_in_another_namespace_does_not_guard_the_pod() -> None:
    pod = make_pod("web-0").namespace("shop").label("app", "web").build()
    assert disruption.guarding([pdb(1)], pod) == []


def test_an_unready_pod_is_evicted_without_spending_the_budget_while_the_budget_is_met() -> None:
    b = disruption.budget(pdb(2), web_pods(3, ready=2), [])
    unready = web_pods(3, ready=2)[2][0]
    assert b.allowed == 0
    assert not disruption.spends(unready, False, b)
    assert disruption.spends(unready, True, b)


def test_readiness_is_read_from_the_dump_and_assumed_without_conditions() -> None:
    plain = make_pod("a").build()
    unready = make_pod("b").set(raw={"status": {"phase": "Running",
                                                "conditions": [{"type": "Ready", "status": "False"}]}}).build()
    pending = make_pod("c").set(raw={"status": {"phase": "Pending"}}).build()
    assert disruption.pod_ready(plain)
    assert not disruption.pod_ready(unready)
    assert not disruption.pod_ready(pending) and disruption.ignores_pdbs(pending)


def test_the_refusal_names_the_budget_like_the_api_server() -> None:
    b = disruption.budget(pdb(3), web_pods(3), [])
    assert b.cause() == "The disruption budget web-pdb needs 3 healthy pods and has 3 currently"
