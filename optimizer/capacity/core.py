"""`podplan capacity`: how many more copies of a pod (or of a set of pods) fit, proven.

How an answer is made (one data path: input -> Cluster -> Problem -> greedy | CP-SAT -> Plan -> verify):
1. The input's pending pods are placed first, as `solve` places them (optimizer.pipeline.optimal_plan, a share
   of the time limit); the pods it places are bound, the ones it leaves pending stay out of the question.
2. A template that no node of the cluster could hold even with every pod gone ("never fits") is reported with
   kube-scheduler's FitError message (the simulator on the nodes alone) and the command exits 1.
3. kube-scheduler's answer as cluster-capacity computes it: copies are scheduled one at a time by podplan's
   simulator (the same filters and scores as `simulate`) until the first one fits nowhere; its FitError
   message is the greedy answer's `stopped_by`. With several templates the copies go round by round (r_t copies
   of template t per round, in --pod order) and the greedy scale is the number of whole rounds placed.
4. A bound on k from relaxations (k_bound: per-node bounds summed, total free room, a hard spread's emptiest
   domain); with several templates a constructive start (scarce_first: the scarcest template's copies first).
   A start that reaches the bound is the answer, proven without a search.
   The exact answer: each template's copies are ONE pod class of optimizer.problem (identical pods share one
   count variable per node), with as many copies as the per-node upper bounds of every rule allow in total
   (N_t: resources, pods, host ports, required anti-affinity to itself...). On solve's model of the filled
   cluster (optimizer.model.build: every rule, final-state semantics) one variable `k` is added, each class
   places exactly r_t·k pods, and CP-SAT maximises k. Greedy's whole rounds are the hint; the answer is never
   below greedy's (if the search ends below it, greedy's placement is the answer, status GREEDY_FALLBACK).
   OPTIMAL means k's bound equals k: no placement of more copies exists under the rules.
5. The copies placed go through the verifier with the filled cluster as the final state.
"""
from __future__ import annotations

import time
from collections import defaultdict

import numpy as np
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from ...models.objects import Cluster, Pod
from ...models.selectors import selector_matches
from ..framework import Profile, Reads
from ..model import build
from ..pipeline import RESERVE_SHARE, Deadline, check, optimal_plan, reserve
from ..plan import Plan
from ..policy import Policy
from ..problem import PodClass, Problem, build_problem, upper_bound_vector
from ..registry import DEFAULT_PROFILE
from ..render.plans import pod_manifest
from ..runner import NEVER, Interrupt, SolverParams, Status, _integral, run
from ..state import ClusterState
from .templates import Template

# Share of the time left that placing the input's own pending pods may use, and the greedy count's share.
INPUT_SHARE = 0.35
GREEDY_SHARE = 0.3
# and up to this share when its pace says it reaches the bound by then (the search is not needed then)
GREEDY_STRETCH = 0.7
# of the time left after greedy's count: the scarcest-first construction's (the search has the rest)
CONSTRUCT_SHARE = 0.5
# seconds the verify gate takes per pod it judges, the cluster's and the copies, at the least (the pace measured
# while building the bounds raises it on a loaded machine). Measured idle on 2 cores: 19-33 us per pod (1,000
# and 5,000 nodes, three templates together and --each: 7.3 s for 304,840 pods). At
# 0.35 ms (an older verifier's pace) the gate's reserve took 21 of 5,000 nodes' default 30 s: greedy's count
# was cut at 1,620 of 3,995 and the search had no time, where the whole answer takes 11 s
VERIFY_PER_POD = 5e-5
VERIFY_PACE = 1.5  # the gate's seconds per pod over the bounds' (below), at the most
# A copy count no cluster reaches: the per-node bounds of the rules cap it (pods per node at the least).
UNBOUNDED = 10 ** 7


class NeverFits(Exception):
    """A template no node can hold even on the empty cluster: the answer is 0 for every cluster state."""

    def __init__(self, reasons: dict[str, str]) -> None:
        self.reasons = reasons
        super().__init__("; ".join(f"{name}: {why}" for name, why in reasons.items()))


