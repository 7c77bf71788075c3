"""CP-SAT encoding of InterPodAffinity: required pod affinity and anti-affinity (hard, both directions, any
topology key) and the preferred terms of the preference score.

Final-state semantics (notes/semantics.md), pod p judged with itself removed, domains = values of the
term's topologyKey:
- Required anti-affinity, for a holder A (a class or an existing pod) with term t and a pod B matching t
  (A's term judged as the incoming pod's, or as an existing pod's against B: upstream is asymmetric in one
  namespace corner, and the final state runs both checks): A and B never share a t-domain. Between two
  classes: presence(A, d) + presence(B, d) <= 1; a class matching its own term: at most one pod per domain.
  Existing pods on either side make it static (no x there). A node lacking the key passes.
- Required affinity of a class A (terms T, resolved as the incoming pod's): on every node it uses, A needs
  the node to carry every key (static) and, for each term, a pod matching ALL terms, other than itself, in
  that term's domain; or the first-pod rule: no other pod matching all terms on a node that carries one of
  the keys, and A matches its own terms. Encoded: first[A] → (matching pods on keyed nodes) <= 1 (A's own);
  presence(A, d) ∧ ¬first[A] → count_T(d) >= 1 + [A matches T].
- An existing pod whose required affinity held in the input only by the first-pod rule keeps holding: either
  no pending pod matching its terms lands on a keyed node, or every term's domain gets one.
- Preferred terms (weight w, of every pod of the final state, existing included): + m·w per pod whose term
  has another matching pod in its domain (affinity), − m·w per pod that has (anti-affinity); per class and
  domain: reward r <= x_d, r <= U·s with s → count >= 1 + self; penalty pen >= x_d − U·(1 − v) with
  ¬v → count <= self. Terms whose targets are all existing pods are linear in x.
"""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from typing import Any

import numpy as np

from ...models.objects import Pod, PodAffinityTerm
from ..framework import Reason
from ..state import NodeInfo
from ..problem import PodClass, Problem
from ..context import ModelContext
from ..policy import Policy

from .filtering import (ERR_REASON_AFFINITY_RULES_NOT_MATCH, ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH,
                        ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH, NAME, merged_affinity_term,
                        pod_matches_all_terms, term_matches)

AFF_FIELD = "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution"
ANTI_FIELD = "spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution"
PREF_AFF = "pod_affinity"
PREF_ANTI = "pod_anti_affinity"

Pred = Callable[[Pod], bool]


# -- predicates ------------------------------------------------------------------------------------------

def _nsl(problem: Problem) -> Any:
    return problem.state.namespace_labels


def anti_pred(problem: Problem, owner: Pod, t: PodAffinityTerm) -> Pred:
    """Does a pod conflict with `owner`'s required anti-affinity term, in either direction of the check?"""
    nsl = _nsl(problem)
    return lambda q: (term_matches(t, owner, q, nsl, owner_incoming=True)
                      or term_matches(t, owner, q, nsl, owner_incoming=False))


def pref_pred(problem: Problem, owner: Pod, t: PodAffinityTerm) -> Pred:
    """Does a pod count for `owner`'s preferred term (as optimizer.objective judges it: the term's own
    namespaceSelector against the other pod's namespace labels)?"""
    nsl = _nsl(problem)
    return lambda q: term_matches(t, owner, q, nsl)


def all_terms_pred(problem: Problem, owner: Pod) -> tuple[Pred | None, bool]:
    """podMatchesAllAffinityTerms over owner's required affinity (merged as the incoming pod's), and
    whether owner matches its own terms."""
    terms = tuple(merged_affinity_term(t, owner, _nsl(problem)) for t in owner.affinity.pod_required)
    if not terms:
        return None, False
    pred = (lambda q: pod_matches_all_terms(terms, q))
    return pred, pred(owner)


def _class_info(problem: Problem, cls: PodClass) -> dict[str, Any]:
    key = ("ipa", cls.index)
    found = problem.cache.get(key)
    if found is not None:
        return found
    rep = cls.rep
    aff, self_aff = all_terms_pred(problem, rep)
    info: dict[str, Any] = {"aff": aff, "self_aff": self_aff}
    keys = [t.topology_key for t in rep.affinity.pod_required]
    info["aff_keys"] = keys
    if aff is not None:
        sel = rep.affinity.pod_required[0].label_selector  # matching all terms implies matching the first
        info["aff_targets"] = problem.classes_matching(aff, selector=sel)
        info["aff_existing"] = problem.existing_matching(("ipa.all", cls.index), aff, sel)
    anti = []
    for i, t in enumerate(rep.affinity.anti_required):
        pred = anti_pred(problem, rep, t)
        ex = problem.existing_matching(("ipa.anti", t, rep.namespace), pred, t.label_selector)
        anti.append((i, t, pred, ex, pred(rep)))
    info["anti"] = anti
    info["forbidden"] = _existing_anti_index(problem).get(cls.index, set())
    problem.cache[key] = info
    return info


