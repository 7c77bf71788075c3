"""Workloads become the pending pods their controllers would create, named as Kubernetes names them, and a
dump's running pods (linked by ownerReferences) count toward their workload: never double counted."""
from __future__ import annotations

import re
from typing import Any

from builders import container, node_manifest, pod_manifest, workload_manifest
from podplan.models.loader import parse_documents
from podplan.models.objects import POD_GROUP_LABEL, Cluster, OwnerRef, Pod
from podplan.models.selectors import Requirement

WEB = {"app": "web"}
SAFE = "[bcdfghjklmnpqrstvwxz2456789]"  # kube's rand.SafeEncodeString alphabet


def load(*docs: dict[str, Any]) -> Cluster:
    return parse_documents(list(docs))


def names(pods: tuple[Pod, ...] | list[Pod]) -> list[str]:
    return [p.name for p in pods]


def replica_set(name: str, deploy: str, labels: dict[str, str], replicas: int, hash_: str, **kw: Any) -> dict[str, Any]:
    """The ReplicaSet a Deployment made: its template and selector carry pod-template-hash."""
    rs = workload_manifest("ReplicaSet", name, {**labels, "pod-template-hash": hash_}, replicas, owner=("Deployment", deploy), **kw)
    rs["metadata"]["uid"] = f"uid-{name}"
    return rs


# ------------------------------------------------------------------------------------------- Deployment


def test_a_deployment_alone_becomes_replicas_pods_of_one_generated_replica_set() -> None:
    c = load(workload_manifest("Deployment", "web", WEB, 3))
    assert len(c.pending) == 3 and not c.pods
    hashes = {p.labels["pod-template-hash"] for p in c.pending}
    assert len(hashes) == 1
    (hash_,) = hashes
    assert re.fullmatch(f"{SAFE}{{10}}", hash_)
    for p in c.pending:
        assert re.fullmatch(f"web-{hash_}-{SAFE}{{5}}", p.name)
        assert p.owner_refs == (OwnerRef("ReplicaSet", f"web-{hash_}", "", True),)
        assert p.workload == "Deployment/default/web"
        assert p.labels == {"app": "web", "pod-template-hash": hash_}
    assert len(set(names(c.pending))) == 3


def test_generated_names_are_stable_across_runs_and_depend_on_the_template() -> None:
    first = names(load(workload_manifest("Deployment", "web", WEB, 3)).pending)
    again = names(load(workload_manifest("Deployment", "web", WEB, 3)).pending)
    changed = names(load(workload_manifest("Deployment", "web", WEB, 3, containers=[container(image="nginx:2")])).pending)
    assert first == again
    assert first[0].rsplit("-", 1)[0] != changed[0].rsplit("-", 1)[0]  # a new template is a new ReplicaSet


def test_a_dump_with_deployment_replica_set_and_two_running_pods_adds_only_the_missing_one() -> None:
    c = load(
        node_manifest("n1"),
        workload_manifest("Deployment", "web", WEB, 3),
        replica_set("web-5d8b7f9c6d", "web", WEB, 3, "5d8b7f9c6d"),
        pod_manifest("web-5d8b7f9c6d-aaaaa", labels={**WEB, "pod-template-hash": "5d8b7f9c6d"}, node="n1",
                     owner=("ReplicaSet", "web-5d8b7f9c6d")),
        pod_manifest("web-5d8b7f9c6d-bbbbb", labels={**WEB, "pod-template-hash": "5d8b7f9c6d"}, node="n1",
                     owner=("ReplicaSet", "web-5d8b7f9c6d")),
    )
    assert [p.workload for p in c.pods] == ["Deployment/default/web"] * 2
    (new,) = c.pending
    assert re.fullmatch(f"web-5d8b7f9c6d-{SAFE}{{5}}", new.name)
    assert new.labels == {"app": "web", "pod-template-hash": "5d8b7f9c6d"}
    assert new.owner_refs == (OwnerRef("ReplicaSet", "web-5d8b7f9c6d", "uid-web-5d8b7f9c6d", True),)
    assert new.workload == "Deployment/default/web"


