"""NodeTypes: the file a user writes, the default made from the cluster, and each existing node's type."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from builders import node_manifest
from podplan.models.errors import InputError
from podplan.models.loader import parse_documents
from podplan.models.nodetypes import (
    HOSTNAME_LABEL, ZONE_LABEL, default_node_types, load_node_types, match_nodes, new_node, parse_node_types,
)
from podplan.models.parse import Doc

ROOT = Path(__file__).resolve().parent.parent


def doc(types: list[Any], **extra: Any) -> Doc:
    return Doc({"apiVersion": "podplan.io/v1alpha1", "kind": "NodeTypes", "types": types, **extra}, "types.yaml", 0)


def a_type(name: str = "m5.xlarge", **fields: Any) -> dict[str, Any]:
    body = {"name": name, "price": 0.192,
            "node": {"metadata": {"labels": {"node.kubernetes.io/instance-type": name,
                                             ZONE_LABEL: "us-east-1a"}},
                     "status": {"allocatable": {"cpu": "4", "memory": "16Gi", "pods": "110"}}}}
    body.update(fields)
    return body


def test_a_type_reads_its_price_max_zone_limits_and_template() -> None:
    t = parse_node_types([doc([a_type(max=20, limits={"cpu": "40"})], limits={"memory": "1Ti"})])
    (m5,) = t.types
    assert (m5.name, m5.price, m5.max, m5.zones) == ("m5.xlarge", 0.192, 20, ("us-east-1a",))
    assert m5.allocatable == {"cpu": 4000, "memory": 16 * 2**30, "pods": 110}
    assert m5.limits == {"cpu": 40000} and t.limits == {"memory": 2**40}
    assert ZONE_LABEL not in m5.node.labels  # a new node gets its zone from the type's zones


def test_zones_list_overrides_the_template_zone_and_a_new_node_carries_one() -> None:
    (t,) = parse_node_types([doc([a_type(zones=["us-east-1b", "us-east-1c"])])]).types
    assert t.zones == ("us-east-1b", "us-east-1c")
    n = new_node(t, "m5-xlarge-new-1", "us-east-1c")
    assert n.labels[ZONE_LABEL] == "us-east-1c" and n.labels[HOSTNAME_LABEL] == "m5-xlarge-new-1"
    assert n.raw["metadata"]["name"] == "m5-xlarge-new-1" and n.raw["status"]["allocatable"]["cpu"] == "4"


def test_a_template_without_a_pod_count_gets_the_kubelet_default() -> None:
    body = a_type()
    body["node"]["status"]["allocatable"] = {"cpu": "2", "memory": "4Gi"}
    assert parse_node_types([doc([body])]).types[0].allocatable["pods"] == 110


def test_price_defaults_to_one() -> None:
    body = a_type()
    del body["price"]
    assert parse_node_types([doc([body])]).types[0].price == 1.0


BAD = [
    pytest.param(doc([a_type(price=-1)]), "types.yaml[0] NodeType/m5.xlarge types[0].price: must be a number of 0 or more, got -1", id="a price below zero"),
    pytest.param(doc([a_type(price="cheap")]), "types.yaml[0] NodeType/m5.xlarge types[0].price: expected a number, got the string \"cheap\"", id="a price that is not a number"),
    pytest.param(doc([{"name": "x", "node": {"metadata": {"labels": {}}}}]), "types.yaml[0] NodeType/x types[0].node.status.allocatable: is required (the resources a new node offers pods)", id="a type without allocatable"),
    pytest.param(doc([{"name": "x"}]), "types.yaml[0] NodeType/x types[0].node: is required (what a new node of this type looks like)", id="a type without a node template"),
    pytest.param(doc([a_type(max=-2)]), "types.yaml[0] NodeType/m5.xlarge types[0].max: must be 0 or more, got -2", id="a negative max"),
    pytest.param(doc([a_type(prcie=1)]), "types.yaml[0] NodeType/m5.xlarge types[0].prcie: unknown field (expected one of name, price, max, zones, limits, node)", id="a misspelt field"),
    pytest.param(doc([a_type(), a_type()]), "types.yaml[0] NodeType/m5.xlarge types[1].name: type \"m5.xlarge\" is defined twice (first at types[0])", id="a type defined twice"),
    pytest.param(doc([]), "types.yaml[0] NodeTypes types: is required: at least one node type", id="no types at all"),
    pytest.param(Doc({"apiVersion": "v1", "kind": "Node"}, "types.yaml", 0), "types.yaml[0] Node kind: expected NodeTypes, got the string \"Node\"", id="a document of another kind"),
    pytest.param(doc([a_type(limits={"cpu": "lots"})]), None, id="a limit that is not a quantity"),
    pytest.param(doc([{"name": "x", "node": {"status": {"allocatable": {"cpu": "-1"}}}}]), None, id="a negative allocatable"),
]


@pytest.mark.parametrize("bad,message", BAD)
def test_bad_node_types_are_one_line_naming_file_object_and_field(bad: Doc, message: str | None) -> None:
    with pytest.raises(InputError) as err:
        parse_node_types([bad])
    text = str(err.value)
    assert "\n" not in text and text.startswith("types.yaml[0] ")
    if message:
        assert text == message


def cluster(*nodes: dict[str, Any]):
    return parse_documents(list(nodes))


def test_default_types_are_one_per_instance_type_with_their_zones_at_price_one() -> None:
    it = "node.kubernetes.io/instance-type"
    c = cluster(node_manifest("a", {it: "m5.large", ZONE_LABEL: "z1", HOSTNAME_LABEL: "a"}, cpu="2"),
                node_manifest("b", {it: "m5.large", ZONE_LABEL: "z2", HOSTNAME_LABEL: "b"}, cpu="2"),
                node_manifest("c", {it: "c5.xlarge", ZONE_LABEL: "z1", HOSTNAME_LABEL: "c"}, cpu="4"))
    t = default_node_types(c)
    assert [(x.name, x.price, x.zones, x.allocatable["cpu"]) for x in t.types] == [
        ("m5.large", 1.0, ("z1", "z2"), 2000), ("c5.xlarge", 1.0, ("z1",), 4000)]
    assert t.types[0].node.labels == {it: "m5.large"}
    assert {m.node: m.type for m in match_nodes(c.nodes, t).values()} == {"a": "m5.large", "b": "m5.large", "c": "c5.xlarge"}


def test_without_instance_type_nodes_group_by_allocatable_labels_and_taints() -> None:
    gpu_taint = [{"key": "gpu", "effect": "NoSchedule"}]
    c = cluster(node_manifest("a", {"pool": "x"}), node_manifest("b", {"pool": "x"}),
                node_manifest("c", {"pool": "x"}, cpu="8"), node_manifest("d", {"pool": "x"}, taints=gpu_taint))
    t = default_node_types(c)
    assert [x.name for x in t.types] == ["like-a", "like-c", "like-d"]
    assert [m.type for m in match_nodes(c.nodes, t).values()] == ["like-a", "like-a", "like-c", "like-d"]


def test_a_node_no_type_describes_has_no_type_and_no_price() -> None:
    t = parse_node_types([doc([a_type()])])
    c = cluster(node_manifest("m", {"node.kubernetes.io/instance-type": "m5.xlarge", ZONE_LABEL: "us-east-1a"}),
                node_manifest("other", {}, cpu="3"))
    got = match_nodes(c.nodes, t)
    assert (got["m"].type, got["m"].price) == ("m5.xlarge", 0.192)
    assert (got["other"].type, got["other"].price, got["other"].price_or(1.0)) == (None, None, 1.0)


def test_the_same_instance_type_at_two_prices_matches_by_zone() -> None:
    spot = a_type("m5.xlarge", price=0.07, zones=["us-east-1b"])
    spot["name"] = "m5.xlarge-b"
    t = parse_node_types([doc([a_type(), spot])])
    c = cluster(node_manifest("n", {"node.kubernetes.io/instance-type": "m5.xlarge", ZONE_LABEL: "us-east-1b"}))
    assert match_nodes(c.nodes, t)["n"].price == 0.07


def test_the_bundled_node_types_file_loads() -> None:
    t = load_node_types(str(ROOT / "instances" / "node-types" / "cloud-mix.yaml"))
    assert len(t.types) >= 6 and all(x.price > 0 for x in t.types)
    assert len({x.name for x in t.types}) == len(t.types)


def test_a_file_with_yaml_errors_is_one_line(tmp_path: Path) -> None:
    p = tmp_path / "t.yaml"
    p.write_text(yaml.safe_dump({"apiVersion": "podplan.io/v1alpha1", "kind": "NodeTypes",
                                 "types": [a_type(price=-0.5)]}))
    with pytest.raises(InputError, match=r"t.yaml\[0\] NodeType/m5.xlarge types\[0\].price: must be"):
        load_node_types(str(p))
