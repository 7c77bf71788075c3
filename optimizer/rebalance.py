"""`podplan rebalance`: a target state for the running pods that may move, and PDB-safe waves to reach it.

1. Movable pods are the descheduler's default evictor's (optimizer.movable). Movable pods that the Eviction
   API would refuse for the whole operation are kept in place up front: a pod guarded by more than one PDB
   (eviction.go fails it), or by a PDB that allows 0 disruptions now (its budget does not grow while the
   plan runs: every replacement is Ready before the next wave). Those the goal needed moved are `blocked`.
2. Target (CP-SAT, exact): the free movable pods become pending pods (movable.as_pending), so every rule is
   encoded by its package's encoding.py with the verifier's final-state semantics (optimizer.problem/model).
   Added: every free pod is placed; per class and node `stay <= x`, `stay <= pods of the class that run there
   now`, moves = Σ (class size − Σ stay) (pods of a class are interchangeable for every rule, so the count
   model's minimum is the individual minimum); drained nodes keep at most their own pods (nothing moves in).
   Every free pod ends valid, whatever the goal: a rebalance never keeps a violation it can repair.
   Levels, solved lexicographically (each stage fixes the level's optimum, the previous solution as hint; the
   first hint is every pod staying, completed by CP-SAT with the counts fixed; a level's variables are added
   when its stage starts, and the hint is completed over them the same way):
   - `--drain` nodes, in the order given: pods left on each, minimised (the drain is soft so that a drain
     that cannot complete still gets the best partial plan, and says which pods stay and why);
   - the goal: `fix` has no level of its own (validity is hard); `spread` minimises U = max over nodes and
     {cpu, memory} of u = ceil(1000 × requested / allocatable), then V = Σ_r (N·Σ_n u² − (Σ_n u)²) = N² ×
     the variance of the per-mille utilisations, encoded as Σ_{i<j} (u_i − u_j)² (Lagrange's identity: convex
     terms CP-SAT proves; above PAIRWISE_LIMIT nodes as written); `pack` maximises the nodes left without
     pods (DaemonSet and mirror pods go with the node); `prefs` maximises the preference score P
     (notes/semantics.md);
   - moves, minimised; `--max-moves` caps them (a hard constraint);
   - a tie-break for drain/fix/prefs: the lowest U.
   Utilisation and emptiness are over the nodes not being drained. `goal_values` evaluates every level from an
   assignment in plain Python (the hypothesis test's brute force uses it). Which pod of a class moves where is
   then chosen so that moves stay inside their topology domains where they can (pods no PDB guards move
   first). Large drain/fix problems (over FOCUS_LIMIT movable pods) first re-place only the pods that must
   move, which is provably the fewest moves for a drain that empties.
   When no valid target exists (a free pod violates a rule now and cannot be repaired: no node takes it, or
   not within --max-moves), the pods in violation are kept in place and then released one at a time while a
   valid target still exists; those left are `blocked` (fix) or noted (other goals).
3. Waves: moves are put in waves greedily (drained nodes first, in order). A move joins the wave when (a) its
   PDB still allows a disruption in this wave (disruption.budget at the start of the wave, Eviction API
   arithmetic), (b) the state after the wave stays valid: its replacement passes every Filter on its node, and
   every pod whose required (anti-)affinity or DoNotSchedule spread sees it keeps its verdict. Evictions of a
   wave happen before its arrivals, so a pod arrives on B in the wave where what must leave B leaves, or later.
   A move that does not fit alone is tried with the moves it depends on (up to GROUP_LIMIT): the move of the
   pod it would break, a move off its node, the partner its affinity needs (a swap, a co-located pair).
   Every state between waves is checked with the verifier (existing = pods not moved yet, placed = the
   replacements); a wave that fails it is shrunk. When no wave can be built that way, each remaining move is
   tried as the start of a wave of its own. Moves no wave can make are `blocked`, with the state they would
   break and the budget that forbids the moves that would have to go with them.
4. Landing: the replacements of a wave are scheduled by optimizer.greedy.Scheduler (kube-scheduler's cycle,
   without podplan's placed-pod guard) on the state after the wave's evictions, in eviction order (priority,
   pods with required affinity last, fewest feasible nodes first), with the drained nodes (and the nodes
   `pack` empties) cordoned: where they land "if left alone". Where that differs from the plan and the nodes
   kube-scheduler picks make a target that is valid and equal on every level, the plan takes them (nothing to
   steer). Otherwise nodes that received a replacement they should not are cordoned for the wave (never a node
   the wave must fill), until the simulation lands every replacement as planned; if cordons cannot do it, the
   replacements that took another move's node wait for a later wave. Replacements of one controller are
   interchangeable: landing is compared as counts per (controller, node).

Knowing differences and limits: cordons a plan adds are operational (kubectl cordon); states are judged on the
input's Node objects. Required affinity is IgnoredDuringExecution: an immovable pod whose required affinity
was met only by movable pods is not protected when they move (the verifier calls it pre-existing, as the
immovable pods alone already break it). Pending pods of the input are not part of a rebalance. Replacements
are assumed to become Ready (the script waits for it). Waves are greedy, not minimal in number; a PDB that
allows one disruption makes one wave per eviction of its pods, as the Eviction API would.
"""
from __future__ import annotations

import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ortools.sat.python import cp_model

from ..models.errors import PodplanError
from ..models.objects import Cluster, Node, Pod

from . import disruption
from .framework import run_filters
from .greedy import Scheduler
from .context import ModelContext
from .movable import MovePolicy, as_pending, why_immovable
from .objective import preference_terms
from .policy import Policy
from .problem import Problem, build_problem, pod_signature
from .registry import DEFAULT_PROFILE
from .state import ClusterState, NodeInfo
from .verify import judge, verify

GOALS = ("fix", "spread", "pack", "prefs")
DRAIN = "drain"
RESOURCES = ("cpu", "memory")
PERMILLE = 1000
GROUP_LIMIT = 8  # moves tried together when one does not fit alone
PAIRWISE_LIMIT = 12  # nodes up to which the variance level is a sum of squared pairwise differences
ORDER_LIMIT = 30  # waves up to which replacements with fewer feasible nodes are evicted first
FOCUS_LIMIT = 300  # movable pods above which drain/fix first re-place only the pods that must move

OPTIMAL = "OPTIMAL"
FEASIBLE = "FEASIBLE"
NO_TARGET = "NO_TARGET"

# reasons (blocked entries), as sentences
R_IMMOVABLE_ON_DRAINED = "cannot leave {node}: {why}; the drain of {node} cannot complete"
R_PDB_ZERO = "PodDisruptionBudget {pdb} allows 0 disruptions ({cause}): {what}"
R_MANY_PDBS = "{err} ({pdbs}): {what}"
R_NO_ROOM = "no other node can take it while {drained} {verb} drained: {node} cannot be emptied"
R_ADD_BACK = "; when the waves are done, add {back} back (after its maintenance: it can take the pod), then drain {node}"
R_ADD_NODE = "; add a node (or capacity) that can take it, then drain {node}"
R_CAPPED = "--max-moves {n} is reached: it stays on {node}, which is not emptied"
R_UNREPAIRED = "violates {rules} on {node} and no valid target moves it{limit}"
R_STUCK = "its move {src} -> {dst} cannot be made in any wave: {why}"
R_NO_TARGET = "no valid target state was found{why}"


class RebalanceError(PodplanError):
    """Arguments that name nothing in the input (an unknown --drain node)."""


