"""report.html: one self-contained file per run, readable offline and attachable to a review.

Inline CSS, inline SVG charts (svg.py) and a little inline JavaScript for the case table's
filter and sort; a Content-Security-Policy that allows nothing from outside the file. It shows
the headline rates with their counts, the baseline and threshold verdict, a live run's paired
comparison with its baseline, every case (filtered
to the failure kinds by default, sortable), the confusion matrices as heat maps, the rules fired
and the headline rates over the set's runs.

Privacy (E8): for a pilot set the file holds ids, classes, rule ids and counts only, like
report.json; `CaseDetail` (the PR title and the card) is shown for the synthetic set alone, and
dropped here whatever the caller passes.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from html import escape

from graft_eval_pipeline.card import RISK_CLASSES, RISK_ORDER, CardResult
from graft_eval_pipeline.evalset.compare import Comparison, comparison_html
from graft_eval_pipeline.evalset.report.baseline import BaselineDiff
from graft_eval_pipeline.evalset.report.case_kinds import (
    CASE_KINDS,
    FAILURE_KINDS,
    KIND_MEANINGS,
    KIND_TITLES,
    CaseLine,
    case_lines,
    kind_counts,
)
from graft_eval_pipeline.evalset.report.headline import Headline, headline_metrics
from graft_eval_pipeline.evalset.report.history import HistoryPoint, load_history
from graft_eval_pipeline.evalset.report.render import (
    baseline_change_lines,
    baseline_line,
    gated_value,
    render_value,
)
from graft_eval_pipeline.evalset.report.svg import bar_chart, heatmap, line_chart
from graft_eval_pipeline.evalset.report.thresholds import threshold_verdict
from graft_eval_pipeline.evalset.report.trials_render import trials_html
from graft_eval_pipeline.evalset.scoring import CaseRow, EvalReport
from graft_eval_pipeline.evalset.sets import CaseSet, EvalCase, iter_cases, to_terminal_safe

MAX_CHANGES_SHOWN = 200
CSP = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:"


@dataclass(frozen=True)
class CaseDetail:
    """What the synthetic set's per-case view may show besides ids and classes."""

    title: str
    goal: str | None = None
    behavior_changes: tuple[str, ...] = ()
    out_of_scope: tuple[str, ...] = ()  # "path: reason"
    risk_reason: str | None = None


def case_detail(case: EvalCase, result: CardResult | None) -> CaseDetail:
    """The case's title and, when it has one, its card; synthetic cases only (render_html checks)."""
    card = result.card if result is not None else None
    return CaseDetail(
        title=case.inputs.pr.title,
        goal=card.goal if card else None,
        behavior_changes=tuple(card.behavior_changes) if card else (),
        out_of_scope=tuple(f"{e.path}: {e.reason}" for e in card.out_of_scope_edits) if card else (),
        risk_reason=card.risk_reason if card else None,
    )


def case_details(cases: Iterable[EvalCase], results: Mapping[str, CardResult]) -> dict[str, CaseDetail]:
    """Title and card per case id, the cases read one at a time; synthetic cases only."""
    return {case.id: case_detail(case, results.get(case.id)) for case in cases}


def _e(value: object) -> str:
    return escape(str(value), quote=True)


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f} %"


# --- sections -------------------------------------------------------------------------------


def _baseline_text(diff: BaselineDiff | None) -> tuple[str, str]:
    """(css class, text) of the baseline verdict."""
    if diff is None:
        return "na", "no baseline"
    if not diff.comparable:
        return "warn", "not comparable: " + "; ".join(diff.not_comparable)
    if diff.equal:
        return "pass", "matches the baseline"
    return ("warn" if diff.decisions_equal else "fail"), "baseline: " + baseline_line(diff)


def _verdict(report: EvalReport) -> tuple[str, str]:
    if not report.thresholds:
        return "na", "no thresholds for this set kind"
    failed = [t for t in report.thresholds if not t.passed]
    if not failed:
        return "pass", f"all {len(report.thresholds)} thresholds pass"
    fatal = [t for t in failed if not t.provisional]
    css = "fail" if fatal else "warn"
    return css, f"{len(failed)} of {len(report.thresholds)} thresholds fail" + (
        "" if fatal else " (provisional)"
    )


