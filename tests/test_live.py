"""`--cluster`: the live read through the real client (lightkube) against tests/kube_stub.py, a local API server
stub on 127.0.0.1; and kubectl's plugin conventions (-n/-A/-l scope, options before or after the subcommand,
`kubectl podplan` as the program name, -o wide, the krew manifest)."""
from __future__ import annotations

import json
import shutil
import socket
import sys
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from kube_stub import KubeStub, kubeconfig, self_signed
from podplan.cli import main
from podplan.models.errors import InputError
from podplan.models.live import read_cluster
from podplan.models.loader import load_paths
from podplan.models.parse import collect
from podplan.models.scope import parse_selector
from podplan.models.workloads import build_cluster

ROOT = Path(__file__).resolve().parent.parent
DUMP = ROOT / "instances" / "cluster-dump.yaml"
DUMP_ITEMS: list[dict[str, Any]] = yaml.safe_load(DUMP.read_text())["items"]


def runner() -> CliRunner:
    try:
        return CliRunner(mix_stderr=False)  # type: ignore[call-arg]  # click < 8.2 mixes streams by default
    except TypeError:
        return CliRunner()


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Any]:
    """served(items, **stub options) -> (stub, kubeconfig path); every server started is stopped after the test."""
    running = []

    def start(items: list[dict[str, Any]] = DUMP_ITEMS, token: str | None = "stub-token",
              namespace: str | None = None, **kw: Any) -> tuple[KubeStub, Path]:
        stub = KubeStub.of(items, **kw)
        run = stub.start()
        running.append(run)
        return stub, kubeconfig(tmp_path / f"kubeconfig-{len(running)}", run.url, token, namespace)

    yield start
    for run in running:
        run.stop()


def podplan(*args: str, kubeconfig: Path | None = None) -> Any:
    env = {"KUBECONFIG": str(kubeconfig)} if kubeconfig else {}
    return runner().invoke(main, list(args), env=env, catch_exceptions=False)


# ------------------------------------------------------------------------------------------------ the read


def test_a_full_read_equals_reading_the_same_objects_from_a_yaml_file(served: Any) -> None:
    stub, config = served()
    live = build_cluster(collect(read_cluster(str(config)).docs))
    files = load_paths([str(DUMP)])
    assert replace(live, warnings=()) == replace(files, warnings=())
    assert len(live.warnings) == len(files.warnings)
    assert (podplan("validate", "--cluster", "-o", "json", kubeconfig=config).stdout
            == podplan("validate", str(DUMP), "-o", "json").stdout)


def test_lists_are_read_page_by_page_with_limit_and_continue(served: Any) -> None:
    stub, config = served()
    read = read_cluster(str(config), page_size=2)
    pods = [t for m, t in stub.requests if t.startswith("/api/v1/pods?")]
    n_pods = sum(1 for i in DUMP_ITEMS if i["kind"] == "Pod")
    assert len(pods) == (n_pods + 1) // 2 and all("limit=2" in t for t in pods)
    assert all("continue=" in t for t in pods[1:]) and "continue=" not in pods[0]
    assert sum(1 for d in read.docs if d.body["kind"] == "Pod") == n_pods


def test_objects_get_the_kind_and_apiversion_the_server_strips_from_list_items(served: Any) -> None:
    stub, config = served()
    docs = read_cluster(str(config)).docs
    deployment = next(d.body for d in docs if d.body["kind"] == "Deployment")
    assert deployment["apiVersion"] == "apps/v1"
    assert {d.file for d in docs} == {"cluster:stub"}


def test_the_context_namespace_is_read_and_default_when_unset(served: Any) -> None:
    _, with_ns = served(namespace="shop")
    _, without = served()
    assert read_cluster(str(with_ns)).namespace == "shop"
    assert read_cluster(str(without)).namespace == "default"


