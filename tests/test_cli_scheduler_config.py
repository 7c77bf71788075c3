"""--scheduler-config end to end: the user's KubeSchedulerConfiguration changes what simulate, solve, compare,
explain and verify do as it changes kube-scheduler; pods kube-scheduler would not bind (scheduling gates,
other schedulers) stay pending in every command; verify flags a pod bound to a node that does not exist."""
from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from builders import container, node_manifest, pod_manifest, workload_manifest
from podplan.cli import main

ROOT = Path(__file__).resolve().parents[1]
BIN_PACKING = str(ROOT / "instances" / "bin-packing.yaml")
MOST_ALLOCATED = str(ROOT / "instances" / "scheduler-configs" / "most-allocated.yaml")
ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"
GATED = "batch/train-queued"
VOLCANO = "batch/mpi-launcher"


def run(*args: str, stdin: str | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args), input=stdin)
    return result.exit_code, result.stdout, result.stderr


def write(tmp_path: Path, name: str, *docs: Any) -> str:
    path = tmp_path / name
    path.write_text(yaml.safe_dump_all(docs, sort_keys=False))
    return str(path)


def config(*profiles: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
            "profiles": list(profiles)}


def plan_json(*args: str) -> dict[str, Any]:
    code, out, err = run(*args, "-o", "json")
    assert code == 0, out + err
    return json.loads(out)


def per_node(doc: dict[str, Any]) -> Counter[str]:
    return Counter(p["node"] for p in doc["placements"])


# ------------------------------------------------------------------------------------------- scoring strategy


def test_most_allocated_stacks_the_workers_on_the_fullest_node_where_least_allocated_spreads_them() -> None:
    default = per_node(plan_json("simulate", BIN_PACKING))
    packed = per_node(plan_json("simulate", BIN_PACKING, "--scheduler-config", MOST_ALLOCATED))
    # LeastAllocated: batch-a (2 of 3.92 cpu used) scores lowest for every worker.
    assert default["batch-a"] == 0 and sum(default.values()) == 4
    # MostAllocated: batch-a until a fourth worker no longer fits there (2 + 4 × 0.5 > 3.92).
    assert packed["batch-a"] == 3 and sum(packed.values()) == 4


def _three_empty_nodes(tmp_path: Path) -> str:
    docs = [node_manifest(f"n{i}", {HOST: f"n{i}"}) for i in range(3)]
    docs += [pod_manifest(f"job-{i}", containers=[container(requests={"cpu": "1", "memory": "1Gi"})]) for i in range(3)]
    return write(tmp_path, "cluster.yaml", *docs)


def test_solve_packs_under_a_most_allocated_configuration_and_spreads_without_it(tmp_path: Path) -> None:
    cluster = _three_empty_nodes(tmp_path)
    spread = per_node(plan_json("solve", cluster, "--time-limit", "5"))
    packed = per_node(plan_json("solve", cluster, "--time-limit", "5", "--scheduler-config", MOST_ALLOCATED))
    assert sorted(spread.values()) == [1, 1, 1]
    assert sorted(packed.values()) == [3]


def test_an_explicit_strategy_wins_over_the_configured_scoring_strategy(tmp_path: Path) -> None:
    cluster = _three_empty_nodes(tmp_path)
    doc = plan_json("solve", cluster, "--time-limit", "5", "--scheduler-config", MOST_ALLOCATED, "--strategy", "spread")
    assert sorted(per_node(doc).values()) == [1, 1, 1]


# ------------------------------------------------------------------------------------------- disabled filters


def _spread_blocked(tmp_path: Path) -> str:
    """One node without a zone label: a DoNotSchedule zone spread constraint rejects it."""
    spread = [{"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule",
               "labelSelector": {"matchLabels": {"app": "web"}}}]
    return write(tmp_path, "cluster.yaml", node_manifest("n1", {HOST: "n1"}),
                 pod_manifest("web-0", labels={"app": "web"}, topologySpreadConstraints=spread))


DISABLE_SPREAD = {
    "everywhere (multiPoint)": {"multiPoint": {"disabled": [{"name": "PodTopologySpread"}]}},
    "at Filter only": {"filter": {"disabled": [{"name": "PodTopologySpread"}]}},
}


@pytest.mark.parametrize("plugins", DISABLE_SPREAD.values(),
                         ids=[f"a configuration disabling PodTopologySpread {k} lets simulate and solve ignore spread"
                              for k in DISABLE_SPREAD])
