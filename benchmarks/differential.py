"""podplan's simulator against the real kube-scheduler, pod by pod, on random clusters.

The generator (`cluster`) draws small clusters that use every rule podplan models: resources (cpu, memory,
pods, ephemeral-storage, an extended resource), nodeSelector, required and preferred node affinity (matchFields
on metadata.name included, sometimes naming no node), taints of the three effects and tolerations, cordoned
nodes, spec.nodeName, host ports, required and preferred pod affinity and anti-affinity (namespaces,
namespaceSelector), topology spread (both whenUnsatisfiable, minDomains, both node policies, matchLabelKeys),
priorities; and one of four scheduler profiles (`PROFILES`): the default, MostAllocated,
RequestedToCapacityRatio, changed plugin weights.

`compare` runs `podplan simulate --no-preemption -o json` and then the real kube-scheduler
(`kubesched --follow` the plan, so that the two stay in one state through ties) and judges every pending pod:
- feasible: the nodes podplan's filters pass for the pod, in the state just before its turn (the plan's earlier
  placements), equal the nodes kube-scheduler's pass;
- node: podplan binds the pod iff kube-scheduler does, and its node is among kube-scheduler's best (`top`);
- message: a pod left pending has kube-scheduler's FitError text, byte for byte.
Each difference is (kind, pod, what differs).
"""
from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import yaml

ROOT = Path(__file__).resolve().parents[1]
KUBESCHED = ROOT.parent / "shared" / "tools" / "kubesched"

ZONES = ("zone-a", "zone-b", "zone-c", "zone-d")
APPS = ("web", "api", "db", "cache", "batch", "queue")
GPU = "example.com/gpu"

PROFILES: dict[str, dict[str, Any] | None] = {
    "default": None,
    "most-allocated": {"profiles": [{"schedulerName": "default-scheduler", "pluginConfig": [
        {"name": "NodeResourcesFit", "args": {"scoringStrategy": {
            "type": "MostAllocated", "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1},
                                                   {"name": GPU, "weight": 2}]}}}]}]},
    "requested-to-capacity-ratio": {"profiles": [{"schedulerName": "default-scheduler", "pluginConfig": [
        {"name": "NodeResourcesFit", "args": {"scoringStrategy": {
            "type": "RequestedToCapacityRatio", "resources": [{"name": "cpu", "weight": 2},
                                                              {"name": "memory", "weight": 1}],
            "requestedToCapacityRatio": {"shape": [{"utilization": 0, "score": 0},
                                                   {"utilization": 60, "score": 10},
                                                   {"utilization": 100, "score": 3}]}}}}]}]},
    "weights": {"profiles": [{"schedulerName": "default-scheduler", "plugins": {"score": {"enabled": [
        {"name": "PodTopologySpread", "weight": 5}, {"name": "InterPodAffinity", "weight": 3},
        {"name": "NodeAffinity", "weight": 4}, {"name": "TaintToleration", "weight": 2},
        {"name": "NodeResourcesBalancedAllocation", "weight": 3}, {"name": "NodeResourcesFit", "weight": 2}]}}}]},
}


def config_document(profile: str) -> dict[str, Any] | None:
    body = PROFILES[profile]
    if body is None:
        return None
    return {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration", **body}


# ------------------------------------------------------------------------------------------------ generator


def _selector(rng: random.Random, app: str) -> dict[str, Any]:
    if rng.random() < 0.7:
        return {"matchLabels": {"app": app}}
    return {"matchExpressions": [{"key": "app", "operator": rng.choice(["In", "NotIn"]),
                                  "values": sorted({app, rng.choice(APPS)})}]}


def _term(rng: random.Random, app: str) -> dict[str, Any]:
    term: dict[str, Any] = {"labelSelector": _selector(rng, app),
                            "topologyKey": rng.choice(["kubernetes.io/hostname", "topology.kubernetes.io/zone"])}
    r = rng.random()
    if r < 0.15:
        term["namespaces"] = sorted({"default", rng.choice(["default", "team-a", "team-b"])})
    elif r < 0.25:
        term["namespaceSelector"] = rng.choice([{}, {"matchLabels": {"tier": "prod"}}])
    return term


def _node_affinity(rng: random.Random, nodes: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if rng.random() < 0.6:
        exprs = []
        kind = rng.random()
        if kind < 0.15:  # matchFields: a PreFilterResult (sometimes naming no node at all)
            # one name per In (API validation); several terms OR them
            names = rng.sample(nodes, min(len(nodes), rng.randint(1, 2)))
            if rng.random() < 0.3:
                names = ["node-99"]
            terms = [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [n]}]} for n in names]
        else:
            if kind < 0.5:
                exprs.append({"key": "topology.kubernetes.io/zone", "operator": rng.choice(["In", "NotIn"]),
                              "values": sorted(set(rng.sample(ZONES, rng.randint(1, 2))))})
            elif kind < 0.7:
                exprs.append({"key": "disk", "operator": rng.choice(["Exists", "DoesNotExist"])})
            else:
                exprs.append({"key": "size", "operator": rng.choice(["Gt", "Lt"]), "values": [str(rng.randint(1, 6))]})
            terms = [{"matchExpressions": exprs}]
            if rng.random() < 0.2:
                terms.append({"matchExpressions": [{"key": "disk", "operator": "In", "values": ["ssd"]}]})
        out["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": terms}
    if rng.random() < 0.6:
        out["preferredDuringSchedulingIgnoredDuringExecution"] = [
            {"weight": rng.randint(1, 100), "preference": {"matchExpressions": [
                rng.choice([{"key": "disk", "operator": "In", "values": ["ssd"]},
                            {"key": "topology.kubernetes.io/zone", "operator": "In", "values": [rng.choice(ZONES)]},
                            {"key": "size", "operator": "Gt", "values": ["2"]}])]}}
            for _ in range(rng.randint(1, 2))]
    return out


