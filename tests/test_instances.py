"""The bundled instances (instances/*.yaml): each loads cleanly, holds the objects its documentation example
describes, and — simulated by the greedy kube-scheduler and judged by the verifier — ends the way its
opening comment says it should."""
from __future__ import annotations

from collections import Counter
from functools import cache
from pathlib import Path

import pytest

from podplan.models.loader import load_paths
from podplan.models.objects import Cluster, Pod
from podplan.models.selectors import selector_matches
from podplan.optimizer.greedy import simulate
from podplan.optimizer.verify import verify

INSTANCES = Path(__file__).resolve().parents[1] / "instances"
# Every top-level file is a cluster; other documents (node types, templates, scenarios, policies) live in folders.
FILES = sorted(INSTANCES.glob("*.yaml"))
ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"


@cache
def load(name: str) -> Cluster:
    return load_paths([str(INSTANCES / f"{name}.yaml")])


@cache
def greedy(name: str) -> dict[str, str]:
    """pod key -> node chosen by the simulated kube-scheduler (pending pods are absent)."""
    return dict(simulate(load(name)).placements)


def pending_named(cluster: Cluster, prefix: str) -> list[Pod]:
    return [p for p in cluster.pending if p.name.startswith(prefix)]


def zone_of(cluster: Cluster, node: str) -> str:
    return next(n.labels[ZONE] for n in cluster.nodes if n.name == node)


def test_the_documented_instances_are_bundled() -> None:
    assert {f.stem for f in FILES} == {"web-store", "zone-affinity", "taints-dedicated-gpu", "zone-spread",
                                       "pdb-drain", "multi-tenant", "cluster-dump", "preemption", "bin-packing",
                                       "consolidate"}


@pytest.mark.parametrize("path", FILES,
                         ids=[f"{f.stem} opens with a one-line comment and loads without warnings" for f in FILES])
def test_instance_opens_with_a_comment_and_loads_cleanly(path: Path) -> None:
    first = path.read_text().splitlines()[0]
    assert first.startswith("# ") and len(first) > 20
    cluster = load(path.stem)
    assert cluster.nodes and (cluster.pods or cluster.pending)
    assert cluster.warnings == () and cluster.skipped == {}
    for node in cluster.nodes:
        assert node.labels[HOST] == node.name and ZONE in node.labels and "node.kubernetes.io/instance-type" in node.labels
        assert node.allocatable["cpu"] > 0 and node.allocatable["memory"] > 0 and node.allocatable["pods"] == 110


@pytest.mark.parametrize("path", FILES, ids=[f"the simulator's placement of {f.stem} passes the verifier" for f in FILES])
def test_simulated_placement_of_every_instance_verifies(path: Path) -> None:
    cluster = load(path.stem)
    report = verify(cluster, greedy(path.stem))
    assert report.ok, [v for v in report.violations if not v.preexisting]
    # Static pods are started by the kubelet, never judged by kube-scheduler: kubeadm's tolerate only NoExecute.
    mirrors = {p.key for p in cluster.pods if p.mirror}
    assert [v for v in report.violations if v.pod not in mirrors] == [], "the input state itself obeys every rule"


# ------------------------------------------------------------------------------------------------ web-store


def test_web_store_holds_the_docs_two_deployments_on_three_nodes() -> None:
    c = load("web-store")
    assert len(c.nodes) == 3 and not c.pods
    assert {w.name: w.replicas for w in c.workloads} == {"redis-cache": 3, "web-server": 3}
    cache_pod = pending_named(c, "redis-cache")[0]
    web_pod = pending_named(c, "web-server")[0]
    assert cache_pod.labels["app"] == "store" and web_pod.labels["app"] == "web-store"
    assert [t.topology_key for t in cache_pod.affinity.anti_required] == [HOST]
    assert selector_matches(cache_pod.affinity.anti_required[0].label_selector, {"app": "store"})
    assert selector_matches(web_pod.affinity.anti_required[0].label_selector, {"app": "web-store"})
    assert selector_matches(web_pod.affinity.pod_required[0].label_selector, {"app": "store"})