@pytest.mark.parametrize("command", ["simulate", "solve"])
def test_a_disabled_spread_filter_no_longer_keeps_the_pod_pending(tmp_path: Path, command: str,
                                                                  plugins: dict[str, Any]) -> None:
    cluster = _spread_blocked(tmp_path)
    cfg = write(tmp_path, "sched.yaml", config({"plugins": plugins}))
    assert plan_json(command, cluster)["placements"] == []
    assert per_node(plan_json(command, cluster, "--scheduler-config", cfg)) == {"n1": 1}


def test_verify_judges_with_the_configured_filters(tmp_path: Path) -> None:
    spread = [{"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule",
               "labelSelector": {"matchLabels": {"app": "web"}}}]
    state = write(tmp_path, "state.yaml", node_manifest("n1", {HOST: "n1"}),
                  pod_manifest("web-0", labels={"app": "web"}, node="n1", topologySpreadConstraints=spread))
    cfg = write(tmp_path, "sched.yaml", config({"plugins": DISABLE_SPREAD["at Filter only"]}))
    assert run("verify", state)[0] == 1
    code, out, _ = run("verify", state, "--scheduler-config", cfg)
    assert code == 0, out


def test_rebalance_fixes_only_what_the_configured_filters_reject(tmp_path: Path) -> None:
    spread = [{"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule",
               "labelSelector": {"matchLabels": {"app": "web"}}}]
    pods = [pod_manifest(f"web-{i}", labels={"app": "web"}, node="n-a", owner=("ReplicaSet", "web"),
                         topologySpreadConstraints=spread) for i in range(2)]
    state = write(tmp_path, "state.yaml", node_manifest("n-a", {HOST: "n-a", ZONE: "a"}),
                  node_manifest("n-b", {HOST: "n-b", ZONE: "b"}),
                  workload_manifest("ReplicaSet", "web", {"app": "web"}, replicas=2,
                                    template_spec={"topologySpreadConstraints": spread}), *pods)
    cfg = write(tmp_path, "sched.yaml", config({"plugins": DISABLE_SPREAD["at Filter only"]}))
    code, out, err = run("rebalance", state, "-o", "json")
    assert code == 0, out + err
    assert json.loads(out)["moves"] == 1
    code, out, err = run("rebalance", state, "-o", "json", "--scheduler-config", cfg)
    assert code == 0, out + err
    assert json.loads(out)["waves"] == []


def test_a_configuration_disabling_default_preemption_turns_preemption_off(tmp_path: Path) -> None:
    instance = str(ROOT / "instances" / "preemption.yaml")
    cfg = write(tmp_path, "sched.yaml", config({"plugins": {"postFilter": {"disabled": [{"name": "DefaultPreemption"}]}}}))
    assert plan_json("simulate", instance)["preemptions"]
    assert plan_json("simulate", instance, "--scheduler-config", cfg)["preemptions"] == []
    off, flag = plan_json("simulate", instance, "--scheduler-config", cfg), plan_json("simulate", instance, "--no-preemption")
    assert (off["placements"], off["pending"]) == (flag["placements"], flag["pending"])


# ------------------------------------------------------------------------------------------------ plugin args


