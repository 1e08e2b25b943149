"""Export step 3: the sampled PRs fetched with their patches, redacted and written as sealed cases.

`export_sampled` checks consent first, skips the ids the set already holds without a request
(so an aborted export resumes where it stopped), and writes each case through `write_case`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

from graft_eval_pipeline.card import CamelModel, CardInputs
from graft_eval_pipeline.evalset.export.candidates import Candidate
from graft_eval_pipeline.evalset.export.client import github_errors
from graft_eval_pipeline.evalset.export.options import Progress
from graft_eval_pipeline.evalset.export.redact import RedactOptions, redact_inputs
from graft_eval_pipeline.evalset.export.sample import ExportSample
from graft_eval_pipeline.evalset.sets import (
    CASE_ID_PATTERN,
    CASE_SCHEMA_VERSION,
    EXPORT_TOOL,
    CaseSet,
    CaseStratum,
    EvalCase,
    EvalError,
    PilotSource,
    Redaction,
    list_case_ids,
    write_case,
)
from graft_eval_pipeline.github.client import GitHubClient
from graft_eval_pipeline.github.errors import GitHubError
from graft_eval_pipeline.github.pulls import fetch_intent_inputs, get_pull, parse_time


class ExportedCase(CamelModel):
    case_id: str
    pr_number: int
    stratum: str
    redactions: int
    redactions_by_kind: dict[str, int]


class ExportResult(CamelModel):
    exported: list[ExportedCase]
    skipped_existing: list[str]
    missing: list[int]
    requests: int


def check_export_allowed(cs: CaseSet) -> None:
    """Export writes only into a pilot set with a consent reference; checked before any request."""
    if not cs.is_pilot:
        raise EvalError(f"set {cs.set_id} is not a pilot set: export writes only into pilot sets")
    if not (cs.meta.consent_ref or "").strip():
        raise EvalError(
            f"set {cs.set_id} has no consentRef: export needs the pilot's written consent; "
            "recreate the set with `graft-eval init --consent-ref`"
        )


def case_id_for(set_id: str, repository: str, pr_number: int) -> str:
    """`<setId>--<repo name>-<prNumber>`, lower-cased to fit the case id pattern."""
    case_id = f"{set_id}--{repository.split('/')[-1].lower()}-{pr_number}"
    if not re.fullmatch(CASE_ID_PATTERN, case_id):
        raise EvalError(
            f"repository name {repository.split('/')[-1]!r} does not fit a case id ({CASE_ID_PATTERN})"
        )
    return case_id


def build_case(
    cs: CaseSet,
    candidate: Candidate,
    pr: Mapping[str, Any],
    inputs: CardInputs,
    redactions: list[Redaction],
    exported_at: datetime,
    stratum: CaseStratum | None = None,
) -> EvalCase:
    """An unlabeled pilot case.

    Source fields from the API, the set's defaultFloorConfig, and the stratum it was drawn in (for
    the report's population estimates).
    """
    return EvalCase(
        schema_version=CASE_SCHEMA_VERSION,
        id=case_id_for(cs.set_id, candidate.repository, candidate.pr_number),
        source=PilotSource(
            kind="pilot",
            set_id=cs.set_id,
            repository=inputs.repository_full_name,
            pr_number=candidate.pr_number,
            head_sha=pr["head"]["sha"],
            base_sha=pr["base"]["sha"],
            merged_at=parse_time(pr["merged_at"]),
            exported_at=exported_at,
            export_tool=EXPORT_TOOL,
            author_kind=candidate.author_kind,
            author_kind_reason=candidate.author_kind_reason,
            agent=candidate.agent,
            model=candidate.model,
            redactions=redactions,
            stratum=stratum,
        ),
        tags=[],
        floor_config=cs.meta.default_floor_config,
        inputs=inputs,
        labels=[],
        adjudicated=None,
        fake_llm=None,
    )


def export_sampled(
    gh: GitHubClient,
    cs: CaseSet,
    picks: list[Candidate],
    *,
    redact: RedactOptions,
    now: Callable[[], datetime],
    sample: ExportSample | None = None,
    on_exported: Callable[[ExportedCase], None] | None = None,
    progress: Progress | None = None,
) -> ExportResult:
    """Stage 2 for the picks: fetch with patches, redact, build, write sealed; resume-safe.

    With the `sample` the picks came from, each case records its stratum and the stratum's
    population and picks.
    """
    check_export_allowed(cs)
    start_requests = gh.limiter.stats.requests
    existing = set(list_case_ids(cs))
    exported: list[ExportedCase] = []
    skipped: list[str] = []
    missing: list[int] = []
    with github_errors():
        for done, candidate in enumerate(picks, start=1):
            case_id = case_id_for(cs.set_id, candidate.repository, candidate.pr_number)
            if case_id in existing:
                skipped.append(case_id)
            else:
                try:
                    pr = get_pull(gh, candidate.repository, candidate.pr_number)
                    fetched = fetch_intent_inputs(gh, candidate.repository, pr, candidate.task_issue_number)
                except GitHubError as err:
                    if err.kind != "not_found":
                        raise
                    missing.append(candidate.pr_number)
                else:
                    inputs, redactions = redact_inputs(fetched, redact)
                    stratum = sample.stratum_of(candidate) if sample is not None else None
                    write_case(cs, build_case(cs, candidate, pr, inputs, redactions, now(), stratum))
                    item = ExportedCase(
                        case_id=case_id,
                        pr_number=candidate.pr_number,
                        stratum=candidate.stratum,
                        redactions=sum(r.count for r in redactions),
                        redactions_by_kind={r.kind: r.count for r in redactions},
                    )
                    exported.append(item)
                    if on_exported:
                        on_exported(item)
            if progress:
                progress("stage 2", done, len(picks))
    return ExportResult(
        exported=exported,
        skipped_existing=skipped,
        missing=missing,
        requests=gh.limiter.stats.requests - start_requests,
    )
