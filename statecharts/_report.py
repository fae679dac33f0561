"""Coverage reports: a terminal table per chart, and a static HTML report.

Both read a ``Coverage`` and the charts it was recorded against. A chart's transitions are
its coverage measure (``ChartSummary.percent``); states entered and the (state, event) pairs
that were ignored are shown beside them, and so is everything never exercised.

The HTML report is a directory: ``index.html`` lists the charts; each chart's page shows its
diagram with the coverage overlay (inline SVG, drawn by Graphviz when it is installed), then a
table per kind, where each transition and state row links to its shape in the diagram, which
is highlighted while it is the page's target. Nothing is loaded from the network.
"""

from __future__ import annotations

import hashlib
import html
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from ._coverage import ChartCoverage, Coverage, exercised
from ._diagram import render
from ._errors import GraphvizNotFound
from ._ir import ChartDef, TransitionDef
from ._overlay import coverage_overlay


@dataclass(frozen=True, slots=True)
class ChartSummary:
    """Coverage of one chart: counts per transition and state, and the ignored pairs."""

    chart: ChartDef
    taken: dict[str, int]
    entered: dict[str, bool]
    arrivals: dict[str, int]
    ignored: dict[tuple[str, str], int]

    @classmethod
    def of(cls, chart: ChartDef, counts: ChartCoverage | None) -> ChartSummary:
        counts = counts if counts is not None else ChartCoverage()
        taken, reached = exercised(chart, counts)
        entered = {state.id: state.id in reached for state in chart.states}
        arrivals = {state.id: 0 for state in chart.states}
        for transition in chart.transitions:
            if transition.target is not None and transition.target != transition.source:
                arrivals[transition.target] += taken[transition.id]
        ignored = {
            (state, event): count
            for state, events in sorted(counts.ignored.items())
            for event, count in sorted(events.items())
        }
        return cls(chart, taken, entered, arrivals, ignored)

    @property
    def transitions_taken(self) -> int:
        return sum(1 for count in self.taken.values() if count)

    @property
    def states_entered(self) -> int:
        return sum(self.entered.values())

    @property
    def percent(self) -> float:
        """Transitions taken, in percent (100 for a chart without transitions)."""
        total = len(self.taken)
        return 100.0 if total == 0 else 100.0 * self.transitions_taken / total

    @property
    def never(self) -> list[str]:
        """Transitions never taken and states never entered, by id."""
        missed = [f"transition {t}" for t, count in self.taken.items() if not count]
        return missed + [f"state {s}" for s, hit in self.entered.items() if not hit]


def summaries(
    coverage: Coverage, charts: Mapping[str, ChartDef] | None = None
) -> list[ChartSummary]:
    """One summary per chart known to ``coverage`` (or given), ordered by qualname."""
    known = dict(coverage.definitions)
    known.update(charts or {})
    return [ChartSummary.of(known[key], coverage.charts.get(key)) for key in sorted(known)]


def total_percent(found: Iterable[ChartSummary]) -> float:
    """Transitions taken over all charts, in percent (0 when there is no chart: nothing was
    tested, which must not read as complete)."""
    found = list(found)
    if not found:
        return 0.0
    total = sum(len(summary.taken) for summary in found)
    taken = sum(summary.transitions_taken for summary in found)
    return 100.0 if total == 0 else 100.0 * taken / total


def percent_text(value: float) -> str:
    """``value`` with one decimal, never rounded to ``100.0`` or ``0.0`` when it is not
    exactly that: 1,999 of 2,000 transitions is ``99.9``, not a full coverage."""
    text = f"{value:.1f}"
    if text == "100.0" and value < 100:
        return "99.9"
    if text == "0.0" and value > 0:
        return "0.1"
    return text


def _format_percent(value: float) -> str:
    text = percent_text(value).rstrip("0").rstrip(".")
    return f"{text}%"


