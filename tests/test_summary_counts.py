"""`podplan validate`'s summary counts rules once per distinct pod shape and DaemonSet nodes in one pass: the
figures are those counted pod by pod, on generated clusters of every profile."""
from __future__ import annotations

from collections import Counter

import pytest

from podplan.models.generate import generate
from podplan.models.loader import parse_documents
from podplan.models.workloads import daemon_nodes
from podplan.optimizer.render.inputs import summary


def _rules_pod_by_pod(cluster) -> dict[str, int]:  # type: ignore[no-untyped-def]
    rules: Counter[str] = Counter()
    for p in cluster.pods + cluster.pending:
        a = p.affinity
        rules["nodeSelector"] += bool(p.node_selector)
        rules["requiredNodeAffinity"] += a.node_required is not None
        rules["preferredNodeAffinity"] += bool(a.node_preferred)
        rules["requiredPodAffinity"] += bool(a.pod_required)
        rules["preferredPodAffinity"] += bool(a.pod_preferred)
        rules["requiredPodAntiAffinity"] += bool(a.anti_required)
        rules["preferredPodAntiAffinity"] += bool(a.anti_preferred)
        rules["tolerations"] += bool(p.tolerations)
        rules["hostPorts"] += bool(p.host_ports)
        rules["spreadDoNotSchedule"] += any(c.when_unsatisfiable == "DoNotSchedule" for c in p.spread_constraints)
        rules["spreadScheduleAnyway"] += any(c.when_unsatisfiable == "ScheduleAnyway" for c in p.spread_constraints)
    return {k: v for k, v in rules.items() if v}


@pytest.mark.parametrize("profile", ["production", "mixed", "adversarial", "gpu"])
def test_the_summary_counts_what_counting_pod_by_pod_counts(profile: str) -> None:
    cluster = parse_documents(generate(30, 300, 11, profile))
    s = summary(cluster)
    expected = _rules_pod_by_pod(cluster)
    per_object = ("taintedNodes", "unschedulableNodes", "podDisruptionBudgets", "podGroups")
    assert {k: v for k, v in s["rules"].items() if k not in per_object} == expected
    replicas = {w["workload"]: w["replicas"] for w in s["workloads"]}
    for w in cluster.workloads:
        assert replicas[w.key] == (daemon_nodes(cluster, w) if w.kind == "DaemonSet" else w.replicas)


def test_daemonsets_count_the_nodes_they_run_on_and_those_they_wait_for() -> None:
    cluster = parse_documents(generate(30, 300, 11, "production"))
    daemons = [w for w in cluster.workloads if w.kind == "DaemonSet"]
    assert daemons  # the production profile runs DaemonSets on every node
    replicas = {w["workload"]: w["replicas"] for w in summary(cluster)["workloads"]}
    assert all(replicas[w.key] == daemon_nodes(cluster, w) > 0 for w in daemons)
