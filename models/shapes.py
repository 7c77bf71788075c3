"""A family of generated cluster shapes for benchmarking the solver on clusters it was not tuned to.

`podplan generate --profile production` is one mix; a solver tuned on it can be far from proven on another.
A *shape* is a set of knobs that decide how hard placement is; `shape_instance(name, nodes, seed)` builds the
cluster of a shape at any size, from a seed, as `podplan generate --shape NAME --nodes N --seed S` prints it.

The world is the same for every shape, an EKS-like cluster:
- general nodes m5.xlarge / m5.2xlarge / m5.4xlarge (30 / 40 / 30 %), round-robin over 3 zones, 30 % of them
  spot (`eks.amazonaws.com/capacityType: SPOT`, the rest ON_DEMAND); 2 % of the nodes a GPU pool
  (g5.12xlarge, 4 GPUs, tainted `nvidia.com/gpu=present:NoSchedule`);
- the per-node agents of an EKS cluster as DaemonSets, 4-5 running pods per node;
- about one workload (Deployment or StatefulSet) per node, heavy-tailed replica counts (Pareto, up to
  `max_replicas`), `pending_per_node` pending pods per node in all; a share of each workload already runs.

The knobs (`Shape`):
- anti_pref: share of workloads with preferred pod anti-affinity to their own pods (weight 100);
  anti_zone: the share of those by zone instead of hostname;
- anti_required: share of workloads that are StatefulSets with required hostname anti-affinity (at most one
  replica per node);
- spread: share of Deployments spread over zones (maxSkew 1); spread_anyway: the share of those that is
  ScheduleAnyway instead of DoNotSchedule;
- web_cache: share of Deployments that are web apps requiring a pod of their cache (3 running replicas, one
  per zone) in the zone, and preferring one on their node (weight 50);
- node_pref: share of workloads with preferred node affinity (m5.4xlarge, or on-demand capacity);
- gpu: share of workloads requesting GPUs (the GPU pool's taint tolerated, its nodes selected);
  gpu_sharing: those request fractions of a GPU (`podplan.io/gpu-milli`, 1000 per GPU, advertised by the GPU
  nodes) instead of whole ones;
- priorities: how many PriorityClasses the workloads use (1-5);
- utilization: share of the general nodes' allocatable cpu all pods request together (0.5-0.95);
- max_replicas, tail: the replica counts' cap and Pareto exponent (smaller: heavier tail);
- running: share of each workload's replicas already running; broken: share of the workloads with preferred
  anti-affinity whose running pods are stacked on one node (they already break their preference).

`SHAPES` names 24 shapes; `TUNE` (the first 12) is what the search may be tuned on, `HELD_OUT` the rest,
reported apart. `BENCH_5000` are the 5 shapes also benchmarked at 5,000 nodes. Deterministic: only
`random.Random(seed)` is used. No solver imports.
"""
from __future__ import annotations

import random
from dataclasses import dataclass, fields
from typing import Any

from .errors import quote
from .generate import (DB_NAMES, GIB, GPU_TAINT, PRIORITY_CLASSES, PRODUCTION_DAEMONSETS, SERVICE_NAMES, TEAMS,
                       WEB_NAMES, WORKER_NAMES, GeneratedInstance, GeneratorError, InstanceType, _Names, _Node,
                       _Workload, _container, _make_nodes, _namespace, _node_manifest, _priority_classes,
                       _production_daemonsets, _scale, _selector, _split, _system_namespaces, _workload_manifests)

SHAPE_TYPES = (InstanceType("m5.xlarge", 4, 16), InstanceType("m5.2xlarge", 8, 32), InstanceType("m5.4xlarge", 16, 64))
SHAPE_WEIGHTS = (0.3, 0.4, 0.3)
SHAPE_GPU_TYPE = InstanceType("g5.12xlarge", 48, 192, gpus=4)
GPU_POOL = 0.02
SPOT = 0.3
GPU_MILLI = "podplan.io/gpu-milli"
HOST = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"


