"""report.html: one self-contained file per run, readable offline and attachable to a review.

Inline CSS, inline SVG charts (svg.py) and a small inline script (html_assets.py) that renders
the cases from one compact JSON block (case_data.py): a page of the table at a time, filters
that combine (kind, tag, search), a case panel opened by `#case=<id>`; a Content-Security-Policy
that allows nothing from outside the file. It shows the headline rates with their counts, the
baseline and threshold verdict, a live run's paired comparison with its baseline, every case,
the confusion matrices as heat maps, the rules fired and the headline rates over the set's runs,
each point a link to that run's report.html. A fake run's numbers are marked "scripted": they
come from the cases' scripts, not from a model.

Privacy (E8): for a pilot set the file holds ids, classes, rule ids and counts only, like
report.json; a case's content (`CaseContent`: title, card, paths) is shown for the synthetic set
alone, and dropped here whatever the caller passes (`for_set_kind`).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from html import escape

from graft_eval_pipeline.card import RISK_CLASSES, CardResult
from graft_eval_pipeline.evalset.compare import Comparison, comparison_html
from graft_eval_pipeline.evalset.report.baseline import BaselineDiff
from graft_eval_pipeline.evalset.report.case_data import case_table_data, json_block, kind_table
from graft_eval_pipeline.evalset.report.case_detail import CaseDetail, case_details, for_set_kind
from graft_eval_pipeline.evalset.report.case_kinds import (
    CASE_KINDS,
    FAILURE_KINDS,
    KIND_MEANINGS,
    KIND_TITLES,
    case_lines,
)
from graft_eval_pipeline.evalset.report.files import HTML_FILE
from graft_eval_pipeline.evalset.report.headline import Headline, headline_metrics
from graft_eval_pipeline.evalset.report.history import HistoryPoint, RunHistory, load_history, with_report
from graft_eval_pipeline.evalset.report.html_assets import SCRIPT, STYLE
from graft_eval_pipeline.evalset.report.render import (
    baseline_change_lines,
    baseline_line,
    gated_value,
    render_value,
)
from graft_eval_pipeline.evalset.report.svg import ChartPoint, bar_chart, heatmap, line_chart
from graft_eval_pipeline.evalset.report.thresholds import Limit, threshold_verdict
from graft_eval_pipeline.evalset.report.trials_render import trials_html
from graft_eval_pipeline.evalset.scoring import RUN_ID_PATTERN, EvalReport, RateStat
from graft_eval_pipeline.evalset.sets import CaseSet, iter_cases

MAX_CHANGES_SHOWN = 200
CSP = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:"
SCRIPTED = (
    '<span class="scripted" title="fake mode: the answers of the cases&#39; scripts, not of a model">'
    "scripted</span>"
)


def _e(value: object) -> str:
    return escape(str(value), quote=True)


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f} %"


def rate_text(rate: RateStat) -> str:
    """`3/4 75% [30–95%]`: a rate as a person reads it; `0/0 n/a` on an empty denominator."""
    if rate.value is None or rate.n == 0:
        return f"{rate.k}/{rate.n} n/a"
    bounds = f" [{100 * rate.ci95[0]:.0f}–{100 * rate.ci95[1]:.0f}%]" if rate.ci95 is not None else ""
    return f"{rate.k}/{rate.n} {100 * rate.value:.0f}%{bounds}"


def cost_text(report: EvalReport) -> str:
    """The run's cost with its meaning; "scripted" in fake mode, where no money is spent."""
    cost = report.metrics.cost_usd
    if report.llm == "fake":
        return "scripted (fake mode: no API call, no money spent)"
    if cost is None:
        return "n/a (a model without a price in the price table)"
    return f"${cost:.4f} (list price of this run's calls, USD)"


