"""Prepare: cut the inputs to what the models see, hash them, estimate tokens (design 3.3).

The floor is computed here, after the cuts, because a cut patch lifts it (R14) and the token
estimate depends on it (a trivial floor can cost one more writer call); `generate_card` and
the harness both take the floor from `PreparedInputs`, so they cannot disagree.
"""

from __future__ import annotations

import functools
import hashlib
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from typing import Any

import orjson

from graft_eval_pipeline.card import globs
from graft_eval_pipeline.card.floor import FloorResult, compute_risk_floor
from graft_eval_pipeline.card.models import CardInputs, ChangedFile
from graft_eval_pipeline.card.options import MAX_OUTPUT_TOKENS, PrepareOptions
from graft_eval_pipeline.card.prompts import (
    MAX_CLAIM_CHARS,
    MAX_CLAIMS,
    MAX_GOAL_CHARS,
    PROMPT_VERSION,
    VERIFIER_OUTPUT_SCHEMA,
    VERIFIER_SYSTEM_PROMPT,
    WRITER_OUTPUT_SCHEMA,
    WRITER_SYSTEM_PROMPT,
    canonical_json,
    user_prompt_chars,
)

CUT_MARK = " […]"
CHARS_PER_TOKEN = 3
"""Claude needs about 3.5 to 4 characters a token for prose and about 3 for code: 3 errs high."""

_BUILTIN_GLOBS_DIGEST = hashlib.sha256(
    canonical_json(
        {
            "ciConfig": globs.CI_CONFIG_GLOBS,
            "policyFile": globs.POLICY_FILE_GLOBS,
            "dependencyManifest": globs.DEPENDENCY_GLOBS,
            "infra": globs.INFRA_GLOBS,
            "authSecrets": globs.AUTH_SECRETS_GLOBS,
            "migration": globs.MIGRATION_GLOBS,
            "test": globs.TEST_GLOBS,
            "binaryExtensions": sorted(globs.BINARY_EXTENSIONS),
        }
    ).encode("utf-8")
).hexdigest()
_WRITER_FIXED_CHARS = len(WRITER_SYSTEM_PROMPT) + len(canonical_json(WRITER_OUTPUT_SCHEMA))
_VERIFIER_FIXED_CHARS = len(VERIFIER_SYSTEM_PROMPT) + len(canonical_json(VERIFIER_OUTPUT_SCHEMA))
_LONGEST_CARD = ("x" * MAX_GOAL_CHARS, ["x" * MAX_CLAIM_CHARS] * MAX_CLAIMS)


@dataclass(frozen=True)
class PreparedInputs:
    inputs: CardInputs
    """What the models see: patches and text cut to the limits."""
    floor: FloorResult
    cut_paths: frozenset[str] = field(repr=False)
    """Paths are case content: kept out of repr, like the inputs' own fields."""
    text_cut: bool
    input_hash: str

    @functools.cached_property
    def estimated_tokens(self) -> int:
        """Upper-bound-ish tokens of the whole card, output allowance included (see `_estimate`).

        Computed on first read: the harness's live plan reads it, `generate_card` never does
        (it was 8% of a fake card's instructions).
        """
        return _estimate(self.inputs, self.floor, self.cut_paths, self.text_cut)


def _caps(lengths: Sequence[int], budget: int) -> list[int]:
    """Per-item caps with sum(min(length, cap)) <= budget.

    Short items stay whole, long ones share the rest equally (every file keeps a glimpse instead of
    the first ones taking all).
    """
    caps = list(lengths)
    if sum(lengths) <= budget:
        return caps
    order = sorted(range(len(lengths)), key=lengths.__getitem__)
    left = budget
    for k, i in enumerate(order):
        share = left // (len(order) - k)
        if lengths[i] > share:
            for j in order[k:]:
                caps[j] = share
            break
        left -= lengths[i]
    return caps


def _cut_patch(patch: str, cap: int) -> str:
    """At most `cap` characters, ending at a line break unless that would drop over half."""
    head = patch[:cap]
    newline = head.rfind("\n")
    return head[:newline] if newline > cap // 2 else head


def _cut_text(text: str, cap: int) -> str:
    return text if len(text) <= cap else text[: max(cap - len(CUT_MARK), 0)] + CUT_MARK


def _prepare_files(
    files: list[ChangedFile], limits_patch: int, limits_diff: int
) -> tuple[list[ChangedFile], set[str]]:
    with_patch = [i for i, f in enumerate(files) if f.patch is not None]
    lengths = [min(len(files[i].patch or ""), limits_patch) for i in with_patch]
    caps = _caps(lengths, limits_diff)
    out = list(files)
    cut: set[str] = set()
    for i, cap in zip(with_patch, caps, strict=True):
        patch = files[i].patch or ""
        if len(patch) > cap:
            out[i] = files[i].model_copy(update={"patch": _cut_patch(patch, cap)})
            cut.add(files[i].path)
    return out, cut


