"""docs/errors.md's exit-code table is what podplan does: its codes are the CLI's constants, and each example command
(run in a shell from the repository's root, with this venv's podplan first on PATH) exits with its row's code."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from podplan import cli

ROOT = Path(__file__).resolve().parents[1]
ROW = re.compile(r"^\| (?P<code>\d+) \| (?P<meaning>.+) \| (?:`(?P<example>.+)`)? ?\|$")


def exit_table() -> list[tuple[int, str]]:
    """(code, example command or "") per row of docs/errors.md's `## Exit codes` table."""
    section = (ROOT / "docs" / "errors.md").read_text(encoding="utf-8").split("\n## Exit codes\n", 1)[1].split("\n## ", 1)[0]
    rows = [ROW.match(line) for line in section.splitlines()]
    return [(int(m["code"]), (m["example"] or "").replace("\\|", "|")) for m in rows if m]


TABLE = exit_table()


def test_the_table_lists_exactly_the_codes_the_cli_uses() -> None:
    used = {cli.EXIT_DONE, cli.EXIT_VIOLATIONS, cli.EXIT_BAD_INPUT, cli.EXIT_BUG, cli.EXIT_INTERRUPTED,
            cli.EXIT_BROKEN_PIPE}
    assert [code for code, _ in TABLE] == sorted(used)


@pytest.mark.parametrize("code,example", [r for r in TABLE if r[1]], ids=[f"exit {c}: {e}" for c, e in TABLE if e])
def test_each_example_exits_with_its_code(code: int, example: str) -> None:
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    # a pipeline's code is its last command's; pipefail would also report a failing first stage
    done = subprocess.run(["bash", "-o", "pipefail", "-c", example], cwd=ROOT, env=env, capture_output=True, text=True)
    assert done.returncode == code, done.stderr
    if code == cli.EXIT_BAD_INPUT:
        assert len(done.stderr.splitlines()) == 1 and done.stderr.startswith("error: ")


def test_an_unexpected_error_is_a_bug_in_one_line_with_exit_3(monkeypatch: pytest.MonkeyPatch) -> None:
    from click.testing import CliRunner

    from podplan.optimizer import pipeline

    def broken(*args: object, **kwargs: object) -> None:
        raise ZeroDivisionError("division by zero")

    monkeypatch.setattr(pipeline, "greedy_plan", broken)
    result = CliRunner().invoke(cli.main, ["simulate", str(ROOT / "instances" / "web-store.yaml")])
    assert result.exit_code == cli.EXIT_BUG
    assert result.output.splitlines() == [
        "error: BUG: ZeroDivisionError: division by zero (please report it; --verbose shows the traceback)"]


def test_a_reader_that_closes_the_pipe_early_is_no_bug() -> None:
    """`podplan explain ... -o json | head` stops reading while explain still writes (it streams one pod at a
    time): podplan says nothing and exits as a writer killed by SIGPIPE does, never 'error: BUG'."""
    import subprocess
    import sys
    from pathlib import Path

    exe = Path(sys.executable).parent / "podplan"
    instance = Path(__file__).resolve().parents[1] / "instances" / "taints-dedicated-gpu.yaml"
    for _ in range(3):
        run = subprocess.run(["bash", "-c", f"'{exe}' explain '{instance}' -o json | head -n 3 >/dev/null; "
                                            "echo ${PIPESTATUS[0]}"],
                             capture_output=True, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"}, timeout=120)
        assert "BUG" not in run.stderr and "Traceback" not in run.stderr, run.stderr
        assert run.stdout.strip() in ("0", "141")
