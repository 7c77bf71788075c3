"""The CP-SAT model of one independent part of the problem.

Variables (named like their index):
- `x[<class>,<node>]` int in [0, ub]: how many pods of a class go on a node (only where static rules allow);
- `placed[<class>]` int: pods of the class placed;
- `p[<class>,<key>=<value>]` bool: the class has a pod in that topology domain (exactly);
- rule-specific helpers, named by their rule (see each optimizer/<rule>/encoding.py);
- `level[placed]`, `level[preference]`, `level[strategy]`: the three objective levels.

Every hard rule is encoded by its package's encoding.py, with the verifier's final-state semantics
(notes/semantics.md): each pod of the final state judged by every filter with itself removed. Preference
terms go to `ctx.terms[kind]` already multiplied by the policy's multiplier and signed, so that P is their sum.

In explain mode (why-pending) each hard constraint is made conditional on an assumption literal per
(plugin, object, field) group, so that CP-SAT's sufficient_assumptions_for_infeasibility names the rules.
"""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

import numpy as np
from ortools.sat.python import cp_model

from .framework import Reason
from .gangs import Gangs
from .interpodaffinity import encoding as interpodaffinity_enc
from .nodeaffinity import encoding as nodeaffinity_enc
from .nodename import encoding as nodename_enc
from .nodeports import encoding as nodeports_enc
from .noderesources import encoding as noderesources_enc
from .nodeunschedulable import encoding as nodeunschedulable_enc
from .podtopologyspread import encoding as podtopologyspread_enc
from .policy import Policy
from .problem import Component, PodPredicate, Problem
from .state import NodeInfo
from .tainttoleration import encoding as tainttoleration_enc

# Filter order of kube-scheduler's default profile.
RULES: tuple[ModuleType, ...] = (
    nodeunschedulable_enc, nodename_enc, tainttoleration_enc, nodeaffinity_enc, nodeports_enc,
    noderesources_enc, podtopologyspread_enc, interpodaffinity_enc,
)
STATIC_RULES: tuple[Callable[..., list[Reason]], ...] = tuple(m.static_reasons for m in RULES)
# Vectorised form of the same verdicts for building the problem: rule(problem, cls) -> bool per node index, or
# None when the rule never rejects this class; each agrees with its static_reasons (tests/test_solve_static.py).
STATIC_MASKS: tuple[Callable[..., np.ndarray | None], ...] = tuple(m.static_mask for m in RULES)
TERM_KINDS = ("node_affinity", "pod_affinity", "pod_anti_affinity", "prefer_no_schedule", "schedule_anyway_skew")
GANG = "Gang"

Group = tuple[str, str, str]  # (plugin, object, field) a hard constraint comes from


UPPER_BOUNDS = tuple(m.upper_bound_vector for m in RULES if hasattr(m, "upper_bound_vector"))


def upper_bound_vector(problem: Problem, cls: Any) -> np.ndarray:
    """Per node index: most pods of `cls` the node can take, by every rule that bounds it on its own."""
    ub = np.full(len(problem.nodes), cls.size, dtype=np.int64)
    for f in UPPER_BOUNDS:
        np.minimum(ub, f(problem, cls), out=ub)
    return np.maximum(ub, 0).astype(np.int32)


def interactions(problem: Problem) -> list[tuple[tuple[str, int], tuple[str, int]]]:
    """Edges of the interaction graph beyond shared nodes: selectors, domains, gangs."""
    edges: list[tuple[tuple[str, int], tuple[str, int]]] = []
    for m in RULES:
        f = getattr(m, "interactions", None)
        if f is not None:
            edges.extend((("c", a), ("c", b)) for a, b in f(problem))
    for members in problem.gang_classes.values():
        edges.extend((("c", a), ("c", b)) for a, b in zip(members, members[1:]))
    return edges


def chain(items: Sequence[int]) -> list[tuple[int, int]]:
    """Edges that put `items` in one component."""
    return list(zip(items, items[1:]))


def existing_terms(problem: Problem, policy: Policy) -> dict[str, int]:
    """P's contribution of existing pods that no pending pod can change (added once, outside components)."""
    out: dict[str, int] = defaultdict(int)
    for m in RULES:
        f = getattr(m, "existing_terms", None)
        if f is not None:
            for k, v in f(problem, policy).items():
                out[k] += v
    return dict(out)


