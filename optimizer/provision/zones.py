"""The pattern program's dive with zone rules (optimizer.provision.patterns), for inputs with zone rules.

The fillings of the pattern program know no zone rule: rounded whole (the dive) on 4/production of the 200-node
family they cost 13.26 (the bound 13.07) and broke 738 pods' rules (every new node in one zone, every Deployment's
pods where the room was, regardless of its spread). Here each pending pod is first given a zone (give_zones):

- its zone in the whole program's answer (program_zones: a group's pods given out to the zones in proportion to
  what the fillings it uses place there) is its preference;
- the pods some pending pod's zone affinity term matches (a cache) choose first, each the zone with the fewest pods
  of that term, then of the Deployments it draws: a Deployment spread over every zone needs its cache in each;
- then the pods with required pod affinity per zone, among the zones that hold a pod their terms match;
- a pod takes a zone where every zone spread (DoNotSchedule) its labels count in stays within its maxSkew
  (kube-scheduler's skew, with the pods given a zone before it), the preferred one when it does.

Then one pattern program for the whole cluster (split_dive): the pods a zone rule reads (zone_held: their own zone
spread or zone affinity, or matched by a pending pod's) held to the zones given them by a node selector, their zone
rules taken out (within the zone given they hold), every other pod free to go to any zone; its groups are then per
zone for the held pods. It starts from the whole program's fillings (_split_seed: on a node of zone z, a group's
count taken by the groups that hold its pods there) and is rounded by the same dive. Its answer is verified by the
caller against every rule on the whole cluster (a zone rule this reading misses, such as a spread whose domains a
node affinity narrows, fails there and the answer is not used).

One program instead of one per zone: the three zones' programs each needed about as many rounds of exact
knapsacks as the whole program (68 s of the clock on 4/production where the whole program took 16), and every
pod, held or not, had to take a zone; the split program converges in about as many rounds as the whole one, and
the pods without zone rules go where the room is (4/production at --time-limit 300: 13.644 against 14.072).
"""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import replace

import numpy as np

from ...models.nodetypes import ZONE_LABEL, NodeTypes
from ...models.objects import Cluster, Node, Pod
from ..framework import Profile
from .estimator import Offer, offer_probes


def zone_terms(p: Pod) -> tuple[list, list]:
    """A pod's hard zone spreads and its required pod affinity terms per zone."""
    spreads = [c for c in p.spread_constraints
               if c.when_unsatisfiable == "DoNotSchedule" and c.topology_key == ZONE_LABEL]
    terms = [t for t in p.affinity.pod_required if t.topology_key == ZONE_LABEL]
    return spreads, terms


def without_zone_rules(p: Pod) -> Pod:
    """The pod as one zone's program sees it: its zone spreads and zone affinity terms held by the zone given."""
    spreads, terms = zone_terms(p)
    if not spreads and not terms:
        return p
    return replace(p, spread_constraints=tuple(c for c in p.spread_constraints if c not in spreads),
                   affinity=replace(p.affinity, pod_required=tuple(t for t in p.affinity.pod_required
                                                                    if t not in terms)))