@dataclass(frozen=True)
class Shape:
    """The knobs of one shape (see the module docstring)."""

    anti_pref: float = 0.15
    anti_zone: float = 0.0
    anti_required: float = 0.19
    spread: float = 0.33
    spread_anyway: float = 0.0
    web_cache: float = 0.10
    node_pref: float = 0.15
    gpu: float = 0.0
    gpu_sharing: bool = False
    priorities: int = 5
    utilization: float = 0.7
    max_replicas: int = 256
    tail: float = 1.3
    running: float = 0.0
    broken: float = 0.0
    pending_per_node: int = 10

    def describe(self) -> str:
        """The knobs that differ from the defaults, as `name=value`."""
        base = Shape()
        return ", ".join(f"{f.name}={getattr(self, f.name)}" for f in fields(self)
                         if getattr(self, f.name) != getattr(base, f.name)) or "defaults"


SHAPES: dict[str, Shape] = {
    # tune: the search may be tuned on these
    "eks-default": Shape(),
    "anti-host-30": Shape(anti_pref=0.30),
    "anti-zone-20": Shape(anti_pref=0.20, anti_zone=1.0),
    "anti-mixed-50": Shape(anti_pref=0.50, anti_zone=0.5),
    "no-anti": Shape(anti_pref=0.0, node_pref=0.30),
    "spread-anyway": Shape(spread=0.5, spread_anyway=1.0),
    "spread-heavy": Shape(spread=0.8),
    "cache-heavy": Shape(web_cache=0.35),
    "gpu-whole": Shape(gpu=0.03),
    "util-50": Shape(utilization=0.5, anti_pref=0.3),
    "util-90": Shape(utilization=0.9),
    "broken-running": Shape(anti_pref=0.3, running=0.3, broken=0.5),
    "cache-zone-mixed": Shape(web_cache=0.2, anti_pref=0.3, anti_zone=0.4, node_pref=0.25, spread=0.4,
                              spread_anyway=0.2, utilization=0.75),
    # held out: reported apart, never tuned on
    "anti-host-50": Shape(anti_pref=0.50),
    "anti-zone-40": Shape(anti_pref=0.40, anti_zone=1.0, spread=0.2),
    "required-heavy": Shape(anti_required=0.35, anti_pref=0.2),
    "spread-mixed": Shape(spread=0.6, spread_anyway=0.5, anti_pref=0.2),
    "gpu-shared": Shape(gpu=0.03, gpu_sharing=True),
    "one-priority": Shape(priorities=1, anti_pref=0.3),
    "util-95": Shape(utilization=0.95, anti_pref=0.2),
    "tail-500": Shape(max_replicas=500, tail=1.1, anti_pref=0.3),
    "small-replicas": Shape(max_replicas=8, tail=2.0, anti_pref=0.3),
    "running-half": Shape(running=0.5, anti_pref=0.2, broken=0.2),
    "prefs-everywhere": Shape(anti_pref=0.4, anti_zone=0.3, node_pref=0.4, web_cache=0.2, spread=0.5,
                              spread_anyway=0.3),
    "cache-zone-anti": Shape(web_cache=0.25, anti_pref=0.3, anti_zone=0.5, utilization=0.8),
}
TUNE = tuple(list(SHAPES)[:13])
HELD_OUT = tuple(list(SHAPES)[13:])
BENCH_5000 = ("eks-default", "anti-host-30", "spread-anyway", "anti-zone-40", "prefs-everywhere")


def shape_instance(name: str, nodes: int, seed: int = 0, pending: int | None = None) -> GeneratedInstance:
    """The cluster of shape `name` with `nodes` nodes (pending pods: the shape's pending_per_node per node,
    unless `pending` says otherwise)."""
    shape = SHAPES.get(name)
    if shape is None:
        raise GeneratorError(f"unknown shape {quote(name)}; expected one of {', '.join(SHAPES)}")
    if nodes < 3:
        raise GeneratorError(f"--nodes must be at least 3 for a shape (one per zone), got {nodes}")
    if pending is not None and pending < 0:
        raise GeneratorError(f"--pods must not be negative, got {pending}")
    return build(shape, nodes, seed, shape.pending_per_node * nodes if pending is None else pending)


