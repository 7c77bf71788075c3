"""Property: on random small clusters, every placement the greedy simulator makes passes the verifier.

The clusters mix resources, taints and tolerations, node selectors, required and preferred pod
(anti-)affinity, spread constraints (DoNotSchedule and ScheduleAnyway, on zone and hostname) and host
ports, with some pods already running. The verifier's fast path (grouped counts) must also agree with
judging each pod one at a time through the plugins.
"""
from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from builders import cluster_of, make_node, make_pod, pod_term, selector, spread
from podplan.models.objects import Cluster
from podplan.optimizer.greedy import simulate
from podplan.optimizer.verify import final_state, judge, verify

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"
APPS = ("web", "db", "cache")
RULES = ("affinity", "anti", "pref-affinity", "pref-anti", "spread-hard", "spread-soft", "port")


@st.composite
def nodes(draw: st.DrawFn) -> list:
    out = []
    for i in range(draw(st.integers(1, 5))):
        b = make_node(f"n{i}").label(HOST, f"n{i}")
        if draw(st.integers(0, 5)):  # mostly zoned: a zone-less node is a corner, not the rule
            b.label(ZONE, draw(st.sampled_from("abc")))
        if draw(st.booleans()):
            b.label("disk", "ssd")
        taint = draw(st.sampled_from([None, None, None, "NoSchedule", "PreferNoSchedule"]))
        if taint:
            b.taint("dedicated", "infra", taint)
        b.alloc(cpu=draw(st.sampled_from(["1", "2", "4"])), memory="8Gi", pods=draw(st.sampled_from([3, 5, 110])))
        out.append(b.build())
    return out


@st.composite
def pods(draw: st.DrawFn, node_names: list[str]) -> list:
    out = []
    for i in range(draw(st.integers(1, 8))):
        app = draw(st.sampled_from(APPS))
        b = make_pod(f"p{i}").label("app", app).req(cpu=draw(st.sampled_from(["100m", "500m", "1"])))
        if draw(st.integers(0, 3)) == 0:
            b.priority(draw(st.sampled_from([0, 10])))
        if draw(st.integers(0, 3)) == 0:
            b.toleration("dedicated", "infra", "", "Equal")
        if draw(st.integers(0, 4)) == 0:
            b.node_selector(disk="ssd")
        if draw(st.integers(0, 5)) == 0:
            b.namespace("other")
        for rule in draw(st.lists(st.sampled_from(RULES), max_size=2)):
            other = selector(app=draw(st.sampled_from(APPS)))
            key = draw(st.sampled_from([ZONE, HOST]))
            if rule == "affinity":
                b.pod_affinity(pod_term(key, other))
            elif rule == "anti":
                b.pod_anti_affinity(pod_term(key, other))
            elif rule == "pref-affinity":
                b.preferred_pod_affinity(draw(st.integers(1, 100)), pod_term(key, other))
            elif rule == "pref-anti":
                b.preferred_pod_anti_affinity(draw(st.integers(1, 100)), pod_term(key, other))
            elif rule in ("spread-hard", "spread-soft"):
                when = "DoNotSchedule" if rule == "spread-hard" else "ScheduleAnyway"
                b.spread(spread(draw(st.integers(1, 2)), key, selector(app=app), when,
                                min_domains=draw(st.sampled_from([None, None, 3])) if when == "DoNotSchedule" else None,
                                taints_policy=draw(st.sampled_from(["Ignore", "Honor"]))))
            elif rule == "port":
                b.host_port(8080)
        if draw(st.integers(0, 3)) == 0:
            b.on(draw(st.sampled_from(node_names)))
        out.append(b.build())
    return out


@st.composite
def clusters(draw: st.DrawFn) -> Cluster:
    ns = draw(nodes())
    return cluster_of(ns, draw(pods([n.name for n in ns])))


def describe(cluster: Cluster) -> str:
    """The cluster in one line per object, for a readable counterexample."""
    lines = []
    for n in cluster.nodes:
        lines.append(f"node {n.name} {dict(n.labels)} taints={[(t.key, t.effect) for t in n.taints]} "
                     f"cpu={n.allocatable.get('cpu')} pods={n.allocatable.get('pods')}")
    for p in cluster.pods + cluster.pending:
        a = p.affinity
        rules = [f"{kind}({t.topology_key.split('/')[-1]}:{dict(t.label_selector.match_labels)})"
                 for kind, terms in (("aff", a.pod_required), ("anti", a.anti_required)) for t in terms]
        rules += [f"{kind}{w.weight}({w.term.topology_key.split('/')[-1]}:{dict(w.term.label_selector.match_labels)})"
                  for kind, terms in (("pref-aff", a.pod_preferred), ("pref-anti", a.anti_preferred)) for w in terms]
        rules += [f"spread-{c.when_unsatisfiable}(skew {c.max_skew} {c.topology_key.split('/')[-1]} "
                  f"min {c.min_domains} taints {c.node_taints_policy})" for c in p.spread_constraints]
        rules += [f"port {hp.port}" for hp in p.host_ports]
        lines.append(f"pod {p.name} {'on ' + p.node_name if p.node_name else 'pending'} {dict(p.labels)} "
                     f"cpu={p.requests.get('cpu')} prio={p.priority} tol={bool(p.tolerations)} "
                     f"sel={dict(p.node_selector)} {' '.join(rules)}")
    return "\n".join(lines)


PROPERTY = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@PROPERTY
@given(clusters(), st.integers(0, 3))
def test_every_placement_the_simulator_makes_passes_the_verifier(cluster: Cluster, seed: int) -> None:
    plan = simulate(cluster, seed)
    report = verify(cluster, plan.placements)
    failures = [v for v in report.violations if not v.preexisting]
    assert not failures, f"{describe(cluster)}\nplacements {plan.placements}\n{failures}"


@PROPERTY
@given(clusters(), st.data())
def test_the_verifier_judges_each_pod_as_the_plugins_judge_it_alone(cluster: Cluster, data: st.DataObject) -> None:
    # Any placement at all, most of them invalid: the grouped verifier must name exactly judge()'s violations.
    names = [n.name for n in cluster.nodes]
    placements = {p.key: data.draw(st.sampled_from(names)) for p in cluster.pending if data.draw(st.booleans())}
    report = verify(cluster, placements)
    state = final_state(cluster, placements)
    one_by_one = sorted((pod.key, info.name, r.plugin, r.reason)
                        for pod, info in list(state.all_pods()) for r in judge(pod, info.name, state))
    assert sorted((v.pod, v.node, v.plugin, v.reason) for v in report.violations) == one_by_one
