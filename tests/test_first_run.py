"""A new user's first ten minutes: each rough edge found by trying podplan as a new user would, as the exact
command they type, and what they expect to see. One line and exit code 2 for anything that is the user's to
fix; never "BUG" (exit 3) for bad input."""
from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from podplan.cli import main
from podplan.models.loader import load_paths

ROOT = Path(__file__).resolve().parents[1]
WEB = "instances/web-store.yaml"

NODE = """apiVersion: v1
kind: Node
metadata: {name: n1, labels: {kubernetes.io/hostname: n1}}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
"""
KIND_TYPOS = NODE + """---
apiVersion: apps/v1
kind: deployment
metadata: {name: web}
---
apiVersion: v1
kind: Pood
metadata: {name: cache}
---
apiVersion: v1
kind: Deployment
metadata: {name: api}
spec:
  replicas: 1
  selector: {matchLabels: {app: api}}
  template:
    metadata: {labels: {app: api}}
    spec: {containers: [{name: api, image: api}]}
"""
KIND_WARNINGS = [
    "warning: typos.yaml[1] deployment/web: kind: unknown kind 'deployment' (did you mean Deployment?); the object "
    "is skipped",
    "warning: typos.yaml[2] Pood/cache: kind: unknown kind 'Pood' (did you mean Pod?); the object is skipped",
    "warning: typos.yaml[3] Deployment/default/api: apiVersion: v1 has no kind Deployment (Deployment is apps/v1; "
    "the API server would refuse it); the object is skipped",
]


def podplan(command: str, stdin: str | None = None, cwd: Path = ROOT) -> tuple[int, str, str]:
    """`podplan ...` as typed (shell words), run in-process from `cwd`: (exit code, stdout, stderr)."""
    words = shlex.split(command)
    assert words[0] == "podplan"
    try:
        runner = CliRunner(mix_stderr=False)  # type: ignore[call-arg]
    except TypeError:
        runner = CliRunner()
    old = os.getcwd()
    os.chdir(cwd)
    try:
        r = runner.invoke(main, words[1:], input=stdin)
    finally:
        os.chdir(old)
    return r.exit_code, r.stdout, r.stderr


def one_line(code: int, stderr: str, expected: str) -> None:
    assert code == 2, stderr
    assert stderr.splitlines() == [expected]


@pytest.mark.parametrize("command", ["validate", "simulate", "solve --time-limit 5", "verify", "explain",
                                     "compare --time-limit 5", "rebalance --time-limit 5"])
def test_a_typo_in_kind_or_a_wrong_apiversion_is_warned_by_every_command(tmp_path: Path, command: str) -> None:
    (tmp_path / "typos.yaml").write_text(KIND_TYPOS)
    code, _, stderr = podplan(f"podplan {command} typos.yaml", cwd=tmp_path)
    assert code in (0, 1), stderr  # rebalance: nothing to do is complete; verify: nothing judged is OK
    assert [line for line in stderr.splitlines() if line.startswith("warning:")] == KIND_WARNINGS


@pytest.mark.parametrize("where", ["podplan --strict solve typos.yaml", "podplan solve --strict typos.yaml",
                                   "podplan solve typos.yaml --strict", "podplan diff --strict typos.yaml typos.yaml"])
def test_strict_makes_a_kind_typo_an_error_before_or_after_the_subcommand(tmp_path: Path, where: str) -> None:
    (tmp_path / "typos.yaml").write_text(KIND_TYPOS)
    code, stdout, stderr = podplan(where, cwd=tmp_path)
    one_line(code, stderr, "error: typos.yaml[1] deployment/web kind: unknown kind 'deployment' (did you mean "
                           "Deployment?)")
    assert stdout == ""


def test_real_kinds_podplan_skips_are_not_called_typos() -> None:
    cluster = load_paths([str(ROOT / "instances" / "cluster-dump.yaml")])
    assert not [w for w in cluster.warnings if "kind" in w]


