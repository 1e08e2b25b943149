"""Errors of the GitHub layer.

`github/` sits above `evalset/` in the layering (docs/architecture.md), so it cannot raise
`EvalError`; the export maps these to `EvalError` / `EvalAbort` with the same reason.
Messages name the API route and status, never PR content.
"""

from __future__ import annotations

from typing import Literal

# server: 5xx still failing after the backoff retries; network: connection errors likewise (both
# transient: the export stops with exit 3 and resumes on a re-run). unexpected: a 2xx body that is
# not the JSON shape the route returns, or a redirect that could not be followed.
ErrorKind = Literal["not_found", "rate_limited", "auth", "http", "network", "server", "unexpected"]


class GitHubError(Exception):
    """A request that failed after the rate-limit and transient-failure retries."""

    def __init__(self, kind: ErrorKind, status: int | None, message: str) -> None:
        self.kind = kind
        self.status = status
        super().__init__(message)


class GitHubAbort(Exception):
    """The run must stop on purpose: `rate_limit_wait` or `max_requests` (spec E15)."""

    def __init__(self, reason: Literal["rate_limit_wait", "max_requests"], message: str) -> None:
        self.reason = reason
        super().__init__(message)


def classify_status(status: int) -> ErrorKind:
    if status in (404, 410):
        return "not_found"
    if status == 429:
        return "rate_limited"
    if status in (401, 403):
        return "auth"
    return "http"
