"""provision's joint model on large inputs: the pending pods placed on the existing nodes' free room AND on new
nodes in one CP-SAT model, so that which pods the existing nodes keep is decided together with what is bought.

Why: on full clusters the answer's cost is decided by the pods the existing nodes keep (their free room is
fragmented); fixing that placement first (kube-scheduler's, or solve's largest-first) and buying for what is left
over cost 30-50 % more than the covering bound. Here both are one decision.

How it stays small at thousands of pods: identical pods are one class with an integer count per node (solve's
classes), and classes whose verdict on a node is the node alone ("local": no inter-pod rule of their own, no host
ports, matched by no one's required anti-affinity nor by a spread constraint) are merged further into groups
with one request vector and the same per-node bounds. New nodes are slots per offer (a type in a zone), each a
bin with an `open[...]` literal; identical slots of an offer open in order.

Which rules the model states exactly (every other pod "falls back honestly", below):
- per node: every rule solve's per-(class, node) bound states (resources, taints, node affinity and selectors,
  node name, volumes...), as counts per node and the node's free room per resource;
- zone spread (`topology.kubernetes.io/zone`, DoNotSchedule, no minDomains, nodeTaintsPolicy Ignore): per zone
  the matching pods C(z) (existing ones on nodes the pod's node affinity admits, plus the model's), and for a
  zone z that receives a pod of the class, C(z) - C(z') <= maxSkew for every other domain z' (kube-scheduler's
  filter on the final state with the pod itself removed). Every pending pod the selector matches is modelled
  per class (counted);
- required pod affinity over zones: the class only in zones where a target pod is: existing, kept, or placed
  there by the model (a pod its own term matches is rest: kube-scheduler's first-pod exception is not stated);
- required anti-affinity per host against the pod's own kind only: at most one pod per node, none on a node
  holding an existing (or kept) pod it repels.
Every other pod ("rest": other anti-affinity, host ports, hostname spread, other topology keys, a pod matched
by someone else's anti-affinity, ...) keeps kube-scheduler's placement when the estimator put it on an existing node;
the ones it put on new nodes are searched afterwards by the caller on solve's model (every rule). The closure
keeps this sound: a class whose rules read a rest pod, or whose pods a rest pod's rules read, is rest too.

The answer is verified on the grown cluster by the caller before it counts; it is a search, not a bound (the
bound stays the covering program's, optimizer.provision.bound).
"""
from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import numpy as np
from ortools.sat.python import cp_model

from ...models.nodetypes import HOSTNAME_LABEL, ZONE_LABEL, NodeTypes, new_node
from ...models.objects import Cluster, Node, Pod
from ..framework import Profile
from ..nodeaffinity.filtering import required_matches
from ..problem import PodClass, build_problem
from ..runner import NEVER, Interrupt, SolverParams, Status, charge, now, run
from .bound import MICRO, existing_free, micro_cost, resources_of
from .clock import charge_knapsack, charge_lp, knapsack_limits, lp_options, stamp, wall_over
from .estimator import Estimate, Offer, fresh_name, offer_name, offer_probes
from .search import add_type_limits

LOCAL, ZONE, REST = "local", "zone", "rest"
# of the joint model's time: its start (the relaxation and the knapsack fills, 3-7 s each at 200 nodes on a loaded
# machine); two fills run (zone pods moved within their zones, and kept: each won on one shape of the 200-node
# family), the third (values by cpu and memory shares) only within this share: it lost on every row measured since
# the improvement rounds came (2/plain 15.3 against 14.62, 1/spread 18.2 against 15.1), which take the rest
ROUNDING_SHARE = 0.3
# the improvement rounds after the first answer (_improve): each frees a few existing nodes and new nodes around
# the least loaded new node and lets CP-SAT re-place their pods, the rest of the answer fixed
KNAPSACK_SECONDS = 0.1  # one existing node's knapsack fill, at most (most end in 5-15 ms)
# of what is left after the fill: CP-SAT's search with the fill's counts on the existing nodes kept (a small packing
# of what is left). On the tune rows of the 200-node family it never found an answer cheaper than the fill's, while
# its half of the time (9-17 s of the clock) was what the improvement rounds lacked (docs/capacity.md)
FLOOR_SHARE = 0.15

CHECK_SECONDS = 1.0  # whether the model admits another search's answer as its start (all fixed: presolve decides)
IMPROVE_MIN_SECONDS = 1.0  # a round only with this much of the joint model's time left
IMPROVE_ROUND_SECONDS = 1.5  # one round's CP-SAT run, at most
IMPROVE_ROUND_CHARGE = 0.3  # charged per round for its Python work (choosing the nodes, cloning the model)
IMPROVE_EXISTING = 16  # existing nodes freed per round: half the roomiest, half at random
IMPROVE_NEW = 4  # opened new nodes freed per round, the target among them
# rounds in a row that neither made the answer cheaper nor drained a target (each of the three least loaded new
# nodes tried twice): then targets at random, or, when the answer is not cheaper than the estimator's, the rounds
# stop and the time goes to the older search
IMPROVE_GIVE_UP = 6
# building the model and the relaxation's fill in Python, per count variable of the model, in seconds of the clock
# (planned before building: a model whose building alone would take the joint model's share is not built). On the
# 200-node family 30,000-90,000 variables, their building and fill 5-10 s at load 1-2
BUILD_SECONDS_PER_VARIABLE = 1e-4
# and before that, solve's problem for the whole cluster, whose size the model's is counted from: per pod and
# existing node, in seconds of the clock (5,000 nodes, 77,697 pods: 100 s of wall time on an idle machine; 1,000
# nodes, 25,638 pods: 3.2 s). Not begun when that alone is more than the model's share
START_SECONDS_PER_POD_NODE = 6e-7


@dataclass(frozen=True)
class Joint:
    nodes: list[tuple[Offer, Node]]  # the new nodes opened, named <type>-<zone>-<i>
    placements: dict[str, str]  # the modelled pods and the rest pods kept on existing nodes
    rest: list[Pod]  # rest pods still to place (the estimator had put them on new nodes)
    status: Status  # the CP-SAT run's
    kinds: dict[str, int] = field(default_factory=dict)  # pods per kind (local, zone, rest)
    seconds: float = 0.0
    improved: tuple[int, float, float] = (0, 0.0, 0.0)  # improvement rounds run, the cost before and after them


def _term_namespaces(term, owner: Pod) -> frozenset[str] | None:
    """The namespaces a pod (anti-)affinity term selects; None: any (a namespaceSelector: conservative)."""
    if term.namespace_selector is not None:
        return None
    return frozenset(term.namespaces) if term.namespaces else frozenset((owner.namespace,))


def _term_matches(term, owner: Pod, pod: Pod) -> bool:
    ns = _term_namespaces(term, owner)
    return (ns is None or pod.namespace in ns) and term.label_selector is not None and \
        term.label_selector.matches(pod.labels)


def _spread_matches(c, owner: Pod, pod: Pod) -> bool:
    return pod.namespace == owner.namespace and c.label_selector is not None and c.label_selector.matches(pod.labels)


def _hard(p: Pod) -> list:
    return [c for c in p.spread_constraints if c.when_unsatisfiable == "DoNotSchedule"]


