"""Byte offsets of a text's UTF-8 form, for RE2 scans that run on bytes.

Why: google-re2 encodes a `str` subject to UTF-8 (and counts characters up to `pos`) at every
call, so a loop of `search(text, pos)` over a non-ASCII text costs its whole length per hit.
The scans (`scan.py`, the export's user patterns) encode once and search the bytes; this
turns the byte offsets of their hits back into `str` offsets, in time linear in the text.
"""

from __future__ import annotations

# Continuation bytes (10xxxxxx) of UTF-8 map to 1, every other byte to 0.
_CONTINUATION = bytes(1 if 0x80 <= b < 0xC0 else 0 for b in range(256))


class Utf8Offsets:
    """Offsets in the UTF-8 bytes of a non-ASCII text to offsets in the `str` and back.

    `data` is `text.encode("utf-8", "surrogatepass")`. A scan's positions only move forward, so
    one cursor walks the text once (a position behind it starts again from 0): a byte offset is
    turned into characters by counting the continuation bytes since the cursor (`bytes.count` on a
    0/1 map of the bytes), a character offset into bytes by encoding the characters since it.
    """

    def __init__(self, text: str, data: bytes) -> None:
        self._text = text
        self._data = data
        self._marks = b""  # made at the first hit: most texts have none
        self._byte = 0
        self._char = 0

    def _rewind(self, byte: int, char: int) -> None:
        if byte < self._byte or char < self._char:
            self._byte = self._char = 0

    def char_of(self, byte: int) -> int:
        if not self._marks:
            self._marks = self._data.translate(_CONTINUATION)
        self._rewind(byte, self._char)
        self._char += byte - self._byte - self._marks.count(1, self._byte, byte)
        self._byte = byte
        return self._char

    def byte_of(self, char: int) -> int:
        self._rewind(self._byte, char)
        self._byte += len(self._text[self._char : char].encode("utf-8", "surrogatepass"))
        self._char = char
        return self._byte
