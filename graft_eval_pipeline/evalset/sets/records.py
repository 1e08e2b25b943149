"""Record files: many JSON records in one private file of a set, written one at a time.

A run's card results are written as each case ends, so none of them waits in memory for the
last case. Each record is one line; in a pilot set each line is its own AES-256-GCM envelope
whose AAD is `<setId>/<path>#<n>` (record n), so lines cannot be reordered, moved between
files or sets. A closing line counts the records (AAD `...#end` in a pilot set): a file cut
short or with lines dropped is refused. The file is written like `atomic_write`: a temp file in
the same folder, fsync, rename; a run that stops leaves the previous file (or none), never half
a file, and the temp file goes at the next open of the set.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from types import TracebackType
from typing import IO

from graft_eval_pipeline.evalset.sets.crypto import open_envelope, seal
from graft_eval_pipeline.evalset.sets.errors import EvalError
from graft_eval_pipeline.evalset.sets.journal import Snapshot, check, recording, snapshot
from graft_eval_pipeline.evalset.sets.store import (
    FILE_MODE,
    KEY_MISSING,
    SEALED_LIMIT,
    SEALED_SUFFIX,
    CaseSet,
    _check_rel,
    _check_set_folder,
    _fsync_dir,
    make_private_dirs,
)
from graft_eval_pipeline.evalset.sets.untrusted import UntrustedInputError, decode_utf8, load_json

END_FIELD = "graftEvalRecords"
LINE_LIMIT = SEALED_LIMIT
"""One record a line: the line of one sealed record is at most what a sealed file may be."""


def _files(cs: CaseSet, rel: str) -> tuple[str, str]:
    """(this set's file for `rel`, the file of the other kind it must never hold)."""
    _check_rel(rel)
    sealed = rel + SEALED_SUFFIX
    return (sealed, rel) if cs.is_pilot else (rel, sealed)


def _key(cs: CaseSet) -> bytes | None:
    if cs.is_pilot and cs.key is None:
        raise EvalError(f"{KEY_MISSING}: set {cs.set_id} is encrypted")
    return cs.key if cs.is_pilot else None


def _end_line(count: int) -> str:
    return json.dumps({END_FIELD: count})


class RecordWriter:
    """Writes `<rel>` (plain) or `<rel>.enc` (per-line envelopes) of a set, one record a line.

    Use as a context manager: leaving it normally closes the file (count, fsync, rename);
    leaving it by an exception removes the temp file and leaves any earlier file in place.
    """

    def __init__(self, cs: CaseSet, rel: str) -> None:
        self._cs = cs
        self._own, _ = _files(cs, rel)
        self._key = _key(cs)
        self._aad = f"{cs.set_id}/{self._own}"
        self._path = cs.dir / self._own
        self._count = 0
        self._tmp: str | None = None
        self._handle: IO[str] | None = None
        self._hash = hashlib.sha256()  # of the file's bytes, for the set's journal

    def __enter__(self) -> RecordWriter:
        _check_set_folder(self._cs)
        make_private_dirs(self._path.parent)
        fd, self._tmp = tempfile.mkstemp(dir=self._path.parent, prefix=f".{self._path.name}.", suffix=".tmp")
        os.fchmod(fd, FILE_MODE)
        self._handle = os.fdopen(fd, "w", encoding="utf-8", newline="\n")
        return self

    def write(self, record: str) -> None:
        """One record: a JSON document on one line (json.dumps and pydantic write no raw newline)."""
        if self._handle is None:
            raise RuntimeError("RecordWriter.write outside its `with` block")
        if "\n" in record:
            raise ValueError("a record must be one line of JSON")
        line = record if self._key is None else seal(record, self._key, f"{self._aad}#{self._count}")
        self._put(self._handle, line + "\n")
        self._count += 1

    def _put(self, handle: IO[str], line: str) -> None:
        handle.write(line)
        self._hash.update(line.encode("utf-8"))

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None
    ) -> None:
        handle, tmp = self._handle, self._tmp
        self._handle = None
        if handle is None or tmp is None:
            return
        try:
            if kind is None:
                end = _end_line(self._count)
                self._put(
                    handle, (end if self._key is None else seal(end, self._key, f"{self._aad}#end")) + "\n"
                )
                handle.flush()
                os.fsync(handle.fileno())
            handle.close()
            if kind is None:
                _check_set_folder(self._cs)  # never re-create a set purged while the run went on
                if self._key is None:
                    os.replace(tmp, self._path)
                else:
                    sha = self._hash.hexdigest()
                    with recording(self._cs.dir, self._cs.set_id, self._key, self._own, sha):
                        os.replace(tmp, self._path)
                _fsync_dir(self._path.parent)
        except OSError as exc:
            Path(tmp).unlink(missing_ok=True)
            reason = exc.strerror or exc
            raise EvalError(
                f"could not write {self._path}: {reason}; check free space and permissions"
            ) from None
        finally:
            if kind is not None or not handle.closed:
                handle.close()
                Path(tmp).unlink(missing_ok=True)


def read_records(cs: CaseSet, rel: str) -> Iterator[str] | None:
    """The records of `rel` in the order written, opened one line at a time; None if absent.

    A file without its closing count, with lines missing, reordered or moved from elsewhere is
    an EvalError naming the file, never its content.
    """
    own, other = _files(cs, rel)
    if (cs.dir / other).exists():
        raise EvalError(
            f"{other}: this file kind does not belong in {cs.meta.kind} set {cs.set_id}; remove it"
        )
    path = cs.dir / own
    key = _key(cs)
    before = None if key is None else snapshot(cs.dir, cs.set_id, key)
    if not path.is_file():
        if key is not None and before is not None:
            check(cs.dir, cs.set_id, key, own, None, before)
        return None
    return _records(cs, own, key, before)


def _records(cs: CaseSet, own: str, key: bytes | None, before: Snapshot | None) -> Iterator[str]:
    set_id, path = cs.set_id, cs.dir / own
    aad = f"{set_id}/{own}"
    damaged = f"{own} of set {set_id} is damaged (cut short or edited): run again to rewrite it"
    count = 0
    with path.open("rb") as handle:
        if key is not None and before is not None:  # the journal's hash first: one pass, same file
            whole = hashlib.sha256()
            while chunk := handle.read(1 << 20):
                whole.update(chunk)
            check(cs.dir, set_id, key, own, None, before, sha=whole.hexdigest())
            handle.seek(0)
        previous: str | None = None
        while raw_bytes := handle.readline(LINE_LIMIT + 1):
            if not raw_bytes.endswith(b"\n"):  # cut short, or a line longer than any record
                raise EvalError(damaged)
            raw = decode_utf8(raw_bytes, own)
            if previous is not None:
                yield previous if key is None else open_envelope(previous, key, f"{aad}#{count}")
                count += 1
            previous = raw[:-1]
    if previous is None:
        raise EvalError(damaged)
    end = previous if key is None else open_envelope(previous, key, f"{aad}#end")
    try:
        closing = load_json(end, own)
    except UntrustedInputError:
        closing = None
    written = closing.get(END_FIELD) if isinstance(closing, dict) else None
    if written != count:
        raise EvalError(damaged)
