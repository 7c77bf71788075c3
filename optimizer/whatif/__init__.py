"""`podplan whatif`: many what-if scenarios, each applied to the same base cluster(s) and answered on its own
(greedy and the optimum, verified), on a local process pool or on Ray.

- scenarios: the scenarios file (format, validation, generators).
- apply: a scenario applied to a base cluster.
- run: one scenario on one cluster -> one row (the shared pipeline, runner and verifier).
- engines: local process pool and Ray tasks; the same rows on both.
- render, report: the table, the JSON document, the HTML report.

This module is the driver the command calls: it reads the clusters (`load_bases`), prepares the tasks
(`prepare`: generators expanded per cluster, the files scenarios name read here, so that a worker needs
nothing but its task) and runs them (`run`).
"""
from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ...models.errors import PodplanError
from ...models.loader import cluster_of, read_paths
from ...models.parse import Doc
from .apply import Base
from .engines import Outcome, run_local, run_ray
from .run import Settings, Task
from .scenarios import ScenarioFile, expand, load_scenarios

__all__ = ["Base", "Settings", "Task", "Outcome", "load_scenarios", "load_bases", "prepare", "run", "Source"]

CONTEXT_PREFIX = "context:"


@dataclass(frozen=True)
class Source:
    """One cluster of the run: files/directories, or a kubeconfig context read live (GET requests only)."""

    name: str
    paths: tuple[str, ...] = ()
    context: str | None = None  # with live: the context (None: the kubeconfig's current one)
    live: bool = False


def fleet_sources(values: Sequence[str]) -> list[Source]:
    """--fleet values: a file or directory each, or `context:NAME` for a kubeconfig context."""
    out = []
    for v in values:
        if v.startswith(CONTEXT_PREFIX):
            name = v[len(CONTEXT_PREFIX):]
            if not name:
                raise PodplanError(f"--fleet {v}: the context name is missing (context:NAME)")
            out.append(Source(name, context=name, live=True))
        else:
            out.append(Source(v.rstrip("/") or v, paths=(v,)))
    names = [s.name for s in out]
    for n in names:
        if names.count(n) > 1:
            raise PodplanError(f"--fleet {n}: given twice")
    return out


def load_bases(sources: Sequence[Source], *, keep_docs: bool, strict: bool = False, kubeconfig: str | None = None,
               warn: Callable[[str], None] = lambda line: None) -> list[Base]:
    """Each source read and parsed once; bad input is an error (exit 2) before any scenario runs."""
    bases = []
    for s in sources:
        docs: list[Doc] = []
        names: list[str] = []
        if s.live:
            from ...models.live import read_cluster

            live = read_cluster(kubeconfig, s.context)
            docs, names = live.docs, [f"cluster:{live.context}"]
        docs = docs + (read_paths(s.paths) if s.paths else [])
        names += list(s.paths)
        cluster = cluster_of(docs, names, unknown_fields_fatal=strict)
        for w in cluster.warnings:
            warn(f"{s.name}: {w}" if len(sources) > 1 else w)
        bases.append(Base(s.name, cluster, tuple(docs) if keep_docs else None, tuple(names)))
    return bases


def prepare(bases: Sequence[Base], scenarios: ScenarioFile) -> list[Task]:
    """One task per cluster x scenario (generators expanded against each cluster), cluster by cluster in the
    file's order; the manifests and scheduler configurations the scenarios name are read once, here."""
    from ...models.schedulerconfig import load_scheduler_config
    from ..profiles import profiles_from

    manifests: dict[str, tuple[tuple[Doc, ...], str]] = {}
    configs: dict[str, tuple[Any, str]] = {}

    def read_manifests(paths: tuple[str, ...]) -> tuple[tuple[Doc, ...], str]:
        docs: list[Doc] = []
        for p in paths:
            if p not in manifests:
                try:
                    manifests[p] = (tuple(read_paths([p])), "")
                except PodplanError as exc:
                    manifests[p] = ((), f"addManifests: {exc}")
            got, error = manifests[p]
            if error:
                return (), error
            docs += got
        return tuple(docs), ""

    def read_config(path: str) -> tuple[Any, str]:
        if path not in configs:
            try:
                config = load_scheduler_config(path)
                profiles_from(config)  # what the worker will build: its errors are the scenario's
                configs[path] = (config, "")
            except PodplanError as exc:
                configs[path] = (None, f"schedulerConfig: {exc}")
        return configs[path]

    tasks: list[Task] = []
    for i, base in enumerate(bases):
        for s in expand(scenarios.scenarios, base.cluster):
            docs, error = read_manifests(s.manifests) if s.manifests else ((), "")
            config, config_error = read_config(s.scheduler_config) if s.scheduler_config else (None, "")
            tasks.append(Task(len(tasks), i, s, docs, config, error or config_error))
    return tasks


def default_parallel() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def run(bases: Sequence[Base], tasks: Sequence[Task], settings: Settings, *, engine: str = "local",
        parallel: int | None = None, ray_address: str | None = None,
        on_row: Callable[[dict[str, Any]], None] = lambda row: None) -> Outcome:
    parallel = parallel or default_parallel()
    if engine == "ray":
        return run_ray(bases, tasks, settings, parallel, ray_address, on_row)
    return run_local(bases, tasks, settings, parallel, on_row)
