"""What `podplan rebalance` prints: a table per wave, the plan document (YAML/JSON), policy/v1 Eviction
objects per wave, and a reviewable bash script (kubectl cordon/uncordon, evictions through the API, a wait for
the replacements to be Ready before the next wave).

The computation is optimizer.rebalance; this module renders plans that passed the verifier.
"""
from __future__ import annotations

import json
import shlex
from collections.abc import Sequence
from typing import Any

import yaml

from ...models.objects import Cluster, Pod
from ...models.selectors import LabelSelector

from .plans import eviction, table
from ..rebalance.plan import DRAIN, Blocked, RebalancePlan, Wave

PER_POD_LABELS = ("statefulset.kubernetes.io/pod-name", "apps.kubernetes.io/pod-index")
LISTED = 5  # names a table cell or line lists in full (when they fit in WIDTH); past that, a count
WIDTH = 80  # characters of names a line lists
CELL = 40  # characters of names a cell of the metrics table lists (two cells side by side)


# ------------------------------------------------------------------------------------------------ document


def wave_document(w: Wave) -> dict[str, Any]:
    """One wave of the plan document; consolidate's document shapes its waves with it too."""
    return {
        "cordon": list(w.cordon),
        "uncordon_after": list(w.temporary),
        "evictions": [{"pod": m.key, "from": m.source, "to": m.target} for m in w.moves],
        "landing": [{"pod": l.pod, "planned": l.planned, "if_left_alone": l.alone or None,
                     "with_cordons": l.cordoned or None} for l in w.landing],
        "budgets": {k: {"evictions": n, "allowed": a} for k, (n, a) in w.budgets.items()},
    }


def rebalance_document(plan: RebalancePlan) -> dict[str, Any]:
    """The plan document (goal, complete, blocked, waves, moves, before, after), plus details."""
    return {
        "goal": plan.goal,
        "drain": list(plan.drain),
        "complete": plan.complete,
        "blocked": [{"pod": b.pod, "reason": b.reason} for b in plan.blocked],
        "waves": [wave_document(w) for w in plan.waves],
        "moves": plan.moves,
        "before": plan.before,
        "after": plan.after,
        "removable": removable(plan),
        "target": {"status": plan.status, "levels": {name: v for name, v, _ in plan.levels},
                   "proven": plan.status == "OPTIMAL"},
        "notes": [n.with_items(", ".join(n.items)) for n in plan.notes],
        "wall_seconds": round(plan.wall_seconds, 3),
    }


def removable(plan: RebalancePlan) -> list[str]:
    """Nodes the plan empties (DaemonSet/mirror pods aside): drained ones, or freed by `pack`."""
    was = set(plan.before["empty_nodes"])
    return [n for n in plan.after["empty_nodes"] if n not in was]


def listed(names: Sequence[str], width: int = WIDTH) -> str:
    """Names for a table: all of a few, else "a, b, c and 45 more" (-o json/yaml list them all)."""
    if len(names) <= LISTED and len(", ".join(names)) <= width:
        return ", ".join(names)
    shown = [names[0]]
    for name in names[1:LISTED - 1]:
        if len(", ".join(shown + [name])) > width:
            break
        shown.append(name)
    if len(names) - len(shown) < 2:
        return ", ".join(names)  # "and 1 more" would hide a name to save nothing
    return f"{', '.join(shown)} and {len(names) - len(shown)} more"


def _pct(v: float) -> str:
    return f"{100 * v:.1f}%"


def waves_lines(waves: Sequence[Wave], blocked: Sequence[Blocked]) -> list[str]:
    """The waves (one table each, after a blank line) and the blocked pods: consolidate prints them the same way."""
    lines: list[str] = []
    for i, w in enumerate(waves, 1):
        lines.append("")
        cordon = listed([n + (" (temporary)" if n in w.temporary else "") for n in w.cordon]) or "-"
        lines.append(f"WAVE {i}   cordon: {cordon}")
        land = {l.pod: l for l in w.landing}
        rows = []
        for m in w.moves:
            l = land[m.key]
            spent = w.spends.get(m.key, "")
            pdb = f"{spent} ({w.budgets[spent][0]} of {w.budgets[spent][1]} allowed)" if spent else "-"
            rows.append((m.key, m.source, m.target, l.alone or "pending", l.cordoned or "pending", pdb))
        lines.append(table(("POD", "FROM", "TO", "IF LEFT ALONE", "WITH CORDONS", "PDB"), rows))
    if blocked:
        lines += ["", table(("BLOCKED", "REASON"), [(b.pod, b.reason) for b in blocked])]
    return lines


