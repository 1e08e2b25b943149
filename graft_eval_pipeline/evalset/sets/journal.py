"""Rollback protection for a pilot set: an append-only sealed journal of each sealed file's hash.

AES-GCM's additional data binds a sealed file to its set and path, not to its version, so an
older copy of a case, asset value, cache entry or record file put back in place would open as
current. `<set>/journal.enc` records, for every sealed file the store writes, the SHA-256 of its
bytes: a write appends a `pending` entry (fsynced) before its atomic rename and a `commit` entry
after it; a delete appends the same pair with no hash. A reader accepts a file whose hash was its
current version at some moment of the read: the last committed hash, a pending one after it (a
write in flight, or one a crash stopped between rename and commit), or any hash the journal gained
while the file was being read. Any other hash naming the file, a file the journal never named, or
a file gone that the journal holds, is refused with one line naming the file.

Why a journal rather than a manifest rewritten on each write: a write then costs two appends,
not time proportional to the set. Readers cache the parsed journal per process keyed by its inode
and size and read only the new tail, so a case read costs one `stat` and one SHA-256 of the file.

The journal's first line is plaintext `{"graftEvalJournal": 1, "gen": <random hex>}`; each later
line is `<op> <sha> <path>` sealed with the set's key (base64 of IV, ciphertext and tag, no JSON
to parse) under the AAD `<setId>/journal.enc#<gen>.<n>` (entry n), so entries cannot be
edited, reordered, dropped in the middle or spliced from another journal. Cutting entries off the
end (an older copy of the journal) is noticed only together with the files it would roll back,
or within one process (the count it has seen); a whole older copy of the set, journal included,
cannot be told from the real one without state kept outside the folder.

One writer per set is guaranteed by the set hold (hold.py); readers may run while it writes.
"""

from __future__ import annotations

import hashlib
import os
import re
import secrets
import stat
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from graft_eval_pipeline.evalset.sets.crypto import cipher, open_compact, seal_compact
from graft_eval_pipeline.evalset.sets.errors import EvalCryptoError, EvalError
from graft_eval_pipeline.evalset.sets.paths import IMPORTED_DIR, INBOX_DIR, JOURNAL_FILE
from graft_eval_pipeline.evalset.sets.untrusted import UntrustedInputError, load_json

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

FORMAT = 1
HEADER_FIELD = "graftEvalJournal"
PENDING, COMMIT = "pending", "commit"
ACCEPT_COMMAND = "graft-eval sets journal --set <set>"
HEADER_LIMIT = 4096
_SHA = re.compile(r"[0-9a-f]{64}")


def digest(data: bytes) -> str:
    """The hash the journal records for a sealed file's bytes."""
    return hashlib.sha256(data).hexdigest()


def is_journaled(rel_file: str) -> bool:
    """Every sealed file the store writes.

    Not the label files dropped into labels-inbox/ from outside (the store never wrote them; once
    imported they are copied to imported/, which is).
    """
    if rel_file == JOURNAL_FILE:
        return False
    return not (rel_file.startswith(INBOX_DIR + "/") and not rel_file.startswith(IMPORTED_DIR + "/"))


class Snapshot(NamedTuple):
    """Where the journal stood before a read: (generation, entry count)."""

    gen: str
    entries: int


@dataclass
class _State:
    """One process's parse of one journal file, grown by its new tail."""

    inode: int = -1
    gen: str = ""
    offset: int = 0  # bytes of complete lines consumed
    count: int = 0  # entries consumed (the header excluded)
    # path -> [(entry index, committed, sha or None for absent)]
    history: dict[str, list[tuple[int, bool, str | None]]] = field(default_factory=dict)
    seen: dict[str, int] = field(default_factory=dict)  # gen -> most entries ever seen in it


_states: dict[str, _State] = {}
_lock = threading.Lock()


def _where(set_id: str) -> str:
    return f"{JOURNAL_FILE} of set {set_id}"


def _damaged(set_id: str, what: str) -> EvalError:
    return EvalCryptoError(
        f"{_where(set_id)} {what}: restore it from a backup of the set, or run `{ACCEPT_COMMAND}` "
        "to accept every sealed file as it is now"
    )


def missing_problem(set_dir: Path, set_id: str) -> str | None:
    """One line when a pilot set has no journal (made before it existed, or the journal deleted)."""
    if os.path.lexists(set_dir / JOURNAL_FILE):
        return None
    return (
        f"set {set_id} has no {JOURNAL_FILE} (its record of each sealed file's current version): for a "
        f"set made before graft-eval kept one, run `{ACCEPT_COMMAND}` once; otherwise it was deleted: "
        "restore it from a backup of the set"
    )


