r"""Stored values that say which run wrote them: a stamp line, then the value's JSON.

Why: an asset value lives at one path per set (`assets/<asset>.json`, sealed in a pilot set), so
a step that loads it cannot tell by the path whether it holds its own run's value, another run's
(two runs of one set that overlapped), or an older one (a machine whose set folder was not the one
the last run wrote). The stamp records the Dagster run id and the SHA-256 of the value's text; the
IO manager compares both with what the instance recorded before it hands the value on.

Format (plain text; the whole file is one AES-GCM envelope in a pilot set, so the stamp cannot be
edited without the key):

    {"graftEvalValue": 1, "runId": "<run id>", "sha256": "<hex of the value text>"}\n
    <the value as JSON>
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

from graft_eval_pipeline.evalset.sets.errors import EvalError

STAMP_FIELD = "graftEvalValue"
STAMP_VERSION = 1


@dataclass(frozen=True)
class Stamp:
    run_id: str
    sha256: str


def value_sha256(value_text: str) -> str:
    return hashlib.sha256(value_text.encode("utf-8")).hexdigest()


def stamp_value(value_text: str, run_id: str) -> tuple[str, Stamp]:
    """The stored text for `value_text` written by `run_id`, and its stamp."""
    stamp = Stamp(run_id=run_id, sha256=value_sha256(value_text))
    header = json.dumps({STAMP_FIELD: STAMP_VERSION, "runId": stamp.run_id, "sha256": stamp.sha256})
    return header + "\n" + value_text, stamp


def unstamp(stored: str, where: str) -> tuple[Stamp, str]:
    """(stamp, value text) of a stored value.

    An EvalError naming `where` when the stamp is missing, damaged, or does not match the value
    (never the value itself).
    """
    header, newline, value_text = stored.partition("\n")
    try:
        raw = json.loads(header) if newline else None
        if not isinstance(raw, dict) or raw.get(STAMP_FIELD) != STAMP_VERSION:
            raise ValueError
        stamp = Stamp(run_id=str(raw["runId"]), sha256=str(raw["sha256"]))
    except (ValueError, KeyError):
        raise EvalError(
            f"{where} records no run that wrote it (written by older code, or edited): "
            "materialize the upstream asset again"
        ) from None
    if value_sha256(value_text) != stamp.sha256:
        raise EvalError(f"{where} does not match its own hash (edited or cut short): materialize it again")
    return stamp, value_text
