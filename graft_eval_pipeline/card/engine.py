"""The card engine's version: a hash of the code that decides a card.

The prompt fingerprint covers the system prompts and schemas, but a card also depends on the
risk floor's rules and globs, how inputs are prepared and cut, how the user prompts are built
and how the classes combine. A report records this hash beside the prompt fingerprint and the
prompt-change sensor compares both, so a change to a floor rule or to `generate_card` re-runs
the sets as a prompt change does. The hash is over the modules' source bytes (line endings
normalised): an edit of a comment counts too, which costs a scripted re-run at worst.
"""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path

ENGINE_MODULES = ("floor", "globs", "prepare", "prompts", "generate", "models", "result")
"""The modules of `card/` whose code decides a card (the LLM clients only carry calls)."""


@functools.cache
def engine_fingerprint() -> str:
    """SHA-256 over ENGINE_MODULES' sources, each prefixed by its name."""
    digest = hashlib.sha256()
    here = Path(__file__).parent
    for name in ENGINE_MODULES:
        source = (here / f"{name}.py").read_bytes().replace(b"\r\n", b"\n")
        digest.update(f"{name}\0{len(source)}\0".encode())
        digest.update(source)
    return digest.hexdigest()
