"""How the cases in this folder were ported: the descheduler's test builders (sigs.k8s.io/descheduler
test/test_utils.go: BuildTestNode, BuildTestPod, SetRSOwnerRef, ...) as small functions that write real
Kubernetes objects, and each ported table row as one call. `python tests/descheduler_conformance/port.py`
rewrites the YAML files; the YAML files are what the conformance test reads (FORMAT.md)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).parent
SYSTEM_CRITICAL = 2000000000
MIRROR = {"kubernetes.io/config.source": "api", "kubernetes.io/config.mirror": "mirror"}


def node(name: str, cpu: int, mem: int, pods: int, labels: dict | None = None, unschedulable: bool = False,
         taints: list | None = None) -> dict[str, Any]:
    """BuildTestNode: allocatable cpu (millicores), memory (bytes), pods."""
    spec: dict[str, Any] = {}
    if unschedulable:
        spec["unschedulable"] = True
    if taints:
        spec["taints"] = taints
    out = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": dict(labels or {})},
           "status": {"allocatable": {"cpu": f"{cpu}m", "memory": str(mem), "pods": str(pods)}}}
    if spec:
        out["spec"] = spec
    return out


OWNERS = {"rs": {"apiVersion": "v1", "kind": "ReplicaSet", "name": "replicaset-1"},
          "ss": {"apiVersion": "v1", "kind": "StatefulSet", "name": "statefulset-1"},
          "ds": {"apiVersion": "v1", "kind": "DaemonSet", "name": ""},
          "pod": {"apiVersion": "v1", "kind": "Pod", "name": ""}}


def pod(name: str, cpu: int, mem: int, node_name: str, owner: str | None = None, *, ns: str = "default",
        priority: int | None = None, best_effort: bool = False, guaranteed: bool = False,
        local_storage: bool = False, mirror: bool = False, labels: dict | None = None,
        node_selector: dict | None = None, affinity: dict | None = None, tolerations: list | None = None,
        spread: list | None = None, image: str = "", owner_name: str = "",
        annotations: dict | None = None, extra_images: tuple[str, ...] = (),
        owners: list | None = None, terminating: bool = False) -> dict[str, Any]:
    """BuildTestPod(name, cpu, memory, node) with its `apply` functions as keywords: owner (SetRSOwnerRef
    "rs", SetDSOwnerRef "ds", SetNormalOwnerRef "pod", SetSSOwnerRef "ss"), SetPodPriority, MakeBestEffortPod,
    MakeGuaranteedPod, SetHostPathEmptyDirVolumeSource, GetMirrorPodAnnotation."""
    requests: dict[str, str] = {}
    if cpu >= 0:
        requests["cpu"] = f"{cpu}m"
    if mem >= 0:
        requests["memory"] = str(mem)
    container: dict[str, Any] = {"name": "c", "image": image}
    if not best_effort:
        container["resources"] = {"requests": requests}
        if guaranteed:
            container["resources"]["limits"] = dict(requests)
    meta: dict[str, Any] = {"name": name, "namespace": ns, "uid": f"uid-{name}"}
    if labels:
        meta["labels"] = dict(labels)
    ann = dict(annotations or {})
    if mirror:
        ann.update(MIRROR)
    if ann:
        meta["annotations"] = ann
    if owner:
        ref = dict(OWNERS[owner])
        if owner_name:
            ref["name"] = owner_name
        meta["ownerReferences"] = [ref]
    if owners is not None:
        meta["ownerReferences"] = owners
    if terminating:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    containers = [container] + [{"name": img, "image": img} for img in extra_images]
    spec: dict[str, Any] = {"nodeName": node_name, "containers": containers}
    if priority is not None:
        spec["priority"] = priority
    if local_storage:
        spec["volumes"] = [{"name": "sample", "hostPath": {"path": "somePath"}, "emptyDir": {"sizeLimit": "10"}}]
    if node_selector:
        spec["nodeSelector"] = dict(node_selector)
    if affinity:
        spec["affinity"] = affinity
    if tolerations:
        spec["tolerations"] = tolerations
    if spread:
        spec["topologySpreadConstraints"] = spread
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec,
            "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}}


def write(plugin: str, index: int, slug: str, source: str, args: dict, objects: list, evicted: int,
          pods: list[str] | None = None, evictor: dict | None = None, limits: dict | None = None,
          notes: str = "") -> None:
    folder = HERE / plugin.lower()
    folder.mkdir(exist_ok=True)
    case: dict[str, Any] = {"source": source, "plugin": plugin, "args": args}
    if evictor:
        case["evictor"] = evictor
    if limits:
        case["limits"] = limits
    case["objects"] = objects
    case["expect"] = {"evicted": evicted}
    if pods is not None:
        case["expect"]["pods"] = pods
    if notes:
        case["notes"] = notes
    (folder / f"{index:03d}-{slug}.yaml").write_text(yaml.safe_dump(case, sort_keys=False, width=120))


# ------------------------------------------------------------------------------------ LowNodeUtilization
LNU = "pkg/framework/plugins/nodeutilization/lownodeutilization_test.go :: TestLowNodeUtilization :: "
CPU_PODS = {"thresholds": {"cpu": 30, "pods": 30}, "targetThresholds": {"cpu": 50, "pods": 50}}


def three_nodes(n2: dict | None = None, with_n3: bool = True) -> list:
    out = [node("n1", 4000, 3000, 9), n2 or node("n2", 4000, 3000, 10)]
    if with_n3:
        out.append(node("n3", 4000, 3000, 10, unschedulable=True))
    return out


def kept(mem: int = 0, critical_owner: bool = True) -> list:
    """p6 (DaemonSet), p7 (local storage, mirror), p8 (system critical): the pods upstream marks 'won't be evicted'."""
    return [pod("p6", 400, mem, "n1", "ds"),
            pod("p7", 400, mem, "n1", "pod", local_storage=True, mirror=True),
            pod("p8", 400, mem, "n1", "pod" if critical_owner else None, ns="kube-system", priority=SYSTEM_CRITICAL)]


