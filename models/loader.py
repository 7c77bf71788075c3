"""Reading manifests: files, directories (every *.yaml, *.yml, *.json inside, recursively, sorted, hidden
files and directories skipped) and `-` for stdin; multi-document YAML; JSON; `kind: List` dumps.
YAML is read with the safe loader only: the block YAML kubectl and generators write by models.blockyaml's line
reader, anything else by libyaml's C parser (when PyYAML has it) with the fast constructor of models.fastyaml;
no tags, no code. JSON through msgspec (a dependency of the --cluster client) when present.
"""
from __future__ import annotations

import gc
import json
import sys
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import yaml

from . import blockyaml, fastyaml
from .errors import InputError, Where
from .objects import Cluster
from .parse import Collected, Doc, collect
from .workloads import build_cluster

SUFFIXES = (".yaml", ".yml", ".json")

try:  # msgspec comes with lightkube (--cluster); it decodes JSON several times faster than the json module
    import msgspec.json as _msgspec_json
except ImportError:  # pragma: no cover - the standard library's decoder is the fallback
    _msgspec_json = None


def _expand(paths: Iterable[str]) -> list[str]:
    out: list[str] = []
    for p in paths:
        if p == "-":
            out.append(p)
            continue
        path = Path(p)
        if path.is_dir():
            files = sorted(f for f in path.rglob("*") if f.is_file() and f.suffix in SUFFIXES
                           and not any(part.startswith(".") for part in f.relative_to(path).parts))
            if not files:
                raise InputError(Where(p, None), "", "directory holds no *.yaml, *.yml or *.json file")
            out.extend(str(f) for f in files)
        elif path.exists():  # a regular file, or /dev/null, a pipe (`<(kubectl get ...)`), a device
            out.append(p)
        else:
            raise InputError(Where(p, None), "", "no such file or directory")
    return out


def read_json(text: str, file: str) -> list[Doc]:
    """A .json file: one JSON value, one document (a `kind: List` holds many objects)."""
    if _msgspec_json is not None:
        try:
            return [Doc(_msgspec_json.decode(text), file, 0)]
        except Exception:  # noqa: BLE001 - msgspec's errors carry no line; json's message below does
            pass
    try:
        return [Doc(json.loads(text), file, 0)]
    except json.JSONDecodeError as exc:
        raise InputError(Where(file, 0), "", f"not valid JSON (line {exc.lineno}, column {exc.colno}): {exc.msg}") from None
    except RecursionError:
        raise InputError(Where(file, 0), "", "not valid JSON: nested too deeply") from None


def read_documents(text: str, file: str) -> list[Doc]:
    """Decode one file's text into documents, naming the document a YAML error is in."""
    # Block YAML as kubectl and generators write it: the line reader, 5 times faster than libyaml; anything
    # else (and every invalid file) goes to the full loader below.
    quick = blockyaml.load_all(text)
    if quick is not None:
        return [Doc(data, file, index) for index, data in enumerate(quick)]
    docs: list[Doc] = []
    loader = fastyaml.Loader(text)
    index = 0
    try:
        for data in fastyaml.documents(loader):
            docs.append(Doc(data, file, index))
            index += 1
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" (line {mark.line + 1}, column {mark.column + 1})" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise InputError(Where(file, index), "", f"not valid YAML{at}: {problem}") from None
    except RecursionError:
        raise InputError(Where(file, index), "", "not valid YAML: nested too deeply") from None
    finally:
        loader.dispose()
    return docs


def load_paths(paths: Iterable[str], unknown_fields_fatal: bool = False) -> Cluster:
    """Everything in `paths` as one Cluster; an unknown field is a warning, or an error if unknown_fields_fatal.

    Paths that hold no object at all are an error; no path at all is an empty Cluster."""
    expanded = _expand(paths)
    return cluster_of(read_paths(expanded), expanded, unknown_fields_fatal)


@contextmanager
def gc_paused(age: bool = False) -> Iterator[None]:
    """The cyclic garbage collector off while reading: reading builds millions of objects that all live on, and
    each full collection walked all of them again (a quarter of the parse at 1,000 nodes). Reference counting
    still frees what is dropped; the collector runs again afterwards. With `age` (reading: what was made lives on),
    what was made meanwhile is moved to the oldest generation first (_age_young_objects)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            if age:
                _age_young_objects()
            gc.enable()


def _age_young_objects() -> None:
    """Everything made while the collector was off, moved to its oldest generation without a walk.

    Those objects all sit in the youngest generation, and the first collection after gc.enable() walked every one
    of them (0.3 s after reading production 5,000, and again after building its Cluster), then again as the middle
    generation filled. They live on (the input), so they belong with the old objects; a full collection still sees
    them and frees any cycle among them. freeze() then unfreeze() is that move; it is done only when nothing is
    frozen already, as unfreeze() would also release what the command line froze on purpose."""
    if gc.get_freeze_count() == 0:
        gc.freeze()
        gc.unfreeze()


def read_paths(paths: Iterable[str]) -> list[Doc]:
    """The documents of `paths` (files, directories, `-`), in order, not yet parsed: other sources (a live
    cluster) can be put beside them before cluster_of."""
    with gc_paused(age=True):
        return _read_paths(paths)


def _read_paths(paths: Iterable[str]) -> list[Doc]:
    docs: list[Doc] = []
    for p in _expand(paths):
        if p == "-":
            text, name = sys.stdin.read(), "<stdin>"
        else:
            try:
                text, name = Path(p).read_text(encoding="utf-8"), p
            except (OSError, UnicodeDecodeError) as exc:
                raise InputError(Where(p, None), "", f"cannot read: {exc}") from None
        if name.endswith(".json"):
            docs.extend(read_json(text, name))
        else:
            docs.extend(read_documents(text, name))
    return docs


def cluster_of(docs: list[Doc], sources: Sequence[str], unknown_fields_fatal: bool = False) -> Cluster:
    """The documents read from `sources` (paths, `-`, `cluster:<context>`) as one Cluster; sources that hold no
    object at all are an error."""
    with gc_paused(age=True):
        collected = collect(docs, unknown_fields_fatal=unknown_fields_fatal)
        if sources and not _holds_objects(collected):
            # An empty file would otherwise "solve" to placed 0/0 with exit 0, while an empty directory is an error.
            shown = ", ".join("<stdin>" if p == "-" else p for p in sources)
            raise InputError(Where(shown, None), "", "no objects in the input")
        return build_cluster(collected)


def _holds_objects(c: Collected) -> bool:
    """Anything read at all, skipped kinds included (a file of ConfigMaps is input podplan chose to ignore)."""
    return bool(c.nodes or c.pods or c.namespaces or c.pdbs or c.priority_classes or c.workloads or c.pod_groups
                or c.services or c.skipped)


def parse_documents(objects: Iterable[Mapping[str, Any]], file: str = "<input>", strict: bool = True) -> Cluster:
    """Already-decoded manifests (dicts) as a Cluster: for tests, the conformance harness and the generator."""
    return build_cluster(collect([Doc(o, file, i) for i, o in enumerate(objects)], strict))
