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
        annotations: dict | None = None) -> dict[str, Any]:
    """BuildTestPod(name, cpu, memory, node) with its `apply` functions as keywords: owner (SetRSOwnerRef
    "rs", SetDSOwnerRef "ds", SetNormalOwnerRef "pod", SetSSOwnerRef "ss"), SetPodPriority, MakeBestEffortPod,
    MakeGuaranteedPod, SetHostPathEmptyDirVolumeSource, GetMirrorPodAnnotation."""
    requests: dict[str, str] = {}
    if cpu >= 0:
        requests["cpu"] = f"{cpu}m"
    if mem >= 0:
        requests["memory"] = str(mem)
    container: dict[str, Any] = {"name": "c", "image": image or "pause"}
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
    spec: dict[str, Any] = {"nodeName": node_name, "containers": [container]}
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


if __name__ == "__main__":
    lnu()
