"""Errors that map to the CLI's exit codes (spec 7): 1 check failed, 2 usage/config, 3 aborted.

Messages are one line, say what is wrong and how to fix it, and never carry case content.
"""

from __future__ import annotations


class EvalError(Exception):
    """Usage or configuration error (exit 2)."""

    exit_code = 2


class EvalLocationError(EvalError):
    """A pilot set would sit inside a git working tree."""


class EvalCryptoError(EvalError):
    """Wrong key, tampered envelope or wrong AAD; the message never holds plaintext."""


class EvalAbort(EvalError):
    """Stopped on purpose: declined, over budget, rate-limit wait too long (exit 3)."""

    exit_code = 3

    def __init__(self, reason: str, message: str | None = None) -> None:
        self.reason = reason
        super().__init__(message or reason)


class CheckFailed(EvalError):
    """A threshold or the baseline match failed (exit 1)."""

    exit_code = 1
