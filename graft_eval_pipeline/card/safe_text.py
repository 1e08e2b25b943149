"""Text from outside (a file, an API answer) made safe to print on a terminal: `to_terminal_safe`.

A model id as the API answered it, a run id read from a report, a file name: any of them may carry
ANSI escapes or bidi overrides that rewrite the terminal. `to_terminal_safe` shows C0/C1 controls
(except newline and tab) and Unicode format characters (Cf) as a visible `[U+XXXX]`. It lives in
`card/`, the lowest layer, so the live client's log lines use the same function as `show`
(evalset/sets/terminal.py) and the CLI.
"""

from __future__ import annotations

import re
import unicodedata

_NOT_PLAIN_ASCII = re.compile(r"[^\x20-\x7e\n\t]")


def _visible(match: re.Match[str]) -> str:
    char = match.group()
    code = ord(char)
    if code < 0x20 or 0x7F <= code <= 0x9F or unicodedata.category(char) == "Cf":
        return f"[U+{code:04X}]"
    return char


def to_terminal_safe(text: str) -> str:
    return _NOT_PLAIN_ASCII.sub(_visible, text)
