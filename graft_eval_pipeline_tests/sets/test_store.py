"""Case-set store (spec E4-E9, T3): U-STORE-1..8 plus private files and set-dir resolution."""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
from pathlib import Path
from typing import Any

import pytest

from graft_eval_pipeline.evalset.sets import store
from graft_eval_pipeline.evalset.sets.crypto import generate_key, parse_key
from graft_eval_pipeline.evalset.sets.errors import EvalCryptoError, EvalError, EvalLocationError
from graft_eval_pipeline.evalset.sets.purge import PURGE_STAMP_FORMAT, purge_set
from graft_eval_pipeline.evalset.sets.store import (
    CaseSet,
    assert_private_location,
    atomic_write,
    create_set,
    list_case_ids,
    open_set,
    read_case,
    read_cases,
    read_private,
    resolve_set_dir,
    write_case,
    write_private,
    write_report_file,
)
from graft_eval_pipeline_tests.builders import (
    FIXED_TIME,
    make_case,
    make_pilot_case,
    make_pilot_set,
    make_synthetic_set,
)


def _pilot(dir: Path, key: bytes, set_id: str = "pilot-acme") -> CaseSet:
    return make_pilot_set(
        dir, set_id=set_id, key=key, globs=["services/billing/**"], consent_ref="Acme agreement §4"
    )


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def key() -> bytes:
    return parse_key(generate_key())


def test_U_STORE_1_pilot_inside_git_tree_refused(tmp_path: Path, key: bytes) -> None:
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    with pytest.raises(EvalLocationError, match="inside a git working tree"):
        _pilot(tmp_path / "repo" / "deep" / "er" / "pilot-acme", key)
    assert not (tmp_path / "repo" / "deep").exists()


def test_U_STORE_1_git_file_and_symlinked_path_refused(tmp_path: Path, key: bytes) -> None:
    worktree = tmp_path / "worktree"
    worktree.mkdir()
    (worktree / ".git").write_text("gitdir: /elsewhere/.git/worktrees/x\n")
    with pytest.raises(EvalLocationError):
        assert_private_location(worktree / "pilot-acme")
    link = tmp_path / "outside-looking"
    link.symlink_to(worktree)
    with pytest.raises(EvalLocationError):
        _pilot(link / "pilot-acme", key)


def test_U_STORE_1_outside_ok_with_private_modes(tmp_path: Path, key: bytes) -> None:
    root = tmp_path / "eval-root"
    cs = _pilot(root / "pilot-acme", key)
    case = make_pilot_case()
    write_case(cs, case)
    write_private(cs, "cache/ab/entry.json", "{}")
    for folder in (root, cs.dir, cs.dir / "cases", cs.dir / "cache", cs.dir / "cache" / "ab"):
        assert _mode(folder) == 0o700, folder
    for file in (cs.dir / "set.json", cs.dir / "cases" / f"{case.id}.case.enc"):
        assert _mode(file) == 0o600, file
    assert _mode(cs.dir / "cache" / "ab" / "entry.json.enc") == 0o600
    meta = json.loads((cs.dir / "set.json").read_text())
    assert meta["setId"] == "pilot-acme" and meta["encrypted"] is True
    assert meta["keyId"] == cs.meta.key_id and meta["consentRef"] == "Acme agreement §4"
    assert meta["defaultFloorConfig"] == {"extraSensitiveGlobs": ["services/billing/**"]}


def test_U_STORE_1_existing_empty_folder_tightened_to_0700(tmp_path: Path, key: bytes) -> None:
    folder = tmp_path / "pilot-acme"
    folder.mkdir(mode=0o755)
    os.chmod(folder, 0o755)
    assert _mode(_pilot(folder, key).dir) == 0o700


def test_U_STORE_2_pilot_needs_consent_ref(tmp_path: Path, key: bytes) -> None:
    for consent in (None, "", "   "):
        with pytest.raises(EvalError, match="consent-ref"):
            create_set(
                tmp_path / "pilot-acme",
                set_id="pilot-acme",
                kind="pilot",
                description="",
                consent_ref=consent,
                default_floor_config=None,
                key=key,
                now=FIXED_TIME,
            )
    assert not (tmp_path / "pilot-acme").exists()


