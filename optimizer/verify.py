"""The verifier: judges a final state exactly as kube-scheduler's Filters would, pod by pod.

Every pod of the final state (existing pods and newly placed ones) is removed from the state, run through
every Filter plugin on its node, and put back: as if it were the last pod scheduled (`judge`, the reference).
A violation by an existing pod that already held before anything was placed (same plugin, in the input
state) is reported as pre-existing and does not fail the plan; so is any violation of a static (mirror)
pod, which the kubelet runs where its manifest is, without kube-scheduler ever judging it. It shares nothing with the CP-SAT encodings
beyond the models/ layer and the rules' own predicates.

`judge_all` gives `judge`'s verdicts for every pod without O(pods²) work:
- a plugin with a final-state judge (Plugin.final_state_judge: PodTopologySpread, InterPodAffinity) counts what
  its PreFilter needs ONCE per group of pods that share it, over the whole final state, and subtracts each
  pod's own contribution (its removal) before its own Filter runs on it;
- every other plugin runs its own PreFilter and Filter with the pod taken off its node.
The property tests check judge_all against judge on random clusters.

A plan that differs from a plan verified in full (a Basis: the search's starting plan, verified ahead in the
background) is judged on the pods the difference can affect only (optimizer.verify_delta, which reads the
plugins' declarations and their own predicates, never the optimizer's encodings); tests/test_verify_delta.py
checks that report against the full one on random plans and random changes.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from threading import Event, Lock

from ..models.loader import gc_paused
from ..models.objects import Cluster, Pod

from .framework import Profile, Reads, Reason
from .objective import preference_terms, raw_sums, schedule_anyway_excess, weigh
from .policy import Policy
from .profiles import Profiles
from .registry import DEFAULT_PROFILE
from .state import ClusterState, PodIndex
from .verify_delta import LAST_DELTA, Basis, affected, in_state_order, latest, owners_of, publish


@dataclass(frozen=True)
class Violation:
    """One failing Filter verdict of a pod of the final state. `preexisting`: reported, never a failure of the
    plan (an existing pod already in violation of that plugin before anything was placed, or a static pod)."""

    pod: str
    node: str
    plugin: str
    reason: str
    preexisting: bool = False


@dataclass(frozen=True)
class Report:
    violations: tuple[Violation, ...]
    terms: dict[str, int] = field(default_factory=dict)
    placed: int = 0
    placed_by_priority: dict[int, int] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not any(not v.preexisting for v in self.violations)

    @property
    def preference(self) -> int:
        return sum(self.terms.values())


def judge(pod: Pod, node_name: str, state: ClusterState, profile: Profile = DEFAULT_PROFILE) -> list[Reason]:
    """All Filter verdicts for `pod` on `node_name`, judged with the pod removed from `state`."""
    state.remove(pod)
    try:
        info = state.nodes[node_name]
        reasons: list[Reason] = []
        for plugin in profile.filters:
            assert plugin.filter is not None
            pre = plugin.pre_filter(pod, state) if plugin.pre_filter else None
            reasons.extend(plugin.filter(pod, pre, info, state))
        return reasons
    finally:
        state.add(pod, node_name)


class Cancelled(Exception):
    """A verification given up (optimizer.ahead: its plan is no longer the one to print)."""


def judge_all(state: ClusterState, pods: Iterable[Pod] | None = None,
              profile: Profile | Profiles = DEFAULT_PROFILE, index: PodIndex | None = None,
              cancel: Event | None = None) -> dict[str, list[Reason]]:
    """`judge` for each of `pods` (default: every pod of the state), keyed by pod key; [] = no violation.
    With Profiles, each pod is judged by its own profile's Filters (Profiles.judge_with). `index`: the state's
    PodIndex, when the caller has one (it is built otherwise). `cancel`: once set, Cancelled is raised within
    a few hundred pods."""
    index = index if index is not None else PodIndex(state)
    if isinstance(profile, Profiles):
        todo_all = list(pods) if pods is not None else [pod for pod, _ in state.all_pods()]
        groups: dict[int, list[Pod]] = {}
        for pod in todo_all:
            groups.setdefault(profile.profiles.index(profile.judge_with(pod)), []).append(pod)
        out_all: dict[str, list[Reason]] = {}
        for i, group in groups.items():
            out_all.update(judge_all(state, group, profile.profiles[i], index, cancel))
        return out_all
    active = profile.filters
    fast = {p.name: p.final_state_judge(state, index).filter for p in active if p.final_state_judge is not None}
    # Without a final-state judge: a plugin whose verdict reads the node object alone gives the same verdict with
    # the pod on its node or off it; any other runs with the pod taken off its node (the reference's removal).
    node_only = [p for p in active if p.name not in fast and p.filter_reads is Reads.NODE]
    removed = [p for p in active if p.name not in fast and p.filter_reads is not Reads.NODE]
    todo = ([(pod, state.nodes[state.node_of[pod.key]]) for pod in pods] if pods is not None
            else list(state.all_pods()))
    out: dict[str, list[Reason]] = {}
    for n, (pod, info) in enumerate(todo):
        if cancel is not None and not n & 255 and cancel.is_set():
            raise Cancelled
        key = pod.key
        node_name = info.name
        verdicts: dict[str, list[Reason]] = {}
        if removed:
            state.remove(pod)
            try:
                for p in removed:
                    pre = p.pre_filter(pod, state) if p.pre_filter else None
                    verdicts[p.name] = p.filter(pod, pre, info, state)  # type: ignore[misc]
            finally:
                state.add(pod, node_name)
        # the judges count over the whole state (put back above), minus this pod's own share
        for name, judge_one in fast.items():
            verdicts[name] = judge_one(pod, info)
        for p in node_only:
            pre = p.pre_filter(pod, state) if p.pre_filter else None
            verdicts[p.name] = p.filter(pod, pre, info, state)  # type: ignore[misc]
        reasons: list[Reason] = []
        for p in active:
            found = verdicts[p.name]
            if found:
                reasons.extend(found)
        out[key] = reasons
    return out


# ------------------------------------------------------------------------------------------------- reports


def final_state(cluster: Cluster, placements: Mapping[str, str]) -> ClusterState:
    """Existing pods where they are plus every placed pending pod on its node."""
    pending = {p.key: p for p in cluster.pending}
    placed = [(pending[k], n) for k, n in placements.items()]
    return ClusterState.from_cluster(cluster, [(p, p.node_name) for p in cluster.pods] + placed)


@dataclass
class _Scored:
    """A final state scored by `scored_terms`, kept for the verify gate of the very same plan."""

    cluster: Cluster
    placements: dict[str, str]
    policy: Policy
    state: ClusterState
    index: PodIndex
    terms: dict[str, int]
    fresh: bool = True  # built by final_state (False: a basis's state with the changed pods moved)


_SCORED: list[_Scored] = []  # the latest one only
_SCORED_LOCK = Lock()  # optimizer.ahead verifies in another thread


def scored_terms(cluster: Cluster, placements: Mapping[str, str], policy: Policy) -> dict[str, int]:
    """The preference terms of the plan's final state, exactly as `verify` computes them (final_state, one
    PodIndex, objective.preference_terms). The state, its index and the terms are kept, once, for the verify gate
    of the same plan (the same input object, equal placements and policy), which then judges that state instead
    of building it and its index again and scoring it again: at 5,000 nodes the optimizer scores the plan it
    returns (after Ctrl-C too) and the gate judged the same 77,000 pods' state from scratch right after."""
    with gc_paused():
        # a plan verified in full for this input (the search's starting plan, verified ahead) leaves its state:
        # moving the pods that differ is cheaper than building 77,000 pods' state again (verify_delta)
        basis = latest(cluster)
        nodes = {n.name for n in cluster.nodes} if basis is not None else set()
        taken = (basis.take_state(placements, policy, pending_of(cluster))
                 if basis is not None and all(n in nodes for n in placements.values()) else None)
        if taken is not None:
            state, index, delta_terms = taken
            terms = delta_terms if delta_terms is not None else preference_terms(cluster, state, policy, index)
        else:
            state = final_state(cluster, placements)
            index = PodIndex(state)
            terms = preference_terms(cluster, state, policy, index)
    with _SCORED_LOCK:
        _SCORED[:] = [_Scored(cluster, dict(placements), policy, state, index, terms, taken is None)]
    return dict(terms)


