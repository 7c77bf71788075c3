"""NodePorts: a pod's host ports must be free on the node (HostPortInfo.CheckConflict)."""
import pytest

from builders import make_node, make_pod, run_filter, state_of
from podplan.optimizer.framework import Reason
from podplan.optimizer.nodeports import PLUGIN

BUSY = [Reason("NodePorts", "node(s) didn't have free ports for the requested pod ports")]


def running(port: int, protocol: str = "TCP", host_ip: str = "0.0.0.0"):
    return make_pod(f"x{port}{protocol}{host_ip}").on("n").host_port(port, protocol, host_ip).build()


@pytest.mark.parametrize("used, pod, reasons", [
    pytest.param([], make_pod("p").host_port(80).build(), [], id="a free port fits"),
    pytest.param([running(80)], make_pod("p").build(), [], id="a pod without host ports always fits"),
    pytest.param([running(80)], make_pod("p").host_port(80).build(), BUSY, id="the same port and protocol conflict"),
    pytest.param([running(80)], make_pod("p").host_port(8080).build(), [], id="another port does not"),
    pytest.param([running(80, "UDP")], make_pod("p").host_port(80).build(), [],
                 id="the same port over another protocol does not conflict"),
    pytest.param([running(80, host_ip="10.0.0.1")], make_pod("p").host_port(80, host_ip="10.0.0.2").build(), [],
                 id="the same port on two specific IPs does not conflict"),
    pytest.param([running(80, host_ip="10.0.0.1")], make_pod("p").host_port(80, host_ip="10.0.0.1").build(), BUSY,
                 id="the same port on the same IP conflicts"),
    pytest.param([running(80, host_ip="10.0.0.1")], make_pod("p").host_port(80).build(), BUSY,
                 id="a wildcard wanted port conflicts with that port on any IP"),
    pytest.param([running(80)], make_pod("p").host_port(80, host_ip="10.0.0.1").build(), BUSY,
                 id="a specific IP conflicts with that port held on the wildcard"),
    pytest.param([running(80, host_ip="")], make_pod("p").host_port(80, "", "10.0.0.1").build(), BUSY,
                 id="an empty host IP means the wildcard and an empty protocol TCP"),
    pytest.param([running(80, "SCTP")], make_pod("p").host_port(443).host_port(80, "SCTP").build(), BUSY,
                 id="one conflicting port among several is enough"),
    pytest.param([], make_pod("p").host_port(0).build(), [], id="port 0 never conflicts"),
])
def test_filter(used, pod, reasons):
    assert run_filter(PLUGIN, pod, state_of([make_node("n").build()], used), "n") == reasons


def test_a_port_freed_by_a_removed_pod_is_free_again():
    holder = running(80)
    state = state_of([make_node("n").build()], [holder])
    state.remove(holder)
    assert run_filter(PLUGIN, make_pod("p").host_port(80).build(), state, "n") == []
