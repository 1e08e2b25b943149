"""Property-based tests of every reader of a file the tool reads back (issue 23, item 6).

Each reader gets random bytes, random JSON, valid documents with a huge integer, deep nesting or
a field of the wrong type put in, and must either return a valid object or raise an `EvalError`
(exit 2) whose message is one line naming the file: never a traceback, never another exception.
The readers: case files, set.json, `label --apply` files, labels-inbox files, thresholds.json,
reports and baselines, past reports as the history reads them, card results (and the record
files under them), cache entries, the batch ledger, Dagster's stored values, live-rerun.json,
sealed envelopes and a pilot set's journal.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import dagster as dg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from graft_eval_pipeline.defs.io_manager import SealedIOManager
from graft_eval_pipeline.defs.resources import CaseSetsResource
from graft_eval_pipeline.evalset.labeling.inbox import apply_label_file, parse_inbox_file
from graft_eval_pipeline.evalset.report.files import load_any_report
from graft_eval_pipeline.evalset.report.history import read_point
from graft_eval_pipeline.evalset.report.thresholds import load_thresholds
from graft_eval_pipeline.evalset.run.batch import read_ledger
from graft_eval_pipeline.evalset.run.cache import entry_path, read_entry
from graft_eval_pipeline.evalset.run.results import read_card_results
from graft_eval_pipeline.evalset.scoring import Metrics
from graft_eval_pipeline.evalset.sets import BATCHES_FILE, EvalError, journal
from graft_eval_pipeline.evalset.sets.case_schema import dump_case, parse_case
from graft_eval_pipeline.evalset.sets.crypto import generate_key, open_envelope, parse_key, seal
from graft_eval_pipeline.evalset.sets.live_rerun import read_live_rerun
from graft_eval_pipeline.evalset.sets.paths import JOURNAL_FILE, SYNTHETIC_BASELINE, THRESHOLDS_FILE
from graft_eval_pipeline.evalset.sets.store import CaseSet, read_cases, read_meta, write_case
from graft_eval_pipeline_tests.builders import (
    FIXED_TIME,
    make_case,
    make_pilot_case,
    make_pilot_set,
    make_synthetic_set,
)

pytestmark = pytest.mark.slow  # fuzzing: 40 generated files for each reader

FUZZ = settings(
    max_examples=40,
    deadline=None,
    database=None,  # nothing written into the checkout
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
KEY = parse_key(generate_key())
CACHE_KEY = "a" * 64


def _json_values() -> st.SearchStrategy[Any]:
    scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20)
    return st.recursive(
        scalars,
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
        max_leaves=20,
    )


def _put_in(document: Any, path: list[int], value: Any) -> Any:
    """`document` with the node chosen by `path` (indexes into dicts' and lists' children) replaced."""
    if not path or not isinstance(document, dict | list) or not document:
        return value
    keys = list(document) if isinstance(document, dict) else list(range(len(document)))
    chosen = keys[path[0] % len(keys)]
    copy: Any = dict(document) if isinstance(document, dict) else list(document)
    copy[chosen] = _put_in(document[chosen], path[1:], value)
    return copy


@st.composite
def damaged(draw: st.DrawFn, valid: bytes) -> bytes:
    """A damaged document: random bytes, random JSON, or the valid one with one node changed.

    Random bytes, random JSON, or the valid document with one node replaced by a value of another
    type, a huge integer or deep nesting.
    """
    kind = draw(st.sampled_from(["bytes", "json", "wrong-type", "huge", "deep", "cut"]))
    if kind == "bytes":
        return draw(st.binary(max_size=300))
    if kind == "json":
        return json.dumps(draw(_json_values())).encode()
    if kind == "cut":
        return valid[: draw(st.integers(min_value=0, max_value=max(len(valid) - 1, 0)))]
    document = json.loads(valid)
    path = draw(st.lists(st.integers(min_value=0, max_value=50), max_size=6))
    if kind == "wrong-type":
        return json.dumps(_put_in(document, path, draw(_json_values()))).encode()
    if kind == "huge":
        digits = "9" * draw(st.integers(min_value=301, max_value=6000))
        return json.dumps(_put_in(document, path, "@NUM@")).replace('"@NUM@"', digits).encode()
    depth = draw(st.integers(min_value=60, max_value=5000))
    return (
        json.dumps(_put_in(document, path, "@DEEP@")).replace('"@DEEP@"', "[" * depth + "]" * depth).encode()
    )


def _check(read: Callable[[], object]) -> None:
    try:
        read()
    except EvalError as err:  # the only way a reader may refuse
        message = str(err)
        assert err.exit_code == 2, message
        assert message and "\n" not in message and "Traceback" not in message, message


@pytest.fixture(scope="module")
def folder() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="graft-fuzz-") as name:
        yield Path(name)


@pytest.fixture(scope="module")
def synthetic(folder: Path) -> CaseSet:
    cs = make_synthetic_set(folder / "syn")
    write_case(cs, make_case("syn-001-a", labels=[]))
    return cs


VALID_CASE = dump_case(make_case("syn-001-a")).encode()
VALID_REPORT = SYNTHETIC_BASELINE.read_bytes()
VALID_THRESHOLDS = THRESHOLDS_FILE.read_bytes()
VALID_LABELS = json.dumps(
    {"syn-001-a": {"risk": "logic", "outOfScope": [], "shouldFlag": False, "confidence": "high"}}
).encode()
VALID_INBOX = json.dumps({"labeler": "alice", "labels": json.loads(VALID_LABELS)}).encode()


@FUZZ
@given(data=st.data())
def test_case_files(data: st.DataObject) -> None:
    text = data.draw(damaged(VALID_CASE))
    _check(lambda: parse_case(text, "cases/x.case.json"))


@FUZZ
@given(data=st.data())
def test_set_json(folder: Path, data: st.DataObject) -> None:
    set_dir = folder / "meta"
    set_dir.mkdir(exist_ok=True)
    valid = (Path(__file__).parents[2] / "eval" / "synthetic" / "set.json").read_bytes()
    (set_dir / "set.json").write_bytes(data.draw(damaged(valid)))
    _check(lambda: read_meta(set_dir))


@FUZZ
@given(data=st.data())
def test_label_apply_files(folder: Path, synthetic: CaseSet, data: st.DataObject) -> None:
    path = folder / "labels.json"
    path.write_bytes(data.draw(damaged(VALID_LABELS)))
    # the real write is not under test: a valid file is checked whole before any write
    _check(lambda: apply_label_file(synthetic, path, handle="alice", now=FIXED_TIME))


@FUZZ
@given(data=st.data())
def test_inbox_files(data: st.DataObject) -> None:
    text = data.draw(damaged(VALID_INBOX))
    _check(lambda: parse_inbox_file(text, "labels-inbox/alice.json"))


@FUZZ
@given(data=st.data())
def test_thresholds(folder: Path, data: st.DataObject) -> None:
    path = folder / "thresholds.json"
    path.write_bytes(data.draw(damaged(VALID_THRESHOLDS)))
    _check(lambda: load_thresholds(path))


@FUZZ
@given(data=st.data())
def test_reports_and_baselines(folder: Path, data: st.DataObject) -> None:
    path = folder / "report.json"
    path.write_bytes(data.draw(damaged(VALID_REPORT)))
    _check(lambda: load_any_report(path))


@FUZZ
@given(data=st.data())
def test_past_reports_as_the_history_reads_them(folder: Path, data: st.DataObject) -> None:
    run_dir = folder / "runs" / "20260101T000000Z-abcd"
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "report.json").write_bytes(data.draw(damaged(VALID_REPORT)))
    _check(lambda: read_point(run_dir))


def _valid_result() -> bytes:
    from graft_eval_pipeline.evalset.run import fake_result
    from graft_eval_pipeline.evalset.run.options import DEFAULT_TIMEOUT_MS
    from graft_eval_pipeline.evalset.sets import EvalEnv

    result = fake_result(make_case("syn-001-a"), EvalEnv.from_environ({}).models(), DEFAULT_TIMEOUT_MS)
    return json.dumps({"id": "syn-001-a", "result": result.model_dump(mode="json", by_alias=True)}).encode()


@FUZZ
@given(data=st.data())
def test_card_results(synthetic: CaseSet, data: st.DataObject) -> None:
    record = data.draw(damaged(_valid_result()))
    ending = json.dumps({"graftEvalRecords": 1}).encode()
    lines = data.draw(
        st.sampled_from([record + b"\n" + ending + b"\n", record, record + b"\n", b"\n".join([record] * 2)])
    )
    path = synthetic.dir / "assets" / "fuzz.jsonl"
    path.parent.mkdir(exist_ok=True)
    path.write_bytes(lines)
    _check(lambda: list(read_card_results(synthetic, "assets/fuzz.jsonl")))


@FUZZ
@given(data=st.data())
def test_cache_entries(synthetic: CaseSet, data: st.DataObject) -> None:
    valid = json.dumps({"key": CACHE_KEY, "createdAt": "2026-01-01T00:00:00Z", "result": {}}).encode()
    path = synthetic.dir / entry_path(CACHE_KEY)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.draw(damaged(valid)))
    _check(lambda: read_entry(synthetic, CACHE_KEY))


@FUZZ
@given(data=st.data())
def test_the_batch_ledger(synthetic: CaseSet, data: st.DataObject) -> None:
    valid = json.dumps({"version": 1, "batches": []}).encode()
    path = synthetic.dir / BATCHES_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.draw(damaged(valid)))
    _check(lambda: read_ledger(synthetic, datetime(2026, 1, 1, tzinfo=UTC)))


@FUZZ
@given(data=st.data())
def test_dagster_stored_values(synthetic: CaseSet, data: st.DataObject) -> None:
    sets = CaseSetsResource(eval_dir=str(synthetic.dir.parent / "none"), synthetic_dir=str(synthetic.dir))
    manager = SealedIOManager(sets=sets)
    valid = json.dumps(json.loads(VALID_REPORT)["metrics"]).encode()
    path = synthetic.dir / "assets" / "eval_metrics.json"
    path.parent.mkdir(exist_ok=True)
    path.write_bytes(data.draw(damaged(valid)))
    context = dg.build_input_context(
        asset_key=dg.AssetKey("eval_metrics"),
        partition_key="synthetic",
        dagster_type=dg.DagsterType(lambda _, __: True, name="Metrics", typing_type=Metrics),
    )
    _check(lambda: manager.load_input(context))


@FUZZ
@given(data=st.data())
def test_live_rerun_files(folder: Path, data: st.DataObject) -> None:
    set_dir = folder / "live"
    set_dir.mkdir(exist_ok=True)
    (set_dir / "live-rerun.json").write_bytes(data.draw(damaged(b'{"maxCostUsd": 5}')))
    _check(lambda: read_live_rerun(set_dir))


@FUZZ
@given(data=st.data())
def test_sealed_envelopes(data: st.DataObject) -> None:
    valid = seal("{}", KEY, "pilot-acme/cases/x.case.enc").encode()
    envelope = data.draw(damaged(valid))
    _check(lambda: open_envelope(envelope, KEY, "pilot-acme/cases/x.case.enc"))


@pytest.fixture(scope="module")
def journaled(folder: Path) -> CaseSet:
    """A pilot set whose journal has a few entries (a case written twice, an asset value)."""
    cs = make_pilot_set(folder / "pilot-acme", key=KEY)
    case = make_pilot_case("pilot-acme")
    write_case(cs, case)
    write_case(cs, case.model_copy(update={"tags": ["x"]}))
    return cs


@st.composite
def damaged_journal(draw: st.DrawFn, valid: bytes) -> bytes:
    """Random bytes, the journal cut anywhere, or one of its lines replaced, dropped or doubled."""
    lines = valid.splitlines(keepends=True)
    kind = draw(st.sampled_from(["bytes", "cut", "replaced", "dropped", "doubled"]))
    if kind == "bytes":
        return draw(st.binary(max_size=300))
    if kind == "cut":
        return valid[: draw(st.integers(min_value=0, max_value=len(valid) - 1))]
    at = draw(st.integers(min_value=0, max_value=len(lines) - 1))
    if kind == "replaced":
        lines[at] = draw(st.binary(max_size=120)).replace(b"\n", b"") + b"\n"
    elif kind == "dropped":
        del lines[at]
    else:
        lines.insert(at, lines[at])
    return b"".join(lines)


@FUZZ
@given(data=st.data())
def test_the_set_journal(journaled: CaseSet, data: st.DataObject) -> None:
    path = journaled.dir / JOURNAL_FILE
    valid = path.read_bytes()
    path.write_bytes(data.draw(damaged_journal(valid)))
    journal._states.clear()  # as a new process would read it
    try:
        _check(lambda: read_cases(journaled))
    finally:
        path.write_bytes(valid)
        journal._states.clear()
