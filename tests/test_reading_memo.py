"""Parts of pods remembered while reading (models.parse) give each pod exactly what parsing it alone gives:
labels that differ, values that are not strings, and errors are never hidden by a part read before."""
from __future__ import annotations

import pytest

from podplan.models import parse as P
from podplan.models.errors import InputError
from podplan.models.generate import generate
from podplan.models.loader import parse_documents


def _pod(name: str, labels: dict, affinity: dict | None = None, status: dict | None = None, **spec: object) -> dict:
    body = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default", "labels": labels},
            "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "100m"}}}], **spec}}
    if affinity is not None:
        body["spec"]["affinity"] = affinity
    if status is not None:
        body["status"] = status
    return body


def _forget() -> None:
    for memo in (P._PARTS, P._LABEL_MAPS, P._SYNTAX_OK, P._UNITS, P._SPECS):
        memo.clear()


def test_match_label_keys_take_each_pods_own_label_value() -> None:
    term = {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": "kubernetes.io/hostname",
            "matchLabelKeys": ["version"]}
    affinity = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}
    c = parse_documents([_pod("a", {"app": "web", "version": "1"}, affinity),
                         _pod("b", {"app": "web", "version": "2"}, affinity)])
    values = [p.affinity.anti_required[0].label_selector.match_expressions[-1].values for p in c.pending]
    assert values == [("1",), ("2",)]


def test_a_label_value_that_is_not_a_string_is_refused_after_the_same_map_with_strings() -> None:
    with pytest.raises(InputError, match="expected a string"):
        parse_documents([_pod("a", {"app": "web", "version": "1.10"}), _pod("b", {"app": "web", "version": 1.1})])


def test_a_label_map_with_true_is_not_taken_for_one_with_1() -> None:
    c = parse_documents([_pod("a", {"on": "1"}), _pod("b", {"on": "x"})])
    assert [p.labels for p in c.pending] == [{"on": "1"}, {"on": "x"}]
    with pytest.raises(InputError, match="expected a string"):
        parse_documents([_pod("c", {"on": "1"}), _pod("d", {"on": True})])


def test_each_pod_gets_a_label_map_of_its_own() -> None:
    c = parse_documents([_pod("a", {"app": "web"}), _pod("b", {"app": "web"})])
    a, b = c.pending
    assert a.labels == b.labels and a.labels is not b.labels


def test_a_spec_error_is_reported_before_a_status_error() -> None:
    bad = _pod("a", {"app": "web"}, status={"nominatedNodeName": 3}, priorityClassName=7)
    with pytest.raises(InputError) as err:
        parse_documents([bad])
    assert err.value.field == "spec.priorityClassName"


def test_status_fields_are_read_for_a_running_pod() -> None:
    c = parse_documents([_pod("a", {"app": "web"}, status={"nominatedNodeName": "n1", "startTime": "2024-01-01T00:00:00Z"})])
    assert (c.pending[0].nominated_node_name, c.pending[0].start_time) == ("n1", "2024-01-01T00:00:00Z")


@pytest.mark.parametrize("profile", ["production", "mixed", "adversarial", "gpu"])
def test_a_generated_cluster_reads_the_same_with_every_memo_empty_or_warm(profile: str) -> None:
    manifests = generate(20, 200, 3, profile)
    _forget()
    cold = parse_documents(manifests)
    warm = parse_documents(manifests)
    assert cold == warm
    assert [p.labels for p in cold.pods + cold.pending] == [p.labels for p in warm.pods + warm.pending]


# ------------------------------------------------------------------ whole specs remembered (P.MEMO_SPECS)


def _read_both(manifests: list[dict]) -> tuple[object, object]:
    """The cluster read with every spec read part by part (the reference), then with whole specs remembered."""
    _forget()
    P._SPECS.clear()
    P.MEMO_SPECS = False
    try:
        reference = parse_documents(manifests)
    finally:
        P.MEMO_SPECS = True
    _forget()
    return reference, parse_documents(manifests)


