"""Removing nodes one at a time, each node's pods re-placed by kube-scheduler on the nodes that stay: the
simulation behind cluster-autoscaler's scale-down (`scale_down`), and podplan's greedy start for the optimum
(`greedy_removal`: the same loop without the utilisation threshold, cheapest-to-empty nodes first).

cluster-autoscaler (kubernetes/autoscaler, cluster-autoscaler/):
- core/scaledown/eligibility/eligibility.go: a node is a scale-down candidate when its utilisation is below
  --scale-down-utilization-threshold (default 0.5); simulator/utilization/info.go: utilisation = max(cpu,
  memory) of the sum of the requests of its pods (DaemonSet and mirror pods included by default) over
  allocatable;
- simulator/cluster.go (RemovalSimulator.SimulateNodeRemoval, findPlaceFor): the node's pods that must move
  (GetPodsToMove: DaemonSet and mirror pods do not; a pod that cannot move blocks the node) are scheduled onto
  the other nodes with the scheduler's filters, the removed node left in the snapshot as a tainted ghost (it
  still counts as a topology domain); successful simulations persist, so the next candidate sees them;
- core/scaledown/planner + actuation: empty nodes go in bulk, nodes needing a drain one at a time
  (--max-drain-parallelism 1, --max-scale-down-parallelism 10); each loop re-plans on the new state.
podplan runs that loop to its fixed point: in node order, each candidate under the threshold whose pods all pass
the filters on some node that stays (first fit, from where the last search stopped, as CA's snapshot search)
is removed, its pods where the simulation put them. Blocking pods are CA's: no controller,
local storage, a PDB allowing 0 disruptions, a kube-system pod no PDB covers (--skip-nodes-with-system-pods),
the annotation cluster-autoscaler.kubernetes.io/safe-to-evict: "false".
"""
from __future__ import annotations

import time

import numpy as np
from collections.abc import Callable, Collection, Mapping
from dataclasses import replace

from ...models.objects import Cluster, Pod

from ..disruption import guarding
from ..rebalance.landing import Lander
from ..rebalance.movable import goes_with_node
from ..rebalance.plan import Move
from ..rebalance.states import state_of
from ..state import ClusterState
from .plan import ScaleDown

SAFE_TO_EVICT = "cluster-autoscaler.kubernetes.io/safe-to-evict"
R_ABOVE = "utilisation {u:.0%} is not below the threshold {t:.0%}"
R_BLOCKED = "{pod} cannot move"
R_NO_ROOM = "{pod} fits on no other node"


def utilization(state: ClusterState, name: str) -> float:
    """cluster-autoscaler's: max over cpu and memory of requested / allocatable (every pod counted)."""
    info = state.nodes[name]
    out = 0.0
    for r in ("cpu", "memory"):
        alloc = info.node.allocatable.get(r, 0)
        if alloc <= 0:
            return float("inf")  # CA cannot compute it: the node is not a candidate
        out = max(out, info.requested.get(r, 0) / alloc)
    return out


def ca_blocks(cluster: Cluster, pod: Pod) -> bool:
    """cluster-autoscaler's own blockers on top of the pods that cannot move at all."""
    if pod.annotations.get(SAFE_TO_EVICT) == "false":
        return True
    if pod.namespace == "kube-system" and not goes_with_node(pod):
        return not guarding([b for b in cluster.pdbs if b.namespace == "kube-system"], pod)
    return False


