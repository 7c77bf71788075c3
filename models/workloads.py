"""From parsed objects to a Cluster: workloads expanded into pending pods, priorities resolved, gangs linked,
and the warnings a user should see about the input.

Expansion follows the controllers (pkg/controller/{deployment,replicaset,statefulset,job,daemon}):
- Deployment: its pods come from the ReplicaSet whose template equals the Deployment's (ignoring the
  pod-template-hash label), named `<deploy>-<hash>-<5 chars>` and labelled pod-template-hash=<hash>; with no
  such ReplicaSet in the input the hash is derived from the template (deterministic, not upstream's FNV).
- ReplicaSet (not owned by a Deployment in the input): `<rs>-<5 chars>`.
- StatefulSet: exactly the ordinals start..start+replicas-1 that no pod in the input holds, `web-0`...,
  labelled statefulset.kubernetes.io/pod-name and apps.kubernetes.io/pod-index.
- Job: min(parallelism, completions - status.succeeded) pods (none when suspended), `<job>-<5 chars>`,
  labelled job-name / batch.kubernetes.io/job-name (and controller-uid when the Job has a uid).
- DaemonSet: one pod per node whose labels, required node affinity and NoSchedule/NoExecute taints
  (with the controller's default tolerations) admit it and that does not yet run or await one, pinned to
  that node by node affinity on metadata.name as the DaemonSet controller does.
Pods in the input linked through ownerReferences (Pod -> ReplicaSet -> Deployment) count toward their
workload's replicas, so a dump holding a controller and its pods is never double counted. A pod whose
ReplicaSet is missing from the input is linked to its Deployment by the ReplicaSet's name
(`<deploy>-<pod-template-hash>`) when that Deployment's selector matches the pod. Terminating pods do not
count (the controllers replace them), except that a StatefulSet waits for a terminating pod's name.
The "5 chars" are a hash of the workload and the replica index, in kube's safe alphabet: stable across runs.

Knowing differences: controller-revision-hash / pod-template-generation labels are not added; a
Deployment's old ReplicaSets are never scaled down (every pod of the Deployment in the input counts).
"""
from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from .errors import Where
from .evolve import evolve
from .objects import (
    POD_GROUP_LABEL, Affinity, Cluster, Node, OwnerRef, Pod, Workload,
)
from .parse import Collected, Ctx, parse_pod_spec, stable_suffix
from .selectors import NodeSelector, NodeSelectorTerm, Requirement, selector_matches
from .taints import Toleration, first_untolerated

__all__ = ["build_cluster", "stable_suffix", "SYSTEM_PRIORITY_CLASSES", "POD_TEMPLATE_HASH_LABEL"]

POD_TEMPLATE_HASH_LABEL = "pod-template-hash"
STATEFULSET_POD_NAME_LABEL = "statefulset.kubernetes.io/pod-name"
STATEFULSET_POD_INDEX_LABEL = "apps.kubernetes.io/pod-index"
# Built-in classes every cluster has (scheduling/v1 SystemPriorityClasses).
SYSTEM_PRIORITY_CLASSES = {"system-cluster-critical": 2000000000, "system-node-critical": 2000001000}
# Tolerations the DaemonSet controller adds to every daemon pod (pkg/controller/daemon/util).
_DAEMON_TOLERATIONS = tuple(
    Toleration(key, "Exists", "", effect)
    for key, effect in (
        ("node.kubernetes.io/not-ready", "NoExecute"), ("node.kubernetes.io/unreachable", "NoExecute"),
        ("node.kubernetes.io/disk-pressure", "NoSchedule"), ("node.kubernetes.io/memory-pressure", "NoSchedule"),
        ("node.kubernetes.io/pid-pressure", "NoSchedule"), ("node.kubernetes.io/unschedulable", "NoSchedule"),
    )
)
_MAX_LISTED = 5  # names listed in one warning before "..."
# True: a workload's new pods are copies of one pod per template and controller; False: each made by _instance
# from the template (the reference the tests compare with)
SHARED_BASES = True

WorkloadIndex = dict[tuple[str, str, str], Workload]


def _controller_ref(refs: Iterable[OwnerRef]) -> OwnerRef | None:
    return next((o for o in refs if o.controller), None)


