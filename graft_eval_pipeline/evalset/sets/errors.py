"""Errors that map to the CLI's exit codes (spec 7): 1 check failed, 2 usage/config, 3 aborted.

`GraftEvalError` carries the code; each code has one subclass, and every error graft-eval means
to show is one of them: `CheckFailed` (1), `EvalError` (2) and `EvalAbort` (3). Code that
stops on any of them (the CLI's `main`, a run that says an abort once) catches the base; code
that handles a bad input or setting catches `EvalError`, which a failed check or an abort is not.

Messages are one line, say what is wrong and how to fix it, and never carry case content.
"""

from __future__ import annotations

from typing import ClassVar


class GraftEvalError(Exception):
    """An error to show as one line, with the exit code its subclass names."""

    exit_code: ClassVar[int]


class CheckFailed(GraftEvalError):
    """A threshold or the baseline match failed (exit 1)."""

    exit_code = 1


class EvalError(GraftEvalError):
    """Usage or configuration error, or a bad input file (exit 2)."""

    exit_code = 2


class EvalLocationError(EvalError):
    """A pilot set would sit inside a git working tree."""


class EvalCryptoError(EvalError):
    """Wrong key, tampered envelope or wrong AAD; the message never holds plaintext."""


class EvalAbort(GraftEvalError):
    """Stopped on purpose: declined, over budget, rate-limit wait too long (exit 3)."""

    exit_code = 3

    def __init__(self, reason: str, message: str | None = None) -> None:
        self.reason = reason
        super().__init__(message or reason)
