"""Does a value assigned to a secret-sounding name look like a secret, or like code?

Why: the name alone (`token = …`) says little; in real diffs most such lines assign a call,
a reference or a placeholder (`token = peek_token(parser)`, `password = os.environ["DB_PW"]`,
`api_key: "YOUR_API_KEY"`, `x-api-key: {{apiKey}}`). Rewriting those changes what the card
engine is evaluated on, so a value is redacted only when it has a secret's shape: long enough,
not a reference or template, not a placeholder word, and, where the syntax is loose, random
(several character classes, enough entropy). Pure functions over one short string.
"""

from __future__ import annotations

import base64
import binascii
import html
import itertools
import math
import re
import string
from collections import Counter

MIN_LENGTH = 8
MIN_PASSWORD_LENGTH = 6
"""A password-named value (`PASSWORD1=hunter2`) may be this short when it looks chosen, not named."""
_A = re.ASCII

# Whole values (lower-cased) that are never secrets: literals, modes, placeholders.
_WORDS = frozenset(
    [
        "none",
        "null",
        "nil",
        "true",
        "false",
        "undefined",
        "empty",
        "blank",
        "missing",
        "unset",
        "notset",
        "default",
        "defaults",
        "required",
        "optional",
        "string",
        "str",
        "bytes",
        "int",
        "integer",
        "boolean",
        "bool",
        "object",
        "array",
        "list",
        "dict",
        "map",
        "number",
        "float",
        "char",
        "text",
        "any",
        "changeme",
        "changeit",
        "change_me",
        "change-me",
        "secret",
        "secrets",
        "password",
        "passwd",
        "passwords",
        "token",
        "tokens",
        "apikey",
        "api_key",
        "credential",
        "credentials",
        "private",
        "public",
        "example",
        "examples",
        "sample",
        "redacted",
        "hidden",
        "masked",
        "removed",
        "dummy",
        "fake",
        "placeholder",
        "unknown",
        "todo",
        "tbd",
        "fixme",
        "anonymous",
        "internal",
        "external",
        "disabled",
        "enabled",
        "enable",
        "disable",
        "include",
        "omit",
        "same-origin",
        "inherit",
        "basic",
        "bearer",
        "digest",
        "oauth",
        "oauth2",
        "jwt",
        "session",
        "cookie",
        "header",
        "headers",
        "query",
        "environment",
        "localhost",
        "generated",
        "random",
        "uuid",
        "value",
        "values",
        "options",
        "settings",
        "config",
        "configuration",
        "params",
        "parameters",
        "payload",
        "message",
        "context",
        "request",
        "response",
        "result",
        "results",
        "input",
        "output",
        "nothing",
        "invalid",
        "expired",
        "revoked",
        "pending",
        "encrypted",
        "decrypted",
        "plaintext",
        "ciphertext",
        "base64",
        "hex",
        "utf-8",
        "readonly",
        "readwrite",
        "read",
        "write",
        "admin",
        "administrator",
        "root",
        "user",
        "username",
        "guest",
        "anonymous_user",
        "keyboard",
        "keychain",
        "keyring",
        "keystore",
        "vault",
        "mandatory",
        "optional_auth",
        "auto",
        "automatic",
        "manual",
    ]
)
_PLACEHOLDER_PARTS = (
    "a1b2c3d4",  # letters and digits counted up or down: documentation's stand-ins
    "d4c3b2a1",
    "example",
    "changeme",
    "change_me",
    "change-me",
    "changeit",
    "placeholder",
    "redact",  # `redacted`, and `REDACT` as a stand-in
    "your_",
    "your-",
    "yourapi",
    "yoursecret",
    "yourtoken",
    "yourpass",
    "dummy",
    "fake",
    "xxxx",
    "****",
    "....",
    "replace_me",
    "replaceme",
    "replace-me",
    "insert_",
    "insert-",
    "notreal",
    "not_real",
    "not-a-",
    "not_a_",
    "sample",
    "<your",
    "lorem",
    "foobar",
)
_PLACEHOLDER_PART = re.compile("|".join(map(re.escape, _PLACEHOLDER_PARTS)))
"""Any of the parts (one search instead of a containment test per part)."""
# References and templates anywhere in the value: ${VAR}, $(cmd), {{ x }}, #{x}, %(x)s, %VAR%,
# @@X@@, __X__, $UPPER_VAR, ((var)), <%= x %>, {{.Values.x}}, CloudFormation's dynamic references
# {{resolve:secretsmanager:…}} and {{resolve:ssm-secure:…}}.
_TEMPLATE = re.compile(
    r"\$\{[A-Za-z_][\w.:\-\[\]]*(?::?[-=?+][^}]*)?\}"
    r"|\$\{\{[^{}]*\}\}"
    r"|\{\{resolve:[a-z\-]+:[^{}]*\}\}"
    r"|\$\("
    r"|\{\{[\s\w.|()'\"\-,:$\[\]!]*\}\}"
    r"|\{%[^%]*%\}"
    r"|#\{[^}]*\}"
    r"|%\(\w+\)[sdr]"
    r"|%[A-Z_][A-Z0-9_]{2,}%"
    r"|@@\w+@@"
    r"|__[A-Z][A-Z0-9_]*__"
    r"|\$[A-Z_][A-Z0-9_]{2,}"
    r"|\(\([\w.-]+\)\)"
    r"|<%=?[^%]*%>"
    r"|\benv\(|\bgetenv\b|\bprocess\.env\b|\bos\.environ\b|\bENV\[|\bsecrets\.\w|\bvars\.\w",
    _A,
)
_WHOLE_PLACEHOLDER = re.compile(
    r"<[^<>]*>|\[[^\[\]]*\]|\{[A-Za-z0-9_.]*\}|%[sdvq]|\?+|-+|[$@:][A-Za-z_]\w*"
    r"|(?i:your)[\w-]*|(?i:x+|\*+|#+|\.+|0+|_+|-+)",
    _A,
)
_FORMAT_ONLY = re.compile(r"(?:\{[A-Za-z_][\w.\[\]]*\}|[_\-./:@ ])+", _A)
"""A format string of fields alone (`f"{task_id}_{self._name}"`): what fills it is the value."""
_PATTERN = re.compile(r"\[[^\[\]]+\](?:\{[0-9]+(?:,[0-9]*)?\}|[+*])", _A)
"""A regular expression's character class and count (`[a-zA-Z0-9]{54}`): a test generates the value."""
_KWARG = re.compile(r"[a-z_][a-z0-9_.]*=[^=]", _A)
"""A keyword argument or an assignment (`value=self.usage`, `retry=False`): the code after a name."""
_CALL = re.compile(
    r"(?:new|await|yield|typeof|lambda|function|fn|func|async|not|require|import)\b"
    r"|[A-Za-z_$@][\w$.:@\\]*(?:<[^<>]*>)?\s*[(\[{]"
    r"|[A-Za-z_$][\w$]*(?:(?:\.|::|->|\?\.)[A-Za-z_$][\w$]*)+[;,)\]]*$"
    r"|&|\*[A-Za-z_]",
    _A,
)
_IDENTIFIER = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*", _A)
_NAME_LIKE = re.compile(r"[A-Za-z]+(?:[_.\-/: ]+[A-Za-z]+)+[_.\-/:]?", _A)
_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*://", _A)
_PATH = re.compile(
    r"(?:/|\./|\.\./|~/|[A-Za-z]:\\)[\w.\-/\\]*$"
    r"|[\w.\-/]*\.(?:pem|key|json|txt|crt|cer|der|p12|pfx|jks|keystore|ya?ml|env|gpg|asc|conf|cfg|ini|properties|toml|pub)$",
    _A,
)
_VERSION = re.compile(r"v?\d+(?:\.\d+){1,3}(?:[-+][\w.]+)?$", _A)
# Package coordinates: `jjwt-jackson-0.11.2`, `lodash@4.17.21`, `org.slf4j:slf4j-api:1.7.8`.
_COORDINATE = re.compile(r"[A-Za-z][\w.:-]*[-:@]v?\d+\.\d+(?:\.\d+)*(?:[-.+][\w.]+)?$", _A)
_NUMBER = re.compile(r"[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?$", _A)
_INTEGRITY = re.compile(r"(?:sha1|sha256|sha384|sha512|md5)[-:]|h1:|data:|blob:|urn:", _A | re.IGNORECASE)
_EMAIL = re.compile(r"[^@\s]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}$", _A)
_KEYWORD_STEM = re.compile(r"pass|pwd|secret|token|apikey|api_key|api-key|auth|cred|key$", _A | re.IGNORECASE)
_SEQUENTIAL_DIGITS = "01234567890123456789"