def _header(report: EvalReport, diff: BaselineDiff | None) -> str:
    s, r = report.set, report.run
    verdict_css, verdict = _verdict(report)
    base_css, base = _baseline_text(diff)
    git = report.git.commit[:12] if report.git.commit else "unknown"
    return f"""<header>
<h1>Evaluation report <code>{_e(report.run_id)}</code></h1>
<p class="meta">Set <b>{_e(s.set_id)}</b> ({_e(s.kind)}): {s.cases} cases, {s.scored} scored,
{s.unlabeled} unlabeled
· mode <b>{_e(report.llm)}</b> · created {_e(report.created_at.strftime("%Y-%m-%d %H:%M UTC"))}
· complete {_e(render_value(r.complete))}, skipped (budget) {r.skipped_budget}, cached {r.cached_results}
· prompt {_e(report.prompt.prompt_version)} · models {_e(report.models.fast)} / {_e(report.models.strong)}
· git {_e(git)}{" (dirty)" if report.git.dirty else ""}</p>
<p class="verdicts"><span class="badge {verdict_css}" id="threshold-verdict">{_e(verdict)}</span>
<span class="badge {base_css}" id="baseline-verdict">{_e(base)}</span></p>
<nav><a href="#headline">Headline</a> · <a href="#verdict">Baseline and thresholds</a> ·
<a href="#cases">Cases</a> · <a href="#confusion">Confusion matrices</a> · <a href="#rules">Rules fired</a> ·
<a href="#history">History</a></nav>
</header>"""


def _headline_card(h: Headline, report: EvalReport, diff: BaselineDiff | None) -> str:
    results = [t for t in report.thresholds if t.name == h.name]
    css = "fail" if any(not t.passed for t in results) else "pass" if results else ""
    count = f"{h.count[0]} of {h.count[1]}" if h.count is not None else "&nbsp;"
    interval = (
        f'<div class="interval">95 % interval {_pct(h.interval[0])} – {_pct(h.interval[1])}</div>'
        if h.interval is not None
        else ""
    )
    base = ""
    if diff is not None and diff.comparable and h.name in diff.baseline_metrics:
        base_value = diff.baseline_metrics[h.name]
        base = f'<div class="base">baseline {_pct(base_value)}</div>'
    better = {"lower": "lower is better", "higher": "higher is better"}.get(h.direction or "", "")
    return (
        f'<div class="card {css}" data-metric="{_e(h.name)}" title="{_e(h.name)}: {_e(better)}">'
        f'<div class="label">{_e(h.label)}</div><div class="value">{_pct(h.value)}</div>'
        f'<div class="count">{count}</div>{interval}{base}</div>'
    )


def _headline(report: EvalReport, diff: BaselineDiff | None) -> str:
    cards = "".join(_headline_card(h, report, diff) for h in headline_metrics(report.metrics))
    m = report.metrics
    cost = "n/a" if m.cost_usd is None else f"${m.cost_usd:.4f}"
    return f"""<section id="headline"><h2>Headline metrics</h2>
<div class="cards">{cards}</div>
<p class="meta">Counts are cases (k of n) where the metrics hold them. Run cases {m.run_cases},
scored {m.scored}, skipped {m.skipped}; {m.usage.calls} calls, {m.usage.input_tokens} input and
{m.usage.output_tokens} output tokens; cost {_e(cost)}.</p></section>"""


