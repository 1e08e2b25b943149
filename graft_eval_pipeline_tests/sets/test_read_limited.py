"""`read_limited` reads a file by its size, and still whole (up to the limit) when it grows."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from graft_eval_pipeline.evalset.sets import UntrustedInputError
from graft_eval_pipeline.evalset.sets.untrusted import read_limited


class _Stat:
    def __init__(self, size: int) -> None:
        self.st_size = size


def test_reads_the_whole_file(tmp_path: Path) -> None:
    path = tmp_path / "a.json"
    for data in (b"", b"{}", os.urandom(70_000)):
        path.write_bytes(data)
        assert read_limited(path, "a.json") == data


def test_a_file_that_grew_after_its_size_was_taken_is_read_whole_or_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "a.json"
    path.write_bytes(b"x" * 5_000)
    monkeypatch.setattr(os, "fstat", lambda _fd: _Stat(10))  # the size seen before it grew
    assert read_limited(path, "a.json") == b"x" * 5_000
    assert read_limited(path, "a.json", limit=5_000) == b"x" * 5_000
    with pytest.raises(UntrustedInputError, match=r"a\.json"):
        read_limited(path, "a.json", limit=4_999)
