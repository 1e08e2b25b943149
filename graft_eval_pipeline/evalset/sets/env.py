"""Eval-only environment parsing (spec T15): every variable with its default, checked once.

A bad value fails with an `EvalError` naming the variable. Secrets are kept out of `repr`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from graft_eval_pipeline.card import Models
from graft_eval_pipeline.evalset.sets.crypto import parse_key
from graft_eval_pipeline.evalset.sets.errors import EvalError

DEFAULT_EVAL_DIR = "~/.graft-eval"
DEFAULT_MODEL_FAST = "claude-haiku-5-5"
DEFAULT_MODEL_STRONG = "claude-sonnet-5-5"
DEFAULT_TIMEOUT_MS = 120_000
DEFAULT_MAX_RETRIES = 2
DEFAULT_GITHUB_API_URL = "https://api.github.com"


@dataclass(frozen=True)
class EvalEnv:
    eval_dir: Path
    eval_key: str | None = field(default=None, repr=False)
    github_token: str | None = field(default=None, repr=False)
    anthropic_api_key: str | None = field(default=None, repr=False)
    model_fast: str = DEFAULT_MODEL_FAST
    model_strong: str = DEFAULT_MODEL_STRONG
    timeout_ms: int = DEFAULT_TIMEOUT_MS
    max_retries: int = DEFAULT_MAX_RETRIES
    refusal_fallback: str | None = None
    agent_logins: tuple[str, ...] = ()
    agent_coauthor_emails: tuple[str, ...] = ()
    github_app_id: int | None = None
    github_app_private_key_path: Path | None = None
    github_api_url: str = DEFAULT_GITHUB_API_URL

    @classmethod
    def from_environ(cls, environ: Mapping[str, str]) -> EvalEnv:
        """Parse the process environment (or a test's dict); empty values count as unset."""

        def get(name: str) -> str | None:
            value = environ.get(name, "").strip()
            return value or None

        home = get("HOME")
        return cls(
            eval_dir=_expand_home(get("GRAFT_EVAL_DIR") or DEFAULT_EVAL_DIR, home),
            eval_key=get("GRAFT_EVAL_KEY"),
            github_token=get("GRAFT_EVAL_GITHUB_TOKEN"),
            anthropic_api_key=get("ANTHROPIC_API_KEY"),
            model_fast=get("GRAFT_LLM_MODEL_FAST") or DEFAULT_MODEL_FAST,
            model_strong=get("GRAFT_LLM_MODEL_STRONG") or DEFAULT_MODEL_STRONG,
            timeout_ms=_int("GRAFT_LLM_TIMEOUT_MS", get("GRAFT_LLM_TIMEOUT_MS"), DEFAULT_TIMEOUT_MS, 1),
            max_retries=_int("GRAFT_LLM_MAX_RETRIES", get("GRAFT_LLM_MAX_RETRIES"), DEFAULT_MAX_RETRIES, 0),
            refusal_fallback=get("GRAFT_LLM_REFUSAL_FALLBACK"),
            agent_logins=_list(get("GRAFT_AGENT_LOGINS")),
            agent_coauthor_emails=_list(get("GRAFT_AGENT_COAUTHOR_EMAILS")),
            github_app_id=_optional_int("GITHUB_APP_ID", get("GITHUB_APP_ID")),
            github_app_private_key_path=_optional_path(get("GITHUB_APP_PRIVATE_KEY_PATH"), home),
            github_api_url=_url("GITHUB_API_URL", get("GITHUB_API_URL") or DEFAULT_GITHUB_API_URL),
        )

    def models(self) -> Models:
        return Models(fast=self.model_fast, strong=self.model_strong)

    def key(self) -> bytes:
        """The set key; commands that open a pilot set cannot go on without it."""
        if self.eval_key is None:
            raise EvalError(
                "GRAFT_EVAL_KEY is not set: export it from the team password manager "
                "(a new set gets one from `graft-eval keygen`)"
            )
        return parse_key(self.eval_key)

    def optional_key(self) -> bytes | None:
        """The key when set (checked), else None: synthetic sets need none."""
        return None if self.eval_key is None else self.key()


def _expand_home(text: str, home: str | None) -> Path:
    if home and (text == "~" or text.startswith("~/")):
        return Path(home) / text[2:]
    return Path(text).expanduser()


def _optional_path(text: str | None, home: str | None) -> Path | None:
    return None if text is None else _expand_home(text, home)


def _int(name: str, text: str | None, default: int, minimum: int) -> int:
    if text is None:
        return default
    try:
        value = int(text)
    except ValueError:
        value = minimum - 1
    if value < minimum:
        raise EvalError(f"{name} must be an integer ≥ {minimum}, got {text!r}: fix or unset it")
    return value


def _optional_int(name: str, text: str | None) -> int | None:
    return None if text is None else _int(name, text, 0, 1)


def _list(text: str | None) -> tuple[str, ...]:
    """Comma-separated list; blanks dropped."""
    return tuple(part.strip() for part in (text or "").split(",") if part.strip())


def _url(name: str, text: str) -> str:
    if not text.startswith(("https://", "http://")):
        raise EvalError(f"{name} must be an http(s) URL, got {text!r}: fix or unset it")
    return text.rstrip("/")