REFUSED = [
    ("podplan solve --allow-pdb-violations " + WEB,
     "error: --allow-pdb-violations needs --preempt (without it solve evicts nobody)"),
    ("podplan solve --emit evictions " + WEB, "error: --emit evictions needs --preempt (without it solve evicts nobody)"),
    ("podplan compare --allow-pdb-violations " + WEB,
     "error: --allow-pdb-violations needs --preempt (without it compare evicts nobody)"),
    ("podplan explain --nodes --summary " + WEB,
     "error: --nodes and --summary choose one explain table each: give one of them"),
    ("podplan validate -n shop " + WEB,
     "error: -n: validate is not scoped: it judges the whole input (every namespace, every pod)"),
    ("podplan verify -l app=web " + WEB,
     "error: -l: verify is not scoped: it judges the whole input (every namespace, every pod)"),
    ("podplan compare --report /proc/nope " + WEB, "error: --report /proc/nope: No such file or directory"),
    ("podplan solve /dev/null", "error: /dev/null: no objects in the input"),
]


@pytest.mark.parametrize("command,line", REFUSED, ids=[c for c, _ in REFUSED])
def test_what_means_nothing_or_cannot_work_is_refused_in_one_line(command: str, line: str) -> None:
    code, stdout, stderr = podplan(command)
    one_line(code, stderr, line)
    assert stdout == ""


def test_a_node_cpu_too_large_for_any_machine_is_bad_input_not_a_bug(tmp_path: Path) -> None:
    (tmp_path / "big.yaml").write_text(NODE.replace('cpu: "4"', 'cpu: "99999999999999999999999"')
                                       + "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"
                                         "spec: {containers: [{name: c, resources: {requests: {cpu: 1}}}]}\n")
    for command in ("simulate", "solve"):
        code, _, stderr = podplan(f"podplan {command} big.yaml", cwd=tmp_path)
        one_line(code, stderr, 'error: big.yaml[0] Node/n1 status.allocatable.cpu: "99999999999999999999999" is out '
                               "of range: podplan reads at most 9007199254740992 millicores")


def test_verify_says_it_skipped_the_pending_pods() -> None:
    code, stdout, stderr = podplan("podplan verify " + WEB)
    assert code == 0
    assert stderr.splitlines() == [
        "note: 6 pending pod(s) (no spec.nodeName, or replicas a workload still needs) skipped: verify judges bound "
        "pods only; place them first (podplan solve --emit state | podplan verify -)"]
    assert stdout.startswith("OK: 0 pods judged")


def test_no_nodes_at_all_is_one_line_not_an_empty_fit_error(tmp_path: Path) -> None:
    (tmp_path / "pods.yaml").write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"
                                        "spec: {containers: [{name: c}]}\n")
    for command in ("simulate", "solve", "explain"):
        code, stdout, stderr = podplan(f"podplan {command} pods.yaml", cwd=tmp_path)
        one_line(code, stderr, "error: pods.yaml: no Node in the input, so none of its 1 pending pod(s) can be "
                               "placed (add the nodes: kubectl get nodes -o yaml)")
        assert "0/0 nodes" not in stdout


def test_a_policy_file_without_apiversion_says_what_to_write(tmp_path: Path) -> None:
    (tmp_path / "policy.yaml").write_text("kind: Policy\nmultipliers: {podAffinity: 2}\n")
    code, _, stderr = podplan(f"podplan solve --policy {tmp_path / 'policy.yaml'} {WEB}")
    one_line(code, stderr, f"error: {tmp_path / 'policy.yaml'}[0] Policy apiVersion: is required: apiVersion: "
                           "podplan.io/v1alpha1")


def test_a_misspelt_plugin_name_in_a_scheduler_configuration_gets_a_did_you_mean(tmp_path: Path) -> None:
    (tmp_path / "sched.yaml").write_text("""apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- plugins:
    score:
      disabled: [{name: NodeResourceFit}]
""")
    code, _, stderr = podplan(f"podplan simulate --scheduler-config sched.yaml {ROOT / WEB}", cwd=tmp_path)
    one_line(code, stderr, "error: sched.yaml[0] KubeSchedulerConfiguration profiles[0].plugins.score.disabled[0].name: "
                           'unknown plugin "NodeResourceFit": did you mean NodeResourcesFit?')


