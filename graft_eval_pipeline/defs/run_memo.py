"""What one run's steps hand each other in memory, beside the sealed files, for the rest of the run.

Why: with the in-process executor every step of a run shares one process, yet each value went
through the sealed IO manager and was parsed and validated again by every step that loaded it
(the harness run of a 5,000-case set three times), the set folder was walked again for every
value, and the report read every case and card back from disk for report.html. The sealed file
is still written for every value and stays what other runs and other processes read; within a
run, a step takes the kept copy only after the file's stamp has been checked (the IO manager),
so the file must still hold the very value kept (same run, same hash).

Entries are keyed by run id and dropped when the run's resources are torn down in the run worker
(`forget_run`), so a long-lived process (tests, `dagster dev`'s in-process runs) holds nothing
of a finished run. A step in another process (the multiprocess executor) finds nothing here and
reads the file, as before.
"""

from __future__ import annotations

from typing import Any

_KEPT: dict[tuple[str, str], Any] = {}


def keep(run_id: str, name: str, value: Any) -> None:
    """Keep `value` under `name` for the rest of run `run_id` in this process."""
    _KEPT[(run_id, name)] = value


def kept(run_id: str, name: str) -> Any | None:
    """The value kept under `name` for run `run_id` in this process, or None."""
    return _KEPT.get((run_id, name))


def forget_run(run_id: str | None) -> None:
    """Drop what run `run_id` kept (everything when None)."""
    for key in [k for k in _KEPT if run_id is None or k[0] == run_id]:
        del _KEPT[key]
