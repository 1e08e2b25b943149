"""The decision benchmark runs and prints its figures (its targets are read from its full run)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench" / "bench_decisions.py"


def test_bench_decisions_quick_prints_a_row_of_rates_for_its_cell() -> None:
    done = subprocess.run(
        [sys.executable, str(BENCH), "--quick"], capture_output=True, text=True, timeout=600, check=True
    )
    rows = [line for line in done.stdout.splitlines() if re.match(r"^\s+100\s+5%\s+3% \|", line)]
    assert len(rows) == 1, done.stdout
    figures = [float(x) for x in re.findall(r"\d+\.\d+", rows[0])]
    assert len(figures) == 10 and all(0 <= f <= 1 for i, f in enumerate(figures) if i != 2), rows[0]
    assert "time:" in done.stdout
