"""The kubectl plugin as krew installs it: krew/package.py's archive unpacked where krew puts it
(~/.krew/store/podplan/v<version>/, the wrapper linked from ~/.krew/bin), the manifest's caveat line run as
written, and the wrapper before and after. pip's dependencies are left out here (PIP_NO_DEPS): .ci/run installs
the same wheel with all of them into a fresh venv and runs it."""
from __future__ import annotations

import os
import re
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "krew"))
from package import build, version  # noqa: E402

MANIFEST = yaml.safe_load((ROOT / "krew" / "podplan.yaml").read_text())


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A HOME where krew has installed the plugin from the release archive."""
    home = tmp_path_factory.mktemp("home")
    archive = build(tmp_path_factory.mktemp("dist"))
    store = home / ".krew" / "store" / "podplan" / MANIFEST["spec"]["version"]
    store.mkdir(parents=True)
    with tarfile.open(archive) as tar:
        tar.extractall(store)
    (home / ".krew" / "bin").mkdir()
    (home / ".krew" / "bin" / "kubectl-podplan").symlink_to(store / "kubectl-podplan")
    return home


def caveat_line() -> str:
    lines = [line.strip() for line in MANIFEST["spec"]["caveats"].splitlines()]
    return next(line for line in lines if line.startswith("python3 -m venv"))


def env(home: Path) -> dict[str, str]:
    # a PATH whose python3 has no podplan (the system's), as on a machine that only ran `kubectl krew install`
    return {"HOME": str(home), "PATH": "/usr/bin:/bin", "PIP_NO_DEPS": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1",
            **{k: v for k, v in os.environ.items() if k.startswith("PIP_INDEX") or k == "PIP_CONFIG_FILE"}}


def test_the_manifest_the_archive_and_the_caveat_agree_on_version_and_files(home: Path) -> None:
    assert MANIFEST["spec"]["version"] == f"v{version()}"
    store = home / ".krew" / "store" / "podplan" / f"v{version()}"
    assert sorted(p.name for p in store.iterdir()) == ["kubectl-podplan", f"podplan-{version()}-py3-none-any.whl"]
    froms = [f["from"] for p in MANIFEST["spec"]["platforms"] for f in p["files"]]
    assert froms == ["kubectl-podplan", "podplan-*.whl"]
    assert f"~/.krew/store/podplan/v{version()}/podplan-{version()}-py3-none-any.whl" in caveat_line()


def test_before_the_install_the_plugin_prints_the_caveats_line_which_installs_the_wheel(home: Path) -> None:
    if not Path("/usr/bin/python3").exists() or subprocess.run(["/usr/bin/python3", "-c", "import podplan"],
                                                               capture_output=True).returncode == 0:
        pytest.skip("needs a system python3 without podplan")
    plugin = str(home / ".krew" / "bin" / "kubectl-podplan")
    before = subprocess.run([plugin, "--help"], env=env(home), capture_output=True, text=True)
    assert before.returncode == 1
    assert before.stderr.splitlines() == ["kubectl podplan: podplan is not installed yet; install it once with:",
                                          "  " + caveat_line().replace("~", str(home))]
    done = subprocess.run(["sh", "-c", caveat_line()], env=env(home), capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    shown = subprocess.run([str(home / ".local/share/podplan/venv/bin/pip"), "show", "podplan"], env=env(home),
                           capture_output=True, text=True, check=True).stdout
    assert re.search(rf"^Version: {re.escape(version())}$", shown, re.M)
