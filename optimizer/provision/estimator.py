"""cluster-autoscaler's scale-up answer on podplan's input: what `provision` is compared with.

What cluster-autoscaler does with pending pods (kubernetes/autoscaler, cluster-autoscaler/):
1. The pods kube-scheduler cannot place on the existing nodes are the ones a scale-up is for (here: podplan's
   simulator, `simulate`, on the existing nodes).
2. For every node group (here: a node type in one zone, an "offer") the pods that pass the scheduler's filters
   on the group's template node are estimated by the binpacking estimator (estimator/binpacking_estimator.go):
   pod equivalence groups sorted by the DecreasingPodOrderer (estimator/decreasing_pod_orderer.go: score =
   the pod's cpu request / the template's allocatable cpu + its memory request / the template's allocatable
   memory, largest first), then first-fit: each pod goes on the first new node of this estimation where the
   filters pass, else on the node added last, else on a new copy of the template; a pod that fails on a
   freshly added empty node ends its group's estimation. The group's max size (here: the type's `max` and
   `limits`) stops it adding nodes.
3. The least-waste expander (expander/waste/waste.go) picks among the options: the one whose nodes would
   leave the smallest fraction of cpu plus memory capacity unrequested by the pods it helps (ties: random
   upstream, the first option here, so that the answer is reproducible).
4. One expansion per autoscaler loop: the chosen option's nodes are added, its pods bound, and the loop runs
   again on the pods still pending until none is left or no option helps any of them.
The estimator's own comment puts first-fit decreasing at 11/9·OPT + 6/9 nodes in one dimension; it never
compares prices (that is the `price` expander's job, a separate choice upstream).
"""
from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from ...models.nodetypes import NodeType, new_node, node_name_part
from ...models.objects import Cluster, Node, Pod
from ..framework import Profile, Reads
from ..greedy import simulate
from ..runner import NEVER, Interrupt
from ..state import ClusterState, NodeInfo


@dataclass(frozen=True, eq=False)
class Offer:
    """A node type in one zone (cluster-autoscaler's node group); one object per offer (compared by identity)."""

    type: NodeType
    zone: str | None

    @property
    def name(self) -> str:
        return f"{self.type.name}/{self.zone}" if self.zone else self.type.name


def offer_probes(offers: Sequence[Offer], prefix: str = "probe") -> list[Node]:
    """One node per offer as the offer would make it, named `{prefix}-{i}` (stand-ins for the new nodes in a
    problem built over the existing nodes and them)."""
    return [new_node(o.type, f"{prefix}-{i}", o.zone) for i, o in enumerate(offers)]


def offer_name(o: Offer) -> str:
    """What the names of an offer's new nodes start with: its type, then its zone."""
    return node_name_part(o.type.name) + (f"-{node_name_part(o.zone)}" if o.zone else "")


def fresh_name(o: Offer, number: int, taken: set[str]) -> str:
    """A new node's name: offer_name, then the first free number from `number` on (added to `taken`)."""
    base = offer_name(o)
    while f"{base}-{number}" in taken:
        number += 1
    taken.add(f"{base}-{number}")
    return f"{base}-{number}"


@dataclass
class Estimate:
    add: list[tuple[Offer, int]] = field(default_factory=list)  # in the order the loops chose them
    nodes: list[Node] = field(default_factory=list)
    placements: dict[str, str] = field(default_factory=dict)  # every pending pod placed (existing + new nodes)
    pending: dict[str, str] = field(default_factory=dict)  # required pods no option helped
    wall_seconds: float = 0.0
    stopped: str = ""

    def cost(self) -> float:
        return sum(o.type.price * n for o, n in self.add)

    def count(self) -> int:
        return sum(n for _, n in self.add)


class OutOfTime(Exception):
    """The estimator's deadline passed, or Ctrl-C, in the middle of an estimation (its state is restored)."""


