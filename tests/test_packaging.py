"""Installed, podplan's code lives under the `podplan` import name only: the source folders (cli.py, models/,
optimizer/) are mapped by pyproject.toml's package-dir and an explicit `packages` list. A folder missing from
that list is silently left out of the wheel (optimizer/render once was: every command failed once installed)."""
from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def package_dirs() -> list[str]:
    """Every folder under models/ and optimizer/ holding Python code, as its installed dotted name."""
    found = set()
    for top in ("models", "optimizer"):
        for py in (ROOT / top).rglob("*.py"):
            rel = py.parent.relative_to(ROOT)
            if "__pycache__" not in rel.parts:
                found.add("podplan." + ".".join(rel.parts))
    return sorted(found)


def test_every_source_folder_is_a_listed_package() -> None:
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    missing = [p for p in package_dirs() if p not in listed]
    assert not missing, f"add to pyproject.toml [tool.setuptools] packages: {missing}"


def test_every_listed_package_is_a_folder_with_an_init() -> None:
    listed = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]
    for name in listed:
        folder = ROOT.joinpath(*name.split(".")[1:])
        assert (folder / "__init__.py").is_file(), f"{name}: no {folder}/__init__.py"


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    # Built from a copy: setuptools leaves build/ in the tree it builds, and a stale build/lib would put
    # deleted modules back into later wheels.
    src = tmp_path_factory.mktemp("src") / "podplan"
    shutil.copytree(ROOT, src, ignore=shutil.ignore_patterns(".git", ".venv", "build", "dist", "*.egg-info",
                                                             "__pycache__", ".hypothesis", ".pytest_cache"))
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(out), str(src)],
                   check=True, capture_output=True, cwd=out)
    (whl,) = out.glob("podplan-*.whl")
    with zipfile.ZipFile(whl) as z:
        return z.namelist()


def test_the_wheel_puts_nothing_but_podplan_at_the_top_of_site_packages(wheel: list[str]) -> None:
    tops = {name.split("/")[0] for name in wheel}
    assert not tops & {"cli.py", "cli", "models", "optimizer", "tests", "benchmarks"}
    assert {t for t in tops if not t.endswith(".dist-info")} == {"podplan"}


def test_the_wheel_holds_every_source_folder(wheel: list[str]) -> None:
    for name in package_dirs():
        assert "/".join(name.split(".")) + "/__init__.py" in wheel, f"{name} is not in the wheel"
    assert "podplan/cli.py" in wheel and "podplan/__main__.py" in wheel
