"""Typos in a manifest: an unknown field in a part podplan reads is a warning naming file, document, object,
field path and the closest known field; `podplan --strict` makes it an error (one line, exit 2). Real manifests
never warn. Also the small input fixes of the same issue: no input on a terminal, DaemonSets in `validate`."""
from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from builders import container, node_manifest, pod_manifest, workload_manifest
from podplan.cli import main
from test_bad_input import runner

ROOT = Path(__file__).resolve().parents[1]


def dump(*docs: Any) -> str:
    return yaml.safe_dump_all(list(docs), sort_keys=False)


def with_spec(doc: dict[str, Any], **fields: Any) -> dict[str, Any]:
    return {**doc, "spec": {**doc.get("spec", {}), **fields}}


PDB = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "web-pdb", "namespace": "shop"},
       "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}}}
DEPLOY = workload_manifest("Deployment", "api", {"app": "api"}, 2, namespace="shop")


@dataclass(frozen=True)
class Typo:
    id: str
    doc: dict[str, Any]
    warning: str  # the whole line, after "warning: "


CASES = [
    Typo("nodeSelecter in a Pod", pod_manifest("web", nodeSelecter={"disk": "ssd"}),
         "c.yaml[0] Pod/default/web: spec.nodeSelecter: unknown field (did you mean nodeSelector?)"),
    Typo("requets in a container's resources",
         pod_manifest("web", containers=[{"name": "c", "resources": {"requets": {"cpu": "1"}}}]),
         "c.yaml[0] Pod/default/web: spec.containers[0].resources.requets: unknown field (did you mean requests?)"),
    Typo("a field in the wrong case", pod_manifest("web", NodeName="n1"),
         "c.yaml[0] Pod/default/web: spec.NodeName: unknown field (did you mean nodeName?)"),
    Typo("lables in metadata", {**pod_manifest("web"), "metadata": {"name": "web", "lables": {"app": "web"}}},
         "c.yaml[0] Pod/default/web: metadata.lables: unknown field (did you mean labels?)"),
    Typo("a misspelt top-level spec", {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"},
                                       "spec": {"containers": [container()]}, "spc": {}},
         "c.yaml[0] Pod/default/web: spc: unknown field (did you mean spec?)"),
    Typo("a field that resembles nothing", pod_manifest("web", containers=[container(colour="blue")]),
         "c.yaml[0] Pod/default/web: spec.containers[0].colour: unknown field (not a field of Container)"),
    Typo("matchLabel in a pod anti-affinity selector",
         pod_manifest("web", affinity={"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
             {"labelSelector": {"matchLabel": {"app": "web"}}, "topologyKey": "kubernetes.io/hostname"}]}}),
         "c.yaml[0] Pod/default/web: spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]"
         ".labelSelector.matchLabel: unknown field (did you mean matchLabels?)"),
    Typo("nodeAfinity in affinity", pod_manifest("web", affinity={"nodeAfinity": {}}),
         "c.yaml[0] Pod/default/web: spec.affinity.nodeAfinity: unknown field (did you mean nodeAffinity?)"),
    Typo("matchExpression in a node selector term",
         pod_manifest("web", affinity={"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
             "nodeSelectorTerms": [{"matchExpressions": [{"key": "disk", "operator": "Exists"}],
                                    "matchExpression": []}]}}}),
         "c.yaml[0] Pod/default/web: spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
         ".nodeSelectorTerms[0].matchExpression: unknown field (did you mean matchExpressions?)"),
    Typo("operater in a node selector requirement",
         pod_manifest("web", affinity={"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
             {"weight": 1, "preference": {"matchExpressions": [{"key": "disk", "operator": "Exists", "operater": "In"}]}}]}}),
         "c.yaml[0] Pod/default/web: spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0]"
         ".preference.matchExpressions[0].operater: unknown field (did you mean operator?)"),
    Typo("wieght in a preferred pod affinity term",
         pod_manifest("web", affinity={"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
             {"weight": 1, "wieght": 5, "podAffinityTerm": {"labelSelector": {}, "topologyKey": "zone"}}]}}),
         "c.yaml[0] Pod/default/web: spec.affinity.podAffinity.preferredDuringSchedulingIgnoredDuringExecution[0]"
         ".wieght: unknown field (did you mean weight?)"),
    Typo("topologykey in a pod affinity term",
         pod_manifest("web", affinity={"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
             {"labelSelector": {}, "topologyKey": "zone", "namespace": ["shop"]}]}}),
         "c.yaml[0] Pod/default/web: spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]"
         ".namespace: unknown field (did you mean namespaces?)"),
    Typo("efect in a toleration", pod_manifest("web", tolerations=[{"key": "gpu", "operator": "Exists", "efect": "NoSchedule"}]),
         "c.yaml[0] Pod/default/web: spec.tolerations[0].efect: unknown field (did you mean effect?)"),
    Typo("maxskew in a spread constraint",
         pod_manifest("web", topologySpreadConstraints=[{"maxSkew": 1, "maxskew": 2, "topologyKey": "zone",
                                                         "whenUnsatisfiable": "DoNotSchedule"}]),
         "c.yaml[0] Pod/default/web: spec.topologySpreadConstraints[0].maxskew: unknown field (did you mean maxSkew?)"),
    Typo("hostport in a container port", pod_manifest("web", containers=[container(ports=[{"containerPort": 80, "hostport": 80}])]),
         "c.yaml[0] Pod/default/web: spec.containers[0].ports[0].hostport: unknown field (did you mean hostPort?)"),
    Typo("limit in pod-level resources", pod_manifest("web", resources={"limit": {"cpu": "1"}}),
         "c.yaml[0] Pod/default/web: spec.resources.limit: unknown field (did you mean limits?)"),
    Typo("controler in an owner reference",
         {**pod_manifest("web"), "metadata": {"name": "web", "ownerReferences": [
             {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "u", "controler": True}]}},
         "c.yaml[0] Pod/default/web: metadata.ownerReferences[0].controler: unknown field (did you mean controller?)"),
    Typo("replica in a Deployment", with_spec(DEPLOY, replica=3),
         "c.yaml[0] Deployment/shop/api: spec.replica: unknown field (did you mean replicas?)"),
    Typo("a typo inside a Deployment's pod template",
         workload_manifest("Deployment", "api", {"app": "api"}, 2, namespace="shop", template_spec={"toleration": []}),
         "c.yaml[0] Deployment/shop/api: spec.template.spec.toleration: unknown field (did you mean tolerations?)"),
    Typo("lables in a pod template's metadata",
         with_spec(DEPLOY, template={**DEPLOY["spec"]["template"], "metadata": {"labels": {"app": "api"}, "lables": {}}}),
         "c.yaml[0] Deployment/shop/api: spec.template.metadata.lables: unknown field (did you mean labels?)"),
    Typo("templete in a StatefulSet", with_spec(workload_manifest("StatefulSet", "db", {"app": "db"}, 1), templete={}),
         "c.yaml[0] StatefulSet/default/db: spec.templete: unknown field (did you mean template?)"),
    Typo("paralelism in a Job", with_spec(workload_manifest("Job", "batch", {"app": "batch"}, None), paralelism=3),
         "c.yaml[0] Job/default/batch: spec.paralelism: unknown field (did you mean parallelism?)"),
    Typo("a replicas field in a DaemonSet", with_spec(workload_manifest("DaemonSet", "agent", {"app": "agent"}), replicas=3),
         "c.yaml[0] DaemonSet/default/agent: spec.replicas: unknown field (not a field of DaemonSetSpec)"),
    Typo("minAvailible in a PodDisruptionBudget", with_spec(PDB, minAvailible=2),
         "c.yaml[0] PodDisruptionBudget/shop/web-pdb: spec.minAvailible: unknown field (did you mean minAvailable?)"),
    Typo("minMembers in a PodGroup", {"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup",
                                      "metadata": {"name": "g"}, "spec": {"minMember": 2, "minMembers": 3}},
         "c.yaml[0] PodGroup/default/g: spec.minMembers: unknown field (did you mean minMember?)"),
    Typo("unschedulabel in a Node", with_spec(node_manifest("n1"), unschedulabel=True),
         "c.yaml[0] Node/n1: spec.unschedulabel: unknown field (did you mean unschedulable?)"),
    Typo("alocatable in a Node's status", {**node_manifest("n1"), "status": {"capacity": {"cpu": "2"}, "alocatable": {}}},
         "c.yaml[0] Node/n1: status.alocatable: unknown field (did you mean allocatable?)"),
    Typo("efect in a Node's taint", with_spec(node_manifest("n1"), taints=[{"key": "gpu", "effect": "NoSchedule", "efect": "x"}]),
         "c.yaml[0] Node/n1: spec.taints[0].efect: unknown field (did you mean effect?)"),
    Typo("globaldefault in a PriorityClass",
         {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"}, "value": 10,
          "globaldefault": True},
         "c.yaml[0] PriorityClass/high: globaldefault: unknown field (did you mean globalDefault?)"),
    Typo("selecter in a Service", {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"},
                                   "spec": {"selecter": {"app": "web"}}},
         "c.yaml[0] Service/default/web: spec.selecter: unknown field (did you mean selector?)"),
    Typo("a typo inside an item of a kubectl List",
         {"apiVersion": "v1", "kind": "List", "items": [with_spec(node_manifest("n1"), unschedulabel=True)]},
         "c.yaml[0] Node/n1: items[0].spec.unschedulabel: unknown field (did you mean unschedulable?)"),
]


