"""The benchmark family's shapes (models.shapes): deterministic, loadable as a valid state, the knobs honoured,
and printed by `podplan generate --shape`."""
from __future__ import annotations

import io
from collections import Counter
from functools import cache

import pytest
from click.testing import CliRunner

from podplan.cli import main
from podplan.models.generate import dump_yaml
from podplan.models.loader import parse_documents
from podplan.models.objects import Cluster
from podplan.models.shapes import BENCH_5000, HELD_OUT, SHAPES, TUNE, GeneratorError, shape_instance
from podplan.optimizer.verify import verify

ZONE = "topology.kubernetes.io/zone"


@cache
def cluster(name: str, nodes: int = 60, seed: int = 1) -> Cluster:
    return parse_documents(shape_instance(name, nodes, seed).manifests, f"shape-{name}")


def yaml_text(name: str, nodes: int, seed: int) -> str:
    out = io.StringIO()
    dump_yaml(shape_instance(name, nodes, seed).manifests, out)
    return out.getvalue()


def test_the_family_has_24_shapes_split_into_tune_and_held_out_and_5_for_5000_nodes() -> None:
    assert len(SHAPES) >= 20 and set(TUNE) | set(HELD_OUT) == set(SHAPES) and not set(TUNE) & set(HELD_OUT)
    assert len(BENCH_5000) == 5 and set(BENCH_5000) <= set(SHAPES)


def test_same_shape_and_seed_give_the_same_bytes_and_another_seed_another_cluster() -> None:
    assert yaml_text("anti-mixed-50", 15, 3) == yaml_text("anti-mixed-50", 15, 3)
    assert yaml_text("anti-mixed-50", 15, 3) != yaml_text("anti-mixed-50", 15, 4)


@pytest.mark.parametrize("name", list(SHAPES))
def test_every_shape_loads_with_ten_pending_pods_per_node_and_a_valid_running_state(name: str) -> None:
    c = cluster(name)
    assert len(c.nodes) == 60
    # ten per node, a few more when a replica meant to run found no room; fewer when replicas are capped at 8
    assert 600 <= len(c.pending) <= 630 or name == "small-replicas" and len(c.pending) >= 450
    assert verify(c, {}).ok  # the running pods (agents, caches, running replicas) break no rule


def test_the_world_is_eks_like_three_zones_thirty_percent_spot_and_a_tainted_gpu_pool() -> None:
    c = cluster("eks-default", nodes=300)
    assert Counter(n.labels[ZONE] for n in c.nodes).keys() == {"us-east-1a", "us-east-1b", "us-east-1c"}
    spot = sum(n.labels["eks.amazonaws.com/capacityType"] == "SPOT" for n in c.nodes) / len(c.nodes)
    assert 0.2 < spot < 0.4
    gpu = [n for n in c.nodes if n.labels.get("nvidia.com/gpu.present") == "true"]
    assert len(gpu) == 6 and all(any(t.key == "nvidia.com/gpu" for t in n.taints) for n in gpu)
    agents = Counter(p.node_name for p in c.pods if p.namespace in ("kube-system", "logging", "monitoring"))
    assert set(agents.values()) <= {4, 5}


def share(c: Cluster, has: object) -> float:
    pods = list(c.pending)
    return sum(1 for p in pods if has(p)) / len(pods)  # type: ignore[operator]


def test_the_knobs_decide_what_the_pending_pods_ask_for() -> None:
    assert share(cluster("no-anti"), lambda p: p.affinity.anti_preferred) == 0
    assert share(cluster("anti-host-50"), lambda p: p.affinity.anti_preferred) > \
        share(cluster("eks-default"), lambda p: p.affinity.anti_preferred)
    zone_anti = [t.term.topology_key for p in cluster("anti-zone-40").pending for t in p.affinity.anti_preferred]
    assert zone_anti and set(zone_anti) == {ZONE}
    anyway = {c.when_unsatisfiable for p in cluster("spread-anyway").pending for c in p.spread_constraints}
    assert anyway == {"ScheduleAnyway"}
    # (a 2 % GPU pool needs a few hundred nodes to hold more than one node)
    assert any("podplan.io/gpu-milli" in p.requests for p in cluster("gpu-shared", nodes=300).pending)
    assert any("nvidia.com/gpu" in p.requests for p in cluster("gpu-whole", nodes=300).pending)
    assert len({p.priority for p in cluster("one-priority").pending}) == 1
    assert len({p.priority for p in cluster("eks-default").pending}) == 5


def test_broken_running_pods_already_share_a_node_against_their_preferred_anti_affinity() -> None:
    c = cluster("broken-running")
    stacked = Counter((p.namespace, p.labels.get("app.kubernetes.io/name"), p.node_name) for p in c.pods
                      if p.affinity.anti_preferred)
    assert max(stacked.values()) > 1


def test_podplan_generate_prints_a_shape_and_names_the_shapes_when_it_does_not_know_one() -> None:
    ok = CliRunner().invoke(main, ["generate", "--shape", "spread-heavy", "--nodes", "9", "--seed", "2"])
    assert ok.exit_code == 0 and ok.output == yaml_text("spread-heavy", 9, 2)
    bad = CliRunner().invoke(main, ["generate", "--shape", "nope", "--nodes", "9"])
    assert bad.exit_code == 2 and "unknown shape \"nope\"" in bad.output and "eks-default" in bad.output
    with pytest.raises(GeneratorError):
        shape_instance("eks-default", 2)


def test_a_fresh_interpreter_with_another_hash_seed_prints_the_same_shape() -> None:
    import hashlib
    import subprocess
    import sys
    from pathlib import Path

    code = ("import hashlib, io; from models.generate import dump_yaml; from models.shapes import shape_instance; "
            "out = io.StringIO(); dump_yaml(shape_instance('prefs-everywhere', 20, 3).manifests, out); "
            "print(hashlib.sha256(out.getvalue().encode()).hexdigest())")
    out = subprocess.run([sys.executable, "-c", code], cwd=Path(__file__).resolve().parents[1], capture_output=True,
                         text=True, check=True, env={"PYTHONHASHSEED": "4242", "PATH": "/usr/bin:/bin"})
    assert out.stdout.strip() == hashlib.sha256(yaml_text("prefs-everywhere", 20, 3).encode()).hexdigest()
