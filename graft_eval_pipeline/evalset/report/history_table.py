"""`graft-eval history`: how the headline rates moved over a set's last runs, as a table or JSON.

It reads what the HTML report's history charts read (history.py: each run's report.json,
metrics, prompt and trials only), so the CLI answers "how did the rates move, and what changed
between the runs" with the same numbers. Run ids, modes, fingerprint prefixes and numbers only:
no case id, no content.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from graft_eval_pipeline.evalset.report.history import HistoryPoint, RatePoint, read_points
from graft_eval_pipeline.evalset.report.render import fmt_number
from graft_eval_pipeline.evalset.report.runs import run_dirs
from graft_eval_pipeline.evalset.sets import CaseSet

DEFAULT_LAST = 10  # runs `graft-eval history` lists unless --last says otherwise

# The rates `graft-eval history` prints as columns (JSON holds every headline rate).
HISTORY_COLUMNS: dict[str, str] = {
    "underClassificationFinal": "under (final)",
    "severeUnderClassificationFinal": "severe under (final)",
    "overClassificationFinal": "over (final)",
    "exactAccuracyFinal": "exact (final)",
    "unavailableRate": "unavailable",
}


@dataclass(frozen=True)
class History:
    """The last runs of a set, oldest first.

    `total` runs hold a report.json, `skipped` names each of the last ones that could not be read as
    a report (left out). Run ids and modes come from the files: the table shows them terminal-safe.
    """

    set_id: str
    points: list[HistoryPoint]
    total: int
    skipped: list[str]

    @property
    def unreadable(self) -> int:
        return len(self.skipped)

    def to_json_dict(self) -> dict[str, Any]:
        return {
            "setId": self.set_id,
            "runsOnDisk": self.total,
            "unreadable": self.unreadable,
            "skipped": self.skipped,
            "runs": [point.to_json_dict() for point in self.points],
        }

    def render(self) -> str:
        if not self.points:
            return f"set {self.set_id}: no run can be read yet\n"
        latest = self.points[-1].case_set_hash
        header = ["run", "mode", "prompt", "engine", "trials", *HISTORY_COLUMNS.values(), "verdict"]
        rows = [
            [
                point.run_id + ("*" if point.case_set_hash != latest else ""),
                point.llm,
                _prompt_cell(point),
                _short(point.engine_fingerprint),
                str(point.trials),
                *(_cell(point.evidence.get(name)) for name in HISTORY_COLUMNS),
                {True: "PASS", False: "FAIL", None: "-"}[point.passed],
            ]
            for point in self.points
        ]
        widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
        lines = [
            f"set {self.set_id}: the last {len(self.points)} of {self.total} run(s), oldest first "
            "(prompt version and fingerprint prefix, engine fingerprint prefix, trials per case; "
            "k/n value, ≤ the one-sided 95% upper bound)"
        ]
        lines += [
            "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip()
            for row in [header, *rows]
        ]
        if any(point.case_set_hash != latest for point in self.points):
            lines.append("* ran on other cases or labels than the latest run (another case-set hash)")
        if any(point.llm == "fake" for point in self.points):
            lines.append("fake: the model's answers are scripted; only floor and label numbers are measured")
        return "\n".join(lines) + "\n"


FINGERPRINT_CHARS = 8  # a fingerprint prefix, like a short git commit


def _short(fingerprint: str | None) -> str:
    return fingerprint[:FINGERPRINT_CHARS] if fingerprint else "-"


def _prompt_cell(point: HistoryPoint) -> str:
    """`intent-v1 3653418f`: the prompt version and a prefix of its fingerprint."""
    return f"{point.prompt_version or '-'} {_short(point.prompt_fingerprint)}"


def _cell(rate: RatePoint | None) -> str:
    if rate is None:
        return "-"
    text = fmt_number(rate.value) if rate.k is None else f"{rate.k}/{rate.n} {fmt_number(rate.value)}"
    return text + (f" ≤ {rate.upper95:.3f}" if rate.upper95 is not None else "")


def read_history(cs: CaseSet, last: int = DEFAULT_LAST) -> History:
    """The set's last `last` runs in the order of runs.py (the one every command uses), oldest first."""
    runs = run_dirs(cs.dir)
    chosen = runs[-last:] if last > 0 else []
    read = read_points(cs, chosen)
    return History(cs.set_id, read.points, total=len(runs), skipped=read.skipped)
