"""The live result cache (E20, U-STORE-9): key, what is cached, sealed entries in pilot sets."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from graft_eval_pipeline.card.llm import Usage
from graft_eval_pipeline.card.prompts import prompt_fingerprint
from graft_eval_pipeline.card.result import CallRecord, CardResult, RiskSummary
from graft_eval_pipeline.evalset.evaluate import run_eval
from graft_eval_pipeline.evalset.run.cache import (
    CacheEntry,
    cache_key,
    entry_path,
    is_cacheable,
    read_entry,
    write_entry,
)
from graft_eval_pipeline.evalset.sets.crypto import generate_key, parse_key
from graft_eval_pipeline.evalset.sets.errors import EvalError
from graft_eval_pipeline_tests.builders import NOW
from graft_eval_pipeline_tests.live_fakes import GOAL_MARK, Factory, FakeLive, live_options, live_set


def result(*failures: str | None, status: str = "ok", reason: str | None = None) -> CardResult:
    return CardResult(
        status=status,
        failure_reason=reason,
        card=None,
        risk=RiskSummary(floor="trivial", writer=None, first_pass=None, verifier=None, final="logic"),
        floor_rules=[],
        raised_by=[],
        instructions_in_data=False,
        verifier=None,
        usage=Usage(),
        calls=[
            CallRecord(purpose="writer", model="claude-haiku-5-5", usage=Usage(), failure=f) for f in failures
        ],
        input_hash="0" * 64,
    )


def test_cache_key_is_sha256_of_input_hash_fingerprint_and_live() -> None:
    expected = hashlib.sha256(b'["abc","def","live"]').hexdigest()
    assert cache_key("abc", "def") == expected
    assert cache_key("abc") == cache_key("abc", prompt_fingerprint())
    assert cache_key("abc", "other") != expected and cache_key("abd", "def") != expected
    assert entry_path(expected) == f"cache/{expected}.json"


@pytest.mark.parametrize(
    ("failures", "reason", "cacheable"),
    [
        ((None, None), None, True),  # ok card
        ((), "too_large", True),  # no call at all
        (("refusal",), "llm_refusal", True),  # would come back the same
        (("invalid_output",), "llm_invalid_output", True),
        (("rate_limited",), "llm_rate_limited", False),
        (("unavailable",), "llm_unavailable", False),
        (("timeout",), "llm_timeout", False),
        ((None, "timeout"), None, False),  # ok card, verifier timed out: not frozen in
    ],
)
def test_U_HAR_6_what_is_cached(
    failures: tuple[str | None, ...], reason: str | None, cacheable: bool
) -> None:
    status = "unavailable" if reason else "ok"
    assert is_cacheable(result(*failures, status=status, reason=reason)) is cacheable


def test_entries_round_trip_in_a_plain_set(tmp_path: Path) -> None:
    cs = live_set(tmp_path, 1)
    entry = CacheEntry(key=cache_key("h"), created_at=NOW, cost_usd=0.0123, result=result(None))
    assert read_entry(cs, entry.key) is None
    write_entry(cs, entry)
    assert read_entry(cs, entry.key) == entry
    stored = json.loads((cs.dir / entry_path(entry.key)).read_text())
    assert stored["costUsd"] == 0.0123 and stored["result"]["calls"][0]["model"] == "claude-haiku-5-5"


def test_a_damaged_entry_is_an_error_naming_its_key_only(tmp_path: Path) -> None:
    cs = live_set(tmp_path, 1)
    key = cache_key("h")
    (cs.dir / "cache").mkdir()
    (cs.dir / entry_path(key)).write_text('{"key": "x", "goal": "' + GOAL_MARK + '"}')
    with pytest.raises(EvalError, match=f"cache entry {key} of set live-demo is not valid") as err:
        read_entry(cs, key)
    assert GOAL_MARK not in str(err.value)
    other = CacheEntry(key=cache_key("other"), created_at=NOW, cost_usd=None, result=result())
    (cs.dir / entry_path(key)).write_text(other.model_dump_json(by_alias=True))
    with pytest.raises(EvalError, match="holds another key"):
        read_entry(cs, key)


def test_U_STORE_9_cache_entries_of_a_pilot_set_are_sealed_and_hold_no_plaintext_goal(tmp_path: Path) -> None:
    key = parse_key(generate_key())
    cs = live_set(tmp_path, 3, key=key)
    report = run_eval(live_options(cs, Factory(FakeLive())))
    assert report.set.kind == "pilot" and len(report.cases) == 3
    files = sorted((cs.dir / "cache").iterdir())
    assert len(files) == 3 and all(f.name.endswith(".json.enc") for f in files)
    for f in files:
        text = f.read_text()
        assert GOAL_MARK not in text and "goal" not in text
        assert json.loads(text).keys() == {"graftEval", "kid", "iv", "tag", "ct"}
        entry = read_entry(cs, f.name.removesuffix(".json.enc"))
        assert entry is not None and entry.result.card is not None
        assert entry.result.card.goal.startswith(GOAL_MARK)  # the null writer's goal is the PR title

    # a plain entry dropped into a pilot set is refused, never read
    (cs.dir / "cache" / files[0].name.removesuffix(".enc")).write_text("{}")
    with pytest.raises(EvalError, match="does not belong in pilot set"):
        read_entry(cs, files[0].name.removesuffix(".json.enc"))
