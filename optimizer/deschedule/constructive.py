"""LowNodeUtilization's optimum, built and bounded directly (no CP-SAT on the whole cluster).

The goal "every node within targetThresholds" decomposes by node: requests only go down on a node by evicting
its own pods, and a pod landing on a node only adds to it. So every plan evicts at least, from each node above
its caps, the fewest of its evictable pods whose requests cover the node's excess in every resource
(`fewest_off`, an exact search over the node's pods grouped into identical classes): the sum over the nodes is
a lower bound on the evictions of any plan that meets the goal (`bound`).

The plan (`plan_low`): for each node above its caps (the most loaded first), such a fewest set, preferring
pods no PodDisruptionBudget guards and lower priority; each evicted pod's replacement is landed by
kube-scheduler itself (podplan's vectorized kube-scheduler on the state reached so far), with the nodes above
their caps and every node the replacement would push above its caps temporarily cordoned, as a rebalance wave
steers its replacements. A pod whose replacement finds no node within the caps is kept, and the node's set is
searched again without it. When every set is the fewest possible and every replacement lands, the plan's
evictions equal the bound: proven optimal.
"""
from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, replace

from ...models.objects import Pod
from ..rebalance.landing import Lander, controller_key
from ..rebalance.plan import Move
from ..state import ClusterState

MAX_STEERS = 40  # temporary cordons tried per replacement before it counts as landing nowhere within the caps
MAX_RETRIES = 12  # searches per node after replacements that found no node


def usage(state: ClusterState, node: str) -> dict[str, int]:
    info = state.nodes[node]
    return {"cpu": info.requested.get("cpu", 0), "memory": info.requested.get("memory", 0), "pods": len(info.pods)}


def amount(pod: Pod, resource: str) -> int:
    return 1 if resource == "pods" else pod.requests.get(resource, 0)


def excess(used: Mapping[str, int], cap: Mapping[str, int]) -> dict[str, int]:
    """resource -> how far `used` is above `cap` (only the resources above it)."""
    return {r: used.get(r, 0) - c for r, c in cap.items() if used.get(r, 0) > c}


def fewest_off(pods: Sequence[Pod], need: Mapping[str, int]) -> list[Pod] | None:
    """The fewest of `pods` whose requests together reach `need` in every resource (None: not even all of
    them). Exact: pods with the same requests form one class, and the counts taken of each class are searched
    size by size from the largest-first lower bound. Among sets of that size the first in the order of `pods`
    (the caller's preference) wins: classes are tried in the order of their first pod, and a class's first pods
    are taken."""
    need = {r: v for r, v in need.items() if v > 0}
    if not need:
        return []
    classes: dict[tuple[int, ...], list[Pod]] = {}
    res = sorted(need)
    for p in pods:
        classes.setdefault(tuple(amount(p, r) for r in res), []).append(p)
    keys = list(classes)
    if any(sum(k[i] * len(classes[k]) for k in keys) < need[r] for i, r in enumerate(res)):
        return None
    counts = [len(classes[k]) for k in keys]

    def most_with(i_res: int, picks: int, start: int) -> int:
        """The most of resource i_res `picks` pods of the classes from `start` on can give."""
        sizes = sorted(((keys[c][i_res], counts[c]) for c in range(start, len(keys))), reverse=True)
        total = 0
        for size, n in sizes:
            take = min(n, picks)
            total += take * size
            picks -= take
            if not picks:
                break
        return total

    lower = max(_largest_first(sorted((k[i] for k in keys for _ in range(len(classes[k]))), reverse=True), need[r])
                for i, r in enumerate(res))
    for size in range(lower, len(pods) + 1):
        chosen = [0] * len(keys)

        def search(c: int, left: int, still: list[int]) -> bool:
            if all(v <= 0 for v in still):
                return True
            if left == 0 or c == len(keys):
                return False
            if any(v > 0 and most_with(i, left, c) < v for i, v in enumerate(still)):
                return False
            for take in range(min(counts[c], left), -1, -1):
                chosen[c] = take
                if search(c + 1, left - take, [v - take * keys[c][i] for i, v in enumerate(still)]):
                    return True
            chosen[c] = 0
            return False

        if search(0, size, [need[r] for r in res]):
            out = [p for c, k in enumerate(keys) for p in classes[k][:chosen[c]]]
            order = {p.key: i for i, p in enumerate(pods)}
            return sorted(out, key=lambda p: order[p.key])
    return None


def _largest_first(sizes: Sequence[int], need: int) -> int:
    total = 0
    for i, s in enumerate(sizes):
        if total >= need:
            return i
        total += s
    return len(sizes) if total >= need else len(sizes) + 1


@dataclass(frozen=True)
class LowPlan:
    assignment: dict[str, str]  # evicted pod -> the node kube-scheduler lands its replacement on
    bound: int  # the fewest evictions any plan meeting the goal on the nodes it can meet makes
    outside_bound: int  # nodes no plan brings within the caps (their evictable pods cannot cover the excess)
    outside: tuple[str, ...]  # nodes this plan leaves above the caps
    why: dict[str, str]  # node left above -> why
    steps: tuple[tuple[Pod, str, tuple[str, ...]], ...] = ()  # (pod, node, cordons it landed under), in order
    hopeless: tuple[str, ...] = ()  # the nodes no plan brings within the caps (outside_bound of them)