def test_added_affinity_confines_every_command_to_the_enforced_nodes(tmp_path: Path) -> None:
    added = {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": ZONE, "operator": "In", "values": ["us-east-1c"]}]}]}}
    cfg = write(tmp_path, "sched.yaml", config({"pluginConfig": [{"name": "NodeAffinity",
                                                                  "args": {"addedAffinity": added}}]}))
    for command in ("simulate", "solve"):
        assert set(per_node(plan_json(command, BIN_PACKING, "--scheduler-config", cfg))) == {"batch-c"}
    code, out, _ = run("explain", BIN_PACKING, "--scheduler-config", cfg)
    assert code == 0
    assert "NodeAffinity: node(s) didn't match scheduler-enforced node affinity" in out


def test_ignored_resources_are_not_checked_by_the_filter_nor_by_the_model(tmp_path: Path) -> None:
    cluster = write(tmp_path, "cluster.yaml", node_manifest("n1", {HOST: "n1"}),
                    pod_manifest("dongle", containers=[container(requests={"cpu": "1", "example.com/dongle": "1"})]))
    cfg = write(tmp_path, "sched.yaml", config({"pluginConfig": [{"name": "NodeResourcesFit",
                                                                  "args": {"ignoredResources": ["example.com/dongle"]}}]}))
    for command in ("simulate", "solve"):
        assert plan_json(command, cluster)["pending"][0]["reason"].startswith(
            "0/1 nodes are available: 1 Insufficient example.com/dongle.")
        assert per_node(plan_json(command, cluster, "--scheduler-config", cfg)) == {"n1": 1}


def test_list_default_spread_constraints_apply_in_simulate_and_verify_and_solve_refuses_them(tmp_path: Path) -> None:
    service = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web", "namespace": "default"},
               "spec": {"selector": {"app": "web"}}}
    cluster = write(tmp_path, "cluster.yaml", node_manifest("n1", {HOST: "n1"}), service,
                    pod_manifest("web-0", labels={"app": "web"}))
    cfg = write(tmp_path, "sched.yaml", config({"pluginConfig": [{"name": "PodTopologySpread", "args": {
        "defaultingType": "List",
        "defaultConstraints": [{"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule"}]}}]}))
    assert per_node(plan_json("simulate", cluster)) == {"n1": 1}
    doc = plan_json("simulate", cluster, "--scheduler-config", cfg)
    assert doc["placements"] == []
    assert doc["pending"][0]["reason"].startswith("0/1 nodes are available: 1 node(s) didn't match pod topology "
                                                  "spread constraints (missing required label).")
    state = write(tmp_path, "state.yaml", node_manifest("n1", {HOST: "n1"}), service,
                  pod_manifest("web-0", labels={"app": "web"}, node="n1"))
    assert run("verify", state)[0] == 0
    assert run("verify", state, "--scheduler-config", cfg)[0] == 1
    code, out, err = run("solve", cluster, "--scheduler-config", cfg)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert "solving under them is not supported yet" in err


# ---------------------------------------------------------------------------------------------- several profiles


def test_each_pod_is_simulated_by_the_profile_its_scheduler_name_names(tmp_path: Path) -> None:
    docs = list(yaml.safe_load_all(Path(BIN_PACKING).read_text()))
    docs = [d for d in docs if d and d["metadata"]["name"] not in ("train-queued", "mpi-launcher")]
    docs.append(pod_manifest("spread-me", namespace="batch", containers=[container(requests={"cpu": "500m"})],
                             schedulerName="spread-scheduler", priority=10))
    cluster = write(tmp_path, "cluster.yaml", *docs)
    doc = plan_json("simulate", cluster, "--scheduler-config", MOST_ALLOCATED)
    where = {p["pod"]: p["node"] for p in doc["placements"]}
    # Scheduled first (priority 10) by the LeastAllocated profile: an empty node, not the half-full batch-a.
    assert where["batch/spread-me"] != "batch-a"
    assert sum(1 for k, n in where.items() if k.startswith("batch/report-worker") and n == "batch-a") == 3


@pytest.mark.parametrize("scheduler,code", [("lenient-scheduler", 0), ("default-scheduler", 1)],
                         ids=["a pod of a profile without the spread filter is valid where it breaks spread",
                              "the same pod of the default profile is a violation"])
def test_verify_judges_each_pod_with_its_own_profile(tmp_path: Path, scheduler: str, code: int) -> None:
    spread = [{"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule",
               "labelSelector": {"matchLabels": {"app": "web"}}}]
    state = write(tmp_path, "state.yaml", node_manifest("n1", {HOST: "n1"}),
                  pod_manifest("web-0", labels={"app": "web"}, node="n1", topologySpreadConstraints=spread,
                               schedulerName=scheduler))
    cfg = write(tmp_path, "sched.yaml", config({"schedulerName": "default-scheduler"},
                                               {"schedulerName": "lenient-scheduler",
                                                "plugins": DISABLE_SPREAD["at Filter only"]}))
    assert run("verify", state, "--scheduler-config", cfg)[0] == code


def test_pods_of_profiles_that_differ_only_in_scoring_are_solved_together(tmp_path: Path) -> None:
    cluster = write(tmp_path, "cluster.yaml", node_manifest("n1"), pod_manifest("a"),
                    pod_manifest("b", schedulerName="spread-scheduler"))
    assert per_node(plan_json("solve", cluster, "--time-limit", "5", "--scheduler-config", MOST_ALLOCATED)) == {"n1": 2}


