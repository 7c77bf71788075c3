"""`podplan diff A B`: what changed between two plans or two states, as a user runs it after simulate and solve."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from podplan.cli import main

INSTANCES = Path(__file__).resolve().parents[1] / "instances"


def run(*args: str, stdin: str | None = None) -> tuple[int, str, str]:
    try:
        runner = CliRunner(mix_stderr=False)  # type: ignore[call-arg]
    except TypeError:
        runner = CliRunner()
    r = runner.invoke(main, list(args), input=stdin)
    return r.exit_code, r.stdout, r.stderr


def out(*args: str) -> str:
    code, stdout, stderr = run(*args)
    assert code == 0, stderr
    return stdout


def plan(status: str, placements: dict[str, tuple[str, str]], pending: dict[str, str] | None = None,
         by_priority: dict[str, int] | None = None, terms: dict[str, int] | None = None) -> dict:
    """A plan document as simulate/solve -o json print it: pod -> (node, workload)."""
    return {"status": status,
            "objective": {"placed": len(placements), "placed_by_priority": by_priority or {"0": len(placements)},
                          "preference": sum((terms or {}).values()), "terms": terms or {}},
            "placements": [{"pod": p, "node": n, "workload": w} for p, (n, w) in placements.items()],
            "pending": [{"pod": p, "reason": r} for p, r in (pending or {}).items()]}


def write(tmp_path: Path, name: str, doc: dict) -> str:
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return str(path)


def test_greedy_against_optimal_names_the_one_replica_that_moved(tmp_path: Path) -> None:
    zone = str(INSTANCES / "zone-spread.yaml")
    greedy, optimal = tmp_path / "greedy.json", tmp_path / "optimal.json"
    greedy.write_text(out("simulate", zone, "-o", "json"))
    optimal.write_text(out("solve", zone, "-o", "json"))
    doc = json.loads(out("diff", str(greedy), str(optimal), "-o", "json"))
    # greedy and the optimum put the four checkout replicas on the same nodes but one: identical replicas
    # are paired up, so a swap of names is no move
    assert doc["a"]["status"] == "GREEDY" and doc["b"]["status"] == "OPTIMAL"
    assert len(doc["moved"]) == 1
    assert doc["placed"] == doc["unplaced"] == doc["newly_broken"] == doc["fixed"] == []
    assert "places the same number of pods (4): 1 pod(s) sit on another node" in doc["summary"]


def test_two_replicas_that_swap_nodes_are_no_move_but_two_bare_pods_are(tmp_path: Path) -> None:
    a = write(tmp_path, "a.json", plan("GREEDY", {"web-1": ("n1", "Deployment/default/web"),
                                                  "web-2": ("n2", "Deployment/default/web"),
                                                  "db-0": ("n1", "StatefulSet/default/db"),
                                                  "db-1": ("n2", "StatefulSet/default/db")}))
    b = write(tmp_path, "b.json", plan("OPTIMAL", {"web-1": ("n2", "Deployment/default/web"),
                                                   "web-2": ("n1", "Deployment/default/web"),
                                                   "db-0": ("n2", "StatefulSet/default/db"),
                                                   "db-1": ("n1", "StatefulSet/default/db")}))
    doc = json.loads(out("diff", a, b, "-o", "json"))
    assert [m["pod"] for m in doc["moved"]] == ["db-0", "db-1"]  # a StatefulSet's pods have identities


def test_pods_placed_and_left_pending_with_per_priority_and_preference_deltas(tmp_path: Path) -> None:
    a = write(tmp_path, "a.json", plan("GREEDY", {"svc-1": ("n1", ""), "old": ("n2", "")}, {"batch-1": "0/2 nodes"},
                                       {"1000": 1, "0": 1}, {"pod_affinity": -20}))
    b = write(tmp_path, "b.json", plan("OPTIMAL", {"svc-1": ("n1", ""), "batch-1": ("n2", "")},
                                       {"old": "0/2 nodes are available: 2 Insufficient cpu."},
                                       {"1000": 1, "100": 1}, {"pod_affinity": 0}))
    code, table, _ = run("diff", a, b)
    assert code == 0
    assert "PLACED IN B   NODE\nbatch-1       n2" in table
    assert "old            n2          0/2 nodes are available: 2 Insufficient cpu." in table
    doc = json.loads(out("diff", a, b, "-o", "json"))
    totals = {t["what"]: t["change"] for t in doc["totals"]}
    assert totals["priority 100"] == 1 and totals["priority 0"] == -1 and totals["preferred pod affinity"] == 20
    assert "1 pod(s) left pending before now run, 1 pod(s) that ran before are left pending" in doc["summary"]
    assert "Its preference score is better: -20 → 0 (preferred pod affinity +20)." in doc["summary"]


def test_two_states_name_the_rules_newly_broken_and_then_fixed(tmp_path: Path) -> None:
    web = str(INSTANCES / "web-store.yaml")
    good = tmp_path / "good.yaml"
    good.write_text(out("solve", web, "--emit", "state"))
    worker1 = out("solve", web, "--emit", "state").replace("nodeName: worker-2", "nodeName: worker-1")
    bad = tmp_path / "bad.yaml"
    bad.write_text(worker1)
    broken = json.loads(out("diff", str(good), str(bad), "-o", "json"))
    assert broken["b"]["status"] == "INVALID" and len(broken["moved"]) == 2
    assert {r["plugin"] for r in broken["newly_broken"]} == {"InterPodAffinity"} and broken["fixed"] == []
    fixed = json.loads(out("diff", str(bad), str(good), "-o", "json"))
    assert fixed["fixed"] == broken["newly_broken"] and fixed["newly_broken"] == []
    assert "It fixes 4 that were broken." in fixed["summary"]


def test_a_plan_against_a_state_is_one_line_and_exit_2(tmp_path: Path) -> None:
    web = str(INSTANCES / "web-store.yaml")
    a = tmp_path / "plan.json"
    a.write_text(out("solve", web, "-o", "json"))
    code, stdout, stderr = run("diff", str(a), web)
    assert code == 2 and stdout == ""
    assert stderr.splitlines() == [f"error: {a} is a plan document and {web} a state: diff two of one kind "
                                   "(--emit state prints a plan's final state as manifests)"]


@pytest.mark.parametrize("doc,message", [
    ({"goal": "pack", "waves": []}, "a rebalance plan: diff compares placements"),
    ({"status": "OPTIMAL"}, "neither a podplan plan document"),
], ids=["a rebalance plan is refused, saying what to diff instead", "a mapping that is no plan is refused"])
def test_documents_diff_cannot_read_are_one_line(tmp_path: Path, doc: dict, message: str) -> None:
    a = write(tmp_path, "a.json", doc)
    code, _, stderr = run("diff", a, a)
    assert code == 2 and len(stderr.splitlines()) == 1 and message in stderr


def test_either_side_may_be_stdin_named_as_such(tmp_path: Path) -> None:
    a = write(tmp_path, "a.json", plan("GREEDY", {"web-1": ("n1", "")}))
    code, table, stderr = run("diff", a, "-", stdin=json.dumps(plan("OPTIMAL", {"web-1": ("n2", "")})))
    assert code == 0, stderr
    assert table.splitlines()[:2] == [f"A: {a} (plan, GREEDY)", "B: <stdin> (plan, OPTIMAL)"]
    code, _, stderr = run("diff", "-", "-", stdin="")
    assert code == 2 and stderr.splitlines() == ["error: only one of A and B can be - (stdin)"]