def _rs_deployment(rs_name: str, pod: Pod, index: WorkloadIndex) -> Workload | None:
    """The Deployment owning a ReplicaSet that is not in the input: upstream names it `<deploy>-<hash>`."""
    hash_ = pod.labels.get(POD_TEMPLATE_HASH_LABEL, "")
    if hash_ and rs_name.endswith("-" + hash_):
        deploy_name = rs_name[: -len(hash_) - 1]
    else:
        deploy_name = rs_name.rsplit("-", 1)[0]
    deploy = index.get(("Deployment", pod.namespace, deploy_name))
    if deploy is not None and selector_matches(deploy.selector, pod.labels):
        return deploy
    return None


def _owner_of(pod: Pod, index: WorkloadIndex) -> Workload | None:
    """The top workload controlling a pod: its controller, or the controller's controller (Deployment)."""
    ref = pod.controller
    if ref is None:
        return None
    owner = index.get((ref.kind, pod.namespace, ref.name))
    if owner is None:
        return _rs_deployment(ref.name, pod, index) if ref.kind == "ReplicaSet" else None
    seen = {owner.key}
    while (up := _controller_ref(owner.owner_refs)) is not None:
        parent = index.get((up.kind, owner.namespace, up.name))
        if parent is None or parent.key in seen:
            break
        owner = parent
        seen.add(owner.key)
    return owner


def _node_fits_daemon(template: Pod, node: Node) -> bool:
    """DaemonSet controller's predicate: node selector/affinity match and NoSchedule/NoExecute taints tolerated."""
    if any(node.labels.get(k) != v for k, v in template.node_selector.items()):
        return False
    required = template.affinity.node_required
    if required is not None and not required.matches(node.name, node.labels):
        return False
    return first_untolerated(node.taints, template.tolerations + _DAEMON_TOLERATIONS) is None


def _daemon_node(pod: Pod) -> str:
    """The node a daemon pod is for: where it is bound, or where the controller's name pin sends it."""
    if pod.node_name:
        return pod.node_name
    required = pod.affinity.node_required
    for term in required.terms if required else ():
        for f in term.match_fields:
            if f.key == "metadata.name" and f.operator == "In" and len(f.values) == 1:
                return f.values[0]
    return ""


def _pin_to_node(template: Pod, node_name: str) -> Pod:
    term = NodeSelectorTerm((), (Requirement("metadata.name", "In", (node_name,)),))
    a = template.affinity
    return evolve(template, affinity=Affinity(NodeSelector((term,)), a.node_preferred, a.pod_required,
                                               a.pod_preferred, a.anti_required, a.anti_preferred),
                   tolerations=template.tolerations + _DAEMON_TOLERATIONS)


def _label_keys_used(pod: Pod) -> set[str]:
    """Labels whose VALUE the pod's rules read: matchLabelKeys / mismatchLabelKeys."""
    a = pod.affinity
    terms = a.pod_required + a.anti_required + tuple(w.term for w in a.pod_preferred + a.anti_preferred)
    keys = {k for t in terms for k in t.match_label_keys + t.mismatch_label_keys}
    return keys | {k for c in pod.spread_constraints for k in c.match_label_keys}


def with_labels(template: Pod, extra: Mapping[str, str]) -> Pod:
    """A pod template plus labels a controller adds to its pods (pod-template-hash, pod-name...).

    Where matchLabelKeys/mismatchLabelKeys name one of them, the template is read again so the merge sees the
    pod's real labels, as it would when the API server admits the controller's pod."""
    labels = {**template.labels, **extra}
    if not (_label_keys_used(template) & extra.keys()) or template.raw is None:
        return evolve(template, labels=labels)
    raw = template.raw
    meta = dict(raw.get("metadata") or {})
    meta["labels"] = labels
    # Already validated strictly when first read: lenient here so a re-read cannot fail differently.
    ctx = Ctx(template.where, "spec.template", strict=False)
    again = parse_pod_spec(ctx, template.namespace, template.name, meta, raw.get("spec"), template.order, raw)
    return evolve(again, priority=template.priority, priority_class_name=template.priority_class_name)