def _existing_anti_index(problem: Problem) -> dict[int, set[tuple[str, str]]]:
    """class -> (key, value) domains an existing pod's required anti-affinity term closes to it."""
    found = problem.cache.get("ipa.existing_anti")
    if found is not None:
        return found
    found = defaultdict(set)
    matched: dict[tuple, list[int]] = {}
    for h in problem.holders:
        n = next(iter(h.on))
        for t in h.rep.affinity.anti_required:
            v = problem.nodes[n].labels.get(t.topology_key)
            if v is None:
                continue
            k = (t, h.rep.namespace)
            if k not in matched:
                matched[k] = problem.classes_matching(anti_pred(problem, h.rep, t), selector=t.label_selector)
            for c in matched[k]:
                found[c].add((t.topology_key, v))
    problem.cache["ipa.existing_anti"] = found = dict(found)
    return found


def _domain_has(problem: Problem, existing: dict[int, int], key: str, value: str) -> int:
    """Existing matching pods in domain key=value (per-domain totals cached per count map)."""
    ck = ("ipa.domain_totals", id(existing), key)
    totals = problem.cache.get(ck)
    if totals is None:
        values, _ = problem.domains(key)
        totals = defaultdict(int)
        for n, k in existing.items():
            if values[n] is not None:
                totals[values[n]] += k
        problem.cache[ck] = totals = (existing, dict(totals))  # holding `existing` keeps its id unique
    return totals[1].get(value, 0)


# -- static ----------------------------------------------------------------------------------------------

def static_reasons(problem: Problem, cls: PodClass, info: NodeInfo) -> list[Reason]:
    rep = cls.rep
    a = rep.affinity
    if not (a.pod_required or a.anti_required) and cls.index not in _existing_anti_index(problem):
        return []
    ci = _class_info(problem, cls)
    labels = info.node.labels
    out: list[Reason] = []
    if ci["aff"] is not None:
        if any(k not in labels for k in ci["aff_keys"]):
            out.append(Reason(NAME, ERR_REASON_AFFINITY_RULES_NOT_MATCH, True))
        elif not ci["aff_targets"]:
            # only existing pods can satisfy it: upstream's verdict against the existing pods
            ex = ci["aff_existing"]
            ok = all(_domain_has(problem, ex, t.topology_key, labels[t.topology_key]) > 0
                     for t in a.pod_required)
            if not ok:
                out.append(Reason(NAME, ERR_REASON_AFFINITY_RULES_NOT_MATCH, True))
    for i, t, pred, ex, selfm in ci["anti"]:
        v = labels.get(t.topology_key)
        if v is not None and _domain_has(problem, ex, t.topology_key, v) > 0:
            out.append(Reason(NAME, ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH))
            break
    if ci["forbidden"] and any((k, v) in ci["forbidden"] for k, v in labels.items()):
        out.append(Reason(NAME, ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH))
    return out


def _domains_with(problem: Problem, existing: dict[int, int], key: str) -> np.ndarray:
    """Per node: does its `key` domain hold one of the `existing` pods (False where the key is missing)."""
    codes, names = problem.codes(key)
    hit = np.zeros(len(names) + 1, dtype=bool)  # last slot: the missing key (-1)
    for n, k in existing.items():
        if k > 0 and codes[n] >= 0:
            hit[codes[n]] = True
    return hit[codes]


def static_mask(problem: Problem, cls: PodClass) -> np.ndarray | None:
    """Vector form of static_reasons: False where any of its reasons applies."""
    rep = cls.rep
    a = rep.affinity
    if not (a.pod_required or a.anti_required) and cls.index not in _existing_anti_index(problem):
        return None
    ci = _class_info(problem, cls)
    mask = np.ones(len(problem.nodes), dtype=bool)
    if ci["aff"] is not None:
        for k in ci["aff_keys"]:
            mask &= problem.codes(k)[0] >= 0
        if not ci["aff_targets"]:
            for t in a.pod_required:
                mask &= _domains_with(problem, ci["aff_existing"], t.topology_key)
    for i, t, pred, ex, selfm in ci["anti"]:
        mask &= ~_domains_with(problem, ex, t.topology_key)
    by_key: dict[str, set[str]] = defaultdict(set)
    for k, v in ci["forbidden"]:
        by_key[k].add(v)
    for k, vs in by_key.items():
        codes, names = problem.codes(k)
        bad = np.zeros(len(names) + 1, dtype=bool)
        for j, name in enumerate(names):
            bad[j] = name in vs
        mask &= ~bad[codes]
    return mask