def lnu() -> None:
    fit = {"nodeFit": True}
    rs5 = [pod(f"p{i}", 400, 0, "n1", "rs") for i in range(1, 6)]
    write("LowNodeUtilization", 1, "no-evictable-pods", LNU + "no evictable pods", CPU_PODS,
          three_nodes() + [pod(f"p{i}", 400, 0, "n1", "ds") for i in range(1, 5)] + [
              pod("p5", 400, 0, "n1", "pod", local_storage=True, mirror=True),
              pod("p6", 400, 0, "n1", None, ns="kube-system", priority=SYSTEM_CRITICAL),
              pod("p9", 400, 0, "n2", "rs")], 0, evictor=fit)
    write("LowNodeUtilization", 2, "without-priorities", LNU + "without priorities", CPU_PODS,
          three_nodes() + rs5 + kept(critical_owner=False) + [pod("p9", 400, 0, "n2", "rs")], 4, evictor=fit)
    write("LowNodeUtilization", 3, "excluding-namespaces", LNU + "without priorities, but excluding namespaces",
          {**CPU_PODS, "evictableNamespaces": {"exclude": ["namespace1"]}},
          three_nodes() + [pod(f"p{i}", 400, 0, "n1", "pod", ns="namespace1") for i in range(1, 6)]
          + kept(critical_owner=False) + [pod("p9", 400, 0, "n2", "rs")], 0, evictor=fit)
    write("LowNodeUtilization", 4, "bare-pods-in-other-namespaces",
          LNU + "without priorities, but include only default namespace", CPU_PODS,
          three_nodes() + rs5[:2] + [pod(f"p{i}", 400, 0, "n1", None, ns=f"namespace{i}") for i in range(3, 6)]
          + kept() + [pod("p9", 400, 0, "n2", "rs")], 2, evictor=fit,
          notes="upstream sets evictableNamespaces.include [default], which validation refuses for this plugin and "
                "its code ignores (only exclude is read); the case omits it: the same evictions, p3-p5 are bare pods")
    write("LowNodeUtilization", 5, "stop-when-cpu-capacity-is-depleted",
          LNU + "without priorities stop when cpu capacity is depleted", CPU_PODS,
          three_nodes() + rs5 + kept() + [pod("p9", 400, 0, "n2", "rs")], 4, evictor=fit)
    write("LowNodeUtilization", 6, "with-priorities", LNU + "with priorities", CPU_PODS,
          three_nodes() + [pod(f"p{i}", 400, 0, "n1", "rs", priority=10000) for i in range(1, 5)]
          + [pod("p5", 400, 0, "n1", "rs", priority=0),
             pod("p6", 400, 0, "n1", "ds", priority=10000),
             pod("p7", 400, 0, "n1", "pod", priority=0, local_storage=True, mirror=True),
             pod("p8", 400, 0, "n1", "pod", ns="kube-system", priority=SYSTEM_CRITICAL),
             pod("p9", 400, 0, "n2", "rs")], 4, evictor=fit,
          notes="highPriority 10000, lowPriority 0 as in the test file")
    write("LowNodeUtilization", 7, "best-effort-pods-first", LNU + "without priorities evicting best-effort pods only",
          CPU_PODS, three_nodes() + [pod("p1", 400, 0, "n1", "rs", best_effort=True),
                                     pod("p2", 400, 0, "n1", "rs", best_effort=True),
                                     pod("p3", 400, 0, "n1", "rs"),
                                     pod("p4", 400, 0, "n1", "rs", best_effort=True),
                                     pod("p5", 400, 0, "n1", "rs", best_effort=True)]
          + kept() + [pod("p9", 400, 0, "n2", "rs")], 4, pods=["p1", "p2", "p4", "p5"], evictor=fit)
    write("LowNodeUtilization", 8, "only-other-node-unschedulable",
          LNU + "without priorities, but only other node is unschedulable", CPU_PODS,
          [node("n1", 4000, 3000, 9), node("n2", 4000, 3000, 10, unschedulable=True)] + rs5 + kept(), 0, evictor=fit)
    west = {"datacenter": "west"}
    east = {"datacenter": "east"}
    write("LowNodeUtilization", 9, "other-node-does-not-match-node-selector",
          LNU + "without priorities, but only other node doesn't match pod node selector for p4 and p5", CPU_PODS,
          [node("n1", 4000, 3000, 9), node("n2", 4000, 3000, 10, labels=east)] + rs5[:3]
          + [pod("p4", 400, 0, "n1", "pod", node_selector=west), pod("p5", 400, 0, "n1", "pod", node_selector=west)]
          + kept(), 3, evictor=fit)
    aff = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "datacenter", "operator": "In", "values": ["west"]}]}]}}}
    write("LowNodeUtilization", 10, "other-node-does-not-match-node-affinity",
          LNU + "without priorities, but only other node doesn't match pod node affinity for p4 and p5", CPU_PODS,
          [node("n1", 4000, 3000, 9), node("n2", 4000, 3000, 10, labels=east)] + rs5[:3]
          + [pod("p4", 400, 0, "n1", "pod", affinity=aff), pod("p5", 400, 0, "n1", "pod", affinity=aff)]
          + kept() + [pod("p9", 0, 0, "n2", "rs")], 3, evictor=fit)
    dev = {"thresholds": {"cpu": 5, "pods": 5}, "targetThresholds": {"cpu": 5, "pods": 5},
           "useDeviationThresholds": True}
    write("LowNodeUtilization", 11, "deviation-thresholds", LNU + "deviation thresholds", dev,
          three_nodes() + rs5 + kept() + [pod("p9", 400, 0, "n2", "rs")], 2, evictor=fit)
    write("LowNodeUtilization", 12, "deviation-thresholds-and-overevicting-memory",
          LNU + "deviation thresholds and overevicting memory", dev,
          [node("n1", 4000, 3000, 10), node("n2", 4000, 3000, 10), node("n3", 4000, 3000, 10, unschedulable=True)]
          + [pod(f"p{i}", 400, 375, "n1", "rs") for i in range(1, 6)] + kept(375)
          + [pod("p9", 400, 3000, "n2", "rs")], 0, evictor=fit)
    write("LowNodeUtilization", 13, "node-eviction-limit", LNU + "without priorities with node eviction limit",
          {**CPU_PODS, "evictionLimits": {"node": 2}},
          three_nodes() + rs5 + kept(critical_owner=False) + [pod("p9", 400, 0, "n2", "rs")], 2, evictor=fit)
    taint_src = "pkg/framework/plugins/nodeutilization/lownodeutilization_test.go :: TestLowNodeUtilizationWithTaints :: "
    pods_args = {"thresholds": {"pods": 20}, "targetThresholds": {"pods": 70}}
    n1, n2, n3 = node("n1", 2000, 3000, 10), node("n2", 1000, 3000, 10), node("n3", 1000, 3000, 10)
    n3t = node("n3", 1000, 3000, 10, taints=[{"key": "key", "value": "value", "effect": "NoSchedule"}])
    eight = [pod(f"pod_{i}_n1", 200, 0, "n1", "rs") for i in range(1, 9)]
    write("LowNodeUtilization", 14, "no-taints", taint_src + "No taints", pods_args,
          [n1, n2, n3] + eight + [pod("pod_9_n2", 200, 0, "n2", "rs")], 1, evictor=fit,
          limits={"maxNoOfPodsToEvictPerNode": 1},
          notes="upstream's evictor limits evictions per node to the expected count")
    write("LowNodeUtilization", 15, "no-pod-tolerates-node-taint", taint_src + "No pod tolerates node taint", pods_args,
          [n1, n3t] + eight + [pod("pod_9_n3", 200, 0, "n3", "rs")], 0, evictor=fit,
          limits={"maxNoOfPodsToEvictPerNode": 0})
    tol = pod("tolerate_pod", 200, 0, "n1", "rs", tolerations=[{"key": "key", "value": "value"}])
    write("LowNodeUtilization", 16, "pod-which-tolerates-node-taint", taint_src + "Pod which tolerates node taint",
          pods_args, [n1, n3t] + eight[:7] + [tol, pod("pod_9_n3", 200, 0, "n3", "rs")], 1,
          pods=["tolerate_pod"], evictor=fit, limits={"maxNoOfPodsToEvictPerNode": 1})
    write("LowNodeUtilization", 17, "tolerating-pod-with-total-limit-zero",
          taint_src + "Pod which tolerates node taint, set maxPodsToEvictTotal(0), should not be expelled",
          pods_args, [n1, n3t] + eight[:7] + [tol, pod("pod_9_n3", 200, 0, "n3", "rs")], 0, evictor=fit,
          limits={"maxNoOfPodsToEvictPerNode": 0, "maxNoOfPodsToEvictTotal": 0})


# ------------------------------------------------------------------------------------- RemoveDuplicates
RD = "pkg/framework/plugins/removeduplicates/removeduplicates_test.go :: "


