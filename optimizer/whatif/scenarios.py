"""The scenarios file of `podplan whatif` (apiVersion podplan.io/v1alpha1, kind Scenarios), read and checked.

A malformed file is bad input: one line naming the file, the scenario and the field (ScenariosError, exit 2),
before any work. What a well-formed scenario refers to (a workload, nodes a selector should match, the
manifests or scheduler configuration it names) is checked per scenario when it runs: a scenario that cannot
be applied is one row with its error, and the others still run (optimizer.whatif.run).

Generators are expanded against each cluster of the run (`expand`): `removeNodes.eachValueOf: KEY` is one
scenario per value of the node label KEY in that cluster, named `GENERATOR/VALUE`.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import yaml

from ...models.errors import InputError, PodplanError, Where, describe_value, printable
from ...models.objects import Cluster
from ...models.parse import Ctx, parse_label_selector
from ...models.selectors import LabelSelector

API_VERSION = "podplan.io/v1alpha1"
KIND = "Scenarios"
SCALABLE = ("Deployment", "ReplicaSet", "StatefulSet", "Job")
MAX_ADDED_NODES = 10_000  # per scenario: a typo (40000 for 40) would otherwise build a model nobody wants
TOP_FIELDS = ("apiVersion", "kind", "scenarios", "generators")
SCENARIO_FIELDS = ("name", "removeNodes", "addNodes", "scale", "addManifests", "schedulerConfig")
REMOVE_FIELDS = ("selector", "count", "eachValueOf", "largestCountThatPlacesAll")
ADD_FIELDS = ("like", "count")
SCALE_FIELDS = ("workload", "replicas")


class ScenariosError(PodplanError):
    """The scenarios file is malformed: `FILE: scenario NAME (scenarios[i]): FIELD: what is wrong`."""


@dataclass(frozen=True)
class RemoveNodes:
    """Nodes to take away. `selector` picks them (None with eachValueOf alone: every node); `count`: only that
    many of them, the least-requested first (by cpu, then memory, then name: the ones a person drains first);
    `largest`: the largest count, in the same order, whose optimum still places every pod the base places;
    `each_value_of`: generators only, one scenario per value of the label."""

    selector: LabelSelector | None = None
    count: int | None = None
    largest: bool = False
    each_value_of: str = ""


@dataclass(frozen=True)
class AddNodes:
    """`count` copies of the first node (by name) the `like` selector matches, named NODE-whatif-1, -2, ..."""

    like: LabelSelector
    count: int


@dataclass(frozen=True)
class Scale:
    """The workload ("Kind/namespace/name") runs `replicas` pods."""

    workload: str
    replicas: int


@dataclass(frozen=True)
class Scenario:
    """One what-if, as the file states it. `manifests` and `scheduler_config` are paths resolved against the
    scenarios file's folder. A scenario with no operation is the base cluster itself (a baseline row).

    Extension point: the questions of the capacity commands (how many more of a pod fit; which nodes to
    provision) would be one more optional field here, parsed in `_scenario` and answered in
    optimizer.whatif.run.answer on the scenario's cluster, with their own columns in the row."""

    name: str
    index: str  # "scenarios[2]" or "generators[0]": where it is in the file
    remove: RemoveNodes | None = None
    add: AddNodes | None = None
    scale: Scale | None = None
    manifests: tuple[str, ...] = ()
    scheduler_config: str = ""
    generator: str = ""  # the generator's name when expanded from one

    @property
    def what(self) -> str:
        """A short description of the operations, for the table and the report."""
        parts = []
        if self.remove is not None:
            r = self.remove
            sel = _describe(r.selector)
            if r.each_value_of:
                parts.append(f"remove nodes {sel}")
            elif r.largest:
                parts.append(f"remove most of {sel}")
            else:
                parts.append(f"remove {r.count if r.count is not None else 'all'} of {sel}")
        if self.add is not None:
            parts.append(f"add {self.add.count} like {_describe(self.add.like)}")
        if self.scale is not None:
            parts.append(f"scale {self.scale.workload} to {self.scale.replicas}")
        if self.manifests:
            parts.append("add " + ", ".join(Path(m).name for m in self.manifests))
        if self.scheduler_config:
            parts.append(f"scheduler config {Path(self.scheduler_config).name}")
        return "; ".join(parts) or "base cluster"

    @property
    def needs_documents(self) -> bool:
        """Applied to the input's documents (re-read), not to the parsed cluster: scale and addManifests."""
        return self.scale is not None or bool(self.manifests)


