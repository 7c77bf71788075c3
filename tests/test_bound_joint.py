"""The preference bound's joint form (optimizer.bound._joint_linear): classes that prefer the same nodes share
their room. Property: on small clusters where several templates prefer the same scarce nodes (preferred node
affinity to a zone, preferred pod affinity to the node of an existing cache), the bound is never below the
exhaustive optimum; and on a cluster built so, it is tighter than each class taken alone."""
from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from builders import make_node, make_pod, pod_term, req, selector, spread, term
from podplan.models.objects import Cluster, Workload
from podplan.optimizer.bound import _joint_linear, preference_bound, preference_bound_unless
from podplan.optimizer.model import existing_terms
from podplan.optimizer.policy import Policy
from podplan.optimizer.problem import build_problem
from podplan.optimizer.runner import NEVER
from podplan.optimizer.registry import DEFAULT_PROFILE
from test_solve_property import exhaustive_best

H = "kubernetes.io/hostname"
Z = "topology.kubernetes.io/zone"


def p_bound(cluster: Cluster, all_placed: bool = True) -> int:
    """The preference bound of the whole input: the constant terms of existing pods, and every component's."""
    problem = build_problem(cluster, DEFAULT_PROFILE)
    policy = Policy()
    return sum(existing_terms(problem, policy).values()) + sum(
        preference_bound(problem, comp, policy, all_placed) for comp in problem.components)


def _sizes(draw: st.DrawFn, count: st.SearchStrategy, each: st.SearchStrategy, total: int) -> list[int]:
    """Replica counts of `count` templates of `each` pods, cut to `total` in all (exhaustive search stays small)."""
    sizes = [draw(each) for _ in range(draw(count))]
    while sum(sizes) > total:
        sizes[sizes.index(max(sizes))] -= 1
    return sizes


def assert_all_placed_bound_holds(cluster: Cluster) -> None:
    """The all-placed bound is what a plan placing every pod is judged by: never below the exhaustive optimum."""
    placed, best_p = exhaustive_best(cluster, False)
    if sum(placed) == len(cluster.pending):
        assert p_bound(cluster) >= best_p


def _cluster(nodes: list, existing: list, templates: list) -> Cluster:
    """The cluster of `nodes`, `existing` pods and a Deployment per (app, pod builder, replicas) of `templates`,
    all pending."""
    pending, workloads, order = [], [], 10
    for app, b, size in templates:
        workloads.append(Workload("Deployment", "default", app, replicas=size))
        for k in range(size):
            pending.append(b.set(name=f"{app}-{k}", workload=f"Deployment/default/{app}", order=order).build())
            order += 1
    return Cluster(nodes=tuple(nodes), pods=tuple(existing), pending=tuple(pending), workloads=tuple(workloads))


@st.composite
def crowded(draw: st.DrawFn) -> Cluster:
    nodes = []
    for i in range(draw(st.integers(2, 3))):
        b = make_node(f"n{i}").label(H, f"n{i}").label(Z, draw(st.sampled_from(["a", "b"])))
        nodes.append(b.alloc(cpu=draw(st.sampled_from(["1", "2"])), memory="4Gi", pods=110).build())
    existing = []
    if draw(st.booleans()):
        existing.append(make_pod("cache").label("app", "cache").req(cpu="500m")
                        .on(draw(st.sampled_from([n.name for n in nodes]))).set(order=0).build())
    templates = []
    for i, size in enumerate(_sizes(draw, st.integers(2, 3), st.integers(1, 3), 6)):
        app = f"t{i}"
        b = make_pod(app).label("app", app).req(cpu=draw(st.sampled_from(["300m", "500m", "1"])))
        if draw(st.integers(0, 3)):
            b = b.preferred_node_affinity(draw(st.integers(1, 5)), term(req(Z, "In", "b")))
        if draw(st.booleans()):
            b = b.preferred_pod_affinity(draw(st.integers(1, 5)), pod_term(H, selector(app="cache")))
        templates.append((app, b, size))
    return _cluster(nodes, existing, templates)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(crowded())