def duplicates() -> None:
    def n(name: str, **kw: Any) -> dict:
        return node(name, 2000, 3000, 10, **kw)

    def p(name: str, node_name: str = "n1", owner: str | None = "rs", **kw: Any) -> dict:
        return pod(name, 100, 0, node_name, owner, **kw)

    two = [n("n1"), n("n2")]
    dev3 = [p(f"p{i}", ns="dev") for i in (1, 2, 3)]
    test3 = [p(f"p{i}", ns="test") for i in (8, 9, 10)]
    kept = [p("p4", owner="ds"), p("p5", owner="pod", local_storage=True), p("p6", owner=None, mirror=True),
            p("p7", owner=None, ns="kube-system", priority=SYSTEM_CRITICAL)]
    F = RD + "TestFindDuplicatePods :: "
    cases = [
        ("three-pods-same-replicaset", "Three pods in the `dev` Namespace, bound to same ReplicaSet. 1 should be evicted.",
         {}, two + dev3, 1, None),
        ("replicaset-kind-excluded", "Three pods in the `dev` Namespace, bound to same ReplicaSet, but ReplicaSet kind is "
         "excluded. 0 should be evicted.", {"excludeOwnerKinds": ["ReplicaSet"]}, two + dev3, 0, None),
        ("three-pods-in-test-namespace", "Three Pods in the `test` Namespace, bound to same ReplicaSet. 1 should be "
         "evicted.", {}, two + test3, 1, None),
        ("two-namespaces-same-replicaset-name", "Three Pods in the `dev` Namespace, three Pods in the `test` Namespace. "
         "Bound to ReplicaSet with same name. 4 should be evicted.", {}, two + dev3 + test3, 2, None),
        ("none-evictable", "Pods are: part of DaemonSet, with local storage, mirror pod annotation, critical pod "
         "annotation - none should be evicted.", {}, two + kept, 0, None),
        ("all-pods", "Test all Pods: 4 should be evicted.", {}, two + dev3 + kept + test3, 2, None),
        ("same-owner-different-images", "Pods with the same owner but different images should not be evicted", {},
         two + [p("p11", ns="different-images", image="foo"), p("p12", ns="different-images", image="bar")], 0, None),
        ("multiple-containers-do-not-match-themselves", "Pods with multiple containers should not match themselves",
         {}, two + [p("p13", ns="different-images", extra_images=("foo",))], 0, None),
        ("not-all-images-match", "Pods with matching ownerrefs and at not all matching image should not trigger an "
         "eviction", {}, two + [p("p11", ns="different-images", image="foo"),
                                p("p13", ns="different-images", extra_images=("foo",))], 0, None),
        ("only-other-node-tainted-nodefit", "Three pods in the `dev` Namespace, bound to same ReplicaSet. Only node "
         "available has a taint, and nodeFit set to true. 0 should be evicted.", {},
         [n("n1"), n("n3", taints=[{"key": "hardware", "value": "gpu", "effect": "NoSchedule"}])] + dev3, 0,
         {"nodeFit": True}),
        ("only-other-node-wrong-label-nodefit", "Three pods in the `node-fit` Namespace, bound to same ReplicaSet, all "
         "with a nodeSelector. Only node available has an incorrect node label, and nodeFit set to true. 0 should be "
         "evicted.", {}, [n("n1"), n("n4", labels={"datacenter": "east"})]
         + [p(x, ns="node-fit", node_selector={"datacenter": "west"}) for x in ("p15", "not1", "not2")], 0,
         {"nodeFit": True}),
        ("only-other-node-unschedulable-nodefit", "Three pods in the `node-fit` Namespace, bound to same ReplicaSet. "
         "Only node available is not schedulable, and nodeFit set to true. 0 should be evicted.", {},
         [n("n1"), n("n5", unschedulable=True)] + dev3, 0, {"nodeFit": True}),
        ("only-other-node-lacks-cpu-nodefit", "Three pods in the `node-fit` Namespace, bound to same ReplicaSet. Only "
         "node available does not have enough CPU, and nodeFit set to true. 0 should be evicted.", {},
         [n("n1"), node("n6", 200, 200, 10)] + dev3 + [pod("cpu-eater", 150, 150, "n6", None, ns="test")], 0,
         {"nodeFit": True}),
        ("only-other-node-has-cpu-nodefit", "Three pods in the `node-fit` Namespace, bound to same ReplicaSet. Only node "
         "available has enough CPU, and nodeFit set to true. 1 should be evicted.", {},
         [n("n1"), node("n6", 200, 200, 10)] + dev3 + [pod("cpu-saver", 100, 150, "n6", None, ns="test")], 1,
         {"nodeFit": True}),
    ]
    i = 0
    for i, (slug, name, args, objects, expected, evictor) in enumerate(cases, 1):
        notes = ""
        if slug == "two-namespaces-same-replicaset-name":
            notes = "the row's name says 4; its expectedEvictedPodCount is 2, which is what upstream asserts"
        if slug == "all-pods":
            notes = "the row's name says 4; its expectedEvictedPodCount is 2, which is what upstream asserts"
        if "not1" in str(objects):
            notes = "upstream names two pods NOT1 and NOT2; lower-cased here (names are not compared)"
        write("RemoveDuplicates", i, slug, F + name, args, objects, expected, evictor=evictor, notes=notes)
    U = RD + "TestRemoveDuplicatesUniformly :: "
    uni = [p("p1"), p("p2"), p("p3"), p("p4"), p("p5"), p("p6", "n2"), p("p7", "n2"), p("p8", "n2"), p("p9", "n3")]
    write("RemoveDuplicates", i + 1, "evict-uniformly", U + "Evict pods uniformly", {},
          [n("n1"), n("n2"), n("n3")] + uni, 2)
    write("RemoveDuplicates", i + 2, "evict-uniformly-one-node-left-out", U + "Evict pods uniformly with one node left "
          "out", {}, [n("n1"), n("n2")] + uni[:8], 1,
          notes="upstream passes only n1 and n2 to the plugin, p9 running on n3; here n3 and p9 are left out of the "
                "objects, which is the same input to the plugin")
    rs2 = [{"apiVersion": "v1", "kind": "ReplicaSet", "name": "replicaset-2"}]
    two_owners = uni[:]
    two_owners = [p(f"p1{i}", nn) for i, nn in zip(range(1, 10), ["n1"] * 5 + ["n2"] * 3 + ["n3"])] + [
        p(f"p2{i}", nn, owners=rs2) for i, nn in zip(range(1, 10), ["n1"] + ["n2"] * 3 + ["n3"] * 5)]
    write("RemoveDuplicates", i + 3, "evict-uniformly-two-owner-references",
          U + "Evict pods uniformly with two owner references", {}, [n("n1"), n("n2"), n("n3")] + two_owners, 4)


# ------------------------------------------------------------------------ RemovePodsViolatingNodeTaints
NT = "pkg/framework/plugins/removepodsviolatingnodetaints/node_taint_test.go :: TestDeletePodsViolatingNodeTaints :: "
# upstream's createNoScheduleTaint ignores its key and value: every test taint is testTaint<i>=test<i>
TAINT1 = {"key": "testTaint1", "value": "test1", "effect": "NoSchedule"}
PREFER1 = {"key": "testTaint1", "value": "test1", "effect": "PreferNoSchedule"}


def tol(key: str, value: str, index: int, effect: str = "NoSchedule") -> dict:
    return {"key": f"{key}{index}", "value": f"{value}{index}", "effect": effect}