def run_label(run_id: str) -> str:
    """`20261130T140205Z-ab12` -> `11-30 14:02`: what the history charts print under a point."""
    found = re.fullmatch(r"\d{4}(\d{2})(\d{2})T(\d{2})(\d{2})\d{2}Z-[0-9a-f]{4}", run_id)
    return f"{found[1]}-{found[2]} {found[3]}:{found[4]}" if found else run_id[:13]


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
    scripted = (
        '<span class="badge na" id="scripted-note">fake mode: every number below is scripted (the '
        "cases' scripted answers test the pipeline, not a model)</span>"
        if report.llm == "fake"
        else ""
    )
    return f"""<header>
<h1>Evaluation report <code>{_e(report.run_id)}</code></h1>
<p class="meta">Set <b>{_e(s.set_id)}</b> ({_e(s.kind)}): {s.cases} cases, {s.scored} scored,
{s.unlabeled} unlabeled
· mode <b>{_e(report.llm)}</b> · created {_e(report.created_at.strftime("%Y-%m-%d %H:%M UTC"))}
· complete {_e(render_value(r.complete))}, skipped (budget) {r.skipped_budget}, cached {r.cached_results}
· prompt {_e(report.prompt.prompt_version)} · models {_e(report.models.fast)} / {_e(report.models.strong)}
· git {_e(git)}{" (dirty)" if report.git.dirty else ""}</p>
<p class="verdicts"><span class="badge {verdict_css}" id="threshold-verdict">{_e(verdict)}</span>
<span class="badge {base_css}" id="baseline-verdict">{_e(base)}</span>{scripted}</p>
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
        f'<div class="label">{_e(h.label)}</div><div class="value">{_pct(h.value)}'
        f"{SCRIPTED if report.llm == 'fake' else ''}</div>"
        f'<div class="count">{count}</div>{interval}{base}</div>'
    )


def _headline(report: EvalReport, diff: BaselineDiff | None) -> str:
    cards = "".join(_headline_card(h, report, diff) for h in headline_metrics(report.metrics))
    m = report.metrics
    scripted = f" {SCRIPTED}" if report.llm == "fake" else ""
    return f"""<section id="headline"><h2>Headline metrics</h2>
<div class="cards">{cards}</div>
<p class="meta" id="usage">Counts are cases (k of n) where the metrics hold them. Run cases {m.run_cases},
scored {m.scored}, skipped {m.skipped}; {m.usage.calls} calls, {m.usage.input_tokens} input and
{m.usage.output_tokens} output tokens{scripted}; cost <span id="cost">{_e(cost_text(report))}</span>.</p>
</section>"""


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
            f"<td>{_e(gated_value(t))}{SCRIPTED if report.llm == 'fake' else ''}</td>"
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


CASE_COLUMNS = (
    ("case", "id"),
    ("why", "kinds"),
    ("gold", "gold"),
    ("floor", "floor"),
    ("model", "model"),
    ("final", "final"),
    ("status", "status"),
    ("verifier", "vstatus"),
    ("rules fired", "rules"),
    ("raised by", "raised"),
    ("tags", "tags"),
    ("calls", "calls"),
    ("tokens", "tokens"),
    ("cost USD", "cost"),
)
"""The case table's columns: header and the data field the script sorts by."""


