"""The card engine's code hash: stable, and moved by any edit of a module that decides a card."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from graft_eval_pipeline.card import engine
from graft_eval_pipeline.card.engine import ENGINE_MODULES, engine_fingerprint


def test_the_engine_fingerprint_is_the_hash_of_the_deciding_modules(tmp_path: Path) -> None:
    here = Path(engine.__file__).parent
    assert {"floor", "globs", "prepare", "generate"} <= set(ENGINE_MODULES)
    digest = hashlib.sha256()
    for name in ENGINE_MODULES:
        source = (here / f"{name}.py").read_bytes()
        digest.update(f"{name}\0{len(source)}\0".encode() + source)
    assert engine_fingerprint() == digest.hexdigest()


def test_editing_a_floor_rule_moves_the_fingerprint(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    here = Path(engine.__file__).parent
    for name in ENGINE_MODULES:
        (tmp_path / f"{name}.py").write_bytes((here / f"{name}.py").read_bytes())
    monkeypatch.setattr(engine, "__file__", str(tmp_path / "engine.py"))
    engine_fingerprint.cache_clear()
    try:
        copied = engine_fingerprint()
        engine_fingerprint.cache_clear()
        floor = tmp_path / "floor.py"
        floor.write_text(floor.read_text() + "\n# one more rule\n")
        edited = engine_fingerprint()
    finally:
        engine_fingerprint.cache_clear()
    monkeypatch.undo()
    assert copied == engine_fingerprint() and edited != copied