def run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, *options: str) -> Any:
    (tmp_path / "c.yaml").write_text(text)
    monkeypatch.chdir(tmp_path)
    return runner().invoke(main, [*options, "validate", "c.yaml"])


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_a_typo_is_one_warning_naming_the_field_and_the_closest_known_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: Typo) -> None:
    result = run(tmp_path, monkeypatch, dump(case.doc))
    assert result.exit_code == 0, result.stderr
    assert [line for line in result.stderr.splitlines() if "unknown field" in line] == [f"warning: {case.warning}"]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_with_strict_a_typo_is_one_error_line_and_exit_code_2(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: Typo) -> None:
    result = run(tmp_path, monkeypatch, dump(case.doc), "--strict")
    assert result.exit_code == 2, result.stderr
    where, field, message = case.warning.split(": ", 2)
    assert result.stderr.splitlines() == [f"error: {where} {field}: {message}"]
    assert result.stdout == ""


def test_every_typo_of_a_file_is_reported_in_input_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    result = run(tmp_path, monkeypatch, dump(node_manifest("n1"), pod_manifest("a", nodeSelecter={}, toleration=[]),
                                             pod_manifest("b", afinity={})))
    assert [line.split(": ", 1)[1] for line in result.stderr.splitlines()] == [
        "c.yaml[1] Pod/default/a: spec.nodeSelecter: unknown field (did you mean nodeSelector?)",
        "c.yaml[1] Pod/default/a: spec.toleration: unknown field (did you mean tolerations?)",
        "c.yaml[2] Pod/default/b: spec.afinity: unknown field (did you mean affinity?)",
    ]


