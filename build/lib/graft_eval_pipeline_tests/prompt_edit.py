"""A one-phrase prompt edit, the change issue 14 starts from: no class moves, token counts do."""

from __future__ import annotations

import pytest

from graft_eval_pipeline.card import generate, prompts

ORIGINAL_PHRASE = "closely to review"
EDITED_PHRASE = "closely to review the change and its tests"


def edit_writer_prompt(monkeypatch: pytest.MonkeyPatch) -> str:
    """Edit one phrase of the writer's system prompt where the engine and the fingerprint read it.

    The fake model's token counts follow the prompt's length, so every case with a writer call
    uses more input tokens; the scripted answers, and so every class, stay. Returns the new
    fingerprint.
    """
    edited = prompts.WRITER_SYSTEM_PROMPT.replace(ORIGINAL_PHRASE, EDITED_PHRASE, 1)
    assert edited != prompts.WRITER_SYSTEM_PROMPT, "the phrase to edit is gone from the writer prompt"
    monkeypatch.setattr(prompts, "WRITER_SYSTEM_PROMPT", edited)
    monkeypatch.setattr(generate, "WRITER_SYSTEM_PROMPT", edited)
    return prompts.prompt_fingerprint()