def test_solving_pods_of_profiles_with_different_filters_at_once_is_refused_in_one_line(tmp_path: Path) -> None:
    cluster = write(tmp_path, "cluster.yaml", node_manifest("n1"), pod_manifest("a"),
                    pod_manifest("b", schedulerName="lenient-scheduler"))
    cfg = write(tmp_path, "sched.yaml", config({"schedulerName": "default-scheduler"},
                                               {"schedulerName": "lenient-scheduler",
                                                "plugins": DISABLE_SPREAD["at Filter only"]}))
    for command in ("solve", "compare"):
        code, out, err = run(command, cluster, "--scheduler-config", cfg)
        assert code == 2 and out == ""
        assert len(err.strip().splitlines()) == 1
        assert "profiles with different filters (default-scheduler, lenient-scheduler)" in err
    assert per_node(plan_json("simulate", cluster, "--scheduler-config", cfg)) == {"n1": 2}


# ------------------------------------------------------------------------------------ pods podplan leaves alone


@pytest.mark.parametrize("args", [(), ("--scheduler-config", MOST_ALLOCATED)],
                         ids=["with the default configuration", "with a configuration of two profiles"])
@pytest.mark.parametrize("command", ["simulate", "solve"])
def test_gated_and_volcano_pods_stay_pending_with_their_reasons(command: str, args: tuple[str, ...]) -> None:
    doc = plan_json(command, BIN_PACKING, "--time-limit", "5", *args) if command == "solve" \
        else plan_json(command, BIN_PACKING, *args)
    pending = {p["pod"]: p["reason"] for p in doc["pending"]}
    assert pending[GATED] == ("SchedulingGated: Scheduling is blocked due to non-empty scheduling gates "
                              "(waiting for scheduling gates: [kueue.x-k8s.io/admission])")
    assert pending[VOLCANO] == 'not scheduled by podplan: spec.schedulerName is "volcano"'
    assert {GATED, VOLCANO}.isdisjoint(p["pod"] for p in doc["placements"])
    assert any(n.startswith("2 pending pod(s) left alone (1 with scheduling gates, 1 of other schedulers)")
               for n in doc["notes"])


def test_compare_places_neither_the_gated_nor_the_volcano_pod_and_says_so() -> None:
    code, out, err = run("compare", BIN_PACKING, "--time-limit", "4", "-o", "json")
    assert code == 0, out + err
    doc = json.loads(out)
    for column in doc["columns"]:
        assert {GATED, VOLCANO}.isdisjoint(p["pod"] if isinstance(p, dict) else p for p in column["placements"])
    assert "2 pending pod(s) left alone" in err


def test_a_volcano_pod_is_scheduled_when_a_profile_names_volcano(tmp_path: Path) -> None:
    cfg = write(tmp_path, "sched.yaml", config({"schedulerName": "default-scheduler"}, {"schedulerName": "volcano"}))
    doc = plan_json("simulate", BIN_PACKING, "--scheduler-config", cfg)
    assert VOLCANO in {p["pod"] for p in doc["placements"]}
    assert GATED in {p["pod"] for p in doc["pending"]}


# --------------------------------------------------------------------------------------------------- verify


def test_verify_counts_a_pod_bound_to_a_node_that_does_not_exist(tmp_path: Path) -> None:
    state = write(tmp_path, "state.yaml", node_manifest("n1"), pod_manifest("web", node="n9"))
    code, out, _ = run("verify", state)
    assert code == 1
    assert ["default/web", "n9", "Plan", 'node "n9" is not in the input'] in [
        line.split(maxsplit=3) for line in out.splitlines()]
    assert "INVALID: 1 pods judged, 1 violation(s)" in out


# ------------------------------------------------------------------------------------------------ bad configs


BAD = {
    "an unknown plugin argument": ({"pluginConfig": [{"name": "NodeResourcesFit", "args": {"scoringStrategi": {}}}]},
                                   "profiles[0].pluginConfig[0].args.scoringStrategi"),
    "a negative weight": ({"plugins": {"score": {"enabled": [{"name": "NodeAffinity", "weight": -1}]}}},
                          "profiles[0].plugins.score.enabled[0].weight"),
    "an out-of-tree plugin": ({"plugins": {"filter": {"enabled": [{"name": "Coscheduling"}]}}},
                              "profiles[0].plugins.filter.enabled[0].name"),
}


@pytest.mark.parametrize("profile,field", BAD.values(), ids=[f"{k} is one line naming file and field, exit 2" for k in BAD])
@pytest.mark.parametrize("command", ["simulate", "solve", "compare", "explain", "verify", "rebalance"])
def test_an_invalid_configuration_is_one_line_and_exit_2(tmp_path: Path, command: str, profile: dict[str, Any],
                                                         field: str) -> None:
    cfg = write(tmp_path, "sched.yaml", config(profile))
    code, out, err = run(command, BIN_PACKING, "--scheduler-config", cfg)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1
    assert cfg in err and field in err