def give_zones(running: Sequence[tuple[Pod, str]], pending: Sequence[Pod], zones: Sequence[str],
               first: Mapping[str, str], own: Mapping[str, frozenset[str]] | None = None) -> dict[str, str] | None:
    """Each pending pod's zone (see the module docstring). running: (pod, its node's zone). first: pod key -> the
    zone the program put it in. own: pod key -> the zones its own node selector and required node affinity admit
    (absent: every zone). None when a pod's zone affinity finds no zone."""
    from .joint import _spread_matches, _term_matches

    given: dict[str, str] = {}
    # what the pods' zone spreads and zone affinity terms count: key -> (does it match a pod, the matching pods per
    # zone, the spread's maxSkew or None for a term)
    counts: dict[tuple, tuple] = {}

    def count(key: tuple, matches, skew: int | None) -> dict[str, int]:
        if key not in counts:
            per = dict.fromkeys(zones, 0)
            for q, z in running:
                if z in per and matches(q):
                    per[z] += 1
            counts[key] = (matches, per, skew)
        return counts[key][1]

    def spread_count(c, p: Pod) -> dict[str, int]:
        return count(("spread", p.namespace, repr(c.label_selector), c.max_skew), lambda q: _spread_matches(c, p, q),
                     c.max_skew)

    def term_count(t, p: Pod) -> dict[str, int]:
        return count(("term", p.namespace, repr(t)), lambda q: _term_matches(t, p, q), None)

    # every spread known before the first pod is given a zone: a pod counts in the spreads of the pods given theirs
    # before it (a spread of maxSkew 1 broken by a pod of its selector whose own spread allows 2)
    for p in pending:
        for c in zone_terms(p)[0]:
            spread_count(c, p)
    # the pods some pending pod's zone affinity term matches (a cache the Deployment's pods must share a zone
    # with) first, each to the zone with the fewest pods of its term: a Deployment spread over every zone needs
    # its cache in every zone; then the pods with zone affinity (the fewer zones a pod may take, the earlier it
    # chooses); then the others, whose spreads balance around them
    terms = [(t, p) for p in pending for t in zone_terms(p)[1]]
    anchored = {q.key: [(t, p) for t, p in terms if _term_matches(t, p, q)] for q in pending}
    for p in sorted(pending, key=lambda p: (not anchored[p.key], not zone_terms(p)[1], p.key)):
        mine = zone_terms(p)[1]
        allowed = [z for z in zones if all(term_count(t, p)[z] > 0 for t in mine)
                   and (own is None or p.key not in own or z in own[p.key])]
        if not allowed:
            return None
        spreads = [(per, skew) for matches, per, skew in counts.values() if skew is not None and matches(p)]
        anchors = [term_count(t, owner) for t, owner in anchored[p.key]]
        # (an anchor's zone where the pods its term draws there are fewest, by their own spreads)
        drawn = [spread_count(c, owner) for _, owner in anchored[p.key] for c in zone_terms(owner)[0]]

        def over(z: str) -> int:  # how far the pod placed in z is above the spreads' allowance (0: within)
            return max((max(0, n[z] + 1 - min(n.values()) - skew) for n, skew in spreads), default=0)

        z = min(allowed, key=lambda z: (over(z), sum(n[z] for n in anchors), sum(n[z] for n in drawn),
                                        z != first.get(p.key),
                                        max((n[z] for n, _ in spreads), default=0), z))
        given[p.key] = z
        for matches, n, _ in counts.values():
            if matches(p):
                n[z] += 1
    return given


def program_zones(d, used, offers: Sequence[Offer], node_zones: Sequence[str]) -> dict[str, str]:
    """Each pending pod's zone in the whole program's answer: a group's pods given out to the zones in proportion to
    the pods of the group its fillings hold there (largest remainders; a bin kind's nodes share its count
    evenly), in the order of the group's classes. d: the program's data; node_zones: per existing node."""
    zones = sorted(set(node_zones) | {o.zone for o in offers})
    amount = np.zeros((len(d.glist), len(zones)))
    at = {z: i for i, z in enumerate(zones)}
    for kind, members, a, x in used:
        if kind == "new":
            amount[:, at[offers[members[0]].zone]] += a * x
        else:
            for n in members:
                amount[:, at[node_zones[n]]] += a * x / len(members)
    out: dict[str, str] = {}
    for g, classes in enumerate(d.pods):
        keys = [k for keys in classes for k in keys]
        total = amount[g].sum()
        if total <= 0:
            continue
        share = amount[g] / total * len(keys)
        quota = np.floor(share).astype(int)
        for z in np.argsort(-(share - quota), kind="stable")[:len(keys) - int(quota.sum())]:
            quota[z] += 1
        i = 0
        for z, q in enumerate(quota):
            for k in keys[i:i + q]:
                out[k] = zones[z]
            i += q
    return out


def zone_held(pending: Sequence[Pod]) -> set[str]:
    """The pending pods whose zone a zone rule reads: their own zone spreads or zone affinity terms, or a pending
    pod's zone spread or zone affinity term matches them (a cache, a pod of a spread Deployment). The other pending
    pods may go to any zone."""
    from .joint import _spread_matches, _term_matches

    owners = [(p, *zone_terms(p)) for p in pending if any(zone_terms(p))]
    seen: dict[tuple, bool] = {}  # (a match reads the pod's namespace and labels only)
    out: set[str] = set()
    for q in pending:
        key = (q.namespace, tuple(sorted(q.labels.items())))
        if key not in seen:
            seen[key] = any(any(_spread_matches(c, p, q) for c in spreads) or any(_term_matches(t, p, q) for t in terms)
                            for p, spreads, terms in owners)
        if seen[key] or any(zone_terms(q)):
            out.add(q.key)
    return out


