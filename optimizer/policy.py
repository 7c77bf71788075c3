"""The preference-score multipliers (notes/semantics.md) and the policy file that sets them.

P = Σ over every pod p of the final state of
      + nodeAffinity      × Σ weights of p's preferred node-affinity terms node(p) matches
      + podAffinity       × Σ weights of p's preferred pod-affinity terms satisfied in p's domain
      − podAntiAffinity   × Σ weights of p's preferred anti-affinity terms violated in p's domain
      − preferNoSchedule  × PreferNoSchedule taints of node(p) that p does not tolerate
    − scheduleAnywaySkew  × Σ over ScheduleAnyway groups of max(0, skew − maxSkew)

Policy file (`--policy FILE`; every key optional, unknown keys rejected):

    apiVersion: podplan.io/v1alpha1
    kind: Policy
    multipliers: {nodeAffinity: 1, podAffinity: 1, podAntiAffinity: 1, preferNoSchedule: 10, scheduleAnywaySkew: 10}
"""
from __future__ import annotations

from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import yaml

from ..models.errors import InputError, Where

API_VERSION = "podplan.io/v1alpha1"
KIND = "Policy"
MAX_MULTIPLIER = 1_000_000


@dataclass(frozen=True)
class Policy:
    """Multipliers of the preference score's terms (non-negative integers)."""

    node_affinity: int = 1
    pod_affinity: int = 1
    pod_anti_affinity: int = 1
    prefer_no_schedule: int = 10
    schedule_anyway_skew: int = 10


# policy-file key -> Policy field
FILE_KEYS = {
    "nodeAffinity": "node_affinity",
    "podAffinity": "pod_affinity",
    "podAntiAffinity": "pod_anti_affinity",
    "preferNoSchedule": "prefer_no_schedule",
    "scheduleAnywaySkew": "schedule_anyway_skew",
}
assert set(FILE_KEYS.values()) == {f.name for f in fields(Policy)}


def policy_from_dict(doc: Any, file: str = "<policy>") -> Policy:
    """A Policy from a decoded policy document; InputError names the field that is wrong."""
    where = Where(file=file, doc=0, kind=KIND)
    if not isinstance(doc, dict):
        raise InputError(where, "", "a policy file must be a mapping")
    for key, want in (("apiVersion", API_VERSION), ("kind", KIND)):
        if key not in doc:  # a forgotten header line: say what to write, not "got None"
            raise InputError(where, key, f"is required: {key}: {want}")
        if doc[key] != want:
            raise InputError(where, key, f"must be {want}, got {doc[key]!r}")
    unknown = sorted(set(doc) - {"apiVersion", "kind", "metadata", "multipliers"})
    if unknown:
        raise InputError(where, unknown[0], "unknown field")
    raw = doc.get("multipliers") or {}
    if not isinstance(raw, dict):
        raise InputError(where, "multipliers", "must be a mapping")
    values: dict[str, int] = {}
    for key, value in raw.items():
        if key not in FILE_KEYS:
            raise InputError(where, f"multipliers.{key}", f"unknown multiplier (known: {', '.join(FILE_KEYS)})")
        if isinstance(value, bool) or not isinstance(value, int):
            raise InputError(where, f"multipliers.{key}", f"must be an integer, got {value!r}")
        if not 0 <= value <= MAX_MULTIPLIER:
            raise InputError(where, f"multipliers.{key}", f"must be between 0 and {MAX_MULTIPLIER}, got {value}")
        values[FILE_KEYS[key]] = value
    return Policy(**values)


def load_policy(path: str | Path | None) -> Policy:
    """The policy in `path` (None: the defaults)."""
    if path is None:
        return Policy()
    file = str(path)
    try:
        text = Path(path).read_text()
    except OSError as e:
        raise InputError(Where(file=file, doc=None), "", f"cannot read policy file: {e.strerror}") from None
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as e:
        raise InputError(Where(file=file), "", f"not YAML: {str(e).splitlines()[0]}") from None
    return policy_from_dict(doc, file)