@dataclass(frozen=True)
class RebalanceParams:
    goal: str = "fix"  # fix | spread | pack | prefs | drain (only --drain)
    drain: tuple[str, ...] = ()
    max_moves: int | None = None
    time_limit: float = 10.0
    workers: int = 2
    seed: int = 0
    move_policy: MovePolicy = MovePolicy()
    policy: Policy = Policy()


@dataclass(frozen=True)
class Move:
    pod: Pod  # the evicted pod
    source: str
    target: str

    @property
    def key(self) -> str:
        return self.pod.key


@dataclass(frozen=True)
class Blocked:
    pod: str
    reason: str


@dataclass(frozen=True)
class Landing:
    pod: str  # the evicted pod whose replacement this is
    planned: str
    alone: str  # where kube-scheduler puts it with only the drained nodes cordoned ("" = stays pending)
    cordoned: str  # with the wave's cordons


@dataclass(frozen=True)
class Wave:
    moves: tuple[Move, ...]  # in eviction order
    cordon: tuple[str, ...]  # nodes cordoned while the wave runs (drained nodes included)
    temporary: tuple[str, ...]  # of those, the ones uncordoned after the wave
    landing: tuple[Landing, ...]
    budgets: dict[str, tuple[int, int]] = field(default_factory=dict)  # pdb -> (evictions, allowed)
    spends: dict[str, str] = field(default_factory=dict)  # evicted pod -> the PDB whose disruption it spends


@dataclass(frozen=True)
class Target:
    assignment: dict[str, str]  # every free pod -> its node in the target
    status: str  # OPTIMAL | FEASIBLE | NO_TARGET
    levels: tuple[tuple[str, int, bool], ...]  # (level, value, proven optimal)
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class RebalancePlan:
    goal: str
    drain: tuple[str, ...]
    complete: bool
    blocked: tuple[Blocked, ...]
    waves: tuple[Wave, ...]
    before: dict[str, Any]
    after: dict[str, Any]
    status: str
    levels: tuple[tuple[str, int, bool], ...]
    notes: tuple[str, ...]
    wall_seconds: float
    final: dict[str, str]  # every pod of the cluster -> its node after the waves

    @property
    def moves(self) -> int:
        return sum(len(w.moves) for w in self.waves)


# ------------------------------------------------------------------------------------------------ helpers


def goes_with_node(pod: Pod) -> bool:
    """DaemonSet and mirror pods are not drained (kubectl drain --ignore-daemonsets) and leave with the node."""
    owner = pod.controller
    return pod.mirror or (owner is not None and owner.kind == "DaemonSet")


def state_of(cluster: Cluster, where: Mapping[str, str], moved: Iterable[str] = (),
             nodes: Sequence[Node] | None = None) -> ClusterState:
    """A state with every pod of `cluster` on `where[key]` (default its own node); `moved` pods are replacements
    (spec.nodeName cleared, as a new pod of the controller). `nodes` replaces the Node objects (cordons)."""
    moved = set(moved)
    pods = [(replace(p, node_name="") if p.key in moved else p, where.get(p.key, p.node_name)) for p in cluster.pods]
    c = cluster if nodes is None else replace(cluster, nodes=tuple(nodes))
    return ClusterState.from_cluster(c, pods)


def judge_all(state: ClusterState) -> dict[str, set[str]]:
    """pod key -> plugins that reject it on its node (judged with itself removed), for pods with any."""
    out: dict[str, set[str]] = {}
    for pod, info in list(state.all_pods()):
        reasons = judge(pod, info.name, state)
        if reasons:
            out[pod.key] = {r.plugin for r in reasons}
    return out


def state_report(cluster: Cluster, where: Mapping[str, str], moved: Iterable[str]) -> Any:
    """The verifier on a state of the rebalance: pods not moved are existing, replacements are placed."""
    moved = set(moved)
    pods = [p for p in cluster.pods if p.key in moved]
    unbound, _ = as_pending(replace(cluster, pending=()), pods)
    return verify(unbound, {k: where[k] for k in moved})


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def loads(state: ClusterState, nodes: Sequence[str], resource: str) -> list[tuple[int, int]]:
    """(requested, allocatable) of `resource` on each node of `nodes` that has some of it."""
    out = []
    for name in nodes:
        info = state.nodes[name]
        alloc = info.node.allocatable.get(resource, 0)
        if alloc > 0:
            out.append((info.requested.get(resource, 0), alloc))
    return out


def utilization_permille(state: ClusterState, nodes: Sequence[str]) -> dict[str, list[int]]:
    """resource -> ceil(1000 × requested / allocatable) per node of `nodes` that has the resource."""
    return {r: [_ceil_div(PERMILLE * req, alloc) for req, alloc in loads(state, nodes, r)] for r in RESOURCES}


def spread_levels(state: ClusterState, nodes: Sequence[str]) -> tuple[int, int]:
    """(U, V): the highest per-mille utilisation, and Σ_r N·Σu² − (Σu)² (N² × variance)."""
    u = utilization_permille(state, nodes)
    top = max((v for vals in u.values() for v in vals), default=0)
    var = sum(len(vals) * sum(v * v for v in vals) - sum(vals) ** 2 for vals in u.values())
    return top, var


def occupied(info: NodeInfo) -> bool:
    """Does the node hold a pod that does not go with it (anything but DaemonSet and mirror pods)?"""
    return any(not goes_with_node(p) for p in info.pods.values())


def goal_values(cluster: Cluster, params: RebalanceParams, where: Mapping[str, str], free: Iterable[Pod],
                policy: Policy | None = None) -> dict[str, int]:
    """Every objective level of `where` (pod key -> node for every free pod), computed directly.

    Keys: drain:<node> (pods of `free` left there), utilization_max, utilization_variance, empty_nodes, preference,
    moves. The CP-SAT levels reach the same numbers."""
    free = list(free)
    keys = {p.key for p in free}
    full = {p.key: where.get(p.key, p.node_name) for p in cluster.pods}
    state = state_of(cluster, full, moved=keys)
    kept_nodes = [n.name for n in cluster.nodes if n.name not in params.drain]
    out: dict[str, int] = {}
    for d in params.drain:
        out[f"{DRAIN}:{d}"] = sum(1 for p in free if full[p.key] == d)
    out["utilization_max"], out["utilization_variance"] = spread_levels(state, kept_nodes)
    out["empty_nodes"] = sum(1 for n in kept_nodes if not occupied(state.nodes[n]))
    out["preference"] = sum(preference_terms(cluster, state, policy or params.policy).values())
    out["moves"] = sum(1 for p in free if full[p.key] != p.node_name)
    return out


# ------------------------------------------------------------------------------------------------ target


@dataclass
class _Built:
    model: cp_model.CpModel
    ctx_list: list[ModelContext]
    levels: list[tuple[str, Callable[[], Any], str]]  # (name, builds the expression, "min" | "max")
    problem: Problem
    here: dict[tuple[int, int], int] = field(default_factory=dict)  # (class, node) -> its pods running there
    stay_possible: bool = True  # every free pod's node has a variable (no static rule rejects it there)


def level_names(params: RebalanceParams) -> list[str]:
    """The target's objective levels, in lexicographic order (names as in goal_values)."""
    names = [f"{DRAIN}:{d}" for d in params.drain]
    goal = params.goal
    if goal == "spread":
        names += ["utilization_max", "utilization_variance"]
    elif goal == "pack":
        names.append("empty_nodes")
    elif goal == "prefs":
        names.append("preference")
    names.append("moves")
    if goal in ("fix", "prefs", DRAIN):
        names.append("utilization_max")
    return names


