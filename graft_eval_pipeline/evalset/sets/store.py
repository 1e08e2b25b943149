"""Case sets on disk (spec E4-E9, 6.2, T3): set.json, cases/, private files, atomic writes.

A pilot set lives outside every git working tree and every file in it except set.json and the
reports is an AES-256-GCM envelope whose AAD is `<setId>/<relative path>`. The synthetic set is
plaintext. Dirs are 0700 and files 0600 in every set. Opening a set walks it once
(`set_tree`): a pilot set holding a link or special file is refused, loose modes are a warning
(refused with strict), and temp files a stopped write left are removed.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path, PurePosixPath
from typing import Literal, TypeVar

from graft_eval_pipeline.evalset.sets.case_schema import (
    CASE_ID_PATTERN,
    SET_ID_PATTERN,
    SYNTHETIC_SET_ID,
    EvalCase,
    FloorConfig,
    SetMeta,
    dump_case,
    parse_case,
)
from graft_eval_pipeline.evalset.sets.crypto import key_id, open_envelope, open_envelope_bytes, seal
from graft_eval_pipeline.evalset.sets.errors import EvalCryptoError, EvalError, EvalLocationError
from graft_eval_pipeline.evalset.sets.journal import (
    check,
    digest,
    is_journaled,
    journal_bytes,
    live_files,
    missing_problem,
    recording,
    snapshot,
)
from graft_eval_pipeline.evalset.sets.paths import CASES_DIR, JOURNAL_FILE, SET_FILE
from graft_eval_pipeline.evalset.sets.set_tree import (
    SetTree,
    foreign_entries_problem,
    loose_modes_warning,
    scan_set_tree,
    store_only_part,
)
from graft_eval_pipeline.evalset.sets.untrusted import (
    LARGE_DOCUMENT,
    MAX_JSON_BYTES,
    UntrustedInputError,
    decode_utf8,
    describe_validation_error,
    read_json_file,
    read_limited,
)

SEALED_SUFFIX = ".enc"
PLAIN_CASE_SUFFIX = ".case.json"
SEALED_CASE_SUFFIX = ".case.enc"
DIR_MODE = 0o700
FILE_MODE = 0o600
KEY_MISSING = "GRAFT_EVAL_KEY is not set"
_Plain = TypeVar("_Plain", str, bytes)


@dataclass(frozen=True)
class CaseSet:
    """An opened set; `key` is None for the synthetic set and never shown in a repr.

    `warnings`: one-line notes from opening it (loose modes), for the caller to show.
    """

    dir: Path
    meta: SetMeta
    key: bytes | None = field(default=None, repr=False)
    warnings: tuple[str, ...] = ()

    @property
    def set_id(self) -> str:
        return self.meta.set_id

    @property
    def is_pilot(self) -> bool:
        return self.meta.kind == "pilot"


def resolve_set_dir(set_id: str, eval_dir: Path, synthetic_dir: Path) -> Path:
    """Set id (the Dagster partition key) → folder: `synthetic` is the committed set."""
    if set_id == SYNTHETIC_SET_ID:
        return synthetic_dir
    if not re.fullmatch(SET_ID_PATTERN, set_id):
        raise EvalError(f"bad set id {set_id!r}: use lowercase letters, digits and '-' (at most 40)")
    return eval_dir / set_id


def discover_set_ids(eval_dir: Path, synthetic_dir: Path) -> list[str]:
    """The synthetic set (when present) and every folder of eval_dir holding a set.json, sorted."""
    found = {SYNTHETIC_SET_ID} if (synthetic_dir / SET_FILE).is_file() else set()
    if eval_dir.is_dir():
        found |= {
            p.name
            for p in eval_dir.iterdir()
            if (p / SET_FILE).is_file()
            and re.fullmatch(SET_ID_PATTERN, p.name)
            and p.name != SYNTHETIC_SET_ID
        }
    return sorted(found)


# --- location and atomic writes ------------------------------------------------------------


def assert_private_location(dir: Path) -> None:
    """Refuse a pilot set anywhere below a `.git` file or folder (no git binary needed)."""
    real = Path(dir).expanduser().resolve()
    for ancestor in (real, *real.parents):
        if os.path.lexists(ancestor / ".git"):
            raise EvalLocationError(
                f"{dir} is inside a git working tree ({ancestor}): keep pilot sets outside every "
                "repository, for example under $GRAFT_EVAL_DIR (default ~/.graft-eval)"
            )


def atomic_write(
    path: Path,
    data: bytes | str,
    mode: int = FILE_MODE,
    *,
    _rename: Callable[[str, str], None] = os.replace,
) -> None:
    """Temp file in the same folder, fsync, rename: a reader sees the old or the new file, never half."""
    payload = data.encode("utf-8") if isinstance(data, str) else data
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            os.fchmod(handle.fileno(), mode)
            handle.write(payload)
            handle.flush()
            os.fsync(handle.fileno())
        _rename(tmp, str(path))
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        reason = exc.strerror or exc
        raise EvalError(f"could not write {path}: {reason}; check free space and permissions") from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    _fsync_dir(path.parent)


def _fsync_dir(dir: Path) -> None:
    fd = os.open(dir, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def make_private_dirs(dir: Path) -> None:
    """Create `dir` and any missing parents with mode 0700 (umask does not loosen it)."""
    missing = [p for p in (dir, *dir.parents) if not p.exists()]
    for path in reversed(missing):
        path.mkdir(mode=DIR_MODE, exist_ok=True)
        os.chmod(path, DIR_MODE)


# --- create, open ---------------------------------------------------------------------------


def create_set(
    dir: Path,
    *,
    set_id: str,
    kind: Literal["synthetic", "pilot"],
    description: str,
    consent_ref: str | None,
    default_floor_config: FloorConfig | None,
    key: bytes | None,
    now: datetime,
) -> CaseSet:
    """Write set.json and cases/ into a new (or empty) folder; a pilot set needs a key and consent."""
    dir = Path(dir)
    if kind == "pilot":
        if key is None:
            raise EvalError(f"{KEY_MISSING}: a pilot set is encrypted; create a key with `graft-eval keygen`")
        if not (consent_ref or "").strip():
            raise EvalError("a pilot set needs --consent-ref <pilot agreement reference>")
        assert_private_location(dir)
    if (dir / SET_FILE).exists():
        raise EvalError(f"{dir} already holds a case set: open it, or pick another folder")
    if dir.exists() and any(dir.iterdir()):
        raise EvalError(f"{dir} is not empty: a case set needs a folder of its own (purge deletes it whole)")
    try:
        meta = SetMeta(
            schema_version=1,
            set_id=set_id,
            kind=kind,
            description=description,
            encrypted=kind == "pilot",
            key_id=key_id(key) if kind == "pilot" and key is not None else None,
            consent_ref=consent_ref if kind == "pilot" else None,
            default_floor_config=default_floor_config or FloorConfig(),
            created_at=now,
        )
    except ValueError as err:
        raise EvalError(describe_validation_error(err, SET_FILE)) from None
    make_private_dirs(dir / CASES_DIR)
    os.chmod(dir, DIR_MODE)  # the folder may have existed (empty) with looser modes
    if kind == "pilot" and key is not None:
        atomic_write(dir / JOURNAL_FILE, journal_bytes(set_id, key, []))
    atomic_write(dir / SET_FILE, json.dumps(meta.to_json_dict(), indent=2, ensure_ascii=False) + "\n")
    return CaseSet(dir=dir, meta=meta, key=key if kind == "pilot" else None)


def read_meta(dir: Path) -> SetMeta:
    """set.json of the folder, checked; a clear error when there is none (purge reads it too)."""
    path = Path(dir) / SET_FILE
    if not path.is_file():
        raise EvalError(
            f"{dir} is not a case set (no {SET_FILE}): check --set, or create it with `graft-eval init`"
        )
    try:
        return read_json_file(path, str(path), SetMeta)
    except OSError as exc:
        raise EvalError(f"could not read {path}: {os_reason(exc)}") from None


def open_set(
    dir: Path, key: bytes | None, *, strict: bool = False, _without_journal: bool = False
) -> CaseSet:
    """Open a set; a pilot set needs the key whose keyId set.json records (checked before decrypting).

    Every open removes the temp files a stopped write left. A pilot set must also hold only real
    folders and regular files (else EvalError); folders or files open to group or others give a
    warning in `CaseSet.warnings`, or an EvalError when `strict`.
    """
    dir = Path(dir)
    meta = read_meta(dir)
    if meta.kind == "synthetic":
        with contextlib.suppress(OSError):  # only the temp-file clean-up applies here: best effort
            scan_set_tree(dir, remove_stale_temps=True)
        return CaseSet(dir=dir, meta=meta, key=None)
    assert_private_location(dir)
    if key is None:
        raise EvalError(
            f"{KEY_MISSING}: set {meta.set_id} is encrypted; export GRAFT_EVAL_KEY from the password manager"
        )
    if key_id(key) != meta.key_id:
        raise EvalCryptoError(
            f"wrong GRAFT_EVAL_KEY for set {meta.set_id}: set.json expects key {meta.key_id}, "
            f"the key given is {key_id(key)}; use this set's key from the password manager"
        )
    warning = check_set_tree(dir, meta.set_id, remove_stale_temps=True)
    missing = None if _without_journal else missing_problem(dir, meta.set_id)
    if missing is not None:
        raise EvalCryptoError(missing)
    if warning is not None and strict:
        raise EvalError(f"{warning} (refused under --strict)")
    return CaseSet(dir=dir, meta=meta, key=key, warnings=(warning,) if warning else ())


def check_set_tree(dir: Path, set_id: str, *, remove_stale_temps: bool) -> str | None:
    """Refuse a pilot set holding a link or special file; the loose-modes warning, if any."""
    tree = scan_tree(dir, set_id, remove_stale_temps=remove_stale_temps)
    return loose_modes_warning(tree, set_id, dir)


def scan_tree(dir: Path, set_id: str, *, remove_stale_temps: bool) -> SetTree:
    """The set's one walk, refusing links and special files (an open and a purge both need it)."""
    try:
        tree = scan_set_tree(dir, remove_stale_temps=remove_stale_temps)
    except OSError as exc:
        raise EvalError(f"could not read set {set_id} in {dir}: {os_reason(exc)}") from None
    problem = foreign_entries_problem(tree, set_id)
    if problem is not None:
        raise EvalError(problem)
    return tree


