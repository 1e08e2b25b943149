"""Envelope crypto (spec 6.3, U-CRYPT-1..5) and the Wycheproof AES-GCM vectors."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path
from typing import Any

import pytest

from graft_eval_pipeline.evalset.sets.crypto import (
    format_envelope,
    generate_key,
    key_id,
    open_envelope,
    open_envelope_bytes,
    parse_key,
    seal,
)
from graft_eval_pipeline.evalset.sets.errors import EvalCryptoError, EvalError
from graft_eval_pipeline.evalset.sets.store import write_case
from graft_eval_pipeline_tests.builders import make_file, make_inputs, make_pilot_case, make_pilot_set

WYCHEPROOF = Path(__file__).parent / "data" / "wycheproof" / "aes_gcm_test.json"
AAD = "pilot-acme/cases/pilot-acme--api-412.case.enc"
SECRET_TEXT = "Grüße, déjà vu — the plaintext 🔒 line"


def _flip(envelope: str, field: str, index: int = 0) -> str:
    data = json.loads(envelope)
    raw = bytearray(base64.b64decode(data[field]))
    raw[index] ^= 0x01
    data[field] = base64.b64encode(bytes(raw)).decode()
    return json.dumps(data)


def test_U_CRYPT_1_seal_open_round_trip_with_fresh_iv() -> None:
    key = parse_key(generate_key())
    first = seal(SECRET_TEXT, key, AAD)
    second = seal(SECRET_TEXT, key, AAD)
    assert open_envelope(first, key, AAD) == SECRET_TEXT
    assert open_envelope(second, key, AAD) == SECRET_TEXT
    assert first != second
    assert json.loads(first)["iv"] != json.loads(second)["iv"]
    fields = json.loads(first)
    assert set(fields) == {"graftEval", "kid", "iv", "tag", "ct"}
    assert fields["graftEval"] == "enc-v1"
    assert fields["kid"] == key_id(key)
    assert len(base64.b64decode(fields["iv"])) == 12
    assert len(base64.b64decode(fields["tag"])) == 16


@pytest.mark.parametrize("attack", ["wrong_key", "ct_byte", "tag_byte", "other_aad"])
def test_U_CRYPT_2_tampering_fails_without_leaking_plaintext(attack: str) -> None:
    key = parse_key(generate_key())
    envelope = seal(SECRET_TEXT, key, AAD)
    open_key, open_aad = key, AAD
    if attack == "wrong_key":
        open_key = parse_key(generate_key())
    elif attack == "ct_byte":
        envelope = _flip(envelope, "ct", 3)
    elif attack == "tag_byte":
        envelope = _flip(envelope, "tag", 15)
    else:
        open_aad = "pilot-other/cases/pilot-acme--api-412.case.enc"
    with pytest.raises(EvalCryptoError) as err:
        open_envelope(envelope, open_key, open_aad)
    message = str(err.value)
    assert "\n" not in message
    for fragment in ("Grüße", "plaintext", "déjà", "🔒"):
        assert fragment not in message
    # every attack names the file the AAD seals; a key the set does not use is caught by open_set
    # (set.json's keyId) before any file is read, so here it is a file sealed with another key
    assert message == (
        "cases/pilot-acme--api-412.case.enc: cannot decrypt: tampered, moved from another set, "
        "or sealed with another key; restore the original file"
    )


def test_U_CRYPT_2_wrong_key_with_forged_kid_still_fails_on_the_tag() -> None:
    key, other = parse_key(generate_key()), parse_key(generate_key())
    data = json.loads(seal(SECRET_TEXT, key, AAD))
    data["kid"] = key_id(other)
    with pytest.raises(EvalCryptoError, match="cannot decrypt: tampered, moved"):
        open_envelope(json.dumps(data), other, AAD)


@pytest.mark.parametrize(
    "text",
    [
        base64.b64encode(b"\x01" * 31).decode(),
        base64.b64encode(b"\x01" * 33).decode(),
        "not base64 at all!!",
        "",
        base64.b64encode(b"\x01" * 32).decode()[:-2] + "*=",
    ],
)
def test_U_CRYPT_3_parse_key_rejects_bad_keys(text: str) -> None:
    with pytest.raises(EvalError, match="GRAFT_EVAL_KEY"):
        parse_key(text)


def test_U_CRYPT_3_parse_key_accepts_32_bytes() -> None:
    raw = bytes(range(32))
    assert parse_key(base64.b64encode(raw).decode() + "\n") == raw


def test_U_CRYPT_4_key_id_is_stable_8_hex() -> None:
    key = bytes(range(32))
    assert key_id(key) == key_id(bytes(range(32)))
    assert re.fullmatch(r"[0-9a-f]{8}", key_id(key))
    assert key_id(key) == "630dcd29"  # sha256(0..31), pinned
    assert key_id(parse_key(generate_key())) != key_id(key)


def test_U_CRYPT_5_sealed_case_file_holds_no_case_text(tmp_path: Path) -> None:
    title, body = "Quietly rotate the ledger checksum", "Moves the reconciliation window to 36 hours."
    patch = "@@ -1,1 +1,1 @@\n-const windowHours = 24;\n+const windowHours = 36; // ledgerReconcile"
    inputs = make_inputs(
        [make_file("src/ledger/reconcile.ts", patch=patch)],
        pr={"number": 412, "title": title, "body": body},
    )
    cs = make_pilot_set(tmp_path / "pilot-acme")
    case = make_pilot_case(inputs=inputs)
    write_case(cs, case)
    raw = (cs.dir / "cases" / f"{case.id}.case.enc").read_text()
    for fragment in (title, body, "windowHours", "ledgerReconcile", "reconciliation", "src/ledger"):
        assert fragment not in raw


def _wycheproof_cases() -> list[dict[str, Any]]:
    data = json.loads(WYCHEPROOF.read_text())
    return [
        test
        for group in data["testGroups"]
        if (group["keySize"], group["ivSize"], group["tagSize"]) == (256, 96, 128)
        for test in group["tests"]
    ]


WYCHEPROOF_CASES = _wycheproof_cases()


def test_wycheproof_selection_is_not_empty() -> None:
    results = {t["result"] for t in WYCHEPROOF_CASES}
    assert len(WYCHEPROOF_CASES) >= 60
    assert {"valid", "invalid"} <= results


@pytest.mark.parametrize("vector", WYCHEPROOF_CASES, ids=lambda t: f"tc{t['tcId']}")
def test_wycheproof_aes_256_gcm_through_open(vector: dict[str, Any]) -> None:
    key = bytes.fromhex(vector["key"])
    envelope = format_envelope(
        key_id(key),
        bytes.fromhex(vector["iv"]),
        bytes.fromhex(vector["tag"]),
        bytes.fromhex(vector["ct"]),
    )
    aad = bytes.fromhex(vector["aad"])
    if vector["result"] == "invalid":
        with pytest.raises(EvalCryptoError):
            open_envelope_bytes(envelope, key, aad)
    else:
        assert open_envelope_bytes(envelope, key, aad) == bytes.fromhex(vector["msg"])
