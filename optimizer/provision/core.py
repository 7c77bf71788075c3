"""`podplan provision`: the cheapest set of new nodes with which every pending pod is placed, proven minimal.

How the answer is made (input -> Cluster -> Problem -> CP-SAT -> Plan -> verify, on the grown cluster):
1. Offers: each node type in each of its zones (`zones`, or `--zones`), or zoneless.
2. cluster-autoscaler's answer (optimizer.provision.estimator) comes first: it is the comparison, the hint,
   and its price P_E bounds how many nodes of a type an optimal answer can use (floor(P_E / price)).
3. Candidate nodes: for each offer as many copies of the type's template as any optimal answer could use
   (the type's `max`, its `limits` and the overall `limits` over its capacity, floor(P_E / price), one per
   required pod). The grown cluster (existing + candidates) is solve's Problem and model
   (optimizer.problem / optimizer.model: every rule, final-state semantics), with the required pods' classes
   held at "all placed". Added here: open[j] per candidate (its pods only when open, open only with pods,
   candidates of one offer opened in order), the type's max and the resource limits over open nodes, and
   the objective: minimise the sum of open prices (integer micro-units).
4. The open candidates become new nodes named `<type>-<zone>-<i>` with the type's labels, its zone label and
   their own hostname; the plan is verified on the grown cluster. OPTIMAL: CP-SAT proved no cheaper set of
   new nodes exists (among at most the candidates listed, which every optimal answer fits in).
5. Never worse than the estimator: if the search ends above its price, the estimator's nodes and placement
   are the answer (GREEDY_FALLBACK) when they pass the verifier.

One difference from the grown cluster, stated where it matters: a candidate left unopened still counts as a
topology domain in the model. For a DoNotSchedule spread constraint over a key whose values only candidates
carry (typically kubernetes.io/hostname when every existing node already holds a matching pod), the model is
stricter than the grown cluster: the answer stays valid but is not proven minimal (status FEASIBLE, a note).
"""
from __future__ import annotations

import math
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, replace

from ...models.nodetypes import NodeTypes, new_node
from ...models.objects import Cluster, Node, Pod
from ..framework import Profile, Reads
from ..model import build
from ..pipeline import Deadline, check
from ..plan import Plan
from ..policy import Policy
from ..problem import build_problem, pod_signature
from ..registry import DEFAULT_PROFILE
from ..runner import NEVER, Clock, Interrupt, SolverParams, Status, _integral, charge, clock, clocked, now, run
from ..timelimit import cut_note
from .clock import WALL_PER_SECOND, planned_seconds, stamp
from ..state import ClusterState
from .estimator import Estimate, Offer, estimate, fits, fresh_name, offer_name, offer_probes
from .search import add_type_limits


def by_size(base: Cluster, offers: Sequence[Offer]) -> Cluster:
    """`base` with its pending pods' priorities ranked (priority first, then size): solve, which places the
    higher priorities first (lexicographically), then keeps the largest pods on the existing nodes, and the pods
    it leaves for new nodes are the small ones, which pack well. Size: the pod's requests over the cheapest
    offer's allocatable per resource (cpu, memory), as cluster-autoscaler's DecreasingPodOrderer scores them,
    rounded to two digits so that a handful of levels remain."""
    cheap = min(offers, key=lambda o: o.type.price / max(1, o.type.node.allocatable.get("cpu", 0)))
    alloc = cheap.type.node.allocatable

    def size(p: Pod) -> float:
        return float(f"{sum(p.requests.get(r, 0) / alloc[r] for r in ('cpu', 'memory') if alloc.get(r)):.1g}")

    keys = sorted({(p.priority, size(p)) for p in base.pending})
    rank = {k: i for i, k in enumerate(keys)}
    return replace(base, pending=tuple(replace(p, priority=rank[(p.priority, size(p))]) for p in base.pending))