SENSE = {"utilization_max": "min", "utilization_variance": "min", "empty_nodes": "max", "preference": "max",
         "moves": "min"}


def _build(cluster: Cluster, free: list[Pod], params: RebalanceParams, feasibility_only: bool = False) -> _Built:
    """One CP-SAT model (components share it as independent sub-models) for placing `free` pods again."""
    base = replace(cluster, pending=())
    unbound, origin = as_pending(base, free)
    decompose = params.goal not in ("spread",) and params.max_moves is None
    problem = build_problem(unbound, DEFAULT_PROFILE, gang_all=False, decompose=decompose)
    model = cp_model.CpModel()
    drained = {problem.node_index[d] for d in params.drain if d in problem.node_index}
    ctxs: list[ModelContext] = []
    here_all: dict[tuple[int, int], int] = {}
    stay_possible = True
    moves_terms: list[Any] = []
    x_on: dict[int, list[tuple[Any, dict[str, int]]]] = defaultdict(list)  # node -> (x, requests)
    for comp in problem.components:
        ctx = ModelContext(problem, comp, params.policy)
        ctx.model = model  # every component in one model: levels are sums over components
        ctx.make_x()
        for enc in problem.profile.encodings:
            enc.encode(ctx)
        for c in comp.classes:
            cls = problem.classes[c]
            model.add(ctx.placed[c] == cls.size)
            here = Counter(problem.node_index[origin[p.key]] for p in cls.pods if origin[p.key] in problem.node_index)
            for n, k in here.items():
                here_all[(c, n)] = k
                stay_possible &= (c, n) in ctx.x and ctx.ub[(c, n)] >= k
            stays = []
            for n in ctx.by_class[c]:
                x = ctx.x[(c, n)]
                if n in drained:
                    model.add(x <= here.get(n, 0))  # a drained node takes nothing new
                if here.get(n, 0):
                    s = model.new_int_var(0, min(here[n], ctx.ub[(c, n)]), f"stay[{cls.name},{ctx.nname(n)}]")
                    model.add(s <= x)
                    stays.append(s)
                x_on[n].append((x, cls.rep.requests))
            moves_terms.append(cls.size - sum(stays))
        ctxs.append(ctx)
    moves = sum(moves_terms)
    if params.max_moves is not None:
        model.add(moves <= params.max_moves)
    if feasibility_only:
        return _Built(model, ctxs, [], problem, here_all, stay_possible)
    # each level's expression is built when its stage starts: the variance terms, say, would only slow down
    # the stages before it
    levels: list[tuple[str, Callable[[], Any], str]] = []
    kept = [i for i in range(len(problem.nodes)) if i not in drained]
    util: dict[str, Any] = {}

    def utilization() -> tuple[dict[str, list[Any]], Any]:
        if "u" not in util:
            util["u"] = _utilization(model, problem, kept, x_on)
        return util["u"]

    for name in level_names(params):
        if name.startswith(DRAIN + ":"):
            xs = [x for x, _ in x_on.get(problem.node_index[name.split(":", 1)[1]], [])]
            levels.append((name, lambda xs=xs: sum(xs), "min"))
        elif name == "moves":
            levels.append((name, lambda: moves, "min"))
        elif name == "empty_nodes":
            levels.append((name, lambda: _empty_nodes(model, problem, kept, x_on), "max"))
        elif name == "preference":
            levels.append((name, lambda: sum(t for ctx in ctxs for kind in ctx.terms for t in ctx.terms[kind]),
                           "max"))
        elif name == "utilization_max":
            levels.append((name, lambda: utilization()[1], "min"))
        elif name == "utilization_variance":
            levels.append((name, lambda: _variance(model, utilization()[0]), "min"))
    return _Built(model, ctxs, levels, problem, here_all, stay_possible)


def _stay_solution(built: _Built, params: RebalanceParams, limit: float) -> list[int] | None:
    """Every free pod where it runs, completed into a full solution of the model (auxiliary variables:
    presence literals, utilisation, ...) by CP-SAT with every x fixed: the first stage's hint and the
    incumbent when a stage finds nothing better in time. None when staying is not valid."""
    if not built.stay_possible:
        return None
    clone = built.model.clone()
    proto = clone.proto
    for ctx in built.ctx_list:
        for key, var in ctx.x.items():
            v = built.here.get(key, 0)
            d = proto.variables[var.index].domain  # [0, ub]: x variables are plain intervals
            d[0] = v
            d[1] = v
    solver, status = _run(clone, params, limit)
    if status in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return list(solver.response_proto.solution)
    return None


def _extend(model: cp_model.CpModel, solution: Sequence[int], params: RebalanceParams,
            limit: float) -> list[int] | None:
    """`solution` (values of the first variables) completed over the variables added since, by CP-SAT with
    the known ones fixed."""
    clone = model.clone()
    clone.clear_objective()
    for i, v in enumerate(solution):
        clone.add(clone.get_int_var_from_proto_index(i) == v)
    solver, status = _run(clone, params, limit)
    if status in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return list(solver.response_proto.solution)
    return None


def _empty_nodes(model: cp_model.CpModel, problem: Problem, nodes: list[int],
                 x_on: Mapping[int, list[tuple[Any, dict[str, int]]]]) -> Any:
    total: list[Any] = []
    for n in nodes:
        info = problem.state.nodes[problem.nodes[n].name]
        if occupied(info):
            continue  # an immovable pod stays
        xs = [x for x, _ in x_on.get(n, [])]
        if not xs:
            total.append(1)
            continue
        e = model.new_bool_var(f"empty[{problem.nodes[n].name}]")
        for x in xs:
            model.add(x == 0).only_enforce_if(e)
        model.add(sum(xs) >= 1).only_enforce_if(~e)
        total.append(e)
    return sum(total)


def _utilization(model: cp_model.CpModel, problem: Problem, nodes: list[int],
                 x_on: Mapping[int, list[tuple[Any, dict[str, int]]]]) -> tuple[dict[str, list[Any]], Any]:
    """(u per resource and node, U) as in the module docstring; u = ceil(1000 × requested / allocatable),
    exactly (constants where no free pod can go)."""
    per_r: dict[str, list[Any]] = {}
    everything: list[Any] = []
    for r in RESOURCES:
        us: list[Any] = []
        for n in nodes:
            node = problem.nodes[n]
            alloc = node.allocatable.get(r, 0)
            if alloc <= 0:
                continue
            base = problem.state.nodes[node.name].requested.get(r, 0)
            terms = [(x, req.get(r, 0)) for x, req in x_on.get(n, []) if req.get(r, 0)]
            if not terms:
                us.append(_ceil_div(PERMILLE * base, alloc))
                continue
            hi = base + sum(q * _var_ub(x) for x, q in terms)
            u = model.new_int_var(0, _ceil_div(PERMILLE * hi, alloc), f"u[{r},{node.name}]")
            load = base + sum(q * x for x, q in terms)
            model.add(alloc * u >= PERMILLE * load)
            model.add(alloc * (u - 1) < PERMILLE * load)
            us.append(u)
        per_r[r] = us
        everything.extend(us)
    hi_all = max((_ub_of(u) for u in everything), default=0)
    top = model.new_int_var(0, hi_all, "level[utilization_max]")
    if everything:
        model.add_max_equality(top, everything)
    else:
        model.add(top == 0)
    return per_r, top


