"""Builds the CP-SAT model of one independent part of the problem from the profile's rule encodings.

Every hard rule is encoded by its package's encoding.py (Plugin.encoding) on an optimizer.context.ModelContext,
with the verifier's final-state semantics: each pod of the final state judged by every filter with itself
removed. Added here: gangs (all-or-minimum), node symmetry breaking, and the objective levels maximised
lexicographically: `level[placed]` (per priority), `level[preference]` (P, the sum of the rules' terms) and
`level[strategy]` (the spread/pack tie-break).
"""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from ortools.sat.python import cp_model

from .context import TERM_KINDS, Explain, ModelContext
from .gangs import Gangs
from .noderesources import encoding as noderesources_enc
from .policy import Policy
from .problem import Component, Problem

GANG = "Gang"


def existing_terms(problem: Problem, policy: Policy) -> dict[str, int]:
    """P's contribution of existing pods that no pending pod can change (added once, outside components);
    computed once per problem and policy (0.3 s at 5,000 nodes, asked for by the plan's terms, its bound and
    the comparison with greedy, each only when it needs it). A copy: callers may change it."""
    key = ("model.existing_terms", policy)
    found = problem.cache.get(key)
    if found is None:
        out: dict[str, int] = defaultdict(int)
        for enc in problem.profile.encodings:
            if enc.existing_terms is not None:
                for k, v in enc.existing_terms(problem, policy).items():
                    out[k] += v
        found = problem.cache[key] = dict(out)
    return dict(found)  # type: ignore[call-overload]


@dataclass
class Built:
    """A built component model with its objective levels."""

    ctx: ModelContext
    level_names: list[str]  # maximised in this order
    level_vars: list[cp_model.IntVar]
    level_priorities: list[list[int]]  # for each level-1 sub-level: the priorities it counts
    weights: dict[int, int]  # priority -> weight in the placed level(s)
    terms: dict[str, cp_model.IntVar] = field(default_factory=dict)  # one variable per preference term kind


def build(problem: Problem, comp: Component, policy: Policy, strategy: str,
          explain: Explain | None = None, symmetry: bool = True,
          candidates: dict[int, Sequence[int]] | None = None,
          frozen: dict[int, dict[int, int]] | None = None,
          held: dict[int, dict[int, int]] | None = None) -> Built:
    """Every rule's constraints and terms for one component, plus gang constraints and objective levels;
    with `candidates`, the restricted model where each class may only use those nodes; with `frozen`, the
    classes held at those counts, with `held` classes held at least at those (see ModelContext.make_x)."""
    ctx = ModelContext(problem, comp, policy, explain)
    ctx.make_x(candidates, frozen, held)
    for enc in problem.profile.encodings:
        enc.encode(ctx)
    _encode_gangs(ctx, problem.gangs)
    if symmetry and explain is None:
        _break_node_symmetry(ctx)
    # restricted models: one placed stage per priority (unit coefficients search better than huge weights)
    return _levels(ctx, strategy, PLACED_WEIGHT_LIMIT if candidates is None else 2 ** 16)


def _encode_gangs(ctx: ModelContext, gangs: Gangs) -> None:
    """All-or-minimum: a gang places at least its minimum of pending pods, or none of them."""
    for gang, members in ctx.problem.gang_classes.items():
        members = [c for c in members if c in ctx.class_set]
        if not members:
            continue
        minimum = gangs.minimum.get(gang, 0)
        total = sum(ctx.problem.classes[c].size for c in members)
        on = ctx.new_bool(f"gang[{gang}]")
        placed = sum(ctx.placed[c] for c in members)
        kind, _, rest = gang.partition("/")
        field_name = "spec.minMember" if kind == "PodGroup" else f"metadata.annotations[podplan.io/gang] / --gang ({kind})"
        group = (GANG, gang if kind == "PodGroup" else f"{kind}/{rest}", field_name)
        ctx.hard(ctx.model.add(placed >= minimum * on), group)
        ctx.hard(ctx.model.add(placed <= total * on), group)


def _break_node_symmetry(ctx: ModelContext) -> None:
    """Interchangeable nodes (same node class, same variables) hold non-increasing pod counts in input
    order: any solution can be permuted into that order, so no optimum is lost."""
    groups: dict[tuple, list[int]] = defaultdict(list)
    for n in ctx.comp.nodes:
        cls = tuple(sorted(ctx.by_node[n]))
        if cls:
            groups[(ctx.problem.node_class[n], cls, tuple(ctx.ub[(c, n)] for c in cls))].append(n)
    for key, nodes in groups.items():
        if len(nodes) < 2:
            continue
        for a, b in zip(nodes, nodes[1:]):
            ctx.model.add(sum(ctx.x[(c, a)] for c in key[1]) >= sum(ctx.x[(c, b)] for c in key[1]))
    ctx.symmetric_groups = [nodes for nodes in groups.values() if len(nodes) > 1]


PLACED_WEIGHT_LIMIT = 2 ** 50


def _levels(ctx: ModelContext, strategy: str, weight_limit: int = PLACED_WEIGHT_LIMIT) -> Built:
    """Objective levels, maximised lexicographically: placed (per priority), preference P, strategy."""
    p = ctx.problem
    prios = sorted({p.classes[c].priority for c in ctx.classes}, reverse=True)
    count = {q: sum(p.classes[c].size for c in ctx.classes if p.classes[c].priority == q) for q in prios}
    # One level with weights W_q = prod over lower priorities of (N+1): exact lexicographic order, if it fits.
    weights: dict[int, int] = {}
    w = 1
    for q in reversed(prios):
        weights[q] = w
        w *= count[q] + 1
    names: list[str] = []
    lvars: list[cp_model.IntVar] = []
    sub: list[list[int]] = []
    if w <= weight_limit:
        groups = [prios]
    else:
        groups = [[q] for q in prios]
        weights = {q: 1 for q in prios}
    for g in groups:
        hi = sum(weights[q] * count[q] for q in g)
        v = ctx.new_int(0, hi, "level[placed]" if len(groups) == 1 else f"level[placed@{g[0]}]")
        ctx.model.add(v == sum(weights[p.classes[c].priority] * ctx.placed[c]
                               for c in ctx.classes if p.classes[c].priority in g))
        names.append("placed")
        lvars.append(v)
        sub.append(g)
    pref_terms = [t for kind in TERM_KINDS for t in ctx.terms[kind]]
    lo, hi = -(2 ** 40), 2 ** 40
    pv = ctx.new_int(lo, hi, "level[preference]")
    ctx.model.add(pv == sum(pref_terms))
    names.append("preference")
    lvars.append(pv)
    sv = noderesources_enc.strategy_level(ctx, strategy)
    if sv is not None:
        names.append("strategy")
        lvars.append(sv)
    return Built(ctx, names, lvars, sub, weights)


def term_vars(ctx: ModelContext) -> dict[str, cp_model.IntVar]:
    """One variable per preference term kind (for the broken-down objective)."""
    out = {}
    for kind in TERM_KINDS:
        v = ctx.new_int(-(2 ** 40), 2 ** 40, f"term[{kind}]")
        ctx.model.add(v == sum(ctx.terms[kind]))
        out[kind] = v
    return out