def _compared_template(raw: Mapping[str, Any] | None) -> dict[str, Any]:
    """A pod template as the Deployment controller compares them: without the pod-template-hash label (and
    creationTimestamp)."""
    template = dict(raw or {})
    meta = dict(template.get("metadata") or {})
    labels = {k: v for k, v in (meta.get("labels") or {}).items() if k != POD_TEMPLATE_HASH_LABEL}
    meta["labels"] = labels
    meta.pop("creationTimestamp", None)
    template["metadata"] = meta
    return template


def _as_text(compared: Mapping[str, Any]) -> str:
    """A compared template as text: keys sorted, so that two templates are the same whatever their keys' order."""
    return json.dumps(compared, sort_keys=True, default=str)


def _template_identity(raw: Mapping[str, Any] | None) -> str:
    """_compared_template as text (_as_text)."""
    return _as_text(_compared_template(raw))


def _same_template(a: Mapping[str, Any] | None, b: Mapping[str, Any] | None) -> bool:
    """_template_identity(a) == _template_identity(b). Where the compared templates are equal and print the same
    (same keys in the same order, same types: `1` is not `true` nor `1.0`), their identities are equal without
    writing them out (two JSON texts per Deployment cost 0.15 s at 5,000 nodes); any other pair is compared by
    its identities."""
    ta, tb = _compared_template(a), _compared_template(b)
    if ta == tb and repr(ta) == repr(tb):
        return True
    return _as_text(ta) == _as_text(tb)


def _new_replica_set(deploy: Workload, workloads: Iterable[Workload]) -> Workload | None:
    """The Deployment's ReplicaSet in the input whose template is the Deployment's (its "new" ReplicaSet)."""
    want = deploy.template.raw if deploy.template else None
    for rs in workloads:
        if rs.kind != "ReplicaSet" or rs.namespace != deploy.namespace:
            continue
        ref = _controller_ref(rs.owner_refs)
        if ref is None or ref.kind != "Deployment" or ref.name != deploy.name:
            continue
        if _same_template(rs.template.raw if rs.template else None, want):
            return rs
    return None


def _replica_sets_by_owner(workloads: Iterable[Workload]) -> dict[tuple[str, str], list[Workload]]:
    """Each (namespace, Deployment name)'s controlled ReplicaSets, in input order: _new_replica_set looks among
    these only (scanning every workload for every Deployment took 25 s at 5,000 nodes)."""
    out: dict[tuple[str, str], list[Workload]] = defaultdict(list)
    for rs in workloads:
        if rs.kind == "ReplicaSet":
            ref = _controller_ref(rs.owner_refs)
            if ref is not None and ref.kind == "Deployment":
                out[(rs.namespace, ref.name)].append(rs)
    return out


def _is_owned_by_input_deployment(rs: Workload, index: WorkloadIndex) -> bool:
    ref = _controller_ref(rs.owner_refs)
    return ref is not None and ref.kind == "Deployment" and (ref.kind, rs.namespace, ref.name) in index


def _explicit_priority(template: Pod) -> bool:
    """Whether the template sets spec.priority itself (else PriorityClass resolution applies)."""
    spec = template.raw.get("spec") if template.raw else None
    return isinstance(spec, Mapping) and spec.get("priority") is not None


def _pods(count: int) -> str:
    return f"{count} pod" if count == 1 else f"{count} pods"


def _listed(names: list[str]) -> str:
    shown = ", ".join(names[:_MAX_LISTED])
    return shown + (f" and {len(names) - _MAX_LISTED} more" if len(names) > _MAX_LISTED else "")


class _Priorities:
    """Pod priority as the Priority admission plugin sets it; remembers unknown class names for one warning each."""

    def __init__(self, classes: Mapping[str, Any]) -> None:
        self.classes = classes
        self.default = next((pc.value for pc in classes.values() if pc.global_default), 0)
        self.unknown: dict[str, list[Pod]] = defaultdict(list)

    def of(self, pod: Pod, explicit: bool) -> int:
        if explicit:
            return pod.priority
        name = pod.priority_class_name
        if not name:
            return self.default
        pc = self.classes.get(name)
        if pc is not None:
            return pc.value
        if name in SYSTEM_PRIORITY_CLASSES:
            return SYSTEM_PRIORITY_CLASSES[name]
        self.unknown[name].append(pod)
        return 0

    def preemption_policy(self, pod: Pod) -> str:
        """spec.preemptionPolicy after admission: the pod's own, else its class's (or the global default's)."""
        if pod.preemption_policy:
            return pod.preemption_policy
        name = pod.priority_class_name
        pc = self.classes.get(name) if name else next((c for c in self.classes.values() if c.global_default), None)
        return pc.preemption_policy if pc is not None else "PreemptLowerPriority"

    def warnings(self) -> list[str]:
        out = []
        for name, pods in self.unknown.items():
            more = f" (and {len(pods) - 1} more)" if len(pods) > 1 else ""
            out.append(f"{pods[0].where.describe()}: spec.priorityClassName {name!r} is not in the input{more}; "
                       "priority 0 assumed")
        return out