def _cases_section(report: EvalReport, diff: BaselineDiff | None, details: Mapping[str, CaseDetail]) -> str:
    lines = case_lines(report, diff)
    by_kind = Counter(str(k) for line in lines for k in line.kinds)
    failures = sum(1 for line in lines if set(line.kinds) & set(FAILURE_KINDS))
    titles = {str(k): title for k, title in KIND_TITLES.items()}
    buttons = [("failures", f"to look at ({failures})"), ("all", f"all ({len(lines)})")]
    buttons += [(k, f"{titles.get(k, k)} ({by_kind.get(k, 0)})") for k in kind_table(lines, diff is not None)]
    default = "failures" if failures else "all"
    filter_buttons = "".join(
        f'<button type="button" data-filter="{_e(k)}" aria-pressed="{str(k == default).lower()}">'
        f"{_e(text)}</button>"
        for k, text in buttons
    )
    tag_counts = Counter(t for row in report.cases for t in row.tags)
    data = case_table_data(
        lines,
        {row.id: row for row in report.cases},
        details,
        scripted=report.llm == "fake",
        with_changed=diff is not None,
        default_filter=default,
    )
    tag_index = {t: i for i, t in enumerate(data["tags"])}
    tag_options = "".join(
        f'<option value="{tag_index[t]}">{_e(t)} ({n})</option>' for t, n in sorted(tag_counts.items())
    )
    head = "".join(
        f'<th data-key="{key}"><button type="button" class="sort">{_e(name)}</button></th>'
        for name, key in CASE_COLUMNS
    )
    note = (
        "The panel shows each case's title and card: synthetic set only."
        if data["content"]
        else "Ids, classes, rules and counts only; "
        "<code>graft-eval show --set &lt;set&gt; --case &lt;id&gt;</code> prints a case."
    )
    return f"""<section id="cases"><h2>Cases</h2>
<p class="meta">{_e(". ".join(f"{KIND_TITLES[k]}: {KIND_MEANINGS[k]}" for k in CASE_KINDS))}.
Click a case (or open
<code>report.html#case=&lt;id&gt;</code>) for its panel: gold, floor rules, writer, verifier, usage. {note}
Click a column to sort.</p>
<div class="filters" role="group" aria-label="Filter cases by kind"
data-default="{default}">{filter_buttons}</div>
<div class="tools"><label>tag <select id="case-tag"><option value="">any tag</option>{tag_options}</select>
</label>
<input type="search" id="case-search" placeholder="search id, tag, rule, kind" aria-label="Search cases">
<span id="shown" class="meta" aria-live="polite"></span></div>
<div class="cases-wrap"><div class="scroll">
<table id="case-table"><thead><tr>{head}</tr></thead><tbody></tbody></table>
<div class="pager"><button type="button" id="page-prev">‹ previous</button>
<span id="page-info" class="meta"></span>
<button type="button" id="page-next">next ›</button></div>
<noscript><p>The case table needs JavaScript; report.md lists the cases to look at and cases.parquet
holds every row.</p></noscript></div>
<aside id="case-panel" hidden aria-label="Case detail">
<button type="button" class="close" id="case-panel-close">close ✕</button>
<div id="case-panel-body"></div></aside></div>
{json_block("case-data", data)}
</section>"""


