"""Eval environment parsing (spec T15)."""

from __future__ import annotations

from pathlib import Path

import pytest

from graft_eval_pipeline.evalset.sets.crypto import generate_key, parse_key
from graft_eval_pipeline.evalset.sets.env import EvalEnv
from graft_eval_pipeline.evalset.sets.errors import EvalError


def test_defaults() -> None:
    env = EvalEnv.from_environ({"HOME": "/home/tester"})
    assert env.eval_dir == Path("/home/tester/.graft-eval")
    assert env.eval_key is None and env.github_token is None and env.anthropic_api_key is None
    assert (env.model_fast, env.model_strong) == ("claude-haiku-5-5", "claude-sonnet-5-5")
    assert (env.timeout_ms, env.max_retries) == (120_000, 2)
    assert env.refusal_fallback is None
    assert env.agent_logins == () and env.agent_coauthor_emails == ()
    assert env.github_app_id is None and env.github_app_private_key_path is None
    assert env.github_api_url == "https://api.github.com"
    assert env.optional_key() is None


def test_every_variable_parsed() -> None:
    key = generate_key()
    env = EvalEnv.from_environ(
        {
            "HOME": "/home/tester",
            "GRAFT_EVAL_DIR": "~/evals",
            "GRAFT_EVAL_KEY": key,
            "GRAFT_EVAL_GITHUB_TOKEN": "fake-token-value",
            "ANTHROPIC_API_KEY": "fake-api-key",
            "GRAFT_LLM_MODEL_FAST": "fast-model",
            "GRAFT_LLM_MODEL_STRONG": "strong-model",
            "GRAFT_LLM_TIMEOUT_MS": "5000",
            "GRAFT_LLM_MAX_RETRIES": "0",
            "GRAFT_LLM_REFUSAL_FALLBACK": "fallback-model",
            "GRAFT_AGENT_LOGINS": " agent-bot , other[bot],,",
            "GRAFT_AGENT_COAUTHOR_EMAILS": "agent@example.test",
            "GITHUB_APP_ID": "12345",
            "GITHUB_APP_PRIVATE_KEY_PATH": "~/keys/app.pem",
            "GITHUB_API_URL": "https://ghe.example.test/api/v3/",
        }
    )
    assert env.eval_dir == Path("/home/tester/evals")
    assert env.key() == parse_key(key) == env.optional_key()
    assert env.github_token == "fake-token-value" and env.anthropic_api_key == "fake-api-key"
    assert (env.model_fast, env.model_strong, env.refusal_fallback) == (
        "fast-model",
        "strong-model",
        "fallback-model",
    )
    assert (env.timeout_ms, env.max_retries) == (5000, 0)
    assert env.agent_logins == ("agent-bot", "other[bot]")
    assert env.agent_coauthor_emails == ("agent@example.test",)
    assert env.github_app_id == 12345
    assert env.github_app_private_key_path == Path("/home/tester/keys/app.pem")
    assert env.github_api_url == "https://ghe.example.test/api/v3"
    shown = repr(env)
    assert key not in shown and "fake-token-value" not in shown and "fake-api-key" not in shown


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("GRAFT_LLM_TIMEOUT_MS", "soon"),
        ("GRAFT_LLM_TIMEOUT_MS", "0"),
        ("GRAFT_LLM_MAX_RETRIES", "-1"),
        ("GITHUB_APP_ID", "app"),
        ("GITHUB_API_URL", "api.github.com"),
    ],
)
def test_bad_value_names_the_variable(name: str, value: str) -> None:
    with pytest.raises(EvalError, match=name):
        EvalEnv.from_environ({name: value})


def test_key_missing_or_bad() -> None:
    with pytest.raises(EvalError, match=r"^GRAFT_EVAL_KEY is not set"):
        EvalEnv.from_environ({}).key()
    with pytest.raises(EvalError, match="GRAFT_EVAL_KEY"):
        EvalEnv.from_environ({"GRAFT_EVAL_KEY": "c2hvcnQ="}).key()