MICRO = 1_000_000  # prices are integers of a millionth in the model
SOLVE_EXISTING_SHARE = 0.5  # solve's placement on the existing nodes runs only when this share of the limit is left
RESERVE_SHARE = 0.1  # of the limit, kept for verifying and printing the answer (and a loaded machine's slack)
# seconds per pod kept for the same, when more: solve's figure (optimizer.timelimit). Verifying and printing 77,697
# pods (5,000 nodes, 50,506 pending) took 2.2 s and about 2 s at load 2; at 0.75e-3 (15,540 pods: 8-11 s at load 8
# with older code) the reserve was 58 s of a 60 s limit there, and the command stopped after reading the input
# (2.4 s) with every pod pending
RESERVE_PER_POD = 0.25e-3
# of the clock's time left after the relaxation: the pattern program (column generation; converges in 7-9 s of the
# clock at 200 nodes and hands what it leaves to the searches), when that share is at least PATTERN_MIN_SECONDS
BOUNDS_SHARE = 0.5
PATTERN_MIN_SECONDS = 3.0
BOUND_MIN_SECONDS = 2.0  # a covering program (build and HiGHS) runs only with this much time left
SEARCH_MIN_SECONDS = 3.0  # the large-input search (solve's model and CP-SAT) only with this much, at least
# of the time left after the bounds: the joint model (its improvement rounds use what its first answer leaves; when
# it finds none, the older search has the rest)
JOINT_SHARE = 0.95
# the re-placement of the pods of scarce (extended) resources and of the estimator's new nodes: at most this many
# pods, with this share of the clock
SCARCE_MAX_PODS = 500
# (0.3 before: on 3/spread of the 200-node family the re-placement's 15 s of the clock left the joint model too
# little to find an answer, and the estimator's stood, 30.0 against 17.1 with 0.1; the rows where the re-placement
# won were also won by the joint model)
SCARCE_SHARE = 0.1
# of the pattern program's share: kept for rounding its answer to whole nodes (the dive, a start for the joint
# model), with what column generation leaves
DIVE_SHARE = 0.3
# of the clock's time left before the bounds: what column generation may go on for beyond its share when it has not
# converged there and the dive can run (no zone rules); the joint model has what is left. On 4/anti of the 200-node
# family the program needs about 34 s of the clock, its share left it 16 s: 16.916 (gap 25.5 %) with the joint
# model's rounds in the time, 13.304 (1.8 %) from the dive with the stretch
STRETCH_SHARE = 0.35
# of the clock's time left after the pattern program, on inputs with zone rules: the zone-split pattern program and
# its dive (optimizer.provision.zones), which runs only when this share is at least ZONE_NEED times the clock time
# the whole program took; the joint model has what is left, from its answer. On the 200-node family at --time-limit
# 60 the split program and its dive took 2.5-4 times the whole program's time (1/production 23 s of the clock
# against 5.7, 5/spread 21.6 against 8.7, 4/production 46.5 against 15); where it runs the joint model's rounds
# did not improve its answer. It was 3 while a dive that ran out of the clock lost its answer (at 2 the split program
# ran on 4/production in 35 s of the clock, 3 times the whole program's 11.7, its dive ran out and the joint model
# had none left: the estimator's 20.352 against 16.660). Since the dive finishes the pods left alone when its clock
# runs out (patterns._dive), 1: on 1/production at 1,000 nodes the split then runs (46 s of the clock against the
# whole program's 10 and its Python work's 26) and gives 71.932 against the bound 71.4 where the estimator's 143.48
# (50 %) stood; the 200-node family gave the same answers
ZONE_SHARE = 0.75
ZONE_NEED = 1.0
# the zone-split program's Python work that no solver measures (solve's problem built again for the pods held to
# zones, the answer given out to pods and verified on the whole cluster), per pod of the input, charged before it
# runs. 2e-3 was set when that work took 47.5 s of wall time on 1/spread at 1,000 nodes (15,540 pods, load 1.0)
# and the command ended at 71 s of its 60; since then the whole split (its solvers too) took 21.9 s of wall time
# there under load 2-3, where 2e-3 charged 31 s for the Python part alone, and the split never fitted the minute.
# At 1e-3 it runs there at --time-limit 60: 71.592 against the bound 71.4 where the estimator's 123.336 stood, in
# 46.9 s at load 1 and 48.2 s beside a CPU-bound process, not cut; the 200-node rows with zone rules and 300 nodes
# gave the same answers
ZONE_PREP_PER_POD = 1e-3
# and at least this per pod and existing node: that work grows with both (solve's problem built for every node and
# class). At 5,000 nodes (77,697 pods) and --time-limit 180 the split took 302 s of wall time (idle machine), and
# the command 527 s; per pod alone it was charged 78 s. At 1,000 nodes the two charge the same
ZONE_PREP_PER_POD_NODE = 1e-6
PLAIN_RESOURCES = frozenset({"cpu", "memory", "pods", "ephemeral-storage"})


class Impossible(Exception):
    """A required pod no node type (nor any existing node, emptied) can hold: exit 1 with the reasons."""

    def __init__(self, reasons: dict[str, str]) -> None:
        self.reasons = reasons
        super().__init__("; ".join(f"{k}: {v}" for k, v in reasons.items()))


@dataclass(frozen=True)
class Added:
    type: str
    zone: str | None
    count: int
    price: float  # per node


@dataclass(frozen=True)
class ProvisionAnswer:
    status: Status
    add: tuple[Added, ...]
    cost: float
    bound: float
    nodes: tuple[Node, ...]  # the new nodes
    placements: dict[str, str]
    pending: dict[str, str]  # pods left pending (below --priority-at-least, or impossible within limits)
    grown: Cluster  # existing + new nodes, every pending pod pending: the verifier's and --emit state's input
    estimator: Estimate
    wall_seconds: float
    notes: tuple[str, ...] = ()

    @property
    def gap(self) -> float:
        return self.cost - self.bound

    @property
    def relative_gap(self) -> float:
        return 0.0 if self.cost <= 0 else self.gap / self.cost


def offers_of(node_types: NodeTypes, zones: Sequence[str] | None = None) -> list[Offer]:
    """Each type in each zone: the type's own zones, or `zones` (--zones) for every type."""
    out = []
    for t in node_types.types:
        for z in (tuple(zones) if zones else t.zones) or (None,):
            out.append(Offer(t, z))
    return out


