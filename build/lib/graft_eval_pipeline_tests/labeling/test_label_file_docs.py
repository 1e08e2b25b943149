"""The label-file examples of docs/labeling-guide.md §12 (issue 15 §4) work as documented."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from graft_eval_pipeline.cli import main
from graft_eval_pipeline.evalset.labeling.inbox import import_label_inbox
from graft_eval_pipeline.evalset.sets.paths import REPO_ROOT
from graft_eval_pipeline.evalset.sets.store import open_set, read_case
from graft_eval_pipeline_tests.builders import copy_synthetic

GUIDE = REPO_ROOT / "docs" / "labeling-guide.md"


def guide_examples() -> list[dict[str, Any]]:
    section = GUIDE.read_text(encoding="utf-8").split("## 12. Label files")[1]
    return [json.loads(block) for block in re.findall(r"```json\n(.*?)```", section, re.DOTALL)]


def test_the_guide_examples_apply_and_import(tmp_path: Path) -> None:
    apply_example, inbox_example = guide_examples()
    synthetic = copy_synthetic(tmp_path)

    (tmp_path / "labels.json").write_text(json.dumps(apply_example))
    assert (
        main(["label", "--set", str(synthetic), "--as", "bob", "--apply", str(tmp_path / "labels.json")]) == 0
    )
    cs = open_set(synthetic, None)
    bob = next(lbl for lbl in read_case(cs, "syn-022-oos-flagged").labels if lbl.labeler == "bob")
    assert (
        bob.risk == "logic" and bob.out_of_scope == ["src/config/defaults.ts"] and bob.guide_version == "lg-1"
    )

    (synthetic / "labels-inbox").mkdir()
    (synthetic / "labels-inbox" / "bob.json").write_text(json.dumps(inbox_example))
    result = import_label_inbox(cs, now=datetime(2026, 11, 1, tzinfo=UTC))
    assert (
        result.imported_files == ["bob.json"]
        and result.labels_by_labeler == {"bob": 1}
        and not result.bad_files
    )
    assert [lbl.labeler for lbl in read_case(cs, "syn-001-docs-typo").labels] == ["graft-synthetic", "bob"]