def _verdict_section(report: EvalReport, diff: BaselineDiff | None) -> str:
    base_css, base = _baseline_text(diff)
    parts = [
        '<section id="verdict"><h2>Baseline and thresholds</h2>',
        f'<p><span class="badge {base_css}">{_e(base)}</span></p>',
    ]
    if diff is not None:
        parts += [f'<p class="warn-text">Warning: {_e(w)}</p>' for w in diff.warnings]
    if report.thresholds:
        rows = "".join(
            f'<tr class="{"pass" if t.passed else "fail"}"><td>{_e(t.name)}</td>'
            f"<td>{_e(gated_value(t))}</td>"
            f"<td>{_e(t.limit)}</td><td>{_e(threshold_verdict(t))}</td></tr>"
            for t in report.thresholds
        )
        parts.append(
            '<table id="thresholds"><thead><tr><th>threshold</th><th>value (gated)</th><th>limit</th>'
            f"<th>result</th></tr></thead><tbody>{rows}</tbody></table>"
        )
    else:
        parts.append("<p>No thresholds for this set kind.</p>")
    changes = baseline_change_lines(report, diff)
    if changes:
        shown = "".join(f"<li>{_e(c)}</li>" for c in changes[:MAX_CHANGES_SHOWN])
        more = (
            f"<p>… and {len(changes) - MAX_CHANGES_SHOWN} more (report.md).</p>"
            if len(changes) > MAX_CHANGES_SHOWN
            else ""
        )
        parts.append(f'<h3>Changed since the baseline</h3><ul class="changes">{shown}</ul>{more}')
    parts.append("</section>")
    return "".join(parts)


def _class_cell(value: str | None) -> str:
    if value is None:
        return '<td data-sort="-1">-</td>'
    return f'<td class="cls {_e(value)}" data-sort="{RISK_ORDER[value]}">{_e(value)}</td>'


def _detail_html(detail: CaseDetail) -> str:
    items = [f"<p><b>Goal</b> {_e(to_terminal_safe(detail.goal))}</p>" if detail.goal else "<p>No card.</p>"]
    if detail.behavior_changes:
        items.append(
            "<p><b>Behaviour changes</b></p><ul>"
            + "".join(f"<li>{_e(to_terminal_safe(c))}</li>" for c in detail.behavior_changes)
            + "</ul>"
        )
    if detail.out_of_scope:
        items.append(
            "<p><b>Out of scope</b></p><ul>"
            + "".join(f"<li>{_e(to_terminal_safe(o))}</li>" for o in detail.out_of_scope)
            + "</ul>"
        )
    if detail.risk_reason:
        items.append(f"<p><b>Risk reason</b> {_e(to_terminal_safe(detail.risk_reason))}</p>")
    summary = f"<summary>{_e(to_terminal_safe(detail.title))}</summary>"
    return f'<details class="detail">{summary}{"".join(items)}</details>'


def _case_row(line: CaseLine, row: CaseRow, detail: CaseDetail | None) -> str:
    why = "".join(
        f'<span class="kind {k}">{"severe under" if k == "under" and line.severe else k}</span>'
        for k in line.kinds
    )
    cost = "" if row.cost_usd is None else f"{row.cost_usd:.6f}"
    first = f"<td><code>{_e(line.id)}</code>{_detail_html(detail) if detail else ''}</td>"
    cells = [
        first,
        f'<td data-sort="{_e(" ".join(line.kinds))}">{why or "-"}</td>',
        _class_cell(line.gold),
        _class_cell(line.floor),
        _class_cell(line.model),
        _class_cell(line.final),
        f"<td>{_e(line.status)}</td>",
        f"<td>{_e(line.verifier or '-')}</td>",
        f"<td>{_e(', '.join(line.rules) or '-')}</td>",
        f"<td>{_e(', '.join(row.raised_by) or '-')}</td>",
        f"<td>{_e(', '.join(row.tags) or '-')}</td>",
        f'<td class="num">{row.usage.calls}</td>',
        f'<td class="num">{row.usage.input_tokens + row.usage.output_tokens}</td>',
        f'<td class="num" data-sort="{_e(cost or -1)}">{_e(cost or "n/a")}</td>',
    ]
    return f'<tr class="case" data-kinds="{_e(" ".join(line.kinds))}">{"".join(cells)}</tr>'