def _variance(model: cp_model.CpModel, per_r: Mapping[str, list[Any]]) -> Any:
    """V = Σ_r N·Σu² − (Σu)²: pairwise up to PAIRWISE_LIMIT nodes, else as written."""
    var_terms: list[Any] = []
    for r, us in per_r.items():
        if len(us) <= PAIRWISE_LIMIT:
            var_terms.extend(_pairwise_squares(model, r, us))
            continue
        n = len(us)
        squares = []
        for u in us:
            if isinstance(u, int):
                squares.append(u * u)
                continue
            sq = model.new_int_var(0, _ub_of(u) ** 2, f"sq[{u.name}]")
            model.add_multiplication_equality(sq, [u, u])
            squares.append(sq)
        s_hi = sum(_ub_of(u) for u in us)
        total = model.new_int_var(0, s_hi, f"sum[{r}]")
        model.add(total == sum(us))
        s2 = model.new_int_var(0, s_hi * s_hi, f"sum2[{r}]")
        model.add_multiplication_equality(s2, [total, total])
        var_terms.append(n * sum(squares) - s2)
    return sum(var_terms) if var_terms else 0


def _pairwise_squares(model: cp_model.CpModel, r: str, us: list[Any]) -> list[Any]:
    """N·Σu² − (Σu)² written as Σ_{i<j} (u_i − u_j)² (Lagrange's identity): a sum of convex terms, which
    CP-SAT bounds far better than the difference of two squares."""
    out: list[Any] = []
    for i in range(len(us)):
        for j in range(i + 1, len(us)):
            a, b = us[i], us[j]
            if isinstance(a, int) and isinstance(b, int):
                out.append((a - b) ** 2)
                continue
            hi = max(_ub_of(a), _ub_of(b))
            d = model.new_int_var(0, hi, f"d[{r},{i},{j}]")
            model.add_abs_equality(d, a - b)
            sq = model.new_int_var(0, hi * hi, f"d2[{r},{i},{j}]")
            model.add_multiplication_equality(sq, [d, d])
            out.append(sq)
    return out


def _var_ub(x: Any) -> int:
    domain = x.proto.domain  # [lo, hi, lo2, hi2, ...]; the repeated field takes no negative index
    return int(domain[len(domain) - 1])


def _ub_of(u: Any) -> int:
    return u if isinstance(u, int) else _var_ub(u)


def _run(model: cp_model.CpModel, params: RebalanceParams, limit: float) -> tuple[cp_model.CpSolver, int]:
    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = max(0.05, limit)
    solver.parameters.num_workers = max(1, params.workers)
    solver.parameters.random_seed = params.seed
    return solver, solver.solve(model)


def _set_hint(model: cp_model.CpModel, values: Sequence[int]) -> None:
    proto = model.proto
    proto.clear_solution_hint()
    proto.solution_hint.vars.extend(range(len(values)))
    proto.solution_hint.values.extend(values)


def _feasible(cluster: Cluster, free: list[Pod], params: RebalanceParams, limit: float) -> bool | None:
    built = _build(cluster, free, params, feasibility_only=True)
    _, status = _run(built.model, params, limit)
    if status in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return True
    return False if status == cp_model.INFEASIBLE else None


def topology_keys(pod: Pod) -> list[str]:
    """The topology keys the pod's own spread constraints and pod (anti-)affinity terms read."""
    a = pod.affinity
    keys = [c.topology_key for c in pod.spread_constraints]
    keys += [t.topology_key for t in a.pod_required + a.anti_required]
    keys += [w.term.topology_key for w in a.pod_preferred + a.anti_preferred]
    return list(dict.fromkeys(keys))


def _counts_to_assignment(built: _Built, solution: Sequence[int], free: list[Pod],
                          guarded: Mapping[str, int]) -> dict[str, str]:
    """Counts per (class, node) -> a node per free pod: as many pods as possible stay where they run; among
    the pods of a class on one node, those no PDB guards (then those with more budget) move first."""
    problem = built.problem
    out: dict[str, str] = {}
    origin = {p.key: p.node_name for p in free}
    for ctx in built.ctx_list:
        for c in ctx.classes:
            cls = problem.classes[c]
            want = {n: solution[ctx.x[(c, n)].index] for n in ctx.by_class[c]}
            by_node: dict[int, list[Pod]] = defaultdict(list)
            for p in cls.pods:
                by_node[problem.node_index.get(origin[p.key], -1)].append(p)
            movers: list[Pod] = []
            for n, pods in by_node.items():
                pods.sort(key=lambda p: (guarded.get(p.key, 1 << 30), p.order), reverse=True)
                keep = min(len(pods), want.get(n, 0))
                for p in pods[len(pods) - keep:]:
                    out[p.key] = problem.nodes[n].name
                movers.extend(pods[:len(pods) - keep])
            movers.sort(key=lambda p: p.order)
            slots = [n for n in sorted(want) for _ in range(max(0, want[n] - len(by_node.get(n, []))))]
            keys = topology_keys(cls.rep)
            for p in movers:
                src = problem.nodes[problem.node_index[origin[p.key]]].labels if origin[p.key] in problem.node_index \
                    else {}
                if not slots:
                    break
                # stay in the same topology domains where possible: counts per domain (spread skew, affinity
                # domains) then change only as much as the target says, so fewer moves must happen together
                best = max(range(len(slots)), key=lambda i: (
                    sum(1 for k in keys if k in src and problem.nodes[slots[i]].labels.get(k) == src[k]), -i))
                out[p.key] = problem.nodes[slots.pop(best)].name
    return out


def solve_target(cluster: Cluster, free: list[Pod], params: RebalanceParams, deadline: float,
                 guarded: Mapping[str, int] | None = None) -> Target | None:
    """The lexicographic optimum for `free` pods (None: no valid target exists, or none found in time)."""
    built = _build(cluster, free, params)
    model = built.model
    solution = _stay_solution(built, params, max(0.1, (deadline - time.perf_counter()) * 0.2))
    results: list[tuple[str, int, bool]] = []
    notes: list[str] = []
    proven = True
    for i, (name, build, sense) in enumerate(built.levels):
        expr = build()
        if isinstance(expr, int):
            results.append((name, expr, True))  # nothing the model decides
            continue
        left = max(0.05, (deadline - time.perf_counter()) / (len(built.levels) - i))
        if sense == "min":
            model.minimize(expr)
        else:
            model.maximize(expr)
        if solution is not None:
            if len(solution) < len(model.proto.variables):
                # the level added variables: complete the incumbent for them (propagation only)
                solution = _extend(model, solution, params, left * 0.2) or solution
            _set_hint(model, solution)
        solver, status = _run(model, params, left)
        if status == cp_model.INFEASIBLE:
            return None
        if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            if solution is None:
                return None
            notes.append(f"level {name}: no better solution within the time limit")
            proven = False
            break
        solution = list(solver.response_proto.solution)
        value = int(solver.value(expr))
        optimal = status == cp_model.OPTIMAL
        proven &= optimal
        results.append((name, value, optimal))
        if optimal:
            model.add(expr == value)
        elif sense == "min":
            model.add(expr <= value)
        else:
            model.add(expr >= value)
    if solution is None:
        # every level was a constant: any solution is optimal
        model.clear_objective()
        solver, status = _run(model, params, max(0.1, deadline - time.perf_counter()))
        if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            return None
        solution = list(solver.response_proto.solution)
    assignment = _counts_to_assignment(built, solution, free, guarded or {})
    return Target(assignment, OPTIMAL if proven else FEASIBLE, tuple(results), tuple(notes))


# ------------------------------------------------------------------------------------------------ waves