def test_web_store_simulates_to_one_web_and_one_cache_pod_per_node() -> None:
    c = load("web-store")
    placed = greedy("web-store")
    assert len(placed) == 6
    per_node = Counter((node, key.split("/")[1].split("-")[0]) for key, node in placed.items())
    assert per_node == Counter({(n.name, app): 1 for n in c.nodes for app in ("redis", "web")})


# --------------------------------------------------------------------------------------------- zone-affinity


def test_zone_affinity_puts_s1_in_zones_a_and_b_and_s2_in_zones_a_and_c() -> None:
    c = load("zone-affinity")
    zones = {sec: sorted(zone_of(c, p.node_name) for p in c.pods if p.labels.get("security") == sec) for sec in ("S1", "S2")}
    assert zones == {"S1": ["us-east-1a", "us-east-1b"], "S2": ["us-east-1a", "us-east-1c"]}
    pod = next(p for p in c.pending if p.name == "with-pod-affinity")
    assert [t.topology_key for t in pod.affinity.pod_required] == [ZONE]
    assert [(w.weight, w.term.topology_key) for w in pod.affinity.anti_preferred] == [(100, ZONE)]


def test_the_docs_pod_lands_in_the_zone_with_s1_and_without_s2() -> None:
    c = load("zone-affinity")
    placed = greedy("zone-affinity")
    assert zone_of(c, placed["default/with-pod-affinity"]) == "us-east-1b"
    audit = Counter(zone_of(c, n) for k, n in placed.items() if "audit-log" in k)
    assert audit == Counter({"us-east-1b": 2, "us-east-1a": 1}), "zone b has room for two, the third must take zone a"


# -------------------------------------------------------------------------------------- taints-dedicated-gpu


def test_dedicated_and_gpu_nodes_carry_their_taints_and_labels() -> None:
    c = load("taints-dedicated-gpu")
    taints = {n.name: [(t.key, t.value, t.effect) for t in n.taints] for n in c.nodes}
    assert taints == {"general-1": [], "general-2": [],
                      "dedicated-1": [("dedicated", "groupName", "NoSchedule")],
                      "dedicated-2": [("dedicated", "groupName", "NoSchedule")],
                      "gpu-1": [("nvidia.com/gpu", "", "NoSchedule")], "gpu-2": [("nvidia.com/gpu", "", "NoSchedule")]}
    assert all(n.labels.get("dedicated") == "groupName" for n in c.nodes if n.name.startswith("dedicated"))
    assert [n.allocatable.get("nvidia.com/gpu", 0) for n in c.nodes] == [0, 0, 0, 0, 4, 4]


def test_tolerating_pods_reach_their_nodes_and_intolerant_ones_stay_pending() -> None:
    c = load("taints-dedicated-gpu")
    placed = greedy("taints-dedicated-gpu")
    where = {key.split("/")[1]: node for key, node in placed.items()}
    assert all(where[p.name].startswith("dedicated") for p in pending_named(c, "group-app"))
    assert where["cuda-vectoradd"].startswith("gpu")
    assert all(where[p.name].startswith("gpu") for p in pending_named(c, "resnet-train"))
    assert all(where[p.name].startswith("general") for p in pending_named(c, "web-frontend"))
    assert "gpu-no-toleration" not in where and "dedicated-no-toleration" not in where
    assert len(placed) == len(c.pending) - 2


# ---------------------------------------------------------------------------------------------- zone-spread


def test_zone_spread_deployment_has_both_constraints_and_two_running_replicas() -> None:
    c = load("zone-spread")
    pods = pending_named(c, "checkout")
    assert len(pods) == 4
    zone_c, host_c = pods[0].spread_constraints
    assert (zone_c.topology_key, zone_c.max_skew, zone_c.min_domains, zone_c.when_unsatisfiable) == (
        ZONE, 1, 3, "DoNotSchedule")
    assert (host_c.topology_key, host_c.max_skew, host_c.when_unsatisfiable) == (HOST, 1, "ScheduleAnyway")
    running = [p for p in c.pods if p.workload == "Deployment/shop/checkout"]
    assert sorted(zone_of(c, p.node_name) for p in running) == ["us-east-1a", "us-east-1b"]