def _cases_section(report: EvalReport, diff: BaselineDiff | None, details: Mapping[str, CaseDetail]) -> str:
    lines = case_lines(report, diff)
    counts = kind_counts(lines)
    failures = sum(1 for line in lines if set(line.kinds) & set(FAILURE_KINDS))
    buttons = [("failures", f"to look at ({failures})"), ("all", f"all ({len(lines)})")]
    buttons += [
        (k, f"{KIND_TITLES[k]} ({counts[k]})") for k in CASE_KINDS if k != "changed" or diff is not None
    ]
    default = "failures" if failures else "all"
    filter_buttons = "".join(
        f'<button type="button" data-filter="{k}" aria-pressed="{str(k == default).lower()}">'
        f"{_e(text)}</button>"
        for k, text in buttons
    )
    header = [
        "case",
        "why",
        "gold",
        "floor",
        "model",
        "final",
        "status",
        "verifier",
        "rules fired",
        "raised by",
        "tags",
        "calls",
        "tokens",
        "cost USD",
    ]
    head = "".join(f'<th><button type="button" class="sort">{_e(h)}</button></th>' for h in header)
    rows_by_id = {row.id: row for row in report.cases}
    body = "".join(_case_row(line, rows_by_id[line.id], details.get(line.id)) for line in lines)
    note = (
        "Title and card per case: synthetic set only."
        if details
        else "Ids, classes, rules and counts only; "
        "<code>graft-eval show --set &lt;set&gt; --case &lt;id&gt;</code> prints a case."
    )
    return f"""<section id="cases"><h2>Cases</h2>
<p class="meta">{_e(". ".join(f"{KIND_TITLES[k]}: {KIND_MEANINGS[k]}" for k in CASE_KINDS))}.
{note} Click a column to sort.</p>
<div class="filters" role="group" aria-label="Filter cases" data-default="{default}">{filter_buttons}</div>
<p id="shown" class="meta" aria-live="polite"></p>
<div class="scroll"><table id="case-table"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>
</section>"""


def _confusion_section(report: EvalReport) -> str:
    charts = []
    for name in ("floor", "model", "final"):
        conf = getattr(report.metrics.confusion, name)
        chart = heatmap(conf.matrix, RISK_CLASSES, f"confusion matrix of the {name} class")
        recall = ", ".join(f"{c} {render_value(getattr(conf.recall, c))}" for c in RISK_CLASSES)
        precision = ", ".join(f"{c} {render_value(getattr(conf.precision, c))}" for c in RISK_CLASSES)
        charts.append(
            f'<figure data-confusion="{name}">{chart}<figcaption><b>{name}</b> (n = {conf.n}); '
            "shade: share of the gold row; red outline: under-classified<br>"
            f"recall: {_e(recall)}<br>precision: {_e(precision)}</figcaption></figure>"
        )
    figures = "".join(charts)
    return (
        f'<section id="confusion"><h2>Confusion matrices</h2><div class="figures">{figures}</div></section>'
    )


def _rules_section(report: EvalReport) -> str:
    run = [r for r in report.cases if r.skipped is None]
    rules = Counter(rule for r in run for rule in r.floor_rules)
    raised = Counter(source for r in run for source in r.raised_by)
    by_rules = bar_chart(sorted(rules.items(), key=lambda kv: (-kv[1], kv[0])), "floor rules fired", len(run))
    by_source = bar_chart(
        sorted(raised.items(), key=lambda kv: (-kv[1], kv[0])), "raised above the floor by", len(run)
    )
    return (
        '<section id="rules"><h2>Rules fired</h2><div class="figures">'
        f'<figure data-chart="rules">{by_rules}'
        "<figcaption>Floor rules: cases where each fired</figcaption></figure>"
        f'<figure data-chart="raised">{by_source}<figcaption>Raised above the floor by</figcaption></figure>'
        "</div></section>"
    )