def rebalance_table(plan: RebalancePlan) -> str:
    goal = plan.goal + (f" ({', '.join(plan.drain)})" if plan.drain and plan.goal == DRAIN else "")
    if plan.drain and plan.goal != DRAIN:
        goal += f", drain {', '.join(plan.drain)}"
    gone = removable(plan)
    pending = ""
    if gone and plan.pending and plan.goal == "pack":
        # the nodes pack frees are what the pending pods may need: say it where it is read first
        pending = (f"; {len(gone)} node(s) removable while {plan.pending} pod(s) are pending: "
                   "place them before removing any node")
    lines = [f"rebalance: goal {goal}: {'complete' if plan.complete else 'INCOMPLETE'}, "
             f"{plan.moves} move(s) in {len(plan.waves)} wave(s); target {plan.status}{pending}"]
    lines += waves_lines(plan.waves, plan.blocked)
    b, a = plan.before, plan.after
    rows = []
    for r in ("cpu", "memory"):
        for k in ("max", "mean", "stddev"):
            rows.append((f"{r} utilization {k}", _pct(b["utilization"][r][k]), _pct(a["utilization"][r][k])))
    rows += [("nodes used", b["nodes_used"], a["nodes_used"]),
             ("empty nodes", listed(b["empty_nodes"], CELL) or "-", listed(a["empty_nodes"], CELL) or "-"),
             ("violations", b["violations"], a["violations"]),
             ("preference", b["preference"], a["preference"])]
    lines += ["", table(("METRIC", "BEFORE", "AFTER"), rows)]
    if gone:
        lines.append(f"removable: {listed(gone)}")
    lines.append("target levels: " + ", ".join(f"{n} {v}{'' if ok else ' (not proven)'}" for n, v, ok in plan.levels))
    for note in plan.notes:
        lines.append(f"note: {note.with_items(listed(note.items))}")
    return "\n".join(lines)


# ------------------------------------------------------------------------------------------------ evictions


def _wave_comment(i: int, w: Wave) -> str:
    moves = ", ".join(f"{m.key} ({m.source} -> {m.target})" for m in w.moves)
    temp = f" (uncordon {', '.join(w.temporary)} after)" if w.temporary else ""
    return f"# wave {i}: cordon {', '.join(w.cordon) or '-'}{temp}; evict {moves}"


def evictions_text(plan: RebalancePlan, fmt: str) -> str:
    """policy/v1 Evictions per wave: a YAML stream with a comment line per wave, or JSON waves."""
    if fmt == "json":
        return json.dumps({"waves": [{"wave": i, "cordon": list(w.cordon), "uncordon_after": list(w.temporary),
                                      "items": [eviction(m.pod) for m in w.moves]}
                                     for i, w in enumerate(plan.waves, 1)]}, indent=2)
    parts = []
    for i, w in enumerate(plan.waves, 1):
        parts.append(_wave_comment(i, w))
        for m in w.moves:
            parts.append("---\n" + yaml.safe_dump(eviction(m.pod), sort_keys=False).rstrip("\n"))
    for b in plan.blocked:
        parts.append(f"# blocked: {b.pod}: {b.reason}")
    return "\n".join(parts) if parts else "# nothing to evict"


# ------------------------------------------------------------------------------------------------ script


def selector_string(sel: LabelSelector) -> str:
    """A LabelSelector as kubectl -l takes it."""
    parts = [f"{k}={v}" for k, v in sel.match_labels]
    for r in sel.match_expressions:
        if r.operator == "In":
            parts.append(f"{r.key} in ({','.join(r.values)})")
        elif r.operator == "NotIn":
            parts.append(f"{r.key} notin ({','.join(r.values)})")
        elif r.operator == "Exists":
            parts.append(r.key)
        elif r.operator == "DoesNotExist":
            parts.append(f"!{r.key}")
    return ",".join(parts)


def replacement_selector(cluster: Cluster, pod: Pod) -> str:
    """Selects the pod's replacements: its controller's selector, else its labels minus per-pod ones."""
    owner = pod.controller
    if owner is not None:
        for w in cluster.workloads:
            if w.kind == owner.kind and w.namespace == pod.namespace and w.name == owner.name and w.selector:
                if not w.selector.empty:
                    return selector_string(w.selector)
    return ",".join(f"{k}={v}" for k, v in sorted(pod.labels.items()) if k not in PER_POD_LABELS)


