"""A local Kubernetes API server stub for the `--cluster` tests: http.server on 127.0.0.1 in a thread, speaking
the API's JSON as a real kube-apiserver does, for the real client podplan uses (lightkube).

What it serves, read-only:
- discovery: GET /api (APIVersions), /api/v1 and /apis/<group>/<version> (APIResourceList), /apis (APIGroupList);
- lists: /api/v1/<plural>, /apis/<group>/<version>/<plural> and their /namespaces/<ns>/ forms, as a `<Kind>List`
  whose items carry no kind nor apiVersion (the real server strips them), with metadata.resourceVersion and,
  when `limit` cuts the list, metadata.continue and remainingItemCount;
- bearer-token auth: 401 without the token; 403 for the resources named in `forbidden`; 405 on any non-GET;
  404 (a Status) for anything unknown, such as the PodGroup list when the CRD is not installed.
Every request is recorded (method, path with query) so a test can check that only GET was ever sent.
"""
from __future__ import annotations

import base64
import json
import ssl
import subprocess
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import yaml

# kind -> (group, version, plural, namespaced)
RESOURCES: dict[str, tuple[str, str, str, bool]] = {
    "Node": ("", "v1", "nodes", False),
    "Namespace": ("", "v1", "namespaces", False),
    "Pod": ("", "v1", "pods", True),
    "Service": ("", "v1", "services", True),
    "Deployment": ("apps", "v1", "deployments", True),
    "ReplicaSet": ("apps", "v1", "replicasets", True),
    "StatefulSet": ("apps", "v1", "statefulsets", True),
    "DaemonSet": ("apps", "v1", "daemonsets", True),
    "Job": ("batch", "v1", "jobs", True),
    "PodDisruptionBudget": ("policy", "v1", "poddisruptionbudgets", True),
    "PriorityClass": ("scheduling.k8s.io", "v1", "priorityclasses", False),
    "PodGroup": ("scheduling.x-k8s.io", "v1alpha1", "podgroups", True),
}
TOKEN = "stub-token"


def status(code: int, reason: str, message: str) -> dict[str, Any]:
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": message,
            "reason": reason, "code": code}


