"""The fast YAML reader gives exactly what yaml.safe_load_all gives (the reference), documents and errors."""
from __future__ import annotations

import math
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from podplan.models import fastyaml
from podplan.models.errors import InputError
from podplan.models.loader import read_documents

# plain scalars YAML 1.1 resolves to something else than a string, and their look-alikes
TRICKY = ["yes", "No", "on", "OFF", "y", "n", "true", "False", "~", "null", "", "0x1F", "0o17", "017", "1_000",
          "1:20", "190:20:30", "-1", "+2", "3.5", "1e3", "6.8523015e+5", ".inf", "-.Inf", ".nan", "2001-12-14",
          "2001-12-14t21:59:43.10-05:00", "100m", "1Gi", "=", "<<", "app", "web-1", "nvidia.com/gpu", "0.5Gi"]

scalars = st.one_of(st.sampled_from(TRICKY), st.text(max_size=8), st.integers(), st.booleans(), st.none(),
                    st.floats(allow_nan=False))
keys = st.one_of(st.sampled_from(TRICKY), st.text(min_size=1, max_size=6), st.integers(-5, 5))
values = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                       st.dictionaries(keys, inner, max_size=4)), max_leaves=20)


def fast(text: str) -> list[Any]:
    loader = fastyaml.Loader(text)
    try:
        return list(fastyaml.documents(loader))
    finally:
        loader.dispose()


def same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return bool(a == b)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(values, min_size=1, max_size=3), st.sampled_from([None, False, True]))
def test_fast_reader_equals_pyyaml_on_dumped_documents(docs: list[Any], flow: bool | None) -> None:
    text = yaml.safe_dump_all(docs, default_flow_style=flow, sort_keys=False)
    assert same(fast(text), list(yaml.safe_load_all(text)))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(TRICKY), st.sampled_from(TRICKY)), min_size=1, max_size=6))
def test_fast_reader_resolves_plain_scalars_as_pyyaml(pairs: list[tuple[str, str]]) -> None:
    text = "\n".join(f"k{i}: {v}" if k == "<<" or not k else f"k{i}: {k} {v}".rstrip() + f"\nv{i}: {v}"
                     for i, (k, v) in enumerate(pairs)) + "\n"
    try:
        expected = list(yaml.safe_load_all(text))
    except yaml.YAMLError:
        return
    assert same(fast(text), expected)


@pytest.mark.parametrize("text", [
    "a: &x {b: 1}\nc: *x\n",  # alias: the same object
    "base: &b {cpu: 1}\nmerged:\n  <<: *b\n  mem: 2\n",  # merge key: left to PyYAML
    "a: !!str 12\nb: !!int '7'\nc: !!binary aGVsbG8=\n",  # explicit core tags
    "? [1, 2]\n: pair\n",  # an unhashable key: PyYAML's own error
    "---\n---\nx: 1\n---\n",  # empty documents
    "t: 2001-12-14 21:59:43.10 -5\nset: !!set {a, b}\nomap: !!omap [a: 1, b: 2]\n",
], ids=["an alias", "a merge key", "explicit tags", "an unhashable key", "empty documents", "timestamps and sets"])
def test_fast_reader_equals_pyyaml_on_what_it_hands_back(text: str) -> None:
    try:
        expected: Any = list(yaml.safe_load_all(text))
    except yaml.YAMLError as exc:
        with pytest.raises(type(exc)):
            fast(text)
        return
    got = fast(text)
    assert same(got, expected) if "set" not in text else got == expected
    if "&x" in text:
        assert got[0]["a"] is got[0]["c"]


def test_bad_yaml_still_names_line_and_column() -> None:
    with pytest.raises(InputError, match=r"not valid YAML \(line 3, column 1\)"):
        read_documents("a: 1\nb: [1,\n- c\n", "c.yaml")