def test_a_full_deployment_in_a_dump_adds_nothing_and_its_replica_set_is_not_expanded_again() -> None:
    c = load(
        node_manifest("n1"),
        workload_manifest("Deployment", "web", WEB, 2),
        replica_set("web-abc", "web", WEB, 2, "abc"),
        *[pod_manifest(f"web-abc-{i}", labels={**WEB, "pod-template-hash": "abc"}, node="n1",
                       owner=("ReplicaSet", "web-abc")) for i in range(2)],
    )
    assert not c.pending
    assert len(c.pods) == 2


def test_pods_whose_replica_set_is_missing_from_the_dump_still_count_for_their_deployment() -> None:
    # kubectl get deploy,pods -o yaml (no rs): the ReplicaSet name is <deployment>-<pod-template-hash>.
    c = load(
        node_manifest("n1"),
        workload_manifest("Deployment", "web", WEB, 3),
        *[pod_manifest(f"web-7f9c-{i}", labels={**WEB, "pod-template-hash": "7f9c"}, node="n1",
                       owner=("ReplicaSet", "web-7f9c")) for i in range(2)],
    )
    assert [p.workload for p in c.pods] == ["Deployment/default/web"] * 2
    assert len(c.pending) == 1


def test_a_pod_of_a_missing_replica_set_is_not_claimed_by_a_deployment_whose_selector_rejects_it() -> None:
    c = load(
        node_manifest("n1"),
        workload_manifest("Deployment", "web", WEB, 1),
        pod_manifest("web-7f9c-0", labels={"app": "other", "pod-template-hash": "7f9c"}, node="n1",
                     owner=("ReplicaSet", "web-7f9c")),
    )
    assert [p.workload for p in c.pods] == [""]
    assert len(c.pending) == 1


def test_a_terminating_pod_is_replaced() -> None:
    dying = pod_manifest("web-abc-0", labels={**WEB, "pod-template-hash": "abc"}, node="n1", owner=("ReplicaSet", "web-abc"))
    dying["metadata"]["deletionTimestamp"] = "2024-05-01T10:00:00Z"
    c = load(node_manifest("n1"), workload_manifest("Deployment", "web", WEB, 1), replica_set("web-abc", "web", WEB, 1, "abc"), dying)
    assert [p.terminating for p in c.pods] == [True]
    assert len(c.pending) == 1


def test_during_a_rollout_old_pods_count_and_new_pods_get_a_new_hash() -> None:
    c = load(
        node_manifest("n1"),
        workload_manifest("Deployment", "web", WEB, 3, containers=[container(image="web:2")]),
        replica_set("web-old", "web", WEB, 2, "old", containers=[container(image="web:1")]),
        *[pod_manifest(f"web-old-{i}", labels={**WEB, "pod-template-hash": "old"}, node="n1",
                       owner=("ReplicaSet", "web-old")) for i in range(2)],
    )
    (new,) = c.pending
    assert new.labels["pod-template-hash"] != "old"
    assert new.name.startswith(f"web-{new.labels['pod-template-hash']}-")


def test_the_new_replica_set_is_the_one_whose_template_matches_the_deployment() -> None:
    c = load(
        workload_manifest("Deployment", "web", WEB, 2, containers=[container(image="web:2")]),
        replica_set("web-old", "web", WEB, 0, "old", containers=[container(image="web:1")]),
        replica_set("web-new", "web", WEB, 2, "new", containers=[container(image="web:2")]),
    )
    assert {p.labels["pod-template-hash"] for p in c.pending} == {"new"}
    assert all(p.name.startswith("web-new-") for p in c.pending)


