"""The stratum of a sealed pilot case reaches reports only as opaque labels (issue 23, item 5).

Its `frame` (repository owner and name, dates, seed) and a `key` outside the export's fixed labels
never appear in report.json, report.md, report.html, cases.parquet or Dagster metadata; the labels
are stable from run to run and pool the same cases.
"""

from __future__ import annotations

import base64
import json
import os
from collections.abc import Iterator
from pathlib import Path

import dagster as dg
import pytest

from graft_eval_pipeline.cli import main
from graft_eval_pipeline.defs.resources import CaseSetsResource
from graft_eval_pipeline.evalset.report.runs import run_dirs
from graft_eval_pipeline.evalset.sets import CaseStratum, stratum_label
from graft_eval_pipeline.evalset.sets.crypto import generate_key, parse_key
from graft_eval_pipeline.evalset.sets.store import write_case
from graft_eval_pipeline_tests.builders import make_label, make_pilot_case, make_pilot_set, pilot_source
from graft_eval_pipeline_tests.conftest import InstanceWith
from graft_eval_pipeline_tests.defs.test_definitions import EVALUATION, resources

SET_ID = "pilot-acme"
FRAME = "secretowner/secretrepo merged 2026-06-01..2026-06-30 seed 1"
ODD_KEY = "hand-edited-LEAKKEY"


@pytest.fixture(autouse=True)
def _owner_only_umask() -> Iterator[None]:
    old = os.umask(0o077)
    yield
    os.umask(old)


def _set(tmp_path: Path, key: bytes) -> Path:
    cs = make_pilot_set(tmp_path / "eval-root" / SET_ID, key=key)
    strata = [("S/source", 40, 2), ("S/source", 40, 2), ("XL/sensitive", 5, 2), (ODD_KEY, 7, 1)]
    for number, (stratum_key, population, sampled) in enumerate(strata, start=400):
        stratum = CaseStratum(frame=FRAME, key=stratum_key, population=population, sampled=sampled)
        case = make_pilot_case(
            SET_ID,
            number,
            source=pilot_source(SET_ID, number, stratum=stratum),
            labels=[make_label(risk="logic")],
        )
        write_case(cs, case)
    return cs.dir


def _published_text(run_dir: Path) -> str:
    return "\n".join(p.read_bytes().decode("utf-8", "replace") for p in sorted(run_dir.iterdir()))


def test_reports_hold_opaque_stable_stratum_labels_never_the_frame_or_an_odd_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    key_text = generate_key()
    monkeypatch.setenv("GRAFT_EVAL_KEY", key_text)
    set_dir = _set(tmp_path, parse_key(key_text))
    assert main(["run", "-q", "--set", str(set_dir)]) == 0
    assert main(["run", "-q", "--set", str(set_dir)]) == 0
    first, second = run_dirs(set_dir)

    for run in (first, second):
        text = _published_text(run)
        assert "secretowner" not in text and "secretrepo" not in text and "LEAKKEY" not in text
    reports = [json.loads((run / "report.json").read_text()) for run in (first, second)]
    strata = [[row["stratum"] for row in report["cases"]] for report in reports]
    assert strata[0] == strata[1]  # stable from run to run
    frames = {s["frame"] for s in strata[0]}
    assert len(frames) == 1 and frames.pop().startswith("frame-")
    assert [s["key"] for s in strata[0]][:3] == ["S/source", "S/source", "XL/sensitive"]  # fixed labels kept
    assert strata[0][3]["key"].startswith("stratum-")
    import pyarrow.parquet as pq

    table = pq.read_table(first / "cases.parquet").to_pydict()
    assert table["stratum_frame"] == [s["frame"] for s in strata[0]]  # compressed: read it properly
    assert "LEAKKEY" not in " ".join(table["stratum_key"])
    population = reports[0]["metrics"]["population"]
    assert [(s["stratum"], s["population"]) for s in population["strata"]] == sorted(
        [("S/source", 40), ("XL/sensitive", 5), (strata[0][3]["key"], 7)]
    )


def test_labels_depend_on_the_set_key() -> None:
    stratum = CaseStratum(frame=FRAME, key=ODD_KEY, population=3, sampled=1)
    one, other = (stratum_label(stratum, parse_key(generate_key())) for _ in range(2))
    assert one.frame != other.frame and one.key != other.key
    fixed_key = parse_key(base64.b64encode(b"k" * 32).decode())
    assert stratum_label(stratum, fixed_key) == stratum_label(stratum, fixed_key)
    assert stratum_label(stratum, None).frame.startswith("frame-")  # no key: an unkeyed hash


def test_dagster_metadata_of_a_pilot_run_never_holds_the_frame(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, instance_with: InstanceWith
) -> None:
    key_text = generate_key()
    monkeypatch.setenv("GRAFT_EVAL_KEY", key_text)
    set_dir = _set(tmp_path, parse_key(key_text))
    sets = CaseSetsResource(
        eval_dir=str(set_dir.parent), synthetic_dir=str(tmp_path / "none"), eval_key=key_text
    )
    instance = instance_with(SET_ID)
    result = dg.materialize(  # two labelled cases are too few for the blocking thresholds
        EVALUATION, partition_key=SET_ID, instance=instance, resources=resources(sets), raise_on_error=False
    )
    assert result.asset_materializations_for_node("eval_report")
    shown = " ".join(str(e) for e in instance.all_logs(result.run_id))
    assert "secretowner" not in shown and "LEAKKEY" not in shown
    (run,) = run_dirs(set_dir)
    assert "secretowner" not in _published_text(run)
