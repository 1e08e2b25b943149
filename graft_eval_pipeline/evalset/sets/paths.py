"""Where things live: the committed eval/ layout and the layout of a set folder.

The one home for these names; the store, the stages, the Dagster IO manager and sensors, the CLI
and the tests import them from here.

eval/ (the synthetic set, its baseline, thresholds.json, the schemas) is found in the folder
$GRAFT_EVAL_REPO names, else in the source checkout this package runs from. An installed package
(`pip install .`, the image of deploy/Dockerfile) has no checkout around it, so it needs the
variable: the image copies eval/ to /opt/graft-eval and sets it. eval/ is not package data
because the synthetic set is written to like any set (runs/, assets/), which must not happen
inside site-packages, and a shared deployment puts that folder on the shared volume.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

# --- eval/ -----------------------------------------------------------------------------------
EVAL_REPO_VAR = "GRAFT_EVAL_REPO"
REPO_ROOT = Path(__file__).resolve().parents[3]  # the source checkout (when run from one)


def eval_home(environ: Mapping[str, str] = os.environ) -> Path:
    """The folder that holds eval/: $GRAFT_EVAL_REPO when set, else the source checkout."""
    named = environ.get(EVAL_REPO_VAR, "").strip()
    return Path(named).expanduser() if named else REPO_ROOT


EVAL_DIR = eval_home() / "eval"
SCHEMA_DIR = EVAL_DIR / "schema"
SYNTHETIC_DIR = EVAL_DIR / "synthetic"
SYNTHETIC_BASELINE = EVAL_DIR / "baselines" / "synthetic.json"
THRESHOLDS_FILE = EVAL_DIR / "thresholds.json"


def eval_dir_hint() -> str:
    """What to add to an error about a missing eval/ file.

    Where eval/ was looked for and how to name another place; empty while eval/ exists.
    """
    if EVAL_DIR.is_dir():
        return ""
    return f" (no eval/ folder at {EVAL_DIR.parent}: set {EVAL_REPO_VAR} to the folder that holds eval/)"


# --- inside a set folder (<set>/...) ---------------------------------------------------------
SET_FILE = "set.json"  # plaintext metadata: set id, kind, key id, consent
CASES_DIR = "cases"  # one case per file, sealed in a pilot set
CACHE_DIR = "cache"  # live results by (prepared inputs, prompt fingerprint)
BATCHES_FILE = f"{CACHE_DIR}/batches.json"  # a --batch run's submitted batches, until it completes
SET_SCAN_FILE = f"{CACHE_DIR}/set-scan.json"  # the last whole-set scan's counts, by the case files' listing
HISTORY_INDEX = f"{CACHE_DIR}/history-index.json"  # what the history read of each report, by its file
RUNS_DIR = "runs"  # runs/<runId>/report.json, report.md, cases.parquet
ASSETS_DIR = "assets"  # what the Dagster IO manager stores, sealed in a pilot set
CARD_RESULTS_STEM = f"{ASSETS_DIR}/harness_run.card-results"  # + .<run id>.jsonl: one file per run


def card_results_file(run_id: str) -> str:
    """The harness asset's card results of one Dagster run (named by run, so runs never share one)."""
    return f"{CARD_RESULTS_STEM}.{run_id}.jsonl"


INBOX_DIR = "labels-inbox"  # label files dropped for the label_import asset
IMPORTED_DIR = f"{INBOX_DIR}/imported"  # where imported label files are moved
EXPORTS_DIR = "exports"  # one export summary per export run
BASELINE_FILE = "baseline.json"  # a pilot set's own baseline
LIVE_RERUN_FILE = "live-rerun.json"  # opt-in for live re-runs by the prompt-change sensor
JOURNAL_FILE = "journal.enc"  # sealed, append-only: each sealed file's current hash (journal.py)
HOLD_FILE = ".hold.json"  # who is writing into the set now (hold.py); absent when no one is

# --- beside the sets ($GRAFT_EVAL_DIR) -------------------------------------------------------
PURGE_LOG = "purge-log.jsonl"
