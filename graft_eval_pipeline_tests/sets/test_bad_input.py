"""Hostile and damaged files (issue 10, section 2).

Every error names the file relative to the set, bad input never crashes (exit 1 or a traceback), and
no error echoes content, key names or ids read from the file, nor raw terminal escapes.
"""

from __future__ import annotations

import base64
import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path

import dagster as dg
import pytest
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from graft_eval_pipeline.cli import main
from graft_eval_pipeline.defs.assets.labeling import label_import
from graft_eval_pipeline.defs.resources import CaseSetsResource
from graft_eval_pipeline.evalset.labeling import inbox as label_inbox
from graft_eval_pipeline.evalset.sets import store, untrusted
from graft_eval_pipeline.evalset.sets.case_schema import EvalCase, dump_case
from graft_eval_pipeline.evalset.sets.crypto import format_envelope, generate_key, key_id, parse_key, seal
from graft_eval_pipeline.evalset.sets.paths import INBOX_DIR
from graft_eval_pipeline.evalset.sets.store import CaseSet, write_case, write_private
from graft_eval_pipeline_tests.builders import (
    FIXED_TIME,
    make_case,
    make_file,
    make_inputs,
    make_label,
    make_pilot_case,
    make_pilot_set,
    make_synthetic_set,
    put_sealed,
)
from graft_eval_pipeline_tests.conftest import InstanceWith
from graft_eval_pipeline_tests.defs.test_definitions import EVALUATION, EXPORT, resources

SET_ID = "pilot-demo"
MARKER = "LEAKMARK"  # planted in content, keys and ids: it must never reach a message
CANNOT_DECRYPT = "cannot decrypt: tampered, moved from another set, or sealed with another key"
DEEP = "[" * 100_000 + "]" * 100_000  # Python's json raises RecursionError on it


@pytest.fixture
def key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> bytes:
    text = generate_key()
    monkeypatch.setenv("GRAFT_EVAL_KEY", text)
    monkeypatch.setenv("GRAFT_EVAL_DIR", str(tmp_path / "eval-root"))
    return parse_key(text)


@pytest.fixture
def no_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GRAFT_EVAL_KEY", raising=False)
    monkeypatch.setenv("GRAFT_EVAL_DIR", str(tmp_path / "eval-root"))


@pytest.fixture(autouse=True)
def _owner_only_umask() -> Iterator[None]:
    """Files these tests tamper with are written owner-only, as the store writes them.

    So the mode warning of an open set does not join the output under test.
    """
    old = os.umask(0o077)
    yield
    os.umask(old)


def _pilot(tmp_path: Path, key: bytes, *cases: EvalCase) -> CaseSet:
    cs = make_pilot_set(tmp_path / "eval-root" / SET_ID, key=key)
    for case in cases:
        write_case(cs, case)
    return cs


def _case(pr_number: int = 412, **over: object) -> EvalCase:
    return make_pilot_case(SET_ID, pr_number, **over)


def _rel(case_id: str, suffix: str = ".case.enc") -> str:
    return f"cases/{case_id}{suffix}"


def _seal_bytes(plaintext: bytes, key: bytes, aad: str) -> str:
    """An authentic envelope around bytes that `seal` (which takes text) cannot produce."""
    iv = os.urandom(12)
    sealed = AESGCM(key).encrypt(iv, plaintext, aad.encode("utf-8"))
    return format_envelope(key_id(key), iv, sealed[-16:], sealed[:-16])


def _stderr_lines(capsys: pytest.CaptureFixture[str]) -> list[str]:
    err = capsys.readouterr().err
    assert "Traceback" not in err and "\x1b" not in err and MARKER not in err, err
    return err.splitlines()


# --- every tamper kind names the file -------------------------------------------------------


def _with(envelope: str, **fields: object) -> str:
    data = json.loads(envelope)
    data.update(fields)
    return json.dumps(data)


