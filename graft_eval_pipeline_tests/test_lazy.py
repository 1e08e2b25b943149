"""Lazy stage exports (graft_eval_pipeline/lazy.py): every public name resolves, an unknown one is
an AttributeError, a loaded one stays. That a fake run leaves the heavy modules unloaded is
tested in run/test_streaming.py."""

from __future__ import annotations

from importlib import import_module

import pytest

STAGES = ("sets", "export", "labeling", "scoring", "run", "report")


@pytest.mark.parametrize("stage", STAGES)
def test_every_public_name_of_a_stage_resolves(stage: str) -> None:
    package = import_module(f"graft_eval_pipeline.evalset.{stage}")
    for name in package.__all__:
        assert getattr(package, name) is not None, name


def test_an_unknown_name_is_an_attribute_error_naming_it() -> None:
    package = import_module("graft_eval_pipeline.evalset.run")
    with pytest.raises(AttributeError, match="no_such_name"):
        package.no_such_name  # noqa: B018


def test_a_lazy_name_is_loaded_once_and_kept_in_the_package() -> None:
    package = import_module("graft_eval_pipeline.evalset.export")
    first = package.RedactOptions
    assert "RedactOptions" in vars(package) and package.RedactOptions is first
