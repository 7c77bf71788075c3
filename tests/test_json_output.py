"""JSON output: podplan's indented JSON is json.dumps(indent=2) character for character, also where it writes
long lists of flat objects (a plan's placements) with the C encoder."""
from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from podplan.optimizer.render.text import json_indented

TEXT = st.text(alphabet=st.sampled_from(list('ab },{\n\t"\\:é\u2028[]') + ["\x00"]), max_size=8)
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-10**6, 10**6), st.floats(allow_nan=True), TEXT)
FLAT = st.dictionaries(TEXT, SCALARS, max_size=4)
VALUES = st.recursive(SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                       st.dictionaries(TEXT, inner, max_size=4)), max_leaves=12)
DOCS = st.dictionaries(TEXT, st.one_of(VALUES, st.lists(FLAT, max_size=6)), max_size=6)


@settings(max_examples=300, deadline=None)
@given(st.one_of(DOCS, VALUES))
def test_any_document_is_written_as_json_dumps_indent_2_writes_it(doc) -> None:  # type: ignore[no-untyped-def]
    assert json_indented(doc) == json.dumps(doc, indent=2)


def test_a_plans_placements_are_written_as_json_dumps_indent_2_writes_them() -> None:
    doc = {"status": "FEASIBLE", "gap": 0.25, "placements": [
        {"pod": f"ns/web-{i}", "node": f"node-{i % 7}", "workload": "Deployment/ns/web" if i % 3 else ""}
        for i in range(50)], "pending": [], "notes": ["a", "b"], "solver": {"seed": 0, "workers": 2}}
    assert json_indented(doc) == json.dumps(doc, indent=2)