class Drainer:
    """A state of the cluster in which nodes are removed one at a time (see the module docstring)."""

    def __init__(self, cluster: Cluster, free: Collection[str], seed: int, profile) -> None:
        self.cluster = cluster
        self.free = set(free)
        self.state = state_of(cluster, {})
        self.lander = Lander(self.state, seed, profile)
        self.removed: list[str] = []
        self.where: dict[str, str] = {}
        self.next = 0  # where the next first-fit search starts (CA's snapshot iteration resumes there)

    def movers(self, name: str, blocks: Callable[[Pod], bool]) -> list[Pod] | str:
        """The pods that must leave `name`, or the key of one that cannot."""
        out = []
        for p in self.state.nodes[name].pods.values():
            if goes_with_node(p):
                continue
            if p.key not in self.free or blocks(p):
                return p.key
            out.append(p)
        return out

    def try_remove(self, name: str, pods: list[Pod]) -> str:
        """Remove `name` when each of `pods` (higher priority first) passes the filters on some other node that
        stays, first fit from where the last search stopped (cluster-autoscaler's FitsAnyNodeMatching, hinting
        aside); "" then, else the pod that fits nowhere (and nothing changes)."""
        if self.lander.sched is None:  # a profile without vectorized filters: kube-scheduler's own cycle
            return self._try_remove_plain(name, pods)
        index = self.lander.index
        names = list(index)
        closed = np.zeros(len(names), bool)
        for n in self.removed + [name]:
            closed[index[n]] = True
        placed: list[tuple[Pod, Pod, str]] = []
        for p in sorted(pods, key=lambda p: (-p.priority, p.order)):
            self.state.remove(p)
            new = replace(p, node_name="")
            ok = self.lander.sched.feasible(new) & ~closed
            hits = np.flatnonzero(np.roll(ok, -self.next))
            if not len(hits):
                self.state.add(p, name)
                for old, added, _ in reversed(placed):
                    self.state.remove(added)
                    self.state.add(old, name)
                return p.key
            at = (int(hits[0]) + self.next) % len(names)
            self.next = at
            self.state.add(new, names[at])
            placed.append((p, new, names[at]))
        for old, _, node in placed:
            self.where[old.key] = node
        self.removed.append(name)
        return ""

    def _try_remove_plain(self, name: str, pods: list[Pod]) -> str:
        moves = [Move(p, name, "") for p in sorted(pods, key=lambda p: (-p.priority, p.order))]
        landed = self.lander.simulate(moves, tuple(self.removed) + (name,)) if moves else []
        for m, node in zip(moves, landed):
            if not node:
                return m.key
        for m, node in zip(moves, landed):
            self.state.remove(m.pod)
            self.state.add(replace(m.pod, node_name=""), node)
            self.where[m.key] = node
        self.removed.append(name)
        return ""


def scale_down(cluster: Cluster, free: Collection[str], prices: Mapping[str, float], seed: int, profile,
               threshold: float, deadline: float | None = None,
               stop: Callable[[], bool] = lambda: False, drainer: "Drainer | None" = None) -> ScaleDown:
    """cluster-autoscaler's scale-down loop to its fixed point (module docstring). One pass over the nodes finds
    it: the simulation persists each removal (the next candidate sees it), and a removal only takes room away
    and adds load, so a node refused once stays refused; CA deletes that set over successive loops, empty nodes
    in bulk and one node needing a drain at a time. `drainer`: one built beforehand (its state is changed)."""
    d = drainer or Drainer(cluster, free, seed, profile)
    kept: dict[str, str] = {}
    blocks = lambda p: ca_blocks(cluster, p)  # noqa: E731
    complete = True
    for n in cluster.nodes:
        name = n.name
        if (deadline is not None and time.perf_counter() >= deadline) or stop():
            complete = False
            break
        u = utilization(d.state, name)
        if u >= threshold:
            kept[name] = R_ABOVE.format(u=u, t=threshold) if u != float("inf") else "no cpu/memory allocatable"
            continue
        pods = d.movers(name, blocks)
        if isinstance(pods, str):
            kept[name] = R_BLOCKED.format(pod=pods)
            continue
        stuck = d.try_remove(name, pods)
        if stuck:
            kept[name] = R_NO_ROOM.format(pod=stuck)
    return ScaleDown(tuple(d.removed), sum(prices[n] for n in d.removed), dict(d.where), dict(kept), complete)


def greedy_removal(cluster: Cluster, free: Collection[str], prices: Mapping[str, float], seed: int, profile,
                   pinned: Collection[str], deadline: float | None = None,
                   stop: Callable[[], bool] = lambda: False,
                   drainer: "Drainer | None" = None) -> tuple[list[str], dict[str, str]]:
    """podplan's start: every node that is not pinned, the ones saving most per pod to move first, removed
    when its pods pass the filters on the others (first fit). (removed nodes, moved pod -> node)."""
    d = drainer or Drainer(cluster, free, seed, profile)
    order = sorted((n.name for n in cluster.nodes if n.name not in pinned),
                   key=lambda n: (-prices[n] / (1 + sum(1 for p in d.state.nodes[n].pods.values()
                                                        if not goes_with_node(p))), utilization(d.state, n), n))
    for name in order:
        if (deadline is not None and time.perf_counter() >= deadline) or stop():
            break
        pods = d.movers(name, lambda p: False)
        if isinstance(pods, str):
            continue
        d.try_remove(name, pods)
    return d.removed, d.where
