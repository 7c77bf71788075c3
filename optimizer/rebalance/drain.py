"""Pods a drain leaves behind, and what would let their node empty: --max-moves was reached, or no other node
takes them while the drained nodes are out (then: add an earlier-drained node back after its maintenance, or
add a node)."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from ...models.objects import Cluster, Pod

from ..verify import judge
from .plan import Blocked, RebalanceParams, Target
from .states import state_of

R_NO_ROOM = "no other node can take it while {drained} {verb} drained: {node} cannot be emptied"
R_ADD_BACK = "; when the waves are done, add {back} back (after its maintenance: it can take the pod), then drain {node}"
R_ADD_NODE = "; add a node (or capacity) that can take it, then drain {node}"
R_CAPPED = "--max-moves {n} is reached: it stays on {node}, which is not emptied"


def left_on_drained(cluster: Cluster, free: Sequence[Pod], target: Target, params: RebalanceParams) -> list[Blocked]:
    """A blocked entry per free pod the target leaves on a drained node, saying what would let it leave."""
    blocked: list[Blocked] = []
    final_target = {p.key: p.node_name for p in cluster.pods}
    final_target.update(target.assignment)
    capped = params.max_moves is not None and dict((n, v) for n, v, _ in target.levels).get("moves") == \
        params.max_moves
    for i, d in enumerate(params.drain):
        left = [p for p in free if target.assignment.get(p.key) == d]
        for p in left:
            if capped:
                blocked.append(Blocked(p.key, R_CAPPED.format(n=params.max_moves, node=d)))
                continue
            text, verb = _drain_phrase(params.drain)
            reason = R_NO_ROOM.format(drained=text, verb=verb, node=d)
            back = _fits_back(cluster, final_target,
                              {q.key for q in free if target.assignment.get(q.key) != q.node_name}, p, params.drain[:i])
            reason += R_ADD_BACK.format(back=back, node=d) if back else R_ADD_NODE.format(node=d)
            blocked.append(Blocked(p.key, reason))
    return blocked


def _drain_phrase(nodes: Sequence[str]) -> tuple[str, str]:
    return ", ".join(nodes), "is" if len(nodes) == 1 else "are"


def _fits_back(cluster: Cluster, where: Mapping[str, str], moved: set[str], pod: Pod,
               earlier: Sequence[str]) -> str:
    """The first earlier-drained node that, added back, takes `pod` in the target state ("" if none)."""
    if not earlier:
        return ""
    state = state_of(cluster, where, moved)
    new = replace(pod, node_name="")
    state.remove(state.nodes[where[pod.key]].pods[pod.key])
    for d in earlier:
        state.add(new, d)
        ok = not judge(new, d, state)
        state.remove(new)
        if ok:
            return d
    return ""
