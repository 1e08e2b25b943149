"""Purging a pilot set (spec E7, T3): delete its folder whole and log who did it and when.

Its own module because it is the one writer that removes a set: resumable through a tombstone
(the folder is renamed beside itself first, so a set is either whole or gone), logged in
`purge-log.jsonl` before anything is deleted, and checked to leave nothing. The log is also what
tells the Dagster partitions which sets are gone for good (`purged_set_ids`).
"""

from __future__ import annotations

import errno
import json
import os
import re
import shutil
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from graft_eval_pipeline.evalset.sets.case_schema import SET_ID_PATTERN
from graft_eval_pipeline.evalset.sets.errors import EvalError
from graft_eval_pipeline.evalset.sets.paths import PURGE_LOG, SET_FILE
from graft_eval_pipeline.evalset.sets.set_tree import scan_set_tree
from graft_eval_pipeline.evalset.sets.store import (
    FILE_MODE,
    make_private_dirs,
    os_reason,
    read_meta,
    scan_tree,
)

PURGE_STAMP_FORMAT = "%Y%m%dT%H%M%S%fZ"
# `.<setId>.purging-<UTC time>`: where a purge moves the set before deleting it. The leading dot
# keeps it out of set discovery (set ids never start with a dot).
TOMBSTONE_PATTERN = re.compile(r"^\.(?P<set_id>[a-z0-9][a-z0-9-]{0,39})\.purging-(?P<stamp>\d{8}T\d{12}Z)$")


@dataclass(frozen=True)
class PurgeResult:
    """What a purge did: `case_count` is None when it only finished an earlier, interrupted purge."""

    set_id: str
    case_count: int | None
    finished: list[str] = field(default_factory=list)  # tombstone folder names removed on the way


def _tombstone(dir: Path, set_id: str, now: datetime) -> Path:
    return dir.parent / f".{set_id}.purging-{now.astimezone(UTC).strftime(PURGE_STAMP_FORMAT)}"


def _open_purge_log(root: Path, flags: int) -> int:
    """Open purge-log.jsonl itself: never through a symbolic link, never a FIFO or device."""
    try:
        fd = os.open(root / PURGE_LOG, flags | os.O_NOFOLLOW | os.O_NONBLOCK, FILE_MODE)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            reason = f"{PURGE_LOG} is a symbolic link; replace it with a regular file"
            raise OSError(exc.errno, reason) from None
        raise
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise OSError(errno.EINVAL, f"{PURGE_LOG} is not a regular file; replace it with one")
    return fd


