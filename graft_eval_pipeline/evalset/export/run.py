"""The whole export for `graft-eval export`: consent, candidates, sample, cases, and a sealed summary.

The three steps (candidates.py, sample.py, cases.py) each take and return JSON-serialisable
values, so the Dagster assets call them one by one; `run_export` chains them for the CLI, prints
a line per case and the closing counts (ids, strata and counts only, never titles or paths), and
saves the summary sealed under `exports/`.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from graft_eval_pipeline.card import CamelModel
from graft_eval_pipeline.evalset.export.candidates import collect_candidates
from graft_eval_pipeline.evalset.export.cases import (
    ExportedCase,
    ExportResult,
    case_id_for,
    check_export_allowed,
    export_sampled,
)
from graft_eval_pipeline.evalset.export.options import AuthorFilter, ExportSettings, Progress
from graft_eval_pipeline.evalset.export.sample import ExportSample, choose_sample
from graft_eval_pipeline.evalset.sets import EXPORTS_DIR, CaseSet, write_private
from graft_eval_pipeline.github.client import GitHubClient


class ExportSummary(CamelModel):
    """What one export did; saved sealed as exports/<time>.json (ids, strata and counts only)."""

    repository: str
    merged_from: datetime
    merged_to: datetime
    author: AuthorFilter
    dry_run: bool
    listed: int
    candidates: int
    dropped_by_author: int
    sample: ExportSample
    result: ExportResult | None
    missing: list[int]
    requests: int
    stage1_requests: int
    stage2_requests: int
    rate_limit_waits: int
    rate_limit_wait_s: float


def exported_line(item: ExportedCase) -> str:
    return f"exported {item.case_id} ({item.stratum}, redactions: {item.redactions})"


def summary_lines(summary: ExportSummary) -> list[str]:
    """The closing lines: strata, counts, requests and rate-limit waits (never titles or paths)."""
    s = summary.sample
    lines = [
        f"candidates: {summary.candidates} (merged in range: {summary.listed}, "
        f"left out by --author {summary.author}: {summary.dropped_by_author})",
        *(f"  {key}: {c.population} candidates, {c.sampled} sampled" for key, c in s.strata.items()),
    ]
    if summary.dry_run:
        lines.append("sampled PRs: " + (", ".join(f"#{c.pr_number}" for c in s.picks) or "none"))
        lines.append("dry run: no stage-2 request, nothing written")
    elif summary.result is not None:
        r = summary.result
        lines.append(
            f"exported: {len(r.exported)}, already present: {len(r.skipped_existing)}, "
            f"gone (404/410): {len(summary.missing)}"
        )
    lines.append(
        f"requests: {summary.requests} "
        f"(stage 1: {summary.stage1_requests}, stage 2: {summary.stage2_requests}); "
        f"rate-limit waits: {summary.rate_limit_waits} ({summary.rate_limit_wait_s:.0f} s)"
    )
    return lines


def run_export(
    gh: GitHubClient,
    cs: CaseSet,
    settings: ExportSettings,
    *,
    now: Callable[[], datetime],
    emit: Callable[[str], None],
    progress: Progress | None = None,
) -> ExportSummary:
    """Consent gate, stage 1, sample, stage 2 (unless a dry run); prints per case and at the end."""
    check_export_allowed(cs)
    window = settings.candidates
    case_id_for(cs.set_id, window.repo, 1)
    collected = collect_candidates(
        gh,
        window,
        extra_sensitive_globs=tuple(cs.meta.default_floor_config.extra_sensitive_globs),
        progress=progress,
    )
    sample = choose_sample(collected.candidates, settings.sample)
    result = None
    if not settings.dry_run:
        result = export_sampled(
            gh,
            cs,
            sample.picks,
            redact=settings.redact,
            now=now,
            sample=sample,
            on_exported=lambda item: emit(exported_line(item)),
            progress=progress,
        )
    stats = gh.limiter.stats
    summary = ExportSummary(
        repository=window.repo,
        merged_from=window.merged_from,
        merged_to=window.merged_to,
        author=window.author,
        dry_run=settings.dry_run,
        listed=collected.listed,
        candidates=len(collected.candidates),
        dropped_by_author=collected.dropped_by_author,
        sample=sample,
        result=result,
        missing=collected.missing + (result.missing if result else []),
        requests=stats.requests,
        stage1_requests=collected.requests,
        stage2_requests=result.requests if result else 0,
        rate_limit_waits=stats.waits,
        rate_limit_wait_s=stats.waited_s,
    )
    if not settings.dry_run:
        stamp = now().strftime("%Y%m%dT%H%M%S%fZ")
        write_private(cs, f"{EXPORTS_DIR}/{stamp}.json", summary.model_dump_json(by_alias=True, indent=2))
    for line in summary_lines(summary):
        emit(line)
    return summary
