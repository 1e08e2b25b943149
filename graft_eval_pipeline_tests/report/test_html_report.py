"""report.html (issue 15 §2).

One offline file per run, checked as text and in a real browser (Debian's Chromium driven by
Playwright), and `graft-eval view`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from graft_eval_pipeline.cli import main
from graft_eval_pipeline.evalset.compare.compare import Comparison
from graft_eval_pipeline.evalset.compare.compare_render import verdict_text
from graft_eval_pipeline.evalset.report.files import load_report
from graft_eval_pipeline.evalset.report.headline import (
    HEADLINE_RATES,
    headline_metrics,
)
from graft_eval_pipeline.evalset.report.html import render_html
from graft_eval_pipeline.evalset.report.publish import live_comparison
from graft_eval_pipeline.evalset.report.runs import run_dirs
from graft_eval_pipeline.evalset.sets.crypto import generate_key, parse_key
from graft_eval_pipeline.evalset.sets.paths import SYNTHETIC_BASELINE
from graft_eval_pipeline.evalset.sets.store import write_case
from graft_eval_pipeline_tests.builders import (
    copy_synthetic,
    make_file,
    make_inputs,
    make_label,
    make_pilot_case,
    make_pilot_set,
)
from graft_eval_pipeline_tests.compare.test_compare import logic_rows
from graft_eval_pipeline_tests.report.test_report import make_report

CHROMIUM = Path("/usr/bin/chromium")
# Debian's Chromium on a machine without a network: nothing may try to reach one.
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
SECRET_TITLE = "Quietly rotate the ledger signing key"
SECRET_PATH = "services/ledger/signing_key.py"
OVER = ["syn-027-writer-down", "syn-029-pure-rename"]
TO_LOOK_AT = ["syn-016-too-large", *OVER]  # the verifier's correct flags are no failure


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("GRAFT_EVAL_KEY", "ANTHROPIC_API_KEY", "GRAFT_LLM_MODEL_FAST", "GRAFT_LLM_MODEL_STRONG"):
        monkeypatch.delenv(name, raising=False)


def case_data(html: str) -> Any:
    """report.html's case data block, parsed."""
    found = re.search(r'<script type="application/json" id="case-data">(.*?)</script>', html, re.S)
    assert found is not None
    return json.loads(found[1])


def synthetic_with_history(tmp_path: Path) -> tuple[Path, Path]:
    """A synthetic copy with three runs (all cases, a subset, all cases); the last run's folder."""
    synthetic = copy_synthetic(tmp_path, baseline=True)
    assert main(["run", "--set", str(synthetic)]) == 0
    assert main(["run", "--set", str(synthetic), "--cases", ",".join([*OVER, "syn-001-docs-typo"])]) == 0
    assert main(["run", "--set", str(synthetic)]) == 0
    runs = run_dirs(synthetic)  # oldest first (two runs in one second: by their report's time)
    assert len(runs) == 3 and all((r / "report.html").is_file() for r in runs)
    return synthetic, runs[-1]


def test_html_is_one_offline_file_with_every_section(tmp_path: Path) -> None:
    _synthetic, run_dir = synthetic_with_history(tmp_path)
    html = (run_dir / "report.html").read_text()
    for section in ("headline", "verdict", "cases", "confusion", "rules", "history"):
        assert f'<section id="{section}">' in html
    assert '<section id="comparison">' not in html  # a fake run's gate is equality, not a comparison
    # no network and no other file: the only URL is the SVG namespace; links are in-page anchors
    urls = set(re.findall(r"https?://[^\s\"'<>]+", html))
    assert urls == {"http://www.w3.org/2000/svg"}
    links = re.findall(r"""\b(?:src|href)=["']([^"']*)""", html)
    runs = {p.name for p in run_dirs(run_dir.parent.parent)}
    # in-page anchors, and the history points' links to the set's other runs (beside this one)
    history_links = [h for h in links if not h.startswith("#")]
    assert history_links and {h.split("/")[1] for h in history_links} <= runs
    assert all(re.fullmatch(r"\.\./\d{8}T\d{6}Z-[0-9a-f]{4}/report\.html", h) for h in history_links)
    assert "default-src 'none'" in html
    data = case_data(html)
    assert len(data["rows"]) == 30 and '<tr class="case"' not in html  # rows come from the data block
    assert html.count("data-history=") == len(HEADLINE_RATES)
    # the synthetic set may show titles and cards: syn-022's title and its scripted card's goal
    content = data["content"]["syn-022-oos-flagged"]
    assert (
        content["title"] == "Fix typo in guide" and content["goal"] == "Fix a spelling mistake in the guide."
    )