@dataclass
class _Clock:
    """Asked once per pod (or run of identical pods) placed: the estimator stops within one pod of its deadline."""

    deadline: float | None
    interrupt: Interrupt

    def check(self) -> None:
        if self.interrupt.is_set():
            raise OutOfTime("interrupted")
        if self.deadline is not None and time.perf_counter() > self.deadline:
            raise OutOfTime("out of time")


def fits(pod: Pod, names: Sequence[str], state: ClusterState, profile: Profile,
         given: dict[str, object] | None = None) -> str | None:
    """The first of `names` where every Filter passes for `pod` (each PreFilter run once), or None. `given`:
    PreFilter results already computed for this pod on this state (plugin name -> result)."""
    pres = []
    for plugin in profile.filters:
        if plugin.pre_filter_skip is not None and plugin.pre_filter_skip(pod, state):
            continue
        if given is not None and plugin.name in given:
            pre = given[plugin.name]
        else:
            pre = plugin.pre_filter(pod, state) if plugin.pre_filter else None
        if plugin.filter_skipped is not None and plugin.filter_skipped(pre):
            continue
        pres.append((plugin, pre))
    for name in names:
        info = state.nodes[name]
        if all(not plugin.filter(pod, pre, info, state) for plugin, pre in pres):  # type: ignore[misc]
            return name
    return None


def _add_node(state: ClusterState, node: Node) -> None:
    state.nodes[node.name] = NodeInfo(node)
    state.memo.clear()  # plugins' precomputes were made over the old node set


def _drop_node(state: ClusterState, name: str) -> None:
    info = state.nodes.pop(name)
    for key in list(info.pods):
        state.node_of.pop(key, None)
    state.memo.clear()


def _memo_snapshot(state: ClusterState) -> dict:
    """PodTopologySpread's memoized counts (optimizer.podtopologyspread.filtering), copied."""
    from ..podtopologyspread.filtering import _MEMO

    return {k: (v[0], tuple(dict(tp) for tp in v[1])) for k, v in state.memo.items()
            if isinstance(k, tuple) and k and k[0] == _MEMO}


def _memo_restore(state: ClusterState, snapshot: dict, version: int | None = None) -> None:
    """The memo as it was at the snapshot (each entry's counts valid at `version`, when given), nothing else."""
    state.memo.clear()
    state.memo.update({k: (v[0] if version is None else version, tuple(dict(tp) for tp in v[1]))
                       for k, v in snapshot.items()})


def _add_empty_node(state: ClusterState, node: Node) -> None:
    """_add_node that keeps PodTopologySpread's memoized counts (instead of clearing every memo, after which each
    pod's PreFilter recounted every node: most of the estimator's time with zone spread on every workload): an
    empty node adds its domain, with no matching pod, to each count whose constraint's node inclusion policy
    admits it, as the plugin's own count over every node (_count_all) would. Other memos are cleared."""
    from ..podtopologyspread.common import eligibility_test
    from ..podtopologyspread.filtering import _MEMO
    from ...models.objects import Affinity

    state.nodes[node.name] = NodeInfo(node)
    labels = node.labels
    for key in list(state.memo):
        if not (isinstance(key, tuple) and key and key[0] == _MEMO):
            del state.memo[key]
            continue
        _, namespace, constraints, selector_items, node_required, tolerations = key
        if not all(c.topology_key in labels for c in constraints):
            continue
        stand_in = Pod(namespace=namespace, name="", node_selector=dict(selector_items),
                       affinity=Affinity(node_required=node_required), tolerations=tolerations)
        for c, tp in zip(constraints, state.memo[key][1]):
            eligible = eligibility_test(c, stand_in)
            if eligible is None or eligible(node):
                tp.setdefault(labels[c.topology_key], 0)


