"""The last look before a live call: the secret rules over the text a case's prompts carry.

Why: redaction runs once, at export, with the rules of that day. A case exported before the rules
grew, written by hand or by another tool may still hold a secret, and a live run sends its text
to the model API. So the live plan runs the export's secret rules (`graft_eval_pipeline.secrets`) over the
prepared inputs, the cut text the writer and verifier prompts are rendered from: repository,
title, description, linked issue, every path and every patch (as a diff, line by line, like the
export). The rest of a prompt is our own markup, counts and rule ids, and the verifier's card,
which the model writes from the same text. A hit skips the case as `secret_detected` unless the
run allows secrets; only the kinds are kept, never a value.
"""

from __future__ import annotations

from graft_eval_pipeline.card import PreparedInputs
from graft_eval_pipeline.secrets import secret_kinds_in


def prompt_secret_kinds(prepared: PreparedInputs) -> dict[str, int]:
    """Kind -> count of the secrets in the text a case's prompts would carry (empty: none)."""
    inputs = prepared.inputs
    texts = [(inputs.repository_full_name, False), (inputs.pr.title, False), (inputs.pr.body, False)]
    if inputs.issue is not None:
        texts += [(inputs.issue.title, False), (inputs.issue.body, False)]
    for f in inputs.files:
        texts.append((f.path, False))
        if f.previous_path:
            texts.append((f.previous_path, False))
    texts += [(f.patch, True) for f in inputs.files if f.patch]
    # One prefilter pass over every field joined: only a field an anchor starts in is scanned.
    return dict(sorted(secret_kinds_in(texts).items()))
