"""The live result cache (spec E20): a prompt iteration re-pays only for cases that changed.

Key: SHA-256 of the canonical JSON of `[inputHash, promptFingerprint(), "live"]`. The input hash
covers the prepared inputs, PROMPT_VERSION, both models, efforts, limits and sensitive globs;
the fingerprint covers prompt or schema text edited without a version bump. Entries hold model
prose, so they go through `write_private`: sealed `cache/<key>.json.enc` in a pilot set.

A live run writes its entries in the background (`CacheWrites`): sealing and two fsyncs take
about 12 ms on this machine, and a case that waited for them in its lane would hold the lane
that long after its last call.
"""

from __future__ import annotations

import asyncio
import hashlib
from datetime import datetime

from graft_eval_pipeline.card import (
    RETRYABLE_FAILURES,
    CamelModel,
    CardInputs,
    CardResult,
    GenerateOptions,
    canonical_json,
    prepare_card_inputs,
    prompt_fingerprint,
)
from graft_eval_pipeline.evalset.sets import (
    CACHE_DIR,
    CaseSet,
    EvalError,
    GraftEvalError,
    UntrustedInputError,
    parse_json,
    read_private,
    write_private,
)

LIVE_MODE = "live"


class CacheEntry(CamelModel):
    """One cached live card: the result (its `calls` carry per-model usage) and what it cost."""

    key: str
    created_at: datetime
    cost_usd: float | None
    result: CardResult


def cache_key(input_hash: str, fingerprint: str | None = None, trial: int = 0) -> str:
    """`fingerprint` defaults to the prompts of the running code.

    Trial 0 keeps the key it had before --trials existed, each other trial has its own.
    """
    parts: list[object] = [input_hash, fingerprint or prompt_fingerprint(), LIVE_MODE]
    if trial:
        parts.append(trial)
    return hashlib.sha256(canonical_json(parts).encode("utf-8")).hexdigest()


def entry_path(key: str) -> str:
    """The logical path inside the set (`write_private` adds `.enc` in a pilot set)."""
    return f"{CACHE_DIR}/{key}.json"


def is_cacheable(result: CardResult) -> bool:
    """Cached unless some call failed in a retryable way (unavailable, timeout, rate_limited).

    Transient failures must not be frozen in: this covers a retryable writer failure (the card is
    unavailable) and also a verifier timeout on an ok card. `too_large` makes no call, and a
    refusal or invalid output would come back the same, so those are cached.
    """
    return not any(call.failure in RETRYABLE_FAILURES for call in result.calls)


def read_entry(cs: CaseSet, key: str) -> CacheEntry | None:
    """The entry under `key`, or None; an unreadable entry is an error naming its key only."""
    text = read_private(cs, entry_path(key))
    if text is None:
        return None
    try:
        entry = parse_json(text, f"cache entry {key} of set {cs.set_id} is not valid", CacheEntry)
    except UntrustedInputError as err:
        raise UntrustedInputError(f"{err}: delete it (or run with --no-cache)") from None
    if entry.key != key:
        raise EvalError(f"cache entry {key} of set {cs.set_id} holds another key: delete it")
    return entry


def write_entry(cs: CaseSet, entry: CacheEntry) -> None:
    write_private(cs, entry_path(entry.key), entry.model_dump_json(by_alias=True))


class CacheWrites:
    """Entries written in worker threads while the run goes on, at most `limit` at a time.

    `put` hands an entry over and returns at once (it waits only while `limit` writes are
    pending), so the case's lane takes its next case while the entry is sealed and fsynced.
    `drain` waits for every pending write; the run calls it before it returns, so no write
    outlives the run (nor the set's write lock). A write that failed is raised by the next `put`
    or by `drain`, as an error naming the case and the cause, never the entry's content.
    """

    def __init__(self, cs: CaseSet, limit: int) -> None:
        self._cs = cs
        self._limit = max(limit, 1)
        self._pending: dict[asyncio.Future[None], str] = {}
        self._failed: GraftEvalError | None = None

    async def put(self, case_id: str, entry: CacheEntry) -> None:
        while len(self._pending) >= self._limit:
            await asyncio.wait(self._pending, return_when=asyncio.FIRST_COMPLETED)
            self._collect()
        self._raise_failure()
        self._pending[asyncio.ensure_future(asyncio.to_thread(write_entry, self._cs, entry))] = case_id

    async def drain(self, *, quiet: bool = False) -> None:
        """Wait for every pending write; `quiet` (the run is already failing) raises nothing."""
        if self._pending:
            await asyncio.wait(self._pending)
        self._collect()
        if not quiet:
            self._raise_failure()

    def _collect(self) -> None:
        for write in [w for w in self._pending if w.done()]:
            case_id = self._pending.pop(write)
            error = None if write.cancelled() else write.exception()
            if error is None or self._failed is not None:
                continue
            if isinstance(error, GraftEvalError):  # the store's own words (a bad path, a lock)
                self._failed = error
            else:
                self._failed = EvalError(
                    f"case {case_id}: its cache entry could not be written ({type(error).__name__}): "
                    f"check that the folder of set {self._cs.set_id} is writable and has room"
                )

    def _raise_failure(self) -> None:
        if self._failed is not None:
            raise self._failed


def cached_result(cs: CaseSet, inputs: CardInputs, options: GenerateOptions) -> CardResult | None:
    """The cached live card for these inputs under the running prompts and these options (`show`)."""
    entry = read_entry(cs, cache_key(prepare_card_inputs(inputs, options).input_hash))
    return None if entry is None else entry.result
