"""podplan whatif --engine ray on a small local Ray (2 CPUs): the same rows as the local engine, the bases put
into the object store once, a failing scenario one row. Ray is slow to start: few tests, one Ray for most.

Ray is the `podplan[ray]` extra. CI installs it and sets PODPLAN_REQUIRE_RAY=1, so that a missing Ray fails
there instead of skipping these tests."""
from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

if os.environ.get("PODPLAN_REQUIRE_RAY"):
    import ray
else:
    ray = pytest.importorskip("ray")

from podplan.cli import main  # noqa: E402
from podplan.optimizer.whatif import Settings, Source, load_bases, load_scenarios, prepare  # noqa: E402
from podplan.optimizer.whatif.engines import run_local, run_ray  # noqa: E402
from podplan.optimizer.whatif.render import render_table  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
CLUSTER = ROOT / "instances" / "multi-tenant.yaml"
SCENARIOS = ROOT / "instances" / "whatif" / "multi-tenant-scenarios.yaml"


@pytest.fixture(scope="module")
def local_ray() -> Iterator[None]:
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
    yield
    ray.shutdown()


def _rows(outcome: Any, tasks: Any) -> list[dict[str, Any]]:
    return [outcome.rows[t.position] for t in tasks]


def test_ray_and_local_engines_give_the_same_table_and_rows(local_ray: None) -> None:
    bases = load_bases([Source("mt", (str(CLUSTER),))], keep_docs=True)
    tasks = prepare(bases, load_scenarios(str(SCENARIOS)))
    settings = Settings(time_limit=10, seed=7)
    on_ray = run_ray(bases, tasks, settings, parallel=2, in_flight=3)
    local = run_local(bases, tasks, settings, parallel=2)
    assert not on_ray.interrupted and len(on_ray.rows) == len(tasks)
    assert render_table(_rows(on_ray, tasks), timing=False) == render_table(_rows(local, tasks), timing=False)

    def without_time(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [{k: v for k, v in r.items() if k != "wall_seconds"} for r in rows]

    assert without_time(_rows(on_ray, tasks)) == without_time(_rows(local, tasks))
    # the bases travelled once, as one object, whatever the number of tasks
    assert on_ray.puts == 1 and on_ray.bases_bytes and len(tasks) > 1


def test_a_failing_scenario_on_ray_is_one_row_and_the_others_finish(local_ray: None, tmp_path: Path) -> None:
    scen = tmp_path / "s.yaml"
    scen.write_text("apiVersion: podplan.io/v1alpha1\nkind: Scenarios\nscenarios:\n- name: ok\n"
                    "- name: ghost\n  scale: {workload: Deployment/shop/ghost, replicas: 2}\n- name: also-ok\n")
    bases = load_bases([Source("mt", (str(CLUSTER),))], keep_docs=True)
    tasks = prepare(bases, load_scenarios(str(scen)))
    rows = _rows(run_ray(bases, tasks, Settings(time_limit=5), parallel=2), tasks)
    assert [r["status"] for r in rows] == ["OPTIMAL", "ERROR", "OPTIMAL"]
    assert rows[1]["error"] == "scale.workload: no Deployment shop/ghost in the cluster"


def test_the_command_starts_and_stops_its_own_local_ray(tmp_path: Path) -> None:
    if ray.is_initialized():  # the module's Ray (another test order): the command must start its own
        ray.shutdown()
    out = CliRunner().invoke(main, ["whatif", str(CLUSTER), "--scenarios", str(SCENARIOS), "--engine", "ray",
                                    "--parallel", "2", "--time-limit", "10", "-o", "json"])
    assert out.exit_code == 0, out.output
    assert not ray.is_initialized()
    local = CliRunner().invoke(main, ["whatif", str(CLUSTER), "--scenarios", str(SCENARIOS), "--parallel", "2",
                                      "--time-limit", "10", "-o", "json"])
    strip = [{k: v for k, v in r.items() if k != "wall_seconds"}
             for r in json.loads(out.stdout)["scenarios"]]
    assert strip == [{k: v for k, v in r.items() if k != "wall_seconds"}
                     for r in json.loads(local.stdout)["scenarios"]]
