"""Export merged agent PRs from GitHub into a pilot case set (spec E9-E16, T9).

Three steps, each callable on its own (the Dagster export assets call them one by one) with
JSON-serialisable results in between:

1. `collect_candidates`: list closed PRs merged in the window, then stage 1 per candidate
   (PR, commits, file paths and counts; patches dropped as each page is parsed) to classify
   the author and find the strata. A `Candidate` holds ids, counts and strata, no PR text.
2. `choose_sample`: stratified, seeded sample (evalset/sets/sample.py) with per-stratum population.
3. `export_sampled`: stage 2 for the sampled PRs only (files with patches, linked issue),
   redaction, case build (`labels: []`) and a sealed `write_case`. Existing ids are skipped
   without a request, so an aborted export resumes where it stopped.

`run_export` chains them for the CLI. Printed lines carry ids, strata and counts only.
"""

from __future__ import annotations

import random
import re
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any, Literal

from graft_eval_pipeline.card.models import CamelModel, CardInputs
from graft_eval_pipeline.evalset.export.defaults import (
    DEFAULT_MAX_CANDIDATES,
    DEFAULT_MIN_PER_STRATUM,
    DEFAULT_SAMPLE,
    DEFAULT_SAMPLE_SEED,
)
from graft_eval_pipeline.evalset.export.redact import RedactOptions, redact_inputs
from graft_eval_pipeline.evalset.sets import (
    CASE_ID_PATTERN,
    CASE_SCHEMA_VERSION,
    EXPORT_TOOL,
    EXPORTS_DIR,
    CaseSet,
    CaseStratum,
    EvalAbort,
    EvalCase,
    EvalEnv,
    EvalError,
    PathStratum,
    PilotSource,
    Redaction,
    SizeStratum,
    draw_sample,
    list_case_ids,
    path_stratum,
    size_stratum,
    stratum_key,
    write_case,
    write_private,
)
from graft_eval_pipeline.github.auth import AppAuth, Auth, TokenAuth, load_app_private_key
from graft_eval_pipeline.github.client import GitHubClient
from graft_eval_pipeline.github.errors import GitHubAbort, GitHubError
from graft_eval_pipeline.github.provenance import AuthorKind, AuthorKindReason, compute_provenance
from graft_eval_pipeline.github.pulls import (
    fetch_intent_inputs,
    get_pull,
    list_commits,
    list_files,
    list_merged_pulls,
    parse_time,
)
from graft_eval_pipeline.github.rate_limit import RateLimiter, RateLimitOptions

AuthorFilter = Literal["agent", "bot", "any"]
# (stage name, done, total): the CLI draws a progress bar from it on a TTY.
Progress = Callable[[str, int, int], None]


# --- intermediates (JSON-serialisable, no PR text) -----------------------------------------


class Candidate(CamelModel):
    """One merged PR after stage 1: ids, counts, strata and provenance; never a title or a path."""

    repository: str
    pr_number: int
    updated_at: datetime
    merged_at: datetime
    additions: int
    deletions: int
    changed_files: int
    size_stratum: SizeStratum
    path_stratum: PathStratum
    author_kind: AuthorKind
    author_kind_reason: AuthorKindReason
    agent: str | None
    model: str | None
    task_issue_number: int | None

    @property
    def stratum(self) -> str:
        return stratum_key(self.size_stratum, self.path_stratum)


class CandidateList(CamelModel):
    """Stage-1 result: candidates (most recently updated first, as listed) and what was left out."""

    repository: str
    listed: int
    candidates: list[Candidate]
    dropped_by_author: int
    missing: list[int]
    requests: int


class StratumCount(CamelModel):
    population: int
    sampled: int


class ExportSample(CamelModel):
    """The picks and, per stratum, population and picks: weight = population / sampled.

    `frame` names the population sampled (repository, merge dates of the candidates, seed);
    every exported case records it with its stratum, so cases of two exports never share one.
    """

    seed: int
    size: int
    min_per_stratum: int
    strata: dict[str, StratumCount]
    picks: list[Candidate]
    frame: str = ""

    def stratum_of(self, candidate: Candidate) -> CaseStratum | None:
        """What a case exported from this sample records about its stratum."""
        count = self.strata.get(candidate.stratum)
        if not self.frame or count is None or count.sampled < 1:
            return None
        return CaseStratum(
            frame=self.frame, key=candidate.stratum, population=count.population, sampled=count.sampled
        )


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


# --- client ------------------------------------------------------------------------------


