"""The states of a rebalance: the cluster with some pods elsewhere (the target, the state after a wave), and
what the verifier says about them. A moved pod is its replacement: a new pod of its controller, spec.nodeName
cleared, judged as placed; the pods not moved yet are existing pods."""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace

from ...models.errors import PlanInvalidError
from ...models.objects import Cluster, Node

from ..framework import Profile
from ..registry import DEFAULT_PROFILE
from ..state import ClusterState
from ..verify import Report, judge_all, verify
from .movable import as_pending
from .plan import RebalancePlan

def state_of(cluster: Cluster, where: Mapping[str, str], moved: Iterable[str] = (),
             nodes: Sequence[Node] | None = None) -> ClusterState:
    """A state with every pod of `cluster` on `where[key]` (default its own node); `moved` pods are replacements
    (spec.nodeName cleared, as a new pod of the controller). `nodes` replaces the Node objects (cordons)."""
    moved = set(moved)
    pods = [(replace(p, node_name="") if p.key in moved else p, where.get(p.key, p.node_name)) for p in cluster.pods]
    c = cluster if nodes is None else replace(cluster, nodes=tuple(nodes))
    return ClusterState.from_cluster(c, pods)



def violations_by_pod(state: ClusterState, profile: Profile = DEFAULT_PROFILE) -> dict[str, set[str]]:
    """pod key -> plugins that reject it on its node (judged with itself removed), for pods with any.
    judge_all: the verifier's grouped counts (judge pod by pod is O(pods²): 4.4 s per call at 200 nodes and 3,091
    pods already; judge_all takes 0.9-1.8 s at 1,000 nodes and 15,449 pods)."""
    return {key: {r.plugin for r in reasons} for key, reasons in judge_all(state, profile=profile).items() if reasons}


def state_report(cluster: Cluster, where: Mapping[str, str], moved: Iterable[str],
                 profile: Profile = DEFAULT_PROFILE) -> Report:
    """The verifier on a state of the rebalance: pods not moved are existing, replacements are placed."""
    moved = set(moved)
    pods = [p for p in cluster.pods if p.key in moved]
    unbound, _ = as_pending(replace(cluster, pending=()), pods)
    return verify(unbound, {k: where[k] for k in moved}, None, profile)


def verify_final(cluster: Cluster, plan: RebalancePlan, profile: Profile = DEFAULT_PROFILE) -> None:
    """The gate before anything is printed: the plan's final state passes the verifier (else it is a bug)."""
    moved = {m.key for w in plan.waves for m in w.moves}
    report = state_report(cluster, plan.final, moved, profile)
    if not report.ok:
        bad = [v for v in report.violations if not v.preexisting]
        raise PlanInvalidError(f"the rebalance plan's final state failed verification: {len(bad)} violation(s), "
                               f"first: {bad[0].pod} on {bad[0].node}: {bad[0].plugin}: {bad[0].reason}")
