"""The GitHub client an export reads through, and how GitHub's failures become the CLI's errors.

Its own module because it is the one place the export stage builds a `GitHubClient` (httpx):
`graft-eval export` and the Dagster GitHub resource call `github_client`, and every step that
calls GitHub runs inside `github_errors`.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal

from graft_eval_pipeline.evalset.sets import EvalAbort, EvalEnv, EvalError
from graft_eval_pipeline.github.auth import AppAuth, Auth, TokenAuth, load_app_private_key
from graft_eval_pipeline.github.client import GitHubClient
from graft_eval_pipeline.github.errors import GitHubAbort, GitHubError
from graft_eval_pipeline.github.rate_limit import RateLimiter, RateLimitOptions


def github_client(
    env: EvalEnv,
    *,
    auth: Literal["app", "token"],
    installation_id: int | None,
    limits: RateLimitOptions,
    sleep: Callable[[float], None] = time.sleep,
    now: Callable[[], float] = time.time,
    rand: Callable[[], float] = random.random,
    transport: Any = None,
) -> GitHubClient:
    """The App's installation token (default) or GRAFT_EVAL_GITHUB_TOKEN."""
    credentials: Auth
    if auth == "token":
        if env.github_token is None:
            raise EvalError("--auth token needs GRAFT_EVAL_GITHUB_TOKEN (a read-only fine-grained token)")
        credentials = TokenAuth(env.github_token)
    else:
        if installation_id is None:
            raise EvalError("--auth app needs --installation-id <n> (or use --auth token)")
        if env.github_app_id is None or env.github_app_private_key_path is None:
            raise EvalError("--auth app needs GITHUB_APP_ID and GITHUB_APP_PRIVATE_KEY_PATH")
        try:
            key = load_app_private_key(Path(env.github_app_private_key_path).read_bytes())
        except (OSError, ValueError, TypeError):
            raise EvalError(
                "GITHUB_APP_PRIVATE_KEY_PATH must name a readable PEM RSA key (the App's private key)"
            ) from None
        credentials = AppAuth(str(env.github_app_id), key, installation_id, now)
    limiter = RateLimiter(limits, sleep=sleep, now=now, rand=rand)
    return GitHubClient(auth=credentials, limiter=limiter, base_url=env.github_api_url, transport=transport)


@contextmanager
def github_errors() -> Iterator[None]:
    """GitHub-layer failures as the CLI's errors.

    Rate-limit stops and transient failures that outlasted the retries (5xx, connection errors) exit
    3, the rest exit 2.
    """
    try:
        yield
    except GitHubAbort as err:
        raise EvalAbort(err.reason, str(err)) from None
    except GitHubError as err:
        if err.kind == "rate_limited":
            raise EvalAbort(
                "rate_limited", f"{err}: still rate limited after 3 retries; re-run later"
            ) from None
        if err.kind in ("server", "network"):
            raise EvalAbort(
                "github_unavailable",
                f"{err}; cases written so far are kept, re-run the same export later to resume",
            ) from None
        raise EvalError(f"{err}; cases written so far are kept, re-run to resume") from None