def test_files_given_beside_cluster_add_pending_pods_on_top(served: Any, tmp_path: Path) -> None:
    _, config = served()
    extra = tmp_path / "new.yaml"
    extra.write_text(yaml.safe_dump({
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "search", "namespace": "shop"},
        "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "search"}},
                 "template": {"metadata": {"labels": {"app": "search"}},
                              "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "100m"}}}]}}}}))
    alone = json.loads(podplan("solve", "--cluster", "-A", "-o", "json", kubeconfig=config).stdout)
    more = json.loads(podplan("solve", "--cluster", "-A", str(extra), "-o", "json", kubeconfig=config).stdout)
    search = [p["pod"] for p in more["placements"] if p["pod"].startswith("shop/search-")]
    assert len(search) == 2 and not any(p["pod"].startswith("shop/search-") for p in alone["placements"])


def test_an_absent_podgroup_crd_means_no_podgroups_and_a_present_one_is_read(served: Any) -> None:
    _, without = served()
    assert build_cluster(collect(read_cluster(str(without)).docs)).pod_groups == ()
    group = {"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup",
             "metadata": {"name": "train", "namespace": "ml"}, "spec": {"minMember": 2}}
    _, with_crd = served(DUMP_ITEMS + [group], with_pod_group_crd=True)
    groups = build_cluster(collect(read_cluster(str(with_crd)).docs)).pod_groups
    assert [(g.key, g.min_member) for g in groups] == [("ml/train", 2)]


def test_a_bad_object_from_the_api_gets_the_usual_one_line_naming_the_context(served: Any) -> None:
    bad = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "broken", "namespace": "default"},
           "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "lots"}}}]}}
    _, config = served(DUMP_ITEMS + [bad])
    r = podplan("validate", "--cluster", kubeconfig=config)
    assert r.exit_code == 2 and r.stdout == ""
    assert r.stderr.count("\n") == 1
    assert r.stderr.startswith("error: cluster:stub[") and "Pod/default/broken spec.containers[0].resources" in r.stderr


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("case, expected", [
    ("unreachable", "cannot connect to the API server http://127.0.0.1:"),
    ("no token", "401 Unauthorized"),
    ("wrong token", "401 Unauthorized"),
    ("pods forbidden", "GET /api/v1/pods: 403 Forbidden: pods is forbidden"),
    ("unknown context", "Context 'elsewhere' not found"),
], ids=["an unreachable server", "no token", "a wrong token", "a forbidden resource", "an unknown context"])
def test_access_failures_are_one_line_and_exit_2(served: Any, tmp_path: Path, case: str, expected: str) -> None:
    if case == "unreachable":
        config = kubeconfig(tmp_path / "dead", f"http://127.0.0.1:{closed_port()}")
    else:
        _, config = served(token={"no token": None, "wrong token": "guess"}.get(case, "stub-token"),
                           forbidden={"pods"} if case == "pods forbidden" else set())
    args = ["solve", "--cluster"] + (["--context", "elsewhere"] if case == "unknown context" else [])
    r = podplan(*args, kubeconfig=config)
    assert r.exit_code == 2 and r.stdout == ""
    assert r.stderr.count("\n") == 1 and r.stderr.startswith("error: ") and expected in r.stderr


@pytest.mark.skipif(shutil.which("openssl") is None, reason="needs the openssl command to make a certificate")
def test_https_with_the_kubeconfigs_certificate_authority_and_a_one_line_error_without_it(tmp_path: Path) -> None:
    cert, key = self_signed(tmp_path)
    run = KubeStub.of(DUMP_ITEMS).start(tls=(cert, key))
    try:
        trusted = kubeconfig(tmp_path / "trusted", run.url, ca=cert)
        untrusted = kubeconfig(tmp_path / "untrusted", run.url)
        assert run.url.startswith("https://127.0.0.1:")
        assert podplan("validate", "--cluster", "-o", "json", kubeconfig=trusted).stdout == \
            podplan("validate", str(DUMP), "-o", "json").stdout
        r = podplan("validate", "--cluster", kubeconfig=untrusted)
        assert r.exit_code == 2 and r.stderr.count("\n") == 1
        assert r.stderr.startswith("error: cluster:stub: cannot connect to the API server https://127.0.0.1:")
        assert "CERTIFICATE_VERIFY_FAILED" in r.stderr
    finally:
        run.stop()


def test_only_get_is_ever_sent_and_the_stub_refuses_writes(served: Any) -> None:
    stub, config = served()
    for args in (["validate"], ["simulate", "-A"], ["solve", "-A", "--time-limit", "2"], ["verify"], ["explain"],
                 ["compare", "--time-limit", "2"], ["rebalance", "--time-limit", "2"]):
        podplan(*args, "--cluster", kubeconfig=config)
    assert stub.requests and {m for m, _ in stub.requests} == {"GET"}
    assert stub.answer("POST", "/api/v1/namespaces/default/pods", "Bearer stub-token")[0] == 405


def test_kubeconfig_lists_in_the_environment_are_merged_the_first_file_winning(served: Any, tmp_path: Path) -> None:
    _, config = served(namespace="shop")
    other = tmp_path / "other"
    other.write_text(yaml.safe_dump({"current-context": "elsewhere", "clusters": [], "users": [],
                                     "contexts": [{"name": "elsewhere", "context": {"cluster": "x", "user": "y"}}]}))
    r = runner().invoke(main, ["validate", "--cluster"], env={"KUBECONFIG": f"{tmp_path / 'missing'}:{config}:{other}"})
    assert r.exit_code == 0, r.stderr


# ------------------------------------------------------------------------------------------------ the scope

PENDING = ["default/debug-shell", "shop/frontend-7f9c8d6b54-5gxdt", "shop/frontend-7f9c8d6b54-wsx62",
           "shop/report-backfill"]


def batch(result: Any) -> list[str]:
    doc = json.loads(result.stdout)
    return sorted(p["pod"] for p in doc["placements"] + doc["pending"])


@pytest.mark.parametrize("args, context_ns, expected, left_out", [
    ([], None, PENDING[:1], 3),
    ([], "shop", PENDING[1:], 1),
    (["-A"], "shop", PENDING, 0),
    (["-n", "shop"], None, PENDING[1:], 1),
    (["-A", "-l", "app=frontend"], None, PENDING[1:3], 2),
    (["-n", "shop", "-l", "app!=frontend"], None, PENDING[3:], 3),
], ids=["cluster default: the default namespace", "cluster default: the context's namespace",
        "-A: every namespace", "-n picks the namespace", "-l picks by label in every namespace",
        "-n and -l together"])
def test_the_scope_decides_which_pending_pods_are_placed(served: Any, args: list[str], context_ns: str | None,
                                                          expected: list[str], left_out: int) -> None:
    _, config = served(namespace=context_ns)
    r = podplan("simulate", "--cluster", *args, "-o", "json", kubeconfig=config)
    assert r.exit_code == 0, r.stderr
    assert batch(r) == expected
    if left_out:
        assert f"note: {left_out} pending pod(s) outside the scope" in r.stderr
    else:
        assert "outside the scope" not in r.stderr


def test_files_are_read_in_every_namespace_by_default() -> None:
    assert batch(podplan("simulate", str(DUMP), "-o", "json")) == PENDING


def test_the_scope_keeps_the_rest_of_the_cluster_counting() -> None:
    full = json.loads(podplan("simulate", str(DUMP), "-o", "json").stdout)
    shop = json.loads(podplan("simulate", str(DUMP), "-n", "shop", "-o", "json").stdout)
    assert [p for p in full["placements"] if p["pod"].startswith("shop/")] == shop["placements"]


@pytest.mark.parametrize("args", [
    ["-n", "shop", "--cluster", "simulate", "-o", "json"],
    ["simulate", "--cluster", "-n", "shop", "-o", "json"],
    ["--cluster", "simulate", "-n", "shop", "-o", "json"],
    ["-n", "default", "simulate", "--cluster", "-n", "shop", "-o", "json"],
], ids=["all before the subcommand", "all after it", "split", "after the subcommand wins"])
def test_options_are_accepted_before_or_after_the_subcommand(served: Any, args: list[str]) -> None:
    _, config = served()
    assert batch(podplan(*args, kubeconfig=config)) == PENDING[1:]


def test_rebalance_moves_only_pods_in_scope(served: Any) -> None:
    _, config = served()
    r = podplan("rebalance", "--cluster", "-n", "shop", "--drain", "k8s-worker-3", "-o", "json", kubeconfig=config)
    doc = json.loads(r.stdout)
    assert {"pod": "kube-system/metrics-server-6d94bc8694-qz4n7",
            "reason": "cannot leave k8s-worker-3: outside the scope (-n/-A/-l); the drain of k8s-worker-3 cannot "
                      "complete"} in doc["blocked"]
    assert all(e["pod"].startswith("shop/") for w in doc["waves"] for e in w["evictions"])


def test_all_namespaces_wins_over_a_namespace_as_in_kubectl(served: Any) -> None:
    _, config = served()
    assert batch(podplan("simulate", "--cluster", "-n", "shop", "-A", "-o", "json", kubeconfig=config)) == PENDING


@pytest.mark.parametrize("text, labels, matches", [
    ("app=web", {"app": "web"}, True),
    ("app==web", {"app": "db"}, False),
    ("app!=web", {}, True),
    ("tier in (a, b)", {"tier": "b"}, True),
    ("tier notin (a,b)", {"tier": "b"}, False),
    ("gpu", {"gpu": ""}, True),
    ("!gpu", {"gpu": "x"}, False),
    ("app=web,tier in (a),!canary,zone", {"app": "web", "tier": "a", "zone": "z"}, True),
    ("rank>3", {"rank": "4"}, True),
    ("example.com/team=x", {"example.com/team": "x"}, True),
    ("", {"any": "thing"}, True),
], ids=lambda v: repr(v) if isinstance(v, str) else None)
def test_the_selector_string_reads_as_kubectl_reads_it(text: str, labels: dict[str, str], matches: bool) -> None:
    assert parse_selector(text).matches(labels) is matches


@pytest.mark.parametrize("text", ["app in (a", "=web", "app=web,", "a b", "app=we$b", "rank>x"],
                         ids=["an unclosed parenthesis", "a missing key", "a trailing comma",
                              "two keys without an operator", "a value with $", "a comparison without an integer"])
def test_a_bad_selector_string_is_one_clear_error(text: str) -> None:
    with pytest.raises(InputError, match=r"^-l/--selector: "):
        parse_selector(text)


def test_a_bad_selector_on_the_command_line_exits_2_in_one_line() -> None:
    r = podplan("solve", str(DUMP), "-l", "app in (web")
    assert r.exit_code == 2 and r.stderr == "error: -l/--selector: 'app in (web': missing ')' after app in (\n"


# ------------------------------------------------------------------------------------------ plugin conventions


def test_run_as_kubectl_podplan_the_help_says_kubectl_podplan(monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(sys, "argv", ["/usr/local/bin/kubectl-podplan", "solve", "--help"])
    with pytest.raises(SystemExit):
        main.main()
    assert capsys.readouterr().out.startswith("Usage: kubectl podplan solve [OPTIONS] [FILES]...")


def test_wide_output_adds_a_row_per_node_with_its_requests() -> None:
    table = podplan("simulate", str(DUMP), "-o", "table").stdout
    wide = podplan("simulate", str(DUMP), "-o", "wide").stdout
    def timeless(text: str) -> list[str]:
        return [line for line in text.splitlines() if not line.startswith("time:")]

    assert timeless(wide)[:len(timeless(table))] == timeless(table)
    assert "NODE           ZONE         PODS (NEW)   CPU REQUESTED" in wide
    assert "k8s-worker-3   eu-west-1c   " in wide


@pytest.mark.parametrize("command", ["validate", "verify", "explain"])
def test_wide_is_accepted_where_output_is_and_is_the_table_elsewhere(command: str) -> None:
    wide = podplan(command, str(DUMP), "-o", "wide")
    assert wide.exit_code in (0, 1) and wide.stdout == podplan(command, str(DUMP), "-o", "table").stdout


def test_explain_answers_for_the_pending_pods_in_scope_only() -> None:
    r = podplan("explain", str(DUMP), "-l", "app=frontend", "-o", "json")
    assert sorted(p["pod"] for p in json.loads(r.stdout)["pods"]) == PENDING[1:3]


def test_the_krew_manifest_parses_and_names_podplan() -> None:
    manifest = yaml.safe_load((ROOT / "krew" / "podplan.yaml").read_text())
    assert manifest["apiVersion"] == "krew.googlecontainertools.github.com/v1alpha2"
    assert manifest["kind"] == "Plugin" and manifest["metadata"]["name"] == "podplan"
    assert manifest["spec"]["platforms"] and all(p["bin"].startswith("kubectl-podplan") for p in manifest["spec"]["platforms"])