def _sees(holder: Pod, pod: Pod) -> bool:
    """Could `pod` moving change `holder`'s verdict on required (anti-)affinity or DoNotSchedule spread?"""
    a = holder.affinity
    sels = [t.label_selector for t in a.pod_required + a.anti_required]
    sels += [c.label_selector for c in holder.spread_constraints if c.when_unsatisfiable == "DoNotSchedule"]
    return any(s is not None and s.matches(pod.labels) for s in sels)


def _holds_terms(pod: Pod) -> bool:
    a = pod.affinity
    return bool(a.pod_required or a.anti_required or
                any(c.when_unsatisfiable == "DoNotSchedule" for c in pod.spread_constraints))


class _Waves:
    """Builds waves over a mutable copy of the state (see the module docstring, step 3)."""

    def __init__(self, cluster: Cluster, params: RebalanceParams, healthy: Mapping[str, bool],
                 initial_bad: Mapping[str, set[str]], retire: Sequence[str] = ()) -> None:
        self.cluster = cluster
        self.params = params
        self.where: dict[str, str] = {p.key: p.node_name for p in cluster.pods}
        self.moved: set[str] = set()
        self.healthy = dict(healthy)
        self.initial_bad = initial_bad
        self.holders = [p for p in cluster.pods if _holds_terms(p)]
        self._watchers: dict[str, list[Pod]] = {}
        self.pods = {p.key: p for p in cluster.pods}
        # cordoned from the first wave to the end: drained nodes, and the nodes `pack` empties (removable)
        self.drain_cordons = tuple(dict.fromkeys(tuple(params.drain) + tuple(retire)))
        self.why: dict[str, str] = {}  # move key -> last reason it could not join a wave
        self.why_budget: dict[str, str] = {}  # move key -> the PDB that refused it (alone or in its group)

    def reason(self, key: str) -> str:
        """Why a move joins no wave: the state it would break, and the budget that forbids the moves that
        would have to happen with it."""
        invalid, budget = self.why.get(key, ""), self.why_budget.get(key, "")
        if invalid and budget:
            return f"{invalid}; the moves that would have to go with it exceed the {budget}"
        return invalid or budget or "no wave keeps every state valid"

    # -- PDB budgets at the start of a wave ------------------------------------------------------------
    def budgets(self) -> dict[str, disruption.Budget]:
        pods = [(p, self.healthy.get(p.key, True)) for p in self.cluster.pods]
        return {b.key: disruption.budget(b, pods, self.cluster.workloads) for b in self.cluster.pdbs}

    def cost(self, m: Move, budgets: Mapping[str, disruption.Budget]) -> str:
        """The PDB this eviction spends one disruption of, or ""."""
        for b in disruption.guarding(self.cluster.pdbs, m.pod):
            if disruption.spends(m.pod, self.healthy.get(m.key, True), budgets[b.key]):
                return b.key
        return ""

    # -- validity -----------------------------------------------------------------------------------------
    @staticmethod
    def _apply(state: ClusterState, m: Move) -> Pod:
        """Evict m.pod and bind its replacement (a new pod of the controller: no spec.nodeName)."""
        state.remove(m.pod)
        new = replace(m.pod, node_name="")
        state.add(new, m.target)
        return new

    @staticmethod
    def _undo(state: ClusterState, m: Move, new: Pod) -> None:
        state.remove(new)
        state.add(m.pod, m.source)

    def _ok_after(self, state: ClusterState, arrivals: Sequence[tuple[Pod, str]], touched: Sequence[Pod],
                  wave_keys: set[str]) -> tuple[str, tuple[str, str, str]]:
        """("", ...) when the state is valid around these arrivals, else the first reason (for the blocked text)
        and the culprit: ("arrival", pod key, plugin) for a replacement rejected on its node, ("holder", pod key,
        plugin) for a pod whose verdict the moves break."""
        for new, node in arrivals:
            reasons = judge(new, node, state)
            if reasons:
                return f"{node}: {reasons[0].plugin}: {reasons[0].reason}", ("arrival", new.key, reasons[0].plugin)
        verdicts: dict[tuple[Any, ...], list[Any]] = {}  # identical pods on one node get one verdict
        watching: dict[str, Pod] = {}
        for t in touched:
            watching.update((h.key, h) for h in self.watchers(t))
        for h in watching.values():
            key = h.key
            node = state.node_of.get(key)
            if node is None:
                continue
            pod = state.nodes[node].pods[key]
            sig = (node, pod_signature(pod, frozenset(pod.labels)), tuple(sorted(pod.labels.items())))
            reasons = verdicts.get(sig)
            if reasons is None:
                reasons = verdicts[sig] = judge(pod, node, state)
            allowed = set() if (key in self.moved or key in wave_keys) else self.initial_bad.get(key, set())
            bad = [r for r in reasons if r.plugin not in allowed]
            if bad:
                return f"{key} on {node} would break: {bad[0].plugin}: {bad[0].reason}", ("holder", key, bad[0].plugin)
        return "", ("", "", "")

    def watchers(self, pod: Pod) -> list[Pod]:
        """Pods whose required (anti-)affinity or DoNotSchedule spread selects `pod` (cached per pod)."""
        found = self._watchers.get(pod.key)
        if found is None:
            found = self._watchers[pod.key] = [h for h in self.holders if _sees(h, pod)]
        return found

    def current_state(self, nodes: Sequence[Node] | None = None) -> ClusterState:
        return state_of(self.cluster, self.where, self.moved, nodes)

    def verified(self, wave: Sequence[Move]) -> bool:
        where = dict(self.where)
        for m in wave:
            where[m.key] = m.target
        return state_report(self.cluster, where, self.moved | {m.key for m in wave}).ok

    # -- building one wave ---------------------------------------------------------------------------------
    def build(self, remaining: list[Move], exclude: set[str], starts: set[str] | None = None) -> list[Move]:
        """Moves joining the next wave: one at a time when it fits alone, else with the moves it depends on.
        `starts`: only these moves may start a group (the others may still join one as helpers)."""
        budgets = self.budgets()
        left = {k: b.allowed for k, b in budgets.items()}
        state = self.current_state()
        wave: list[Move] = []
        keys: set[str] = set()
        by_key = {m.key: m for m in remaining}
        progress = True
        while progress:
            progress = False
            for m in remaining:
                if m.key in keys or m.key in exclude or (starts is not None and m.key not in starts):
                    continue
                group = [m]
                for _ in range(GROUP_LIMIT):
                    ok, culprit = self._try(state, group, budgets, left, keys)
                    if ok or not culprit[0]:
                        break
                    helper = self._helper(culprit, group, remaining, by_key, keys | exclude)
                    if helper is None:
                        break
                    group.append(helper)
                if ok:
                    wave.extend(group)
                    keys |= {g.key for g in group}
                    progress = True
        return wave

    def _try(self, state: ClusterState, group: list[Move], budgets: Mapping[str, disruption.Budget],
             left: dict[str, int], keys: set[str]) -> tuple[bool, tuple[str, str, str]]:
        """Add `group` to the wave being built in `state` if the budgets allow it and the state stays valid;
        else the culprit (see _ok_after; empty when a budget refused it)."""
        need = Counter(self.cost(m, budgets) for m in group)
        need.pop("", None)
        short = [k for k, n in need.items() if left[k] < n]
        if short:
            b = budgets[short[0]]
            for m in group:
                if self.cost(m, budgets) == short[0]:
                    self.why_budget[m.key] = (f"PodDisruptionBudget {b.pdb} allows {b.allowed} disruption(s) per "
                                              f"wave ({b.cause()})")
            return False, ("", "", "")
        arrivals = [(self._apply(state, m), m.target) for m in group]
        why, culprit = self._ok_after(state, arrivals, [m.pod for m in group], keys | {m.key for m in group})
        if why:
            for m, (new, _) in reversed(list(zip(group, arrivals))):
                self._undo(state, m, new)
            for m in group:
                self.why[m.key] = why
            return False, culprit
        for k, n in need.items():
            left[k] -= n
        return True, culprit

    @staticmethod
    def _helper(culprit: tuple[str, str, str], group: list[Move], remaining: Sequence[Move],
                by_key: Mapping[str, Move], taken: set[str]) -> Move | None:
        """The remaining move most likely to make `group` valid with it: the broken pod's own move; for a
        rejected replacement, a move off its node (room, anti-affinity), then a partner its terms need moving
        to the same node, then any move its selectors or theirs see (spread groups, co-located pairs)."""
        kind, key, plugin = culprit
        inside = {g.key for g in group} | taken
        if kind == "holder":
            m = by_key.get(key)
            return m if m is not None and m.key not in inside else None
        a = by_key[key]
        free = [q for q in remaining if q.key not in inside]
        ranked = ([q for q in free if q.source == a.target],
                  [q for q in free if q.target == a.target and _sees(a.pod, q.pod)],
                  [q for q in free if _sees(a.pod, q.pod) or _sees(q.pod, a.pod)])
        if plugin in ("NodeResourcesFit", "NodePorts"):
            ranked = ranked[:1]
        return next((q for tier in ranked for q in tier), None)

    # -- landing ---------------------------------------------------------------------------------------------
    def simulate(self, wave: Sequence[Move], cordons: Iterable[str]) -> list[str]:
        """Where kube-scheduler binds each replacement (in eviction order), with `cordons` unschedulable."""
        cordons = set(cordons)
        nodes = [replace(n, unschedulable=True) if n.name in cordons else n for n in self.cluster.nodes]
        keys = {m.key for m in wave}
        where = {k: v for k, v in self.where.items() if k not in keys}
        pods = [(replace(p, node_name="") if p.key in self.moved else p, where[p.key])
                for p in self.cluster.pods if p.key not in keys]
        state = ClusterState.from_cluster(replace(self.cluster, nodes=tuple(nodes)), pods)
        sched = _scheduler(state, self.params.seed)
        top = max((p.order for p in self.cluster.pods), default=0)
        replacements = [replace(m.pod, node_name="", order=top + 1 + i) for i, m in enumerate(wave)]
        out = {}
        for pod in sorted(replacements, key=lambda p: (-p.priority, p.order)):
            node, _ = sched.schedule(pod)
            out[pod.key] = node or ""
        return [out[m.key] for m in wave]

    def shrink(self, wave: Sequence[Move], exclude: set[str]) -> list[Move]:
        """The wave without `exclude`, if it is still valid on its own (one check, no rebuild); else []."""
        reduced = [m for m in wave if m.key not in exclude]
        if not reduced:
            return []
        budgets = self.budgets()
        ok, _ = self._try(self.current_state(), reduced, budgets, {k: b.allowed for k, b in budgets.items()}, set())
        return self.order(reduced) if ok else []

    def order(self, wave: list[Move]) -> list[Move]:
        """The wave in eviction order (see eviction_order), counting each replacement's feasible nodes on the
        state after the wave's evictions."""
        if len(wave) < 2:
            return wave
        if len(wave) > ORDER_LIMIT:
            return eviction_order(wave)  # counting every replacement's feasible nodes costs more than it helps
        state = self.current_state()
        for m in wave:
            state.remove(m.pod)
        choices = {}
        for m in wave:
            new = replace(m.pod, node_name="")
            choices[m.key] = sum(1 for v in run_filters(new, state, DEFAULT_PROFILE.filters) if v.feasible)
        return eviction_order(wave, choices)

    def land(self, wave: list[Move]) -> tuple[tuple[str, ...], list[str], list[str], list[int]]:
        """(temporary cordons, outcome left alone, outcome with cordons, indexes of moves that still miss)."""
        alone = self.simulate(wave, self.drain_cordons)
        targets = {m.target for m in wave}
        temp: list[str] = []
        outcome = alone
        while True:
            missing = _mismatches(wave, outcome)
            if not missing:
                return tuple(temp), alone, outcome, []
            extra = [outcome[i] for i in missing if outcome[i] and outcome[i] not in targets and outcome[i] not in temp]
            extra += [n for n in _over_receivers(wave, outcome) if n not in targets and n not in temp]
            extra = list(dict.fromkeys(extra))
            if not extra:
                return tuple(temp), alone, outcome, missing
            temp.extend(extra)
            outcome = self.simulate(wave, self.drain_cordons + tuple(temp))

    def commit(self, wave: Sequence[Move]) -> None:
        for m in wave:
            self.where[m.key] = m.target
            self.moved.add(m.key)
            self.healthy[m.key] = True  # the script waits for the replacement to be Ready


