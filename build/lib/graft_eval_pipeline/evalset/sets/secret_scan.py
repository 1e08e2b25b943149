"""Finds secrets in one text: catalogue tokens, structured secrets and secret-named assignments.

Why one prefilter: 150+ rules run one after the other would each scan the whole text; instead
every rule contributes an *anchor* (its literal prefix and the start of its body, or a keyword
followed by an assignment operator) to one RE2 alternation, which a DFA scans once in linear
time. Anchors are rare in ordinary code, and only at an anchor does the rule's own `re` pattern
run (with the look-behind boundaries RE2 lacks) and the value checks of `secret_values.py`.

Every span stays inside one line, except private-key blocks, which are redacted line by line
(each line keeps its diff prefix), so a patch keeps its line count. Spans are reported through
`add(start, end, kind)`; the caller resolves overlaps and splices.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

import re2  # type: ignore[import-untyped]

from graft_eval_pipeline.evalset.sets.secret_catalogue import BASIC_AUTH_OK, TOKENS, Token
from graft_eval_pipeline.evalset.sets.secret_values import is_placeholder, looks_secret, random_like

_A = re.ASCII
AddSpan = Callable[[int, int, str], None]
_DIFF_PREFIXES = frozenset("+- ")

# --- the keyword family -----------------------------------------------------------------------
# Lower-case forms; `[_.\- ]?` joins words so snake, kebab, camel (matched case-insensitively),
# upper and dotted names all match. A name must END with one of these (plus a decoration), so
# `token_count`, `password_hash`, `tokenizer` and `secretary` are not secret names.
_SEP = r"[_.\- ]?"
_KEY_QUALIFIERS = (
    "api|access|secret|private|priv|client|auth|account|service|signing|sign|encryption|encrypt|master|"
    "app|application|consumer|license|licence|subscription|admin|session|shared|sharedaccess|storage|hmac|"
    "webhook|db|database|crypto|cipher|aes|jwt|sas|ingest|deploy|runner|registration|integration|"
    "server|pass|rest|management|primary[_.\\- ]?access|secondary[_.\\- ]?access"
)
_STRONG = (
    r"passw(?:or)?d|passwort|passphrase|kennwort|contrase(?:n|\xf1)a|senha|pwd|secret|token|sharedaccesssignature|"
    rf"(?:{_KEY_QUALIFIERS}){_SEP}key"
)
_WEAK = r"pass|auth|credentials?|creds"
_DECOR = (
    r"(?:[_.\-]?(?:[0-9]{1,4}|b64|base64|hex|raw|str|string|plain|plaintext|value|val|enc|encoded|base|"
    r"prod|production|dev|development|stage|staging|test|live|new|old|default|local))?"
)
_CLOSE = r"(?:\[[0-9]*\])?[\"'`\]*\\]{0,3}"
_TYPE = r"(?:[ \t]*:[ \t]*[A-Za-z_][\w.\[\]<>|?]*[ \t]*(?==)|[ \t]+[A-Za-z_][\w.\[\]]*[ \t]*(?==))?"
_OPS = r"(?P<op>:::=|::=|:=|\?\?=|\|\|=|===|!==|==|!=|[?+.|&]=|=>|<-|=|:|>|\(|,|[ \t]+(?=[\"'`]))"
# RE2 has no look-ahead: its anchor is looser (the `re` pattern below decides).
_TYPE_RE2 = r"(?:(?:[ \t]+|[ \t]*:[ \t]*)[A-Za-z_][\w.\[\]<>|?]*[ \t]*)?"
_OPS_RE2 = r"(?::::=|::=|:=|\?\?=|\|\|=|===|!==|==|!=|[?+.|&]=|=>|<-|=|:|>|\(|,|[ \t]+[\"'`])"

_ASSIGN = re.compile(
    rf"(?i:(?P<kw>{_STRONG}|{_WEAK}){_DECOR})(?P<close>{_CLOSE})[ \t]*{_TYPE}[ \t]*{_OPS}[ \t]*",
    _A,
)
_WEAK_KW = re.compile(_WEAK, _A | re.IGNORECASE)
_TYPE_THEN_EQ = re.compile(r"[A-Za-z_][\w.\[\]<>|?]*[ \t]*=(?!=)[ \t]*", _A)
# Words that end in `pass` without being a password.
_PASS_WORDS = re.compile(
    r"(?:by|com|sur|over|under|tres|encom|render|sub|multi|first|second|one|two|single|bi|mass|ex|im)pass$",
    _A | re.IGNORECASE,
)
_BLOCK_SCALAR = frozenset(("|", "|-", "|+", ">", ">-", ">+"))
_NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-$@")
# Names that end like a secret but hold something else.
_NOT_SECRET_NAMES = re.compile(
    r"(?:page|next|prev|previous|cancel|cancellation|continuation|csrf|xsrf|sync|resume|pagination|"
    r"lexer|parser|current|cur|last|first|end|start|eof|bos|eos|pad|unk|mask|sep|cls|special|max|min|"
    r"num|input|output|total|id|public|pub)[_.\-]?(?:token|key)$",
    _A | re.IGNORECASE,
)

# Dockerfile `ENV NAME value`, shell `--token value`, k8s/XML `name: X_TOKEN` + `value: …`, SQL.
_ENV_RX = re.compile(
    rf"(?i:env)[ \t]+[A-Za-z0-9_.\-]*(?i:{_STRONG}){_DECOR}[ \t]+(?=[^\s=])", _A | re.IGNORECASE
)
_FLAG_RX = re.compile(rf"--[A-Za-z0-9_\-]*(?i:{_STRONG}){_DECOR}[ \t]+(?=[^\s\-])", _A | re.IGNORECASE)
_NAME_VALUE_RX = re.compile(
    rf"(?i:name|key)\\?[\"']?[ \t]*[:=][ \t]*\\?[\"']?[A-Za-z0-9_.\-]*(?i:{_STRONG}){_DECOR}\\?[\"']?",
    _A,
)
_VALUE_KEY_RX = re.compile(r"(?i:value)\\?[\"']?[ \t]*[:=][ \t]*", _A)
_SQL_RX = re.compile(r"(?i:identified[ \t]+by|with[ \t]+(?:encrypted[ \t]+)?password)[ \t]+", _A)

# --- structured secrets ---------------------------------------------------------------------
_URL_CREDS = re.compile(r"://(?P<user>[^\s/?#@\"'<>:]*):(?P<pw>[^\s/?#@\"'<>]+)@(?=[\w\[])", _A)
_AUTH_HEADER = re.compile(
    r"(?i:authorization)\\?[\"'\]]{0,2}[ \t]*[:=,][ \t]*\\?[\"'`]?[ \t]*"
    r"(?P<scheme>(?i:bearer|basic|token|bot|digest|apikey|api-key|ssws|key|oauth|jwt|sharedkey|hmac)[ \t]+)?"
    r"(?P<v>[A-Za-z0-9+/=._~:\-]+)",
    _A,
)
_BEARER = re.compile(r"(?i:bearer)[ \t]+(?P<v>[A-Za-z0-9._~+/\-]{16,}=*)", _A)
_BASIC = re.compile(r"(?i:basic)[ \t]+(?P<v>[A-Za-z0-9+/]{8,}={0,2})(?![A-Za-z0-9+/=])", _A)
_CURL_USER = re.compile(r"(?:-u|--user)(?:[ \t]+|=)[\"']?(?P<user>[^\s:\"'$]+):(?P<pw>[^\s\"']+)[\"']?", _A)
_SAS_SIG = re.compile(r"[?&;]sig=(?P<v>[A-Za-z0-9%+/=]{20,})", _A)

_BEGIN_KEY = re.compile(
    r"-{4,5} ?BEGIN[ A-Z0-9_-]*PRIVATE KEY(?: BLOCK)? ?-{4,5}|PuTTY-User-Key-File-[0-9]+:", _A
)
_END_KEY = re.compile(r"-{4,5} ?END[ A-Z0-9_-]*PRIVATE KEY(?: BLOCK)? ?-{4,5}|Private-MAC: ?[0-9a-fA-F]+", _A)
_KEY_BODY = re.compile(r"[A-Za-z0-9+/=]{16,}|(?:Proc-Type|DEK-Info|Comment|Version|Encryption|Hash):", _A)
_ESCAPED_BODY = re.compile(r"(?:\\r)?\\n[A-Za-z0-9+/=]{16,}", _A)
KEY_HINTS = ("PRIVATE KEY", "PuTTY-User-Key-File-")


_ANCHOR_REPEAT_CAP = 12
_LEADING_CLASS = re.compile(r"\[(?:\\.|[^\]])+\]\{(\d+)(?:,\d*)?\}")


def _body_start(body: str) -> str:
    """The body's leading `[class]{m…}` as `[class]{min(m, 12)}`, or nothing: the anchor only
    needs the start of the token (the validator checks the rest), and long counters would blow
    up the DFA."""
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


_TOKEN_PLACEHOLDERS = (
    "xxxx",
    "****",
    "....",
    "example",
    "your_",
    "your-",
    "placeholder",
    "redacted",
    "dummy",
    "fake",
    "${",
    "{{",
    "<",
    ">",
)


def _token_placeholder(body: str) -> bool:
    lower = body.lower()
    return lower.startswith("your") or any(p in lower for p in _TOKEN_PLACEHOLDERS)


def _token_rule(token: Token) -> _TokenRule:
    if token.pattern is not None:
        return _TokenRule(token, re.compile(token.pattern, _A), None)
    prefixes = "|".join(re.escape(p) for p in sorted(token.prefixes, key=len, reverse=True))
    left = r"(?<![A-Za-z0-9_])" if token.prefixes[0][0].isalnum() or token.prefixes[0][0] == "_" else ""
    core = rf"{left}(?P<p>{prefixes})(?P<b>{token.body})"
    relaxed = re.compile(core, _A) if token.checksum is not None else None
    return _TokenRule(token, re.compile(core + r"(?![A-Za-z0-9_])", _A), relaxed)


def _token_anchor(token: Token) -> str:
    if token.anchor is not None:
        return token.anchor
    prefixes = "|".join(re.escape(p) for p in sorted(token.prefixes, key=len, reverse=True))
    return f"(?:{prefixes}){_body_start(token.body)}"


Handler = Callable[[str, int, int, bool, AddSpan], bool]


def _line_bounds(text: str, start: int, end: int) -> tuple[int, int]:
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", end)
    return line_start, len(text) if line_end < 0 else line_end


def _token_handler(rule: _TokenRule) -> Handler:
    token = rule.token

    def handle(text: str, start: int, end: int, is_patch: bool, add: AddSpan) -> bool:
        line_start, line_end = _line_bounds(text, start, end)
        lo = max(line_start, start - token.back)
        for match in rule.rx.finditer(text, lo, line_end):
            if match.start() > start:
                break
            if match.end() <= start:
                continue
            value = match.group(0)
            prefix_len = len(match.group("p")) if token.pattern is None else 0
            body = value[prefix_len:]
            if _token_placeholder(body) and not (token.checksum and token.checksum(value)):
                return False
            if token.validate is not None and not token.validate(value):
                return False
            add(match.start() + (prefix_len if token.keep_prefix else 0), match.end(), token.kind)
            return True
        if rule.relaxed is not None and token.checksum is not None:
            # A checksum-valid token counts even when glued to other word characters.
            glued = rule.relaxed.match(text, start, line_end)
            if glued and token.checksum(glued.group(0)):
                add(glued.start(), glued.end(), token.kind)
                return True
        return False

    return handle


# --- value parsing for assignments ------------------------------------------------------------
_QUOTES = "\"'`"
_UNQUOTED_STOP = frozenset(" \t\r\n;,&\"'`<")


def _value_at(text: str, pos: int, line_end: int) -> tuple[int, int, bool] | None:
    """(start, end, quoted) of the value starting at `pos` on this line, or None."""
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
        i = pos + 1
        while i < line_end:
            c = text[i]
            if c == "\\":
                i += 2
                continue
            if c == head:
                return pos + 1, i, True
            i += 1
        return None
    i = pos
    while i < line_end and text[i] not in _UNQUOTED_STOP:
        i += 1
    end = i
    # Strip closers that do not belong to the value: `f(password=abc123)`.
    while end > pos and text[end - 1] in ")]}":
        closer = text[end - 1]
        opener = {")": "(", "]": "[", "}": "{"}[closer]
        segment = text[pos:end]
        if segment.count(closer) > segment.count(opener):
            end -= 1
        else:
            break
    while end > pos and text[end - 1] in ".:":
        end -= 1
    return (pos, end, False) if end > pos else None


def _next_line_value(text: str, line_end: int, is_patch: bool) -> tuple[int, int] | None:
    """The first token of the next line (YAML `key: |`, an XML element's text on its own line)."""
    if line_end >= len(text):
        return None
    start = line_end + 1
    nxt = text.find("\n", start)
    nxt = len(text) if nxt < 0 else nxt
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


def _assignment(text: str, start: int, end: int, is_patch: bool, add: AddSpan) -> bool:
    match = _ASSIGN.match(text, start)
    if match is None:
        return False
    line_start, line_end = _line_bounds(text, start, match.end())
    if match.end() > line_end:
        return False
    name_start = start
    while name_start > line_start and text[name_start - 1] in _NAME_CHARS:
        name_start -= 1
    kw = match.group("kw")
    name = text[name_start : match.start("close")]
    if _PASS_WORDS.search(name) or (kw.lower() == "auth" and name.lower().endswith("oauth")):
        return False
    if _NOT_SECRET_NAMES.search(name):
        return False
    op = match.group("op").strip()
    # `key:value` without a space is no YAML mapping (`io.jsonwebtoken:jjwt`): only random values.
    tight_colon = op == ":" and not match.group(0).endswith((" ", "\t")) and not match.group("close")
    strict = bool(_WEAK_KW.fullmatch(kw)) or op in ("(", ",") or tight_colon
    if op == ">" and text[name_start - 1 : name_start] != "<":
        return False
    pos = match.end()
    rest = text[pos:line_end].strip()
    multiline = (op == ":" and rest in _BLOCK_SCALAR) or (op == ">" and rest == "")
    if multiline:  # YAML `key: |` or `<apiToken>` with the value on the next line
        nxt = _next_line_value(text, line_end, is_patch)
        if nxt is None:
            return False
        span: tuple[int, int, bool] | None = (nxt[0], nxt[1], False)
        strict = True
    else:
        span = _value_at(text, pos, line_end)
    if span is None:
        return False
    vstart, vend, quoted = span
    value = text[vstart:vend]
    if op == "(" and not quoted:
        return False
    if op == ">" and not multiline and text[vend : vend + 2] != "</":
        return False  # `<name>value</name>` only
    annotated = op == ":" and not quoted and not multiline and _TYPE_THEN_EQ.match(text, vstart)
    if annotated:
        # `api_key: str = "…"`: a type annotation, the value follows `=`.
        nested = _value_at(text, annotated.end(), line_end)
        if nested is None:
            return False
        vstart, vend, quoted = nested
        value = text[vstart:vend]
    if not looks_secret(value, quoted=quoted, strict=strict):
        return False
    kind = "assignment" if multiline else _kind_for(name, value, quoted, op, text, name_start, vend)
    add(vstart, vend, kind)
    return True


def _env_or_flag(rx: re.Pattern[str]) -> Handler:
    def handle(text: str, start: int, end: int, is_patch: bool, add: AddSpan) -> bool:
        match = rx.match(text, start)
        if match is None:
            return False
        _, line_end = _line_bounds(text, start, match.end())
        span = _value_at(text, match.end(), line_end)
        if span is None:
            return False
        value = text[span[0] : span[1]]
        if not looks_secret(value, quoted=span[2]):
            return False
        add(span[0], span[1], "assignment")
        return True

    return handle


def _name_value(text: str, start: int, end: int, is_patch: bool, add: AddSpan) -> bool:
    """`name: API_TOKEN` then `value: …` on the same or one of the next two lines."""
    match = _NAME_VALUE_RX.match(text, start)
    if match is None:
        return False
    limit = match.end()
    for _ in range(3):
        nl = text.find("\n", limit)
        limit = len(text) if nl < 0 else nl
        if nl < 0:
            break
        limit += 1
    found = _VALUE_KEY_RX.search(text, match.end(), limit)
    if found is None:
        return False
    _, line_end = _line_bounds(text, found.start(), found.end())
    span = _value_at(text, found.end(), line_end)
    if span is None:
        return False
    value = text[span[0] : span[1]]
    if not looks_secret(value, quoted=span[2]):
        return False
    add(span[0], span[1], "assignment")
    return True


def _sql(text: str, start: int, end: int, is_patch: bool, add: AddSpan) -> bool:
    match = _SQL_RX.match(text, start)
    if match is None:
        return False
    _, line_end = _line_bounds(text, start, match.end())
    span = _value_at(text, match.end(), line_end)
    if span is None or not span[2]:
        return False
    value = text[span[0] : span[1]]
    if not looks_secret(value, quoted=True):
        return False
    add(span[0], span[1], "assignment")
    return True


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


def _url_password(text: str, start: int, end: int, is_patch: bool, add: AddSpan) -> bool:
    """Any password in `scheme://user:password@host` except a template (`${PW}`, `<pw>`, `{{…}}`):
    even `password` there is redacted, as scanners' test data expect."""
    match = _URL_CREDS.match(text, start)
    if match is None:
        return False
    pw = match.group("pw")
    if len(pw) < 3 or pw.startswith(("$", "%", "{", "<", "[", "*")) or len(set(pw.lower())) <= 1:
        return False
    if pw.lower().startswith("x" * 3) or re.search(r"\$\{|\{\{|<%", pw):
        return False
    add(match.start("pw"), match.end("pw"), "url_password")
    return True


def _auth_header(text: str, start: int, end: int, is_patch: bool, add: AddSpan) -> bool:
    match = _AUTH_HEADER.match(text, start)
    if match is None:
        return False
    value = match.group("v")
    scheme = (match.group("scheme") or "").strip().lower()
    if scheme == "basic":
        ok = len(value) >= 8 and BASIC_AUTH_OK(value) and not is_placeholder(value)
    else:
        ok = len(value) >= 12 and not is_placeholder(value) and (random_like(value) or "." in value)
        ok = ok and not value.isalpha()
    if not ok:
        return False
    add(match.start("v"), match.end("v"), "auth_header")
    return True


def _bearer(text: str, start: int, end: int, is_patch: bool, add: AddSpan) -> bool:
    match = _BEARER.match(text, start)
    if match is None:
        return False
    value = match.group("v")
    if is_placeholder(value) or not random_like(value):
        return False
    add(match.start("v"), match.end("v"), "auth_header")
    return True


def _basic(text: str, start: int, end: int, is_patch: bool, add: AddSpan) -> bool:
    match = _BASIC.match(text, start)
    if match is None:
        return False
    value = match.group("v")
    if not BASIC_AUTH_OK(value) or is_placeholder(value):
        return False
    add(match.start("v"), match.end("v"), "auth_header")
    return True


def _curl_user(text: str, start: int, end: int, is_patch: bool, add: AddSpan) -> bool:
    match = _CURL_USER.match(text, start)
    if match is None:
        return False
    pw = match.group("pw")
    if len(pw) < 4 or pw.isdigit() or pw.lower() in _URL_PLACEHOLDERS or is_placeholder(pw):
        return False
    if pw.startswith(("$", "%", "{", "<")):
        return False
    add(match.start("pw"), match.end("pw"), "basic_auth")
    return True


def _sas(text: str, start: int, end: int, is_patch: bool, add: AddSpan) -> bool:
    match = _SAS_SIG.match(text, start)
    if match is None or is_placeholder(match.group("v")):
        return False
    add(match.start("v"), match.end("v"), "connection_string")
    return True


@dataclass(frozen=True)
class _Scanner:
    """One RE2 alternation without groups (a DFA scan, cheap per hit); a hit is dispatched on its
    first two characters to the rules that can start there, then to the rules without a
    literal head (keyword assignments, a few formats whose anchor starts with a class)."""

    prefilter: object  # re2._Regexp
    by_head: dict[str, tuple[Handler, ...]]  # case-sensitive: token prefixes, literal anchors
    by_head_ci: dict[str, tuple[Handler, ...]]  # lower-cased: structured keyword anchors
    fallback: tuple[Handler, ...]


@cache
def _scanner() -> _Scanner:
    anchors: list[str] = []
    by_head: dict[str, list[Handler]] = {}
    by_head_ci: dict[str, list[Handler]] = {}
    fallback: list[Handler] = []
    for token in TOKENS:
        handler = _token_handler(_token_rule(token))
        anchors.append(_token_anchor(token))
        if token.anchor is not None:
            fallback.append(handler)
        for head in dict.fromkeys(p[:2] for p in token.prefixes):
            by_head.setdefault(head, []).append(handler)
    kw = f"(?i:(?:{_STRONG}|{_WEAK}){_DECOR})"
    structured: list[tuple[str, tuple[str, ...], tuple[str, ...], Handler]] = [
        # (anchor, case-sensitive heads, lower-case heads, handler); no heads: fallback
        (r"://[^\s/?#@\"'<>:]*:[^\s/?#@\"'<>]+@", (":/",), (), _url_password),
        (r"(?i:authorization)\\?[\"'\]]{0,2}[ \t]*[:=,]", (), ("au",), _auth_header),
        (r"(?i:bearer)[ \t]+[A-Za-z0-9._~+/\-]{16}", (), ("be",), _bearer),
        (r"(?i:basic)[ \t]+[A-Za-z0-9+/]{8}", (), ("ba",), _basic),
        (r"(?:-u|--user)(?:[ \t]+|=)[\"']?[^\s:\"'$]+:[^\s\"']", ("-u", "--"), (), _curl_user),
        (r"[?&;]sig=[A-Za-z0-9%+/=]{20}", ("?s", "&s", ";s"), (), _sas),
        (rf"(?i:env)[ \t]+[A-Za-z0-9_.\-]*{kw}[ \t]+[^\s=]", (), ("en",), _env_or_flag(_ENV_RX)),
        (rf"--[A-Za-z0-9_\-]*{kw}[ \t]+[^\s\-]", ("--",), (), _env_or_flag(_FLAG_RX)),
        (
            rf"(?i:name|key)\\?[\"']?[ \t]*[:=][ \t]*\\?[\"']?[A-Za-z0-9_.\-]*{kw}\\?[\"']?"
            rf"(?:[ \t]*[,}}\n]|[ \t]+(?i:value))",
            (),
            ("na", "ke"),
            _name_value,
        ),
        (
            r"(?i:identified[ \t]+by|with[ \t]+(?:encrypted[ \t]+)?password)[ \t]+[\"']",
            (),
            ("id", "wi"),
            _sql,
        ),
        (rf"{kw}{_CLOSE}[ \t]*{_TYPE_RE2}[ \t]*{_OPS_RE2}", (), (), _assignment),
    ]
    for anchor, heads, heads_ci, handler in structured:
        anchors.append(anchor)
        for head in heads:
            by_head.setdefault(head, []).append(handler)
        for head in heads_ci:
            by_head_ci.setdefault(head, []).append(handler)
        if not heads and not heads_ci:
            fallback.insert(0, handler)
    options = re2.Options()
    options.max_mem = 64 << 20
    prefilter = re2.compile("|".join(f"(?:{a})" for a in anchors), options)
    return _Scanner(
        prefilter,
        {k: tuple(v) for k, v in by_head.items()},
        {k: tuple(v) for k, v in by_head_ci.items()},
        tuple(fallback),
    )


def scan(text: str, is_patch: bool, add: AddSpan) -> None:
    """Report every secret span of `text` (private-key blocks excepted: see `key_blocks`)."""
    scanner = _scanner()
    # ASCII text (nearly all code) is scanned as bytes: same offsets, no offset translation.
    subject: str | bytes = text.encode("ascii") if text.isascii() else text
    by_head, by_head_ci, fallback = scanner.by_head, scanner.by_head_ci, scanner.fallback
    search = scanner.prefilter.search  # type: ignore[attr-defined]
    pos = 0
    while (match := search(subject, pos)) is not None:
        start, end = match.span()
        head = text[start : start + 2]
        handled = False
        for handler in (*by_head.get(head, ()), *by_head_ci.get(head.lower(), ()), *fallback):
            if handler(text, start, end, is_patch, add):
                handled = True
                break
        # A rejected hit may hide another anchor inside it (`Bearer` + a JWT): look again just after.
        pos = end if handled else start + 1


def key_blocks(text: str, is_patch: bool, add: AddSpan) -> int:
    """Private-key blocks (PEM, OpenSSH, PGP, SSH2, PuTTY), one span per line; returns the count.

    A BEGIN marker counts only when key material follows (base64 on the next line, PEM or PuTTY
    headers, or a `\\n`-escaped body on the same line as in a service-account JSON), so code that
    merely mentions the marker stays. A block without END runs to the end of the text.
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
        if inside and not hunk:
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
            return _KEY_BODY.match(body) is not None
    return False
