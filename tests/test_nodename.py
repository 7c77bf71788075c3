"""NodeName and NodeUnschedulable: the two one-line filters, judged as kube-scheduler judges them."""
import pytest

from builders import make_node, make_pod, run_filter, state_of
from podplan.optimizer.framework import Reason
from podplan.optimizer.nodename import PLUGIN as NODE_NAME
from podplan.optimizer.nodeunschedulable import PLUGIN as NODE_UNSCHEDULABLE

NODES = [make_node("node-a").build(), make_node("node-b").build()]


@pytest.mark.parametrize("pod, node, fits", [
    pytest.param(make_pod("p").build(), "node-a", True, id="a pod that names no node fits any node"),
    pytest.param(make_pod("p").on("node-a").build(), "node-a", True, id="a pod naming node-a fits node-a"),
    pytest.param(make_pod("p").on("node-a").build(), "node-b", False, id="a pod naming node-a does not fit node-b"),
    pytest.param(make_pod("p").on("gone").build(), "node-a", False,
                 id="a pod naming a node absent from the cluster fits no node"),
])
def test_node_name(pod, node, fits):
    reasons = run_filter(NODE_NAME, pod, state_of(NODES), node)
    expected = [Reason("NodeName", "node(s) didn't match the requested node name", unresolvable=True)]
    assert reasons == ([] if fits else expected)


CORDONED = make_node("cordoned").unschedulable().build()
OPEN = make_node("open").build()


@pytest.mark.parametrize("pod, node, fits", [
    pytest.param(make_pod("p").build(), "open", True, id="any pod fits a schedulable node"),
    pytest.param(make_pod("p").build(), "cordoned", False, id="a plain pod does not fit a cordoned node"),
    pytest.param(make_pod("p").toleration("node.kubernetes.io/unschedulable", effect="NoSchedule",
                                          operator="Exists").build(), "cordoned", True,
                 id="a pod tolerating the unschedulable taint with Exists fits a cordoned node"),
    pytest.param(make_pod("p").toleration("node.kubernetes.io/unschedulable").build(), "cordoned", True,
                 id="a pod tolerating the unschedulable key with an empty value and any effect fits a cordoned node"),
    pytest.param(make_pod("p").toleration(operator="Exists").build(), "cordoned", True,
                 id="a pod tolerating everything fits a cordoned node"),
    pytest.param(make_pod("p").toleration("node.kubernetes.io/unschedulable", effect="NoExecute",
                                          operator="Exists").build(), "cordoned", False,
                 id="a pod tolerating the unschedulable key only for NoExecute does not fit a cordoned node"),
    pytest.param(make_pod("p").toleration("node.kubernetes.io/unschedulable", value="yes").build(), "cordoned",
                 False, id="a pod tolerating the unschedulable key with another value does not fit a cordoned node"),
])
def test_node_unschedulable(pod, node, fits):
    reasons = run_filter(NODE_UNSCHEDULABLE, pod, state_of([CORDONED, OPEN]), node)
    expected = [] if fits else [Reason("NodeUnschedulable", "node(s) were unschedulable", unresolvable=True)]
    assert reasons == expected