def test_create_set_refuses_existing_or_non_empty_folder_and_reserved_id(tmp_path: Path, key: bytes) -> None:
    _pilot(tmp_path / "pilot-acme", key)
    with pytest.raises(EvalError, match="already holds a case set"):
        _pilot(tmp_path / "pilot-acme", key)
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "notes.txt").write_text("x")
    with pytest.raises(EvalError, match="not empty"):
        _pilot(tmp_path / "busy", key)
    with pytest.raises(EvalError, match="reserved"):
        _pilot(tmp_path / "other", key, set_id="synthetic")


def test_U_STORE_3_write_case_file_kinds(tmp_path: Path, key: bytes) -> None:
    pilot = _pilot(tmp_path / "pilot-acme", key)
    case = make_pilot_case()
    write_case(pilot, case)
    assert sorted(p.name for p in (pilot.dir / "cases").iterdir()) == [f"{case.id}.case.enc"]
    assert json.loads((pilot.dir / "cases" / f"{case.id}.case.enc").read_text())["graftEval"] == "enc-v1"
    assert read_case(pilot, case.id) == case

    synthetic = make_synthetic_set(tmp_path / "synthetic")
    syn = make_case("syn-901-store")
    write_case(synthetic, syn)
    assert sorted(p.name for p in (synthetic.dir / "cases").iterdir()) == ["syn-901-store.case.json"]
    assert json.loads((synthetic.dir / "cases" / "syn-901-store.case.json").read_text())["id"] == syn.id
    assert read_case(synthetic, syn.id) == syn


def test_U_STORE_3_cases_must_match_the_set_kind(tmp_path: Path, key: bytes) -> None:
    pilot = _pilot(tmp_path / "pilot-acme", key)
    synthetic = make_synthetic_set(tmp_path / "synthetic")
    with pytest.raises(EvalError, match="does not belong"):
        write_case(pilot, make_case("syn-902-misplaced"))
    with pytest.raises(EvalError, match="does not belong"):
        write_case(synthetic, make_pilot_case())
    with pytest.raises(EvalError, match="does not belong"):
        write_case(pilot, make_pilot_case(set_id="pilot-other"))
    assert list_case_ids(pilot) == [] and list_case_ids(synthetic) == []


def test_U_STORE_4_read_refuses_the_other_file_kind(tmp_path: Path, key: bytes) -> None:
    pilot = _pilot(tmp_path / "pilot-acme", key)
    case = make_pilot_case()
    write_case(pilot, case)
    planted = pilot.dir / "cases" / f"{case.id}.case.json"
    planted.write_text(json.dumps(case.to_json_dict()))
    with pytest.raises(EvalError, match="plaintext case file"):
        read_case(pilot, case.id)
    planted.unlink()
    lone = make_pilot_case(pr_number=500)
    (pilot.dir / "cases" / f"{lone.id}.case.json").write_text(json.dumps(lone.to_json_dict()))
    assert list_case_ids(pilot) == sorted([case.id, lone.id])
    with pytest.raises(EvalError, match="plaintext case file"):
        read_case(pilot, lone.id)

    synthetic = make_synthetic_set(tmp_path / "synthetic")
    (synthetic.dir / "cases" / "syn-903-sealed.case.enc").write_text("{}")
    with pytest.raises(EvalError, match="sealed case file"):
        read_case(synthetic, "syn-903-sealed")


def test_read_case_checks_the_id_against_the_file_name(tmp_path: Path) -> None:
    synthetic = make_synthetic_set(tmp_path / "synthetic")
    write_case(synthetic, make_case("syn-904-original"))
    cases = synthetic.dir / "cases"
    (cases / "syn-904-original.case.json").rename(cases / "syn-905-renamed.case.json")
    with pytest.raises(EvalError, match="does not match the file name"):
        read_case(synthetic, "syn-905-renamed")
    with pytest.raises(EvalError, match="bad case id"):
        read_case(synthetic, "../set")
    with pytest.raises(EvalError, match="is not in set"):
        read_case(synthetic, "syn-999-missing")


