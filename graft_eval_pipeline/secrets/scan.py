r"""Finds secrets in one text: catalogue tokens, structured secrets and secret-named assignments.

Why one prefilter: 150+ rules run one after the other would each scan the whole text; instead
every rule contributes an *anchor* (its literal prefix and the start of its body, or a keyword
followed by an assignment operator) to one RE2 alternation, which a DFA scans once in linear
time, over the text's UTF-8 bytes (RE2 would re-encode a `str` at every call). Anchors are rare
in ordinary code, and only at an anchor does the rule's own `re` pattern run (with the
look-behind boundaries RE2 lacks) and the value checks of `values.py`.

Why the scan stays linear in its input (minified bundles are one line of megabytes):
- an anchor whose token starts with a word character starts at a word boundary (`\b`), so a
  prefix never matches inside a longer word or a base64 run, and the DFA's states stay few;
- a prefix shorter than four characters (`s.`, `00`, `SK`) carries its whole token format and
  the right boundary in the anchor, so ordinary text (`this.addEventListener`) is no hit;
- a rule looks only at a bounded window around its hit (`_window`: the hit's line, cut to
  `WINDOW_BEFORE` characters before and `WINDOW_AFTER` after), never to the end of a line; a
  token that runs past the window is redacted to its end once and the scan resumes after it.

Every span stays inside one line, except private-key blocks, which are redacted line by line
(each line keeps its diff prefix), so a patch keeps its line count. Spans are reported through
`add(start, end, kind)`; the caller resolves overlaps and splices.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache

import re2  # type: ignore[import-untyped]

from graft_eval_pipeline.secrets.catalogue import BASIC_AUTH_OK, TOKENS, Token
from graft_eval_pipeline.secrets.entropy import (
    Candidates,
    holds_candidate,
    is_high_entropy_token,
    tokens_near_keyword,
)
from graft_eval_pipeline.secrets.utf8 import Utf8Offsets
from graft_eval_pipeline.secrets.values import (
    MIN_PASSWORD_LENGTH,
    code_call,
    connection_password,
    counted,
    flag_password,
    identifier_name,
    is_placeholder,
    looks_secret,
    passphrase,
    password_word,
    placeholder_shape,
    random_like,
    short_password,
)

_A = re.ASCII
AddSpan = Callable[[int, int, str], None]
_Match = Callable[[object, bytes, int, int], list[tuple[int, int]]]
_UNANCHORED = re2._re2.RE2.Anchor.UNANCHORED
_ANCHOR_START = re2._re2.RE2.Anchor.ANCHOR_START
_DIFF_PREFIXES = frozenset("+- ")

WINDOW_BEFORE = 256
"""Characters before a hit a rule may look at (a secret's name; a token whose anchor is inside it)."""
WINDOW_AFTER = 4096
"""Characters after a hit a rule may look at: the longest assigned value considered. A token with
a known format that runs past it is redacted to its end all the same."""


def _window(text: str, pos: int, before: int = WINDOW_BEFORE, after: int = WINDOW_AFTER) -> tuple[int, int]:
    """(lo, hi): the line holding `pos`, cut to `before` characters before it and `after` after.

    The one place a rule learns how far it may look: every handler matches inside the window it
    is given (or asks for the next line's window), so the characters a scan examines are the text
    once (the prefilter) plus a bounded window per hit.
    """
    floor = max(0, pos - before)
    lo = text.rfind("\n", floor, pos) + 1 or floor
    ceiling = min(len(text), pos + after)
    newline = text.find("\n", pos, ceiling)
    return lo, ceiling if newline < 0 else newline


def _cut(text: str, hi: int) -> bool:
    """Is `hi` a window's edge inside a line (rather than the line's end)?"""
    return hi < len(text) and text[hi] != "\n"


# --- the keyword family -----------------------------------------------------------------------
# Lower-case forms; `[_.\- ]?` joins words so snake, kebab, camel (matched case-insensitively),
# upper and dotted names all match. A name must END with one of these (plus a decoration), so
# `token_count`, `password_hash`, `tokenizer` and `secretary` are not secret names.
_SEP = r"[_.\- ]?"
_NOT_PROVIDER_WORDS = frozenset(
    {"age", "amazon", "astra", "aws", "connection", "dependency", "harness", "intra42", "jwt", "linear"}
    | {"lob", "private", "readme", "render", "teams", "vault"}
)
_PROVIDERS = "|".join(
    sorted({t.kind.split("_")[0] for t in TOKENS} - _NOT_PROVIDER_WORDS, key=len, reverse=True)
)
"""The providers the catalogue names, as words before `key` (`slackKey`, `GITLAB_KEY`, `stripe_key`):
a provider's key need not have a format we know. Less the kinds that are ordinary words
(`linear`, `render`, `teams`, …) or qualifiers already (`private`, `jwt`), and `aws`, whose
`AWSKEY = "AKIA…"` lines in real diffs are test values of a wrong length (tried: 12 more rewritten
lines)."""
_KEY_QUALIFIERS = (
    "api|access|secret|private|priv|client|auth|account|service|signing|sign|encryption|encrypt|master|"
    "app|application|consumer|license|licence|subscription|admin|session|shared|sharedaccess|storage|hmac|"
    "webhook|db|database|crypto|cipher|aes|jwt|sas|ingest|deploy|runner|registration|integration|"
    "server|pass|rest|management|unseal|tls|stream|iam|cloud|primary[_.\\- ]?access|secondary[_.\\- ]?access|"
    + _PROVIDERS
)
_STRONG = (
    r"passw(?:or)?d|passwort|passphrase|kennwort|contrase(?:n|\xf1)a|senha|pwd|secret|token|sharedaccesssignature|"
    rf"(?:{_KEY_QUALIFIERS}){_SEP}key"
)
# `unseal`: `vault operator unseal <key>` (a Vault unseal key follows the word, no name).
_WEAK_NEAR = r"pass|auth|cred(?:entials?|s)?|unseal"
# `pw`: an abbreviation of password (`pw = "…"`, `db_pw`), a whole word of a name only, never a
# keyword of the high-entropy rule (two letters occur about every thousand characters of base64).
_WEAK_ANCHORED = rf"{_WEAK_NEAR}|pw|pat"
# `<provider>_key`: the last word of a snake- or kebab-case name (`clarifai_key`, `GIT-KEY`), with a
# random value only (`_random_key`). Its anchor asks for the value's first 20 characters: `_key`
# ends half the names in code (`cache_key`, `primary_key=True`), rarely with such a value.
_WEAK = rf"{_WEAK_ANCHORED}|[_\-]key"
_PASSWORD_KW = re.compile(r"passw(?:or)?d|passwort|passphrase|kennwort|pwd|secret", _A | re.IGNORECASE)
_DECOR = (
    r"(?:[_.\-]?(?:[0-9]{1,4}|b64|base64|hex|raw|str|string|plain|plaintext|value|val|enc|encoded|base|"
    r"prod|production|dev|development|stage|staging|test|live|new|old|default|local))?"
)
_CLOSE = r"(?:\[[0-9]*\])?[\"'`\]*\\]{0,3}"
_TYPE = (
    r"(?:[ \t]*:[ \t]*[A-Za-z_][\w.\[\]<>|?!]*[ \t]*(?==)"
    r"|(?P<type_word>[ \t]+[A-Za-z_][\w.\[\]]*[ \t]*(?==)))?"
)
_OPS = r"(?P<op>:::=|::=|:=|\?\?=|\|\|=|===|!==|==|!=|[?+.|&]=|=>|<-|=|:|>|\(|,|[ \t]+(?=[\"'`]))"
# RE2 has no look-ahead: its anchor is looser (the `re` pattern below decides).
_TYPE_RE2 = r"(?:(?:[ \t]+|[ \t]*:[ \t]*)[A-Za-z_][\w.\[\]<>|?!]*[ \t]*)?"
# Every accepted value starts with MIN_PASSWORD_LENGTH characters without white space (a quoted
# passphrase's first word is shorter only where it fails the value checks), and only `:` (YAML
# block scalars, type annotations) and `>` (an element's text on the next line) may take it from
# elsewhere: after any other operator the anchor asks for the value's first characters, so a
# call (`token(self)`), a list (`token, and`) or a short right-hand side is no hit.
# A quoted value may hold spaces after its first character (`'open sesame'`, a passphrase): after
# a quote, the first characters are a non-space then any but a quote or a line end.
_QUOTED_START_RE2 = rf"(?:\S{{{MIN_PASSWORD_LENGTH}}}|[^\s\"'`\\][^\"'`\r\n]{{{MIN_PASSWORD_LENGTH - 1}}})"
_VALUE_RE2 = rf"[ \t]*(?:[@bBrRuUfF$]?\\?[\"'`]{_QUOTED_START_RE2}|\S{{{MIN_PASSWORD_LENGTH}}})"
_OPS_RE2 = (
    r"(?:(?::::=|::=|:=|\?\?=|\|\|=|===|!==|==|!=|[?+.|&]=|=>|<-|=|\(|,)"
    rf"{_VALUE_RE2}|[ \t]+[\"'`]{_QUOTED_START_RE2}|:|>)"
)

_ASSIGN = re.compile(
    rf"(?i:(?P<kw>{_STRONG}|{_WEAK}){_DECOR})(?P<close>{_CLOSE})[ \t]*{_TYPE}[ \t]*{_OPS}[ \t]*",
    _A,
)
_WEAK_KW = re.compile(_WEAK, _A | re.IGNORECASE)
_WORD_KEYWORDS = frozenset(("pw", "pat"))
_SNAKE_KEY_KW = frozenset(("_key", "-key"))
_SNAKE_KEY = re.compile(r"(?:[A-Za-z][A-Za-z0-9]*[_\-]){1,3}(?i:key)", _A)
# Keys that are no secrets whatever their value: a cache's, a table's, a message's, a public key's
# fingerprint (`gpg_key`, `host_key`).
_NOT_SECRET_KEYS = re.compile(
    r"(?:^|[_\-])(?:cache|sort|primary|foreign|partition|idempotency|object|row|hash|lookup|map|dict|"
    r"range|shard|routing|dedup|dedupe|request|cursor|index|field|column|group|message|event|lock|queue|"
    r"bucket|file|path|search|translation|i18n|locale|label|unique|composite|redis|memcache|gpg|pgp|host|"
    r"verify|verification|state|list|item|node|entry|record|query|s3|ssh|known)[_\-]key\Z",
    _A | re.IGNORECASE,
)
_TYPE_THEN_EQ = re.compile(r"[A-Za-z_][\w.\[\]<>|?]*[ \t]*=(?!=)[ \t]*", _A)
# Words that end in `pass` without being a password.
_PASS_WORDS = re.compile(
    r"(?:by|com|sur|over|under|tres|encom|render|sub|multi|first|second|one|two|single|bi|mass|ex|im)pass$",
    _A | re.IGNORECASE,
)
_BLOCK_SCALAR = frozenset(("|", "|-", "|+", ">", ">-", ">+"))
_NAME_CHAR_STR = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-$@"
_NAME_CHARS = frozenset(_NAME_CHAR_STR)
# Names that end like a secret but hold something else: a whole word of the name (its start, after
# `_.-`, or a camel-case hump), so `admin_key` is no `min_key` and `keypad_token` no `pad_token`.
_NOT_SECRET_NAMES = re.compile(
    r"(?:^|[_.\-]|(?-i:(?<=[a-z])(?=[A-Z])))(?:page|next|prev|previous|cancel|cancellation|continuation|csrf|xsrf|sync|resume|pagination|"
    r"lexer|parser|current|cur|last|first|end|start|eof|bos|eos|pad|unk|mask|sep|cls|special|max|min|"
    r"num|input|output|total|id|public|pub)[_.\-]?(?:token|key)$",
    _A | re.IGNORECASE,
)

# A secret-ish name, ending where the name ends (`accessToken)`, `# API token:`): the region of
# the high-entropy rule (`entropy.py`). RE2 has no look-ahead: its anchor takes the next character.
# Its keywords are the assignment rule's; a bare `key` is not one (two thirds of the names that
# end in a keyword in real diffs end in `key`: `cache_key`, `sort_key`, `key2`, …).
_NEAR_KW = rf"(?i:(?:{_STRONG}|{_WEAK_NEAR}){_DECOR})"
_NAME_END = re.compile(rf"{_NEAR_KW}(?![A-Za-z0-9_])", _A)
_NAME_END_RE2 = rf"{_NEAR_KW}(?:[^A-Za-z0-9_]|$)"
_NAME_TAIL = 48


def _secret_name_at(text: str, start: int, lo: int) -> bool:
    """Does a secret-ish name end at the keyword at `start` (not `bypass`, `next_token`, `oauth`)?

    Only the name's last `_NAME_TAIL` characters are looked at (a minified chain of names is long).
    """
    match = _NAME_END.match(text, start)
    if match is None:
        return False
    before = text[max(lo, start - _NAME_TAIL) : start]
    name = before[len(before.rstrip(_NAME_CHAR_STR)) :] + text[start : match.end()]
    if name == "pass":
        return False  # Python's statement
    tail = name[-24:]  # enough for the two patterns below, which match at the name's end
    return not (_PASS_WORDS.search(tail) or tail.lower().endswith("oauth") or _NOT_SECRET_NAMES.search(tail))


def _region_end(text: str, hi: int) -> int:
    """The end of a keyword's region: its line and the next, each within its window."""
    if not _cut(text, hi) and hi < len(text):
        return _window(text, hi + 1, before=0)[1]
    return hi


# Dockerfile `ENV NAME value`, shell `--token value`, k8s/XML `name: X_TOKEN` + `value: …`, SQL.
_ENV_RX = re.compile(
    rf"(?i:env)[ \t]+[A-Za-z0-9_.\-]*(?i:{_STRONG}){_DECOR}[ \t]+(?=[^\s=])", _A | re.IGNORECASE
)
_FLAG_RX = re.compile(rf"--[A-Za-z0-9_\-]*(?i:{_STRONG}){_DECOR}[ \t]+(?=[^\s\-])", _A | re.IGNORECASE)
_NAME_VALUE_RX = re.compile(
    rf"(?i:name|key)(?:\\?[\"']?[ \t]*[:=][ \t]*\\?[\"']?|>[ \t]*)"
    rf"[A-Za-z0-9_.\-]*(?i:{_STRONG}){_DECOR}\\?[\"']?",
    _A,
)
# `value: …`, `"value": …`, or an element `<value>…` (after `<key>db_password</key>`)
_VALUE_KEY_RX = re.compile(r"(?i:value)(?:\\?[\"']?[ \t]*[:=][ \t]*|>)", _A)
_SQL_RX = re.compile(r"(?i:identified[ \t]+by|with[ \t]+(?:encrypted[ \t]+)?password)[ \t]+", _A)

# --- structured secrets ---------------------------------------------------------------------
# A password may hold any of RFC 3986's sub-delimiters, `'` included (not `"`, `<` or `>`); a user
# no `[` or `]` (gen-delims: `https://[REDACTED:url_password]@host` is no user and password).
_URL_USER, _URL_PW = r"[^\s/?#@\"'<>:\[\]]*", r"[^\s/?#@\"<>]+"
_URL_CREDS = re.compile(rf"://(?P<user>{_URL_USER}):(?P<pw>{_URL_PW})@(?=[\w\[])", _A)
# A token as the whole user part (`https://<token>@github.example.com`, git's way to pass one).
_URL_TOKEN = re.compile(r"://(?P<tok>[A-Za-z0-9_\-]{20,256})@(?=[\w\[])", _A)
# A space may be URL-encoded (`authorization:%20bearer%20…` in a query string or a log).
_AUTH_HEADER = re.compile(
    r"(?i:authorization)\\?[\"'\]]{0,2}[ \t]*[:=,](?:[ \t]|%20)*\\?[\"'`]?[ \t]*"
    r"(?P<scheme>(?:(?i:bearer|basic|token|bot|digest|apikey|api-key|ssws|key|oauth|jwt|sharedkey|hmac)|"
    r"(?P<other>[A-Za-z][A-Za-z0-9_\-]{1,24}))(?:[ \t]|%20)+)?"
    r"(?P<v>[A-Za-z0-9+/=._~:\-]+)",
    _A,
)
_BEARER = re.compile(r"(?i:bearer)[ \t]+(?P<v>[A-Za-z0-9._~+/\-]{16,}=*)", _A)
_BASIC = re.compile(r"(?i:basic)[ \t]+(?P<v>[A-Za-z0-9+/]{8,}={0,2})(?![A-Za-z0-9+/=])", _A)
_CURL_USER = re.compile(
    r"(?:-u|-U|--user|--proxy-user)(?:[ \t]+|=)[\"']?(?P<user>[^\s:\"'$]+):(?P<pw>[^\s\"']+)[\"']?", _A
)
_SAS_SIG = re.compile(r"[?&;]sig=(?P<v>[A-Za-z0-9%+/=]{20,})", _A)

_BEGIN_KEY = re.compile(
    r"-{4,5} ?BEGIN[ A-Z0-9_-]{0,40}PRIVATE KEY(?: BLOCK)? ?-{4,5}|PuTTY-User-Key-File-[0-9]+:", _A
)
_END_KEY = re.compile(
    r"-{4,5} ?END[ A-Z0-9_-]{0,40}PRIVATE KEY(?: BLOCK)? ?-{4,5}|Private-MAC: ?[0-9a-fA-F]+", _A
)
_KEY_BODY = re.compile(r"[A-Za-z0-9+/=]{16,}|(?:Proc-Type|DEK-Info|Comment|Version|Encryption|Hash):", _A)
_ESCAPED_BODY = re.compile(r"(?:\\r)?\\n[A-Za-z0-9+/=]{16,}", _A)
KEY_HINTS = ("PRIVATE KEY", "PuTTY-User-Key-File-")
_KEY_HINT_BYTES = tuple(h.encode("ascii") for h in KEY_HINTS)


_ANCHOR_REPEAT_CAP = 12
_SHORT_PREFIX = 4
_LEADING_CLASS = re.compile(r"\[(?:\\.|[^\]])+\]\{(\d+)(?:,\d*)?\}")
_TOKEN_TAIL = re.compile(r"[A-Za-z0-9+/=_.~\-]*", _A)


def _body_start(body: str) -> str:
    """The body's leading `[class]{m…}` as `[class]{min(m, 12)}`, or nothing.

    The anchor only needs the start of the token (the validator checks the rest), and long counters
    would blow up the DFA.
    """
    match = _LEADING_CLASS.match(body)
    if match is None:
        return ""
    count = min(int(match.group(1)), _ANCHOR_REPEAT_CAP)
    return body[: match.start(1) - 1] + f"{{{count}}}"


@dataclass(frozen=True)
class _TokenRule:
    token: Token
    rx: re.Pattern[str]
    relaxed: re.Pattern[str] | None  # without the right boundary, for checksum-valid tokens
    anchor: re.Pattern[str] | None  # the anchor of a token found from inside: checked first


def _word_start(token: Token) -> bool:
    """Does the token's prefix start with a word character (so it never follows one)?"""
    head = token.prefixes[0][0]
    return head.isalnum() or head == "_"


def _token_rule(token: Token) -> _TokenRule:
    if token.pattern is not None:
        anchor = re.compile(token.anchor, _A) if token.anchor is not None else None
        return _TokenRule(token, re.compile(token.pattern, _A), None, anchor)
    prefixes = "|".join(re.escape(p) for p in sorted(token.prefixes, key=len, reverse=True))
    left = r"(?<![A-Za-z0-9_])" if _word_start(token) else ""
    core = rf"{left}(?P<p>{prefixes})(?P<b>{token.body})"
    relaxed = re.compile(core, _A) if token.checksum is not None else None
    return _TokenRule(token, re.compile(core + r"(?![A-Za-z0-9_])", _A), relaxed, None)


def _token_anchor(token: Token) -> str:
    r"""The token's part of the prefilter (RE2 syntax, no look-around).

    `\b` stands for the rule's left boundary. A prefix shorter than four characters is common in
    ordinary text (`s.` in every minified bundle, `00`, `SK`), so its anchor is the whole format
    with the right boundary; a longer one needs only the start of the body.
    """
    if token.anchor is not None:
        return token.anchor
    prefixes = "|".join(re.escape(p) for p in sorted(token.prefixes, key=len, reverse=True))
    left = r"\b" if _word_start(token) else ""
    if min(map(len, token.prefixes)) < _SHORT_PREFIX:
        right = "" if token.checksum is not None else "(?:[^A-Za-z0-9_]|$)"
        return f"{left}(?:{prefixes})(?:{token.body}){right}"
    return f"{left}(?:{prefixes}){_body_start(token.body)}"


Handler = Callable[[str, int, int, int, bool, AddSpan], int | None]
"""(text, hit start, window lo, window hi, is_patch, add) -> None when the rule does not apply,
else the offset the scan may resume from (the end of a token it redacted; `start` for others)."""


def _token_handler(rule: _TokenRule) -> Handler:
    token = rule.token

    def handle(text: str, start: int, lo: int, hi: int, is_patch: bool, add: AddSpan) -> int | None:
        if rule.anchor is not None and rule.anchor.match(text, start, hi) is None:
            return None  # the hit was another rule's anchor
        for match in rule.rx.finditer(text, max(lo, start - token.back), hi):
            if match.start() > start:
                break
            if match.end() <= start:
                continue
            value = match.group(0)
            prefix_len = len(match.group("p")) if token.pattern is None else 0
            body = value[prefix_len:]
            if placeholder_shape(body) and not (token.checksum and token.checksum(value)):
                return None
            if token.validate is not None and not token.validate(value):
                return None
            kept = prefix_len if token.keep_prefix else 0
            return _add_token(text, match.start() + kept, match.end(), hi, token, add)
        if rule.relaxed is not None and token.checksum is not None:
            # A checksum-valid token counts even when glued to other word characters.
            glued = rule.relaxed.match(text, start, hi)
            if glued and token.checksum(glued.group(0)):
                return _add_token(text, glued.start(), glued.end(), hi, token, add)
        return None

    return handle


def _add_token(text: str, start: int, end: int, hi: int, token: Token, add: AddSpan) -> int:
    """Report a token span, running on past the window's edge for a token longer than the window.

    One that reaches the window's edge inside a line is redacted to the end of its run of token
    characters, which the scan then skips: each character is looked at once.
    """
    if end == hi and _cut(text, hi):
        end = _TOKEN_TAIL.match(text, hi).end()  # type: ignore[union-attr]  # `*` always matches
    add(start, end, token.kind)
    return end


# --- value parsing for assignments ------------------------------------------------------------
_QUOTES = "\"'`"
# A quoted value: up to the first unescaped closing quote (a backslash escapes any character).
_QUOTED = {q: re.compile(rf"(?:[^{q}\\]|\\.)*{q}", re.DOTALL) for q in _QUOTES}
_UNQUOTED = re.compile(r"[^ \t\r\n;,&\"'`<]*")
_CLOSERS = {")": "(", "]": "[", "}": "{"}


def _value_at(text: str, pos: int, line_end: int) -> tuple[int, int, bool] | None:
    """(start, end, quoted) of the value starting at `pos` before `line_end`, or None."""
    if pos >= line_end:
        return None
    head = text[pos]
    if head in "@bBrRuUfF$" and pos + 1 < line_end and text[pos + 1] in _QUOTES:
        pos += 1
        head = text[pos]
    escaped = head == "\\" and pos + 1 < line_end and text[pos + 1] in "\"'"
    if escaped:
        quote = text[pos : pos + 2]
        close = text.find(quote, pos + 2, line_end)
        return None if close < 0 else (pos + 2, close, True)
    if head in _QUOTES:
        closed = _QUOTED[head].match(text, pos + 1, line_end)
        return None if closed is None else (pos + 1, closed.end() - 1, True)
    end = _UNQUOTED.match(text, pos, line_end).end()  # type: ignore[union-attr]  # `*` always matches
    # Strip closers that do not belong to the value: `f(password=abc123)`.
    while end > pos and text[end - 1] in _CLOSERS:
        closer = text[end - 1]
        if text.count(closer, pos, end) > text.count(_CLOSERS[closer], pos, end):
            end -= 1
        else:
            break
    while end > pos and text[end - 1] in ".:":
        end -= 1
    return (pos, end, False) if end > pos else None


def _next_line_value(text: str, line_end: int, is_patch: bool) -> tuple[int, int] | None:
    """The first token of the next line (YAML `key: |`, an XML element's text on its own line)."""
    if line_end >= len(text) or text[line_end] != "\n":
        return None
    start = line_end + 1
    _, nxt = _window(text, start, before=0)
    i = start + (1 if is_patch and text[start : start + 1] in _DIFF_PREFIXES else 0)
    while i < nxt and text[i] in " \t":
        i += 1
    j = i
    while j < nxt and text[j] not in " \t\r<\"'":
        j += 1
    return (i, j) if j > i else None


def _kind_for(
    name: str, value: str, quoted: bool, op: str, text: str, name_start: int, value_end: int
) -> str:
    lower = name.lower()
    if "aws" in lower and re.fullmatch(r"[A-Za-z0-9/+=]{40}", value, _A):
        return "aws_secret_key"
    # `Server=…;User ID=…;Password=…;`, `…;AccountKey=…;`: a `;`-separated connection string.
    in_connection_string = (
        not quoted
        and op == "="
        and ";"
        in (
            text[name_start - 1 : name_start],
            text[value_end : value_end + 1],
        )
    )
    return "connection_string" if in_connection_string else "assignment"


# A call whose first argument names a setting and whose second is its value: an environment
# look-up with a default (`os.getenv`, `environ.get`, Laravel's `env`, Ruby's `ENV.fetch`) or a
# definition (PHP's `define`, `setdefault`). Ends right before the name, inside its quote.
_DEFAULT_CALL = re.compile(
    r"(?<![\w.])(?:(?:os\.)?getenv|(?:os\.)?environ\.(?:get|setdefault)|env|ENV\.fetch|define|setdefault)"
    r"\([ \t]*[\"']\Z",
    _A,
)


def _inside_reference(text: str, lo: int, pos: int) -> bool:
    """Is `pos` inside a CloudFormation dynamic reference opened earlier on its line?

    `{{resolve:secretsmanager:id:SecretString:password:…}}` names a secret's JSON key: no value.
    """
    opened = text.rfind("{{resolve:", max(lo, text.rfind("\n", lo, pos) + 1), pos)
    return opened >= 0 and "}}" not in text[opened:pos]


# A provider's short prefix before a key's random part (`bpk-…`, `ajkey_…`).
_KEY_PREFIX = re.compile(r"[A-Za-z][A-Za-z0-9]{1,7}[_\-](?P<body>[A-Za-z0-9+/=]{16,})", _A)


def _random_key(value: str) -> bool:
    """A value under `<provider>_key`: random by the high-entropy rule's bar, after a short prefix.

    An id and a secret joined by one `:` (`<uuid>:<hex>`, fal.ai's and Ghost's keys) count by the
    secret, the part after the colon.
    """
    if value.count(":") == 1:
        value = value.partition(":")[2]
    prefixed = _KEY_PREFIX.fullmatch(value)
    return is_high_entropy_token(value if prefixed is None else prefixed.group("body"), digests=True)


def _whole_word(text: str, name_start: int, start: int) -> bool:
    """Does a name's keyword at `start` start a word of it (the name's start, after `_.-`, a hump)?"""
    before = text[start - 1 : start]
    return start == name_start or before in "_.-" or (before.islower() and text[start].isupper())


def _secret_name(text: str, name: str, name_start: int, kw: str, kw_start: int) -> bool:
    """Is `name` (starting at `name_start`, its keyword `kw` at `kw_start`) a secret's name?

    Not `bypass` or `oauth`, not `next_token`, not `pw` inside a word (`jpw`, base64), not a key
    that is no last word after `_`/`-` (`cellKey`) or a cache's or a table's (`cache_key`).
    """
    lower = kw.lower()
    if _PASS_WORDS.search(name) or (lower == "auth" and name.lower().endswith("oauth")):
        return False
    if _NOT_SECRET_NAMES.search(name):
        return False
    if lower in _WORD_KEYWORDS and not _whole_word(text, name_start, kw_start):
        return False
    if lower in _SNAKE_KEY_KW:
        return bool(_SNAKE_KEY.fullmatch(name)) and not _NOT_SECRET_KEYS.search(name)
    return True


def _judged_value(value: str, kw: str, *, quoted: bool, strict: bool, password: bool) -> bool:
    """Is `value`, under a secret's name ending in `kw`, a secret (the value rules of `_assignment`)?"""
    if kw.lower() in _SNAKE_KEY_KW:  # `<provider>_key`: random by the high-entropy rule's bar only
        return looks_secret(value, quoted=quoted, strict=True) and _random_key(value)
    if looks_secret(value, quoted=quoted, strict=strict):
        return True
    return password and (short_password(value) or (quoted and (passphrase(value) or password_word(value))))


def _assignment(text: str, start: int, lo: int, hi: int, is_patch: bool, add: AddSpan) -> int | None:
    match = _ASSIGN.match(text, start, hi)
    if match is None:
        return None
    name_start = start
    while name_start > lo and text[name_start - 1] in _NAME_CHARS:
        name_start -= 1
    kw = match.group("kw")
    name = text[name_start : match.start("close")]
    if not _secret_name(text, name, name_start, kw, start) or text[name_start - 1 : name_start] == "/":
        return None  # `next_token`, `jpw`, `cache_key`; `/etc/passwd:`, a file's name in a path
    if _inside_reference(text, lo, name_start):
        return None  # `{{resolve:secretsmanager:db:SecretString:password:…}}`: a key path
    if match.group("type_word") and any(q in match.group("close") for q in "\"'`"):
        return None  # `name="…_access_key" id="…"`: a type stands before a name's quote, never after it
    op = match.group("op").strip()
    # `key:value` without a space is no YAML mapping (`io.jsonwebtoken:jjwt`): only random values.
    tight_colon = op == ":" and not match.group(0).endswith((" ", "\t")) and not match.group("close")
    strict = bool(_WEAK_KW.fullmatch(kw)) or op in ("(", ",") or tight_colon
    if op == "," and _DEFAULT_CALL.search(text, max(lo, name_start - 40), name_start):
        strict = False  # `os.getenv("PASSWORD", "…")`, `define('DB_PASSWORD', '…')`: the name names the value
    if op == ">" and text[name_start - 1 : name_start] != "<":
        return None
    pos = match.end()
    rest = text[pos:hi].strip()
    multiline = (op == ":" and rest in _BLOCK_SCALAR) or (op == ">" and rest == "")
    if multiline:  # YAML `key: |` or `<apiToken>` with the value on the next line
        nxt = _next_line_value(text, hi, is_patch)
        if nxt is None:
            return None
        span: tuple[int, int, bool] | None = (nxt[0], nxt[1], False)
        strict = True
    else:
        span = _value_at(text, pos, hi)
    if span is None:
        return None
    vstart, vend, quoted = span
    value = text[vstart:vend]
    if op == "(" and not quoted:
        return None
    if op == ">" and not multiline and text[vend : vend + 2] != "</":
        return None  # `<name>value</name>` only
    annotated = op == ":" and not quoted and not multiline and _TYPE_THEN_EQ.match(text, vstart, hi)
    if annotated:
        # `api_key: str = "…"`: a type annotation, the value follows `=`.
        nested = _value_at(text, annotated.end(), hi)
        if nested is None:
            return None
        vstart, vend, quoted = nested
        value = text[vstart:vend]
    password = _PASSWORD_KW.fullmatch(kw) is not None and not strict
    if not quoted and not password and value.isalpha() and value.islower():
        return None  # `api_key = override`: a key or token is no lower-case word (a password may be)
    # `Server=…;User ID=…;Password=myPassword;`: `;`-separated pairs, a plain name, no call.
    in_connection_string = (
        not quoted
        and op == "="
        and ";" in (text[name_start - 1 : name_start], text[vend : vend + 1])
        and "." not in name
        and "(" not in value
        and text.count("=", lo, hi) >= 2
    )
    judged = _judged_value(value, kw, quoted=quoted, strict=strict, password=password)
    in_connection_string = in_connection_string and kw.lower() not in _SNAKE_KEY_KW
    if not (judged or (in_connection_string and connection_password(value))):
        return None
    kind = "assignment" if multiline else _kind_for(name, value, quoted, op, text, name_start, vend)
    add(vstart, vend, kind)
    return vstart  # the anchor ran into the value: a token there still counts as its own kind


# `"…" == password`: a literal compared with a secret's name, the literal first (a "Yoda" condition).
_COMPARED = re.compile(r"[\"'`][ \t]*(?:===|!==|==|!=)[ \t]*(?P<name>[A-Za-z_$][A-Za-z0-9_.$\-]*)", _A)
_ENDS_IN_KW = re.compile(rf"(?i:(?P<kw>{_STRONG}|{_WEAK}){_DECOR})\Z", _A)


def _compared(text: str, start: int, lo: int, hi: int, is_patch: bool, add: AddSpan) -> int | None:
    """`if "…" == password`, `"…" !== apiToken`: the literal before a comparison, judged as assigned."""
    match = _COMPARED.match(text, start, hi)
    if match is None:
        return None
    name = match.group("name")
    if name.endswith(".length") or (found := _ENDS_IN_KW.search(name)) is None:
        return None
    kw, kw_start = found.group("kw"), match.start("name") + found.start()
    if not _secret_name(text, name, match.start("name"), kw, kw_start):
        return None
    quote = text[start]
    opened = text.rfind(quote, lo, start)
    if opened < 0:
        return None
    value = text[opened + 1 : start]
    strict = bool(_WEAK_KW.fullmatch(kw))
    password = _PASSWORD_KW.fullmatch(kw) is not None and not strict
    if not _judged_value(value, kw, quoted=True, strict=strict, password=password):
        return None
    add(opened + 1, start, "assignment")
    return match.end()


def _value_after(
    text: str, at: int, hi: int, add: AddSpan, *, quoted_only: bool = False, strict: bool = False
) -> int | None:
    """Redact the value at `at` (before `hi`) when it looks like a secret."""
    span = _value_at(text, at, hi)
    if span is None or (quoted_only and not span[2]):
        return None
    if not looks_secret(text[span[0] : span[1]], quoted=span[2], strict=strict):
        return None
    add(span[0], span[1], "assignment")
    return at


def _env_or_flag(rx: re.Pattern[str]) -> Handler:
    def handle(text: str, start: int, lo: int, hi: int, is_patch: bool, add: AddSpan) -> int | None:
        match = rx.match(text, start, hi)
        return None if match is None else _value_after(text, match.end(), hi, add)

    return handle


def _name_value(text: str, start: int, lo: int, hi: int, is_patch: bool, add: AddSpan) -> int | None:
    """`name: API_TOKEN` then `value: …` on the same or one of the next two lines."""
    match = _NAME_VALUE_RX.match(text, start, hi)
    if match is None:
        return None
    search_from, line_end = match.end(), hi
    for _ in range(3):
        found = _VALUE_KEY_RX.search(text, search_from, line_end)
        if found is not None:
            return _value_after(text, found.end(), line_end, add)
        if line_end >= len(text) or text[line_end] != "\n":
            return None  # the text ends, or the window does
        search_from = line_end + 1
        line_end = _window(text, search_from, before=0)[1]
    return None


def _sql(text: str, start: int, lo: int, hi: int, is_patch: bool, add: AddSpan) -> int | None:
    match = _SQL_RX.match(text, start, hi)
    return None if match is None else _value_after(text, match.end(), hi, add, quoted_only=True)


_URL_PLACEHOLDERS = frozenset(
    [
        "password",
        "passwd",
        "pass",
        "pwd",
        "secret",
        "token",
        "changeme",
        "changeit",
        "xxx",
        "xxxx",
        "pw",
        "p@ssw0rd",
        "mypassword",
        "yourpassword",
        "user",
        "username",
        "admin",
        "test",
    ]
)


def _url_password(text: str, start: int, lo: int, hi: int, is_patch: bool, add: AddSpan) -> int | None:
    """Any password in `scheme://user:password@host` except a template or a stand-in by its shape.

    A template: `${PW}`, `<pw>`, `{{…}}`; a stand-in: `YOUR_PASSWORD`, `REPLACE_WITH_PASSWORD`
    (`placeholder_shape`). Even `password` there is redacted, as scanners' test data expect.
    """
    match = _URL_CREDS.match(text, start, hi)
    if match is None:
        return None
    pw = match.group("pw")
    if len(pw) < 3 or pw.startswith(("$", "%", "{", "<", "[", "*")) or len(set(pw.lower())) <= 1:
        return None
    if pw.lower().startswith("x" * 3) or re.search(r"\$\{|\{\{|<%", pw) or placeholder_shape(pw):
        return None
    add(match.start("pw"), match.end("pw"), "url_password")
    return start


def _url_token(text: str, start: int, lo: int, hi: int, is_patch: bool, add: AddSpan) -> int | None:
    """`https://<token>@host`: a generated value as a URL's user, not a user name (`deploy-bot`)."""
    match = _URL_TOKEN.match(text, start, hi)
    if match is None:
        return None
    token = match.group("tok")
    if not looks_secret(token, quoted=True, strict=True) or counted(token):
        return None  # strict: random, not words joined by separators
    add(match.start("tok"), match.end("tok"), "url_password")
    return start


def _auth_header(text: str, start: int, lo: int, hi: int, is_patch: bool, add: AddSpan) -> int | None:
    match = _AUTH_HEADER.match(text, start, hi)
    if match is None:
        return None
    value = match.group("v")
    scheme = (match.group("scheme") or "").strip().lower()
    if scheme == "basic":
        ok = len(value) >= 8 and BASIC_AUTH_OK(value) and not is_placeholder(value)
    elif scheme and not match.group("other"):
        # After a named scheme the value is a credential by its place, whatever its shape
        # (`Bearer notarealtoken1`): only a stand-in or a variable's name is not one.
        ok = len(value) >= 8 and not is_placeholder(value) and not identifier_name(value)
    else:  # no scheme, or one of a provider's own (`sso-key`, `DeepL-Auth-Key`): a random value only
        ok = len(value) >= 12 and not is_placeholder(value) and (random_like(value) or "." in value)
        ok = ok and not value.isalpha() and not code_call(value)
    if not ok:
        return None
    add(match.start("v"), match.end("v"), "auth_header")
    return start


def _bearer(text: str, start: int, lo: int, hi: int, is_patch: bool, add: AddSpan) -> int | None:
    match = _BEARER.match(text, start, hi)
    if match is None:
        return None
    value = match.group("v")
    if is_placeholder(value) or not random_like(value):
        return None
    add(match.start("v"), match.end("v"), "auth_header")
    return start


def _basic(text: str, start: int, lo: int, hi: int, is_patch: bool, add: AddSpan) -> int | None:
    match = _BASIC.match(text, start, hi)
    if match is None:
        return None
    value = match.group("v")
    if not BASIC_AUTH_OK(value) or is_placeholder(value):
        return None
    add(match.start("v"), match.end("v"), "auth_header")
    return start


def _curl_user(text: str, start: int, lo: int, hi: int, is_patch: bool, add: AddSpan) -> int | None:
    match = _CURL_USER.match(text, start, hi)
    if match is None:
        return None
    pw = match.group("pw")
    if len(pw) < 4 or pw.isdigit() or pw.lower() in _URL_PLACEHOLDERS or is_placeholder(pw):
        return None
    if pw.startswith(("$", "%", "{", "<", "/")):
        return None  # a reference, or a URL (`pip install -U https://…`: `https` is no user name)
    add(match.start("pw"), match.end("pw"), "basic_auth")
    return start


def _sas(text: str, start: int, lo: int, hi: int, is_patch: bool, add: AddSpan) -> int | None:
    match = _SAS_SIG.match(text, start, hi)
    if match is None or is_placeholder(match.group("v")):
        return None
    add(match.start("v"), match.end("v"), "connection_string")
    return start


_CALL_CREDENTIAL = re.compile(
    r"(?i:credentials?|login|authenticate|auth)\([ \t]*([\"'])[^\"'\n]{1,64}\1[ \t]*,[ \t]*"
    r"([\"'])(?P<pw>[^\"'\n]{6,200})\2",
    _A,
)
_NETRC = re.compile(r"(?i:login)[ \t]+\S+[ \t]+(?i:password)[ \t]+(?P<pw>[^\s\"']+)", _A)


def _call_credential(text: str, start: int, lo: int, hi: int, is_patch: bool, add: AddSpan) -> int | None:
    """`new NetworkCredential("user", "AP7JaG9…")`, `login("user", "…")`: the argument after a user name."""
    match = _CALL_CREDENTIAL.match(text, start, hi)
    if match is None:
        return None
    pw = match.group("pw")
    if not (looks_secret(pw, quoted=True) or short_password(pw)):
        return None
    add(match.start("pw"), match.end("pw"), "basic_auth")
    return start


def _netrc(text: str, start: int, lo: int, hi: int, is_patch: bool, add: AddSpan) -> int | None:
    """`.netrc`: `machine host login user password value`."""
    match = _NETRC.match(text, start, hi)
    if match is None:
        return None
    pw = match.group("pw")
    if len(pw) < MIN_PASSWORD_LENGTH or is_placeholder(pw) or pw.startswith(("$", "%", "{", "<")):
        return None
    add(match.start("pw"), match.end("pw"), "basic_auth")
    return start


# Command-line credentials: a user flag right before a password flag (PsExec, mysql, sqlcmd:
# `-u ops -p …`, `-u root -p…`; Windows tools: `/u:deploy /p:…`, `/user:bob /pass:…`). Alone, `-p`
# is a port, a parent directory or a preserve flag, so the user flag before it is what names it.
_DASH_USER_PW = re.compile(
    r"(?:-u|-U|--user|--username)[ \t]+[^\s\-]\S*[ \t]+-[pP][ \t]*(?P<pw>[^\s\-\"'][^\s\"']*)", _A
)
_SLASH_USER_PW = re.compile(
    r"/(?i:u|user|username):\S+[ \t]+/(?i:p|pass|password|pwd):(?P<pw>[^\s\"'][^\s\"']*)", _A
)
# A single-dash long flag that names a secret (PowerShell `-Password …`, `-ApiKey …`, `-DbPassword …`).
_DASH_FLAG = re.compile(
    rf"(?<![\w\-])-[A-Za-z0-9_]*(?P<kw>{_STRONG}){_DECOR}[ \t]+(?=[^\s\-])", _A | re.IGNORECASE
)
# `.netrc` over several lines: `password …` on a line after `login …` or `machine …`.
_NETRC_LINE = re.compile(r"[ \t]*(?i:password)[ \t]+(?P<pw>[^\s\"']+)[ \t]*\r?$", _A)
_NETRC_BEFORE = re.compile(r"[ \t]*(?i:login|machine|default)\b", _A)
# Prose: `the password is 'hunter22'`, `password was "…"`.
_PROSE_PASSWORD = re.compile(
    r"(?i:passw(?:or)?d|passphrase)[ \t]+(?i:is|was)[ \t]+(?P<q>[\"'`])(?P<pw>[^\"'`\n]{6,80})(?P=q)", _A
)


def _user_then_password(rx: re.Pattern[str]) -> Handler:
    """`-u user -p value` or `/u:user /p:value`: the value after the user flag's password flag."""

    def handle(text: str, start: int, lo: int, hi: int, is_patch: bool, add: AddSpan) -> int | None:
        match = rx.match(text, start, hi)
        if match is None or not flag_password(match.group("pw"), named=True):
            return None
        add(match.start("pw"), match.end("pw"), "assignment")
        return start

    return handle


def _dash_flag(text: str, start: int, lo: int, hi: int, is_patch: bool, add: AddSpan) -> int | None:
    """`-Password Vq3mTz9Lk`, `-ApiKey '…'`: the value of a secret-named single-dash flag."""
    match = _DASH_FLAG.match(text, start, hi)
    if match is None:
        return None
    span = _value_at(text, match.end(), hi)
    if span is None:
        return None
    value, quoted = text[span[0] : span[1]], span[2]
    password = _PASSWORD_KW.fullmatch(match.group("kw")) is not None
    if not (
        looks_secret(value, quoted=quoted)
        or (password and (flag_password(value) or (quoted and passphrase(value))))
    ):
        return None
    add(span[0], span[1], "assignment")
    return start


def _line_start(text: str, pos: int, is_patch: bool) -> int:
    """Where the content of the line holding `pos` starts (after a diff line's prefix)."""
    start = text.rfind("\n", max(0, pos - WINDOW_BEFORE), pos) + 1
    return start + (1 if is_patch and text[start : start + 1] in _DIFF_PREFIXES else 0)


def _netrc_lines(text: str, start: int, lo: int, hi: int, is_patch: bool, add: AddSpan) -> int | None:
    """`.netrc` over lines: `password value` first on its line, after a `login` or `machine` line.

    The line before and the one before it are looked at (`machine`, then `login`, then
    `password`), each within its window.
    """
    begin = _line_start(text, start, is_patch)
    if text[begin:start].strip(" \t"):
        return None  # not first on its line: prose or an assignment, other rules' business
    match = _NETRC_LINE.match(text, begin, hi)
    if match is None:
        return None
    pw = match.group("pw")
    if len(pw) < MIN_PASSWORD_LENGTH or is_placeholder(pw) or pw.startswith(("$", "%", "{", "<")):
        return None
    prev_end = text.rfind("\n", max(0, start - WINDOW_BEFORE), start)
    for _ in range(2):
        if prev_end < 0:
            return None
        floor = max(0, prev_end - WINDOW_BEFORE)
        prev_begin = text.rfind("\n", floor, prev_end) + 1 or floor
        content = prev_begin + (1 if is_patch and text[prev_begin : prev_begin + 1] in _DIFF_PREFIXES else 0)
        if _NETRC_BEFORE.match(text, content, prev_end):
            add(match.start("pw"), match.end("pw"), "basic_auth")
            return start
        prev_end = prev_begin - 1
    return None


# A network device's configuration (Cisco IOS and its kin): the secret is the line's last word
# after the command, less an optional type digit (`enable secret 5 $1$…`, `pac key 7 0458…`).
_DEVICE_COMMAND = (
    r"(?i:enable[ \t]+(?:password|secret)|username[ \t]+\S+[ \t]+(?:privilege[ \t]+[0-9]+[ \t]+)?"
    r"(?:password|secret)|snmp-server[ \t]+community|(?:tacacs-server|radius-server)[ \t]+key|pac[ \t]+key|"
    r"key-string)"
)
_DEVICE_LINE = re.compile(rf"{_DEVICE_COMMAND}(?:[ \t]+[0-9])?[ \t]+(?P<value>[^\s\"'`]+)", _A)
_DEVICE_DEFAULTS = frozenset(("public", "private"))  # SNMP's default communities: words, not secrets


def _device_config(text: str, start: int, lo: int, hi: int, is_patch: bool, add: AddSpan) -> int | None:
    """`enable password …`, `snmp-server community … RW`: a secret of a device's config, first on its line."""
    if text[_line_start(text, start, is_patch) : start].strip(" \t"):
        return None  # not a config line: prose or code that names the command
    match = _DEVICE_LINE.match(text, start, hi)
    if match is None:
        return None
    value = match.group("value")
    reference = value.startswith(("$", "%", "{", "<"))
    stand_in = value.lower() in _DEVICE_DEFAULTS or is_placeholder(value) or reference
    if stand_in and not value.startswith("$1$"):  # an MD5-crypt hash is cracked offline: redacted
        return None
    add(match.start("value"), match.end("value"), "device_config")
    return match.end()


_VALUE_ATTR = re.compile(r"(?<![\w-])(?i:value)[ \t]*=[ \t]*(?P<q>[\"'])(?P<v>[^\"'\n]*)(?P=q)", _A)


def _password_input(text: str, start: int, lo: int, hi: int, is_patch: bool, add: AddSpan) -> int | None:
    """`<input type="password" value="…">`: a pre-filled password field, its attributes in any order."""
    opened = text.rfind("<", lo, start)
    if opened < 0 or text[opened + 1 : opened + 6].lower() != "input" or ">" in text[opened:start]:
        return None
    closed = text.find(">", start, hi)
    match = _VALUE_ATTR.search(text, opened, hi if closed < 0 else closed)
    if match is None:
        return None
    value = match.group("v")
    reference = value.startswith(("{", "$", "<", "%", "@")) or "{{" in value
    if len(value) < 4 or reference or is_placeholder(value):
        return None
    add(match.start("v"), match.end("v"), "assignment")
    return start


def _prose_password(text: str, start: int, lo: int, hi: int, is_patch: bool, add: AddSpan) -> int | None:
    """`the password is 'hunter22'`: a quoted value a sentence names as the password."""
    match = _PROSE_PASSWORD.match(text, start, hi)
    if match is None:
        return None
    pw = match.group("pw")
    if not (flag_password(pw, named=True) or passphrase(pw)):
        return None
    add(match.start("pw"), match.end("pw"), "assignment")
    return start


# A Kubernetes Secret of type `kubernetes.io/dockerconfigjson` (or the older `dockercfg`): its
# data is the base64 of a Docker config, which holds each registry's `auth` (user and password).
_DOCKER_CONFIG = re.compile(
    r"\.docker(?:cfg|configjson)[\"']?[ \t]*:[ \t]*[\"']?(?P<v>[A-Za-z0-9+/]{8,}={0,2})(?![A-Za-z0-9+/=])", _A
)


def _docker_config(text: str, start: int, lo: int, hi: int, is_patch: bool, add: AddSpan) -> int | None:
    """`.dockerconfigjson: eyJhdXRocyI6…`: a registry credential, base64 in a Kubernetes Secret."""
    match = _DOCKER_CONFIG.match(text, start, hi)
    if match is None or is_placeholder(match.group("v")):
        return None
    add(match.start("v"), match.end("v"), "basic_auth")
    return start


# A JSON Web Key's private members (RFC 7518: `d` of an EC, OKP or RSA key, RSA's `p`, `q`, `dp`,
# `dq`, `qi`, and `k`, a symmetric key), quotes escaped or not; only where the object's `kty` is
# near, since `"d"`, `"p"`, `"k"` name other things elsewhere. The public members (`x`, `y`, `n`,
# `e`) are no secret (entropy.py's look-alike contexts).
_JWK_PRIVATE = re.compile(
    r'\\?"(?:d|p|q|dp|dq|qi|k)\\?"[ \t]*:[ \t]*\\?"(?P<v>[A-Za-z0-9_\-]{16,}={0,2})\\?"', _A
)
_JWK_TYPE = re.compile(r'\\?"kty\\?"[ \t]*:[ \t]*\\?"(?:EC|RSA|OKP|oct)\\?"', _A)
_JWK_REACH = 1024
"""Characters before and after a private member in which its key's `kty` is looked for."""


def _jwk_private(text: str, start: int, lo: int, hi: int, is_patch: bool, add: AddSpan) -> int | None:
    """`{"kty":"EC","d":"…"}`: the private member of a JSON Web Key, whatever its key's format."""
    match = _JWK_PRIVATE.match(text, start, hi)
    if match is None or is_placeholder(match.group("v")):
        return None
    if _JWK_TYPE.search(text, max(0, start - _JWK_REACH), start + _JWK_REACH) is None:
        return None
    add(match.start("v"), match.end("v"), "private_key")
    return start


@dataclass(frozen=True)
class _Scanner:
    """One RE2 alternation without groups (a DFA scan, cheap per hit).

    A hit is dispatched on its first two characters to the rules that can start there, then to the
    rules without a literal head (keyword assignments, a few formats whose anchor starts with a
    class).
    """

    match: _Match
    """The alternation's `RE2::Match` itself: (anchor, bytes, pos, endpos) -> [(start, end)], or
    [(-1, -1)]. The `re2` module's `search` wraps every call in a generator and a match object,
    which cost as much as the DFA scan on short texts with dense hits (a prompt's fields)."""
    by_head: dict[str, tuple[Handler, ...]]  # case-sensitive: token prefixes, literal anchors
    by_head_ci: dict[str, tuple[Handler, ...]]  # lower-cased: structured keyword anchors
    fallback: tuple[Handler, ...]
    resume_inside: Handler
    """The handler whose anchor runs into what it accepts (the assignment rule: operator plus the
    value's first characters): after it the scan resumes where it says, not after the anchor."""
    rule_at: _Match
    """The alternation without the high-entropy rule's keywords, anchored at a hit: does any other
    rule's anchor start there? (If not, a keyword hit goes to that rule alone.) Unanchored, the
    prefilter of a text where that rule has nothing to report (no candidate run)."""
    patterns: tuple[str, ...] = ()
    """The alternatives of `rule_at` (RE2 syntax), for the joined-text search of `prefilter.py`."""
    dispatch: dict[str, tuple[Handler, ...]] = field(default_factory=dict)
    """Head -> the handlers to try, in order (by_head, by_head_ci, fallback), filled on first use."""

    def handlers(self, head: str) -> tuple[Handler, ...]:
        found = self.dispatch.get(head)
        if found is None:
            found = (*self.by_head.get(head, ()), *self.by_head_ci.get(head.lower(), ()), *self.fallback)
            self.dispatch[head] = found
        return found


@cache
def _handler_of(token: Token) -> Handler:
    return _token_handler(_token_rule(token))


def _gated(rules: list[tuple[str, Handler]]) -> Handler:
    """The handlers of tokens found from inside, behind one `re` match of all their anchors.

    A keyword hit that no assignment rule takes is not handed to each of them in turn.
    """
    gate = re.compile("|".join(f"(?:{anchor})" for anchor, _ in rules), _A)
    handlers = tuple(handler for _, handler in rules)

    def handle(text: str, start: int, lo: int, hi: int, is_patch: bool, add: AddSpan) -> int | None:
        if gate.match(text, start, hi) is None:
            return None
        for handler in handlers:
            resume = handler(text, start, lo, hi, is_patch, add)
            if resume is not None:
                return resume
        return None

    return handle


@cache
def _scanner() -> _Scanner:
    return build_scanner(TOKENS)


def build_scanner(tokens: tuple[Token, ...]) -> _Scanner:
    """The scanner of `tokens` beside the structured and keyword rules.

    The corpus test builds one without a provider's formats, to measure what the rest finds of that
    provider.
    """
    anchors: list[str] = []
    by_head: dict[str, list[Handler]] = {}
    by_head_ci: dict[str, list[Handler]] = {}
    fallback: list[Handler] = []
    inside: list[tuple[str, Handler]] = []  # tokens found from an anchor inside them
    for token in tokens:
        handler = _handler_of(token)
        anchors.append(_token_anchor(token))
        if token.anchor is not None:
            inside.append((token.anchor, handler))
        for head in dict.fromkeys(p[:2] for p in token.prefixes):
            by_head.setdefault(head, []).append(handler)
    kw = f"(?i:(?:{_STRONG}|{_WEAK_ANCHORED}){_DECOR})"
    structured: list[tuple[str, tuple[str, ...], tuple[str, ...], Handler]] = [
        # (anchor, case-sensitive heads, lower-case heads, handler); no heads: fallback
        (f"://{_URL_USER}:{_URL_PW}@", (":/",), (), _url_password),
        (r"://[A-Za-z0-9_\-]{20,256}@", (":/",), (), _url_token),
        (r"(?i:authorization)\\?[\"'\]]{0,2}[ \t]*[:=,]", (), ("au",), _auth_header),
        (r"(?i:bearer)[ \t]+[A-Za-z0-9._~+/\-]{16}", (), ("be",), _bearer),
        (r"(?i:basic)[ \t]+[A-Za-z0-9+/]{8}", (), ("ba",), _basic),
        # curl's `-u`/`--user` and its proxy credentials `-U`/`--proxy-user`
        (
            r"(?:-u|-U|--user|--proxy-user)(?:[ \t]+|=)[\"']?[^\s:\"'$]+:[^\s\"']",
            ("-u", "-U", "--"),
            (),
            _curl_user,
        ),
        (r"[?&;]sig=[A-Za-z0-9%+/=]{20}", ("?s", "&s", ";s"), (), _sas),
        (
            r"(?i:credentials?|login|authenticate|auth)\([ \t]*[\"'][^\"'\n]{1,64}[\"'][ \t]*,[ \t]*[\"']",
            (),
            ("cr", "lo", "au"),
            _call_credential,
        ),
        (r"(?i:login)[ \t]+\S+[ \t]+(?i:password)[ \t]+[^\s\"']", (), ("lo",), _netrc),
        (
            r"(?:-u|-U|--user|--username)[ \t]+[^\s\-]\S*[ \t]+-[pP][ \t]*[^\s\-\"']",
            ("-u", "-U", "--"),
            (),
            _user_then_password(_DASH_USER_PW),
        ),
        (
            r"/(?i:u|user|username):\S+[ \t]+/(?i:p|pass|password|pwd):[^\s\"']",
            ("/u", "/U"),
            (),
            _user_then_password(_SLASH_USER_PW),
        ),
        (
            rf"-[A-Za-z0-9_]*{kw}[ \t]+[^\s\-]",
            tuple(f"-{c}" for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_"),
            (),
            _dash_flag,
        ),
        (r"(?i:password)[ \t]+[^\s\"']{6}", (), ("pa",), _netrc_lines),
        (
            rf"{_DEVICE_COMMAND}[ \t]+[^\s\"'`]",
            (),
            ("en", "us", "sn", "ta", "ra", "pa", "ke"),
            _device_config,
        ),
        (r"(?i:passw(?:or)?d|passphrase)[ \t]+(?i:is|was)[ \t]+[\"'`]", (), ("pa", "pw"), _prose_password),
        (r"(?i:type)[ \t]*=[ \t]*\\?[\"']?(?i:password)", (), ("ty",), _password_input),
        (r"\.docker(?:cfg|configjson)[\"']?[ \t]*:[ \t]*[\"']?[A-Za-z0-9+/]{8}", (".d",), (), _docker_config),
        (
            r'\\?"(?:d|p|q|dp|dq|qi|k)\\?"[ \t]*:[ \t]*\\?"[A-Za-z0-9_\-]{16}',
            ('"d', '"p', '"q', '"k', '\\"'),
            (),
            _jwk_private,
        ),
        (rf"(?i:env)[ \t]+[A-Za-z0-9_.\-]*{kw}[ \t]+[^\s=]", (), ("en",), _env_or_flag(_ENV_RX)),
        (rf"--[A-Za-z0-9_\-]*{kw}[ \t]+[^\s\-]", ("--",), (), _env_or_flag(_FLAG_RX)),
        (
            rf"(?i:name|key)\\?[\"']?[ \t]*[:=][ \t]*\\?[\"']?[A-Za-z0-9_.\-]*{kw}\\?[\"']?"
            rf"(?:[ \t]*[,}}\n]|[ \t]+(?i:value))",
            (),
            ("na", "ke"),
            _name_value,
        ),
        # the element form: `<key>db_password</key>` then `<value>…</value>`
        (rf"(?i:name|key)>[ \t]*[A-Za-z0-9_.\-]*{kw}[ \t]*</(?i:name|key)>", (), ("na", "ke"), _name_value),
        (
            r"(?i:identified[ \t]+by|with[ \t]+(?:encrypted[ \t]+)?password)[ \t]+[\"']",
            (),
            ("id", "wi"),
            _sql,
        ),
        (
            rf"[\"'`][ \t]*(?:===|!==|==|!=)[ \t]*(?:[A-Za-z_$][A-Za-z0-9_.$\-]*)?{kw}(?:[^A-Za-z0-9_]|$)",
            tuple(f"{q}{c}" for q in "\"'`" for c in " \t=!"),
            (),
            _compared,
        ),
        (rf"{kw}{_CLOSE}[ \t]*{_TYPE_RE2}[ \t]*{_OPS_RE2}", (), (), _assignment),
        (
            rf"[_\-](?i:key){_DECOR}{_CLOSE}[ \t]*(?::=|=>|=|:|>)[ \t]*[\"'`]?[A-Za-z0-9+/=_:\-]{{20}}",
            ("_k", "_K", "-k", "-K"),
            (),
            _assignment,
        ),
    ]
    for anchor, heads, heads_ci, handler in structured:
        anchors.append(anchor)
        for head in heads:
            by_head.setdefault(head, []).append(handler)
        for head in heads_ci:
            by_head_ci.setdefault(head, []).append(handler)
        if not heads and not heads_ci:
            fallback.insert(0, handler)
    fallback.append(_gated(inside))
    key_hints = "|".join(re.escape(h) for h in KEY_HINTS)
    options = re2.Options()
    options.max_mem = 64 << 20
    options.log_errors = False
    rule_anchors = (*anchors, key_hints)
    rules = re2.compile("|".join(f"(?:{a})" for a in rule_anchors), options)
    # The high-entropy rule's keywords after every rule's own anchor; key hints last: any other
    # anchor there wins.
    prefilter = re2.compile("|".join(f"(?:{a})" for a in (*anchors, _NAME_END_RE2, key_hints)), options)
    return _Scanner(
        prefilter._regexp.Match,
        {k: tuple(v) for k, v in by_head.items()},
        {k: tuple(v) for k, v in by_head_ci.items()},
        tuple(fallback),
        _assignment,
        rules._regexp.Match,
        rule_anchors,
    )


def scan(text: str, is_patch: bool, add: AddSpan, data: bytes | None = None, first: int = 0) -> bool:
    """Report every secret span of `text` (private-key blocks excepted).

    Return whether the text holds a private-key marker (`KEY_HINTS`), for `key_blocks`. One pass of
    the prefilter.

    `data` is the text's UTF-8 form when the caller has it; `first` a byte offset before which
    the caller's own search found no anchor (the scan starts there).
    """
    scanner = _scanner()
    # RE2 runs on bytes: it would encode a `str` again at every call.
    if data is None:
        data = text.encode("utf-8", "surrogatepass")
    offsets = None if len(data) == len(text) else Utf8Offsets(text, data)
    ascii_data = data if offsets is None else None  # byte offsets are character offsets
    match, handlers, rule_at, size = scanner.match, scanner.handlers, scanner.rule_at, len(data)
    near_done = 0  # the high-entropy rule has examined the text up to here
    # Without a run the high-entropy rule could report its keywords are no hits: the other rules'
    # alternation alone is searched, and every hit is a rule's (its alternatives in the same order).
    near = Candidates(text, ascii_data) if holds_candidate(data) else None
    if near is None:
        match = rule_at
    pos = first
    while True:
        byte_start, byte_end = match(_UNANCHORED, data, pos, size)[0]
        if byte_start < 0:
            break
        start = byte_start if offsets is None else offsets.char_of(byte_start)
        head = text[start : start + 2]
        lo, hi = _window(text, start)
        resume = None
        if near is None:
            candidates = handlers(head)
        else:
            # The high-entropy rule over the keyword's region, less what it examined before: only
            # where the region holds a candidate run and a secret-ish name ends at the keyword.
            end, begin = _region_end(text, hi), max(lo, near_done)
            if near.inside(begin, end) and _secret_name_at(text, start, lo):
                tokens_near_keyword(text, begin, end, is_patch, add, ascii_data)
                near_done = end
            # A hit where no other rule's anchor starts is the high-entropy rule's keyword alone.
            ruled = rule_at(_ANCHOR_START, data, byte_start, size)[0][0] >= 0
            candidates = handlers(head) if ruled else ()
        for handler in candidates:
            resume = handler(text, start, lo, hi, is_patch, add)
            if resume is not None:
                break
        if resume is not None and handler is scanner.resume_inside:
            byte_end = byte_start  # resume at the value: a token inside it is found as such
        if resume is None:
            # A rejected hit may hide another anchor inside it (`Bearer` + a JWT): look again just
            # after (after the whole character: a case-folded keyword may start with a non-ASCII one).
            pos = byte_start + 1
            while pos < len(data) and data[pos] & 0xC0 == 0x80:
                pos += 1
            continue
        pos = max(byte_end, resume if offsets is None else offsets.byte_of(resume))
    # Anywhere in the text, inside a secret found above too (a marker there was skipped over).
    return any(hint in data for hint in _KEY_HINT_BYTES)


def first_anchor(data: bytes, pos: int = 0) -> int | None:
    """The byte offset of the first anchor of any rule at or after `pos` in UTF-8 `data`, or None.

    None means `scan` and `key_blocks` find nothing there. `rules.secret_kinds_in` asks it of a
    non-ASCII text; ASCII texts joined are searched for the same anchors by `prefilter.py`.
    """
    start = _scanner().match(_UNANCHORED, data, pos, len(data))[0][0]
    return None if start < 0 else start


def anchor_patterns() -> tuple[str, ...]:
    """Every rule's anchor (RE2 syntax): with `NEAR_KEYWORD_ANCHOR`, what `first_anchor` looks for.

    A text with neither holds nothing `scan` reports; a text with only the near keyword holds
    only what the high-entropy rule may find (`entropy.holds_candidate` says whether it can).
    """
    return _scanner().patterns


NEAR_KEYWORD_ANCHOR = _NAME_END_RE2
"""The anchor of the high-entropy rule's keywords (RE2 syntax): a secret-ish name's end."""


def key_blocks(text: str, is_patch: bool, add: AddSpan) -> int:
    r"""Private-key blocks (PEM, OpenSSH, PGP, SSH2, PuTTY), one span per line; returns the count.

    A BEGIN marker counts only when key material follows (base64 on the next line, PEM or PuTTY
    headers, a `\n`-escaped body on the same line as in a service-account JSON, or any body when
    its END marker stands alone on a line within `_END_LOOKAHEAD` lines), so code that merely
    mentions the marker stays. A block without END runs to the end of its hunk (a patch)
    or of the text.
    """
    blocks = 0
    inside = False
    offset = 0
    lines = text.split("\n")
    for index, line in enumerate(lines):
        skip = 1 if is_patch and line[:1] in _DIFF_PREFIXES else 0
        content = line[skip:]
        hunk = is_patch and line.startswith("@@")
        if not inside and not hunk:
            begin = _BEGIN_KEY.search(content)
            if begin is not None and _key_material_follows(content, begin.end(), lines, index, is_patch):
                inside = True
                blocks += 1
                first = offset + skip + begin.start()
                end_match = _END_KEY.search(content, begin.end())
                if end_match is not None:
                    add(first, offset + skip + end_match.end(), "private_key")
                    inside = False
                else:
                    add(first, offset + len(line), "private_key")
                offset += len(line) + 1
                continue
        if inside and hunk:
            inside = False  # a block without its END line ends with its hunk
        if inside:
            end_match = _END_KEY.search(content)
            if end_match is not None:
                add(offset + skip, offset + skip + end_match.end(), "private_key")
                inside = False
            else:
                add(offset + skip, offset + len(line), "private_key")
        offset += len(line) + 1
    return blocks


def _key_material_follows(content: str, after: int, lines: list[str], index: int, is_patch: bool) -> bool:
    rest = content[after:]
    if _ESCAPED_BODY.match(rest) or re.match(r"[\s\"'`]*[A-Za-z0-9+/=]{16,}", rest):
        return True  # the body is on the same line (a JSON string with \n escapes)
    tail = rest.replace("\\n", "").replace("\\r", "").strip(" \t\"'`,+;\\")
    if tail and not tail.startswith(("ssh-", "ecdsa-")):
        return False  # the marker inside code: `line.startswith("-----BEGIN … KEY-----"):`
    for nxt in lines[index + 1 : index + 4]:
        if is_patch and nxt.startswith("@@"):
            continue
        body = (nxt[1:] if is_patch and nxt[:1] in _DIFF_PREFIXES else nxt).strip(" \t\"'`+,")
        if body:
            return _KEY_BODY.match(body) is not None or _end_line_follows(lines, index, is_patch)
    return False


_END_LOOKAHEAD = 64
"""Lines after a BEGIN marker searched for its END line: a block's size, so the scan stays linear."""


def _end_line_follows(lines: list[str], index: int, is_patch: bool) -> bool:
    """Does an END marker stand alone on one of the lines after `index`: a block whatever its body?"""
    for nxt in lines[index + 1 : index + 1 + _END_LOOKAHEAD]:
        if is_patch and nxt.startswith("@@"):
            return False
        content = (nxt[1:] if is_patch and nxt[:1] in _DIFF_PREFIXES else nxt).strip(" \t\"'`+,;")
        end = _END_KEY.match(content)
        if end is not None:
            return end.end() == len(content)
    return False
