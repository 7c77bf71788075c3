"""`podplan generate`'s generator (models.generate): deterministic, loadable, counts honoured, realistic, and
for `adversarial` a known full placement that the greedy kube-scheduler misses."""
from __future__ import annotations

import hashlib
import io
import json
import statistics
import subprocess
import sys
from collections import Counter
from functools import cache
from pathlib import Path

import pytest
import yaml

from podplan.models.errors import PodplanError
from podplan.models.generate import PROFILES, GeneratedInstance, GeneratorError, dump_yaml, generate, generate_instance
from podplan.models.loader import parse_documents
from podplan.models.objects import GANG_ANNOTATION, Cluster
from podplan.models.selectors import selector_matches
from podplan.optimizer.greedy import simulate
from podplan.optimizer.verify import verify

ROOT = Path(__file__).resolve().parents[1]
REALISTIC = ("web", "batch", "mixed")
ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"


@cache
def instance(profile: str, nodes: int = 30, pods: int = 300, seed: int = 11, utilization: float = 0.7) -> GeneratedInstance:
    return generate_instance(nodes, pods, seed, profile, utilization)


@cache
def cluster(profile: str, nodes: int = 30, pods: int = 300, seed: int = 11, utilization: float = 0.7) -> Cluster:
    return parse_documents(instance(profile, nodes, pods, seed, utilization).manifests, f"generated-{profile}")


def digest(manifests: list[dict]) -> str:
    return hashlib.sha256(json.dumps(manifests, sort_keys=True).encode()).hexdigest()


def cpu_utilization(c: Cluster) -> float:
    requested = sum(p.requests.get("cpu", 0) for p in c.pods + c.pending)
    return requested / sum(n.allocatable["cpu"] for n in c.nodes)


def witness_placements(c: Cluster, inst: GeneratedInstance) -> dict[str, str]:
    """The witness (workload -> {node: count}) as pod key -> node over the loaded pending pods."""
    by_workload: dict[str, list[str]] = {}
    for pod in c.pending:
        by_workload.setdefault(pod.workload, []).append(pod.key)
    placements: dict[str, str] = {}
    for workload, per_node in inst.witness.items():
        keys = iter(by_workload[workload])
        for node, count in per_node.items():
            for _ in range(count):
                placements[next(keys)] = node
    return placements


# ---------------------------------------------------------------------------------------------- determinism


@pytest.mark.parametrize("profile", PROFILES, ids=[f"{p}: the same seed gives identical manifests" for p in PROFILES])
def test_same_seed_gives_identical_manifests(profile: str) -> None:
    assert generate(30, 300, 5, profile) == generate(30, 300, 5, profile)


@pytest.mark.parametrize("profile", PROFILES, ids=[f"{p}: another seed gives another cluster" for p in PROFILES])
def test_different_seed_gives_different_manifests(profile: str) -> None:
    assert digest(generate(30, 300, 5, profile)) != digest(generate(30, 300, 6, profile))


def test_a_fresh_interpreter_with_another_hash_seed_generates_the_same_bytes() -> None:
    code = ("import hashlib, json; from models.generate import generate; "
            "print(hashlib.sha256(json.dumps(generate(40, 400, 3, 'mixed'), sort_keys=True).encode()).hexdigest())")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True,
                         env={"PYTHONHASHSEED": "12345", "PATH": "/usr/bin:/bin"})
    assert out.stdout.strip() == digest(generate(40, 400, 3, "mixed"))


def yaml_bytes(nodes: int, pods: int, seed: int, profile: str) -> str:
    out = io.StringIO()
    dump_yaml(generate(nodes, pods, seed, profile), out)
    return hashlib.sha256(out.getvalue().encode()).hexdigest()


@pytest.mark.parametrize("profile,nodes,pods", [("production", 40, 400), ("gpu", 40, 200)],
                         ids=["production: another interpreter prints byte-identical YAML",
                              "gpu: another interpreter prints byte-identical YAML"])
def test_a_fresh_interpreter_prints_byte_identical_yaml(profile: str, nodes: int, pods: int) -> None:
    code = ("import hashlib, io; from models.generate import dump_yaml, generate; out = io.StringIO(); "
            f"dump_yaml(generate({nodes}, {pods}, 3, {profile!r}), out); "
            "print(hashlib.sha256(out.getvalue().encode()).hexdigest())")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True,
                         env={"PYTHONHASHSEED": "54321", "PATH": "/usr/bin:/bin"})
    assert out.stdout.strip() == yaml_bytes(nodes, pods, 3, profile)


# ---------------------------------------------------------------------------------------------- validity


