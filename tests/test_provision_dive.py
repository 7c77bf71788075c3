"""provision's dive: the pattern program's answer rounded to whole nodes (optimizer.provision.patterns._dive), its
pods given out to nodes (packing_answer), used as a start of the large-input path when it verifies. Against the
exhaustive search of tests/test_provision.py on tiny random clusters, and on a built case."""
from __future__ import annotations

from dataclasses import replace

from hypothesis import HealthCheck, given, settings

from builders import make_node, make_pod
from podplan.models.errors import PlanInvalidError
from podplan.models.nodetypes import NodeTypes
from podplan.models.objects import Cluster
from podplan.optimizer.pipeline import Deadline, check
from podplan.optimizer.plan import Plan
from podplan.optimizer.provision import offers_of, provision, verify_answer
from podplan.optimizer.provision.bound import MICRO
from podplan.optimizer.provision.core import within_limits
from podplan.optimizer.provision.patterns import packing_answer, pattern_bound
from podplan.optimizer.registry import DEFAULT_PROFILE
from podplan.optimizer.runner import SolverParams, Status
from test_provision import H, Z, a_type, brute_cost, instances


def dive_answer(cluster: Cluster, types: NodeTypes):
    """The dive's answer on `cluster` as provision makes it: (its new nodes, its placements, whether it verifies
    within the types' max), or None when the dive made none."""
    offers = offers_of(types)
    pat = pattern_bound(cluster, offers, types, DEFAULT_PROFILE, 10.0, master_share=0.3)
    if pat.start is None:
        return None
    got = packing_answer(pat.data, offers, pat.start, [n.name for n in cluster.nodes])
    assert got is not None
    nodes, placements = got
    grown = replace(cluster, nodes=cluster.nodes + tuple(n for _, n in nodes))
    try:
        check(grown, Plan(placements=placements, pending={}, status=Status.FEASIBLE), None, DEFAULT_PROFILE)
        valid = within_limits([o.type for o, _ in nodes], types)
    except PlanInvalidError:
        valid = False
    return nodes, placements, valid, pat.bound_micro


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(instances())
def test_the_dive_places_every_pod_and_without_inter_pod_rules_verifies_at_no_less_than_the_optimum(
        instance: tuple[Cluster, NodeTypes]) -> None:
    cluster, types = instance
    got = dive_answer(cluster, types)
    if got is None:
        return  # (no pattern program answer: a pod no filling holds)
    nodes, placements, valid, bound_micro = got
    assert sorted(placements) == sorted(p.key for p in cluster.pending)
    cost = sum(o.type.price for o, _ in nodes)
    plain = not any(p.affinity.anti_required for p in cluster.pending)
    if plain and all(t.max is None for t in types.types):
        assert valid  # every rule of these pods is a node's: the fillings state them all
    if valid:
        best = brute_cost(cluster, types)
        assert best is not None and cost >= best - 1e-9
        assert cost * MICRO >= bound_micro - 1


def test_the_dive_finds_the_two_nodes_where_first_fit_decreasing_buys_three() -> None:
    # a full existing node; pods of 450m, 450m, 350m, 350m, 200m, 200m on 1-cpu nodes: 450m + 350m + 200m fill a
    # node exactly (2 nodes), where first fit decreasing (cluster-autoscaler's estimator) pairs the 450m pods and
    # needs a third node
    nodes = (make_node("n0").label(H, "n0").label(Z, "a").alloc(cpu="100m", memory="8Gi", pods=110).build(),)
    pending = tuple(make_pod(f"p{i}").label("app", f"a{i}").req(cpu=c).set(order=i).build()
                    for i, c in enumerate(["450m", "450m", "350m", "350m", "200m", "200m"]))
    types = NodeTypes((a_type("one", "1", 1.0),))
    cluster = Cluster(nodes=nodes, pending=pending)
    nodes_, placements, valid, _ = dive_answer(cluster, types)
    assert valid and sum(o.type.price for o, _ in nodes_) == 2.0 == brute_cost(cluster, types)
    a = provision(cluster, types, SolverParams(workers=1, full_model_variables=0), deadline=Deadline.start(20))
    verify_answer(a)
    assert a.estimator.cost() == 3.0 and a.cost == 2.0 and a.status is Status.OPTIMAL
