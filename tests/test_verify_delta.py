"""Incremental verification: a plan judged against a plan verified in full (its basis), re-judging only the pods
the difference can affect, gets exactly the full verifier's report: the same violations in the same order,
the same preference terms and counts."""
from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from builders import cluster_of, make_node, make_pod, pod_term, selector, spread
from test_property_greedy import clusters, describe
from podplan.models.generate import generate
from podplan.models.loader import parse_documents
from podplan.models.objects import Cluster
from podplan.models.schedulerconfig import PodTopologySpreadArgs
from podplan.optimizer import podtopologyspread
from podplan.optimizer.framework import Profile
from podplan.optimizer.greedy import simulate
from podplan.optimizer.policy import Policy
from podplan.optimizer.registry import DEFAULT_PROFILE
from podplan.optimizer.verify import scored_terms, verify, verify_basis
from podplan.optimizer.verify_delta import LAST_DELTA, affected

PROPERTY = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
HOST = "kubernetes.io/hostname"


def plans(data: st.DataObject, cluster: Cluster) -> tuple[dict[str, str], dict[str, str]]:
    """A plan (most of them invalid) and a change of it: pods moved, taken out, and added."""
    names = [n.name for n in cluster.nodes]
    before = {p.key: data.draw(st.sampled_from(names)) for p in cluster.pending if data.draw(st.booleans())}
    after = dict(before)
    for p in cluster.pending:
        what = data.draw(st.sampled_from(["keep", "keep", "move", "drop", "add"]))
        if what == "move" and p.key in after or what == "add" and p.key not in after:
            after[p.key] = data.draw(st.sampled_from(names))
        elif what == "drop":
            after.pop(p.key, None)
    if data.draw(st.booleans()):  # the plan's order need not follow the basis's
        after = dict(reversed(list(after.items())))
    return before, after


def same(cluster: Cluster, got, want) -> None:  # type: ignore[no-untyped-def]
    assert got == want, f"{describe(cluster)}\n{got.violations}\n!=\n{want.violations}\n{got.terms} {want.terms}"


@PROPERTY
@given(clusters(), st.data())
def test_a_changed_plan_judged_against_its_basis_gets_the_full_verifiers_report(cluster: Cluster,
                                                                                data: st.DataObject) -> None:
    before, after = plans(data, cluster)
    policy = Policy(pod_anti_affinity=data.draw(st.sampled_from([1, 3])))
    report, basis = verify_basis(cluster, before, policy)
    assert report == verify(cluster, before, policy)
    if data.draw(st.booleans()):
        basis.state = basis.index = None  # its state already taken: the changed plan's is built afresh
    same(cluster, verify(cluster, after, policy, basis=basis), verify(cluster, after, policy))


@PROPERTY
@given(clusters(), st.data())
def test_the_optimizers_scoring_on_the_basis_state_gives_the_terms_and_report_of_a_fresh_state(
        cluster: Cluster, data: st.DataObject) -> None:
    # the optimizer scores the plan it returns (scored_terms) on the basis's state with the changed pods moved;
    # the gate then judges that state against the basis
    before, after = plans(data, cluster)
    _, basis = verify_basis(cluster, before)
    terms = scored_terms(cluster, after, Policy())
    got = verify(cluster, after, basis=basis)
    want = verify(cluster, after)
    assert terms == want.terms
    same(cluster, got, want)


def test_only_the_pods_the_change_can_affect_are_judged_again() -> None:
    cluster = parse_documents(generate(40, 300, 3, "production"))
    plan = simulate(cluster, 0).placements
    _, basis = verify_basis(cluster, plan)
    key, node = next(iter(plan.items()))
    other = next(n.name for n in cluster.nodes if n.name != node)
    moved = {**plan, key: other}
    LAST_DELTA.clear()
    assert verify(cluster, moved, basis=basis) == verify(cluster, moved)
    changed, judged, pods = LAST_DELTA[-1]
    assert changed == 1 and judged < pods // 4, LAST_DELTA