@dataclass(frozen=True)
class ScenarioFile:
    path: str
    scenarios: tuple[Scenario, ...]  # the file's order: scenarios, then generators (unexpanded)


def _describe(sel: LabelSelector | None) -> str:
    if sel is None:
        return "all nodes"
    parts = [f"{k}={v}" for k, v in sel.match_labels]
    parts += [f"{r.key} {r.operator} ({','.join(r.values)})" if r.values else f"{r.key} {r.operator}"
              for r in sel.match_expressions]
    return ",".join(parts) or "all nodes"


class _At:
    """Where a check is: the file and the scenario, for one-line errors."""

    def __init__(self, file: str, index: str = "", name: str = "") -> None:
        self.file, self.index, self.name = file, index, name

    def fail(self, field: str, message: str) -> ScenariosError:
        head = printable(self.file)
        if self.index:
            head += f": scenario {printable(self.name)} ({self.index})" if self.name else f": {self.index}"
        return ScenariosError(f"{head}: {printable(field)}: {message}" if field else f"{head}: {message}")


def _mapping(at: _At, value: Any, field: str, known: tuple[str, ...]) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise at.fail(field, f"must be a mapping, not {describe_value(value)}")
    for key in value:
        if key not in known:
            raise at.fail(f"{field}.{key}" if field else str(key),
                          f"unknown field (expected one of {', '.join(known)})")
    return value