def _nodes(rng: random.Random, n: int) -> list[_Node]:
    n_gpu = max(1, round(n * GPU_POOL)) if n >= 20 else 0
    pools = [("general", t, c) for t, c in zip(SHAPE_TYPES, _split(n - n_gpu, SHAPE_WEIGHTS)) if c]
    if n_gpu:
        pools.append(("gpu", SHAPE_GPU_TYPE, n_gpu))
    return _make_nodes(rng, pools)


def _node(n: _Node, spot: bool, sharing: bool) -> dict[str, Any]:
    m = _node_manifest(n)
    labels = m["metadata"]["labels"]
    labels["eks.amazonaws.com/capacityType"] = "SPOT" if spot else "ON_DEMAND"
    if n.pool == "gpu":
        labels.pop("accelerator", None)
        labels["nvidia.com/gpu.product"] = "NVIDIA-A10G"
        m["spec"]["taints"] = [dict(GPU_TAINT)]
        if sharing:
            for part in ("capacity", "allocatable"):
                m["status"][part][GPU_MILLI] = str(1000 * n.itype.gpus)
    return m


def _term(name: str, key: str) -> dict[str, Any]:
    return {"labelSelector": _selector(name), "topologyKey": key}


def build(shape: Shape, n: int, seed: int, pending: int) -> GeneratedInstance:
    rng = random.Random(seed)
    nodes = _nodes(rng, n)
    general = [i for i, x in enumerate(nodes) if x.pool == "general"]
    gpu_nodes = [i for i, x in enumerate(nodes) if x.pool == "gpu"]
    spot = {i for i in general if rng.random() < SPOT}
    names = _Names(rng)
    teams = list(TEAMS[: max(2, min(len(TEAMS), n // 60 + 2))])
    prios = [name for name, _, _ in PRIORITY_CLASSES[: max(1, min(5, shape.priorities))]]
    # about one workload per node, more when replicas are capped low (half the cap on average)
    count = max(1, min(pending, max(n, -(-2 * pending // max(1, shape.max_replicas))))) if pending else 0
    workloads: list[_Workload] = []
    caches: list[_Workload] = []
    gpu_budget = 0.6 * sum(nodes[i].itype.gpus for i in gpu_nodes)  # GPUs the GPU workloads may request
    gpu_left = gpu_budget
    for _ in range(count):
        ns = rng.choice(teams)
        prio = rng.choice(prios)
        u = rng.random()
        if u < shape.anti_required:
            w = _Workload("StatefulSet", "db", ns, names.pick(ns, DB_NAMES), 1, rng.choice((500, 1000, 2000)),
                          rng.choice((4, 8)) * GIB, priority_class=prio)
            w.template = {"affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                _term(w.name, HOST)]}}}
            w.pdb = {"maxUnavailable": 1}
        elif gpu_nodes and u < shape.anti_required + shape.gpu and gpu_left >= 1:
            gpu_left -= 1
            w = _Workload("Deployment", "inference", ns, names.pick(ns, ("llm-serving", "embedder", "reranker",
                                                                          "vision-api", "asr")), 1,
                          rng.choice((2000, 4000)), 0, mem=rng.choice((8, 16)) * GIB, gpu=0 if shape.gpu_sharing else 1,
                          priority_class=prio)
            w.template = {"nodeSelector": {"nvidia.com/gpu.present": "true"},
                          "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]}
            if shape.gpu_sharing:
                w.template["_milli"] = rng.choice((250, 500, 500, 1000))
        else:
            role = "web" if rng.random() < shape.web_cache / max(1e-9, 1 - shape.anti_required - shape.gpu) else \
                rng.choice(("service", "worker"))
            pool = WEB_NAMES if role == "web" else SERVICE_NAMES if role == "service" else WORKER_NAMES
            w = _Workload("Deployment", role, ns, names.pick(ns, pool), 1, rng.choice((250, 500, 1000, 2000)),
                          rng.choice((1, 2, 4)) * GIB, priority_class=prio)
            w.template = {}
            if role == "web":
                cache = _Workload("Deployment", "cache", ns, names.exact(ns, f"{w.name}-redis"), 3,
                                  rng.choice((250, 500)), 0, mem=rng.choice((1, 2)) * GIB, priority_class=prio)
                cache.template = {}
                cache.running_target = 3
                caches.append(cache)
                w.template["affinity"] = {"podAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": [_term(cache.name, ZONE)],
                    "preferredDuringSchedulingIgnoredDuringExecution": [
                        {"weight": 50, "podAffinityTerm": _term(cache.name, HOST)}]}}
            if rng.random() < shape.spread:
                anyway = rng.random() < shape.spread_anyway
                w.template["topologySpreadConstraints"] = [
                    {"maxSkew": 1, "topologyKey": ZONE,
                     "whenUnsatisfiable": "ScheduleAnyway" if anyway else "DoNotSchedule",
                     "labelSelector": _selector(w.name)}]
        if w.kind == "Deployment" and w.role != "inference" and rng.random() < shape.anti_pref:
            key = ZONE if rng.random() < shape.anti_zone else HOST
            w.template.setdefault("affinity", {})["podAntiAffinity"] = {
                "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 100, "podAffinityTerm": _term(w.name, key)}]}
            w.template["_anti"] = key
        if w.role != "inference" and rng.random() < shape.node_pref:
            pref = rng.choice((("node.kubernetes.io/instance-type", "m5.4xlarge", 20),
                               ("eks.amazonaws.com/capacityType", "ON_DEMAND", 50)))
            w.template.setdefault("affinity", {})["nodeAffinity"] = {
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {"weight": pref[2], "preference": {"matchExpressions": [
                        {"key": pref[0], "operator": "In", "values": [pref[1]]}]}}]}
        workloads.append(w)
    # replicas: heavy-tailed, summing to `pending` pending pods plus what already runs
    total = pending
    weights = [min(float(shape.max_replicas), rng.paretovariate(shape.tail)) for _ in workloads]
    extra = _split(max(0, total - len(workloads)), weights) if workloads else []
    hosts = len(general)
    for w, e in zip(workloads, extra):
        w.replicas = min(shape.max_replicas, 1 + e)
        if w.role == "db":
            w.replicas = min(w.replicas, max(1, hosts // 3))
        if w.role == "inference":
            per = (w.template.get("_milli", 1000) / 1000) if shape.gpu_sharing else 1  # type: ignore[union-attr]
            w.replicas = max(1, min(w.replicas, 16, int(gpu_budget / per / max(1, sum(
                1 for x in workloads if x.role == "inference")))))
    # pending exactly `total`: what the caps took off goes to the uncapped general workloads, round robin
    short = total - sum(w.replicas for w in workloads)
    flexible = [w for w in workloads if w.role in ("service", "worker", "web")]
    i = 0
    while short > 0 and flexible:
        w = flexible[i % len(flexible)]
        if w.replicas < shape.max_replicas:
            k = min(short, shape.max_replicas - w.replicas)
            w.replicas += k
            short -= k
        i += 1
        if i > 4 * len(flexible) and short > 0:
            break
    # running pods come on top of the pending ones
    for w in workloads:
        if w.role not in ("inference", "web"):  # a web's required cache affinity: its pods are all pending
            w.running_target = int(w.replicas * shape.running / max(1e-9, 1 - shape.running)) if shape.running else 0
            w.replicas += w.running_target
    # requests: cpu scaled to `utilization` of the general nodes' allocatable cpu (agents and caches included)
    gen_cpu = sum(nodes[i].itype.alloc_cpu_m for i in general)
    ds_cpu = sum(c for _, _, c, _, _ in PRODUCTION_DAEMONSETS) * len(general)
    cache_cpu = sum(w.cpu * w.replicas for w in caches)
    scaled = [w for w in workloads if w.role != "inference"]
    _scale(scaled, shape.utilization * gen_cpu - ds_cpu - cache_cpu, 3500, 14 * GIB)

    manifests = _system_namespaces(3)
    manifests += [_namespace(t, t) for t in teams]
    manifests += _priority_classes()
    manifests += [_node(x, i in spot, shape.gpu_sharing) for i, x in enumerate(nodes)]
    manifests += _production_daemonsets(rng, nodes)  # the same agents as the production generator
    _place_running(rng, nodes, general, caches, workloads, shape)
    for w in caches + workloads:
        assert w.template is not None
        milli = w.template.pop("_milli", 0)
        w.template.pop("_anti", None)
        container = _container(w)
        if milli:
            container["resources"]["requests"][GPU_MILLI] = str(milli)
            container["resources"]["limits"][GPU_MILLI] = str(milli)
        w.template["containers"] = [container]
        w.template["priorityClassName"] = w.priority_class
        w.template["terminationGracePeriodSeconds"] = 30
        manifests += _workload_manifests(rng, w, nodes)
    return GeneratedInstance(manifests)


def _place_running(rng: random.Random, nodes: list[_Node], general: list[int], caches: list[_Workload],
                   workloads: list[_Workload], shape: Shape) -> None:
    """Place the pods that already run, keeping every required rule: caches one per zone, StatefulSet replicas
    on distinct nodes, zone-spread replicas round-robin over zones; a `broken` share of the workloads with
    preferred anti-affinity stacked on one node (their preference already broken); the rest next-fit."""
    zones = sorted({nodes[i].zone for i in general})
    by_zone = {z: [i for i in general if nodes[i].zone == z] for z in zones}
    order = list(general)
    rng.shuffle(order)
    cursor = [0]

    def next_fit(cands: list[int], w: _Workload, exclude: set[int] = frozenset()) -> int | None:  # type: ignore[assignment]
        for k in range(len(cands)):
            idx = cands[(cursor[0] + k) % len(cands)]
            if idx not in exclude and nodes[idx].fits(w.cpu, w.mem):
                nodes[idx].take(w.cpu, w.mem)
                cursor[0] = (cursor[0] + k + 1) % max(1, len(cands))
                return idx
        return None

    for c in caches:
        z0 = rng.randrange(len(zones))
        for j in range(c.running_target):
            idx = next_fit(by_zone[zones[(z0 + j) % len(zones)]], c)
            if idx is not None:
                c.placed.append(idx)
    for w in workloads:
        if w.running_target <= 0:
            continue
        spec = w.template or {}
        if w.role == "db":
            used: set[int] = set()
            for _ in range(w.running_target):
                idx = next_fit(order, w, used)
                if idx is None:
                    break
                used.add(idx)
                w.placed.append(idx)
        elif "topologySpreadConstraints" in spec:
            z0 = rng.randrange(len(zones))
            for j in range(w.running_target):
                idx = next_fit(by_zone[zones[(z0 + j) % len(zones)]], w)
                if idx is None:
                    break
                w.placed.append(idx)
        elif spec.get("_anti") and rng.random() < shape.broken:
            home = next_fit(order, w)
            if home is None:
                continue
            w.placed.append(home)
            for _ in range(w.running_target - 1):
                if not nodes[home].fits(w.cpu, w.mem):
                    break
                nodes[home].take(w.cpu, w.mem)
                w.placed.append(home)
        else:
            for _ in range(w.running_target):
                idx = next_fit(order, w)
                if idx is None:
                    break
                w.placed.append(idx)
