"""provision's dive zone by zone (optimizer.provision.zones): each pending pod given a zone first (its zone spread
balanced, its zone affinity met, the pods that affinity needs spread over the zones first), against an exhaustive
search of the zones; then each zone's pattern program and dive, whose answers together verify on the whole
cluster."""
from __future__ import annotations

import itertools
from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from builders import make_node, make_pod, pod_term, selector, spread
from podplan.models.objects import Pod
from podplan.optimizer.provision.zones import give_zones, split_dive, without_zone_rules, zone_held, zone_terms
from test_provision import Z

ZONES = ["a", "b", "c"]


def meets(pods: list[Pod], running: list[tuple[Pod, str]], zone: dict[str, str], spreads_too: bool = True) -> bool:
    """Every pending pod's zone affinity (and zone spreads) hold in the final state, as kube-scheduler's filters
    judge a pod with itself removed (the pods here match their own spread's selector, and no affinity term their
    own)."""
    placed = list(running) + [(p, zone[p.key]) for p in pods]
    for p in pods:
        spreads, terms = zone_terms(p)
        z = zone[p.key]
        for t in terms:
            if not any(w == z and q.key != p.key and t.label_selector.matches(q.labels) for q, w in placed):
                return False
        for c in spreads if spreads_too else ():
            per = {w: sum(1 for q, x in placed if x == w and q.key != p.key and c.label_selector.matches(q.labels)
                          and q.namespace == p.namespace) for w in ZONES}
            if per[z] + 1 - min(per.values()) > c.max_skew:
                return False
    return True


@st.composite
def zone_instances(draw: st.DrawFn, affinity: bool = True) -> tuple[list[Pod], list[tuple[Pod, str]]]:
    """Running pods of two apps and a cache in some zones; pending pods of the apps, each spread over the zones
    (maxSkew 1 or 2) and (affinity) some with required zone affinity to the cache; pending cache pods."""
    running = []
    for i in range(draw(st.integers(0, 4))):
        app = draw(st.sampled_from(["web", "api", "cache"]))
        running.append((make_pod(f"old{i}").label("app", app).on(f"n-{i}").build(), draw(st.sampled_from(ZONES))))
    pods = []
    for i in range(draw(st.integers(1, 6))):
        app = draw(st.sampled_from(["web", "api", "cache"]))
        b = make_pod(f"p{i}").label("app", app)
        if app != "cache":
            b = b.spread(spread(draw(st.sampled_from([1, 2])), Z, selector(app=app)))
            if affinity and draw(st.booleans()):
                b = b.pod_affinity(pod_term(Z, selector(app="cache")))
        pods.append(b.build())
    return pods, running


def every_choice(pods: list[Pod]):
    return (dict(zip((p.key for p in pods), choice)) for choice in itertools.product(ZONES, repeat=len(pods)))


@settings(max_examples=300, deadline=None)
@given(zone_instances(affinity=False), st.data())
def test_the_zones_given_meet_every_zone_spread_whenever_some_choice_of_zones_does(
        instance: tuple[list[Pod], list[tuple[Pod, str]]], data: st.DataObject) -> None:
    pods, running = instance
    first = {p.key: data.draw(st.sampled_from(ZONES)) for p in pods}  # (the program's zones: a preference only)
    got = give_zones(running, pods, ZONES, first)
    assert got is not None and sorted(got) == sorted(p.key for p in pods)
    if any(meets(pods, running, choice) for choice in every_choice(pods)):
        assert meets(pods, running, got), (got, [(q.key, w) for q, w in running])


@settings(max_examples=300, deadline=None)
@given(zone_instances(), st.data())
def test_the_zones_given_meet_every_zone_affinity_and_none_is_given_only_when_no_choice_does(
        instance: tuple[list[Pod], list[tuple[Pod, str]]], data: st.DataObject) -> None:
    # (a greedy choice: with zone affinity, a spread some choice meets may be broken; the verifier of the whole
    # answer then says so, and the answer is not used)
    pods, running = instance
    first = {p.key: data.draw(st.sampled_from(ZONES)) for p in pods}
    got = give_zones(running, pods, ZONES, first)
    possible = any(meets(pods, running, choice, spreads_too=False) for choice in every_choice(pods))
    assert (got is not None) == possible
    if got is not None:
        assert meets(pods, running, got, spreads_too=False)