def test_headline_counts_give_the_rates_and_every_rate_is_a_number(tmp_path: Path) -> None:
    report = load_report(SYNTHETIC_BASELINE)
    headlines = headline_metrics(report.metrics)
    assert [h.name for h in headlines] == list(HEADLINE_RATES)
    for h in headlines:
        if h.count is not None:
            k, n = h.count
            assert h.value == (round(k / n, 4) if n else None), h.name
    by_name = {h.name: h for h in headlines}
    assert by_name["overClassificationFinal"].count == (2, 30)
    assert by_name["unavailableRate"].count == (2, 30)


def run_secret_pilot(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *run_args: str) -> tuple[Path, Path]:
    """A pilot set with one case whose title and path are secret, run once: (set folder, run folder)."""
    key = generate_key()
    monkeypatch.setenv("GRAFT_EVAL_KEY", key)
    set_dir = tmp_path / "evalroot" / "pilot-acme"
    cs = make_pilot_set(set_dir, key=parse_key(key))
    inputs = make_inputs(
        [make_file(SECRET_PATH, patch="@@ -1 +1 @@\n-old ledger line\n+new ledger line")],
        pr={"title": SECRET_TITLE, "body": "Rotates the ledger key.", "number": 413},
    )
    write_case(cs, make_pilot_case(pr_number=413, inputs=inputs, labels=[make_label(risk="logic")]))
    assert main(["run", "--set", str(set_dir), *run_args]) == 0
    (run_dir,) = (set_dir / "runs").iterdir()
    return set_dir, run_dir


def test_pilot_html_shows_ids_classes_and_counts_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    set_dir, run_dir = run_secret_pilot(tmp_path, monkeypatch)
    html = (run_dir / "report.html").read_text()
    data = case_data(html)
    (row,) = data["rows"]
    col = {name: i for i, name in enumerate(data["cols"])}
    assert row[col["id"]] == "pilot-acme--shop-demo-413"
    assert [data["kinds"][k]["id"] for k in row[col["kinds"]]] == ["under"]
    # the panel's facts (classes, claim ids, counts) are there; nothing of the case's content
    assert row[col["facts"]] is not None and data["content"] == {}
    assert "ledger" not in html and "signing" not in html and "<details" not in html
    # `view --rebuild` writes the same kind of file (and never opens a browser off a terminal)
    (run_dir / "report.html").unlink()
    capsys.readouterr()
    assert main(["view", "--set", str(set_dir)]) == 0
    out = capsys.readouterr().out
    assert f"wrote {run_dir / 'report.html'}" in out and (run_dir / "report.html").as_uri() in out
    assert "ledger" not in (run_dir / "report.html").read_text()


def test_view_writes_a_missing_report_html_and_leaves_an_existing_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    synthetic, run_dir = synthetic_with_history(tmp_path)
    page = run_dir / "report.html"
    page.write_text("kept")
    capsys.readouterr()
    assert main(["view", "--set", str(synthetic), "--run", run_dir.name]) == 0
    assert page.read_text() == "kept" and "wrote" not in capsys.readouterr().out
    assert main(["view", "--set", str(synthetic), "--rebuild"]) == 0
    html = page.read_text()
    assert html.startswith("<!doctype html>") and "Fix a spelling mistake in the guide." in html
    assert main(["view", "--set", str(synthetic), "--run", "20000101T000000Z-0000"]) == 2


# --- in a real browser -------------------------------------------------------------------------