SCRIPT_HEAD = r'''set -euo pipefail

TIMEOUT="${TIMEOUT:-600}"  # seconds to wait for each step
EVICT_TIMEOUT="${EVICT_TIMEOUT:-$TIMEOUT}"  # seconds to keep retrying an eviction a PDB refuses for now (429)
EVICT_INTERVAL="${EVICT_INTERVAL:-5}"  # seconds between those retries (kubectl drain waits 5 s)
DRY_RUN="${DRY_RUN:-none}"  # server: every request is sent with dryRun (the API server checks, changes nothing)

# evict NAMESPACE POD [UID]: POST a policy/v1 Eviction. The API server answers 429 when a PDB allows no
# disruption now: retried every EVICT_INTERVAL s for up to EVICT_TIMEOUT s, as kubectl drain does; 404: the
# pod is already gone (done); anything else, such as 409 when the pod is no longer the one of the dump (UID
# precondition): give up. Prints "evicted NS/POD", or "gave up NS/POD: why" on stderr and returns 1.
evict() {
  local options="" url="/api/v1/namespaces/$1/pods/$2/eviction" dry="" out tries=0
  local deadline=$((SECONDS + EVICT_TIMEOUT))
  if [ -n "${3:-}" ]; then
    options=", \"deleteOptions\": {\"preconditions\": {\"uid\": \"$3\"}}"
  fi
  if [ "$DRY_RUN" = server ]; then
    url="$url?dryRun=All"
    dry=" (dry run)"
  fi
  while :; do
    tries=$((tries + 1))
    if out=$(kubectl create --raw "$url" -f - 2>&1 <<EOF
{"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "$2", "namespace": "$1"}$options}
EOF
    ); then
      echo "evicted $1/$2$dry"
      return 0
    fi
    case "$out" in
      *TooManyRequests*|*"disruption budget"*) ;;
      *NotFound*)
        echo "evicted $1/$2: already gone$dry"
        return 0 ;;
      *)
        echo "gave up $1/$2: $out" >&2
        return 1 ;;
    esac
    if [ $((SECONDS + EVICT_INTERVAL)) -ge "$deadline" ]; then
      echo "gave up $1/$2: refused $tries time(s) in ${EVICT_TIMEOUT}s: $out" >&2
      return 1
    fi
    echo "waiting ${EVICT_INTERVAL}s to retry $1/$2: $out" >&2
    sleep "$EVICT_INTERVAL"
  done
}

# cordon / uncordon NODE...: kubectl's, with --dry-run=server in a dry run.
cordon() {
  if [ "$DRY_RUN" = server ]; then kubectl cordon --dry-run=server "$@"; else kubectl cordon "$@"; fi
}
uncordon() {
  if [ "$DRY_RUN" = server ]; then kubectl uncordon --dry-run=server "$@"; else kubectl uncordon "$@"; fi
}

# gone NAMESPACE POD [UID]: wait until the evicted pod is deleted (its resources are free on its node);
# with its UID, a pod a StatefulSet already recreated under the same name does not count.
gone() {
  if [ "$DRY_RUN" = server ]; then
    return 0
  fi
  if [ -z "${3:-}" ]; then
    kubectl wait --for=delete "pod/$2" -n "$1" --timeout="${TIMEOUT}s"
    return
  fi
  local deadline=$((SECONDS + TIMEOUT)) uid
  while :; do
    uid=$(kubectl get pod "$2" -n "$1" -o jsonpath='{.metadata.uid}' 2>/dev/null || true)
    if [ "$uid" != "$3" ]; then
      return 0
    fi
    if [ "$SECONDS" -ge "$deadline" ]; then
      echo "timed out: $1/$2 is still there" >&2
      return 1
    fi
    sleep 2
  done
}

# ready NAMESPACE SELECTOR COUNT NODE: wait until COUNT pods matching SELECTOR are Ready on NODE.
ready() {
  if [ "$DRY_RUN" = server ]; then
    return 0
  fi
  local deadline=$((SECONDS + TIMEOUT)) n
  while :; do
    n=$(kubectl get pods -n "$1" -l "$2" --field-selector "spec.nodeName=$4" \
      -o jsonpath='{range .items[*]}{.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}' | grep -c '^True$' || true)
    if [ "$n" -ge "$3" ]; then
      return 0
    fi
    if [ "$SECONDS" -ge "$deadline" ]; then
      echo "timed out: $n of $3 Ready pod(s) -l '$2' on $4 in namespace $1 (did it land elsewhere?)" >&2
      return 1
    fi
    sleep 5
  done
}

# sourced (tests, or to run one step by hand): the functions only
if (return 0 2>/dev/null); then
  return 0
fi

for arg in "$@"; do
  case "$arg" in
    --dry-run=server | --dry-run=none) DRY_RUN="${arg#--dry-run=}" ;;
    *)
      echo "usage: $0 [--dry-run=server|none]" >&2
      exit 2 ;;
  esac
done
case "$DRY_RUN" in
  none) ;;
  server)
    echo "dry run: every request is sent with dryRun=All and changes nothing; nothing is waited for, so each" \
      "wave's evictions are checked against today's PDB budgets" >&2 ;;
  *)
    echo "DRY_RUN must be none or server, not '$DRY_RUN'" >&2
    exit 2 ;;
esac
'''


