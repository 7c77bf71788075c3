"""The packing repair (optimizer.packing) of large components whose pods meet only through node resources: the
pods greedy strands to fragmentation get placed, nothing greedy placed is lost, and every plan passes the
verifier."""
from __future__ import annotations

import itertools
import time
from functools import cache

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from builders import make_node, make_pod, pod_term, selector, spread
from podplan.models.generate import generate_instance
from podplan.models.loader import parse_documents
from podplan.models.objects import Cluster, Pod
from podplan.optimizer.bound import placed_bound
from podplan.optimizer.greedy import simulate
from podplan.optimizer.packing import packable, repair
from podplan.optimizer.problem import build_problem
from podplan.optimizer.registry import DEFAULT_PROFILE
from podplan.optimizer.runner import SolverParams
from podplan.optimizer.solve import _greedy_counts, solve
from podplan.optimizer.verify import verify

H = "kubernetes.io/hostname"
GPU = "example.com/gpu"
# every component treated as too large for the full model: the path of the 1,500-node GPU cluster
LARGE = dict(workers=1, full_model_variables=0, neighbourhood_variables=1)


def gpu_nodes(n: int, gpus: int = 4) -> list:
    return [make_node(f"g{i}").label(H, f"g{i}").alloc({GPU: gpus}, cpu="8", memory="32Gi", pods=110).build()
            for i in range(n)]


def gpu_pod(name: str, gpus: int, order: int) -> Pod:
    return make_pod(name).req({GPU: gpus}, cpu="1", memory="1Gi").set(order=order).build()


def stranding() -> Cluster:
    """Two 4-GPU nodes; greedy spreads the two 1-GPU pods one per node, so the 4-GPU pod finds 3 free on each;
    the 2-GPU pod still fits. Packed: the 4-GPU pod alone, the three others on the other node."""
    pods = [gpu_pod("one-a", 1, 0), gpu_pod("one-b", 1, 1), gpu_pod("four", 4, 2), gpu_pod("two", 2, 3)]
    return Cluster(nodes=tuple(gpu_nodes(2)), pending=tuple(pods))


@cache
def generated(nodes: int, pods: int, seed: int) -> Cluster:
    """`podplan generate --profile gpu`: built from a full packing, so every pod can be placed."""
    return parse_documents(generate_instance(nodes, pods, seed, "gpu").manifests, "generated-gpu")


def test_solve_places_the_whole_gpu_pod_greedy_strands_on_two_half_used_nodes() -> None:
    cluster = stranding()
    greedy = simulate(cluster)
    assert sorted(greedy.pending) == ["default/four"]  # the premise: greedy fragments the GPUs
    plan = solve(cluster, SolverParams(time_limit=10, **LARGE), None, greedy)
    assert verify(cluster, plan.placements).ok
    assert len(plan.placements) == 4 and not plan.pending
    assert any(n.startswith("packing repair: 1 more pod(s) placed") for n in plan.notes)


@pytest.mark.parametrize("nodes,pods,seed,at_least", [(30, 160, 0, 160), (30, 160, 3, 160), (60, 320, 1, 317)],
                         ids=["30 nodes and 160 pods, seed 0: all placed (greedy 153)",
                              "30 nodes and 160 pods, seed 3: all placed (greedy 155)",
                              "60 nodes and 320 pods, seed 1: within 1 % of all (greedy 311)"])
def test_solve_fills_a_generated_gpu_cluster_built_from_a_full_packing(nodes: int, pods: int, seed: int,
                                                                      at_least: int) -> None:
    cluster = generated(nodes, pods, seed)
    greedy = simulate(cluster)
    assert len(greedy.placements) < pods  # greedy strands some to fragmentation
    plan = solve(cluster, SolverParams(time_limit=20, **LARGE), None, greedy)
    report = verify(cluster, plan.placements)
    assert report.ok, [v for v in report.violations if not v.preexisting][:3]
    assert len(plan.placements) >= at_least
    assert plan.bound["placed"] == pods and plan.gaps["placed"]["absolute"] == pods - len(plan.placements)


def test_repair_keeps_every_pod_greedy_placed_placed() -> None:
    cluster = generated(30, 160, 0)
    greedy = simulate(cluster)
    problem = build_problem(cluster, DEFAULT_PROFILE)
    [comp] = problem.components
    before = _greedy_counts(problem, greedy)
    after = repair(problem, comp, before, time.perf_counter() + 10, SolverParams(workers=1))
    placed = {c: 0 for c in comp.classes}
    for (c, _), k in after.items():
        placed[c] += k
    for (c, _), k in before.items():
        assert placed[c] >= k
    assert sum(after.values()) == 160 > sum(before.values())


