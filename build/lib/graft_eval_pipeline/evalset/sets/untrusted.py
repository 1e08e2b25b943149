"""Reading files a person or another program wrote: bytes → text → JSON, one line on failure.

Case files, `label --apply` files and labels-inbox files can hold anything: bytes that are not
UTF-8, JSON nested thousands of levels deep (Python's json raises RecursionError), or a lone
surrogate escape (`\\ud800`) that json accepts but no UTF-8 writer can encode later. Each is
refused here at parse time with an `UntrustedInputError` naming the file and, for a surrogate, the
field location; never a value, and never a key of a free-form object (those come from the file).
"""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import BaseModel

MAX_JSON_DEPTH = 64
"""Far above any file graft-eval writes (a case is about 6 levels deep, a scripted reply ~10)."""

LONE_SURROGATE_RULE = "holds a lone surrogate escape (\\ud800-\\udfff), which is not text; remove it"

_SURROGATE = re.compile("[\ud800-\udfff]")


class UntrustedInputError(ValueError):
    """One line naming the file and what is wrong with it; never the offending content."""


def decode_utf8(data: bytes, where: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise UntrustedInputError(
            f"{where}: not UTF-8 text (bad byte at offset {err.start}); save the file as UTF-8"
        ) from None


def load_json(text: str, where: str) -> Any:
    """json.loads, refusing invalid and too deeply nested documents without a traceback."""
    too_deep = UntrustedInputError(
        f"{where}: JSON nested more than {MAX_JSON_DEPTH} levels deep; this is not a graft-eval file"
    )
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        where_in = f"line {err.lineno}, column {err.colno}"
        raise UntrustedInputError(f"{where}: not valid JSON ({where_in})") from None
    except RecursionError:
        raise too_deep from None
    if json_depth(data) > MAX_JSON_DEPTH:
        raise too_deep
    return data


def json_depth(data: Any) -> int:
    """Nesting depth of parsed JSON, without recursion (a scalar is 0, `[]` is 1)."""
    deepest, stack = 0, [(data, 1)]
    while stack:
        value, level = stack.pop()
        children = value.values() if isinstance(value, dict) else value if isinstance(value, list) else None
        if children is None:
            continue
        deepest = max(deepest, level)
        if level <= MAX_JSON_DEPTH:  # deeper is refused anyway: stop walking
            stack.extend((child, level + 1) for child in children)
    return deepest


def lone_surrogate_at(value: Any, loc: str = "") -> str | None:
    """The location of the first string holding a lone surrogate, pydantic style
    (`inputs.pr.title`, `inputs.files.0.patch`), or None. Model fields are named by their alias;
    a free-form object's keys come from the file, so they show as `*` and are never quoted."""
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
