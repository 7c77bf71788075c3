"""The target's CP-SAT model: the free movable pods become pending pods (movable.as_pending), so every rule is
encoded by its package's encoding.py with the verifier's final-state semantics (optimizer.problem/model).

Added: every free pod is placed; per class and node `stay <= x`, `stay <= pods of the class that run there
now`, moves = Σ (class size − Σ stay) (pods of a class are interchangeable for every rule, so the count
model's minimum is the individual minimum); drained nodes keep at most their own pods (nothing moves in).
Every free pod ends valid, whatever the goal: a rebalance never keeps a violation it can repair.

Levels, in lexicographic order (`level_names`; target.py solves them one stage at a time):
- `--drain` nodes, in the order given: pods left on each, minimised (the drain is soft so that a drain that
  cannot complete still gets the best partial plan, and says which pods stay and why);
- the goal: `fix` has no level of its own (validity is hard); `spread` minimises U = max over nodes and
  {cpu, memory} of u = ceil(1000 × requested / allocatable), then V = Σ_r (N·Σ_n u² − (Σ_n u)²) = N² × the
  variance of the per-mille utilisations, encoded as Σ_{i<j} (u_i − u_j)² (Lagrange's identity: convex terms
  CP-SAT proves; above PAIRWISE_LIMIT nodes as written); `pack` maximises the nodes left without pods
  (DaemonSet and mirror pods go with the node); `prefs` maximises the preference score P (notes/semantics.md);
- moves, minimised; `--max-moves` caps them (a hard constraint);
- a tie-break for drain/fix/prefs: the lowest U.
Utilisation and emptiness are over the nodes not being drained. A level's expression is built when its stage
starts: the variance terms, say, would only slow down the stages before it.
"""
from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ortools.sat.python import cp_model

from ...models.objects import Cluster, Pod

from ..context import ModelContext
from ..problem import Problem, build_problem
from .metrics import PERMILLE, RESOURCES, ceil_div, occupied
from .movable import as_pending
from .plan import DRAIN, RebalanceParams

OUTSIDE = "outside"  # params.extra's level: the goals beyond the scheduler's rules left unmet (minimised)
PAIRWISE_LIMIT = 12  # nodes up to which the variance level is a sum of squared pairwise differences


@dataclass
class BuiltModel:
    model: cp_model.CpModel
    ctx_list: list[ModelContext]
    levels: list[tuple[str, Callable[[], Any], str]]  # (name, builds the expression, "min" | "max")
    problem: Problem
    here: dict[tuple[int, int], int] = field(default_factory=dict)  # (class, node) -> its pods running there
    stay_possible: bool = True  # every free pod's node has a variable (no static rule rejects it there)
    stays: dict[tuple[int, int], Any] = field(default_factory=dict)  # (class, node) -> its pods that stay there
    x_on: dict[int, list[tuple[Any, dict[str, int]]]] = field(default_factory=dict)  # node -> (x, requests)


def level_names(params: RebalanceParams) -> list[str]:
    """The target's objective levels, in lexicographic order (names as in goal_values)."""
    names = [f"{DRAIN}:{d}" for d in params.drain]
    if params.extra is not None:
        names.append(OUTSIDE)
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


def level_key(values: Mapping[str, int], names: Sequence[str]) -> tuple[int, ...]:
    """The levels `names` of `values` in lexicographic order, each signed so that larger is better (the levels
    not in SENSE, a drained node's pods, are minimised): compare two keys to compare two targets."""
    return tuple(values[n] if SENSE.get(n, "min") == "max" else -values[n] for n in names)


def build_model(cluster: Cluster, free: list[Pod], params: RebalanceParams,
                feasibility_only: bool = False, nodes: Collection[str] | None = None,
                takers: Collection[str] | None = None) -> BuiltModel:
    """One CP-SAT model (components share it as independent sub-models) for placing `free` pods again.
    `nodes`: the only nodes a free pod may end on (a neighbourhood: a restriction, so its optimum is no
    bound); every free pod's own node must be among them. `takers`: the only nodes that may gain pods of a
    class (the others keep at most the pods of it they run now); None: every node."""
    base = replace(cluster, pending=())
    unbound, origin = as_pending(base, free)
    decompose = params.goal not in ("spread",) and params.max_moves is None
    problem = build_problem(unbound, params.profile, gang_all=False, decompose=decompose)
    model = cp_model.CpModel()
    drained = {problem.node_index[d] for d in params.drain if d in problem.node_index}
    allowed = sorted(problem.node_index[n] for n in nodes) if nodes is not None else None
    no_gain = {problem.node_index[n] for n in takers} if takers is not None else None
    ctxs: list[ModelContext] = []
    here_all: dict[tuple[int, int], int] = {}
    stay_possible = True
    moves_terms: list[Any] = []
    stay_vars: dict[tuple[int, int], Any] = {}
    x_on: dict[int, list[tuple[Any, dict[str, int]]]] = defaultdict(list)  # node -> (x, requests)
    for comp in problem.components:
        ctx = ModelContext(problem, comp, params.policy)
        ctx.model = model  # every component in one model: levels are sums over components
        ctx.make_x({c: allowed for c in comp.classes} if allowed is not None else None)
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
                if n in drained or (no_gain is not None and n not in no_gain):
                    model.add(x <= here.get(n, 0))  # a drained node takes nothing new
                if here.get(n, 0):
                    s = model.new_int_var(0, min(here[n], ctx.ub[(c, n)]), f"stay[{cls.name},{ctx.nname(n)}]")
                    model.add(s <= x)
                    stays.append(s)
                    stay_vars[(c, n)] = s
                x_on[n].append((x, cls.rep.requests))
            moves_terms.append(cls.size - sum(stays))
        ctxs.append(ctx)
    moves = sum(moves_terms)
    if params.max_moves is not None:
        model.add(moves <= params.max_moves)
    outside: Any = 0
    if params.extra is not None:
        outside = params.extra.constrain(BuiltModel(model, ctxs, [], problem, here_all, stay_possible, stay_vars,
                                                    dict(x_on)))
    if feasibility_only:
        return BuiltModel(model, ctxs, [], problem, here_all, stay_possible)
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
        elif name == OUTSIDE:
            levels.append((name, lambda: outside, "min"))
        elif name == "empty_nodes":
            levels.append((name, lambda: _empty_nodes(model, problem, kept, x_on), "max"))
        elif name == "preference":
            levels.append((name, lambda: sum(t for ctx in ctxs for kind in ctx.terms for t in ctx.terms[kind]),
                           "max"))
        elif name == "utilization_max":
            levels.append((name, lambda: utilization()[1], "min"))
        elif name == "utilization_variance":
            levels.append((name, lambda: _variance(model, utilization()[0]), "min"))
    return BuiltModel(model, ctxs, levels, problem, here_all, stay_possible)



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
                us.append(ceil_div(PERMILLE * base, alloc))
                continue
            hi = base + sum(q * _var_ub(x) for x, q in terms)
            u = model.new_int_var(0, ceil_div(PERMILLE * hi, alloc), f"u[{r},{node.name}]")
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