def build_cluster(c: Collected, extra_warnings: tuple[str, ...] = ()) -> Cluster:
    warnings: list[str] = list(extra_warnings) + c.warnings
    priorities = _Priorities(c.priority_classes)
    index: WorkloadIndex = {(w.kind, w.namespace, w.name): w for w in c.workloads}
    node_names = {n.name for n in c.nodes}
    existing: list[Pod] = []
    bare_pending: list[Pod] = []
    present: dict[str, list[Pod]] = defaultdict(list)  # workload key -> its pods in the input
    absent_nodes: dict[str, list[Pod]] = defaultdict(list)
    for pod, explicit in c.pods:
        owner = _owner_of(pod, index)
        pod = evolve(pod, priority=priorities.of(pod, explicit), workload=owner.key if owner else "",
                      pod_group=_group_of(pod), preemption_policy=priorities.preemption_policy(pod))
        if owner is not None:
            present[owner.key].append(pod)
        if pod.node_name:
            if pod.node_name not in node_names:
                absent_nodes[pod.node_name].append(pod)
            existing.append(pod)
        else:
            bare_pending.append(pod)

    generated: list[Pod] = []
    order = len(c.pods)
    used = {p.key for p, _ in c.pods}  # generated names must not collide with any pod, read or generated
    replica_sets = _replica_sets_by_owner(c.workloads)
    for w in c.workloads:
        if w.template is None or (w.kind == "ReplicaSet" and _is_owned_by_input_deployment(w, index)):
            continue  # a ReplicaSet of a Deployment in the input is expanded through that Deployment
        admitted: dict[int, Pod] = {}  # a workload's pods share their template: admitted once each
        # ... and their controller: one pod of the template and controller, which each pod copies with its own name
        # and order (the rest of _instance does not depend on those two)
        bases: dict[tuple[int, int], Pod] = {}
        where = Where(w.where.file, w.where.doc, w.kind, w.namespace, w.name)
        for template, name, owner in _missing_pods(w, present.get(w.key, []), c, used, replica_sets):
            ready = admitted.get(id(template))
            if ready is None:
                ready = admitted[id(template)] = evolve(
                    template, priority=priorities.of(template, _explicit_priority(template)),
                    preemption_policy=priorities.preemption_policy(template))
            if not SHARED_BASES:
                generated.append(_instance(ready, w, name, owner, order, where))
                order += 1
                continue
            base = bases.get((id(ready), id(owner)))
            if base is None:  # the base holds `ready` and `owner`: their ids stay theirs while `bases` lives
                base = bases[(id(ready), id(owner))] = _instance(ready, w, name, owner, order, where)
            generated.append(evolve(base, name=name, order=order))
            order += 1

    everything = existing + bare_pending + generated
    warnings += priorities.warnings()
    for node, pods in absent_nodes.items():
        more = f" (and {len(pods) - 1} more)" if len(pods) > 1 else ""
        warnings.append(f"{pods[0].where.describe()}: bound to node {node!r}, which is not in the input{more}; "
                        "it counts nowhere, as in kube-scheduler")
    groups = {g.key for g in c.pod_groups}
    missing_groups: dict[str, list[Pod]] = defaultdict(list)
    for pod in bare_pending + generated:
        if pod.pod_group and pod.pod_group not in groups:
            missing_groups[pod.pod_group].append(pod)
    for group, pods in missing_groups.items():
        warnings.append(f"{pods[0].where.describe()}: label {POD_GROUP_LABEL}={group.split('/', 1)[1]} names a "
                        f"PodGroup that is not in the input ({_pods(len(pods))}); scheduled without a gang")
    for n in c.nodes:
        if not n.allocatable:
            warnings.append(f"{n.where.describe()}: no status.allocatable or status.capacity; it fits no pod")
    warnings += topology_key_warnings(c.nodes, everything)
    warnings += namespace_warnings(c.namespaces, everything)
    return Cluster(
        nodes=tuple(c.nodes),
        pods=tuple(existing),
        pending=tuple(sorted(bare_pending + generated, key=lambda p: p.order)),
        namespaces=dict(c.namespaces),
        pdbs=tuple(c.pdbs),
        priority_classes=dict(c.priority_classes),
        workloads=tuple(c.workloads),
        pod_groups=tuple(c.pod_groups),
        services=tuple(c.services),
        warnings=tuple(warnings),
        skipped=dict(c.skipped),
    )