def self_anti(c: PodClass, classes: Sequence[PodClass]) -> bool:
    """The class's required anti-affinity is per host and repels only pods of its own class among the pending
    ones: stated in the model as at most one pod per node, none beside an existing pod it matches."""
    p = c.rep
    return bool(p.affinity.anti_required) and all(
        t.topology_key == HOSTNAME_LABEL and t.namespace_selector is None and _term_matches(t, p, p)
        and not any(d.index != c.index and _term_matches(t, p, d.rep) for d in classes)
        for t in p.affinity.anti_required)


def classify(classes: Sequence[PodClass], existing: Sequence[Pod]) -> list[str]:
    """Each class's kind: LOCAL, ZONE (its rules are zone-level or per-host against itself, stated in the model,
    and the class is kept apart) or REST."""
    own = {c.index for c in classes if self_anti(c, classes)}
    anti = [(t, p, -1) for p in existing for t in p.affinity.anti_required] + \
        [(t, c.rep, c.index) for c in classes for t in c.rep.affinity.anti_required]
    kind: list[str] = []
    for c in classes:
        p = c.rep
        hard = _hard(p)
        repelled = any(_term_matches(t, o, p) for t, o, owner in anti if not (owner == c.index and c.index in own))
        if p.host_ports or (p.affinity.anti_required and c.index not in own) or repelled or \
                any(_term_matches(t, p, p) for t in p.affinity.pod_required):
            # (a pod its own affinity term matches may go anywhere when nothing matches yet: kube-scheduler's
            # special case, not stated in the model)
            kind.append(REST)
        elif not hard and not p.affinity.pod_required:
            kind.append(ZONE if c.index in own else LOCAL)
        elif all(s.topology_key == ZONE_LABEL and s.min_domains is None and s.node_taints_policy == "Ignore"
                 and s.node_affinity_policy == "Honor" for s in hard) and \
                all(t.topology_key == ZONE_LABEL and t.namespace_selector is None for t in p.affinity.pod_required):
            kind.append(ZONE)
        else:
            kind.append(REST)
    # closure: a spread selector counts pods of every kind it matches; a rest pod's rules must not see modelled
    # pods move (its spread counts, its required affinity's targets)
    changed = True
    while changed:
        changed = False
        for c in classes:
            p = c.rep
            for s in _hard(p):
                matched = [d for d in classes if _spread_matches(s, p, d.rep)]
                if kind[c.index] == REST:
                    for d in matched:
                        if kind[d.index] != REST:
                            kind[d.index] = REST
                            changed = True
                elif any(kind[d.index] == REST for d in matched):
                    kind[c.index] = REST
                    changed = True
                else:
                    for d in matched:
                        if kind[d.index] == LOCAL:  # counted: kept as its own class
                            kind[d.index] = ZONE
                            changed = True
            for t in p.affinity.pod_required:
                for d in classes:
                    if kind[c.index] == REST and kind[d.index] != REST and _term_matches(t, p, d.rep):
                        kind[d.index] = REST
                        changed = True
                    elif kind[c.index] == ZONE and kind[d.index] == LOCAL and _term_matches(t, p, d.rep):
                        kind[d.index] = ZONE  # a target the model places: kept as its own class
                        changed = True
                    elif kind[c.index] == ZONE and kind[d.index] == REST and _term_matches(t, p, d.rep):
                        kind[c.index] = REST  # a target the model does not place: the pod goes with it
                        changed = True
    return kind


