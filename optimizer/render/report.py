"""`podplan compare --report DIR`: one self-contained report.html (PNG charts inlined as data: URIs).

It renders the `-o json` document of optimizer.compare (to_dict), so the report shows exactly the numbers the
command prints: headline cards, pods placed per priority, preference per term, CPU and memory per node before
(the input) and after each placement, the comparison table, pending reasons and the pods whose node differs.
Charts are drawn with matplotlib's Agg backend (no display needed). A small inline script marks
<body data-images-loaded="N"> once the browser has decoded the charts; the page reads fine without it.
"""
from __future__ import annotations

import base64
import html
import io
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (the backend must be chosen first)
from matplotlib.figure import Figure  # noqa: E402

from .compare import TITLES, fmt_gap, pct, rows  # noqa: E402
from ..objective import TERMS  # noqa: E402

COLORS = {"greedy": "#e07b39", "optimal": "#2563a8", "current": "#7c8591", "replacement": "#2f9e5a"}
BEFORE = "#c9ced6"
PENDING = "#e5484d"
PRIORITY_SHADES = ("#173257", "#24508a", "#3a74b8", "#5f97d3", "#8db8e6", "#bcd7f2")
CHART_TERMS = {"node_affinity": "node\naffinity", "pod_affinity": "pod\naffinity",
               "pod_anti_affinity": "pod anti-\naffinity", "prefer_no_schedule": "PreferNo-\nSchedule",
               "schedule_anyway_skew": "ScheduleAny-\nway skew"}
MAX_DIFF_ROWS = 300
OPEN_DIFF_ROWS = 20  # a longer list of moved pods is folded (<details>), opened on a click
MAX_BAR_NODES = 60  # beyond this, per-node charts show nodes sorted by utilization instead of one bar each
DPI = 110


def _png(fig: Figure) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI, bbox_inches="tight")
    plt.close(fig)
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def _style(ax: Any, grid: str = "y") -> None:
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    ax.grid(axis=grid, color="#e6e8eb", linewidth=0.8)
    ax.set_axisbelow(True)
    ax.tick_params(colors="#3b4048", labelsize=9)


def chart_placed(doc: Mapping[str, Any]) -> str:
    """One horizontal bar per column: placed pods by priority, then pending ones."""
    cols = doc["columns"]
    prios = sorted({p for c in cols for p in c["placed_by_priority"]}, key=int, reverse=True)
    fig, ax = plt.subplots(figsize=(7.2, 0.62 * len(cols) + 1.1))
    names = [c["title"] for c in cols][::-1]
    for y, c in enumerate(cols[::-1]):
        left = 0
        for i, p in enumerate(prios):
            n = c["placed_by_priority"].get(p, {}).get("placed", 0)
            # Spread the shades over however many priorities there are, darkest = highest.
            shade = PRIORITY_SHADES[round(i * (len(PRIORITY_SHADES) - 1) / max(1, len(prios) - 1))]
            if n:
                ax.barh(y, n, left=left, color=shade, height=0.6,
                        label=f"placed, priority {p}")
            left += n
        if c["pending"]:
            ax.barh(y, c["pending"], left=left, color=PENDING, height=0.6, hatch="///", edgecolor="white",
                    label="pending")
        ax.text(left + c["pending"], y, f"  {c['placed']}/{c['to_place']} placed"
                + (f", {c['pending']} pending" if c["pending"] else ""), va="center", fontsize=9, color="#1f2328")
    ax.set_yticks(range(len(cols)), names)
    ax.set_xlabel("pods to place")
    ax.set_xlim(0, max(1, max(c["to_place"] for c in cols)) * 1.35)
    handles, labels = ax.get_legend_handles_labels()
    uniq = dict(zip(labels, handles))
    ax.legend(uniq.values(), uniq.keys(), fontsize=8, frameon=False, loc="upper center",
              bbox_to_anchor=(0.5, -0.28), ncols=min(4, len(uniq)))
    _style(ax, grid="x")
    ax.set_title("Pods placed", loc="left", fontsize=11, fontweight="bold")
    return _png(fig)