@dataclass(frozen=True)
class Greedy:
    count: int  # copies (one template) or whole rounds (several)
    stopped_by: str  # the FitError message of the first copy that fit nowhere ("" if it was not reached)
    placements: dict[str, str]  # copy key -> node, in scheduling order
    per_template: dict[str, int] = field(default_factory=dict)  # copies of each placed before the stop
    stopped_template: str = ""  # whose copy fit nowhere


@dataclass(frozen=True)
class Exact:
    k: int
    bound: int
    status: Status
    placements: dict[str, str]
    wall_seconds: float
    note: str = ""


@dataclass(frozen=True)
class TemplateAnswer:
    name: str
    ratio: int
    count: int
    bound: int
    greedy: Greedy


@dataclass(frozen=True)
class CapacityAnswer:
    status: Status
    templates: tuple[TemplateAnswer, ...]
    scale: int | None  # several templates together: k
    scale_bound: int | None
    greedy_scale: int | None
    placements: dict[str, str]  # the copies placed (the answer printed; `--each`: the first template's)
    final: Cluster  # filled cluster with the placed copies pending: the verifier's and --emit state's input
    input_plan: Plan | None
    checks: tuple[tuple[Cluster, dict[str, str]], ...] = ()  # every group's final state and placements
    each: bool = False
    wall_seconds: float = 0.0
    notes: tuple[str, ...] = ()

    @property
    def bound(self) -> int:
        return self.scale_bound if self.scale_bound is not None else sum(t.bound for t in self.templates)

    @property
    def count(self) -> int:
        return self.scale if self.scale is not None else sum(t.count for t in self.templates)

    @property
    def gap(self) -> int:
        return self.bound - self.count


# --------------------------------------------------------------------------------------------------- steps


def bind(cluster: Cluster, placements: dict[str, str]) -> tuple[Cluster, tuple[Pod, ...]]:
    """The cluster with the placed pending pods bound (their manifests say where), and the pods left pending."""
    placed = [replace(p, node_name=placements[p.key], raw=pod_manifest(p, placements[p.key]))
              for p in cluster.pending if p.key in placements]
    left = tuple(p for p in cluster.pending if p.key not in placements)
    return replace(cluster, pods=cluster.pods + tuple(placed), pending=()), left


def _scheduler(state: ClusterState, profile: Profile, seed: int):
    from ..greedy import Scheduler
    from ..vectorized import VectorScheduler

    vector = all(p.vector is not None for p in profile.plugins if p.filter or p.score)
    make = VectorScheduler if vector else Scheduler
    return make(state, seed, profile.percentage_of_nodes_to_score, profile)


def never_fits(cluster: Cluster, templates: Sequence[Template], profile: Profile, seed: int = 0) -> dict[str, str]:
    """template name -> kube-scheduler's FitError on the nodes with no pod at all, for templates that fit nowhere
    by the rules that read only the node and its own pods (resources, ports, taints, node affinity, cordons):
    the rules that read other pods (pod affinity, spread) may let a template in once other pods run, so an
    empty cluster proves nothing about them."""
    out: dict[str, str] = {}
    empty = replace(cluster, pods=(), pending=())
    local = replace(profile, plugins=tuple(p for p in profile.plugins
                                           if p.filter is None or p.filter_reads is not Reads.CLUSTER))
    for t in templates:
        node, message = _scheduler(ClusterState.from_cluster(empty), local, seed).schedule(t.copies(1)[0])
        if node is None:
            out[t.name] = message
    return out


def copy_bounds(filled: Cluster, templates: Sequence[Template], profile: Profile) -> list[int]:
    """Per template: most copies the filled cluster can take, by every rule's per-node bound (N_t)."""
    return [int(ub.sum()) for ub in node_bounds(filled, templates, profile)[0]]