def test_the_scope_note_never_suggests_a_flag_that_was_given() -> None:
    _, _, given = podplan("podplan -A simulate -l app=nothing " + WEB)
    assert given.splitlines() == ['note: 6 pending pod(s) outside the scope (selector "app=nothing") are not part of '
                                  "the batch; use another -l to include them"]
    _, _, not_given = podplan("podplan simulate -l app=nothing " + WEB)
    assert "use -A or another -n/-l" in not_given


def test_compare_n_replaces_only_that_namespaces_movable_pods() -> None:
    import json

    def movable(scope: str) -> int:
        code, stdout, stderr = podplan(f"podplan compare instances/cluster-dump.yaml {scope} --time-limit 4 -o json")
        assert code == 0, stderr
        return json.loads(stdout)["movable_pods"]

    assert movable("-n shop") == 5  # shop's Deployment pods; kube-system's are not shop's
    assert movable("-n default") == 0  # default holds only bare pods: nothing to re-place


def test_explain_summary_counts_nodes_not_reasons(tmp_path: Path) -> None:
    # two small nodes each short of both cpu and memory: NodeResourcesFit fails 2 nodes with 2 reasons each
    small = NODE.replace('cpu: "4", memory: 8Gi', 'cpu: "1", memory: 1Gi')
    (tmp_path / "c.yaml").write_text(small + "---\n" + small.replace("n1", "n2") + """---
apiVersion: v1
kind: Pod
metadata: {name: big}
spec: {containers: [{name: c, resources: {requests: {cpu: "2", memory: 2Gi}}}]}
""")
    code, stdout, stderr = podplan("podplan explain --summary c.yaml", cwd=tmp_path)
    assert code == 0, stderr
    row = next(line for line in stdout.splitlines() if line.startswith("default/big"))
    assert row.split()[-2:] == ["NodeResourcesFit", "2"]


def test_validate_summarises_the_workloads_of_a_300_node_cluster_and_wide_lists_them_all() -> None:
    _, manifests, _ = podplan("podplan generate --nodes 300 --pods 3000 --seed 1")
    code, table, _ = podplan("podplan validate -", stdin=manifests)
    assert code == 0
    workloads = table.split("WORKLOAD", 1)[1].split("\n\n", 1)[0].splitlines()[1:]
    assert len(workloads) == 21 and re.fullmatch(r"\.\.\. and \d+ more \(-o wide lists all\) +\d+ +\d+", workloads[-1])
    _, wide, _ = podplan("podplan validate -o wide -", stdin=manifests)
    listed = wide.split("WORKLOAD", 1)[1].split("\n\n", 1)[0].splitlines()[1:]
    assert len(listed) == 20 + int(workloads[-1].split()[2]) and not any("more" in w for w in listed)


