"""The user's KubeSchedulerConfiguration (models.schedulerconfig) as podplan's profiles, and the pending pods
kube-scheduler would not bind.

`profiles_from(config)` turns each configured profile into a framework.Profile: the enabled Filter plugins
in their configured order (a disabled Filter is left out of the simulator, the verifier and the model: its
record keeps only its Score and its preference terms), the Score plugins with their configured weights (a
plugin not enabled at Score scores nothing), the plugins' arguments applied by the rule packages' factories
(noderesources.new / new_balanced, nodeaffinity.new), percentageOfNodesToScore per profile or global. The
default configuration gives exactly registry.DEFAULT_PROFILE.

`hold_back(cluster, profiles)`: pods kube-scheduler never binds stay pending with their reason and are no
part of any batch: pods with spec.schedulingGates (the API server sets PodScheduled=False/SchedulingGated on
them and refuses their binding), and pods whose spec.schedulerName is no profile of the configuration
(another scheduler, e.g. volcano, owns them).

Not modelled yet (one line, exit 2, rather than a silently different answer): solving (solve, compare,
explain --why-pending) under PodTopologySpread defaultConstraints with whenUnsatisfiable DoNotSchedule
(the model encodes only the pods' own hard constraints; simulate and verify apply them); solving pods of
several profiles in one batch.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from ..models.errors import PodplanError
from ..models.objects import Cluster, Pod
from ..models.schedulerconfig import (INTER_POD_AFFINITY, MOST_ALLOCATED, NODE_AFFINITY, NODE_RESOURCES_BALANCED_ALLOCATION,
                                      NODE_RESOURCES_FIT, POD_TOPOLOGY_SPREAD,
                                      DefaultPreemptionArgs, SchedulerConfiguration,
                                      default_configuration)
from ..models.schedulerconfig import Profile as ConfigProfile

from . import interpodaffinity, nodeaffinity, noderesources, podtopologyspread
from .framework import Encoding, Plugin, Profile
from .plan import Plan
from .registry import PLUGINS

# PodScheduled condition the API server sets on a gated pod (pkg/registry/core/pod/strategy.go), and the
# SchedulingGates PreEnqueue status (pkg/scheduler/framework/plugins/schedulinggates).
REASON_SCHEDULING_GATED = "SchedulingGated"
MESSAGE_SCHEDULING_GATED = "Scheduling is blocked due to non-empty scheduling gates"
STATUS_WAITING_FOR_GATES = "waiting for scheduling gates: [{gates}]"
UNSOLVABLE_SPREAD_DEFAULTS = ("PodTopologySpread defaultConstraints with whenUnsatisfiable DoNotSchedule are applied by "
                              "simulate and verify, but solving under them is not supported yet")
NOT_OURS = 'not scheduled by podplan: spec.schedulerName is "{name}"'


@dataclass(frozen=True)
class Profiles:
    """The profiles of one configuration, by scheduler name, with their solve tie-break strategy."""

    profiles: tuple[Profile, ...]
    strategies: tuple[str, ...]  # per profile: "pack" under MostAllocated, else "spread"
    notes: tuple[str, ...] = ()  # plugins accepted but not modelled
    source: str = "<default>"
    unsolvable: tuple[str, ...] = ()  # per profile: why solve cannot model it ("" = it can)
    preemption: tuple[DefaultPreemptionArgs | None, ...] = ()  # per profile: None = DefaultPreemption disabled

    def of(self, pod: Pod) -> Profile | None:
        """The profile that schedules `pod` (its spec.schedulerName), None when no profile does."""
        return next((p for p in self.profiles if p.scheduler_name == pod.scheduler_name), None)

    def judge_with(self, pod: Pod) -> Profile:
        """The profile whose Filters judge a pod of a final state: its own, else the first (a pod another
        scheduler bound is judged by the rules the configuration's first profile enforces)."""
        return self.of(pod) or self.profiles[0]

    def strategy(self, profile: Profile) -> str:
        return self.strategies[self.profiles.index(profile)]

    def for_batch(self, pods: tuple[Pod, ...]) -> Profile:
        """The one profile a CP-SAT solve of `pods` uses: the profile of their schedulerName. Pods of several
        profiles are solved together only when those profiles enforce the same rules (same Filters with the
        same args, same model: they may differ in scoring), with the first of them (configuration order);
        a model whose classes carry their own profile's rules is not supported yet."""
        names = {p.scheduler_name for p in pods}
        used = [p for p in self.profiles if p.scheduler_name in names] or [self.profiles[0]]
        if any(_rules(p) != _rules(used[0]) for p in used[1:]):
            raise PodplanError(f"{self.source}: the pending pods use scheduler profiles with different filters "
                               f"({', '.join(p.scheduler_name for p in used)}): solving them in one batch is not "
                               f"supported yet; select one profile's pods (e.g. with -l) or use simulate")
        for found in used:
            why = self.unsolvable[self.profiles.index(found)] if self.unsolvable else ""
            if why:
                raise PodplanError(f"{self.source}: profile {found.scheduler_name}: {why}")
        return used[0]


def _configured(plugin: Plugin, cp: ConfigProfile) -> Plugin:
    """The plugin record with the profile's arguments applied (the default record when they are defaults)."""
    if plugin.name == NODE_RESOURCES_FIT:
        return noderesources.new(cp.fit)
    if plugin.name == NODE_RESOURCES_BALANCED_ALLOCATION:
        return noderesources.new_balanced(cp.balanced_allocation)
    if plugin.name == NODE_AFFINITY:
        return nodeaffinity.new(cp.node_affinity)
    if plugin.name == POD_TOPOLOGY_SPREAD:
        return podtopologyspread.new(cp.pod_topology_spread)
    if plugin.name == INTER_POD_AFFINITY:
        return interpodaffinity.new(cp.inter_pod_affinity)
    return plugin


def _rules(profile: Profile) -> tuple[object, ...]:
    """What a profile enforces (its Filters, guards, judges and model), not how it scores."""
    return (tuple((p.name, p.pre_filter, p.filter, p.pre_filter_skip, p.filter_skipped, p.placed_guard,
                   p.final_state_judge) for p in profile.filters), profile.encodings)


def _without_filter(plugin: Plugin) -> Plugin:
    """A plugin enabled at Score only: no Filter, no batch guard, and of its model only the preference terms."""
    if plugin.filter is None:
        return plugin
    enc = plugin.encoding
    soft = None
    if enc is not None and enc.soft is not None:
        soft = Encoding(encode=enc.soft, interactions=enc.interactions, existing_terms=enc.existing_terms)
    return replace(plugin, pre_filter=None, filter=None, pre_filter_skip=None, filter_skipped=None,
                   placed_guard=None, final_state_judge=None, encoding=soft, vector=None)


def _without_score(plugin: Plugin) -> Plugin:
    if plugin.score is None:
        return plugin  # nothing to drop: the record (and its vectorized form) stays the default one
    return replace(plugin, pre_score=None, score=None, normalize=None, pre_score_skip=None, score_skipped=None,
                   vector=None)


def profile_from(cp: ConfigProfile, config: SchedulerConfiguration) -> Profile:
    """One configured profile as a framework Profile (see the module docstring)."""
    known = {p.name: p for p in PLUGINS}
    filters = [name for name in cp.modelled_filters if name in known]
    weights = dict(cp.modelled_scores)
    plugins: list[Plugin] = []
    for name in filters + [n for n in weights if n not in filters and n in known]:
        plugin = _configured(known[name], cp)
        if name not in filters:
            plugin = _without_filter(plugin)
        if name not in weights:
            plugin = _without_score(plugin)
        plugins.append(plugin)
    pct = cp.percentage_of_nodes_to_score
    return Profile(tuple(plugins), tuple((n, w) for n, w in weights.items() if n in known), cp.scheduler_name,
                   config.percentage_of_nodes_to_score if pct is None else pct)


def profiles_from(config: SchedulerConfiguration) -> Profiles:
    profiles = tuple(profile_from(cp, config) for cp in config.profiles)
    strategies = tuple("pack" if cp.fit.scoring_strategy.type == MOST_ALLOCATED else "spread" for cp in config.profiles)
    notes = tuple(note for cp in config.profiles for note in cp.notes)
    unsolvable = tuple(UNSOLVABLE_SPREAD_DEFAULTS if POD_TOPOLOGY_SPREAD in cp.filters
                       and not podtopologyspread.solvable(cp.pod_topology_spread) else "" for cp in config.profiles)
    preemption = tuple(cp.default_preemption if cp.preemption else None for cp in config.profiles)
    return Profiles(profiles, strategies, notes, config.source, unsolvable, preemption)


def default_profiles() -> Profiles:
    return profiles_from(default_configuration())


# -------------------------------------------------------------------------------- pods podplan leaves alone


def held_reason(pod: Pod, profiles: Profiles) -> str | None:
    """Why kube-scheduler would not bind `pod` (None: it schedules it)."""
    if pod.scheduling_gates:
        gates = STATUS_WAITING_FOR_GATES.format(gates=" ".join(pod.scheduling_gates))
        return f"{REASON_SCHEDULING_GATED}: {MESSAGE_SCHEDULING_GATED} ({gates})"
    if profiles.of(pod) is None:
        return NOT_OURS.format(name=pod.scheduler_name)
    return None


@dataclass(frozen=True)
class Held:
    """Pending pods no command places, with their reasons, in input order."""

    pending: dict[str, str]

    def note(self) -> str | None:
        if not self.pending:
            return None
        gated = sum(1 for r in self.pending.values() if r.startswith(REASON_SCHEDULING_GATED))
        parts = [f"{gated} with scheduling gates"] if gated else []
        if len(self.pending) - gated:
            parts.append(f"{len(self.pending) - gated} of other schedulers")
        return f"{len(self.pending)} pending pod(s) left alone ({', '.join(parts)}): kube-scheduler would not bind them"

    def into(self, plan: Plan) -> Plan:
        """`plan` with the held pods listed as pending and counted in a note."""
        note = self.note()
        if note is None:
            return plan
        return replace(plan, pending={**plan.pending, **self.pending}, notes=plan.notes + (note,))


def hold_back(cluster: Cluster, profiles: Profiles) -> tuple[Cluster, Held]:
    """The cluster whose pending pods are the batch kube-scheduler would schedule, and the pods it holds."""
    held: dict[str, str] = {}
    batch: list[Pod] = []
    for pod in cluster.pending:
        why = held_reason(pod, profiles)
        if why is None:
            batch.append(pod)
        else:
            held[pod.key] = why
    if not held:
        return cluster, Held({})
    return replace(cluster, pending=tuple(batch)), Held(held)
