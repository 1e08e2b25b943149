"""The errors by exit code (spec 7).

One base that carries the code, one subclass per code, and the CLI's `main` turning each into its
code.
"""

from __future__ import annotations

import pytest

from graft_eval_pipeline.cli import main
from graft_eval_pipeline.cli.base import cli
from graft_eval_pipeline.evalset.labeling.inbox import LabelWriteStopped
from graft_eval_pipeline.evalset.sets import (
    CheckFailed,
    EvalAbort,
    EvalError,
    EvalLocationError,
    GraftEvalError,
    UntrustedInputError,
)
from graft_eval_pipeline.evalset.sets.case_schema import CaseFormatError
from graft_eval_pipeline.evalset.sets.errors import EvalCryptoError

BY_CODE = {CheckFailed: 1, EvalError: 2, EvalAbort: 3}


def test_each_exit_code_has_one_class_and_none_is_another_by_type() -> None:
    for cls, code in BY_CODE.items():
        assert issubclass(cls, GraftEvalError) and cls.exit_code == code
        assert [other for other in BY_CODE if other is not cls and issubclass(cls, other)] == []


@pytest.mark.parametrize(
    "cls", [EvalLocationError, EvalCryptoError, UntrustedInputError, CaseFormatError, LabelWriteStopped]
)
def test_every_input_and_setting_error_is_an_exit_2_error(cls: type[EvalError]) -> None:
    assert issubclass(cls, EvalError) and cls.exit_code == 2


@pytest.mark.parametrize("error", [CheckFailed("a check failed"), EvalError("bad"), EvalAbort("stopped")])
def test_main_exits_with_the_code_the_error_carries(
    error: GraftEvalError, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def command(**_kwargs: object) -> None:
        raise error

    monkeypatch.setattr(cli, "main", command)
    assert main([]) == BY_CODE[type(error)]
    assert capsys.readouterr().err == f"error: {error}\n"
