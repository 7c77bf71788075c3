"""`podplan whatif --report DIR`: one self-contained report.html across scenarios.

It renders the `-o json` document (optimizer.whatif.render.document), so it shows exactly the numbers the
command prints: a chart of pods placed and left pending per scenario (greedy beside the optimum), a chart of
nodes used and mean CPU/memory utilisation per scenario, then the table itself with each row's errors and
notes. The page's look (CSS, PNG charts inlined as data: URIs, the images-loaded marker) is the compare
report's (optimizer.render.report).
"""
from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..render.report import COLORS, CSS, ONLOAD, PENDING, _png, _style, plt, save_html
from .render import table_rows
from .run import ERROR


def _label(row: Mapping[str, Any], fleet: bool) -> str:
    return f"{row['cluster']}: {row['scenario']}" if fleet else str(row["scenario"])


def chart_placed(rows: Sequence[Mapping[str, Any]], fleet: bool) -> str:
    """Per scenario, two bars (greedy, optimum): pods placed, then pending, hatched; errors marked."""
    fig, ax = plt.subplots(figsize=(8.4, 0.5 * len(rows) + 1.4))
    names = [_label(r, fleet) for r in rows]
    h = 0.36
    top = max([1] + [r["to_place"] for r in rows if r.get("status") != ERROR])
    for i, r in enumerate(rows):
        y = len(rows) - 1 - i
        if r.get("status") == ERROR:
            ax.text(0, y, "  error: " + str(r.get("error"))[:80], va="center", fontsize=8, color=PENDING)
            continue
        for dy, key in ((h / 2, "greedy"), (-h / 2, "optimal")):
            col = r[key]
            ax.barh(y + dy, col["placed"], height=h * 0.9, color=COLORS[key], label=f"placed, {key}")
            if col["pending"]:
                ax.barh(y + dy, col["pending"], left=col["placed"], height=h * 0.9, color=PENDING, hatch="///",
                        edgecolor="white", label="pending")
        o = r["optimal"]
        ax.text(r["to_place"], y, f"  {o['placed']}/{r['to_place']}"
                + (f" (+{o['placed'] - r['greedy']['placed']})" if o["placed"] > r["greedy"]["placed"] else ""),
                va="center", fontsize=8, color="#1f2328")
    ax.set_yticks(range(len(rows)), names[::-1], fontsize=8)
    ax.set_xlim(0, top * 1.3)
    ax.set_xlabel("pods to place")
    handles, labels = ax.get_legend_handles_labels()
    uniq = dict(zip(labels, handles))
    ax.legend(uniq.values(), uniq.keys(), fontsize=8, frameon=False, loc="upper center",
              bbox_to_anchor=(0.5, -0.8 / max(1, len(rows)) - 0.12), ncols=3)
    _style(ax, grid="x")
    ax.set_title("Pods placed and pending per scenario (greedy above, optimum below)", loc="left", fontsize=11,
                 fontweight="bold")
    return _png(fig)


def chart_nodes(rows: Sequence[Mapping[str, Any]], fleet: bool) -> str:
    """Per scenario: nodes in the cluster and nodes the optimum uses (bars), mean CPU and memory (markers)."""
    ok = [r for r in rows if r.get("status") != ERROR]
    fig, ax = plt.subplots(figsize=(8.4, 3.4))
    if not ok:
        ax.text(0.5, 0.5, "no scenario was answered", ha="center", transform=ax.transAxes)
        return _png(fig)
    xs = range(len(ok))
    ax.bar([x - 0.18 for x in xs], [r["nodes"] for r in ok], width=0.34, color="#c9ced6", label="nodes")
    ax.bar([x + 0.18 for x in xs], [r["optimal"]["nodes_used"] for r in ok], width=0.34, color=COLORS["optimal"],
           label="nodes used (optimum)")
    ax.set_ylabel("nodes")
    ax.set_xticks(list(xs), [_label(r, fleet) for r in ok], rotation=30, ha="right", fontsize=8)
    util = ax.twinx()
    util.plot(list(xs), [100 * r["optimal"]["cpu"] for r in ok], "o-", color="#e07b39", label="CPU requested %")
    util.plot(list(xs), [100 * r["optimal"]["memory"] for r in ok], "s--", color="#2f9e5a",
              label="memory requested %")
    util.set_ylim(0, 105)
    util.set_ylabel("mean utilisation %")
    for side in ("top",):
        util.spines[side].set_visible(False)
    lines = ax.get_legend_handles_labels()
    more = util.get_legend_handles_labels()
    ax.legend(lines[0] + more[0], lines[1] + more[1], fontsize=8, frameon=False, loc="upper center",
              bbox_to_anchor=(0.5, -0.45), ncols=4)
    _style(ax)
    ax.set_title("Nodes and utilisation per scenario", loc="left", fontsize=11, fontweight="bold")
    return _png(fig)


def render_html(doc: Mapping[str, Any], title: str = "podplan whatif") -> str:
    rows = doc["scenarios"]
    fleet = len({r["cluster"] for r in rows}) > 1
    headers, cells = table_rows(rows, fleet, timing=True)
    e = html.escape
    head = "".join(f"<th>{e(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{e(c)}</td>" for c in row) + "</tr>" for row in cells)
    errors = sum(1 for r in rows if r.get("status") == ERROR)
    better = sum(1 for r in rows if r.get("status") != ERROR and r["optimal"]["placed"] > r["greedy"]["placed"])
    summary = (f"{len(rows)} scenario(s){' across ' + str(len({r['cluster'] for r in rows})) + ' clusters' if fleet else ''}"
               f" · the optimum places more than greedy in {better}"
               + (f" · <span class=\"bad\">{errors} could not be answered</span>" if errors else ""))
    if doc.get("interrupted"):
        summary += f" · interrupted: {doc.get('not_finished', 0)} scenario(s) not finished"
    figs = "".join(f'<figure><img alt="{e(t)}" src="{src}"></figure>' for t, src in
                   (("Pods placed per scenario", chart_placed(rows, fleet)),
                    ("Nodes and utilisation per scenario", chart_nodes(rows, fleet)))) if rows else ""
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{e(title)}</title><style>{CSS}</style></head>
<body><main>
<h1>{e(title)}</h1>
<p class="sub">{summary}</p>
<h2>Across scenarios</h2>
<div class="charts">{figs}</div>
<h2>Every scenario</h2>
<table>{head and '<tr>' + head + '</tr>'}{body}</table>
<p class="note">Each scenario is applied to the same base cluster and answered on its own: greedy (kube-scheduler,
one pod at a time) and the optimum (CP-SAT), both judged by the verifier. Utilisation = requested /
allocatable, the mean over the scenario's nodes.</p>
</main>{ONLOAD}</body></html>
"""


def write_report(doc: Mapping[str, Any], directory: str | Path, title: str = "podplan whatif") -> Path:
    return save_html(render_html(doc, title), directory)
