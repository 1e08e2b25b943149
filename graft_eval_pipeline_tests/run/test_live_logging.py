"""No debug setting puts a live run's prompts or replies on any stream or file (issue 10, item 1).

A live pilot run goes through the real Anthropic client, in a subprocess, to a loopback fake
Messages API, with every logging knob at its loudest: ANTHROPIC_LOG=debug, HTTPX_LOG_LEVEL=debug,
a DEBUG root logger with a stderr and a file handler (installed by a `sitecustomize` before the
program starts) and, in Dagster, `python_logs` at DEBUG managing the SDK's and transport's
loggers. Unique markers are planted in every content field (title, body, linked issue, path,
patch) and in the fake API's reply; none may appear in stdout, stderr, the log file or anything
under DAGSTER_HOME (compute logs, SQLite event log).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx2
import pytest

from graft_eval_pipeline.card.anthropic_llm import AnthropicLlm, create_anthropic_llm
from graft_eval_pipeline.card.llm import LlmRequest
from graft_eval_pipeline.card.log_guard import QUIET_NAMESPACES, BelowWarningDropped, llm_logs_quiet
from graft_eval_pipeline.evalset.sets.crypto import generate_key, parse_key
from graft_eval_pipeline.evalset.sets.store import CaseSet, write_case
from graft_eval_pipeline_tests.builders import (
    make_file,
    make_inputs,
    make_label,
    make_pilot_case,
    make_pilot_set,
)
from graft_eval_pipeline_tests.live_fakes import MessagesApi

SET_ID = "pilot-leak"
API_KEY = "sk-test-LEAKKEY-0c4f9a"
REPLY_MARK = "REPLYMARK-6d2b"
MARK_TAGS = {"title": "5c0e", "body": "a71d", "issue": "19fb", "path": "93b2", "patch": "e44f"}
SDK_LOGGERS = QUIET_NAMESPACES
BIN = Path(sys.executable).parent
SITECUSTOMIZE = f"""
import logging
logging.basicConfig(level=logging.DEBUG)
handler = logging.FileHandler({{log_file!r}})
handler.setFormatter(logging.Formatter("%(levelname)s %(name)s %(message)s"))
logging.getLogger().addHandler(handler)
for name in {SDK_LOGGERS!r}:
    logging.getLogger(name).setLevel(logging.DEBUG)
"""


def case_marks(i: int) -> dict[str, str]:
    """The markers planted in case `i`, one per content field."""
    return {field: f"{field.upper()}MARK{i}-{tag}" for field, tag in MARK_TAGS.items()}


def marked_set(root: Path, key: bytes, n: int) -> tuple[CaseSet, list[str]]:
    """A pilot set of `n` cases with markers in every content field; the markers."""
    cs = make_pilot_set(root / SET_ID, key=key)
    marks: list[str] = []
    for i in range(n):
        m = case_marks(i)
        marks += m.values()
        patch = f"@@ -1,1 +1,1 @@\n-const a = 1;\n+const a = '{m['patch']}';"
        inputs = make_inputs(
            files=[make_file(f"src/{m['path']}/format.ts", patch=patch)],
            pr={"number": 101 + i, "title": f"{m['title']} change {i}", "body": f"Why: {m['body']}."},
            issue={"number": 7 + i, "title": "An issue", "body": f"Steps: {m['issue']}."},
        )
        write_case(cs, make_pilot_case(SET_ID, 101 + i, inputs=inputs, labels=[make_label(risk="trivial")]))
    return cs, marks


class LoopbackApi:
    """The fake Messages API of `live_fakes` on 127.0.0.1 (a free port), for a subprocess.

    Every writer reply's goal holds REPLY_MARK, so a reply body carries a marker of its own.
    """

    def __init__(self) -> None:
        self.api = MessagesApi()
        self.received: list[str] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["content-length"]))
                outer.received.append(body.decode())
                request = httpx2.Request("POST", f"http://loopback{self.path}", content=body)
                reply = json.loads(outer.api(request).content)
                if reply["content"][0]["name"] == "submit_card":
                    reply["content"][0]["input"]["goal"] = f"{REPLY_MARK}: a goal"
                data = json.dumps(reply).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *_args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"


@pytest.fixture
def loopback() -> Iterator[LoopbackApi]:
    api = LoopbackApi()
    thread = threading.Thread(target=api.server.serve_forever, daemon=True)
    thread.start()
    try:
        yield api
    finally:
        api.server.shutdown()
        api.server.server_close()
        thread.join(timeout=10)


def loud_env(tmp_path: Path, api: LoopbackApi, key: str) -> tuple[dict[str, str], Path]:
    """The environment of a live run with every logging knob at debug; the root logger's file."""
    site = tmp_path / "site"
    site.mkdir()
    log_file = tmp_path / "root-debug.log"
    (site / "sitecustomize.py").write_text(SITECUSTOMIZE.format(log_file=str(log_file)), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.lower().endswith("_proxy")}
    env.update(
        PYTHONPATH=os.pathsep.join([str(site), *filter(None, [env.get("PYTHONPATH", "")])]),
        ANTHROPIC_API_KEY=API_KEY,
        ANTHROPIC_BASE_URL=api.url,
        ANTHROPIC_LOG="debug",
        HTTPX_LOG_LEVEL="debug",
        GRAFT_EVAL_KEY=key,
        GRAFT_EVAL_DIR=str(tmp_path / "sets"),
        GRAFT_LLM_MAX_RETRIES="0",
        NO_PROXY="127.0.0.1",
    )
    return env, log_file


