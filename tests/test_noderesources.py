"""NodeResourcesFit (filter, LeastAllocated score) and NodeResourcesBalancedAllocation (score)."""
import pytest

from builders import make_node, make_pod, run_filter, run_score, state_of
from podplan.optimizer.framework import Reason
from podplan.optimizer.noderesources import BALANCED_PLUGIN, PLUGIN, is_scalar_resource_name

SMALL = {"example.com/aaa": 5, "hugepages-2Mi": 5}


def small_node(pods: int = 32):
    """Upstream fit_test.go's node: 10m cpu, 20 bytes memory, 20 bytes ephemeral storage, 5 aaa, 5 hugepages."""
    return make_node("n").alloc(SMALL, cpu="10m", memory=20, ephemeral_storage=20, pods=pods).build()


def existing(**named):
    extra = {k: named.pop(k) for k in list(named) if "/" in k or k.startswith("hugepages")}
    return make_pod("existing").on("n").req(extra, **named).build()


def fit(reasons: list[str], unresolvable: bool = False) -> list[Reason]:
    return [Reason("NodeResourcesFit", r, unresolvable) for r in reasons]


@pytest.mark.parametrize("running, pod, reasons", [
    pytest.param([existing(cpu="10m", memory=20)], make_pod("p").build(), fit([]),
                 id="a pod requesting nothing fits a node whose cpu and memory are all taken"),
    pytest.param([existing(cpu="5m", memory=10)], make_pod("p").req(cpu="5m", memory=10).build(), fit([]),
                 id="requests that exactly fill the node fit"),
    pytest.param([existing(cpu="9m", memory=10)], make_pod("p").req(cpu="2m", memory=1).build(),
                 fit(["Insufficient cpu"]), id="one millicore too many is Insufficient cpu"),
    pytest.param([existing(cpu="10m", memory=20)], make_pod("p").req(cpu="1m", memory=1).build(),
                 fit(["Insufficient cpu", "Insufficient memory"]), id="every short resource is reported"),
    pytest.param([], make_pod("p").req(ephemeral_storage=25).build(),
                 fit(["Insufficient ephemeral-storage"], unresolvable=True),
                 id="a request above the whole allocatable is unresolvable by preemption"),
    pytest.param([existing(ephemeral_storage=10)], make_pod("p").req(ephemeral_storage=5).build(), fit([]),
                 id="ephemeral storage that still fits"),
    pytest.param([existing(**{"example.com/aaa": 2})], make_pod("p").req({"example.com/aaa": 3}).build(), fit([]),
                 id="an extended resource that exactly fits"),
    pytest.param([existing(**{"example.com/aaa": 2})], make_pod("p").req({"example.com/aaa": 4}).build(),
                 fit(["Insufficient example.com/aaa"]), id="an extended resource short on a partly used node"),
    pytest.param([], make_pod("p").req({"example.com/bbb": 1}).build(),
                 fit(["Insufficient example.com/bbb"], unresolvable=True),
                 id="an extended resource the node does not offer"),
    pytest.param([existing(**{"example.com/aaa": 6})], make_pod("p").req({"example.com/aaa": 0}, cpu="1m").build(),
                 fit([]), id="a zero request for an over-committed extended resource is not checked"),
    pytest.param([existing(**{"hugepages-2Mi": 2})], make_pod("p").req({"hugepages-2Mi": 4}).build(),
                 fit(["Insufficient hugepages-2Mi"]), id="hugepages are enforced"),
    pytest.param([], make_pod("p").req({"kubernetes.io/something": 1}).build(),
                 fit(["Insufficient kubernetes.io/something"], unresolvable=True),
                 id="a kubernetes.io-prefixed resource is enforced"),
    pytest.param([], make_pod("p").req({"unprefixed": 100}).build(), fit([]),
                 id="an unprefixed unknown resource name is ignored as upstream does"),
])
def test_filter(running, pod, reasons):
    assert run_filter(PLUGIN, pod, state_of([small_node()], running), "n") == reasons


def test_a_full_node_is_too_many_pods_even_for_a_pod_requesting_nothing():
    state = state_of([small_node(pods=1)], [existing()])
    assert run_filter(PLUGIN, make_pod("p").build(), state, "n") == fit(["Too many pods"])


def test_too_many_pods_comes_first_and_shares_the_nodes_unresolvable_status():
    state = state_of([small_node(pods=1)], [existing()])
    pod = make_pod("p").req(cpu="11m", memory=1).build()
    assert run_filter(PLUGIN, pod, state, "n") == fit(["Too many pods", "Insufficient cpu"], unresolvable=True)


def test_a_node_without_a_pods_allocatable_takes_no_pod():
    state = state_of([make_node("n").alloc(cpu="1", memory="1Gi").build()])
    assert run_filter(PLUGIN, make_pod("p").build(), state, "n") == fit(["Too many pods"])