def _prepare_text(inputs: CardInputs, limit: int) -> tuple[CardInputs, bool]:
    issue = inputs.issue
    texts = [inputs.pr.title, inputs.pr.body] + ([issue.title, issue.body] if issue else [])
    caps = _caps([len(t) for t in texts], limit)
    if all(len(t) <= c for t, c in zip(texts, caps, strict=True)):
        return inputs, False
    cut = [_cut_text(t, c) for t, c in zip(texts, caps, strict=True)]
    pr = inputs.pr.model_copy(update={"title": cut[0], "body": cut[1]})
    new_issue = issue.model_copy(update={"title": cut[2], "body": cut[3]}) if issue else None
    return inputs.model_copy(update={"pr": pr, "issue": new_issue}), True


@lru_cache(maxsize=64)
def _settings(options: PrepareOptions) -> dict[str, Any]:
    """Everything besides the inputs that changes what the models answer (read-only)."""
    return {
        "promptVersion": PROMPT_VERSION,
        "models": asdict(options.models),
        "efforts": asdict(options.efforts),
        "limits": asdict(options.limits),
        "sensitiveGlobs": {
            "builtInSha256": _BUILTIN_GLOBS_DIGEST,
            "configured": list(options.extra_sensitive_globs),
        },
    }


def _input_hash(inputs: CardInputs, options: PrepareOptions) -> str:
    """SHA-256 of canonical JSON.

    A patch enters as its own SHA-256, which commits to it just as well and spares JSON-escaping up
    to 120,000 characters per case; a file is the array [path, previousPath, status, additions,
    deletions, patchSha256 | null].
    """
    issue = inputs.issue
    files = [
        [
            f.path,
            f.previous_path,
            f.status,
            f.additions,
            f.deletions,
            None if f.patch is None else hashlib.sha256(f.patch.encode("utf-8", "surrogatepass")).hexdigest(),
        ]
        for f in inputs.files
    ]
    document = {
        "inputs": {
            "repositoryFullName": inputs.repository_full_name,
            "pr": inputs.pr.to_json_dict(),
            "issue": issue.to_json_dict() if issue else None,
            "files": files,
            "listingTruncated": inputs.listing_truncated,
            "tooLarge": inputs.too_large,
        },
        **_settings(options),
    }
    return hashlib.sha256(_canonical_bytes(document)).hexdigest()


def _canonical_bytes(document: dict[str, Any]) -> bytes:
    """`canonical_json(document)` as UTF-8 (lone surrogates kept: "surrogatepass").

    orjson with sorted keys writes the same bytes as `json` with those options (the same escapes
    and key order; the document holds no float, whose text the two would write differently),
    about four times faster (the title, the body and every path of a case). What orjson refuses
    (a lone surrogate, an int beyond 64 bits) takes the `json` path. The case hash does the same.
    """
    try:
        return orjson.dumps(document, option=orjson.OPT_SORT_KEYS)
    except orjson.JSONEncodeError:
        return canonical_json(document).encode("utf-8", "surrogatepass")


def _estimate(inputs: CardInputs, floor: FloorResult, cut_paths: frozenset[str], text_cut: bool) -> int:
    """Tokens of a whole card, spec 8.12 reads it back as in = estimate - out.

    writer calls = 2 when the floor is trivial (fast writer, then a possible escalation), else 1;
    in  = ceil((writer calls x (writer system + schema + user) + verifier system + schema +
          verifier user with the longest card the schema allows) / CHARS_PER_TOKEN);
    out = MAX_OUTPUT_TOKENS x (writer calls + 1).
    """
    writer_calls = 2 if floor.risk == "trivial" else 1
    writer_user, verifier_user = user_prompt_chars(inputs, floor, cut_paths, text_cut, *_LONGEST_CARD)
    writer_chars = _WRITER_FIXED_CHARS + writer_user
    verifier_chars = _VERIFIER_FIXED_CHARS + verifier_user
    tokens_in = math.ceil((writer_calls * writer_chars + verifier_chars) / CHARS_PER_TOKEN)
    return tokens_in + MAX_OUTPUT_TOKENS * (writer_calls + 1)


def prepare_card_inputs(inputs: CardInputs, options: PrepareOptions) -> PreparedInputs:
    limits = options.limits
    files, cut = _prepare_files(inputs.files, limits.max_patch_chars, limits.max_diff_chars)
    prepared, text_cut = _prepare_text(inputs, limits.max_text_chars)
    if cut:
        prepared = prepared.model_copy(update={"files": files})
    cut_paths = frozenset(cut)
    floor = compute_risk_floor(inputs, options.extra_sensitive_globs, cut_paths=cut_paths)
    return PreparedInputs(
        inputs=prepared,
        floor=floor,
        cut_paths=cut_paths,
        text_cut=text_cut,
        input_hash=_input_hash(prepared, options),
    )