def test_U_STORE_5_wrong_key_refused_before_any_decryption(
    tmp_path: Path, key: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    cs = _pilot(tmp_path / "pilot-acme", key)
    write_case(cs, make_pilot_case())

    def no_decrypt(*_: object) -> str:
        raise AssertionError("decrypted with a wrong key")

    monkeypatch.setattr(store, "open_envelope", no_decrypt)
    with pytest.raises(EvalCryptoError, match=r"^wrong GRAFT_EVAL_KEY for set pilot-acme"):
        open_set(cs.dir, parse_key(generate_key()))
    with pytest.raises(EvalError, match=r"^GRAFT_EVAL_KEY is not set"):
        open_set(cs.dir, None)


def test_U_STORE_6_case_file_moved_between_sets_fails(tmp_path: Path, key: bytes) -> None:
    set_a = _pilot(tmp_path / "pilot-acme", key)
    set_b = _pilot(tmp_path / "pilot-beta", key, set_id="pilot-beta")
    case = make_pilot_case()
    write_case(set_a, case)
    name = f"{case.id}.case.enc"
    shutil.copy(set_a.dir / "cases" / name, set_b.dir / "cases" / name)
    with pytest.raises(EvalCryptoError, match="moved from another set"):
        read_case(open_set(set_b.dir, key), case.id)
    other = make_pilot_case(pr_number=413)
    shutil.copy(set_a.dir / "cases" / name, set_a.dir / "cases" / f"{other.id}.case.enc")
    with pytest.raises(EvalCryptoError):
        read_case(set_a, other.id)
    assert read_case(open_set(set_a.dir, key), case.id) == case


def test_U_STORE_7_failed_rename_keeps_old_file_and_leaves_no_temp(tmp_path: Path) -> None:
    target = tmp_path / "entry.json"
    atomic_write(target, "old")

    def broken_rename(src: str, dst: str) -> None:
        raise OSError(28, "No space left on device")

    with pytest.raises(EvalError, match="could not write"):
        atomic_write(target, "new", _rename=broken_rename)
    assert target.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["entry.json"]
    atomic_write(target, b"new")
    assert target.read_text() == "new" and _mode(target) == 0o600


def test_U_STORE_8_purge(tmp_path: Path, key: bytes) -> None:
    root = tmp_path / "eval-root"
    cs = _pilot(root / "pilot-acme", key)
    for number in (1, 2, 3):
        write_case(cs, make_pilot_case(pr_number=number))
    with pytest.raises(EvalError, match="nothing was deleted"):
        purge_set(cs.dir, confirm="pilot-acm", by="alice", now=FIXED_TIME, eval_root=root)
    assert len(list_case_ids(cs)) == 3

    synthetic = make_synthetic_set(tmp_path / "synthetic")
    with pytest.raises(EvalError, match="only deletes pilot sets"):
        purge_set(synthetic.dir, confirm="synthetic", by="alice", now=FIXED_TIME, eval_root=root)
    assert (synthetic.dir / "set.json").exists()

    (tmp_path / "plain").mkdir()
    with pytest.raises(EvalError, match="not a case set"):
        purge_set(tmp_path / "plain", confirm="plain", by="alice", now=FIXED_TIME, eval_root=root)
    assert (tmp_path / "plain").exists()

    result = purge_set(cs.dir, confirm="pilot-acme", by="alice", now=FIXED_TIME, eval_root=root)
    assert (result.set_id, result.case_count, result.finished) == ("pilot-acme", 3, [])
    assert not cs.dir.exists()
    assert [p.name for p in root.iterdir()] == ["purge-log.jsonl"]  # no tombstone left
    log = (root / "purge-log.jsonl").read_text().splitlines()
    assert [json.loads(line) for line in log] == [
        {"setId": "pilot-acme", "purgedAt": FIXED_TIME.isoformat(), "caseCount": 3, "by": "alice"}
    ]
    assert str(tmp_path) not in log[0] and "cases" not in log[0]
    assert _mode(root / "purge-log.jsonl") == 0o600


def _log_lines(root: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (root / "purge-log.jsonl").read_text().splitlines()]


def test_purge_stopped_while_deleting_leaves_no_set_and_one_log_line_then_finishes(
    tmp_path: Path, key: bytes
) -> None:
    root = tmp_path / "eval-root"
    cs = _pilot(root / "pilot-acme", key)
    for number in (1, 2):
        write_case(cs, make_pilot_case(pr_number=number))
    write_private(cs, "cache/k1.json", "{}")

    def failing_rmtree(path: Path) -> None:
        (path / "set.json").unlink()  # the worst order: the set file goes first ...
        raise OSError(5, "Input/output error")  # ... then the disk gives up

    with pytest.raises(EvalError, match=r"purge is logged but .*\.pilot-acme\.purging-.* run the same purge"):
        purge_set(
            cs.dir, confirm="pilot-acme", by="alice", now=FIXED_TIME, eval_root=root, _rmtree=failing_rmtree
        )
    assert not cs.dir.exists()
    assert _log_lines(root) == [
        {"setId": "pilot-acme", "purgedAt": FIXED_TIME.isoformat(), "caseCount": 2, "by": "alice"}
    ]
    (tombstone,) = [p for p in root.iterdir() if p.name != "purge-log.jsonl"]
    assert tombstone.name.startswith(".pilot-acme.purging-")
    assert store.discover_set_ids(root, tmp_path / "no-synthetic") == []

    # the same purge again finishes the job, without a second log line
    again = purge_set(cs.dir, confirm="pilot-acme", by="alice", now=FIXED_TIME, eval_root=root)
    assert (again.set_id, again.case_count, again.finished) == ("pilot-acme", None, [tombstone.name])
    assert [p.name for p in root.iterdir()] == ["purge-log.jsonl"] and len(_log_lines(root)) == 1
    with pytest.raises(EvalError, match="not a case set"):
        purge_set(cs.dir, confirm="pilot-acme", by="alice", now=FIXED_TIME, eval_root=root)


def test_purge_of_another_set_finishes_a_leftover_and_logs_it_if_the_stop_came_before_the_log(
    tmp_path: Path, key: bytes
) -> None:
    root = tmp_path / "eval-root"
    first = _pilot(root / "pilot-acme", key)
    write_case(first, make_pilot_case(pr_number=1))
    second = _pilot(root / "pilot-beta", key, set_id="pilot-beta")
    # a purge killed right after its rename: whole tombstone, no log line yet
    stamp = FIXED_TIME.strftime(PURGE_STAMP_FORMAT)
    os.rename(first.dir, root / f".pilot-acme.purging-{stamp}")
    result = purge_set(second.dir, confirm="pilot-beta", by="bob", now=FIXED_TIME, eval_root=root)
    assert result.finished == [f".pilot-acme.purging-{stamp}"] and result.case_count == 0
    assert [p.name for p in root.iterdir()] == ["purge-log.jsonl"]
    assert [(e["setId"], e["caseCount"], e["purgedAt"]) for e in _log_lines(root)] == [
        ("pilot-acme", 1, FIXED_TIME.isoformat()),
        ("pilot-beta", 0, FIXED_TIME.isoformat()),
    ]


def test_purge_maps_os_errors_to_eval_errors_naming_the_folder(
    tmp_path: Path, key: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "eval-root"
    cs = _pilot(root / "pilot-acme", key)

    def no_rename(src: object, dst: object) -> None:
        raise OSError(16, "Device or resource busy")

    monkeypatch.setattr(os, "rename", no_rename)
    with pytest.raises(
        EvalError, match=re.escape(f"could not purge {cs.dir}: Device or resource busy; nothing was deleted")
    ):
        purge_set(cs.dir, confirm="pilot-acme", by="alice", now=FIXED_TIME, eval_root=root)
    monkeypatch.undo()
    assert (cs.dir / "set.json").is_file() and not (root / "purge-log.jsonl").exists()

    # the log cannot be written: the rename is undone, nothing is lost
    (tmp_path / "log-is-a-file").write_text("")
    with pytest.raises(EvalError, match=r"could not write the purge log .* nothing was deleted"):
        purge_set(
            cs.dir, confirm="pilot-acme", by="alice", now=FIXED_TIME, eval_root=tmp_path / "log-is-a-file"
        )
    assert (cs.dir / "set.json").is_file()
    assert not [p for p in root.iterdir() if ".purging-" in p.name]


def test_private_files_sealed_in_pilot_plain_in_synthetic(tmp_path: Path, key: bytes) -> None:
    pilot = _pilot(tmp_path / "pilot-acme", key)
    assert read_private(pilot, "cache/k1.json") is None
    write_private(pilot, "cache/k1.json", '{"goal": "Rotate the ledger"}')
    assert not (pilot.dir / "cache" / "k1.json").exists()
    assert "ledger" not in (pilot.dir / "cache" / "k1.json.enc").read_text()
    assert read_private(pilot, "cache/k1.json") == '{"goal": "Rotate the ledger"}'
    shutil.copy(pilot.dir / "cache" / "k1.json.enc", pilot.dir / "cache" / "k2.json.enc")
    with pytest.raises(EvalCryptoError):
        read_private(pilot, "cache/k2.json")

    synthetic = make_synthetic_set(tmp_path / "synthetic")
    write_private(synthetic, "assets/x.json", "[1]")
    assert (synthetic.dir / "assets" / "x.json").read_text() == "[1]"
    assert read_private(synthetic, "assets/x.json") == "[1]"
    for bad in ("../escape.json", "/abs.json", "set.json", ""):
        with pytest.raises(EvalError, match="bad path"):
            write_private(synthetic, bad, "x")


def test_reports_plaintext_and_atomic(tmp_path: Path, key: bytes) -> None:
    pilot = _pilot(tmp_path / "pilot-acme", key)
    path = write_report_file(pilot, "runs/r1/report.md", "# report\n")
    assert path == pilot.dir / "runs" / "r1" / "report.md"
    assert path.read_text() == "# report\n" and _mode(path) == 0o600
    assert write_report_file(tmp_path / "elsewhere", "report.json", "{}").read_text() == "{}"


def test_read_cases_sorted(tmp_path: Path, key: bytes) -> None:
    cs = _pilot(tmp_path / "pilot-acme", key)
    for number in (30, 4, 200):
        write_case(cs, make_pilot_case(pr_number=number))
    assert [c.id for c in read_cases(open_set(cs.dir, key))] == sorted(
        f"pilot-acme--shop-demo-{n}" for n in (30, 4, 200)
    )
    assert "key" not in repr(cs).replace("key_id", "")


def test_resolve_set_dir(tmp_path: Path) -> None:
    synthetic_dir, eval_dir = tmp_path / "repo" / "eval" / "synthetic", tmp_path / "eval"
    assert resolve_set_dir("synthetic", eval_dir, synthetic_dir) == synthetic_dir
    assert resolve_set_dir("pilot-acme", eval_dir, synthetic_dir) == eval_dir / "pilot-acme"
    for bad in ("../x", "Pilot", "a/b", ""):
        with pytest.raises(EvalError, match="bad set id"):
            resolve_set_dir(bad, eval_dir, synthetic_dir)


def test_open_set_without_set_json(tmp_path: Path) -> None:
    with pytest.raises(EvalError, match="not a case set"):
        open_set(tmp_path, None)
    (tmp_path / "set.json").write_text("{}")
    os.chmod(tmp_path / "set.json", 0o600)
    with pytest.raises(EvalError, match=r"set\.json"):
        open_set(tmp_path, None)
