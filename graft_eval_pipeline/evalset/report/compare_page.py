"""The compare page: two runs side by side in one offline HTML file.

`graft-eval view --base <run> --new <run>` writes it, and the `eval_comparison` asset beside each
Dagster run's report.

What the `compare` screen says, for a person in a browser: the verdict with its notes, both runs'
identity (mode, prompt and engine fingerprints, models, cost), each headline rate with both k/n
and the paired difference with its 95% interval in percentage points, and the cases that moved,
grouped: newly under-classified or unavailable, fixed, other decision changes, flaky (trials of a
run disagree) and usage only (the same decisions, other tokens or cost). The data are
compare/'s `Comparison`; the usage-only group is read from the two reports' rows, as it is no
decision change. Ids, classes, counts and rates only (E8), so a pilot set's page is as safe as
its report.json; each case id links to the new run's report.html panel (`#case=<id>`).
"""

from __future__ import annotations

from collections.abc import Iterable
from html import escape

from graft_eval_pipeline.evalset.compare import BLOCKER_TEXT, Comparison, verdict_line, verdict_text
from graft_eval_pipeline.evalset.report.html_assets import STYLE
from graft_eval_pipeline.evalset.scoring import CaseRow, EvalReport

CSP = "default-src 'none'; style-src 'unsafe-inline'"
MAX_GROUP_ROWS = 500  # per group; `graft-eval compare --json` lists every case
NEWLY_WORSE = ("newly under-classified", "newly unavailable")
FIXED = ("no longer under-classified", "available again")


def _e(value: object) -> str:
    return escape(str(value), quote=True)


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}%"


def _pp(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:+.1f}"


def _usage_key(row: CaseRow) -> tuple[int, int, int, float | None]:
    return row.usage.input_tokens, row.usage.output_tokens, row.usage.calls, row.cost_usd


def usage_only(base: EvalReport, new: EvalReport, comparison: Comparison) -> list[str]:
    """Paired cases whose decisions did not change while their tokens, calls or cost did.

    Not in `changed`, not flaky; ids in order.
    """
    moved = {c.id for c in comparison.changed} | {c.id for c in comparison.flaky_cases}
    left_out = set(comparison.skipped) | set(comparison.only_in_base) | set(comparison.only_in_new)
    base_rows = {r.id: r for r in base.cases}
    return [
        r.id
        for r in new.cases
        if r.id in base_rows
        and r.id not in moved
        and r.id not in left_out
        and _usage_key(r) != _usage_key(base_rows[r.id])
    ]


def _side(label: str, report: EvalReport, href: str | None) -> str:
    p = report.prompt
    run = (
        f'<a href="{_e(href)}"><code>{_e(report.run_id)}</code></a>'
        if href
        else f"<code>{_e(report.run_id)}</code>"
    )
    cost = (
        "scripted (fake mode: no money spent)"
        if report.llm == "fake"
        else (
            "n/a" if report.metrics.cost_usd is None else f"${report.metrics.cost_usd:.4f} (list price, USD)"
        )
    )
    verdict = "pass" if report.passed else "fail"
    rows = [
        ("run", run),
        ("set", f"{_e(report.set.set_id)} ({_e(report.set.kind)}), {len(report.cases)} cases"),
        (
            "mode",
            _e(report.llm) + (' <span class="scripted">scripted</span>' if report.llm == "fake" else ""),
        ),
        ("created", _e(report.created_at.strftime("%Y-%m-%d %H:%M UTC"))),
        ("prompt", f"{_e(p.prompt_version)} <code>{_e(p.prompt_fingerprint[:12])}</code>"),
        ("engine", f"<code>{_e((p.engine_fingerprint or 'unrecorded')[:12])}</code>"),
        ("models", f"{_e(report.models.fast)} / {_e(report.models.strong)}"),
        ("thresholds", f'<span class="badge {verdict}">{verdict}</span>'),
        ("cost", _e(cost)),
    ]
    cells = "".join(f"<dt>{name}</dt><dd>{value}</dd>" for name, value in rows)
    return f'<div data-side="{label}"><h3>{label}</h3><dl class="pairs">{cells}</dl></div>'