def leaks(places: dict[str, str], marks: list[str]) -> dict[str, list[str]]:
    """Each place (name: text) that holds a marker or the API key, with what it holds."""
    found = {where: [m for m in [*marks, REPLY_MARK, API_KEY] if m in text] for where, text in places.items()}
    return {where: held for where, held in found.items() if held}


def assert_api_saw(api: LoopbackApi, marks: list[str], calls: int) -> None:
    """The markers did reach the API: the run sent what the scan looks for."""
    assert len(api.received) == calls
    sent = "\n".join(api.received)
    assert all(m in sent for m in marks) and REPLY_MARK in sent  # the verifier is shown the card


@pytest.mark.slow  # a subprocess run
def test_a_live_cli_run_at_debug_everywhere_logs_no_prompt_or_reply(
    tmp_path: Path, loopback: LoopbackApi
) -> None:
    key = generate_key()
    cs, marks = marked_set(tmp_path / "sets", parse_key(key), 2)
    env, log_file = loud_env(tmp_path, loopback, key)
    done = subprocess.run(
        [str(BIN / "graft-eval"), "run", "--set", str(cs.dir), "--live", "--yes"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert_api_saw(loopback, marks, calls=4)  # a trivial writer and a verifier per case
    assert "DEBUG asyncio" in log_file.read_text()  # the root logger did write at DEBUG
    places = {"stdout": done.stdout, "stderr": done.stderr, "root log file": log_file.read_text()}
    assert leaks(places, marks) == {}


DAGSTER_YAML = """
telemetry:
  enabled: false
compute_logs:
  module: dagster.core.storage.local_compute_log_manager
  class: LocalComputeLogManager
  config:
    base_dir: {base_dir}
python_logs:
  python_log_level: DEBUG
  managed_python_loggers: {loggers}
"""


@pytest.mark.slow  # a subprocess run
def test_a_live_dagster_run_at_debug_everywhere_logs_no_prompt_or_reply(
    tmp_path: Path, loopback: LoopbackApi
) -> None:
    import dagster as dg

    key = generate_key()
    _cs, marks = marked_set(tmp_path / "sets", parse_key(key), 2)
    env, log_file = loud_env(tmp_path, loopback, key)
    home = tmp_path / "dagster_home"
    home.mkdir()
    loggers = [*SDK_LOGGERS, "anthropic._base_client", "httpcore2.http11", "httpcore2.connection"]
    yaml = DAGSTER_YAML.format(base_dir=home / "compute_logs", loggers=json.dumps(loggers))
    (home / "dagster.yaml").write_text(yaml, encoding="utf-8")
    with dg.DagsterInstance.from_config(str(home)) as instance:
        instance.add_dynamic_partitions("case_set", [SET_ID])
    live = {"mode": "live", "confirm_live": True, "max_cost_usd": 50.0}
    config = {"ops": {"harness_run": {"config": live}}}
    command = [
        str(BIN / "dagster"),
        *("asset", "materialize", "-m", "graft_eval_pipeline.definitions", "--select", "harness_run"),
        *("--partition", SET_ID, "--config-json", json.dumps(config)),
    ]
    done = subprocess.run(
        command, env={**env, "DAGSTER_HOME": str(home)}, capture_output=True, text=True, timeout=240
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert_api_saw(loopback, marks, calls=4)
    assert "DEBUG asyncio" in log_file.read_text()  # the root logger did write at DEBUG
    files = [p for p in home.rglob("*") if p.is_file()]
    assert any(p.suffix == ".err" for p in files)  # the compute logs were captured
    places = {"stdout": done.stdout, "stderr": done.stderr, "root log file": log_file.read_text()}
    for path in files:
        places[str(path.relative_to(home))] = path.read_bytes().decode("utf-8", "replace")
    assert leaks(places, marks) == {}


# --- the guard in process ---------------------------------------------------------------------


class Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.seen: list[tuple[str, int]] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.seen.append((record.name, record.levelno))


def unguarded_loggers() -> list[str]:
    """Loggers of the quiet namespaces that hold no guard filter."""
    return sorted(
        name
        for name, logger in list(logging.root.manager.loggerDict.items())
        if name.split(".", 1)[0] in QUIET_NAMESPACES
        and isinstance(logger, logging.Logger)
        and not any(isinstance(f, BelowWarningDropped) for f in logger.filters)
    )


@pytest.fixture
def loud_sdk_loggers() -> Iterator[list[logging.Logger]]:
    """The SDK's, transport's and a lazily made logger at DEBUG with their own handler.

    As ANTHROPIC_LOG=debug or Dagster's managed loggers set them; put back afterwards.
    """
    loggers = [logging.getLogger(n) for n in (*SDK_LOGGERS, "anthropic._base_client", "httpcore2.http2")]
    saved = [(lg.level, lg.propagate) for lg in loggers]
    try:
        yield loggers
    finally:
        for logger, (level, propagate) in zip(loggers, saved, strict=True):
            logger.setLevel(level)
            logger.propagate = propagate
            for handler in [h for h in logger.handlers if isinstance(h, Records)]:
                logger.removeHandler(handler)


def test_the_guard_drops_records_below_warning_set_up_before_or_during_the_run(
    loud_sdk_loggers: list[logging.Logger],
) -> None:
    records = Records()
    with llm_logs_quiet():
        for logger in loud_sdk_loggers:  # configured after the guard went on, as Dagster may
            logger.setLevel(logging.DEBUG)
            logger.addHandler(records)
            logger.propagate = False
        for logger in loud_sdk_loggers:
            for level in (logging.DEBUG, logging.INFO, logging.WARNING):
                logger.log(level, "Request options: %s", "a prompt")
        assert unguarded_loggers() == []
    assert records.seen == [(lg.name, logging.WARNING) for lg in loud_sdk_loggers]

    logging.getLogger("anthropic._base_client").debug("after the run")
    assert records.seen[-1] == ("anthropic._base_client", logging.DEBUG)  # the filters came off
    assert set(unguarded_loggers()) >= {lg.name for lg in loud_sdk_loggers}


def test_a_real_call_logs_its_prompt_at_debug_unless_guarded(
    loopback: LoopbackApi, caplog: pytest.LogCaptureFixture, loud_sdk_loggers: list[logging.Logger]
) -> None:
    for logger in loud_sdk_loggers:
        logger.setLevel(logging.DEBUG)
    caplog.set_level(logging.DEBUG)
    mark = case_marks(0)["title"]
    request = LlmRequest(
        purpose="writer",
        model="claude-haiku-5-5",
        system="Write a card.",
        user=f"Title: {mark}",
        output_schema={"type": "object"},
        max_tokens=1024,
        timeout_ms=10_000,
    )

    async def call() -> None:
        llm = create_anthropic_llm(
            api_key=API_KEY, max_retries=0, timeout_ms=10_000, refusal_fallback=None, base_url=loopback.url
        )
        try:
            await llm.complete(request)
        finally:
            assert isinstance(llm, AnthropicLlm)
            await llm.aclose()

    asyncio.run(call())  # the control: without the guard the SDK logs the prompt
    assert mark in caplog.text and "httpcore2" in caplog.text
    caplog.clear()
    with llm_logs_quiet():
        asyncio.run(call())
        assert unguarded_loggers() == []  # every logger the call made holds the filter
    assert len(loopback.received) == 2 and mark in loopback.received[1]
    quiet = [r for r in caplog.records if r.name.split(".", 1)[0] in QUIET_NAMESPACES]
    assert quiet == [] and mark not in caplog.text and REPLY_MARK not in caplog.text
