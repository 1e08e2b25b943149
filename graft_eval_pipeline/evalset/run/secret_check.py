"""The last look before a live call: the secret rules over the text a case's prompts carry.

Why: redaction runs once, at export, with the rules of that day. A case exported before the rules
grew, written by hand or by another tool may still hold a secret, and a live run sends its text
to the model API. So the live plan runs the export's secret rules (`sets/secrets.py`) over the
prepared inputs, the cut text the writer and verifier prompts are rendered from: repository,
title, description, linked issue, every path and every patch (as a diff, line by line, like the
export). The rest of a prompt is our own markup, counts and rule ids, and the verifier's card,
which the model writes from the same text. A hit skips the case as `secret_detected` unless the
run allows secrets; only the kinds are kept, never a value.
"""

from __future__ import annotations

from graft_eval_pipeline.card import PreparedInputs
from graft_eval_pipeline.evalset.sets.secrets import secret_kinds, secret_kinds_in


def prompt_secret_kinds(prepared: PreparedInputs) -> dict[str, int]:
    """Kind -> count of the secrets in the text a case's prompts would carry (empty: none)."""
    inputs = prepared.inputs
    texts = [inputs.repository_full_name, inputs.pr.title, inputs.pr.body]
    if inputs.issue is not None:
        texts += [inputs.issue.title, inputs.issue.body]
    texts += [path for f in inputs.files for path in (f.path, f.previous_path) if path]
    found = secret_kinds_in(texts)  # short fields: one RE2 call when none can hold a secret
    for f in inputs.files:
        if f.patch and (kinds := secret_kinds(f.patch, is_patch=True)):
            found.update(kinds)
    return dict(sorted(found.items()))