def pod_score(pod: Pod, template: Node) -> float:
    """DecreasingPodOrderer's score of a pod for a template node."""
    score = 0.0
    cpu, mem = template.allocatable.get("cpu", 0), template.allocatable.get("memory", 0)
    if cpu > 0:
        score += pod.requests.get("cpu", 0) / cpu
    if mem > 0:
        score += pod.requests.get("memory", 0) / mem
    return score


def _groups(pods: Sequence[Pod]) -> list[list[Pod]]:
    """Pod equivalence groups: the pods of one controller with one spec (here: one workload), input order."""
    by: dict[str, list[Pod]] = {}
    for p in pods:
        by.setdefault(p.workload or p.key, []).append(p)
    return list(by.values())


class _Namer:
    """`<prefix><type>-<zone>-<i>`, the smallest i not taken. Names are only ever added, so the smallest free i
    of a base never decreases: the search starts where the previous one ended (it was quadratic)."""

    def __init__(self, taken: set[str]) -> None:
        self.taken = set(taken)
        self.next: dict[str, int] = {}

    def __call__(self, offer: Offer, prefix: str = "") -> str:
        base = f"{prefix}{offer_name(offer)}"
        i = self.next.get(base, 1)
        while f"{base}-{i}" in self.taken:
            i += 1
        self.taken.add(f"{base}-{i}")
        self.next[base] = i + 1
        return f"{base}-{i}"


def _estimate_reference(state: ClusterState, offer: Offer, pods: Sequence[Pod], profile: Profile, room: int,
                        name: _Namer, clock: _Clock | None = None) -> tuple[list[Node], dict[str, str]]:
    """The binpacking estimator for one node group, one pod and one node at a time, every filter asked: the
    reference the fast path (_estimate_fast) is proven equal to. The state is left as it was."""
    clock = clock or _Clock(None, NEVER)
    probe = new_node(offer.type, name(offer, "probe-"), offer.zone)
    _add_node(state, probe)
    # the pods that pass the filters on the template: one check per pod equivalence (identical pods, one verdict)
    from ..problem import pod_signature

    verdict: dict[tuple, bool] = {}
    eligible = []
    for p in pods:
        sig = pod_signature(p, frozenset(p.labels))
        if sig not in verdict:
            verdict[sig] = fits(p, [probe.name], state, profile) is not None
        if verdict[sig]:
            eligible.append(p)
    _drop_node(state, probe.name)
    groups = sorted(_groups(eligible), key=lambda g: -pod_score(g[0], offer.type.node))  # stable: input order ties
    nodes: list[Node] = []
    used: set[str] = set()
    placed: dict[str, str] = {}
    added: list[tuple[Pod, str]] = []
    try:
        for group in groups:
            i = 0
            while i < len(group):  # first on the new nodes made so far (FitsAnyNodeMatching)
                clock.check()
                where = fits(group[i], [n.name for n in nodes], state, profile) if nodes else None
                if where is None:
                    break
                state.add(group[i], where)
                added.append((group[i], where))
                placed[group[i].key] = where
                used.add(where)
                i += 1
            for pod in group[i:]:
                clock.check()
                last = nodes[-1].name if nodes else None
                if last is not None and fits(pod, [last], state, profile) == last:
                    where = last
                else:
                    if last is not None and last not in used:
                        break  # it failed on an empty new node: a further one would not help
                    if len(nodes) >= room:
                        break
                    node = new_node(offer.type, name(offer), offer.zone)
                    _add_node(state, node)
                    nodes.append(node)
                    if fits(pod, [node.name], state, profile) is None:
                        break
                    where = node.name
                state.add(pod, where)
                added.append((pod, where))
                placed[pod.key] = where
                used.add(where)
    finally:
        for pod, _ in reversed(added):
            state.remove(pod)
        for node in nodes:
            _drop_node(state, node.name)
    return [n for n in nodes if n.name in used], placed


