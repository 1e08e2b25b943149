"""No log record of the Anthropic SDK or its HTTP stack below WARNING while live calls run.

The SDK logs every request's options, the whole prompt, at DEBUG, and the HTTP stack logs each
exchange at DEBUG and INFO. Which records reach a stream, a file or the Dagster event log is
decided by settings outside this project: ANTHROPIC_LOG=debug (the SDK sets its loggers to DEBUG
and calls `logging.basicConfig` when it is imported), a DEBUG root logger, `logging.config`,
Dagster's `python_logs` (which sets the level of, and adds a handler to, the loggers it manages).
Levels cannot be relied on: any of these may set them before or during a run. So while live
calls run, every logger of those libraries holds a filter that drops each record below WARNING
before any handler sees it. Logger filters are kept by `setLevel`, `basicConfig`, `dictConfig`
and Dagster's set-up, and a logger's filters see every record it makes, whatever handler or
ancestor would have written it. The SDK's and the transport's modules are imported first, so
that their loggers exist when the filters go on; the filters come off when the run ends.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager

QUIET_NAMESPACES = ("anthropic", "httpx2", "httpcore2", "httpx", "httpcore", "h2", "hpack")
"""The SDK, its HTTP client and transport (httpx2, httpcore2), their upstream namesakes, and the
HTTP/2 libraries the transport may use (hpack logs header fields, the API key among them)."""

LAZY_LOGGERS = ("httpcore2.http2", "httpcore2.socks", "httpcore.http2", "httpcore.socks")
"""Loggers of transport modules imported only on first use (HTTP/2, SOCKS): made up front so that
they hold the filter when those modules ask for them."""


class BelowWarningDropped(logging.Filter):
    """Drops DEBUG and INFO records; WARNING and above (no request or reply content) pass."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.levelno >= logging.WARNING


def quiet_loggers() -> list[logging.Logger]:
    """Every logger of QUIET_NAMESPACES that exists now, with the namespaces and LAZY_LOGGERS."""
    names = {*QUIET_NAMESPACES, *LAZY_LOGGERS}
    names |= {
        name for name in list(logging.root.manager.loggerDict) if name.split(".", 1)[0] in QUIET_NAMESPACES
    }
    return [logging.getLogger(name) for name in sorted(names)]


@contextmanager
def llm_logs_quiet() -> Iterator[None]:
    """Drop the SDK's and its HTTP stack's log records below WARNING for the duration of the block.

    No such record is handled, whatever the environment or the logging configuration say (nestable).
    """
    import anthropic  # noqa: F401  # the SDK's logging set-up runs now, and its loggers exist
    import httpcore2  # noqa: F401  # the transport's loggers, made when its modules are imported

    guard = BelowWarningDropped()
    loggers = quiet_loggers()
    for logger in loggers:
        logger.addFilter(guard)
    try:
        yield
    finally:
        for logger in loggers:
            logger.removeFilter(guard)