def _same_pods(reference, memo) -> None:  # type: ignore[no-untyped-def]
    assert reference == memo
    assert reference.warnings == memo.warnings
    for a, b in zip(reference.pods + reference.pending, memo.pods + memo.pending, strict=True):
        assert vars(a) == vars(b)  # where and raw too, which == leaves out
        assert a.raw is b.raw


@pytest.mark.parametrize("profile", ["production", "mixed", "adversarial", "gpu"])
def test_a_generated_cluster_reads_the_same_with_whole_specs_remembered(profile: str) -> None:
    _same_pods(*_read_both(generate(30, 300, 5, profile)))


def _daemon_pod(name: str, node: str, labels: dict, **spec: object) -> dict:
    pin = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}]}}}
    return _pod(name, labels, pin, status={"startTime": "2024-01-01T00:00:00Z"}, nodeName=node, **spec)


def test_pods_that_differ_only_in_node_and_pin_keep_their_own() -> None:
    reference, memo = _read_both([_daemon_pod("a", "n1", {"app": "d"}), _daemon_pod("b", "n2", {"app": "d"}),
                                  _daemon_pod("c", "n1", {"app": "e"})])
    _same_pods(reference, memo)
    assert [(p.node_name, p.affinity.node_required.terms[0].match_fields[0].values) for p in memo.pods] == [
        ("n1", ("n1",)), ("n2", ("n2",)), ("n1", ("n1",))]


def test_spread_match_label_keys_take_each_pods_own_label_value_with_the_spec_remembered() -> None:
    spread = [{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "DoNotSchedule",
               "labelSelector": {"matchLabels": {"app": "web"}}, "matchLabelKeys": ["version"]}]
    reference, memo = _read_both([_pod("a", {"app": "web", "version": "1"}, topologySpreadConstraints=spread),
                                  _pod("b", {"app": "web", "version": "2"}, topologySpreadConstraints=spread)])
    _same_pods(reference, memo)
    assert [p.spread_constraints[0].label_selector.match_expressions[-1].values for p in memo.pending] == [
        ("1",), ("2",)]


def _error(manifests: list[dict]) -> tuple[str, str]:
    with pytest.raises(InputError) as err:
        parse_documents(manifests)
    return err.value.field, str(err.value)


@pytest.mark.parametrize("bad", [
    _daemon_pod("b", 7, {"app": "d"}),  # type: ignore[arg-type]  # nodeName a number
    _daemon_pod("b", "n2", {"app": 1.5}),
    _pod("b", {"app": "d"}, {"nodeAffinity": {"required": {}}}, status={"startTime": 3}, nodeName="n2"),
    _pod("b", {"app": "d"}, status={"nominatedNodeName": ["n"]}, nodeName="n2"),
    {**_daemon_pod("b", "n2", {"app": "d"}), "metadata": {"name": "b", "namespace": "default", "uid": 4}},
    _daemon_pod("b", "n2", {"app": "d"}, tolerations=[{"operator": "Sideways"}]),
], ids=["a node name that is not a string", "a label value that is not a string", "an unknown affinity field",
        "a status field of the wrong type", "a uid that is not a string", "a toleration the remembered spec lacks"])
def test_a_pod_whose_spec_was_read_before_fails_as_in_a_full_read(bad: dict) -> None:
    good = _daemon_pod("a", "n1", {"app": "d"})
    P.MEMO_SPECS = False
    try:
        _forget()
        alone = _error([good, bad])
    finally:
        P.MEMO_SPECS = True
    _forget()
    P._SPECS.clear()
    assert _error([good, bad]) == alone


def test_an_unknown_field_warns_for_every_pod_that_has_it() -> None:
    manifests = [_pod(n, {"app": "web"}, nodeSelecter={"a": "b"}) for n in ("a", "b", "c")]
    reference, memo = _read_both(manifests)
    _same_pods(reference, memo)
    assert sum("nodeSelecter" in w for w in memo.warnings) == 3