def _append_purge_log(root: Path, set_id: str, purged_at: datetime, case_count: int, by: str) -> None:
    make_private_dirs(root)
    line = {"setId": set_id, "purgedAt": purged_at.isoformat(), "caseCount": case_count, "by": by}
    fd = _open_purge_log(root, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    try:
        os.write(fd, (json.dumps(line) + "\n").encode("utf-8"))
        os.fsync(fd)
    finally:
        os.close(fd)


def _logged(root: Path, set_id: str, purged_at: datetime) -> bool:
    """True when purge-log.jsonl already has the line of this purge (same set, same time)."""
    try:
        fd = _open_purge_log(root, os.O_RDONLY)
    except FileNotFoundError:
        return False
    with os.fdopen(fd, encoding="utf-8", errors="replace") as handle:
        lines = handle.read().splitlines()
    for text in lines:
        try:
            entry = json.loads(text)
            if entry.get("setId") == set_id and datetime.fromisoformat(entry["purgedAt"]) == purged_at:
                return True
        except (ValueError, TypeError, KeyError, AttributeError):
            continue
    return False


def purged_set_ids(eval_root: Path) -> set[str]:
    """The set ids purge-log.jsonl under `eval_root` names.

    Sets purged for good, which the Dagster partitions may forget (a set merely absent from this
    machine's folder may live on another).
    """
    try:
        fd = _open_purge_log(Path(eval_root).expanduser(), os.O_RDONLY)
    except FileNotFoundError:
        return set()
    except OSError as exc:
        raise EvalError(f"could not read {PURGE_LOG} in {eval_root}: {os_reason(exc)}") from None
    with os.fdopen(fd, encoding="utf-8", errors="replace") as handle:
        lines = handle.read().splitlines()
    found = set()
    for text in lines:
        try:
            set_id = json.loads(text).get("setId")
        except (ValueError, AttributeError):
            continue  # a damaged line names no set: it cannot make a partition go
        if isinstance(set_id, str) and re.fullmatch(SET_ID_PATTERN, set_id):
            found.add(set_id)
    return found


def _remove_tombstone(tombstone: Path, rmtree: Callable[[Path], None]) -> None:
    """Delete the tombstone (links inside it are removed, never followed) and check it is gone."""
    try:
        rmtree(tombstone)
    except OSError as exc:
        raise EvalError(
            f"the purge is logged but {tombstone} could not be fully deleted ({os_reason(exc)}); "
            "run the same purge again to finish"
        ) from None
    if os.path.lexists(tombstone):
        raise EvalError(
            f"the purge is logged but {tombstone} is still there; run the same purge again to finish"
        )


def _tombstone_case_count(tombstone: Path) -> int:
    """Case files really in the tombstone (a link in it is not followed: rmtree removes only it)."""
    try:
        return scan_set_tree(tombstone, remove_stale_temps=False).case_files
    except OSError as exc:
        raise EvalError(f"could not read {tombstone}: {os_reason(exc)}") from None


def finish_interrupted_purges(
    folder: Path, *, by: str, eval_root: Path, _rmtree: Callable[[Path], None] = shutil.rmtree
) -> list[str]:
    """Delete the tombstones a stopped purge left in `folder`; returns their names.

    A purge logs only after the rename, and deletes only after logging; so a tombstone without
    its log line is still whole, and gets its line (with its case count) before it goes.
    """
    folder = Path(folder)
    if not folder.is_dir():
        return []
    root = Path(eval_root).expanduser().resolve()
    finished = []
    for path in sorted(folder.iterdir()):
        match = TOMBSTONE_PATTERN.fullmatch(path.name)
        if match is None or path.is_symlink() or not path.is_dir():
            continue
        set_id = match["set_id"]
        purged_at = datetime.strptime(match["stamp"], PURGE_STAMP_FORMAT).replace(tzinfo=UTC)
        try:
            if not _logged(root, set_id, purged_at):
                _append_purge_log(root, set_id, purged_at, _tombstone_case_count(path), by)
        except OSError as exc:
            raise EvalError(f"could not write the purge log in {root}: {os_reason(exc)}") from None
        _remove_tombstone(path, _rmtree)
        finished.append(path.name)
    return finished


def purge_set(
    dir: Path,
    *,
    confirm: str,
    by: str,
    now: datetime,
    eval_root: Path,
    _rmtree: Callable[[Path], None] = shutil.rmtree,
) -> PurgeResult:
    """Delete a pilot set folder and log {setId, purgedAt, caseCount, by}.

    Resumable: the folder is first renamed to a tombstone beside it (one step, so the set is
    either whole or gone), then the log line is appended, then the tombstone is deleted. A later
    purge finishes any tombstone a stopped purge left behind (also when the set folder is gone).
    """
    dir = Path(dir)
    real, root = dir.resolve(), Path(eval_root).expanduser().resolve()

    def sweep() -> list[str]:
        return [
            name
            for folder in sorted({real.parent, root})
            for name in finish_interrupted_purges(folder, by=by, eval_root=root, _rmtree=_rmtree)
        ]

    if not (dir / SET_FILE).is_file():
        finished = sweep()
        if any(name.startswith(f".{confirm}.purging-") for name in finished):
            return PurgeResult(set_id=confirm, case_count=None, finished=finished)
    meta = read_meta(dir)
    if meta.kind != "pilot":
        raise EvalError(f"set {meta.set_id} is the committed synthetic set: purge only deletes pilot sets")
    if confirm != meta.set_id:
        raise EvalError(f"--confirm must equal the set id ({meta.set_id}) to purge it; nothing was deleted")
    if real == root or real in root.parents:
        raise EvalError(f"the purge log folder {root} is inside {dir}: set GRAFT_EVAL_DIR elsewhere")
    try:  # purge deletes only inside the set: a link would go and leave what it points to
        case_count = scan_tree(real, meta.set_id, remove_stale_temps=False).case_files
    except EvalError as err:
        raise EvalError(f"cannot purge: {err}; nothing was deleted") from None
    finished = sweep()
    tombstone = _tombstone(real, meta.set_id, now)
    try:
        os.rename(real, tombstone)
    except OSError as exc:
        raise EvalError(f"could not purge {dir}: {os_reason(exc)}; nothing was deleted") from None
    try:
        _append_purge_log(root, meta.set_id, now, case_count, by)
    except OSError as exc:
        try:
            os.rename(tombstone, real)
        except OSError:
            raise EvalError(
                f"could not write the purge log in {root} ({os_reason(exc)}) nor move {tombstone} back "
                f"to {dir}: fix the log folder, then run the same purge again"
            ) from None
        raise EvalError(
            f"could not write the purge log in {root}: {os_reason(exc)}; nothing was deleted"
        ) from None
    _remove_tombstone(tombstone, _rmtree)
    if os.path.lexists(real):  # _write_file never re-creates a set folder, but check anyway
        raise EvalError(
            f"the purge is logged and its files deleted, but {dir} exists again (a job still writing?): "
            "stop it, then delete the folder"
        )
    return PurgeResult(set_id=meta.set_id, case_count=case_count, finished=finished)
