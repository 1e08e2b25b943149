"""What a report may show of a case's export stratum: opaque labels, never the sealed text.

A pilot case records its stratum's `frame` (the export's population: repository owner and name,
merge dates, seed) and `key` inside the sealed case. Repository names of a pilot are as
confidential as its content, so rows, report.json/md/html and Dagster metadata carry
`stratum_label`'s version instead: the frame becomes `frame-<12 hex>`, an HMAC-SHA256 of it under
a key derived from the set's key (stable from run to run of a set, and no guess of a repository
name can be checked against it without the key); the key is kept when it is one of the export's
fixed labels (`S/docs`: a size and a path class, no text of the case) and becomes
`stratum-<12 hex>` otherwise. Equal frames and keys give equal labels, so the post-stratified
estimates pool exactly the cases they pooled before. The synthetic set has no key and its cases
no strata; a stratum there is labelled by an unkeyed hash, by the same rule.
"""

from __future__ import annotations

import hashlib
import hmac
from typing import get_args

from graft_eval_pipeline.evalset.sets.case_schema import CaseStratum
from graft_eval_pipeline.evalset.sets.sample import PathStratum, SizeStratum, stratum_key

FIXED_STRATUM_KEYS = frozenset(
    stratum_key(s, p) for s in get_args(SizeStratum) for p in get_args(PathStratum)
)
_DOMAIN = b"graft-eval stratum labels v1"
_LABEL_HEX = 12


def _digest(label_key: bytes | None, kind: str, text: str) -> str:
    message = kind.encode() + b"\0" + text.encode("utf-8", "surrogatepass")
    if label_key is None:
        return hashlib.sha256(_DOMAIN + b"\0" + message).hexdigest()[:_LABEL_HEX]
    subkey = hmac.new(label_key, _DOMAIN, hashlib.sha256).digest()
    return hmac.new(subkey, message, hashlib.sha256).hexdigest()[:_LABEL_HEX]


def stratum_label(stratum: CaseStratum, label_key: bytes | None) -> CaseStratum:
    """`stratum` as reports show it (see the module docstring); `label_key`: the set's key."""
    key = (
        stratum.key
        if stratum.key in FIXED_STRATUM_KEYS
        else f"stratum-{_digest(label_key, 'key', stratum.key)}"
    )
    return stratum.model_copy(
        update={"frame": f"frame-{_digest(label_key, 'frame', stratum.frame)}", "key": key}
    )


def repository_label(repository: str, label_key: bytes | None) -> str:
    """A pilot case's repository as reports show it.

    `repo-<12 hex>`, by the same keyed hash as the frame (equal repositories, equal labels; the name
    itself never leaves the sealed case).
    """
    return f"repo-{_digest(label_key, 'repository', repository)}"
