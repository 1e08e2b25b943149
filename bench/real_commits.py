"""The real-commit corpus as case sets (for bench_harness.py, bench_dagster.py, check_cards.py).

`../shared/testdata/real-commits/cases.jsonl.gz` holds 2,000 real commits of five public
repositories as cases (minified bundles, source maps, lock files, about 10 % non-ASCII text):
what real pull requests carry, unlike the generated set's short fictional patches. A set of N
cases takes the corpus's first N (any prefix has the same mix of repositories); past 2,000 it
cycles the corpus under new ids. Each case gets a gold label cycling the three classes, so every
case is scored as in a labelled pilot set; the engine never reads labels.

`GRAFT_EVAL_REAL_COMMITS` names another copy of the corpus file. Nothing of it is committed; the
sets are written to temporary folders by the callers.
"""

from __future__ import annotations

import gzip
import json
import os
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CORPUS = Path(
    os.environ.get(
        "GRAFT_EVAL_REAL_COMMITS", REPO.parent / "shared" / "testdata" / "real-commits" / "cases.jsonl.gz"
    )
)
NOW = datetime(2026, 10, 15, tzinfo=UTC)
CLASSES = ("trivial", "logic", "sensitive")


def corpus_lines() -> list[bytes]:
    """The corpus's case documents, one JSON line each (about 122 MB held while a set is built)."""
    if not CORPUS.is_file():
        raise SystemExit(
            f"the real-commit corpus is not at {CORPUS}: set GRAFT_EVAL_REAL_COMMITS to its path"
        )
    with gzip.open(CORPUS, "rb") as handle:
        return [line for line in handle if line.strip()]


def labelled(document: dict[str, object], n: int) -> dict[str, object]:
    """The case with one gold label (class n mod 3) and no others."""
    label = {
        "labeler": "bench",
        "labeledAt": "2026-10-15T00:00:00Z",
        "guideVersion": "lg-1",
        "risk": CLASSES[n % 3],
        "outOfScope": [],
        "goal": "Real commit.",
        "keyBehaviorChanges": [],
        "shouldFlag": False,
        "confidence": "medium",
        "notes": "",
    }
    return {**document, "labels": [label], "adjudicated": None}


def case_documents(size: int, lines: list[bytes], labels: bool = True) -> Iterator[tuple[str, str]]:
    """(case id, case file text) of the first `size` cases, cycling the corpus past its end.

    The text is what `dump_case` writes (two-space indent, ASCII escapes, trailing newline). Without
    `labels` the cases stay as the corpus has them (unlabelled: nothing is scored).
    """
    for n in range(size):
        document = json.loads(lines[n % len(lines)])
        cycle = n // len(lines)
        if cycle:
            document["id"] = f"{document['id']}-c{cycle}"
        yield document["id"], json.dumps(labelled(document, n) if labels else document, indent=2) + "\n"


def build_real_commit_set(
    root: Path, size: int, lines: list[bytes] | None = None, name: str | None = None, labels: bool = True
) -> Path:
    """A synthetic-kind set of `size` real-commit cases under `root`; returns its folder."""
    from graft_eval_pipeline.evalset.sets.store import create_set

    set_dir = root / (name or f"commits-{size}")
    create_set(
        set_dir,
        set_id=set_dir.name,
        kind="synthetic",
        description="real-commit benchmark",
        consent_ref=None,
        default_floor_config=None,
        key=None,
        now=NOW,
    )
    for case_id, text in case_documents(size, lines if lines is not None else corpus_lines(), labels):
        (set_dir / "cases" / f"{case_id}.case.json").write_text(text, encoding="utf-8")
    return set_dir


def patch_megabytes(set_dir: Path) -> float:
    """MB of patch text (UTF-8) in the set's cases."""
    total = 0
    for path in (set_dir / "cases").iterdir():
        files = json.loads(path.read_bytes())["inputs"]["files"]
        total += sum(len(f["patch"].encode("utf-8")) for f in files if f["patch"] is not None)
    return total / 1e6
