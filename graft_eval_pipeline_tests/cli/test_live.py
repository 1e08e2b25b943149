"""`graft-eval run --live` and `show --with-result`, end to end through the real Anthropic client.

`graft-eval run --live` (U-CLI-1, U-CLI-2) and `show --with-result`, end to end through the real
Anthropic client on an `httpx2.MockTransport` (real-shaped tool_use replies, no network).
"""

from __future__ import annotations

import functools
import io
import json
import logging
from pathlib import Path

import httpx2
import pytest

from graft_eval_pipeline.card.llm import LlmClient
from graft_eval_pipeline.cli import main
from graft_eval_pipeline.cli import run as cli_run
from graft_eval_pipeline.evalset.report.files import load_report
from graft_eval_pipeline.evalset.run.live import anthropic_llm
from graft_eval_pipeline.evalset.sets.crypto import generate_key, parse_key
from graft_eval_pipeline.evalset.sets.env import EvalEnv
from graft_eval_pipeline_tests.live_fakes import GOAL_MARK, FakeLive, MessagesApi, case_ids, live_set

BASE_URL = "http://anthropic.invalid"
API_KEY = "sk-test-not-a-real-key"


class TtyInput(io.StringIO):
    """A stdin that says it is a terminal, with the operator's typed answer."""

    def isatty(self) -> bool:
        return True


pytestmark = pytest.mark.usefixtures("clean_env", "no_network")


@pytest.fixture(autouse=True)
def no_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO(""))  # not a terminal unless a test says so


class CountingFactory:
    """Stands in for `cli.LLM_FACTORY`: counts builds and hands out one fake client."""

    def __init__(self) -> None:
        self.client = FakeLive()
        self.built = 0

    def __call__(self, _env: object) -> FakeLive:
        self.built += 1
        return self.client


@pytest.fixture
def factory(monkeypatch: pytest.MonkeyPatch) -> CountingFactory:
    fake = CountingFactory()
    monkeypatch.setattr(cli_run, "LLM_FACTORY", fake)
    return fake


def run_dirs(set_dir: Path) -> list[Path]:
    return sorted((set_dir / "runs").iterdir()) if (set_dir / "runs").exists() else []


def test_U_CLI_1_live_without_an_api_key_exits_2_before_anything(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], factory: CountingFactory
) -> None:
    cs = live_set(tmp_path, 2)
    assert main(["run", "--set", str(cs.dir), "--live", "--yes"]) == 2
    assert "ANTHROPIC_API_KEY is not set" in capsys.readouterr().err
    assert factory.built == 0 and run_dirs(cs.dir) == []