def _open(path: Path, flags: int, set_id: str) -> int:
    try:
        fd = os.open(path, flags | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        raise EvalError(missing_problem(path.parent, set_id) or f"{_where(set_id)} is gone") from None
    except OSError as exc:
        raise EvalError(f"could not open {_where(set_id)}: {exc.strerror or exc}") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise EvalError(f"{_where(set_id)} is not a regular file: restore it from a backup of the set")
    return fd


def _header(gen: str) -> bytes:
    return (f'{{"{HEADER_FIELD}": {FORMAT}, "gen": "{gen}"}}\n').encode("ascii")


def _parse_header(line: bytes, set_id: str) -> str:
    try:
        fields = load_json(line, JOURNAL_FILE)
    except UntrustedInputError:
        fields = None
    gen = fields.get("gen") if isinstance(fields, dict) else None
    if not isinstance(fields, dict) or fields.get(HEADER_FIELD) != FORMAT or not isinstance(gen, str):
        raise _damaged(set_id, "is damaged (its first line is not a graft-eval journal header)")
    if not gen or len(gen) > 64 or not all(c in "0123456789abcdef" for c in gen):
        raise _damaged(set_id, "is damaged (its generation is malformed)")
    return gen


def _aad(set_id: str, gen: str, index: int) -> bytes:
    return f"{set_id}/{JOURNAL_FILE}#{gen}.{index}".encode()


def _entry_line(aead: AESGCM, set_id: str, gen: str, index: int, op: str, rel: str, sha: str | None) -> bytes:
    """One journal entry, sealed as one base64 line.

    The entry is `<op> <sha or -> <path>`; a JSON envelope would cost a parse per entry when a
    process first reads the journal.
    """
    body = f"{op} {sha or '-'} {rel}".encode()
    return seal_compact(aead, body, _aad(set_id, gen, index)) + b"\n"


def _parse_entry(
    line: bytes, aead: AESGCM, set_id: str, gen: str, index: int
) -> tuple[str, bool, str | None]:
    body = open_compact(aead, line, _aad(set_id, gen, index))
    if body is None:
        what = f"is tampered at entry {index} (edited, lines moved, or from another journal)"
        raise _damaged(set_id, what)
    try:
        op, sha, rel = body.decode("utf-8").split(" ", 2)
    except (UnicodeDecodeError, ValueError):
        op = sha = rel = ""
    if op not in (PENDING, COMMIT) or not rel or not (sha == "-" or _SHA.fullmatch(sha)):
        raise _damaged(set_id, f"is damaged at entry {index} (not a journal entry)")
    return rel, op == COMMIT, None if sha == "-" else sha


def _name(set_dir: Path) -> str:
    """The journal's path as a string.

    The key of this process's parse of it (a set reached by two names is parsed once for each),
    built without pathlib on the path of every file read.
    """
    return os.path.join(set_dir, JOURNAL_FILE)


def _refresh(set_dir: Path, set_id: str, key: bytes, *, writer: bool = False) -> _State:
    """Bring this process's parse of the journal up to date; read only what was appended."""
    name = _name(set_dir)
    path = Path(name)
    state = _states.setdefault(name, _State())
    if not writer:  # the common case, once per file read: nothing appended since the last look
        try:
            info = os.stat(name, follow_symlinks=False)
        except OSError:
            info = None
        if info is not None and info.st_ino == state.inode and info.st_size == state.offset:
            return state
    fd = _open(path, os.O_RDWR if writer else os.O_RDONLY, set_id)
    try:
        info = os.fstat(fd)
        if info.st_ino != state.inode:  # first read, or the journal was rewritten: parse it all
            state = _states[name] = _State(inode=info.st_ino, seen=state.seen)
        elif info.st_size < state.offset:
            raise _damaged(set_id, f"was cut short (it held {state.count} entries; rolled back?)")
        if info.st_size == state.offset:
            return state
        os.lseek(fd, state.offset, os.SEEK_SET)
        tail = _read_all(fd, info.st_size - state.offset)
        end = tail.rfind(b"\n") + 1
        if writer and end < len(tail):  # a torn last line: only a stopped writer leaves one
            os.ftruncate(fd, state.offset + end)
            os.fsync(fd)
        _consume(state, tail[:end], set_id, key)
    finally:
        os.close(fd)
    previous = state.seen.get(state.gen, 0)
    if state.count < previous:
        raise _damaged(set_id, f"holds {state.count} entries, {previous} were read earlier (rolled back?)")
    state.seen[state.gen] = state.count
    return state


def _read_all(fd: int, size: int) -> bytes:
    parts, left = [], size
    while left > 0:
        chunk = os.read(fd, left)
        if not chunk:
            break
        parts.append(chunk)
        left -= len(chunk)
    return b"".join(parts)


def _consume(state: _State, data: bytes, set_id: str, key: bytes) -> None:
    aead = cipher(key)
    start = 0
    while start < len(data):
        stop = data.index(b"\n", start)
        line = data[start:stop]
        if state.offset == 0 and start == 0:
            if len(line) > HEADER_LIMIT:
                raise _damaged(set_id, "is damaged (its first line is not a graft-eval journal header)")
            state.gen = _parse_header(line, set_id)
        else:
            rel, committed, sha = _parse_entry(line, aead, set_id, state.gen, state.count)
            state.history.setdefault(rel, []).append((state.count, committed, sha))
            state.count += 1
        start = stop + 1
    state.offset += len(data)


def snapshot(set_dir: Path, set_id: str, key: bytes) -> Snapshot:
    """Where the journal stands now: taken before reading a file, handed to `check`."""
    with _lock:
        state = _refresh(set_dir, set_id, key)
        return Snapshot(state.gen, state.count)


def _accepted(history: list[tuple[int, bool, str | None]], since: int, sha: str | None) -> bool:
    """Was `sha` the file's version at the snapshot (`since` entries), or did it become one later?"""
    for index, committed, recorded in reversed(history):
        if recorded == sha:
            return True
        if committed and index < since:
            return False
    return sha is None  # written for the first time after the snapshot, and not renamed yet


def _verdict(state: _State, rel: str, sha: str | None, before: Snapshot) -> bool | None:
    history = state.history.get(rel)
    if history is None:
        return None
    return _accepted(history, before.entries if before.gen == state.gen else 0, sha)


def check(
    set_dir: Path,
    set_id: str,
    key: bytes,
    rel: str,
    data: bytes | None,
    before: Snapshot,
    *,
    sha: str | None = None,
) -> None:
    """Refuse a file at `rel` unless it was a current version at some moment since `before`.

    The file is `data`, or the file whose hash is `sha`; neither: the file is absent.
    """
    if not is_journaled(rel):
        return
    if data is not None:
        sha = digest(data)
    with _lock:
        state = _states.get(_name(set_dir)) or _refresh(set_dir, set_id, key)
        verdict = _verdict(state, rel, sha, before)
        if verdict is not True:  # the journal may have grown during the read
            state = _refresh(set_dir, set_id, key)
            verdict = _verdict(state, rel, sha, before)
    if verdict is None and sha is not None:
        raise EvalCryptoError(
            f"{rel}: this set's journal never recorded it (put there by hand, or restored from a copy "
            f"older than the journal); remove it, or run `{ACCEPT_COMMAND}` to accept the set as it is"
        )
    if verdict is False:
        what = (
            "deleted outside graft-eval (the set's journal holds it)"
            if sha is None
            else "not the version the set's journal holds "
            "(tampered, an older copy put back, or the set rolled back)"
        )
        raise EvalCryptoError(
            f"{rel}: {what}; restore the current file, or run `{ACCEPT_COMMAND}` to accept the set as it is"
        )


def live_files(set_dir: Path, set_id: str, key: bytes, prefix: str) -> set[str]:
    """The journaled files under `prefix` that exist in the journal's current state."""
    with _lock:
        state = _refresh(set_dir, set_id, key)
        found = set()
        for rel, history in state.history.items():
            if rel.startswith(prefix) and history[-1][2] is not None:
                found.add(rel)
        return found


def _append(
    set_dir: Path, set_id: str, key: bytes, op: str, rel: str, sha: str | None, *, sync: bool
) -> None:
    with _lock:
        state = _refresh(set_dir, set_id, key, writer=True)
        line = _entry_line(cipher(key), set_id, state.gen, state.count, op, rel, sha)
        fd = _open(set_dir / JOURNAL_FILE, os.O_WRONLY | os.O_APPEND, set_id)
        try:
            os.write(fd, line)
            if sync:
                os.fsync(fd)
        except OSError as exc:
            raise EvalError(
                f"could not write {_where(set_id)}: {exc.strerror or exc}; check free space and permissions"
            ) from None
        finally:
            os.close(fd)


@contextmanager
def recording(set_dir: Path, set_id: str, key: bytes, rel: str, sha: str | None) -> Iterator[None]:
    """Around one write (sha of the new bytes) or delete (None) of `rel` by the set's one writer.

    The pending entry is fsynced before the body renames, so no crash leaves a file the journal
    does not know; the commit entry is not (the next entry's fsync, or the pending one, covers it):
    a crash before it leaves both versions of that one file accepted until it is written again.
    """
    if not is_journaled(rel):
        yield
        return
    _append(set_dir, set_id, key, PENDING, rel, sha, sync=True)
    yield
    _append(set_dir, set_id, key, COMMIT, rel, sha, sync=False)


def journal_bytes(set_id: str, key: bytes, files: Iterable[tuple[str, str]]) -> bytes:
    """A new journal (a new generation) recording `files` (path, sha) as current."""
    gen, aead = secrets.token_hex(16), cipher(key)
    lines = [_header(gen)]
    lines += [
        _entry_line(aead, set_id, gen, index, COMMIT, rel, sha)
        for index, (rel, sha) in enumerate(sorted(files))
    ]
    return b"".join(lines)