def test_match_label_keys_on_pod_template_hash_see_the_generated_pods_hash() -> None:
    spread = [{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "DoNotSchedule",
               "labelSelector": {"matchLabels": WEB}, "matchLabelKeys": ["pod-template-hash"]}]
    anti = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": WEB}, "matchLabelKeys": ["pod-template-hash"], "topologyKey": "kubernetes.io/hostname"}]}}
    c = load(workload_manifest("Deployment", "web", WEB, 2,
                               template_spec={"topologySpreadConstraints": spread, "affinity": anti}))
    for p in c.pending:
        hash_ = p.labels["pod-template-hash"]
        expected = (Requirement("pod-template-hash", "In", (hash_,)),)
        assert p.spread_constraints[0].label_selector.match_expressions == expected
        assert p.affinity.anti_required[0].label_selector.match_expressions == expected


def test_a_replica_set_of_its_own_names_pods_after_itself() -> None:
    c = load(workload_manifest("ReplicaSet", "cache", {"app": "cache"}, 2))
    assert all(re.fullmatch(f"cache-{SAFE}{{5}}", n) for n in names(c.pending))
    assert {p.workload for p in c.pending} == {"ReplicaSet/default/cache"}
    assert {p.owner_refs for p in c.pending} == {(OwnerRef("ReplicaSet", "cache", "", True),)}


def test_a_replica_set_whose_deployment_is_not_in_the_input_is_expanded_on_its_own() -> None:
    c = load(replica_set("web-abc", "web", WEB, 2, "abc"))
    assert len(c.pending) == 2 and {p.workload for p in c.pending} == {"ReplicaSet/default/web-abc"}


def test_zero_replicas_make_no_pods() -> None:
    assert not load(workload_manifest("Deployment", "web", WEB, 0)).pending


# ------------------------------------------------------------------------------------------- StatefulSet


def test_a_stateful_set_names_its_pods_by_ordinal_skipping_those_that_exist() -> None:
    c = load(node_manifest("n1"), workload_manifest("StatefulSet", "web", WEB, 4),
             pod_manifest("web-1", labels=WEB, node="n1", owner=("StatefulSet", "web")))
    assert names(c.pending) == ["web-0", "web-2", "web-3"]
    web2 = c.pending[1]
    assert web2.labels == {"app": "web", "statefulset.kubernetes.io/pod-name": "web-2", "apps.kubernetes.io/pod-index": "2"}
    assert web2.owner_refs == (OwnerRef("StatefulSet", "web", "", True),)


def test_a_stateful_set_starts_at_spec_ordinals_start_and_ignores_pods_outside_its_range() -> None:
    c = load(node_manifest("n1"), workload_manifest("StatefulSet", "db", {"app": "db"}, 2, ordinals={"start": 5}),
             pod_manifest("db-9", labels={"app": "db"}, node="n1", owner=("StatefulSet", "db")))
    assert names(c.pending) == ["db-5", "db-6"]


def test_a_stateful_set_waits_for_a_terminating_pod_to_free_its_name() -> None:
    dying = pod_manifest("web-0", labels=WEB, node="n1", owner=("StatefulSet", "web"))
    dying["metadata"]["deletionTimestamp"] = "2024-05-01T10:00:00Z"
    c = load(node_manifest("n1"), workload_manifest("StatefulSet", "web", WEB, 2), dying)
    assert names(c.pending) == ["web-1"]


# --------------------------------------------------------------------------------------------------- Job


def job(**spec: Any) -> dict[str, Any]:
    j = workload_manifest("Job", "train", {"app": "train"}, **spec)
    j["metadata"]["uid"] = "job-uid"
    return j


def test_job_parallelism_capped_by_completions() -> None:
    assert len(load(job(parallelism=3, completions=5)).pending) == 3
    assert len(load(job(parallelism=3, completions=2)).pending) == 2
    assert len(load(job(parallelism=4)).pending) == 4
    assert len(load(job()).pending) == 1  # parallelism defaults to 1


def test_job_completions_already_succeeded_are_not_run_again() -> None:
    j = job(parallelism=3, completions=5)
    j["status"] = {"succeeded": 4}
    assert len(load(j).pending) == 1
    j["status"] = {"succeeded": 5}
    assert not load(j).pending