def _scheduler(state: ClusterState, seed: int) -> Scheduler:
    # kube-scheduler exactly: podplan's placed-pod guard is not part of kube-scheduler
    return Scheduler(state, seed, protect_placed=False)


def controller_key(pod: Pod) -> str:
    """Replacements of one controller are interchangeable: the controller names them."""
    owner = pod.controller
    return f"{pod.namespace}/{owner.kind}/{owner.name}" if owner else pod.key


def _mismatches(wave: Sequence[Move], outcome: Sequence[str]) -> list[int]:
    """Indexes of moves whose controller's replacements do not land on the planned nodes (as counts)."""
    planned: dict[str, Counter[str]] = defaultdict(Counter)
    got: dict[str, Counter[str]] = defaultdict(Counter)
    for m, node in zip(wave, outcome):
        planned[controller_key(m.pod)][m.target] += 1
        got[controller_key(m.pod)][node] += 1
    bad = {k for k in planned if planned[k] != got[k]}
    return [i for i, m in enumerate(wave) if controller_key(m.pod) in bad]


def _over_receivers(wave: Sequence[Move], outcome: Sequence[str]) -> list[str]:
    planned: Counter[str] = Counter(m.target for m in wave)
    got: Counter[str] = Counter(n for n in outcome if n)
    return [n for n in got if got[n] > planned.get(n, 0)]


def _assign_landing(wave: Sequence[Move], outcome: Sequence[str]) -> list[str]:
    """Per move, the node its controller's replacement lands on: the planned one where the counts allow."""
    pool: dict[str, Counter[str]] = defaultdict(Counter)
    for m, node in zip(wave, outcome):
        pool[controller_key(m.pod)][node] += 1
    out = []
    for m in wave:
        c = pool[controller_key(m.pod)]
        if c[m.target] > 0:
            c[m.target] -= 1
            out.append(m.target)
        else:
            other = next((n for n, k in sorted(c.items()) if k > 0), "")
            if other:
                c[other] -= 1
            out.append(other)
    return out


def eviction_order(moves: Iterable[Move], choices: Mapping[str, int] | None = None) -> list[Move]:
    """kube-scheduler queues higher priority first whatever the creation order; within a priority the
    replacements are created, and queued, in eviction order: pods with required pod affinity after the others
    (their partners must be bound first), then the ones with fewer nodes to choose from (`choices`), then
    larger requests (first-fit decreasing), then input order."""
    choices = choices or {}
    return sorted(moves, key=lambda m: (-m.pod.priority, bool(m.pod.affinity.pod_required), choices.get(m.key, 0),
                                        -m.pod.requests.get("cpu", 0), -m.pod.requests.get("memory", 0),
                                        m.pod.order))