def upper_bound_vector(problem: Problem, cls: PodClass) -> np.ndarray:
    ub = np.full(len(problem.nodes), cls.size, dtype=np.int64)
    if not cls.rep.affinity.anti_required:
        return ub
    for i, t, pred, ex, selfm in _class_info(problem, cls)["anti"]:
        if selfm:
            ub[problem.codes(t.topology_key)[0] >= 0] = 1  # two of its pods on one node share every domain
    return ub


# -- interaction graph -----------------------------------------------------------------------------------

def _existing_first_pod_holders(problem: Problem) -> list[Any]:
    """Existing pods whose required affinity held in the input only through the first-pod rule."""
    key = "ipa.first_pod_holders"
    found = problem.cache.get(key)
    if found is not None:
        return found
    out = []
    for h in problem.holders:
        e = h.rep
        if not e.affinity.pod_required:
            continue
        pred, selfm = all_terms_pred(problem, e)
        n_e = next(iter(h.on))
        labels = problem.nodes[n_e].labels
        keys = [t.topology_key for t in e.affinity.pod_required]
        if not selfm or any(k not in labels for k in keys):
            continue  # without its own match the rule never applied; a missing key: broken already
        ex = problem.existing_matching(("ipa.all.e", id(h)), pred, e.affinity.pod_required[0].label_selector)
        others = dict(ex)
        others[n_e] = others.get(n_e, 0) - 1  # itself removed
        keyed = [n for n, k in others.items() if k > 0 and any(kk in problem.nodes[n].labels for kk in keys)]
        if keyed:
            continue  # other matching pods exist: either real matches (monotone) or broken already
        targets = problem.classes_matching(pred, selector=e.affinity.pod_required[0].label_selector)
        if targets:
            out.append((h, pred, targets))
    problem.cache[key] = out
    return out


def _pref_terms(pod: Pod) -> list[tuple[str, int, int, PodAffinityTerm]]:
    a = pod.affinity
    return ([(PREF_AFF, i, w.weight, w.term) for i, w in enumerate(a.pod_preferred)]
            + [(PREF_ANTI, i, w.weight, w.term) for i, w in enumerate(a.anti_preferred)])


def _holder_pref(problem: Problem) -> list[tuple[Any, str, int, int, PodAffinityTerm, Pred, list[int]]]:
    key = "ipa.holder_pref"
    found = problem.cache.get(key)
    if found is None:
        found = []
        targets: dict[tuple, list[int]] = {}
        for h in problem.holders:
            for kind, i, w, t in _pref_terms(h.rep):
                pred = pref_pred(problem, h.rep, t)
                k = (t, h.rep.namespace)
                if k not in targets:
                    targets[k] = problem.classes_matching(pred, selector=t.label_selector)
                found.append((h, kind, i, w, t, pred, targets[k]))
        problem.cache[key] = found
    return found


def interactions(problem: Problem) -> list[tuple[int, int]]:
    edges: list[tuple[int, int]] = []
    for cls in problem.classes:
        rep = cls.rep
        a = rep.affinity
        if a.pod_required:
            edges.extend((cls.index, t) for t in _class_info(problem, cls)["aff_targets"])
        for i, t in enumerate(a.anti_required):
            edges.extend((cls.index, b) for b in problem.classes_matching(anti_pred(problem, rep, t),
                                                                          selector=t.label_selector))
        for kind, i, w, t in _pref_terms(rep):
            edges.extend((cls.index, b) for b in problem.classes_matching(pref_pred(problem, rep, t),
                                                                          selector=t.label_selector))
    for h in problem.holders:
        for i, t in enumerate(h.rep.affinity.anti_required):
            pass  # existing anti-affinity is static
    for h, pred, targets in _existing_first_pod_holders(problem):
        edges.extend(zip(targets, targets[1:]))
    for h, kind, i, w, t, pred, targets in _holder_pref(problem):
        edges.extend(zip(targets, targets[1:]))
    return edges