def taints() -> None:
    def n(name: str, **kw: Any) -> dict:
        return node(name, 2000, 3000, 10, **kw)

    def p(name: str, node_name: str, owner: str | None = "pod", **kw: Any) -> dict:
        return pod(name, 100, 0, node_name, owner, **kw)

    t1 = [tol("testTaint", "test", 1)]
    tx = [tol("testTaintX", "testX", 1)]
    crit = {"ns": "kube-system", "priority": SYSTEM_CRITICAL}
    cases = [
        ("not-tolerating-evicted", "Pods not tolerating node taint should be evicted",
         [n("n1", taints=[TAINT1]), p("p1", "n1", tolerations=t1), p("p2", "n1"), p("p3", "n1", tolerations=t1)],
         1, {}, {}, {}, ["p2"]),
        ("other-tolerations-evicted", "Pods with tolerations but not tolerating node taint should be evicted",
         [n("n1", taints=[TAINT1]), p("p1", "n1", tolerations=t1), p("p3", "n1", tolerations=t1),
          p("p4", "n1", tolerations=tx)], 1, {}, {}, {}, ["p4"]),
        ("total-limit", "Only <maxNoOfPodsToEvictTotal> number of Pods not tolerating node taint should be evicted",
         [n("n1", taints=[TAINT1]), p("p1", "n1", tolerations=t1), p("p5", "n1"), p("p6", "n1")], 1, {}, {},
         {"maxNoOfPodsToEvictPerNode": 2, "maxNoOfPodsToEvictTotal": 1}, None),
        ("node-limit", "Only <maxPodsToEvictPerNode> number of Pods not tolerating node taint should be evicted",
         [n("n1", taints=[TAINT1]), p("p1", "n1", tolerations=t1), p("p5", "n1"), p("p6", "n1")], 1, {}, {},
         {"maxNoOfPodsToEvictPerNode": 1}, None),
        ("namespace-limit", "Only <maxNoOfPodsToEvictPerNamespace> number of Pods not tolerating node taint should be "
         "evicted", [n("n1", taints=[TAINT1]), p("p1", "n1", tolerations=t1), p("p5", "n1"), p("p6", "n1")], 1, {},
         {}, {"maxNoOfPodsToEvictPerNamespace": 1}, None),
        ("critical-pods-kept", "Critical pods not tolerating node taint should not be evicted",
         [n("n2", taints=[TAINT1]), p("p7", "n2", **crit), p("p8", "n2", "ds"), p("p9", "n2", local_storage=True),
          p("p10", "n2", mirror=True)], 0, {}, {}, {}, None),
        ("local-storage-evicted-when-allowed", "Critical pods except storage pods not tolerating node taint should "
         "not be evicted", [n("n2", taints=[TAINT1]), p("p7", "n2", **crit), p("p8", "n2", "ds"),
                            p("p9", "n2", local_storage=True), p("p10", "n2", mirror=True)], 1, {},
         {"evictLocalStoragePods": True}, {}, ["p9"]),
        ("only-non-critical-evicted", "Critical and non critical pods, only non critical pods not tolerating node "
         "taint should be evicted", [n("n2", taints=[TAINT1]), p("p7", "n2", **crit), p("p8", "n2", "ds"),
                                     p("p10", "n2", mirror=True), p("p11", "n2")], 1, {}, {}, {}, ["p11"]),
        ("critical-evicted-when-allowed", "Critical and non critical pods, pods not tolerating node taint should be "
         "evicted even if they are critical", [n("n1", taints=[TAINT1]), n("n2", taints=[TAINT1]), p("p2", "n1"),
                                              p("p7", "n2", **crit), p("p9", "n2", local_storage=True),
                                              p("p10", "n2", mirror=True)], 2, {},
         {"evictSystemCriticalPods": True}, {}, ["p2", "p7"]),
        ("nodefit-other-nodes-tainted", "Pod p2 doesn't tolerate taint on it's node, but also doesn't tolerate "
         "taints on other nodes", [n("n1", taints=[TAINT1]), n("n2", taints=[TAINT1]),
                                   p("p1", "n1", tolerations=t1), p("p2", "n1"), p("p3", "n1", tolerations=t1)],
         0, {}, {"nodeFit": True}, {}, None),
        ("nodefit-other-nodes-do-not-match-selector", "Pod p12 doesn't tolerate taint on it's node, but other nodes "
         "don't match it's selector", [n("n1", taints=[TAINT1]), n("n3", labels={"datacenter": "east"}),
                                       p("p1", "n1", tolerations=t1), p("p3", "n1", tolerations=t1),
                                       p("p11", "n2", node_selector={"datacenter": "west"})],
         0, {}, {"nodeFit": True}, {}, None),
        ("nodefit-other-nodes-unschedulable", "Pod p2 doesn't tolerate taint on it's node, but other nodes are "
         "unschedulable", [n("n1", taints=[TAINT1]), n("n4", unschedulable=True), p("p1", "n1", tolerations=t1),
                           p("p2", "n1"), p("p3", "n1", tolerations=t1)], 0, {}, {"nodeFit": True}, {}, None),
        ("prefer-no-schedule-not-enabled", "Pods not tolerating PreferNoSchedule node taint should not be evicted "
         "when not enabled", [n("n5", taints=[PREFER1]),
                              p("p13", "n5", tolerations=[tol("testTaint", "test", 0, "PreferNoSchedule")])],
         0, {}, {}, {}, None),
        ("prefer-no-schedule-enabled", "Pods not tolerating PreferNoSchedule node taint should be evicted when enabled",
         [n("n5", taints=[PREFER1]), p("p13", "n5", tolerations=[tol("testTaint", "test", 0, "PreferNoSchedule")])],
         1, {"includePreferNoSchedule": True}, {}, {}, ["p13"]),
        ("excluded-taint-by-key", "Pods not tolerating excluded node taints (by key) should not be evicted",
         [n("n1", taints=[TAINT1]), p("p2", "n1")], 0, {"excludedTaints": ["excludedTaint1", "testTaint1"]}, {}, {},
         None),
        ("excluded-taint-by-key-and-value", "Pods not tolerating excluded node taints (by key and value) should not "
         "be evicted", [n("n1", taints=[TAINT1]), p("p2", "n1")], 0, {"excludedTaints": ["testTaint1=test1"]}, {},
         {}, None),
        ("excluded-taint-other-value", "The excluded taint matches the key of node1's taint, but does not match the "
         "value", [n("n1", taints=[TAINT1]), p("p2", "n1")], 1, {"excludedTaints": ["testTaint1=test2"]}, {}, {},
         ["p2"]),
        ("nodefit-only-node-too-small", "Critical and non critical pods, pods not tolerating node taint can't be "
         "evicted because the only available node does not have enough resources.",
         [n("n1", taints=[TAINT1]), node("n6", 1, 1, 1, taints=[PREFER1]), p("p2", "n1")], 0, {},
         {"evictSystemCriticalPods": True, "nodeFit": True}, {}, None),
        ("included-taint-tolerated", "Pods tolerating included taints should not get evicted even with other taints "
         "present", [n("n7", taints=[TAINT1, TAINT1]), p("p1", "n1", tolerations=t1)], 0,
         {"includedTaints": ["testTaint1=test1"]}, {}, {}, None),
        ("taint-not-included", "Pods not tolerating not included taints should not get evicted",
         [n("n1", taints=[TAINT1]), p("p1", "n1", tolerations=t1), p("p2", "n1"), p("p4", "n1", tolerations=tx)], 0,
         {"includedTaints": ["testTaint2=test2"]}, {}, {}, None),
        ("included-taint-not-tolerated", "Pods tolerating includedTaint should not get evicted. Pods not tolerating "
         "includedTaints should get evicted", [n("n1", taints=[TAINT1]), p("p1", "n1", tolerations=t1),
                                               p("p2", "n1"), p("p3", "n1", tolerations=t1)], 1,
         {"includedTaints": ["testTaint1=test1"]}, {}, {}, ["p2"]),
    ]
    for i, (slug, name, objects, expected, args, evictor, limits, pods) in enumerate(cases, 1):
        notes = ""
        if slug == "nodefit-only-node-too-small":
            notes = ("upstream's row also holds p7, p9, p10 on n2, a node it does not pass to the plugin; they are "
                     "left out here, the same input to the plugin")
        if slug == "nodefit-other-nodes-do-not-match-selector":
            notes = "p11 runs on n2, a node upstream does not pass to the plugin: it is never looked at"
        if slug == "included-taint-tolerated":
            notes = ("withBothTaints1 makes two identical taints (upstream's createNoScheduleTaint ignores its "
                     "arguments); p1 runs on n1, which upstream does not pass to the plugin")
        write("RemovePodsViolatingNodeTaints", i, slug, NT + name, args, objects, expected, pods=pods,
              evictor=evictor, limits=limits, notes=notes)


