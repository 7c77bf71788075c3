"""podplan's simulator against the real kube-scheduler (v1.35.4's own framework, the kubesched tool that sits
beside the repository in CI), pod by pod on random clusters of every profile: the same feasible nodes, a node
among kube-scheduler's best, the FitError text byte for byte (benchmarks/differential.py says how).
benchmarks/bench_differential.py runs the same comparison on hundreds of clusters."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
_spec = importlib.util.spec_from_file_location("differential", BENCHMARKS / "differential.py")
assert _spec is not None and _spec.loader is not None
differential = importlib.util.module_from_spec(_spec)
sys.modules["differential"] = differential
_spec.loader.exec_module(differential)

CLUSTERS = 3  # per profile: CI's share; the benchmark runs hundreds
PROFILES = sorted(differential.PROFILES)

pytestmark = pytest.mark.skipif(
    not differential.kubesched_available(),
    reason=f"the real kube-scheduler tool is not at {differential.KUBESCHED} (it sits beside the repository in CI "
           "and on development machines): the differential test needs it")


@pytest.mark.parametrize("seed", range(CLUSTERS * len(PROFILES)),
                         ids=lambda s: f"cluster {s} ({PROFILES[s % len(PROFILES)]}) schedules as kube-scheduler does")
def test_simulate_matches_the_real_kube_scheduler_pod_by_pod(seed: int, tmp_path: Path) -> None:
    diffs, compared, _ = differential.compare(10_000 + seed, tmp_path, PROFILES[seed % len(PROFILES)])
    assert compared > 0
    assert not diffs, "\n".join(f"{d.kind} {d.pod}: {d.detail}" for d in diffs)


def test_the_generator_covers_every_rule_podplan_models() -> None:
    text = "".join(str(differential.cluster(s)[0]) for s in range(40))
    for field in ("nodeSelector", "requiredDuringSchedulingIgnoredDuringExecution", "matchFields", "NoExecute",
                  "PreferNoSchedule", "unschedulable", "hostPort", "podAntiAffinity", "podAffinity",
                  "namespaceSelector", "topologySpreadConstraints", "ScheduleAnyway", "minDomains",
                  "nodeAffinityPolicy", "nodeTaintsPolicy", "matchLabelKeys", "priorityClassName",
                  "example.com/gpu", "ephemeral-storage", "Gt"):
        assert field in text, field
