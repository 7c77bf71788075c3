"""Redraw docs/report.png: the HTML report of `podplan compare` on a generated 24-node cluster (all four
columns: greedy, optimal, current, re-placement), screenshot in headless chromium as a person would see it.

    python benchmarks/report_png.py                 # writes docs/report.png
    python benchmarks/report_png.py --out shot.png  # elsewhere

Needs Debian's `chromium` on PATH (as tests/test_report_browser.py does). The instance is
`podplan generate --nodes 24 --pods 260 --seed 3 --profile mixed`, compared with `--time-limit 10 --workers 1`.
"""
from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BROWSERS = ("chromium", "chromium-browser", "google-chrome")
WIDTH, HEIGHT = 1280, 1000


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "report.png")
    args = parser.parse_args(argv)
    exe = next((b for b in map(shutil.which, BROWSERS) if b), None)
    if exe is None:
        print("no chromium on PATH (apt-get install -y chromium)", file=sys.stderr)
        return 2
    podplan = str(Path(sys.executable).parent / "podplan")
    with tempfile.TemporaryDirectory(prefix="podplan-report-") as tmp:
        cluster = Path(tmp) / "mixed.yaml"
        cluster.write_text(subprocess.run([podplan, "generate", "--nodes", "24", "--pods", "260", "--seed", "3",
                                           "--profile", "mixed"], check=True, capture_output=True, text=True).stdout)
        subprocess.run([podplan, "compare", str(cluster), "--time-limit", "10", "--workers", "1", "--report",
                        str(Path(tmp) / "out")], check=True, capture_output=True, text=True)
        page = Path(tmp) / "out" / "report.html"
        subprocess.run([exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                        "--disable-background-networking", "--disable-component-update", "--disable-sync",
                        "--hide-scrollbars", f"--user-data-dir={Path(tmp) / 'profile'}",
                        f"--screenshot={args.out.resolve()}", f"--window-size={WIDTH},{HEIGHT}", page.as_uri()],
                       check=True, capture_output=True, text=True, timeout=120)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