def _missing_pods(w: Workload, present: list[Pod], c: Collected, used: set[str],
                  replica_sets: Mapping[tuple[str, str], list[Workload]] | None = None) -> list[tuple[Pod, str, OwnerRef]]:
    """(template, name, controller ref) of each pod the workload's controller would still create.

    `used` holds every pod key taken so far; the names chosen here are added to it (5-character suffixes
    collide among thousands of replicas, so the next candidate is taken, as the API server retries)."""
    assert w.template is not None
    active = [p for p in present if not p.terminating]
    own = OwnerRef(w.kind, w.name, w.uid, True)
    if w.kind == "DaemonSet":
        have = {_daemon_node(p) for p in active}
        out = []
        for node in c.nodes:
            if node.name in have or not _node_fits_daemon(w.template, node):
                continue
            name = _free_name(w, used, lambda i, n=node.name: f"{w.name}-{stable_suffix(w.key + '@' + n + ('' if i == 0 else f'#{i}'))}")
            out.append((_pin_to_node(w.template, node.name), name, own))
        return out
    if w.kind == "StatefulSet":
        taken = {p.name for p in present}  # a terminating pod still holds its name
        out = []
        for ordinal in range(w.start_ordinal, w.start_ordinal + w.replicas):
            name = f"{w.name}-{ordinal}"
            if name not in taken:
                used.add(f"{w.namespace}/{name}")
                labels = {STATEFULSET_POD_NAME_LABEL: name, STATEFULSET_POD_INDEX_LABEL: str(ordinal)}
                out.append((with_labels(w.template, labels), name, own))
        return out
    missing = w.replicas - len(active)
    if missing <= 0:
        return []
    template, prefix = w.template, w.name
    if w.kind == "Deployment":
        candidates = c.workloads if replica_sets is None else replica_sets.get((w.namespace, w.name), [])
        rs = _new_replica_set(w, candidates)
        if rs is not None and rs.template is not None:
            template, prefix = rs.template, rs.name
            own = OwnerRef("ReplicaSet", rs.name, rs.uid, True)
        else:
            hash_ = stable_suffix(_template_identity(w.template.raw), 10)
            prefix = f"{w.name}-{hash_}"
            template = with_labels(w.template, {POD_TEMPLATE_HASH_LABEL: hash_})
            own = OwnerRef("ReplicaSet", prefix, "", True)
    elif w.kind == "Job":
        labels = {"job-name": w.name, "batch.kubernetes.io/job-name": w.name}
        if w.uid:
            labels.update({"controller-uid": w.uid, "batch.kubernetes.io/controller-uid": w.uid})
        template = with_labels(w.template, labels)
    counter = iter(range(1 << 62))
    names = [_free_name(w, used, lambda _i: f"{prefix}-{stable_suffix(f'{w.key}#{next(counter)}')}")
             for _ in range(missing)]
    return [(template, name, own) for name in names]


def _free_name(w: Workload, used: set[str], candidate: Callable[[int], str]) -> str:
    """The first of candidate(0), candidate(1), ... not taken in the workload's namespace; marks it taken."""
    i = 0
    name = candidate(i)
    while f"{w.namespace}/{name}" in used:
        i += 1
        name = candidate(i)
    used.add(f"{w.namespace}/{name}")
    return name


def _group_of(pod: Pod) -> str:
    name = pod.labels.get(POD_GROUP_LABEL)
    return f"{pod.namespace}/{name}" if name else ""