SIZES = [(p, n, m) for p in REALISTIC for n, m in ((1, 0), (1, 1), (3, 20), (30, 300), (100, 1000))]
SIZES += [("adversarial", n, m) for n, m in ((2, 3), (6, 40), (30, 300), (100, 1000))]


@pytest.mark.parametrize("profile,nodes,pods", SIZES,
                         ids=[f"{p} with {n} nodes and {m} pods loads with exactly those counts" for p, n, m in SIZES])
def test_generated_manifests_load_through_the_parser_with_the_asked_counts(profile: str, nodes: int, pods: int) -> None:
    c = cluster(profile, nodes, pods)
    assert len(c.nodes) == nodes
    assert len(c.pods) + len(c.pending) == pods
    assert c.warnings == () and c.skipped == {}


@pytest.mark.parametrize("profile", PROFILES, ids=[f"{p}: every running pod obeys every rule" for p in PROFILES])
def test_running_pods_of_a_generated_cluster_obey_every_rule(profile: str) -> None:
    c = cluster(profile, 100, 1000)
    assert c.pods, "some pods already run"
    assert verify(c, {}).violations == ()


CASES_UTIL = [(p, u) for p in REALISTIC for u in (0.4, 0.7, 0.9)]


@pytest.mark.parametrize("profile,target", CASES_UTIL,
                         ids=[f"{p} at utilization {u} requests about {u:.0%} of allocatable cpu" for p, u in CASES_UTIL])
def test_pods_request_the_target_share_of_allocatable_cpu(profile: str, target: float) -> None:
    assert cpu_utilization(cluster(profile, 200, 2000, utilization=target)) == pytest.approx(target, abs=0.08)


# ---------------------------------------------------------------------------------------------- realism


