r"""The one reader of every JSON file graft-eval reads back: bytes → text → JSON → schema.

Every file the tool reads can hold anything, whoever wrote it: case files, `label --apply` and
labels-inbox files, thresholds.json, baselines and `runs/<id>/report.json`, the batch ledger,
cache entries, card results, Dagster's sealed values, live-rerun.json. Each passes the same checks
here: a size limit, strict UTF-8, valid JSON with no NaN or Infinity, nesting at most
`MAX_JSON_DEPTH` levels (Python's json raises RecursionError far below what orjson accepts), no
integer of more than `MAX_INT_DIGITS` digits (Python refuses to convert one of more than 4,300
with a ValueError), the file's schema, and no lone surrogate escape (`\ud800`, which json accepts
but no UTF-8 writer can encode later). A failure is one line: an `UntrustedInputError` (exit 2) naming the
file as the caller gives it (relative to the set, or the path the user typed) and, for a schema or
surrogate failure, the field location; never a value, and never a key of a free-form object
(those come from the file).

orjson parses first (strict UTF-8, no NaN, no lone surrogate, nesting bounded); only a document it
refuses takes Python's json with hooks, which either accepts it (a lone surrogate escape, checked
against the schema's field locations after validation) or names what is wrong. So the surrogate walk
runs only on that rare path, and a file read on the fast path costs a parse, a depth walk of its
free-form part and a validation. A document given as text and larger than
`LARGE_DOCUMENT` takes json at once, for memory.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple, NoReturn, TypeVar, overload

import orjson
from pydantic import BaseModel, TypeAdapter, ValidationError

from graft_eval_pipeline.evalset.sets.errors import EvalError

MAX_JSON_DEPTH = 64
"""Far above any file graft-eval writes (a case is about 6 levels deep, a scripted reply ~10)."""

MAX_INT_DIGITS = 300
"""Far above any integer graft-eval writes (counts, tokens and sizes fit in 64 bits) and far below
Python's 4,300-digit conversion limit. orjson reads an integer beyond 64 bits as a float and refuses
one beyond a float's range (about 309 digits), which then takes the json path and is refused here."""

MAX_JSON_BYTES = 256 * 1024 * 1024
"""A whole file read into memory: a 100,000-case report is about 60 MiB."""

LARGE_DOCUMENT = 32 * 1024 * 1024
"""A document given as text and larger than this is parsed by Python's json, not orjson: orjson
holds the text, an unescaped copy of each string and the string itself (three times a 170 MB
patch), json the text and the string it builds in place. Smaller ones take orjson, twice as fast."""

LONE_SURROGATE_RULE = "holds a lone surrogate escape (\\ud800-\\udfff), which is not text; remove it"

_SURROGATE = re.compile("[\ud800-\udfff]")

T = TypeVar("T")


class UntrustedInputError(EvalError, ValueError):
    """One line naming the file and what is wrong with it; never the offending content (exit 2)."""


class _Refused(Exception):
    """Raised by the json hooks; carries the reason only."""