def _confusion_section(report: EvalReport) -> str:
    charts = []
    for name in ("floor", "model", "final"):
        conf = getattr(report.metrics.confusion, name)
        chart = heatmap(conf.matrix, RISK_CLASSES, f"confusion matrix of the {name} class")
        recall = "; ".join(f"{c} {rate_text(getattr(conf.recall, c))}" for c in RISK_CLASSES)
        precision = "; ".join(f"{c} {rate_text(getattr(conf.precision, c))}" for c in RISK_CLASSES)
        scripted = f" {SCRIPTED}" if report.llm == "fake" else ""
        charts.append(
            f'<figure data-confusion="{name}">{chart}<figcaption><b>{name}</b> (n = {conf.n}){scripted}; '
            "shade: share of the gold row; red outline: under-classified<br>"
            f'<span class="recall">recall: {_e(recall)}</span><br>'
            f'<span class="precision">precision: {_e(precision)}</span></figcaption></figure>'
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


def _failing(value: float | None, limit: Limit | None) -> bool:
    if value is None or limit is None:
        return False
    return value > limit.value if limit.kind == "max" else value < limit.value


def history_points(
    history: list[HistoryPoint], name: str, current: str, limit: Limit | None
) -> list[ChartPoint]:
    """One headline rate over the runs as chart points.

    Each is linked to its run's report.html (a run folder beside this one) and marked where the
    prompt or the engine changed.
    """
    points = []
    for k, p in enumerate(history):
        rate = p.evidence.get(name)
        before = history[k - 1] if k else None
        changed = []
        if before is not None and before.prompt_fingerprint != p.prompt_fingerprint:
            changed.append("prompt")
        if before is not None and before.engine_fingerprint != p.engine_fingerprint:
            changed.append("engine")
        linkable = re.fullmatch(RUN_ID_PATTERN.strip("^$"), p.run_id) is not None
        count = f"{rate.k}/{rate.n}" if rate is not None and rate.k is not None else ""
        mode = "fake: scripted" if p.llm == "fake" else p.llm
        points.append(
            ChartPoint(
                run_id=p.run_id,
                label=run_label(p.run_id),
                value=p.rates.get(name),
                low=rate.ci95[0] if rate is not None and rate.ci95 is not None else None,
                high=rate.ci95[1] if rate is not None and rate.ci95 is not None else None,
                href=f"../{p.run_id}/{HTML_FILE}" if linkable else None,
                changed=tuple(changed),
                current=p.run_id == current,
                failing=_failing(p.rates.get(name), limit),
                note=", ".join(x for x in (count, mode) if x),
            )
        )
    return points


def _history_section(report: EvalReport, history: list[HistoryPoint], limits: Mapping[str, Limit]) -> str:
    charts = []
    for h in headline_metrics(report.metrics):
        limit = limits.get(h.name)
        points = history_points(history, h.name, report.run_id, limit)
        chart = line_chart(points, f"{h.label} over runs", limit.value if limit is not None else None)
        gate = f"; dashed: {limit.kind} {limit.value:g}" if limit is not None else ""
        charts.append(
            f'<figure data-history="{_e(h.name)}">{chart}'
            f"<figcaption>{_e(h.label)}{_e(gate)}</figcaption></figure>"
        )
    other = sum(p.case_set_hash != report.set.case_set_hash for p in history)
    note = f" {other} of them ran on other cases or labels (another case-set hash)." if other else ""
    modes = Counter(p.llm for p in history)
    scripted = (
        " Fake runs are scripted: their points test the pipeline, not a model." if "fake" in modes else ""
    )
    return (
        f'<section id="history"><h2>Metric history</h2><p class="meta">The last {len(history)} run(s) of set '
        f"{_e(report.set.set_id)} under runs/ ({', '.join(f'{n} {m}' for m, n in sorted(modes.items()))})."
        f"{_e(note)}{_e(scripted)} Each point links to that run's report.html (<code>graft-eval view --set "
        "&lt;set&gt; --run &lt;id&gt;</code> writes a missing one); hover for its run id, k/n and "
        "interval.</p>"
        '<p class="legend"><i style="background:#1f569e"></i>rate'
        '<i style="background:rgba(31,86,158,.2)"></i>'
        '95% interval<i style="border-top:2px dashed #333;height:0"></i>threshold'
        '<i style="border-left:2px dashed #7a5ea8;width:0;height:12px"></i>prompt or engine changed'
        '<i style="background:#c62828;border-radius:50%;width:8px"></i>beyond the threshold'
        '<i style="border:2px solid #111;border-radius:50%;width:6px;height:6px"></i>this run</p>'
        f'<div class="figures history">{"".join(charts)}</div></section>'
    )


def render_html(
    report: EvalReport,
    diff: BaselineDiff | None,
    history: list[HistoryPoint],
    details: Mapping[str, CaseDetail] | None = None,
    comparison: Comparison | None = None,
    limits: Mapping[str, Limit] | None = None,
) -> str:
    """The whole report.html.

    Of `details`, content only for the synthetic set (E8); a live run's `comparison` with its
    baseline gets its own section; `limits` (the set kind's thresholds) draw the threshold lines of
    the history charts.
    """
    shown = for_set_kind(details or {}, report.set.kind)
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
            _history_section(report, history, limits or {}),
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
    limits: Mapping[str, Limit] | None = None,
    earlier: RunHistory | None = None,
) -> SetHtml:
    """report.html for a run of `cs`.

    Its history from the set's runs/ (`earlier`: the runs before this one, when the caller read
    them already), and each case's panel: `details` when the run kept them as it went, else derived
    from the cards in `results` (the set's cases read one at a time; content for the synthetic set
    only).
    """
    if details is None and results:
        details = case_details(iter_cases(cs), results, content=cs.meta.kind == "synthetic")
    elif details is None and cs.meta.kind == "synthetic":
        details = case_details(iter_cases(cs), {}, content=True)
    history = load_history(cs, report) if earlier is None else with_report(earlier, report)
    page = render_html(report, diff, history.points, details, comparison, limits)
    return SetHtml(page, history.skipped)