def test_the_joint_preference_bound_is_never_below_the_exhaustive_optimum(cluster: Cluster) -> None:
    assert_all_placed_bound_holds(cluster)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(crowded(), st.integers(0, 6))
def test_a_joint_lp_capped_to_a_few_columns_is_still_never_below_the_exhaustive_optimum(cluster: Cluster,
                                                                                        max_columns: int) -> None:
    # at 5,000 nodes the LP holds only the columns it can solve in time; the classes left out are bounded alone
    placed, best_p = exhaustive_best(cluster, False)
    if sum(placed) == len(cluster.pending):
        problem = build_problem(cluster, DEFAULT_PROFILE)
        policy = Policy()
        capped = sum(existing_terms(problem, policy).values()) + sum(
            preference_bound_unless(problem, comp, policy, True, NEVER, max_columns) for comp in problem.components)
        assert capped >= best_p


def one_small_zone_for_two_templates() -> Cluster:
    """Zone b is one 1-cpu node; two templates of two 500m pods each prefer it (weight 5): only two pods fit."""
    nodes = (make_node("n0").label(H, "n0").label(Z, "b").alloc(cpu="1", memory="4Gi", pods=110).build(),
             make_node("n1").label(H, "n1").label(Z, "a").alloc(cpu="4", memory="4Gi", pods=110).build())
    pending = []
    for app in ("t0", "t1"):
        b = make_pod(app).label("app", app).req(cpu="500m").preferred_node_affinity(5, term(req(Z, "In", "b")))
        pending += [b.set(name=f"{app}-{k}", workload=f"Deployment/default/{app}", order=len(pending) + k).build()
                    for k in range(2)]
    return Cluster(nodes=nodes, pending=tuple(pending),
                   workloads=(Workload("Deployment", "default", "t0", replicas=2),
                              Workload("Deployment", "default", "t1", replicas=2)))


def test_two_templates_preferring_one_small_zone_share_its_room() -> None:
    cluster = one_small_zone_for_two_templates()
    problem = build_problem(cluster, DEFAULT_PROFILE)
    (comp,) = problem.components
    joint = _joint_linear(problem, comp, Policy())
    assert joint is not None and round(joint[0]) == 10  # two pods on n0, 5 each
    assert p_bound(cluster) == exhaustive_best(cluster, False)[1] == 10  # each class alone would claim 20


def test_the_wall_clock_run_out_gives_the_joint_lp_up_and_says_so(monkeypatch) -> None:
    # at 5,000 nodes building the LP took 130 s of a 300 s limit: the wall deadline caps the build as it caps
    # the solve; the bound then falls back on the per-class form (looser, never wrong) and the plan notes the cut
    import time

    from podplan.optimizer.runner import Clock, clocked

    cluster = one_small_zone_for_two_templates()
    problem = build_problem(cluster, DEFAULT_PROFILE)
    (comp,) = problem.components
    from podplan.optimizer import bound

    def no_build(*_args):  # type: ignore[no-untyped-def]
        raise AssertionError("the LP's columns were built after the wall clock ran out")

    with monkeypatch.context() as m, clocked(Clock(time.perf_counter() - 1.0)) as clk:
        m.setattr(bound, "linear_gains", no_build)
        assert _joint_linear(problem, comp, Policy()) is None
    assert clk.cuts == ["the preference bound's LP"]
    with clocked(Clock(time.perf_counter() + 60.0)) as clk:
        joint = _joint_linear(problem, comp, Policy())
    assert joint is not None and round(joint[0]) == 10 and clk.cuts == []


