"""Build the krew archive of a release: the wrapper krew/kubectl-podplan and podplan's wheel, in one .tar.gz,
and print the `uri`/`sha256` lines krew/podplan.yaml needs.

    python krew/package.py                  # writes dist/kubectl-podplan-v<version>.tar.gz
    python krew/package.py --out DIR

krew unpacks the archive into ~/.krew/store/podplan/v<version>/ and links the wrapper onto PATH; the manifest's
caveat then installs the wheel from there (the same line the wrapper prints until it is installed).
"""
from __future__ import annotations

import argparse
import hashlib
import os
import subprocess
import sys
import tarfile
import re
import shutil
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def version() -> str:
    return re.search(r'^version = "([^"]+)"', (ROOT / "pyproject.toml").read_text(), re.M).group(1)


def build(out: Path) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="podplan-krew-") as tmp:
        # a pure wheel (the line reader's compiled loop left out: podplan reads with its Python loop), so that the
        # archive installs on whatever python3 the machine running kubectl has
        subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", tmp, str(ROOT)], check=True,
                       env={**os.environ, "PODPLAN_PURE_PYTHON": "1"})
        shutil.rmtree(ROOT / "build", ignore_errors=True)  # setuptools' build/lib would leak into later wheels
        wheel = next(Path(tmp).glob("podplan-*.whl"))
        archive = out / f"kubectl-podplan-v{version()}.tar.gz"
        with tarfile.open(archive, "w:gz") as tar:
            tar.add(ROOT / "krew" / "kubectl-podplan", arcname="kubectl-podplan")
            tar.add(wheel, arcname=wheel.name)
    return archive


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "dist")
    archive = build(parser.parse_args(argv).out)
    print(f"wrote {archive}")
    print(f"    sha256: \"{hashlib.sha256(archive.read_bytes()).hexdigest()}\"")
    return 0


if __name__ == "__main__":
    sys.exit(main())