def joint_search(base: Cluster, offers: Sequence[Offer], node_types: NodeTypes, profile: Profile, est: Estimate,
                 slots: dict[int, int], params: SolverParams, limit: float, lower_micro: int = 0,
                 interrupt: Interrupt = NEVER, hints: Sequence[tuple[list[tuple[Offer, str]], dict[str, str]]] = (),
                 why: list[str] | None = None) -> Joint | None:
    """The joint CP-SAT model on `base` (its pending pods: the required ones) with `slots[i]` new-node slots of
    offer i, hinted with the estimator's answer (and `hints`: other answers as (their new nodes' offers and names,
    placements)); `lower_micro`: a proven lower bound on the cost (a cut). None: no solution within `limit`, or a
    model too large to build within it (said in `why`)."""
    started = now()  # the deterministic clock's (optimizer.provision.clock): every share below is planned on it
    wall_started = time.perf_counter()
    n_ex = len(base.nodes)
    pods = len(base.pods) + len(base.pending)
    planned = START_SECONDS_PER_POD_NODE * pods * n_ex
    if planned > limit:
        if why is not None:
            why.append(f"not built: solve's problem for {n_ex:,} nodes and {pods:,} pods would take {planned:.0f}s to "
                       f"build, more than its {limit:.1f}s")
        return None
    probes = offer_probes(offers)
    problem = build_problem(replace(base, nodes=tuple(base.nodes) + tuple(probes)), profile)
    classes = problem.classes
    ub = problem.ub.matrix
    kind = classify(classes, base.pods)
    existing_names = {n.name: i for i, n in enumerate(base.nodes)}
    res_keys = resources_of(base.pending)
    state = problem.state
    free = existing_free(base, state, res_keys)
    alloc = np.array([[int(o.type.node.allocatable.get(r, 0)) for r in res_keys] for o in offers], dtype=np.int64)

    def req_of(c: PodClass) -> tuple[int, ...]:
        return tuple(1 if r == "pods" else int(c.rep.requests.get(r, 0)) for r in res_keys)

    # rest pods: kube-scheduler's place when it is an existing node (their room is taken), else left to the caller
    placements: dict[str, str] = {}
    rest: list[Pod] = []
    for c in classes:
        if kind[c.index] != REST:
            continue
        for p in c.pods:
            on = est.placements.get(p.key)
            if on in existing_names:
                placements[p.key] = on
                free[existing_names[on]] -= np.array(req_of(c))
            else:
                rest.append(p)
    if (free < 0).any():
        return None  # cannot happen with a valid estimator answer; say nothing rather than guess

    node_zone = [n.labels.get(ZONE_LABEL) for n in base.nodes]
    zones_all = sorted({z for z in node_zone if z} | {o.zone for o in offers if o.zone})

    # groups: local classes merged by request vector and per-node bounds; zone classes one each
    groups: dict[tuple, list[int]] = defaultdict(list)
    for c in classes:
        if kind[c.index] == LOCAL:
            groups[(LOCAL, req_of(c), ub[c.index].tobytes())].append(c.index)
        elif kind[c.index] == ZONE:
            groups[(ZONE, c.index)].append(c.index)
    glist = list(groups.values())
    size = [sum(classes[c].size for c in members) for members in glist]
    greq = [req_of(classes[members[0]]) for members in glist]

    # per group: per existing node and per offer the most pods (0: not there)
    allowed_zone: list[set[str] | None] = []
    for members in glist:
        rep = classes[members[0]].rep
        if kind[members[0]] != ZONE:
            allowed_zone.append(None)
            continue
        ok = set(zones_all)
        for t in rep.affinity.pod_required:  # zones where a pod matches the term: existing, kept, or placed here
            there = {node_zone[existing_names[p.node_name]] for p in base.pods
                     if p.node_name in existing_names and _term_matches(t, rep, p)}
            there |= {node_zone[existing_names[placements[p.key]]] for p in base.pending
                      if p.key in placements and _term_matches(t, rep, p)}
            if not any(kind[d.index] == ZONE and _term_matches(t, rep, d.rep) for d in classes):
                ok &= there - {None}
        allowed_zone.append(ok)
    cap_ex: list[np.ndarray] = []
    cap_new: list[np.ndarray] = []
    for gi, members in enumerate(glist):
        row_ex = np.zeros(n_ex, dtype=np.int64)
        row_new = np.zeros(len(offers), dtype=np.int64)
        for c in members:
            row_ex += ub[c, :n_ex]
            row_new += ub[c, n_ex:]
        req = np.array(greq[gi])
        pos = req > 0
        fit_ex = np.min(np.where(pos, free // np.where(pos, req, 1), 1 << 40), axis=1)
        row_ex = np.minimum(np.minimum(row_ex, fit_ex), size[gi])
        row_new = np.minimum(row_new, size[gi])
        if allowed_zone[gi] is not None:
            row_ex[[node_zone[n] not in allowed_zone[gi] for n in range(n_ex)]] = 0
            row_new[[o.zone not in allowed_zone[gi] for o in offers]] = 0
        rep = classes[members[0]].rep
        if kind[members[0]] == ZONE and rep.affinity.anti_required:  # per host against itself (self_anti)
            row_ex = np.minimum(row_ex, 1)
            row_new = np.minimum(row_new, 1)
            for q in list(base.pods) + [p for p in base.pending if p.key in placements]:
                on = q.node_name if q.node_name in existing_names else placements.get(q.key)
                if on in existing_names and any(_term_matches(t, rep, q) for t in rep.affinity.anti_required):
                    row_ex[existing_names[on]] = 0
        cap_ex.append(row_ex)
        cap_new.append(row_new)

    # the model's size before it is built: building it is Python work no solver charges (a count variable per
    # group and node or slot, and their rows), so a model too large for the joint model's share of the clock is
    # not built at all, and the caller's older search has the time (production 1,000 of bench_provision's sizes:
    # 100 s of building and relaxing past a 60 s limit)
    size_vars = int(sum(np.count_nonzero(r) for r in cap_ex)) + sum(
        slots.get(i, 0) * sum(1 for gi in range(len(glist)) if cap_new[gi][i] > 0) for i in range(len(offers)))
    if size_vars * BUILD_SECONDS_PER_VARIABLE > limit:
        if why is not None:
            why.append(f"not built: {size_vars:,} count variables would take "
                       f"{size_vars * BUILD_SECONDS_PER_VARIABLE:.0f}s to build, more than its {limit:.1f}s")
        return None
    m = cp_model.CpModel()
    name_of = [classes[members[0]].name + (f"+{len(members) - 1}" if len(members) > 1 else "") for members in glist]
    x_ex: dict[tuple[int, int], cp_model.IntVar] = {}
    top: dict[tuple[int, int], int] = {}  # each x_ex's upper bound
    for gi in range(len(glist)):
        for n in np.flatnonzero(cap_ex[gi]):
            top[(gi, int(n))] = int(cap_ex[gi][n])
            x_ex[(gi, int(n))] = m.new_int_var(0, int(cap_ex[gi][n]), f"x[{name_of[gi]},{base.nodes[n].name}]")
    slot_list: list[tuple[int, int]] = []  # (offer, k)
    opened: dict[int, cp_model.IntVar] = {}
    x_new: dict[tuple[int, int], cp_model.IntVar] = {}
    for i, o in enumerate(offers):
        for k in range(slots.get(i, 0)):
            s = len(slot_list)
            slot_list.append((i, k))
            label = f"{offer_name(o)}-slot-{k + 1}"
            opened[s] = m.new_bool_var(f"open[{label}]")
            for gi in range(len(glist)):
                if cap_new[gi][i] > 0:
                    x_new[(gi, s)] = m.new_int_var(0, int(cap_new[gi][i]), f"x[{name_of[gi]},{label}]")
    by_group_ex: dict[int, list[tuple[int, cp_model.IntVar]]] = defaultdict(list)
    by_node: dict[int, list[tuple[int, cp_model.IntVar]]] = defaultdict(list)
    for (gi, n), v in x_ex.items():
        by_group_ex[gi].append((n, v))
        by_node[n].append((gi, v))
    by_group_new: dict[int, list[tuple[int, cp_model.IntVar]]] = defaultdict(list)
    by_slot: dict[int, list[tuple[int, cp_model.IntVar]]] = defaultdict(list)
    for (gi, s), v in x_new.items():
        by_group_new[gi].append((s, v))
        by_slot[s].append((gi, v))
    for gi in range(len(glist)):  # every modelled pod placed
        terms = [v for _, v in by_group_ex[gi]] + [v for _, v in by_group_new[gi]]
        if not terms:
            return None
        m.add(sum(terms) == size[gi])
    for n, members in by_node.items():  # each existing node's free room
        for k in range(len(res_keys)):
            entries = [(greq[gi][k], v) for gi, v in members if greq[gi][k] > 0]
            if entries and sum(greq[gi][k] * top[(gi, n)] for gi, _ in members) > free[n, k]:
                m.add(sum(e * v for e, v in entries) <= int(free[n, k]))
    for s, (i, _) in enumerate(slot_list):  # each new node's allocatable, only when open
        members = by_slot.get(s, [])
        y = opened[s]
        if not members:
            m.add(y == 0)
            continue
        for k in range(len(res_keys)):
            entries = [(greq[gi][k], v) for gi, v in members if greq[gi][k] > 0]
            if entries:
                m.add(sum(e * v for e, v in entries) <= int(alloc[i, k]) * y)
        m.add(sum(v for _, v in members) >= y)
    by_offer: dict[int, list[int]] = defaultdict(list)
    for s, (i, _) in enumerate(slot_list):
        by_offer[i].append(s)
    for ss in by_offer.values():  # identical slots open in order
        for a, b in zip(ss, ss[1:]):
            m.add(opened[a] >= opened[b])
    add_type_limits(m, node_types, opened, lambda s: offers[slot_list[s][0]].type)

    # zone spread: per constraint, the matching pods per zone and maxSkew between a receiving zone and the others
    group_of = {c: gi for gi, members in enumerate(glist) for c in members}
    for gi, members in enumerate(glist):
        if kind[members[0]] != ZONE:
            continue
        rep = classes[members[0]].rep
        for sc in _hard(rep):
            eligible_ex = [required_matches(rep, node) for node in base.nodes]
            eligible_new = [required_matches(rep, probes[i]) for i in range(len(offers))]
            domains = sorted({node_zone[n] for n in range(n_ex) if eligible_ex[n] and node_zone[n]} |
                             {offers[i].zone for i in range(len(offers)) if eligible_new[i] and offers[i].zone})
            count: dict[str, list] = {z: [] for z in domains}
            base_count = {z: 0 for z in domains}
            for p in base.pods:
                n = existing_names.get(p.node_name)
                if n is not None and eligible_ex[n] and node_zone[n] in base_count and _spread_matches(sc, rep, p):
                    base_count[node_zone[n]] += 1
            for d in classes:
                if not _spread_matches(sc, rep, d.rep):
                    continue
                dg = group_of.get(d.index)
                if dg is None:
                    return None  # a rest class counted: the closure forbids it
                for n, v in by_group_ex[dg]:
                    if eligible_ex[n] and node_zone[n] in count:
                        count[node_zone[n]].append(v)
                for s, v in by_group_new[dg]:
                    i = slot_list[s][0]
                    if eligible_new[i] and offers[i].zone in count:
                        count[offers[i].zone].append(v)
            total = {z: base_count[z] + sum(count[z]) for z in domains}
            # a zone only new nodes can bring is a domain only when one of them is opened there
            fixed_domains = {node_zone[n] for n in range(n_ex) if eligible_ex[n] and node_zone[n]}
            present: dict[str, object] = {}
            for z in domains:
                if z in fixed_domains:
                    continue
                ys = [opened[s] for s, (i, _) in enumerate(slot_list) if offers[i].zone == z and eligible_new[i]]
                dz = m.new_bool_var(f"domain[{name_of[gi]},{z}]")
                for y in ys:
                    m.add(dz >= y)
                m.add(sum(ys) >= dz) if ys else m.add(dz == 0)
                present[z] = dz
            for z in domains:
                mine = [v for n, v in by_group_ex[gi] if node_zone[n] == z] + \
                       [v for s, v in by_group_new[gi] if offers[slot_list[s][0]].zone == z]
                if not mine:
                    continue
                b = m.new_bool_var(f"receives[{name_of[gi]},{z}]")
                m.add(sum(mine) <= size[gi] * b)
                for z2 in domains:
                    if z2 != z:
                        lits = [b] + ([present[z2]] if z2 in present else [])
                        m.add(total[z] - total[z2] <= sc.max_skew).only_enforce_if(lits)

    # required zone affinity whose targets the model places too: a zone without an existing (or kept) target
    # receives the class only when the model puts a target there
    for gi, members in enumerate(glist):
        rep = classes[members[0]].rep
        if kind[members[0]] != ZONE:
            continue
        for t in rep.affinity.pod_required:
            targets = [group_of[d.index] for d in classes if kind[d.index] == ZONE and _term_matches(t, rep, d.rep)]
            if not targets:
                continue
            there = {node_zone[existing_names[p.node_name]] for p in base.pods
                     if p.node_name in existing_names and _term_matches(t, rep, p)}
            there |= {node_zone[existing_names[placements[p.key]]] for p in base.pending
                      if p.key in placements and _term_matches(t, rep, p)}
            for z in zones_all:
                if z in there:
                    continue
                mine = [v for n, v in by_group_ex[gi] if node_zone[n] == z] + \
                       [v for s, v in by_group_new[gi] if offers[slot_list[s][0]].zone == z]
                if not mine:
                    continue
                hosts = [v for dg in targets for n, v in by_group_ex[dg] if node_zone[n] == z and dg != gi] + \
                        [v for dg in targets for s, v in by_group_new[dg] if offers[slot_list[s][0]].zone == z
                         and dg != gi]
                if not hosts:
                    for v in mine:
                        m.add(v == 0)
                    continue
                b = m.new_bool_var(f"needs[{name_of[gi]},{z}]")
                m.add(sum(mine) <= size[gi] * b)
                m.add(sum(hosts) >= b)

    price = {s: round(offers[i].type.price * MICRO) for s, (i, _) in enumerate(slot_list)}
    cost = sum(price[s] * y for s, y in opened.items())
    if lower_micro > 0:
        m.add(cost >= lower_micro)
    m.minimize(cost)

    # hints: the estimator's answer (valid: kube-scheduler's filters on the final state), its new nodes on the
    # first slots of their offer
    def hint_counts(new: list[tuple[Offer, str]], on: dict[str, str]) -> tuple[dict, dict]:
        where: dict[str, tuple[str, int]] = {n.name: ("ex", i) for i, n in enumerate(base.nodes)}
        used: dict[int, int] = defaultdict(int)
        for o, name in new:
            i = offers.index(o)
            if used[i] < slots.get(i, 0):
                where[name] = ("new", by_offer[i][used[i]])
            used[i] += 1
        ce: dict[tuple[int, int], int] = defaultdict(int)
        cn: dict[tuple[int, int], int] = defaultdict(int)
        for c in classes:
            gi = group_of.get(c.index)
            if gi is None:
                continue
            for p in c.pods:
                w = where.get(on.get(p.key, ""))
                if w is None:
                    continue
                (ce if w[0] == "ex" else cn)[(gi, w[1])] += 1
        return ce, cn

    est_new = [(o, node.name) for (o, k), node in zip([(o, 1) for o, k in est.add for _ in range(k)], est.nodes)]
    best = None
    tries = [hint_counts(new, on) for new, on in [(est_new, est.placements), *hints]]
    local = [kind[members[0]] == LOCAL for members in glist]
    # the groups with zone rules start where the estimator put them (its answer is valid, and their spread counts
    # and affinity targets are then the estimator's); the local groups are the relaxation's to round
    est_ce, est_cn = tries[0]
    keep_ce = {k: v for k, v in est_ce.items() if not local[k[0]] and k in x_ex and v <= top[k]}
    keep_cn = {k: v for k, v in est_cn.items() if not local[k[0]] and k in x_new}
    rounded = _rounded(glist, size, greq, free, alloc, cap_ex, cap_new, top, offers, slots, by_offer, price,
                       max(0.5, (limit - (now() - started)) * ROUNDING_SHARE), local, res_keys,
                       keep_ce, keep_cn, node_zone)
    floor: dict[tuple[int, int], int] = {}
    if rounded is not None:
        floor = rounded[2]
        tries.insert(0, rounded[:2])

    def start_of(ce: dict, cn: dict) -> list[int] | None:
        """A hint's counts as the model's values, when it places every modelled pod on the model's slots."""
        placed = defaultdict(int)
        for (gi, _), k in list(ce.items()) + list(cn.items()):
            placed[gi] += k
        if any(placed[gi] != size[gi] for gi in range(len(glist))):
            return None
        start = [0] * len(m.proto.variables)
        for k, v in x_ex.items():
            start[v.index] = ce.get(k, 0)
        for k, v in x_new.items():
            start[v.index] = cn.get(k, 0)
        used = {s for (_, s), k in cn.items() if k > 0}
        for s, y in opened.items():
            start[y.index] = int(s in used)
        return start

    def admits(ce: dict, cn: dict) -> bool:
        """Does the model admit this start (its counts and open slots fixed, the rest CP-SAT's)? A hint from
        another search (the pattern program's dive) may break what the model keeps: the rest pods' room, the slots."""
        start = start_of(ce, cn)
        if start is None:
            return False
        sub = m.clone()
        for v in [*x_ex.values(), *x_new.values(), *opened.values()]:
            sub.add(sub.get_int_var_from_proto_index(v.index) == start[v.index])
        got = run(sub, params, CHECK_SECONDS, interrupt=interrupt, portfolio=False, charge_work=True)
        return got.values is not None

    # the other searches' hints are checked before use, and so is the relaxation's rounded fill when some group
    # has zone rules: its leftover packing may move a zone group off the estimator's place (an answer that broke
    # a zone spread was chosen over CP-SAT's, found by tests/test_provision_joint.py's exhaustive property); the
    # local groups' fill keeps every per-node bound and room the model states
    extra = set(range(len(tries) - len(hints), len(tries)))
    if rounded is not None and not all(local):
        extra.add(0)
    for t, (ce, cn) in enumerate(tries):
        if all(ce.get(k, 0) <= top[k] for k in x_ex) and \
                all((gi, n) in x_ex for gi, n in ce) and all((gi, s) in x_new for gi, s in cn):
            c_cost = sum(price[s] for s in {s for _, s in cn})
            if (best is None or c_cost < best[0]) and (t not in extra or admits(ce, cn)):
                best = (c_cost, ce, cn)

    def hint(model: cp_model.CpModel, ce: dict, cn: dict) -> None:
        model.clear_hints()
        for k, v in x_ex.items():
            model.add_hint(v, ce.get(k, 0))
        for k, v in x_new.items():
            model.add_hint(v, cn.get(k, 0))
        used_slots = {s for _, s in cn}
        for s, y in opened.items():
            model.add_hint(y, int(s in used_slots))

    if best is not None:
        hint(m, best[1], best[2])
    res = None
    if floor:
        # first the neighbourhood of the relaxation: the existing nodes keep at least its rounded-down pods, so
        # CP-SAT works on what is left (a small packing); then the whole model from that answer
        sub = m.clone()
        for k, lo in floor.items():
            sub.add(sub.get_int_var_from_proto_index(x_ex[k].index) >= lo)
        if best is not None and any(best[1].get(k, 0) < lo for k, lo in floor.items()):
            # a complete hint the neighbourhood breaks: OR-Tools 9.15's interleaved search aborts the process on
            # one (CHECK heuristics.fixed_search != nullptr, while it repairs it), so the neighbourhood has none
            sub.clear_hints()
        res = run(sub, params, max(0.1, (limit - (now() - started)) * FLOOR_SHARE), interrupt=interrupt)
        if res.values is not None:
            vals = res.values
            hint(m, {k: vals[v.index] for k, v in x_ex.items()}, {k: vals[v.index] for k, v in x_new.items()})
    values = None if res is None else res.values
    status = None if res is None else res.status

    hinted = None if best is None else start_of(best[1], best[2])
    if values is None and hinted is None and not interrupt.is_set():
        # no answer from the fill's neighbourhood and no complete hint: the whole model, with half of what is left
        # (the rest for the improvement rounds, or, when it finds nothing, the older search). With a complete hint
        # the rounds start from it instead: on the 200-node family the whole model found nothing within its half
        # wherever the neighbourhood had found nothing, and the rounds are where an answer improves
        whole = run(m, params, max(0.1, (limit - (now() - started)) * 0.5), interrupt=interrupt)
        values, status = whole.values, whole.status
    if hinted is not None and (values is None or best[0] < _cost(values, opened, price)):
        # a hint cheaper than CP-SAT's answer (the estimator's, where the relaxation's fill left more to buy), or
        # CP-SAT found none in its time (on 3/spread of the 200-node family it found none from the fill's hint): the
        # improvement rounds start from it
        values, status = hinted, Status.FEASIBLE
    if values is None:
        return None
    stamp("joint model's start")
    rounds = (0, 0.0, 0.0)
    # the improvement rounds end early enough for the caller's search of the rest pods (on solve's model)
    improve_end = started + limit - (max(3.0, 0.3 * limit) if rest else 0.0)
    if not interrupt.is_set() and improve_end - now() > IMPROVE_MIN_SECONDS:
        give_up_above = micro_cost(est.add) if not est.pending else 0
        better, n_rounds = _improve(m, params, values, x_ex, x_new, opened, slot_list, by_offer, price, greq, free,
                                    alloc, res_keys, improve_end, interrupt, give_up_above)
        before = _cost(values, opened, price) / MICRO
        rounds = (n_rounds, before, before)
        if better is not None:
            values, status = better, Status.FEASIBLE
            rounds = (n_rounds, before, _cost(values, opened, price) / MICRO)
    vals = values
    seq: dict[int, int] = defaultdict(int)
    rename: dict[int, str] = {}
    taken = set(existing_names)
    nodes: list[tuple[Offer, Node]] = []
    for s, (i, _) in enumerate(slot_list):
        if vals[opened[s].index]:
            o = offers[i]
            seq[i] += 1
            rename[s] = fresh_name(o, seq[i], taken)
            nodes.append((o, new_node(o.type, rename[s], o.zone)))
    queue = {gi: [p for c in members for p in classes[c].pods] for gi, members in enumerate(glist)}
    for (gi, n), v in sorted(x_ex.items()):
        for _ in range(vals[v.index]):
            placements[queue[gi].pop(0).key] = base.nodes[n].name
    for (gi, s), v in sorted(x_new.items()):
        for _ in range(vals[v.index]):
            placements[queue[gi].pop(0).key] = rename[s]
    kinds = {k: sum(c.size for c in classes if kind[c.index] == k) for k in (LOCAL, ZONE, REST)}
    return Joint(nodes, placements, rest, status, kinds, time.perf_counter() - wall_started, rounds)


def _cost(values: Sequence[int], opened: dict, price: dict[int, int]) -> int:
    """The price (in MICRO units) of the new nodes an answer (`values`, by variable index) opens."""
    return sum(price[s] * values[y.index] for s, y in opened.items())


def _improve(m: cp_model.CpModel, params: SolverParams, values: list[int], x_ex: dict, x_new: dict, opened: dict,
             slot_list: list[tuple[int, int]], by_offer: dict[int, list[int]], price: dict[int, int],
             greq: list[tuple[int, ...]], free: np.ndarray, alloc: np.ndarray, res_keys: Sequence[str], end: float,
             interrupt: Interrupt, give_up_above: int = 0) -> tuple[list[int] | None, int]:
    """Large-neighbourhood rounds on the joint model from an answer (`values`, by variable index): each round
    targets the least loaded new node, frees it, a few other new nodes (and the next unopened slot of every
    cheaper offer, so that a cheaper type can take over), and existing nodes (the roomiest and some at random), fixes
    every other count at the answer's, and lets CP-SAT minimise the cost first and the target's load second:
    rounds that cannot close the target yet move its pods into the room they find, and a later round closes it.
    Every constraint of the model holds in every round (the fixed part is a solution's). After IMPROVE_GIVE_UP
    rounds in a row without progress the targets are drawn at random, and the rounds stop when the answer costs
    `give_up_above` or more (the estimator's price: the caller's older search then has the time). The values
    improved (None when no round made the answer cheaper) and the rounds run."""
    rng = np.random.default_rng(params.seed)
    vals = list(values)
    weigh = [k for k, r in enumerate(res_keys) if r != "pods"]
    slot_offer = {s: i for s, (i, _) in enumerate(slot_list)}
    by_node: dict[int, list[tuple[int, cp_model.IntVar]]] = defaultdict(list)
    for (gi, n), v in x_ex.items():
        by_node[n].append((gi, v))
    by_slot: dict[int, list[tuple[int, cp_model.IntVar]]] = defaultdict(list)
    for (gi, s), v in x_new.items():
        by_slot[s].append((gi, v))
    every = [v.index for v in x_ex.values()] + [v.index for v in x_new.values()] + [y.index for y in opened.values()]

    def load(s: int, vs: list[int]) -> float:
        o = slot_offer[s]
        return sum(greq[gi][k] / max(1, alloc[o, k]) * vs[v.index] for gi, v in by_slot[s] for k in weigh)

    start_cost = _cost(vals, opened, price)
    misses = 0
    rounds = 0
    nodes = sorted(by_node)
    while end - now() > IMPROVE_MIN_SECONDS and not interrupt.is_set():
        if wall_over("the joint model's improvement rounds"):
            break
        if misses >= IMPROVE_GIVE_UP and _cost(vals, opened, price) >= give_up_above:
            break  # stuck, and not cheaper than the estimator: the older search has the time left
        open_slots = [s for s, y in opened.items() if vals[y.index]]
        if not open_slots:
            break
        loads = {s: load(s, vals) for s in open_slots}
        order = sorted(open_slots, key=lambda s: (loads[s], s))
        # the least loaded (the three in turn while rounds fail), any at random once they are stuck
        t = order[misses % min(len(order), 3)] if misses < IMPROVE_GIVE_UP else int(rng.choice(order))
        o = slot_offer[t]
        last = max(s for s in by_offer[o] if vals[opened[s].index])
        if last != t:  # identical slots: the target's pods move to its offer's last opened slot, the one that may close
            mine = {gi: v for gi, v in by_slot[t]}
            theirs = {gi: v for gi, v in by_slot[last]}
            for gi in set(mine) & set(theirs):  # (the same groups: one offer's slots have the same bounds)
                a, b = mine[gi], theirs[gi]
                vals[a.index], vals[b.index] = vals[b.index], vals[a.index]
            t = last
        # existing nodes: half the roomiest, half at random
        # (room: the share of a target node that fits in it, the scarcer resource deciding)
        room = {n: min((free[n, k] - sum(greq[gi][k] * vals[v.index] for gi, v in by_node[n])) / max(1, alloc[o, k])
                       for k in weigh) for n in nodes}
        roomy = sorted(nodes, key=lambda n: (-room[n], n))[:IMPROVE_EXISTING // 2]
        chosen = set(roomy)
        rest_nodes = [n for n in nodes if n not in chosen]
        pick = list(roomy) + ([int(n) for n in rng.choice(rest_nodes, size=min(len(rest_nodes), IMPROVE_EXISTING -
                                                                                   len(roomy)), replace=False)]
                              if rest_nodes else [])
        others = [s for s in order if s != t]
        slots = {t} | ({int(s) for s in rng.choice(others[:3 * IMPROVE_NEW], size=min(len(others), IMPROVE_NEW - 1),
                                                    replace=False)} if others else set())
        fresh = set()
        for i, ss in by_offer.items():  # the next unopened slot of each cheaper offer (one as dear: the pods only move)
            nxt = [s for s in ss if not vals[opened[s].index]]
            if nxt and price[nxt[0]] < price[t]:
                fresh.add(nxt[0])
        slots |= fresh
        rounds += 1
        freed = {v.index for n in pick for _, v in by_node[n]} | {v.index for s in slots for _, v in by_slot[s]} | \
            {opened[s].index for s in slots}
        before_cost, before_load = _cost(vals, opened, price), load(t, vals)  # (t's contents as swapped above)
        sub = m.clone()
        proto = sub.proto
        for idx in every:
            if idx not in freed:
                dom = proto.variables[idx].domain
                dom[0] = vals[idx]
                dom[1] = vals[idx]
        sub.clear_hints()
        for idx in sorted(freed):
            sub.add_hint(sub.get_int_var_from_proto_index(idx), vals[idx])
        # the load to drain: the target's and the fresh slots' (else the pods only move to a fresh slot of the offer)
        target = sum(int(round(1000 * sum(greq[gi][k] / max(1, alloc[slot_offer[s], k]) for k in weigh))) *
                     sub.get_int_var_from_proto_index(v.index) for s in {t} | fresh for gi, v in by_slot[s])
        spend = sum(price[s] * sub.get_int_var_from_proto_index(opened[s].index) for s in slots)
        sub.minimize(spend * 10_000 + target)
        charge(IMPROVE_ROUND_CHARGE)  # the round's Python work (choosing, cloning the model)
        # one worker's sequential search, charged its own deterministic time when it ends proven (most rounds do):
        # a round's neighbourhood is a few thousand free variables of the whole model, which the per-variable charge
        # of a proven run priced at 0.85 s (85,000 variables on 3/anti) for 0.1-0.5 s of work, and the interleaved
        # portfolio took twice the wall time for the same answers. On the 200-node family: 4 rounds in the joint
        # model's time on 3/anti before, 8 after (docs/capacity.md)
        got = run(sub, params, min(IMPROVE_ROUND_SECONDS, end - now() - 0.5), interrupt=interrupt,
                  portfolio=False, charge_work=True)
        if got.values is None:
            misses += 1
            continue
        for idx in freed:
            vals[idx] = got.values[idx]
        after_cost, after_load = _cost(vals, opened, price), load(t, vals)
        misses = 0 if after_cost < before_cost or after_load < before_load - 1e-9 else misses + 1
    return (vals if _cost(vals, opened, price) < start_cost else None), rounds


def _rounded(glist, size, greq, free, alloc, cap_ex, cap_new, top, offers, slots, by_offer, price, limit, local,
             res_names, keep_ce, keep_cn, node_zone) -> tuple[dict, dict, dict] | None:
    """A starting answer from the linear relaxation (the covering program on the model's groups: existing nodes
    one by one, new nodes pooled per offer): its pods on existing nodes rounded down (still within each node's
    room), the pods left first fit on the existing nodes' remaining room, then first fit decreasing on new-node
    slots, the offers the relaxation buys most of first. (counts on existing nodes, counts on slots), or None."""
    from scipy.sparse import coo_matrix

    deadline = now() + limit
    hard_deadline = deadline + limit  # no knapsack after it (a loaded machine: an attempt started near the deadline)
    n_g, n_o, n_r = len(glist), len(offers), free.shape[1]
    cols: list[tuple] = []  # ("y", o) | ("x", g, n) | ("z", g, o)
    for o in range(n_o):
        cols.append(("y", o))
    for (gi, n) in top:
        cols.append(("x", gi, n))
    for gi in range(n_g):
        for o in np.flatnonzero(cap_new[gi]):
            cols.append(("z", gi, int(o)))
    index = {c: i for i, c in enumerate(cols)}
    ub = np.array([float(slots.get(c[1], 0)) if c[0] == "y" else float(top[(c[1], c[2])]) if c[0] == "x"
                   else float(size[c[1]]) for c in cols])
    cost = np.array([price[by_offer[c[1]][0]] / MICRO if c[0] == "y" and by_offer.get(c[1]) else 0.0 for c in cols])
    rows, cs, vals, lo, hi = [], [], [], [], []

    def row(entries, low, high):
        r = len(lo)
        for c, v in entries:
            rows.append(r); cs.append(c); vals.append(v)
        lo.append(low); hi.append(high)

    per_group: dict[int, list[int]] = defaultdict(list)
    per_node: dict[int, list[tuple[int, int]]] = defaultdict(list)
    per_offer: dict[int, list[tuple[int, int]]] = defaultdict(list)
    for i, c in enumerate(cols):
        if c[0] == "x":
            per_group[c[1]].append(i); per_node[c[2]].append((c[1], i))
        elif c[0] == "z":
            per_group[c[1]].append(i); per_offer[c[2]].append((c[1], i))
    for gi in range(n_g):
        row([(i, 1.0) for i in per_group[gi]], float(size[gi]), float(size[gi]))
    for n, members in per_node.items():
        for k in range(n_r):
            e = [(i, greq[gi][k] / max(1.0, free[n, k])) for gi, i in members if greq[gi][k] > 0]
            if e:
                row(e, -np.inf, free[n, k] / max(1.0, free[n, k]))
    for o, members in per_offer.items():
        for k in range(n_r):
            e = [(i, greq[gi][k] / max(1.0, alloc[o, k])) for gi, i in members if greq[gi][k] > 0]
            if e:
                row(e + [(index[("y", o)], -alloc[o, k] / max(1.0, alloc[o, k]))], -np.inf, 0.0)
    a = coo_matrix((vals, (rows, cs)), shape=(len(lo), len(cols))).tocsr()
    from scipy.optimize import linprog

    def relax(a) -> object:
        t0 = time.perf_counter()
        res = linprog(cost, A_ub=a[n_g:], b_ub=np.array(hi[n_g:]), A_eq=a[:n_g], b_eq=np.array(hi[:n_g]),
                      bounds=np.stack([np.zeros(len(cols)), ub], axis=1), method="highs", options=lp_options())
        # (its iterations are cheaper per nonzero than the pattern program's: 1.3 s where the pattern program's
        # rate says 6)
        charge_lp(res, a.nnz, "the joint model's relaxation", time.perf_counter() - t0, rate=0.3)
        return None if res.x is None or res.status != 0 else res

    res = relax(a)
    if res is None:
        return None
    # the relaxation's counts on the existing nodes, rounded down, are a fill of their own (cheaper than the
    # knapsacks': no knapsack runs). A second relaxation with at most one pod a new node for the groups that take
    # one a node (anti-affinity per host against itself), whose pods the pooled new nodes above hold whole: its
    # counts another fill (each won on rows of the 200-node family: docs/capacity.md)
    fracs = [{k: float(res.x[index[("x",) + k]]) for k in top}]
    for o, members in per_offer.items():
        for gi, i in members:
            if cap_new[gi][o] == 1 < size[gi]:
                row([(i, 1.0), (index[("y", o)], -1.0)], -np.inf, 0.0)
    if len(lo) > a.shape[0]:
        per_node_res = relax(coo_matrix((vals, (rows, cs)), shape=(len(lo), len(cols))).tocsr())
        if per_node_res is not None:
            fracs.append({k: float(per_node_res.x[index[("x",) + k]]) for k in top})
    # what one more pod of a group costs in the relaxation: its row's dual (the price of placing it elsewhere)
    dual = np.maximum(np.asarray(res.eqlin.marginals, dtype=float), 0.0)
    # the relaxation's duals value a pod by the resource its pool runs out of and nothing for the others: worth at
    # least its largest share of the cheapest new node that holds it (what it costs when bought alone)
    for gi in range(n_g):
        own = [price[by_offer[o][0]] / MICRO * max(greq[gi][k] / alloc[o, k] for k in range(n_r) if greq[gi][k] > 0)
               for o in range(n_o) if cap_new[gi][o] > 0 and by_offer.get(o) and (alloc[o] >= greq[gi]).all()]
        if own:
            dual[gi] = max(dual[gi], min(own))
    bought = {o: res.x[index[("y", o)]] for o in range(n_o)}
    main = max(range(n_o), key=lambda o: bought[o])
    groups_on: dict[int, list[int]] = defaultdict(list)
    for (gi, n) in top:
        groups_on[n].append(gi)
    ref = np.maximum(alloc.max(axis=0), 1)
    order = sorted(range(n_g), key=lambda gi: -max(greq[gi][k] / ref[k] for k in range(n_r)))
    nodes_of: dict[int, list[int]] = defaultdict(list)
    for (gi, n) in top:
        nodes_of[gi].append(n)
    pref = sorted(range(n_o), key=lambda o: -bought[o])
    slot_offer = {s: o for o, ss in by_offer.items() for s in ss}

    def attempt(value: np.ndarray | dict, quota: dict[tuple[int, str | None], int] | None):
        """quota None: the groups with zone rules where the estimator put them (keep_ce, keep_cn); else each may
        go anywhere within its zone, at most quota[(group, zone)] pods there (the estimator's count: the spread
        counts and affinity targets per zone stay the estimator's, so its rules still hold)."""
        left_ex = free.astype(np.int64).copy()
        ce: dict[tuple[int, int], int] = {}
        todo = list(size)
        q = dict(quota or {})

        # each existing node filled by a knapsack over the groups' values (whole pods, its own room), node by node
        opened: list[int] = []  # slot ids in opening order
        room: dict[int, np.ndarray] = {}
        solved: dict[bytes, list[tuple[dict[int, int], dict[int, int]]]] = {}
        cn: dict[tuple[int, int], int] = {}
        for (gi, n), k in (keep_ce.items() if quota is None else ()):
            ce[(gi, n)] = k
            todo[gi] -= k
            left_ex[n] -= k * np.array(greq[gi])
        for (gi, s), k in (keep_cn.items() if quota is None else ()):
            if s not in room:
                opened.append(s)
                room[s] = alloc[slot_offer[s]].astype(np.int64).copy()
            cn[(gi, s)] = k
            todo[gi] -= k
            room[s] -= k * np.array(greq[gi])
        if (left_ex < 0).any() or any(t < 0 for t in todo) or any((r < 0).any() for r in room.values()):
            return None
        for n in sorted(groups_on):
            cand = [gi for gi in groups_on[n] if todo[gi] > 0 and (isinstance(value, dict) or value[gi] > 1e-9)
                    and allowed(q, gi, node_zone[n]) > 0]
            if not cand:
                continue
            most = {gi: min(top[(gi, n)], todo[gi], allowed(q, gi, node_zone[n])) for gi in cand}
            # the same room's best fill under looser bounds is still the best when it keeps within these (at 200
            # nodes, 20 kinds of room: most knapsacks repeat, with fewer pods left of a group or two)
            fill = None
            if isinstance(value, dict):  # a relaxation's own counts, rounded down
                fill = {gi: min(most[gi], int(value[(gi, n)] + 1e-6)) for gi in cand}
            for wider, best_fill in (() if fill is not None else solved.get(left_ex[n].tobytes(), ())):
                if all(k <= wider.get(gi, 0) for gi, k in most.items()) and \
                        all(k <= most.get(gi, 0) for gi, k in best_fill.items() if k > 0):
                    fill = best_fill
                    break
            if fill is None and (now() > hard_deadline or wall_over("the joint model's knapsack fills")):
                fill = {}  # out of the fills' time: the first fit below places the pods left
            if fill is None:
                fill = _knapsack(cand, [most[gi] for gi in cand], [value[gi] for gi in cand], [greq[gi] for gi in cand],
                                 left_ex[n])
                solved.setdefault(left_ex[n].tobytes(), []).append((most, fill))
            for gi, k in fill.items():
                if k > 0:
                    ce[(gi, n)] = ce.get((gi, n), 0) + k
                    todo[gi] -= k
                    left_ex[n] -= k * np.array(greq[gi])
                    if not local[gi]:
                        q[(gi, node_zone[n])] -= k
        floor = dict(ce)  # the sub-model keeps these: the kept groups whole, the local groups' knapsack fill
        # the pods left, largest first (their largest share of a node, as cluster-autoscaler orders them)
        for gi in order:
            req = np.array(greq[gi])
            for n in nodes_of[gi]:
                if todo[gi] <= 0:
                    break
                pos = req > 0
                fit = int(np.min(np.where(pos, left_ex[n] // np.where(pos, req, 1), 1 << 40)))
                fit = min(fit, top[(gi, n)] - ce.get((gi, n), 0), todo[gi], allowed(q, gi, node_zone[n]))
                if fit > 0:
                    ce[(gi, n)] = ce.get((gi, n), 0) + fit
                    todo[gi] -= fit
                    left_ex[n] -= fit * req
                    if not local[gi]:
                        q[(gi, node_zone[n])] -= fit
        # the pods left, first fit decreasing on new slots: with the relaxation's offers first, and with each
        # offer first in turn (the relaxation buys for the pods it leaves over, which may not be the ones the
        # knapsacks leave: on a full cluster memory-heavy pods left for its compute-optimised type took a node
        # each); the cheapest wins
        default = [o for o in pref if bought[o] > 1e-6] + sorted(range(n_o), key=lambda o: price.get(
            by_offer[o][0], 1 << 62) if by_offer.get(o) else 1 << 62)
        packed = None
        for first in [[]] + [[o] for o in range(n_o) if by_offer.get(o)]:
            got = pack_new(first + default, list(todo), dict(q), dict(cn), {s: r.copy() for s, r in room.items()},
                           list(opened))
            if got is not None and (packed is None or got[2] < packed[2]):
                packed = got
        if packed is None:
            return None  # the slots run out: no answer from these values
        return ce, packed[0], floor, packed[2]

    def pack_new(choice: list[int], todo: list[int], q: dict, cn: dict, room: dict, opened: list[int]):
        """First fit decreasing of the pods `todo` on the open slots, then on new slots of the offers in `choice`'s
        order: (counts on slots, slots opened, their price), or None when the slots run out."""
        next_slot: dict[int, int] = defaultdict(int)
        for o, ss in by_offer.items():  # past the kept groups' slots
            while next_slot[o] < len(ss) and ss[next_slot[o]] in room:
                next_slot[o] += 1
        for gi in order:
            req = np.array(greq[gi])
            pos = req > 0
            while todo[gi] > 0:
                placed = False
                for s in opened:
                    o = slot_offer[s]
                    if cap_new[gi][o] <= 0:
                        continue
                    fit = int(np.min(np.where(pos, room[s] // np.where(pos, req, 1), 1 << 40)))
                    fit = min(fit, int(cap_new[gi][o]) - cn.get((gi, s), 0), todo[gi], allowed(q, gi, offers[o].zone))
                    if fit > 0:
                        cn[(gi, s)] = cn.get((gi, s), 0) + fit
                        todo[gi] -= fit
                        room[s] -= fit * req
                        if not local[gi]:
                            q[(gi, offers[o].zone)] -= fit
                        placed = True
                        break
                if placed:
                    continue
                for o in choice:
                    while next_slot[o] < len(by_offer.get(o, [])) and by_offer[o][next_slot[o]] in room:
                        next_slot[o] += 1
                    if cap_new[gi][o] > 0 and next_slot[o] < len(by_offer.get(o, [])) and (alloc[o] >= req).all() \
                            and allowed(q, gi, offers[o].zone) > 0:
                        s = by_offer[o][next_slot[o]]
                        next_slot[o] += 1
                        opened.append(s)
                        room[s] = alloc[o].astype(np.int64).copy()
                        break
                else:
                    return None
        return cn, opened, sum(price[s] for s in opened)

    def allowed(q: dict, gi: int, zone: str | None) -> int:
        """How many more pods of group gi may go to `zone` under the quota q (a group without zone rules: any)."""
        return 1 << 40 if local[gi] else q.get((gi, zone), 0)

    # values to fill the existing nodes by: the duals (raised as above), then a pod's cost on the offer the
    # relaxation buys most of, its cpu and memory shares weighed equally; the cheapest answer wins (measured on
    # the 200-node family: cpu only or memory only left the other resource to buy, 44.7 and 15.3 against 14.6)
    values = [dual]
    k_cpu, k_mem = (res_names.index("cpu") if "cpu" in res_names else None,
                    res_names.index("memory") if "memory" in res_names else None)
    if k_cpu is not None and k_mem is not None and alloc[main, k_cpu] > 0 and alloc[main, k_mem] > 0:
        for t in (0.5,):
            values.append(np.array([(1 - t) * greq[gi][k_cpu] / alloc[main, k_cpu] + t * greq[gi][k_mem] /
                                    alloc[main, k_mem] + 1e-3 * greq[gi][-1] for gi in range(n_g)]))
    # the groups with zone rules: moved within their zones first (quota), else kept where the estimator put them
    quota: dict[tuple[int, str | None], int] = defaultdict(int)
    for (gi, n), k in keep_ce.items():
        quota[(gi, node_zone[n])] += k
    for (gi, s), k in keep_cn.items():
        quota[(gi, offers[slot_offer[s]].zone)] += k
    runs = [(f, quota) for f in fracs] + [(v, quota) for v in values]
    if not all(local):
        runs.insert(len(fracs) + 1, (values[0], None))
    best = None
    for v, qu in runs:
        if now() > deadline and best is not None:
            break
        got = attempt(v, qu)
        if got is not None and (best is None or got[3] < best[3]):
            best = got
    return None if best is None else best[:3]


def _knapsack(groups: list[int], most: list[int], value: list[float], req: list[tuple[int, ...]], room: np.ndarray
              ) -> dict[int, int]:
    """Whole pods of `groups` (at most `most` each, worth `value` each) that fit `room` (every resource), worth the
    most: one node's share of the existing room. CP-SAT, one worker, short (the answer is a starting point)."""
    live = [i for i, k in enumerate(most) if k > 0 and value[i] > 0]  # (the others take no pod)
    if not live:
        return {}
    m = cp_model.CpModel()
    xs = [m.new_int_var(0, int(most[i]), f"x[{groups[i]}]") for i in live]
    for r in range(len(room)):
        terms = [(int(req[i][r]), int(most[i]), x) for i, x in zip(live, xs) if req[i][r] > 0]
        # (a resource that the most of every group would not exhaust needs no constraint)
        if terms and sum(q * k for q, k, _ in terms) > room[r]:
            m.add(cp_model.LinearExpr.weighted_sum([x for *_, x in terms], [q for q, *_ in terms]) <= int(room[r]))
    m.maximize(cp_model.LinearExpr.weighted_sum(xs, [int(round(value[i] * 1e6)) for i in live]))
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    knapsack_limits(solver.parameters, KNAPSACK_SECONDS)
    solver.parameters.catch_sigint_signal = False
    # no symmetry detection nor probing: a third of the time on these small knapsacks (11 against 30 ms on 63
    # groups, the same optimum), solved hundreds of times; without probing a rare one searches long: a wall cap
    solver.parameters.symmetry_level = 0
    solver.parameters.cp_model_probing_level = 0
    st = solver.solve(m)
    charge_knapsack(solver, "the joint model's knapsack fills")
    if st not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return {}
    return {groups[i]: int(solver.value(x)) for i, x in zip(live, xs)}
