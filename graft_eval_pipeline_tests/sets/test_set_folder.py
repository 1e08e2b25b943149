"""The set folder is what it claims to be (issue 10 §3).

Links, output paths, modes, stray temp files, label writes stopped part way, truthful purge
messages, and the purge log.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from graft_eval_pipeline.cli import main
from graft_eval_pipeline.evalset.labeling import inbox as label_inbox
from graft_eval_pipeline.evalset.sets.crypto import generate_key, parse_key
from graft_eval_pipeline.evalset.sets.errors import EvalError
from graft_eval_pipeline.evalset.sets.purge import PURGE_STAMP_FORMAT, purge_set
from graft_eval_pipeline.evalset.sets.store import (
    CaseSet,
    list_case_ids,
    open_set,
    read_case,
    write_case,
    write_private,
)
from graft_eval_pipeline_tests.builders import (
    FIXED_TIME,
    copy_synthetic,
    make_case,
    make_label,
    make_pilot_case,
    make_pilot_set,
    make_synthetic_set,
)

SET_ID = "pilot-demo"


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    values = {"GRAFT_EVAL_DIR": str(tmp_path / "eval-root"), "GRAFT_EVAL_KEY": generate_key()}
    for name, value in values.items():
        monkeypatch.setenv(name, value)
    for name in ("ANTHROPIC_API_KEY", "GRAFT_LLM_MODEL_FAST", "GRAFT_LLM_MODEL_STRONG"):
        monkeypatch.delenv(name, raising=False)
    return values


def _pilot(tmp_path: Path, env: dict[str, str], cases: int = 3) -> CaseSet:
    cs = make_pilot_set(tmp_path / "eval-root" / SET_ID, key=parse_key(env["GRAFT_EVAL_KEY"]))
    for number in range(1, cases + 1):
        write_case(cs, make_pilot_case(SET_ID, number, labels=[make_label(risk="trivial")]))
    return cs


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _one_error_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1, err
    return err


# --- links ---------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["cases", "cache", "assets", "runs", "exports", "labels-inbox"])
def test_a_linked_folder_of_a_pilot_set_is_refused_and_nothing_is_written_through_it(
    tmp_path: Path, env: dict[str, str], capsys: pytest.CaptureFixture[str], name: str
) -> None:
    cs = _pilot(tmp_path, env)
    elsewhere = tmp_path / "a-git-checkout" / name
    if name == "cases":
        shutil.move(cs.dir / "cases", elsewhere.parent / "cases")
    else:
        elsewhere.mkdir(parents=True)
    (cs.dir / name).symlink_to(elsewhere, target_is_directory=True)
    before = _files(elsewhere)
    capsys.readouterr()

    for argv in (["validate"], ["run"], ["show", "--case", f"{SET_ID}--shop-demo-1"], ["summary"]):
        assert main([argv[0], "--set", str(cs.dir), *argv[1:]]) == 2, argv
        err = _one_error_line(capsys)
        assert f"set {SET_ID} holds a symbolic link at {name} (pointing outside the set)" in err, err
    assert _files(elsewhere) == before
    with pytest.raises(EvalError, match=f"symbolic link at {name} "):
        open_set(cs.dir, cs.key)


def test_a_linked_file_or_a_fifo_inside_a_pilot_set_is_refused(tmp_path: Path, env: dict[str, str]) -> None:
    cs = _pilot(tmp_path, env, cases=1)
    outside = tmp_path / "outside.json.enc"
    outside.write_text("{}")
    (cs.dir / "cache").mkdir()
    (cs.dir / "cache" / "k1.json.enc").symlink_to(outside)
    with pytest.raises(EvalError, match=r"symbolic link at cache/k1\.json\.enc \(pointing outside"):
        open_set(cs.dir, cs.key)
    (cs.dir / "cache" / "k1.json.enc").unlink()
    (cs.dir / "cache" / "\x1b[2J\nk2").symlink_to(cs.dir / "set.json")  # inside, with an escape
    with pytest.raises(EvalError, match=r"at cache/\[U\+001B\]\[2J\[U\+000A\]k2 \(pointing inside") as caught:
        open_set(cs.dir, cs.key)
    assert "\x1b" not in str(caught.value) and "\n" not in str(caught.value)
    (cs.dir / "cache" / "\x1b[2J\nk2").unlink()
    os.mkfifo(cs.dir / "cases" / f"{SET_ID}--shop-demo-9.case.enc")
    with pytest.raises(EvalError, match=rf"holds cases/{SET_ID}--shop-demo-9\.case\.enc, which is not a"):
        open_set(cs.dir, cs.key)


def test_purge_refuses_a_set_holding_a_link_and_says_truthfully_what_it_deleted(
    tmp_path: Path, env: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    cs = _pilot(tmp_path, env)
    root = tmp_path / "eval-root"
    elsewhere = tmp_path / "elsewhere"
    shutil.move(cs.dir / "cases", elsewhere)
    (cs.dir / "cases").symlink_to(elsewhere, target_is_directory=True)
    sealed = _files(elsewhere)
    assert len(sealed) == 3
    capsys.readouterr()

    assert main(["purge", "--set", str(cs.dir), "--confirm", SET_ID]) == 2
    err = _one_error_line(capsys)
    assert "cannot purge: set pilot-demo holds a symbolic link at cases" in err
    assert err.rstrip().endswith("nothing was deleted")
    assert _files(elsewhere) == sealed and (cs.dir / "set.json").is_file()
    assert not (root / "purge-log.jsonl").exists()

    (cs.dir / "cases").unlink()
    shutil.move(elsewhere, cs.dir / "cases")
    assert main(["purge", "--set", str(cs.dir), "--confirm", SET_ID]) == 0
    out = capsys.readouterr().out
    assert "purged set pilot-demo: 3 cases deleted and nothing of its folder is left" in out
    assert [p.name for p in root.iterdir()] == ["purge-log.jsonl"]


def test_purge_counts_only_what_it_deletes_and_checks_that_nothing_is_left(
    tmp_path: Path, env: dict[str, str]
) -> None:
    root = tmp_path / "eval-root"
    cs = _pilot(tmp_path, env, cases=2)

    # a tombstone left by a purge stopped before its log line, holding a link to files elsewhere:
    # finishing it removes the link only, and logs the cases it really held
    old = make_pilot_set(root / "pilot-old", key=cs.key)
    elsewhere = tmp_path / "elsewhere"
    shutil.copytree(cs.dir / "cases", elsewhere)
    shutil.rmtree(old.dir / "cases")
    (old.dir / "cases").symlink_to(elsewhere, target_is_directory=True)
    stamp = FIXED_TIME.strftime(PURGE_STAMP_FORMAT)
    os.rename(old.dir, root / f".pilot-old.purging-{stamp}")

    def leaves_a_file(path: Path) -> None:  # "succeeds" but a file is still there
        for entry in sorted(Path(path).rglob("*"), reverse=True):
            if entry.name != "set.json":
                entry.unlink() if entry.is_file() or entry.is_symlink() else entry.rmdir()

    with pytest.raises(EvalError, match=r"the purge is logged but .*\.pilot-old\.purging-.* is still there"):
        purge_set(cs.dir, confirm=SET_ID, by="alice", now=FIXED_TIME, eval_root=root, _rmtree=leaves_a_file)
    assert len(_files(elsewhere)) == 2  # never deleted outside the set
    log = [json.loads(line) for line in (root / "purge-log.jsonl").read_text().splitlines()]
    assert [(e["setId"], e["caseCount"]) for e in log] == [("pilot-old", 0)]

    result = purge_set(cs.dir, confirm=SET_ID, by="alice", now=FIXED_TIME, eval_root=root)
    assert result.case_count == 2 and not cs.dir.exists()
    # a job still holding the opened set cannot bring the folder back
    with pytest.raises(EvalError, match=r"set pilot-demo is no longer in .* nothing was written"):
        write_case(cs, make_pilot_case(SET_ID, 9))
    with pytest.raises(EvalError, match="no longer in"):
        write_private(cs, "assets/x.json", "{}")
    assert not cs.dir.exists()


# --- --save-baseline and --out -------------------------------------------------------------


def test_save_baseline_and_out_refuse_the_store_only_parts_of_a_set(
    tmp_path: Path, env: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    cs = _pilot(tmp_path, env, cases=2)
    case_file = cs.dir / "cases" / f"{SET_ID}--shop-demo-1.case.enc"
    (tmp_path / "shortcut").symlink_to(cs.dir / "cases", target_is_directory=True)
    before = _files(cs.dir)
    capsys.readouterr()
    refused = [
        ("--save-baseline", case_file, f"cases/{case_file.name}"),
        ("--save-baseline", tmp_path / "shortcut" / "new.json", "cases/new.json"),
        ("--save-baseline", cs.dir / "set.json", "set.json"),
        ("--save-baseline", cs.dir / "journal.enc", "journal.enc"),
        ("--save-baseline", cs.dir / "labels-inbox" / "alice.json", "labels-inbox/alice.json"),
        ("--out", cs.dir / "cases", "cases"),
        ("--out", cs.dir / "cache" / "r1", "cache/r1"),
        ("--out", cs.dir / "assets", "assets"),
        ("--out", cs.dir / "exports" / "r1", "exports/r1"),
    ]
    for flag, path, rel in refused:
        assert main(["run", "--set", str(cs.dir), flag, str(path)]) == 2, (flag, path)
        err = _one_error_line(capsys)
        assert f"refusing {flag} {path}: it is {rel} of the case set in " in err, err
    assert _files(cs.dir) == before  # refused before the run: no report, no runs/
    assert not (cs.dir / "runs").exists()

    assert main(["run", "--set", str(cs.dir), "--save-baseline", str(cs.dir / "baseline.json")]) == 0
    assert main(["run", "--set", str(cs.dir), "--out", str(cs.dir / "runs" / "mine")]) == 0
    assert (cs.dir / "baseline.json").is_file() and (cs.dir / "runs" / "mine" / "report.json").is_file()
    assert read_case(open_set(cs.dir, cs.key), f"{SET_ID}--shop-demo-1").id == f"{SET_ID}--shop-demo-1"

    synthetic = make_synthetic_set(tmp_path / "synthetic")
    write_case(synthetic, make_case("syn-901-a"))
    target = synthetic.dir / "cases" / "syn-901-a.case.json"
    committed = target.read_bytes()
    capsys.readouterr()
    assert main(["run", "--set", str(synthetic.dir), "--save-baseline", str(target)]) == 2
    assert "it is cases/syn-901-a.case.json of the case set" in _one_error_line(capsys)
    assert target.read_bytes() == committed


# --- modes ---------------------------------------------------------------------------------


def test_loose_modes_warn_naming_each_path_validate_reports_them_and_strict_refuses(
    tmp_path: Path, env: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    cs = _pilot(tmp_path, env, cases=1)
    case_rel = f"cases/{SET_ID}--shop-demo-1.case.enc"
    os.chmod(cs.dir / "cases", 0o755)
    os.chmod(cs.dir / case_rel, 0o644)
    capsys.readouterr()

    assert main(["validate", "--set", str(cs.dir)]) == 0
    captured = capsys.readouterr()
    assert captured.err == (
        f"warning: set {SET_ID}: 2 path(s) open to group or others (folders should be 0700, files 0600): "
        f"cases (0755), {case_rel} (0644); fix with `chmod -R go= {cs.dir}`\n"
    )
    assert "1 cases" in captured.out and "modes too open" in captured.out
    assert open_set(cs.dir, cs.key).warnings != ()

    for argv in (["validate"], ["show", "--case", f"{SET_ID}--shop-demo-1"], ["run"], ["agreement"]):
        assert main([argv[0], "--set", str(cs.dir), *argv[1:], "--strict"]) == 2, argv
        err = _one_error_line(capsys)
        assert "cases (0755)" in err and err.rstrip().endswith("(refused under --strict)"), err

    os.chmod(cs.dir / "cases", 0o700)
    os.chmod(cs.dir / case_rel, 0o600)
    assert main(["validate", "--set", str(cs.dir), "--strict"]) == 0
    captured = capsys.readouterr()
    assert captured.err == "" and "modes too open" not in captured.out


# --- stray temp files, label --apply stopped part way, purge messages ----------------------


def test_stale_temp_files_of_a_stopped_write_are_removed_on_open_and_never_read(
    tmp_path: Path, env: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    cs = _pilot(tmp_path, env, cases=1)
    sealed = (cs.dir / "cases" / f"{SET_ID}--shop-demo-1.case.enc").read_bytes()
    an_hour_ago = time.time() - 3600
    stale = [
        f"cases/.{SET_ID}--shop-demo-2.case.enc.k3j_x9q2.tmp",
        ".set.json.a1b2c3d4.tmp",
        "cache/.k1.json.enc.zz00yy11.tmp",
    ]
    young = f"cases/.{SET_ID}--shop-demo-3.case.enc.abcdefgh.tmp"  # a write still in flight
    for rel in [*stale, young]:
        path = cs.dir / rel
        path.parent.mkdir(mode=0o700, exist_ok=True)
        path.write_bytes(sealed)
        os.chmod(path, 0o600)
        if rel != young:
            os.utime(path, (an_hour_ago, an_hour_ago))

    opened = open_set(cs.dir, cs.key)
    assert [rel for rel in [*stale, young] if (cs.dir / rel).exists()] == [young]
    assert list_case_ids(opened) == [f"{SET_ID}--shop-demo-1"]
    capsys.readouterr()
    assert main(["validate", "--set", str(cs.dir)]) == 0
    assert "1 cases" in capsys.readouterr().out

    synthetic = make_synthetic_set(tmp_path / "synthetic")
    leftover = synthetic.dir / "cases" / ".syn-901-a.case.json.q1w2e3r4.tmp"
    leftover.write_text("{}")
    os.utime(leftover, (an_hour_ago, an_hour_ago))
    open_set(synthetic.dir, None)
    assert not leftover.exists()


def test_a_file_that_a_write_beside_the_open_renames_away_is_skipped_not_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A write in another process renames its temp file over the case between this open's listing
    # of cases/ and its look at the file: the walk (and the set scan's listing) skip it.
    from graft_eval_pipeline.evalset.labeling import set_scan
    from graft_eval_pipeline.evalset.sets import set_tree

    synthetic = copy_synthetic(tmp_path)
    cases = synthetic / "cases"
    in_flight = cases / ".syn-001-docs-typo.case.json.q1w2e3r4.tmp"
    real_scandir = os.scandir

    Listing = contextlib.nullcontext[Iterator[os.DirEntry[str]]]

    def listing_then_rename(path: str | os.PathLike[str]) -> Listing:
        if Path(path) != cases:
            return contextlib.nullcontext(real_scandir(path))
        in_flight.write_text("{}")
        entries = list(real_scandir(path))
        in_flight.unlink()  # renamed away before the walk looks at it
        return contextlib.nullcontext(iter(entries))

    with monkeypatch.context() as patch:
        patch.setattr(os, "scandir", listing_then_rename)
        tree = set_tree.scan_set_tree(synthetic, remove_stale_temps=False)
        opened = open_set(synthetic, None)
        set_scan._last = None
        counts = set_scan.scan_set(opened).counts
    assert tree.case_files == len(list_case_ids(opened)) == counts.cases == 30


def test_label_apply_stopped_part_way_says_how_far_it_got_and_a_rerun_finishes(
    tmp_path: Path, env: dict[str, str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    cs = _pilot(tmp_path, env)
    ids = list_case_ids(cs)
    labels = tmp_path / "labels.json"
    entry = {
        "risk": "logic",
        "outOfScope": [],
        "goal": "Adjusts a helper.",
        "keyBehaviorChanges": [],
        "shouldFlag": False,
        "confidence": "high",
        "notes": "",
    }
    labels.write_text(json.dumps({case_id: entry for case_id in ids}))
    real_write = write_case  # the store's writer, which the inbox module calls
    calls = []

    def disk_full_on_the_second(case_set: CaseSet, case: object) -> None:
        calls.append(case)
        if len(calls) == 2:
            raise EvalError("could not write cases/x: No space left on device; check free space")
        real_write(case_set, case)  # type: ignore[arg-type]

    monkeypatch.setattr(label_inbox, "write_case", disk_full_on_the_second)
    capsys.readouterr()
    assert main(["label", "--set", str(cs.dir), "--as", "carol", "--apply", str(labels)]) == 2
    err = _one_error_line(capsys)
    assert f"stopped at case {ids[1]} after writing 1 of 3 label set(s)" in err, err
    assert "run the same `label --apply` again to finish" in err
    assert [len([x for x in read_case(cs, i).labels if x.labeler == "carol"]) for i in ids] == [1, 0, 0]

    monkeypatch.setattr(label_inbox, "write_case", real_write)
    assert main(["label", "--set", str(cs.dir), "--as", "carol", "--apply", str(labels)]) == 0
    assert "wrote 3 label set(s) by carol" in capsys.readouterr().out
    assert [[x.labeler for x in read_case(cs, i).labels] for i in ids] == [["alice", "carol"]] * 3


def test_purge_says_finished_and_logged_for_a_leftover_it_logged_itself(
    tmp_path: Path, env: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "eval-root"
    cs = _pilot(tmp_path, env, cases=1)
    other = make_pilot_set(root / "pilot-other", key=cs.key)
    stamp = FIXED_TIME.strftime(PURGE_STAMP_FORMAT)
    os.rename(cs.dir, root / f".{SET_ID}.purging-{stamp}")  # stopped after the rename, before the log
    capsys.readouterr()
    assert main(["purge", "--set", str(other.dir), "--confirm", "pilot-other"]) == 0
    out = capsys.readouterr().out
    assert "finished and logged 1 interrupted purge(s)" in out and "already logged" not in out
    log = [json.loads(line) for line in (root / "purge-log.jsonl").read_text().splitlines()]
    assert [(e["setId"], e["caseCount"]) for e in log] == [(SET_ID, 1), ("pilot-other", 0)]


# --- the purge log -------------------------------------------------------------------------


def test_the_purge_log_is_never_written_through_a_link(
    tmp_path: Path, env: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "eval-root"
    cs = _pilot(tmp_path, env, cases=1)
    target = tmp_path / "a-git-checkout" / "notes.txt"
    target.parent.mkdir()
    target.write_text("not a purge log\n")
    (root / "purge-log.jsonl").symlink_to(target)
    capsys.readouterr()

    assert main(["purge", "--set", str(cs.dir), "--confirm", SET_ID]) == 2
    err = _one_error_line(capsys)
    assert "purge-log.jsonl is a symbolic link; replace it with a regular file; nothing was deleted" in err
    assert target.read_text() == "not a purge log\n" and (cs.dir / "set.json").is_file()

    # nor read through one when finishing a leftover tombstone, which then stays whole
    stamp = FIXED_TIME.strftime(PURGE_STAMP_FORMAT)
    os.rename(cs.dir, root / f".{SET_ID}.purging-{stamp}")
    assert main(["purge", "--set", str(cs.dir), "--confirm", SET_ID]) == 2
    assert "purge-log.jsonl is a symbolic link" in _one_error_line(capsys)
    assert (root / f".{SET_ID}.purging-{stamp}" / "set.json").is_file()
    assert target.read_text() == "not a purge log\n"
