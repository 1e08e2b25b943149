"""The set journal behind rollback protection: readers beside a writer, crashes, a damaged journal."""

from __future__ import annotations

import base64
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from graft_eval_pipeline.cli import main
from graft_eval_pipeline.evalset.sets import journal
from graft_eval_pipeline.evalset.sets.crypto import generate_key, parse_key
from graft_eval_pipeline.evalset.sets.errors import EvalCryptoError, EvalError
from graft_eval_pipeline.evalset.sets.paths import JOURNAL_FILE
from graft_eval_pipeline.evalset.sets.store import (
    CaseSet,
    open_set,
    read_case,
    read_cases,
    read_private,
    write_case,
    write_private,
)
from graft_eval_pipeline_tests.builders import make_pilot_case, make_pilot_set, make_synthetic_set

pytestmark = pytest.mark.usefixtures("clean_env")
SET_ID = "pilot-acme"
ASSET = "assets/eval_report.json"
WRITES = 60

WRITER = """
import base64, os, sys
from graft_eval_pipeline.evalset.sets.store import open_set, read_case, write_case, write_private
cs = open_set(sys.argv[1], base64.b64decode(os.environ["TEST_KEY"]))
case = read_case(cs, sys.argv[2])
for n in range(int(sys.argv[3])):
    write_case(cs, case.model_copy(update={"tags": [f"v{n}"]}))
    write_private(cs, sys.argv[4], '{"n": %d}' % n)
"""


@pytest.fixture
def key() -> bytes:
    return parse_key(generate_key())


def _set(tmp_path: Path, key: bytes) -> CaseSet:
    return make_pilot_set(tmp_path / SET_ID, key=key)


def _fresh_process_view() -> None:
    """Forget this process's parse of every journal, as a new process would start."""
    journal._states.clear()


def _read_while(cs: CaseSet, case_id: str, writing: threading.Event | subprocess.Popen[bytes]) -> int:
    """Read the case and the asset until the writer is done (every read must succeed).

    Returns how many versions of the case were seen, which shows the reads overlapped the writes.
    """
    versions: set[tuple[str, ...]] = set()

    def done() -> bool:
        return writing.is_set() if isinstance(writing, threading.Event) else writing.poll() is not None

    while not done():
        versions.add(tuple(read_case(cs, case_id).tags))
        assert read_private(cs, ASSET) is not None
    return len(versions)


@pytest.mark.parametrize("writer", ["thread", pytest.param("process", marks=pytest.mark.slow)])  # a process
def test_a_reader_beside_a_writer_sees_the_old_or_the_new_file_never_an_error(
    tmp_path: Path, key: bytes, writer: str
) -> None:
    cs = _set(tmp_path, key)
    case = make_pilot_case(SET_ID)
    write_case(cs, case)
    write_private(cs, ASSET, '{"n": -1}')
    reader = open_set(cs.dir, key)
    if writer == "process":
        env = {**os.environ, "TEST_KEY": base64.b64encode(key).decode()}
        args = [sys.executable, "-c", WRITER, str(cs.dir), case.id, str(WRITES * 3), ASSET]
        with subprocess.Popen(args, env=env, stderr=subprocess.PIPE) as proc:
            seen = _read_while(reader, case.id, proc)
            _, err = proc.communicate()
        assert proc.returncode == 0, err.decode()
    else:
        finished, failed = threading.Event(), []

        def write() -> None:
            try:
                for n in range(WRITES):
                    write_case(cs, case.model_copy(update={"tags": [f"v{n}"]}))
                    write_private(cs, ASSET, f'{{"n": {n}}}')
            except BaseException as exc:  # reported below, not lost in the thread
                failed.append(exc)
            finally:
                finished.set()

        thread = threading.Thread(target=write)
        thread.start()
        seen = _read_while(reader, case.id, finished)
        thread.join()
        assert not failed
    assert seen >= 2
    last = WRITES * 3 - 1 if writer == "process" else WRITES - 1
    _fresh_process_view()
    assert read_case(open_set(cs.dir, key), case.id).tags == [f"v{last}"]