def test_a_pod_whose_spread_counts_a_moved_pod_is_judged_again_wherever_it_runs() -> None:
    # the web pods spread over hosts (maxSkew 1): a web pod moved changes the skew of every web pod's domain
    # count, also on nodes nothing moved to or from; a db pod elsewhere is not affected
    nodes = [make_node(f"n{i}").label(HOST, f"n{i}").alloc(cpu="8", memory="8Gi", pods=110).build()
             for i in range(4)]
    web = [make_pod(f"web-{i}").label("app", "web").spread(spread(1, HOST, selector(app="web"), "DoNotSchedule"))
           .build() for i in range(3)]
    db = make_pod("db").label("app", "db").on("n3").build()
    cluster = cluster_of(nodes, web + [db])
    before = {"default/web-0": "n0", "default/web-1": "n1", "default/web-2": "n2"}
    after = {**before, "default/web-2": "n0"}
    _, basis = verify_basis(cluster, before)
    redo = affected(basis.state, basis.index, basis, after, {p.key: p for p in cluster.pending}, DEFAULT_PROFILE)  # type: ignore[arg-type]
    assert redo is not None and {"default/web-0", "default/web-1", "default/web-2"} <= redo
    assert "default/db" not in redo
    report = verify(cluster, after, basis=basis)
    assert report == verify(cluster, after) and not report.ok  # web-2 beside web-0 breaks the skew


def test_a_filter_the_rules_do_not_know_makes_the_gate_judge_every_pod() -> None:
    # default DoNotSchedule constraints of a scheduler configuration: the rules know only the pods' own ones
    args = PodTopologySpreadArgs(default_constraints=(spread(1, HOST, None, "DoNotSchedule"),), defaulting_type="List")
    plugins = tuple(podtopologyspread.new(args) if p.name == podtopologyspread.NAME else p
                    for p in DEFAULT_PROFILE.plugins)
    profile = Profile(plugins)
    cluster = parse_documents(generate(10, 40, 1, "production"))
    plan = simulate(cluster, 0).placements
    _, basis = verify_basis(cluster, plan, None, profile)
    fewer = dict(list(plan.items())[1:])
    assert affected(basis.state, basis.index, basis, fewer, {p.key: p for p in cluster.pending}, profile) is None  # type: ignore[arg-type]
    assert verify(cluster, fewer, None, profile, basis=basis) == verify(cluster, fewer, None, profile)


ZONE = "topology.kubernetes.io/zone"


def zoned(*zones: str):  # type: ignore[no-untyped-def]
    return [make_node(f"n{i}").label(HOST, f"n{i}").label(ZONE, z).alloc(cpu="8", memory="8Gi", pods=110).build()
            for i, z in enumerate(zones)]


def test_a_pod_whose_own_anti_affinity_selects_a_moved_pod_is_judged_again_on_a_node_nothing_touched() -> None:
    web = make_pod("web").label("app", "web").pod_anti_affinity(pod_term(ZONE, selector(app="db"))).on("n0").build()
    db = make_pod("db").label("app", "db").build()
    cluster = cluster_of(zoned("a", "a", "b"), [web, db])
    _, basis = verify_basis(cluster, {"default/db": "n2"})
    after = {"default/db": "n1"}  # into web's zone, on a node beside web's
    report = verify(cluster, after, basis=basis)
    assert report == verify(cluster, after)
    assert {v.pod for v in report.violations} == {"default/web", "default/db"}


def test_a_pod_a_moved_pods_anti_affinity_selects_is_judged_again_on_a_node_nothing_touched() -> None:
    web = make_pod("web").label("app", "web").on("n0").build()
    db = make_pod("db").label("app", "db").pod_anti_affinity(pod_term(ZONE, selector(app="web"))).build()
    cluster = cluster_of(zoned("a", "a", "b"), [web, db])
    _, basis = verify_basis(cluster, {"default/db": "n2"})
    after = {"default/db": "n1"}
    report = verify(cluster, after, basis=basis)
    assert report == verify(cluster, after)
    assert {v.pod for v in report.violations} == {"default/web", "default/db"}