def os_reason(exc: OSError) -> str:
    """What an OSError says, for a one-line error."""
    return str(exc.strerror or exc)


# --- cases -----------------------------------------------------------------------------------


def _check_case_id(case_id: str) -> None:
    if not re.fullmatch(CASE_ID_PATTERN, case_id):
        raise EvalError(f"bad case id {case_id!r}: ids match {CASE_ID_PATTERN}")


def _case_files(cs: CaseSet, case_id: str) -> tuple[str, str]:
    """(the file this set's kind uses, the file it must never hold), relative to the set."""
    sealed, plain = f"{CASES_DIR}/{case_id}{SEALED_CASE_SUFFIX}", f"{CASES_DIR}/{case_id}{PLAIN_CASE_SUFFIX}"
    return (sealed, plain) if cs.is_pilot else (plain, sealed)


def _check_case_fits(cs: CaseSet, case: EvalCase, where: str) -> None:
    source = case.source
    if source.kind != cs.meta.kind or (source.kind == "pilot" and source.set_id != cs.set_id):
        raise EvalError(f"{where}: a {source.kind} case does not belong in {cs.meta.kind} set {cs.set_id}")


def _case_dir_names(cs: CaseSet, on_missing: Callable[[EvalError], None] | None = None) -> set[str]:
    """The names in cases/, refusing a pilot case file the journal holds but the folder lacks.

    A case file the journal holds but the folder lacks was deleted outside graft-eval; it is refused
    here, so no command runs on a set missing cases. `on_missing` gets each such refusal instead
    (`validate` lists them all).
    """
    cases = cs.dir / CASES_DIR
    names = {p.name for p in cases.iterdir()} if cases.is_dir() else set()
    if cs.is_pilot and cs.key is not None:
        before = snapshot(cs.dir, cs.set_id, cs.key)
        prefix = f"{CASES_DIR}/"
        for rel in sorted(live_files(cs.dir, cs.set_id, cs.key, prefix)):
            if rel.removeprefix(prefix) not in names and not (cs.dir / rel).exists():
                try:
                    check(cs.dir, cs.set_id, cs.key, rel, None, before)  # raises unless written meanwhile
                except EvalError as err:
                    if on_missing is None:
                        raise
                    on_missing(err)
    return names