@dataclass
class KubeStub:
    """The objects served, keyed by kind; `forbidden` holds plurals (e.g. "pods") answered 403."""

    objects: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    forbidden: set[str] = field(default_factory=set)
    with_pod_group_crd: bool = False
    requests: list[tuple[str, str]] = field(default_factory=list)
    resource_version: int = 4242

    @classmethod
    def of(cls, manifests: Iterable[Mapping[str, Any]], **kw: Any) -> "KubeStub":
        stub = cls(**kw)
        for m in manifests:
            stub.objects.setdefault(m["kind"], []).append(dict(m))
        return stub

    # ------------------------------------------------------------------------------------------- routing

    def served(self) -> dict[str, tuple[str, str, str, bool]]:
        return {k: r for k, r in RESOURCES.items() if k != "PodGroup" or self.with_pod_group_crd}

    def answer(self, method: str, target: str, auth: str | None) -> tuple[int, dict[str, Any]]:
        self.requests.append((method, target))
        url = urlsplit(target)
        if method != "GET":
            return 405, status(405, "MethodNotAllowed", f"the stub is read-only: {method} is not allowed")
        if auth != f"Bearer {TOKEN}":
            return 401, status(401, "Unauthorized", "Unauthorized")
        parts = [p for p in url.path.split("/") if p]
        query = {k: v[0] for k, v in parse_qs(url.query).items()}
        served = self.served()
        groups = sorted({(g, v) for g, v, _, _ in served.values() if g})
        if parts == ["api"]:
            return 200, {"kind": "APIVersions", "versions": ["v1"],
                         "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1"}]}
        if parts == ["apis"]:
            return 200, {"kind": "APIGroupList", "apiVersion": "v1", "groups": [
                {"name": g, "versions": [{"groupVersion": f"{g}/{v}", "version": v}],
                 "preferredVersion": {"groupVersion": f"{g}/{v}", "version": v}} for g, v in groups]}
        if parts[:1] == ["api"] and len(parts) >= 2:
            group, version, rest = "", parts[1], parts[2:]
        elif parts[:1] == ["apis"] and len(parts) >= 3:
            group, version, rest = parts[1], parts[2], parts[3:]
        else:
            return 404, status(404, "NotFound", "the server could not find the requested resource")
        kinds = {r[2]: (k, r) for k, r in served.items() if r[0] == group and r[1] == version}
        if not kinds:
            return 404, status(404, "NotFound", "the server could not find the requested resource")
        if not rest:
            return 200, {"kind": "APIResourceList", "apiVersion": "v1",
                         "groupVersion": f"{group}/{version}" if group else version,
                         "resources": [{"name": plural, "singularName": "", "namespaced": r[3], "kind": k,
                                        "verbs": ["get", "list", "watch"]} for plural, (k, r) in kinds.items()]}
        namespace = None
        if len(rest) == 3 and rest[0] == "namespaces":
            namespace, rest = rest[1], rest[2:]
        if len(rest) != 1 or rest[0] not in kinds:
            return 404, status(404, "NotFound", "the server could not find the requested resource")
        plural = rest[0]
        kind, (_, _, _, namespaced) = kinds[plural]
        if plural in self.forbidden:
            scope = f'in the namespace "{namespace}"' if namespace else "at the cluster scope"
            return 403, status(403, "Forbidden", f'{plural} is forbidden: User "system:serviceaccount:podplan:reader" '
                                                 f'cannot list resource "{plural}" in API group "{group}" {scope}')
        items = [self.strip(o) for o in self.objects.get(kind, [])
                 if namespace is None or o.get("metadata", {}).get("namespace", "default") == namespace]
        return 200, self.page(kind, group, version, items, query)

    @staticmethod
    def strip(obj: Mapping[str, Any]) -> dict[str, Any]:
        """Items of a list come without kind and apiVersion, as the real server sends them."""
        return {k: v for k, v in obj.items() if k not in ("kind", "apiVersion")}

    def page(self, kind: str, group: str, version: str, items: list[dict[str, Any]],
             query: Mapping[str, str]) -> dict[str, Any]:
        start = 0
        if query.get("continue"):
            start = json.loads(base64.urlsafe_b64decode(query["continue"]))["start"]
        limit = int(query.get("limit", 0) or 0)
        end = start + limit if limit else len(items)
        meta: dict[str, Any] = {"resourceVersion": str(self.resource_version)}
        if end < len(items):
            meta["continue"] = base64.urlsafe_b64encode(json.dumps({"start": end}).encode()).decode()
            meta["remainingItemCount"] = len(items) - end
        return {"kind": f"{kind}List", "apiVersion": f"{group}/{version}" if group else version, "metadata": meta,
                "items": items[start:end]}

    # --------------------------------------------------------------------------------------------- server

    def start(self, tls: tuple[Path, Path] | None = None) -> "Running":
        """Serve on 127.0.0.1 (a free port) in a thread; over HTTPS with tls=(certificate, key)."""
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def handle_any(self) -> None:
                code, body = stub.answer(self.command, self.path, self.headers.get("Authorization"))
                data = json.dumps(body).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = handle_any

            def log_message(self, *args: Any) -> None:  # quiet: pytest shows the test's own output only
                pass

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        if tls is not None:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(str(tls[0]), str(tls[1]))
            server.socket = context.wrap_socket(server.socket, server_side=True)
        thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        thread.start()
        return Running(server, thread)


@dataclass
class Running:
    server: ThreadingHTTPServer
    thread: threading.Thread

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        scheme = "https" if isinstance(self.server.socket, ssl.SSLSocket) else "http"
        return f"{scheme}://{host}:{port}"

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=5)


def kubeconfig(path: Path, server: str, token: str | None = TOKEN, namespace: str | None = None,
               context: str = "stub", ca: Path | None = None) -> Path:
    """A kubeconfig whose current context points at `server` with `token` (and trusts the certificate `ca`)."""
    ctx: dict[str, Any] = {"cluster": "stub", "user": "reader"}
    cluster: dict[str, Any] = {"server": server}
    if ca is not None:
        cluster["certificate-authority-data"] = base64.b64encode(ca.read_bytes()).decode()
    if namespace:
        ctx["namespace"] = namespace
    user: dict[str, Any] = {"token": token} if token else {}
    path.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": context,
        "clusters": [{"name": "stub", "cluster": cluster}],
        "contexts": [{"name": context, "context": ctx}],
        "users": [{"name": "reader", "user": user}],
    }))
    return path


def self_signed(directory: Path) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 and its key, made by the openssl command."""
    cert, key = directory / "stub.crt", directory / "stub.key"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(cert),
                    "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
                   check=True, capture_output=True)
    return cert, key


if __name__ == "__main__":  # serve manifests by hand: python tests/kube_stub.py KUBECONFIG_OUT FILE... (Ctrl-C stops)
    import sys
    import time

    docs = [d for f in sys.argv[2:] for d in yaml.safe_load_all(Path(f).read_text()) if d]
    items = [i for d in docs for i in (d["items"] if d.get("kind") == "List" else [d])]
    running = KubeStub.of(items).start()
    kubeconfig(Path(sys.argv[1]), running.url, context="kind-shop")
    print(f"serving {len(items)} objects at {running.url}; kubeconfig {sys.argv[1]}", flush=True)
    try:
        while True:
            time.sleep(1)
    except KeyboardInterrupt:
        running.stop()
