"""Where things live: the committed eval/ layout of this checkout and the layout of a set folder.

The one home for these names; the store, the stages, the Dagster IO manager and sensors, the CLI
and the tests import them from here.
"""

from __future__ import annotations

from pathlib import Path

# --- this checkout's eval/ -------------------------------------------------------------------
REPO_ROOT = Path(__file__).resolve().parents[3]
EVAL_DIR = REPO_ROOT / "eval"
SCHEMA_DIR = EVAL_DIR / "schema"
SYNTHETIC_DIR = EVAL_DIR / "synthetic"
SYNTHETIC_BASELINE = EVAL_DIR / "baselines" / "synthetic.json"
THRESHOLDS_FILE = EVAL_DIR / "thresholds.json"

# --- inside a set folder (<set>/...) ---------------------------------------------------------
SET_FILE = "set.json"  # plaintext metadata: set id, kind, key id, consent
CASES_DIR = "cases"  # one case per file, sealed in a pilot set
CACHE_DIR = "cache"  # live results by (prepared inputs, prompt fingerprint)
BATCHES_FILE = f"{CACHE_DIR}/batches.json"  # a --batch run's submitted batches, until it completes
RUNS_DIR = "runs"  # runs/<runId>/report.json, report.md, cases.parquet
ASSETS_DIR = "assets"  # what the Dagster IO manager stores, sealed in a pilot set
CARD_RESULTS_FILE = f"{ASSETS_DIR}/harness_run.card-results.jsonl"  # the harness asset's card results
INBOX_DIR = "labels-inbox"  # label files dropped for the label_import asset
IMPORTED_DIR = f"{INBOX_DIR}/imported"  # where imported label files are moved
EXPORTS_DIR = "exports"  # one export summary per export run
BASELINE_FILE = "baseline.json"  # a pilot set's own baseline
LIVE_RERUN_FILE = "live-rerun.json"  # opt-in for live re-runs by the prompt-change sensor

# --- beside the sets ($GRAFT_EVAL_DIR) -------------------------------------------------------
PURGE_LOG = "purge-log.jsonl"