# ---------------------------------------------------------------------- RemovePodsViolatingNodeAffinity
NA = ("pkg/framework/plugins/removepodsviolatingnodeaffinity/node_affinity_test.go :: "
      "TestRemovePodsViolatingNodeAffinity :: ")
REQ, PREF = "requiredDuringSchedulingIgnoredDuringExecution", "preferredDuringSchedulingIgnoredDuringExecution"


def node_affinity() -> None:
    desired = {"kubernetes.io/desiredNode": "yes"}
    term = {"matchExpressions": [{"key": "kubernetes.io/desiredNode", "operator": "In", "values": ["yes"]}]}

    def pods_on(node_name: str, kind: str, terminating: bool = False) -> list:
        aff = {"nodeAffinity": {REQ: {"nodeSelectorTerms": [term]}}} if kind == REQ else \
            {"nodeAffinity": {PREF: [{"weight": 10, "preference": term}]}}
        return [pod("podWithNodeAffinity", 100, 0, node_name, "pod", affinity=aff, terminating=terminating),
                pod("pod1", 100, 0, node_name, "pod", terminating=terminating),
                pod("pod2", 100, 0, node_name, "pod", terminating=terminating)]

    without = node("nodeWithoutLabels", 2000, 3000, 10)
    with_ = node("nodeWithLabels", 2000, 3000, 10, labels=desired)
    unsched = node("unschedulableNodeWithLabels", 2000, 3000, 10, labels=desired, unschedulable=True)
    i = 0
    rows = []
    for kind, tag in ((REQ, "required"), (PREF, "preferred")):
        rows += [
            (f"correctly-scheduled-{tag}", f"Pod is correctly scheduled on node, no eviction expected [{tag} affinity]",
             kind, [with_] + pods_on("nodeWithLabels", kind), 0, {}, {}),
            (f"evicted-{tag}", "Pod is scheduled on node without matching labels, another schedulable node available, "
             + ("should be evicted" if kind == REQ else "with better fit, should be evicted"),
             kind, [without, with_] + pods_on("nodeWithoutLabels", kind), 1, {}, {}),
            (f"node-limit-1-{tag}", "Pod is scheduled on node without matching labels, another schedulable node "
             f"available, maxPodsToEvictPerNode set to 1, should be evicted [{tag} affinity]", kind,
             [without, with_] + pods_on("nodeWithoutLabels", kind), 1, {"maxNoOfPodsToEvictPerNode": 1}, {}),
            (f"node-limit-0-{tag}", "Pod is scheduled on node without matching labels, another schedulable node "
             f"available, maxPodsToEvictPerNode set to 0, should be not evicted [{tag} affinity]", kind,
             [without, with_] + pods_on("nodeWithoutLabels", kind), 0, {"maxNoOfPodsToEvictPerNode": 0}, {}),
            (f"terminating-{tag}", "Pod is scheduled on node without matching labels, another schedulable node "
             f"available, maxPodsToEvictPerNode set to 1, no pod evicted since pod terminating [{tag} affinity]", kind,
             [without, with_] + pods_on("nodeWithoutLabels", kind, True), 0, {"maxNoOfPodsToEvictPerNode": 1}, {}),
            (f"namespace-limit-1-{tag}", "Pod is scheduled on node without matching labels, another schedulable node "
             f"available, maxNoOfPodsToEvictPerNamespace set to 1, should be evicted [{tag} affinity]", kind,
             [without, with_] + pods_on("nodeWithoutLabels", kind), 1, {"maxNoOfPodsToEvictPerNamespace": 1}, {}),
            (f"namespace-limit-0-{tag}", "Pod is scheduled on node without matching labels, another schedulable node "
             f"available, maxNoOfPodsToEvictPerNamespace set to 0, should not be evicted [{tag} affinity]", kind,
             [without, with_] + pods_on("nodeWithoutLabels", kind), 0, {"maxNoOfPodsToEvictPerNamespace": 0}, {}),
            (f"no-node-fits-{tag}", "Pod is scheduled on node without matching labels, but no node where pod fits is "
             f"available, should not evict [{tag} affinity]", kind,
             [without, unsched] + pods_on("nodeWithoutLabels", kind), 0, {}, {"nodeFit": True}),
            (f"only-unschedulable-node-fits-{tag}", "Pod is scheduled on node without matching labels, and "
             f"unschedulable node where pod could fit is available, should not evict [{tag} affinity]", kind,
             [with_, unsched], 0, {"maxNoOfPodsToEvictPerNode": 1}, {"nodeFit": True}),
        ]
    rows.append(("total-limit-0-required", "Pod is scheduled on node without matching labels, another schedulable "
                 "node available, maxNoOfPodsToEvictTotal set to 0, should not be evicted [required affinity]", REQ,
                 [without, with_] + pods_on("nodeWithoutLabels", REQ), 0,
                 {"maxNoOfPodsToEvictPerNamespace": 1, "maxNoOfPodsToEvictTotal": 0}, {}))
    for i, (slug, name, kind, objects, expected, limits, evictor) in enumerate(rows, 1):
        notes = ""
        if slug.startswith("only-unschedulable"):
            notes = ("upstream's pods run on nodeWithoutLabels, a node it does not pass to the plugin, so they are never "
                     "looked at; here they are left out, the same input to the plugin")
        write("RemovePodsViolatingNodeAffinity", i, slug, NA + name, {"nodeAffinityType": [kind]}, objects, expected,
              pods=["podWithNodeAffinity"] if expected else None, evictor=evictor, limits=limits, notes=notes)


# ---------------------------------------------------------------- RemovePodsViolatingInterPodAntiAffinity
AA = ("pkg/framework/plugins/removepodsviolatinginterpodantiaffinity/pod_antiaffinity_test.go :: "
      "TestPodAntiAffinity :: ")


def anti(key: str, value: str) -> dict:
    """test.SetPodAntiAffinity: required anti-affinity to pods labelled key=value, topology key `region`."""
    return {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{
        "labelSelector": {"matchExpressions": [{"key": key, "operator": "In", "values": [value]}]},
        "topologyKey": "region"}]}}


