"""The history index: each earlier report is parsed once, and nothing it holds is trusted over the file.

`cache/history-index.json` keeps what the history read of each report, by the report file's size,
modification time and inode; a changed report, a damaged index or an entry of another shape is read
from the report itself.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest

from graft_eval_pipeline.cli import main
from graft_eval_pipeline.evalset.report import history
from graft_eval_pipeline.evalset.report.history import HistoryPoint, RunHistory, read_points
from graft_eval_pipeline.evalset.report.runs import run_dirs
from graft_eval_pipeline.evalset.sets import HISTORY_INDEX, CaseSet, load_json, open_set
from graft_eval_pipeline.evalset.sets.crypto import parse_key
from graft_eval_pipeline_tests.report.test_html_report import run_secret_pilot, synthetic_with_history


def _parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The report files the history parses from now on."""
    parsed: list[str] = []

    def counted(data: bytes | str, where: str) -> object:
        parsed.append(where)
        return load_json(data, where)

    monkeypatch.setattr(history, "load_json", counted)
    return parsed


def _fresh(runs: list[Path]) -> list[HistoryPoint]:
    """The points as read from the reports alone."""
    return [history.read_point(run) for run in runs]


@pytest.fixture
def runs(tmp_path: Path) -> list[Path]:
    synthetic, _ = synthetic_with_history(tmp_path)
    (synthetic / HISTORY_INDEX).unlink(missing_ok=True)
    return run_dirs(synthetic)


def _set(runs: list[Path]) -> CaseSet:
    return open_set(runs[0].parent.parent, None)


def _read(runs: list[Path]) -> RunHistory:
    return read_points(_set(runs), runs)


def _index(runs: list[Path]) -> Path:
    return runs[0].parent.parent / HISTORY_INDEX


def test_each_report_is_parsed_once(runs: list[Path], monkeypatch: pytest.MonkeyPatch) -> None:
    parsed = _parses(monkeypatch)
    first = _read(runs)
    assert len(parsed) == 3 and _index(runs).is_file()
    again = _read(runs)
    assert len(parsed) == 3  # every point from the index
    assert again == first and first.points == _fresh(runs)


def test_a_report_that_changed_is_parsed_again(runs: list[Path], monkeypatch: pytest.MonkeyPatch) -> None:
    _read(runs)
    report = runs[1] / "report.json"
    data = json.loads(report.read_text())
    data["metrics"]["underClassificationFinal"]["value"] = 0.5
    report.write_text(json.dumps(data))
    parsed = _parses(monkeypatch)
    read = _read(runs)
    assert parsed == [f"runs/{runs[1].name}/report.json"]
    assert read.points[1].rates["underClassificationFinal"] == 0.5
    assert read.points == _fresh(runs)


@pytest.mark.parametrize("damage", [b"", b"{", b"[]", b'{"entries": 1}', b"\xff\xfe", b"[" * 10_000])
def test_a_damaged_index_is_read_past_and_written_again(
    runs: list[Path], monkeypatch: pytest.MonkeyPatch, damage: bytes
) -> None:
    expected = _read(runs)
    index = _index(runs)
    index.write_bytes(damage)
    parsed = _parses(monkeypatch)
    assert _read(runs) == expected and len(parsed) == 3
    assert _read(runs) == expected and len(parsed) == 3  # the index is good again


def test_an_entry_of_another_shape_is_read_from_the_report(
    runs: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    expected = _read(runs)
    index = _index(runs)
    data = json.loads(index.read_text())
    data["entries"][runs[0].name]["fields"] = {"metrics": 5, "runId": "someone-else"}
    index.write_text(json.dumps(data))
    parsed = _parses(monkeypatch)
    assert _read(runs) == expected
    assert parsed == [f"runs/{runs[0].name}/report.json"]


def test_a_damaged_report_is_still_left_out_with_its_warning(runs: list[Path]) -> None:
    _read(runs)
    (runs[0] / "report.json").write_bytes(b"\xff not json")
    read = _read(runs)
    assert len(read.points) == 2 and len(read.skipped) == 1
    assert read.skipped[0].startswith(f"runs/{runs[0].name}/report.json")


def test_readers_beside_a_rewritten_report_never_keep_a_stale_point(runs: list[Path]) -> None:
    # Several renders at once (runs of one set finishing together) while a report is rewritten:
    # once the writes end, every point is the report's as it is.
    report = runs[2] / "report.json"
    original = json.loads(report.read_text())
    done = threading.Event()

    def rewrite() -> None:
        for n in range(20):
            original["metrics"]["underClassificationFinal"]["value"] = n / 100
            report.write_text(json.dumps(original))
        done.set()

    def render() -> None:
        while not done.is_set():
            _read(runs)

    threads = [threading.Thread(target=rewrite), *(threading.Thread(target=render) for _ in range(2))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    read = _read(runs)
    assert read.points == _fresh(runs)
    assert read.points[2].rates["underClassificationFinal"] == 0.19


def test_a_pilot_sets_index_is_sealed_like_its_other_caches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    set_dir, _ = run_secret_pilot(tmp_path, monkeypatch)
    assert main(["run", "--set", str(set_dir)]) == 0  # its report.html reads the first run's
    sealed = set_dir / f"{HISTORY_INDEX}.enc"
    assert sealed.is_file() and not (set_dir / HISTORY_INDEX).exists()
    runs = run_dirs(set_dir)
    cs = open_set(set_dir, parse_key(os.environ["GRAFT_EVAL_KEY"]))
    parsed = _parses(monkeypatch)
    points = read_points(cs, runs[:1]).points
    assert parsed == []  # read from the index
    assert points == _fresh(runs[:1])


def test_a_run_published_again_is_not_its_own_history(runs: list[Path]) -> None:
    """A retried report step writes the same run again: its page counts that run once."""
    from graft_eval_pipeline.evalset.report import load_report, load_thresholds, publish_run
    from graft_eval_pipeline.evalset.report.files import HTML_FILE, REPORT_FILE
    from graft_eval_pipeline.evalset.sets.paths import THRESHOLDS_FILE

    cs = _set(runs)
    report = load_report(runs[-1] / REPORT_FILE)
    published = publish_run(cs, report, thresholds=load_thresholds(THRESHOLDS_FILE), strict=False)
    assert published.out_dir == runs[-1]
    assert f"The last {len(runs)} run(s) of set" in (runs[-1] / HTML_FILE).read_text()
