"""Parts of pods remembered while reading (models.parse) give each pod exactly what parsing it alone gives:
labels that differ, values that are not strings, and errors are never hidden by a part read before."""
from __future__ import annotations

import pytest

from podplan.models import parse as P
from podplan.models.errors import InputError
from podplan.models.generate import generate
from podplan.models.loader import parse_documents


def _pod(name: str, labels: dict, affinity: dict | None = None, status: dict | None = None, **spec: object) -> dict:
    body = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default", "labels": labels},
            "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "100m"}}}], **spec}}
    if affinity is not None:
        body["spec"]["affinity"] = affinity
    if status is not None:
        body["status"] = status
    return body


def _forget() -> None:
    for memo in (P._PARTS, P._LABEL_MAPS, P._SYNTAX_OK, P._UNITS):
        memo.clear()


def test_match_label_keys_take_each_pods_own_label_value() -> None:
    term = {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": "kubernetes.io/hostname",
            "matchLabelKeys": ["version"]}
    affinity = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}
    c = parse_documents([_pod("a", {"app": "web", "version": "1"}, affinity),
                         _pod("b", {"app": "web", "version": "2"}, affinity)])
    values = [p.affinity.anti_required[0].label_selector.match_expressions[-1].values for p in c.pending]
    assert values == [("1",), ("2",)]


def test_a_label_value_that_is_not_a_string_is_refused_after_the_same_map_with_strings() -> None:
    with pytest.raises(InputError, match="expected a string"):
        parse_documents([_pod("a", {"app": "web", "version": "1.10"}), _pod("b", {"app": "web", "version": 1.1})])


def test_a_label_map_with_true_is_not_taken_for_one_with_1() -> None:
    c = parse_documents([_pod("a", {"on": "1"}), _pod("b", {"on": "x"})])
    assert [p.labels for p in c.pending] == [{"on": "1"}, {"on": "x"}]
    with pytest.raises(InputError, match="expected a string"):
        parse_documents([_pod("c", {"on": "1"}), _pod("d", {"on": True})])


def test_each_pod_gets_a_label_map_of_its_own() -> None:
    c = parse_documents([_pod("a", {"app": "web"}), _pod("b", {"app": "web"})])
    a, b = c.pending
    assert a.labels == b.labels and a.labels is not b.labels


def test_a_spec_error_is_reported_before_a_status_error() -> None:
    bad = _pod("a", {"app": "web"}, status={"nominatedNodeName": 3}, priorityClassName=7)
    with pytest.raises(InputError) as err:
        parse_documents([bad])
    assert err.value.field == "spec.priorityClassName"


def test_status_fields_are_read_for_a_running_pod() -> None:
    c = parse_documents([_pod("a", {"app": "web"}, status={"nominatedNodeName": "n1", "startTime": "2024-01-01T00:00:00Z"})])
    assert (c.pending[0].nominated_node_name, c.pending[0].start_time) == ("n1", "2024-01-01T00:00:00Z")


@pytest.mark.parametrize("profile", ["production", "mixed", "adversarial", "gpu"])
def test_a_generated_cluster_reads_the_same_with_every_memo_empty_or_warm(profile: str) -> None:
    manifests = generate(20, 200, 3, profile)
    _forget()
    cold = parse_documents(manifests)
    warm = parse_documents(manifests)
    assert cold == warm
    assert [p.labels for p in cold.pods + cold.pending] == [p.labels for p in warm.pods + warm.pending]