def terminal_table(summary: ChartSummary) -> list[str]:
    """The lines of one chart's table, for a terminal."""
    chart = summary.chart
    lines = [
        f"{chart.qualname}: {summary.transitions_taken}/{len(summary.taken)} transitions "
        f"({_format_percent(summary.percent)}), {summary.states_entered}/{len(summary.entered)}"
        f" states, {sum(summary.ignored.values())} events ignored"
    ]
    width = max([len(t) for t in summary.taken] + [len("transition")])
    lines.append(f"  {'transition'.ljust(width)}  {'taken':>7}")
    lines += [f"  {t.ljust(width)}  {count:>7}" for t, count in summary.taken.items()]
    width = max([len(s) + 10 for s in summary.entered] + [len("state (arrivals)")])
    lines.append(f"  {'state (arrivals)'.ljust(width)}  {'entered':>7}")
    for state, hit in summary.entered.items():
        name = f"{state} (initial)" if state == chart.initial.id else state
        count = str(summary.arrivals[state]) if hit else "never"
        lines.append(f"  {name.ljust(width)}  {count:>7}")
    if summary.ignored:
        pairs = {f"{state} <- {event}": count for (state, event), count in summary.ignored.items()}
        width = max(len(pair) for pair in [*pairs, "ignored (state <- event)"])
        lines.append(f"  {'ignored (state <- event)'.ljust(width)}  {'times':>7}")
        lines += [f"  {pair.ljust(width)}  {count:>7}" for pair, count in pairs.items()]
    never = summary.never
    lines.append("  never exercised: " + (", ".join(never) if never else "nothing"))
    return lines


# -- HTML ------------------------------------------------------------------------------------