def _history_section(report: EvalReport, history: list[HistoryPoint]) -> str:
    charts = []
    for h in headline_metrics(report.metrics):
        points = [(p.run_id, p.rates.get(h.name)) for p in history]
        charts.append(
            f'<figure data-history="{_e(h.name)}">{line_chart(points, f"{h.label} over runs", report.run_id)}'
            f"<figcaption>{_e(h.label)}</figcaption></figure>"
        )
    other = sum(p.case_set_hash != report.set.case_set_hash for p in history)
    note = f" {other} of them ran on other cases or labels (another case-set hash)." if other else ""
    modes = Counter(p.llm for p in history)
    return (
        f'<section id="history"><h2>Metric history</h2><p class="meta">The last {len(history)} run(s) of set '
        f"{_e(report.set.set_id)} under runs/ ({', '.join(f'{n} {m}' for m, n in sorted(modes.items()))})."
        f"{_e(note)} Hover a point for its run id.</p>"
        f'<div class="figures history">{"".join(charts)}</div></section>'
    )


STYLE = """
body{font:14px/1.45 system-ui,sans-serif;margin:0 auto;max-width:1400px;padding:16px 24px;color:#111}
h1{font-size:22px;margin:4px 0}h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid #ddd}
code{font:12px ui-monospace,monospace}.meta{color:#555}nav a{color:#1f569e}
.badge{display:inline-block;padding:3px 10px;border-radius:12px;margin-right:8px;font-weight:600}
.pass{background:#e6f4ea;color:#1e6b34}.fail{background:#fdecea;color:#b3261e}.warn{background:#fff4e5;color:#8a5300}
.na{background:#eee;color:#444}.warn-text{color:#8a5300}
.cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(190px,1fr));gap:10px}
.card{border:1px solid #ddd;border-radius:8px;padding:8px 10px;background:#fafafa}
.card.fail{border-color:#b3261e}.card.pass{border-color:#8cc79b}
.card .label{font-size:12px;color:#444}.card .value{font-size:22px;font-weight:600}
.card .count,.card .base,.card .interval{font-size:12px;color:#555}
table{border-collapse:collapse;font-size:13px}
th,td{border-bottom:1px solid #eee;padding:4px 8px;text-align:left;vertical-align:top}
th button{font:inherit;font-weight:600;background:none;border:0;padding:0;cursor:pointer}
th[aria-sort=ascending] button::after{content:" ▲"}th[aria-sort=descending] button::after{content:" ▼"}
tr.fail td{color:#b3261e}.num{text-align:right}.scroll{overflow-x:auto}
.filters button{margin:0 6px 6px 0;padding:4px 10px;border:1px solid #bbb;border-radius:14px;
background:#fff;cursor:pointer}
.filters button[aria-pressed=true]{background:#1f569e;color:#fff;border-color:#1f569e}
.kind{display:inline-block;font-size:11px;padding:1px 6px;border-radius:8px;margin:1px;background:#eee}
.kind.under{background:#fdecea;color:#b3261e}.kind.over{background:#fff4e5;color:#8a5300}
.kind.unavailable{background:#ececec}.kind.flagged{background:#e8eefc;color:#1f569e}.kind.changed{background:#f3e8fd}
.cls.sensitive{color:#b3261e}.cls.logic{color:#8a5300}
.figures{display:flex;flex-wrap:wrap;gap:18px}figure{margin:0}figcaption{font-size:12px;color:#444}
figure[data-confusion]{max-width:300px}
details.detail{margin-top:4px;max-width:420px}details.detail summary{cursor:pointer;color:#1f569e}
footer{margin:32px 0 8px;color:#777;font-size:12px}
"""