def chart_terms(doc: Mapping[str, Any]) -> str:
    """Grouped bars: each preference term (multiplied and signed) per column, plus the total."""
    cols = doc["columns"]
    labels = [CHART_TERMS[t] for t in TERMS] + ["total\npreference"]
    fig, ax = plt.subplots(figsize=(7.2, 3.3))
    width = 0.8 / len(cols)
    for i, c in enumerate(cols):
        values = [c["terms"][t] for t in TERMS] + [c["preference"]]
        xs = [x + (i - (len(cols) - 1) / 2) * width for x in range(len(values))]
        bars = ax.bar(xs, values, width=width * 0.92, color=COLORS[c["name"]], label=c["title"])
        for b, v in zip(bars, values):
            if v:
                # upright: a number is wider than a bar of four columns, and side by side they overlapped
                ax.annotate(str(v), (b.get_x() + b.get_width() / 2, v), ha="center", rotation=90,
                            va="bottom" if v > 0 else "top", fontsize=7, color="#1f2328",
                            xytext=(0, 2 if v > 0 else -2), textcoords="offset points")
    ax.axhline(0, color="#3b4048", linewidth=0.8)
    if not any(c["terms"][t] for c in cols for t in TERMS):
        ax.set_ylim(-1, 1)
        ax.set_yticks([0])
        ax.text(0.5, 0.7, "every term is 0 in every column:\nno preference is met or broken",
                transform=ax.transAxes, ha="center", fontsize=9, color="#59636e")
    ax.set_xticks(range(len(labels)), labels, fontsize=8)
    ax.set_ylabel("score (higher is better)")
    lo, hi = ax.get_ylim()
    ax.set_ylim(lo * 1.3 if lo < 0 else lo, hi * 1.3 if hi > 0 else max(hi, 1))
    ax.legend(fontsize=8, frameon=False, ncols=len(cols), loc="upper center", bbox_to_anchor=(0.5, -0.2))
    _style(ax)
    ax.set_title("Preference score per term", loc="left", fontsize=11, fontweight="bold")
    return _png(fig)


def _short_names(names: Sequence[str]) -> list[str]:
    """Node names without their common domain suffix (ip-10-0-1-2.ec2.internal -> ip-10-0-1-2)."""
    parts = [n.split(".") for n in names]
    k = 0
    while all(len(p) > k + 1 for p in parts) and len({tuple(p[len(p) - k - 1:]) for p in parts}) == 1:
        k += 1
    return [".".join(p[: len(p) - k]) if k else n for p, n in zip(parts, names)]


def chart_nodes(doc: Mapping[str, Any], resource: str) -> str:
    """One panel per column: each node's requested/allocatable before (grey) and after (colour)."""
    cols = doc["columns"]
    nodes = doc["nodes"]
    n = len(nodes)
    fig, axes = plt.subplots(len(cols), 1, figsize=(7.2, 1.55 * len(cols) + 0.7), sharex=True, squeeze=False)
    labels = _short_names([x["node"] for x in nodes])
    for ax, c in zip(axes[:, 0], cols):
        before = [100 * x["before"][resource] for x in nodes]
        after = [100 * x[c["name"]][resource] for x in nodes]
        if n <= MAX_BAR_NODES:
            xs = range(n)
            ax.bar(xs, before, width=0.8, color=BEFORE)
            ax.bar(xs, after, width=0.45, color=COLORS[c["name"]])
        else:
            order = sorted(range(n), key=lambda i: -after[i])
            xs = range(n)
            ax.fill_between(xs, [before[i] for i in order], step="mid", color=BEFORE)
            ax.step(xs, [after[i] for i in order], where="mid", color=COLORS[c["name"]], linewidth=1.6)
        ax.axhline(100, color=PENDING, linewidth=0.8, linestyle="--")
        ax.set_ylim(0, 110)
        ax.set_yticks([0, 50, 100], ["0%", "50%", "100%"])
        s = c[resource]
        # one line above each panel, in the column's colour: a legend box there overlapped the figures (and
        # the panel above) on narrow charts
        ax.set_title(f"{c['title']}:  max {pct(s['max'])}   mean {pct(s['mean'])}   stddev {pct(s['stddev'])}",
                     loc="left", fontsize=8.5, color=COLORS[c["name"]], fontweight="bold")
        _style(ax)
    last = axes[-1, 0]
    if n <= MAX_BAR_NODES:
        last.set_xticks(range(n), labels, rotation=60, ha="right", fontsize=6.5 if n > 20 else 8)
    else:
        last.set_xlabel(f"{n} nodes, sorted by utilization after the placement")
        last.set_xticks([])
    title = "CPU" if resource == "cpu" else "Memory"
    fig.suptitle(f"{title} requested / allocatable per node (grey: before, colour: after)", x=0.01, ha="left",
                 fontsize=11, fontweight="bold")
    fig.tight_layout()
    return _png(fig)


