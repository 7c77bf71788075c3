"""`podplan diff A B`: what changed between two plans or two states — the question after every run.

A side is either
- a **plan document** (`podplan simulate|solve -o json|yaml`): the pending pods' placements, the pods left pending
  with their reasons, and the objective (placed per priority, preference and its terms) as the plan reports it;
- a **state** (`--emit state`, a `kubectl get -o yaml` dump, any manifests): every pod with `spec.nodeName` is
  where it is, the others are pending; its rules are judged by the verifier and its preference scored by the same
  evaluator `podplan verify` uses.

Both sides must be of one kind: a plan names only the pods it placed, a state every pod, so a plan against a
state would count every existing pod as "placed". The diff pairs pods by namespace/name (podplan names the
replicas it makes from a workload the same way for the same input, so two plans of one input pair up).
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ...models.errors import InputError, PodplanError, Where, describe_value
from ...models.loader import cluster_of, read_paths
from ...models.objects import Cluster

PLAN, STATE = "plan", "state"


@dataclass(frozen=True)
class Rule:
    """One broken rule: a pod on a node failing a plugin."""

    pod: str
    node: str
    plugin: str
    reason: str


@dataclass(frozen=True)
class Side:
    """One side of a diff, whatever it was read from."""

    source: str
    kind: str  # PLAN or STATE
    status: str  # the plan's status (GREEDY, OPTIMAL...), or VALID/INVALID for a state
    nodes: dict[str, str]  # pod -> node, for every placed pod
    pending: dict[str, str]  # pod -> why it is pending ("" when the side does not say)
    priorities: dict[str, int]  # pod -> priority, where known (states)
    placed_by_priority: dict[int, int]
    terms: dict[str, int]  # preference terms
    broken: frozenset[Rule] = field(default_factory=frozenset)
    workloads: dict[str, str] = field(default_factory=dict)  # pod -> "Kind/ns/name" of its workload, where known
    warnings: tuple[str, ...] = ()  # the loader's (typos), for the command to print

    @property
    def preference(self) -> int:
        return sum(self.terms.values())


@dataclass(frozen=True)
class Move:
    pod: str
    before: str
    after: str


@dataclass(frozen=True)
class Diff:
    a: Side
    b: Side
    moved: tuple[Move, ...]
    placed: tuple[tuple[str, str], ...]  # (pod, node in B): pending (or absent) in A, placed in B
    unplaced: tuple[tuple[str, str, str], ...]  # (pod, node in A, why pending in B): placed in A, pending in B
    newly_broken: tuple[Rule, ...]
    fixed: tuple[Rule, ...]

    @property
    def priorities(self) -> list[int]:
        return sorted(set(self.a.placed_by_priority) | set(self.b.placed_by_priority), reverse=True)


# --------------------------------------------------------------------------------------------------- reading


def read_side(path: str, strict: bool = False) -> Side:
    """A plan document or a state, from a file, directory or `-`."""
    docs = read_paths([path])
    shown = "<stdin>" if path == "-" else path
    bodies = [d.body for d in docs if d.body is not None]
    if len(bodies) == 1 and isinstance(bodies[0], Mapping) and "kind" not in bodies[0]:
        return _plan_side(shown, bodies[0])
    cluster = cluster_of(docs, [path], unknown_fields_fatal=strict)
    return _state_side(shown, cluster)


def _plan_side(path: str, doc: Mapping[str, Any]) -> Side:
    where = Where(path, 0)
    if "waves" in doc and "goal" in doc:
        raise InputError(where, "", "a rebalance plan: diff compares placements; give the states before and after "
                                    "(the input, and the state its waves reach) instead")
    if "greedy" in doc and "optimal" in doc:
        raise InputError(where, "", "a compare document holds two plans already: diff the plans of simulate "
                                    "-o json and solve -o json instead")
    if not isinstance(doc.get("placements"), list) or not isinstance(doc.get("objective"), Mapping):
        raise InputError(where, "", "neither a podplan plan document (placements, pending, objective) nor manifests "
                                    "(objects with apiVersion and kind)")
    nodes: dict[str, str] = {}
    workloads: dict[str, str] = {}
    for i, p in enumerate(doc["placements"]):
        if not isinstance(p, Mapping) or not isinstance(p.get("pod"), str) or not isinstance(p.get("node"), str):
            raise InputError(where, f"placements[{i}]", f"expected {{pod, node}}, got {describe_value(p)}")
        nodes[p["pod"]] = p["node"]
        if isinstance(p.get("workload"), str):
            workloads[p["pod"]] = p["workload"]
    pending: dict[str, str] = {}
    for i, p in enumerate(doc.get("pending") or []):
        if not isinstance(p, Mapping) or not isinstance(p.get("pod"), str):
            raise InputError(where, f"pending[{i}]", f"expected {{pod, reason}}, got {describe_value(p)}")
        pending[p["pod"]] = str(p.get("reason", ""))
    objective = doc["objective"]
    by_priority = {int(k): int(v) for k, v in (objective.get("placed_by_priority") or {}).items()}
    terms = {str(k): int(v) for k, v in (objective.get("terms") or {}).items()}
    broken = frozenset(Rule(v["pod"], v["node"], v["plugin"], v["reason"])
                       for v in doc.get("preexisting_violations") or [] if isinstance(v, Mapping))
    return Side(path, PLAN, str(doc.get("status", "?")), nodes, pending, {}, by_priority, terms, broken, workloads)


def _state_side(path: str, cluster: Cluster) -> Side:
    from ..verify import verify_state

    report = verify_state(cluster)
    nodes = {p.key: p.node_name for p in cluster.pods}
    pending = {p.key: "" for p in cluster.pending}
    priorities = {p.key: p.priority for p in (*cluster.pods, *cluster.pending)}
    by_priority: dict[int, int] = {}
    for p in cluster.pods:
        by_priority[p.priority] = by_priority.get(p.priority, 0) + 1
    broken = frozenset(Rule(v.pod, v.node, v.plugin, v.reason) for v in report.violations if not v.preexisting)
    workloads = {p.key: p.workload for p in (*cluster.pods, *cluster.pending) if p.workload}
    return Side(path, STATE, "VALID" if report.ok else "INVALID", nodes, pending, priorities,
                dict(sorted(by_priority.items(), reverse=True)), dict(report.terms), broken, workloads,
                tuple(cluster.warnings))


# --------------------------------------------------------------------------------------------------- diffing


def diff(a: Side, b: Side) -> Diff:
    if a.kind != b.kind:
        plan, state = (a, b) if a.kind == PLAN else (b, a)
        raise PodplanError(f"{plan.source} is a plan document and {state.source} a state: diff two of one kind "
                           "(--emit state prints a plan's final state as manifests)")
    moved = _moves(a, b)
    placed = tuple((p, b.nodes[p]) for p in b.nodes if p not in a.nodes and (a.kind == PLAN or p in a.pending))
    unplaced = tuple((p, a.nodes[p], b.pending[p]) for p in a.nodes if p in b.pending)
    return Diff(a, b, moved, placed, unplaced,
                tuple(sorted(b.broken - a.broken, key=_rule_key)), tuple(sorted(a.broken - b.broken, key=_rule_key)))


def _moves(a: Side, b: Side) -> tuple[Move, ...]:
    """Pods on another node in B. Identical replicas (one workload's, StatefulSets aside: their pods have
    identities) are paired up: two replicas that swap nodes are no move, and a replica that leaves a node for
    another is one move, whichever of the two names each side gave it."""
    both = [p for p in a.nodes if p in b.nodes]
    moves = [Move(p, a.nodes[p], b.nodes[p]) for p in both
             if a.nodes[p] != b.nodes[p] and not _interchangeable(a, b, p)]
    groups: dict[str, list[str]] = {}
    for p in both:
        if _interchangeable(a, b, p):
            groups.setdefault(a.workloads[p], []).append(p)
    for pods in groups.values():
        left = Counter(a.nodes[p] for p in pods)
        left.subtract(Counter(b.nodes[p] for p in pods))
        sources = [n for n, k in sorted(left.items()) for _ in range(k) if k > 0]  # A's nodes B has fewer of
        spare = {n: -k for n, k in left.items() if k < 0}  # B's nodes A has fewer of
        for p in pods:
            if spare.get(b.nodes[p], 0) > 0:
                spare[b.nodes[p]] -= 1
                moves.append(Move(p, sources.pop(0), b.nodes[p]))
    order = {p: i for i, p in enumerate(both)}
    return tuple(sorted(moves, key=lambda m: order[m.pod]))


def _interchangeable(a: Side, b: Side, pod: str) -> bool:
    w = a.workloads.get(pod, "")
    return bool(w) and w == b.workloads.get(pod) and not w.startswith("StatefulSet/")


def _rule_key(r: Rule) -> tuple[str, str, str, str]:
    return (r.pod, r.node, r.plugin, r.reason)


def read_and_diff(a: str, b: str, strict: bool = False) -> Diff:
    if a == "-" and b == "-":
        raise PodplanError("only one of A and B can be - (stdin)")
    return diff(read_side(a, strict), read_side(b, strict))


__all__: Sequence[str] = ("Diff", "Move", "Rule", "Side", "diff", "read_and_diff", "read_side")