def test_a_removed_pod_frees_its_resources():
    pod_on_node = existing(cpu="10m", memory=20)
    state = state_of([small_node()], [pod_on_node])
    state.remove(pod_on_node)
    assert run_filter(PLUGIN, make_pod("p").req(cpu="10m", memory=20).build(), state, "n") == []


@pytest.mark.parametrize("name, scalar", [
    ("example.com/aaa", True), ("hugepages-1Gi", True), ("kubernetes.io/something", True),
    ("attachable-volumes-csi-x", True), ("cpu", False), ("foo", False), ("requests.example.com/x", False),
    ("Example.com/x", False), ("example.com/", False),
])
def test_scalar_resource_names(name, scalar):
    assert is_scalar_resource_name(name) is scalar


# Scores: node cpu in millicores, memory in bytes. ------------------------------------------------------

def node(name: str, cpu: str, memory: int):
    return make_node(name).alloc(cpu=cpu, memory=memory, pods=32).build()


@pytest.mark.parametrize("nodes, running, pod, expected", [
    pytest.param([node("a", "4", 10000), node("b", "6", 10000)],
                 [make_pod("x").on("a").req(cpu="2", memory=4000).build(),
                  make_pod("y").on("b").req(cpu="1", memory=2000).build()],
                 make_pod("p").req(cpu="1", memory=2000).build(), {"a": 32, "b": 63},
                 id="least allocated averages (free cpu, free memory) after placing the pod, truncated"),
    pytest.param([node("a", "1", 1000 * 2**20)], [], make_pod("p").build(), {"a": 85},
                 id="a pod requesting nothing counts as 100m cpu and 200Mi memory"),
    pytest.param([node("a", "1", 1000 * 2**20)], [make_pod("x").on("a").build()], make_pod("p").build(), {"a": 70},
                 id="an existing pod requesting nothing counts with the same defaults"),
    pytest.param([node("a", "1", 10000)], [], make_pod("p").req(cpu="2", memory=1000).build(), {"a": 45},
                 id="an over-requested resource scores 0 not negative"),
    pytest.param([node("a", "1", 0)], [], make_pod("p").req(cpu="250m", memory=1000).build(), {"a": 75},
                 id="a resource with zero allocatable is left out of the mean"),
])
def test_least_allocated_score(nodes, running, pod, expected):
    assert run_score(PLUGIN, pod, state_of(nodes, running)) == expected


@pytest.mark.parametrize("nodes, running, pod, expected", [
    pytest.param([node("a", "4", 10000)], [], make_pod("p").req(cpu="1", memory=2000).build(), {"a": 97},
                 id="fractions 0.25 and 0.2 score int((1 - 0.025) * 100)"),
    pytest.param([node("a", "4", 10000)], [make_pod("x").on("a").req(cpu="2", memory=4000).build()],
                 make_pod("p").req(cpu="1", memory=2000).build(), {"a": 92},
                 id="existing requests count toward the fractions"),
    pytest.param([node("a", "4", 10000)], [make_pod("x").on("a").build()],
                 make_pod("p").req(cpu="1").build(), {"a": 87},
                 id="actual requests not the non-zero defaults: fractions 0.25 and 0"),
    pytest.param([node("a", "1", 10000)], [], make_pod("p").req(cpu="3", memory=5000).build(), {"a": 75},
                 id="a fraction above 1 is capped at 1"),
    pytest.param([node("a", "4", 0)], [], make_pod("p").req(cpu="1", memory=10).build(), {"a": 100},
                 id="a single resource with allocatable is perfectly balanced"),
    pytest.param([node("a", "4", 10000), node("b", "1", 10000)], [], make_pod("p").build(), {"a": 0, "b": 0},
                 id="a best-effort pod is skipped and scores 0 everywhere"),
])
def test_balanced_allocation_score(nodes, running, pod, expected):
    assert run_score(BALANCED_PLUGIN, pod, state_of(nodes, running)) == expected


def test_plugin_names_and_weights():
    assert (PLUGIN.name, PLUGIN.weight) == ("NodeResourcesFit", 1)
    assert (BALANCED_PLUGIN.name, BALANCED_PLUGIN.weight) == ("NodeResourcesBalancedAllocation", 1)


def test_pod_level_hugepages_replace_the_containers_hugepages():
    """resourcehelper.PodRequests: hugepages-* are pod-level resources too (IsSupportedPodLevelResource)."""
    from podplan.models.loader import parse_documents

    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"},
            "status": {"allocatable": {"cpu": "1", "memory": "1Gi", "pods": "10", "hugepages-2Mi": "4"}}}
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
           "spec": {"containers": [{"name": "c", "image": "pause",
                                    "resources": {"requests": {"hugepages-2Mi": "3"}, "limits": {"hugepages-2Mi": "3"}}}],
                    "resources": {"requests": {"hugepages-2Mi": "5"}, "limits": {"hugepages-2Mi": "5"}}}}
    cluster = parse_documents([node, pod], "test", strict=False)
    state = state_of(cluster.nodes)
    assert run_filter(PLUGIN, cluster.pending[0], state, "n") == fit(["Insufficient hugepages-2Mi"], unresolvable=True)