CSS = """
:root { --ink:#1f2328; --muted:#59636e; --line:#d8dee4; --bg:#f6f8fa; }
* { box-sizing: border-box; }
body { margin:0; font:14px/1.45 -apple-system,"Segoe UI",Roboto,"DejaVu Sans",Helvetica,Arial,sans-serif;
       color:var(--ink); background:var(--bg); }
main { max-width:1180px; margin:0 auto; padding:24px 28px 48px; }
h1 { font-size:22px; margin:0 0 4px; } h2 { font-size:16px; margin:28px 0 10px; }
.sub { color:var(--muted); margin:0 0 18px; }
.verdict { font-size:15px; background:#fff; border:1px solid var(--line); border-left:4px solid #2563a8;
           padding:10px 14px; border-radius:6px; margin-bottom:18px; }
.cards { display:grid; grid-template-columns:repeat(auto-fit,minmax(230px,1fr)); gap:12px; }
.card { background:#fff; border:1px solid var(--line); border-top:4px solid var(--c); border-radius:6px;
        padding:12px 14px; }
.card h3 { margin:0 0 6px; font-size:14px; } .card .status { color:var(--muted); font-weight:normal; font-size:12px; }
.big { font-size:26px; font-weight:600; } .big small { font-size:14px; color:var(--muted); font-weight:normal; }
.kv { display:grid; grid-template-columns:auto 1fr; gap:1px 10px; font-size:12.5px; margin-top:6px; }
.kv span:nth-child(odd) { color:var(--muted); } .bad { color:#c62828; } .good { color:#2f7d32; }
.charts { display:grid; grid-template-columns:repeat(auto-fit,minmax(520px,1fr)); gap:14px; }
figure { margin:0; background:#fff; border:1px solid var(--line); border-radius:6px; padding:10px; }
figure img { width:100%; height:auto; display:block; }
table { border-collapse:collapse; background:#fff; border:1px solid var(--line); width:100%; font-size:13px; }
th, td { padding:5px 10px; border-bottom:1px solid #eef0f2; text-align:left; vertical-align:top; }
th { background:#eef2f6; font-weight:600; } td.num { font-variant-numeric:tabular-nums; white-space:nowrap; }
tr.sub td:first-child { padding-left:26px; color:var(--muted); } tr.sub2 td:first-child { padding-left:42px; color:var(--muted); }
.pod { font-family:ui-monospace,"DejaVu Sans Mono",monospace; font-size:12px; }
.note { color:var(--muted); font-size:12.5px; }
"""

ONLOAD = """<script>
window.addEventListener("load", function () {
  var ok = 0;
  document.querySelectorAll("img").forEach(function (i) { if (i.complete && i.naturalWidth > 0) ok++; });
  document.body.setAttribute("data-images-loaded", String(ok));
});
</script>"""


def _e(x: object) -> str:
    return html.escape(str(x))


