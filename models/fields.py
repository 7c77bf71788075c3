"""The field names of each part of a manifest podplan reads, as the Kubernetes API defines them (core/v1,
apps/v1, batch/v1, policy/v1, scheduling.k8s.io/v1, metav1, scheduler-plugins' PodGroup), so a typo such as
`nodeSelecter` is reported instead of silently ignored.

Every field of those structs is listed, the ones podplan ignores included (a real manifest must never warn),
with recent alpha fields and a few deprecated ones that old dumps still carry. Parts podplan does not read
(volumes, probes, securityContext, status of workloads...) are not checked at all.
"""
from __future__ import annotations

import difflib
from collections.abc import Iterable

TYPE_META = ("apiVersion", "kind")
OBJECT = (*TYPE_META, "metadata", "spec", "status")

KNOWN_FIELDS: dict[str, frozenset[str]] = {name: frozenset(fields) for name, fields in {
    # ------------------------------------------------------------------------------------------ objects
    "object": OBJECT,
    "List": (*TYPE_META, "metadata", "items"),
    "PriorityClass": (*TYPE_META, "metadata", "value", "globalDefault", "description", "preemptionPolicy"),
    "ObjectMeta": ("name", "generateName", "namespace", "selfLink", "uid", "resourceVersion", "generation",
                   "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "labels", "annotations",
                   "ownerReferences", "finalizers", "managedFields",
                   "clusterName", "initializers"),  # removed in 1.25 / 1.14; older dumps carry them
    "OwnerReference": ("apiVersion", "kind", "name", "uid", "controller", "blockOwnerDeletion"),
    # ---------------------------------------------------------------------------------------- pod spec
    "PodSpec": ("volumes", "initContainers", "containers", "ephemeralContainers", "restartPolicy",
                "terminationGracePeriodSeconds", "activeDeadlineSeconds", "dnsPolicy", "nodeSelector",
                "serviceAccountName", "serviceAccount", "automountServiceAccountToken", "nodeName", "hostNetwork",
                "hostPID", "hostIPC", "shareProcessNamespace", "securityContext", "imagePullSecrets", "hostname",
                "subdomain", "affinity", "schedulerName", "tolerations", "hostAliases", "priorityClassName",
                "priority", "dnsConfig", "readinessGates", "runtimeClassName", "enableServiceLinks",
                "preemptionPolicy", "overhead", "topologySpreadConstraints", "setHostnameAsFQDN", "os", "hostUsers",
                "schedulingGates", "resourceClaims", "resources", "hostnameOverride", "workloadRef",
                "schedulingGroup", "evictionResponders"),
    "Container": ("name", "image", "command", "args", "workingDir", "ports", "envFrom", "env", "resources",
                  "resizePolicy", "restartPolicy", "restartPolicyRules", "volumeMounts", "volumeDevices",
                  "livenessProbe", "readinessProbe", "startupProbe", "lifecycle", "terminationMessagePath",
                  "terminationMessagePolicy", "imagePullPolicy", "securityContext", "stdin", "stdinOnce", "tty"),
    "ContainerPort": ("name", "hostPort", "containerPort", "protocol", "hostIP"),
    "ResourceRequirements": ("limits", "requests", "claims"),
    "Affinity": ("nodeAffinity", "podAffinity", "podAntiAffinity"),
    "NodeAffinity": ("requiredDuringSchedulingIgnoredDuringExecution", "preferredDuringSchedulingIgnoredDuringExecution"),
    "NodeSelector": ("nodeSelectorTerms",),
    "NodeSelectorTerm": ("matchExpressions", "matchFields"),
    "NodeSelectorRequirement": ("key", "operator", "values"),
    "PreferredSchedulingTerm": ("weight", "preference"),
    "PodAffinity": ("requiredDuringSchedulingIgnoredDuringExecution", "preferredDuringSchedulingIgnoredDuringExecution"),
    "PodAffinityTerm": ("labelSelector", "namespaces", "topologyKey", "namespaceSelector", "matchLabelKeys",
                        "mismatchLabelKeys"),
    "WeightedPodAffinityTerm": ("weight", "podAffinityTerm"),
    "LabelSelector": ("matchLabels", "matchExpressions"),
    "LabelSelectorRequirement": ("key", "operator", "values"),
    "PodSchedulingGate": ("name",),
    "Toleration": ("key", "operator", "value", "effect", "tolerationSeconds"),
    "TopologySpreadConstraint": ("maxSkew", "topologyKey", "whenUnsatisfiable", "labelSelector", "minDomains",
                                 "nodeAffinityPolicy", "nodeTaintsPolicy", "matchLabelKeys"),
    # ---------------------------------------------------------------------------------------- workloads
    "PodTemplateSpec": ("metadata", "spec"),
    "DeploymentSpec": ("replicas", "selector", "template", "strategy", "minReadySeconds", "revisionHistoryLimit",
                       "paused", "progressDeadlineSeconds"),
    "ReplicaSetSpec": ("replicas", "minReadySeconds", "selector", "template"),
    "StatefulSetSpec": ("replicas", "selector", "template", "volumeClaimTemplates", "serviceName",
                        "podManagementPolicy", "updateStrategy", "revisionHistoryLimit", "minReadySeconds",
                        "persistentVolumeClaimRetentionPolicy", "ordinals"),
    "StatefulSetOrdinals": ("start",),
    "JobSpec": ("parallelism", "completions", "activeDeadlineSeconds", "podFailurePolicy", "successPolicy",
                "backoffLimit", "backoffLimitPerIndex", "maxFailedIndexes", "selector", "manualSelector", "template",
                "ttlSecondsAfterFinished", "completionMode", "suspend", "podReplacementPolicy", "managedBy"),
    "DaemonSetSpec": ("selector", "template", "updateStrategy", "minReadySeconds", "revisionHistoryLimit",
                      "templateGeneration"),  # extensions/v1beta1 dumps
    # ------------------------------------------------------------------------------------ other objects
    "PodDisruptionBudgetSpec": ("minAvailable", "selector", "maxUnavailable", "unhealthyPodEvictionPolicy"),
    "PodGroupSpec": ("minMember", "minResources", "scheduleTimeoutSeconds"),  # scheduler-plugins v1alpha1
    "NodeSpec": ("podCIDR", "podCIDRs", "providerID", "unschedulable", "taints", "configSource", "externalID"),
    "NodeStatus": ("capacity", "allocatable", "phase", "conditions", "addresses", "daemonEndpoints", "nodeInfo",
                   "images", "volumesInUse", "volumesAttached", "config", "runtimeHandlers", "features",
                   "declaredFeatures"),
    "Taint": ("key", "value", "effect", "timeAdded"),
    "ServiceSpec": ("ports", "selector", "clusterIP", "clusterIPs", "type", "externalIPs", "sessionAffinity",
                    "loadBalancerIP", "loadBalancerSourceRanges", "externalName", "externalTrafficPolicy",
                    "healthCheckNodePort", "publishNotReadyAddresses", "sessionAffinityConfig", "ipFamilies",
                    "ipFamilyPolicy", "allocateLoadBalancerNodePorts", "loadBalancerClass", "internalTrafficPolicy",
                    "trafficDistribution"),
}.items()}

WORKLOAD_SPECS = {"Deployment": "DeploymentSpec", "ReplicaSet": "ReplicaSetSpec", "StatefulSet": "StatefulSetSpec",
                  "Job": "JobSpec", "DaemonSet": "DaemonSetSpec"}


def closest(name: str, known: Iterable[str]) -> str:
    """The known field a typo most likely meant ("" when none is close): case slips first, then difflib."""
    known = sorted(known)
    by_case = {k.lower(): k for k in known}
    if name.lower() in by_case:
        return by_case[name.lower()]
    match = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
    return match[0] if match else ""


def unknown_field_message(name: str, part: str) -> str:
    guess = closest(name, KNOWN_FIELDS[part])
    if guess:
        return f"unknown field (did you mean {guess}?)"
    return f"unknown field (not a field of {'a Kubernetes object' if part == 'object' else part})"