# -- encoding --------------------------------------------------------------------------------------------

def encode(ctx: ModelContext) -> None:
    _encode_anti(ctx)
    _encode_affinity(ctx)
    _encode_existing_first_pod(ctx)
    _encode_preferred(ctx)


def encode_soft(ctx: ModelContext) -> None:
    """The preferred terms alone: the model of a profile whose InterPodAffinity Filter is disabled."""
    _encode_preferred(ctx)


def _encode_anti(ctx: ModelContext) -> None:
    p = ctx.problem
    done: set[tuple] = set()
    for a in ctx.classes:
        rep = p.classes[a].rep
        if not rep.affinity.anti_required:
            continue
        for i, t, pred, ex, selfm in _class_info(p, p.classes[a])["anti"]:
            group = (NAME, f"Pod/{rep.key}", f"{ANTI_FIELD}[{i}]")
            key = t.topology_key
            others = [b for b in ctx.targets(pred, t.label_selector) if b != a]
            if a in ctx.frozen:
                others = [b for b in others if b not in ctx.frozen]
            for v, nodes in ctx.class_domains(a, key).items():
                if selfm and a not in ctx.frozen and (len(nodes) > 1 or ctx.ub[(a, nodes[0])] > 1):
                    ctx.hard(ctx.model.add(sum(ctx.class_domain_vars(a, key, v)) <= 1), group)
                for b in others:
                    if not ctx.class_domain_vars(b, key, v):
                        continue
                    pair = (min(a, b), max(a, b), key, v)
                    if pair in done:
                        continue
                    done.add(pair)
                    la, lb = ctx.presence(a, key, v), ctx.presence(b, key, v)
                    ctx.hard(ctx.model.add(la + lb <= 1), group)


def _encode_affinity(ctx: ModelContext) -> None:
    p = ctx.problem
    for a in ctx.classes:
        cls = p.classes[a]
        rep = cls.rep
        if not rep.affinity.pod_required:
            continue
        ci = _class_info(p, cls)
        targets = [t for t in ci["aff_targets"] if t in ctx.class_set]
        if not targets:
            continue  # static: existing pods decide
        if a in ctx.frozen and ctx.all_frozen(targets):
            continue
        ex = ci["aff_existing"]
        selfm = ci["self_aff"]
        keys = ci["aff_keys"]
        keyed = [n for n, cs in list(ctx.by_node.items()) if cs and any(k in p.nodes[n].labels for k in keys)]  # nodes with an x
        keyed_set = set(keyed)
        ex_keyed = sum(k for n, k in ex.items() if any(kk in p.nodes[n].labels for kk in keys))
        first: Any = 0
        if selfm and ex_keyed == 0:
            first = ctx.new_bool(f"first_pod[{cls.name}]")
            xs = [ctx.x[(t, n)] for t in targets for n in ctx.by_class[t] if n in keyed_set]
            ctx.model.add(sum(xs) <= 1).only_enforce_if(first)
        for i, term in enumerate(rep.affinity.pod_required):
            group = (NAME, f"Pod/{rep.key}", f"{AFF_FIELD}[{i}]")
            k = term.topology_key
            for v in ctx.class_domains(a, k):
                xs, const = ctx.count_in(targets, ex, k, v)
                need = 1 + int(selfm)
                if const >= need:
                    continue
                lit = ctx.presence(a, k, v)
                if isinstance(lit, int):
                    continue
                ct = ctx.model.add(sum(xs) + const >= need)
                if isinstance(first, int):
                    ct.only_enforce_if(lit)
                else:
                    ct.only_enforce_if([lit, first.Not()])
                ctx.hard(ct, group)


def _encode_existing_first_pod(ctx: ModelContext) -> None:
    p = ctx.problem
    for h, pred, targets in _existing_first_pod_holders(p):
        targets = [t for t in targets if t in ctx.class_set]
        if not targets:
            continue
        e = h.rep
        n_e = next(iter(h.on))
        labels = p.nodes[n_e].labels
        keys = [t.topology_key for t in e.affinity.pod_required]
        keyed = {n for n, cs in list(ctx.by_node.items()) if cs and any(k in p.nodes[n].labels for k in keys)}  # nodes with an x
        alone = ctx.new_bool(f"still_first[{e.name}]")
        ctx.model.add(sum(ctx.x[(t, n)] for t in targets for n in ctx.by_class[t] if n in keyed) == 0) \
            .only_enforce_if(alone)
        for i, term in enumerate(e.affinity.pod_required):
            group = (NAME, f"Pod/{e.key}", f"{AFF_FIELD}[{i}]")
            xs, _ = ctx.count_in(targets, {}, term.topology_key, labels[term.topology_key])
            ctx.hard(ctx.model.add(sum(xs) >= 1).only_enforce_if(alone.Not()), group)


