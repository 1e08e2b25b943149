"""AES-256-GCM envelopes for pilot-set files (spec E6, 6.3).

The AAD is `<setId>/<path relative to the set dir>`, so a sealed file cannot be moved to another
set or case. The envelope's `kid` is checked before decrypting, so a wrong key fails with a clear
message rather than a tag error. No error message ever holds plaintext.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import os
from typing import Any

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from graft_eval_pipeline.evalset.sets.errors import EvalCryptoError, EvalError

ENVELOPE_VERSION = "enc-v1"
KEY_BYTES = 32
IV_BYTES = 12
TAG_BYTES = 16


def parse_key(b64: str) -> bytes:
    """GRAFT_EVAL_KEY: base64 of exactly 32 bytes."""
    try:
        key = base64.b64decode(b64.strip(), validate=True)
    except (binascii.Error, ValueError):
        raise EvalError(
            "GRAFT_EVAL_KEY is not valid base64: paste the key exactly as `graft-eval keygen` printed it"
        ) from None
    if len(key) != KEY_BYTES:
        raise EvalError(
            f"GRAFT_EVAL_KEY decodes to {len(key)} bytes, expected {KEY_BYTES}: "
            "use a key made by `graft-eval keygen`"
        )
    return key


def key_id(key: bytes) -> str:
    """First 8 hex characters of SHA-256 of the key; stored in set.json to detect a wrong key."""
    return hashlib.sha256(key).hexdigest()[:8]


def generate_key() -> str:
    """A new GRAFT_EVAL_KEY: base64 of 32 random bytes (44 characters)."""
    return base64.b64encode(os.urandom(KEY_BYTES)).decode("ascii")


def format_envelope(kid: str, iv: bytes, tag: bytes, ct: bytes) -> str:
    """The one place that lays out the envelope JSON of spec 6.3."""
    b64 = base64.b64encode
    return json.dumps(
        {
            "graftEval": ENVELOPE_VERSION,
            "kid": kid,
            "iv": b64(iv).decode("ascii"),
            "tag": b64(tag).decode("ascii"),
            "ct": b64(ct).decode("ascii"),
        }
    )


def seal(plaintext: str, key: bytes, aad: str) -> str:
    """Encrypt with a fresh random IV; returns the envelope JSON."""
    iv = os.urandom(IV_BYTES)
    sealed = AESGCM(key).encrypt(iv, plaintext.encode("utf-8"), aad.encode("utf-8"))
    return format_envelope(key_id(key), iv, sealed[-TAG_BYTES:], sealed[:-TAG_BYTES])


def open_envelope(envelope: str, key: bytes, aad: str) -> str:
    """Decrypt an envelope sealed for `aad` (`<setId>/<relative path>`)."""
    return open_envelope_bytes(envelope, key, aad.encode("utf-8")).decode("utf-8")


def open_envelope_bytes(envelope: str, key: bytes, aad: bytes) -> bytes:
    """The decrypt path itself, on bytes (the Wycheproof vectors carry binary messages)."""
    set_id = aad.decode("utf-8", errors="replace").split("/", 1)[0]
    fields = _parse_envelope(envelope)
    if fields["kid"] != key_id(key):
        raise EvalCryptoError(
            f"wrong GRAFT_EVAL_KEY for set {set_id}: the file was sealed with key {fields['kid']}, "
            f"the key given is {key_id(key)}; use the set's key from the password manager"
        )
    iv, tag, ct = (_b64_field(fields, name) for name in ("iv", "tag", "ct"))
    if len(iv) != IV_BYTES or len(tag) != TAG_BYTES:
        raise EvalCryptoError(f"malformed envelope in set {set_id}: iv must be 12 bytes and tag 16 bytes")
    try:
        return AESGCM(key).decrypt(iv, ct + tag, aad)
    except InvalidTag:
        raise EvalCryptoError(
            f"cannot decrypt a file of set {set_id}: it was tampered with, or moved from another set "
            "or path; restore the original file"
        ) from None


def _parse_envelope(envelope: str) -> dict[str, Any]:
    try:
        fields = json.loads(envelope)
    except (json.JSONDecodeError, UnicodeDecodeError):
        fields = None
    if (
        not isinstance(fields, dict)
        or fields.get("graftEval") != ENVELOPE_VERSION
        or not all(isinstance(fields.get(k), str) for k in ("kid", "iv", "tag", "ct"))
    ):
        raise EvalCryptoError(
            f"not a {ENVELOPE_VERSION} envelope: the file is damaged or not written by graft-eval"
        )
    return fields


def _b64_field(fields: dict[str, Any], name: str) -> bytes:
    try:
        return base64.b64decode(fields[name], validate=True)
    except (binascii.Error, ValueError):
        raise EvalCryptoError(f"malformed envelope: field {name} is not base64") from None