def _tolerations(rng: random.Random) -> list[dict[str, Any]]:
    out = []
    for _ in range(rng.randint(1, 2)):
        r = rng.random()
        if r < 0.1:
            out.append({"operator": "Exists"})
        elif r < 0.4:
            out.append({"key": "dedicated", "operator": "Exists", **({"effect": rng.choice(
                ["NoSchedule", "PreferNoSchedule", "NoExecute"])} if rng.random() < 0.5 else {})})
        else:
            out.append({"key": rng.choice(["dedicated", "spot"]), "operator": "Equal",
                        "value": rng.choice(["infra", "gpu", "true"]),
                        **({"effect": rng.choice(["NoSchedule", "PreferNoSchedule", "NoExecute"])}
                           if rng.random() < 0.7 else {})})
    return out


def _spread(rng: random.Random, app: str) -> list[dict[str, Any]]:
    out = []
    keys = rng.sample(["topology.kubernetes.io/zone", "kubernetes.io/hostname"], rng.randint(1, 2))
    for key in keys:
        hard = rng.random() < 0.5
        c: dict[str, Any] = {"maxSkew": rng.randint(1, 3), "topologyKey": key,
                             "whenUnsatisfiable": "DoNotSchedule" if hard else "ScheduleAnyway",
                             "labelSelector": _selector(rng, app)}
        if hard and rng.random() < 0.3:
            c["minDomains"] = rng.randint(1, 5)
        if rng.random() < 0.4:
            c["nodeAffinityPolicy"] = rng.choice(["Honor", "Ignore"])
        if rng.random() < 0.4:
            c["nodeTaintsPolicy"] = rng.choice(["Honor", "Ignore"])
        if rng.random() < 0.2:
            c["matchLabelKeys"] = ["version"]
        out.append(c)
    return out


def _resources(rng: random.Random, small: bool) -> dict[str, Any]:
    cpu = rng.choice([0, 50, 100, 250, 500, 1000, 1500]) if small else rng.choice([100, 250, 500, 1000, 2000, 3000])
    req: dict[str, str] = {}
    if cpu:
        req["cpu"] = f"{cpu}m"
    if rng.random() < 0.85:
        req["memory"] = f"{rng.choice([64, 128, 256, 512, 1024, 2048, 4096])}Mi"
    if rng.random() < 0.1:
        req["ephemeral-storage"] = f"{rng.choice([1, 2, 5])}Gi"
    if rng.random() < 0.08:
        req[GPU] = str(rng.randint(1, 2))
    if GPU in req:  # extended resources cannot be overcommitted: the API server wants limits equal to requests
        return {"requests": req, "limits": {GPU: req[GPU]}}
    return {"requests": req} if req else {}