def script_text(cluster: Cluster, plan: RebalancePlan) -> str:
    q = shlex.quote
    goal = plan.goal + (f" --drain {' --drain '.join(plan.drain)}" if plan.drain else "")
    out = ["#!/usr/bin/env bash",
           f"# podplan rebalance --goal {goal}: {plan.moves} move(s) in {len(plan.waves)} wave(s); "
           f"complete: {'yes' if plan.complete else 'NO'}",
           "# Review before running. Per wave: cordon, evict through the Eviction API (PDB-checked), wait for the",
           "# evicted pods to be deleted and their replacements to be Ready on the planned nodes, lift temporary cordons."]
    for b in plan.blocked:
        out.append(f"# blocked: {b.pod}: {b.reason}")
    out.append(SCRIPT_HEAD)
    already = {n.name for n in cluster.nodes if n.unschedulable}
    cordoned = set(already)
    where = {p.key: p.node_name for p in cluster.pods}
    pods = {p.key: p for p in cluster.pods}
    for i, w in enumerate(plan.waves, 1):
        out.append(f"# --- wave {i} of {len(plan.waves)} " + "-" * 60)
        for k, (n, a) in w.budgets.items():
            out.append(f"# PodDisruptionBudget {k}: {n} eviction(s) of {a} allowed disruption(s)")
        new = [n for n in w.cordon if n not in cordoned]
        if new:
            out.append(f"cordon {' '.join(q(n) for n in new)}")
            cordoned |= set(new)
        for m in w.moves:
            uid = f" {q(m.pod.uid)}" if m.pod.uid else ""
            out.append(f"evict {q(m.pod.namespace)} {q(m.pod.name)}{uid}  # {m.source} -> {m.target}")
        for m in w.moves:
            uid = f" {q(m.pod.uid)}" if m.pod.uid else ""
            out.append(f"gone {q(m.pod.namespace)} {q(m.pod.name)}{uid}")
            where[m.key] = m.target
        waits = dict.fromkeys((m.pod.namespace, replacement_selector(cluster, m.pod), m.target) for m in w.moves)
        for (ns, sel, node) in waits:
            count = sum(1 for k, n in where.items() if n == node and pods[k].namespace == ns
                        and replacement_selector(cluster, pods[k]) == sel)
            out.append(f"ready {q(ns)} {q(sel)} {count} {q(node)}")
        lift = [n for n in w.temporary if n not in already]
        if lift:
            out.append(f"uncordon {' '.join(q(n) for n in lift)}")
            cordoned -= set(lift)
        out.append("")
    kept = [n for n in sorted(cordoned - already)]
    if kept:
        them = "it" if len(kept) == 1 else "them"
        out.append(f"# {', '.join(kept)} {'stays' if len(kept) == 1 else 'stay'} cordoned (drained / removable): "
                   f"uncordon {them} after maintenance, or remove {them} from the cluster.")
    if plan.blocked:
        out.append(f"echo {q(f'podplan: the plan is incomplete: {len(plan.blocked)} pod(s) blocked (see the header)')} >&2")
    done = q(f"podplan: {plan.moves} move(s) done")
    checked = q(f"podplan: {plan.moves} eviction(s) accepted by the API server (dry run: nothing changed)")
    out.append(f'if [ "$DRY_RUN" = server ]; then echo {checked}; else echo {done}; fi')
    return "\n".join(out) + "\n"
