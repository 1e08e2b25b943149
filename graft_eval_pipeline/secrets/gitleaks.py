"""gitleaks' default rules, vendored as data (`gitleaks/gitleaks.toml`, MIT), run beside our catalogue.

Why: our catalogue names the formats we wrote rules for; gitleaks' rule set is maintained by the
field and names formats we lack (Telegram bot tokens, Sonar, Twitch, Adafruit, …). Its rules are
RE2 syntax already, each with lower-case `keywords` (a rule runs only where one of its keywords
occurs), an optional minimum `entropy` of the secret and per-rule allowlists; the data is read
as it ships, so `tools/refresh_gitleaks.py` can replace it with a newer copy.

How it stays linear: one RE2 alternation of every keyword (case-insensitive) finds the keyword
hits over the text's UTF-8 bytes; at a hit, each rule of that keyword runs once over a bounded
window (the hit's line, cut to `WINDOW_BEFORE` bytes before and `WINDOW_AFTER` after), and a
rule is not run again on a window that an earlier run of it covered. `DROPPED` lists the rules
that are not run and why: a keyword so common in ordinary code that the rule would run on most
lines (where our catalogue has the format with a tighter anchor), a rule that needs the file
path (the scan sees text only), or one whose look-alike rate on our corpus or real diffs is
above target. A rule's findings are reported under the kind `gl_<rule id>`.
"""

from __future__ import annotations

import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import re2  # type: ignore[import-untyped]

from graft_eval_pipeline.secrets.values import entropy, placeholder_shape

DATA = Path(__file__).parent / "gitleaks" / "gitleaks.toml"
WINDOW_BEFORE = 256
WINDOW_AFTER = 1024
_UNANCHORED = re2._re2.RE2.Anchor.UNANCHORED
AddSpan = Callable[[int, int, str], None]

DROPPED: dict[str, str] = {
    "generic-api-key": "our keyword-assignment rule covers it with look-alike checks; its keywords "
    "(key, api, token, auth, …) occur on most lines of code",
    "vault-service-token": "keyword `s.` occurs ~2,400 times a MB of minified code; our catalogue's "
    "vault_token carries the whole format in its anchor",
    "jwt": "keyword `ey` occurs ~300 times a MB; our catalogue's jwt rule covers it",
    "facebook-page-access-token": "keyword `eaam` occurs ~220 times a MB of base64 image data; our "
    "catalogue's facebook_token covers the format",
    "square-access-token": "keyword `eaaa` is common in base64 data; our catalogue's square_token covers it",
    "twilio-api-key": "keyword `sk` occurs ~170 times a MB; our catalogue's twilio_key covers it",
    "lob-api-key": "keyword `test_` occurs on most test files",
    "pkcs12-file": "a file-path rule without a regex: the scan sees text, not paths",
    "freemius-secret-key": "applies only to some file paths: the scan sees text, not paths",
    "hashicorp-tf-password": "applies only to some file paths: the scan sees text, not paths",
    "kubernetes-secret-yaml": "applies only to some file paths: the scan sees text, not paths",
    "nuget-config-password": "applies only to some file paths: the scan sees text, not paths",
}
"""Rule id -> why it is not run."""


def kind_of(rule_id: str) -> str:
    r"""The redaction kind of a gitleaks rule: `gl_` and the id with `_` for `-` (a `\w+` word)."""
    return "gl_" + rule_id.replace("-", "_").replace(".", "_")


@dataclass(frozen=True)
class _Allow:
    target: str  # "secret", "match" or "line"
    regexes: Callable[[object, bytes, int, int], list[tuple[int, int]]] | None  # one alternation
    stopwords: tuple[bytes, ...]

    def allows(self, secret: bytes, match: bytes, line: bytes) -> bool:
        subject = match if self.target == "match" else line if self.target == "line" else secret
        if self.regexes is not None and self.regexes(_UNANCHORED, subject, 0, len(subject))[0][0] >= 0:
            return True
        lower = secret.lower()
        return any(word in lower for word in self.stopwords)