def test_a_pod_whose_affinity_lost_its_partner_is_judged_again_on_a_node_nothing_touched() -> None:
    web = make_pod("web").label("app", "web").pod_affinity(pod_term(ZONE, selector(app="db"))).on("n0").build()
    db = make_pod("db").label("app", "db").build()
    cluster = cluster_of(zoned("a", "a", "b"), [web, db])
    _, basis = verify_basis(cluster, {"default/db": "n1"})
    after = {"default/db": "n2"}  # out of web's zone
    report = verify(cluster, after, basis=basis)
    assert report == verify(cluster, after)
    assert [v.pod for v in report.violations] == ["default/web"]


APPS = ("web", "db")


@st.composite
def affinity_clusters(draw: st.DrawFn) -> Cluster:
    """More nodes than pods touch, in few zones, and pods with required (anti-)affinity and hard spread on
    zones: where a pod's verdict or share of P changes with a pod moved on another node."""
    nodes = zoned(*draw(st.lists(st.sampled_from("ab"), min_size=3, max_size=7)))
    names = [n.name for n in nodes]
    pods = []
    for i in range(draw(st.integers(2, 7))):
        b = make_pod(f"p{i}").label("app", draw(st.sampled_from(APPS))).req(cpu="100m")
        rule = draw(st.sampled_from(["affinity", "anti", "spread", "pref-affinity", "pref-anti", None]))
        other = selector(app=draw(st.sampled_from(APPS)))
        key = draw(st.sampled_from([ZONE, ZONE, HOST]))
        if rule == "affinity":
            b.pod_affinity(pod_term(key, other))
        elif rule == "anti":
            b.pod_anti_affinity(pod_term(key, other))
        elif rule == "spread":
            b.spread(spread(1, key, other, "DoNotSchedule"))
        elif rule == "pref-affinity":
            b.preferred_pod_affinity(draw(st.integers(1, 100)), pod_term(key, other))
        elif rule == "pref-anti":
            b.preferred_pod_anti_affinity(draw(st.integers(1, 100)), pod_term(key, other))
        if draw(st.booleans()):
            b.on(draw(st.sampled_from(names)))
        pods.append(b.build())
    return cluster_of(nodes, pods)


@PROPERTY
@given(affinity_clusters(), st.data())
def test_required_pod_affinity_and_spread_across_nodes_judged_against_a_basis_match_the_full_verifier(
        cluster: Cluster, data: st.DataObject) -> None:
    before, after = plans(data, cluster)
    _, basis = verify_basis(cluster, before)
    same(cluster, verify(cluster, after, basis=basis), verify(cluster, after))


@PROPERTY
@given(affinity_clusters(), st.data())
def test_preferences_across_nodes_scored_on_the_basis_state_match_a_fresh_state(cluster: Cluster,
                                                                              data: st.DataObject) -> None:
    before, after = plans(data, cluster)
    _, basis = verify_basis(cluster, before)
    policy = Policy(pod_affinity=data.draw(st.sampled_from([1, 2])))
    terms = scored_terms(cluster, after, policy)
    want = verify(cluster, after, policy)
    assert terms == want.terms, describe(cluster)
    same(cluster, verify(cluster, after, policy, basis=basis), want)


def test_a_pod_whose_preferred_affinity_lost_its_partner_loses_its_share_on_a_node_nothing_touched() -> None:
    web = make_pod("web").label("app", "web").preferred_pod_affinity(10, pod_term(ZONE, selector(app="db"))) \
        .on("n0").build()
    db = make_pod("db").label("app", "db").build()
    cluster = cluster_of(zoned("a", "a", "b"), [web, db])
    report, _ = verify_basis(cluster, {"default/db": "n1"})
    assert report.terms["pod_affinity"] == 10
    assert scored_terms(cluster, {"default/db": "n2"}, Policy())["pod_affinity"] == 0