def test_solve_verbose_prints_a_round_line_only_when_the_plan_changes(capsys: pytest.CaptureFixture[str]) -> None:
    from podplan.models.generate import generate
    from podplan.models.loader import cluster_of
    from podplan.models.parse import Doc
    from podplan.optimizer.greedy import simulate
    from podplan.optimizer.runner import SolverParams
    from podplan.optimizer.solve import solve

    # the benchmark suite's S cluster, where greedy leaves preference unpaid that rounds cannot all recover (the
    # search starts from greedy's plan: the preference-led pass leaves the rounds too little to do there)
    docs = [Doc(d, "gen", i) for i, d in enumerate(generate(nodes=50, pods=500, seed=1))]
    cluster = cluster_of(docs, ["gen"])
    # tiny thresholds: every part is "large", so the neighbourhood search runs its rounds on a small cluster
    params = SolverParams(time_limit=10, workers=1, log_progress=True, full_model_variables=10,
                          neighbourhood_variables=60)
    plan = solve(cluster, params, None, simulate(cluster))
    err = capsys.readouterr().err.splitlines()
    rounds = [line for line in err if re.match(r"  \[\d+\] round \d+:", line)]
    quiet = [int(m[1]) for line in err if (m := re.fullmatch(r"  \[\d+\] (\d+) round\(s\) without change", line))]
    assert rounds, "no neighbourhood round ran"
    # every round the plan's notes count is either printed (it changed the outcome) or counted as unchanged
    ran = sum(int(m[1]) for note in plan.notes if (m := re.search(r"(\d+) neighbourhood rounds?\b", note)))
    assert len(rounds) + sum(quiet) == ran
    outcomes = [re.search(r"placed (\d+), preference (-?\d+)", line).groups() for line in rounds]
    by_part: dict[str, list[tuple[str, ...]]] = {}
    for line, outcome in zip(rounds, outcomes):
        by_part.setdefault(line.split("]")[0], []).append(outcome)
    for seen in by_part.values():
        assert all(a != b for a, b in zip(seen, seen[1:])), "two consecutive round lines say the same"


def test_shell_completion_as_the_readme_documents_it() -> None:
    readme = (ROOT / "README.md").read_text()
    assert 'eval "$(_PODPLAN_COMPLETE=bash_source podplan)"' in readme
    exe = Path(sys.executable).parent / "podplan"
    script = subprocess.run([str(exe)], env={**os.environ, "_PODPLAN_COMPLETE": "bash_source"},
                            capture_output=True, text=True, check=True).stdout
    assert "complete -o nosort -F _podplan_completion podplan" in script
    words = subprocess.run([str(exe)], env={**os.environ, "_PODPLAN_COMPLETE": "bash_complete",
                                            "COMP_WORDS": "podplan so", "COMP_CWORD": "1"},
                           capture_output=True, text=True, check=True).stdout
    assert "plain,solve" in words.splitlines()


def test_the_html_report_reads_greedy_first_and_says_same_when_it_is_the_same(tmp_path: Path) -> None:
    code, _, stderr = podplan(f"podplan compare instances/cluster-dump.yaml --time-limit 4 --report {tmp_path}")
    assert code == 0, stderr
    page = (tmp_path / "report.html").read_text()
    verdict = re.search(r'<div class="verdict">(.*?)</div>', page, re.S).group(1)
    # every figure of the verdict in the columns' order: greedy, then the optimum
    assert re.search(r"greedy \d+, the optimum \d+ of \d+; preference score: greedy -?\d+, the optimum -?\d+\.",
                     verdict), verdict
    running = re.search(r"Letting the \d+ movable pods move as well: ([^;]*);", verdict).group(1)
    same = re.fullmatch(r"the same (\d+) pods running as the optimum", running)
    other = re.fullmatch(r"(\d+) pods running instead of the optimum's (\d+)", running)
    assert same or (other and other.group(1) != other.group(2)), running


def test_a_long_moved_list_in_the_report_is_folded_with_where_most_pods_go(tmp_path: Path) -> None:
    from podplan.optimizer.compare import compare
    from podplan.optimizer.render.compare import to_dict
    from podplan.optimizer.render.report import render_html
    from podplan.optimizer.runner import SolverParams

    doc = to_dict(compare(load_paths([str(ROOT / "instances" / "cluster-dump.yaml")]),
                          SolverParams(time_limit=3, workers=1)))
    moved = doc["differences"][1]
    moved["pods"] = [{"pod": f"shop/web-{i}", "current": "k8s-worker-1", "replacement": f"k8s-worker-{2 + i % 2}"}
                     for i in range(2232)]
    moved["count"] = 2232
    page = render_html(doc)
    assert "<details><summary>the 2232 pods (most to k8s-worker-2 (1116), k8s-worker-3 (1116))</summary>" in page
    assert page.count('<td class="pod">shop/web-') == 300  # the first 300 rows; -o json lists all
    assert "… and 1932 more" in page
