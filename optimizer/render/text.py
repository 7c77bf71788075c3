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


def dump(data: Any, fmt: str) -> str:
    """JSON or YAML text; a list of manifests becomes a multi-document YAML stream or a v1 List in JSON. A
    podplan document (a mapping that is no Kubernetes object) says first which kube-scheduler it models
    ("kubeVersion"); manifests are left as kubectl expects them."""
    if isinstance(data, dict) and "kind" not in data:
        data = {"kubeVersion": KUBE_VERSION, **{k: v for k, v in data.items() if k != "kubeVersion"}}
    if fmt == "json":
        if isinstance(data, list):
            data = {"apiVersion": "v1", "kind": "List", "items": data}
        return json.dumps(data, indent=2, sort_keys=False)
    if isinstance(data, list):
        return yaml.dump_all(data, Dumper=_Dumper, sort_keys=False)
    return yaml.dump(data, Dumper=_Dumper, sort_keys=False)


def table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A plain aligned text table, as kubectl prints them."""
    cells = [[str(h) for h in headers]] + [[str(c) for c in r] for r in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    return "\n".join("   ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in cells)


