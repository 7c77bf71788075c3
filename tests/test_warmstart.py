"""The preference-led pass (optimizer.warmstart): the second warm start the search may start from."""
from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from builders import make_node, make_pod, pod_term, selector
from podplan.models.objects import Cluster, Pod
from podplan.optimizer.greedy import simulate
from podplan.optimizer.pipeline import Deadline, optimal_plan
from podplan.optimizer.policy import Policy
from podplan.optimizer.registry import DEFAULT_PROFILE
from podplan.optimizer.runner import SolverParams
from podplan.optimizer.verify import verify
from podplan.optimizer.warmstart import (PREFERENCE_WEIGHT, placed_by_priority, preference, preference_led,
                                         preference_profile)
from test_property_greedy import PROPERTY, clusters, describe

H = "kubernetes.io/hostname"


def _nodes(n: int) -> tuple:
    return tuple(make_node(f"n{i}").label(H, f"n{i}").alloc(cpu="4", memory="16Gi", pods=110).build()
                 for i in range(n))


def _replicas(name: str, k: int, start: int, cpu: str, priority: int = 0, **fields) -> list[Pod]:
    out = []
    for i in range(k):
        b = make_pod(f"{name}-{i}").label("app", name).req(cpu=cpu).priority(priority).set(
            workload=f"Deployment/default/{name}", order=start + i)
        for method, args in fields.items():
            b = getattr(b, method)(*args)
        out.append(b.build())
    return out


def _fillers_first(filler_priority: int = 0) -> Cluster:
    """A cache on n0; eight one-cpu fillers that arrive first and that greedy spreads two per node (n0 too);
    six half-cpu webs that prefer the cache's node, which holds all six only if no filler is there."""
    cache = make_pod("cache").label("app", "cache").req(cpu="500m").on("n0").build()
    fillers = _replicas("filler", 8, 0, "1", priority=filler_priority)
    webs = _replicas("web", 6, 8, "500m", preferred_pod_affinity=(10, pod_term(H, selector(app="cache"))))
    return Cluster(nodes=_nodes(4), pods=(cache,), pending=tuple(fillers + webs))


def _on(placements: dict[str, str], prefix: str, node: str) -> int:
    return sum(1 for k, n in placements.items() if k.startswith(f"default/{prefix}-") and n == node)


def test_webs_queued_before_the_fillers_that_arrived_first_get_their_caches_node() -> None:
    cluster = _fillers_first()
    greedy = simulate(cluster)
    led = preference_led(cluster, 0, gangs=None, profile=DEFAULT_PROFILE, policy=Policy())
    assert led is not None and verify(cluster, led.placements).ok
    assert _on(greedy.placements, "web", "n0") < 6 and _on(led.placements, "web", "n0") == 6
    assert len(led.placements) == len(greedy.placements) == 14
    assert placed_by_priority(cluster, led) == placed_by_priority(cluster, greedy) == (14,)
    assert preference(cluster, led, Policy()) == 60 > preference(cluster, greedy, Policy())


def test_a_pod_with_preferences_never_jumps_a_higher_priority_pod() -> None:
    cluster = _fillers_first(filler_priority=100)
    led = preference_led(cluster, 0, gangs=None, profile=DEFAULT_PROFILE, policy=Policy())
    assert led is not None
    # the fillers still go first and take two cpus of n0: three webs fit beside the cache
    assert _on(led.placements, "filler", "n0") == 2 and _on(led.placements, "web", "n0") == 3


def test_the_pass_scores_every_node_and_weighs_up_only_the_terms_the_policy_pays() -> None:
    profile = preference_profile(DEFAULT_PROFILE, Policy())
    weights = {p.name: profile.weight(p) for p in profile.scorers}
    assert profile.percentage_of_nodes_to_score == 100
    assert weights["InterPodAffinity"] == weights["NodeAffinity"] == PREFERENCE_WEIGHT
    assert weights["TaintToleration"] == weights["PodTopologySpread"] == PREFERENCE_WEIGHT
    assert weights["NodeResourcesFit"] == weights["NodeResourcesBalancedAllocation"] == 1
    unpaid = preference_profile(DEFAULT_PROFILE, Policy(pod_affinity=0, pod_anti_affinity=0))
    assert unpaid.weight(unpaid.plugin("InterPodAffinity")) == DEFAULT_PROFILE.weight(
        DEFAULT_PROFILE.plugin("InterPodAffinity"))


