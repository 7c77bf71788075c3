"""CP-SAT encoding of NodeAffinity (nodeSelector + required node affinity, preferred node affinity).

Hard: static only (the node's labels and name decide): no x where the pod's nodeSelector / required terms
fail, with the plugin's own Filter (incl. the matchFields metadata.name pinning).
Preference term `node_affinity`: + multiplier × Σ weights of matching preferred terms, linear in x;
existing pods add a constant.
"""
from __future__ import annotations


import numpy as np

from ..framework import Reason
from ..state import NodeInfo
from ..problem import PodClass, Problem
from ..context import ModelContext
from ..policy import Policy

from .filtering import filter_node, pre_filter, required_matches
from .scoring import preferred_score

TERM = "node_affinity"


def static_reasons(problem: Problem, cls: PodClass, info: NodeInfo) -> list[Reason]:
    key = ("nodeaffinity.pre", cls.index)
    pre = problem.cache.get(key)
    if pre is None:
        pre = problem.cache[key] = pre_filter(cls.rep, problem.state)
    return filter_node(cls.rep, pre, info, problem.state)


def static_mask(problem: Problem, cls: PodClass) -> np.ndarray | None:
    rep = cls.rep
    required = rep.affinity.node_required
    if not rep.node_selector and required is None:
        return None
    keys = set(rep.node_selector)
    by_name = False
    for t in (required.terms if required else ()):
        keys |= {r.key for r in t.match_expressions}
        by_name |= bool(t.match_fields)
    ordered = tuple(sorted(keys))
    nodes = problem.nodes

    def sig(i: int) -> tuple:
        return (nodes[i].name if by_name else "", tuple(nodes[i].labels.get(k) for k in ordered))
    return problem.mask_by_groups(("nodeaffinity", by_name, ordered), sig, lambda i: required_matches(rep, nodes[i]))


def encode(ctx: ModelContext) -> None:
    m = ctx.policy.node_affinity
    if not m:
        return
    p = ctx.problem
    for c in ctx.classes:
        rep = p.classes[c].rep
        if not rep.affinity.node_preferred:
            continue
        for n in ctx.by_class[c]:
            w = preferred_score(rep, p.nodes[n])
            if w:
                ctx.add_term(TERM, m * w * ctx.x[(c, n)])


def existing_terms(problem: Problem, policy: Policy) -> dict[str, int]:
    total = 0
    for g in problem.existing:
        if g.rep.affinity.node_preferred:
            for n, k in g.on.items():
                total += k * preferred_score(g.rep, problem.nodes[n])
    return {TERM: policy.node_affinity * total}