def _case_ids(names: set[str]) -> list[str]:
    suffixes = (PLAIN_CASE_SUFFIX, SEALED_CASE_SUFFIX)
    return sorted({n.removesuffix(s) for n in names for s in suffixes if n.endswith(s)})


def list_case_ids(cs: CaseSet, on_missing: Callable[[EvalError], None] | None = None) -> list[str]:
    """Sorted ids of every case file, of either kind (so a misplaced file is reported on read).

    A case the pilot set's journal holds but the folder lacks raises, or goes to `on_missing`.
    """
    return _case_ids(_case_dir_names(cs, on_missing))


def read_case(cs: CaseSet, case_id: str) -> EvalCase:
    return _read_case(cs, case_id, None)


def read_cases(cs: CaseSet) -> list[EvalCase]:
    """Every case, in id order (all in memory: for small sets and labelling; runs use iter_cases)."""
    return list(iter_cases(cs))


def iter_cases(cs: CaseSet) -> Iterator[EvalCase]:
    """Every case in id order, read and validated one at a time: only the ids are held.

    The one scan of cases/ that finds the ids also tells whether a misplaced file of the other
    kind can exist, which spares each case a stat call (about 15 us of the ~150 us it takes to
    load one). A case that cannot be read raises when the iteration reaches it.
    """
    names = _case_dir_names(cs)
    for case_id in _case_ids(names):
        yield _read_case(cs, case_id, names)


