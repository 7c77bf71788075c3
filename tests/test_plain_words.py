"""Plain words on the command line: --verbose before or after the subcommand adds progress and timing lines on
stderr (never on stdout), and an option that does not apply to the others given is refused in one line, exit 2."""
from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from podplan.cli import main

WEB_STORE = str(Path(__file__).resolve().parents[1] / "instances" / "web-store.yaml")


def runner() -> CliRunner:
    try:
        return CliRunner(mix_stderr=False)  # type: ignore[call-arg]  # click < 8.2 mixes streams by default
    except TypeError:
        return CliRunner()


# (command line, a timing line it must print besides the load line)
VERBOSE = [
    (["simulate", WEB_STORE], "greedy: 6 placed, 0 pending: "),
    (["solve", WEB_STORE, "--time-limit", "5"], "search: OPTIMAL, 6 placed: "),
    (["explain", WEB_STORE], "greedy (the batch's final state): "),
    (["compare", WEB_STORE, "--time-limit", "5"], "compare: greedy, optimum, verify: "),
    (["validate", WEB_STORE], "load: "),
    (["rebalance", WEB_STORE, "--time-limit", "5"], "load: "),
]


@pytest.mark.parametrize("args,line", VERBOSE, ids=[f"{a[0]} --verbose prints '{line.strip()}'" for a, line in VERBOSE])
@pytest.mark.parametrize("where", ["before", "after"])
def test_verbose_before_or_after_the_subcommand_prints_timing_on_stderr(args: list[str], line: str, where: str) -> None:
    argv = ["--verbose", *args] if where == "before" else [args[0], "--verbose", *args[1:]]
    verbose, quiet = runner().invoke(main, argv), runner().invoke(main, args)
    assert verbose.exit_code == quiet.exit_code == 0, verbose.stderr
    lines = verbose.stderr.splitlines()
    assert lines[0].startswith("load: 3 node(s), 0 existing and 6 pending pod(s), 2 workload(s) from ")
    assert any(x.startswith(line) and x.endswith("s") for x in lines)
    assert "load: " not in quiet.stderr


def test_verify_verbose_times_the_judgement() -> None:
    state = runner().invoke(main, ["simulate", WEB_STORE, "--emit", "state"]).stdout
    result = runner().invoke(main, ["verify", "-", "--verbose"], input=state)
    assert result.exit_code == 0 and "verify: 6 pod(s) judged: " in result.stderr


REFUSED = [
    (["simulate", WEB_STORE, "--emit", "bindings", "-o", "table"],
     "error: --emit bindings prints manifests: use -o yaml (the default with --emit bindings) or -o json, not -o table"),
    (["solve", WEB_STORE, "--emit", "state", "-o", "wide"],
     "error: --emit state prints manifests: use -o yaml (the default with --emit state) or -o json, not -o wide"),
    (["explain", WEB_STORE, "--gang"], "error: --gang applies to explain --why-pending only (explain alone runs no solve)"),
    (["explain", WEB_STORE, "--time-limit", "3"],
     "error: --time-limit applies to explain --why-pending only (explain alone runs no solve)"),
    (["explain", WEB_STORE, "--nodes", "-o", "json"],
     "error: --nodes/--summary choose the explain table: not with -o json (which always holds every node)"),
    (["validate", WEB_STORE, "--context", "kind-x"], "error: --kubeconfig and --context need --cluster"),
]


@pytest.mark.parametrize("args,message", REFUSED, ids=[" ".join(a[:1] + a[2:]) + " is refused" for a, _ in REFUSED])
def test_an_option_that_does_not_apply_is_refused_in_one_line(args: list[str], message: str) -> None:
    result = runner().invoke(main, args)
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.splitlines() == [message]


def test_emit_state_without_o_is_yaml() -> None:
    result = runner().invoke(main, ["simulate", WEB_STORE, "--emit", "state"])
    assert result.exit_code == 0 and result.stdout.startswith("apiVersion: v1\nkind: Node\n")