def own_zones(pending: Sequence[Pod], nodes: Sequence[Node], zone_of: Sequence[str]) -> dict[str, frozenset[str]]:
    """The zones each pending pod's own node selector and required node affinity admit (a node of the zone, an
    existing one or an offer's template, that they match), for the pods that have either: a pod held to a zone is
    given a node selector on it, which must not take it where its own rules do not let it go."""
    from ..nodeaffinity.filtering import required_matches

    out: dict[str, frozenset[str]] = {}
    seen: dict[tuple, frozenset[str]] = {}
    for p in pending:
        if not p.node_selector and p.affinity.node_required is None:
            continue
        key = (tuple(sorted(p.node_selector.items())), repr(p.affinity.node_required))
        if key not in seen:
            seen[key] = frozenset(z for n, z in zip(nodes, zone_of) if required_matches(p, n))
        out[p.key] = seen[key]
    return out


def in_zone(p: Pod, z: str) -> Pod:
    """The pod held to zone z (a node selector on the zone label), its zone rules taken out: z meets them."""
    p = without_zone_rules(p)
    return replace(p, node_selector={**p.node_selector, ZONE_LABEL: z})


def _split_seed(d, ds, used) -> list[tuple[str, int, dict[int, int]]]:
    """The whole program's fillings as first columns of the zone-split program: on a node of zone z, a group's
    count goes to the split program's groups that hold its pods there (the most of them first), each within its
    own bound on the node."""
    split_of = {k: h for h, classes in enumerate(ds.pods) for keys in classes for k in keys}
    share: list[dict[int, int]] = []  # whole group -> split group -> its pods of the group
    for classes in d.pods:
        n: dict[int, int] = defaultdict(int)
        for keys in classes:
            for k in keys:
                n[split_of[k]] += 1
        share.append(dict(sorted(n.items(), key=lambda kv: (-kv[1], kv[0]))))
    out = []
    for kind, members, a, _ in used:
        for i in (members if kind == "ex" else members[:1]):
            cap = ds.cap_ex[:, i] if kind == "ex" else ds.cap_new[:, i]
            fill: dict[int, int] = defaultdict(int)
            for g in np.flatnonzero(a):
                k = int(a[g])
                for h, n in share[g].items():
                    t = min(k, n, int(cap[h]) - fill[h])
                    if t > 0:
                        fill[h] += t
                        k -= t
            out.append((kind, i, {h: k for h, k in fill.items() if k > 0}))
    return out


def split_dive(base: Cluster, offers: Sequence[Offer], node_types: NodeTypes, profile: Profile, pat, limit: float,
               master_share: float, interrupt=None) -> tuple[list[tuple[Offer, Node]], dict[str, str]] | None:
    """One pattern program for every zone: the pods a zone rule reads held to the zones given them (give_zones),
    the others free, started from the whole program's fillings, and its dive. Not yet verified."""
    from .patterns import packing_answer, pattern_bound, prepare

    zone_of_node = {n.name: n.labels.get(ZONE_LABEL) for n in base.nodes}
    zones = sorted({o.zone for o in offers if o.zone is not None})
    if len(zones) < 2 or any(o.zone is None for o in offers) or any(z not in zones for z in zone_of_node.values()) \
            or not pat.used or pat.data is None:
        return None
    node_zones = [zone_of_node[n.name] for n in base.nodes]
    first = program_zones(pat.data, pat.used, offers, node_zones)
    running = [(p, zone_of_node[p.node_name]) for p in base.pods if p.node_name in zone_of_node]
    templates = offer_probes(offers)
    own = own_zones(base.pending, [*base.nodes, *templates], [*node_zones, *(o.zone for o in offers)])
    given = give_zones(running, base.pending, zones, first, own)
    if given is None:
        return None
    held = zone_held(base.pending)
    sub = replace(base, pending=tuple(in_zone(p, given[p.key]) if p.key in held else p for p in base.pending))
    data = prepare(sub, offers, profile)
    got = pattern_bound(sub, offers, node_types, profile, limit, data=data, interrupt=interrupt,
                        master_share=master_share, seed=_split_seed(pat.data, data, pat.used))
    if got.start is None:
        return None
    return packing_answer(data, offers, got.start, [n.name for n in base.nodes])
