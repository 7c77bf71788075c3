"""The line reader of block YAML (models.blockyaml) gives exactly what yaml.safe_load_all gives, or hands the file
back (None); it never accepts a file PyYAML rejects."""
from __future__ import annotations

import io
import math
import os
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from podplan.models import blockyaml
from podplan.models.generate import dump_yaml, generate
from podplan.models.shapes import SHAPES, shape_instance
from tests.test_fastyaml import same  # equal, NaN included, and of the same types all the way down

TRICKY = ["yes", "No", "on", "OFF", "y", "n", "true", "False", "~", "null", "0x1F", "0o17", "017", "1_000",
          "1:20", "190:20:30", "-1", "+2", "3.5", "1e3", "6.8523015e+5", ".inf", "-.Inf", ".nan", "2001-12-14",
          "2001-12-14t21:59:43.10-05:00", "100m", "1Gi", "=", "<<", "app", "web-1", "nvidia.com/gpu", "0.5Gi",
          "a:b", "a #b", "a# b", "-x", "?x", ":x", "x:", "'q'", '"q"', "it's", "{}", "[]", "|", "- a", "",
          " lead", "trail ", "multi\nline", "tab\there", "back\\slash", "line\u2028sep", "nel\x85", "f:metadata", "---", "..."]




def reference(text: str) -> list[Any] | Exception:
    try:
        return list(yaml.safe_load_all(text))
    except Exception as exc:  # noqa: BLE001 - PyYAML's errors, and ValueError from a bad timestamp
        return exc


def python_loop(text: str) -> list[Any] | None:
    """The reader's answer with its loop in Python (blockyaml._build), the compiled one switched off."""
    blockyaml.COMPILED = False
    try:
        return blockyaml.load_all(text)
    finally:
        blockyaml.COMPILED = True


def agrees(text: str) -> list[Any] | None:
    """The reader's answer, checked against PyYAML's: the same documents, or None; and the same answer from
    the compiled loop (models/_blockloop.c, where it was built) as from the Python loop."""
    fast = blockyaml.load_all(text)
    expected = reference(text)
    if fast is not None:
        assert not isinstance(expected, Exception), f"accepted what PyYAML rejects: {expected}"
        assert same(fast, expected)
    if blockyaml._blockloop is not None:
        by_python = python_loop(text)
        assert (fast is None) == (by_python is None), "the compiled loop and the Python loop disagree"
        if fast is not None:
            assert same(fast, by_python)
    return fast


@pytest.mark.skipif(not os.environ.get("PODPLAN_REQUIRE_COMPILED"), reason="the compiled loop is optional")
def test_the_installation_compiled_the_line_readers_loop() -> None:
    # CI sets PODPLAN_REQUIRE_COMPILED: there, a build that silently fell back to Python would leave the compiled
    # loop untested by every test above
    assert blockyaml._blockloop is not None


@pytest.mark.parametrize("profile", ["production", "mixed", "gpu"])
def test_generated_clusters_are_read_by_the_line_reader_and_equal_pyyaml(profile: str) -> None:
    out = io.StringIO()
    dump_yaml(generate(30, 120, 3, profile), out)  # what `podplan generate` prints
    assert agrees(out.getvalue()) is not None


@pytest.mark.parametrize("shape", sorted(SHAPES)[:3])
def test_generated_shapes_equal_pyyaml(shape: str) -> None:
    out = io.StringIO()
    dump_yaml(shape_instance(shape, 20, 0).manifests, out)
    assert agrees(out.getvalue()) is not None


KUBECTL = """\
apiVersion: v1
items:
- apiVersion: v1
  kind: Pod
  metadata:
    annotations:
      kubectl.kubernetes.io/last-applied-configuration: |
        {"apiVersion":"v1","kind":"Pod"}
      note: |-
        two
          lines

    creationTimestamp: "2024-01-02T03:04:05Z"
    labels:
      app: web
      'quoted key': 'it''s'
    managedFields:
    - fieldsV1:
        f:metadata:
          f:labels:
            .: {}
            f:app: {}
      manager: kubectl
    name: web-1
  spec:
    containers:
    - args: []
      image: nginx
      ports:
      - containerPort: 80
        protocol: TCP
      resources: {}
    # a comment between keys
    nodeName: n1
    tolerations:
    -
      operator: Exists
    - key: a
      value:
  status:
    phase: Running
kind: List
metadata:
  resourceVersion: ""
"""


def test_a_kubectl_dump_with_literal_blocks_comments_and_compact_sequences_is_mine() -> None:
    docs = agrees(KUBECTL)
    assert docs is not None
    pod = docs[0]["items"][0]
    assert pod["metadata"]["annotations"]["note"] == "two\n  lines"
    assert pod["spec"]["tolerations"] == [{"operator": "Exists"}, {"key": "a", "value": None}]


