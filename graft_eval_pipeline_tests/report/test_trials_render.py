"""The "Repeated trials" section of report.md and report.html (`--trials N`).

What a person reads is what report.json's trials block holds; a single-trial report has no such
section.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from graft_eval_pipeline.evalset.evaluate import run_eval
from graft_eval_pipeline.evalset.report.html import render_html
from graft_eval_pipeline.evalset.report.render import render_markdown
from graft_eval_pipeline.evalset.scoring import EvalReport
from graft_eval_pipeline_tests.builders import run_options
from graft_eval_pipeline_tests.live_fakes import Confirm, Factory, FakeLive, live_options
from graft_eval_pipeline_tests.report.test_html_report import chromium
from graft_eval_pipeline_tests.run.test_trials import FlipsCaseZero, logic_gold_set


@pytest.fixture(scope="module")
def flaky_report(tmp_path_factory: pytest.TempPathFactory) -> EvalReport:
    """Three cases of gold logic, three live trials; case 0's writer flips trivial/logic."""
    cs = logic_gold_set(tmp_path_factory.mktemp("trials"), 3)
    return run_eval(live_options(cs, Factory(FakeLive(FlipsCaseZero())), Confirm(), trials=3))


def section(markdown: str) -> list[str]:
    lines = markdown.splitlines()
    start = lines.index("## Repeated trials (3 per case)")
    end = next(i for i in range(start + 1, len(lines)) if lines[i].startswith("## "))
    return lines[start + 1 : end]


def test_markdown_shows_every_trial_rate_with_its_counts_interval_and_per_trial_values(
    flaky_report: EvalReport,
) -> None:
    trials = flaky_report.trials
    assert trials is not None
    shown = section(render_markdown(flaky_report, None))
    for name, rate in trials.rates.items():
        (row,) = [line for line in shown if line.startswith(f"| {name} |")]
        cells = [c.strip() for c in row.strip("|").split("|")]
        assert cells[1] == f"{rate.k}/{rate.n}"
        assert rate.mean is not None and None not in rate.per_trial  # every trial of every case ran
        assert cells[2] == f"{rate.mean:.3f}"
        assert cells[4] == ", ".join(f"{v:.3f}" for v in rate.per_trial if v is not None)
    under = next(line for line in shown if line.startswith("| underClassification |"))
    assert "| 8/9 | 0.889 |" in under and "1.000, 0.667, 1.000" in under
    flaky_id = flaky_report.cases[0].id
    assert f"- Flaky cases (the final class differs between trials): 1: {flaky_id}" in shown
    assert any(line.startswith("- Under-classified in at least one trial: 3/3 1.000") for line in shown)


def test_a_single_trial_report_has_no_trials_section(tmp_path: Path) -> None:
    report = run_eval(run_options(logic_gold_set(tmp_path, 2)))
    assert report.trials is None
    assert "Repeated trials" not in render_markdown(report, None)
    assert 'id="trials"' not in render_html(report, None, [])


@pytest.mark.slow  # a browser
def test_browser_shows_the_trials_table_and_the_flaky_case(flaky_report: EvalReport, tmp_path: Path) -> None:
    trials = flaky_report.trials
    assert trials is not None
    page_file = tmp_path / "report.html"
    page_file.write_text(render_html(flaky_report, None, []), encoding="utf-8")
    with chromium() as browser:
        page = browser.new_page()
        page.goto(page_file.as_uri())
        assert page.locator("#trials h2").inner_text() == "Repeated trials (3 per case)"
        rows = page.locator("#trial-rates tbody tr")
        assert rows.count() == len(trials.rates)
        first = rows.nth(0).locator("td").all_inner_texts()
        name, rate = next(iter(trials.rates.items()))
        assert first[:2] == [name, f"{rate.k}/{rate.n}"]
        assert flaky_report.cases[0].id in page.locator("#flaky").inner_text()
        assert page.locator("#trials").is_visible()