def plan_waves(cluster: Cluster, moves: Sequence[Move], params: RebalanceParams, healthy: Mapping[str, bool],
               initial_bad: Mapping[str, set[str]], retire: Sequence[str] = (),
               accept: Callable[[Mapping[str, str]], bool] | None = None,
               ) -> tuple[list[Wave], list[tuple[Move, str]], dict[str, str]]:
    """Waves for `moves` (in priority order: drained nodes first), the moves no wave can make with why, and
    where every pod is after the waves. `retire`: nodes the target empties, cordoned like drained ones.
    `accept(changes)`: whether the target with these pods sent elsewhere is as good (every level equal) and
    valid; then a wave whose replacements kube-scheduler lands differently takes kube-scheduler's nodes
    (no cordon needed) instead of being split."""
    w = _Waves(cluster, params, healthy, initial_bad, retire)
    drain_rank = {d: i for i, d in enumerate(params.drain)}
    remaining = sorted(moves, key=lambda m: (drain_rank.get(m.source, len(drain_rank)), m.pod.order))
    waves: list[Wave] = []
    stuck: list[tuple[Move, str]] = []
    def settle(wave: list[Move]) -> tuple[list[Move], list[str], bool]:
        """Land `wave` (taking kube-scheduler's nodes when as good); (the wave, moves to defer, committed)."""
        nonlocal remaining
        temp, alone, outcome, missing = w.land(wave)
        if (temp or missing) and accept is not None and all(alone):
            changes = {m.key: n for m, n in zip(wave, alone) if n != m.target}
            if changes and accept(changes):
                wave = [replace(m, target=alone[i]) for i, m in enumerate(wave)]
                remaining = [replace(m, target=changes[m.key]) if m.key in changes else m for m in remaining]
                temp, alone, outcome, missing = w.land(wave)
        if missing:
            # cordons cannot steer them: the replacements that took another move's node wait for a later
            # wave (else the last one that missed)
            thieves = [wave[i].key for i in missing if outcome[i] and outcome[i] != wave[i].target]
            first = wave[missing[0]].key  # scheduled first among them: the others' arrivals cannot move it
            return wave, list(set(thieves) - {first} or set(thieves) or {wave[missing[-1]].key}), False
        if not w.verified(wave):
            return wave, [wave[-1].key], False
        budgets = w.budgets()
        cost = {m.key: w.cost(m, budgets) for m in wave}
        spent: Counter[str] = Counter(cost.values())
        landed_alone = _assign_landing(wave, alone)
        landed = _assign_landing(wave, outcome)
        cordon = tuple(dict.fromkeys(w.drain_cordons + temp))
        waves.append(Wave(tuple(wave), cordon, temp,
                          tuple(Landing(m.key, m.target, a, b) for m, a, b in zip(wave, landed_alone, landed)),
                          {k: (n, budgets[k].allowed) for k, n in spent.items() if k},
                          {k: v for k, v in cost.items() if v}))
        w.commit(wave)
        return wave, [], True

    while remaining:
        exclude: set[str] = set()
        wave = w.order(w.build(remaining, exclude))
        committed = False
        for _ in range(len(remaining) + 1):
            if not wave:
                break
            wave, defer, committed = settle(wave)
            if committed:
                break
            exclude |= set(defer)
            wave = w.shrink(wave, exclude) or w.order(w.build(remaining, exclude))
        if not committed:
            # the deferred moves may go alone: one move (with the moves it needs) per wave
            for m in list(remaining):
                wave = w.order(w.build(remaining, set(), starts={m.key}))
                if wave:
                    wave, _, committed = settle(wave)
                    if committed:
                        break
        if not committed:
            for m in remaining:
                stuck.append((m, w.reason(m.key)))
            break
        done = {m.key for m in wave}
        remaining = [m for m in remaining if m.key not in done]
    return waves, stuck, dict(w.where)


# ------------------------------------------------------------------------------------------------ metrics


def metrics(cluster: Cluster, where: Mapping[str, str], moved: Iterable[str], drain: Sequence[str],
            policy: Policy | None = None) -> dict[str, Any]:
    """Utilisation (max/mean/stddev per resource over the nodes not drained), nodes used, empty nodes,
    violations (every pod judged with itself removed, pre-existing ones included) and the preference score."""
    moved = set(moved)
    state = state_of(cluster, where, moved)
    kept = [n.name for n in cluster.nodes if n.name not in drain]
    util: dict[str, dict[str, float]] = {}
    for r in RESOURCES:
        vals = [req / alloc for req, alloc in loads(state, kept, r)]
        if vals:
            mean = sum(vals) / len(vals)
            std = (sum((v - mean) ** 2 for v in vals) / len(vals)) ** 0.5
            util[r] = {"max": round(max(vals), 4), "mean": round(mean, 4), "stddev": round(std, 4)}
        else:
            util[r] = {"max": 0.0, "mean": 0.0, "stddev": 0.0}
    bad = judge_all(state)
    empty = [n.name for n in cluster.nodes if not occupied(state.nodes[n.name])]
    return {
        "utilization": util,
        "nodes_used": len(cluster.nodes) - len(empty),
        "empty_nodes": empty,
        "violations": sum(len(v) for v in bad.values()),
        "preference": sum(preference_terms(cluster, state, policy or Policy()).values()),
    }


# ------------------------------------------------------------------------------------------------ the plan


def _drain_phrase(nodes: Sequence[str]) -> tuple[str, str]:
    return ", ".join(nodes), "is" if len(nodes) == 1 else "are"


