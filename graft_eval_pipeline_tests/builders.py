"""Builders for cases, inputs, label sets and run options (the spec's test/helpers/eval-fixtures.ts).

Every builder returns a valid object by default; keyword arguments override single fields.
"""

from __future__ import annotations

import random
import shutil
import string
from collections.abc import Iterable
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

from graft_eval_pipeline.card.models import CardInputs, ChangedFile, FakeScript
from graft_eval_pipeline.evalset.run.options import RunOptions
from graft_eval_pipeline.evalset.scoring.report_schema import GitInfo
from graft_eval_pipeline.evalset.sets.case_schema import (
    EvalCase,
    FloorConfig,
    LabelSet,
    PilotSource,
    SyntheticSource,
)
from graft_eval_pipeline.evalset.sets.crypto import generate_key, parse_key
from graft_eval_pipeline.evalset.sets.journal import digest, recording
from graft_eval_pipeline.evalset.sets.paths import EVAL_DIR, HOLD_FILE, SYNTHETIC_BASELINE, SYNTHETIC_DIR
from graft_eval_pipeline.evalset.sets.store import CaseSet, create_set

REPO = "fictional-org/shop-demo"


def made_up(length: int, alphabet: str = string.ascii_letters + string.digits, seed: int = 0) -> str:
    """A made-up random-looking value, the same at every run (the body of a fake token).

    Not a unit repeated (`a1B2a1B2…`) nor one character (`AAAA…`): those are stand-ins by shape,
    which redaction keeps (`values.placeholder_shape`).
    """
    rng = random.Random(f"{seed}:{length}:{alphabet}")
    return "".join(rng.choice(alphabet) for _ in range(length))


FIXED_TIME = datetime(2026, 10, 15, tzinfo=UTC)
"""The stamp of built cases, sets and label sets (tests pin its midnight in file names and views)."""
NOW = datetime(2026, 10, 15, 10, 0, tzinfo=UTC)
"""The injected clock of a run, an export or a report (report tests pin its 10:00 in run ids)."""


def make_file(path: str = "src/util/format.ts", **over: Any) -> ChangedFile:
    fields: dict[str, Any] = {
        "path": path,
        "previous_path": None,
        "status": "modified",
        "additions": 1,
        "deletions": 1,
        "patch": "@@ -1,1 +1,1 @@\n-const a = 1;\n+const a = 2;",
    }
    fields.update(over)
    return ChangedFile(**fields)


def make_inputs(files: list[ChangedFile] | None = None, **over: Any) -> CardInputs:
    files = files if files is not None else [make_file()]
    pr: dict[str, Any] = {
        "number": 101,
        "title": "Adjust formatting helper",
        "body": "Small change.",
        "additions": sum(f.additions for f in files),
        "deletions": sum(f.deletions for f in files),
        "changed_files": len(files),
    }
    pr.update(over.pop("pr", {}))
    fields: dict[str, Any] = {
        "repository_full_name": REPO,
        "pr": pr,
        "issue": None,
        "files": files,
        "listing_truncated": False,
        "too_large": False,
    }
    fields.update(over)
    return CardInputs.model_validate(fields)


def make_label(labeler: str = "alice", **over: Any) -> LabelSet:
    fields: dict[str, Any] = {
        "labeler": labeler,
        "labeled_at": FIXED_TIME,
        "guide_version": "lg-1",
        "risk": "trivial",
        "out_of_scope": [],
        "goal": "Adjusts a helper.",
        "key_behavior_changes": [],
        "should_flag": False,
        "confidence": "high",
        "notes": "",
    }
    fields.update(over)
    return LabelSet(**fields)


def synthetic_source() -> SyntheticSource:
    return SyntheticSource(kind="synthetic", author="graft-team", created_at=date(2026, 10, 15))


def pilot_source(set_id: str = "pilot-acme", pr_number: int = 101, **over: Any) -> PilotSource:
    fields: dict[str, Any] = {
        "kind": "pilot",
        "set_id": set_id,
        "repository": REPO,
        "pr_number": pr_number,
        "head_sha": "a" * 40,
        "base_sha": "b" * 40,
        "merged_at": FIXED_TIME,
        "exported_at": FIXED_TIME,
        "export_tool": "graft-eval-export/1",
        "author_kind": "agent",
        "author_kind_reason": "trailer",
        "agent": "fictional-agent",
        "model": None,
        "redactions": [],
    }
    fields.update(over)
    return PilotSource(**fields)