def _crash_at(monkeypatch: pytest.MonkeyPatch, op: str) -> None:
    """The writer stops (as if killed) when it is about to append an entry of kind `op`."""
    real = journal._append

    def append(*args: object, **kwargs: object) -> None:
        if args[3] == op:
            raise KeyboardInterrupt("killed")
        real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(journal, "_append", append)


def test_a_crash_between_pending_and_commit_leaves_both_versions_readable_until_the_next_write(
    tmp_path: Path, key: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    cs = _set(tmp_path, key)
    case = make_pilot_case(SET_ID)
    write_case(cs, case)
    path = cs.dir / f"cases/{case.id}.case.enc"
    old = path.read_bytes()
    with monkeypatch.context() as patch:
        _crash_at(patch, journal.COMMIT)
        with pytest.raises(KeyboardInterrupt):
            write_case(cs, case.model_copy(update={"tags": ["new"]}))
    _fresh_process_view()
    assert read_case(open_set(cs.dir, key), case.id).tags == ["new"]  # renamed, not committed
    new = path.read_bytes()
    path.write_bytes(old)  # the one-step rollback this window allows
    assert read_case(open_set(cs.dir, key), case.id).tags == []

    write_case(cs, case.model_copy(update={"tags": ["newer"]}))  # the next write closes it
    for stale in (old, new):
        path.write_bytes(stale)
        _fresh_process_view()
        with pytest.raises(EvalCryptoError, match="not the version"):
            read_case(open_set(cs.dir, key), case.id)


def test_a_crash_before_the_pending_entry_lands_leaves_the_old_file_current(
    tmp_path: Path, key: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    cs = _set(tmp_path, key)
    write_private(cs, ASSET, '{"n": 1}')
    with monkeypatch.context() as patch:
        _crash_at(patch, journal.PENDING)
        with pytest.raises(KeyboardInterrupt):
            write_private(cs, ASSET, '{"n": 2}')
    _fresh_process_view()
    assert read_private(open_set(cs.dir, key), ASSET) == '{"n": 1}'


def test_a_torn_last_journal_line_is_ignored_by_readers_and_cut_by_the_next_writer(
    tmp_path: Path, key: bytes
) -> None:
    cs = _set(tmp_path, key)
    write_private(cs, ASSET, '{"n": 1}')
    with (cs.dir / JOURNAL_FILE).open("ab") as handle:
        handle.write(b'{"graftEval": "enc-v1", "kid": "half a li')  # a write stopped mid-line
    _fresh_process_view()
    assert read_private(open_set(cs.dir, key), ASSET) == '{"n": 1}'
    write_private(cs, ASSET, '{"n": 2}')
    _fresh_process_view()
    assert read_private(open_set(cs.dir, key), ASSET) == '{"n": 2}'
    assert b"half a li" not in (cs.dir / JOURNAL_FILE).read_bytes()


def _journal_lines(cs: CaseSet) -> list[bytes]:
    return (cs.dir / JOURNAL_FILE).read_bytes().splitlines(keepends=True)


@pytest.mark.parametrize("damage", ["entry-edited", "entries-swapped", "header-edited", "not-json"])
def test_a_tampered_journal_is_one_named_line_at_exit_2(
    tmp_path: Path,
    key: bytes,
    damage: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("GRAFT_EVAL_KEY", base64.b64encode(key).decode())
    cs = _set(tmp_path, key)
    case = make_pilot_case(SET_ID)
    write_case(cs, case)
    write_case(cs, case.model_copy(update={"tags": ["x"]}))
    lines = _journal_lines(cs)
    if damage == "entry-edited":
        lines[2] = lines[2][:8] + (b"A" if lines[2][8:9] != b"A" else b"B") + lines[2][9:]
    elif damage == "entries-swapped":
        lines[1], lines[3] = lines[3], lines[1]
    elif damage == "header-edited":
        lines[0] = lines[0].replace(b'"gen": "', b'"gen": "0')
    else:
        lines = [b"\xff\xfe{{{\n"]
    (cs.dir / JOURNAL_FILE).write_bytes(b"".join(lines))
    _fresh_process_view()
    capsys.readouterr()

    assert main(["show", "--set", str(cs.dir), "--case", case.id]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"{JOURNAL_FILE} of set {SET_ID}" in err[0] and "Traceback" not in err[0]


def test_an_older_copy_of_the_journal_refuses_the_files_written_since(tmp_path: Path, key: bytes) -> None:
    cs = _set(tmp_path, key)
    case = make_pilot_case(SET_ID)
    write_case(cs, case)
    older_journal = (cs.dir / JOURNAL_FILE).read_bytes()
    write_case(cs, case.model_copy(update={"tags": ["x"]}))
    (cs.dir / JOURNAL_FILE).write_bytes(older_journal)  # the journal alone rolled back
    _fresh_process_view()
    with pytest.raises(EvalCryptoError, match=rf"^cases/{case.id}\.case\.enc: not the version"):
        read_case(open_set(cs.dir, key), case.id)


def test_a_journal_cut_short_under_a_running_reader_is_refused(tmp_path: Path, key: bytes) -> None:
    cs = _set(tmp_path, key)
    write_private(cs, ASSET, '{"n": 1}')
    assert read_private(cs, ASSET) is not None
    lines = _journal_lines(cs)
    with (cs.dir / JOURNAL_FILE).open("r+b") as handle:  # same file, entries cut off its end
        handle.truncate(len(b"".join(lines[:-2])))
    with pytest.raises(EvalCryptoError, match=rf"^{JOURNAL_FILE} of set {SET_ID} was cut short"):
        read_private(cs, ASSET)


def test_a_set_without_a_journal_is_refused_until_the_one_time_step(
    tmp_path: Path, key: bytes, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A set made before the journal opens only after `graft-eval sets journal`.

    A set made before the journal (or whose journal was deleted) opens only after `graft-eval sets
    journal`, which records every sealed file as it is then.
    """
    monkeypatch.setenv("GRAFT_EVAL_KEY", base64.b64encode(key).decode())
    cs = _set(tmp_path, key)
    cases = [make_pilot_case(SET_ID, pr_number=n) for n in (1, 2)]
    for case in cases:
        write_case(cs, case)
    write_private(cs, ASSET, "{}")
    (cs.dir / JOURNAL_FILE).unlink()
    _fresh_process_view()
    with pytest.raises(EvalCryptoError, match=rf"^set {SET_ID} has no {JOURNAL_FILE} .*sets journal"):
        open_set(cs.dir, key)

    capsys.readouterr()
    assert main(["sets", "journal", "--set", str(cs.dir)]) == 0
    assert "3 sealed file(s)" in capsys.readouterr().out
    reopened = open_set(cs.dir, key)
    assert [c.id for c in read_cases(reopened)] == [c.id for c in cases]
    older = (cs.dir / f"cases/{cases[0].id}.case.enc").read_bytes()
    write_case(reopened, cases[0].model_copy(update={"tags": ["x"]}))
    (cs.dir / f"cases/{cases[0].id}.case.enc").write_bytes(older)
    with pytest.raises(EvalError, match="not the version"):
        read_case(reopened, cases[0].id)


def test_accepting_the_set_as_it_is_forgets_a_case_deleted_on_purpose(tmp_path: Path, key: bytes) -> None:
    cs = _set(tmp_path, key)
    cases = [make_pilot_case(SET_ID, pr_number=n) for n in (1, 2)]
    for case in cases:
        write_case(cs, case)
    (cs.dir / f"cases/{cases[0].id}.case.enc").unlink()
    with pytest.raises(EvalError, match="deleted outside graft-eval"):
        read_cases(cs)
    assert main(["sets", "journal", "--set", str(cs.dir)]) == 2  # no key: refused, nothing written
    from graft_eval_pipeline.evalset.sets.store import accept_current_state

    assert accept_current_state(cs.dir, key) == 1
    assert [c.id for c in read_cases(open_set(cs.dir, key))] == [cases[1].id]


def test_the_synthetic_set_keeps_no_journal(tmp_path: Path) -> None:
    cs = make_synthetic_set(tmp_path / "syn")
    write_private(cs, ASSET, "{}")
    assert not (cs.dir / JOURNAL_FILE).exists()
    assert main(["sets", "journal", "--set", str(cs.dir)]) == 2