def entropy(value: str) -> float:
    """Shannon entropy in bits per character."""
    if not value:
        return 0.0
    n = len(value)
    return -sum(c / n * math.log2(c / n) for c in Counter(value).values())


def _classes(value: str) -> int:
    return (
        any(c.islower() for c in value)
        + any(c.isupper() for c in value)
        + any(c.isdigit() for c in value)
        + any(not c.isalnum() for c in value)
    )


# Published constants that look like keys (yarn berry's public npm-search key, see
# https://github.com/yarnpkg/berry/issues/6201).
_KNOWN_PUBLIC = frozenset(("6fe4476ee5a1832882e326b506d14126",))


# A CSS selector or element id (`#add-password`, `.secret-field`, `#userPassword`): what a
# password-named variable of front-end code holds, not a password. Lower-case words joined by `-`
# or `_`, or camel-case words: a random value has digits and mixed case inside its runs.
_SELECTOR = re.compile(r"[#.][a-z]+[0-9]*(?:[-_][a-z]+[0-9]*)+|[#.][a-z]+(?:[A-Z][a-z]+)+", _A)


_UNIFORM_TAIL = re.compile(r"(?:^|[_\-.])([A-Za-z0-9])\1{7,}$")
"""A value whose last part is one character typed eight times or more (`sk_live_AAAA…`): no key
ends so (a run of the same character in the middle, as Twitter's `AAAA…` prefix, may)."""