def rooms(node_types: NodeTypes, pods: int) -> dict[str, int]:
    """Most new nodes of each type: its max, its own limits and the overall limits over its capacity, and never
    more than one per pod (an optimal answer opens no empty node)."""
    out = {}
    for t in node_types.types:
        room = pods if t.max is None else min(t.max, pods)
        for limits in (t.limits, node_types.limits):
            for r, cap in limits.items():
                per = t.capacity.get(r, 0)
                if per > 0:
                    room = min(room, cap // per)
        out[t.name] = max(0, room)
    return out


def impossible(cluster: Cluster, required: Sequence[Pod], offers: Sequence[Offer], profile: Profile
               ) -> dict[str, str]:
    """Required pods that fit neither a new node of any offer nor any existing node emptied, by the rules that
    read only the node and its own pods; with the FitError message on the offers' template nodes."""
    local = replace(profile, plugins=tuple(p for p in profile.plugins
                                           if p.filter is None or p.filter_reads is not Reads.CLUSTER))
    templates = offer_probes(offers, "template")
    empty = replace(cluster, nodes=tuple(cluster.nodes) + tuple(templates), pods=(), pending=())
    state = ClusterState.from_cluster(empty)
    names = list(state.nodes)
    out: dict[str, str] = {}
    seen: dict[tuple, str | None] = {}
    from ..greedy import Scheduler
    from ..problem import pod_signature

    for p in required:
        sig = pod_signature(p, frozenset(p.labels))
        if sig not in seen:
            if fits(p, names, state, local) is not None:
                seen[sig] = None
            else:
                only = replace(empty, nodes=tuple(templates))
                _, message = Scheduler(ClusterState.from_cluster(only), profile=local).schedule(p)
                seen[sig] = message
        if seen[sig] is not None:
            out[p.key] = seen[sig]  # type: ignore[assignment]
    return out


def _stricter_domains(problem, candidates: set[int]) -> list[str]:
    """Spread keys (DoNotSchedule) whose values only candidates carry: the model's domains exceed the grown
    cluster's there."""
    keys = {c.topology_key for cls in problem.classes for c in cls.rep.spread_constraints
            if c.when_unsatisfiable == "DoNotSchedule"}
    out = []
    for key in sorted(keys):
        values, _ = problem.domains(key)
        existing = {v for i, v in enumerate(values) if i not in candidates and v is not None}
        if any(values[i] is not None and values[i] not in existing for i in candidates):
            out.append(key)
    return out


def provision(cluster: Cluster, node_types: NodeTypes, params: SolverParams, policy: Policy | None = None, *,
              deadline: Deadline, profile: Profile = DEFAULT_PROFILE, priority_at_least: int | None = None,
              zones: Sequence[str] | None = None, interrupt: Interrupt = NEVER) -> ProvisionAnswer:
    policy = policy or Policy()
    started = deadline.started
    notes: list[str] = []
    required = [p for p in cluster.pending if priority_at_least is None or p.priority >= priority_at_least]
    below = {p.key: f"priority {p.priority} is below --priority-at-least {priority_at_least}"
             for p in cluster.pending if priority_at_least is not None and p.priority < priority_at_least}
    offers = offers_of(node_types, zones)
    end = deadline.at - max(RESERVE_SHARE * deadline.limit,
                            RESERVE_PER_POD * (len(cluster.pods) + len(cluster.pending)))
    base = replace(cluster, pending=tuple(required))
    if time.perf_counter() >= end:  # reading the input used the time: say so at once (no check, no estimate)
        why = "out of time before it started: reading the input used the time"
        est = Estimate(pending={p.key: f"not placed: the estimator stopped ({why})" for p in required}, stopped=why)
        return _stopped(cluster, required, below, node_types, est, started)
    bad = impossible(cluster, required, offers, profile)
    if bad:
        raise Impossible(bad)
    room = rooms(node_types, len(required))
    # cluster-autoscaler's answer on the required pods first (the others stay where kube-scheduler puts them): the
    # floor printed when the search has no time. It stops at the command's end less the reserve (kept for
    # verifying and printing): then its answer so far is printed, the pods it did not reach pending.
    est = estimate(base, required, offers, profile, room, params.seed, deadline=end, interrupt=interrupt)
    if est.stopped:
        return _stopped(cluster, required, below, node_types, est, started)
    # From here every decision is planned on the deterministic clock (optimizer.provision.clock): the budget is
    # the --time-limit the user gave less the planned reserve and Python work, a function of the input and the
    # options only; the wall clock (`end`) only caps the solvers, and what it cuts is said in the answer.
    limit = float(params.budget if params.budget is not None else params.time_limit)
    pods = len(cluster.pods) + len(cluster.pending)
    budget = planned_seconds(limit, pods, max(RESERVE_SHARE * limit, RESERVE_PER_POD * pods), len(required))
    clk = Clock(end)
    with clocked(clk):
        answer = _after_estimate(cluster, base, required, below, offers, node_types, est, room, params, policy,
                                 profile, interrupt, notes, started, clk.origin + budget)
    if clk.cuts:
        answer = replace(answer, notes=answer.notes + (cut_note(clk.cuts),))
    return answer


def _after_estimate(cluster: Cluster, base: Cluster, required: Sequence[Pod], below: dict[str, str],
                    offers: Sequence[Offer], node_types: NodeTypes, est: Estimate, room: dict[str, int],
                    params: SolverParams, policy: Policy, profile: Profile, interrupt: Interrupt, notes: list[str],
                    started: float, end: float) -> ProvisionAnswer:
    """Everything after the estimator, on the deterministic clock installed by the caller: `end` is a time of
    that clock (runner.now()), never of the wall clock."""
    # the covering program's linear relaxation: a bound in a second or two at 200 nodes (it has 10 % of the time
    # left, and at least 3 s when that much is left)
    from .bound import cover_bound
    from .forced import forced_bound

    # the forced bound first (optimizer.provision.forced): the pods no existing node can hold, on new nodes alone; a
    # small exact program (milliseconds), computed whatever the time, and it stands when the others do not converge
    stamp("after the estimator")
    forced = forced_bound(base, offers, node_types, profile)
    stamp("forced bound")
    if forced.pods:
        notes.append(f"forced bound {forced.bound_micro / MICRO:g}: {forced.pods} pending pod(s) no existing node can "
                     f"hold ({forced.groups} group(s)) need new nodes" + ("" if forced.proven else " (not solved to "
                                                                               "optimality: its dual bound)"))
    now_left = end - now()
    first = cover_bound(base, offers, node_types, profile, min(now_left - 1.0, max(3.0, now_left * 0.1)), relax=True) \
        if now_left > BOUND_MIN_SECONDS else None
    stamp("covering relaxation")
    if first is None:
        from .bound import CoverBound

        first = CoverBound(0, {}, {}, False, 0.0, 0, 0)
        notes.append("no time was left for the covering bound after the estimator")
    if first.bound_micro >= 10 ** 18:
        raise Impossible({"(all)": "no set of new nodes within the types' max and limits places every required pod"})
    est_cost = est.cost() if not est.pending else math.inf
    # candidates per offer
    taken = {n.name for n in cluster.nodes}
    cand: list[tuple[Offer, Node]] = []
    per_type_cap: dict[str, int] = {}
    for t in node_types.types:
        cap = room[t.name]
        if math.isfinite(est_cost) and t.price > 0:
            cap = min(cap, int(math.floor(est_cost / t.price + 1e-9)))
        per_type_cap[t.name] = cap
    for o in offers:
        for i in range(per_type_cap[o.type.name]):
            name = f"{offer_name(o)}-candidate-{i + 1}"
            cand.append((o, new_node(o.type, name, o.zone)))
    n_classes = len({pod_signature(p, frozenset(p.labels)) for p in required})
    if n_classes * (len(cluster.nodes) + len(cand)) > params.full_model_variables:
        return _large(cluster, base, required, below, offers, node_types, est, est_cost,
                      max(first.bound_micro, forced.bound_micro), profile,
                      policy, params,
                      end, started, notes, interrupt, first.counts)
    grown = replace(base, nodes=tuple(cluster.nodes) + tuple(n for _, n in cand))
    problem = build_problem(grown, profile, decompose=False)
    first_cand = len(cluster.nodes)
    cand_idx = set(range(first_cand, first_cand + len(cand)))
    comp = problem.components[0] if problem.components else None
    result_values = None
    status = Status.OPTIMAL
    bound_micro = 0
    cover_micro = max(first.bound_micro, forced.bound_micro)
    if comp is not None and not interrupt.is_set():
        # the covering program's bound (optimizer.provision.bound), as a cut and as the bound when CP-SAT proves
        # less: its linear relaxation (above), then the integer version for a short share of the time
        for relax, share in ((False, 0.1),):
            if end - now() > 1.0:
                cb = cover_bound(base, offers, node_types, profile, max(0.2, (end - now()) * share),
                                 relax=relax)
                cover_micro = max(cover_micro, cb.bound_micro)
        built = build(problem, comp, policy, params.strategy)
        ctx = built.ctx
        m = ctx.model
        for c in ctx.classes:
            m.add(ctx.placed[c] == problem.classes[c].size)
        opened: dict[int, object] = {}
        by_offer: dict[Offer, list[int]] = defaultdict(list)
        for j, (o, node) in enumerate(cand):
            n = first_cand + j
            y = m.new_bool_var(f"open[{node.name}]")
            opened[n] = y
            xs = [ctx.x[(c, n)] for c in ctx.by_node.get(n, [])]
            for c in ctx.by_node.get(n, []):
                m.add(ctx.x[(c, n)] <= ctx.ub[(c, n)] * y)
            if xs:
                m.add(sum(xs) >= y)
            else:
                m.add(y == 0)
            by_offer[o].append(n)
        for nodes in by_offer.values():
            for a, b in zip(nodes, nodes[1:]):
                m.add(opened[a] >= opened[b])
        add_type_limits(m, node_types, opened, lambda n: cand[n - first_cand][0].type)
        price = {n: round(cand[n - first_cand][0].type.price * MICRO) for n in opened}
        cost = sum(price[n] * y for n, y in opened.items())
        if 0 < cover_micro < 10 ** 18:
            m.add(cost >= cover_micro)
        m.minimize(cost)
        # the estimator's answer as the hint: its nodes on the first candidates of their offer
        hint_node: dict[str, int] = {n.name: i for i, n in enumerate(cluster.nodes)}
        used: dict[Offer, int] = defaultdict(int)
        est_names = iter(est.nodes)
        for o, count in est.add:
            for _ in range(count):
                node = next(est_names)
                k = used[o]
                used[o] += 1
                if k < len(by_offer[o]):
                    hint_node[node.name] = by_offer[o][k]
        counts: dict[tuple[int, int], int] = defaultdict(int)
        for key, node_name in est.placements.items():
            c = problem.class_of.get(key)
            n = hint_node.get(node_name)
            if c is not None and n is not None:
                counts[(c, n)] += 1
        for key, var in ctx.x.items():
            m.add_hint(var, counts.get(key, 0))
        for n, y in opened.items():
            m.add_hint(y, int(any(counts.get((c, n), 0) for c in ctx.by_node.get(n, []))))
        res = run(m, params, max(0.05, end - now()), interrupt=interrupt)
        if res.values is not None:
            result_values = res.values
            value = sum(price[n] * res.values[y.index] for n, y in opened.items())
            bound_micro = value if res.status is Status.OPTIMAL else max(cover_micro, int(_integral(res.bound, False)))
            status = Status.OPTIMAL if res.status is Status.OPTIMAL else Status.FEASIBLE
        else:
            status = Status.INFEASIBLE if res.status is Status.INFEASIBLE else Status.UNKNOWN
            bound_micro = max(cover_micro if cover_micro < 10 ** 18 else 0,
                              int(_integral(res.bound, False)) if res.status is not Status.UNKNOWN else 0)
    placements: dict[str, str] = {}
    new_nodes: list[tuple[Offer, Node]] = []
    if result_values is not None:
        rename: dict[int, str] = {}
        seq: dict[Offer, int] = defaultdict(int)
        for j, (o, node) in enumerate(cand):
            n = first_cand + j
            if result_values[opened[n].index]:  # type: ignore[union-attr]
                seq[o] += 1
                name = rename[n] = fresh_name(o, seq[o], taken)
                new_nodes.append((o, new_node(o.type, name, o.zone)))
        wanted: dict[int, list[Pod]] = {c.index: list(c.pods) for c in problem.classes}
        for (c, n), var in sorted(ctx.x.items()):
            for _ in range(result_values[var.index]):
                placements[wanted[c].pop(0).key] = rename.get(n, problem.nodes[n].name)
    model_cost = sum(o.type.price for o, _ in new_nodes)
    if math.isfinite(est_cost) and (result_values is None or model_cost > est_cost + 1e-9):
        est_offers = [o for o, k in est.add for _ in range(k)]
        new_nodes = list(zip(est_offers, est.nodes))
        required_keys = {p.key for p in required}
        placements = {k: v for k, v in est.placements.items() if k in required_keys}
        status = Status.GREEDY_FALLBACK
        notes.append("the search found no cheaper answer than the estimator's within the time limit")
    elif result_values is None:
        raise Impossible({"(all)": "no set of new nodes within the types' max and limits places every required pod"
                          if status is Status.INFEASIBLE else "no answer found within the time limit"})
    stricter = _stricter_domains(problem, cand_idx)
    if stricter:
        # the model's own bound is for a stricter problem: only the covering program's holds
        bound_micro = min(bound_micro, cover_micro)
        if status is Status.OPTIMAL:
            status = Status.FEASIBLE
            notes.append(f"not proven minimal: unopened candidate nodes count as empty {', '.join(stricter)} "
                         "domains for DoNotSchedule spread constraints, which the grown cluster does not have")
    grown_final = replace(cluster, nodes=tuple(cluster.nodes) + tuple(n for _, n in new_nodes))
    add = summary(new_nodes, node_types)
    cost = sum(a.price * a.count for a in add)
    bound = min(cost, bound_micro / MICRO)
    if status is Status.OPTIMAL:
        bound = cost
    elif status is Status.FEASIBLE and cost - bound <= 1e-9:
        status = Status.OPTIMAL  # the covering bound meets the answer's cost: proven
        notes.append("proven minimal by the covering bound")
    return ProvisionAnswer(status, tuple(add), cost, bound, tuple(n for _, n in new_nodes), placements, dict(below),
                           grown_final, est, time.perf_counter() - started, tuple(notes))


def _large(cluster: Cluster, base: Cluster, required: Sequence[Pod], below: dict[str, str], offers: Sequence[Offer],
           node_types: NodeTypes, est: Estimate, est_cost: float, lb: int, profile: Profile, policy: Policy,
           params: SolverParams, end: float, started: float, notes: list[str], interrupt: Interrupt,
           relaxed_counts: dict[int, int] | None = None) -> ProvisionAnswer:
    """Too many (class, node) pairs for the exact model. The bound: the covering program
    (optimizer.provision.bound), its linear relaxation first, then as an integer program for a share of the time.
    The answer (optimizer.provision.search): the pods without inter-pod rules fixed on the existing nodes where
    the relaxation puts them, every other pod placed by CP-SAT on the existing nodes' room and candidate new
    nodes; the estimator's answer when that is not cheaper (never worse than it)."""
    from ..pipeline import optimal_plan
    from .bound import cover_bound, micro_cost
    from .search import Found, candidate_counts, search_new

    def left() -> float:
        """The clock's time left (end is one of its times), at most what the wall clock has left at the budget's
        planned rate (clock.WALL_PER_SECOND), none once it ran out. Where the wall clock is the smaller, the
        answer says it cut the search: at 5,000 nodes and --time-limit 180 the stages charged their Python work
        (solve's problem, the covering program's) at a fifth of its wall time, and the command ended at 527 s."""
        c = clock()
        if c is not None and c.wall_over("provision's search"):
            return 0.0
        rest = end - now()
        if c is not None and c.wall_left() / WALL_PER_SECOND < rest:
            c.cut("provision's search")
            return c.wall_left() / WALL_PER_SECOND
        return rest

    status = Status.FEASIBLE
    new_nodes: list[tuple[Offer, Node]] = []
    placements: dict[str, str] = {}
    found = None
    existing_names = {n.name for n in cluster.nodes}
    keys = {p.key for p in required}
    if math.isfinite(est_cost):  # the estimator's answer is the one to beat, and the search's start
        est_offers = [o for o, k in est.add for _ in range(k)]
        found = Found(list(zip(est_offers, est.nodes)), {k: v for k, v in est.placements.items() if k in keys},
                      Status.GREEDY_FALLBACK)
    # the estimator's answer meets a bound already (the forced bound, typically: only pods no existing node holds
    # need new nodes): it is proven minimal, nothing to search
    est_micro = micro_cost(est.add) if math.isfinite(est_cost) else None
    proven = est_micro is not None and lb >= est_micro
    if proven:
        notes.append("the estimator's answer meets the bound: proven minimal, no search needed")

    def rest_of(on: dict[str, str]) -> Cluster:
        kept = tuple(replace(p, node_name=on[p.key]) for p in required if p.key in on)
        return replace(base, pods=base.pods + kept, pending=tuple(p for p in required if p.key not in on))

    # Pods of a scarce resource (an extended resource such as GPUs): kube-scheduler spreads them, and the pieces of
    # free GPUs it leaves on the existing nodes hold none of the larger ones, which the estimator then buys new
    # nodes for. Re-placed by CP-SAT (solve's model, every rule) with the pods the estimator put on new nodes, the
    # other pods kept where kube-scheduler put them: a small model even at 1,000 nodes, first, with a share of
    # the clock. (At 1,000 nodes of the mixed profile: 55 GPU pods fit 36 of the 50 GPU nodes' free GPUs, where
    # the estimator buys 2 GPU nodes.)
    scarce = {p.key for p in required if any(v > 0 and r not in PLAIN_RESOURCES for r, v in p.requests.items())}
    on_new = {k for k, v in est.placements.items() if k in keys and v not in existing_names}
    if not proven and scarce and on_new and len(scarce | on_new) <= SCARCE_MAX_PODS and \
            left() > SEARCH_MIN_SECONDS and not interrupt.is_set():
        from ...models.errors import PlanInvalidError

        keep = {k: v for k, v in est.placements.items() if v in existing_names and k in keys and k not in scarce}
        per_offer: dict[int, int] = defaultdict(int)
        for o, k in est.add:
            per_offer[offers.index(o)] += k
        got = search_new(cluster, rest_of(keep), dict(per_offer), offers, node_types, profile, policy, params,
                         left() * SCARCE_SHARE, interrupt, hint=found)
        if got is not None and sum(o.type.price for o, _ in got.nodes) < est_cost - 1e-9:
            merged = dict(keep)
            merged.update(got.placements)
            grown = replace(cluster, nodes=tuple(cluster.nodes) + tuple(n for _, n in got.nodes))
            try:
                check(grown, Plan(placements=merged, pending={}, status=Status.FEASIBLE), policy, profile)
                found = Found(list(got.nodes), merged, Status.FEASIBLE)
                got_micro = micro_cost((o, 1) for o, _ in got.nodes)
                proven = lb >= got_micro
                notes.append(f"{len(scarce | on_new)} pods of scarce resources and on the estimator's new nodes "
                             f"re-placed: {got_micro / MICRO:g}" + (" (meets the bound: proven minimal)" if proven
                                                                   else ""))
            except PlanInvalidError as exc:
                notes.append(f"the re-placement of scarce pods failed the verifier and is not used ({str(exc)[:200]})")
    # the search builds solve's model over the whole cluster: about what the estimator's kube-scheduler pass
    # costs (optimizer.timelimit), so it starts only with that much time left
    dived = None  # the pattern program's answer rounded to whole nodes, verified: a start of the joint model
    if not proven and not interrupt.is_set() and left() > SEARCH_MIN_SECONDS:

        if left() > BOUND_MIN_SECONDS and not interrupt.is_set():
            # the bounds first, with a share of the time: the pattern program (each node a bin of whole pods:
            # optimizer.provision.patterns; 6-14 s to converge at 200 nodes, and no bound before it nears that), then
            # the integer covering program with what is left of the share (HiGHS's dual bound: 12.80 of its 12.82
            # after 6 s on 2/plain at load 4; alone when the share is short). Before the searches, so that the
            # joint model's improvement rounds can use every second left after them, and cut by the bound.
            from .patterns import pattern_bound

            stamp("before the pattern program")
            share = left() * BOUNDS_SHARE
            relaxation_micro = lb
            pat = None
            if share >= PATTERN_MIN_SECONDS:
                program_started = now()
                pat = pattern_bound(base, offers, node_types, profile, share,
                                    round(est_cost * MICRO) if math.isfinite(est_cost) else None, interrupt=interrupt,
                                    master_share=DIVE_SHARE, stretch=left() * STRETCH_SHARE,
                                    answer=None if found is None else (found.nodes, found.placements))
                lb = max(lb, pat.bound_micro)
                stamp("pattern program")
                if pat.data is not None and pat.data.rules:
                    # the dive breaks zone rules: the program's answer says which zone each pod a zone rule reads
                    # goes to, and one program with those pods held to their zones dives (optimizer.provision.zones),
                    # when its share of the time left holds ZONE_NEED times what the whole program took
                    rounded = None
                    # (its Python work, no solver's, charged before it: planned per pod of the input, and per pod
                    # and node)
                    pods = len(cluster.pods) + len(cluster.pending)
                    zone_prep = max(ZONE_PREP_PER_POD, ZONE_PREP_PER_POD_NODE * len(cluster.nodes)) * pods
                    if pat.used and left() * ZONE_SHARE >= ZONE_NEED * (now() - program_started) + zone_prep:
                        charge(zone_prep)
                        rounded = _zone_start(base, cluster, offers, node_types, pat, policy, profile,
                                              left() * ZONE_SHARE, interrupt, notes)
                        stamp("zone dive")
                else:
                    rounded = _dive_start(cluster, offers, node_types, pat, policy, profile, notes)
                if rounded is not None:
                    dived = rounded
                    if found is None or sum(o.type.price for o, _ in rounded.nodes) < \
                            sum(o.type.price for o, _ in found.nodes) - 1e-9:
                        found = rounded
            # The integer covering program (HiGHS) is not run here: nothing but the wall clock bounds its work (its
            # root node alone took 38 s on 2/plain under a node limit of 150), so its bound would differ from run
            # to run. When the pattern program stops unconverged, the covering program's relaxation stands.
            covering = f"covering relaxation {relaxation_micro / MICRO:g}"
            stamp("bounds")
            if pat is not None:
                notes.append(f"pattern bound {pat.bound_micro / MICRO:g} ({'converged' if pat.converged else 'stopped'},"
                             f" {pat.columns} fillings, {pat.seconds:.1f}s); {covering}")
        # first the joint model (optimizer.provision.joint): which pods the existing nodes keep and what is bought,
        # decided together; verified here, and the older placements below only when it found nothing cheaper
        stamp("before the joint model")
        joint = _joint(cluster, base, offers, node_types, est, relaxed_counts or {}, lb, profile, policy, params,
                       left() * JOINT_SHARE, interrupt, notes, dived)
        stamp("joint model")
        if joint is not None and (found is None or sum(o.type.price for o, _ in joint.nodes)
                                  < sum(o.type.price for o, _ in found.nodes) - 1e-9):
            found = joint
        # the existing nodes keep kube-scheduler's placement (the estimator's first step: the estimator's nodes
        # complete it), or solve's with the largest pods first when the relaxation of what that leaves over costs
        # less (tried first; a placement the pods left cannot complete, by their inter-pod rules, gives way)
        kube = {k: v for k, v in est.placements.items() if v in existing_names}
        # (none once the wall clock ran out: the answer so far is printed)
        tries = [] if found is joint or left() <= 0 else [(kube, rest_of(kube), "kube-scheduler places them")]
        need = {0: cover_bound(tries[0][1], offers, node_types, profile, max(0.5, left() * 0.1), relax=True)} \
            if tries else {}
        stamp("the covering relaxation of what kube-scheduler's placement leaves")
        # solve starts with kube-scheduler's greedy loop, which runs to its end: only when it surely fits
        if tries and left() > SOLVE_EXISTING_SHARE * float(params.budget or params.time_limit) and \
                not interrupt.is_set():
            # solve's pipeline with a planned share (its own deterministic clock plans from `budget`), the wall
            # clock its cap
            seconds = max(1.0, left() * 0.3)
            share = Deadline(time.perf_counter(), seconds)
            solved, _ = optimal_plan(by_size(base, offers), replace(params, time_limit=seconds, budget=seconds,
                                                                     search_budget=None), policy, deadline=share,
                                     profile=profile, interrupt=interrupt)
            charge(seconds)
            stamp("solve on the existing nodes")
            other = rest_of(dict(solved.placements))
            second = cover_bound(other, offers, node_types, profile, max(0.5, left() * 0.1), relax=True)
            stamp("the covering relaxation of what solve's placement leaves")
            if second.bound_micro < need[0].bound_micro:
                check(base, solved, policy, profile)
                tries.insert(0, (dict(solved.placements), other, "solve places them, largest first"))
                need = {0: second, 1: need[0]}
        for t, (on_existing, fixed_cluster, how) in enumerate(tries):
            rest = fixed_cluster.pending
            if not rest:
                found = Found([], dict(on_existing), Status.FEASIBLE)
                break
            if left() <= SEARCH_MIN_SECONDS or interrupt.is_set():
                break
            # candidates: the offers the relaxation of what is left buys, in each zone, and the estimator's
            counts = candidate_counts(need[t].counts, offers)
            per_offer: dict[int, int] = defaultdict(int)
            for o, k in est.add:  # an offer can be chosen in several of the estimator's loops
                per_offer[offers.index(o)] += k
            for i, k in per_offer.items():
                counts[i] = max(counts.get(i, 0), k)
            share = left() * (0.5 if t + 1 < len(tries) else 1.0)
            searched = search_new(cluster, fixed_cluster, counts, offers, node_types, profile, policy, params,
                                  share, interrupt, hint=found)
            stamp(f"the search over new nodes ({how})")
            notes.append(f"{len(on_existing)} pending pods kept on the existing nodes as {how}, {len(rest)} "
                         f"searched over {sum(counts.values())} candidate new nodes: "
                         + ("no answer" if searched is None else
                            f"{sum(o.type.price for o, _ in searched.nodes):g} ({searched.status})"))
            if searched is not None and (found is None or sum(o.type.price for o, _ in searched.nodes)
                                         < sum(o.type.price for o, _ in found.nodes) - 1e-9):
                merged = dict(on_existing)
                merged.update(searched.placements)
                found = Found(searched.nodes, merged, Status.FEASIBLE)
                break
    if found is not None:
        new_nodes = list(found.nodes)
        placements = dict(found.placements)
    model_cost = sum(o.type.price for o, _ in new_nodes)
    if found is None or found.status is Status.GREEDY_FALLBACK or model_cost > est_cost + 1e-9:
        if not math.isfinite(est_cost):
            raise Impossible({"(all)": "no answer found within the time limit"})
        est_offers = [o for o, k in est.add for _ in range(k)]
        new_nodes = list(zip(est_offers, est.nodes))
        keys = {p.key for p in required}
        placements = {k: v for k, v in est.placements.items() if k in keys}
        status = Status.FEASIBLE if proven else Status.GREEDY_FALLBACK  # (FEASIBLE: OPTIMAL below, by the bound)
        if not proven:
            notes.append("the search found no cheaper answer than the estimator's within the time limit")
    notes.append("large input: the bound is the largest of the forced bound (the pods no existing node can hold, on new "
                 "nodes alone), the pattern program's (every node a bin of whole pods) and the covering program's "
                 "relaxation (whole pods on each existing node, new nodes pooled per offer); all leave inter-pod rules "
                 "out")
    add = summary(new_nodes, node_types)
    cost = sum(a.price * a.count for a in add)
    bound = min(cost, lb / MICRO)
    if status is Status.FEASIBLE and cost - bound <= 1e-9:
        status = Status.OPTIMAL
    grown_final = replace(cluster, nodes=tuple(cluster.nodes) + tuple(n for _, n in new_nodes))
    return ProvisionAnswer(status, tuple(add), cost, bound, tuple(n for _, n in new_nodes), placements, dict(below),
                           grown_final, est, time.perf_counter() - started, tuple(notes))


def within_limits(bought: Sequence, node_types: NodeTypes) -> bool:
    """New nodes of these types (one entry a node) within each type's max and limits and the overall limits."""
    for t in node_types.types:
        mine = sum(1 for b in bought if b.name == t.name)
        if t.max is not None and mine > t.max or any(mine * t.capacity.get(r, 0) > lim for r, lim in t.limits.items()):
            return False
    return all(sum(b.capacity.get(r, 0) for b in bought) <= lim for r, lim in node_types.limits.items())


def _dive_start(cluster: Cluster, offers: Sequence[Offer], node_types: NodeTypes, pat, policy: Policy,
                profile: Profile, notes: list[str]):
    """The pattern program's answer rounded to whole nodes (the dive) as an answer: its pods on the nodes,
    verified on the grown cluster (its fillings know no inter-pod rule: a plan that breaks one is said in a note
    and not used). A Found, or None."""
    from .patterns import packing_answer

    if pat.start is None or pat.data is None:
        return None
    got = packing_answer(pat.data, offers, pat.start, [n.name for n in cluster.nodes])
    if got is None:
        notes.append("pattern program rounded (the dive): its fillings leave pods over (a class's own bound): not used")
        return None
    return _verified_start(cluster, node_types, got, policy, profile, notes, "pattern program rounded (the dive)")


def _zone_start(base: Cluster, cluster: Cluster, offers: Sequence[Offer], node_types: NodeTypes, pat, policy: Policy,
                profile: Profile, limit: float, interrupt: Interrupt, notes: list[str]):
    """The zone-split program's dive (optimizer.provision.zones) from the whole program's answer, verified on the
    grown cluster: a Found, or None (said in a note)."""
    from .zones import split_dive

    what = "pattern program rounded with the pods held to zones"
    answer = split_dive(base, offers, node_types, profile, pat, limit, DIVE_SHARE, interrupt)
    if answer is None:
        notes.append(f"{what}: its program stopped short or some pod has no zone: not used")
        return None
    return _verified_start(cluster, node_types, answer, policy, profile, notes, what)


def _verified_start(cluster: Cluster, node_types: NodeTypes, got, policy: Policy, profile: Profile, notes: list[str],
                    what: str):
    """New nodes and placements as a Found when within the types' limits and verified on the grown cluster (the
    fillings know no inter-pod rule: a plan that breaks one is said in a note and not used); else None."""
    from ...models.errors import PlanInvalidError
    from .search import Found

    nodes, placements = got
    cost = sum(o.type.price for o, _ in nodes)
    if not within_limits([o.type for o, _ in nodes], node_types):
        notes.append(f"{what}: {cost:g}, beyond a type's max or limits: not used")
        return None
    grown = replace(cluster, nodes=tuple(cluster.nodes) + tuple(n for _, n in nodes))
    try:
        check(grown, Plan(placements=placements, pending={}, status=Status.FEASIBLE), policy, profile)
    except PlanInvalidError as exc:
        notes.append(f"{what}: {cost:g}, breaks an inter-pod rule: not used ({str(exc)[:160]})")
        return None
    notes.append(f"{what}: {cost:g}, verified")
    return Found(list(nodes), placements, Status.FEASIBLE)


def _joint(cluster: Cluster, base: Cluster, offers: Sequence[Offer], node_types: NodeTypes, est: Estimate,
           relaxed_counts: dict[int, int], lb: int, profile: Profile, policy: Policy, params: SolverParams,
           limit: float, interrupt: Interrupt, notes: list[str], dived=None):
    """The joint model's answer (optimizer.provision.joint), completed for the pods it leaves to solve's model
    (the rest pods the estimator had put on new nodes) and verified on the grown cluster; None when it found none
    or it fails the verifier (said in a note: a bug of the model, never printed as an answer)."""
    from ...models.errors import PlanInvalidError
    from .joint import joint_search
    from .search import Found, candidate_counts, search_new

    started = now()  # the deterministic clock's
    wall_started = time.perf_counter()
    slots = candidate_counts(relaxed_counts, offers)
    est_per_offer: dict[int, int] = defaultdict(int)
    for o, k in est.add:  # an offer can be chosen in several of the estimator's loops
        est_per_offer[offers.index(o)] += k
    for i, k in est_per_offer.items():
        slots[i] = max(slots.get(i, 0), k)
    hints = []
    if dived is not None:  # the pattern program's rounded answer, a start: its new nodes on slots of their offers
        mine: dict[int, int] = defaultdict(int)
        for o, _ in dived.nodes:
            mine[offers.index(o)] += 1
        for i, k in mine.items():
            slots[i] = max(slots.get(i, 0), k)
        hints.append(([(o, n.name) for o, n in dived.nodes], dived.placements))
    why: list[str] = []
    got = joint_search(base, offers, node_types, profile, est, slots, params, limit, lb, interrupt, hints=hints,
                       why=why)
    if got is None:
        notes.append("joint model: " + (why[0] if why else "no answer within its time"))
        return None
    nodes = list(got.nodes)
    placements = dict(got.placements)
    if got.rest:  # solve's model, every rule, on the grown cluster with the modelled pods bound
        grown = replace(cluster, nodes=tuple(cluster.nodes) + tuple(n for _, n in nodes))
        fixed = replace(base, nodes=grown.nodes, pods=base.pods + tuple(
            replace(p, node_name=placements[p.key]) for p in base.pending if p.key in placements),
            pending=tuple(got.rest))
        counts = dict(est_per_offer)
        more = search_new(grown, fixed, counts, offers, node_types, profile, policy, params,
                          max(0.5, limit - (now() - started)), interrupt)
        if more is None:
            notes.append(f"joint model: the {len(got.rest)} pods it leaves to solve's model found no place in time")
            return None
        nodes += more.nodes
        placements.update(more.placements)
    cost = sum(o.type.price for o, _ in nodes)
    grown = replace(cluster, nodes=tuple(cluster.nodes) + tuple(n for _, n in nodes))
    try:
        check(grown, Plan(placements=placements, pending={}, status=Status.FEASIBLE), policy, profile)
    except PlanInvalidError as exc:
        notes.append(f"joint model: its answer failed the verifier and is not used ({str(exc)[:200]})")
        return None
    notes.append(f"joint model: {got.kinds.get('local', 0)} pods with per-node rules, {got.kinds.get('zone', 0)} "
                 f"with zone rules, {got.kinds.get('rest', 0)} left to kube-scheduler's placement or solve's model; "
                 f"{cost:g} ({got.status}) in {time.perf_counter() - wall_started:.1f}s"
                 + (f"; {got.improved[0]} improvement rounds: {got.improved[1]:g} -> {got.improved[2]:g}"
                    if got.improved[0] else ""))
    return Found(nodes, placements, Status.FEASIBLE)


def _stopped(cluster: Cluster, required: Sequence[Pod], below: dict[str, str], node_types: NodeTypes, est: Estimate,
             started: float) -> ProvisionAnswer:
    """The estimator did not finish within the time (or Ctrl-C): its answer so far, honest about what is left.
    The new nodes of the expansions it chose and the pods placed on them and on the existing nodes, the pods
    it did not reach pending; status UNKNOWN, no bound (none was computed)."""
    offers = [o for o, k in est.add for _ in range(k)]
    new_nodes = list(zip(offers, est.nodes))
    keys = {p.key for p in required}
    placements = {k: v for k, v in est.placements.items() if k in keys}
    pending = dict(below)
    pending.update(est.pending)
    add = summary(new_nodes, node_types)
    cost = sum(a.price * a.count for a in add)
    note = (f"the estimator did not finish within the time limit ({est.stopped}): {len(est.pending)} required pod(s) "
            "left pending; this is its answer so far, not a complete one (give a longer --time-limit)")
    grown_final = replace(cluster, nodes=tuple(cluster.nodes) + tuple(n for _, n in new_nodes))
    return ProvisionAnswer(Status.UNKNOWN, tuple(add), cost, 0.0, tuple(n for _, n in new_nodes), placements, pending,
                           grown_final, est, time.perf_counter() - started, (note,))


def summary(nodes: Sequence[tuple[Offer, Node]], node_types: NodeTypes) -> list[Added]:
    """Per type and zone: how many, at what price; in the node types' order, then by zone."""
    counts: dict[tuple[str, str | None], int] = defaultdict(int)
    for o, _ in nodes:
        counts[(o.type.name, o.zone)] += 1
    out = []
    for t in node_types.types:
        for (name, zone), k in sorted(counts.items(), key=lambda kv: kv[0][1] or ""):
            if name == t.name:
                out.append(Added(t.name, zone, k, t.price))
    return out


def verify_answer(a: ProvisionAnswer, policy: Policy | None = None, profile: Profile = DEFAULT_PROFILE) -> None:
    check(a.grown, Plan(placements=a.placements, pending=a.pending, status=a.status), policy, profile)