def anti_affinity() -> None:
    main = {"region": "main-region"}
    n1 = node("n1", 2000, 3000, 10, labels=main)

    def p(name: str, node_name: str = "n1", **kw: Any) -> dict:
        return pod(name, 100, 0, node_name, **kw)

    def with_anti(name: str) -> dict:
        return p(name, owner="pod", affinity=anti("foo", "bar"))

    four = [with_anti("p1"), p("p2", owner="pod", labels={"foo": "bar"}), with_anti("p3"), with_anti("p4")]
    critical = p("non-evict", priority=SYSTEM_CRITICAL, labels={"foo": "bar"})
    p8 = p("p8", node_selector={"datacenter": "west"})
    rows = [
        ("no-limit", "Maximum pods to evict - 0", [n1] + four, 3, {}, {}),
        ("node-limit-3", "Maximum pods to evict - 3", [n1] + four, 3, {"maxNoOfPodsToEvictPerNode": 3}, {}),
        ("namespace-limit-3", "Maximum pods to evict (maxPodsToEvictPerNamespace=3) - 3", [n1] + four, 3,
         {"maxNoOfPodsToEvictPerNamespace": 3}, {}),
        ("total-limit-1", "Maximum pods to evict (maxNoOfPodsToEvictTotal)", [n1] + four, 1,
         {"maxNoOfPodsToEvictPerNamespace": 3, "maxNoOfPodsToEvictTotal": 1}, {}),
        ("evict-one-after-sorting", "Evict only 1 pod after sorting",
         [n1, p("p5", owner="pod", labels={"foo": "bar"}, affinity=anti("foo1", "bar1"), priority=100),
          p("p6", owner="pod", labels={"foo": "bar"}, affinity=anti("foo1", "bar1"), priority=50),
          p("p7", owner="pod", labels={"foo1": "bar1"}, affinity=anti("foo", "bar"), priority=0)], 1, {}, {}),
        ("conflicts-with-critical-pod", "Evicts pod that conflicts with critical pod (but does not evict critical pod)",
         [n1, with_anti("p1"), critical], 1, {"maxNoOfPodsToEvictPerNode": 1}, {}),
        ("node-selectors-do-not-match-nodefit", "Won't evict pods because node selectors don't match available nodes",
         [n1, node("n2", 2000, 3000, 10, labels={"datacenter": "east"}), p8, critical], 0,
         {"maxNoOfPodsToEvictPerNode": 1}, {"nodeFit": True}),
        ("other-node-unschedulable-nodefit", "Won't evict pods because only other node is not schedulable",
         [n1, node("n3", 2000, 3000, 10, unschedulable=True), p8, critical], 0, {"maxNoOfPodsToEvictPerNode": 1},
         {"nodeFit": True}),
        ("all-terminating", "No pod to evicted since all pod terminating",
         [n1, p("p9", owner="pod", affinity=anti("foo", "bar"), terminating=True),
          p("p10", owner="pod", affinity=anti("foo", "bar"), terminating=True)], 0, {}, {}),
        ("other-node-too-small-nodefit", "Won't evict pods because only other node doesn't have enough resources",
         [n1, node("n4", 2, 2, 1)] + four, 0, {"maxNoOfPodsToEvictPerNode": 3}, {"nodeFit": True}),
        ("violation-across-nodes", "Evict pod violating anti-affinity among different node (all pods have "
         "anti-affinity)", [n1, node("n5", 200, 3000, 10, labels=main), with_anti("p1"),
                            p("p11", "n5", owner="pod", labels={"foo": "bar"})], 1, {}, {}),
    ]
    expected_pods = {"no-limit": ["p1", "p3", "p4"], "evict-one-after-sorting": ["p7"],
                     "conflicts-with-critical-pod": ["p1"], "violation-across-nodes": ["p1"]}
    for i, (slug, name, objects, expected, limits, evictor) in enumerate(rows, 1):
        write("RemovePodsViolatingInterPodAntiAffinity", i, slug, AA + name, {}, objects, expected,
              pods=expected_pods.get(slug), evictor=evictor, limits=limits)


# ------------------------------------------------------------ RemovePodsViolatingTopologySpreadConstraint
TS = ("pkg/framework/plugins/removepodsviolatingtopologyspreadconstraint/topologyspreadconstraint_test.go :: "
      "TestTopologySpreadConstraint :: ")
FOO = {"foo": "bar"}


def spread_constraint(skew: int = 1, key: str = "zone", when: str = "DoNotSchedule", **extra: Any) -> list:
    """getDefaultTopologyConstraints(maxSkew): selector foo=bar, key zone, DoNotSchedule."""
    return [{"maxSkew": skew, "topologyKey": key, "whenUnsatisfiable": when,
             "labelSelector": {"matchLabels": dict(FOO)}, **extra}]


def spread_pods(groups: list[dict]) -> list:
    """createTestPods: pod-<n> in namespace ns1, owned by replicaset-1 unless noOwners, 100m cpu each. The pods
    are listed by name, as upstream's test informer lists them (pod-10 before pod-8)."""
    out, n = [], 0
    for g in groups:
        for _ in range(g.get("count", 1)):
            out.append(pod(f"pod-{n}", 100, 0, g["node"], None if g.get("noOwners") else "rs", ns="ns1",
                           labels=g.get("labels"), spread=g.get("constraints"), node_selector=g.get("nodeSelector"),
                           affinity=g.get("affinity"), tolerations=g.get("tolerations"),
                           terminating=g.get("terminating", False)))
            n += 1
    return sorted(out, key=lambda p: p["metadata"]["name"])


def zones(*names: str, cpu: int = 2000, **kw: Any) -> list:
    return [node(f"n{i}", cpu, 3000, 10, labels={"zone": z}, **kw) for i, z in enumerate(names, 1)]