# -------------------------------------------------------------------------------- real manifests never warn

FULL_DEPLOYMENT = """
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
  labels: {app.kubernetes.io/name: web}
  annotations: {deployment.kubernetes.io/revision: "3"}
  uid: 0b9c6a4e-8d3f-4f6e-9d7a-1c2b3d4e5f60
  resourceVersion: "123"
  generation: 3
  creationTimestamp: "2024-01-01T00:00:00Z"
  finalizers: [example.com/keep]
  managedFields: [{manager: kubectl, operation: Apply}]
spec:
  replicas: 2
  revisionHistoryLimit: 10
  progressDeadlineSeconds: 600
  minReadySeconds: 5
  paused: false
  strategy: {type: RollingUpdate, rollingUpdate: {maxSurge: 25%, maxUnavailable: 0}}
  selector: {matchLabels: {app.kubernetes.io/name: web}}
  template:
    metadata:
      labels: {app.kubernetes.io/name: web}
      annotations: {kubectl.kubernetes.io/restartedAt: "2024-01-01T00:00:00Z"}
    spec:
      serviceAccountName: web
      automountServiceAccountToken: false
      terminationGracePeriodSeconds: 30
      dnsPolicy: ClusterFirst
      restartPolicy: Always
      schedulerName: default-scheduler
      securityContext: {runAsNonRoot: true, fsGroup: 2000}
      imagePullSecrets: [{name: registry}]
      priorityClassName: system-cluster-critical
      enableServiceLinks: false
      hostUsers: false
      os: {name: linux}
      schedulingGates: []
      readinessGates: [{conditionType: example.com/ready}]
      nodeSelector: {kubernetes.io/os: linux}
      tolerations: [{key: dedicated, operator: Equal, value: web, effect: NoExecute, tolerationSeconds: 60}]
      topologySpreadConstraints:
      - {maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: ScheduleAnyway, minDomains: null,
         labelSelector: {matchLabels: {app.kubernetes.io/name: web}}, matchLabelKeys: [pod-template-hash],
         nodeAffinityPolicy: Honor, nodeTaintsPolicy: Ignore}
      affinity:
        nodeAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            nodeSelectorTerms: [{matchExpressions: [{key: kubernetes.io/arch, operator: In, values: [amd64, arm64]}]}]
          preferredDuringSchedulingIgnoredDuringExecution:
          - {weight: 10, preference: {matchExpressions: [{key: disk, operator: Exists}]}}
        podAntiAffinity:
          preferredDuringSchedulingIgnoredDuringExecution:
          - weight: 100
            podAffinityTerm:
              labelSelector: {matchExpressions: [{key: app.kubernetes.io/name, operator: In, values: [web]}]}
              namespaceSelector: {}
              namespaces: [shop]
              topologyKey: kubernetes.io/hostname
              matchLabelKeys: [pod-template-hash]
      volumes: [{name: tmp, emptyDir: {}}]
      initContainers:
      - {name: migrate, image: web:1, command: [migrate], restartPolicy: Always,
         resources: {requests: {cpu: 100m}, limits: {cpu: 200m}, claims: []}}
      containers:
      - name: web
        image: web:1
        imagePullPolicy: IfNotPresent
        args: [--port=8080]
        workingDir: /srv
        env: [{name: MODE, value: prod}]
        envFrom: [{configMapRef: {name: web}}]
        ports: [{name: http, containerPort: 8080, protocol: TCP}]
        resources: {requests: {cpu: 250m, memory: 256Mi}, limits: {memory: 512Mi}}
        resizePolicy: [{resourceName: cpu, restartPolicy: NotRequired}]
        volumeMounts: [{name: tmp, mountPath: /tmp}]
        livenessProbe: {httpGet: {path: /healthz, port: 8080}}
        readinessProbe: {httpGet: {path: /ready, port: 8080}}
        startupProbe: {tcpSocket: {port: 8080}}
        lifecycle: {preStop: {exec: {command: [sleep, "5"]}}}
        securityContext: {allowPrivilegeEscalation: false}
        terminationMessagePath: /dev/termination-log
        terminationMessagePolicy: File
        stdin: false
        tty: false
status: {replicas: 2, readyReplicas: 2}
"""