def test_the_cache_a_spread_deployment_needs_goes_to_the_zone_its_pods_are_fewest_in() -> None:
    web = make_pod("old").label("app", "web").on("n-0").build()
    cache = make_pod("cache").label("app", "cache").build()
    pod = make_pod("web").label("app", "web").spread(spread(1, Z, selector(app="web"))) \
        .pod_affinity(pod_term(Z, selector(app="cache"))).build()
    got = give_zones([(web, "a")], [pod, cache], ZONES, {pod.key: "a", cache.key: "a"})
    assert got == {cache.key: "b", pod.key: "b"}  # (in a, the web pod would stand 2 above zone c)


def test_a_pod_without_zone_rules_keeps_the_programs_zone_and_a_zone_rule_is_taken_out_only_within_a_zone() -> None:
    free = make_pod("free").label("app", "x").build()
    ruled = make_pod("ruled").label("app", "web").spread(spread(1, Z, selector(app="web"))) \
        .pod_affinity(pod_term(Z, selector(app="cache"))).build()
    cache = make_pod("cache").label("app", "cache").on("n-0").build()
    got = give_zones([(cache, "b")], [free, ruled], ZONES, {free.key: "c", ruled.key: "a"})
    assert got == {free.key: "c", ruled.key: "b"}  # (the cache is in b alone)
    stripped = without_zone_rules(ruled)
    assert zone_terms(stripped) == ([], []) and stripped.labels == ruled.labels
    assert without_zone_rules(free) is free
    host = replace(ruled, spread_constraints=ruled.spread_constraints + (spread(1, "kubernetes.io/hostname",
                                                                                 selector(app="web")),))
    assert [c.topology_key for c in without_zone_rules(host).spread_constraints] == ["kubernetes.io/hostname"]


def test_a_spread_pod_whose_own_node_selector_names_a_zone_is_given_that_zone_and_its_affinity_narrows_the_zones(
        ) -> None:
    # the program put the pod in a, where the spread allows it, but its own node selector says b: the node
    # selector the zone split adds would have replaced its own, and the verifier rejected the answer
    from podplan.optimizer.provision.zones import own_zones

    web = make_pod("old").label("app", "web").on("n-0").build()
    pod = make_pod("web").label("app", "web").spread(spread(1, Z, selector(app="web"))).build()
    pinned = replace(make_pod("pinned").label("app", "web").spread(spread(1, Z, selector(app="web"))).build(),
                     node_selector={Z: "b"})
    nodes = [make_node(f"n-{z}").label(Z, z).label("pool", "x" if z == "c" else "y").build() for z in ZONES]
    own = own_zones([pod, pinned], nodes, list(ZONES))
    assert own == {pinned.key: frozenset({"b"})}  # (a pod with no node selection of its own admits every zone)
    assert give_zones([(web, "b")], [pinned], ZONES, {pinned.key: "a"}, own) == {pinned.key: "b"}
    assert give_zones([(web, "b")], [pod], ZONES, {pod.key: "a"}, own) == {pod.key: "a"}
    pooled = replace(pod, node_selector={"pool": "x"})
    assert own_zones([pooled], nodes, list(ZONES)) == {pooled.key: frozenset({"c"})}


def test_the_zone_split_programs_dive_places_every_pod_of_a_production_cluster_and_verifies() -> None:
    from podplan.optimizer.pipeline import check
    from podplan.optimizer.plan import Plan
    from podplan.optimizer.provision import offers_of
    from podplan.optimizer.provision.patterns import pattern_bound
    from podplan.optimizer.registry import DEFAULT_PROFILE
    from podplan.optimizer.runner import Status
    from test_provision_determinism import grown_short

    cluster, types = grown_short()  # (zone spreads and required zone affinity to caches, 3 zones)
    offers = offers_of(types)
    pat = pattern_bound(cluster, offers, types, DEFAULT_PROFILE, 60.0)
    assert pat.data is not None and pat.data.rules and pat.used  # (rules: the whole program's dive does not run)
    got = split_dive(cluster, offers, types, DEFAULT_PROFILE, pat, 120.0, 0.3)
    assert got is not None
    nodes, placements = got
    assert sorted(placements) == sorted(p.key for p in cluster.pending)
    assert len({o.zone for o, _ in nodes}) > 1  # (the new nodes where their zones' pods need them)
    grown = replace(cluster, nodes=cluster.nodes + tuple(n for _, n in nodes))
    check(grown, Plan(placements=placements, pending={}, status=Status.FEASIBLE), None, DEFAULT_PROFILE)
    assert sum(o.type.price for o, _ in nodes) * 1_000_000 >= pat.bound_micro - 1