def spread() -> None:
    ab = zones("zoneA", "zoneB")
    d = spread_constraint()
    win = [node(f"n{i}", 2000, 3000, 10, labels={"node": v, "os": os_}) for i, (v, os_) in enumerate(
        [("linNodeA", "linux"), ("linNodeB", "linux"), ("linNodeC", "linux"), ("winNodeA", "windows"),
         ("winNodeB", "windows"), ("winNodeC", "windows")], 1)]
    win7 = win + [node("n7", 2000, 3000, 10, labels={"node": "winNodeD", "os": "windows"})]
    by_node = spread_constraint(key="node")
    winsel = {"os": "windows"}
    affinity = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "foo", "operator": "In", "values": ["bar"]}]}]}}}
    both = {"constraints": ["DoNotSchedule", "ScheduleAnyway"]}
    soft = spread_constraint(when="ScheduleAnyway")
    rows = [
        ("sizes-2-1-balanced", "2 domains, sizes [2,1], maxSkew=1, move 0 pods", ab + spread_pods([
            {"node": "n1", "labels": FOO, "constraints": d}, {"node": "n1", "labels": FOO},
            {"node": "n2", "labels": FOO}]), 0, {}, {}),
        ("sizes-3-1-move-1", "2 domains, sizes [3,1], maxSkew=1, move 1 pod to achieve [2,2]", ab + spread_pods([
            {"node": "n1", "labels": FOO, "constraints": d}, {"count": 2, "node": "n1", "labels": FOO},
            {"node": "n2", "labels": FOO}]), 1, {}, {}),
        ("sizes-3-1-both-constraints", "2 domains, sizes [3,1], maxSkew=1, move 1 pod to achieve [2,2] (both "
         "constraints)", ab + spread_pods([{"node": "n1", "labels": FOO, "constraints": soft},
                                          {"count": 2, "node": "n1", "labels": FOO}, {"node": "n2", "labels": FOO}]),
         1, both, {}),
        ("sizes-3-1-no-pods-eligible", "2 domains, sizes [3,1], maxSkew=1, no pods eligible, move 0 pods",
         ab + spread_pods([{"node": "n1", "labels": FOO, "constraints": d, "noOwners": True},
                           {"count": 2, "node": "n1", "labels": FOO, "noOwners": True},
                           {"node": "n2", "labels": FOO, "noOwners": True}]), 0, {}, {}),
        ("sizes-3-1-exclude-kube-system", "2 domains, sizes [3,1], maxSkew=1, move 1 pod to achieve [2,2], exclude "
         "kube-system namespace", ab + spread_pods([{"node": "n1", "labels": FOO, "constraints": d},
                                                    {"count": 2, "node": "n1", "labels": FOO},
                                                    {"node": "n2", "labels": FOO}]), 1,
         {"namespaces": {"exclude": ["kube-system"]}}, {"nodeFit": True}),
        ("sizes-5-2-move-1", "2 domains, sizes [5,2], maxSkew=1, move 1 pod to achieve [4,3]", ab + spread_pods([
            {"node": "n1", "labels": FOO, "constraints": d}, {"count": 4, "node": "n1", "labels": FOO},
            {"count": 2, "node": "n2", "labels": FOO}]), 1, {}, {}),
        ("sizes-4-0-move-2", "2 domains, sizes [4,0], maxSkew=1, move 2 pods to achieve [2,2]", ab + spread_pods([
            {"node": "n1", "labels": FOO, "constraints": d}, {"count": 3, "node": "n1", "labels": FOO}]), 2, {}, {}),
        ("sizes-4-0-selector-and-affinity-kept", "2 domains, sizes [4,0], maxSkew=1, only move 1 pod since pods with "
         "nodeSelector and nodeAffinity aren't evicted", ab + spread_pods([
             {"node": "n1", "labels": FOO, "constraints": d, "nodeSelector": {"zone": "zoneA"}},
             {"node": "n1", "labels": FOO, "constraints": d, "nodeSelector": {"zone": "zoneA"}},
             {"node": "n1", "labels": FOO, "constraints": d, "affinity": affinity},
             {"node": "n1", "labels": FOO, "constraints": d}]), 1, {}, {"nodeFit": True}),
        ("six-domains-balanced", "6 domains, sizes [0,0,0,3,3,2], maxSkew=1, No pod is evicted since topology is "
         "balanced", win + spread_pods([
             {"count": 3, "node": "n4", "labels": FOO, "constraints": by_node, "nodeSelector": winsel},
             {"count": 3, "node": "n5", "labels": FOO, "constraints": by_node, "nodeSelector": winsel},
             {"count": 2, "node": "n6", "labels": FOO, "constraints": by_node, "nodeSelector": winsel}]), 0, {}, {}),
        ("seven-domains-new-node", "7 domains, sizes [0,0,0,3,3,2], maxSkew=1, two pods are evicted and moved to new "
         "node added", win7 + spread_pods([
             {"count": 3, "node": "n4", "labels": FOO, "constraints": by_node, "nodeSelector": winsel},
             {"count": 3, "node": "n5", "labels": FOO, "constraints": by_node, "nodeSelector": winsel},
             {"count": 2, "node": "n6", "labels": FOO, "constraints": by_node, "nodeSelector": winsel}]), 2, {}, {}),
        ("six-domains-4-3-1", "6 domains, sizes [0,0,0,4,3,1], maxSkew=1, 1 pod is evicted from node 4",
         win + spread_pods([
             {"count": 4, "node": "n4", "labels": FOO, "constraints": by_node, "nodeSelector": winsel},
             {"count": 3, "node": "n5", "labels": FOO, "constraints": by_node, "nodeSelector": winsel},
             {"count": 1, "node": "n6", "labels": FOO, "constraints": by_node, "nodeSelector": winsel}]), 1, {}, {}),
        ("six-domains-pinned-pods-nodefit", "6 domains, sizes [0,0,0,4,3,1], maxSkew=1, 0 pod is evicted as pods of "
         "node:winNodeA can only be scheduled on this node and nodeFit is true ", win + spread_pods([
             {"count": 4, "node": "n4", "labels": FOO, "constraints": by_node, "nodeSelector": {"node": "winNodeA"}},
             {"count": 3, "node": "n5", "labels": FOO, "constraints": by_node, "nodeSelector": winsel},
             {"count": 1, "node": "n6", "labels": FOO, "constraints": by_node, "nodeSelector": winsel}]), 0, {},
         {"nodeFit": True}),
        ("selector-matches-multiple-nodes", "2 domains, sizes [4,0], maxSkew=1, move 2 pods since selector matches "
         "multiple nodes", [node("n1", 2000, 3000, 10, labels={"zone": "zoneA", "region": "boston"}),
                            node("n2", 2000, 3000, 10, labels={"zone": "zoneB", "region": "boston"})] + spread_pods([
             {"node": "n1", "labels": FOO, "constraints": d, "nodeSelector": {"region": "boston"}},
             {"count": 3, "node": "n1", "labels": FOO, "nodeSelector": {"region": "boston"}}]), 2, {}, {}),
        ("sizes-0-1-100-move-66", "3 domains, sizes [0, 1, 100], maxSkew=1, move 66 pods to get [34, 33, 34]",
         zones("zoneA", "zoneB", "zoneC") + spread_pods([{"node": "n2", "labels": FOO, "constraints": d},
                                                         {"count": 100, "node": "n3", "labels": FOO}]), 66, {}, {}),
        ("sizes-0-1-3-5-move-3", "4 domains, sizes [0, 1, 3, 5], should move 3 to get [2, 2, 3, 2]",
         zones("zoneA", "zoneB", "zoneC", "zoneD") + spread_pods([
             {"node": "n2", "labels": FOO, "constraints": d}, {"count": 3, "node": "n3", "labels": FOO},
             {"count": 5, "node": "n4", "labels": FOO}]), 3, {}, {}),
        ("sizes-2-6-skew-2-move-1", "2 domains size [2 6], maxSkew=2, should move 1 to get [3 5]", ab + spread_pods([
            {"node": "n1", "labels": FOO, "constraints": spread_constraint(2)}, {"node": "n1", "labels": FOO},
            {"count": 6, "node": "n2", "labels": FOO}]), 1, {}, {}),
        ("sizes-2-6-taint-nodefit", "2 domains size [2 6], maxSkew=2, can't move any because of node taints",
         [node("n1", 2000, 3000, 10, labels={"zone": "zoneA"},
               taints=[{"key": "hardware", "value": "gpu", "effect": "NoSchedule"}]),
          node("n2", 2000, 3000, 10, labels={"zone": "zoneB"})] + spread_pods([
             {"node": "n1", "labels": FOO, "constraints": spread_constraint(2)}, {"node": "n1", "labels": FOO},
             {"count": 6, "node": "n2", "labels": FOO}]), 0, {}, {"nodeFit": True}),
        ("sizes-2-6-no-cpu-nodefit", "2 domains size [2 6], maxSkew=2, can't move any because node1 does not have "
         "enough CPU", [node("n1", 200, 3000, 10, labels={"zone": "zoneA"}),
                        node("n2", 2000, 3000, 10, labels={"zone": "zoneB"})] + spread_pods([
             {"node": "n1", "labels": FOO, "constraints": spread_constraint(2)}, {"node": "n1", "labels": FOO},
             {"count": 6, "node": "n2", "labels": FOO}]), 0, {}, {"nodeFit": True}),
        ("sizes-8-7-0-move-5", "3 domains size [8 7 0], maxSkew=1, should move 5 to get [5 5 5]",
         zones("zoneA", "zoneB", "zoneC") + spread_pods([
             {"count": 8, "node": "n1", "labels": FOO, "constraints": d},
             {"count": 7, "node": "n2", "labels": FOO, "constraints": d}]), 5, {}, {}),
        ("sizes-5-5-5-balanced", "3 domains size [5 5 5], maxSkew=1, should move 0 to retain [5 5 5]",
         zones("zoneA", "zoneB", "zoneC") + spread_pods([
             {"count": 5, "node": f"n{i}", "labels": FOO, "constraints": d} for i in (1, 2, 3)]), 0, {}, {}),
    ]
    names = {"sizes-8-7-0-move-5": ["pod-5", "pod-6", "pod-7", "pod-8", "pod-9"]}
    for i, (slug, name, objects, expected, args, evictor) in enumerate(rows, 1):
        write("RemovePodsViolatingTopologySpreadConstraint", i, slug, TS + name, args, objects, expected,
              pods=names.get(slug), evictor=evictor,
              notes="pods listed by name, the order upstream's test informer lists them in" if slug in names else "")