def _rates(comparison: Comparison) -> str:
    head = "".join(
        f"<th>{h}</th>"
        for h in ("rate", "better", "base", "new", "new − base, points [95% CI]", "exact p", "verdict")
    )
    body = []
    for r in comparison.rates:
        css = {"regressed": "fail", "improved": "pass"}.get(r.verdict, "")
        interval = (
            f"{_pp(r.difference)} [{_pp(r.low)}, {_pp(r.high)}]" if r.low is not None else _pp(r.difference)
        )
        p = "n/a" if r.mcnemar_p is None else f"{r.mcnemar_p:.3g}"
        body.append(
            f'<tr data-rate="{_e(r.name)}" class="{css}"><td>{_e(r.name)}{"" if r.in_overall else " *"}</td>'
            f"<td>{_e(r.better)}</td><td>{r.base_k}/{r.base_n} {_pct(r.base)}</td>"
            f"<td>{r.new_k}/{r.new_n} {_pct(r.new)}</td><td>{_e(interval)}</td>"
            f"<td>{p}</td><td>{_e(verdict_text(r, points=True))}</td></tr>"
        )
    return (
        f'<table id="compare-rates"><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table>'
        '<p class="meta">* the model alone: outside the overall verdict. A rate moved when its 95% interval '
        "excludes 0 and its exact test (Holm-adjusted over the overall verdict's rates) is below 0.05.</p>"
    )


def _case_link(case_id: str, new_href: str | None) -> str:
    code = f"<code>{_e(case_id)}</code>"
    return f'<a href="{_e(new_href)}#case={_e(case_id)}">{code}</a>' if new_href else code


def _group(group_id: str, title: str, rows: list[str], header: Iterable[str], empty: str) -> str:
    count = len(rows)
    if not rows:
        return (
            f'<section class="group" id="{group_id}" data-count="0"><h3>{_e(title)} (0)</h3>'
            f"<p>{_e(empty)}</p></section>"
        )
    more = (
        f"<p>… and {count - MAX_GROUP_ROWS} more (<code>graft-eval compare --json</code> lists them all).</p>"
        if count > MAX_GROUP_ROWS
        else ""
    )
    head = "".join(f"<th>{_e(h)}</th>" for h in header)
    return (
        f'<section class="group" id="{group_id}" data-count="{count}"><h3>{_e(title)} ({count})</h3>'
        f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows[:MAX_GROUP_ROWS])}</tbody></table>{more}</section>"
    )


def _moved_cell(before: str | None, after: str | None) -> str:
    """`logic → trivial` where it moved, the one value where it did not."""
    return _e(before or "-") if before == after else f"{_e(before or '-')} → {_e(after or '-')}"


def _moved(base: EvalReport, new: EvalReport, comparison: Comparison, new_href: str | None) -> str:
    worse, fixed, other = [], [], []
    blocked = {b.id for b in comparison.blockers}
    for c in comparison.changed:
        notes = ", ".join(c.notes) + ("; blocker" if c.id in blocked else "")
        row = (
            f'<tr data-case="{_e(c.id)}"><td>{_case_link(c.id, new_href)}</td><td>{_e(c.gold or "-")}</td>'
            f"<td>{_moved_cell(c.base_final, c.new_final)}</td>"
            f"<td>{_moved_cell(c.base_model, c.new_model)}</td>"
            f"<td>{_moved_cell(c.base_status, c.new_status)}</td><td>{_e(notes or '-')}</td></tr>"
        )
        if any(n in NEWLY_WORSE for n in c.notes):
            worse.append(row.replace("<tr ", '<tr class="fail" ', 1))
        elif any(n in FIXED for n in c.notes):
            fixed.append(row)
        else:
            other.append(row)
    header = ("case", "gold", "final", "model", "status", "notes")
    flaky = [
        f'<tr data-case="{_e(f.id)}"><td>{_case_link(f.id, new_href)}</td><td>{_e(f.gold or "-")}</td>'
        f"<td>{f.base_under} of {f.base_scored}</td><td>{f.new_under} of {f.new_scored}</td>"
        f"<td>{f.base_trials} / {f.new_trials}</td></tr>"
        for f in comparison.flaky_cases
    ]
    base_rows = {r.id: r for r in base.cases}
    new_rows = {r.id: r for r in new.cases}
    usage = []
    for case_id in usage_only(base, new, comparison):
        b, n = base_rows[case_id], new_rows[case_id]
        b_tokens = b.usage.input_tokens + b.usage.output_tokens
        n_tokens = n.usage.input_tokens + n.usage.output_tokens
        usage.append(
            f'<tr data-case="{_e(case_id)}"><td>{_case_link(case_id, new_href)}</td>'
            f"<td>{b_tokens:,} → {n_tokens:,}</td><td>{b.usage.calls} → {n.usage.calls}</td></tr>"
        )
    return "".join(
        [
            _group("newly-under", "Newly under-classified or unavailable", worse, header, "None."),
            _group("fixed", "Fixed (no longer under-classified, available again)", fixed, header, "None."),
            _group("other-changes", "Other decision changes", other, header, "None."),
            _group(
                "flaky",
                "Flaky (trials of a run disagree: a flip, not a change)",
                flaky,
                ("case", "gold", "base: under in", "new: under in", "trials base / new"),
                "None.",
            ),
            _group(
                "usage-only",
                "Usage only (the same decisions, other tokens or calls)",
                usage,
                ("case", "tokens", "calls"),
                "None.",
            ),
        ]
    )


