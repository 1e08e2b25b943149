"""Case-set commands of graft-eval: U-CLI-4, U-CLI-5, U-CLI-6 and the spec's manual check (§15)."""

from __future__ import annotations

import base64
import functools
import json
import re
from pathlib import Path

import pytest

from graft_eval_pipeline.cli import main
from graft_eval_pipeline.evalset.sets.case_schema import EvalCase, parse_case
from graft_eval_pipeline.evalset.sets.crypto import generate_key, parse_key
from graft_eval_pipeline.evalset.sets.paths import REPO_ROOT
from graft_eval_pipeline.evalset.sets.store import open_set, write_case
from graft_eval_pipeline.evalset.sets.terminal import to_terminal_safe
from graft_eval_pipeline_tests.builders import make_label, make_pilot_case

SYN_019 = REPO_ROOT / "eval" / "synthetic" / "cases" / "syn-019-injection-body.case.json"
ESCAPES = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]")


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """A fresh eval dir and key; nothing from the developer's real environment leaks in."""
    values = {"GRAFT_EVAL_DIR": str(tmp_path / "eval-root"), "GRAFT_EVAL_KEY": generate_key()}
    for name, value in values.items():
        monkeypatch.setenv(name, value)
    return values


def _init_pilot(folder: Path, *extra: str) -> int:
    return main(["init", "--set", str(folder), "--kind", "pilot", "--consent-ref", "test", *extra])


def _pilot_demo(tmp_path: Path, env: dict[str, str], *cases: EvalCase) -> Path:
    """`graft-eval init` the pilot set pilot-demo in the eval dir and write `cases` into it."""
    folder = tmp_path / "eval-root" / "pilot-demo"
    assert _init_pilot(folder) == 0
    cs = open_set(folder, parse_key(env["GRAFT_EVAL_KEY"]))
    for case in cases:
        write_case(cs, case)
    return folder


