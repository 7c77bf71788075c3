"""A second warm start beside kube-scheduler's greedy: the preference-led pass.

The search (optimizer.solve) improves an incumbent; at scale, how good that incumbent is decides the answer.
kube-scheduler's greedy is a poor incumbent for the preference level P, for two reasons of its own design:
- it scores only a sample of the feasible nodes (numFeasibleNodesToFind: 10 % of 5,000 nodes), so a web pod
  whose cache runs on 3 nodes of 5,000 seldom even sees them;
- its score weighs preferences (InterPodAffinity, NodeAffinity: weight 2) against resource balance (1 + 1).
On the production shape at 5,000 nodes its plan is 62.5 % below the P bound, and neighbourhood rounds that
move a few thousand pods at a time recovered only part of that in 300 s.

The preference-led pass is the same scheduler, with the user's Filter plugins unchanged (every pod goes where
kube-scheduler could bind it, judged against the pods bound before it), and three changes:
- every feasible node is scored (percentageOfNodesToScore 100);
- the Score plugins that carry P's terms weigh PREFERENCE_WEIGHT (InterPodAffinity for podAffinity and
  podAntiAffinity, NodeAffinity, TaintToleration for preferNoSchedule, PodTopologySpread for
  scheduleAnywaySkew; a term the policy does not pay keeps its plugin's weight), the resource scores stay as
  tie-breaks;
- within one priority, the pods other pending pods' pod-affinity terms are drawn to are queued first (the
  targets: a cache before its web app, when both are pending), then pods whose own preferences P pays:
  preferred pod affinity (its value depends on where others are), then the other preferences, then the rest,
  each in input order.
Measured on 2 cores (benchmarks/bench_solve.py's inputs, seed 0): production 1,000 / 10,000 pods, 4.0 s, P
114,470, which is the proven optimum (greedy: 103,210); production 5,000 / 50,000 pods, 45 s, P 571,370
against the bound 571,420 (greedy: 214,200). Scoring the adaptive 10 % sample instead gave 216,370: seeing
every node is what counts.

The pipeline keeps the better plan (placed per priority, then P) as the search's incumbent; kube-scheduler's
greedy plan stays the reference that solve is never worse than and that compare reports.
"""
from __future__ import annotations

import dataclasses
import time

from ..models.objects import Cluster, Pod, PodAffinityTerm

from .framework import Profile
from .gangs import Gangs
from .greedy import simulate
from .interpodaffinity import PLUGIN as INTER_POD_AFFINITY
from .interpodaffinity import term_matches
from .marginal import marginal_plugins
from .nodeaffinity import PLUGIN as NODE_AFFINITY
from .objective import preference_terms
from .plan import Plan
from .podtopologyspread import PLUGIN as POD_TOPOLOGY_SPREAD
from .podtopologyspread.common import SCHEDULE_ANYWAY
from .policy import Policy
from .runner import NEVER, Interrupt
from .tainttoleration import PLUGIN as TAINT_TOLERATION
from .verify import final_state

DEFAULT_PLUGINS = {INTER_POD_AFFINITY.name: INTER_POD_AFFINITY, NODE_AFFINITY.name: NODE_AFFINITY}

# The preference Score plugins' weight in the pass (kube-scheduler's largest allowed weight); the resource
# scores keep theirs (1), so they only break ties between nodes that pay the same preferences.
PREFERENCE_WEIGHT = 100


def _paid(policy: Policy) -> dict[str, bool]:
    """Score plugin name -> whether P pays a term it scores."""
    return {INTER_POD_AFFINITY.name: bool(policy.pod_affinity or policy.pod_anti_affinity),
            NODE_AFFINITY.name: bool(policy.node_affinity),
            TAINT_TOLERATION.name: bool(policy.prefer_no_schedule),
            POD_TOPOLOGY_SPREAD.name: bool(policy.schedule_anyway_skew)}


def preference_profile(profile: Profile, policy: Policy) -> Profile:
    """`profile` with every feasible node scored and the Score plugins of P's paid terms weighted up."""
    paid = _paid(policy)
    weights = dict(profile.weights)
    for plugin in profile.scorers:
        if paid.get(plugin.name) and profile.weight(plugin) > 0:
            weights[plugin.name] = PREFERENCE_WEIGHT
    # pod (anti-)affinity and node affinity scored in P's units (optimizer.marginal), where the profile runs
    # kube-scheduler's own plugins (a plugin configured with args keeps its scores)
    marginal = marginal_plugins(policy)
    plugins = tuple(marginal[p.name] if p.name in marginal and p is DEFAULT_PLUGINS.get(p.name) and
                    profile.weight(p) > 0 else p for p in profile.plugins)
    return dataclasses.replace(profile, plugins=plugins, weights=tuple(sorted(weights.items())),
                               percentage_of_nodes_to_score=100)


def tier(pod: Pod, policy: Policy, target: bool = False) -> int:
    """Queue tier within a priority: 0 a `target` (a pending pod's pod-affinity term matches it), 1 preferred
    pod affinity, 2 another preference P pays, 3 none."""
    a = pod.affinity
    if target:
        return 0
    if a.pod_preferred and policy.pod_affinity:
        return 1
    if (a.node_preferred and policy.node_affinity) or (a.anti_preferred and policy.pod_anti_affinity) or (
            policy.schedule_anyway_skew and any(c.when_unsatisfiable == SCHEDULE_ANYWAY
                                                for c in pod.spread_constraints)):
        return 2
    return 3


