"""The waves' PodDisruptionBudgets after a committed wave: recomputed only for the pods whose health changed,
and equal to computing every budget afresh."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from podplan.models.loader import parse_documents
from podplan.optimizer.rebalance.plan import RebalanceParams
from tests.test_deschedule_unfixable import node, pod


def test_after_a_wave_the_cached_budgets_equal_the_budgets_computed_afresh() -> None:
    # a wave that evicts an unready pod (its replacement is waited for: Ready) changes its PDB's budget; the
    # waves recompute only that PDB's, and the result must equal computing every PDB again
    from podplan.optimizer.rebalance.budgets import PdbIndex
    from podplan.optimizer.rebalance.plan import Move
    from podplan.optimizer.rebalance.waves import _Waves

    docs = [node("n0"), node("n1"), pod("a", "n0", 500), pod("b", "n0", 500), pod("c", "n1", 500)]
    for d in docs[2:]:
        d["metadata"]["labels"] = {"app": "web" if d["metadata"]["name"] != "c" else "db"}
    docs[3]["status"]["conditions"] = [{"type": "Ready", "status": "False"}]  # b is not ready
    for name, app in (("web", "web"), ("db", "db")):
        docs.append({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {
            "name": name, "namespace": "default"}, "spec": {"minAvailable": 1, "selector": {
                "matchLabels": {"app": app}}}})
    c = parse_documents(docs, "<test>")
    healthy = {"default/a": True, "default/b": False, "default/c": True}
    w = _Waves(c, RebalanceParams(time_limit=10, workers=1), healthy, {})
    before = w.budgets()
    b = next(p for p in c.pods if p.name == "b")
    w.commit([Move(b, "n0", "n1")])
    assert w.budgets() == PdbIndex.of(c).budgets(w.healthy)
    assert w.budgets()["default/web"] != before["default/web"] and w.budgets()["default/db"] == before["default/db"]


def _random_cluster(draw):
    labels = draw(st.lists(st.dictionaries(st.sampled_from(["app", "tier", "team"]), st.sampled_from(["a", "b"]),
                                           max_size=3), min_size=1, max_size=8))
    docs = [node("n0")]
    for i, lab in enumerate(labels):
        d = pod(f"p{i}", "n0", 100)
        d["metadata"]["labels"] = lab
        d["metadata"]["namespace"] = draw(st.sampled_from(["default", "other"]))
        docs.append(d)
    for j in range(draw(st.integers(0, 4))):
        selector: dict = {}
        match = draw(st.dictionaries(st.sampled_from(["app", "tier", "team"]), st.sampled_from(["a", "b"]),
                                     max_size=2))
        if match:
            selector["matchLabels"] = match
        if draw(st.booleans()):
            selector["matchExpressions"] = [{"key": draw(st.sampled_from(["app", "tier"])),
                                             "operator": draw(st.sampled_from(["In", "NotIn", "Exists"])),
                                             "values": ["a"]}]
            if selector["matchExpressions"][0]["operator"] == "Exists":
                del selector["matchExpressions"][0]["values"]
        spec: dict = {"minAvailable": 1}
        if draw(st.integers(0, 5)):
            spec["selector"] = selector
        docs.append({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {
            "name": f"pdb{j}", "namespace": draw(st.sampled_from(["default", "other"]))}, "spec": spec})
    return parse_documents(docs, "<test>")


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_each_pdbs_pods_found_through_the_label_index_are_the_pods_its_selector_counts(data) -> None:
    # the reference: every pod of the cluster, in order, judged by disruption.counts
    from podplan.optimizer.disruption import counts
    from podplan.optimizer.rebalance.budgets import PdbIndex

    c = _random_cluster(data.draw)
    index = PdbIndex.of(c)
    for b in c.pdbs:
        assert index.members[b.key][1] == tuple(p for p in c.pods if counts(b, p))
