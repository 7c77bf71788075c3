"""Node types: what a new node can look like, and what each node costs.

A `NodeTypes` document (apiVersion podplan.io/v1alpha1) lists the node shapes a cluster can grow by, each with a
price per node, an optional node count cap (`max`), the zones it is offered in and resource `limits` stated as
Karpenter's NodePool states them (a ResourceList: `cpu: "1000"`, `memory: 1000Gi`). `provision` chooses the
cheapest new nodes among them; `consolidate` reads the price of each existing node from them.

    apiVersion: podplan.io/v1alpha1
    kind: NodeTypes
    limits: {cpu: "400"}              # optional: all new nodes together
    types:
    - name: m5.xlarge
      price: 0.192                    # per node; default 1
      max: 20                         # optional: at most this many new nodes of this type
      zones: [us-east-1a, us-east-1b] # optional: else the template's zone label, if any
      limits: {memory: 320Gi}         # optional: this type's new nodes together
      node:
        metadata: {labels: {node.kubernetes.io/instance-type: m5.xlarge}}
        spec: {taints: []}
        status: {allocatable: {cpu: "4", memory: 16Gi, pods: "110"}}

Without a file, every existing instance type is a type at price 1 (see default_node_types). No solver imports.
"""
from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .errors import InputError, Where, describe_value, quote
from .objects import Cluster, Node, Resources
from .parse import Ctx, Doc, _labels, _list, _map, _resources, _str, parse_node
from .quantity import format_resource
from .taints import Taint

API_VERSION = "podplan.io/v1alpha1"
KIND = "NodeTypes"
INSTANCE_TYPE_LABEL = "node.kubernetes.io/instance-type"
ZONE_LABEL = "topology.kubernetes.io/zone"
HOSTNAME_LABEL = "kubernetes.io/hostname"
DEFAULT_PRICE = 1.0
# A template that states no pod count gets the kubelet's default maxPods: with none, NodeResourcesFit would
# reject every pod ("Too many pods"), which is never what a user writing {cpu, memory} means.
DEFAULT_PODS = 110

_DOC_FIELDS = ("apiVersion", "kind", "metadata", "types", "limits")
_TYPE_FIELDS = ("name", "price", "max", "zones", "limits", "node")
_TEMPLATE_FIELDS = ("apiVersion", "kind", "metadata", "spec", "status")


@dataclass(frozen=True)
class NodeType:
    """One node shape: `node` is the template (named after the type, no hostname label), `capacity` what limits
    count (status.capacity, else allocatable, as Karpenter counts a node's capacity against its NodePool's limits)."""

    name: str
    price: float
    node: Node
    max: int | None = None
    zones: tuple[str, ...] = ()  # empty: no zone label (or the template's own, kept as is)
    limits: Resources = field(default_factory=dict)
    capacity: Resources = field(default_factory=dict)
    where: Where = field(default_factory=Where, compare=False, repr=False)

    @property
    def allocatable(self) -> Resources:
        return self.node.allocatable


@dataclass(frozen=True)
class NodeTypes:
    types: tuple[NodeType, ...]
    limits: Resources = field(default_factory=dict)  # over every new node together
    source: str = "<default>"  # the file, or "<default>" when made from the cluster's nodes

    def by_name(self, name: str) -> NodeType:
        return next(t for t in self.types if t.name == name)


@dataclass(frozen=True)
class NodeMatch:
    """An existing node's type and price; type None when no type describes it (price None then)."""

    node: str
    type: str | None
    price: float | None

    def price_or(self, default: float) -> float:
        return default if self.price is None else self.price


# ------------------------------------------------------------------------------------------------- parsing


def _fail(where: Where, path: str, message: str) -> InputError:
    return InputError(where, path, message)


def _known(where: Where, raw: Mapping[str, Any], path: str, known: Sequence[str]) -> None:
    """Our own format: an unknown key is an error, never a warning (a misspelt `prcie` would price a type at 1)."""
    for key in raw:
        if key not in known:
            at = ".".join(p for p in (path, str(key)) if p)
            raise _fail(where, at, f"unknown field (expected one of {', '.join(known)})")