def targets(cluster: Cluster, policy: Policy) -> set[str]:
    """Keys of the pending pods that a pending pod's pod-affinity term matches: required terms, and preferred
    ones when P pays them. They are queued first, so that the pods drawn to them find them bound (a web
    whose cache is pending too, as in compare's re-placement, else lands before its cache exists)."""
    terms: dict[tuple[str, PodAffinityTerm], Pod] = {}
    for p in cluster.pending:
        a = p.affinity
        for t in a.pod_required + (tuple(w.term for w in a.pod_preferred) if policy.pod_affinity else ()):
            terms.setdefault((p.namespace, t), p)
    if not terms:
        return set()
    # terms indexed by one matchLabels pair: a candidate is only tested against terms it could match
    by_pair: dict[tuple[str, str], list[tuple[PodAffinityTerm, Pod]]] = {}
    always: list[tuple[PodAffinityTerm, Pod]] = []
    for (_, t), owner in terms.items():
        pairs = t.label_selector.match_labels if t.label_selector is not None else ()
        (by_pair.setdefault(pairs[0], []) if pairs else always).append((t, owner))
    namespaces = {name: ns.labels for name, ns in cluster.namespaces.items()}
    verdict: dict[tuple[str, frozenset[tuple[str, str]]], bool] = {}
    out: set[str] = set()
    for p in cluster.pending:
        key = (p.namespace, frozenset(p.labels.items()))
        hit = verdict.get(key)
        if hit is None:
            near = [e for pair in key[1] for e in by_pair.get(pair, ())] + always
            hit = verdict[key] = any(term_matches(t, owner, p, namespaces, owner_incoming=True) for t, owner in near)
        if hit:
            out.add(p.key)
    return out


def preference_led(cluster: Cluster, seed: int, *, gangs: Gangs | None, profile: Profile, policy: Policy,
                   interrupt: Interrupt = NEVER, deadline: float | None = None,
                   all_placed: bool = False) -> Plan | None:
    """The preference-led pass (see the module docstring); None when no pending pod has a preference P pays
    or draws another's pod-affinity term (the pass would only repeat greedy with a different sample), or when
    `all_placed` (the plan to beat places every pod) and no pending pod has a preference P pays (queueing the
    targets first could only place more)."""
    drawn = targets(cluster, policy)
    tiers = [tier(p, policy, p.key in drawn) for p in cluster.pending]
    if all(t == 3 for t in tiers) or (all_placed and all(t in (0, 3) for t in tiers)):
        return None
    led_profile = preference_profile(profile, policy)
    if all_placed:
        # every pod fits already: which pods come first only decides P. By priority, the pods whose preferences
        # pay arrive after every pod of a higher priority, which has by then taken the nodes they prefer (the
        # nodes of a web's cache, the on-demand pool): at 300 nodes of the eks-default shape, 21,220 by priority
        # against 21,710 by tier first. So the tiers come first across priorities, the pending pods' priorities
        # made equal (the lowest of them) so that none preempts another; kept only if it places every pod.
        flat = min(p.priority for p in cluster.pending)
        ranked = sorted(range(len(cluster.pending)),
                        key=lambda i: (tiers[i], -cluster.pending[i].priority, cluster.pending[i].order))
        pending = tuple(dataclasses.replace(cluster.pending[i], order=rank, priority=flat)
                        for rank, i in enumerate(ranked))
        plan = simulate(dataclasses.replace(cluster, pending=pending), seed, gangs=gangs, profile=led_profile,
                        interrupt=interrupt, deadline=deadline)
        if len(plan.placements) == len(cluster.pending) or interrupt.is_set() or (
                deadline is not None and time.perf_counter() > deadline):
            return plan
    ranked = sorted(range(len(cluster.pending)), key=lambda i: (tiers[i], cluster.pending[i].order))
    # kube-scheduler's queue takes arrival (Pod.order) after priority: the pass's arrival is its tier order
    pending = tuple(dataclasses.replace(cluster.pending[i], order=rank) for rank, i in enumerate(ranked))
    return simulate(dataclasses.replace(cluster, pending=pending), seed, gangs=gangs,
                    profile=led_profile, interrupt=interrupt, deadline=deadline)


def placed_by_priority(cluster: Cluster, plan: Plan) -> tuple[int, ...]:
    """Pods `plan` places per priority of the pending pods, highest first: solve's first objective level."""
    priority = {p.key: p.priority for p in cluster.pending}
    placed = {q: 0 for q in sorted(set(priority.values()), reverse=True)}
    for key in plan.placements:
        placed[priority[key]] += 1
    return tuple(placed.values())


def preference(cluster: Cluster, plan: Plan, policy: Policy) -> int:
    """P of `plan`'s final state, as the verifier scores it: solve's second level."""
    return sum(preference_terms(cluster, final_state(cluster, plan.placements), policy).values())
