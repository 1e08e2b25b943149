"""AES-256-GCM envelopes for pilot-set files (spec E6, 6.3).

The AAD is `<setId>/<path relative to the set dir>`, so a sealed file cannot be moved to another
set or case. A wrong key is caught before any decryption by comparing it with set.json's key id
(`store.open_set`); an envelope whose own `kid` differs is a damaged or foreign file. Every error
names the file (the AAD's path) and holds neither plaintext nor anything else read from the file.
cryptography is imported by the functions that seal and open (a synthetic set needs neither).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import os
from typing import TYPE_CHECKING, Any

from graft_eval_pipeline.evalset.sets.errors import EvalCryptoError, EvalError
from graft_eval_pipeline.evalset.sets.untrusted import UntrustedInputError, load_json

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

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
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM  # pilot sets only: not at start-up

    iv = os.urandom(IV_BYTES)
    sealed = AESGCM(key).encrypt(iv, plaintext.encode("utf-8"), aad.encode("utf-8"))
    return format_envelope(key_id(key), iv, sealed[-TAG_BYTES:], sealed[:-TAG_BYTES])


def open_envelope(envelope: str | bytes, key: bytes, aad: str) -> str:
    """Decrypt an envelope (the file's text or bytes) sealed for `aad` (`<setId>/<relative path>`)."""
    plaintext = open_envelope_bytes(envelope, key, aad.encode("utf-8"))
    try:
        return plaintext.decode("utf-8")
    except UnicodeDecodeError:
        raise EvalCryptoError(
            f"{_file_of(aad.encode('utf-8'))}: the decrypted content is not UTF-8 text; {RESTORE} "
            "or write it again"
        ) from None


def open_envelope_bytes(envelope: str | bytes, key: bytes, aad: bytes) -> bytes:
    """The decrypt path itself, on bytes (the Wycheproof vectors carry binary messages).

    Every failure names the file (the AAD's path) and nothing read from it. A key id in the
    envelope that is not the key's means a damaged file or one sealed elsewhere: `open_set`
    has already compared the key with set.json's key id, so it is not a wrong GRAFT_EVAL_KEY.
    """
    from cryptography.exceptions import InvalidTag
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    where = _file_of(aad)
    fields = _parse_envelope(envelope, where)
    if fields["kid"] != key_id(key):
        raise EvalCryptoError(f"{where}: {CANNOT_DECRYPT}")
    iv, tag, ct = (_b64_field(fields, name, where) for name in ("iv", "tag", "ct"))
    if len(iv) != IV_BYTES or len(tag) != TAG_BYTES:
        raise EvalCryptoError(
            f"{where}: cannot decrypt: malformed envelope (iv must be 12 bytes and tag 16); {RESTORE}"
        )
    try:
        return AESGCM(key).decrypt(iv, ct + tag, aad)
    except InvalidTag:
        raise EvalCryptoError(f"{where}: {CANNOT_DECRYPT}") from None


RESTORE = "restore the original file"
CANNOT_DECRYPT = f"cannot decrypt: tampered, moved from another set, or sealed with another key; {RESTORE}"


def _file_of(aad: bytes) -> str:
    """The file an AAD seals: the part after `<setId>/` (the whole AAD if it has no slash)."""
    return aad.decode("utf-8", errors="replace").split("/", 1)[-1]


def _parse_envelope(envelope: str | bytes, where: str) -> dict[str, Any]:
    try:  # the one reader of untrusted JSON: strict UTF-8, bounded nesting and numbers
        fields = load_json(envelope, where)
    except UntrustedInputError:  # named below as an envelope problem
        fields = None
    if (
        not isinstance(fields, dict)
        or fields.get("graftEval") != ENVELOPE_VERSION
        or not all(isinstance(fields.get(k), str) for k in ("kid", "iv", "tag", "ct"))
    ):
        raise EvalCryptoError(
            f"{where}: cannot decrypt: not an {ENVELOPE_VERSION} envelope (damaged, truncated or not "
            f"written by graft-eval); {RESTORE}"
        )
    return fields


def _b64_field(fields: dict[str, Any], name: str, where: str) -> bytes:
    try:
        return base64.b64decode(fields[name], validate=True)
    except (binascii.Error, ValueError):
        raise EvalCryptoError(
            f"{where}: cannot decrypt: malformed envelope (field {name} is not base64); {RESTORE}"
        ) from None


def cipher(key: bytes) -> AESGCM:
    """One AES-GCM instance for many short records (the set journal's lines)."""
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    return AESGCM(key)


def seal_compact(aead: AESGCM, plaintext: bytes, aad: bytes) -> bytes:
    """A short record sealed as one base64 line (iv, ciphertext, tag): no JSON to parse back."""
    iv = os.urandom(IV_BYTES)
    return base64.b64encode(iv + aead.encrypt(iv, plaintext, aad))


def open_compact(aead: AESGCM, line: bytes, aad: bytes) -> bytes | None:
    """The plaintext of a `seal_compact` line, or None when it does not open (damaged, moved)."""
    from cryptography.exceptions import InvalidTag

    try:
        raw = base64.b64decode(line, validate=True)
    except (binascii.Error, ValueError):
        return None
    if len(raw) < IV_BYTES + TAG_BYTES:
        return None
    try:
        return aead.decrypt(raw[:IV_BYTES], raw[IV_BYTES:], aad)
    except InvalidTag:
        return None