def test_a_suspended_job_makes_no_pods() -> None:
    assert not load(job(parallelism=3, suspend=True)).pending


def test_job_pods_carry_the_job_labels_and_stable_names() -> None:
    c = load(job(parallelism=2))
    for p in c.pending:
        assert re.fullmatch(f"train-{SAFE}{{5}}", p.name)
        assert p.labels == {"app": "train", "job-name": "train", "batch.kubernetes.io/job-name": "train",
                            "controller-uid": "job-uid", "batch.kubernetes.io/controller-uid": "job-uid"}
        assert p.owner_refs == (OwnerRef("Job", "train", "job-uid", True),)


def test_running_job_pods_count_toward_parallelism() -> None:
    c = load(node_manifest("n1"), job(parallelism=3, completions=10),
             pod_manifest("train-x", labels={"app": "train"}, node="n1", owner=("Job", "train")))
    assert len(c.pending) == 2


# --------------------------------------------------------------------------------------------- DaemonSet


def test_a_daemon_set_gets_one_pinned_pod_per_eligible_node_without_one() -> None:
    ds = workload_manifest("DaemonSet", "agent", {"app": "agent"}, template_spec={"nodeSelector": {"os": "linux"}})
    pending_daemon = pod_manifest("agent-pending", labels={"app": "agent"}, owner=("DaemonSet", "agent"), affinity={
        "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n4"]}]}]}}})
    c = load(
        node_manifest("n1", {"os": "linux"}),  # runs one already
        node_manifest("n2", {"os": "linux"}),  # needs one
        node_manifest("n3", {"os": "windows"}),  # not selected
        node_manifest("n4", {"os": "linux"}),  # one is already pending for it
        node_manifest("n5", {"os": "linux"}, taints=[{"key": "dedicated", "value": "db", "effect": "NoSchedule"}]),
        node_manifest("n6", {"os": "linux"}, taints=[{"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}]),
        ds,
        pod_manifest("agent-running", labels={"app": "agent"}, node="n1", owner=("DaemonSet", "agent")),
        pending_daemon,
    )
    generated = [p for p in c.pending if p.name != "agent-pending"]
    pinned = [p.affinity.node_required.terms[0].match_fields[0].values[0] for p in generated]
    # n6's cordon taint is tolerated by the controller's default tolerations.
    assert pinned == ["n2", "n6"]
    for p in generated:
        assert re.fullmatch(f"agent-{SAFE}{{5}}", p.name)
        assert p.workload == "DaemonSet/default/agent"
        assert any(t.key == "node.kubernetes.io/unschedulable" and t.operator == "Exists" for t in p.tolerations)


def test_a_daemon_set_tolerating_a_taint_covers_the_tainted_node() -> None:
    ds = workload_manifest("DaemonSet", "agent", {"app": "agent"}, template_spec={"tolerations": [{"operator": "Exists"}]})
    c = load(node_manifest("n1", taints=[{"key": "gpu", "effect": "NoExecute"}]), ds)
    assert len(c.pending) == 1


# -------------------------------------------------------------------------------------- groups and priority


def test_pod_group_membership_comes_from_the_label() -> None:
    group = {"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup",
             "metadata": {"name": "gang", "namespace": "ml"}, "spec": {"minMember": 3}}
    labels = {"app": "train", POD_GROUP_LABEL: "gang"}
    c = load(group, workload_manifest("Job", "train", labels, namespace="ml", parallelism=3),
             pod_manifest("solo", namespace="ml", labels={POD_GROUP_LABEL: "gang"}), pod_manifest("other", namespace="ml"))
    assert [(g.key, g.min_member) for g in c.pod_groups] == [("ml/gang", 3)]
    assert sorted(p.pod_group for p in c.pending) == ["", "ml/gang", "ml/gang", "ml/gang", "ml/gang"]
    assert not c.warnings


def test_a_pod_group_label_without_the_pod_group_warns() -> None:
    c = load(pod_manifest("a", labels={POD_GROUP_LABEL: "ghost"}), pod_manifest("b", labels={POD_GROUP_LABEL: "ghost"}))
    assert [p.pod_group for p in c.pending] == ["default/ghost"] * 2
    assert len(c.warnings) == 1 and "PodGroup that is not in the input (2 pods)" in c.warnings[0]


def test_other_pod_group_apis_are_skipped() -> None:
    volcano = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup", "metadata": {"name": "g"}, "spec": {"minMember": 2}}
    c = load(volcano)
    assert not c.pod_groups and c.skipped == {"PodGroup (scheduling.volcano.sh/v1beta1)": 1}


def priority_class(name: str, value: int, default: bool = False) -> dict[str, Any]:
    return {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name},
            "value": value, "globalDefault": default}


def test_priority_from_spec_class_or_global_default() -> None:
    c = load(
        priority_class("high", 1000), priority_class("normal", 10, default=True),
        pod_manifest("explicit", priority=7),
        pod_manifest("classed", priorityClassName="high"),
        pod_manifest("explicit-wins", priority=3, priorityClassName="high"),  # as admitted pods in a dump carry it
        pod_manifest("defaulted"),
        pod_manifest("system", priorityClassName="system-node-critical"),
        workload_manifest("Deployment", "web", WEB, 1, template_spec={"priorityClassName": "high"}),
        workload_manifest("Deployment", "zero", {"app": "zero"}, 1, template_spec={"priority": 0}),
    )
    got = {p.name.split("-")[0] if p.workload else p.name: p.priority for p in c.pending}
    assert got == {"explicit": 7, "classed": 1000, "explicit-wins": 3, "defaulted": 10, "system": 2000001000,
                   "web": 1000, "zero": 0}
    assert not c.warnings


def test_an_unknown_priority_class_means_priority_zero_and_one_warning() -> None:
    c = load(pod_manifest("a", priorityClassName="gold"), pod_manifest("b", priorityClassName="gold"))
    assert [p.priority for p in c.pending] == [0, 0]
    assert len(c.warnings) == 1
    assert "spec.priorityClassName 'gold' is not in the input (and 1 more); priority 0 assumed" in c.warnings[0]


# ------------------------------------------------------------------------------------- existing vs pending


def test_pods_with_node_name_are_existing_and_the_others_pending() -> None:
    c = load(node_manifest("n1"), pod_manifest("bound", node="n1"), pod_manifest("waiting"))
    assert names(c.pods) == ["bound"] and names(c.pending) == ["waiting"]


def test_finished_pods_and_unbound_terminating_pods_are_skipped() -> None:
    done = pod_manifest("done", node="n1", owner=("Job", "train"))
    done["status"] = {"phase": "Succeeded"}
    failed = pod_manifest("failed", node="n1")
    failed["status"] = {"phase": "Failed"}
    leaving = pod_manifest("leaving")
    leaving["metadata"]["deletionTimestamp"] = "2024-05-01T10:00:00Z"
    c = load(node_manifest("n1"), done, failed, leaving, job(parallelism=1))
    assert not c.pods
    assert len(c.pending) == 1  # the Job's pod: a succeeded pod is not an active one
    assert c.skipped == {"Pod (phase Succeeded)": 1, "Pod (phase Failed)": 1, "Pod (terminating, unbound)": 1}


def test_pending_pods_keep_input_order_and_generated_pods_follow() -> None:
    c = load(pod_manifest("b"), workload_manifest("Deployment", "web", WEB, 1), pod_manifest("a"))
    assert names(c.pending)[:2] == ["b", "a"]
    assert [p.order for p in c.pending] == sorted(p.order for p in c.pending)


def test_generate_name_gets_a_stable_suffix() -> None:
    doc = pod_manifest("x")
    del doc["metadata"]["name"]
    doc["metadata"]["generateName"] = "batch-"
    first, again = load(doc).pending[0].name, load(doc).pending[0].name
    assert first == again and re.fullmatch(f"batch-{SAFE}{{5}}", first)
