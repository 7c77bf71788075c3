"""What removing a node saves: its type's price from a node-types file, else 1 (the answer then counts nodes).

A node's type is its `node.kubernetes.io/instance-type` label (the node-types file names its types the same
way). Prices are kept exact to PRICE_SCALE-ths for the CP-SAT objective (integers)."""
from __future__ import annotations

from collections.abc import Mapping
from ...models.nodetypes import NodeTypes, match_nodes
from ...models.objects import Cluster

from .plan import ConsolidateError

INSTANCE_TYPE = "node.kubernetes.io/instance-type"
PRICE_SCALE = 10_000  # 0.192 per hour -> 1920: CP-SAT's objective is integral
COUNT = "node"  # the unit when no node-types file is given: every node saves 1
PRICE = "price"  # the node-types file's prices (per hour in the bundled file)


def node_prices(cluster: Cluster, node_types: NodeTypes | None = None) -> tuple[dict[str, float], str]:
    """node -> what removing it saves, and the unit: "node" without a node-types file (every node 1), else
    "price" with each node at its type's price (models.nodetypes.match_nodes: its instance-type label, else
    the type whose template describes it). A node no type describes is an error (one line, exit 2)."""
    if node_types is None:
        return {n.name: 1.0 for n in cluster.nodes}, COUNT
    matched = match_nodes(cluster.nodes, node_types)
    missing = [n.name for n in cluster.nodes if matched[n.name].price is None]
    if missing:
        raise ConsolidateError(f"{node_types.source}: no node type describes node(s) {', '.join(missing[:5])}"
                               f"{' and more' if len(missing) > 5 else ''} (by {INSTANCE_TYPE}, else labels, "
                               "taints and allocatable): add their types to the file")
    return {n.name: float(matched[n.name].price or 0.0) for n in cluster.nodes}, PRICE


def scaled(prices: Mapping[str, float]) -> dict[str, int]:
    return {n: int(round(p * PRICE_SCALE)) for n, p in prices.items()}
