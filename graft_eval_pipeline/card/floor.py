"""The rule-based risk floor (design 3.2): a minimum class from paths, sizes and markers.

The floor never reads model output, so a model that is fooled or down cannot lower it.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import get_args

from graft_eval_pipeline.card.globs import (
    AUTH_SECRETS_GLOBS,
    BINARY_EXTENSIONS,
    CI_CONFIG_GLOBS,
    DEPENDENCY_GLOBS,
    INFRA_GLOBS,
    MIGRATION_GLOBS,
    POLICY_FILE_GLOBS,
    TEST_GLOBS,
    GlobIndex,
    glob_matcher,
)
from graft_eval_pipeline.card.models import RISK_ORDER, CardInputs, ChangedFile, RiskClass
from graft_eval_pipeline.card.result import FloorRuleId

FLOOR_RULE_IDS: tuple[FloorRuleId, ...] = get_args(FloorRuleId)
"""R1..R15, in rule order."""
PATH_RULE_IDS: tuple[FloorRuleId, ...] = FLOOR_RULE_IDS[:8]
"""R1..R8: the rules that read only the file list (the sampler's "sensitive" stratum)."""

RULE_CLASS: dict[FloorRuleId, RiskClass] = {
    "ci_config": "sensitive",
    "policy_file": "sensitive",
    "dependency_manifest": "sensitive",
    "infra": "sensitive",
    "auth_secrets": "sensitive",
    "migration": "sensitive",
    "configured_path": "sensitive",
    "test_deleted": "sensitive",
    "test_shrunk": "logic",
    "binary": "logic",
    "size_large": "logic",
    "size_huge": "sensitive",
    "listing_truncated": "sensitive",
    "partial_view": "logic",
    "injection_marker": "logic",
}

SIZE_LARGE_LINES = 300
SIZE_HUGE_LINES = 1_500
SIZE_HUGE_FILES = 50
TEST_SHRUNK_LINES = 5

# Bit i of a path's mask is set when list i matches; the order follows R1..R6, then tests.
_PATH_LISTS: tuple[tuple[FloorRuleId, tuple[str, ...]], ...] = (
    ("ci_config", CI_CONFIG_GLOBS),
    ("policy_file", POLICY_FILE_GLOBS),
    ("dependency_manifest", DEPENDENCY_GLOBS),
    ("infra", INFRA_GLOBS),
    ("auth_secrets", AUTH_SECRETS_GLOBS),
    ("migration", MIGRATION_GLOBS),
)
_TEST_BIT = 1 << len(_PATH_LISTS)
_RULE_BITS = _TEST_BIT - 1
_BIT_RULES = tuple((1 << i, rule) for i, (rule, _) in enumerate(_PATH_LISTS))
_INDEX = GlobIndex([globs for _, globs in _PATH_LISTS] + [TEST_GLOBS])
_SHRINKABLE = frozenset({"modified", "changed", "renamed"})


@dataclass(frozen=True, slots=True)
class FloorResult:
    """Which rules fired, and the first path or source that fired each (for `show` only).

    `fired_by` names the first path or source ("title", "body", "issue", "pr", "listing") that fired
    each rule; it is for display in `show`, never for reports (nor for repr).
    """

    risk: RiskClass
    rules: tuple[FloorRuleId, ...]
    fired_by: dict[FloorRuleId, str] = field(default_factory=dict, repr=False)


# R15. Every branch holds "instruction", "review" or "classif", so text without any of them
# (after lower-casing) skips the regex: a diff is scanned four times at memory speed instead of
# once at regex speed.
_INJECTION = re.compile(
    r"\b(?:ignore|disregard|forget|override) (?:all |any )?(?:of )?(?:the |your |my )?"
    r"(?:previous|prior|above|earlier|preceding|former|original|system) instructions?\b"
    r"|\bnote to (?:the |all |any )?(?:ai|llm|automated|bot|model) ?(?:code )?review(?:er|ers|bot|bots)?\b"
    r"|\b(?:ai|llm|automated|bot) (?:code )?reviewers? ?[:,-] ?(?:please )?"
    r"(?:approve|accept|lgtm|pass|ignore|skip|classify|mark|rate|treat)\b"
    r"|\bclassify (?:this|the|it)(?: (?:pr|pull request|change|changes|diff|patch|commit|one))? as\b"
)


_MAX_CACHED_CHARACTERS = 65_536
"""Per-character caches stop growing here (a few MB each). Real text meets a few hundred
distinct non-ASCII characters, a CJK translation a few thousand; one hostile case holding
every code point would otherwise keep ~240 MB for the life of the process."""


class _FormatChars(dict[int, int | None]):
    """Unicode category Cf (zero-width, bidi controls, tags) -> deleted, for str.translate.

    Filled per code point when first met: listing every Cf character up front cost each
    process 35-150 ms (4-15% of a 1,000-case fake run) as soon as one text was not ASCII.
    """

    def __missing__(self, code_point: int) -> int | None:
        kept = None if unicodedata.category(chr(code_point)) == "Cf" else code_point
        if len(self) < _MAX_CACHED_CHARACTERS:
            self[code_point] = kept
        return kept


_FORMAT_CHARS = _FormatChars()


def normalize_text(text: str) -> str:
    """NFKC, drop format characters, lower-case, fold white space (design 3.2, R15)."""
    if not text.isascii():
        text = unicodedata.normalize("NFKC", text).translate(_FORMAT_CHARS)
    return " ".join(text.lower().split())


def _could_inject(text: str) -> bool:
    """False when no phrase can match: the text holds none of the keywords every branch needs.

    ASCII text (the common case) is lower-cased and searched. Other text is searched in its
    letters-only view (`_ascii_view`), which holds every keyword `normalize_text` could make; so
    a non-ASCII diff without a keyword skips the normalisation and the regex as ASCII does.
    """
    if text.isascii():
        low = text.lower()
        return "instruction" in low or "review" in low or "classif" in low
    view = _ascii_view(text)
    return b"instruction" in view or b"review" in view or b"classif" in view


_ASCII = bytes(range(0x80))
_NOT_ASCII = bytes(range(0x80, 0x100))


class _GivesNoLetter(dict[str, bool]):
    """Non-ASCII character -> True when its NFKC form holds no ASCII letter.

    Filled per character when first met, up to `_MAX_CACHED_CHARACTERS` (as `_FormatChars`); a
    patch has a few dozen distinct non-ASCII characters.
    """

    def __missing__(self, char: str) -> bool:
        normal = unicodedata.normalize("NFKC", char)
        gives_none = not any(c.isascii() and c.isalpha() for c in normal)
        if len(self) < _MAX_CACHED_CHARACTERS:
            self[char] = gives_none
        return gives_none


_GIVES_NO_LETTER = _GivesNoLetter()


def _ascii_view(text: str) -> bytes:
    """The text's ASCII view for the keyword search, lower-cased, at C speed.

    The text's ASCII characters alone when that provably holds every keyword `normalize_text(text)`
    holds; otherwise NFKD with every non-ASCII character dropped. Both are C speed, with no
    per-character work on the ASCII part.

    The NFKD view holds every keyword of the normal form: its letters are ASCII letters of
    NFKC(text) with only Cf characters between them; NFKC composes only into non-ASCII
    characters, so each of those letters is in NFKD(text) too, with nothing between them but
    non-ASCII characters, which the view drops. Lower-casing maps no non-ASCII character of an
    NFKD text to ASCII (only U+0130 and U+212A would, and NFKD decomposes both). The view may
    hold more (accents split off, other scripts dropped): then the exact path decides.

    The ASCII characters alone hold as much when no non-ASCII character of the text gives an
    ASCII letter under NFKC (tested per distinct character; the first test, on the NFKD of all
    of them at once, settles other scripts and punctuation in one call). Then every ASCII letter
    of NFKC(text) is one of the text's own: normalisation never reorders or adds ASCII
    characters; composition never yields an ASCII character nor takes one as its second part;
    and a letter that NFKC(c) composes away is composed away in any context too, since a mark
    that canonical ordering moves before c's own has a lower combining class, so it composes
    first or does not block. What lies between two of those letters in the text is then non-ASCII
    (an ASCII character there would stay, or compose into a non-Cf character), and the view drops
    it. Lower-casing the normal form gives an ASCII letter from a non-ASCII character only for
    U+0130 ("i" and a combining dot, which no keyword can hold: each "i" in one is followed by a
    letter), since U+212A is not NFKC. Testing the whole non-ASCII part under NFKC at once would
    not do: a mark joined to an ASCII letter in the text could compose, in that part alone, with
    a full-width letter from elsewhere and hide it.
    """
    raw = text.encode("utf-8", "surrogatepass")
    others = raw.translate(None, _ASCII).decode("utf-8", "surrogatepass")  # a few % of a patch
    letters = unicodedata.normalize("NFKD", others).encode("ascii", "ignore")
    if letters.lower() == letters.upper() or all(_GIVES_NO_LETTER[c] for c in set(others)):
        return raw.translate(None, _NOT_ASCII).lower()
    return unicodedata.normalize("NFKD", text).encode("ascii", "ignore").lower()


def addresses_ai_reviewer(text: str) -> bool:
    """True when the text, normalized, holds an instruction addressed to an AI reviewer."""
    return _could_inject(text) and _INJECTION.search(normalize_text(text)) is not None


def _added_lines(patch: str) -> str:
    return "\n".join(line[1:] for line in patch.split("\n") if line.startswith("+"))


def _injection_source(inputs: CardInputs) -> str | None:
    texts = [("title", inputs.pr.title), ("body", inputs.pr.body)]
    if inputs.issue is not None:
        texts += [("issue", inputs.issue.title), ("issue", inputs.issue.body)]
    for source, text in texts:
        if addresses_ai_reviewer(text):
            return source
    for f in inputs.files:
        if f.patch and _could_inject(f.patch) and addresses_ai_reviewer(_added_lines(f.patch)):
            return f.path
    return None


def _is_binary(path: str) -> bool:
    name = path.rsplit("/", 1)[-1]
    return "." in name and name.rsplit(".", 1)[1].lower() in BINARY_EXTENSIONS


def _scan_paths(
    files: Sequence[ChangedFile], extra_sensitive_globs: Iterable[str]
) -> tuple[dict[FloorRuleId, str], list[int]]:
    """R1-R8 (rule -> first path that fired it) and, per file, whether its path is a test."""
    fired: dict[FloorRuleId, str] = {}
    is_tests: list[int] = []
    configured = glob_matcher(extra_sensitive_globs) if extra_sensitive_globs else None
    mask_of = _INDEX.mask
    for f in files:
        masks = [(f.path, mask_of(f.path))]
        if f.previous_path:
            masks.append((f.previous_path, mask_of(f.previous_path)))
        for path, mask in masks:
            if mask & _RULE_BITS:
                for bit, rule in _BIT_RULES:
                    if mask & bit:
                        fired.setdefault(rule, path)
            if configured is not None and configured(path):
                fired.setdefault("configured_path", path)
        is_test = masks[0][1] & _TEST_BIT
        was_test = masks[-1][1] & _TEST_BIT
        status = f.status
        if (status == "removed" and is_test) or (status == "renamed" and was_test and not is_test):
            fired.setdefault("test_deleted", f.path)
        is_tests.append(is_test)
    return fired, is_tests


def path_rules(
    files: Sequence[ChangedFile], extra_sensitive_globs: Iterable[str] = ()
) -> dict[FloorRuleId, str]:
    """The path rules R1-R8 alone: each that fired, in rule order, with the first path that fired it.

    They read only paths, previous paths and statuses (never patches or PR text), so the
    sampler calls this on a file listing; `compute_risk_floor` gives the same R1-R8.
    """
    fired, _ = _scan_paths(files, tuple(extra_sensitive_globs))
    return {r: fired[r] for r in PATH_RULE_IDS if r in fired}


def compute_risk_floor(
    inputs: CardInputs,
    extra_sensitive_globs: Sequence[str] = (),
    *,
    cut_paths: frozenset[str] = frozenset(),
) -> FloorResult:
    """The floor of one PR. `cut_paths` are the files whose patch `prepare` shortened (R14)."""
    fired, is_tests = _scan_paths(inputs.files, extra_sensitive_globs)
    for f, is_test in zip(inputs.files, is_tests, strict=True):
        if f.status in _SHRINKABLE and is_test and f.deletions - f.additions >= TEST_SHRUNK_LINES:
            fired.setdefault("test_shrunk", f.path)
        if f.patch is None:
            if _is_binary(f.path):
                fired.setdefault("binary", f.path)
            elif not inputs.too_large:
                fired.setdefault("partial_view", f.path)
        elif f.path in cut_paths and not inputs.too_large:
            fired.setdefault("partial_view", f.path)

    lines = inputs.pr.additions + inputs.pr.deletions
    if lines > SIZE_HUGE_LINES or inputs.pr.changed_files > SIZE_HUGE_FILES:
        fired["size_huge"] = "pr"
    elif lines > SIZE_LARGE_LINES:
        fired["size_large"] = "pr"
    if inputs.listing_truncated:
        fired["listing_truncated"] = "listing"
    source = _injection_source(inputs)
    if source is not None:
        fired["injection_marker"] = source

    rules = tuple(r for r in FLOOR_RULE_IDS if r in fired)
    risk: RiskClass = max((RULE_CLASS[r] for r in rules), key=RISK_ORDER.__getitem__, default="trivial")
    return FloorResult(risk=risk, rules=rules, fired_by={r: fired[r] for r in rules})