# ----------------------------------------------------------------------------------- HighNodeUtilization
HNU = "pkg/framework/plugins/nodeutilization/highnodeutilization_test.go :: TestHighNodeUtilization :: "


def hnu() -> None:
    fit = {"nodeFit": True}
    cp30 = {"thresholds": {"cpu": 30, "pods": 30}}
    west = {"datacenter": "west"}
    n3u = node("n3", 4000, 3000, 10, unschedulable=True)
    rows = [
        ("no-node-below-threshold", "no node below threshold usage", {"thresholds": {"cpu": 20, "pods": 20}},
         [node(f"n{i}", 4000, 3000, 10) for i in (1, 2, 3)]
         + [pod(f"p{k}", 400, 0, f"n{(k - 1) // 3 + 1}", "rs") for k in range(1, 10)], 0, None),
        ("no-evictable-pods", "no evictable pods", {"thresholds": {"cpu": 40, "pods": 40}},
         [node("n1", 4000, 3000, 9), node("n2", 4000, 3000, 10), node("n3", 4000, 3000, 10),
          pod("p1", 400, 0, "n1", "pod", local_storage=True, mirror=True),
          pod("p2", 400, 0, "n1", "pod", ns="kube-system", priority=SYSTEM_CRITICAL),
          pod("p3", 400, 0, "n2", "ds"), pod("p4", 400, 0, "n2", "ds")]
         + [pod(f"p{k}", 400, 0, "n3", "rs") for k in (5, 6, 7, 8)], 0, None),
        ("no-node-to-schedule-evicted-pods", "no node to schedule evicted pods", {"thresholds": {"cpu": 20, "pods": 20}},
         [node("n1", 4000, 3000, 10), node("n2", 4000, 3000, 10), n3u, pod("p1", 400, 0, "n1", "rs"),
          pod("p2", 400, 0, "n2", "rs")] + [pod(f"p{k}", 400, 0, "n3", "rs") for k in (3, 4, 5)], 0, None),
        ("without-priorities", "without priorities", cp30,
         [node("n1", 4000, 3000, 10), node("n2", 4000, 3000, 10), n3u, pod("p1", 400, 0, "n1", "rs"),
          pod("p2", 400, 0, "n1", "pod", ns="kube-system", priority=SYSTEM_CRITICAL)]
         + [pod(f"p{k}", 400, 0, "n2", "rs") for k in (3, 4, 5, 6)] + [pod("p7", 400, 0, "n3", "rs")], 2,
         ["p1", "p7"]),
        ("stop-when-capacity-depleted", "without priorities stop when resource capacity is depleted", cp30,
         [node("n1", 2000, 3000, 10), node("n2", 2000, 3000, 10), node("n3", 2000, 3000, 10, unschedulable=True),
          pod("p1", 400, 0, "n1", "rs")] + [pod(f"p{k}", 400, 0, "n2", "rs") for k in (2, 3, 4, 5)]
         + [pod("p6", 400, 0, "n3", "rs")], 1, None),
        ("with-priorities", "with priorities", {"thresholds": {"cpu": 30}},
         [node("n1", 4000, 3000, 10), node("n2", 2000, 3000, 10), node("n3", 2000, 3000, 10, unschedulable=True),
          pod("p1", 400, 0, "n1", "rs", priority=0), pod("p2", 400, 0, "n1", "rs", priority=10000)]
         + [pod(f"p{k}", 400, 0, "n2", "rs") for k in (5, 6, 7, 8)] + [pod("p9", 400, 0, "n3", "ds")], 1, ["p1"]),
        ("best-effort-pods-first", "without priorities evicting best-effort pods only", {"thresholds": {"cpu": 30}},
         [node("n1", 3000, 3000, 10), node("n2", 3000, 3000, 5), node("n3", 3000, 3000, 10, unschedulable=True),
          pod("p1", 0, 0, "n1", "rs", best_effort=True), pod("p2", 400, 0, "n1", "rs")]
         + [pod(f"p{k}", 400, 0, "n2", "rs") for k in (3, 4, 5, 6)], 1, ["p1"]),
        ("other-node-matches-node-selector", "Other node match pod node selector", cp30,
         [node("n1", 4000, 3000, 9, labels=west), node("n2", 4000, 3000, 10)]
         + [pod(f"p{k}", 400, 0, "n1", "rs") for k in (1, 2, 3)] + [pod("p4", 400, 0, "n1", "ds"),
                                                                    pod("p5", 400, 0, "n2", "rs", node_selector=west)],
         1, ["p5"]),
        ("other-node-does-not-match-node-selector", "Other node does not match pod node selector", cp30,
         [node("n1", 4000, 3000, 9), node("n2", 4000, 3000, 10)]
         + [pod(f"p{k}", 400, 0, "n1", "rs") for k in (1, 2, 3)] + [pod("p4", 400, 0, "n1", "ds"),
                                                                    pod("p5", 400, 0, "n2", "rs", node_selector=west)],
         0, None),
        ("other-node-lacks-memory", "Other node does not have enough Memory", cp30,
         [node("n1", 4000, 200, 9), node("n2", 4000, 3000, 10)]
         + [pod(f"p{k}", 400, 50, "n1", "rs") for k in (1, 2, 3)] + [pod("p4", 400, 50, "n1", "ds"),
                                                                     pod("p5", 400, 100, "n2", "rs")], 0, None),
    ]
    for i, (slug, name, args, objects, expected, pods) in enumerate(rows, 1):
        notes = "highPriority 10000, lowPriority 0 as in the test file" if slug == "with-priorities" else ""
        write("HighNodeUtilization", i, slug, HNU + name, args, objects, expected, pods=pods, evictor=fit, notes=notes)


if __name__ == "__main__":
    hnu()
    spread()
    anti_affinity()
    node_affinity()
    lnu()
    duplicates()
    taints()
