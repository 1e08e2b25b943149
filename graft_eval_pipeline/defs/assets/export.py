"""Export assets for pilot partitions.

Candidates (stage 1) → sample → exported cases (stage 2), and the rescan of the stored cases with
the current secret rules.

Thin shells over `evalset/export/`; the intermediates pass through the sealed IO manager and
their metadata carries counts, strata and request figures only (never titles or paths).
"""

# No `from __future__ import annotations` in asset modules: Dagster reads config and IO types
# from the real annotations.

from datetime import UTC, datetime
from typing import Any, Literal

import dagster as dg
from pydantic import Field

from graft_eval_pipeline.defs.assets import EXPORT_GROUP
from graft_eval_pipeline.defs.checks import RESCAN_CHECKS, rescan_check
from graft_eval_pipeline.defs.partitions import case_set_partitions
from graft_eval_pipeline.defs.resources import CaseSetsResource, GitHubResource
from graft_eval_pipeline.evalset.export import (
    DEFAULT_MAX_CANDIDATES,
    DEFAULT_MIN_PER_STRATUM,
    DEFAULT_SAMPLE,
    DEFAULT_SAMPLE_SEED,
)
from graft_eval_pipeline.evalset.export.candidates import CandidateList, collect_candidates
from graft_eval_pipeline.evalset.export.cases import ExportResult, check_export_allowed, export_sampled
from graft_eval_pipeline.evalset.export.options import CandidateSettings, SampleSettings, WindowNames
from graft_eval_pipeline.evalset.export.redact import RedactOptions
from graft_eval_pipeline.evalset.export.rescan import RescanResult, rescan_set
from graft_eval_pipeline.evalset.export.sample import ExportSample, choose_sample


class CandidatesConfig(dg.Config):
    """The `graft-eval export` flags that choose the candidates (`CandidateSettings`)."""

    repo: str = Field(description="owner/name of the pilot repository (--repo).")
    merged_from: str = Field(description="Merged on or after: YYYY-MM-DD or an ISO time (--from).")
    merged_to: str = Field(
        description="Merged on or before: YYYY-MM-DD (the whole day) or an ISO time (--to)."
    )
    author: Literal["agent", "bot", "any"] = Field(
        default="agent", description="Who counts as the author (--author)."
    )
    agent_logins: list[str] = Field(
        default_factory=list, description="Agent accounts; empty: GRAFT_AGENT_LOGINS (--agent-logins)."
    )
    agent_coauthor_emails: list[str] = Field(
        default_factory=list,
        description="Agent co-author e-mails; empty: GRAFT_AGENT_COAUTHOR_EMAILS (--agent-coauthor-emails).",
    )
    max_candidates: int = Field(
        default=DEFAULT_MAX_CANDIDATES, description="At most this many PRs (--max-candidates)."
    )


class SampleConfig(dg.Config):
    """The stratified sample (`SampleSettings`): export's --sample, --min-per-stratum and --seed."""

    sample: int = Field(default=DEFAULT_SAMPLE, description="PRs in the sample (--sample).")
    min_per_stratum: int = Field(
        default=DEFAULT_MIN_PER_STRATUM,
        description="At least this many from each stratum (--min-per-stratum).",
    )
    seed: int = Field(default=DEFAULT_SAMPLE_SEED, description="Seed of the stratified sample (--seed).")


class RedactConfig(dg.Config):
    """Secrets are always redacted; these add e-mails, hosts and custom patterns (`RedactOptions`)."""

    redact_emails: bool = Field(default=False, description="Also redact e-mails (--redact emails).")
    redact_hosts: list[str] = Field(
        default_factory=list, description="Redact these hosts and their subdomains (--redact-host)."
    )
    redact_patterns: list[str] = Field(
        default_factory=list, description="Redact these regular expressions, RE2 syntax (--redact-pattern)."
    )


def _redactions_by_kind(result: ExportResult) -> dict[str, int]:
    totals: dict[str, int] = {}
    for item in result.exported:
        for kind, count in item.redactions_by_kind.items():
            totals[kind] = totals.get(kind, 0) + count
    return dict(sorted(totals.items()))


@dg.asset(partitions_def=case_set_partitions, group_name=EXPORT_GROUP)
def export_candidates(
    context: dg.AssetExecutionContext,
    config: CandidatesConfig,
    case_sets: CaseSetsResource,
    github: GitHubResource,
) -> dg.Output[CandidateList]:
    """Stage 1: merged PRs in the window, classified, with paths and counts only."""
    cs = case_sets.open_for_run(context)
    check_export_allowed(cs)
    settings = CandidateSettings.from_text(
        WindowNames(merged_from="merged_from", merged_to="merged_to"),
        github.env(),
        repo=config.repo,
        merged_from=config.merged_from,
        merged_to=config.merged_to,
        author=config.author,
        agent_logins=config.agent_logins or None,  # empty: GRAFT_AGENT_LOGINS
        agent_coauthor_emails=config.agent_coauthor_emails or None,
        max_candidates=config.max_candidates,
    )
    with github.client() as gh:
        result = collect_candidates(
            gh,
            settings,
            extra_sensitive_globs=tuple(cs.meta.default_floor_config.extra_sensitive_globs),
        )
    return dg.Output(
        result,
        metadata={
            "merged_in_range": result.listed,
            "candidates": len(result.candidates),
            "dropped_by_author": result.dropped_by_author,
            "gone": len(result.missing),
            "requests": result.requests,
            "rate_limit_waits": gh.limiter.stats.waits,
        },
    )


