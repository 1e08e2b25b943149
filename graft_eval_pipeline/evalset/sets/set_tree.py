"""Is a set folder what it claims to be? One walk over it, and the paths only the store may write.

The store makes only real folders (0700) and regular files (0600) inside a set. A symbolic link
there sends writes wherever it points (possibly into a git tree) and makes purge delete the link
but not what it points to; a FIFO or device named like a case hangs or misleads a read; a mode
open to group or others exposes a pilot's data. `scan_set_tree` finds all of these in one
`os.scandir` pass that never follows a link (cheap on 10,000 files), counts the case files the
set really holds, and removes the temp files an interrupted `atomic_write` left behind (their
names end in `.tmp`, never in a case suffix, so no reader takes them for cases).
"""

from __future__ import annotations

import os
import re
import stat
import time
from dataclasses import dataclass, field
from pathlib import Path

from graft_eval_pipeline.evalset.sets.paths import (
    ASSETS_DIR,
    CACHE_DIR,
    CASES_DIR,
    EXPORTS_DIR,
    INBOX_DIR,
    JOURNAL_FILE,
    SET_FILE,
)

# Folders of a set that hold sealed data or label input, written only through the store. The
# names are the store's, cache's, the IO manager's, the export's and the label inbox's.
STORE_ONLY_DIRS = (CASES_DIR, CACHE_DIR, ASSETS_DIR, EXPORTS_DIR, INBOX_DIR)
CASE_SUFFIXES = (".case.json", ".case.enc")
# tempfile.mkstemp(prefix=".<name>.", suffix=".tmp") in store.atomic_write: 8 random characters.
TEMP_NAME = re.compile(r"^\..+\.[a-z0-9_]{8}\.tmp$")
# A younger temp file may belong to a write still in flight (another process on the same set);
# a write lasts well under a second, so one a minute old was left by a stopped one.
STALE_TEMP_S = 60.0
SHOWN = 5  # paths named in one message before "(+N more)"
OPEN_TO_OTHERS = 0o077


@dataclass
class SetTree:
    """What one walk found; every path is relative to the set folder ("." is the folder)."""

    links: list[str] = field(default_factory=list)
    links_outside: list[str] = field(default_factory=list)  # the links that resolve outside the set
    special: list[str] = field(default_factory=list)  # neither a folder nor a regular file
    loose: list[tuple[str, int]] = field(default_factory=list)  # (path, mode) open to group/others
    case_files: int = 0  # regular files directly in cases/ with a case suffix
    temps_removed: list[str] = field(default_factory=list)


def _visible(name: str) -> str:
    """A file name as one terminal-safe line.

    Anything unprintable (escapes, newlines, bidi controls, the surrogates of a non-UTF-8 name)
    shown as [U+XXXX].
    """
    return "".join(c if c.isprintable() else f"[U+{ord(c):04X}]" for c in name)


def _named(paths: list[str]) -> str:
    more = len(paths) - SHOWN
    return ", ".join(_visible(p) for p in paths[:SHOWN]) + (f" (+{more} more)" if more > 0 else "")


def scan_set_tree(dir: Path, *, remove_stale_temps: bool, now: float | None = None) -> SetTree:
    """Walk `dir` once without following links; remove stale temp files when asked."""
    root = Path(dir)
    real_root = os.path.realpath(root)
    cutoff = (time.time() if now is None else now) - STALE_TEMP_S
    tree = SetTree()
    root_mode = stat.S_IMODE(os.stat(root).st_mode)  # --set may itself be a link to the folder
    if root_mode & OPEN_TO_OTHERS:
        tree.loose.append((".", root_mode))
    pending: list[tuple[str, str]] = [(str(root), "")]
    while pending:
        folder, prefix = pending.pop()
        # A file renamed or removed by a write beside this walk (a temp file renamed over its
        # case, a run folder removed) may be gone by the time it is looked at: it is no longer
        # in the set, and skipped.
        try:
            listing = os.scandir(folder)
        except FileNotFoundError:
            continue
        with listing as entries:
            for entry in entries:
                rel = prefix + entry.name
                if entry.is_symlink():
                    tree.links.append(rel)
                    target = os.path.realpath(entry.path)
                    if os.path.commonpath([real_root, target]) != real_root:
                        tree.links_outside.append(rel)
                    continue
                try:
                    info = entry.stat(follow_symlinks=False)
                except FileNotFoundError:
                    continue
                mode = stat.S_IMODE(info.st_mode)
                if stat.S_ISDIR(info.st_mode):
                    if mode & OPEN_TO_OTHERS:
                        tree.loose.append((rel, mode))
                    pending.append((entry.path, rel + "/"))
                    continue
                if not stat.S_ISREG(info.st_mode):
                    tree.special.append(rel)
                    continue
                if remove_stale_temps and TEMP_NAME.match(entry.name) and info.st_mtime < cutoff:
                    try:
                        os.unlink(entry.path)
                        tree.temps_removed.append(rel)
                        continue
                    except FileNotFoundError:  # another open removed it first
                        continue
                    except OSError:  # left for a later open; reported as a file like any other
                        pass
                if mode & OPEN_TO_OTHERS:
                    tree.loose.append((rel, mode))
                if prefix == "cases/" and entry.name.endswith(CASE_SUFFIXES):
                    tree.case_files += 1
    for found in (tree.links, tree.links_outside, tree.special, tree.loose, tree.temps_removed):
        found.sort()
    return tree


def foreign_entries_problem(tree: SetTree, set_id: str) -> str | None:
    """One line naming the links and special files of a set, or None when it has none."""
    if tree.links:
        where = "outside the set" if tree.links_outside else "inside the set"
        if tree.links_outside and len(tree.links_outside) < len(tree.links):
            where = f"{len(tree.links_outside)} of them outside the set"
        return (
            f"set {set_id} holds a symbolic link at {_named(tree.links)} (pointing {where}): writes "
            "would follow it and purge would leave what it points to; replace each link with the real "
            "folder or file"
        )
    if tree.special:
        return (
            f"set {set_id} holds {_named(tree.special)}, which is not a regular file or folder "
            "(a FIFO, socket or device): remove it"
        )
    return None


def loose_modes_warning(tree: SetTree, set_id: str, dir: Path) -> str | None:
    """One line naming what is open to group or others (folders should be 0700, files 0600)."""
    if not tree.loose:
        return None
    shown = [f"{'the set folder' if rel == '.' else rel} ({mode:04o})" for rel, mode in tree.loose]
    return (
        f"set {set_id}: {len(tree.loose)} path(s) open to group or others (folders should be 0700, "
        f"files 0600): {_named(shown)}; fix with `chmod -R go= {dir}`"
    )


def store_only_part(path: Path) -> tuple[Path, str] | None:
    """(set folder, path relative to it) when `path` falls inside a case set's store-only parts.

    set.json, journal.enc, cases/, cache/, assets/, exports/ or labels-inbox/ of any folder holding
    a set.json.
    """
    real = Path(os.path.realpath(Path(path).expanduser()))
    for ancestor in real.parents:
        if (ancestor / SET_FILE).is_file():
            rel = real.relative_to(ancestor)
            if rel.parts[0] in STORE_ONLY_DIRS or rel.as_posix() in (SET_FILE, JOURNAL_FILE):
                return ancestor, rel.as_posix()
    return None
