"""Batch mode (`--batch`, issue 16): a live run's calls through the Message Batches API.

An offline evaluation does not need answers within seconds, and a batch costs half the standard
price. The card engine is unchanged: every case runs `generate_card` with a client of its own
that hands each request to `BatchPhases`, which holds it until every running case waits for a
call or has ended; then the earliest phase still asked for goes out as one batch (more only
above the API's size limits): all writers, then the escalations (built from the writers'
answers), then the verifiers. So a run makes at most three phases, each from the previous one's
answers.

Resuming: each batch is recorded in `cache/batches.json` (sealed in a pilot set) as soon as it
is created, with the custom ids it holds. A custom id is the SHA-256 of the request (purpose,
model, prompts, schema, limits), so a stopped run, started again, rebuilds the same requests
and polls the recorded batches instead of sending them again; the earlier phases' results are
fetched again (the API keeps them 29 days). The records this run used are dropped when it ends.

Results: a succeeded request is read like an interactive reply and marked `batch` (priced at
batch prices). Expired, canceled and transiently errored requests (and any the results omit)
are retried interactively through the adaptive limiter, when the budget still has room for the
standard price; otherwise, like a request errored for good, they end as failures of their kind.
Progress lines carry phase names, batch ids and counts only.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Callable, Iterable, Mapping
from contextlib import AbstractAsyncContextManager, nullcontext
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Literal

from pydantic import Field

from graft_eval_pipeline.card import (
    BatchApiError,
    BatchLlmClient,
    BatchMiss,
    CamelModel,
    LlmClient,
    LlmFailure,
    LlmPurpose,
    LlmReply,
    LlmRequest,
)
from graft_eval_pipeline.evalset.run.options import RunOptions
from graft_eval_pipeline.evalset.scoring import BatchInfo
from graft_eval_pipeline.evalset.sets import (
    BATCHES_FILE,
    CaseSet,
    EvalAbort,
    UntrustedInputError,
    parse_json,
    read_private,
    write_private,
)

PHASES: tuple[LlmPurpose, ...] = ("writer", "writerEscalated", "verifier")
PHASE_NAMES: dict[LlmPurpose, str] = {
    "writer": "writers",
    "writerEscalated": "escalations",
    "verifier": "verifiers",
}
BATCH_CARD_TIMEOUT_MS = 48 * 3600 * 1000
"""A card's own timeout in a batch run: a batch answers within 24 hours, then it expires."""
POLL_FIRST_S = 5.0
POLL_MAX_S = 60.0
MAX_BATCH_REQUESTS = 100_000  # the API's limit per batch
MAX_BATCH_CHARS = 100_000_000  # well under the API's 256 MB per batch, JSON escaping included
RESULTS_KEPT = timedelta(days=29)  # a record older than this names results the API no longer has
LEDGER_VERSION: Literal[1] = 1

Answer = LlmReply | LlmFailure | BatchMiss


def request_key(request: LlmRequest) -> str:
    """The custom id of a request.

    SHA-256 of everything the API is sent (64 hex characters, what the API allows). Identical
    requests share it, so they are sent once.
    """
    digest = hashlib.sha256()
    schema = json.dumps(request.output_schema, sort_keys=True, separators=(",", ":"))
    for part in (
        request.purpose,
        request.model,
        str(request.max_tokens),
        request.effort or "",
        schema,
        request.system,
        request.user,
    ):
        digest.update(part.encode("utf-8", "surrogatepass"))
        digest.update(b"\0")
    return digest.hexdigest()


# --- the ledger: batches submitted and not yet consumed, sealed in the set ----------------------


class BatchRecord(CamelModel):
    id: str
    phase: LlmPurpose
    custom_ids: list[str]
    created_at: datetime
    status: Literal["in_progress", "canceling", "ended"]


class BatchLedger(CamelModel):
    version: Literal[1] = LEDGER_VERSION
    batches: list[BatchRecord] = Field(default_factory=list)


