"""Every example of README.md and docs/ shown with its output is what podplan prints today: each ```console
block's `$ command` lines are run (tests/doc_examples.py says how) and their outputs compared, timings masked.
When a change alters an output on purpose: `python -m tests.doc_examples --update`, then read the diff."""
from __future__ import annotations

import pytest

from doc_examples import ROOT, Block, blocks, mask, pages, run

BLOCKS = [b for page in pages() for b in blocks(page)]


def test_the_readme_and_the_docs_hold_examples() -> None:
    by_page = {b.page.relative_to(ROOT).as_posix() for b in BLOCKS}
    assert "README.md" in by_page
    assert len(BLOCKS) >= 20


@pytest.mark.parametrize("block", BLOCKS, ids=[b.id for b in BLOCKS])
def test_the_example_prints_what_the_page_shows(block: Block) -> None:
    for command, output in zip(block.commands, run(block)):
        assert mask(output) == mask(command.expected), (
            f"{block.id}: `$ {command.line}` prints something else now; if that is intended, run "
            f"`python -m tests.doc_examples --update {block.page.relative_to(ROOT)}` and read the diff")


def test_timings_are_masked_but_pod_names_are_not() -> None:
    assert mask(["time: 0.07s", '"wall_seconds": 0.002,', "web-5d8b7f9c6d-x2kfp 12s"]) == \
        ["time: <T>", '"wall_seconds": <T>,', "web-5d8b7f9c6d-x2kfp <T>"]
    assert mask(["default/redis-cache-wtk9s6xd6n-4rgnk"]) == ["default/redis-cache-wtk9s6xd6n-4rgnk"]