@contextmanager
def chromium() -> Iterator[Any]:
    """Debian's Chromium under Playwright.

    Start it only after the runs: Playwright's sync API keeps an event loop running in this thread,
    and a run starts its own (asyncio.run).
    """
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("the playwright package is not installed (pip install -e '.[dev]')")
    if not CHROMIUM.is_file():
        pytest.skip(f"no browser at {CHROMIUM}: install Debian's chromium (apt-get install -y chromium)")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


def visible_ids(page: Any) -> Any:
    """The case ids of the table's current page, in order."""
    return page.eval_on_selector_all(
        "#case-table tbody tr.case", "rows => rows.map(r => r.cells[0].querySelector('code').textContent)"
    )


@pytest.mark.slow  # a browser
def test_browser_renders_tables_and_charts_and_the_failure_filter_works(tmp_path: Path) -> None:
    _synthetic, run_dir = synthetic_with_history(tmp_path)
    with chromium() as browser:
        check_report_page(browser, run_dir, tmp_path / "report.png")


def check_report_page(browser: Any, run_dir: Path, screenshot: Path) -> None:
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    problems: list[str] = []
    requests: list[str] = []
    page.on(
        "console",
        lambda m: problems.append(f"{m.type}: {m.text}") if m.type in ("error", "warning") else None,
    )
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    page.on("request", lambda r: requests.append(r.url))
    url = (run_dir / "report.html").as_uri()
    page.goto(url)

    # tables: the failure rows of 30 cases, the thresholds table, headline cards with counts
    assert page.locator("body[data-ready=true]").count() == 1
    assert page.locator("#thresholds tbody tr").count() == 4
    assert page.locator("#headline .card").count() == len(HEADLINE_RATES)
    assert page.locator('.card[data-metric="overClassificationFinal"] .count').inner_text() == "2 of 30"
    assert page.locator("#threshold-verdict").inner_text() == "all 4 thresholds pass"

    # charts: three 3x3 heat maps, the rule bars, one history chart per headline rate over 3 runs
    for name in ("floor", "model", "final"):
        heat = page.locator(f'figure[data-confusion="{name}"] svg')
        assert heat.locator("g.cell rect").count() == 9
        box = heat.bounding_box()
        assert box is not None and box["width"] > 150 and box["height"] > 150
    final_cells = page.locator('figure[data-confusion="final"] g.cell text').all_text_contents()
    assert final_cells == ["2", "2", "0", "0", "12", "0", "0", "0", "14"]
    assert page.locator('figure[data-chart="rules"] g.bar').count() >= 10
    history = page.locator("figure[data-history]")
    assert history.count() == len(HEADLINE_RATES)
    under = page.locator('figure[data-history="overClassificationFinal"] circle.point')
    assert under.count() == 3  # the three runs; the subset run over-classified 2 of 3 cases
    assert page.locator('figure[data-history="overClassificationFinal"] polyline').count() == 1

    # the failure filter: failures by default, then one kind, then all
    assert visible_ids(page) == TO_LOOK_AT
    assert page.locator("#shown").inner_text() == "3 of 30 cases shown"
    page.get_by_role("button", name="over-classified (2)").click()
    assert visible_ids(page) == OVER
    page.get_by_role("button", name="false flag (0)").click()
    assert visible_ids(page) == []
    page.get_by_role("button", name="under-classified (0)").click()
    assert visible_ids(page) == []
    page.get_by_role("button", name="all (30)").click()
    assert len(visible_ids(page)) == 30

    # sorting: by case id, descending on the second click; by final class
    page.locator("#case-table th button", has_text="case").click()
    page.locator("#case-table th button", has_text="case").click()
    assert visible_ids(page)[0] == "syn-030-soft-injection"
    page.locator("#case-table th button", has_text="final").click()
    finals = page.eval_on_selector_all(
        "#case-table tbody tr.case", "rows => rows.map(r => r.cells[5].textContent)"
    )
    assert finals == sorted(finals, key=["trivial", "logic", "sensitive"].index)

    # a link to one kind opens filtered; a click on a case opens its panel with its card
    page.goto(url + "#over")  # the same page: the hash alone changes (the table stays sorted)
    assert sorted(visible_ids(page)) == OVER
    page.locator("#case-table tbody tr.case", has_text="syn-029-pure-rename").locator("td").nth(2).click()
    page.locator("#case-panel").wait_for(state="visible")  # the panel opens on the hash change, a task later
    assert "Rename docs/a.md to docs/b.md" in page.locator("#case-panel").inner_text()
    assert page.evaluate("location.hash") == "#case=syn-029-pure-rename"

    page.screenshot(path=str(screenshot), full_page=True)
    assert screenshot.stat().st_size > 10_000
    assert problems == []
    assert {r.split("#")[0] for r in requests} == {url}
    page.close()