def _take_scored(cluster: Cluster, placements: Mapping[str, str], policy: Policy) -> _Scored | None:
    """The kept scoring of exactly this plan, taken (a state is judged once: judge_all moves pods within it)."""
    with _SCORED_LOCK:
        for kept in _SCORED:
            if kept.cluster is cluster and kept.policy == policy and kept.placements == placements:
                _SCORED.clear()
                return kept
    return None


_RETIRED: list[object] = []  # the last state judged (see _verify)
_PENDING: list[tuple[Cluster, dict[str, Pod]]] = []  # the last input's pending pods by key


def pending_of(cluster: Cluster) -> dict[str, Pod]:
    """The input's pending pods by key (the input is immutable: made once per input, not per plan verified)."""
    kept = _PENDING[:1]
    if kept and kept[0][0] is cluster:
        return kept[0][1]
    out = {p.key: p for p in cluster.pending}
    _PENDING[:] = [(cluster, out)]
    return out


def verify(cluster: Cluster, placements: Mapping[str, str], multipliers: Policy | None = None,
           profile: Profile | Profiles = DEFAULT_PROFILE, cancel: Event | None = None,
           basis: Basis | None = None) -> Report:
    """Violations of the final state and its preference terms (see optimizer.objective). `cancel`: see
    judge_all (raises Cancelled). `basis`: a plan of the same input verified in full with the same profile
    (verify_basis); only the pods whose verdict the difference can affect are judged again (verify_delta),
    with the same report."""
    with gc_paused():
        return _verify(cluster, placements, multipliers, profile, cancel, basis)[0]