def without_groups(regex: str) -> str:
    """`regex` with every capture group made non-capturing.

    RE2 answers "is there a match" with its DFA alone, where capture groups need its much slower
    NFA.
    """
    out: list[str] = []
    i, in_class = 0, False
    while i < len(regex):
        char = regex[i]
        if char == "\\":
            out.append(regex[i : i + 2])
            i += 2
            continue
        if in_class:
            in_class = char != "]" or regex[i - 1] == "["
        elif char == "[":
            in_class = True
            if regex[i + 1 : i + 2] == "^":
                out.append("[^")
                i += 2
                if regex[i : i + 1] == "]":
                    out.append("]")
                    i += 1
                continue
        elif char == "(" and regex[i + 1 : i + 2] != "?":
            out.append("(?:")
            i += 1
            continue
        out.append(char)
        i += 1
    return "".join(out)


@dataclass(frozen=True)
class Rule:
    id: str
    kind: str
    test: Callable[[object, bytes, int, int], list[tuple[int, int]]]  # the regex without groups
    match: Callable[[object, bytes, int, int], list[tuple[int, int]]]  # RE2::Match of the regex
    group: int  # the secret's capture group (0: the whole match)
    min_entropy: float
    allow: tuple[_Allow, ...]


def _options() -> Any:
    options = re2.Options()
    options.log_errors = False
    return options


def _allowlists(entries: list[dict[str, object]]) -> tuple[_Allow, ...]:
    found = []
    for entry in entries:
        if entry.get("paths"):
            continue  # a path condition: the scan sees text without its path
        sources = [str(rx) for rx in entry.get("regexes", [])]  # type: ignore[attr-defined]
        regexes = (
            re2.compile("|".join(f"(?:{rx})" for rx in sources), _options())._regexp.Match
            if sources
            else None
        )
        stopwords = tuple(str(word).lower().encode() for word in entry.get("stopwords", []))  # type: ignore[attr-defined]
        found.append(_Allow(str(entry.get("regexTarget", "secret")), regexes, stopwords))
    return tuple(found)


def load_rules(path: Path = DATA) -> tuple[dict[str, object], list[dict[str, object]]]:
    """(global allowlist, rules) as the vendored file has them."""
    with path.open("rb") as handle:
        config = tomllib.load(handle)
    return config.get("allowlist", {}), config.get("rules", [])


@dataclass(frozen=True)
class _Index:
    prefilter: Callable[[object, bytes, int, int], list[tuple[int, int]]]
    by_head: dict[bytes, tuple[tuple[bytes, tuple[Rule, ...]], ...]]  # first 2 lower-case bytes
    global_allow: _Allow
    keywords: tuple[bytes, ...]  # lower-case, what `prefilter` looks for (case-insensitively)


@cache
def rule_ids() -> tuple[str, ...]:
    """The ids of the rules that run, in file order."""
    _, rules = load_rules()
    return tuple(str(r["id"]) for r in rules if r["id"] not in DROPPED)


@cache
def _index() -> _Index:
    glob, rules = load_rules()
    by_keyword: dict[bytes, list[Rule]] = {}
    for raw in rules:
        rule_id = str(raw["id"])
        if rule_id in DROPPED:
            continue
        regex = re2.compile(str(raw["regex"]), _options())
        group = int(raw.get("secretGroup", 0) or (1 if regex.groups else 0))  # type: ignore[call-overload]
        allow = _allowlists(list(raw.get("allowlists", [])))  # type: ignore[call-overload]
        test = re2.compile(without_groups(str(raw["regex"])), _options())._regexp.Match
        min_entropy = float(raw.get("entropy", 0))  # type: ignore[arg-type]
        rule = Rule(rule_id, kind_of(rule_id), test, regex._regexp.Match, group, min_entropy, allow)
        for keyword in raw.get("keywords", []):  # type: ignore[attr-defined]
            by_keyword.setdefault(str(keyword).lower().encode(), []).append(rule)
    alternation = "|".join(re2.escape(k.decode()) for k in sorted(by_keyword, key=len, reverse=True))
    options = _options()
    options.max_mem = 64 << 20
    prefilter = re2.compile(f"(?i:{alternation})", options)._regexp.Match
    by_head: dict[bytes, list[tuple[bytes, tuple[Rule, ...]]]] = {}
    for keyword, keyword_rules in by_keyword.items():
        by_head.setdefault(keyword[:2], []).append((keyword, tuple(keyword_rules)))
    # The global allowlist's regexes and stopwords apply to every secret (its paths do not apply).
    plain = {key: value for key, value in glob.items() if key in ("regexes", "stopwords")}
    global_allow = _allowlists([plain])[0]
    return _Index(prefilter, {k: tuple(v) for k, v in by_head.items()}, global_allow, tuple(by_keyword))