def _price(where: Where, value: Any, path: str) -> float:
    if value is None:
        return DEFAULT_PRICE
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _fail(where, path, f"expected a number, got {describe_value(value)}")
    if not math.isfinite(value) or value < 0:
        raise _fail(where, path, f"must be a number of 0 or more, got {value}")
    return float(value)


def _count(where: Where, value: Any, path: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise _fail(where, path, f"expected an integer, got {describe_value(value)}")
    if value < 0:
        raise _fail(where, path, f"must be 0 or more, got {value}")
    return value


def _limits(ctx: Ctx, value: Any, path: str) -> Resources:
    return _resources(ctx, value, path)


def node_name_part(text: str) -> str:
    """A type name as a piece of a node name (DNS-1123 subdomain): Azure's `Standard_D4s_v3` is a valid type name
    but not a valid node name."""
    out = re.sub(r"[^a-z0-9.-]+", "-", text.lower()).strip("-.")
    return out or "node"


def _parse_type(raw: Any, index: int, doc: Doc, seen: dict[str, int]) -> NodeType:
    path = f"types[{index}]"
    where = Where(doc.file, doc.index, KIND)
    if not isinstance(raw, Mapping):
        raise _fail(where, path, f"expected a mapping with name, price and node, got {describe_value(raw)}")
    name = raw.get("name")
    if not isinstance(name, str) or not name:
        raise _fail(where, f"{path}.name", "is required" if name in (None, "")
                    else f"expected a string, got {describe_value(name)}")
    where = Where(doc.file, doc.index, "NodeType", "", name)
    if name in seen:
        raise _fail(where, f"{path}.name", f"type {quote(name)} is defined twice (first at types[{seen[name]}])")
    seen[name] = index
    _known(where, raw, path, _TYPE_FIELDS)
    ctx = Ctx(where, path)
    template = raw.get("node")
    if template is None:
        raise _fail(where, f"{path}.node", "is required (what a new node of this type looks like)")
    if not isinstance(template, Mapping):
        raise _fail(where, f"{path}.node", f"expected a mapping, got {describe_value(template)}")
    _known(where, template, f"{path}.node", _TEMPLATE_FIELDS)
    status = _map(ctx, template.get("status"), "node.status")
    alloc_key = "allocatable" if status.get("allocatable") is not None else "capacity"
    if not _map(ctx, status.get(alloc_key), f"node.status.{alloc_key}"):
        raise _fail(where, f"{path}.node.status.allocatable", "is required (the resources a new node offers pods)")
    meta = dict(_map(ctx, template.get("metadata"), "node.metadata"))
    # The name and hostname are podplan's: each new node gets its own.
    meta["name"] = node_name_part(name)
    labels = dict(_labels(ctx, meta.get("labels"), "node.metadata.labels"))
    labels.pop(HOSTNAME_LABEL, None)
    meta["labels"] = labels
    body = {**template, "kind": "Node", "metadata": meta}
    node = parse_node(Ctx(Where(doc.file, doc.index, "NodeType", "", name), f"{path}.node"), body)
    alloc = dict(node.allocatable)
    alloc.setdefault("pods", DEFAULT_PODS)
    capacity = _resources(ctx, status.get("capacity"), "node.status.capacity") or alloc
    zones_raw = _list(ctx, raw.get("zones"), "zones")
    zones = tuple(_str(ctx, z, f"zones[{i}]") for i, z in enumerate(zones_raw))
    for i, z in enumerate(zones):
        if not z:
            raise _fail(where, f"{path}.zones[{i}]", "must not be empty")
        if z in zones[:i]:
            raise _fail(where, f"{path}.zones[{i}]", f"zone {quote(z)} is listed twice")
    if not zones and labels.get(ZONE_LABEL):
        zones = (labels[ZONE_LABEL],)
    labels.pop(ZONE_LABEL, None)  # a new node gets its zone from `zones`
    node = Node(name=node.name, labels=labels, taints=node.taints, unschedulable=node.unschedulable,
                allocatable=alloc, where=node.where, raw=body)
    return NodeType(name=name, price=_price(where, raw.get("price"), f"{path}.price"), node=node,
                    max=_count(where, raw.get("max"), f"{path}.max"), zones=zones,
                    limits=_limits(ctx, raw.get("limits"), "limits"), capacity=capacity, where=where)


def parse_node_types(docs: Iterable[Doc]) -> NodeTypes:
    """NodeTypes documents (one or several, merged in order) as NodeTypes; InputError names file, object, field."""
    types: list[NodeType] = []
    limits: Resources = {}
    seen: dict[str, int] = {}
    source = ""
    for doc in docs:
        body = doc.body
        if body is None:
            continue
        where = Where(doc.file, doc.index)
        source = source or doc.file
        if not isinstance(body, Mapping):
            raise _fail(where, "", f"expected a NodeTypes mapping, got {describe_value(body)}")
        kind = body.get("kind")
        if kind != KIND:
            raise _fail(Where(doc.file, doc.index, kind if isinstance(kind, str) else ""), "kind",
                        f"expected {KIND}, got {describe_value(kind)}")
        where = Where(doc.file, doc.index, KIND)
        if body.get("apiVersion") != API_VERSION:
            raise _fail(where, "apiVersion", f"expected {API_VERSION}, got {describe_value(body.get('apiVersion'))}")
        _known(where, body, "", _DOC_FIELDS)
        ctx = Ctx(where)
        for key, value in _limits(ctx, body.get("limits"), "limits").items():
            limits[key] = min(limits.get(key, value), value)
        raw_types = _list(ctx, body.get("types"), "types")
        if not raw_types:
            raise _fail(where, "types", "is required: at least one node type")
        types.extend(_parse_type(raw, i, doc, seen) for i, raw in enumerate(raw_types))
    if not types:
        raise _fail(Where(source or "<input>", None), "", "no NodeTypes document")
    return NodeTypes(tuple(types), limits, source)


def load_node_types(path: str) -> NodeTypes:
    """A node-types file (YAML or JSON; `-` for stdin)."""
    from .loader import read_paths  # loader imports workloads; keep this module light to import

    return parse_node_types(read_paths([path]))


# ------------------------------------------------------------------------------------------------ defaults


def _signature(node: Node) -> tuple:
    labels = {k: v for k, v in node.labels.items() if k not in (HOSTNAME_LABEL, ZONE_LABEL)}
    return (tuple(sorted(node.allocatable.items())), tuple(sorted(labels.items())), node.taints)


def _group_key(node: Node) -> tuple:
    itype = node.labels.get(INSTANCE_TYPE_LABEL)
    return ("instance-type", itype) if itype else ("shape",) + _signature(node)


def _quantities(res: Mapping[str, int]) -> dict[str, str]:
    return {k: format_resource(k, v) for k, v in sorted(res.items())}


def template_manifest(name: str, labels: Mapping[str, str], taints: Sequence[Taint],
                      allocatable: Mapping[str, int]) -> dict[str, Any]:
    """A Node manifest as kubectl would print it (quantities as strings), for --emit state and --emit nodes."""
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": dict(labels)},
            "spec": {"taints": [{"key": t.key, **({"value": t.value} if t.value else {}), "effect": t.effect}
                                for t in taints]},
            "status": {"allocatable": _quantities(allocatable), "capacity": _quantities(allocatable)}}


