"""The CP-SAT model of one independent part of the problem, as the rule encodings see it.

Variables (named like their index):
- `x[<class>,<node>]` int in [0, ub]: how many pods of a class go on a node (only where static rules allow);
- `placed[<class>]` int: pods of the class placed;
- `p[<class>,<key>=<value>]` bool: the class has a pod in that topology domain (exactly);
- rule-specific helpers, named by their rule (see each optimizer/<rule>/encoding.py);
- `level[placed]`, `level[preference]`, `level[strategy]`: the objective levels (optimizer/model.py).

Preference terms go to `ctx.terms[kind]` already multiplied by the policy's multiplier and signed, so that P
is their sum. In explain mode (why-pending) each hard constraint is made conditional on an assumption literal
per (plugin, object, field) group, so that CP-SAT's sufficient_assumptions_for_infeasibility names the rules.
"""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from ortools.sat.python import cp_model

from .policy import Policy
from .problem import Component, PodPredicate, Problem

TERM_KINDS = ("node_affinity", "pod_affinity", "pod_anti_affinity", "prefer_no_schedule", "schedule_anyway_skew")

Group = tuple[str, str, str]  # (plugin, object, field) a hard constraint comes from


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
        self.pending_pods = sum(problem.classes[c].size for c in comp.classes)
        # classes held at given counts (a focused neighbourhood round): their x are constants, and a rule whose
        # every variable is frozen holds already (the counts come from a valid plan) and is not encoded
        self.frozen: dict[int, dict[int, int]] = {}
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
        self.symmetric_groups: list[list[int]] = []  # interchangeable nodes ordered by symmetry breaking

    # -- naming ---------------------------------------------------------------------------------------
    def cname(self, c: int) -> str:
        return self.problem.classes[c].name

    def nname(self, n: int) -> str:
        return self.problem.nodes[n].name

    # -- variables ------------------------------------------------------------------------------------
    def all_frozen(self, classes: Iterable[int]) -> bool:
        return all(c in self.frozen for c in classes)

    def make_x(self, candidates: dict[int, Sequence[int]] | None = None,
               frozen: dict[int, dict[int, int]] | None = None,
               held: dict[int, dict[int, int]] | None = None) -> None:
        """x on every statically feasible (class, node); with `candidates`, only on those nodes of a class
        (a restriction of the model: its solutions are solutions, its bound is not a bound); `frozen`:
        class -> {node: count}, the class held at those counts (x only there, fixed); `held`: class ->
        {node: count}, a class that is not frozen keeps at least those counts there (only its other pods move)."""
        self.frozen = dict(frozen or {})
        floors = held or {}
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
            elif c in self.frozen:
                counts = self.frozen[c]
                nodes = sorted(n for n, v in counts.items() if v > 0)
                ubs = [counts[n] for n in nodes]
            else:
                feas = p.feasible[c]
                if candidates is not None and c in candidates:
                    # ub is 0 off the feasible nodes, and those are skipped below (cheaper than intersect1d,
                    # which was 4 s of a 60 s search at 1,000 nodes)
                    feas = np.unique(np.asarray(candidates[c], dtype=np.int64))
                nodes = feas.tolist()
                ubs = p.ub.matrix[c, feas].tolist() if len(feas) else []
            by_class = self.by_class[c]
            cname = cls.name
            floor = floors.get(c, {})
            for n, ub in zip(nodes, ubs):
                if ub <= 0:
                    continue
                lb = ub if c in self.frozen else min(ub, floor.get(n, 0))
                self.x[(c, n)] = new_var(lb, ub, f"x[{cname},{names[n]}]")
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