@dataclass
class Explain:
    """Explain mode: guard hard constraints with assumption literals; `free` classes get x on every node."""

    free: dict[int, list[int]] = field(default_factory=dict)  # class -> node indices it may try


class ModelContext:
    """The CP-SAT model of one component and the helpers the rule encodings share."""

    def __init__(self, problem: Problem, comp: Component, policy: Policy, explain: Explain | None = None):
        self.problem = problem
        self.comp = comp
        self.policy = policy
        self.explain = explain
        self.model = cp_model.CpModel()
        self.classes: list[int] = comp.classes
        self.class_set = set(comp.classes)
        self.x: dict[tuple[int, int], cp_model.IntVar] = {}
        self.ub: dict[tuple[int, int], int] = {}
        self.by_node: dict[int, list[int]] = defaultdict(list)  # node -> classes with a variable there
        self.by_class: dict[int, list[int]] = defaultdict(list)  # class -> nodes with a variable
        self.placed: dict[int, cp_model.IntVar] = {}
        self.terms: dict[str, list[cp_model.LinearExprT]] = {k: [] for k in TERM_KINDS}
        self.guards: dict[Group, cp_model.IntVar] = {}
        self._presence: dict[tuple[int, str, str], Any] = {}
        self._cdom: dict[tuple[int, str], dict[str, list[int]]] = {}
        self.levels: dict[str, cp_model.IntVar] = {}
        self._totals: dict[tuple[int, str], tuple[dict[int, int], dict[str, int]]] = {}

    # -- naming ---------------------------------------------------------------------------------------
    def cname(self, c: int) -> str:
        return self.problem.classes[c].name

    def nname(self, n: int) -> str:
        return self.problem.nodes[n].name

    # -- variables ------------------------------------------------------------------------------------
    def make_x(self, candidates: dict[int, Sequence[int]] | None = None) -> None:
        """x on every statically feasible (class, node); with `candidates`, only on those nodes of a class
        (a restriction of the model: its solutions are solutions, its bound is not a bound)."""
        p = self.problem
        names = [n.name for n in p.nodes]
        new_var = self.model.new_int_var
        for c in self.classes:
            cls = p.classes[c]
            free = self.explain is not None and c in self.explain.free
            if free:
                # explain mode: the class's own bounds stay loose so that guarded constraints carry them
                nodes = list(self.explain.free[c])  # type: ignore[union-attr]
                ubs = [cls.size] * len(nodes)
            else:
                feas = p.feasible[c]
                if candidates is not None and c in candidates:
                    feas = np.intersect1d(feas, np.asarray(candidates[c], dtype=np.int64))
                nodes = feas.tolist()
                ubs = p.ub.matrix[c, feas].tolist() if len(feas) else []
            by_class = self.by_class[c]
            cname = cls.name
            for n, ub in zip(nodes, ubs):
                if ub <= 0:
                    continue
                self.x[(c, n)] = new_var(0, ub, f"x[{cname},{names[n]}]")
                self.ub[(c, n)] = ub
                self.by_node[n].append(c)
                by_class.append(n)
            pv = self.model.new_int_var(0, cls.size, f"placed[{cls.name}]")
            self.model.add(pv == sum(self.x[(c, n)] for n in self.by_class[c]))
            self.placed[c] = pv

    def new_bool(self, name: str) -> cp_model.IntVar:
        return self.model.new_bool_var(name)

    def new_int(self, lo: int, hi: int, name: str) -> cp_model.IntVar:
        return self.model.new_int_var(lo, hi, name)

    # -- guarded hard constraints ---------------------------------------------------------------------
    def guard(self, group: Group) -> cp_model.IntVar:
        lit = self.guards.get(group)
        if lit is None:
            lit = self.guards[group] = self.model.new_bool_var(f"guard[{group[0]}|{group[1]}|{group[2]}]")
        return lit

    def hard(self, ct: cp_model.Constraint, group: Group) -> cp_model.Constraint:
        """A hard rule's constraint; in explain mode it holds only under its group's assumption."""
        if self.explain is not None:
            ct.only_enforce_if(self.guard(group))
        return ct

    # -- domains --------------------------------------------------------------------------------------
    def class_domains(self, c: int, key: str) -> dict[str, list[int]]:
        """Domains of `key` where class c has a variable: value -> its nodes there (cached)."""
        k = (c, key)
        found = self._cdom.get(k)
        if found is None:
            values, _ = self.problem.domains(key)
            out: dict[str, list[int]] = defaultdict(list)
            for n in self.by_class[c]:
                v = values[n]
                if v is not None:
                    out[v].append(n)
            found = self._cdom[k] = dict(out)
        return found

    def class_domain_vars(self, c: int, key: str, value: str, among: set[int] | None = None) -> list[cp_model.IntVar]:
        """x of class c on the nodes of domain key=value (optionally only nodes in `among`)."""
        nodes = self.class_domains(c, key).get(value, ())
        return [self.x[(c, n)] for n in nodes if among is None or n in among]

    def domain_ub(self, c: int, key: str, value: str) -> int:
        return min(self.problem.classes[c].size,
                   sum(self.ub[(c, n)] for n in self.class_domains(c, key).get(value, ())))

    def presence(self, c: int, key: str, value: str) -> Any:
        """Literal: class c has at least one pod in domain key=value (exact both ways)."""
        k = (c, key, value)
        lit = self._presence.get(k)
        if lit is not None:
            return lit
        xs = self.class_domain_vars(c, key, value)
        if not xs:
            lit = 0
        elif len(xs) == 1 and self.ub[(c, self.class_domains(c, key)[value][0])] == 1:
            lit = xs[0]
        else:
            lit = self.model.new_bool_var(f"p[{self.cname(c)},{key}={value}]")
            ub = self.domain_ub(c, key, value)
            self.model.add(sum(xs) <= ub * lit)
            self.model.add(sum(xs) >= lit)
        self._presence[k] = lit
        return lit

    def targets(self, pred: PodPredicate, selector: Any = True) -> list[int]:
        """Classes of this component whose pods `pred` accepts (`selector`: one `pred` implies, to narrow)."""
        return [c for c in self.problem.classes_matching(pred, selector=selector) if c in self.class_set]

    def count_in(self, target_classes: Iterable[int], existing: dict[int, int], key: str, value: str,
                 among: set[int] | None = None) -> tuple[list[cp_model.IntVar], int]:
        """Pods in domain key=value matching: (x terms of the target classes, existing pods' constant)."""
        xs: list[cp_model.IntVar] = []
        for t in target_classes:
            xs.extend(self.class_domain_vars(t, key, value, among))
        if not existing:
            return xs, 0
        if among is None:
            return xs, self._domain_total(existing, key).get(value, 0)
        values, _ = self.problem.domains(key)
        const = sum(k for n, k in existing.items() if values[n] == value and n in among)
        return xs, const

    def _domain_total(self, existing: dict[int, int], key: str) -> dict[str, int]:
        """Existing pods per domain of `key` for one count map (cached by identity: maps are cached too)."""
        k = (id(existing), key)
        found = self._totals.get(k)
        if found is None:
            values, _ = self.problem.domains(key)
            totals: dict[str, int] = defaultdict(int)
            for n, c in existing.items():
                if values[n] is not None:
                    totals[values[n]] += c
            found = self._totals[k] = (existing, dict(totals))  # holding `existing` keeps its id unique
        return found[1]

    def add_term(self, kind: str, expr: cp_model.LinearExprT) -> None:
        self.terms[kind].append(expr)


@dataclass
class Built:
    """A built component model with its objective levels."""

    ctx: ModelContext
    level_names: list[str]  # maximised in this order
    level_vars: list[cp_model.IntVar]
    level_priorities: list[list[int]]  # for each level-1 sub-level: the priorities it counts
    weights: dict[int, int]  # priority -> weight in the placed level(s)


def build(problem: Problem, comp: Component, policy: Policy, strategy: str,
          explain: Explain | None = None, symmetry: bool = True,
          candidates: dict[int, Sequence[int]] | None = None) -> Built:
    """Every rule's constraints and terms for one component, plus gang constraints and objective levels;
    with `candidates`, the restricted model where each class may only use those nodes."""
    ctx = ModelContext(problem, comp, policy, explain)
    ctx.make_x(candidates)
    for m in RULES:
        m.encode(ctx)
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
    ctx.symmetric_groups = [nodes for nodes in groups.values() if len(nodes) > 1]  # type: ignore[attr-defined]


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
