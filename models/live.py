"""Reading a live cluster: the objects podplan reads, listed from the API server of a kubeconfig context.

Read-only by construction: every resource is declared to lightkube with the verbs list and global_list only, so
the client cannot even build a write request, and only list calls are made (HTTP GET). Lists are paginated
(limit/continue) like kubectl's. The objects come back as the server's JSON (lightkube's generic resources are
plain dicts), get the kind and apiVersion the server strips from list items, and go through the same parse path
as files, named `cluster:<context>` in messages.

Why lightkube (see README): a small pure-Python client (httpx, msgspec) that reads kubeconfigs as kubectl does
(token, client certificates, exec credential plugins, in-cluster service account) and returns raw objects.
"""
from __future__ import annotations

import functools
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from .errors import PodplanError
from .parse import Doc

PAGE_SIZE = 500  # kubectl's --chunk-size default


@dataclass(frozen=True)
class Resource:
    group: str
    version: str
    kind: str
    plural: str
    namespaced: bool
    optional: bool = False  # a CRD: absent (404) means none

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version


RESOURCES = (
    Resource("", "v1", "Namespace", "namespaces", False),
    Resource("", "v1", "Node", "nodes", False),
    Resource("scheduling.k8s.io", "v1", "PriorityClass", "priorityclasses", False),
    Resource("", "v1", "Service", "services", True),
    Resource("policy", "v1", "PodDisruptionBudget", "poddisruptionbudgets", True),
    Resource("apps", "v1", "Deployment", "deployments", True),
    Resource("apps", "v1", "ReplicaSet", "replicasets", True),
    Resource("apps", "v1", "StatefulSet", "statefulsets", True),
    Resource("apps", "v1", "DaemonSet", "daemonsets", True),
    Resource("batch", "v1", "Job", "jobs", True),
    # scheduler-plugins' coscheduling CRD; most clusters do not have it.
    Resource("scheduling.x-k8s.io", "v1alpha1", "PodGroup", "podgroups", True, optional=True),
    Resource("", "v1", "Pod", "pods", True),
)


class ClusterAccessError(PodplanError):
    """The cluster could not be read: no kubeconfig or context, unreachable server, rejected credentials, a
    forbidden resource. One line, exit code 2, like every bad input."""


@dataclass(frozen=True)
class LiveRead:
    """What was read: the documents (for models.parse.collect), the context's name and its namespace."""

    docs: list[Doc]
    context: str
    namespace: str  # the context's namespace, "default" when it sets none (kubectl's rule)


def _merge_kubeconfigs(paths: Sequence[Path]) -> dict[str, Any]:
    """KUBECONFIG=a:b as kubectl merges it: the first file to define a name (or current-context) wins."""
    merged: dict[str, Any] = {"clusters": [], "contexts": [], "users": []}
    for p in paths:
        try:
            conf = yaml.safe_load(p.read_text(encoding="utf-8")) or {}
        except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
            raise ClusterAccessError(f"kubeconfig {p}: cannot read: {str(exc).splitlines()[0]}") from None
        if not isinstance(conf, Mapping):
            raise ClusterAccessError(f"kubeconfig {p}: not a kubeconfig (a mapping with clusters, contexts, users)")
        if conf.get("current-context") and not merged.get("current-context"):
            merged["current-context"] = conf["current-context"]
        for key in ("clusters", "contexts", "users"):
            have = {e.get("name") for e in merged[key]}
            for entry in conf.get(key) or []:
                if isinstance(entry, Mapping) and entry.get("name") not in have:
                    # Relative certificate paths are relative to the file that holds them.
                    merged[key].append(_absolute(dict(entry), key, p.parent))
    return merged


def _absolute(entry: dict[str, Any], key: str, base: Path) -> dict[str, Any]:
    inner = dict(entry.get(key[:-1]) or {})
    for f in ("certificate-authority", "client-certificate", "client-key", "tokenFile"):
        if isinstance(inner.get(f), str) and not Path(inner[f]).is_absolute():
            inner[f] = str(base / inner[f])
    return {**entry, key[:-1]: inner}