def read_ledger(cs: CaseSet, now: datetime) -> BatchLedger:
    """The recorded batches, without those whose results the API no longer keeps."""
    text = read_private(cs, BATCHES_FILE)
    if text is None:
        return BatchLedger(batches=[])
    try:
        ledger = parse_json(text, f"{BATCHES_FILE} of set {cs.set_id} is not valid", BatchLedger)
    except UntrustedInputError as err:
        raise UntrustedInputError(
            f"{err}: delete it (its batches are then sent again, not resumed)"
        ) from None
    ledger.batches = [b for b in ledger.batches if now - b.created_at < RESULTS_KEPT]
    return ledger


def write_ledger(cs: CaseSet, ledger: BatchLedger) -> None:
    write_private(cs, BATCHES_FILE, ledger.model_dump_json(by_alias=True))


# --- the phases -------------------------------------------------------------------------------


@dataclass
class _Pending:
    case_id: str
    request: LlmRequest
    future: asyncio.Future[LlmReply | LlmFailure]


@dataclass
class BatchCounts:
    phases: int = 0
    batches: int = 0
    resumed: int = 0
    requests: int = 0
    succeeded: int = 0
    errored: int = 0
    expired: int = 0
    canceled: int = 0
    retried: int = 0
    wait_s: float = 0.0


def _chunks(ids: Iterable[str], requests: Mapping[str, LlmRequest]) -> list[list[str]]:
    """Batches under the API's limits, in a stable order."""
    chunks: list[list[str]] = []
    size = 0
    for cid in sorted(ids):
        request = requests[cid]
        chars = len(request.system) + len(request.user) + 4096
        if not chunks or len(chunks[-1]) >= MAX_BATCH_REQUESTS or size + chars > MAX_BATCH_CHARS:
            chunks.append([])
            size = 0
        chunks[-1].append(cid)
        size += chars
    return chunks


class _CaseClient:
    """What one case's `generate_card` calls: every request goes to the phases."""

    def __init__(self, phases: BatchPhases, case_id: str) -> None:
        self._phases = phases
        self._case_id = case_id

    async def complete(self, request: LlmRequest) -> LlmReply | LlmFailure:
        return await self._phases.submit(self._case_id, request)