def _read_case(cs: CaseSet, case_id: str, names: set[str] | None) -> EvalCase:
    """`names`: what a scan of cases/ found, when the caller made one."""
    _check_case_id(case_id)
    own, other = _case_files(cs, case_id)
    if (names is None or other.rpartition("/")[2] in names) and (cs.dir / other).exists():
        what = "plaintext" if cs.is_pilot else "sealed"
        raise EvalError(
            f"{other}: a {what} case file does not belong in {cs.meta.kind} set {cs.set_id}; remove it"
        )
    data: bytes | str | None = _read_file_bytes(cs, own)
    if data is None:
        raise EvalError(
            f"case {case_id} is not in set {cs.set_id}: list the ids with `graft-eval cases --set {cs.dir}`"
        )
    try:
        if isinstance(data, bytes) and len(data) > LARGE_DOCUMENT:  # parsed from its text, the
            data = decode_utf8(data, own)  # bytes dropped first (`LARGE_DOCUMENT`: memory)
        case = parse_case(data, own)
    except UntrustedInputError as err:  # CaseFormatError, or bytes that are not UTF-8
        if cs.is_pilot:  # decrypted bytes that are not UTF-8: the text path names it as before
            _read_file(cs, own)
        raise EvalError(str(err)) from None
    if case.id != case_id:
        raise EvalError(f"{own}: the case id does not match the file name; rename the file or fix the id")
    _check_case_fits(cs, case, own)
    return case