@dg.asset(partitions_def=case_set_partitions, group_name=EXPORT_GROUP)
def export_sample(config: SampleConfig, export_candidates: CandidateList) -> dg.Output[ExportSample]:
    """Stratified, seeded sample; records each stratum's population for reweighting."""
    sample = choose_sample(
        export_candidates.candidates,
        SampleSettings(size=config.sample, min_per_stratum=config.min_per_stratum, seed=config.seed),
    )
    strata = [
        dg.TableRecord({"stratum": key, "population": c.population, "sampled": c.sampled})
        for key, c in sample.strata.items()
    ]
    return dg.Output(
        sample,
        metadata={
            "sampled": len(sample.picks),
            "strata": dg.MetadataValue.table(
                strata,
                schema=dg.TableSchema(
                    columns=[
                        dg.TableColumn("stratum", "string"),
                        dg.TableColumn("population", "int"),
                        dg.TableColumn("sampled", "int"),
                    ]
                ),
            ),
        },
    )


@dg.asset(partitions_def=case_set_partitions, group_name=EXPORT_GROUP)
def exported_cases(
    context: dg.AssetExecutionContext,
    config: RedactConfig,
    export_sample: ExportSample,
    case_sets: CaseSetsResource,
    github: GitHubResource,
) -> dg.Output[ExportResult]:
    """Stage 2 for the sample: fetch with patches, redact, write sealed cases; resumable."""
    cs = case_sets.open_for_run(context)
    redact = RedactOptions(
        emails=config.redact_emails, hosts=tuple(config.redact_hosts), patterns=tuple(config.redact_patterns)
    )
    with github.client() as gh:
        result = export_sampled(
            gh, cs, export_sample.picks, redact=redact, now=lambda: datetime.now(UTC), sample=export_sample
        )
    return dg.Output(
        result,
        metadata={
            "exported": len(result.exported),
            "already_present": len(result.skipped_existing),
            "gone": len(result.missing),
            "redactions_by_kind": dg.MetadataValue.json(_redactions_by_kind(result)),
            "requests": result.requests,
            "rate_limit_waits": gh.limiter.stats.waits,
            "case_ids": dg.MetadataValue.json([item.case_id for item in result.exported]),
        },
    )


case_files = dg.AssetSpec(
    "case_files",
    deps=[exported_cases],
    partitions_def=case_set_partitions,
    group_name=EXPORT_GROUP,
    description=(
        "The set's cases/ folder on disk: what the evaluation reads. Filled by `exported_cases` "
        "here, by `graft-eval export`, or committed (the synthetic set). Dagster never "
        "materializes it, so a set filled outside Dagster is not missing upstream data."
    ),
)


class RescanConfig(dg.Config):
    apply: bool = Field(
        default=False,
        description="Rewrite the affected cases (sealed) and record the new redactions in each.",
    )


def rescan_metadata(result: RescanResult) -> dict[str, Any]:
    """Counts (one number per kind) and case ids, never a value."""
    return {
        "scanned": result.scanned,
        "affected_cases": len(result.affected),
        "applied": result.applied,
        "found_total": sum(result.found_by_kind.values()),
        **{f"found_{kind}": count for kind, count in result.found_by_kind.items()},
        "cases_by_kind": dg.MetadataValue.json(result.cases_by_kind),
    }


@dg.asset(
    partitions_def=case_set_partitions,
    group_name=EXPORT_GROUP,
    deps=[exported_cases],
    check_specs=RESCAN_CHECKS,
)
def rescanned_cases(
    context: dg.AssetExecutionContext, config: RescanConfig, case_sets: CaseSetsResource
) -> dg.MaterializeResult:  # type: ignore[type-arg]  # bare: with check_specs Dagster rejects [Any]
    """The current secret rules over the stored cases.

    What earlier rules missed, by kind and case; with `apply`, those cases are rewritten (sealed)
    and their redaction counts updated.
    """
    cs = case_sets.open_for_run(context)
    check_export_allowed(cs)
    result = rescan_set(cs, apply=config.apply)
    return dg.MaterializeResult(
        metadata=rescan_metadata(result),
        check_results=[rescan_check(result)],
    )
