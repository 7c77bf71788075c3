"""Every bad input gives ONE line on stderr naming the file, the document index, kind/namespace/name and the
field path, and exit code 2 — never a traceback. Run through the real CLI (`podplan validate`)."""
from __future__ import annotations

import copy
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from builders import container, node_manifest, pod_manifest, workload_manifest
from podplan.cli import main
from podplan.models.errors import PodplanError
from podplan.models.loader import parse_documents


def runner() -> CliRunner:
    try:
        return CliRunner(mix_stderr=False)  # type: ignore[call-arg]  # click < 8.2 mixes streams by default
    except TypeError:
        return CliRunner()


def dump(*docs: Any) -> str:
    return yaml.safe_dump_all(list(docs), sort_keys=False)


def spread(**fields: Any) -> list[dict[str, Any]]:
    base = {"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": {"matchLabels": {"app": "web"}}}
    return [{**base, **fields}]


def anti(**fields: Any) -> dict[str, Any]:
    term = {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": "kubernetes.io/hostname", **fields}
    return {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}


def node_affinity_expr(**expr: Any) -> dict[str, Any]:
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [expr]}]}}}


def web(**spec: Any) -> str:
    """A file holding a node, then the pod under test (document 1)."""
    return dump(node_manifest("n1"), pod_manifest("web", namespace="shop", labels={"app": "web"}, **spec))


@dataclass(frozen=True)
class Bad:
    id: str
    files: dict[str, str]
    # Fragments the one error line must contain, in this order: where, what field, and what is wrong.
    expect: tuple[str, ...]
    args: tuple[str, ...] = ()  # files to pass, default: all of `files` in order


PDB = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "web-pdb", "namespace": "shop"},
       "spec": {"selector": {"matchLabels": {"app": "web"}}}}