def verify_basis(cluster: Cluster, placements: Mapping[str, str], multipliers: Policy | None = None,
                 profile: Profile | Profiles = DEFAULT_PROFILE, cancel: Event | None = None) -> tuple[Report, Basis]:
    """`verify`, and the Basis it leaves for verifying later plans of the same input incrementally (its state
    and index included: the latest basis made is also offered to scored_terms, verify_delta.latest)."""
    with gc_paused():
        report, basis = _verify(cluster, placements, multipliers, profile, cancel, None, keep=True)
    assert basis is not None
    publish(basis)
    return report, basis


def _verify(cluster: Cluster, placements: Mapping[str, str], multipliers: Policy | None,
            profile: Profile | Profiles, cancel: Event | None, basis: Basis | None = None,
            keep: bool = False) -> tuple[Report, Basis | None]:
    pending = pending_of(cluster)
    nodes = {n.name for n in cluster.nodes}
    # one pass over the plan (50,000 placements at 5,000 nodes): pods that are no pending pod, then pods on
    # nodes the input does not hold, as the report lists them
    violations: list[Violation] = []
    off_input: list[Violation] = []
    good: dict[str, str] = {}
    by_priority: dict[int, int] = {}
    for key, node in placements.items():
        pod = pending.get(key)
        if pod is None:
            violations.append(Violation(key, node, "Plan", "pod is not a pending pod of the input"))
        elif node not in nodes:
            off_input.append(Violation(key, node, "Plan", "node is not in the input"))
        else:
            good[key] = node
            by_priority[pod.priority] = by_priority.get(pod.priority, 0) + 1
    violations += off_input
    policy = multipliers or Policy()
    # the state the optimizer built and scored for this very plan, if it did (scored_terms), else built here
    scored = _take_scored(cluster, good, policy) if len(good) == len(placements) else None
    fresh = True  # a state built by final_state: judge_all meets its pods in the order the report lists them
    if scored is not None:
        state, index, fresh = scored.state, scored.index, scored.fresh
    elif basis is not None and basis.cluster is cluster and (taken := basis.take_state(good, None, pending)) is not None:
        state, index, _ = taken
        fresh = False  # the basis's own state, its changed pods moved
    else:
        state = final_state(cluster, good)
        index = PodIndex(state)  # one label index for the Filters and the preference terms
    changed = basis.changed_for(good) if basis is not None and basis.cluster is cluster else []
    redo = affected(state, index, basis, good, pending, profile, changed) if basis is not None and basis.cluster is cluster else None
    if redo is None:
        verdicts = judge_all(state, profile=profile, index=index, cancel=cancel)
        failing = {key: reasons for key, reasons in verdicts.items() if reasons}  # in the state's order
    else:  # incremental: every other pod's verdict is the basis's (verify_delta)
        judged = judge_all(state, [state.nodes[state.node_of[k]].pods[k] for k in redo], profile, index, cancel)
        failing = {k: r for k, r in basis.failing.items() if k not in redo and k in state.node_of}  # type: ignore[union-attr]
        failing.update((k, r) for k, r in judged.items() if r)
        LAST_DELTA[:] = [(len(changed), len(redo), len(state.node_of))]
    if redo is not None or not fresh:
        failing = {k: failing[k] for k in in_state_order(cluster, good, state, failing)}
    # An existing pod in violation: was it already, by the same plugin, before anything was placed?
    suspects = [state.nodes[state.node_of[key]].pods[key] for key in failing if key not in good]
    before: dict[str, list[Reason]] = {}
    if suspects:  # the input's own state is built only when it is asked (a valid plan has no suspects)
        before_state = ClusterState.from_cluster(cluster)
        before = judge_all(before_state, [p for p in suspects if p.key in before_state.node_of], profile)
    for key, reasons in failing.items():
        info = state.nodes[state.node_of[key]]
        pod = info.pods[key]
        pre_plugins = {r.plugin for r in before.get(key, ())}
        violations.extend(Violation(key, info.name, r.plugin, r.reason, r.plugin in pre_plugins or pod.mirror)
                          for r in reasons)
    if cancel is not None and cancel.is_set():
        raise Cancelled
    # (sums over the pods: the same whatever order judge_all left them in within their nodes)
    if keep:  # the sums a later plan's terms are computed from (verify_delta), and the pods that read others
        raw = raw_sums(state, index)
        terms = weigh(raw, schedule_anyway_excess(state, index), policy)  # = preference_terms
    else:
        terms = dict(scored.terms) if scored is not None else preference_terms(cluster, state, policy, index)
    report = Report(tuple(violations), terms, len(good), dict(sorted(by_priority.items(), reverse=True)))
    if not keep:
        # freed when the next plan is verified, not now: freeing 77,000 pods' state took 0.1 s between Ctrl-C
        # and the printed plan at 5,000 nodes
        _RETIRED[:] = [state, index]
        return report, None
    return report, Basis(cluster, dict(good), failing, raw, owners_of(state), state, index)