@pytest.mark.parametrize("seed", ["", "Deployment/shop/web#0", "DaemonSet/kube-system/kube-proxy@ip-10-0-1-2#3", "é/ü"])
@pytest.mark.parametrize("length", [0, 5, 10, 32])
def test_generated_name_suffixes_are_kubes_alphabet_letters_of_the_seeds_sha256(seed: str, length: int) -> None:
    import hashlib

    digest = hashlib.sha256(seed.encode()).digest()
    assert P.stable_suffix(seed, length) == "".join(P._ALPHABET[b % 27] for b in digest[:length])


@pytest.mark.parametrize("profile", ["production", "mixed", "adversarial", "gpu"])
def test_a_workloads_pods_copied_from_one_pod_are_the_pods_made_one_by_one(profile: str) -> None:
    from podplan.models import workloads as W

    manifests = generate(30, 300, 13, profile)
    W.SHARED_BASES = False
    try:
        reference = parse_documents(manifests)
    finally:
        W.SHARED_BASES = True
    copied = parse_documents(manifests)
    bare = sum(1 for m in manifests if m["kind"] == "Pod" and not m["spec"].get("nodeName"))
    assert len(copied.pending) > bare  # workloads made pods
    _same_pods(reference, copied)


def _templates():  # type: ignore[no-untyped-def]
    from hypothesis import strategies as st

    scalar = st.one_of(st.none(), st.booleans(), st.integers(-2, 2), st.sampled_from([1.0, 0.0, float("nan")]),
                       st.sampled_from(["1", "a", "true"]))
    value = st.recursive(scalar, lambda inner: st.one_of(st.lists(inner, max_size=2),
                                                          st.dictionaries(st.sampled_from("xyz"), inner, max_size=2)),
                         max_leaves=4)
    labels = st.dictionaries(st.sampled_from(["app", "pod-template-hash"]), st.sampled_from(["web", "abc", "1"]),
                             max_size=2)
    meta = st.fixed_dictionaries({"labels": labels}, optional={"creationTimestamp": st.none(), "z": value})
    return st.one_of(st.none(), st.fixed_dictionaries({"metadata": meta}, optional={"spec": value, "a": value}))


def test_templates_are_the_same_exactly_when_their_identities_are() -> None:
    from hypothesis import given, settings

    from podplan.models import workloads as W

    @settings(max_examples=400, deadline=None)
    @given(_templates(), _templates())
    def check(a, b) -> None:  # type: ignore[no-untyped-def]
        assert W._same_template(a, b) == (W._template_identity(a) == W._template_identity(b))
        if isinstance(a, dict):  # the same keys in another order are the same template
            reordered = dict(reversed(list(a.items())))
            assert W._same_template(a, reordered)
            assert W._template_identity(a) == W._template_identity(reordered)

    check()


def test_each_pod_gets_a_node_selector_of_its_own_with_the_spec_remembered() -> None:
    c = parse_documents([_pod(n, {"app": "web"}, nodeSelector={"disk": "ssd"}) for n in ("a", "b")])
    a, b = c.pending
    assert a.node_selector == b.node_selector == {"disk": "ssd"} and a.node_selector is not b.node_selector


def test_parts_have_the_same_memo_key_exactly_when_they_print_the_same() -> None:
    """Two decoded parts share a memo key (models.parse._text) only when they are the same value of the same types
    (repr tells `1` from `true` and `1.0`); a date, which marshal cannot write, is keyed by its repr."""
    import datetime

    from hypothesis import given, settings
    from hypothesis import strategies as st

    scalars = st.one_of(st.none(), st.booleans(), st.integers(-2, 2), st.sampled_from([0.0, -0.0, 1.0, 1e300]),
                        st.sampled_from(["", "1", "a", "é", "\ud800"]), st.just(datetime.date(2024, 1, 1)))
    values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=2)
                          | st.dictionaries(st.sampled_from(["a", "b", "1"]), inner, max_size=2), max_leaves=4)

    @settings(max_examples=600, deadline=None)
    @given(values, values)
    def check(a, b) -> None:  # type: ignore[no-untyped-def]
        assert (P._text(a) == P._text(b)) == (repr(a) == repr(b))
        assert P._names_label_keys(P._text({"matchLabelKeys": [a]}))

    check()