def write_case(cs: CaseSet, case: EvalCase) -> None:
    """Pilot: sealed cases/<id>.case.enc only; synthetic: plaintext cases/<id>.case.json only."""
    _check_case_id(case.id)
    own, _ = _case_files(cs, case.id)
    _check_case_fits(cs, case, own)
    _write_file(cs, own, dump_case(case))


# --- private files (cache, Dagster assets) and reports -------------------------------------


def _check_rel(rel: str) -> None:
    parts = PurePosixPath(rel).parts
    if not parts or rel.startswith("/") or "\\" in rel or ".." in parts or rel in (SET_FILE, CASES_DIR):
        raise EvalError(f"bad path {rel!r} inside a set: use a relative path such as cache/<key>.json")


def read_private(cs: CaseSet, rel: str) -> str | None:
    """`<rel>.enc` (sealed) in a pilot set, `<rel>` (plain) in the synthetic set; None if absent."""
    _check_rel(rel)
    sealed = rel + SEALED_SUFFIX
    own, other = (sealed, rel) if cs.is_pilot else (rel, sealed)
    if (cs.dir / other).exists():
        raise EvalError(
            f"{other}: this file kind does not belong in {cs.meta.kind} set {cs.set_id}; remove it"
        )
    return _read_file(cs, own)


def write_private(cs: CaseSet, rel: str, text: str) -> None:
    _check_rel(rel)
    _write_file(cs, rel + SEALED_SUFFIX if cs.is_pilot else rel, text)


def check_output_target(path: Path, flag: str) -> None:
    """Refuse an output path inside a set's store-only parts.

    `--out` and `--save-baseline` never write into set.json, journal.enc, cases/, cache/, assets/,
    exports/ or labels-inbox/, where a plaintext report would replace sealed data.
    """
    found = store_only_part(path)
    if found is not None:
        set_dir, rel = found
        raise EvalError(
            f"refusing {flag} {path}: it is {rel} of the case set in {set_dir}, which only the store "
            "writes; pick a path outside set.json, journal.enc, cases/, cache/, assets/, exports/ and "
            "labels-inbox/ (a pilot baseline goes to <set>/baseline.json)"
        )


def write_report_file(cs_or_dir: CaseSet | Path, rel: str, data: str | bytes) -> Path:
    """Reports are plaintext in every set (they carry no case content), but still private.

    Missing folders are made 0700 (parents too, whatever the umask) and the file is 0600.
    """
    _check_rel(rel)
    base = cs_or_dir.dir if isinstance(cs_or_dir, CaseSet) else Path(cs_or_dir)
    path = base / rel
    if isinstance(cs_or_dir, CaseSet):
        _check_set_folder(cs_or_dir)
    make_private_dirs(path.parent)
    atomic_write(path, data)
    return path


SEALED_LIMIT = MAX_JSON_BYTES * 3 // 2
"""An envelope holds its plaintext in base64 (4/3 of it) and a few fields."""


def _read_raw(cs: CaseSet, rel_file: str) -> bytes | None:
    """The file's bytes under the size limit of its kind; None if absent."""
    path = cs.dir / rel_file
    if not path.is_file():
        return None
    try:
        return read_limited(path, rel_file, SEALED_LIMIT if cs.is_pilot else MAX_JSON_BYTES)
    except FileNotFoundError:  # removed since the check
        return None


def _read_file(cs: CaseSet, rel_file: str) -> str | None:
    """Read one file of the set, opened and checked against the journal in a pilot set.

    In a pilot set the envelope is opened (AAD `<setId>/<rel_file>`) and refused unless it is the
    version the set's journal holds as current.
    """
    if not cs.is_pilot:
        data = _read_raw(cs, rel_file)
        return None if data is None else decode_utf8(data, rel_file)
    return _read_sealed(cs, rel_file, lambda data, key: open_envelope(data, key, f"{cs.set_id}/{rel_file}"))