def test_zone_spread_ends_with_two_checkout_pods_per_zone() -> None:
    c = load("zone-spread")
    placed = greedy("zone-spread")
    zones = Counter(zone_of(c, p.node_name) for p in c.pods if p.workload == "Deployment/shop/checkout")
    zones.update(zone_of(c, n) for n in placed.values())
    assert zones == Counter({"us-east-1a": 2, "us-east-1b": 2, "us-east-1c": 2})


# ------------------------------------------------------------------------------------------------ pdb-drain


def test_pdb_drain_is_the_docs_three_node_example() -> None:
    c = load("pdb-drain")
    assert [n.name for n in c.nodes] == ["node-1", "node-2", "node-3"] and not c.pending
    assert {p.name: (p.node_name, p.workload) for p in c.pods} == {
        "pod-a": ("node-1", "Deployment/default/frontend"), "pod-b": ("node-2", "Deployment/default/frontend"),
        "pod-c": ("node-3", "Deployment/default/frontend"), "pod-x": ("node-1", "Deployment/default/reporter")}
    (pdb,) = c.pdbs
    assert pdb.min_available == 2
    assert sorted(p.name for p in c.pods if selector_matches(pdb.selector, p.labels)) == ["pod-a", "pod-b", "pod-c"]
    assert {w.kind for w in c.workloads} == {"Deployment", "ReplicaSet"}
    assert all(p.controller is not None and p.controller.kind == "ReplicaSet" for p in c.pods)


# --------------------------------------------------------------------------------------------- multi-tenant


def test_multi_tenant_terms_use_namespace_selector_and_label_keys() -> None:
    c = load("multi-tenant")
    assert {n: ns.labels.get("tenant") for n, ns in c.namespaces.items()} == {
        "tenant-a": "tenant-a", "tenant-b": "tenant-b", "monitoring": None}
    api = pending_named(c, "api-7d9c6b5f8d")
    assert len(api) == 3
    isolation, rollout = api[0].affinity.anti_required
    assert isolation.mismatch_label_keys == ("tenant",) and isolation.namespace_selector is not None
    assert not selector_matches(isolation.label_selector, {"tenant": "tenant-a"})
    assert selector_matches(isolation.label_selector, {"tenant": "tenant-b"})
    assert rollout.match_label_keys == ("pod-template-hash",)
    assert not selector_matches(rollout.label_selector, {"app": "api", "pod-template-hash": "5b8f7c9d6c"})


def test_tenants_never_share_a_node_and_the_new_rollout_spreads() -> None:
    placed = greedy("multi-tenant")
    assert sorted(n for k, n in placed.items() if k.startswith("tenant-a/")) == ["worker-1", "worker-2", "worker-4"]
    assert [n for k, n in placed.items() if k.startswith("tenant-b/")] == ["worker-3"]


# --------------------------------------------------------------------------------------------- cluster-dump


def test_cluster_dump_links_pods_to_their_controllers_and_counts_pending_replicas() -> None:
    c = load("cluster-dump")
    assert len(c.nodes) == 4
    assert sorted(p.name for p in c.pods if p.mirror) == [
        "etcd-k8s-cp-1", "kube-apiserver-k8s-cp-1", "kube-controller-manager-k8s-cp-1", "kube-scheduler-k8s-cp-1"]
    assert Counter(p.workload for p in c.pods) == Counter({
        "": 4, "DaemonSet/kube-system/kube-proxy": 4, "Deployment/kube-system/coredns": 2,
        "Deployment/kube-system/metrics-server": 1, "Deployment/shop/frontend": 3, "Deployment/shop/cart": 2})
    assert sorted(p.name for p in c.pending if not p.workload) == ["debug-shell", "report-backfill"]
    assert [p.workload for p in c.pending if p.workload] == ["Deployment/shop/frontend"] * 2
    priorities = {p.name: p.priority for p in c.pods if p.name.startswith(("etcd", "coredns"))}
    assert priorities == {"etcd-k8s-cp-1": 2000001000, "coredns-7db6d8ff4d-5pcxw": 2000000000,
                          "coredns-7db6d8ff4d-kx8vd": 2000000000}


def test_cluster_dump_backfill_pod_fits_no_node_as_its_status_says() -> None:
    placed = greedy("cluster-dump")
    assert "shop/report-backfill" not in placed
    assert {"default/debug-shell"} | {k for k in placed if "frontend" in k} == set(placed)