def _uniform_tail(value: str) -> bool:
    return value[-8:] == value[-1:] * 8 and _UNIFORM_TAIL.search(value) is not None


_LONGEST_UNIT = 8
_ALNUM = re.compile(r"[A-Za-z0-9]+", _A)


def repeated_unit(value: str) -> bool:
    """A short unit typed again and again (`abcd1234abcd1234abcd1234…`, `deadbeefdeadbeef…`).

    Four-fifths or more of the value's letters and digits (in either case) are one unit of at
    most eight characters repeated three times or more, a last copy perhaps cut
    (`abcd1234abcd1234abcd1234ABCD1234ABCD1234--__extra`): a stand-in, whatever its entropy. No
    generated key repeats itself so.
    """
    core = "".join(_ALNUM.findall(value)).lower()
    size = len(core)
    if size < 16:
        return False
    # A stretch of four-fifths of the value holds its middle three-fifths: one string comparison
    # per unit rules most values out before the pairs are counted.
    middle = core[-(-size // 5) : 4 * size // 5]
    for unit in range(1, _LONGEST_UNIT + 1):
        if middle[unit:] != middle[:-unit]:
            continue
        run = longest = 0
        # a stretch with period `unit` is a run of equal pairs `unit` apart
        for a, b in zip(core, core[unit:], strict=False):
            run = run + 1 if a == b else 0
            longest = max(longest, run)
        stretch = longest + unit
        if stretch >= 3 * unit and 5 * stretch >= 4 * size:
            return True
    return False


def is_placeholder(value: str) -> bool:
    """A template, reference or stand-in rather than a value."""
    lower = value.lower()
    if lower in _WORDS or len(set(lower)) <= 2 or lower in _KNOWN_PUBLIC or _uniform_tail(value):
        return True
    if repeated_unit(value) or _SELECTOR.fullmatch(value):
        return True
    parts = set(_PLACEHOLDER_PART.findall(lower))
    if parts and not (parts <= _MARK_WORDS and len(value) >= 20 and random_like(value)):
        return True
    if _WHOLE_PLACEHOLDER.fullmatch(value) or _FORMAT_ONLY.fullmatch(value):
        return True
    return bool(_TEMPLATE.search(value) or _PATTERN.search(value)) or _encoded_stand_in(value)


_BASE64_TEXT = re.compile(r"(?:[A-Za-z0-9+/]{4}){4,}(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?", _A)


def _encoded_stand_in(value: str) -> bool:
    """Base64 of a stand-in phrase (`ZHVtbXkgdGV4dCBk…`, "dummy text d…"): a secret decodes to bytes.

    Only a phrase (words, spaces and punctuation) that holds a stand-in word counts: base64 of a
    password, of a Basic credential (`user:pass`) or of JSON (a Docker config) stays a secret.
    """
    if _BASE64_TEXT.fullmatch(value) is None:
        return False
    try:
        decoded = base64.b64decode(value, validate=True).decode("ascii")
    except (binascii.Error, UnicodeDecodeError):
        return False
    if " " not in decoded or _PHRASE.fullmatch(decoded) is None:
        return False  # no phrase: JSON (a Docker config), a credential, bytes
    return bool(_PLACEHOLDER_PART.search(decoded.lower()))


_PHRASE = re.compile(r"[A-Za-z0-9 .,;!?'-]+", _A)


_MARK_WORDS = frozenset({"fake", "dummy"})
"""Words that mark a stand-in only when the rest is not random: `fake-token`, `dummy_password`,
but not `PA3XsxZ8…FAKE…/Dw`, a random 40-character value with the word inside (issue 25: a kept
secret is a leak, a redacted stand-in costs nothing)."""


_SHAPE_PARTS = (
    "xxxx",
    "****",
    "....",
    "example",
    "your_",
    "your-",
    "placeholder",
    "redacted",
    "changeme",
    # documentation's instructions in place of a value (`REPLACE_WITH_PASSWORD`, `replace-me`)
    "replace_with",
    "replace-with",
    "replaceme",
    "replace_me",
    "replace-me",
    # letters and digits counted up or down: documentation's stand-ins (`a1b2c3d4…`, `d4c3b2a1`)
    "a1b2c3d4",
    "d4c3b2a1",
)
_SHAPE_MARKS = ("${", "{{", "<", ">")
_SHAPE_PART = re.compile("|".join(map(re.escape, _SHAPE_PARTS)))


COUNTED_SHARE = 0.5
"""The most neighbouring pairs of a random run that may step as a count does (the same letter in
the other case, the next letter or the next digit): random base64 has about 1 in 12."""


_STEPS = re.compile(
    "(?="
    + "|".join(
        [c + c for c in string.ascii_lowercase]
        + [a + b for a, b in itertools.pairwise(string.ascii_lowercase)]
        + [a + b for a, b in itertools.pairwise("01234567890")]
    )
    + ")"
)
"""A step at each position where one starts: a letter twice, a letter and the next, a digit and the next."""


def counted(value: str) -> bool:
    """A run typed in order rather than drawn at random (`aAbBcC…`, `aBcDeF…1234567890abcdef…`).

    Half its neighbouring pairs or more are the same letter in either case, the next letter
    (either case) or the next digit (`9` then `0` included): a stand-in whatever its entropy, which
    such runs have in full because every character occurs once or twice.
    """
    return len(_STEPS.findall(value.lower())) >= COUNTED_SHARE * (len(value) - 1)


def placeholder_shape(value: str) -> bool:
    """A stand-in by its shape (`xxxx…`, `YOUR_…`, `<…>`, `${…}`, `example`, `changeme`, `redacted`).

    Also `REPLACE_WITH_…`, a last part of one repeated character (`sk_live_AAAA…`) and a short
    unit repeated (`abcd1234abcd1234…`, `repeated_unit`). A token of
    a known format is kept only then. Words such as `fake`, `dummy` or `test` inside a format-valid
    token do not make it one: for an evaluation set a redacted placeholder costs
    nothing, a kept secret is a leak.
    """
    lower = value.lower()
    return (
        lower.startswith("your")
        or _SHAPE_PART.search(lower) is not None
        or any(m in value for m in _SHAPE_MARKS)
        or _uniform_tail(value)
        or repeated_unit(value)
    )


def _camel_identifier(value: str) -> bool:
    """`accessTokenValue` (a few humps) rather than `aBcDeFgHiJ` (random case)."""
    humps = sum(1 for a, b in itertools.pairwise(value) if a.islower() and b.isupper())
    return humps >= 1 and humps * 4 <= len(value)


_LETTER_RUN = re.compile(r"[A-Za-z]+", _A)


def _random_case_part(value: str) -> bool:
    """A run of letters in `value` whose case changes too often for words: `YXNkZmZmZmZm`.

    Twelve letters or more with a lower-to-upper change every four letters or oftener (base64 of
    text, a random key's letters); a name's parts are words (`accessTokenValue`: 2 in 16, `iPhone`).
    """
    for run in _LETTER_RUN.findall(value):
        humps = sum(1 for a, b in itertools.pairwise(run) if a.islower() and b.isupper())
        if len(run) >= 12 and humps >= 3 and humps * 4 > len(run):
            return True
    return False


def random_like(value: str) -> bool:
    """Looks generated: letters and digits mixed with enough entropy, or long and very varied."""
    if len(value) < 12 or " " in value:
        return False
    has_digit = any(c.isdigit() for c in value)
    has_alpha = any(c.isalpha() for c in value)
    if has_digit and has_alpha and entropy(value) >= 3.0:
        return True
    return len(value) >= 20 and entropy(value) >= 3.5 and _classes(value) >= 2


PUBLIC_TOKENS = ("pk_live_", "pk_test_")
"""Tokens public by design: Stripe's publishable keys, which its documentation puts in client code."""


def looks_secret(value: str, *, quoted: bool, strict: bool = False) -> bool:
    """Is `value` (the right-hand side of a secret-named assignment) worth redacting?

    `quoted`: it was a string literal (so never a call or a reference). `strict`: the syntax was
    loose (a comma, a call argument, a weak name such as `auth`), so it must also look random.
    """
    if len(value) < MIN_LENGTH or "\n" in value:
        return False
    if is_placeholder(value) or value.startswith(PUBLIC_TOKENS) or _natural_language(value):
        return False
    if _URL.match(value) or _VERSION.match(value) or _INTEGRITY.match(value) or _COORDINATE.match(value):
        return False
    if _PATH.match(value) and not (random_like(value) and value.lower() != value and value.upper() != value):
        return False  # a path, unless it is base64 that happens to start with `/`
    if _EMAIL.match(value):
        return False
    if _NUMBER.match(value):
        digits = value.lstrip("+-")
        return (
            digits.isdigit()
            and len(digits) >= 10
            and len(set(digits)) >= 5
            and digits not in _SEQUENTIAL_DIGITS
            and (not strict or len(digits) >= 12)
        )
    if _NAME_LIKE.fullmatch(value) and not _random_case_part(value):
        return False  # `prod-db-credentials`, `DB_PASSWORD`: a name, not a value
    if not quoted:
        if value[0] in "([{" or _CALL.match(value) or _KWARG.match(value) or "(" in value or ")" in value:
            return False  # code: a call, a keyword argument, an expression
        if _IDENTIFIER.fullmatch(value) and _code_identifier(value):
            return False
    elif " " in value or (value.isalpha() and (_KEYWORD_STEM.search(value) or _camel_identifier(value))):
        return False
    if strict:  # loose syntax: a generated value, not words (`openai/gpt-4`) or code (`retry=False`)
        words = _NAME_SEPARATORS.search(value) is not None and name_like(value)
        return random_like(value) and not words and not _KWARG.match(value)
    return True


def code_call(value: str) -> bool:
    """A call or a member chain (`self.build_header(r.method,`, `new Foo(`): code, not a value."""
    return _CALL.match(value) is not None


_NAME_SEPARATORS = re.compile(r"[_\-./]", _A)
_HUMP = re.compile(r"[A-Z][a-z]{3,}", _A)
"""A word of a camel-case name: a capital and three small letters or more."""


def name_like(value: str) -> bool:
    """Words joined by separators, or camel-case words: words make up at least half of it.

    `test_user_2_permissions_view`, `com.example.AuthProvider`, `src/auth/token_store.py`,
    `openai/gpt-4`; and `atLeast24CharactersField`, where two capitalised words or more (`Least`,
    `Characters`, `Field`) make up two thirds of it or more (random base64 seldom has one such run).
    """
    parts = [p for p in _NAME_SEPARATORS.split(value) if p]
    words = sum(len(p) for p in parts if len(p) > 1 and words_run_together(p.rstrip("0123456789")))
    if 2 * words >= len(value):
        return True
    humps = _HUMP.findall(value)
    return len(humps) >= 2 and 3 * sum(map(len, humps)) >= 2 * len(value)


def words_run_together(part: str) -> bool:
    """A word, or words run together in camel case (`hasOwnProperty`, `RawURLEncoding`).

    ASCII letters only, not ending in one capital after a small letter (`fooB`) or alone: the
    strings `(?:[A-Z]?[a-z]+|[A-Z]{2,})+` matches whole, decided in one look. That pattern tried
    every way to cut a run of capitals into words before it failed at the next character, so one
    run of 40 capitals inside a token took minutes.
    """
    if not (part.isascii() and part.isalpha()):
        return False
    return not (part[-1].isupper() and (len(part) == 1 or part[-2].islower()))


def _natural_language(value: str) -> bool:
    """Words of a natural language with a letter beyond ASCII: a label or its translation.

    `"Password": "Lösenord"`, `"secret": "&#12497;&#12473;…"` (パスワード in HTML entities) in a
    locale file. Letters of any script and spaces only: a digit or a symbol makes it a candidate
    again (`VeryStrong$$你好`). ASCII words stay candidates (`Sunshine`): a developer's password
    is typed in ASCII far more often than a label is left in English under a secret's name.
    """
    text = html.unescape(value) if "&" in value else value
    return not text.isascii() and all(c.isalpha() or c == " " for c in text)


_PROSE_START = re.compile(
    r"(?:enter|your|please|the|a|an|type|input|confirm|invalid|wrong|incorrect|new|old|current|"
    r"forgot|reset|change|show|hide|must|should|at least|min|max|password|passwords)\b",
    _A | re.IGNORECASE,
)


def short_password(value: str) -> bool:
    """A short password-named value that looks like a password (`hunter2`).

    6 or 7 characters with a letter and a digit or a symbol, and no word, placeholder or reference.
    """
    if not MIN_PASSWORD_LENGTH <= len(value) < MIN_LENGTH or " " in value or is_placeholder(value):
        return False
    has_letter = any(c.isalpha() for c in value)
    has_other = any(c.isdigit() or not c.isalnum() for c in value)
    # `!vault`, `&anchor`, `*alias`: YAML tags and anchors, not values.
    return has_letter and has_other and not value.startswith(("$", "%", "{", "<", "(", "!", "&", "*"))


def password_word(value: str) -> bool:
    """A quoted password-named value of one short word or number (`"quokka"`, `'4711'`).

    4 to 7 letters and digits, not a stand-in (`password`, `secret`, `changeme`, `admin`): bandit's
    hardcoded-password example labels such values passwords (issue 25's thirteenth round), and in
    quotes under a password's name a word is the value itself, not a reference to one.
    """
    return 4 <= len(value) < MIN_LENGTH and value.isalnum() and not is_placeholder(value)


# Words that make a quoted phrase a note about the value rather than the value: `"not set"`,
# `"see below"`, `"is required"`, `"n/a here"`, `"same as above"`.
_NOTE_WORDS = re.compile(
    r"(?:^|\s)(?:not|see|is|are|was|use|set|unset|none|n/a|na|todo|tbd|fixme|same|empty|blank|null|nil|"
    r"undefined|required|optional|missing|unknown|default|above|below|here|there|later|goes|ask|"
    r"get|from|stored|kept|leave|left|generated|provided|given)(?:$|\s|[.,;:!?])",
    _A | re.IGNORECASE,
)


def passphrase(value: str) -> bool:
    """A quoted password of words (`"value with quotes and spaces"`, `'open sesame'`).

    Two to eight words, no prose (a label or message starts with `enter`, `your`, `invalid`, …, or
    ends a sentence) and no note about the value (`not set`, `see below`, `is required`).
    """
    words = value.split()
    if not 2 <= len(words) <= 8 or len(value) > 80 or "\n" in value:
        return False
    if _PROSE_START.match(value) or value.rstrip().endswith((".", "?", "!", ":")) or is_placeholder(value):
        return False
    if _NOTE_WORDS.search(value):
        return False
    # Code between two string literals (`" + getPassword() + "`) is no passphrase.
    if any(word in ("+", "-", "||", "&&", "?", ":", "=", "%") for word in words) or "(" in value:
        return False
    return not any(mark in value for mark in ("{", "}", "%s", "%d", "$"))


def flag_password(value: str, *, named: bool = False) -> bool:
    """The value of a command-line password flag (`-p Vq3#mTz9`, `/p:…`, `-Password …`).

    6 to 128 characters without white space, with a letter and a digit or a symbol; not a
    reference (`$PW`, `%PW%`), an option (`-x`), a port or address (`2222`, `8080:80`), a path, a
    property (`Configuration=Release`) or a placeholder. `named`: the context itself says this is
    the password (`-u user -p …`, `the password is '…'`), so one word of letters counts too
    (`-p braksha`), unless it is a note about the value (`required`, `unknown`).
    """
    if not MIN_PASSWORD_LENGTH <= len(value) <= 128 or value.startswith(
        ("$", "%", "{", "<", "(", "-", "/", "[")
    ):
        return False
    if "=" in value or any(c.isspace() for c in value) or _PATH.match(value):
        return False
    if is_placeholder(value) or placeholder_shape(value):
        return False
    has_letter = any(c.isalpha() for c in value)
    has_other = any(c.isdigit() or not c.isalnum() for c in value)
    if named and value.isalpha():
        return not _NOTE_WORDS.search(value) and value.lower() not in _WORDS
    return has_letter and has_other


def connection_password(value: str) -> bool:
    """The password of a `;`-separated connection string (`…;Password=myPassword;`).

    Any value of 6 or more characters that is no reference or template (an identifier counts here).
    """
    # `[Shared Access key goes here]` is cut at its first space: a bracket opens a stand-in.
    if len(value) < MIN_PASSWORD_LENGTH or value.startswith(("$", "%", "{", "<", "(", "@", "[")):
        return False
    return not placeholder_shape(value) and value.lower() not in _WORDS and not is_placeholder(value)


def identifier_name(value: str) -> bool:
    """A variable's name of words (`access_token`, `ACCESS_TOKEN`, `accessToken`), no digit in it."""
    if _IDENTIFIER.fullmatch(value) is None or any(c.isdigit() for c in value) or _random_case_part(value):
        return False
    return "_" in value or _camel_identifier(value)


def _code_identifier(value: str) -> bool:
    """A bare name on the right of `=` in code: `next_token`, `dbPassword`, `DEFAULT_VALUE`, `$input`."""
    if value.startswith("$") or _KEYWORD_STEM.search(value):
        return True
    if _random_case_part(value):
        return False  # `YXNkZmZmZmZm_KEY`: random letters, not words
    has_digit = any(c.isdigit() for c in value)
    if "_" in value and not has_digit:
        return True
    if _camel_identifier(value) and not has_digit:
        return True
    return value.lower() in _WORDS
