"""docs/errors.md's error table is what podplan really prints: each row names a case of tests/test_bad_input.py (its
id is the Rule column), which is run through `podplan validate` and must print exactly the Message column;
every case is in the table."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from test_bad_input import CASES, Bad, run_validate

ERRORS = Path(__file__).resolve().parents[1] / "docs" / "errors.md"
ROW = re.compile(r"^\| (?P<rule>[^|`]+?) \| `(?P<message>.+)` \|$")


def error_table() -> dict[str, str]:
    """Rule -> message, from the table under docs/errors.md's `## Errors` heading."""
    section = ERRORS.read_text(encoding="utf-8").split("\n## Errors\n", 1)[1].split("\n## ", 1)[0]
    rows = [ROW.match(line) for line in section.splitlines()]
    return {m["rule"]: m["message"] for m in rows if m}


TABLE = error_table()
BY_ID = {c.id: c for c in CASES}


def test_every_bad_input_case_is_in_the_error_table() -> None:
    assert sorted(set(BY_ID) - set(TABLE)) == []


@pytest.mark.parametrize("rule", sorted(TABLE))
def test_the_error_table_shows_what_podplan_prints(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, rule: str) -> None:
    case: Bad | None = BY_ID.get(rule)
    assert case is not None, f"docs/errors.md row {rule!r} names no case of tests/test_bad_input.py"
    result = run_validate(tmp_path, monkeypatch, case)
    assert result.stderr.splitlines() == [TABLE[rule]]