def _count(at: _At, value: Any, field: str, least: int, most: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < least or (most is not None and value > most):
        bound = f"≥ {least}" if most is None else f"from {least} to {most}"
        raise at.fail(field, f"must be an integer {bound}, not {describe_value(value)}")
    return value


def _text(at: _At, value: Any, field: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise at.fail(field, f"must be a non-empty string, not {describe_value(value)}")
    return value


def _selector(at: _At, value: Any, field: str) -> LabelSelector:
    if value is None:
        raise at.fail(field, "must be a label selector (matchLabels, matchExpressions), not null")
    try:
        sel = parse_label_selector(Ctx(Where(at.file, None)), value, field)
    except InputError as exc:
        raise at.fail(exc.field, exc.message) from None
    assert sel is not None
    return sel


def _remove(at: _At, value: Any, generator: bool) -> RemoveNodes:
    raw = _mapping(at, value, "removeNodes", REMOVE_FIELDS)
    selector = _selector(at, raw["selector"], "removeNodes.selector") if "selector" in raw else None
    count = _count(at, raw["count"], "removeNodes.count", 1) if "count" in raw else None
    largest = raw.get("largestCountThatPlacesAll", False)
    if not isinstance(largest, bool):
        raise at.fail("removeNodes.largestCountThatPlacesAll", f"must be true or false, not {describe_value(largest)}")
    each = _text(at, raw["eachValueOf"], "removeNodes.eachValueOf") if "eachValueOf" in raw else ""
    if each and not generator:
        raise at.fail("removeNodes.eachValueOf", "makes one scenario per value: it belongs under generators")
    if largest and count is not None:
        raise at.fail("removeNodes.count", "not with largestCountThatPlacesAll, which searches the count")
    if each and (largest or count is not None):
        raise at.fail("removeNodes.eachValueOf", "not with count or largestCountThatPlacesAll")
    if selector is None and not each:
        raise at.fail("removeNodes.selector", "required (which nodes to remove)")
    if generator and not (each or largest):
        raise at.fail("removeNodes", "a generator needs eachValueOf or largestCountThatPlacesAll "
                                     "(a fixed what-if goes under scenarios)")
    return RemoveNodes(selector, count, largest, each)


def _scenario(at: _At, raw: Any, base: Path, generator: bool) -> Scenario:
    if isinstance(raw, dict) and isinstance(raw.get("name"), str):
        at.name = raw["name"]  # named in every error below, the unknown-field one included
    raw = _mapping(at, raw, "", SCENARIO_FIELDS)
    name = _text(at, raw.get("name"), "name")
    remove = _remove(at, raw["removeNodes"], generator) if "removeNodes" in raw else None
    if generator and remove is None:
        raise at.fail("removeNodes", "required in a generator (eachValueOf or largestCountThatPlacesAll)")
    add = None
    if "addNodes" in raw:
        a = _mapping(at, raw["addNodes"], "addNodes", ADD_FIELDS)
        if "like" not in a:
            raise at.fail("addNodes.like", "required (a selector of the node to copy)")
        if "count" not in a:
            raise at.fail("addNodes.count", "required (how many copies)")
        add = AddNodes(_selector(at, a["like"], "addNodes.like"),
                       _count(at, a["count"], "addNodes.count", 1, MAX_ADDED_NODES))
    scale = None
    if "scale" in raw:
        s = _mapping(at, raw["scale"], "scale", SCALE_FIELDS)
        workload = _text(at, s.get("workload"), "scale.workload")
        parts = workload.split("/")
        if len(parts) != 3 or not all(parts) or parts[0] not in SCALABLE:
            raise at.fail("scale.workload", f"must be Kind/namespace/name with Kind one of {', '.join(SCALABLE)}, "
                                            f"not {describe_value(workload)}")
        if "replicas" not in s:
            raise at.fail("scale.replicas", "required")
        scale = Scale(workload, _count(at, s["replicas"], "scale.replicas", 0))
    manifests: tuple[str, ...] = ()
    if "addManifests" in raw:
        value = raw["addManifests"]
        items = value if isinstance(value, list) else [value]
        if not items:
            raise at.fail("addManifests", "must name at least one file")
        manifests = tuple(str(base / _text(at, v, f"addManifests[{i}]" if isinstance(value, list) else "addManifests"))
                          for i, v in enumerate(items))
    config = str(base / _text(at, raw["schedulerConfig"], "schedulerConfig")) if "schedulerConfig" in raw else ""
    return Scenario(name, at.index, remove, add, scale, manifests, config, name if generator else "")


def parse_scenarios(body: Any, path: str) -> ScenarioFile:
    """A decoded scenarios document; paths in it are relative to `path`'s folder."""
    at = _At(path)
    raw = _mapping(at, body, "", TOP_FIELDS)
    if raw.get("apiVersion") != API_VERSION:
        raise at.fail("apiVersion", f"must be {API_VERSION}, not {describe_value(raw.get('apiVersion'))}")
    if raw.get("kind") != KIND:
        raise at.fail("kind", f"must be {KIND}, not {describe_value(raw.get('kind'))}")
    base = Path(path).parent
    out: list[Scenario] = []
    for section, generator in (("scenarios", False), ("generators", True)):
        items = raw.get(section) or []
        if not isinstance(items, list):
            raise at.fail(section, f"must be a list, not {describe_value(items)}")
        for i, item in enumerate(items):
            out.append(_scenario(_At(path, f"{section}[{i}]"), item, base, generator))
    if not out:
        raise at.fail("scenarios", "no scenarios and no generators: nothing to answer")
    seen: dict[str, str] = {}
    for s in out:
        if s.name in seen:
            raise _At(path, s.index, s.name).fail("name", f"used twice (also {seen[s.name]})")
        seen[s.name] = s.index
    return ScenarioFile(path, tuple(out))


def load_scenarios(path: str) -> ScenarioFile:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ScenariosError(f"{printable(path)}: cannot read: {exc}") from None
    try:
        docs = [d for d in yaml.safe_load_all(text) if d is not None]
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark else ""
        raise ScenariosError(f"{printable(path)}: not valid YAML{where}: "
                             f"{getattr(exc, 'problem', None) or exc}") from None
    if len(docs) != 1:
        raise ScenariosError(f"{printable(path)}: must hold exactly one {KIND} document, found {len(docs)}")
    return parse_scenarios(docs[0], path)


def expand(scenarios: tuple[Scenario, ...], cluster: Cluster) -> tuple[Scenario, ...]:
    """The scenarios to run on `cluster`, in the file's order, each eachValueOf generator replaced by one
    scenario per value of its label among the nodes (the generator's selector, if any, narrows them), sorted.
    A generator whose label no node carries stays one scenario, which fails with that error when it runs."""
    out: list[Scenario] = []
    for s in scenarios:
        r = s.remove
        if r is None or not r.each_value_of:
            out.append(s)
            continue
        key = r.each_value_of
        values = sorted({n.labels[key] for n in cluster.nodes
                         if key in n.labels and (r.selector is None or r.selector.matches(n.labels))})
        if not values:
            out.append(s)
            continue
        for v in values:
            base = r.selector or LabelSelector()
            sel = LabelSelector(base.match_labels + ((key, v),), base.match_expressions)
            out.append(replace(s, name=f"{s.name}/{v}", remove=RemoveNodes(sel)))
    return tuple(out)