def _verdict(doc: Mapping[str, Any]) -> str:
    cols = {c["name"]: c for c in doc["columns"]}
    g, o = cols["greedy"], cols["optimal"]
    more = o["placed"] - g["placed"]
    if more > 0:
        head = f"The optimum places <b>{more} more pod{'s' if more != 1 else ''}</b> than greedy scheduling"
    elif more < 0 and g.get("pdb_broken"):
        head = (f"Greedy places {-more} more pod{'s' if more != -1 else ''} than the optimum by breaking a "
                f"PodDisruptionBudget ({_e('; '.join(g['pdb_broken']))}), which the optimum respects")
    elif more < 0:
        head = f"Greedy places {-more} more pods than the optimum (the solver fell back or ran out of time)"
    else:
        head = "Greedy and the optimum place the same number of pods"
    # greedy first, then the optimum, in every figure of the sentence: the order the columns are shown in
    head += (f": greedy {g['placed']}, the optimum {o['placed']} of {g['to_place']}; preference score: "
             f"greedy {g['preference']}, the optimum {o['preference']}.")
    if doc.get("greedy_breaks_rules"):
        head += f" Why fewer: {_e(doc['greedy_breaks_rules'])}."
    if o.get("searched", "yes") != "yes":
        # a column that was never (or only partly) searched is not "the optimum": say so where it is read
        head += f" <b>The optimal column was not fully searched</b> ({_e(o['searched'])})."
    if "replacement" in cols:
        c, r = cols["current"], cols["replacement"]
        diff = next((d["pods"] for d in doc["differences"] if d["between"] == ["current", "replacement"]), [])
        moved = sum(1 for p in diff if p["current"] and p["replacement"])
        # the re-placement starts from the optimum (it has strictly more freedom): compare it with the optimum
        running = (f"the same {r['running']} pods running as the optimum" if r["running"] == o["running"]
                   else f"{r['running']} pods running instead of the optimum's {o['running']}")
        head += (f" Letting the {doc['movable_pods']} movable pods move as well: {running}; preference "
                 f"{c['preference']} today, {o['preference']} with the optimum, {r['preference']} with the "
                 f"re-placement; {moved} running pods moved.")
    return head


def _card(c: Mapping[str, Any]) -> str:
    pending = f'<span class="{"bad" if c["pending"] else "good"}">{c["pending"]}</span>'
    kv = [("pending", pending), ("preference", _e(c["preference"])),
          ("CPU mean / max", f"{pct(c['cpu']['mean'])} / {pct(c['cpu']['max'])}"),
          ("memory mean / max", f"{pct(c['memory']['mean'])} / {pct(c['memory']['max'])}"),
          ("nodes with apps", _e(c["nodes_used_without_daemonsets"]))]
    if c["gap"] is not None:
        kv.append(("gap", fmt_gap(c["gap"])))
    if c["wall_seconds"] is not None:
        kv.append(("time", f"{c['wall_seconds']:.2f}s"))
    cells = "".join(f"<span>{k}</span><span data-col=\"{c['name']}\" data-key=\"{_e(k)}\">{v}</span>" for k, v in kv)
    status = f' <span class="status">{_e(c["status"])}</span>' if c["name"] in ("optimal", "replacement") else ""
    return (f'<div class="card" style="--c:{COLORS[c["name"]]}"><h3>{_e(c["title"])}{status}</h3>'
            f'<div class="big"><span data-col="{c["name"]}" data-key="placed">{c["placed"]}</span>'
            f'<small> / {c["to_place"]} pods placed</small></div><div class="kv">{cells}</div></div>')


def _rows_table(doc: Mapping[str, Any]) -> str:
    cols = doc["columns"]
    head = "<tr><th></th>" + "".join(f"<th>{_e(c['title'])}</th>" for c in cols) + "</tr>"
    body = []
    for label, cells in rows(doc):
        depth = (len(label) - len(label.lstrip(" "))) // 2
        cls = ' class="sub"' if depth == 1 else ' class="sub2"' if depth >= 2 else ""
        name = label.strip()
        tds = "".join(f'<td class="num" data-col="{c["name"]}" data-row="{_e(name)}">{_e(v)}</td>'
                      for c, v in zip(cols, cells))
        body.append(f"<tr{cls}><td>{_e(name)}</td>{tds}</tr>")
    return f"<table>{head}{''.join(body)}</table>"


def _pending_table(doc: Mapping[str, Any]) -> str:
    cols = doc["columns"]
    reasons: list[str] = []
    for c in cols:
        reasons += [r for r in c["pending_reasons"] if r not in reasons]
    if not reasons:
        return '<p class="note">No pod stays pending in any column.</p>'
    head = "<tr><th>why pending</th>" + "".join(f"<th>{_e(c['title'])}</th>" for c in cols) + "</tr>"
    body = "".join("<tr><td>" + _e(r) + "</td>" + "".join(
        f'<td class="num">{c["pending_reasons"].get(r, 0)}</td>' for c in cols) + "</tr>" for r in reasons)
    return f"<table>{head}{body}</table>"