def _flip(envelope: str, field: str) -> str:
    raw = bytearray(base64.b64decode(json.loads(envelope)[field]))
    raw[len(raw) // 2] ^= 0x01
    return _with(envelope, **{field: base64.b64encode(bytes(raw)).decode()})


def _shorten(envelope: str, field: str) -> str:
    raw = base64.b64decode(json.loads(envelope)[field])
    return _with(envelope, **{field: base64.b64encode(raw[:8]).decode()})


def _without(envelope: str, field: str) -> str:
    return json.dumps({k: v for k, v in json.loads(envelope).items() if k != field})


Tamper = Callable[[str, bytes, str], str | bytes]  # (original envelope, key, plaintext) -> file
TAMPER_KINDS: dict[str, Tamper] = {
    "not-json": lambda env, key, text: "not an envelope",
    "json-array": lambda env, key, text: "[1, 2]",
    "missing-field": lambda env, key, text: _without(env, "tag"),
    "wrong-version": lambda env, key, text: _with(env, graftEval="enc-v2"),
    "field-not-a-string": lambda env, key, text: _with(env, ct=12),
    "bad-base64": lambda env, key, text: _with(env, iv="*not base64*"),
    "wrong-iv-length": lambda env, key, text: _shorten(env, "iv"),
    "truncated-tag": lambda env, key, text: _shorten(env, "tag"),
    "flipped-ciphertext-bit": lambda env, key, text: _flip(env, "ct"),
    "flipped-tag-bit": lambda env, key, text: _flip(env, "tag"),
    "flipped-iv-bit": lambda env, key, text: _flip(env, "iv"),
    "changed-key-id": lambda env, key, text: _with(env, kid="0badc0de"),
    "key-id-with-escapes": lambda env, key, text: _with(env, kid=f"\x1b]0;{MARKER}\x07"),
    "empty-file": lambda env, key, text: "",
    "truncated-file": lambda env, key, text: env[: len(env) // 2],
    "not-utf8": lambda env, key, text: b"\xff\xfe{\x00",
    "deeply-nested": lambda env, key, text: DEEP,
    "from-another-set": lambda env, key, text: seal(text, key, f"pilot-other/{_rel(_case().id)}"),
    "sealed-with-another-key": lambda env, key, text: seal(
        text, parse_key(generate_key()), f"{SET_ID}/{_rel(_case().id)}"
    ),
}


@pytest.mark.parametrize("kind", [*TAMPER_KINDS, "moved-to-another-case"])
def test_every_tamper_kind_names_the_file_in_validate_and_show(
    tmp_path: Path, key: bytes, kind: str, capsys: pytest.CaptureFixture[str]
) -> None:
    case, good = _case(), _case(413)
    cs = _pilot(tmp_path, key, case, good)
    path = cs.dir / _rel(case.id)
    if kind == "moved-to-another-case":  # a whole, authentic file under another case's name (AAD)
        victim = _case(414)
        (cs.dir / _rel(victim.id)).write_bytes(path.read_bytes())
        case = victim
    else:
        damaged = TAMPER_KINDS[kind](path.read_text(), key, dump_case(case))
        path.write_bytes(damaged if isinstance(damaged, bytes) else damaged.encode("utf-8"))
    capsys.readouterr()

    files = len(list((cs.dir / "cases").iterdir()))
    assert main(["validate", "--set", str(cs.dir)]) == 1
    invalid, summary = _stderr_lines(capsys)
    assert invalid.startswith(f"invalid: {_rel(case.id)}: cannot decrypt: "), invalid
    assert summary.startswith(f"error: 1 of {files} cases failed validation")
    assert "GRAFT_EVAL_KEY" not in invalid  # set.json's key id matches: a damaged file, not a wrong key
    if kind in ("flipped-ciphertext-bit", "flipped-tag-bit", "changed-key-id", "from-another-set"):
        assert CANNOT_DECRYPT in invalid

    assert main(["show", "--set", str(cs.dir), "--case", case.id]) == 2
    assert _stderr_lines(capsys) == [invalid.replace("invalid:", "error:", 1)]
    assert main(["show", "--set", str(cs.dir), "--case", good.id]) == 0


def test_a_changed_key_id_in_one_file_is_a_damaged_file_not_a_wrong_key(
    tmp_path: Path, key: bytes, capsys: pytest.CaptureFixture[str]
) -> None:
    cases = [_case(n) for n in (1, 2, 3)]
    cs = _pilot(tmp_path, key, *cases)
    path = cs.dir / _rel(cases[1].id)
    path.write_text(_with(path.read_text(), kid=key_id(parse_key(generate_key()))))
    capsys.readouterr()

    assert main(["validate", "--set", str(cs.dir)]) == 1  # a wrong GRAFT_EVAL_KEY would be exit 2
    assert (
        _stderr_lines(capsys)[0]
        == f"invalid: {_rel(cases[1].id)}: {CANNOT_DECRYPT}; restore the original file"
    )


# --- validate lists every bad file; run and show stop at the first with exit 2 ---------------


def test_validate_lists_every_bad_file_and_goes_on_run_and_show_stop_at_the_first(
    tmp_path: Path, key: bytes, capsys: pytest.CaptureFixture[str]
) -> None:
    cases = [_case(n) for n in (1, 2, 3, 4)]
    cs = _pilot(tmp_path, key, *cases)
    first, second = (cs.dir / _rel(c.id) for c in cases[:2])
    first.write_bytes(b"\xff\xfe not an envelope")
    second.write_text(_flip(second.read_text(), "tag"))
    wrong_version = dump_case(cases[2]).replace('"schemaVersion": 1', '"schemaVersion": 2')
    put_sealed(cs, _rel(cases[2].id), seal(wrong_version, key, f"{SET_ID}/{_rel(cases[2].id)}"))
    capsys.readouterr()

    assert main(["validate", "--set", str(cs.dir)]) == 1
    captured = capsys.readouterr()
    assert "4 cases" in captured.out and "3 invalid" in captured.out
    lines = captured.err.splitlines()
    assert [line.split(": ", 2)[1] for line in lines[:3]] == [_rel(c.id) for c in cases[:3]]
    assert all(line.startswith("invalid: ") for line in lines[:3])
    assert lines[3].startswith("error: 3 of 4 cases failed validation") and len(lines) == 4

    assert main(["run", "--set", str(cs.dir)]) == 2
    assert _stderr_lines(capsys) == [lines[0].replace("invalid:", "error:", 1)]
    assert not (cs.dir / "runs").exists()
    for case, line in zip(cases[:3], lines[:3], strict=True):
        assert main(["show", "--set", str(cs.dir), "--case", case.id]) == 2
        assert _stderr_lines(capsys) == [line.replace("invalid:", "error:", 1)]
    assert main(["show", "--set", str(cs.dir), "--case", cases[3].id]) == 0


# --- no traceback: bad bytes, deep JSON, lone surrogates --------------------------------------


@pytest.mark.parametrize(
    ("kind", "content", "reason"),
    [
        ("synthetic", b'{"id": "\xff\xfe"}', "not UTF-8 text (bad byte at offset 8)"),
        ("synthetic", DEEP.encode(), "JSON nested more than 64 levels deep"),
        ("pilot", b'{"id": "\xff\xfe"}', "the decrypted content is not UTF-8 text"),
        ("pilot", DEEP.encode(), "JSON nested more than 64 levels deep"),
    ],
    ids=["plain-not-utf8", "plain-deep", "sealed-not-utf8", "sealed-deep"],
)
@pytest.mark.parametrize("large", [False, True], ids=["bytes", "large-from-text"])
def test_bad_bytes_and_deep_json_in_a_case_file_are_one_line_errors(
    tmp_path: Path,
    key: bytes,
    kind: str,
    content: bytes,
    reason: str,
    large: bool,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    if large:  # every case file takes the path of one over LARGE_DOCUMENT (parsed from its text)
        monkeypatch.setattr(store, "LARGE_DOCUMENT", 0)
        monkeypatch.setattr(untrusted, "LARGE_DOCUMENT", 0)
    if kind == "synthetic":
        cs = make_synthetic_set(tmp_path / "syn")
        case_id, rel = "syn-001-bad", _rel("syn-001-bad", ".case.json")
        (cs.dir / rel).write_bytes(content)
    else:
        cs = _pilot(tmp_path, key)
        case_id = _case().id
        rel = _rel(case_id)
        put_sealed(cs, rel, _seal_bytes(content, key, f"{SET_ID}/{rel}"))
    capsys.readouterr()

    assert main(["validate", "--set", str(cs.dir)]) == 1
    invalid = _stderr_lines(capsys)[0]
    assert invalid.startswith(f"invalid: {rel}: ") and reason in invalid
    assert main(["show", "--set", str(cs.dir), "--case", case_id]) == 2
    [line] = _stderr_lines(capsys)
    assert line.startswith(f"error: {rel}: ") and reason in line


def _with_surrogate(case: EvalCase, marker: str) -> str:
    """The case file with the field holding `marker` turned into a lone surrogate escape."""
    text = dump_case(case)
    assert text.count(marker) == 1
    return text.replace(marker, f"{MARKER} \\ud800")


@pytest.mark.parametrize(
    ("field", "location"),
    [("title", "inputs.pr.title"), ("patch", "inputs.files.0.patch"), ("notes", "labels.0.notes")],
)
def test_a_lone_surrogate_is_refused_at_validation_naming_the_field(
    tmp_path: Path, key: bytes, field: str, location: str, capsys: pytest.CaptureFixture[str]
) -> None:
    marker = f"{field.upper()}-X"
    case = {
        "title": lambda: _case(inputs=make_inputs(pr={"number": 412, "title": marker})),
        "patch": lambda: _case(inputs=make_inputs([make_file(patch=marker)], pr={"number": 412})),
        "notes": lambda: _case(labels=[make_label(notes=marker)]),
    }[field]()
    cs = _pilot(tmp_path, key)
    rel = _rel(case.id)
    put_sealed(cs, rel, seal(_with_surrogate(case, marker), key, f"{SET_ID}/{rel}"))
    capsys.readouterr()

    expected = f"{rel}: {location}: holds a lone surrogate escape"
    assert main(["validate", "--set", str(cs.dir)]) == 1
    assert _stderr_lines(capsys)[0].startswith(f"invalid: {expected}")
    for argv in (["show", "--case", case.id], ["run"]):
        assert main([*argv, "--set", str(cs.dir)]) == 2
        [line] = _stderr_lines(capsys)
        assert line.startswith(f"error: {expected}")


def test_a_lone_surrogate_in_a_free_form_key_is_located_without_quoting_the_key(
    tmp_path: Path, no_key: None, capsys: pytest.CaptureFixture[str]
) -> None:
    cs = make_synthetic_set(tmp_path / "syn")
    case = make_case("syn-001-fake", fake_llm={"writer": {"json": {"KEY-X": "value"}}})
    (cs.dir / _rel(case.id, ".case.json")).write_text(_with_surrogate(case, "KEY-X"))
    capsys.readouterr()
    assert main(["validate", "--set", str(cs.dir)]) == 1
    assert _stderr_lines(capsys)[0] == (
        f"invalid: {_rel(case.id, '.case.json')}: a key in fakeLlm.writer.json: holds a lone surrogate "
        "escape (\\ud800-\\udfff), which is not text; remove it"
    )


def _label_entry(**over: object) -> dict[str, object]:
    entry: dict[str, object] = {
        "risk": "logic",
        "outOfScope": [],
        "goal": "A goal.",
        "keyBehaviorChanges": [],
        "shouldFlag": False,
        "confidence": "high",
        "notes": "",
    }
    entry.update(over)
    return entry


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (b'{"syn-001-a": "\xff"}', "labels.json: not UTF-8 text (bad byte at offset 15)"),
        (DEEP.encode(), "labels.json: JSON nested more than 64 levels deep"),
        (
            json.dumps({"syn-001-a": _label_entry(goal=f"{MARKER} \ud800")}).encode(),
            "labels.json: 1 problem(s), nothing written: case syn-001-a: goal: holds a lone surrogate",
        ),
        (
            json.dumps({"syn-001-a": _label_entry(), f"{MARKER}\ud800": _label_entry()}).encode(),
            "labels.json: 1 problem(s), nothing written: 1 case id(s) not in the set",
        ),
    ],
    ids=["not-utf8", "deep", "surrogate-in-goal", "surrogate-in-case-id"],
)
def test_label_apply_refuses_bad_bytes_deep_json_and_surrogates_with_exit_2(
    tmp_path: Path, no_key: None, content: bytes, reason: str, capsys: pytest.CaptureFixture[str]
) -> None:
    cs = make_synthetic_set(tmp_path / "syn")
    write_case(cs, make_case("syn-001-a", labels=[]))
    before = (cs.dir / _rel("syn-001-a", ".case.json")).read_bytes()
    labels = tmp_path / "labels.json"
    labels.write_bytes(content)
    capsys.readouterr()

    assert main(["label", "--set", str(cs.dir), "--as", "alice", "--apply", str(labels)]) == 2
    [line] = _stderr_lines(capsys)
    assert line.startswith(f"error: {reason}"), line
    assert (cs.dir / _rel("syn-001-a", ".case.json")).read_bytes() == before


# --- no key names or ids from the file, no raw escapes -----------------------------------------


def test_validation_messages_quote_no_key_names_or_ids_from_the_file(
    tmp_path: Path, key: bytes, capsys: pytest.CaptureFixture[str]
) -> None:
    case = _case()
    cs = _pilot(tmp_path, key)
    data = json.loads(dump_case(case))
    data["inputs"]["pr"][f"{MARKER}-unknown-key"] = 1
    rel = _rel(case.id)
    put_sealed(cs, rel, seal(json.dumps(data), key, f"{SET_ID}/{rel}"))
    capsys.readouterr()
    assert main(["validate", "--set", str(cs.dir)]) == 1
    assert _stderr_lines(capsys)[0] == f"invalid: {rel}: an unexpected field in inputs.pr"

    write_case(cs, case)
    labels = tmp_path / "labels.json"
    labels.write_text(json.dumps({case.id: _label_entry(), f"{SET_ID}--{MARKER.lower()}-1": _label_entry()}))
    assert main(["label", "--set", str(cs.dir), "--as", "alice", "--apply", str(labels)]) == 2
    [line] = _stderr_lines(capsys)
    assert MARKER.lower() not in line and line.endswith(
        "1 case id(s) not in the set (check them with `graft-eval validate`)"
    )


def test_errors_reach_the_terminal_with_escapes_made_visible(
    tmp_path: Path, no_key: None, capsys: pytest.CaptureFixture[str]
) -> None:
    cs = make_synthetic_set(tmp_path / "syn")
    hostile = tmp_path / "labels\x1b]0;pwned\x07\x1b[2J.json"
    hostile.write_text("{nope")
    capsys.readouterr()
    assert main(["label", "--set", str(cs.dir), "--as", "alice", "--apply", str(hostile)]) == 2
    assert _stderr_lines(capsys) == [
        "error: labels[U+001B]]0;pwned[U+0007][U+001B][2J.json: not valid JSON (line 1, column 2)"
    ]


# --- the labels inbox: bad files named, left in place, the job never fails ---------------------


def test_bad_inbox_files_are_named_left_in_place_and_do_not_fail_the_dagster_job(
    tmp_path: Path, key: bytes, instance_with: InstanceWith
) -> None:
    case = _case()
    cs = _pilot(tmp_path, key, case)
    doc = {"labeler": "alice", "labels": {case.id: _label_entry()}}
    write_private(cs, f"{INBOX_DIR}/a-good.json", json.dumps(doc))
    inbox = cs.dir / INBOX_DIR

    def sealed(name: str, plaintext: bytes) -> None:
        (inbox / f"{name}.enc").write_text(_seal_bytes(plaintext, key, f"{SET_ID}/{INBOX_DIR}/{name}.enc"))

    sealed("b-not-utf8.json", b'{"labeler": "\xff"}')
    sealed("c-deep.json", DEEP.encode())
    surrogate = {"labeler": "bob", "labels": {case.id: _label_entry(notes=f"{MARKER} \ud800")}}
    sealed("d-surrogate.json", json.dumps(surrogate).encode())
    sealed("e-unknown-id.json", json.dumps({"labeler": "bob", "labels": {MARKER: _label_entry()}}).encode())
    sealed("f-extra-key.json", json.dumps({**doc, MARKER: 1}).encode())
    (inbox / "g-\x1b]0;pwned\x07.json").write_text("{}")  # plaintext in a pilot set, hostile name
    bad = sorted(p.name for p in inbox.iterdir() if not p.name.startswith("a-"))

    sets = CaseSetsResource(
        eval_dir=str(cs.dir.parent),
        synthetic_dir=str(tmp_path / "none"),
        eval_key=base64.b64encode(key).decode(),
    )
    result = dg.materialize(
        [*EVALUATION, *EXPORT],
        selection=[label_import],
        partition_key=SET_ID,
        instance=instance_with(SET_ID),
        resources=resources(sets),
    )

    assert result.success
    metadata = result.asset_materializations_for_node("label_import")[0].metadata
    assert metadata["imported_files"].value == 1
    reasons = metadata["bad_files"].value
    assert isinstance(reasons, dict)
    assert sorted(reasons) == [
        "b-not-utf8.json.enc",
        "c-deep.json.enc",
        "d-surrogate.json.enc",
        "e-unknown-id.json.enc",
        "f-extra-key.json.enc",
        "g-[U+001B]]0;pwned[U+0007].json",
    ]
    assert "the decrypted content is not UTF-8 text" in reasons["b-not-utf8.json.enc"]
    assert "nested more than 64 levels" in reasons["c-deep.json.enc"]
    assert f"case {case.id}: notes: holds a lone surrogate" in reasons["d-surrogate.json.enc"]
    assert "1 case id(s) not in the set" in reasons["e-unknown-id.json.enc"]
    assert reasons["f-extra-key.json.enc"] == "f-extra-key.json.enc: an unexpected field in (root)"
    assert sorted(p.name for p in inbox.iterdir() if p.is_file()) == bad  # left in place
    logged = " ".join(str(event) for event in result.all_events) + json.dumps(reasons)
    assert MARKER not in logged and "\x1b" not in logged


def test_an_unreadable_inbox_file_is_named_and_left_in_place(
    tmp_path: Path, no_key: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    cs = make_synthetic_set(tmp_path / "syn")
    write_case(cs, make_case("syn-001-a", labels=[]))
    (cs.dir / INBOX_DIR).mkdir()
    (cs.dir / INBOX_DIR / "alice.json").write_text("{}")

    def unreadable(*_: object) -> str:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(label_inbox, "read_private", unreadable)
    result = label_inbox.import_label_inbox(cs, now=FIXED_TIME)
    assert result.bad_files == {"alice.json": "alice.json: could not read it (Permission denied)"}
    assert (cs.dir / INBOX_DIR / "alice.json").exists()


def test_randomly_damaged_case_files_give_a_case_or_one_line_naming_the_file() -> None:
    """Seeded byte damage to a case gives a valid case or one line naming the file and quoting nothing.

    Seeded byte damage (flips, cuts, insertions of JSON's own characters) to a case whose content
    and keys hold the marker: parse_case either reads a valid case or raises one line that names the
    file and quotes nothing from it, whichever parser path the bytes take.
    """
    import random

    from graft_eval_pipeline.evalset.sets.case_schema import CaseFormatError, parse_case

    case = make_case("syn-901-leak", inputs=make_inputs([make_file(f"src/{MARKER}.ts", patch=f"+{MARKER}")]))
    text = dump_case(case).replace('"goal": "', f'"goal": "{MARKER} ', 1).encode()
    pieces = [
        b"{",
        b"}",
        b"[",
        b"]",
        b'"',
        b",",
        b":",
        b"\\",
        b"\\u",
        b"\xff",
        b"\xed\xa0\x80",
        b"0",
        b"1e999",
    ]
    rng = random.Random(10)
    outcomes = {"case": 0, "refused": 0}
    for _ in range(2_000):
        data = bytearray(text)
        for _ in range(rng.randint(1, 3)):
            at = rng.randrange(len(data))
            kind = rng.random()
            if kind < 0.4:
                data[at] = rng.randrange(256)
            elif kind < 0.7:
                del data[at : at + rng.randint(1, 40)]
            else:
                data[at:at] = rng.choice(pieces)
        try:
            parse_case(bytes(data), "cases/syn-901-leak.case.json")
            outcomes["case"] += 1
        except CaseFormatError as err:
            message = str(err)
            outcomes["refused"] += 1
            assert message.startswith("cases/syn-901-leak.case.json: "), message
            assert "\n" not in message and MARKER not in message, message
    assert outcomes["case"] > 20 and outcomes["refused"] > 1_000  # both outcomes were reached
