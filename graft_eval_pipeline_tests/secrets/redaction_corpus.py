"""How the secret corpora are redacted and scored, shared by test_corpus.py and test_heldout.py.

Each corpus line is redacted as the added lines of a patch, as export redacts a diff. A secret
counts as found when it is gone from the output (the `[REDACTED:kind]` markers aside, so that
`password` is not found in `[REDACTED:url_password]`) and the patch keeps its line count; a
look-alike counts as touched when the patch comes out changed at all.

An entry with a `hunk` (whispers' corpus: the whole fixture file) is redacted as that file, added
whole, and scored on its own lines alone (`at`: the index of `line`'s first line in the hunk), so
a value whose key stands on the line before is seen with it, as in a real diff.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

from graft_eval_pipeline.evalset.export.redact import RedactOptions, redact_text

MARKER = re.compile(r"\[REDACTED:\w+\]")


def load(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def as_patch(line: str) -> str:
    lines = line.split("\n")
    return f"@@ -0,0 +1,{len(lines)} @@\n" + "\n".join("+" + part for part in lines)


def redact(line: str) -> tuple[str, str, Counter[str]]:
    """(the patch, its redacted form, the redaction counts by kind)."""
    patch = as_patch(line)
    counts: Counter[str] = Counter()
    return patch, redact_text(patch, RedactOptions(), counts, is_patch=True), counts


def secrets_of(entry: dict[str, object]) -> list[str]:
    """The entry's `secret`, or its `secrets` when it holds several."""
    listed = entry.get("secrets")
    return [str(s) for s in listed] if isinstance(listed, list) else [str(entry["secret"])]


def _pieces(secret: str) -> list[str]:
    """What must be gone: the secret, or each line of 8 characters or more of one that spans lines."""
    if "\n" not in secret:
        return [secret]
    return [part for part in secret.split("\n") if len(part) >= 8]


def _scored(entry: dict[str, object]) -> tuple[str, str, Counter[str]] | None:
    """(the entry's lines as added, the same lines redacted, counts); None when the line count changes.

    For a hunk entry the counts are those of the whole hunk.
    """
    line = str(entry["line"])
    hunk = entry.get("hunk")
    patch, out, counts = redact(str(hunk) if isinstance(hunk, str) else line)
    if out.count("\n") != patch.count("\n"):
        return None
    if not isinstance(hunk, str):
        return patch, out, counts
    start = 1 + int(str(entry["at"]))
    stop = start + line.count("\n") + 1
    return (
        "\n".join(patch.split("\n")[start:stop]),
        "\n".join(out.split("\n")[start:stop]),
        counts,
    )


def missed(entry: dict[str, object]) -> list[str]:
    """The entry's secrets (or lines of them) that survive redaction; all of them when the line count changes.

    `also_in_line` (held-out entries) counts the copies of a secret that are not the secret itself
    (a password equal to the user name beside it); those may stay.
    """
    scored = _scored(entry)
    if scored is None:
        return secrets_of(entry)
    left = MARKER.sub("", scored[1])
    extra = entry.get("also_in_line", {})
    if not isinstance(extra, dict):
        raise TypeError(f"{entry.get('rule')}: also_in_line must map a secret to its other copies' count")
    allowed = {str(k): int(v) for k, v in extra.items()}
    return [
        piece
        for secret in secrets_of(entry)
        for piece in _pieces(secret)
        if left.count(piece) > allowed.get(piece, 0)
    ]


def found(entry: dict[str, object]) -> bool:
    return not missed(entry)


def touched(entry: dict[str, object]) -> tuple[bool, Counter[str]]:
    """Whether redaction changed the entry's line at all, and the counts by kind."""
    scored = _scored(entry)
    if scored is None:
        return True, redact(str(entry.get("hunk", entry["line"])))[2]
    patch, out, counts = scored
    return out != patch, counts


def is_lookalike(negative: dict[str, object]) -> bool:
    """A held-out negative that counts as a look-alike.

    Not one that another rule of Nosey Parker's default set matches (`matched_by`) or that NP's
    rule file marks as a secret its rule misses (`np_note`): NP's negatives mean "this rule must
    not fire", not "no secret here".
    """
    return "matched_by" not in negative and "np_note" not in negative


def touched_entries(entries: list[dict[str, object]], label: str) -> list[str]:
    """One line for each entry redaction changed: its `label` field, its line and the counts by kind."""
    hits = []
    for entry in entries:
        changed, counts = touched(entry)
        if changed:
            hits.append(f"{entry[label]}: {entry['line']!r} -> {dict(counts)}")
    return hits