def github_client(
    env: EvalEnv,
    *,
    auth: Literal["app", "token"],
    installation_id: int | None,
    limits: RateLimitOptions,
    sleep: Callable[[float], None] = time.sleep,
    now: Callable[[], float] = time.time,
    rand: Callable[[], float] = random.random,
    transport: Any = None,
) -> GitHubClient:
    """The App's installation token (default) or GRAFT_EVAL_GITHUB_TOKEN."""
    credentials: Auth
    if auth == "token":
        if env.github_token is None:
            raise EvalError("--auth token needs GRAFT_EVAL_GITHUB_TOKEN (a read-only fine-grained token)")
        credentials = TokenAuth(env.github_token)
    else:
        if installation_id is None:
            raise EvalError("--auth app needs --installation-id <n> (or use --auth token)")
        if env.github_app_id is None or env.github_app_private_key_path is None:
            raise EvalError("--auth app needs GITHUB_APP_ID and GITHUB_APP_PRIVATE_KEY_PATH")
        try:
            key = load_app_private_key(Path(env.github_app_private_key_path).read_bytes())
        except (OSError, ValueError, TypeError):
            raise EvalError(
                "GITHUB_APP_PRIVATE_KEY_PATH must name a readable PEM RSA key (the App's private key)"
            ) from None
        credentials = AppAuth(str(env.github_app_id), key, installation_id, now)
    limiter = RateLimiter(limits, sleep=sleep, now=now, rand=rand)
    return GitHubClient(auth=credentials, limiter=limiter, base_url=env.github_api_url, transport=transport)


@contextmanager
def github_errors() -> Iterator[None]:
    """GitHub-layer failures as the CLI's errors: rate-limit stops and transient failures that
    outlasted the retries (5xx, connection errors) exit 3, the rest exit 2."""
    try:
        yield
    except GitHubAbort as err:
        raise EvalAbort(err.reason, str(err)) from None
    except GitHubError as err:
        if err.kind == "rate_limited":
            raise EvalAbort(
                "rate_limited", f"{err}: still rate limited after 3 retries; re-run later"
            ) from None
        if err.kind in ("server", "network"):
            raise EvalAbort(
                "github_unavailable",
                f"{err}; cases written so far are kept, re-run the same export later to resume",
            ) from None
        raise EvalError(f"{err}; cases written so far are kept, re-run to resume") from None


# --- the export window and repository (shared by the CLI and the Dagster assets) ----------------