def _diff_tables(doc: Mapping[str, Any]) -> str:
    out = []
    for d in doc["differences"]:
        a, b = d["between"]
        out.append(f"<h2>{_e(TITLES[a])} vs {_e(TITLES[b])}: <span data-diff=\"{a}-{b}\">{d['count']}</span> "
                   "pods on a different node</h2>")
        if not d["pods"]:
            continue
        shown = d["pods"][:MAX_DIFF_ROWS]
        body = "".join(f'<tr><td class="pod">{_e(p["pod"])}</td><td class="pod">{_e(p[a] or "(pending)")}</td>'
                       f'<td class="pod">{_e(p[b] or "(pending)")}</td></tr>' for p in shown)
        # a long list is folded: its size and where most pods go first, every row on demand
        summary = f"the {len(d['pods'])} pods" + (f" (most to {_busiest(d['pods'], b)})" if len(d["pods"]) > 1 else "")
        opened = " open" if len(d["pods"]) <= OPEN_DIFF_ROWS else ""
        out.append(f"<details{opened}><summary>{_e(summary)}</summary>"
                   f"<table><tr><th>pod</th><th>{_e(TITLES[a])}</th><th>{_e(TITLES[b])}</th></tr>{body}</table>"
                   "</details>")
        if len(d["pods"]) > MAX_DIFF_ROWS:
            out.append(f'<p class="note">… and {len(d["pods"]) - MAX_DIFF_ROWS} more (all of them in '
                       "<code>podplan compare -o json</code>).</p>")
        out.append('<p class="note">Identical replicas are paired up: a replica moved from X to Y while another '
                   "moved from Y to X is no difference.</p>")
    return "".join(out)


def _busiest(pods: Sequence[Mapping[str, Any]], column: str) -> str:
    """The nodes most of `pods` go to in `column`: `node-3 (40), node-7 (12)`."""
    counts = Counter(p[column] or "(pending)" for p in pods)
    return ", ".join(f"{n} ({k})" for n, k in counts.most_common(3))


def render_html(doc: Mapping[str, Any], title: str = "podplan compare") -> str:
    """The whole report page for a compare document (optimizer.compare.to_dict)."""
    cols = doc["columns"]
    nodes = len(doc["nodes"])
    charts = [("Pods placed", chart_placed(doc)), ("Preference score per term", chart_terms(doc)),
              ("CPU per node", chart_nodes(doc, "cpu")), ("Memory per node", chart_nodes(doc, "memory"))]
    figs = "".join(f'<figure><img alt="{_e(t)}" src="{src}"></figure>' for t, src in charts)
    m = doc["multipliers"]
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{_e(title)}</title><style>{CSS}</style></head>
<body><main>
<h1>{_e(title)}</h1>
<p class="sub">{nodes} nodes · {cols[0]['to_place']} pending pods · columns: {', '.join(_e(c['title']) for c in cols)}
· multipliers: {', '.join(f'{_e(k)} {v}' for k, v in m.items())}</p>
<div class="verdict">{_verdict(doc)}</div>
<div class="cards">{''.join(_card(c) for c in cols)}</div>
<h2>At a glance</h2>
<div class="charts">{figs}</div>
<h2>Side by side</h2>
{_rows_table(doc)}
<h2>Why pods stay pending</h2>
{_pending_table(doc)}
{_diff_tables(doc)}
<p class="note">Every number about a placement is the verifier's (podplan verify judges each final state with
kube-scheduler's filters). Utilization = requested / allocatable per node.</p>
</main>{ONLOAD}</body></html>
"""


def save_html(page: str, directory: str | Path) -> Path:
    """Write DIR/report.html (created if needed) and return its path: compare's report and whatif's."""
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    path = out / "report.html"
    path.write_text(page, encoding="utf-8")
    return path


def write_report(doc: Mapping[str, Any], directory: str | Path, title: str = "podplan compare") -> Path:
    """Write DIR/report.html (created if needed) and return its path."""
    return save_html(render_html(doc, title), directory)