def decode_utf8(data: bytes, where: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise UntrustedInputError(
            f"{where}: not UTF-8 text (bad byte at offset {err.start}); save the file as UTF-8"
        ) from None


def _too_large(where: str, limit: int) -> UntrustedInputError:
    return UntrustedInputError(
        f"{where}: larger than {limit // (1024 * 1024)} MiB; this is not a graft-eval file"
    )


def check_size(data: bytes | str, where: str, limit: int = MAX_JSON_BYTES) -> None:
    if len(data) > limit:
        raise _too_large(where, limit)


def read_limited(path: Path, where: str, limit: int = MAX_JSON_BYTES) -> bytes:
    """A file's bytes, refused before it is read whole when it is larger than `limit`.

    OSError is the caller's to name (a missing file means different things to different readers).
    """
    with open(path, "rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        if size > limit:
            raise _too_large(where, limit)
        # Its size first: read(limit + 1) alone allocates limit + 1 bytes for every file (a
        # quarter of a GB) and gives back the rest, which cost more than the read of a 60 kB case.
        data = handle.read(size + 1)
        if len(data) > size:  # it grew since: the rest, up to the limit
            data += handle.read(limit + 1 - len(data))
    check_size(data, where, limit)  # grew while it was read
    return data


def _int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_INT_DIGITS:
        raise _Refused(f"holds an integer of more than {MAX_INT_DIGITS} digits")
    return int(text)


def _float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _Refused("holds a number too large for a float")
    return value


def _constant(name: str) -> NoReturn:
    raise _Refused(f"holds {name}, which is not JSON")


def _fast_parse(data: bytes | str, depth_of: Callable[[Any], Any] | None) -> tuple[bool, Any]:
    """The verdict of `orjson`: (True, value) when it accepts the document and it is shallow enough."""
    try:
        value = orjson.loads(data)
        measured = value if depth_of is None else depth_of(value)
    except Exception:  # orjson.JSONDecodeError; depth_of on a document of another shape
        return False, None
    if depth_of is not None:  # only that part can nest freely: walk it (a case's script is small)
        return 1 + json_depth(measured) <= MAX_JSON_DEPTH, value
    raw = data.encode() if isinstance(data, str) else data
    if raw.count(b"[") + raw.count(b"{") <= MAX_JSON_DEPTH:  # no deeper than its brackets: no walk
        return True, value
    return json_depth(measured) <= MAX_JSON_DEPTH, value


def load_json(
    data: bytes | str,
    where: str,
    *,
    limit: int = MAX_JSON_BYTES,
    depth_of: Callable[[Any], Any] | None = None,
) -> Any:
    """Parsed JSON of a whole document, or an UntrustedInputError naming `where`.

    `depth_of`: where in the document free-form JSON can nest (the schema bounds the rest), so the
    fast path measures only that part; the whole document when None.
    """
    return parse_document(data, where, limit=limit, depth_of=depth_of).value


class Document(NamedTuple):
    """Parsed JSON, and whether it may hold a lone surrogate (only Python's json admits one)."""

    value: Any
    may_hold_surrogate: bool


def parse_document(
    data: bytes | str,
    where: str,
    *,
    limit: int = MAX_JSON_BYTES,
    depth_of: Callable[[Any], Any] | None = None,
    fast: bool = True,
) -> Document:
    """`load_json` for a caller that validates the document itself (pass `may_hold_surrogate` to `validate`).

    A file whose schema depends on what it holds, such as a report's version. `fast=False` skips
    orjson.
    """
    check_size(data, where, limit)
    if fast and not (isinstance(data, str) and len(data) > LARGE_DOCUMENT):
        accepted, value = _fast_parse(data, depth_of)
        if accepted:
            return Document(value, False)
    text = decode_utf8(data, where) if isinstance(data, bytes) else data
    too_deep = UntrustedInputError(
        f"{where}: JSON nested more than {MAX_JSON_DEPTH} levels deep; this is not a graft-eval file"
    )
    try:
        value = json.loads(text, parse_int=_int, parse_float=_float, parse_constant=_constant)
    except _Refused as err:
        raise UntrustedInputError(f"{where}: {err}; this is not a graft-eval file") from None
    except json.JSONDecodeError as err:
        where_in = f"line {err.lineno}, column {err.colno}"
        raise UntrustedInputError(f"{where}: not valid JSON ({where_in})") from None
    except RecursionError:
        raise too_deep from None
    except ValueError:  # a number json cannot convert at all: named, never quoted
        raise UntrustedInputError(f"{where}: holds a number that is not valid JSON") from None
    if json_depth(value) > MAX_JSON_DEPTH:
        raise too_deep
    return Document(value, True)


@overload
def parse_json(
    data: bytes | str,
    where: str,
    schema: type[T],
    *,
    limit: int = ...,
    depth_of: Callable[[Any], Any] | None = ...,
) -> T: ...
@overload
def parse_json(
    data: bytes | str,
    where: str,
    schema: TypeAdapter[T],
    *,
    limit: int = ...,
    depth_of: Callable[[Any], Any] | None = ...,
) -> T: ...
def parse_json(
    data: bytes | str,
    where: str,
    schema: type[T] | TypeAdapter[T],
    *,
    limit: int = MAX_JSON_BYTES,
    depth_of: Callable[[Any], Any] | None = None,
) -> T:
    """`load_json`, then the schema (a pydantic model or TypeAdapter), then the surrogate check.

    A document orjson parsed but the schema refuses is parsed again by Python's json, whose
    verdict stands: orjson reads an integer beyond 64 bits as a float, which an int field refuses.
    """
    document = parse_document(data, where, limit=limit, depth_of=depth_of)
    try:
        return validate(document.value, where, schema, surrogates=document.may_hold_surrogate)
    except UntrustedInputError:
        if document.may_hold_surrogate:  # Python's json parsed it already
            raise
    again = parse_document(data, where, limit=limit, depth_of=depth_of, fast=False)
    return validate(again.value, where, schema)


def validate(data: Any, where: str, schema: type[T] | TypeAdapter[T], *, surrogates: bool = True) -> T:
    """Validate parsed JSON against `schema`; a failure is one line naming the field, never a value.

    `surrogates`: look for lone surrogates in the result (False for what orjson parsed).
    """
    try:
        if isinstance(schema, TypeAdapter):
            value: T = schema.validate_python(data)
        else:
            value = schema.model_validate(data)  # type: ignore[attr-defined]
    except ValidationError as err:
        raise UntrustedInputError(describe_validation_error(err, where)) from None
    except (ValueError, TypeError) as err:  # a validator's own ValueError: its text names the rule
        raise UntrustedInputError(describe_validation_error(err, where)) from None
    at = lone_surrogate_at(value) if surrogates else None
    if at is not None:
        raise UntrustedInputError(f"{where}: {at}: {LONE_SURROGATE_RULE}")
    return value


def read_json_file(
    path: Path,
    where: str,
    schema: type[T] | TypeAdapter[T],
    *,
    limit: int = MAX_JSON_BYTES,
) -> T:
    """A plaintext JSON file of `schema`; OSError is the caller's to name."""
    return parse_json(read_limited(path, where, limit), where, schema, limit=limit)


def _rule_text(error: Any) -> str:
    """The broken rule without the offending value (pydantic quotes a bad discriminator tag)."""
    ctx = error.get("ctx") or {}
    if error["type"] == "union_tag_invalid":
        return f"{ctx.get('discriminator', 'kind')} must be one of {ctx.get('expected_tags', '')}"
    if error["type"] == "string_unicode":  # a constrained str field refuses a lone surrogate itself
        return LONE_SURROGATE_RULE
    if error["type"] == "json_invalid":  # pydantic's own parser: its reason without the input
        return f"not valid JSON ({ctx.get('error', '')})" if ctx.get("error") else "not valid JSON"
    return str(error["msg"])


def describe_validation_error(err: Exception, where: str) -> str:
    """One line: the file, the first field that broke a rule and the rule; never the value."""
    if isinstance(err, ValidationError):
        first = err.errors(include_url=False, include_input=False)[0]
        loc = ".".join(str(p) for p in first["loc"]) or "(root)"
        more = f" (+{err.error_count() - 1} more)" if err.error_count() > 1 else ""
        if first["type"] == "extra_forbidden":  # the last part of loc is the file's unknown key
            parent = ".".join(str(p) for p in first["loc"][:-1]) or "(root)"
            text = f"{where}: an unexpected field in {parent}{more}"
        else:
            text = f"{where}: {loc}: {_rule_text(first)}{more}"
    else:
        text = f"{where}: {err}"
    return " ".join(text.split())


def json_depth(data: Any) -> int:
    """Nesting depth of parsed JSON, without recursion.

    A scalar is 0, `[]` is 1; one level of containers at a time (scalars are never queued); stops
    past `MAX_JSON_DEPTH`.
    """
    level = [data] if isinstance(data, dict | list) else []
    depth = 0
    while level and depth <= MAX_JSON_DEPTH:
        depth += 1
        level = [
            child
            for value in level
            for child in (value.values() if isinstance(value, dict) else value)
            if isinstance(child, dict | list)
        ]
    return depth


def lone_surrogate_at(value: Any, loc: str = "") -> str | None:
    """The location of the first string holding a lone surrogate, or None.

    Pydantic style (`inputs.pr.title`, `inputs.files.0.patch`). Model fields are named by their
    alias; a free-form object's keys come from the file, so they show as `*` and are never quoted.
    """
    if isinstance(value, str):
        return (loc or "(root)") if _SURROGATE.search(value) else None
    if isinstance(value, BaseModel):
        fields = type(value).model_fields
        items = [(field.alias or name, getattr(value, name)) for name, field in fields.items()]
    elif isinstance(value, dict):
        if any(isinstance(key, str) and _SURROGATE.search(key) for key in value):
            return f"a key in {loc or '(root)'}"
        items = [("*", child) for child in value.values()]
    elif isinstance(value, list | tuple):
        items = [(str(index), child) for index, child in enumerate(value)]
    else:
        return None
    for name, child in items:
        found = lone_surrogate_at(child, f"{loc}.{name}" if loc else name)
        if found is not None:
            return found
    return None
