"""Strings read from files or API answers reach the terminal terminal-safe (issue 23, item 3).

An escape sequence in a run id (history), a model name (compare) or a model id as the API answered
it (the refusal-fallback warning) shows as `[U+001B]`, it does not act.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from graft_eval_pipeline.cli import main
from graft_eval_pipeline.evalset.report.runs import run_dirs
from graft_eval_pipeline_tests.builders import copy_synthetic

pytestmark = pytest.mark.usefixtures("clean_env")

HOSTILE = "\x1b]0;pwned\x07\x1b[2J\u202e"
SHOWN = "[U+001B]]0;pwned[U+0007][U+001B][2J[U+202E]"


def _raw_free(text: str) -> None:
    assert "\x1b" not in text and "\x07" not in text and "\u202e" not in text, text


def _edit_report(path: Path, **fields: object) -> None:
    data = json.loads(path.read_text())
    data.update(fields)
    path.write_text(json.dumps(data))


def test_history_shows_a_hostile_run_id_and_mode_terminal_safe(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    synthetic = copy_synthetic(tmp_path, baseline=True)
    assert main(["run", "-q", "--set", str(synthetic)]) == 0
    (run,) = run_dirs(synthetic)
    _edit_report(run / "report.json", runId=f"run{HOSTILE}", llm=f"fake{HOSTILE}")
    capsys.readouterr()
    assert main(["history", "--set", str(synthetic)]) == 0
    out, err = capsys.readouterr()
    _raw_free(out + err)
    assert f"run{SHOWN}" in out and f"fake{SHOWN}" in out


def test_compare_shows_hostile_model_names_terminal_safe(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    synthetic = copy_synthetic(tmp_path, baseline=True)
    assert main(["run", "-q", "--set", str(synthetic)]) == 0
    assert main(["run", "-q", "--set", str(synthetic)]) == 0
    first, second = run_dirs(synthetic)
    data = json.loads((first / "report.json").read_text())
    _edit_report(first / "report.json", models={**data["models"], "fast": f"claude{HOSTILE}"})
    capsys.readouterr()
    code = main(["compare", "--base", str(first), "--new", str(second)])
    out, err = capsys.readouterr()
    assert code in (0, 1)
    _raw_free(out + err)
    assert f"claude{SHOWN}" in out


def test_the_summary_of_a_report_with_hostile_fields_is_terminal_safe(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    synthetic = copy_synthetic(tmp_path, baseline=True)
    assert main(["run", "-q", "--set", str(synthetic)]) == 0
    (run,) = run_dirs(synthetic)
    data = json.loads((run / "report.json").read_text())
    _edit_report(run / "report.json", models={**data["models"], "strong": f"claude{HOSTILE}"})
    capsys.readouterr()
    assert main(["summary", "--set", str(synthetic)]) == 0
    out, err = capsys.readouterr()
    _raw_free(out + err)


def test_the_refusal_fallback_warning_shows_the_answered_model_id_terminal_safe(
    caplog: pytest.LogCaptureFixture,
) -> None:
    from graft_eval_pipeline_tests.card.test_anthropic_llm import (
        FakeApi,
        complete,
        make_llm,
        message,
        refusal,
    )

    api = FakeApi(refusal(model=f"claude-haiku-5-5{HOSTILE}"), message(model="claude-opus-5-5"))
    with caplog.at_level(logging.DEBUG, logger="graft_eval_pipeline"):
        complete(make_llm(api, refusal_fallback="claude-opus-5-5"))
    warning = next(r.getMessage() for r in caplog.records if "refused" in r.getMessage())
    _raw_free(warning)
    assert f"claude-haiku-5-5{SHOWN}" in warning