def cluster(seed: int, profile: str | None = None) -> tuple[list[dict[str, Any]], str]:
    """A random cluster (manifests) and its profile's name: 3-60 nodes, 10-150 pods (some running)."""
    rng = random.Random(seed)
    profile = profile or rng.choice(sorted(PROFILES))
    n_nodes = rng.randint(3, 60)
    n_pods = rng.randint(10, 150)
    zones = ZONES[:rng.randint(1, 4)]
    docs: list[dict[str, Any]] = [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-a", "labels": {"tier": "prod"}}},
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-b", "labels": {"tier": "dev"}}},
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"}, "value": 1000},
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "low"}, "value": -10},
    ]
    names = [f"node-{i:02d}" for i in range(n_nodes)]
    for name in names:
        size = rng.randint(1, 8)
        labels = {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "size": str(size)}
        if rng.random() < 0.93:
            labels["topology.kubernetes.io/zone"] = rng.choice(zones)
        if rng.random() < 0.4:
            labels["disk"] = rng.choice(["ssd", "hdd"])
        alloc = {"cpu": f"{size * 1000 - rng.choice([0, 100, 250])}m", "memory": f"{size * 2}Gi",
                 "pods": str(rng.choice([4, 8, 16, 110])), "ephemeral-storage": "20Gi"}
        if rng.random() < 0.2:
            alloc[GPU] = str(rng.randint(1, 4))
        spec: dict[str, Any] = {}
        if rng.random() < 0.25:
            spec["taints"] = [{"key": rng.choice(["dedicated", "spot"]), "value": rng.choice(["infra", "gpu", "true"]),
                               "effect": rng.choice(["NoSchedule", "PreferNoSchedule", "NoExecute"])}
                              for _ in range(rng.randint(1, 2))]
            # the API server rejects two taints with one key and effect
            seen, taints = set(), []
            for t in spec["taints"]:
                if (t["key"], t["effect"]) not in seen:
                    seen.add((t["key"], t["effect"]))
                    taints.append(t)
            spec["taints"] = taints
        if rng.random() < 0.07:
            spec["unschedulable"] = True
        docs.append({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels},
                     "spec": spec, "status": {"capacity": dict(alloc), "allocatable": alloc}})
    n_running = rng.randint(0, n_pods // 2)
    apps = list(APPS[:rng.randint(2, len(APPS))])
    rules = {app: {r for r in ("selector", "node-affinity", "tolerations", "ports", "anti-affinity", "affinity",
                               "preferred-pod", "spread", "priority", "namespace", "nodename")
                   if rng.random() < {"nodename": 0.04, "ports": 0.1}.get(r, 0.3)} for app in apps}
    for i in range(n_pods):
        app = rng.choice(apps)
        running = i < n_running
        want = rules[app]
        ns = "team-a" if "namespace" in want and i % 2 else "default"
        labels = {"app": app, "version": rng.choice(["v1", "v2"])}
        spec: dict[str, Any] = {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.9",
                                                "resources": _resources(rng, small=True)}]}
        if running:
            spec["nodeName"] = rng.choice(names)
        affinity: dict[str, Any] = {}
        if "selector" in want and rng.random() < 0.7:
            spec["nodeSelector"] = rng.choice([{"disk": "ssd"}, {"topology.kubernetes.io/zone": rng.choice(zones)}])
        if "node-affinity" in want:
            na = _node_affinity(rng, names)
            if na:
                affinity["nodeAffinity"] = na
        if "tolerations" in want:
            spec["tolerations"] = _tolerations(rng)
        if "ports" in want:
            spec["containers"][0]["ports"] = [{"containerPort": 8080, "hostPort": rng.choice([8080, 9090]),
                                               "protocol": rng.choice(["TCP", "TCP", "UDP"])}]
        if "anti-affinity" in want:
            affinity["podAntiAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": [
                _term(rng, rng.choice([app, app, rng.choice(apps)]))]}
        if "affinity" in want and rng.random() < 0.7:
            affinity["podAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": [
                _term(rng, rng.choice([app, rng.choice(apps)]))]}
        if "preferred-pod" in want:
            kind = rng.choice(["podAffinity", "podAntiAffinity"])
            affinity.setdefault(kind, {})["preferredDuringSchedulingIgnoredDuringExecution"] = [
                {"weight": rng.randint(1, 100), "podAffinityTerm": _term(rng, rng.choice(apps))}]
        if affinity:
            spec["affinity"] = affinity
        if "spread" in want:
            spec["topologySpreadConstraints"] = _spread(rng, app)
        if "priority" in want:
            spec["priorityClassName"] = rng.choice(["high", "low"])
        if "nodename" in want and not running and rng.random() < 0.5:
            spec["nodeName"] = rng.choice(names)  # a pending pod can't pin: pinned pods are running ones
        docs.append({"apiVersion": "v1", "kind": "Pod",
                     "metadata": {"name": f"{app}-{i:03d}", "namespace": ns, "labels": labels}, "spec": spec})
    return docs, profile


# ------------------------------------------------------------------------------------------------ comparison


@dataclass(frozen=True)
class Difference:
    kind: str  # "feasible", "node", "message", "invalid"
    pod: str
    detail: str


def run_podplan(input_path: Path, config: Path | None, seed: int = 0) -> dict[str, Any]:
    """`podplan simulate --no-preemption -o json` on the input (the command itself, run in this process so that
    hundreds of clusters do not pay the interpreter's start-up each)."""
    from click.testing import CliRunner

    from podplan.cli import main

    args = ["simulate", "--no-preemption", "-o", "json", "--seed", str(seed), str(input_path)]
    if config is not None:
        args[1:1] = ["--scheduler-config", str(config)]
    try:
        runner = CliRunner(mix_stderr=False)  # type: ignore[call-arg]  # click < 8.2 mixes streams by default
    except TypeError:
        runner = CliRunner()
    result = runner.invoke(main, args)
    if result.exit_code != 0:
        raise RuntimeError(f"podplan {' '.join(args)}: exit {result.exit_code}: {result.output[-2000:]}"
                           f"{result.exception!r}")
    return json.loads(result.stdout)


