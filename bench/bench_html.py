"""Benchmark of report.html at 20,000 cases in headless Chromium.

The file's size, how long Chromium takes to open it and how long a filter click, a tag, a search
and a sort take, each beside its target.

Run: .venv/bin/python bench/bench_html.py [--cases 20000] [--repeat 5]

The report is a pilot-kind run (ids, classes, rules, tags and counts; a panel's facts for every
case: first pass, claims, unexplained counts), with every failure kind present and 50 runs of
history. Chromium is Debian's (/usr/bin/chromium) under Playwright, as in the browser tests; the
page is opened from a file URL in a fresh tab each time. "open" is navigation start to the load
event, which waits for the inline script that renders the first page of the table; a filter's
time is from the click to the next painted frame (two animation frames), the figure a person
sees. Targets (issue 26): < 5 MB, open < 2 s, filter < 200 ms.
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from graft_eval_pipeline.evalset.report.case_detail import CaseDetail, CaseFacts
from graft_eval_pipeline.evalset.report.history import HistoryPoint, RatePoint
from graft_eval_pipeline.evalset.report.html import render_html
from graft_eval_pipeline.evalset.scoring.report_schema import CaseRow, EvalReport
from graft_eval_pipeline_tests.report.test_html_report import CHROMIUM, CHROMIUM_ARGS
from graft_eval_pipeline_tests.report.test_report import make_report
from graft_eval_pipeline_tests.row_builders import make_row

TARGET_BYTES = 5_000_000
TARGET_OPEN_S = 2.0
TARGET_FILTER_MS = 200.0
CLASSES = ("trivial", "logic", "sensitive")
RULES = (
    "ci_config",
    "dependency_manifest",
    "infra",
    "auth_secrets",
    "migration",
    "size_large",
    "partial_view",
)
TAGS = ("docs", "ci", "deps", "infra", "auth", "tests", "refactor", "ui")


def bench_rows(n: int, seed: int = 7) -> list[CaseRow]:
    """Pilot-like rows, `n` of them.

    Gold and classes are drawn so that every kind occurs (about 3% under, 8% over, 2% unavailable,
    6% with a disagreeing verifier), with one to three tags and zero to three rules.
    """
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        gold = rng.choice(CLASSES)
        floor = rng.choice(CLASSES[: CLASSES.index(gold) + 1])
        roll = rng.random()
        model = (
            gold
            if roll > 0.11
            else (CLASSES[max(CLASSES.index(gold) - 1, 0)] if roll < 0.03 else "sensitive")
        )
        unavailable = rng.random() < 0.02
        rows.append(
            make_row(
                f"pilot-bench--shop-demo-{10_000 + i}",
                gold=gold,
                floor=floor,
                model=None if unavailable else model,
                final=max(floor, "logic", key=CLASSES.index) if unavailable else None,
                status="unavailable" if unavailable else "ok",
                failure_reason="llm_timeout" if unavailable else None,
                verifier_status=None if unavailable else ("disagree" if rng.random() < 0.06 else "agree"),
                tags=rng.sample(TAGS, rng.randint(1, 3)),
                floor_rules=sorted(rng.sample(RULES, rng.randint(0, 3))),
                raised_by=["writer"] if model != floor else [],
                writer=model,
                verifier=None if unavailable else model,
            )
        )
    return rows


def bench_details(rows: list[CaseRow]) -> dict[str, CaseDetail]:
    return {
        r.id: CaseDetail(
            facts=CaseFacts(
                first_pass="trivial" if r.floor == "trivial" and r.model != "trivial" else None,
                writer=r.model,
                escalated=r.floor == "trivial" and r.model not in (None, "trivial"),
                claims=tuple((f"b{k}", "supported") for k in range(1, 4)),
                unexplained=0,
                missing=0,
                instructions_from=(),
            )
        )
        for r in rows
        if r.status == "ok"
    }


def bench_history(report: EvalReport, runs: int = 50) -> list[HistoryPoint]:
    points = []
    for k in range(runs - 1):
        run_id = f"202610{1 + k // 24:02d}T{k % 24:02d}0000Z-{k:04x}"
        value = 0.03 + 0.002 * (k % 5)
        points.append(
            HistoryPoint(
                run_id,
                "live",
                report.set.case_set_hash,
                {"underClassificationFinal": value},
                {
                    "underClassificationFinal": RatePoint(
                        int(value * 20_000), 20_000, value, (value - 0.003, value + 0.003)
                    )
                },
                prompt_fingerprint="p1" if k < 30 else "p2",
                engine_fingerprint="e1",
            )
        )
    return points


PAINTED = "() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))"
TIMED = """async (act) => {
  const t = performance.now();
  %s;
  document.body.offsetHeight;
  const sync = performance.now() - t;
  await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
  return [sync, performance.now() - t];
}"""
ACTIONS = {
    "kind: all": "document.querySelector('button[data-filter=\"all\"]').click()",
    "kind: under": "document.querySelector('button[data-filter=\"under\"]').click()",
    "kind: unavailable": "document.querySelector('button[data-filter=\"unavailable\"]').click()",
    "kind: to look at": "document.querySelector('button[data-filter=\"failures\"]').click()",
    "kind and tag": "(() => { const s = document.getElementById('case-tag'); s.value = s.options[2].value; "
    "s.dispatchEvent(new Event('change')); })()",
    "search (1 char)": "(() => { const s = document.getElementById('case-search'); s.value = '1'; "
    "s.dispatchEvent(new Event('input')); })()",
    "search (id)": "(() => { const s = document.getElementById('case-search'); s.value = 'shop-demo-2123'; "
    "s.dispatchEvent(new Event('input')); })()",
    "sort by final": "document.querySelector('th[data-key=\"final\"] button').click()",
    "next page": "document.getElementById('page-next').click()",
    "open a panel": "location.hash = 'case=pilot-bench--shop-demo-29999'",
}


def thread_time(cdp: Any) -> float:
    """CPU seconds of the page's main thread so far (Chromium's `ThreadTime` metric)."""
    metrics = cdp.send("Performance.getMetrics")["metrics"]
    return float(next(m["value"] for m in metrics if m["name"] == "ThreadTime"))


Timing = tuple[float, float]  # (wall, main-thread CPU), seconds or ms


def measure(page_file: Path, repeat: int) -> tuple[list[Timing], dict[str, list[Timing]]]:
    """Open the page `repeat` times, each in a fresh tab, and run every action once in each.

    Wall times on this shared machine swing with its load, so each figure comes with the CPU
    time of the page's main thread over the same span (what a quiet machine would take).
    """
    from playwright.sync_api import sync_playwright

    opens: list[Timing] = []
    actions: dict[str, list[Timing]] = {name: [] for name in ACTIONS}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        for _ in range(repeat):
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            cdp = page.context.new_cdp_session(page)
            cdp.send("Performance.enable", {"timeDomain": "threadTicks"})
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))  # noqa: B023
            before = thread_time(cdp)
            page.goto(page_file.as_uri(), wait_until="load", timeout=120_000)
            page.wait_for_selector("body[data-ready=true]", state="attached")
            page.evaluate(PAINTED)
            nav: Any = page.evaluate("performance.getEntriesByType('navigation')[0].toJSON()")
            opens.append((nav["loadEventEnd"] / 1000, thread_time(cdp) - before))
            for name, act in ACTIONS.items():
                before = thread_time(cdp)
                _sync, painted = page.evaluate(TIMED % act)
                actions[name].append((painted, 1000 * (thread_time(cdp) - before)))
            assert not errors, errors
            page.close()
        browser.close()
    return opens, actions


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    rows = bench_rows(args.cases)
    report = make_report(rows, cases=[])
    report = report.model_copy(update={"set": report.set.model_copy(update={"kind": "pilot"}), "llm": "live"})
    details = bench_details(rows)
    history = bench_history(report)
    cpu = time.process_time()
    html = render_html(report, None, [*history], details)
    render_s = time.process_time() - cpu
    size = len(html.encode())
    with tempfile.TemporaryDirectory() as tmp:
        page_file = Path(tmp) / "report.html"
        page_file.write_text(html, encoding="utf-8")
        opens, actions = measure(page_file, args.repeat)
    ok = "ok" if size < TARGET_BYTES else "ABOVE TARGET"
    print(
        f"report.html at {args.cases:,} cases ({len(details):,} with panel facts, "
        f"{len(history)} runs of history)"
    )
    print(f"  size     {size / 1e6:.2f} MB   (target < {TARGET_BYTES / 1e6:.0f} MB: {ok})")
    print(f"  render   {render_s:.2f} s CPU in Python (render_html)")
    wall, cpu_s = [o[0] for o in opens], [o[1] for o in opens]
    ok = "ok" if max(cpu_s) < TARGET_OPEN_S else "ABOVE TARGET"
    print(
        f"  open     main-thread CPU median {statistics.median(cpu_s):.2f} s, slowest {max(cpu_s):.2f} s; "
        f"wall median {statistics.median(wall):.2f} s, slowest {max(wall):.2f} s, of {len(opens)} "
        f"(target < {TARGET_OPEN_S:.0f} s: {ok} on CPU)"
    )
    print(
        f"  actions to the next painted frame, main-thread CPU median / slowest (wall median / slowest), "
        f"target < {TARGET_FILTER_MS:.0f} ms:"
    )
    for name, times in actions.items():
        wall, cpu_ms = [t[0] for t in times], [t[1] for t in times]
        ok = "ok" if max(cpu_ms) < TARGET_FILTER_MS else "ABOVE TARGET"
        print(
            f"    {name:<18} {statistics.median(cpu_ms):6.1f} / {max(cpu_ms):6.1f} ms "
            f"({statistics.median(wall):6.1f} / {max(wall):6.1f})  {ok}"
        )


if __name__ == "__main__":
    main()
