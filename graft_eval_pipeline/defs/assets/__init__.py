"""The asset modules, in pipeline order: `export`, `labeling`, `evaluation`, `comparison`.

The asset groups are named here, beside the assets that carry them: the evaluation group is what
the main job selects (`defs/jobs.py`); the export group fills a pilot set from GitHub.
"""

EVALUATION_GROUP = "evaluation"
"""Label import, loaded set, harness run, metrics, report and comparison of one case set."""
EXPORT_GROUP = "export"
"""Candidates, sample, exported cases and rescan of one pilot set."""