def test_U_CLI_1_without_live_the_key_is_ignored_and_no_client_is_built(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    factory: CountingFactory,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", API_KEY)
    cs = live_set(tmp_path, 2)
    assert main(["run", "--set", str(cs.dir)]) == 0
    assert factory.built == 0 and not (cs.dir / "cache").exists()
    (report_dir,) = run_dirs(cs.dir)
    assert load_report(report_dir / "report.json").llm == "fake"


def test_U_CLI_2_live_on_a_non_tty_without_yes_exits_3_after_the_estimate(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    factory: CountingFactory,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", API_KEY)
    cs = live_set(tmp_path, 2)
    assert main(["run", "--set", str(cs.dir), "--live"]) == 3
    err = capsys.readouterr().err
    assert "estimate: 2 case(s) to call, 0 cached" in err and "add --yes" in err
    assert factory.built == 0 and factory.client.requests == [] and run_dirs(cs.dir) == []


def test_live_on_a_tty_asks_and_a_no_aborts(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    factory: CountingFactory,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", API_KEY)
    cs = live_set(tmp_path, 2)
    monkeypatch.setattr("sys.stdin", TtyInput("n\n"))
    assert main(["run", "--set", str(cs.dir), "--live"]) == 3
    err = capsys.readouterr().err
    assert "Continue? [y/N]" in err and "declined" in err
    assert factory.client.requests == []

    monkeypatch.setattr("sys.stdin", TtyInput("y\n"))
    assert main(["run", "--set", str(cs.dir), "--live"]) == 0
    assert factory.built == 1 and len(factory.client.requests) == 4


def test_live_estimate_over_max_cost_exits_3_even_with_yes(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    factory: CountingFactory,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", API_KEY)
    cs = live_set(tmp_path, 2)
    assert main(["run", "--set", str(cs.dir), "--live", "--yes", "--max-cost-usd", "0.001"]) == 3
    assert "over the cost cap $0.00" in capsys.readouterr().err
    assert factory.built == 0


@pytest.mark.parametrize("variable", ["GRAFT_LLM_MODEL_STRONG", "GRAFT_LLM_REFUSAL_FALLBACK"])
def test_live_refuses_a_model_without_a_price(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    factory: CountingFactory,
    monkeypatch: pytest.MonkeyPatch,
    variable: str,
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", API_KEY)
    monkeypatch.setenv(variable, "claude-mystery-9")
    cs = live_set(tmp_path, 1)
    assert main(["run", "--set", str(cs.dir), "--live", "--yes"]) == 2
    assert "no price for model(s) claude-mystery-9" in capsys.readouterr().err
    assert factory.built == 0


def test_live_flags_reach_the_harness(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    factory: CountingFactory,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", API_KEY)
    cs = live_set(tmp_path, 3)
    args = ["run", "--set", str(cs.dir), "--live", "--yes", "--concurrency", "1", "--max-tokens", "1"]
    assert main(args) == 0
    (report_dir,) = run_dirs(cs.dir)
    report = load_report(report_dir / "report.json")
    assert report.run.complete is False and report.run.skipped_budget == 3
    assert factory.client.requests == [] and factory.client.peak == 0

    assert main(["run", "--set", str(cs.dir), "--live", "--yes"]) == 0  # fills the cache
    assert main(["run", "--set", str(cs.dir), "--live", "--yes", "--no-cache"]) == 0
    assert len(factory.client.requests) == 12  # the --no-cache run called again


def test_live_run_end_to_end_through_the_anthropic_client(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    key = generate_key()
    monkeypatch.setenv("GRAFT_EVAL_KEY", key)
    monkeypatch.setenv("ANTHROPIC_API_KEY", API_KEY)
    cs = live_set(tmp_path, 3, key=parse_key(key))
    api = MessagesApi(writer_risk="logic")  # a fast writer saying logic escalates to the strong one
    seen_keys: list[str] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        seen_keys.append(request.headers["authorization"])
        return api(request)

    pools: list[httpx2.AsyncClient] = []

    def factory(env: EvalEnv) -> LlmClient:
        pools.append(httpx2.AsyncClient(transport=httpx2.MockTransport(handler)))
        return anthropic_llm(env, http_client=pools[-1], base_url=BASE_URL)

    monkeypatch.setattr(cli_run, "LLM_FACTORY", factory)
    logging.getLogger("anthropic").setLevel(logging.DEBUG)  # as ANTHROPIC_LOG=debug would
    caplog.set_level(logging.DEBUG)
    try:
        assert main(["run", "--set", str(cs.dir), "--live", "--yes"]) == 0
    finally:
        logging.getLogger("anthropic").setLevel(logging.NOTSET)
    assert GOAL_MARK not in caplog.text  # the SDK's DEBUG log of each request holds the prompt

    assert len(api.bodies) == 9 and set(seen_keys) == {f"Bearer {API_KEY}"}
    assert len(pools) == 1 and pools[0].is_closed  # closed on the run's own event loop
    assert [b["model"] for b in api.bodies[:3]] == [
        "claude-haiku-5-5",
        "claude-sonnet-5-5",
        "claude-sonnet-5-5",
    ]
    (first_dir,) = run_dirs(cs.dir)
    first = load_report(first_dir / "report.json")
    assert first.llm == "live" and first.run.complete and first.run.cached_results == 0
    assert [(r.status, r.final, r.usage.calls) for r in first.cases] == [("ok", "logic", 3)] * 3
    assert first.metrics.cost_usd is not None
    assert first.metrics.cost_usd_this_run == first.metrics.cost_usd > 0
    report_text = (first_dir / "report.json").read_text()
    assert GOAL_MARK not in report_text
    assert all(f.name.endswith(".json.enc") for f in (cs.dir / "cache").iterdir())

    capsys.readouterr()
    assert main(["run", "--set", str(cs.dir), "--live"]) == 0  # all cached: no question, no call
    err = capsys.readouterr().err
    assert "estimate: 0 case(s) to call, 3 cached" in err and "Continue?" not in err
    assert len(api.bodies) == 9
    second = load_report(next(d for d in run_dirs(cs.dir) if d != first_dir) / "report.json")
    assert second.run.cached_results == 3 and all(r.cached for r in second.cases)
    assert second.metrics.cost_usd_this_run == 0 and second.metrics.cost_usd == first.metrics.cost_usd
    assert second.metrics.cost_per_case_usd == pytest.approx(first.metrics.cost_usd / 3, abs=1e-6)

    case_id = f"pilot-live--shop-demo-{101}"
    assert main(["show", "--set", str(cs.dir), "--case", case_id, "--with-result"]) == 0
    shown = capsys.readouterr().out
    assert f"{GOAL_MARK} change 0" in shown and "logic" in shown and "no cached result" not in shown


def test_show_with_result_says_when_nothing_is_cached(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cs = live_set(tmp_path, 1)
    assert main(["show", "--set", str(cs.dir), "--case", case_ids(1)[0], "--with-result"]) == 0
    assert "no cached result" in capsys.readouterr().out


def test_show_with_result_reads_the_entry_of_the_current_prompts_and_models(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    factory: CountingFactory,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", API_KEY)
    cs = live_set(tmp_path, 1)
    assert main(["run", "--set", str(cs.dir), "--live", "--yes"]) == 0
    capsys.readouterr()
    show = functools.partial(main, ["show", "--set", str(cs.dir), "--case", case_ids(1)[0], "--with-result"])
    assert show() == 0 and "no cached result" not in capsys.readouterr().out
    monkeypatch.setenv("GRAFT_LLM_MODEL_STRONG", "claude-sonnet-5-5-20261001")  # another model: another key
    assert show() == 0 and "no cached result" in capsys.readouterr().out
    cached = json.loads(next((cs.dir / "cache").iterdir()).read_text())
    assert cached["result"]["card"]["goal"].startswith(GOAL_MARK)