def make_case(case_id: str = "syn-900-example", **over: Any) -> EvalCase:
    """A synthetic case by default; pass `source=pilot_source()` and a pilot id for a pilot case."""
    fields: dict[str, Any] = {
        "schema_version": 1,
        "id": case_id,
        "source": synthetic_source(),
        "tags": [],
        "floor_config": FloorConfig(),
        "inputs": make_inputs(),
        "labels": [make_label()],
        "adjudicated": None,
        "fake_llm": None,
    }
    fields.update(over)
    if isinstance(fields["fake_llm"], dict):
        fields["fake_llm"] = FakeScript.model_validate(fields["fake_llm"])
    return EvalCase(**fields)


def make_pilot_case(set_id: str = "pilot-acme", pr_number: int = 412, **over: Any) -> EvalCase:
    over.setdefault("source", pilot_source(set_id, pr_number))
    over.setdefault("inputs", make_inputs(pr={"number": pr_number}))
    over.setdefault("labels", [])
    return make_case(f"{set_id}--shop-demo-{pr_number}", **over)


def make_pilot_set(
    dir: Path,
    *,
    set_id: str | None = None,
    key: bytes | None = None,
    globs: Iterable[str] = (),
    consent_ref: str = "Fictional pilot agreement",
) -> CaseSet:
    """A new, empty pilot set in `dir` (set id: the folder's name); a fresh key when none is given."""
    return create_set(
        dir,
        set_id=set_id if set_id is not None else Path(dir).name,
        kind="pilot",
        description="",
        consent_ref=consent_ref,
        default_floor_config=FloorConfig(extra_sensitive_globs=list(globs)),
        key=key if key is not None else parse_key(generate_key()),
        now=FIXED_TIME,
    )


def make_synthetic_set(dir: Path, *, set_id: str = "synthetic") -> CaseSet:
    """A new, empty synthetic set in `dir` (plain files, no key)."""
    return create_set(
        dir,
        set_id=set_id,
        kind="synthetic",
        description="",
        consent_ref=None,
        default_floor_config=None,
        key=None,
        now=FIXED_TIME,
    )


def run_options(cs: CaseSet, **over: Any) -> RunOptions:
    """Harness options for `cs` on a fixed clock, zero duration and no git info; fake mode by default."""
    fields: dict[str, Any] = {
        "set": cs,
        "now": lambda: NOW,
        "now_ms": lambda: 0,
        "git": lambda: GitInfo(commit=None, dirty=None),
    }
    fields.update(over)
    return RunOptions(**fields)


LEFT_BY_RUNS = shutil.ignore_patterns("runs", "cache", "assets", "tools", HOLD_FILE, f".{HOLD_FILE}.*")
"""What the copies below leave out. The hold file too: a test in another xdist worker that runs on
the committed set holds it for a moment, and a copy of that hold would make the copy's writer wait
for that worker to exit. And the hold's temp file, which that worker links into place and removes
(`hold.py`): a copy that listed it failed when it was gone before its turn came."""


def copy_synthetic(tmp_path: Path, *, baseline: bool = False) -> Path:
    """eval/synthetic copied to `tmp_path/eval/synthetic` without its runs, cache, assets and tools.

    A set a test may run and write into. With `baseline`, eval/baselines goes beside it, as in the
    repository (the set's default baseline).
    """
    root = tmp_path / "eval"
    shutil.copytree(SYNTHETIC_DIR, root / "synthetic", ignore=LEFT_BY_RUNS)
    if baseline:
        shutil.copytree(SYNTHETIC_BASELINE.parent, root / "baselines")
    return root / "synthetic"


def copy_eval_home(tmp_path: Path) -> Path:
    """The whole eval/ copied to `tmp_path/eval` without what runs leave in it.

    The whole eval/ (synthetic set, baselines, thresholds.json, schemas) copied to `tmp_path/eval`
    without what runs leave in it: a folder to name in GRAFT_EVAL_REPO, so a process that imports
    the code location afresh (a step subprocess, a code server) writes there.
    """
    shutil.copytree(EVAL_DIR, tmp_path / "eval", ignore=LEFT_BY_RUNS)
    return tmp_path


def put_sealed(cs: CaseSet, rel: str, envelope: str | bytes) -> None:
    """Write a sealed file of a pilot set as other code holding the key would, recorded in the set's journal.

    The readers' checks after the rollback check then see it.
    """
    assert cs.key is not None
    data = envelope.encode("ascii") if isinstance(envelope, str) else envelope
    with recording(cs.dir, cs.set_id, cs.key, rel, digest(data)):
        (cs.dir / rel).write_bytes(data)