def _encode_preferred(ctx: ModelContext) -> None:
    p = ctx.problem
    pol = ctx.policy
    mult = {PREF_AFF: pol.pod_affinity, PREF_ANTI: pol.pod_anti_affinity}
    for a in ctx.classes:
        cls = p.classes[a]
        rep = cls.rep
        for kind, i, w, t in _pref_terms(rep):
            m = mult[kind] * w
            if not m:
                continue
            pred = pref_pred(p, rep, t)
            selfm = pred(rep)
            targets = ctx.targets(pred, t.label_selector)
            ex = p.existing_matching(("ipa.pref", t, rep.namespace), pred, t.label_selector)
            key = t.topology_key
            for v in ctx.class_domains(a, key):
                xa = sum(ctx.class_domain_vars(a, key, v))
                U = ctx.domain_ub(a, key, v)
                xs, const = ctx.count_in(targets, ex, key, v)
                name = f"{cls.name},{kind}{i},{key}={v}"
                if const >= 1:
                    # another matching pod is already there for every pod of A
                    ctx.add_term(kind, (m if kind == PREF_AFF else -m) * xa)
                    continue
                if not targets:
                    continue  # nothing can ever match there: no reward, no penalty
                if kind == PREF_AFF:
                    s = ctx.new_bool(f"pref_sat[{name}]")
                    ctx.model.add(sum(xs) + const >= 1 + int(selfm)).only_enforce_if(s)
                    r = ctx.new_int(0, U, f"pref_reward[{name}]")
                    ctx.model.add(r <= xa)
                    ctx.model.add(r <= U * s)
                    ctx.add_term(kind, m * r)
                else:
                    viol = ctx.new_bool(f"pref_viol[{name}]")
                    ctx.model.add(sum(xs) + const <= int(selfm)).only_enforce_if(viol.Not())
                    pen = ctx.new_int(0, U, f"pref_penalty[{name}]")
                    ctx.model.add(pen >= xa - U * (1 - viol))
                    ctx.add_term(kind, -m * pen)
    for h, kind, i, w, t, pred, targets in _holder_pref(p):
        m = mult[kind] * w
        targets = [c for c in targets if c in ctx.class_set]
        if not m or not targets:
            continue
        e = h.rep
        n_e = next(iter(h.on))
        k_pods = h.on[n_e]
        v = p.nodes[n_e].labels.get(t.topology_key)
        if v is None:
            continue
        ex = p.existing_matching(("ipa.pref", t, e.namespace), pred, t.label_selector)
        xs, const = ctx.count_in(targets, ex, t.topology_key, v)
        others = const - int(pred(e))
        if others >= 1:
            continue  # constant: counted by existing_terms
        name = f"{e.name},{kind}{i}"
        if kind == PREF_AFF:
            s = ctx.new_bool(f"pref_sat[{name}]")
            ctx.model.add(sum(xs) + others >= 1).only_enforce_if(s)
            ctx.add_term(kind, m * k_pods * s)
        else:
            viol = ctx.new_bool(f"pref_viol[{name}]")
            ctx.model.add(sum(xs) + others <= 0).only_enforce_if(viol.Not())
            ctx.add_term(kind, -m * k_pods * viol)


def existing_terms(problem: Problem, policy: Policy) -> dict[str, int]:
    """Existing pods' preferred terms whose verdict no pending pod can change: constants."""
    out = {PREF_AFF: 0, PREF_ANTI: 0}
    mult = {PREF_AFF: policy.pod_affinity, PREF_ANTI: policy.pod_anti_affinity}
    for h, kind, i, w, t, pred, targets in _holder_pref(problem):
        e = h.rep
        n_e = next(iter(h.on))
        v = problem.nodes[n_e].labels.get(t.topology_key)
        if v is None:
            continue
        ex = problem.existing_matching(("ipa.pref", t, e.namespace), pred, t.label_selector)
        others = _domain_has(problem, ex, t.topology_key, v) - int(pred(e))
        if targets and others < 1:
            continue  # depends on pending pods: encoded in its component
        if others >= 1:
            out[kind] += (1 if kind == PREF_AFF else -1) * mult[kind] * w * h.on[n_e]
    return out