def run_kubesched(input_path: Path, config: Path | None, follow: Path, tool: Path = KUBESCHED
                  ) -> tuple[list[dict[str, Any]], str]:
    cmd = [str(tool), "--follow", str(follow)]
    if config is not None:
        cmd += ["--config", str(config)]
    out = subprocess.run(cmd + [str(input_path)], capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"kubesched exit {out.returncode}: {out.stderr.strip()[-2000:]}")
    return json.loads(out.stdout), out.stderr


def podplan_feasible(input_path: Path, config: Path | None, order: list[str], placements: dict[str, str]
                     ) -> dict[str, list[str]]:
    """Per pending pod (in kube-scheduler's queue order), the nodes podplan's filters pass for it in the state
    where the plan's earlier placements are bound."""
    from podplan.models.loader import load_paths
    from podplan.models.schedulerconfig import load_scheduler_config
    from podplan.optimizer.profiles import default_profiles, profiles_from
    from podplan.optimizer.state import ClusterState
    from podplan.optimizer.vectorized import VectorScheduler

    cluster = load_paths([str(input_path)])
    profiles = default_profiles() if config is None else profiles_from(load_scheduler_config(str(config)))
    profile = profiles.profiles[0]
    state = ClusterState.from_cluster(cluster)
    # every Filter of the profile on every node, vectorized where the plugin has a form (proven equal to the
    # plain predicates by the property tests), the plain predicate elsewhere
    judge = VectorScheduler(state, 0, profile=profile, protect_placed=False, plain_fallback=True)
    pods = {p.key: p for p in cluster.pending}
    out = {}
    for key in order:
        pod = pods[key]
        out[key] = sorted(judge.names[i] for i in np.flatnonzero(judge.feasible(pod)).tolist())
        if key in placements:
            state.add(pod, placements[key])
    return out


def compare(seed: int, workdir: Path, profile: str | None = None, tool: Path = KUBESCHED,
            feasible: bool = True) -> tuple[list[Difference], int, str]:
    """(the differences, the number of pending pods compared, the profile) on cluster `seed`."""
    docs, profile = cluster(seed, profile)
    workdir.mkdir(parents=True, exist_ok=True)
    input_path = workdir / f"cluster-{seed}.yaml"
    input_path.write_text(yaml.safe_dump_all(docs, sort_keys=False))
    config = None
    if (doc := config_document(profile)) is not None:
        config = workdir / f"config-{seed}.yaml"
        config.write_text(yaml.safe_dump(doc, sort_keys=False))
    plan = run_podplan(input_path, config, seed)
    placements = {p["pod"]: p["node"] for p in plan["placements"]}
    pending = {p["pod"]: p["reason"] for p in plan["pending"]}
    follow = workdir / f"plan-{seed}.json"
    follow.write_text(json.dumps(placements))
    records, stderr = run_kubesched(input_path, config, follow, tool)
    diffs: list[Difference] = []
    for line in stderr.splitlines():
        if line.startswith("invalid"):
            diffs.append(Difference("invalid", "-", line))
    ours_feasible = podplan_feasible(input_path, config, [r["pod"] for r in records], placements) if feasible else {}
    compared = 0
    for r in records:
        key = r["pod"]
        compared += 1
        if feasible and sorted(r["feasible"] or []) != ours_feasible.get(key):
            theirs, ours = set(r["feasible"] or []), set(ours_feasible.get(key, []))
            diffs.append(Difference("feasible", key, f"kube only {sorted(theirs - ours)}, "
                                                     f"podplan only {sorted(ours - theirs)}"))
        node = placements.get(key)
        if r["node"] is None or node is None:
            if r["node"] != node:
                diffs.append(Difference("node", key, f"kube {r['node']}, podplan {node} ({pending.get(key, '')})"))
            elif pending.get(key) != r["message"]:
                diffs.append(Difference("message", key, f"kube {r['message']!r}, podplan {pending.get(key)!r}"))
        elif r.get("diverged") or node not in (r["top"] or []):
            scores = r.get("scores") or {}
            diffs.append(Difference("score", key, f"podplan {node} ({scores.get(node)}), kube top {r['top']} "
                                                  f"({scores.get(r['top'][0]) if r['top'] else None})"))
        if r["node"] != node:
            break  # the two states differ from here on: later pods are not comparable
    return diffs, compared, profile


def kubesched_available(tool: Path = KUBESCHED) -> bool:
    return tool.is_file() and os.access(tool, os.X_OK)
