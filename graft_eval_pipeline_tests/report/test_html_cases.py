"""Report.html v2 (issue 26 item 3), as text and in headless Chromium.

The case data block, the case panel, per-case anchors, search and combined filters, paging,
readable captions, "scripted" marks, the history charts; the compare page in test_compare_page.py.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from graft_eval_pipeline.evalset.report.case_data import CASES_PER_PAGE, json_block
from graft_eval_pipeline.evalset.report.case_detail import CaseContent, CaseDetail, CaseFacts
from graft_eval_pipeline.evalset.report.headline import HEADLINE_RATES
from graft_eval_pipeline.evalset.report.history import HistoryPoint, RatePoint
from graft_eval_pipeline.evalset.report.html import history_points, rate_text, render_html, run_label
from graft_eval_pipeline.evalset.report.runs import run_dirs
from graft_eval_pipeline.evalset.report.svg import ChartPoint, line_chart, nice_axis
from graft_eval_pipeline.evalset.report.thresholds import Limit
from graft_eval_pipeline.evalset.scoring import CaseRow, EvalReport, RateStat
from graft_eval_pipeline_tests.report.test_html_report import (
    SECRET_PATH,
    SECRET_TITLE,
    case_data,
    chromium,
    run_secret_pilot,
    synthetic_with_history,
    visible_ids,
)
from graft_eval_pipeline_tests.report.test_report import make_report
from graft_eval_pipeline_tests.row_builders import make_row

CASES = 250


def under(i: int) -> bool:
    return i % 10 == 0


def over(i: int) -> bool:
    return i % 25 == 0 and not under(i)  # 25, 75, …: odd, so tagged docs


def unavailable(i: int) -> bool:
    return i % 7 == 0 and not under(i) and not over(i)


def paged_rows(n: int = CASES) -> list[CaseRow]:
    """Logic-gold cases, `n` of them.

    Every 10th under-classified, some over-classified or unavailable (`over`, `unavailable`), odd
    ones tagged docs (even: ci), every 3rd with ci_config fired.
    """
    rows = []
    for i in range(n):
        model = "trivial" if under(i) else "sensitive" if over(i) else None if unavailable(i) else "logic"
        rows.append(
            make_row(
                f"c-{i:03d}",
                gold="logic",
                floor="trivial",
                model=model,
                final="logic" if unavailable(i) else None,
                status="unavailable" if unavailable(i) else "ok",
                failure_reason="llm_timeout" if unavailable(i) else None,
                verifier_status=None if unavailable(i) else "agree",
                tags=["docs"] if i % 2 else ["ci"],
                floor_rules=["ci_config"] if i % 3 == 0 else [],
            )
        )
    return rows


def ids(pick: Any) -> list[str]:
    return [f"c-{i:03d}" for i in range(CASES) if pick(i)]


@pytest.fixture
def paged_page(tmp_path: Path) -> Path:
    page = tmp_path / "report.html"
    page.write_text(render_html(make_report(paged_rows(), cases=[]), None, []), encoding="utf-8")
    return page


# --- as text ------------------------------------------------------------------------------------


def test_rates_read_as_k_of_n_percent_and_interval_never_as_python_reprs() -> None:
    assert (
        rate_text(RateStat(k=3, n=4, value=0.75, ci95=(0.3006, 0.9544), method="wilson"))
        == "3/4 75% [30–95%]"
    )
    assert rate_text(RateStat(k=0, n=0, value=None, ci95=None, method="wilson")) == "0/0 n/a"
    assert rate_text(RateStat(k=0, n=30, value=0.0, ci95=(0.0, 0.1157), method="wilson")) == "0/30 0% [0–12%]"
    html = render_html(make_report(paged_rows(40), cases=[]), None, [])
    captions = re.findall(r'<span class="(?:recall|precision)">(.*?)</span>', html)
    assert len(captions) == 6
    for caption in captions:
        assert "k=" not in caption and "method=" not in caption and "ci95" not in caption
        one = r"\w+ \d+/\d+ (n/a|\d+% \[\d+–\d+%\])"
        assert re.fullmatch(rf"(recall|precision): ({one}; ){{2}}{one}", caption), caption


def test_a_fake_run_marks_every_number_scripted_and_a_live_one_prices_its_cost() -> None:
    fake = render_html(make_report(paged_rows(20), cases=[]), None, [])
    scripted = fake.count('<span class="scripted"')
    # every headline card, the usage line, and the three confusion matrices
    assert scripted >= len(HEADLINE_RATES) + 1 + 3
    assert re.search(r'<span id="cost">scripted \(fake mode: no API call, no money spent\)</span>', fake)
    assert case_data(fake)["scripted"] is True and 'id="scripted-note"' in fake
    live = render_html(make_report(paged_rows(20), cases=[], llm="live"), None, [])
    assert '<span class="scripted"' not in live and case_data(live)["scripted"] is False
    assert re.search(r'<span id="cost">\$0\.0600 \(list price of this run&#x27;s calls, USD\)</span>', live)


def test_the_data_block_cannot_close_its_element_or_start_markup() -> None:
    hostile = "</script><script>alert(1)</script><!-- & \u2028"
    block = json_block("case-data", {"title": hostile})
    assert block.count("</script>") == 1 and "<script>alert" not in block and "<!--" not in block
    assert "\u2028" not in block
    found = re.fullmatch(r'<script type="application/json" id="case-data">(.*)</script>', block)
    assert found is not None
    import json

    assert json.loads(found[1]) == {"title": hostile}


def test_kinds_are_listed_from_the_rows_so_a_new_kind_needs_no_change_here(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from graft_eval_pipeline.evalset.report.case_kinds import case_lines as original

    report = make_report(paged_rows(20), cases=[])

    def with_extra(report: EvalReport, diff: Any = None, only: Any = None) -> Any:
        lines = original(report, diff, only)
        return [
            line if line.id != "c-003" else type(line)(**{**line.__dict__, "kinds": ("some-new-kind",)})
            for line in lines
        ]

    monkeypatch.setattr("graft_eval_pipeline.evalset.report.html.case_lines", with_extra)
    page = render_html(report, None, [])
    data = case_data(page)
    assert "some-new-kind" in [k["id"] for k in data["kinds"]]
    assert 'data-filter="some-new-kind"' in page and "some-new-kind (1)" in page


def test_pilot_panels_hold_facts_but_never_content_whatever_the_caller_passes(tmp_path: Path) -> None:
    report = make_report(paged_rows(3), cases=[])
    pilot = report.model_copy(update={"set": report.set.model_copy(update={"kind": "pilot"})})
    facts = CaseFacts("trivial", "logic", True, (("b1", "supported"),), 2, 0, ("writer",))
    content = CaseContent(
        title=SECRET_TITLE, unexplained_files=(SECRET_PATH,), fired_by=(("ci_config", SECRET_PATH),)
    )
    details = {"c-000": CaseDetail(facts=facts, content=content)}
    page = render_html(pilot, None, [], details)
    data = case_data(page)
    assert data["content"] == {} and SECRET_TITLE not in page and SECRET_PATH not in page
    col = {name: i for i, name in enumerate(data["cols"])}
    assert data["rows"][0][col["facts"]] == [0, 1, [["b1", "supported"]], 2, 0, ["writer"]]
    synthetic = case_data(render_html(report, None, [], details))
    assert synthetic["content"]["c-000"]["title"] == SECRET_TITLE  # the synthetic set shows it


def test_pilot_run_keeps_panel_facts_from_its_cards_without_content(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _set_dir, run_dir = run_secret_pilot(tmp_path, monkeypatch, "-q")
    html = (run_dir / "report.html").read_text()
    data = case_data(html)
    col = {name: i for i, name in enumerate(data["cols"])}
    (row,) = data["rows"]
    _first_pass, escalated, claims, unexplained, missing, _from = row[col["facts"]]
    assert escalated in (0, 1) and isinstance(claims, list) and unexplained >= 0 and missing >= 0
    assert data["content"] == {} and "ledger" not in html and "signing" not in html


def test_history_axis_is_scaled_to_the_data_with_threshold_band_links_and_change_markers() -> None:
    low, high, _step = nice_axis([0.0, 0.033, 0.0, 0.09])
    assert low == 0.0 and 0.09 < high <= 0.15  # a 0 → 3.3% move fills a third of the chart, not 3 pixels
    assert nice_axis([0.9, 0.95, 1.0])[0] >= 0.8
    runs = ["20261101T100000Z-aaaa", "20261102T100000Z-bbbb", "20261103T100000Z-cccc"]
    fingerprints = ["p1", "p1", "p2"]
    engines = ["e1", "e2", "e2"]
    history = [
        HistoryPoint(
            run_id,
            "live",
            "0" * 64,
            {"underClassificationFinal": value},
            {"underClassificationFinal": RatePoint(k, 30, value, (0.0, value + 0.08))},
            prompt_fingerprint=prompt,
            engine_fingerprint=engine,
        )
        for run_id, value, k, prompt, engine in zip(
            runs, [0.0, 0.0, 0.0333], [0, 0, 1], fingerprints, engines, strict=True
        )
    ]
    points = history_points(history, "underClassificationFinal", runs[-1], Limit("max", 0.02))
    assert [p.changed for p in points] == [(), ("engine",), ("prompt",)]
    assert [p.failing for p in points] == [False, False, True] and points[-1].current
    assert [p.href for p in points] == [f"../{r}/report.html" for r in runs]
    assert run_label(runs[0]) == "11-01 10:00"
    svg = line_chart(points, "under over runs", 0.02)
    assert svg.count('<a class="run-link" href="../') == 3
    assert svg.count('class="band"') == 1 and 'class="threshold"' in svg
    assert svg.count('<g class="marker">') == 2 and ">engine</text>" in svg and ">prompt</text>" in svg
    ticks = re.findall(r'<text class="tick"[^>]*>([\d.]+)%</text>', svg)
    assert float(ticks[-1]) <= 15  # the axis ends near the data, not at 100%
    assert svg.count('fill="#c62828"') == 1  # red: the one point beyond the threshold, nothing else
    hostile = ChartPoint(run_id="../../x", label="x", value=0.1, href=None)
    assert "href" not in line_chart([hostile], "x")


# --- in a real browser ------------------------------------------------------------------------


def open_page(browser: Any, url: str) -> tuple[Any, list[str]]:
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    problems: list[str] = []
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    page.on("console", lambda m: problems.append(m.text) if m.type in ("error", "warning") else None)
    page.goto(url)
    page.wait_for_selector("body[data-ready=true]", state="attached")
    return page, problems


@pytest.mark.slow  # a browser
def test_browser_pages_searches_and_combines_filters_and_opens_a_case_by_anchor(paged_page: Path) -> None:
    url = paged_page.as_uri()
    with chromium() as browser:
        page, problems = open_page(browser, url)
        failures = ids(lambda i: under(i) or over(i) or unavailable(i))
        assert len(failures) > CASES_PER_PAGE and visible_ids(page) == failures[:CASES_PER_PAGE]
        assert page.locator("#shown").inner_text() == f"{len(failures)} of {CASES} cases shown"

        # paging: CASES_PER_PAGE (50) rows a page
        page.get_by_role("button", name=f"all ({CASES})").click()
        assert visible_ids(page) == ids(lambda i: i < CASES_PER_PAGE)
        assert page.locator("#page-info").inner_text() == "rows 1–50, page 1 of 5"
        assert page.locator("#page-prev").is_disabled()
        for _ in range(4):
            page.locator("#page-next").click()
        assert visible_ids(page) == ids(lambda i: i >= 200)
        assert page.locator("#page-info").inner_text() == "rows 201–250, page 5 of 5"
        assert page.locator("#page-next").is_disabled()
        page.locator("#page-prev").click()
        assert visible_ids(page)[0] == "c-150"

        # filters combine: a kind AND a tag; the address keeps them
        missing = len(ids(unavailable))
        page.get_by_role("button", name=f"unavailable ({missing})").click()
        page.locator("#case-tag").select_option(label="docs (125)")
        assert visible_ids(page) == ids(lambda i: unavailable(i) and i % 2 == 1)
        assert page.evaluate("location.hash") == "#kind=unavailable&tag=docs"
        page.locator("#case-tag").select_option(label="ci (125)")
        assert visible_ids(page) == ids(lambda i: unavailable(i) and i % 2 == 0)

        # search over id, tag, rule and kind, with the kind filter still on
        page.get_by_role("button", name=f"all ({CASES})").click()
        page.locator("#case-tag").select_option(value="")
        page.locator("#case-search").fill("ci_config")
        assert (
            page.locator("#shown").inner_text() == f"{len(ids(lambda i: i % 3 == 0))} of {CASES} cases shown"
        )
        page.locator("#case-search").fill("c-137")
        assert visible_ids(page) == ["c-137"]
        page.locator("#case-search").fill("under")
        assert page.locator("#shown").inner_text() == f"{len(ids(under))} of {CASES} cases shown"
        page.get_by_role("button", name=f"over-classified ({len(ids(over))})").click()
        assert visible_ids(page) == []  # no case is both
        page.locator("#case-search").fill("docs")
        assert visible_ids(page) == ids(over)  # every over-classified case is odd: docs
        page.locator("#case-search").fill("c-07")
        assert visible_ids(page) == ["c-075"]

        # a link opens with its filters, and #case=<id> opens the panel of a case on any page
        page.goto(url + "#kind=under&tag=ci")
        assert visible_ids(page) == ids(under)
        page.goto(url + "#case=c-237")
        panel = page.locator("#case-panel")
        panel.wait_for(state="visible")  # it opens on the hash change, a task after the navigation
        text = panel.inner_text()
        assert "c-237" in text and "Gold" in text and "Floor" in text and "Verifier" in text
        assert "not kept for this run" in text  # no card results were passed: the row alone
        page.locator("#case-panel-close").click()
        panel.wait_for(state="hidden")
        assert problems == []
        page.close()


@pytest.mark.slow  # a browser
def test_browser_case_panel_by_anchor_shows_the_why_of_a_synthetic_case(tmp_path: Path) -> None:
    _synthetic, run_dir = synthetic_with_history(tmp_path)
    url = (run_dir / "report.html").as_uri()
    with chromium() as browser:
        # a fresh tab straight at the anchor
        page, problems = open_page(browser, url + "#case=syn-022-oos-flagged")
        panel = page.locator("#case-panel")
        assert panel.is_visible()
        sections = page.eval_on_selector_all("#case-panel-body h4", "hs => hs.map(h => h.textContent)")
        assert sections == ["Gold", "Floor", "Writer", "Verifier", "Final", "Usage", "Card"]
        text = panel.inner_text()
        assert "Fix typo in guide" in text and "Fix a spelling mistake in the guide." in text
        assert "src/config/defaults.ts" in text  # gold's out-of-scope path: synthetic only
        assert "escalated to the strong model" in text and "b1 supported" in text
        usage = page.locator("#case-panel-body dl").nth(5).inner_text()
        assert usage.count("scripted") == 3  # calls, tokens and cost of a fake run
        # the floor's rules with the path that fired each
        page.goto(url + "#case=syn-004-ci-workflow")
        floor = page.locator("#case-panel-body dl").nth(1).inner_text()
        assert "ci_config: .github/workflows/" in floor
        assert page.locator("#case-table tbody tr.selected").count() <= 1
        assert problems == []
        page.close()


@pytest.mark.slow  # a browser
def test_browser_follows_a_history_point_to_its_run(tmp_path: Path) -> None:
    synthetic, run_dir = synthetic_with_history(tmp_path)
    runs = run_dirs(synthetic)
    with chromium() as browser:
        page, problems = open_page(browser, (run_dir / "report.html").as_uri())
        chart = page.locator('figure[data-history="overClassificationFinal"]')
        assert chart.locator("a.run-link").count() == 3
        assert chart.locator("text.run-label").count() == 3
        chart.locator("a.run-link circle").first.click()
        page.wait_for_url(runs[0].joinpath("report.html").as_uri())
        page.wait_for_selector("body[data-ready=true]", state="attached")
        assert runs[0].name in page.locator("h1").inner_text()
        # the first run's own chart holds itself alone
        assert page.locator('figure[data-history="overClassificationFinal"] a.run-link').count() == 1
        assert problems == []
        page.close()