@pytest.mark.slow  # a browser
def test_browser_shows_a_failing_verdict_and_the_changed_filter(tmp_path: Path) -> None:
    synthetic, _ = synthetic_with_history(tmp_path)
    baseline = synthetic.parent / "baselines" / "synthetic.json"
    data = json.loads(baseline.read_text())
    next(r for r in data["cases"] if r["id"] == "syn-004-ci-workflow")["final"] = "logic"
    baseline.write_text(json.dumps(data))
    assert main(["run", "--set", str(synthetic)]) == 0
    run_dir = run_dirs(synthetic)[-1]
    with chromium() as browser:
        check_failing_page(browser, run_dir)


def check_failing_page(browser: Any, run_dir: Path) -> None:
    page = browser.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto((run_dir / "report.html").as_uri())
    assert page.locator("#threshold-verdict").inner_text() == "1 of 4 thresholds fail"
    assert (
        page.locator("#baseline-verdict")
        .inner_text()
        .startswith("baseline: decisions differ (1 changed case(s), ")
    )
    page.get_by_role("button", name="changed since the baseline (1)").click()
    assert visible_ids(page) == ["syn-004-ci-workflow"]
    assert "syn-004-ci-workflow: final logic → sensitive" in page.locator("ul.changes").inner_text()
    assert errors == []
    page.close()


def live_comparison_html(tmp_path: Path) -> tuple[Path, Comparison]:
    """report.html of a live run compared with a live baseline: one flip in 60 cases."""
    base = make_report(logic_rows(60), llm="live")
    new = make_report(logic_rows(60, under={4}), llm="live")
    comparison = live_comparison(base, new)
    assert comparison is not None and live_comparison(base, base.model_copy(update={"llm": "fake"})) is None
    page = tmp_path / "report.html"
    page.write_text(render_html(new, None, [], comparison=comparison))
    return page, comparison


@pytest.mark.slow  # a browser
def test_a_live_run_html_shows_its_comparison_with_what_it_could_detect(tmp_path: Path) -> None:
    page, comparison = live_comparison_html(tmp_path)
    html = page.read_text()
    assert '<section id="comparison">' in html and "verdict: no clear difference; no blocker" in html
    for r in comparison.rates:
        assert f"<td>{verdict_text(r)}</td>" in html
    with chromium() as browser:
        tab = browser.new_page()
        tab.goto(page.as_uri())
        cells = tab.eval_on_selector_all(
            "#comparison-rates tbody tr",
            "rows => rows.map(r => "
            "[r.dataset.rate, r.dataset.detectable, r.cells[r.cells.length - 1].innerText])",
        )
        assert [c[0] for c in cells] == [r.name for r in comparison.rates]
        for (_name, detectable, verdict), r in zip(cells, comparison.rates, strict=True):
            if r.detectable is None:  # flagRecall: no case with a flag to recall
                assert (r.name, detectable) == ("flagRecall", "")
                assert verdict == "no clear difference (too few shared cases to detect any change)"
            else:
                assert float(detectable) == r.detectable
                assert verdict == f"no clear difference (could detect changes of ≥ {r.detectable:.4f})"
        assert tab.locator("#comparison-verdict").inner_text().startswith("verdict: no clear difference")