def local_signatures(pods: Sequence[Pod], state: ClusterState, profile: Profile,
                     given: dict[tuple, dict[str, object]] | None = None) -> dict[tuple, bool]:
    """Per pod signature: True when, on a new node of any offer whose template admits the pod, its verdict is its
    requests against the node's free room and pod count alone, now and while any of `pods` is added to new
    nodes. Then first fit of identical pods fills the new nodes in order, many pods at a time (_estimate_fast).

    Conservative, rule by rule: node-object rules (taints, node affinity, unschedulable) give the template's
    verdict on every copy unless the pod names a node (nodeName, the hostname label, metadata.name);
    NodeResourcesFit is the default one (the fast path repeats its arithmetic); no host ports; InterPodAffinity
    and PodTopologySpread skip the pod (no required terms or hard constraints of its own, no existing pod's
    required anti-affinity counts against it) and no pod of `pods` carries a required anti-affinity term that
    matches it; any other rule that reads the node's pods or the cluster makes the pod not local."""
    from ..interpodaffinity.filtering import NAME as IPA, _existing_term_matches
    from ..nodeports.filtering import NAME as PORTS, filter_node as ports_filter
    from ..noderesources.filtering import NAME as FIT, filter_node as fit_filter, pre_filter as fit_pre
    from ..podtopologyspread.common import NAME as PTS
    from ..problem import pod_signature

    reps: dict[tuple, Pod] = {}
    for p in pods:
        reps.setdefault(pod_signature(p, frozenset(p.labels)), p)
    anti = [(q, t) for q in reps.values() for t in q.affinity.anti_required]
    out: dict[tuple, bool] = {}
    for sig, p in reps.items():
        ok = not p.node_name and not p.host_ports
        names_a_node = repr((p.node_selector, p.affinity.node_required))
        ok = ok and "kubernetes.io/hostname" not in names_a_node and "metadata.name" not in names_a_node
        for plugin in profile.filters if ok else ():
            if plugin.name == FIT:
                ok = plugin.filter is fit_filter and plugin.pre_filter in (None, fit_pre)
            elif plugin.name == PORTS:
                ok = plugin.filter is ports_filter
            elif plugin.filter_reads is Reads.NODE:
                continue
            elif plugin.name in (IPA, PTS):
                if not (plugin.pre_filter_skip is not None and plugin.pre_filter_skip(p, state)):
                    if given is not None and plugin.name in given.get(sig, {}):
                        pre = given[sig][plugin.name]  # probe_pre_filters' result on this state
                    else:
                        pre = plugin.pre_filter(p, state) if plugin.pre_filter else None
                    ok = plugin.filter_skipped is not None and plugin.filter_skipped(pre)
                if ok and plugin.name == IPA:
                    ns_labels = state.namespace_labels.get(p.namespace, {})
                    ok = not any(_existing_term_matches(t, q, p, ns_labels) for q, t in anti)
            else:
                ok = False
            if not ok:
                break
        out[sig] = ok
    return out


def _wants(pod: Pod) -> tuple[tuple[str, int], ...]:
    """The requests NodeResourcesFit checks (insufficient_resources: first-class and scalar, above zero)."""
    from ..noderesources.filtering import FIRST_CLASS, is_scalar_resource_name

    names = [r for r in FIRST_CLASS if pod.requests.get(r, 0) > 0]
    names += sorted(r for r, q in pod.requests.items()
                    if q > 0 and r not in FIRST_CLASS and is_scalar_resource_name(r))
    return tuple((r, pod.requests[r]) for r in names)