def node_bounds(filled: Cluster, templates: Sequence[Template], profile: Profile) -> tuple[list[np.ndarray], Problem]:
    """Per template, per node (the problem's node order): most copies of it the node can take alone, by every
    rule's per-node bound (resources, pods, host ports, required anti-affinity to itself, static masks)."""
    cluster = replace(filled, pending=tuple(t.copy(0) for t in templates))
    problem = build_problem(cluster, profile)
    masks = [enc.static_mask for enc in profile.encodings if enc.static_mask is not None]
    out = []
    for t in templates:
        c = problem.classes[problem.class_of[t.copy(0).key]]
        big = PodClass(c.index, c.name, [c.rep] * min(UNBOUNDED, 1 + sum(n.allocatable.get("pods", 0)
                                                                       for n in filled.nodes)), c.gang)
        ub = upper_bound_vector(problem, big)
        for mask in masks:
            m = mask(problem, big)
            if m is not None:
                ub[~m] = 0
        out.append(ub.astype(np.int64))
    return out, problem


def k_bound(problem: Problem, templates: Sequence[Template], ubs: Sequence[np.ndarray]) -> tuple[int, str]:
    """An upper bound on k (r_t·k copies of every template together) from relaxations of the rules, and which
    one gave it. Each is a necessary condition of any placement, so the minimum is one too:
    - per template, its per-node bounds summed: r_t·k <= N_t;
    - per resource, what the copies request in total fits the free room of the nodes that can take any copy,
      each node's room capped by what its per-node bounds could use: Σ_t r_t·req_t·k <= Σ_n min(free_n,
      Σ_t ub_t,n·req_t) (the resources' relaxation: fractions of copies allowed);
    - a template with one hard topology spread constraint (whenUnsatisfiable DoNotSchedule) that selects its
      own copies and no running pod or other template: its domains' counts differ by maxSkew at most, so no
      domain holds more than the emptiest domain's capacity plus maxSkew (the domains counted are those of
      the nodes it may use: a subset of kube-scheduler's, which only makes the bound looser).
    Property-tested against exhaustive search (tests/test_capacity.py)."""
    best, why = UNBOUNDED, "no bound"
    for t, ub in zip(templates, ubs):
        b = int(ub.sum()) // t.ratio
        if b < best:
            best, why = b, f"{t.name}: per-node bounds summed"
        sb = _spread_bound(problem, t, ub, templates)
        if sb is not None and sb // t.ratio < best:
            best, why = sb // t.ratio, f"{t.name}: topology spread across domains"
    resources: set[str] = set()
    for t in templates:
        resources.update(r for r, v in t.pod.requests.items() if v > 0)
    resources.add("pods")
    for r in sorted(resources):
        per = [1 if r == "pods" else int(t.pod.requests.get(r, 0)) for t in templates]
        need = sum(t.ratio * q for t, q in zip(templates, per))
        if need <= 0:
            continue
        room = 0
        for i, node in enumerate(problem.nodes):
            use = sum(int(ub[i]) * q for ub, q in zip(ubs, per))
            if use <= 0:
                continue
            info = problem.state.nodes[node.name]
            used = len(info.pods) if r == "pods" else int(info.requested.get(r, 0))
            room += max(0, min(int(node.allocatable.get(r, 0)) - used, use))
        if room // need < best:
            best, why = room // need, f"{r}: total free room"
    return best, why


def _spread_bound(problem: Problem, t: Template, ub: np.ndarray, templates: Sequence[Template]) -> int | None:
    """Most copies of `t` its hard spread constraints allow (see k_bound), None when none applies."""
    pod = t.pod
    out = None
    for c in pod.spread_constraints:
        if c.when_unsatisfiable != "DoNotSchedule" or c.label_selector is None:
            continue
        if not selector_matches(c.label_selector, pod.labels):
            continue
        # anything else it counts (a running pod, another template's copies) shifts the domains' counts
        if any(selector_matches(c.label_selector, p.labels) for p in problem.cluster.pods):
            continue
        if any(o is not t and selector_matches(c.label_selector, o.pod.labels) for o in templates):
            continue
        cap: dict[str, int] = defaultdict(int)
        for i, node in enumerate(problem.nodes):
            if ub[i] > 0:
                value = node.labels.get(c.topology_key)
                if value is None:
                    continue  # a node without the key takes no copy (the filter refuses it)
                cap[value] += int(ub[i])
        if not cap:
            continue
        lowest = min(cap.values())
        total = sum(min(v, lowest + c.max_skew) for v in cap.values())
        out = total if out is None else min(out, total)
    return out


