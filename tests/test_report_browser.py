"""The compare report in a real headless browser (Debian's `chromium` package): the page loads, its four PNG
charts decode, the DOM after rendering carries the numbers compare printed, and the screenshot shows them.

Without chromium on PATH the tests skip, unless PODPLAN_REQUIRE_BROWSER=1 (set in CI), where they fail.
"""
from __future__ import annotations

import html
import os
import re
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import pytest
from PIL import Image

from podplan.models.loader import load_paths
from podplan.optimizer.compare import compare
from podplan.optimizer.render.compare import rows, to_dict
from podplan.optimizer.render.report import COLORS, write_report
from podplan.optimizer.runner import SolverParams

ROOT = Path(__file__).resolve().parents[1]
BROWSERS = ("chromium", "chromium-browser", "google-chrome")
WIDTH, HEIGHT = 1280, 2200


def browser() -> str:
    found = next((b for b in map(shutil.which, BROWSERS) if b), None)
    if found is None:
        if os.environ.get("PODPLAN_REQUIRE_BROWSER"):
            pytest.fail("no chromium on PATH (apt-get install -y chromium)")
        pytest.skip("no chromium on PATH (apt-get install -y chromium)")
    return found


def run_browser(exe: str, profile: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Headless chromium with everything that would reach the network or a display turned off."""
    cmd = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
           "--disable-background-networking", "--disable-component-update", "--disable-sync",
           "--hide-scrollbars", f"--user-data-dir={profile}", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=True)


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, str, Path]:
    """The report of a running cluster (all four columns), its DOM after rendering, and a screenshot."""
    exe = browser()
    tmp = tmp_path_factory.mktemp("report")
    cluster = load_paths([str(ROOT / "instances" / "cluster-dump.yaml")])
    doc = to_dict(compare(cluster, SolverParams(time_limit=3, workers=1)))
    page = write_report(doc, tmp / "out")
    dom = run_browser(exe, tmp / "profile-dom", "--dump-dom", page.as_uri()).stdout
    shot = tmp / "shot.png"
    run_browser(exe, tmp / "profile-shot", f"--screenshot={shot}", f"--window-size={WIDTH},{HEIGHT}", page.as_uri())
    return doc, dom, shot


def cell(dom: str, col: str, attr: str, key: str) -> str:
    m = re.search(rf'data-col="{col}" data-{attr}="{re.escape(html.escape(key))}">(.*?)</', dom)
    assert m, f"no cell {col}/{key} in the rendered DOM"
    return html.unescape(m.group(1))


def test_the_browser_decodes_all_four_charts(rendered: tuple[dict, str, Path]) -> None:
    _doc, dom, _shot = rendered
    assert re.search(r'<body data-images-loaded="4"', dom), "the load handler counts 4 decoded images"


def test_every_row_of_the_comparison_table_is_in_the_rendered_dom(rendered: tuple[dict, str, Path]) -> None:
    doc, dom, _shot = rendered
    assert [c["name"] for c in doc["columns"]] == ["greedy", "optimal", "current", "replacement"]
    for label, cells in rows(doc):
        for col, value in zip(doc["columns"], cells):
            assert cell(dom, col["name"], "row", label.strip()) == value


def test_the_headline_cards_show_pods_placed_and_the_preference(rendered: tuple[dict, str, Path]) -> None:
    doc, dom, _shot = rendered
    for col in doc["columns"]:
        assert cell(dom, col["name"], "key", "placed") == str(col["placed"])
        assert cell(dom, col["name"], "key", "preference") == str(col["preference"])
    moved = doc["differences"][1]["count"]
    assert f'data-diff="current-replacement">{moved}<' in dom


def test_the_screenshot_shows_the_page_with_every_columns_colour(rendered: tuple[dict, str, Path]) -> None:
    _doc, _dom, shot = rendered
    img = Image.open(shot).convert("RGB")
    assert img.size == (WIDTH, HEIGHT)
    pixels = Counter({colour: n for n, colour in img.getcolors(maxcolors=WIDTH * HEIGHT)})
    assert len(pixels) > 500, "a blank or failed render has few colours"
    for name, hexcolour in COLORS.items():
        rgb = tuple(int(hexcolour[i:i + 2], 16) for i in (1, 3, 5))
        near = sum(n for p, n in pixels.items() if max(abs(a - b) for a, b in zip(p, rgb)) <= 6)
        assert near > 200, f"the {name} colour (cards and charts) is missing from the screenshot"