def test_U_CLI_4_pilot_set_without_key_exits_2(
    tmp_path: Path, env: dict[str, str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = _pilot_demo(tmp_path, env, make_pilot_case("pilot-demo"))
    monkeypatch.delenv("GRAFT_EVAL_KEY")
    capsys.readouterr()
    for argv in (
        ["validate", "--set", str(folder)],
        ["show", "--set", str(folder), "--case", "pilot-demo--shop-demo-412"],
        ["init", "--set", str(tmp_path / "eval-root" / "pilot-two"), "--kind", "pilot", "--consent-ref", "x"],
    ):
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert err.startswith("error: GRAFT_EVAL_KEY is not set"), err
        assert err.count("\n") == 1


def test_U_CLI_4_wrong_key_exits_2(
    tmp_path: Path, env: dict[str, str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = _pilot_demo(tmp_path, env)
    monkeypatch.setenv("GRAFT_EVAL_KEY", generate_key())
    assert main(["validate", "--set", str(folder)]) == 2
    assert "wrong GRAFT_EVAL_KEY for set pilot-demo" in capsys.readouterr().err


def test_U_CLI_5_purge_without_confirm_exits_2(tmp_path: Path, env: dict[str, str]) -> None:
    folder = _pilot_demo(tmp_path, env)
    assert main(["purge", "--set", str(folder)]) == 2
    assert main(["purge", "--set", str(folder), "--confirm", "pilot-other"]) == 2
    assert (folder / "set.json").exists()


def test_purge_deletes_and_logs_without_needing_the_key(
    tmp_path: Path, env: dict[str, str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = _pilot_demo(tmp_path, env, make_pilot_case("pilot-demo"))
    monkeypatch.delenv("GRAFT_EVAL_KEY")
    assert main(["purge", "--set", str(folder), "--confirm", "pilot-demo"]) == 0
    assert not folder.exists()
    assert "purged set pilot-demo: 1 cases deleted" in capsys.readouterr().out
    entry = json.loads((tmp_path / "eval-root" / "purge-log.jsonl").read_text())
    assert entry["setId"] == "pilot-demo" and entry["caseCount"] == 1


def test_U_CLI_6_keygen_prints_a_32_byte_key(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["keygen"]) == 0
    out = capsys.readouterr().out
    key = out.strip()
    assert out == key + "\n"
    assert len(key) == 44
    assert len(base64.b64decode(key, validate=True)) == 32


def test_manual_check_1_init_outside_a_repo_ok(
    tmp_path: Path, env: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "eval-root" / "pilot-demo"
    assert _init_pilot(folder, "--sensitive-paths", "services/billing/**, **/payments/**") == 0
    assert "created pilot set pilot-demo" in capsys.readouterr().out
    meta = json.loads((folder / "set.json").read_text())
    assert meta["kind"] == "pilot" and meta["consentRef"] == "test"
    assert meta["defaultFloorConfig"]["extraSensitiveGlobs"] == ["services/billing/**", "**/payments/**"]
    assert (folder / "set.json").stat().st_mode & 0o777 == 0o600


def test_manual_check_1_init_inside_a_git_tree_exits_2(
    tmp_path: Path, env: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    assert _init_pilot(tmp_path / "repo" / "tmp-pilot") == 2
    assert "inside a git working tree" in capsys.readouterr().err
    assert not (tmp_path / "repo" / "tmp-pilot").exists()


def test_init_pilot_needs_consent_ref(tmp_path: Path, env: dict[str, str]) -> None:
    assert main(["init", "--set", str(tmp_path / "eval-root" / "p"), "--kind", "pilot"]) == 2


def test_validate_counts(tmp_path: Path, env: dict[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    folder = _pilot_demo(
        tmp_path,
        env,
        make_pilot_case("pilot-demo", 1),
        make_pilot_case("pilot-demo", 2, labels=[make_label("alice")]),
        make_pilot_case("pilot-demo", 3, labels=[make_label("alice"), make_label("bob", risk="logic")]),
    )
    capsys.readouterr()
    assert main(["validate", "--set", str(folder)]) == 0
    out = capsys.readouterr().out
    assert "set pilot-demo: 3 cases, 2 labeled, 1 gold, 1 need adjudication, 0 invalid" in out
    (folder / "cases" / "pilot-demo--shop-demo-9.case.enc").write_text("{}")
    assert main(["validate", "--set", str(folder)]) == 1
    captured = capsys.readouterr()
    damaged = "invalid: cases/pilot-demo--shop-demo-9.case.enc: cannot decrypt: not an enc-v1 envelope"
    assert "4 cases" in captured.out and damaged in captured.err


def test_show_renders_and_says_no_cached_result(
    tmp_path: Path, env: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    folder = _pilot_demo(tmp_path, env, make_pilot_case("pilot-demo"))
    capsys.readouterr()
    assert main(["show", "--set", str(folder), "--case", "pilot-demo--shop-demo-412", "--with-result"]) == 0
    out = capsys.readouterr().out
    assert "  1. modified src/util/format.ts (+1 −1)" in out
    assert out.rstrip().endswith("no cached result")
    assert main(["show", "--set", str(folder), "--case", "pilot-demo--shop-demo-999"]) == 2


def test_manual_check_3_show_syn_019_has_no_escape_sequences(capsys: pytest.CaptureFixture[str]) -> None:
    if not SYN_019.exists():
        pytest.skip("syn-019 is not committed yet (the synthetic set is being written)")
    case = parse_case(SYN_019.read_text(encoding="utf-8"), SYN_019.name)
    assert main(["show", "--set", str(REPO_ROOT / "eval" / "synthetic"), "--case", case.id]) == 0
    out = capsys.readouterr().out
    assert to_terminal_safe(case.inputs.pr.body) in out
    assert re.search(r"(?i)ignore|reviewer|classify", out)
    assert ESCAPES.search(out) is None


def test_purge_stopped_partway_is_finished_by_running_it_again(
    tmp_path: Path, env: dict[str, str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from graft_eval_pipeline.cli import sets as cli_sets
    from graft_eval_pipeline.evalset.sets.purge import purge_set

    folder = _pilot_demo(tmp_path, env, make_pilot_case("pilot-demo"))

    def stops_partway(path: Path) -> None:
        (Path(path) / "set.json").unlink()
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(cli_sets, "purge_set", functools.partial(purge_set, _rmtree=stops_partway))
    capsys.readouterr()
    assert main(["purge", "--set", str(folder), "--confirm", "pilot-demo"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: the purge is logged but") and err.count("\n") == 1
    assert not folder.exists()
    monkeypatch.undo()

    assert main(["purge", "--set", str(folder), "--confirm", "pilot-demo"]) == 0
    assert "already purged and logged" in capsys.readouterr().out
    root = tmp_path / "eval-root"
    assert [p.name for p in root.iterdir()] == ["purge-log.jsonl"]
    assert len((root / "purge-log.jsonl").read_text().splitlines()) == 1


def test_a_stray_os_error_is_one_line_with_exit_2(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from graft_eval_pipeline.cli import sets as cli_sets

    def broken() -> str:
        raise PermissionError(13, "Permission denied", "/somewhere/key")

    monkeypatch.setattr(cli_sets, "generate_key", broken)
    assert main(["keygen"]) == 2
    err = capsys.readouterr().err
    assert err == "error: Permission denied (/somewhere/key): check the path, free space and permissions\n"