def default_node_types(cluster: Cluster | Sequence[Node], price: float = DEFAULT_PRICE) -> NodeTypes:
    """One type per existing instance type (label node.kubernetes.io/instance-type), else per distinct
    allocatable+labels+taints (hostname and zone aside), each at `price`, in the order first seen.

    A type's template holds what all its nodes share: the labels with one value on all of them, the taints all
    carry, the smallest amount of each resource they all offer (so that a new node is never assumed bigger than
    the nodes it copies); its zones are the zones its nodes are in."""
    nodes = cluster.nodes if isinstance(cluster, Cluster) else tuple(cluster)
    groups: dict[tuple, list[Node]] = {}
    for n in nodes:
        groups.setdefault(_group_key(n), []).append(n)
    types = []
    used: set[str] = set()
    for key, members in groups.items():
        first = members[0]
        name = key[1] if key[0] == "instance-type" else f"like-{first.name}"
        base, i = name, 2
        while name in used:
            name, i = f"{base}-{i}", i + 1
        used.add(name)
        labels = {k: v for k, v in first.labels.items() if k not in (HOSTNAME_LABEL, ZONE_LABEL)
                  and all(m.labels.get(k) == v for m in members)}
        taints = tuple(t for t in first.taints if all(t in m.taints for m in members))
        alloc = {r: min(m.allocatable[r] for m in members) for r in first.allocatable
                 if all(r in m.allocatable for m in members)}
        alloc.setdefault("pods", DEFAULT_PODS)
        zones = tuple(sorted({m.labels[ZONE_LABEL] for m in members if m.labels.get(ZONE_LABEL)}))
        node_name = node_name_part(name)
        raw = template_manifest(node_name, labels, taints, alloc)
        node = Node(name=node_name, labels=labels, taints=taints, allocatable=alloc,
                    where=Where("<default node types>", None, "NodeType", "", name), raw=raw)
        types.append(NodeType(name=name, price=price, node=node, zones=zones, capacity=alloc, where=node.where))
    return NodeTypes(tuple(types), {}, "<default>")


