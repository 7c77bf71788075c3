"""Every case under tests/conformance (ported from kube-scheduler's plugin tests) through explain's data.

The cases are the project's own copy of the shared conformance set; test_the_copy_matches_the_shared_set keeps
the two identical wherever the shared set sits beside the repository (it is skipped elsewhere).

filter: a node is feasible under the case's plugin iff explain lists no reason from that plugin.
score: with candidates exactly expect.tested, the plugin's normalized scores equal expect.scores.
"""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from podplan.models.loader import parse_documents
from podplan.optimizer.explain import explain_pod
from podplan.optimizer.state import ClusterState

ROOT = Path(__file__).resolve().parent / "conformance"
# Where the shared set lives beside a checkout (the development machines and CI); absent in a user's clone.
SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "conformance"
PLUGIN_OF_DIR = {
    "nodeaffinity": "NodeAffinity", "tainttoleration": "TaintToleration", "noderesources": "NodeResourcesFit",
    "nodename": "NodeName", "nodeunschedulable": "NodeUnschedulable", "interpodaffinity": "InterPodAffinity",
    "podtopologyspread": "PodTopologySpread",
}
CASES = sorted(ROOT.glob("*/*.yaml"))
# Cases we believe are wrong go here with the reason (and into the closing note); none so far.
XFAIL: dict[str, str] = {}


def test_conformance_suite_is_present() -> None:
    assert len(CASES) >= 150, f"expected the conformance cases under {ROOT}"


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and "__pycache__" not in p.parts}


def test_the_copy_matches_the_shared_set() -> None:
    if not SHARED.is_dir():
        pytest.skip(f"no shared conformance set at {SHARED}: nothing to compare the project's copy with")
    ours, theirs = _files(ROOT), _files(SHARED)
    assert sorted(ours) == sorted(theirs), "tests/conformance and the shared set hold different files"
    changed = [name for name in ours if ours[name] != theirs[name]]
    assert not changed, f"tests/conformance differs from the shared set in {changed}: copy the shared set again"


@pytest.mark.parametrize("path", CASES, ids=[f"{p.parent.name}/{p.stem}" for p in CASES])
def test_conformance_case(path: Path) -> None:
    case_id = f"{path.parent.name}/{path.stem}"
    if case_id in XFAIL:
        pytest.xfail(XFAIL[case_id])
    case = yaml.safe_load(path.read_text())
    plugin = PLUGIN_OF_DIR[path.parent.name]
    # Upstream's plugin tests keep objects an API server would reject (e.g. empty topologyKey): parse leniently.
    cluster = parse_documents(case["objects"] + [case["pod"]], str(path), strict=False)
    meta = case["pod"]["metadata"]
    key = f"{meta.get('namespace', 'default')}/{meta['name']}"
    # The pod under test is judged as the incoming pod even when it pins spec.nodeName (nodename cases).
    pod = next(p for p in cluster.pending + cluster.pods if p.key == key)
    others = [(p, p.node_name) for p in cluster.pods if p.key != key]
    state = ClusterState.from_cluster(cluster, others)
    expect = case["expect"]
    tested = expect.get("tested")
    if case["kind"] == "filter":
        explanation = explain_pod(pod, state)
        nodes = tested if tested is not None else list(explanation.nodes)
        feasible = sorted(n for n in nodes
                          if not any(r.plugin == plugin for r in explanation.nodes[n].reasons))
        assert feasible == sorted(expect["feasible"]), case.get("notes", "")
    else:
        candidates = tested if tested is not None else list(expect["scores"])
        explanation = explain_pod(pod, state, candidates=candidates)
        scores = {n: explanation.nodes[n].scores[plugin] for n in candidates}
        assert scores == expect["scores"], case.get("notes", "")
