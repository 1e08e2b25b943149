"""Secret detection: what counts as a secret in a text, as spans and counts by kind, never a value.

Why a package of its own: three stages apply the same rules. Export redacts with them (it
splices the spans found here), a rescan re-runs them over an existing set, and a live run looks
at each prepared prompt one last time before it is sent. The rules are pure text functions with
no I/O and import nothing else of graft_eval_pipeline (a leaf, like `card/` and `github/`):
`catalogue.py` lists the token formats, `scan.py` runs them and the structured and keyword rules
as one RE2 prefilter, `values.py` decides whether a value is a secret or a look-alike, `rules.py`
is the surface below, `prefilter.py` names the joined texts that hold a hit (one Hyperscan
pass), `utf8.py` maps the byte offsets of RE2 scans back to text.

Importing it loads the catalogue (compiled on first use, ~30 ms): only the commands and assets
that redact or check a prompt import it.
"""

from graft_eval_pipeline.secrets.rules import (
    SECRET_KINDS,
    kept_spans,
    secret_kinds_in,
    secret_spans,
)
from graft_eval_pipeline.secrets.utf8 import Utf8Offsets

__all__ = [
    "SECRET_KINDS",
    "Utf8Offsets",
    "kept_spans",
    "secret_kinds_in",
    "secret_spans",
]
