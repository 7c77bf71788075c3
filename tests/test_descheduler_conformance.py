"""The descheduler's own unit-test tables, ported as data (tests/descheduler_conformance/<plugin>/*.yaml,
FORMAT.md): each plugin's eviction decisions over one cycle equal upstream's expected ones."""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from podplan.models.loader import parse_documents
from podplan.optimizer.deschedule.cycle import decide
from podplan.optimizer.deschedule.policy import BALANCE_PLUGINS, parse_policy

CASES = sorted((Path(__file__).parent / "descheduler_conformance").glob("*/*.yaml"))


def policy_doc(case: dict) -> dict:
    plugin = case["plugin"]
    point = "balance" if plugin in BALANCE_PLUGINS else "deschedule"
    configs = [{"name": "DefaultEvictor", "args": case.get("evictor", {})}, {"name": plugin, "args": case["args"]}]
    doc = {"apiVersion": "descheduler/v1alpha2", "kind": "DeschedulerPolicy",
           "profiles": [{"name": "conformance", "pluginConfig": configs, "plugins": {point: {"enabled": [plugin]}}}]}
    doc.update(case.get("limits", {}))
    return doc


@pytest.mark.parametrize("path", CASES, ids=[f"{p.parent.name}/{p.stem}" for p in CASES])
def test_eviction_decisions_equal_upstreams(path: Path) -> None:
    case = yaml.safe_load(path.read_text())
    cluster = parse_documents(case["objects"], str(path), strict=False)  # upstream names such as pod_1_n1
    policy = parse_policy(policy_doc(case), str(path))
    evicted = [pod.name for pod, _ in decide(cluster, policy)]
    assert len(evicted) == case["expect"]["evicted"], f"{case['source']}: evicted {evicted}"
    if "pods" in case["expect"]:
        assert sorted(evicted) == sorted(case["expect"]["pods"]), case["source"]


def test_every_plugin_the_issue_names_has_cases() -> None:
    folders = {p.parent.name for p in CASES}
    assert {"lownodeutilization"} <= folders