SCRIPT = """
(function () {
  var table = document.getElementById('case-table');
  var body = table.tBodies[0];
  var rows = Array.prototype.slice.call(body.rows);
  var FAIL = ['under', 'over', 'unavailable', 'flagged'];
  var shown = document.getElementById('shown');
  var group = document.querySelector('.filters');
  var buttons = Array.prototype.slice.call(group.querySelectorAll('button[data-filter]'));
  function kindsOf(row) { return row.dataset.kinds ? row.dataset.kinds.split(' ') : []; }
  function matches(row, kind) {
    var kinds = kindsOf(row);
    if (kind === 'all') return true;
    if (kind === 'failures') return kinds.some(function (k) { return FAIL.indexOf(k) >= 0; });
    return kinds.indexOf(kind) >= 0;
  }
  function apply(kind) {
    var n = 0;
    rows.forEach(function (row) { var on = matches(row, kind); row.hidden = !on; if (on) n++; });
    buttons.forEach(function (b) { b.setAttribute('aria-pressed', String(b.dataset.filter === kind)); });
    shown.textContent = n + ' of ' + rows.length + ' cases shown';
  }
  buttons.forEach(function (b) {
    b.addEventListener('click', function () {
      apply(b.dataset.filter);
      try { history.replaceState(null, '', '#' + b.dataset.filter); } catch (e) { /* file: URLs */ }
    });
  });
  function fromHash() {
    var wanted = location.hash.slice(1);
    var known = buttons.some(function (b) { return b.dataset.filter === wanted; });
    return known ? wanted : null;
  }
  apply(fromHash() || group.dataset.default);
  window.addEventListener('hashchange', function () { var kind = fromHash(); if (kind) apply(kind); });
  Array.prototype.slice.call(table.tHead.rows[0].cells).forEach(function (th) {
    th.querySelector('button').addEventListener('click', function () {
      var col = th.cellIndex;
      var dir = th.getAttribute('aria-sort') === 'ascending' ? -1 : 1;
      Array.prototype.forEach.call(table.tHead.rows[0].cells, function (h) {
        h.removeAttribute('aria-sort');
      });
      th.setAttribute('aria-sort', dir === 1 ? 'ascending' : 'descending');
      function key(row) {
        var cell = row.cells[col];
        return cell.dataset.sort !== undefined ? cell.dataset.sort : cell.textContent.trim();
      }
      rows.sort(function (a, b) {
        var x = key(a), y = key(b), nx = parseFloat(x), ny = parseFloat(y);
        var c = (!isNaN(nx) && !isNaN(ny)) ? nx - ny : x.localeCompare(y);
        return c * dir;
      });
      rows.forEach(function (row) { body.appendChild(row); });
    });
  });
})();
"""


def render_html(
    report: EvalReport,
    diff: BaselineDiff | None,
    history: list[HistoryPoint],
    details: Mapping[str, CaseDetail] | None = None,
    comparison: Comparison | None = None,
) -> str:
    """The whole report.html.

    `details` are ignored unless the set is synthetic (E8); a live run's `comparison` with its
    baseline gets its own section.
    """
    shown = dict(details or {}) if report.set.kind == "synthetic" else {}
    body = "\n".join(
        [
            _header(report, diff),
            _headline(report, diff),
            trials_html(report.trials) if report.trials is not None else "",
            _verdict_section(report, diff),
            comparison_html(comparison) if comparison is not None else "",
            _cases_section(report, diff, shown),
            _confusion_section(report),
            _rules_section(report),
            _history_section(report, history),
        ]
    )
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{CSP}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Evaluation report {_e(report.run_id)} · {_e(report.set.set_id)}</title>
<style>{STYLE}</style></head>
<body>
{body}
<footer>Written by graft-eval from report.json: one file, no network, no external files.
Pilot sets show ids, classes, rules and counts only.</footer>
<script>{SCRIPT}</script>
</body></html>
"""


@dataclass(frozen=True)
class SetHtml:
    """report.html's text, and a warning for each past report its history had to leave out."""

    html: str
    warnings: list[str]


def set_html(
    cs: CaseSet,
    report: EvalReport,
    diff: BaselineDiff | None,
    results: Mapping[str, CardResult] | None = None,
    details: Mapping[str, CaseDetail] | None = None,
    comparison: Comparison | None = None,
) -> SetHtml:
    """report.html for a run of `cs`.

    Its history from the set's runs/, and for the synthetic set the case titles and cards: `details`
    when the run kept them as it went, else the titles read from the set (one case at a time) with
    the cards in `results`.
    """
    shown: Mapping[str, CaseDetail] | None = None
    if cs.meta.kind == "synthetic":
        shown = details if details is not None else case_details(iter_cases(cs), results or {})
    history = load_history(cs.dir, report)
    return SetHtml(render_html(report, diff, history.points, shown, comparison), history.skipped)