def test_a_cluster_without_preferences_gets_no_second_pass() -> None:
    cluster = Cluster(nodes=_nodes(2), pending=tuple(_replicas("plain", 3, 0, "1")))
    assert preference_led(cluster, 0, gangs=None, profile=DEFAULT_PROFILE, policy=Policy()) is None


def test_solve_starts_from_the_better_warm_start_and_says_which() -> None:
    cluster = _fillers_first()
    plan, greedy = optimal_plan(cluster, SolverParams(time_limit=10, workers=1), Policy(),
                                deadline=Deadline.start(10))
    assert greedy.placements == simulate(cluster).placements  # compare's greedy column stays kube-scheduler's
    assert any(n.startswith("warm start: the preference-led pass") for n in plan.notes), plan.notes
    assert plan.status == "OPTIMAL" and plan.gaps["preference"]["value"] == 60


@PROPERTY
@given(clusters(), st.integers(0, 3))
def test_every_plan_of_the_preference_led_pass_passes_the_verifier(cluster: Cluster, seed: int) -> None:
    led = preference_led(cluster, seed, gangs=None, profile=DEFAULT_PROFILE, policy=Policy())
    if led is None:
        return
    report = verify(cluster, led.placements)
    failures = [v for v in report.violations if not v.preexisting]
    assert not failures, f"{describe(cluster)}\nplacements {led.placements}\n{failures}"


def test_a_time_limit_too_short_for_the_pass_skips_it_and_keeps_greedy_as_the_start() -> None:
    cluster = _fillers_first()
    plan, _ = optimal_plan(cluster, SolverParams(time_limit=0.5, workers=1), Policy(), deadline=Deadline.start(0.5))
    assert not any(n.startswith("warm start:") for n in plan.notes), plan.notes
    assert verify(cluster, plan.placements).ok


def test_ctrl_c_before_the_search_prints_the_warm_start_at_once_as_a_feasible_plan() -> None:
    from podplan.optimizer.runner import Interrupt

    cluster = _fillers_first()
    start = simulate(cluster)
    interrupt = Interrupt()
    interrupt.stop()  # Ctrl-C once the warm start is there: the search never starts
    plan, _ = optimal_plan(cluster, SolverParams(time_limit=10, workers=1), Policy(), deadline=Deadline.start(10),
                           interrupt=interrupt, warm_start=start)
    assert plan.status == "FEASIBLE" and plan.placements == start.placements and len(plan.placements) == 14
    assert plan.notes[-1] == "interrupted: best plan found so far (the search had not started)"


def _cache_pending_after_its_webs() -> Cluster:
    """Four webs that prefer their cache's node, queued before the cache (pending too, as in compare's
    re-placement); the cache requires nothing."""
    webs = _replicas("web", 4, 0, "500m", preferred_pod_affinity=(10, pod_term(H, selector(app="cache"))))
    cache = _replicas("cache", 1, 4, "500m")
    return Cluster(nodes=_nodes(3), pending=tuple(webs + cache))


def test_the_pods_a_pending_pods_affinity_term_is_drawn_to_are_the_targets() -> None:
    from podplan.optimizer.warmstart import targets

    cluster = _cache_pending_after_its_webs()
    assert targets(cluster, Policy()) == {"default/cache-0"}
    assert targets(cluster, Policy(pod_affinity=0)) == set()  # a preferred term P does not pay draws nobody
    required = Cluster(nodes=_nodes(3), pending=tuple(
        _replicas("web", 2, 0, "500m", pod_affinity=(pod_term(H, selector(app="cache")),))
        + _replicas("cache", 1, 2, "500m")))
    assert targets(required, Policy(pod_affinity=0)) == {"default/cache-0"}