@pytest.mark.parametrize("text", [
    "", "\n", "# only a comment\n", "---\n", "---\n---\na: 1\n---\n", "a: 1\n---\n", "- a\n- b\n",
    "a:\n- 1\n-\n- - 2\n", "a: &x 1\nb: *x\n", "a: !!str 1\n", "a: {b: 1}\n", "a: [1]\n", "a: >\n  folded\n",
    "a: |2\n   x\n", "a: b # comment\n", "a: 'multi\n  line'\n", "a: \"esc\\n\"\n", "%YAML 1.1\n---\na: 1\n",
    "a: 1\n...\n", "a:\tb\n", "a: 1\r\n", "\ufeffa: 1\n", "? a\n: b\n", "<<: {a: 1}\n", "a:\n  b: 1\n c: 2\n",
    "a: 1\n  b: 2\n", "a\nb\n", "- a\nb: 1\n", "a: b: c\n", "a: 2001-13-45\n", "a: =\n", "  a: 1\n",
    "a:\n  - x\n  b: 1\n", "a:\n- x\nb: 1\n- y\n", "a: |\n\n  x\n", "a: |\n  x\n   \n  y\n", "- |\n x\n",
    "x:\n- a: |\n    t\n  b: 2\n", "a: 1\na: 2\n", "'a': 1\n\"b\": 2\n", "a: ''\nb: \"\"\n", "a: --- x\n",
    "--- a\n", "a: |\n  x", "- |\n  x", "a: |\n  x\n  ", "a: |\n  x\n   ", "a: |\n  x\n  \n  y\n", "a: |\n  x\n\n\n",
    "a: |\n  x\n   \n  y\n", "a: |-\n  x\n\nb: 1\n", "a: |\n    x\n  y\n", "a: x\u2028y\nb: 1\n", "a: x\u2029y\n", "a: x\x85y\n", "a: \x07\n", "a:  \n  b: 1\n", "1: one\ntrue: t\nnull: n\n~: m\n", "a: 'x' y\n", "- 'x': 1\n  y: 2\n",
], ids=lambda t: repr(t)[:40])
def test_small_texts_agree_with_pyyaml(text: str) -> None:
    agrees(text)


@pytest.mark.parametrize("char", ["e", "é", "Ω", "😀"], ids=["ascii", "latin-1", "two-byte", "four-byte"])
def test_texts_stored_one_to_four_bytes_a_character_agree_with_pyyaml(char: str) -> None:
    # the compiled loop cuts the text into lines itself, over a str's 1, 2 or 4-byte code units: the same lines
    # repeated at different depths, a literal block (made from text.split), and lines longer than 8 characters
    text = (f"a: {char}x\nb:\n  - {char}x\n  - c: |\n      {char} line\n      - not: item\n    d: {char}x\n"
            f"long: {char * 40}\n---\na: {char}x\nlong: {char * 40}\n")
    assert agrees(text) == [{"a": f"{char}x", "b": [f"{char}x", {"c": f"{char} line\n- not: item\n", "d": f"{char}x"}],
                             "long": char * 40}, {"a": f"{char}x", "long": char * 40}]


def test_a_literal_blocks_lines_are_text_whatever_they_look_like() -> None:
    # every distinct line is classified before the documents are built: a line the reader would refuse as a
    # node ("b: [1", "? c", "&x y") is still its own when it is a literal block's text
    text = "a: |\n  b: [1\n  ? c\n  &x y\nd: 1\n"
    assert agrees(text) == [{"a": "b: [1\n? c\n&x y\n", "d": 1}]
    assert agrees("a: 1\nb: [1\n") is None  # the same line as a node: handed back


def test_the_reader_takes_the_shapes_it_claims() -> None:
    for text in ("", "---\n", "a: 1\n---\n", "- a\n- b\n", "a:\n- 1\n-\n", "a: 1\na: 2\n", KUBECTL):
        assert blockyaml.load_all(text) is not None, text


scalars = st.one_of(st.sampled_from(TRICKY), st.from_regex(r"[a-z][a-z0-9./-]{0,8}", fullmatch=True), st.text(max_size=8), st.integers(), st.booleans(), st.none(),
                    st.floats(allow_nan=False))
keys = st.one_of(st.sampled_from(TRICKY), st.from_regex(r"[a-z][a-z0-9./-]{0,8}", fullmatch=True), st.text(min_size=1, max_size=6), st.integers(-5, 5), st.booleans())
values = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                       st.dictionaries(keys, inner, max_size=4)), max_leaves=25)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(values, min_size=1, max_size=3), st.sampled_from([False, None]), st.sampled_from([2, 4]),
       st.booleans())
def test_dumped_documents_agree_with_pyyaml(docs: list[Any], flow: bool | None, indent: int, start: bool) -> None:
    agrees(yaml.safe_dump_all(docs, default_flow_style=flow, sort_keys=False, indent=indent, explicit_start=start))