@st.composite
def labelled_pods(draw: st.DrawFn) -> list[Pod]:
    """Pending pods of a few apps in two namespaces, some spread over zones, some with zone affinity to a cache,
    some with neither (free, or read by another pod's rule)."""
    pods = []
    for i in range(draw(st.integers(1, 8))):
        app = draw(st.sampled_from(["web", "api", "cache", "batch"]))
        b = make_pod(f"p{i}").namespace(draw(st.sampled_from(["default", "other"]))).label("app", app)
        if draw(st.booleans()):
            b = b.spread(spread(1, draw(st.sampled_from([Z, "kubernetes.io/hostname"])),
                                selector(app=draw(st.sampled_from(["web", "api"])))))
        if draw(st.booleans()):
            b = b.pod_affinity(pod_term(draw(st.sampled_from([Z, "kubernetes.io/hostname"])), selector(app="cache")))
        pods.append(b.build())
    return pods


@settings(max_examples=300, deadline=None)
@given(labelled_pods())
def test_the_pods_held_to_a_zone_are_those_with_a_zone_rule_and_those_a_pending_pods_zone_rule_reads(
        pods: list[Pod]) -> None:
    from podplan.optimizer.provision.joint import _spread_matches, _term_matches

    def read(q: Pod) -> bool:  # (pod by pod, no shared computation: the reference)
        return any(_spread_matches(c, p, q) for p in pods for c in zone_terms(p)[0]) or \
            any(_term_matches(t, p, q) for p in pods for t in zone_terms(p)[1])

    assert zone_held(pods) == {q.key for q in pods if any(zone_terms(q)) or read(q)}


def test_the_pods_without_zone_rules_take_the_room_of_any_zone_and_the_spread_pods_their_own() -> None:
    # zone a has three free cores, b and c none: the web Deployment (one pod a zone, maxSkew 1) needs a new node in
    # b and in c, and the two batch pods (no zone rule) fit a's room beside web's pod there: 2 new nodes. (The whole
    # program buys its new node in b, the first offer: the batch pods held to the program's zone took 3 new nodes)
    from podplan.models.nodetypes import NodeTypes
    from podplan.models.objects import Cluster
    from podplan.optimizer.pipeline import check
    from podplan.optimizer.plan import Plan
    from podplan.optimizer.provision import offers_of
    from podplan.optimizer.provision.patterns import pattern_bound
    from podplan.optimizer.registry import DEFAULT_PROFILE
    from podplan.optimizer.runner import Status
    from test_provision import H, a_type

    nodes = [make_node(f"n-{z}").label(H, f"n-{z}").label(Z, z).alloc(cpu="3" if z == "a" else "1", memory="8Gi",
                                                                         pods=110).build() for z in ZONES]
    full = [make_pod(f"old-{z}").label("app", "old").req(cpu="1").on(f"n-{z}").build() for z in ("b", "c")]
    web = [make_pod(f"web-{i}").label("app", "web").req(cpu="1").spread(spread(1, Z, selector(app="web")))
           .set(order=i).build() for i in range(3)]
    batch = [make_pod(f"batch-{i}").label("app", "batch").req(cpu="1").set(order=3 + i).build() for i in range(2)]
    cluster = Cluster(nodes=tuple(nodes), pods=tuple(full), pending=tuple(web + batch))
    types = NodeTypes((replace(a_type("two", "2", 1.0), zones=("b", "c", "a")),))
    offers = offers_of(types)
    assert zone_held(cluster.pending) == {p.key for p in web}
    pat = pattern_bound(cluster, offers, types, DEFAULT_PROFILE, 60.0)
    got = split_dive(cluster, offers, types, DEFAULT_PROFILE, pat, 60.0, 0.3)
    assert got is not None
    new, placements = got
    assert sorted(o.zone for o, _ in new) == ["b", "c"]
    assert all(placements[p.key] == "n-a" for p in batch)
    grown = replace(cluster, nodes=cluster.nodes + tuple(n for _, n in new))
    check(grown, Plan(placements=placements, pending={}, status=Status.FEASIBLE), None, DEFAULT_PROFILE)