def test_a_full_deployment_and_the_bundled_instances_give_no_unknown_field(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "deploy.yaml").write_text(FULL_DEPLOYMENT)
    monkeypatch.chdir(tmp_path)
    for path in ["deploy.yaml", *sorted(str(p) for p in (ROOT / "instances").glob("*.yaml"))]:
        result = runner().invoke(main, ["--strict", "validate", path])
        assert result.exit_code == 0, result.stderr
        assert "unknown field" not in result.stderr


def test_a_generated_cluster_gives_no_unknown_field() -> None:
    result = runner().invoke(main, ["generate", "--nodes", "8", "--pods", "40"])
    assert result.exit_code == 0, result.stderr
    checked = runner().invoke(main, ["--strict", "validate", "-"], input=result.stdout)
    assert checked.exit_code == 0, checked.stderr


# ------------------------------------------------------------------------------------------ small input fixes


def test_no_file_on_a_terminal_is_an_error_instead_of_a_silent_wait() -> None:
    controller, terminal = os.openpty()
    try:
        result = subprocess.run([sys.executable, "-m", "podplan", "validate"], stdin=terminal, capture_output=True,
                                text=True, timeout=120)
    finally:
        os.close(controller)
        os.close(terminal)
    assert result.returncode == 2
    assert result.stderr.splitlines() == ["error: no input: give FILE..., - for stdin, or --cluster"]


def test_validate_counts_a_daemonset_by_the_nodes_it_runs_on() -> None:
    result = runner().invoke(main, ["validate", "-o", "json", str(ROOT / "instances" / "cluster-dump.yaml")])
    doc = yaml.safe_load(result.stdout)
    assert {"workload": "DaemonSet/kube-system/kube-proxy", "replicas": 4, "pending": 0} in doc["workloads"]


def test_validate_counts_the_nodes_a_new_daemonset_should_run_on(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tainted = node_manifest("n3", taints=[{"key": "gpu", "effect": "NoSchedule"}])
    (tmp_path / "c.yaml").write_text(dump(node_manifest("n1"), node_manifest("n2"), tainted,
                                          workload_manifest("DaemonSet", "agent", {"app": "agent"})))
    monkeypatch.chdir(tmp_path)
    doc = yaml.safe_load(runner().invoke(main, ["validate", "-o", "json", "c.yaml"]).stdout)
    assert doc["workloads"] == [{"workload": "DaemonSet/default/agent", "replicas": 2, "pending": 2}]