_STYLE = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5rem 2rem; color: #212121; }
h1 { font-size: 1.4rem; margin: 0 0 .3rem; } h2 { font-size: 1.1rem; margin: 1.4rem 0 .4rem; }
.summary { color: #424242; margin-bottom: 1rem; }
table { border-collapse: collapse; margin: .3rem 0; }
th, td { text-align: left; padding: .2rem .8rem; border-bottom: 1px solid #e0e0e0; }
td.count { text-align: right; font-variant-numeric: tabular-nums; }
tr.missed td { background: #ffebee; } tr.hit td:first-child { border-left: 4px solid #1565c0; }
tr.missed td:first-child { border-left: 4px solid #c62828; }
#diagram { border: 1px solid #e0e0e0; padding: .5rem; overflow: auto; max-width: 100%; }
#diagram svg { max-width: 100%; height: auto; }
#diagram .selected path, #diagram .selected polygon, #diagram .selected ellipse {
  stroke: #ff6f00; stroke-width: 4px; }
#diagram .selected text { fill: #ff6f00; font-weight: bold; }
.bar { display: inline-block; width: 8rem; height: .7rem; background: #ffcdd2; }
.bar span { display: block; height: 100%; background: #1565c0; }
a { color: #0d47a1; }
"""

#: Highlights the diagram shape a row links to (the URL's fragment) and names it on <body>.
_SCRIPT = """
function select() {
  for (const old of document.querySelectorAll('#diagram .selected')) {
    old.classList.remove('selected');
  }
  const id = decodeURIComponent(location.hash.slice(1));
  const found = id && document.getElementById(id);
  if (found && found.closest('#diagram')) {
    found.classList.add('selected');
    document.body.dataset.selected = id;
  } else {
    delete document.body.dataset.selected;
  }
}
window.addEventListener('hashchange', select);
window.addEventListener('DOMContentLoaded', select);
"""


def _page(title: str, body: str) -> str:
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f"<title>{html.escape(title)}</title>\n<style>{_STYLE}</style>\n"
        f"<script>{_SCRIPT}</script>\n</head>\n<body>\n{body}\n</body>\n</html>\n"
    )


def _bar(percent: float) -> str:
    inner = f'<span style="width:{percent:.1f}%"></span>'
    return f'<span class="bar" title="{percent_text(percent)}%">{inner}</span>'


def page_name(chart: ChartDef) -> str:
    """The file name of a chart's page: its qualname made safe for a path (with a short digest
    of the qualname when characters had to be replaced, so two charts never share a page)."""
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", chart.qualname)
    if safe != chart.qualname:
        safe += "-" + hashlib.sha256(chart.qualname.encode()).hexdigest()[:8]
    return safe + ".html"


def _link(kind: str, item_id: str) -> str:
    return "#" + quote(f"{kind}:{item_id}", safe=":")


def _transition_link(chart: ChartDef, transition: TransitionDef) -> str:
    """Where a transition's row links: its edge in the diagram. A compound state's initial
    transition is its initial arrow (``initial:<child>``); a parallel state's are drawn as no
    edge (every region is entered), so theirs link to the region's shape."""
    if transition.initial and transition.target is not None:
        if chart.state(transition.source).kind == "parallel":
            return _link("state", transition.target)
        return _link("initial", transition.target)
    return _link("transition", transition.id)


def _svg(chart: ChartDef, coverage: Coverage) -> str:
    try:
        svg = render(chart, "svg", overlay=coverage_overlay(chart, coverage)).decode("utf-8")
    except GraphvizNotFound:
        return (
            '<p class="no-diagram">No diagram: Graphviz (<code>dot</code>) is not installed.</p>'
        )
    start = svg.find("<svg")
    return svg[start:] if start >= 0 else svg


def chart_page(summary: ChartSummary, coverage: Coverage) -> str:
    """One chart's page: summary, diagram with the overlay, and the linked tables."""
    chart = summary.chart
    esc = html.escape
    parts = [
        '<p><a href="index.html">&larr; all charts</a></p>',
        f"<h1>{esc(chart.name)}</h1>",
        f'<p class="summary">{esc(chart.qualname)}: {summary.transitions_taken} of '
        f"{len(summary.taken)} transitions taken ({_format_percent(summary.percent)}) "
        f"{_bar(summary.percent)}, {summary.states_entered} of {len(summary.entered)} states "
        f"entered, {sum(summary.ignored.values())} events ignored.</p>",
        f'<div id="diagram">{_svg(chart, coverage)}</div>',
        '<h2>Transitions</h2>\n<table id="transitions">',
        "<tr><th>transition</th><th>source</th><th>events</th><th>target</th><th>taken</th></tr>",
    ]
    for transition in chart.transitions:
        count = summary.taken[transition.id]
        href = esc(_transition_link(chart, transition))
        parts.append(
            f'<tr class="{"hit" if count else "missed"}">'
            f'<td><a href="{href}">{esc(transition.id)}</a></td>'
            f"<td>{esc(transition.source)}</td><td>{esc(' '.join(transition.events))}</td>"
            f"<td>{esc(transition.target or '(stays)')}</td>"
            f'<td class="count">{count}</td></tr>'
        )
    parts += [
        "</table>",
        '<h2>States</h2>\n<table id="states">',
        "<tr><th>state</th><th>entered</th><th>arrivals</th><th>events ignored there</th></tr>",
    ]
    for state in chart.states:
        hit = summary.entered[state.id]
        ignored = ", ".join(
            f"{event} ×{count}"
            for (where, event), count in summary.ignored.items()
            if where == state.id
        )
        parts.append(
            f'<tr class="{"hit" if hit else "missed"}">'
            f'<td><a href="{esc(_link("state", state.id))}">{esc(state.id)}</a></td>'
            f"<td>{'yes' if hit else 'never'}</td>"
            f'<td class="count">{summary.arrivals[state.id]}</td><td>{esc(ignored)}</td></tr>'
        )
    parts.append("</table>")
    never = summary.never
    parts.append(
        "<h2>Never exercised</h2>\n<p>"
        + (esc(", ".join(never)) if never else "Nothing: every transition and state.")
        + "</p>"
    )
    return _page(f"{chart.name} coverage", "\n".join(parts))


def write_html(
    directory: str | Path, coverage: Coverage, charts: Mapping[str, ChartDef] | None = None
) -> Path:
    """Write the report into ``directory`` (created if needed); return ``index.html``'s path."""
    target = Path(directory)
    target.mkdir(parents=True, exist_ok=True)
    found = summaries(coverage, charts)
    rows = []
    for summary in found:
        name = page_name(summary.chart)
        (target / name).write_text(chart_page(summary, coverage), encoding="utf-8")
        rows.append(
            f'<tr class="{"hit" if summary.percent == 100 else "missed"}">'
            f'<td><a href="{quote(name)}">{html.escape(summary.chart.qualname)}</a></td>'
            f'<td class="count">{summary.transitions_taken}/{len(summary.taken)}</td>'
            f'<td class="count">{_format_percent(summary.percent)}</td>'
            f"<td>{_bar(summary.percent)}</td>"
            f'<td class="count">{summary.states_entered}/{len(summary.entered)}</td>'
            f'<td class="count">{sum(summary.ignored.values())}</td></tr>'
        )
    total = total_percent(found)
    body = "\n".join(
        [
            "<h1>Chart coverage</h1>",
            f'<p class="summary">{len(found)} charts, {_format_percent(total)} of transitions '
            f"taken.</p>",
            '<table id="charts">',
            "<tr><th>chart</th><th>transitions</th><th>%</th><th></th><th>states</th>"
            "<th>ignored</th></tr>",
            *rows,
            "</table>",
        ]
    )
    index = target / "index.html"
    index.write_text(_page("Chart coverage", body), encoding="utf-8")
    return index