class _Free:
    """The estimation's new nodes as arrays (one row per node, in the order they were added; every node of one
    offer has the template's allocatable): what each has requested per resource and its pod count, updated
    with every pod placed, so that a run's first fit is one vector operation over the nodes."""

    def __init__(self, template: Node, pods: Sequence[Pod], size: int) -> None:
        self.names = sorted({r for p in pods for r, q in p.requests.items() if q > 0})
        self.col = {r: k for k, r in enumerate(self.names)}
        self.alloc = np.array([template.allocatable.get(r, 0) for r in self.names], dtype=np.int64)
        self.max_pods = int(template.allocatable.get("pods", 0))
        self.used = np.zeros((size, len(self.names)), dtype=np.int64)
        self.count = np.zeros(size, dtype=np.int64)
        self.n = 0

    def add_node(self) -> None:
        if self.n == len(self.count):
            self.used = np.vstack((self.used, np.zeros_like(self.used)))
            self.count = np.concatenate((self.count, np.zeros_like(self.count)))
        self.n += 1

    def put(self, pod: Pod, i: int, k: int = 1) -> None:
        for r, q in pod.requests.items():
            if q > 0:
                self.used[i, self.col[r]] += k * q
        self.count[i] += k

    def rooms(self, wants: tuple[tuple[str, int], ...]) -> np.ndarray:
        """Per node, how many more pods with these requests NodeResourcesFit admits (as _room)."""
        k = self.max_pods - self.count[:self.n]
        for r, q in wants:
            c = self.col[r]
            k = np.minimum(k, (self.alloc[c] - self.used[:self.n, c]) // q)
        return np.maximum(k, 0)


def _room(info: NodeInfo, wants: tuple[tuple[str, int], ...]) -> int:
    """How many more pods with these requests NodeResourcesFit admits on the node, one after the other."""
    alloc, used = info.node.allocatable, info.requested
    k = alloc.get("pods", 0) - len(info.pods)
    for r, q in wants:
        k = min(k, (alloc.get(r, 0) - used.get(r, 0)) // q)
    return max(0, k)


def probe_pre_filters(pods: Sequence[Pod], state: ClusterState, profile: Profile, sig_of: dict[str, tuple]
                      ) -> dict[tuple, dict[str, object]]:
    """Per pod signature, InterPodAffinity's PreFilter on `state`: the same with any empty probe node added (an
    empty node adds no pod to count, and no pod with required anti-affinity), so one computation serves the
    probes of every offer. Signatures in the order of the plugin's per-node caches (namespace, labels)."""
    from ..interpodaffinity.filtering import NAME as IPA

    plugin = next((p for p in profile.filters if p.name == IPA and p.pre_filter is not None), None)
    if plugin is None:
        return {}
    reps: dict[tuple, Pod] = {}
    for p in pods:
        reps.setdefault(sig_of[p.key], p)
    out: dict[tuple, dict[str, object]] = {}
    for sig, p in sorted(reps.items(), key=lambda kv: (kv[1].namespace, sorted(kv[1].labels.items()))):
        if not (plugin.pre_filter_skip is not None and plugin.pre_filter_skip(p, state)):
            out[sig] = {IPA: plugin.pre_filter(p, state)}
    return out


def _eligible(state: ClusterState, offer: Offer, pods: Sequence[Pod], profile: Profile, name: _Namer,
              sig_of: dict[str, tuple], given: dict[tuple, dict[str, object]]) -> list[Pod]:
    """The pods that pass the filters on the offer's template node (a probe): one check per pod signature."""
    probe = new_node(offer.type, name(offer, "probe-"), offer.zone)
    before = _memo_snapshot(state)
    _add_empty_node(state, probe)
    verdict: dict[tuple, bool] = {}
    eligible = []
    for p in pods:
        sig = sig_of[p.key]
        if sig not in verdict:
            verdict[sig] = fits(p, [probe.name], state, profile, given.get(sig)) is not None
        if verdict[sig]:
            eligible.append(p)
    del state.nodes[probe.name]  # no pod was added: the memo as it was before the probe
    _memo_restore(state, before)
    return eligible


def _estimate_fast(state: ClusterState, offer: Offer, pods: Sequence[Pod], profile: Profile, room: int,
                   name: _Namer, clock: _Clock, local: dict[tuple, bool], sig_of: dict[str, tuple],
                   given: dict[tuple, dict[str, object]]) -> tuple[list[Node], dict[str, str]]:
    """_estimate_reference's answer (proven equal by tests/test_provision_estimator.py), faster: a run of
    identical local pods (local_signatures) is placed as a block, first fit filling the new nodes in order by
    their free room (the pods do not interact on a new node beyond its resources), so the filters and their
    PreFilters run once per run instead of once per pod and node. Other pods take the reference's path."""
    eligible = _eligible(state, offer, pods, profile, name, sig_of, given)
    groups = sorted(_groups(eligible), key=lambda g: -pod_score(g[0], offer.type.node))  # stable: input order ties
    nodes: list[Node] = []
    infos: list[NodeInfo] = []
    index: dict[str, int] = {}
    used: set[str] = set()
    placed: dict[str, str] = {}
    added: list[tuple[Pod, str]] = []
    free = _Free(offer.type.node, eligible, min(room, len(eligible)) + 1)
    # counts up to date now (restored at the end as valid from then on; older ones are dropped: their replay
    # would read the journal of nodes this estimation adds and drops)
    before = {k: v for k, v in _memo_snapshot(state).items() if v[0] == state.version}

    def put(run: Sequence[Pod], where: str) -> None:
        for pod in run:
            state.add(pod, where)
            added.append((pod, where))
            placed[pod.key] = where
            free.put(pod, index[where])
        used.add(where)

    def open_node(last: str | None) -> bool:
        """A new node of the offer, empty, after the last one; False when the last one is still unused (a pod that
        does not fit on an empty node of the offer fits on no new one) or the offer has no room for more."""
        if (last is not None and last not in used) or len(nodes) >= room:
            return False
        node = new_node(offer.type, name(offer), offer.zone)
        _add_empty_node(state, node)
        index[node.name] = len(nodes)
        nodes.append(node)
        infos.append(state.nodes[node.name])
        free.add_node()
        return True

    def ends(group: list[Pod]) -> list[int]:
        """For each pod, where its run of identical pods ends."""
        out = [len(group)] * len(group)
        for i in range(len(group) - 2, -1, -1):
            out[i] = out[i + 1] if sig_of[group[i].key] == sig_of[group[i + 1].key] else i + 1
        return out

    try:
        for group in groups:
            i = 0
            end_of = ends(group)
            phase_two = not nodes
            while i < len(group) and not phase_two:  # first fit on the new nodes made so far
                clock.check()
                if local[sig_of[group[i].key]]:
                    j = end_of[i]
                    rooms = free.rooms(_wants(group[i]))
                    for n in np.flatnonzero(rooms).tolist():  # identical pods fill the nodes in order
                        take = min(j - i, int(rooms[n]))
                        put(group[i:i + take], nodes[n].name)
                        i += take
                        if i == j:
                            break
                    phase_two = i < j  # the run's next pod fits on none of them
                else:
                    where = fits(group[i], [n.name for n in nodes], state, profile)
                    if where is None:
                        break
                    put(group[i:i + 1], where)
                    i += 1
            while i < len(group):  # on the node added last, else on a new one
                clock.check()
                last = nodes[-1].name if nodes else None
                if local[sig_of[group[i].key]]:
                    j = end_of[i]
                    wants = _wants(group[i])
                    if last is not None:
                        take = min(j - i, _room(infos[-1], wants))
                        if take:
                            put(group[i:i + take], last)
                            i += take
                            continue
                    if not open_node(last):
                        break
                    take = min(j - i, _room(infos[-1], wants))
                    if not take:
                        break
                    put(group[i:i + take], nodes[-1].name)
                    i += take
                    continue
                pod = group[i]
                if last is not None and fits(pod, [last], state, profile) == last:
                    where = last
                else:
                    if not open_node(last):
                        break
                    where = nodes[-1].name
                    if fits(pod, [where], state, profile) is None:
                        break
                put([pod], where)
                i += 1
    finally:
        for pod, _ in reversed(added):
            state.remove(pod)
        for node in nodes:
            _drop_node(state, node.name)
        # the state is as before the estimation: so are the counts memoized then, valid from its version on
        _memo_restore(state, before, state.version)
    return [n for n in nodes if n.name in used], placed


def _waste(offer: Offer, count: int, pods: Sequence[Pod]) -> float:
    """The least-waste expander's score: unrequested fraction of the new nodes' cpu plus memory capacity."""
    cap = offer.type.capacity
    cpu, mem = cap.get("cpu", 0) * count, cap.get("memory", 0) * count
    want_cpu = sum(p.requests.get("cpu", 0) for p in pods)
    want_mem = sum(p.requests.get("memory", 0) for p in pods)
    wasted_cpu = (cpu - want_cpu) / cpu if cpu else 0.0
    wasted_mem = (mem - want_mem) / mem if mem else 0.0
    return wasted_cpu + wasted_mem


def estimate(cluster: Cluster, required: Sequence[Pod], offers: Sequence[Offer], profile: Profile,
             rooms: dict[str, int], seed: int = 0, deadline: float | None = None,
             interrupt: Interrupt = NEVER, fast: bool = True) -> Estimate:
    """cluster-autoscaler's loops (see the module docstring). `rooms`: type name -> new nodes it may still get.
    `deadline` (perf_counter seconds) or Ctrl-C stop it within a pod: kube-scheduler's pass keeps what it bound,
    the estimation under way is dropped, the expansions chosen so far are the answer and the pods left are
    `pending` (`stopped` says why). fast=False: the reference estimation, pod by pod (the tests' yardstick)."""
    from ..problem import pod_signature

    started = time.perf_counter()
    clock = _Clock(deadline, interrupt)
    first = simulate(cluster, seed, profile=profile, deadline=deadline, interrupt=interrupt, fit_errors=False)
    out = Estimate(placements=dict(first.placements))
    wanted = {p.key for p in required}
    state = ClusterState.from_cluster(cluster, [(p, p.node_name) for p in cluster.pods] +
                                      [(p, first.placements[p.key]) for p in cluster.pending
                                       if p.key in first.placements])
    left = [p for p in cluster.pending if p.key in wanted and p.key not in first.placements]
    sig_of = {p.key: pod_signature(p, frozenset(p.labels)) for p in left}
    name = _Namer({n.name for n in cluster.nodes})
    rooms = dict(rooms)
    try:
        clock.check()  # kube-scheduler's pass may have been the one stopped
        while left:
            given = probe_pre_filters(left, state, profile, sig_of) if fast else {}
            local = local_signatures(left, state, profile, given) if fast else {}
            options = []
            for offer in offers:
                room = rooms.get(offer.type.name, 0)
                if room <= 0:
                    continue
                if fast:
                    nodes, placed = _estimate_fast(state, offer, left, profile, room, name, clock, local, sig_of,
                                                   given)
                else:
                    nodes, placed = _estimate_reference(state, offer, left, profile, room, name, clock)
                if nodes and placed:
                    helped = [p for p in left if p.key in placed]
                    options.append((_waste(offer, len(nodes), helped), offer, nodes, placed))
            if not options:
                break
            best = min(options, key=lambda o: o[0])  # min keeps the first of equal scores
            _, offer, nodes, placed = best
            for node in nodes:
                _add_node(state, node)
            for pod in left:
                if pod.key in placed:
                    state.add(pod, placed[pod.key])
            out.add.append((offer, len(nodes)))
            out.nodes.extend(nodes)
            out.placements.update(placed)
            rooms[offer.type.name] -= len(nodes)
            left = [p for p in left if p.key not in placed]
            clock.check()
    except OutOfTime as stop:
        out.stopped = str(stop)
    why = "no node type's estimate placed it" if not out.stopped else \
        f"not placed: the estimator stopped ({out.stopped})"
    for p in left:
        out.pending[p.key] = why
    out.wall_seconds = time.perf_counter() - started
    return out