def test_nodes_come_in_real_instance_shapes_over_three_zones() -> None:
    c = cluster("mixed", 100, 1000)
    types = Counter(n.labels["node.kubernetes.io/instance-type"] for n in c.nodes)
    assert set(types) == {"m5.xlarge", "m5.2xlarge", "m5.4xlarge", "m5.8xlarge", "p3.8xlarge", "r5.2xlarge"}
    assert {n.labels[ZONE] for n in c.nodes} == {"us-east-1a", "us-east-1b", "us-east-1c"}
    assert all(n.labels[HOST] == n.name for n in c.nodes)
    cores = {n.labels["node.kubernetes.io/instance-type"]: -(-n.allocatable["cpu"] // 1000) for n in c.nodes}
    assert cores["m5.xlarge"] == 4 and cores["m5.2xlarge"] == 8 and cores["m5.4xlarge"] == 16 and cores["m5.8xlarge"] == 32


def test_gpu_nodes_are_tainted_and_dedicated_nodes_tainted_and_labelled() -> None:
    c = cluster("mixed", 100, 1000)
    gpu = [n for n in c.nodes if n.allocatable.get("nvidia.com/gpu")]
    dedicated = [n for n in c.nodes if "dedicated" in n.labels]
    assert gpu and dedicated
    assert all([(t.key, t.effect) for t in n.taints] == [("nvidia.com/gpu", "NoSchedule")] for n in gpu)
    assert all([(t.key, t.value, t.effect) for t in n.taints] == [("dedicated", n.labels["dedicated"], "NoSchedule")]
               for n in dedicated)


def test_daemonsets_run_exactly_one_owned_pod_on_every_node_they_cover() -> None:
    c = cluster("mixed", 100, 1000)
    daemonsets = [w for w in c.workloads if w.kind == "DaemonSet"]
    assert len(daemonsets) >= 2
    for ds in daemonsets:
        nodes = Counter(p.node_name for p in c.pods if p.workload == ds.key)
        assert set(nodes.values()) == {1}
        covers_all = ds.name != "nvidia-device-plugin-daemonset"
        assert len(nodes) == (len(c.nodes) if covers_all else sum(1 for n in c.nodes if n.allocatable.get("nvidia.com/gpu")))
        assert all(p.controller is not None and p.controller.kind == "DaemonSet" for p in c.pods if p.workload == ds.key)
    assert not any(p.workload.startswith("DaemonSet/") for p in c.pending)


def test_a_mixed_cluster_holds_every_kind_of_workload_and_policy_object() -> None:
    inst = instance("mixed", 200, 2000)
    kinds = Counter(m["kind"] for m in inst.manifests)
    for kind in ("Namespace", "PriorityClass", "Node", "DaemonSet", "Pod", "Deployment", "ReplicaSet", "StatefulSet",
                 "Job", "PodDisruptionBudget"):
        assert kinds[kind] > 0, kind
    c = cluster("mixed", 200, 2000)
    running = Counter(p.workload for p in c.pods)
    pending = Counter(p.workload for p in c.pending)
    assert any(running[w.key] and pending[w.key] for w in c.workloads), "a Deployment scaled above its running pods"
    assert all(p.controller and p.controller.kind == "ReplicaSet" for p in c.pods if p.workload.startswith("Deployment/"))
    assert len({p.priority for p in c.pending}) >= 3


def test_web_cache_statefulset_and_trainer_pods_carry_their_rules() -> None:
    c = cluster("mixed", 200, 2000)
    templates = {w.key: w.template for w in c.workloads if w.template is not None}
    webs = [t for k, t in templates.items() if t.labels.get("app.kubernetes.io/component") == "frontend"]
    caches = [t for k, t in templates.items() if t.labels.get("app.kubernetes.io/component") == "cache"]
    dbs = [t for k, t in templates.items() if k.startswith("StatefulSet/")]
    trainers = [w for w in c.workloads if w.template and w.template.requests.get("nvidia.com/gpu")]
    assert webs and caches and dbs and trainers
    for t in webs:
        (spread,) = t.spread_constraints
        assert (spread.topology_key, spread.max_skew, spread.when_unsatisfiable) == (ZONE, 1, "DoNotSchedule")
        assert [w.term.topology_key for w in t.affinity.anti_preferred] == [HOST]
    web_labels = {t.labels["app.kubernetes.io/name"]: t.labels for t in webs}
    for t in caches:
        (term,) = t.affinity.pod_required
        assert term.topology_key in (HOST, ZONE)
        assert any(selector_matches(term.label_selector, labels) for labels in web_labels.values())
    for t in dbs:
        (term,) = t.affinity.anti_required
        assert term.topology_key == HOST and selector_matches(term.label_selector, t.labels)
    groups = {g.key: g.min_member for g in c.pod_groups}
    for w in trainers:
        assert any(tol.key == "nvidia.com/gpu" and tol.operator == "Exists" for tol in w.template.tolerations)
        members = [p for p in c.pending if p.workload == w.key]
        assert len(members) == w.replicas, "trainers wait whole"
        assert {groups.get(p.pod_group) for p in members} == {w.replicas} or w.annotations.get(GANG_ANNOTATION) == "true"
    assert groups, "some trainer gangs are PodGroups"


def test_replica_counts_are_heavy_tailed() -> None:
    manifests = instance("mixed", 1000, 10000).manifests
    replicas = [m["spec"].get("replicas", m["spec"].get("parallelism")) for m in manifests
                if m["kind"] in ("Deployment", "StatefulSet", "Job")]
    assert statistics.median(replicas) <= 4
    assert max(replicas) >= 20 * statistics.median(replicas)


# ---------------------------------------------------------------------------------------------- adversarial


@pytest.mark.parametrize("nodes,pods", [(6, 40), (30, 300), (100, 1000)],
                         ids=["6 nodes 40 pods", "30 nodes 300 pods", "100 nodes 1000 pods"])
def test_adversarial_witness_places_every_pending_pod_and_verifies(nodes: int, pods: int) -> None:
    c = cluster("adversarial", nodes, pods)
    placements = witness_placements(c, instance("adversarial", nodes, pods))
    assert len(placements) == len(c.pending) > 0
    report = verify(c, placements)
    assert report.ok and report.violations == ()


@pytest.mark.parametrize("nodes,pods", [(6, 40), (30, 300)], ids=["6 nodes 40 pods", "30 nodes 300 pods"])
def test_greedy_kube_scheduler_leaves_adversarial_pods_pending_though_all_fit(nodes: int, pods: int) -> None:
    c = cluster("adversarial", nodes, pods)
    plan = simulate(c)
    assert plan.pending, "greedy spreads the medium pods and strands the large ones"
    assert all("Insufficient cpu" in message for message in plan.pending.values())
    witness = witness_placements(c, instance("adversarial", nodes, pods))
    assert len(plan.placements) + len(plan.pending) == len(c.pending) == len(witness)


# ---------------------------------------------------------------------------------------------- production


def production_workloads(c: Cluster) -> list:
    return [w for w in c.workloads if w.kind in ("Deployment", "StatefulSet") and w.namespace != "kube-system"]


PENDING_SIZES = [("production", 1, 0), ("production", 3, 20), ("production", 30, 300), ("production", 100, 1000),
                 ("gpu", 8, 8), ("gpu", 30, 200), ("gpu", 150, 800)]


@pytest.mark.parametrize("profile,nodes,pods", PENDING_SIZES,
                         ids=[f"{p} with {n} nodes and {m} pods loads with exactly {m} pending pods"
                              for p, n, m in PENDING_SIZES])
def test_production_and_gpu_count_pending_pods(profile: str, nodes: int, pods: int) -> None:
    c = cluster(profile, nodes, pods)
    assert len(c.nodes) == nodes and len(c.pending) == pods
    assert c.warnings == () and c.skipped == {}


def test_production_has_three_general_pools_and_a_gpu_pool_tainted_present_noschedule() -> None:
    c = cluster("production", 300, 3000)
    types = Counter(n.labels["node.kubernetes.io/instance-type"] for n in c.nodes)
    assert set(types) == {"m5.2xlarge", "m5.4xlarge", "r5.2xlarge", "g5.12xlarge"}
    gpu = [n for n in c.nodes if n.allocatable.get("nvidia.com/gpu")]
    assert gpu and all([(t.key, t.value, t.effect) for t in n.taints] == [("nvidia.com/gpu", "present", "NoSchedule")]
                       for n in gpu)
    assert {n.labels[ZONE] for n in c.nodes} == {"us-east-1a", "us-east-1b", "us-east-1c"}


def test_production_runs_four_or_five_daemonset_pods_on_every_node() -> None:
    c = cluster("production", 300, 3000)
    per_node = Counter(p.node_name for p in c.pods if p.workload.startswith("DaemonSet/"))
    assert set(per_node.values()) == {4, 5} and len(per_node) == 300


def test_production_has_about_1166_workloads_per_1000_nodes_with_the_rule_mix_of_the_scale_goals() -> None:
    c = cluster("production", 300, 3000)
    workloads = production_workloads(c)
    assert len(workloads) == pytest.approx(1.166 * 300, abs=2)
    templates = [w.template for w in workloads]
    stateful = [w for w in workloads if w.kind == "StatefulSet"]
    assert len(stateful) / len(workloads) == pytest.approx(0.2, abs=0.02)
    assert all([t.topology_key for t in w.template.affinity.anti_required] == [HOST] for w in stateful)
    spread = [t for t in templates if any(s.topology_key == ZONE and s.when_unsatisfiable == "DoNotSchedule"
                                          for s in t.spread_constraints)]
    assert len(spread) / len(workloads) == pytest.approx(1 / 3, abs=0.03)
    preferred = [t for t in templates if t.affinity.node_preferred or t.affinity.pod_preferred or t.affinity.anti_preferred]
    assert len(preferred) / len(workloads) == pytest.approx(1 / 3, abs=0.05)
    assert len({p.priority for p in c.pending}) == 3


def test_production_web_pods_require_a_running_cache_pod_in_their_zone() -> None:
    c = cluster("production", 100, 1000)
    webs = [w for w in production_workloads(c) if w.template.affinity.pod_required]
    assert webs
    for w in webs:
        (term,) = w.template.affinity.pod_required
        assert term.topology_key == ZONE
        zones = {n.name: n.labels[ZONE] for n in c.nodes}
        cache_zones = {zones[p.node_name] for p in c.pods if selector_matches(term.label_selector, p.labels)}
        assert cache_zones == {"us-east-1a", "us-east-1b", "us-east-1c"}


def test_production_pods_ask_about_70_percent_of_the_general_pools_cpu_and_greedy_places_them_all() -> None:
    c = cluster("production", 100, 1000)
    general = [n for n in c.nodes if not n.allocatable.get("nvidia.com/gpu")]
    asked = sum(p.requests.get("cpu", 0) for p in c.pods + c.pending if not p.requests.get("nvidia.com/gpu"))
    assert asked / sum(n.allocatable["cpu"] for n in general) == pytest.approx(0.7, abs=0.03)
    plan = simulate(c)
    assert plan.pending == {} and len(plan.placements) == 1000


# ---------------------------------------------------------------------------------------------------- gpu


def test_gpu_cluster_has_eight_gpu_models_with_milli_gpus_beside_whole_ones() -> None:
    c = cluster("gpu", 150, 800)
    models = {n.labels["nvidia.com/gpu.product"] for n in c.nodes}
    assert len(models) == 8
    assert all(n.allocatable["podplan.io/gpu-milli"] == 1000 * n.allocatable["nvidia.com/gpu"] for n in c.nodes)


def test_gpu_pods_fill_98_percent_of_the_gpus_with_requests_that_nearly_all_differ() -> None:
    c = cluster("gpu", 150, 800)
    milli = sum(n.allocatable["podplan.io/gpu-milli"] for n in c.nodes)
    assert sum(p.requests["podplan.io/gpu-milli"] for p in c.pending) / milli == pytest.approx(0.98, abs=0.01)
    distinct = {(p.requests["cpu"], p.requests["memory"], p.requests["podplan.io/gpu-milli"]) for p in c.pending}
    assert len(distinct) >= 0.99 * len(c.pending)
    whole = [p for p in c.pending if p.requests.get("nvidia.com/gpu")]
    assert whole and all(p.requests["podplan.io/gpu-milli"] == 1000 * p.requests["nvidia.com/gpu"] for p in whole)
    assert any(p.requests["podplan.io/gpu-milli"] < 1000 for p in c.pending), "fractional GPUs too"


def test_a_third_of_gpu_pods_require_gpu_models_by_node_affinity() -> None:
    c = cluster("gpu", 150, 800)
    constrained = [p for p in c.pending if p.affinity.node_required is not None]
    assert len(constrained) / len(c.pending) == pytest.approx(1 / 3, abs=0.05)


@pytest.mark.parametrize("nodes,pods", [(30, 200), (150, 800)], ids=["30 nodes 200 pods", "150 nodes 800 pods"])
def test_gpu_witness_places_every_pod_and_verifies(nodes: int, pods: int) -> None:
    c = cluster("gpu", nodes, pods)
    placements = witness_placements(c, instance("gpu", nodes, pods))
    assert len(placements) == len(c.pending) == pods
    report = verify(c, placements)
    assert report.ok and report.violations == ()


def test_realistic_profiles_carry_no_witness() -> None:
    assert all(instance(p).witness == {} for p in REALISTIC)


# ---------------------------------------------------------------------------------------------- arguments


BAD = [
    (dict(nodes=0, pods=1, profile="mixed"), "--nodes must be at least 1"),
    (dict(nodes=3, pods=-1, profile="mixed"), "--pods must not be negative"),
    (dict(nodes=3, pods=10, profile="hpc"), 'unknown profile "hpc"'),
    (dict(nodes=3, pods=200, profile="gpu"), "the gpu profile needs between 3 and 24 pods"),
    (dict(nodes=3, pods=10, profile="web", utilization=0.0), "--utilization must be in (0, 1]"),
    (dict(nodes=3, pods=10, profile="web", utilization=1.5), "--utilization must be in (0, 1]"),
    (dict(nodes=2, pods=500, profile="mixed"), "cannot fit 2 nodes of 110 pods"),
    (dict(nodes=1, pods=10, profile="adversarial"), "needs at least 2 nodes"),
    (dict(nodes=10, pods=10, profile="adversarial"), "needs at least nodes + 1 = 11 pods"),
]


@pytest.mark.parametrize("kwargs,message", BAD, ids=[f"{m} is refused" for _, m in BAD])
def test_bad_arguments_raise_one_podplan_error(kwargs: dict, message: str) -> None:
    with pytest.raises(GeneratorError) as err:
        generate(seed=1, **kwargs)
    assert isinstance(err.value, PodplanError) and message in str(err.value)


# ---------------------------------------------------------------------------------------------- YAML output


@pytest.mark.parametrize("profile", PROFILES, ids=[f"{p}: dump_yaml reads back as the same manifests" for p in PROFILES])
def test_dump_yaml_round_trips_through_safe_load(profile: str) -> None:
    manifests = generate(12, 120, 2, profile)
    out = io.StringIO()
    dump_yaml(manifests, out)
    text = out.getvalue()
    # libyaml's loader resolves scalars with the same (Python) resolver as yaml.safe_load, only faster.
    assert list(yaml.load_all(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))) == manifests
    assert "&id" not in text and "*id" not in text


def test_dump_yaml_quotes_every_string_yaml_would_misread() -> None:
    tricky = {"strings": ["yes", "No", "on", "1e3", "0x1f", "010", "1_000", "12:30", "2024-05-14", ".5", "", " x",
                          "a: b", "#c", "- d", "null", "~", "true", "1.5", "3", "a\nb", "*x", "&y", "!t", "%p", "@q",
                          "{s}", "[t]", "u,v", "'w'", '"x"', "-1", "+1", ".inf", "NaN", "é"],
              "plain": ["500m", "16093008Ki", "2Gi", "nvidia.com/gpu", "ip-10-0-1-2.ec2.internal"],
              "other": [0, 2000001000, True, False, None, {}, [], [[1, 2], {"k": [1]}]], "1": "one", "true": 1}
    out = io.StringIO()
    dump_yaml([tricky, {"kind": "Second"}], out)
    assert list(yaml.safe_load_all(out.getvalue())) == [tricky, {"kind": "Second"}]
    assert "- 500m\n" in out.getvalue() and "- nvidia.com/gpu\n" in out.getvalue(), "quantities and names stay plain"
