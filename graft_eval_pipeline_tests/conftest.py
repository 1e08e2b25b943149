"""Fixtures shared by the stage folders, and the two test lanes.

Builders and fakes live in the modules beside this file.

Fixtures here are opt-in (`pytestmark = pytest.mark.usefixtures(...)` in the modules that need
them): most unit tests want neither a cleaned environment nor a patched transport.

Two lanes: `pytest` alone is the edit-test loop and skips the tests marked `slow` (a browser, more
than one process, Postgres, subprocesses, statistical simulations and large generated inputs);
`pytest --runslow` (what `./run.sh test` and CI run) runs everything. A test that takes more than
a few seconds on a quiet machine is marked `slow`, with the reason beside the mark.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

import dagster as dg
import httpx2
import pytest

from graft_eval_pipeline.defs.partitions import CASE_SET_PARTITIONS
from graft_eval_pipeline_tests.live_fakes import NetworkForbidden

CLEAN_ENV_VARS = (
    "GRAFT_EVAL_KEY",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_LOG",
    "GRAFT_LLM_MODEL_FAST",
    "GRAFT_LLM_MODEL_STRONG",
    "GRAFT_LLM_REFUSAL_FALLBACK",
)
"""What the CLI and the Dagster assets read from the environment about keys and models."""


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """No key, API key, model or SDK log setting leaks in from the developer's environment."""
    for name in CLEAN_ENV_VARS:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """httpx2's real transports raise `NetworkForbidden`: only an injected MockTransport answers."""

    def refuse(*_args: object, **_kwargs: object) -> None:
        raise NetworkForbidden("a test tried to reach the network")

    monkeypatch.setattr(httpx2.AsyncHTTPTransport, "handle_async_request", refuse)
    monkeypatch.setattr(httpx2.HTTPTransport, "handle_request", refuse)


RUNSLOW_OPTION = "--runslow"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        RUNSLOW_OPTION,
        action="store_true",
        default=False,
        help="also run the tests marked slow (the full lane: what ./run.sh test and CI run)",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Without --runslow, the slow tests are skipped, each saying how to run it."""
    if config.getoption(RUNSLOW_OPTION):
        return
    skip = pytest.mark.skip(reason=f"slow: the full lane runs it (pytest {RUNSLOW_OPTION}, ./run.sh test)")
    for item in items:
        if item.get_closest_marker("slow") is not None:
            item.add_marker(skip)


InstanceWith = Callable[..., dg.DagsterInstance]
"""`instance_with(*set_ids)`: a fresh ephemeral instance with those `case_set` partitions."""


@pytest.fixture
def instance_with() -> Iterator[InstanceWith]:
    """Builds in-memory instances with the given `case_set` partitions; disposes them after the test."""
    made: list[dg.DagsterInstance] = []

    def make(*set_ids: str) -> dg.DagsterInstance:
        instance = dg.DagsterInstance.ephemeral()
        instance.add_dynamic_partitions(CASE_SET_PARTITIONS, list(set_ids))
        made.append(instance)
        return instance

    yield make
    for instance in made:
        instance.dispose()


def meta_value(metadata: Mapping[str, dg.MetadataValue], key: str) -> Any:
    """The plain value of one metadata entry (Dagster types it as a union of every kind)."""
    return metadata[key].value