class BatchPhases:
    """Collects the cases' requests into phases and answers them through batches.

    `cases` is how many cases will run; each calls `case_done` when its card is finished.
    `may_retry(case_id)` says whether the budget allows an interactive retry for that case;
    `admitted()` holds each retry until the limiter admits it.
    """

    def __init__(
        self,
        options: RunOptions,
        api: BatchLlmClient,
        interactive: LlmClient,
        *,
        cases: int,
        may_retry: Callable[[str], bool],
        admitted: Callable[[], AbstractAsyncContextManager[None]] = nullcontext,
    ) -> None:
        self._options = options
        self._api = api
        self._interactive = interactive
        self._active = cases
        self._may_retry = may_retry
        self._admitted = admitted
        self._unresolved = 0
        self._queued: dict[LlmPurpose, list[_Pending]] = {}
        self._running: asyncio.Task[None] | None = None
        self._ledger = read_ledger(options.set, options.now())
        self._known = {record.id for record in self._ledger.batches}
        self._used: set[str] = set()
        self.counts = BatchCounts()

    def client_for(self, case_id: str) -> LlmClient:
        return _CaseClient(self, case_id)

    async def submit(self, case_id: str, request: LlmRequest) -> LlmReply | LlmFailure:
        future: asyncio.Future[LlmReply | LlmFailure] = asyncio.get_running_loop().create_future()
        self._queued.setdefault(request.purpose, []).append(_Pending(case_id, request, future))
        self._unresolved += 1
        self._dispatch_when_all_wait()
        return await future

    def case_done(self) -> None:
        self._active -= 1
        self._dispatch_when_all_wait()

    def _dispatch_when_all_wait(self) -> None:
        """Every running case waits for an answer and no phase runs: the earliest phase goes."""
        if self._running is not None or not self._queued or self._unresolved < self._active:
            return
        purpose = next(p for p in PHASES if p in self._queued)
        pending = self._queued.pop(purpose)
        self._running = asyncio.get_running_loop().create_task(self._run_phase(purpose, pending))

    def _resolve(self, item: _Pending, outcome: LlmReply | LlmFailure | BaseException) -> None:
        if item.future.done():
            return
        self._unresolved -= 1
        if isinstance(outcome, BaseException):
            item.future.set_exception(outcome)
        else:
            item.future.set_result(outcome)

    async def _run_phase(self, purpose: LlmPurpose, pending: list[_Pending]) -> None:
        try:
            requests: dict[str, LlmRequest] = {}
            keys = [request_key(item.request) for item in pending]
            for key, item in zip(keys, pending, strict=True):
                requests.setdefault(key, item.request)
            answers = await self._answers(purpose, requests)
            await asyncio.gather(
                *(self._finish(item, answers[key]) for key, item in zip(keys, pending, strict=True))
            )
        except BatchApiError as err:
            abort = EvalAbort(
                "batch_failed",
                f"{err}: the batches already submitted are recorded in the set; run the same "
                "command again to resume them (polled, not sent again)",
            )
            for item in pending:
                self._resolve(item, abort)
        except (asyncio.CancelledError, KeyboardInterrupt, SystemExit):
            for item in pending:  # the run is being stopped: no case may wait forever
                if not item.future.done():
                    self._unresolved -= 1
                    item.future.cancel()
            raise
        except BaseException as exc:  # a bug, or a stop raised inside: the cases raise it
            for item in pending:
                self._resolve(item, exc)
        finally:
            self._running = None
        self._dispatch_when_all_wait()

    async def _finish(self, item: _Pending, answer: Answer) -> None:
        """The answer a case sees.

        A batch reply, or after a miss an interactive retry when it is worth one and the budget
        allows it, else the miss's failure.
        """
        if isinstance(answer, LlmFailure) and answer.kind == "refusal":
            after = getattr(self._interactive, "after_refusal", self._api.after_refusal)
            async with self._admitted():
                answer = await after(self._interactive_request(item.request), answer)
        elif isinstance(answer, BatchMiss):
            if answer.retry and self._may_retry(item.case_id):
                self.counts.retried += 1
                answer = await self._retry(item.request)
            else:
                answer = answer.failure
        self._resolve(item, answer)

    def _interactive_request(self, request: LlmRequest) -> LlmRequest:
        return replace(request, timeout_ms=self._options.timeout_ms)

    async def _retry(self, request: LlmRequest) -> LlmReply | LlmFailure:
        retry = self._interactive_request(request)
        async with self._admitted():  # many retries wait for the limiter here, not in their timeout
            try:
                async with asyncio.timeout(retry.timeout_ms / 1000):
                    return await self._interactive.complete(retry)
            except TimeoutError:
                return LlmFailure(kind="timeout", detail="no answer within timeout_ms")

    async def _answers(self, purpose: LlmPurpose, requests: dict[str, LlmRequest]) -> dict[str, Answer]:
        """The answer to every request: from recorded batches (polled) or new ones (submitted)."""
        started = self._options.clock()
        counts = self.counts
        counts.phases += 1
        counts.requests += len(requests)
        todo = set(requests)
        mine: list[tuple[BatchRecord, set[str]]] = []
        for record in self._ledger.batches:
            held = todo.intersection(record.custom_ids)
            if held:
                mine.append((record, held))
                todo -= held
        name = PHASE_NAMES[purpose]
        for record, held in mine:
            self._progress(f"batch {name} {record.id}: {len(held)} request(s) resumed ({record.status})")
        for chunk in _chunks(todo, requests):
            batch_id = await self._api.submit_batch([(cid, requests[cid]) for cid in chunk])
            record = BatchRecord(
                id=batch_id,
                phase=purpose,
                custom_ids=chunk,
                created_at=self._options.now(),
                status="in_progress",
            )
            self._ledger.batches.append(record)
            await self._save()  # recorded before the first poll: a stopped run resumes it
            self._progress(f"batch {name} {batch_id}: {len(chunk)} request(s) submitted")
            mine.append((record, set(chunk)))
        counts.batches += len(mine)
        counts.resumed += sum(record.id in self._known for record, _ in mine)
        answers: dict[str, Answer] = {}
        parts = await asyncio.gather(
            *(self._collect(name, record, {cid: requests[cid] for cid in held}) for record, held in mine)
        )
        for part in parts:
            answers.update(part)
        counts.wait_s += max(self._options.clock() - started, 0.0)
        self._tally(name, answers.values())
        return answers

    async def _collect(
        self, name: str, record: BatchRecord, wanted: dict[str, LlmRequest]
    ) -> dict[str, Answer]:
        """Poll a batch until it has ended, then read the answers to `wanted`."""
        self._used.add(record.id)
        delay = POLL_FIRST_S
        last = None
        while True:
            status = await self._api.batch_status(record.id)
            if status.processing != last:
                last = status.processing
                self._progress(
                    f"batch {name} {record.id}: {status.processing}, {status.processing_count} processing, "
                    f"{status.succeeded} succeeded, {status.errored} errored, {status.expired} expired, "
                    f"{status.canceled} canceled"
                )
            if status.processing == "ended":
                break
            if record.status != status.processing:
                record.status = status.processing
                await self._save()
            await self._options.sleep(delay)
            delay = min(delay * 2, POLL_MAX_S)
        record.status = "ended"
        await self._save()
        return await self._api.batch_outcomes(record.id, wanted)

    def _tally(self, name: str, answers: Iterable[Answer]) -> None:
        misses = {"errored": 0, "expired": 0, "canceled": 0, "missing": 0}
        succeeded = 0
        for answer in answers:
            if isinstance(answer, BatchMiss):
                misses[answer.result] += 1
            else:
                succeeded += 1
        c = self.counts
        c.succeeded += succeeded
        c.errored += misses["errored"] + misses["missing"]
        c.expired += misses["expired"]
        c.canceled += misses["canceled"]
        self._progress(
            f"batch {name}: {succeeded} succeeded, {misses['errored'] + misses['missing']} errored, "
            f"{misses['expired']} expired, {misses['canceled']} canceled"
        )

    async def _save(self) -> None:
        await asyncio.to_thread(write_ledger, self._options.set, self._ledger)

    def _progress(self, line: str) -> None:
        # above the terminal's progress bar when there is one, else a progress line
        if self._options.progress_bar is not None:
            self._options.progress_bar.note(line)
        elif self._options.progress is not None:
            self._options.progress(line)

    async def forget_used(self) -> None:
        """The run has ended: its batches' answers are in the cards (and the cache)."""
        kept = [record for record in self._ledger.batches if record.id not in self._used]
        if len(kept) != len(self._ledger.batches):
            self._ledger.batches = kept
            await self._save()

    async def aclose(self) -> None:
        """Stop a phase still running (the run was stopped); its batches stay recorded."""
        task = self._running
        if task is not None and not task.done():
            task.cancel()
            await asyncio.wait([task])  # its outcome is the cancellation asked for

    def info(self) -> BatchInfo:
        return batch_info(self.counts)


def batch_info(c: BatchCounts) -> BatchInfo:
    """The report's `run.batch` block (all zero when every case was cached or skipped)."""
    return BatchInfo(
        phases=c.phases,
        batches=c.batches,
        resumed_batches=c.resumed,
        requests=c.requests,
        succeeded=c.succeeded,
        errored=c.errored,
        expired=c.expired,
        canceled=c.canceled,
        retried_interactively=c.retried,
        wait_ms=round(c.wait_s * 1000),
    )
