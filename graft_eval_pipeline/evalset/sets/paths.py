"""Where the committed evaluation data lives in this checkout: the one place for the eval/ layout."""

from __future__ import annotations

from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[3]
EVAL_DIR = REPO_ROOT / "eval"
SCHEMA_DIR = EVAL_DIR / "schema"
SYNTHETIC_DIR = EVAL_DIR / "synthetic"
SYNTHETIC_BASELINE = EVAL_DIR / "baselines" / "synthetic.json"
THRESHOLDS_FILE = EVAL_DIR / "thresholds.json"
