"""`podplan deschedule`: the DeschedulerPolicy as a user writes it (validation in one line, defaults), the
descheduler's cycles with kube-scheduler landing the replacements, and the optimal plan beside them."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from podplan.cli import main
from podplan.models.errors import PodplanError
from podplan.optimizer.deschedule.policy import DEFAULT_PROTECTIONS, parse_policy

INSTANCES = Path(__file__).resolve().parents[1] / "instances" / "descheduler"
LNU_INSTANCE = INSTANCES / "lownodeutilization.yaml"
LNU_POLICY = INSTANCES / "lownodeutilization-policy.yaml"
BOUNCE = INSTANCES / "spread-bounce.yaml"
BOUNCE_POLICY = INSTANCES / "spread-bounce-policy.yaml"


def run(*args: str) -> tuple[int, str, str]:
    try:
        r = CliRunner(mix_stderr=False).invoke(main, list(args))  # type: ignore[call-arg]
    except TypeError:
        r = CliRunner().invoke(main, list(args))
    return r.exit_code, r.stdout, r.stderr


def policy(plugin: str = "LowNodeUtilization", args: dict | None = None, evictor: dict | None = None,
           point: str = "balance", **top: object) -> dict:
    configs = [{"name": plugin, "args": args if args is not None else
                {"thresholds": {"cpu": 20}, "targetThresholds": {"cpu": 50}}}]
    if evictor is not None:
        configs.insert(0, {"name": "DefaultEvictor", "args": evictor})
    doc = {"apiVersion": "descheduler/v1alpha2", "kind": "DeschedulerPolicy",
           "profiles": [{"name": "p", "pluginConfig": configs, "plugins": {point: {"enabled": [plugin]}}}]}
    doc.update(top)
    return doc


BAD = [
    ("threshold above 100", policy(args={"thresholds": {"cpu": 120}, "targetThresholds": {"cpu": 50}}),
     "thresholds.cpu: cpu threshold not in [0, 100] range"),
    ("threshold above its target", policy(args={"thresholds": {"cpu": 60}, "targetThresholds": {"cpu": 50}}),
     "thresholds' cpu percentage is greater than targetThresholds'"),
    ("different resources", policy(args={"thresholds": {"cpu": 20}, "targetThresholds": {"memory": 50}}),
     "thresholds and targetThresholds configured different resources"),
    ("no thresholds", policy(args={"targetThresholds": {"cpu": 50}}), "no resource threshold is configured"),
    ("evictable namespaces include", policy(args={"thresholds": {"cpu": 20}, "targetThresholds": {"cpu": 50},
                                                  "evictableNamespaces": {"include": ["a"]}}),
     "only Exclude namespaces can be set"),
    ("an unregistered plugin", policy(plugin="RemoveEverything"), "not registered"),
    ("a history plugin", policy(plugin="PodLifeTime", args={}, point="deschedule"), "PodLifeTime is not simulated"),
    ("a plugin at the wrong extension point", policy(plugin="RemoveDuplicates", args={}, point="deschedule"),
     "plugin RemoveDuplicates does not extend deschedule"),
    ("deprecated booleans with podProtections", policy(evictor={"evictLocalStoragePods": True, "podProtections": {
        "defaultDisabled": ["PodsWithLocalStorage"]}}), "cannot use Deprecated fields alongside PodProtections"),
    ("an unknown protection", policy(evictor={"podProtections": {"extraEnabled": ["PodsWithLocalStorage"]}}),
     "invalid pod protection policy 'PodsWithLocalStorage'"),
    ("both priority threshold fields", policy(evictor={"priorityThreshold": {"value": 10, "name": "high"}}),
     "only one of priorityThreshold fields can be set"),
    ("no node affinity type", policy(plugin="RemovePodsViolatingNodeAffinity", args={}, point="deschedule"),
     "nodeAffinityType needs to be set"),
    ("included and excluded taints", policy(plugin="RemovePodsViolatingNodeTaints", point="deschedule", args={
        "includedTaints": ["a"], "excludedTaints": ["b"]}), "either includedTaints or excludedTaints"),
    ("a negative limit", policy(maxNoOfPodsToEvictTotal=-1), "maxNoOfPodsToEvictTotal: must be a non-negative"),
    ("another API version", {**policy(), "apiVersion": "descheduler/v1alpha1"}, "apiVersion: must be descheduler/v1alpha2"),
]


@pytest.mark.parametrize("doc, message", [(d, m) for _, d, m in BAD], ids=[n for n, _, _ in BAD])
def test_a_bad_policy_is_one_line_naming_the_field_and_exit_2(tmp_path: Path, doc: dict, message: str) -> None:
    path = tmp_path / "policy.yaml"
    path.write_text(yaml.safe_dump(doc))
    code, out, err = run("deschedule", str(LNU_INSTANCE), "--policy-file", str(path))
    assert code == 2, err
    assert message in err and "policy.yaml" in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_the_default_evictor_is_added_with_upstreams_protections() -> None:
    prof = parse_policy(policy()).profiles[0]
    assert prof.evictor.protections == frozenset(DEFAULT_PROTECTIONS)
    assert prof.evictor.priority_threshold == 2_000_000_000


def test_deprecated_booleans_and_pod_protections_map_as_upstream() -> None:
    legacy = parse_policy(policy(evictor={"evictLocalStoragePods": True, "ignorePvcPods": True})).profiles[0].evictor
    assert "PodsWithLocalStorage" not in legacy.protections and "PodsWithPVC" in legacy.protections
    new = parse_policy(policy(evictor={"podProtections": {"defaultDisabled": ["DaemonSetPods"],
                                                          "extraEnabled": ["PodsWithoutPDB"]}})).profiles[0].evictor
    assert "DaemonSetPods" not in new.protections and "PodsWithoutPDB" in new.protections


def test_the_policy_file_must_exist() -> None:
    with pytest.raises(PodplanError):
        from podplan.optimizer.deschedule.policy import load_policy_file
        load_policy_file("/nonexistent/policy.yaml")


@pytest.fixture(scope="module")
def lnu_doc() -> dict:
    code, out, err = run("deschedule", str(LNU_INSTANCE), "--policy-file", str(LNU_POLICY), "-o", "json",
                         "--time-limit", "20")
    assert code == 0, err
    return json.loads(out)


def test_json_has_the_documented_names(lnu_doc: dict) -> None:
    d, o = lnu_doc["descheduler"], lnu_doc["optimal"]
    assert {"evictions", "nodes_outside_thresholds", "violations_left", "cycles", "loops"} <= set(d)
    assert {"status", "evictions", "bound", "gap", "waves"} <= set(o)
    for e in d["evictions"]:
        assert set(e) >= {"pod", "from", "to", "landed"}
        assert e["landed"] in ("elsewhere", "same-node", "new-violation", "nowhere")
    for e in o["evictions"]:
        assert set(e) >= {"pod", "from", "to"}


def test_the_optimum_meets_the_thresholds_with_fewer_evictions_than_the_descheduler(lnu_doc: dict) -> None:
    d, o = lnu_doc["descheduler"], lnu_doc["optimal"]
    assert lnu_doc["before"]["nodes_outside_thresholds"] == ["node-1", "node-2"]
    assert d["nodes_outside_thresholds"], "the descheduler's cycle leaves nodes above targetThresholds"
    assert o["nodes_outside_thresholds"] == [] and o["unmet"] == []
    assert 0 < len(o["evictions"]) < len(d["evictions"])
    assert o["status"] == "OPTIMAL" and o["gap"] == 0.0


def test_the_descheduler_respects_the_pdb_within_a_cycle(lnu_doc: dict) -> None:
    # the web PDB allows one disruption: the Eviction API refuses the second web eviction of the cycle
    web = [e for e in lnu_doc["descheduler"]["evictions"] if e["pod"].startswith("shop/web-")]
    assert len(web) == 1


def test_the_optimal_end_state_passes_podplan_verify(tmp_path: Path) -> None:
    code, out, err = run("deschedule", str(LNU_INSTANCE), "--policy-file", str(LNU_POLICY), "--emit", "state",
                         "--time-limit", "20")
    assert code == 0, err
    state = tmp_path / "state.yaml"
    state.write_text(out)
    code, out, err = run("verify", str(state))
    assert code == 0, out + err
    moved = {d["metadata"]["name"]: d["spec"]["nodeName"] for d in yaml.safe_load_all(state.read_text())
             if d and d.get("kind") == "Pod"}
    assert moved["cache-1"] != "node-1" or moved["cache-2"] != "node-2"


def test_the_spread_bounce_is_reported_as_a_loop_and_the_plan_evicts_nothing() -> None:
    code, out, err = run("deschedule", str(BOUNCE), "--policy-file", str(BOUNCE_POLICY), "-o", "json",
                         "--time-limit", "20")
    doc = json.loads(out)
    d, o = doc["descheduler"], doc["optimal"]
    assert d["loops"] is True and not d["converged"]
    assert d["evictions"] and all(e["plugin"] == "RemovePodsViolatingTopologySpreadConstraint"
                                  for e in d["evictions"])
    assert o["evictions"] == []
    assert any("counts only the pods the evictor may evict" in u["why"] for u in o["unmet"])
    assert code == 1  # the plugin's own reading of the goal stays unmet: said, exit 1


def test_the_html_report_shows_the_loop(tmp_path: Path) -> None:
    code, _, err = run("deschedule", str(BOUNCE), "--policy-file", str(BOUNCE_POLICY), "--report", str(tmp_path),
                       "--time-limit", "20")
    page = (tmp_path / "index.html").read_text()
    assert "it loops" in page and "Descheduler cycles" in page


def test_a_cycle_whose_landing_the_time_limit_stops_says_which_replacements_were_not_simulated() -> None:
    from podplan.models.loader import load_paths
    from podplan.optimizer.deschedule.cycle import NOT_SIMULATED, run as cycles
    from podplan.optimizer.deschedule.policy import load_policy_file
    from podplan.optimizer.registry import DEFAULT_PROFILE

    cluster, pol = load_paths([str(LNU_INSTANCE)]), load_policy_file(str(LNU_POLICY))
    stopped = cycles(cluster, pol, DEFAULT_PROFILE, deadline=0.0)  # already past: nothing is landed
    assert len(stopped.cycles) == 1 and stopped.cycles[0].stopped
    assert stopped.cycles[0].evictions and {e.landed for e in stopped.cycles[0].evictions} == {NOT_SIMULATED}
    full = cycles(cluster, pol, DEFAULT_PROFILE)
    assert not full.cycles[0].stopped and NOT_SIMULATED not in {e.landed for e in full.cycles[0].evictions}
    assert [e.pod for e in full.cycles[0].evictions] == [e.pod for e in stopped.cycles[0].evictions]


def test_with_no_time_left_the_optimum_says_it_was_not_searched_instead_of_overrunning() -> None:
    import time

    from podplan.models.loader import load_paths
    from podplan.optimizer.deschedule.cycle import verdict
    from podplan.optimizer.deschedule.optimal import optimum
    from podplan.optimizer.deschedule.policy import load_policy_file
    from podplan.optimizer.rebalance.plan import RebalanceParams

    cluster, pol = load_paths([str(LNU_INSTANCE)]), load_policy_file(str(LNU_POLICY))
    o = optimum(cluster, pol, RebalanceParams(time_limit=30), time.perf_counter() - 1, verdict(cluster, pol))
    assert o.plan.status == "UNKNOWN" and o.plan.moves == 0 and not o.plan.complete
    assert "before the optimum was searched" in o.plan.blocked[0].reason and "--time-limit 60" in o.plan.blocked[0].reason
    assert o.unmet and o.unmet[0].why.startswith("node-1 stays above targetThresholds")
    # and the command prints it: the document and the table
    from podplan.optimizer.deschedule import Result
    from podplan.optimizer.deschedule.cycle import run as cycles
    from podplan.optimizer.registry import DEFAULT_PROFILE
    from podplan.optimizer.render.deschedule import document, render_table

    doc = document(Result(pol, cycles(cluster, pol, DEFAULT_PROFILE), o, {"descheduler": 0.0, "optimal": 0.0}))
    assert doc["optimal"]["status"] == "UNKNOWN" and doc["optimal"]["evictions"] == []
    assert "UNKNOWN" in render_table(doc)


def test_ctrl_c_prints_the_best_plan_so_far_and_exits_130(monkeypatch: pytest.MonkeyPatch) -> None:
    import os
    import signal

    import podplan.optimizer.deschedule as deschedule_module

    real = deschedule_module.run

    def cycles_then_ctrl_c(*args, **kwargs):  # type: ignore[no-untyped-def]
        out = real(*args, **kwargs)
        os.kill(os.getpid(), signal.SIGINT)  # the user presses Ctrl-C once the descheduler's cycles are simulated
        return out

    monkeypatch.setattr(deschedule_module, "run", cycles_then_ctrl_c)
    code, out, err = run("deschedule", str(LNU_INSTANCE), "--policy-file", str(LNU_POLICY), "-o", "json",
                         "--time-limit", "20")
    assert code == 130, err
    assert "interrupted: the best plan found so far is printed" in err
    doc = json.loads(out)
    assert doc["descheduler"]["evictions"]  # the descheduler's cycle as simulated
    assert doc["optimal"]["status"] != "OPTIMAL" and not doc["optimal"]["complete"]
    assert any("interrupted" in b["reason"] for b in doc["optimal"]["blocked"])


def test_when_reading_the_input_used_the_time_no_cycle_is_simulated_and_the_output_says_so() -> None:
    import time

    from podplan.models.loader import load_paths
    from podplan.optimizer.deschedule import deschedule
    from podplan.optimizer.deschedule.policy import load_policy_file
    from podplan.optimizer.rebalance.plan import RebalanceParams
    from podplan.optimizer.render.deschedule import document, render_table

    cluster, pol = load_paths([str(LNU_INSTANCE)]), load_policy_file(str(LNU_POLICY))
    result = deschedule(cluster, pol, RebalanceParams(time_limit=30), time.perf_counter() - 1)
    assert result.descheduler.cycles == ()
    assert "before the descheduler's cycle was simulated" in result.descheduler.skipped
    doc = document(result)
    assert doc["descheduler"]["evictions"] == [] and "--time-limit 60" in doc["descheduler"]["not_simulated"]
    assert doc["before"]["nodes_outside_thresholds"]  # the policy's verdict on the input is still given
    text = render_table(doc)
    assert "not simulated (time limit)" in text and "descheduler: the time limit ran out" in text


def test_the_bundled_pinned_database_is_a_goal_no_plan_meets_named_with_its_blocking_pods() -> None:
    code, out, err = run("deschedule", str(INSTANCES / "pinned-database.yaml"), "--policy-file", str(LNU_POLICY),
                         "-o", "json", "--time-limit", "20")
    assert code == 1, err  # a goal of the policy is not met: said, exit 1
    doc = json.loads(out)
    o = doc["optimal"]
    assert o["status"] == "OPTIMAL" and o["bound"] == 1 and o["gap"] == 0.0 and len(o["evictions"]) == 1
    [u] = o["unmet"]
    assert (u["goal"], u["node"], u["proven"]) == ("LowNodeUtilization", "node-1", True)
    assert u["blocking_pods"] == ["shop/postgres-0", "shop/postgres-1"]
    assert "didn't match Pod's node affinity/selector" in u["why"]
    # the descheduler evicts a postgres pod every cycle, and it lands back where it was
    assert doc["descheduler"]["loops"] and any(e["landed"] == "same-node" for e in doc["descheduler"]["evictions"])


def test_a_search_model_too_large_to_build_in_its_share_is_not_built_and_the_plan_says_so(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The target model cannot be stopped while it is built (at 5,250 nodes it took 12 GB and ran minutes past
    the limit): on a machine where building it would take longer than its share, it is not built."""
    import time

    from podplan.models.loader import load_paths
    from podplan.optimizer.deschedule import optimal
    from podplan.optimizer.deschedule.cycle import verdict
    from podplan.optimizer.deschedule.policy import load_policy_file
    from podplan.optimizer.rebalance.plan import RebalanceParams

    cluster, pol = load_paths([str(BOUNCE)]), load_policy_file(str(BOUNCE_POLICY))
    monkeypatch.setattr(optimal, "SECONDS_PER_VARIABLE", 1000.0)  # every variable "takes" 1,000 s to build
    o = optimal.optimum(cluster, pol, RebalanceParams(time_limit=20), time.perf_counter() + 20, verdict(cluster, pol))
    assert o.plan.status == "UNKNOWN" and o.plan.moves == 0
    why = o.plan.blocked[0].reason
    assert why.startswith("the CP-SAT search was not run: its model (") and "--time-limit" in why