NODE_NOT_IN_INPUT = 'node "{node}" is not in the input'


def verify_state(cluster: Cluster, multipliers: Policy | None = None,
                 profile: Profile | Profiles = DEFAULT_PROFILE) -> Report:
    """`podplan verify`: the input IS the final state (pods with spec.nodeName); every violation counts, but
    those of static pods (placed by the kubelet, never judged by kube-scheduler), reported as preexisting.
    A pod bound to a node the input does not hold is a violation of the plan itself (kube-scheduler binds
    only to nodes in its snapshot)."""
    with gc_paused():
        return _verify_state(cluster, multipliers, profile)


def _verify_state(cluster: Cluster, multipliers: Policy | None, profile: Profile | Profiles) -> Report:
    state = ClusterState.from_cluster(cluster)
    index = PodIndex(state)
    verdicts = judge_all(state, profile=profile, index=index)
    nodes = {n.name for n in cluster.nodes}
    violations = [Violation(pod.key, pod.node_name, "Plan", NODE_NOT_IN_INPUT.format(node=pod.node_name), pod.mirror)
                  for pod in cluster.pods if pod.node_name not in nodes]
    violations += [Violation(pod.key, info.name, r.plugin, r.reason, pod.mirror)
                   for pod, info in state.all_pods() for r in verdicts[pod.key]]
    terms = preference_terms(cluster, state, multipliers or Policy(), index)
    return Report(tuple(violations), terms, 0, {})