def _node_local(filled: Cluster, t: Template) -> bool:
    """Only per-node rules decide where copies of `t` go: no pod affinity, anti-affinity or spread of its own, and
    no running pod's required term or spread constraint selects it."""
    pod = t.pod
    a = pod.affinity
    if a.pod_required or a.anti_required or pod.spread_constraints:
        return False
    for p in filled.pods:
        terms = [x.label_selector for x in p.affinity.pod_required + p.affinity.anti_required]
        terms += [c.label_selector for c in p.spread_constraints]
        if any(selector_matches(sel, pod.labels) for sel in terms if sel is not None):
            return False
    return True


def _fill(filled: Cluster, t: Template, limit: int, profile: Profile, seed: int) -> Greedy:
    """Greedy's count when only per-node rules apply: whatever order kube-scheduler picks nodes in, copies go
    until no node takes one more, i.e. every node holds its per-node bound (the count is that sum); the stop
    message is the FitError of one more copy on the filled state."""
    problem = build_problem(replace(filled, pending=(t.copies(1)[0],)), profile)
    c = problem.classes[0]
    big = PodClass(c.index, c.name, [c.rep] * max(1, limit), c.gang)
    ub = upper_bound_vector(problem, big)
    for enc in profile.encodings:
        if enc.static_mask is not None:
            m = enc.static_mask(problem, big)
            if m is not None:
                ub[~m] = 0
    copies = t.copies(int(ub.sum()))
    placements = {p.key: problem.nodes[n].name
                  for p, n in zip(copies, (n for n in range(len(problem.nodes)) for _ in range(int(ub[n]))))}
    state = ClusterState.from_cluster(filled, [(p, p.node_name) for p in filled.pods] +
                                      [(p, placements[p.key]) for p in copies])
    _, message = _scheduler(state, profile, seed).schedule(replace(t.copies(1)[0], name=f"{t.name}-capacity-next"))
    return Greedy(len(placements), message, placements, {t.name: len(placements)}, t.name)