def _read_file_bytes(cs: CaseSet, rel_file: str) -> bytes | None:
    """`_read_file` without decoding the plaintext.

    A case is parsed from its UTF-8 bytes (a fifth faster than from text, which pydantic encodes
    again).
    """
    if not cs.is_pilot:
        return _read_raw(cs, rel_file)
    aad = f"{cs.set_id}/{rel_file}".encode()
    return _read_sealed(cs, rel_file, lambda data, key: open_envelope_bytes(data, key, aad))


def _read_sealed(cs: CaseSet, rel_file: str, open_data: Callable[[bytes, bytes], _Plain]) -> _Plain | None:
    """A pilot set's file opened, accepted only if the journal held its bytes as current during the read.

    The file is opened by `open_data(envelope, key)`; the journal may hold its bytes or its absence.
    """
    key = _key_of(cs)
    before = snapshot(cs.dir, cs.set_id, key)
    data = _read_raw(cs, rel_file)
    if data is None:
        check(cs.dir, cs.set_id, key, rel_file, None, before)
        return None
    plain = open_data(data, key)
    check(cs.dir, cs.set_id, key, rel_file, data, before)
    return plain


def _key_of(cs: CaseSet) -> bytes:
    if cs.key is None:  # open_set never builds this; a hand-made CaseSet might
        raise EvalError(f"{KEY_MISSING}: set {cs.set_id} is encrypted")
    return cs.key


def _check_set_folder(cs: CaseSet) -> None:
    """A write never re-creates a set folder that is gone (purged while a job was running)."""
    if not (cs.dir / SET_FILE).is_file():
        raise EvalError(f"set {cs.set_id} is no longer in {cs.dir} (purged?): nothing was written")


def _write_file(cs: CaseSet, rel_file: str, text: str) -> None:
    path = cs.dir / rel_file
    _check_set_folder(cs)
    make_private_dirs(path.parent)
    if not cs.is_pilot:
        atomic_write(path, text)
        return
    key = _key_of(cs)
    sealed = seal(text, key, f"{cs.set_id}/{rel_file}").encode("ascii")
    with recording(cs.dir, cs.set_id, key, rel_file, digest(sealed)):
        atomic_write(path, sealed)


def remove_file(cs: CaseSet, rel_file: str) -> None:
    """Delete one file the store wrote (`rel_file` as on disk).

    In a pilot set the journal records the deletion, so the file put back later is refused.
    """
    path = cs.dir / rel_file
    if not cs.is_pilot:
        path.unlink(missing_ok=True)
        return
    with recording(cs.dir, cs.set_id, _key_of(cs), rel_file, None):
        path.unlink(missing_ok=True)


def accept_current_state(dir: Path, key: bytes | None) -> int:
    """Write a new journal holding every sealed file of a pilot set as it is now; returns how many.

    Once for a set made before graft-eval kept a journal; again to accept a change made by hand
    (a case file deleted on purpose) or after a damaged journal was reported. It also compacts the
    journal to one entry a file. The caller holds the set (no write may run beside it).
    """
    cs = open_set(dir, key, _without_journal=True)
    if not cs.is_pilot:
        raise EvalError(f"set {cs.set_id} is the plaintext synthetic set: it has no journal")
    files = []
    for rel in _sealed_files(cs.dir):
        data = _read_raw(cs, rel)
        if data is not None:
            files.append((rel, digest(data)))
    atomic_write(cs.dir / JOURNAL_FILE, journal_bytes(cs.set_id, _key_of(cs), files))
    return len(files)


def _sealed_files(dir: Path) -> list[str]:
    """Every sealed file of a set the journal covers (relative paths), never following a link."""
    found = []
    for root, folders, names in os.walk(dir):
        folders[:] = [f for f in folders if not (Path(root) / f).is_symlink()]
        for name in names:
            path = Path(root) / name
            rel = path.relative_to(dir).as_posix()
            if (
                name.endswith(SEALED_SUFFIX)
                and is_journaled(rel)
                and path.is_file()
                and not path.is_symlink()
            ):
                found.append(rel)
    return sorted(found)
