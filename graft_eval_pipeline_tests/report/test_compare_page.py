"""The compare page (issue 26 item 3), as text and in headless Chromium.

`graft-eval view --base <run> --new <run>` writes one offline page with both runs side by side,
each rate's paired difference with its interval and the cases that moved, grouped.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from graft_eval_pipeline.cli import main
from graft_eval_pipeline.evalset.compare import compare_reports
from graft_eval_pipeline.evalset.report.compare_page import compare_page, usage_only
from graft_eval_pipeline.evalset.report.files import dump_report
from graft_eval_pipeline.evalset.report.runs import run_dirs
from graft_eval_pipeline.evalset.scoring import EvalReport
from graft_eval_pipeline.evalset.scoring.report_schema import UsageSummary
from graft_eval_pipeline_tests.compare.test_compare import logic_rows
from graft_eval_pipeline_tests.report.test_html_report import chromium, synthetic_with_history
from graft_eval_pipeline_tests.report.test_report import make_report
from graft_eval_pipeline_tests.row_builders import with_trials

BASE_RUN = "20261101T100000Z-aaaa"
NEW_RUN = "20261102T100000Z-bbbb"


def two_runs() -> tuple[EvalReport, EvalReport]:
    """Two live runs of 60 logic cases.

    c-004 under in base only (fixed), c-007 in new only (newly under), c-010 used more tokens in
    new (usage only).
    """
    base = make_report(logic_rows(60, under={4}), llm="live", run_id=BASE_RUN)
    rows = logic_rows(60, under={7})
    rows[10] = rows[10].model_copy(
        update={
            "usage": UsageSummary(
                input_tokens=2500, output_tokens=100, cache_read_tokens=0, cache_write_tokens=0, calls=2
            )
        }
    )
    new = make_report(rows, llm="live", run_id=NEW_RUN)
    return base, new


def write_runs(tmp_path: Path, *reports: EvalReport) -> list[Path]:
    """Each report as `runs/<runId>/report.json` (a run folder); the folders."""
    folders = []
    for report in reports:
        folder = tmp_path / "runs" / report.run_id
        folder.mkdir(parents=True)
        (folder / "report.json").write_text(dump_report(report))
        folders.append(folder)
    return folders


def group_ids(html: str, group: str) -> list[str]:
    found = re.search(rf'<section class="group" id="{group}" data-count="\d+">(.*?)</section>', html, re.S)
    assert found is not None, group
    return re.findall(r'<tr (?:class="fail" )?data-case="([^"]+)"', found[1])


def test_cases_that_moved_are_grouped_and_usage_alone_is_no_decision_change() -> None:
    base, new = two_runs()
    comparison = compare_reports(base, new)
    assert usage_only(base, new, comparison) == ["c-010"]
    html = compare_page(base, new, comparison, new_href="report.html")
    assert group_ids(html, "newly-under") == ["c-007"]
    assert group_ids(html, "fixed") == ["c-004"]
    assert group_ids(html, "other-changes") == [] and group_ids(html, "flaky") == []
    assert group_ids(html, "usage-only") == ["c-010"]
    assert 'href="report.html#case=c-007"' in html  # each case opens in the new run's panel
    # each rate: both k/n, the paired difference in points with its interval, the verdict
    under = re.search(r'<tr data-rate="underClassificationFinal"[^>]*>(.*?)</tr>', html, re.S)
    assert under is not None
    cells = re.findall(r"<td>(.*?)</td>", under[1])
    assert cells[2:4] == ["1/60 1.7%", "1/60 1.7%"]
    assert re.fullmatch(r"\+0\.0 \[-?\d+\.\d, \+\d+\.\d\]", cells[4]), cells[4]
    assert cells[6].startswith("no clear difference (could detect changes of ≥ ")
    assert "verdict: no clear difference; no blocker" in html
    assert '<span class="scripted"' not in html and "default-src 'none'" in html
    assert set(re.findall(r"https?://[^\s\"'<>]+", html)) == set()  # nothing from outside the file


def test_flaky_cases_are_their_own_group() -> None:
    base, new = two_runs()
    flips = with_trials(new, 3)
    assert flips.trials is not None
    rows = flips.trials.rows
    rows[0] = rows[0].model_copy(update={"model": "trivial", "final": "trivial"})  # c-000: one trial under
    comparison = compare_reports(base, flips)
    html = compare_page(base, flips, comparison)
    assert group_ids(html, "flaky") == ["c-000"]
    assert "c-000" not in group_ids(html, "usage-only")


def test_view_base_new_writes_the_page_beside_the_new_run_and_refuses_a_bad_target(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base, new = two_runs()
    base_dir, new_dir = write_runs(tmp_path, base, new)
    assert main(["view", "--base", str(base_dir), "--new", str(new_dir), "--no-open"]) == 0
    page = new_dir / f"compare-{BASE_RUN}.html"
    assert f"wrote {page}" in capsys.readouterr().out
    html = page.read_text()
    assert f'href="../{BASE_RUN}/report.html"' in html and 'href="report.html"' in html
    # a baseline file is no run folder: the page needs --out
    (tmp_path / "baseline.json").write_text(dump_report(base))
    assert main(["view", "--base", str(new_dir), "--new", str(tmp_path / "baseline.json"), "--no-open"]) == 2
    assert "--out" in capsys.readouterr().err
    out = tmp_path / "elsewhere" / "page.html"
    assert main(["view", "--base", str(base_dir), "--new", str(new_dir), "--out", str(out), "--no-open"]) == 0
    assert out.is_file() and f'href="../runs/{NEW_RUN}/report.html#case=c-007"' in out.read_text()
    assert main(["view", "--base", str(base_dir), "--new", str(new_dir), "--run", NEW_RUN]) == 2
    assert main(["view", "--no-open"]) == 2
    assert "--set" in capsys.readouterr().err


@pytest.mark.slow  # a browser
def test_browser_opens_the_compare_page_of_two_synthetic_runs_and_follows_a_case(tmp_path: Path) -> None:
    synthetic, run_dir = synthetic_with_history(tmp_path)
    first = run_dirs(synthetic)[0]
    assert (
        main(["view", "--set", str(synthetic), "--base", first.name, "--new", run_dir.name, "--no-open"]) == 0
    )
    page_file = run_dir / f"compare-{first.name}.html"
    with chromium() as browser:
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        problems: list[str] = []
        page.on("pageerror", lambda e: problems.append(str(e)))
        page.on("console", lambda m: problems.append(m.text) if m.type in ("error", "warning") else None)
        page.goto(page_file.as_uri())
        assert page.locator("#compare-verdict").inner_text() == "verdict: no clear difference; no blocker"
        sides = page.locator("#runs [data-side]")
        assert sides.count() == 2
        assert first.name in sides.nth(0).inner_text() and run_dir.name in sides.nth(1).inner_text()
        assert "scripted" in sides.nth(1).inner_text()  # fake runs say so
        assert page.locator("#compare-rates tbody tr").count() == 8
        # the page's differences are in points, and so is what a "no clear difference" could detect
        verdicts = page.eval_on_selector_all(
            "#compare-rates tbody tr td:last-child", "cs => cs.map(c => c.textContent)"
        )
        assert any("could detect changes of ≥ " in v for v in verdicts)
        assert all(re.search(r"≥ \d+\.\d points\)$", v) for v in verdicts if "could detect" in v), verdicts
        counts = page.eval_on_selector_all("section.group", "gs => gs.map(g => [g.id, g.dataset.count])")
        assert counts == [
            ["newly-under", "0"],
            ["fixed", "0"],
            ["other-changes", "0"],
            ["flaky", "0"],
            ["usage-only", "0"],
        ]
        # the side's run id links to that run's report.html
        sides.nth(0).locator("a").click()
        page.wait_for_url((first / "report.html").as_uri())
        assert problems == []
        page.close()
