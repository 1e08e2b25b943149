"""Names of a stage's `__init__` that load their module on first use (PEP 562).

Why: `graft-eval run` on the synthetic set must start in under half a second, and a stage's
public surface mixes light names (defaults, options) with heavy ones (the GitHub client and
httpx, the Anthropic SDK and the batch ledger, rich's progress bar, the secret catalogue's
regexes). A command imports the whole surface of a stage but uses a few names; the heavy ones
are listed in the stage's `__init__` with `lazy_exports` and imported when first read. mypy and
readers still see them: the same names are imported under `TYPE_CHECKING` beside the map.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from importlib import import_module
from typing import Any


def lazy_exports(package: str, homes: Mapping[str, str]) -> Callable[[str], Any]:
    """A module `__getattr__` for `package`: each name of `homes` is read from its module
    (`homes[name]`, relative to the package) on first use and then kept in the package."""

    def __getattr__(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(import_module(f"{package}.{home}"), name)
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__
