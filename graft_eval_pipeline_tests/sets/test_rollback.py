"""Rollback protection (issue 23 item 6): an older copy of a sealed file put back is refused.

Only the store's public functions and the CLI are used here, so the same tests run against a
store without rollback protection (where each of them fails: the older copy is read as current).
"""

from __future__ import annotations

import base64
import shutil
from pathlib import Path

import pytest

from graft_eval_pipeline.cli import main
from graft_eval_pipeline.evalset.sets.case_schema import EvalCase
from graft_eval_pipeline.evalset.sets.crypto import generate_key, parse_key
from graft_eval_pipeline.evalset.sets.errors import EvalError
from graft_eval_pipeline.evalset.sets.records import RecordWriter, read_records
from graft_eval_pipeline.evalset.sets.store import (
    CaseSet,
    iter_cases,
    list_case_ids,
    open_set,
    read_case,
    read_private,
    write_case,
    write_private,
)
from graft_eval_pipeline_tests.builders import make_label, make_pilot_case, make_pilot_set

pytestmark = pytest.mark.usefixtures("clean_env")
SET_ID = "pilot-acme"


@pytest.fixture
def key() -> bytes:
    return parse_key(generate_key())


def _set(tmp_path: Path, key: bytes) -> CaseSet:
    return make_pilot_set(tmp_path / SET_ID, key=key)


def _case_rel(case: EvalCase) -> str:
    return f"cases/{case.id}.case.enc"


def _labelled(case: EvalCase) -> EvalCase:
    return case.model_copy(update={"labels": [make_label()]})


def test_a_rolled_back_case_is_refused_naming_the_file(tmp_path: Path, key: bytes) -> None:
    cs = _set(tmp_path, key)
    case = make_pilot_case(SET_ID)
    write_case(cs, case)
    before_label = (cs.dir / _case_rel(case)).read_bytes()
    write_case(cs, _labelled(case))
    assert read_case(open_set(cs.dir, key), case.id).labels  # the labelled version is current

    (cs.dir / _case_rel(case)).write_bytes(before_label)  # the copy without the label put back
    reopened = open_set(cs.dir, key)
    for read in (lambda: read_case(reopened, case.id), lambda: list(iter_cases(reopened))):
        with pytest.raises(EvalError) as caught:
            read()
        message = str(caught.value)
        assert message.startswith(f"{_case_rel(case)}: ") and "\n" not in message
        assert "older copy" in message and str(tmp_path) not in message


def test_the_cli_refuses_a_rolled_back_case_with_one_line_and_exit_2(
    tmp_path: Path, key: bytes, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("GRAFT_EVAL_KEY", base64.b64encode(key).decode())
    cs = _set(tmp_path, key)
    case = make_pilot_case(SET_ID)
    write_case(cs, case)
    older = (cs.dir / _case_rel(case)).read_bytes()
    write_case(cs, _labelled(case))
    (cs.dir / _case_rel(case)).write_bytes(older)
    capsys.readouterr()

    assert main(["show", "--set", str(cs.dir), "--case", case.id]) == 2
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and _case_rel(case) in lines[0] and "older copy" in lines[0]
    assert "Traceback" not in captured.err and "shop-demo" not in captured.out


@pytest.mark.parametrize("rel", ["assets/eval_report.json", "cache/0123abcd.json", "exports/20261015.json"])
def test_a_rolled_back_private_file_is_refused_naming_it(tmp_path: Path, key: bytes, rel: str) -> None:
    cs = _set(tmp_path, key)
    write_private(cs, rel, '{"version": 1}')
    older = (cs.dir / f"{rel}.enc").read_bytes()
    write_private(cs, rel, '{"version": 2}')
    assert read_private(cs, rel) == '{"version": 2}'

    (cs.dir / f"{rel}.enc").write_bytes(older)
    with pytest.raises(EvalError, match=rf"^{rel}\.enc: not the version .*older copy"):
        read_private(open_set(cs.dir, key), rel)


def test_a_rolled_back_record_file_is_refused_naming_it(tmp_path: Path, key: bytes) -> None:
    cs = _set(tmp_path, key)
    rel = "assets/harness_run.card-results.run-1.jsonl"
    for version in ("old", "new"):
        with RecordWriter(cs, rel) as writer:
            writer.write(f'{{"v": "{version}"}}')
        if version == "old":
            older = (cs.dir / f"{rel}.enc").read_bytes()
    assert list(read_records(cs, rel) or []) == ['{"v": "new"}']

    (cs.dir / f"{rel}.enc").write_bytes(older)
    records = read_records(open_set(cs.dir, key), rel)
    with pytest.raises(EvalError, match=rf"^{rel}\.enc: not the version"):
        list(records or [])


def test_a_deleted_case_is_noticed_by_every_listing(tmp_path: Path, key: bytes) -> None:
    cs = _set(tmp_path, key)
    cases = [make_pilot_case(SET_ID, pr_number=n) for n in (1, 2, 3)]
    for case in cases:
        write_case(cs, case)
    (cs.dir / _case_rel(cases[1])).unlink()

    reopened = open_set(cs.dir, key)
    for read in (lambda: list_case_ids(reopened), lambda: read_case(reopened, cases[1].id)):
        with pytest.raises(EvalError, match=rf"^{_case_rel(cases[1])}: deleted outside graft-eval"):
            read()


def test_validate_lists_every_deleted_case_and_goes_on(
    tmp_path: Path, key: bytes, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    cs = _set(tmp_path, key)
    cases = [make_pilot_case(SET_ID, pr_number=n) for n in (1, 2, 3, 4)]
    for case in cases:
        write_case(cs, case)
    for gone in (cases[1], cases[3]):
        (cs.dir / _case_rel(gone)).unlink()
    monkeypatch.setenv("GRAFT_EVAL_KEY", base64.b64encode(key).decode())
    assert main(["validate", "--set", str(cs.dir)]) == 1
    out, err = capsys.readouterr()
    named = [line for line in err.splitlines() if "deleted outside graft-eval" in line]
    assert [line.split(": ", 2)[1] for line in named] == [_case_rel(cases[1]), _case_rel(cases[3])]
    assert f"set {SET_ID}: 4 cases, " in out and ", 2 invalid" in out


def test_a_deleted_private_file_is_noticed(tmp_path: Path, key: bytes) -> None:
    cs = _set(tmp_path, key)
    write_private(cs, "cache/batches.json", "{}")
    (cs.dir / "cache/batches.json.enc").unlink()
    with pytest.raises(EvalError, match=r"^cache/batches\.json\.enc: deleted outside graft-eval"):
        read_private(open_set(cs.dir, key), "cache/batches.json")


def test_a_whole_copy_of_another_set_file_under_a_new_name_is_refused(tmp_path: Path, key: bytes) -> None:
    """A file the journal never named cannot have been written by the store: an older set's copy."""
    cs = _set(tmp_path, key)
    copy = make_pilot_set(tmp_path / "copy" / SET_ID, key=key, set_id=SET_ID)
    old = make_pilot_case(SET_ID, pr_number=9)
    write_case(copy, old)  # an old case, sealed for this set id and path, that this set never held
    shutil.copy(copy.dir / _case_rel(old), cs.dir / _case_rel(old))
    with pytest.raises(EvalError, match=rf"^{_case_rel(old)}: this set's journal never recorded it"):
        read_case(open_set(cs.dir, key), old.id)
