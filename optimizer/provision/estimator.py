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

from ...models.nodetypes import NodeType, new_node
from ...models.objects import Cluster, Node, Pod
from ..framework import Profile
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


def fits(pod: Pod, names: Sequence[str], state: ClusterState, profile: Profile) -> str | None:
    """The first of `names` where every Filter passes for `pod` (each PreFilter run once), or None."""
    pres = []
    for plugin in profile.filters:
        if plugin.pre_filter_skip is not None and plugin.pre_filter_skip(pod, state):
            continue
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
    def __init__(self, taken: set[str]) -> None:
        self.taken = set(taken)

    def __call__(self, offer: Offer, prefix: str = "") -> str:
        from ...models.nodetypes import node_name_part

        base = f"{prefix}{node_name_part(offer.type.name)}" + (f"-{node_name_part(offer.zone)}" if offer.zone else "")
        i = 1
        while f"{base}-{i}" in self.taken:
            i += 1
        self.taken.add(f"{base}-{i}")
        return f"{base}-{i}"


def _estimate(state: ClusterState, offer: Offer, pods: Sequence[Pod], profile: Profile, room: int, name: _Namer
              ) -> tuple[list[Node], dict[str, str]]:
    """The binpacking estimator for one node group; the state is left as it was."""
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
                where = fits(group[i], [n.name for n in nodes], state, profile) if nodes else None
                if where is None:
                    break
                state.add(group[i], where)
                added.append((group[i], where))
                placed[group[i].key] = where
                used.add(where)
                i += 1
            for pod in group[i:]:
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
             interrupt: Interrupt = NEVER) -> Estimate:
    """cluster-autoscaler's loops (see the module docstring). `rooms`: type name -> new nodes it may still get."""
    started = time.perf_counter()
    first = simulate(cluster, seed, profile=profile)
    out = Estimate(placements=dict(first.placements))
    wanted = {p.key for p in required}
    state = ClusterState.from_cluster(cluster, [(p, p.node_name) for p in cluster.pods] +
                                      [(p, first.placements[p.key]) for p in cluster.pending
                                       if p.key in first.placements])
    left = [p for p in cluster.pending if p.key in wanted and p.key not in first.placements]
    name = _Namer({n.name for n in cluster.nodes})
    rooms = dict(rooms)
    while left:
        if interrupt.is_set() or deadline is not None and time.perf_counter() > deadline:
            out.stopped = "interrupted" if interrupt.is_set() else "out of time"
            break
        options = []
        for offer in offers:
            room = rooms.get(offer.type.name, 0)
            if room <= 0:
                continue
            nodes, placed = _estimate(state, offer, left, profile, room, name)
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
    for p in left:
        out.pending[p.key] = "no node type's estimate placed it"
    out.wall_seconds = time.perf_counter() - started
    return out