def _verdict_css(comparison: Comparison) -> str:
    if comparison.failed:
        return "fail"
    return "pass" if comparison.verdict == "improved" else "na"


def compare_page(
    base: EvalReport,
    new: EvalReport,
    comparison: Comparison,
    *,
    base_href: str | None = None,
    new_href: str | None = None,
) -> str:
    """The whole page; `base_href` / `new_href` link each run's report.html when it has one."""
    c = comparison
    notes = "".join(f"<li>{_e(n)}</li>" for n in c.notes)
    notes += "".join(f'<li class="warn-text">warning: {_e(w)}</li>' for w in c.warnings)
    margins = "".join(
        f'<li data-rate="{_e(m.name)}">{_e(m.name)}: {_e(m.verdict)} (margin {100 * m.margin:.1f} points; '
        f"new − base {_pp(m.difference)} [{_pp(m.low)}, {_pp(m.high)}])</li>"
        for m in c.non_inferiority
    )
    blockers = "".join(
        f"<li>{_e(b.id)}: {_e(BLOCKER_TEXT[b.kind])} ({_e(b.detail)})</li>" for b in c.blockers
    )
    scripted = (
        '<p class="badge na" id="scripted-note">fake mode: scripted answers, so this compares the pipeline, '
        "not a model</p>"
        if "fake" in (base.llm, new.llm)
        else ""
    )
    usage = (
        f"usage of the shared cases: {c.base_usage.input_tokens + c.base_usage.output_tokens:,} → "
        f"{c.new_usage.input_tokens + c.new_usage.output_tokens:,} tokens, "
        f"{c.base_usage.calls:,} → {c.new_usage.calls:,} calls"
    )
    only = ""
    if c.only_in_base or c.only_in_new:
        only = (
            f"<p>Only in base: {len(c.only_in_base)} case(s); only in new: {len(c.only_in_new)} case(s) "
            "(left out of the comparison).</p>"
        )
    body = f"""<header><h1>Compare <code>{_e(c.base.run_id)}</code> → <code>{_e(c.new.run_id)}</code></h1>
<p><span class="badge {_verdict_css(c)}" id="compare-verdict">{_e(verdict_line(c))}</span>
{c.shared} shared case(s) paired by id; {c.resamples:,} bootstrap resamples (seed {c.seed})</p>{scripted}
{f"<ul>{notes}</ul>" if notes else ""}</header>
<section id="runs"><h2>The two runs</h2>
<div class="side">{_side("base", base, base_href)}{_side("new", new, new_href)}</div></section>
<section id="rates"><h2>Headline rates, paired</h2>{_rates(c)}
{f'<h3>Non-inferiority</h3><ul id="non-inferiority">{margins}</ul>' if margins else ""}
{f'<h3>Blockers</h3><ul id="blockers">{blockers}</ul>' if blockers else ""}
<p class="meta">{_e(usage)}{" (scripted)" if "fake" in (base.llm, new.llm) else ""}</p></section>
<section id="moved"><h2>Cases that moved</h2>{only}{_moved(base, new, c, new_href)}</section>"""
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{CSP}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Compare {_e(c.base.run_id)} → {_e(c.new.run_id)} · {_e(c.new.set_id)}</title>
<style>{STYLE}</style></head>
<body>
{body}
<footer>Written by graft-eval from two report.json files: one file, no network, no script.
Ids, classes, counts and rates only.</footer>
</body></html>
"""