def _config(kubeconfig: str | None, context: str | None) -> Any:
    from lightkube import ConfigError, KubeConfig

    if kubeconfig:
        paths = [Path(kubeconfig).expanduser()]
    elif os.environ.get("KUBECONFIG"):
        paths = [Path(p).expanduser() for p in os.environ["KUBECONFIG"].split(os.pathsep) if p]
    else:
        paths = [Path("~/.kube/config").expanduser()]
    found = [p for p in paths if p.is_file()]
    try:
        if not found:
            if kubeconfig is None and "KUBERNETES_SERVICE_HOST" in os.environ and context is None:
                return KubeConfig.from_service_account().get()  # inside a pod, as kubectl does
            raise ClusterAccessError(f"no kubeconfig at {os.pathsep.join(str(p) for p in paths)} "
                                     "(use --kubeconfig or KUBECONFIG)")
        return KubeConfig.from_dict(_merge_kubeconfigs(found), fname=found[0]).get(context)
    except (ConfigError, KeyError, TypeError, AttributeError) as exc:
        what = f"{exc.args[0]!s} is not defined" if isinstance(exc, KeyError) else str(exc) or type(exc).__name__
        raise ClusterAccessError(f"kubeconfig {found[0] if found else ''}: {what}") from None


@functools.cache
def _lightkube_resource(r: Resource) -> Any:
    """One generic (dict) resource class per kind, created once: lightkube keeps a process-wide registry."""
    from lightkube.generic_resource import create_global_resource, create_namespaced_resource

    make = create_namespaced_resource if r.namespaced else create_global_resource
    return make(r.group, r.version, r.kind, r.plural, verbs=["list", "global_list"])


def _failure(source: str, server: str, r: Resource, exc: Exception) -> ClusterAccessError:
    import httpx2

    url = f"/{'apis/' + r.group if r.group else 'api'}/{r.version}/{r.plural}"
    if isinstance(exc, httpx2.HTTPStatusError):
        code = exc.response.status_code
        try:
            message = str(exc.response.json().get("message") or "")
        except ValueError:
            message = exc.response.text.strip()[:200]
        if code == 401:
            return ClusterAccessError(f"{source}: GET {url}: 401 Unauthorized: the server rejected the credentials "
                                      "of the kubeconfig's user")
        if code == 403:
            return ClusterAccessError(f"{source}: GET {url}: 403 Forbidden: {message or 'forbidden'} "
                                      f"(podplan needs list on {r.plural} in every namespace)")
        return ClusterAccessError(f"{source}: GET {url}: {code}: {message or exc.response.reason_phrase}")
    detail = str(exc) or type(exc).__name__
    return ClusterAccessError(f"{source}: cannot connect to the API server {server}: {detail}")


def read_cluster(kubeconfig: str | None = None, context: str | None = None, page_size: int = PAGE_SIZE) -> LiveRead:
    """List every kind podplan reads, in every namespace, from the kubeconfig's context (default: its current one;
    the file: `kubeconfig`, else $KUBECONFIG, else ~/.kube/config)."""
    import httpx2
    from lightkube import Client, ConfigError

    config = _config(kubeconfig, context)
    source = f"cluster:{config.context_name}"
    docs: list[Doc] = []
    try:
        client = Client(config)
    except (ConfigError, AssertionError, OSError, ValueError) as exc:
        raise ClusterAccessError(f"{source}: kubeconfig: {str(exc) or 'the context has no user'}") from None
    with client:
        for r in RESOURCES:
            try:
                items = list(client.list(_lightkube_resource(r), namespace="*" if r.namespaced else None,
                                         chunk_size=page_size))
            except httpx2.HTTPStatusError as exc:
                if r.optional and exc.response.status_code == 404:
                    continue
                raise _failure(source, config.cluster.server, r, exc) from None
            except (httpx2.HTTPError, ConfigError, OSError) as exc:
                raise _failure(source, config.cluster.server, r, exc) from None
            for item in items:
                # List items come without kind and apiVersion; the loader needs both, as kubectl get adds them.
                docs.append(Doc({"apiVersion": r.api_version, "kind": r.kind, **dict(item)}, source, len(docs)))
    return LiveRead(docs, config.context_name, config.namespace)