def rebalance(cluster: Cluster, params: RebalanceParams) -> RebalancePlan:
    """The whole rebalance: target, waves, landing, metrics (see the module docstring)."""
    started = time.perf_counter()
    deadline = started + params.time_limit
    node_names = {n.name for n in cluster.nodes}
    unknown = [d for d in params.drain if d not in node_names]
    if unknown:
        raise RebalanceError(f"--drain names node(s) not in the input: {', '.join(unknown)}")
    if params.goal not in GOALS + (DRAIN,):
        raise RebalanceError(f"unknown goal {params.goal!r}: one of {', '.join(GOALS)}")
    notes: list[str] = []
    if cluster.pending:
        notes.append(f"{len(cluster.pending)} pending pod(s) of the input are not part of a rebalance")
    base = replace(cluster, pending=())
    drained = set(params.drain)
    blocked: list[Blocked] = []

    healthy = {p.key: disruption.pod_ready(p) for p in base.pods}
    initial = state_of(base, {})
    initial_bad = judge_all(initial)
    start_budgets = {b.key: disruption.budget(b, [(p, healthy[p.key]) for p in base.pods], base.workloads)
                     for b in base.pdbs}

    # 1. who may move
    free: list[Pod] = []
    held: dict[str, str] = {}  # movable pods the Eviction API refuses for the whole plan -> why
    guarded: dict[str, int] = {}  # free pod -> the allowed disruptions of its PDB (moves prefer unguarded pods)
    for p in base.pods:
        why = why_immovable(p, params.move_policy)
        if why:
            if p.node_name in drained and not goes_with_node(p):
                blocked.append(Blocked(p.key, R_IMMOVABLE_ON_DRAINED.format(node=p.node_name, why=why)))
            continue
        pdbs = disruption.guarding(base.pdbs, p)
        if len(pdbs) > 1:
            held[p.key] = R_MANY_PDBS.format(err=disruption.ERR_TOO_MANY_PDBS, pdbs=", ".join(b.key for b in pdbs),
                                             what="{what}")
            continue
        if pdbs:
            b = start_budgets[pdbs[0].key]
            if disruption.spends(p, healthy[p.key], b) and b.allowed <= 0:
                held[p.key] = R_PDB_ZERO.format(pdb=b.pdb, cause=b.cause(), what="{what}")
                continue
            guarded[p.key] = b.allowed
        free.append(p)
    stays: dict[str, list[str]] = defaultdict(list)  # reason -> pods kept in place for it
    for p in base.pods:
        if p.key in held:
            if p.node_name in drained:
                blocked.append(Blocked(p.key, held[p.key].format(what=f"it blocks the drain of {p.node_name}")))
            elif p.key in initial_bad:
                blocked.append(Blocked(p.key, held[p.key].format(
                    what=f"its violation of {', '.join(sorted(initial_bad[p.key]))} cannot be repaired")))
            else:
                stays[held[p.key].format(what="kept in place")].append(p.key)
    for reason, keys in stays.items():
        notes.append(f"{len(keys)} pod(s) cannot be evicted ({', '.join(keys)}): {reason}")

    # 2. the target
    target = None
    if params.goal in ("fix", DRAIN) and len(free) > FOCUS_LIMIT and params.max_moves is None:
        target = _focused(base, free, params, drained, initial_bad, deadline, guarded)
        if target is not None:
            notes.append(f"{len(free)} movable pods: only the {len(target.assignment)} that must move (on drained "
                         "nodes, or in violation) were re-placed; the others stayed where they run")
            free = [p for p in free if p.key in target.assignment]  # the others count as existing pods
    if target is None:
        target = solve_target(base, free, params, deadline, guarded)
    kept: dict[str, str] = {}
    if target is None:
        violators = [p for p in free if p.key in initial_bad]
        ok = [p for p in free if p.key not in initial_bad]
        budget = max(0.1, (deadline - time.perf_counter()) * 0.3 / max(1, len(violators)))
        if _feasible(base, ok, params, budget):
            for v in violators:
                if _feasible(base, ok + [v], params, budget):
                    ok.append(v)
                else:
                    limit = f" within --max-moves {params.max_moves}" if params.max_moves is not None else ""
                    kept[v.key] = R_UNREPAIRED.format(rules=", ".join(sorted(initial_bad[v.key])),
                                                      node=v.node_name, limit=limit)
            ok.sort(key=lambda p: p.order)
            target = solve_target(base, ok, params, max(deadline, time.perf_counter() + 1.0), guarded)
            free = ok
    if target is None:
        why = " within the time limit" if time.perf_counter() >= deadline else ""
        blocked.append(Blocked("-", R_NO_TARGET.format(why=why)))
        where = {p.key: p.node_name for p in base.pods}
        before = metrics(base, where, (), params.drain, params.policy)
        return RebalancePlan(params.goal, params.drain, False, tuple(blocked), (), before, before, NO_TARGET, (),
                             tuple(notes), time.perf_counter() - started, where)
    for key, why in kept.items():
        if params.goal == "fix" or (key in {p.key for p in base.pods if p.node_name in drained}):
            blocked.append(Blocked(key, why))
        else:
            notes.append(f"{key} {why}")

    # pods a drain leaves behind: say what would let the node empty
    pods = {p.key: p for p in base.pods}
    final_target = {p.key: p.node_name for p in base.pods}
    final_target.update(target.assignment)
    capped = params.max_moves is not None and dict((n, v) for n, v, _ in target.levels).get("moves") == \
        params.max_moves
    for i, d in enumerate(params.drain):
        left = [p for p in free if target.assignment.get(p.key) == d]
        for p in left:
            if capped:
                blocked.append(Blocked(p.key, R_CAPPED.format(n=params.max_moves, node=d)))
                continue
            text, verb = _drain_phrase(params.drain)
            reason = R_NO_ROOM.format(drained=text, verb=verb, node=d)
            back = _fits_back(base, final_target, {q.key for q in free if target.assignment.get(q.key) != q.node_name},
                              p, params.drain[:i])
            reason += R_ADD_BACK.format(back=back, node=d) if back else R_ADD_NODE.format(node=d)
            blocked.append(Blocked(p.key, reason))

    # 3. waves and landing
    moves = [Move(pods[k], pods[k].node_name, n) for k, n in target.assignment.items() if n != pods[k].node_name]
    retire: list[str] = []
    if params.goal == "pack":
        target_state = state_of(base, final_target, {m.key for m in moves})
        retire = [n.name for n in base.nodes if n.name not in drained and occupied(initial.nodes[n.name])
                  and not occupied(target_state.nodes[n.name])]
    levels = level_names(params)
    planned = dict(target.assignment)
    best = goal_values(base, params, planned, free)
    unbound_free, _ = as_pending(base, free)

    def accept(changes: Mapping[str, str]) -> bool:
        """Is the target with `changes` as good on every level, and valid? Then it becomes the target."""
        trial = {**planned, **changes}
        values = goal_values(base, params, trial, free)
        if any(values[n] != best[n] for n in levels) or not verify(unbound_free, trial).ok:
            return False
        planned.update(changes)
        return True

    waves, stuck, final = plan_waves(base, moves, params, healthy, initial_bad, retire, accept)
    for m, why in stuck:
        blocked.append(Blocked(m.key, R_STUCK.format(src=m.source, dst=m.target, why=why)))
    moved = {m.key for w in waves for m in w.moves}
    before = metrics(base, {p.key: p.node_name for p in base.pods}, (), params.drain, params.policy)
    after = metrics(base, final, moved, params.drain, params.policy)
    if target.notes:
        notes.extend(target.notes)
    return RebalancePlan(params.goal, params.drain, not blocked, tuple(blocked), tuple(waves), before, after,
                         target.status, target.levels, tuple(notes), time.perf_counter() - started, final)


def _focused(cluster: Cluster, free: list[Pod], params: RebalanceParams, drained: set[str],
             initial_bad: Mapping[str, set[str]], deadline: float, guarded: Mapping[str, int]) -> Target | None:
    """Large clusters, drain/fix: re-place only the pods that must move. Accepted when every drained node
    empties and, for a drain, each of those pods moves once: the fewest moves possible (a drained node's pods
    all have to move); the tie-break is then over those pods only. None: solve with every movable pod."""
    must = [p for p in free if p.node_name in drained or p.key in initial_bad]
    if not must:
        return Target({}, OPTIMAL, (("moves", 0, True),))
    share = time.perf_counter() + (deadline - time.perf_counter()) * 0.5
    target = solve_target(cluster, must, params, share, guarded)
    if target is None:
        return None
    values = dict((name, v) for name, v, _ in target.levels)
    if any(values.get(f"{DRAIN}:{d}", 0) for d in params.drain):
        return None
    if params.goal == DRAIN and values.get("moves") != sum(1 for p in must if p.node_name in drained):
        return None
    return target


def _fits_back(cluster: Cluster, where: Mapping[str, str], moved: set[str], pod: Pod,
               earlier: Sequence[str]) -> str:
    """The first earlier-drained node that, added back, takes `pod` in the target state ("" if none)."""
    if not earlier:
        return ""
    state = state_of(cluster, where, moved)
    new = replace(pod, node_name="")
    state.remove(state.nodes[where[pod.key]].pods[pod.key])
    for d in earlier:
        state.add(new, d)
        ok = not judge(new, d, state)
        state.remove(new)
        if ok:
            return d
    return ""
