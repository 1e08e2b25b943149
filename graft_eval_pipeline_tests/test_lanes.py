"""The two test lanes (conftest.py).

The default lane skips the tests marked slow, --runslow runs them, and the commands that promise
everything (`./run.sh test`, CI) pass --runslow.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

import pytest

from graft_eval_pipeline_tests import conftest

REPO = Path(__file__).resolve().parents[1]


class _Config:
    def __init__(self, runslow: bool) -> None:
        self.runslow = runslow

    def getoption(self, name: str) -> Any:
        assert name == conftest.RUNSLOW_OPTION
        return self.runslow


class _Item:
    def __init__(self, *marks: str) -> None:
        self.marks = [getattr(pytest.mark, name).mark for name in marks]

    def get_closest_marker(self, name: str) -> pytest.Mark | None:
        return next((m for m in self.marks if m.name == name), None)

    def add_marker(self, marker: pytest.MarkDecorator) -> None:
        self.marks.append(marker.mark)


def _lane(runslow: bool, *items: _Item) -> list[bool]:
    """Which of the items the lane skips."""
    conftest.pytest_collection_modifyitems(
        cast(pytest.Config, _Config(runslow)), cast(list[pytest.Item], list(items))
    )
    return [item.get_closest_marker("skip") is not None for item in items]


def test_the_default_lane_skips_only_the_slow_tests_and_says_how_to_run_them() -> None:
    slow, quick = _Item("slow"), _Item("parametrize")
    assert _lane(False, slow, quick) == [True, False]
    skip = slow.get_closest_marker("skip")
    assert skip is not None and "--runslow" in skip.kwargs["reason"]


def test_runslow_runs_every_test() -> None:
    assert _lane(True, _Item("slow"), _Item()) == [False, False]


def test_run_sh_test_and_ci_run_the_full_lane() -> None:
    run_sh = (REPO / "run.sh").read_text()
    lanes = 'if [ "$1" = test ]; then pytest --runslow "${@:2}"; '
    assert lanes + 'else pytest -n auto --dist loadgroup "${@:2}"; fi' in run_sh
    assert "./run.sh test\n" in (REPO / ".ci" / "run").read_text()
