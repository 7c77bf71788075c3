"""Tolerations against taints: every matching rule of the Kubernetes "Taints and Tolerations" page
(v1.Toleration.ToleratesTaint), read from YAML the way a user writes them."""
from __future__ import annotations

from typing import Any

import pytest

from builders import pod_manifest
from podplan.models.loader import parse_documents
from podplan.models.taints import Taint, Toleration, first_untolerated

KEY1 = Taint("key1", "value1", "NoSchedule")


def toleration(raw: dict[str, Any]) -> Toleration:
    """A toleration as the parser reads it (operator defaulted to Equal, as the API server does)."""
    (pod,) = parse_documents([pod_manifest("p", tolerations=[raw])]).pending
    return pod.tolerations[0]


RULES = [
    # (toleration as written, taint, tolerated)
    ("Equal with the same key, value and effect", {"key": "key1", "operator": "Equal", "value": "value1", "effect": "NoSchedule"}, KEY1, True),
    ("operator left out defaults to Equal", {"key": "key1", "value": "value1", "effect": "NoSchedule"}, KEY1, True),
    ("Equal with another value", {"key": "key1", "operator": "Equal", "value": "value2", "effect": "NoSchedule"}, KEY1, False),
    ("Equal with no value against a valued taint", {"key": "key1", "effect": "NoSchedule"}, KEY1, False),
    ("Equal with no value against a taint with no value", {"key": "key1", "effect": "NoSchedule"}, Taint("key1", "", "NoSchedule"), True),
    ("Exists with the same key ignores the value", {"key": "key1", "operator": "Exists", "effect": "NoSchedule"}, KEY1, True),
    ("Exists with another key", {"key": "key2", "operator": "Exists", "effect": "NoSchedule"}, KEY1, False),
    ("Equal with another key", {"key": "key2", "operator": "Equal", "value": "value1", "effect": "NoSchedule"}, KEY1, False),
    ("effect mismatch", {"key": "key1", "operator": "Equal", "value": "value1", "effect": "NoExecute"}, KEY1, False),
    ("effect mismatch with Exists", {"key": "key1", "operator": "Exists", "effect": "PreferNoSchedule"}, KEY1, False),
    ("an empty effect matches NoSchedule", {"key": "key1", "operator": "Equal", "value": "value1"}, KEY1, True),
    ("an empty effect matches NoExecute", {"key": "key1", "operator": "Exists"}, Taint("key1", "x", "NoExecute"), True),
    ("an empty effect matches PreferNoSchedule", {"key": "key1", "operator": "Exists"}, Taint("key1", "", "PreferNoSchedule"), True),
    ("an empty key with Exists tolerates every taint", {"operator": "Exists"}, Taint("anything", "at-all", "NoExecute"), True),
    ("an empty key with Exists and an effect tolerates only that effect", {"operator": "Exists", "effect": "NoSchedule"},
     Taint("anything", "v", "NoExecute"), False),
    ("an empty key with Exists and an effect tolerates every key with it", {"operator": "Exists", "effect": "NoSchedule"},
     Taint("anything", "v", "NoSchedule"), True),
    ("tolerationSeconds plays no part in matching", {"key": "key1", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 3600},
     Taint("key1", "value1", "NoExecute"), True),
    ("tolerationSeconds does not rescue an effect mismatch", {"key": "key1", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 0},
     KEY1, False),
]


@pytest.mark.parametrize("raw,taint,tolerated", [(r, t, ok) for _, r, t, ok in RULES], ids=[i for i, *_ in RULES])
def test_toleration_matching_rule(raw: dict[str, Any], taint: Taint, tolerated: bool) -> None:
    assert toleration(raw).tolerates(taint) is tolerated


def test_toleration_seconds_is_kept() -> None:
    assert toleration({"key": "k", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 60}).toleration_seconds == 60


def test_the_docs_three_taint_example_leaves_the_untolerated_noschedule_taint() -> None:
    # Node tainted key1=value1:NoSchedule, key1=value1:NoExecute, key2=value2:NoSchedule; the pod tolerates the
    # first two, so key2 keeps it off the node.
    taints = (Taint("key1", "value1", "NoSchedule"), Taint("key1", "value1", "NoExecute"), Taint("key2", "value2", "NoSchedule"))
    tolerations = (toleration({"key": "key1", "operator": "Equal", "value": "value1", "effect": "NoSchedule"}),
                   toleration({"key": "key1", "operator": "Equal", "value": "value1", "effect": "NoExecute"}))
    assert first_untolerated(taints, tolerations) == Taint("key2", "value2", "NoSchedule")


def test_an_untolerated_prefer_no_schedule_taint_does_not_forbid_the_node() -> None:
    taints = (Taint("key1", "value1", "NoSchedule"), Taint("soft", "", "PreferNoSchedule"))
    tolerations = (toleration({"key": "key1", "operator": "Exists"}),)
    assert first_untolerated(taints, tolerations) is None
    assert first_untolerated(taints, tolerations, effects=("PreferNoSchedule",)) == Taint("soft", "", "PreferNoSchedule")


def test_the_first_untolerated_taint_is_reported_in_node_order() -> None:
    taints = (Taint("a", "", "NoExecute"), Taint("b", "", "NoSchedule"))
    assert first_untolerated(taints, ()) == Taint("a", "", "NoExecute")


def test_node_taints_are_read_with_key_value_and_effect() -> None:
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "gpu-1"},
            "spec": {"taints": [{"key": "nvidia.com/gpu", "effect": "NoSchedule"},
                                {"key": "dedicated", "value": "ml", "effect": "NoExecute"}]},
            "status": {"allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110", "nvidia.com/gpu": "4"}}}
    (n,) = parse_documents([node]).nodes
    assert n.taints == (Taint("nvidia.com/gpu", "", "NoSchedule"), Taint("dedicated", "ml", "NoExecute"))
    assert n.allocatable["nvidia.com/gpu"] == 4