@st.composite
def caches_in_one_family(draw: st.DrawFn) -> Cluster:
    """Nodes alike (one family of the LP) but for the caches they run: each template's own cache nodes are a group
    of its own within the family, every other template's columns span the whole family."""
    nodes = [make_node(f"n{i}").label(H, f"n{i}").label(Z, "a").alloc(cpu="1", memory="4Gi", pods=110).build()
             for i in range(draw(st.integers(2, 4)))]
    names = [n.name for n in nodes]
    existing = [make_pod(f"cache-{k}-{i}").label("app", f"cache-{k}").req(cpu="250m").on(node).set(order=i).build()
                for k in range(2) for i, node in enumerate(draw(st.lists(st.sampled_from(names), min_size=1,
                                                                         max_size=2, unique=True)))]
    templates = []
    for i in range(draw(st.integers(2, 3))):
        app, size = f"t{i}", draw(st.integers(1, 2))
        b = make_pod(app).label("app", app).req(cpu=draw(st.sampled_from(["250m", "500m"])))
        if draw(st.booleans()):
            b = b.preferred_pod_affinity(draw(st.integers(1, 5)), pod_term(H, selector(app=f"cache-{i % 2}")))
        else:
            b = b.preferred_node_affinity(draw(st.integers(1, 5)), term(req(H, "In", draw(st.sampled_from(names)))))
        if draw(st.booleans()):
            b = b.preferred_pod_anti_affinity(draw(st.integers(1, 5)), pod_term(H, selector(app=app)))
        templates.append((app, b, size))
    return _cluster(nodes, existing, templates)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(caches_in_one_family())
def test_the_joint_bound_with_each_templates_cache_nodes_apart_in_a_family_is_never_below_the_optimum(
        cluster: Cluster) -> None:
    assert_all_placed_bound_holds(cluster)


@st.composite
def skewed(draw: st.DrawFn) -> Cluster:
    """Templates spread over zones with ScheduleAnyway, pulled into one zone by a preference (node affinity, or
    a cache's node), some counting an existing pod, two of them sometimes counting each other's pods."""
    # (two zones of alike nodes: a zone of one node, or of unlike ones, is no family of the LP's)
    nodes = [make_node(f"n{i}").label(H, f"n{i}").label(Z, draw(st.sampled_from(["a", "b"])))
             .alloc(cpu=draw(st.sampled_from(["2", "2", "1"])), memory="4Gi", pods=110).build()
             for i in range(draw(st.integers(3, 4)))]
    names = [n.name for n in nodes]
    existing = []
    if draw(st.booleans()):
        existing.append(make_pod("cache").label("app", "cache").label("tier", "web").req(cpu="250m")
                        .on(draw(st.sampled_from(names))).set(order=0).build())
    templates = []
    for i, size in enumerate(_sizes(draw, st.integers(1, 2), st.integers(1, 4), 6)):
        app = f"t{i}"
        b = make_pod(app).label("app", app).label("tier", "web").req(cpu=draw(st.sampled_from(["250m", "500m"])))
        counted = selector(tier="web") if draw(st.booleans()) else selector(app=app)
        b = b.spread(spread(draw(st.integers(1, 2)), Z, counted, when="ScheduleAnyway"))
        if draw(st.booleans()):
            b = b.preferred_node_affinity(draw(st.integers(1, 20)), term(req(Z, "In", "b")))
        else:
            b = b.preferred_pod_affinity(draw(st.integers(1, 20)), pod_term(H, selector(app="cache")))
        templates.append((app, b, size))
    return _cluster(nodes, existing, templates)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(skewed())
def test_the_joint_bound_paying_the_schedule_anyway_skew_is_never_below_the_optimum(cluster: Cluster) -> None:
    assert_all_placed_bound_holds(cluster)


def test_a_template_pulled_into_one_zone_pays_its_schedule_anyway_skew_in_the_bound() -> None:
    # four pods prefer zone b (weight 5) and spread over zones a and b with ScheduleAnyway, maxSkew 1: each pod
    # past the balance gains 5 and costs the skew multiplier (10). The optimum is 2 + 2 (P 10); the bound that
    # counted the skew free claimed every pod in b (20); paying it in the LP, at most half a pod more than balance
    nodes = [make_node(f"n{i}").label(H, f"n{i}").label(Z, "aabb"[i]).alloc(cpu="2", memory="4Gi", pods=110)
             .build() for i in range(4)]
    web = (make_pod("web").label("app", "web").req(cpu="500m").preferred_node_affinity(5, term(req(Z, "In", "b")))
           .spread(spread(1, Z, selector(app="web"), when="ScheduleAnyway")))
    cluster = _cluster(nodes, [], [("web", web, 4)])
    best = exhaustive_best(cluster, False)[1]
    assert best == 10 and 10 <= p_bound(cluster) < 20