def bound(state: ClusterState, caps: Mapping[str, Mapping[str, int]], movable: Mapping[str, list[Pod]],
          stuck: Collection[str] = ()) -> tuple[int, list[str]]:
    """(the fewest evictions that bring every node that can be brought within its caps, the nodes that cannot
    be: their movable pods together do not cover the excess). `stuck`: pods whose replacement can land on no
    other node in any plan (unfixable.stuck_pods): they cannot bring their node down."""
    total, hopeless = 0, []
    for name, cap in caps.items():
        if name not in state.nodes:
            continue
        over = excess(usage(state, name), cap)
        if not over:
            continue
        few = fewest_off([p for p in movable.get(name, []) if p.key not in stuck], over)
        if few is None:
            hopeless.append(name)
        else:
            total += len(few)
    return total, hopeless


def plan_low(state: ClusterState, lander: Lander, caps: Mapping[str, Mapping[str, int]],
             movable: Mapping[str, list[Pod]], order_key, eviction_key, stop=lambda: False,
             may_land=lambda pod, node: True, steers=lambda pod: MAX_STEERS, stuck: Collection[str] = (),
             ) -> LowPlan:
    """The plan of the module docstring, on `state` (changed in place: the end state; `lander` follows it).
    `movable`: node -> the pods that may be evicted from it; `order_key`: the preference among a node's pods
    (smaller first); `eviction_key`: the order replacements are scheduled in; `stop()`: time is up;
    `may_land(pod, node)`: whether the plan lets the pod's replacement end on the node (beside its caps: a
    cache its followers' required affinity needs stays in their zone); `steers(pod)`: the temporary cordons its
    landing may try; `stuck`: pods no plan can move off their node (left out of the bound and of the plan)."""
    movable = {n: [p for p in ps if p.key not in stuck] for n, ps in movable.items()}
    low_bound, hopeless = bound(state, caps, movable)
    over = [n for n, cap in caps.items() if n in state.nodes and excess(usage(state, n), cap)]
    over.sort(key=lambda n: (-max(usage(state, n)[r] / max(1, c) for r, c in caps[n].items()), n))
    assignment: dict[str, str] = {}
    why: dict[str, str] = {}
    steps: list[tuple[Pod, str, tuple[str, ...]]] = []

    def fits(node: str, pod: Pod) -> bool:
        if not may_land(pod, node):
            return False
        cap = caps.get(node)
        if not cap:
            return True
        used = usage(state, node)
        return all(used.get(r, 0) + amount(pod, r) <= c for r, c in cap.items())

    def still_over() -> set[str]:
        return {n for n in over if excess(usage(state, n), caps[n])}

    for name in over:
        if name != over[0] and stop():  # the most loaded node is always planned
            why[name] = "the time limit ran out before it was planned"
            continue
        kept: set[str] = set()
        for _ in range(MAX_RETRIES + 1):
            pods = sorted((p for p in movable.get(name, []) if p.key not in kept), key=order_key)
            chosen = fewest_off(pods, excess(usage(state, name), caps[name]))
            if chosen is None:
                why[name] = ("its evictable pods' requests do not cover its excess over targetThresholds"
                             if not kept else f"no other node takes {', '.join(sorted(kept)[:5])} within the "
                             "thresholds, and its other evictable pods do not cover the excess")
                break
            done: list[tuple[Pod, Pod, str]] = []
            failed = None
            for pod in sorted(chosen, key=eviction_key):
                to, cordons = _land(state, lander, pod, fits, still_over() | {name}, steers(pod))
                if not to:
                    failed = pod
                    break
                state.remove(pod)
                new = replace(pod, node_name="")
                state.add(new, to)
                done.append((pod, new, to))
                steps.append((pod, to, cordons))
            if failed is None:
                for pod, _, to in done:
                    assignment[pod.key] = to
                break
            del steps[len(steps) - len(done):]
            for pod, new, _ in reversed(done):
                state.remove(new)
                state.add(pod, name)
            # the failed pod's siblings (same controller, same requests) on this node land no better: a
            # replacement is a new pod of the controller, scheduled on the same state (seed 2 of the 500-node
            # benchmark: 7 of one Deployment's pods on a node, each kept in turn, used up every retry)
            kept |= {p.key for p in movable.get(name, []) if _siblings(p, failed)}
        else:
            why[name] = "the replacements of its pods found no node within the thresholds"
    outside = tuple(sorted(n for n in over if excess(usage(state, n), caps[n])))
    return LowPlan(assignment, low_bound, len(hopeless), outside, why, tuple(steps), tuple(sorted(hopeless)))


def _siblings(a: Pod, b: Pod) -> bool:
    return a.key == b.key or (a.controller is not None and controller_key(a) == controller_key(b)
                              and a.requests == b.requests and a.priority == b.priority)


def _land(state: ClusterState, lander: Lander, pod: Pod, fits, cordoned: set[str], steers: int = MAX_STEERS,
          ) -> tuple[str, tuple[str, ...]]:
    """Where kube-scheduler binds `pod`'s replacement with `cordoned` unschedulable, cordoning as well each node
    it picks that the replacement would push above its caps, and the cordons ("" when none within the caps is
    found)."""
    cordons = set(cordoned)
    for _ in range(steers):
        to = lander.simulate([Move(pod, pod.node_name, "")], sorted(cordons))[0]
        if not to:
            return "", ()
        if to not in cordoned and fits(to, pod):
            return to, tuple(sorted(cordons))
        cordons.add(to)
    return "", ()


def undo(state: ClusterState, pods: Sequence[Pod], assignment: Mapping[str, str]) -> None:
    """plan_low's evictions taken back: each pod's replacement removed, the pod bound where it ran."""
    for pod in pods:
        info = state.nodes[assignment[pod.key]]
        state.remove(info.pods[pod.key])
        state.add(pod, pod.node_name)
