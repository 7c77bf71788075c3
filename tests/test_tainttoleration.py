"""TaintToleration: NoSchedule/NoExecute taints filter; untolerated PreferNoSchedule taints score (weight 3)."""
import pytest

from builders import make_node, make_pod, run_filter, run_score, state_of
from podplan.optimizer.framework import Reason
from podplan.optimizer.tainttoleration import PLUGIN


def untolerated(key: str, value: str) -> list[Reason]:
    return [Reason("TaintToleration", "node(s) had untolerated taint(s)", unresolvable=True)]


@pytest.mark.parametrize("node, pod, reasons", [
    pytest.param(make_node("n").build(), make_pod("p").build(), [], id="an untainted node takes any pod"),
    pytest.param(make_node("n").taint("dedicated", "user1").build(), make_pod("p").build(),
                 untolerated("dedicated", "user1"), id="a NoSchedule taint rejects a pod without tolerations"),
    pytest.param(make_node("n").taint("dedicated", "user1", "NoExecute").build(), make_pod("p").build(),
                 untolerated("dedicated", "user1"), id="a NoExecute taint rejects a pod without tolerations"),
    pytest.param(make_node("n").taint("dedicated", "user1", "PreferNoSchedule").build(), make_pod("p").build(),
                 [], id="a PreferNoSchedule taint never filters"),
    pytest.param(make_node("n").taint("dedicated", "user1").build(),
                 make_pod("p").toleration("dedicated", "user1", "NoSchedule").build(), [],
                 id="an Equal toleration with key value and effect tolerates the taint"),
    pytest.param(make_node("n").taint("dedicated", "user1").build(),
                 make_pod("p").toleration("dedicated", "user2", "NoSchedule").build(),
                 untolerated("dedicated", "user1"), id="an Equal toleration with another value does not"),
    pytest.param(make_node("n").taint("foo", "bar").build(),
                 make_pod("p").toleration("foo", effect="NoSchedule", operator="Exists").build(), [],
                 id="an Exists toleration ignores the value"),
    pytest.param(make_node("n").taint("foo", "bar").build(), make_pod("p").toleration("foo", "bar").build(), [],
                 id="a toleration with an empty effect tolerates every effect"),
    pytest.param(make_node("n").taint("foo", "bar").build(),
                 make_pod("p").toleration("foo", "bar", "NoExecute").build(), untolerated("foo", "bar"),
                 id="a NoExecute toleration does not tolerate a NoSchedule taint"),
    pytest.param(make_node("n").taint("a", "1").taint("b", "2", "NoExecute").build(),
                 make_pod("p").toleration("a", "1").build(), untolerated("b", "2"),
                 id="an untolerated NoExecute taint rejects the node with the one taint reason"),
    pytest.param(make_node("n").taint("a", "1").taint("b", "2", "NoExecute").build(),
                 make_pod("p").toleration(operator="Exists").build(), [],
                 id="an empty-key Exists toleration tolerates every taint"),
    pytest.param(make_node("n").taint("gpu").build(), make_pod("p").build(), untolerated("gpu", ""),
                 id="a value-less taint is reported with an empty value"),
])
def test_filter(node, pod, reasons):
    assert run_filter(PLUGIN, pod, state_of([node]), "n") == reasons


NODES = [
    make_node("clean").build(),
    make_node("one").taint("cpu-type", "arm64", "PreferNoSchedule").build(),
    make_node("two").taint("cpu-type", "arm64", "PreferNoSchedule").taint("disk-type", "ssd", "PreferNoSchedule").build(),
    make_node("hard").taint("cpu-type", "arm64", "NoSchedule").build(),
]


@pytest.mark.parametrize("pod, expected", [
    pytest.param(make_pod("p").build(), {"clean": 100, "one": 50, "two": 0, "hard": 100},
                 id="untolerated PreferNoSchedule counts 0 1 2 reverse-normalize to 100 50 0"),
    pytest.param(make_pod("p").toleration("cpu-type", "arm64", "PreferNoSchedule").build(),
                 {"clean": 100, "one": 100, "two": 0, "hard": 100},
                 id="a tolerated PreferNoSchedule taint costs nothing"),
    pytest.param(make_pod("p").toleration("cpu-type", "arm64", "NoSchedule")
                 .toleration("disk-type", "ssd", "NoSchedule").build(),
                 {"clean": 100, "one": 50, "two": 0, "hard": 100},
                 id="NoSchedule tolerations do not count against PreferNoSchedule taints"),
    pytest.param(make_pod("p").toleration("cpu-type", operator="Exists").toleration("disk-type", "ssd").build(),
                 {"clean": 100, "one": 100, "two": 100, "hard": 100},
                 id="tolerations with an empty effect count and all-tolerated nodes tie at 100"),
])
def test_score(pod, expected):
    assert run_score(PLUGIN, pod, state_of(NODES)) == expected


def test_plugin_name_and_weight():
    assert (PLUGIN.name, PLUGIN.weight) == ("TaintToleration", 3)
