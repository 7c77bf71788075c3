"""Plain text out: JSON/YAML documents and aligned tables. Kept apart from the plan renderers so that commands
that never solve (validate) print without importing the solver stack (OR-Tools, SciPy, pandas)."""
from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import yaml

from ... import KUBE_VERSION


class _Dumper(yaml.SafeDumper):
    """PyYAML's safe dumper that also writes str subclasses (the Status enum) as plain strings."""


_Dumper.add_multi_representer(str, lambda dumper, value: dumper.represent_str(str(value)))


_SCALARS = (str, int, float, bool, type(None))


def json_indented(data: Any) -> str:
    """json.dumps(data, indent=2), character for character, faster for a document holding long lists of flat
    objects (a plan's 50,000 placements: the standard library writes indented JSON in pure Python, 0.5 s at 5,000
    nodes after Ctrl-C). Such a list is written by the C encoder with the item separator of its objects' keys
    and then indented: JSON text holds no newline but those the layout puts in (a string's is written \\n), so
    each newline and each "},<newline>{" is the layout's own."""
    if not isinstance(data, dict) or not data or not all(isinstance(k, str) for k in data):
        return json.dumps(data, indent=2)
    parts = [f"  {json.dumps(k)}: {_value(v)}" for k, v in data.items()]
    return "{\n" + ",\n".join(parts) + "\n}"


def _value(v: Any) -> str:
    """A value of the top-level mapping (depth 1), as json.dumps(indent=2) writes it there."""
    if (isinstance(v, list) and v and all(type(e) is dict and e for e in v)
            and all(type(k) is str and type(x) in _SCALARS for e in v for k, x in e.items())):
        text = json.JSONEncoder(separators=(",\n      ", ": ")).encode(v)  # [{"a": 1,<nl>      "b": 2}, ...]
        inner = text[2:-2].replace("},\n      {", "\n    },\n    {\n      ")
        return "[\n    {\n      " + inner + "\n    }\n  ]"
    return json.dumps(v, indent=2).replace("\n", "\n  ")


def dump(data: Any, fmt: str) -> str:
    """JSON or YAML text; a list of manifests becomes a multi-document YAML stream or a v1 List in JSON. A
    podplan document (a mapping that is no Kubernetes object) says first which kube-scheduler it models
    ("kubeVersion"); manifests are left as kubectl expects them."""
    if isinstance(data, dict) and "kind" not in data:
        data = {"kubeVersion": KUBE_VERSION, **{k: v for k, v in data.items() if k != "kubeVersion"}}
    if fmt == "json":
        if isinstance(data, list):
            data = {"apiVersion": "v1", "kind": "List", "items": data}
        return json_indented(data)
    if isinstance(data, list):
        return yaml.dump_all(data, Dumper=_Dumper, sort_keys=False)
    return yaml.dump(data, Dumper=_Dumper, sort_keys=False)


def table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A plain aligned text table, as kubectl prints them."""
    cells = [[str(h) for h in headers]] + [[str(c) for c in r] for r in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    return "\n".join("   ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in cells)