def new_node(node_type: NodeType, name: str, zone: str | None = None) -> Node:
    """A new node of `node_type`: its own name and hostname label, the zone label when it has a zone."""
    labels = dict(node_type.node.labels)
    labels[HOSTNAME_LABEL] = name
    if zone:
        labels[ZONE_LABEL] = zone
    raw = template_manifest(name, labels, node_type.node.taints, node_type.allocatable)
    return Node(name=name, labels=labels, taints=node_type.node.taints, allocatable=dict(node_type.allocatable),
                where=Where("<new node>", None, "Node", "", name), raw=raw)


# ----------------------------------------------------------------------------------------- existing nodes


def _describes(t: NodeType, node: Node) -> bool:
    """The template's labels and taints are on the node and its zone is one of the type's (when it has zones)."""
    if any(node.labels.get(k) != v for k, v in t.node.labels.items()):
        return False
    if t.zones and node.labels.get(ZONE_LABEL) not in t.zones:
        return False
    return set(t.node.taints) <= set(node.taints)


def match_nodes(nodes: Iterable[Node], node_types: NodeTypes) -> dict[str, NodeMatch]:
    """Each existing node's type and price.

    A node with an instance-type label is of the first type whose template carries the same label and that
    describes it (labels, taints, zone), else of the first type with that label at all; a node without one is of
    the first type that describes it, with the same taints, and offers the same allocatable. No type: type and price None."""
    out: dict[str, NodeMatch] = {}
    for n in nodes:
        itype = n.labels.get(INSTANCE_TYPE_LABEL)
        chosen: NodeType | None = None
        if itype:
            same = [t for t in node_types.types if t.node.labels.get(INSTANCE_TYPE_LABEL) == itype]
            chosen = next((t for t in same if _describes(t, n)), same[0] if same else None)
        if chosen is None:
            chosen = next((t for t in node_types.types if _describes(t, n) and set(t.node.taints) == set(n.taints)
                           and _same_allocatable(t.allocatable, n.allocatable)), None)
        out[n.name] = NodeMatch(n.name, chosen.name if chosen else None, chosen.price if chosen else None)
    return out


def _same_allocatable(template: Mapping[str, int], node: Mapping[str, int]) -> bool:
    # A template's pods count may be the default podplan filled in, so pods compares only when the node states it.
    keys = set(template) | set(node)
    return all(template.get(k) == node.get(k) for k in keys if k != "pods" or "pods" in node)
