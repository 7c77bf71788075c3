"""What removing a node saves: its type's price from a node-types file, else 1 (the answer then counts nodes).

A node's type is its `node.kubernetes.io/instance-type` label (the node-types file names its types the same
way). Prices are kept exact to PRICE_SCALE-ths for the CP-SAT objective (integers)."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...models.objects import Cluster

from .plan import ConsolidateError

INSTANCE_TYPE = "node.kubernetes.io/instance-type"
PRICE_SCALE = 10_000  # 0.192 per hour -> 1920: CP-SAT's objective is integral
COUNT = "node"  # the unit when no node-types file is given: every node saves 1


def node_prices(cluster: Cluster, node_types: Any | None = None) -> tuple[dict[str, float], str]:
    """node -> what removing it saves, and the unit. `node_types`: None (every node 1), or an object with
    `types` whose items have `name` and `price` (models.nodetypes)."""
    if node_types is None:
        return {n.name: 1.0 for n in cluster.nodes}, COUNT
    by_name = {t.name: float(t.price) for t in node_types.types}
    out: dict[str, float] = {}
    missing: list[str] = []
    for n in cluster.nodes:
        kind = n.labels.get(INSTANCE_TYPE, "")
        if kind in by_name:
            out[n.name] = by_name[kind]
        else:
            missing.append(f"{n.name} ({INSTANCE_TYPE}={kind or 'unset'})")
    if missing:
        raise ConsolidateError(f"the node-types file prices no type of node(s) {', '.join(missing[:5])}"
                               f"{' and more' if len(missing) > 5 else ''}: add their types to it")
    return out, "price"


def scaled(prices: Mapping[str, float]) -> dict[str, int]:
    return {n: int(round(p * PRICE_SCALE)) for n, p in prices.items()}