def _instance(template: Pod, w: Workload, name: str, owner: OwnerRef, order: int, where: Where | None = None) -> Pod:
    """A pod of `w` made from `template`; `where` (the workload's, shared by all its pods) when already built."""
    # one copy of the template (_group_of reads labels and namespace, which the template and its pod share)
    if where is None:
        where = Where(w.where.file, w.where.doc, w.kind, w.namespace, w.name)
    return evolve(template, name=name, uid="", owner_refs=(owner,), node_name="", order=order, workload=w.key,
                  where=where, pod_group=_group_of(template))


def _topology_keys(pod: Pod) -> set[str]:
    a = pod.affinity
    terms = a.pod_required + a.anti_required + tuple(w.term for w in a.pod_preferred + a.anti_preferred)
    return {t.topology_key for t in terms if t.topology_key} | {c.topology_key for c in pod.spread_constraints}


def topology_key_warnings(nodes: Iterable[Node], pods: Iterable[Pod]) -> list[str]:
    """One warning per topologyKey of a pod affinity term or spread constraint that some nodes lack."""
    nodes = list(nodes)
    users: dict[str, int] = defaultdict(int)
    # pods share their affinity and spread objects (models.parse reads each distinct one once)
    known: dict[tuple[int, int], tuple[Any, Any, set[str]]] = {}
    for pod in pods:
        part = (id(pod.affinity), id(pod.spread_constraints))
        hit = known.get(part)
        if hit is None:  # the objects are kept in the entry, so that their ids stay theirs
            hit = known[part] = (pod.affinity, pod.spread_constraints, _topology_keys(pod))
        for key in hit[2]:
            users[key] += 1
    out = []
    for key in sorted(users):
        lacking = [n.name for n in nodes if key not in n.labels]
        if lacking:
            out.append(f"{len(lacking)} of {len(nodes)} nodes ({_listed(lacking)}) lack the label {key!r}, a "
                       f"topologyKey of {_pods(users[key])}: those nodes are in no {key} domain, so they fail "
                       "required terms and DoNotSchedule spread constraints and score nothing for the others")
    return out


def namespace_warnings(namespaces: Mapping[str, Any], pods: Iterable[Pod]) -> list[str]:
    """When a namespaceSelector is used: namespaces with pods but no Namespace object have no labels to match."""
    pods = list(pods)
    used = False
    seen: set[int] = set()
    for pod in pods:
        a = pod.affinity
        if id(a) in seen:
            continue
        seen.add(id(a))  # every affinity is alive in `pods` while this runs
        terms = a.pod_required + a.anti_required + tuple(w.term for w in a.pod_preferred + a.anti_preferred)
        if any(t.namespace_selector is not None and not t.namespace_selector.empty for t in terms):
            used = True
            break
    if not used:
        return []
    unknown = sorted({p.namespace for p in pods} - set(namespaces))
    if not unknown:
        return []
    return [f"a namespaceSelector is used, but {'namespace' if len(unknown) == 1 else 'namespaces'} "
            f"{_listed(unknown)} {'has' if len(unknown) == 1 else 'have'} pods and no Namespace object in the input: "
            "namespaceSelectors see no labels on " + ("it" if len(unknown) == 1 else "them")]


def daemon_nodes(cluster: Cluster, w: Workload) -> int:
    """How many nodes a DaemonSet runs on or should run on (it has no spec.replicas): the nodes its live pods
    are bound to, plus one per pending pod podplan made for it (one per node the controller would fill)."""
    running = {p.node_name for p in cluster.pods if p.workload == w.key and not p.terminating}
    return len(running) + sum(1 for p in cluster.pending if p.workload == w.key)


def daemon_node_counts(cluster: Cluster) -> dict[str, int]:
    """daemon_nodes of every workload at once, in one pass over the pods (per DaemonSet, each pass walked all
    77,000 pods at 5,000 nodes); a workload with no pod is absent (0)."""
    running: dict[str, set[str]] = defaultdict(set)
    for p in cluster.pods:
        if p.workload and not p.terminating:
            running[p.workload].add(p.node_name)
    out = {key: len(nodes) for key, nodes in running.items()}
    for p in cluster.pending:
        if p.workload:
            out[p.workload] = out.get(p.workload, 0) + 1
    return out