EDITS = [" ", "  ", "-", "- ", ":", ": ", "#", " #", "'", '"', "|", "|-", "{}", "[]", "\n", "\n  ", "\n- ", "---",
         "&a", "*a", "!", "?", ",", "\\", "~", "0", "."]


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.integers(0, 10_000), st.integers(0, 3), st.sampled_from(EDITS)), min_size=1,
                max_size=4))
def test_edited_kubectl_dumps_are_read_as_pyyaml_reads_them_or_handed_back(edits: list[tuple[int, int, str]]) -> None:
    """Random edits (insertions, deletions) of a kubectl dump: an edit that breaks the YAML must be handed back,
    never read into something."""
    text = KUBECTL
    for at, cut, insert in edits:
        at %= len(text) + 1
        text = text[:at] + insert + text[at + cut:]
    agrees(text)


def _reference_docs(text: str, file: str) -> list[Any]:
    """The documents as the full loader (libyaml + models.fastyaml) reads them, the line reader bypassed."""
    from podplan.models import fastyaml
    from podplan.models.parse import Doc

    loader = fastyaml.Loader(text)
    try:
        return [Doc(d, file, i) for i, d in enumerate(fastyaml.documents(loader))]
    finally:
        loader.dispose()


@pytest.mark.parametrize("profile", ["production", "mixed"])
def test_the_cluster_read_through_the_line_reader_is_the_reference_cluster(profile: str) -> None:
    from podplan.models.loader import cluster_of, read_documents

    out = io.StringIO()
    dump_yaml(generate(40, 300, 5, profile), out)
    text = out.getvalue()
    assert blockyaml.load_all(text) is not None  # the fast path is the one under test
    fast = cluster_of(read_documents(text, "c.yaml"), ["c.yaml"])
    ref = cluster_of(_reference_docs(text, "c.yaml"), ["c.yaml"])
    assert fast == ref
    assert [p.raw for p in fast.pods] == [p.raw for p in ref.pods]
    assert [p.where for p in fast.pending] == [p.where for p in ref.pending]


def test_evolve_is_dataclasses_replace() -> None:
    from dataclasses import replace

    from podplan.models.evolve import evolve
    from podplan.models.loader import parse_documents

    out = io.StringIO()
    dump_yaml(generate(5, 20, 1, "production"), out)
    pod = parse_documents(yaml.safe_load_all(out.getvalue())).pending[0]
    assert evolve(pod, name="x", order=7) == replace(pod, name="x", order=7)
    assert evolve(pod, name="x").raw is pod.raw and evolve(pod, name="x").where == pod.where
    with pytest.raises(TypeError):
        evolve(pod, nmae="x")


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.text(alphabet=" a#:-|'\"", max_size=6), min_size=1, max_size=5), st.sampled_from(["|", "|-"]),
       st.sampled_from([1, 2, 4]), st.sampled_from(["a", "- a", "- k"]), st.booleans(), st.booleans())
def test_literal_blocks_agree_with_pyyaml(lines: list[str], header: str, indent: int, parent: str, after: bool,
                                          final_break: bool) -> None:
    """Literal blocks under a key, a sequence item or a sequence item's key; blank, comment-like and
    indented lines; with or without a following key and a final line break."""
    head = {"a": f"a: {header}", "- a": f"- {header}", "- k": f"- k: {header}"}[parent]
    base = 2 if parent == "- k" else 0
    body = "\n".join((" " * (base + indent) + line) if line.strip() else line for line in lines)
    tail = ("\n" + ("b: 1" if parent == "a" else "- b")) if after else ""
    agrees(head + "\n" + body + tail + ("\n" if final_break else ""))


@given(st.text(alphabet=st.characters(max_codepoint=0x80), max_size=30) | st.text(max_size=30))
def test_the_ascii_test_of_foreign_characters_is_the_regular_expressions(text: str) -> None:
    assert blockyaml._has_foreign_characters(text) == (blockyaml._NOT_MINE.search(text) is not None)


def test_the_common_lines_shortcut_classifies_as_the_whole_classification() -> None:
    from hypothesis import given, settings
    from hypothesis import strategies as st

    def whole_way(lines: list[str]) -> list[Any]:
        classify, out = blockyaml._Lines(blockyaml._Scalars()), []
        for line in lines:
            try:
                out.append(classify(line))
            except blockyaml.NotMine:
                out.append(blockyaml._REFUSED)
        return out

    line = st.text(alphabet=" :-#.?%ab1~'\"{}[]|&*!>", max_size=12)

    @settings(max_examples=500, deadline=None)
    @given(st.lists(line, max_size=6))
    def check(lines: list[str]) -> None:
        assert blockyaml._Lines(blockyaml._Scalars()).all(lines) == whole_way(lines)

    check()