CASES = [
    Bad("a file that is not YAML", {"c.yaml": "kind: Pod\nmetadata: {name: [unclosed\n"},
        ("c.yaml[0]", "not valid YAML (line 3, column 1)")),
    Bad("a YAML error in the third document names that document",
        {"c.yaml": dump(node_manifest("n1"), node_manifest("n2")) + "---\nkind: Pod\n  bad indent: x\n"},
        ("c.yaml[2]", "not valid YAML")),
    Bad("a JSON file that is not JSON", {"c.json": '{"kind": "Pod",}'}, ("c.json[0]", "not valid JSON (line 1, column 16)")),
    Bad("a document that is not a mapping", {"c.yaml": "- a\n- list\n"},
        ("c.yaml[0]", "expected a mapping with apiVersion, kind and metadata, got a list")),
    Bad("a List item that is not a mapping",
        {"c.yaml": dump({"apiVersion": "v1", "kind": "List", "items": [node_manifest("n1"), "oops"]})},
        ("c.yaml[0]", "items[1]:", 'expected a mapping with apiVersion, kind and metadata, got the string "oops"')),
    Bad("a document without kind", {"c.yaml": dump({"apiVersion": "v1", "metadata": {"name": "web"}})},
        ("c.yaml[0] object/web", "kind:", "is required")),
    Bad("a kind that is not a string", {"c.yaml": dump({"apiVersion": "v1", "kind": ["Pod"], "metadata": {"name": "web"}})},
        ("c.yaml[0]", "kind:", "expected a string, got a list")),
    Bad("an object without a name", {"c.yaml": dump({"apiVersion": "v1", "kind": "Node", "metadata": {"labels": {}}})},
        ("c.yaml[0] Node", "metadata.name:", "is required")),
    Bad("a malformed quantity", {"c.yaml": web(containers=[container(requests={"cpu": "1.2.3"})])},
        ("c.yaml[1] Pod/shop/web", "spec.containers[0].resources.requests.cpu:", '"1.2.3" is not a quantity')),
    Bad("an unknown unit", {"c.yaml": dump(node_manifest("n1", memory="16Qi"))},
        ("c.yaml[0] Node/n1", "status.allocatable.memory:", '"16Qi" is not a quantity')),
    Bad("a negative request", {"c.yaml": web(containers=[container(requests={"memory": "-1"})])},
        ("c.yaml[1] Pod/shop/web", "spec.containers[0].resources.requests.memory:", "must not be negative")),
    Bad("a request above its limit", {"c.yaml": web(containers=[container(requests={"cpu": "2"}, limits={"cpu": "1"})])},
        ("Pod/shop/web", "spec.containers[0].resources.requests.cpu:", "2 must be less than or equal to the limit 1")),
    Bad("half a GPU", {"c.yaml": web(containers=[container(limits={"nvidia.com/gpu": "0.5"})])},
        ("Pod/shop/web", "spec.containers[0].resources.limits.nvidia.com/gpu:", "must be a whole number")),
    Bad("an unknown selector operator",
        {"c.yaml": web(affinity=anti(labelSelector={"matchExpressions": [{"key": "app", "operator": "Matches", "values": ["w"]}]}))},
        ("Pod/shop/web", "spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]"
                         ".labelSelector.matchExpressions[0].operator:", 'unknown operator "Matches"')),
    Bad("Gt in a label selector (node selectors only)",
        {"c.yaml": web(affinity=anti(labelSelector={"matchExpressions": [{"key": "v", "operator": "Gt", "values": ["1"]}]}))},
        ("Pod/shop/web", ".labelSelector.matchExpressions[0].operator:", 'unknown operator "Gt" (expected one of In, NotIn, Exists, DoesNotExist)')),
    Bad("In with no values", {"c.yaml": web(affinity=node_affinity_expr(key="zone", operator="In", values=[]))},
        ("Pod/shop/web", "nodeSelectorTerms[0].matchExpressions[0].values:", "must be non-empty for operator In")),
    Bad("Exists with values", {"c.yaml": web(affinity=node_affinity_expr(key="zone", operator="Exists", values=["a"]))},
        ("Pod/shop/web", "matchExpressions[0].values:", "must be empty for operator Exists")),
    Bad("Lt with two values", {"c.yaml": web(affinity=node_affinity_expr(key="cores", operator="Lt", values=["1", "2"]))},
        ("Pod/shop/web", "matchExpressions[0].values:", "must hold exactly one integer for operator Lt")),
    Bad("matchFields on a field other than metadata.name",
        {"c.yaml": web(affinity={"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchFields": [{"key": "spec.unschedulable", "operator": "In", "values": ["false"]}]}]}}})},
        ("Pod/shop/web", "nodeSelectorTerms[0].matchFields[0].key:", '"spec.unschedulable" is not supported (only metadata.name)')),
    Bad("required node affinity with no terms",
        {"c.yaml": web(affinity={"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": []}}})},
        ("Pod/shop/web", "requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms:", "must have at least one term")),
    Bad("an empty topologyKey in a spread constraint", {"c.yaml": web(topologySpreadConstraints=spread(topologyKey=""))},
        ("Pod/shop/web", "spec.topologySpreadConstraints[0].topologyKey:", "must not be empty")),
    Bad("an empty topologyKey in pod anti-affinity", {"c.yaml": web(affinity=anti(topologyKey=""))},
        ("Pod/shop/web", "requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey:", "must not be empty")),
    Bad("maxSkew below 1", {"c.yaml": web(topologySpreadConstraints=spread(maxSkew=0))},
        ("Pod/shop/web", "spec.topologySpreadConstraints[0].maxSkew:", "must be an integer >= 1, got 0")),
    Bad("minDomains with ScheduleAnyway", {"c.yaml": web(topologySpreadConstraints=spread(whenUnsatisfiable="ScheduleAnyway", minDomains=3))},
        ("Pod/shop/web", "spec.topologySpreadConstraints[0].minDomains:", "may only be set with whenUnsatisfiable: DoNotSchedule")),
    Bad("an unknown whenUnsatisfiable", {"c.yaml": web(topologySpreadConstraints=spread(whenUnsatisfiable="Never"))},
        ("Pod/shop/web", "spec.topologySpreadConstraints[0].whenUnsatisfiable:", 'must be DoNotSchedule or ScheduleAnyway, got "Never"')),
    Bad("an invalid nodeAffinityPolicy", {"c.yaml": web(topologySpreadConstraints=spread(nodeAffinityPolicy="Always"))},
        ("Pod/shop/web", "spec.topologySpreadConstraints[0].nodeAffinityPolicy:", 'must be Honor or Ignore, got "Always"')),
    Bad("two spread constraints on the same key and mode",
        {"c.yaml": web(topologySpreadConstraints=spread() + spread(maxSkew=2))},
        ("Pod/shop/web", "spec.topologySpreadConstraints[1]:", 'duplicate constraint for topologyKey "topology.kubernetes.io/zone"')),
    Bad("matchLabelKeys without a labelSelector",
        {"c.yaml": web(topologySpreadConstraints=[{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule",
                                                   "matchLabelKeys": ["pod-template-hash"]}])},
        ("Pod/shop/web", "spec.topologySpreadConstraints[0].matchLabelKeys:", "must not be specified when labelSelector is not set")),
    Bad("the same key in matchLabelKeys and mismatchLabelKeys",
        {"c.yaml": web(affinity=anti(matchLabelKeys=["tenant"], mismatchLabelKeys=["tenant"]))},
        ("Pod/shop/web", "[0].mismatchLabelKeys:", "must not share keys with matchLabelKeys")),
    Bad("a preferred weight of 0", {"c.yaml": web(affinity={"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 0, "podAffinityTerm": {"labelSelector": {}, "topologyKey": "zone"}}]}})},
        ("Pod/shop/web", "spec.affinity.podAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight:", "must be an integer in 1..100, got 0")),
    Bad("a preferred weight of 101", {"c.yaml": web(affinity={"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 101, "preference": {"matchExpressions": [{"key": "zone", "operator": "Exists"}]}}]}})},
        ("Pod/shop/web", "nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight:", "must be an integer in 1..100, got 101")),
    Bad("a hostPort out of range", {"c.yaml": web(containers=[container(ports=[{"containerPort": 80, "hostPort": 70000}])])},
        ("Pod/shop/web", "spec.containers[0].ports[0].hostPort:", "must be in 1..65535 (or 0 for none), got 70000")),
    Bad("an unknown port protocol", {"c.yaml": web(containers=[container(ports=[{"containerPort": 80, "hostPort": 80, "protocol": "HTTP"}])])},
        ("Pod/shop/web", "spec.containers[0].ports[0].protocol:", 'must be one of TCP, UDP, SCTP, got "HTTP"')),
    Bad("an unknown taint effect",
        {"c.yaml": dump(node_manifest("n1", taints=[{"key": "gpu", "value": "true", "effect": "NoScheduling"}]))},
        ("c.yaml[0] Node/n1", "spec.taints[0].effect:", 'unknown taint effect "NoScheduling" (expected one of NoSchedule, PreferNoSchedule, NoExecute)')),
    Bad("a taint without a key", {"c.yaml": dump(node_manifest("n1", taints=[{"value": "true", "effect": "NoSchedule"}]))},
        ("Node/n1", "spec.taints[0].key:", "must not be empty")),
    Bad("an unknown toleration operator", {"c.yaml": web(tolerations=[{"key": "gpu", "operator": "Equals", "value": "true"}])},
        ("Pod/shop/web", "spec.tolerations[0].operator:", 'unknown toleration operator "Equals" (expected Equal or Exists)')),
    Bad("a toleration with Exists and a value", {"c.yaml": web(tolerations=[{"key": "gpu", "operator": "Exists", "value": "true"}])},
        ("Pod/shop/web", "spec.tolerations[0].value:", "must be empty when operator is Exists")),
    Bad("a toleration with Equal and no key", {"c.yaml": web(tolerations=[{"operator": "Equal", "value": "true"}])},
        ("Pod/shop/web", "spec.tolerations[0].key:", "must not be empty when operator is Equal")),
    Bad("tolerationSeconds on a NoSchedule toleration",
        {"c.yaml": web(tolerations=[{"key": "gpu", "operator": "Exists", "effect": "NoSchedule", "tolerationSeconds": 30}])},
        ("Pod/shop/web", "spec.tolerations[0].tolerationSeconds:", "may only be set with effect NoExecute")),
    Bad("a label value that YAML read as a number", {"c.yaml": dump(pod_manifest("web", labels={"version": 1.10}))},
        ("c.yaml[0] Pod/default/web", "metadata.labels.version:", 'expected a string, got the number 1.1 (quote it: "1.1")')),
    Bad("a nodeSelector value that YAML read as a boolean", {"c.yaml": dump(pod_manifest("web", nodeSelector={"ssd": True}))},
        ("Pod/default/web", "spec.nodeSelector.ssd:", 'expected a string, got true (quote it: "true")')),
    Bad("a selector value that YAML read as a number", {"c.yaml": web(affinity=node_affinity_expr(key="gen", operator="In", values=[3]))},
        ("Pod/shop/web", "matchExpressions[0].values[0]:", 'expected a string, got the integer 3 (quote it: "3")')),
    Bad("a scheduling gate named twice", {"c.yaml": web(schedulingGates=[{"name": "example.com/quota"}, {"name": "example.com/quota"}])},
        ("Pod/shop/web", "spec.schedulingGates[1].name:", 'duplicate scheduling gate "example.com/quota"')),
    Bad("a scheduling gate without a name", {"c.yaml": web(schedulingGates=[{}])},
        ("Pod/shop/web", "spec.schedulingGates[0].name:", '"" is not a qualified name')),
    Bad("a PodDisruptionBudget with both minAvailable and maxUnavailable",
        {"c.yaml": dump({**PDB, "spec": {**PDB["spec"], "minAvailable": 2, "maxUnavailable": 1}})},
        ("c.yaml[0] PodDisruptionBudget/shop/web-pdb", "spec:", "minAvailable and maxUnavailable are mutually exclusive")),
    Bad("a malformed percentage", {"c.yaml": dump({**PDB, "spec": {**PDB["spec"], "minAvailable": "fifty%"}})},
        ("PodDisruptionBudget/shop/web-pdb", "spec.minAvailable:", 'expected an integer or a percentage like "50%", got the string "fifty%"')),
    Bad("a percentage above 100", {"c.yaml": dump({**PDB, "spec": {**PDB["spec"], "maxUnavailable": "150%"}})},
        ("PodDisruptionBudget/shop/web-pdb", "spec.maxUnavailable:", "must not be greater than 100%")),
    Bad("negative replicas", {"c.yaml": dump(workload_manifest("Deployment", "api", {"app": "api"}, -1, namespace="shop"))},
        ("c.yaml[0] Deployment/shop/api", "spec.replicas:", "must not be negative, got -1")),
    Bad("replicas that are not a number", {"c.yaml": dump(workload_manifest("StatefulSet", "db", {"app": "db"}, "three"))},  # type: ignore[arg-type]
        ("StatefulSet/default/db", "spec.replicas:", 'expected an integer, got the string "three"')),
    Bad("a Deployment whose selector does not select its template",
        {"c.yaml": dump({**workload_manifest("Deployment", "api", {"app": "api"}, 1),
                         "spec": {**workload_manifest("Deployment", "api", {"app": "api"}, 1)["spec"],
                                  "selector": {"matchLabels": {"app": "other"}}}})},
        ("Deployment/default/api", "spec.template.metadata.labels:", "do not match spec.selector")),
    Bad("an error inside a Deployment's pod template",
        {"c.yaml": dump(workload_manifest("Deployment", "api", {"app": "api"}, 2, namespace="shop",
                                          template_spec={"tolerations": [{"key": "k", "operator": "Maybe"}]}))},
        ("c.yaml[0] Deployment/shop/api", "spec.template.spec.tolerations[0].operator:", 'unknown toleration operator "Maybe"')),
    Bad("an error inside an item of a kubectl List",
        {"c.yaml": dump({"apiVersion": "v1", "kind": "List", "items": [node_manifest("n1"), node_manifest("n2", cpu="lots")]})},
        ("c.yaml[0] Node/n2", "items[1].status.allocatable.cpu:", '"lots" is not a quantity')),
    Bad("a PriorityClass without value", {"c.yaml": dump({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"}})},
        ("c.yaml[0] PriorityClass/high", "value:", "is required")),
    Bad("a PodGroup with minMember 0", {"c.yaml": dump({"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup",
                                                        "metadata": {"name": "g"}, "spec": {"minMember": 0}})},
        ("c.yaml[0] PodGroup/default/g", "spec.minMember:", "must be >= 1, got 0")),
    Bad("a boolean field that is not a boolean", {"c.yaml": dump({**node_manifest("n1"), "spec": {"unschedulable": "yes please"}})},
        ("Node/n1", "spec.unschedulable:", 'expected true or false, got the string "yes please"')),
    Bad("the same Pod twice in one file", {"c.yaml": dump(pod_manifest("web", "shop"), node_manifest("n1"), pod_manifest("web", "shop"))},
        ("c.yaml[2] Pod/shop/web", "metadata.name:", "Pod shop/web is defined twice (first in c.yaml[0])")),
    Bad("the same Node in two files", {"a.yaml": dump(node_manifest("n1")), "b.yaml": dump(node_manifest("n1"))},
        ("b.yaml[0] Node/n1", "metadata.name:", "Node n1 is defined twice (first in a.yaml[0])")),
    # Names and labels the API server rejects (models.names): a shell command is not a name.
    Bad("a Pod name that is a shell command", {"c.yaml": dump(pod_manifest("x$(touch f)"))},
        ("c.yaml[0] Pod/default/x$(touch f)", "metadata.name:", '"x$(touch f)" must be a DNS-1123 subdomain')),
    Bad("a name with a newline and a terminal escape still gives one line", {"c.yaml": dump(pod_manifest("a\nb\x1b[31m"))},
        ("c.yaml[0] Pod/default/a\\nb\\u001b[31m", "metadata.name:", '"a\\nb\\u001b[31m" must be a DNS-1123 subdomain')),
    Bad("a namespace with a semicolon", {"c.yaml": dump(pod_manifest("web", namespace="default; rm"))},
        ("c.yaml[0]", "metadata.namespace:", '"default; rm" must be a DNS-1123 label')),
    Bad("a Node name with capitals", {"c.yaml": dump(node_manifest("Worker-1"))},
        ("c.yaml[0] Node/Worker-1", "metadata.name:", '"Worker-1" must be a DNS-1123 subdomain')),
    Bad("a Service name starting with a digit",
        {"c.yaml": dump({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "1web"}, "spec": {"selector": {"app": "web"}}})},
        ("c.yaml[0] Service/default/1web", "metadata.name:", '"1web" must be a DNS-1035 label')),
    Bad("a Namespace name with a dot", {"c.yaml": dump({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team.a"}})},
        ("c.yaml[0] Namespace/team.a", "metadata.name:", '"team.a" must be a DNS-1123 label')),
    Bad("a label key with a space", {"c.yaml": dump(pod_manifest("web", labels={"my app": "web"}))},
        ("Pod/default/web", "metadata.labels.my app:", '"my app" must be a qualified name')),
    Bad("a label key with an empty prefix", {"c.yaml": dump(pod_manifest("web", labels={"/app": "web"}))},
        ("Pod/default/web", "metadata.labels./app:", '"/app" must be a qualified name')),
    Bad("a label value of 64 characters", {"c.yaml": dump(pod_manifest("web", labels={"app": "w" * 64}))},
        ("Pod/default/web", "metadata.labels.app:", "must be a valid label value: empty, or at most 63")),
    Bad("a label value ending with a dash", {"c.yaml": dump(pod_manifest("web", labels={"app": "web-"}))},
        ("Pod/default/web", "metadata.labels.app:", '"web-" must be a valid label value')),
    Bad("a nodeSelector value with a slash", {"c.yaml": dump(pod_manifest("web", nodeSelector={"disk": "ssd/fast"}))},
        ("Pod/default/web", "spec.nodeSelector.disk:", '"ssd/fast" must be a valid label value')),
    Bad("an annotation key with a space", {"c.yaml": dump({**pod_manifest("web"), "metadata": {"name": "web", "annotations": {"a b": "x"}}})},
        ("Pod/default/web", "metadata.annotations.a b:", '"a b" must be a qualified name')),
    # Scalars of the wrong type: the API server decodes into typed fields, a quoted number is a string.
    Bad("replicas written as a string", {"c.yaml": dump(workload_manifest("Deployment", "api", {"app": "api"}, "3"))},  # type: ignore[arg-type]
        ("c.yaml[0] Deployment/default/api", "spec.replicas:", 'expected an integer, got the string "3"')),
    Bad("replicas written as a boolean", {"c.yaml": dump(workload_manifest("Deployment", "api", {"app": "api"}, True))},  # type: ignore[arg-type]
        ("Deployment/default/api", "spec.replicas:", "expected an integer, got true")),
    Bad("replicas written as a fraction", {"c.yaml": dump(workload_manifest("ReplicaSet", "api", {"app": "api"}, 2.5))},  # type: ignore[arg-type]
        ("ReplicaSet/default/api", "spec.replicas:", "expected an integer, got the number 2.5")),
    Bad("a priority written as a string", {"c.yaml": dump(pod_manifest("web", priority="100"))},
        ("Pod/default/web", "spec.priority:", 'expected an integer, got the string "100"')),
    Bad("a weight left empty", {"c.yaml": web(affinity={"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"podAffinityTerm": {"labelSelector": {}, "topologyKey": "zone"}}]}})},
        ("Pod/shop/web", "preferredDuringSchedulingIgnoredDuringExecution[0].weight:", "is required (an integer in 1..100)")),
    Bad("a maxSkew written as a string", {"c.yaml": web(topologySpreadConstraints=spread(maxSkew="1"))},
        ("Pod/shop/web", "spec.topologySpreadConstraints[0].maxSkew:", 'expected an integer, got the string "1"')),
    Bad("a PodDisruptionBudget count written as a string", {"c.yaml": dump({**PDB, "spec": {**PDB["spec"], "minAvailable": "2"}})},
        ("PodDisruptionBudget/shop/web-pdb", "spec.minAvailable:", 'expected an integer or a percentage like "50%", got the string "2"')),
    Bad("a node name written as a number", {"c.yaml": dump({**pod_manifest("web"), "spec": {"nodeName": 7, "containers": [container()]}})},
        ("Pod/default/web", "spec.nodeName:", 'expected a string, got the integer 7 (quote it: "7")')),
    Bad("a hostNetwork written as a string", {"c.yaml": dump(pod_manifest("web", hostNetwork="true"))},
        ("Pod/default/web", "spec.hostNetwork:", 'expected true or false, got the string "true"')),
    Bad("a cpu request written as a boolean", {"c.yaml": web(containers=[container(requests={"cpu": True})])},
        ("Pod/shop/web", "spec.containers[0].resources.requests.cpu:", "expected a quantity (e.g. 500m, 1.5, 2Gi), got true")),
    Bad("tolerations written as a mapping", {"c.yaml": web(tolerations={"key": "gpu"})},
        ("Pod/shop/web", "spec.tolerations:", "expected a list, got a mapping")),
    Bad("a selector value left empty", {"c.yaml": web(affinity=node_affinity_expr(key="zone", operator="In", values=[None]))},
        ("Pod/shop/web", "matchExpressions[0].values[0]:", "expected a string, got null")),
    # An input that holds nothing.
    Bad("an empty file", {"c.yaml": ""}, ("c.yaml", "no objects in the input")),
    Bad("a file of empty documents", {"c.yaml": "---\n# nothing yet\n---\n"}, ("c.yaml", "no objects in the input")),
    Bad("an empty kubectl List", {"c.yaml": dump({"apiVersion": "v1", "kind": "List", "items": []})},
        ("c.yaml", "no objects in the input")),
    Bad("a file that does not exist", {"a.yaml": dump(node_manifest("n1"))},
        ("missing.yaml", "no such file or directory"), args=("a.yaml", "missing.yaml")),
    Bad("a directory with no manifests", {"empty/notes.txt": "hello"},
        ("empty", "directory holds no *.yaml, *.yml or *.json file"), args=("empty",)),
]


def run_validate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: Bad) -> Any:
    for name, text in case.files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    monkeypatch.chdir(tmp_path)
    return runner().invoke(main, ["validate", *(case.args or tuple(case.files))])


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_input_gives_one_line_and_exit_code_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: Bad) -> None:
    result = run_validate(tmp_path, monkeypatch, case)
    assert result.exit_code == 2, (result.stdout, result.stderr, result.exception)
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    line = lines[0]
    assert line.startswith("error: ")
    assert "Traceback" not in result.stderr
    position = 0
    for fragment in case.expect:
        found = line.find(fragment, position)
        assert found >= 0, f"{fragment!r} not in order in: {line}"
        position = found + len(fragment)


def test_there_are_at_least_twenty_bad_inputs() -> None:
    assert len(CASES) >= 20


# ------------------------------------------------------------------ anything else malformed: still no traceback

VALID = [
    node_manifest("n1", {"topology.kubernetes.io/zone": "a"}, taints=[{"key": "gpu", "effect": "NoSchedule"}]),
    pod_manifest("web", labels={"app": "web"}, node="n1",
                 containers=[container(requests={"cpu": "1"}, limits={"cpu": "2"}, ports=[{"containerPort": 80, "hostPort": 80}])],
                 tolerations=[{"key": "gpu", "operator": "Exists"}],
                 affinity={**anti(), **node_affinity_expr(key="zone", operator="In", values=["a"])},
                 topologySpreadConstraints=spread()),
    workload_manifest("Deployment", "api", {"app": "api"}, 2, template_spec={"priorityClassName": "high"}),
    {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "pdb"},
     "spec": {"minAvailable": "50%", "selector": {"matchLabels": {"app": "web"}}}},
]
JUNK = st.one_of(st.none(), st.booleans(), st.integers(-10**6, 10**6), st.floats(allow_nan=True), st.text(max_size=8),
                 st.lists(st.integers(), max_size=2), st.dictionaries(st.text(max_size=4), st.integers(), max_size=2))


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(value, dict):
        for k, v in value.items():
            out += _paths(v, prefix + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += _paths(v, prefix + (i,))
    return out


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_any_mutated_manifest_parses_or_raises_a_podplan_error(data: st.DataObject) -> None:
    docs = copy.deepcopy(VALID)
    paths = _paths(docs)
    for _ in range(data.draw(st.integers(1, 3))):
        path = data.draw(st.sampled_from(paths[1:]))
        target: Any = docs
        try:
            for step in path[:-1]:
                target = target[step]
            target[path[-1]] = data.draw(JUNK)
        except (KeyError, IndexError, TypeError):
            continue  # an earlier mutation replaced a parent
    try:
        parse_documents(docs)
    except PodplanError:
        pass