def keywords() -> tuple[bytes, ...]:
    """The lower-case keywords of the running rules, which `first_keyword` finds in any case."""
    return _index().keywords


def first_keyword(data: bytes, pos: int = 0) -> int | None:
    """The byte offset of the first keyword of a running rule at or after `pos`, or None."""
    start = _index().prefilter(_UNANCHORED, data, pos, len(data))[0][0]
    return None if start < 0 else start


def gitleaks_spans(
    data: bytes, add: AddSpan, taken: Callable[[int, int], bool] | None = None, first: int = 0
) -> None:
    """Report, in byte offsets of `data`, the secrets the running gitleaks rules find.

    A match for which `taken(start, end)` holds (inside a secret found otherwise) is not looked at.
    `first`: a byte offset before which no keyword occurs (the search starts there).
    """
    index = _index()
    prefilter, by_head, size = index.prefilter, index.by_head, len(data)
    covered: dict[str, int] = {}  # rule id -> end of the last window it ran over
    pos = first
    while pos < size:
        hit = prefilter(_UNANCHORED, data, pos, size)[0][0]
        if hit < 0:
            return
        pos = hit + 1
        head = data[hit : hit + 2].lower()
        candidates = by_head.get(head)
        if not candidates:
            continue
        lo, hi = _window(data, hit)
        lower = None
        for keyword, rules in candidates:
            if lower is None:
                lower = data[hit : hit + 64].lower()
            if not lower.startswith(keyword):
                continue
            if taken is not None and taken(hit, hit + len(keyword)):
                continue  # the keyword is inside a secret found otherwise (`ghp_` in our GitHub token)
            for rule in rules:
                if covered.get(rule.id, -1) > hit:
                    continue
                covered[rule.id] = hi
                _run(rule, data, lo, hi, index.global_allow, add, taken)


def _window(data: bytes, hit: int) -> tuple[int, int]:
    floor = max(0, hit - WINDOW_BEFORE)
    lo = data.rfind(b"\n", floor, hit) + 1 or floor
    ceiling = min(len(data), hit + WINDOW_AFTER)
    newline = data.find(b"\n", hit, ceiling)
    # The newline itself is in the window: the rules end with `(?:[\s;'"]|$)`.
    return lo, ceiling if newline < 0 else newline + 1


def _run(
    rule: Rule,
    data: bytes,
    lo: int,
    hi: int,
    global_allow: _Allow,
    add: AddSpan,
    taken: Callable[[int, int], bool] | None,
) -> None:
    pos = lo
    while pos < hi:
        # The DFA finds the match (the common case: the keyword is there, the secret is not);
        # only its own bytes are matched again with capture groups, for the secret's group.
        start, end = rule.test(_UNANCHORED, data, pos, hi)[0]
        if start < 0:
            return
        pos = max(end, start + 1)
        if taken is not None and taken(start, end):
            continue
        spans = rule.match(_UNANCHORED, data, start, end)
        if spans[0][0] < 0:
            continue
        group = rule.group if rule.group < len(spans) and spans[rule.group][0] >= 0 else 0
        s_start, s_end = spans[group]
        newline = data.find(b"\n", s_start, s_end)
        s_end = s_end if newline < 0 else newline  # a span never crosses a line
        if s_end <= s_start:
            continue
        raw = data[s_start:s_end]
        secret = raw.decode("utf-8", "replace")
        if rule.min_entropy and entropy(secret) < rule.min_entropy:
            continue
        if placeholder_shape(secret):
            continue
        match, line = data[start:end], data[lo:hi]
        if global_allow.allows(raw, match, line) or any(a.allows(raw, match, line) for a in rule.allow):
            continue
        add(s_start, s_end, rule.kind)