def merge_bound(text: str, option: str, *, end_of_day: bool) -> datetime:
    """--from/--to: a date (whole UTC days, --to inclusive) or an ISO time (UTC when no offset)."""
    try:
        if len(text) == 10:
            day = datetime.combine(date.fromisoformat(text), datetime.min.time(), UTC)
            return day + timedelta(days=1, microseconds=-1) if end_of_day else day
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise EvalError(f"{option} {text!r} is not a date (YYYY-MM-DD) or an ISO time") from None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def check_repository(repo: str) -> str:
    if not re.fullmatch(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+", repo):
        raise EvalError(f"repository {repo!r} is not owner/name")
    return repo


# --- consent and ids -------------------------------------------------------------------------


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


# --- stage 1 ---------------------------------------------------------------------------------


def _login_is_bot(pr: Mapping[str, Any], agent_logins: frozenset[str]) -> bool:
    user = pr.get("user") or {}
    return user.get("type") == "Bot" or str(user.get("login") or "").lower() in agent_logins


def collect_candidates(
    gh: GitHubClient,
    repo: str,
    merged_from: datetime,
    merged_to: datetime,
    *,
    author: AuthorFilter = "agent",
    agent_logins: tuple[str, ...] = (),
    agent_coauthor_emails: tuple[str, ...] = (),
    max_candidates: int = DEFAULT_MAX_CANDIDATES,
    extra_sensitive_globs: tuple[str, ...] = (),
    progress: Progress | None = None,
) -> CandidateList:
    """List, filter by merge date (and bot author), cap, then stage 1 for each candidate."""
    start_requests = gh.limiter.stats.requests
    logins = frozenset(login.lower() for login in agent_logins)
    listed: list[Mapping[str, Any]] = []
    merged_in_range = 0
    with github_errors():
        for pr in list_merged_pulls(gh, repo, merged_from, merged_to):
            merged_in_range += 1
            if author == "bot" and not _login_is_bot(pr, logins):
                continue
            listed.append(pr)
            if len(listed) >= max_candidates:
                break
        candidates: list[Candidate] = []
        missing: list[int] = []
        dropped = merged_in_range - len(listed) if author == "bot" else 0
        for done, summary in enumerate(listed, start=1):
            candidate = _stage_one(
                gh,
                repo,
                summary["number"],
                author,
                agent_logins,
                agent_coauthor_emails,
                extra_sensitive_globs,
            )
            if candidate is None:
                missing.append(summary["number"])
            elif author == "agent" and candidate.author_kind != "agent":
                dropped += 1
            else:
                candidates.append(candidate)
            if progress:
                progress("stage 1", done, len(listed))
    return CandidateList(
        repository=repo,
        listed=merged_in_range,
        candidates=candidates,
        dropped_by_author=dropped,
        missing=missing,
        requests=gh.limiter.stats.requests - start_requests,
    )


def _stage_one(
    gh: GitHubClient,
    repo: str,
    number: int,
    author: AuthorFilter,
    agent_logins: tuple[str, ...],
    agent_coauthor_emails: tuple[str, ...],
    extra_sensitive_globs: tuple[str, ...],
) -> Candidate | None:
    """PR, commits (not for --author bot) and paths of one PR; None when it is gone (404/410)."""
    try:
        pr = get_pull(gh, repo, number)
        commits = [] if author == "bot" else list_commits(gh, repo, number)
        listing = list_files(gh, repo, number, with_patches=False)
    except GitHubError as err:
        if err.kind == "not_found":
            return None
        raise
    provenance = compute_provenance(pr, commits, agent_logins, agent_coauthor_emails)
    return Candidate(
        repository=repo,
        pr_number=number,
        updated_at=parse_time(pr["updated_at"]),
        merged_at=parse_time(pr["merged_at"]),
        additions=pr["additions"],
        deletions=pr["deletions"],
        changed_files=pr["changed_files"],
        size_stratum=size_stratum(pr["additions"], pr["deletions"]),
        path_stratum=path_stratum(listing.files, extra_sensitive_globs),
        author_kind=provenance.author_kind,
        author_kind_reason=provenance.reason,
        agent=provenance.agent,
        model=provenance.model,
        task_issue_number=provenance.task_issue_number,
    )


# --- sampling ----------------------------------------------------------------------------------


def sample_frame(candidates: list[Candidate], seed: int) -> str:
    """`acme/api merged 2026-06-01..2026-09-30 seed 1`: the population a sample was drawn from
    (repositories and merge dates of its candidates; ids and dates only)."""
    if not candidates:
        return ""
    repos = ",".join(sorted({c.repository for c in candidates}))
    first = min(c.merged_at for c in candidates).astimezone(UTC)
    last = max(c.merged_at for c in candidates).astimezone(UTC)
    return f"{repos} merged {first:%Y-%m-%d}..{last:%Y-%m-%d} seed {seed}"[:200]


def choose_sample(candidates: list[Candidate], size: int, min_per_stratum: int, seed: int) -> ExportSample:
    sample = draw_sample(candidates, size, min_per_stratum, seed)
    return ExportSample(
        frame=sample_frame(candidates, seed),
        seed=seed,
        size=size,
        min_per_stratum=min_per_stratum,
        strata={
            key: StratumCount(population=count, sampled=sample.allocation[key])
            for key, count in sample.population.items()
        },
        picks=sample.chosen,
    )


# --- stage 2 -------------------------------------------------------------------------------------


def build_case(
    cs: CaseSet,
    candidate: Candidate,
    pr: Mapping[str, Any],
    inputs: CardInputs,
    redactions: list[Redaction],
    exported_at: datetime,
    stratum: CaseStratum | None = None,
) -> EvalCase:
    """An unlabeled pilot case: source fields from the API, the set's defaultFloorConfig, and the
    stratum it was drawn in (for the report's population estimates)."""
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


# --- the whole export (CLI) ------------------------------------------------------------------------


@dataclass(frozen=True)
class ExportOptions:
    repo: str
    merged_from: datetime
    merged_to: datetime
    author: AuthorFilter = "agent"
    agent_logins: tuple[str, ...] = ()
    agent_coauthor_emails: tuple[str, ...] = ()
    sample: int = DEFAULT_SAMPLE
    min_per_stratum: int = DEFAULT_MIN_PER_STRATUM
    max_candidates: int = DEFAULT_MAX_CANDIDATES
    seed: int = DEFAULT_SAMPLE_SEED
    redact: RedactOptions = field(default_factory=RedactOptions)
    dry_run: bool = False


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
    options: ExportOptions,
    *,
    now: Callable[[], datetime],
    emit: Callable[[str], None],
    progress: Progress | None = None,
) -> ExportSummary:
    """Consent gate, stage 1, sample, stage 2 (unless a dry run); prints per case and at the end."""
    check_export_allowed(cs)
    case_id_for(cs.set_id, options.repo, 1)
    collected = collect_candidates(
        gh,
        options.repo,
        options.merged_from,
        options.merged_to,
        author=options.author,
        agent_logins=options.agent_logins,
        agent_coauthor_emails=options.agent_coauthor_emails,
        max_candidates=options.max_candidates,
        extra_sensitive_globs=tuple(cs.meta.default_floor_config.extra_sensitive_globs),
        progress=progress,
    )
    sample = choose_sample(collected.candidates, options.sample, options.min_per_stratum, options.seed)
    result = None
    if not options.dry_run:
        result = export_sampled(
            gh,
            cs,
            sample.picks,
            redact=options.redact,
            now=now,
            sample=sample,
            on_exported=lambda item: emit(exported_line(item)),
            progress=progress,
        )
    stats = gh.limiter.stats
    summary = ExportSummary(
        repository=options.repo,
        merged_from=options.merged_from,
        merged_to=options.merged_to,
        author=options.author,
        dry_run=options.dry_run,
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
    if not options.dry_run:
        stamp = now().strftime("%Y%m%dT%H%M%S%fZ")
        write_private(cs, f"{EXPORTS_DIR}/{stamp}.json", summary.model_dump_json(by_alias=True, indent=2))
    for line in summary_lines(summary):
        emit(line)
    return summary