def greedy(filled: Cluster, templates: Sequence[Template], limits: Sequence[int], profile: Profile, seed: int,
           deadline: float, interrupt: Interrupt = NEVER, shortcut: bool = True, sched=None,
           stretch: float | None = None, rounds_at_most: int | None = None) -> Greedy:
    """cluster-capacity's count: copies scheduled one at a time (round by round with several templates) until
    the first fits nowhere. One template that only per-node rules place: the count in one step (_fill).
    stretch: past `deadline`, the count goes on while its pace so far says it reaches `rounds_at_most` (a bound
    on the rounds, the per-node bounds' at the least) before this time: a count that reaches the bound is the
    answer, proven, and no search can do better."""
    if shortcut and len(templates) == 1 and templates[0].ratio == 1 and _node_local(filled, templates[0]):
        return _fill(filled, templates[0], limits[0], profile, seed)
    started = time.perf_counter()
    if started > deadline or interrupt.is_set():
        return Greedy(0, "", {}, {t.name: 0 for t in templates})  # no time for it: building the scheduler costs seconds
    sched = sched or _scheduler(ClusterState.from_cluster(filled), profile, seed)
    used = [0] * len(templates)
    placements: dict[str, str] = {}
    rounds = 0
    top = min([lim // t.ratio for t, lim in zip(templates, limits)] +
              ([rounds_at_most] if rounds_at_most is not None else []))
    per_round = sum(t.ratio for t in templates)

    def out_of_time() -> bool:
        clock = time.perf_counter()
        if clock <= deadline:
            return False
        if stretch is None or clock > stretch or not placements:
            return True
        # the rounds left at the pace so far (on a loaded machine, 5,000 nodes: 2,910 of 3,995 rounds in its share)
        return clock + (clock - started) * (top * per_round - len(placements)) / len(placements) > stretch

    while True:
        for i, t in enumerate(templates):
            for _ in range(t.ratio):
                if used[i] >= limits[i]:
                    # the per-node bounds say no further copy fits: the next one would stop here
                    return Greedy(rounds, _stop_message(sched, t), placements, _per(templates, used), t.name)
                if interrupt.is_set() or out_of_time():
                    return Greedy(rounds, "", placements, _per(templates, used))
                pod = t.copy(used[i])
                node, message = sched.schedule(pod)
                if node is None:
                    return Greedy(rounds, message, placements, _per(templates, used), t.name)
                placements[pod.key] = node
                used[i] += 1
        rounds += 1


def scarce_first(filled: Cluster, templates: Sequence[Template], bounds: Sequence[int], cap: int, profile: Profile,
                 seed: int, deadline: float, interrupt: Interrupt = NEVER, sched=None) -> Greedy:
    """A constructive answer for several templates (or one whose greedy count stopped short of the bound):
    the same one-at-a-time scheduling as greedy's, but all the copies of the scarcest template first (fewest
    copies per unit of scale by its own bounds), then the next, each up to what the previous ones allow
    (r_t·k for the k reached so far). Round by round, greedy lets the plentiful templates take the room the
    scarce one needed on the nodes only it can use; this order leaves them the rest. The copies beyond r_t·k
    of the templates placed before the last are dropped (`count` is k; the caller verifies the final state)."""
    order = sorted(range(len(templates)), key=lambda i: (bounds[i] // templates[i].ratio, i))
    sched = sched or _scheduler(ClusterState.from_cluster(filled), profile, seed)
    target = cap
    placed: dict[str, list[tuple[str, str]]] = {}
    for i in order:
        t = templates[i]
        got: list[tuple[str, str]] = []
        while len(got) < t.ratio * target:
            if interrupt.is_set() or time.perf_counter() > deadline:
                target = len(got) // t.ratio
                break
            pod = t.copy(len(got))
            node, _ = sched.schedule(pod)
            if node is None:
                break
            got.append((pod.key, node))
        placed[t.name] = got
        target = min(target, len(got) // t.ratio)
    placements = {key: node for t in templates for key, node in placed.get(t.name, [])[:t.ratio * target]}
    return Greedy(target, "", placements, {t.name: t.ratio * target for t in templates})


def _unplace(sched, placements: dict[str, str], seed: int) -> None:
    """Take `placements`' copies out of `sched`'s state and start its cycle afresh (node rotation, tie-break
    and the placed pods' guards, which never see a pod leave): building a scheduler for 1,000 nodes takes
    seconds, removing a few thousand copies milliseconds."""
    import random

    for key, node in placements.items():
        sched.state.remove(sched.state.nodes[node].pods[key])
    sched.next_start = 0
    sched.rng = random.Random(seed)
    if getattr(sched, "guards", None) is not None and getattr(sched, "protect_placed", False):
        sched.guards = [(p, p.placed_guard(sched.state)) for p in sched.profile.filters if p.placed_guard]


def _truncated(start: Greedy, templates: Sequence[Template]) -> dict[str, str]:
    """start's placements of the first r_t·count copies of every template (its whole rounds)."""
    keep = {t.name: t.ratio * start.count for t in templates}
    out: dict[str, str] = {}
    for key, node in start.placements.items():
        name = key.split("/", 1)[1].rsplit("-capacity-", 1)[0]
        if keep.get(name, 0) > 0:
            keep[name] -= 1
            out[key] = node
    return out


def _template_of(key: str) -> str:
    return key.split("/", 1)[1].rsplit("-capacity-", 1)[0]


def _valid(filled: Cluster, group: Sequence[Template], start: Greedy, left: Sequence[Pod], policy: Policy,
           profile: Profile) -> bool:
    """Does the verifier accept `start`'s whole rounds on the final state? (Dropping the copies beyond them
    may strand a rule that their presence satisfied; a start the verifier refuses is not used.)"""
    from ...models.errors import PlanInvalidError

    placements = _truncated(start, group)
    if placements == start.placements:
        # nothing dropped: the state is the scheduler's own, whose placed-pod guards keep a later copy from
        # breaking a rule of a pod placed before it (the CLI's verify gate judges the answer in any case)
        return True
    placed = [p for t in group for p in t.copies(_copies_used(t, placements)) if p.key in placements]
    try:
        check(replace(filled, pending=tuple(placed) + tuple(left)),
              Plan(placements=placements, pending={}, status=Status.FEASIBLE), policy, profile)
    except PlanInvalidError:
        return False
    return True


def _copies_used(t: Template, placements: dict[str, str]) -> int:
    """How many of t's copies (in copy order) the placements reach: only those are made."""
    prefix = f"{t.pod.namespace}/{t.name}-capacity-"
    return max((int(k[len(prefix):]) for k in placements if k.startswith(prefix) and k[len(prefix):].isdigit()),
               default=0)


def _per(templates: Sequence[Template], used: list[int]) -> dict[str, int]:
    return {t.name: u for t, u in zip(templates, used)}


def _stop_message(sched, t: Template) -> str:
    node, message = sched.schedule(replace(t.copies(1)[0], name=f"{t.name}-capacity-next"))
    return message if node is None else ""


def exact(filled: Cluster, templates: Sequence[Template], limits: Sequence[int], start: Greedy, profile: Profile,
          policy: Policy, params: SolverParams, deadline: float, interrupt: Interrupt = NEVER,
          cap: int | None = None, hard_end: float | None = None) -> Exact:
    """The largest k with r_t·k copies of every template placed together, by CP-SAT on solve's model. `cap`:
    an upper bound on k known beforehand (k_bound): k's domain, so the search stops once it reaches it."""
    started = time.perf_counter()
    k_max = min(lim // t.ratio for t, lim in zip(templates, limits)) if templates else 0
    if cap is not None:
        k_max = min(k_max, cap)
    if k_max == 0:
        return Exact(0, 0, Status.OPTIMAL, {}, 0.0)
    copies = {t.name: t.copies(t.ratio * k_max) for t in templates}
    cluster = replace(filled, pending=tuple(p for t in templates for p in copies[t.name]))
    problem = build_problem(cluster, profile, decompose=False)
    need: dict[int, int] = defaultdict(int)
    for t in templates:
        need[problem.class_of[copies[t.name][0].key]] += t.ratio
    comp = problem.components[0]
    built = build(problem, comp, policy, params.strategy)
    ctx = built.ctx
    k = ctx.new_int(0, k_max, "k")
    for c, r in need.items():
        ctx.model.add(ctx.placed[c] == r * k)
    # greedy's whole rounds as the hint
    hint: dict[tuple[int, int], int] = defaultdict(int)
    taken: dict[str, int] = defaultdict(int)
    names = {n.name: i for i, n in enumerate(problem.nodes)}
    for key, node in start.placements.items():
        name = key.split("/", 1)[1].rsplit("-capacity-", 1)[0]
        t = next(t for t in templates if t.name == name)
        if taken[name] < t.ratio * start.count:
            taken[name] += 1
            hint[(problem.class_of[key], names[node])] += 1
    for key, var in ctx.x.items():
        ctx.model.add_hint(var, hint.get(key, 0))
    ctx.model.add_hint(k, start.count)
    ctx.model.maximize(k)
    # at least a second of search once the model is built: building it on a loaded machine may have used the rest
    left = max(1.0, deadline - time.perf_counter())
    if hard_end is not None:
        left = max(0.05, min(left, hard_end - time.perf_counter()))
    result = run(ctx.model, params, left, interrupt=interrupt)
    if result.values is None or result.values[k.index] < start.count:
        bound = int(_integral(result.bound, True)) if result.status is not Status.UNKNOWN else k_max
        return Exact(start.count, max(bound, start.count), Status.GREEDY_FALLBACK, {}, time.perf_counter() - started,
                     "the search found no better placement than greedy's within the time limit")
    value = result.values[k.index]
    bound = value if result.status is Status.OPTIMAL else max(value, int(_integral(result.bound, True)))
    # counts -> copies: per class, the first r_t·k copies of each of its templates, node by node
    wanted: dict[int, list[Pod]] = defaultdict(list)
    for t in templates:
        wanted[problem.class_of[copies[t.name][0].key]].extend(copies[t.name][:t.ratio * value])
    placements: dict[str, str] = {}
    for (c, n), var in sorted(ctx.x.items()):
        for _ in range(result.values[var.index]):
            placements[wanted[c].pop(0).key] = problem.nodes[n].name
    return Exact(value, bound, Status.OPTIMAL if bound == value else Status.FEASIBLE, placements,
                 time.perf_counter() - started)


# --------------------------------------------------------------------------------------------------- answer


def capacity(cluster: Cluster, templates: Sequence[Template], params: SolverParams, policy: Policy | None = None, *,
             deadline: Deadline, profile: Profile = DEFAULT_PROFILE, each: bool = False,
             interrupt: Interrupt = NEVER) -> CapacityAnswer:
    """The answer to `podplan capacity` (see the module docstring). Raises NeverFits."""
    policy = policy or Policy()
    impossible = never_fits(cluster, templates, profile, params.seed)
    if impossible:
        raise NeverFits(impossible)
    notes: list[str] = []
    end = deadline.at - reserve(cluster, deadline.limit)
    input_plan = None
    filled, left = cluster, ()
    if cluster.pending:
        share = Deadline(time.perf_counter(), max(0.1, (end - time.perf_counter()) * INPUT_SHARE))
        input_plan, _ = optimal_plan(cluster, params, policy, deadline=share, profile=profile, interrupt=interrupt)
        check(cluster, input_plan, policy, profile)
        filled, left = bind(cluster, input_plan.placements)
        notes.append(f"the input's pending pods were placed first, as solve places them: {len(input_plan.placements)}"
                     f"/{len(cluster.pending)} ({input_plan.status})")
    measured = time.perf_counter()
    ubs, bound_problem = node_bounds(filled, templates, profile)
    # the machine's pace now: building the bounds' problem reads every pod as judging them does, and a loaded
    # machine slows both alike. Judging took 0.7 to 1.3 times as long per pod (idle, 2 cores: the bounds 19 us
    # per pod at 1,000 nodes and 34 at 5,000, the gate 19-33)
    per_pod = max(VERIFY_PER_POD, VERIFY_PACE * (time.perf_counter() - measured) / max(1, len(filled.pods)))
    limits = [int(u.sum()) for u in ubs]
    groups = [[t] for t in templates] if each or len(templates) == 1 else [list(templates)]
    answers: list[TemplateAnswer] = []
    checks: list[tuple[Cluster, dict[str, str]]] = []
    scale = scale_bound = greedy_scale = None
    statuses = []
    caps = [k_bound(bound_problem, group, [ubs[templates.index(t)] for t in group]) for group in groups]
    # the verify gate judges, per group, the cluster and every copy placed on it
    copies = sum(t.ratio * cap for group, (cap, _) in zip(groups, caps) for t in group)
    hard_end = deadline.at - max(RESERVE_SHARE * deadline.limit,
                                 per_pod * (len(groups) * (len(filled.pods) + len(left)) + copies))
    end = min(end, hard_end)
    sched = None
    own: set[str] = set()
    for gi, group in enumerate(groups):
        if sched is not None and len(sched.state.node_of) > len(own):
            _unplace(sched, {k: n for k, n in sched.state.node_of.items() if k not in own}, params.seed)
        idx = [templates.index(t) for t in group]
        lim = [limits[i] for i in idx]
        cap, cap_why = caps[gi]
        now = time.perf_counter()
        my_end = now + max(0.0, end - now) / (len(groups) - gi)
        if sched is None and now < my_end and not (len(group) == 1 and group[0].ratio == 1
                                                   and _node_local(filled, group[0])):
            # one scheduler for every group (the copies of one are taken out before the next): building it takes
            # seconds at 1,000 nodes on a loaded machine; greedy's share starts once it is built
            sched = _scheduler(ClusterState.from_cluster(filled), profile, params.seed)
            own = set(sched.state.node_of)
            now = time.perf_counter()
            my_end = now + max(0.0, end - now) / (len(groups) - gi)
        g = greedy(filled, group, lim, profile, params.seed, now + (my_end - now) * GREEDY_SHARE, interrupt,
                   sched=sched, stretch=now + (my_end - now) * GREEDY_STRETCH, rounds_at_most=cap)
        best = g
        # one template: the construction would be greedy's own order again
        if len(group) > 1 and g.count < cap and not interrupt.is_set() and time.perf_counter() < my_end:
            if sched is not None:  # greedy's copies, and the probe copy its stop message may have bound
                _unplace(sched, {k: n for k, n in sched.state.node_of.items() if k not in own}, params.seed)
            # the scarcest template first: at most half of what is left, the search keeps the rest
            now = time.perf_counter()
            c = scarce_first(filled, group, [min(x, cap * t.ratio) for x, t in zip(lim, group)], cap, profile,
                             params.seed, now + (my_end - now) * CONSTRUCT_SHARE, interrupt, sched=sched)
            if c.count > g.count and (all(len([k for k in c.placements if _template_of(k) == t.name])
                                          == t.ratio * c.count for t in group) and _valid(filled, group, c, left,
                                                                                         policy, profile)):
                best = c
        if interrupt.is_set():
            ex = Exact(best.count, max(best.count, cap), Status.FEASIBLE, {}, 0.0,
                       "interrupted: the best count found so far")
        elif best.count >= cap:
            ex = Exact(best.count, best.count, Status.OPTIMAL, _truncated(best, group), 0.0,
                       "" if best is g else f"proven by the bound ({cap_why}); placed scarcest template first")
        elif time.perf_counter() >= hard_end:
            ex = Exact(best.count, max(best.count, cap), Status.GREEDY_FALLBACK if best is g else Status.FEASIBLE,
                       _truncated(best, group), 0.0, "no time was left for the search: the rest of --time-limit is "
                       "the verify gate's (a larger --time-limit lets the search run)")
        else:
            # the search keeps at least a tenth of the limit, as solve's does: a loaded machine may have spent the
            # rest on reading the input (never beyond the verify gate's share: the limit is a promise)
            ex = exact(filled, group, lim, best, profile, policy, params,
                       min(hard_end, max(my_end, time.perf_counter() + 0.1 * deadline.limit / len(groups))),
                       interrupt, cap=cap, hard_end=hard_end)
        if not g.stopped_by and not interrupt.is_set():
            notes.append(f"{', '.join(t.name for t in group)}: kube-scheduler's greedy count stopped at its share of "
                         f"the time limit ({g.count}); the real count may be higher")
        if ex.note:
            notes.append(f"{', '.join(t.name for t in group)}: {ex.note}")
        placements = ex.placements
        if ex.status is Status.GREEDY_FALLBACK or interrupt.is_set() and not placements:
            placements = _truncated(best, group)
            if best is not g and ex.status is Status.GREEDY_FALLBACK:
                ex = replace(ex, status=Status.FEASIBLE)
        statuses.append(ex.status)
        for t in group:
            # several together: greedy's whole rounds, and the stop message on the template that stopped them
            tg = g if len(group) == 1 else replace(g, count=t.ratio * g.count,
                                                    stopped_by=g.stopped_by if g.stopped_template == t.name else "")
            answers.append(TemplateAnswer(t.name, t.ratio, t.ratio * ex.k, t.ratio * ex.bound, tg))
        if len(group) > 1:
            scale, scale_bound, greedy_scale = ex.k, ex.bound, g.count
        placed = [p for t in group for p in t.copies(_copies_used(t, placements)) if p.key in placements]
        checks.append((replace(filled, pending=tuple(placed) + tuple(left)), placements))
    status = Status.OPTIMAL if all(s is Status.OPTIMAL for s in statuses) else \
        Status.GREEDY_FALLBACK if any(s is Status.GREEDY_FALLBACK for s in statuses) else Status.FEASIBLE
    if interrupt.is_set():
        notes.append("interrupted: the best answer found so far")
        if status is Status.OPTIMAL and any(a.count < a.bound for a in answers):
            status = Status.FEASIBLE
    if each and len(templates) > 1:
        notes.append(f"--each: each template's own maximum; the placements shown are {templates[0].name}'s")
    final, first = checks[0]
    return CapacityAnswer(status, tuple(answers), scale, scale_bound, greedy_scale, first, final, input_plan,
                          tuple(checks), each, time.perf_counter() - deadline.started, tuple(notes))


def verify_answer(answer: CapacityAnswer, policy: Policy | None = None, profile: Profile = DEFAULT_PROFILE) -> None:
    """The verify gate on the final state: PlanInvalidError (a bug) if a copy breaks a rule."""
    for final, placements in answer.checks:
        check(final, Plan(placements=placements, pending={}, status=answer.status), policy, profile)