def test_a_pending_cache_is_placed_before_the_webs_that_prefer_it() -> None:
    cluster = _cache_pending_after_its_webs()
    greedy = simulate(cluster)
    led = preference_led(cluster, 0, gangs=None, profile=DEFAULT_PROFILE, policy=Policy())
    assert led is not None and verify(cluster, led.placements).ok
    cache_node = led.placements["default/cache-0"]
    assert _on(led.placements, "web", cache_node) == 4 and preference(cluster, led, Policy()) == 40
    assert preference(cluster, greedy, Policy()) < 40


def test_a_given_warm_start_is_replaced_by_the_pass_when_the_pass_is_better() -> None:
    cluster = _cache_pending_after_its_webs()
    given = simulate(cluster)
    plan, returned = optimal_plan(cluster, SolverParams(time_limit=10, workers=1), Policy(),
                                  deadline=Deadline.start(10), warm_start=given)
    assert returned is given
    assert any(n.startswith("warm start: the preference-led pass") and "the given warm start" in n
               for n in plan.notes), plan.notes
    assert plan.status == "OPTIMAL" and plan.gaps["preference"]["value"] == 40


def test_no_pass_when_the_plan_to_beat_places_every_pod_and_no_pod_has_a_preference() -> None:
    # webs that require their cache on the node, the cache pending too: the cache is a target, but nothing
    # is left to gain once every pod is placed
    cluster = Cluster(nodes=_nodes(3), pending=tuple(
        _replicas("web", 2, 0, "500m", pod_affinity=(pod_term(H, selector(app="cache")),))
        + _replicas("cache", 1, 2, "500m")))
    assert preference_led(cluster, 0, gangs=None, profile=DEFAULT_PROFILE, policy=Policy(), all_placed=True) is None
    led = preference_led(cluster, 0, gangs=None, profile=DEFAULT_PROFILE, policy=Policy())
    assert led is not None and len(led.placements) == 3  # the cache first: both webs find it bound


def test_once_greedy_places_every_pod_the_webs_go_before_higher_priority_fillers() -> None:
    # the same fillers at priority 100: by priority they take two cpus of the cache's node first; when greedy
    # already places every pod, the order only decides P, and the webs queued first all get the cache's node
    cluster = _fillers_first(filler_priority=100)
    greedy = simulate(cluster)
    assert len(greedy.placements) == 14
    led = preference_led(cluster, 0, gangs=None, profile=DEFAULT_PROFILE, policy=Policy(), all_placed=True)
    assert led is not None and verify(cluster, led.placements).ok and not led.preemptions
    assert _on(led.placements, "web", "n0") == 6 and _on(led.placements, "filler", "n0") == 0
    assert placed_by_priority(cluster, led) == placed_by_priority(cluster, greedy) == (8, 6)
    assert preference(cluster, led, Policy()) == 60


def test_the_pass_across_priorities_falls_back_to_the_priority_order_when_it_leaves_a_pod_pending() -> None:
    # one 4-cpu node: a priority-100 pod of 3 cpus and a web of 2 that prefers the cache's node; the web first
    # would leave the priority-100 pod pending, so the pass keeps kube-scheduler's priority order
    cluster = Cluster(nodes=_nodes(1), pods=(make_pod("cache").label("app", "cache").req(cpu="500m").on("n0").build(),),
                      pending=tuple(_replicas("big", 1, 0, "3", priority=100) + _replicas(
                          "web", 1, 1, "2", preferred_pod_affinity=(10, pod_term(H, selector(app="cache"))))))
    led = preference_led(cluster, 0, gangs=None, profile=DEFAULT_PROFILE, policy=Policy(), all_placed=True)
    assert led is not None and set(led.placements) == {"default/big-0"}


@PROPERTY
@given(clusters(), st.integers(0, 3))
def test_every_plan_of_the_pass_across_priorities_passes_the_verifier(cluster: Cluster, seed: int) -> None:
    led = preference_led(cluster, seed, gangs=None, profile=DEFAULT_PROFILE, policy=Policy(), all_placed=True)
    if led is None:
        return
    report = verify(cluster, led.placements)
    failures = [v for v in report.violations if not v.preexisting]
    assert not failures, f"{describe(cluster)}\nplacements {led.placements}\n{failures}"