def test_the_same_seed_gives_the_same_repair() -> None:
    cluster = generated(30, 160, 3)
    problem = build_problem(cluster, DEFAULT_PROFILE)
    [comp] = problem.components
    start = _greedy_counts(problem, simulate(cluster))
    runs = [repair(problem, comp, start, time.perf_counter() + 10, SolverParams(workers=w, seed=5)) for w in (1, 2)]
    assert runs[0] == runs[1]


def test_a_repair_with_nothing_pending_returns_the_incumbent() -> None:
    cluster = Cluster(nodes=tuple(gpu_nodes(2)), pending=(gpu_pod("one", 1, 0),))
    problem = build_problem(cluster, DEFAULT_PROFILE)
    incumbent = {(0, 1): 1}
    assert repair(problem, problem.components[0], incumbent, time.perf_counter() + 5, SolverParams()) == incumbent


@pytest.mark.parametrize("extra,expected", [
    (lambda b: b, True),
    (lambda b: b.pod_anti_affinity(pod_term(H, selector(app="x"))), False),
    (lambda b: b.spread(spread(1, H, selector(app="x"))), False),
    (lambda b: b.host_port(8080), False),
], ids=["a pod with requests only is packable",
        "a pod with pod anti-affinity is not (moving others changes its verdict)",
        "a pod with a topology spread constraint is not",
        "a pod with a host port is not"])
def test_only_components_decided_by_resources_are_packable(extra, expected: bool) -> None:
    pods = [gpu_pod("plain", 1, 0), extra(make_pod("odd").label("app", "x").req({GPU: 1}, cpu="1")).build()]
    problem = build_problem(Cluster(nodes=tuple(gpu_nodes(2)), pending=tuple(pods)), DEFAULT_PROFILE)
    assert packable(problem, problem.components[0]) is expected


# -- the placed bound counts per-node packing ---------------------------------------------------------------

MILLI = "example.com/gpu-milli"


def milli_nodes(*milli: int) -> list:
    return [make_node(f"m{i}").label(H, f"m{i}").label("model", "a" if i % 2 else "b")
            .alloc({MILLI: m}, cpu="4", memory="16Gi", pods=110).build() for i, m in enumerate(milli)]


def milli_pod(name: str, milli: int, cpu: str = "1", model: str = "") -> Pod:
    b = make_pod(name).req({MILLI: milli}, cpu=cpu, memory="1Gi")
    return (b.node_selector(model=model) if model else b).build()


def bound_of(cluster: Cluster) -> int:
    problem = build_problem(cluster, DEFAULT_PROFILE)
    return sum(sum(placed_bound(problem, comp, 5.0)[0].values()) for comp in problem.components)


def brute_force(cluster: Cluster) -> int:
    """Most pods placed over every assignment (pod -> node or pending), by requests and node selectors."""
    nodes, pods = list(cluster.nodes), list(cluster.pending)
    best = 0
    for choice in itertools.product(range(len(nodes) + 1), repeat=len(pods)):
        used = [dict() for _ in nodes]
        ok = True
        for pod, i in zip(pods, choice):
            if i == len(nodes):
                continue
            if any(nodes[i].labels.get(k) != v for k, v in pod.node_selector.items()):
                ok = False
                break
            for r, q in pod.requests.items():
                used[i][r] = used[i].get(r, 0) + q
                if used[i][r] > nodes[i].allocatable.get(r, 0):
                    ok = False
        if ok:
            best = max(best, sum(1 for i in choice if i < len(nodes)))
    return best


def test_three_pods_over_half_a_gpu_fit_two_gpus_only_one_per_node_and_the_bound_says_so() -> None:
    # 0.55 + 0.6 + 0.65 GPU is 1.8 of 2 free GPUs, yet no two of them share a node
    cluster = Cluster(nodes=tuple(milli_nodes(1000, 1000)),
                      pending=tuple(milli_pod(f"p{m}", m) for m in (550, 600, 650)))
    assert brute_force(cluster) == 2 == bound_of(cluster)
    plan = solve(cluster, SolverParams(time_limit=10, **LARGE), None, simulate(cluster))
    assert len(plan.placements) == 2 and plan.status == "OPTIMAL" and plan.gaps["placed"]["absolute"] == 0


@st.composite
def packings(draw: st.DrawFn) -> Cluster:
    milli = [draw(st.sampled_from([1000, 1000, 2000, 4000])) for _ in range(draw(st.integers(1, 3)))]
    pods = [milli_pod(f"p{i}", draw(st.integers(1, 24)) * 125, draw(st.sampled_from(["500m", "1", "2", "3"])),
                      draw(st.sampled_from(["", "", "a", "b"])))
            for i in range(draw(st.integers(2, 6)))]
    return Cluster(nodes=tuple(milli_nodes(*milli)), pending=tuple(pods))


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(packings())
def test_the_placed_bound_is_never_below_the_best_packing_exhaustive_search_finds(cluster: Cluster) -> None:
    assert bound_of(cluster) >= brute_force(cluster)
