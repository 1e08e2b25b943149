"""Recall and look-alike rate of the redactor on the committed secret corpus (issue 12).

The corpus (`data/`, fictional values, see its README) holds at least 300 true-positive
lines of at least 100 token types and 150 look-alikes. Each line is redacted as an added patch
line; a true positive counts when its secret is gone and the line count is unchanged, a
look-alike when the patch comes out unchanged. Targets: recall >= 95 %, look-alikes <= 5 %.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from graft_eval_pipeline.secrets import scan
from graft_eval_pipeline.secrets.catalogue import TOKENS
from graft_eval_pipeline_tests.secrets.redaction_corpus import found, load, missed, redact, touched_entries

DATA = Path(__file__).parent / "data"


def _load(name: str) -> list[dict[str, object]]:
    return load(DATA / name)


def test_the_corpus_files_are_what_make_corpus_writes() -> None:
    """The JSONL is the generator's output, never edited by hand (the README's rule)."""
    spec = importlib.util.spec_from_file_location("make_corpus", DATA / "make_corpus.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    tps, looks = module.build()
    assert (DATA / "true_positives.jsonl").read_text() == "".join(json.dumps(e) + "\n" for e in tps)
    assert (DATA / "lookalikes.jsonl").read_text() == "".join(json.dumps(e) + "\n" for e in looks)


@pytest.fixture(scope="module")
def true_positives() -> list[dict[str, object]]:
    return _load("true_positives.jsonl")


@pytest.fixture(scope="module")
def lookalikes() -> list[dict[str, object]]:
    return _load("lookalikes.jsonl")


def test_corpus_has_the_promised_size_and_every_entry_a_source(
    true_positives: list[dict[str, object]], lookalikes: list[dict[str, object]]
) -> None:
    assert len(true_positives) >= 300
    assert len({e["type"] for e in true_positives}) >= 100
    assert len(lookalikes) >= 150
    assert all(e["source"] and e["fictional"] is True for e in true_positives)
    assert all(str(e["secret"]) in str(e["line"]) for e in true_positives)
    assert all(e["source"] for e in lookalikes)


def test_recall_on_true_positives_is_at_least_95_percent(true_positives: list[dict[str, object]]) -> None:
    misses = [f"{entry['type']}: {entry['line']!r}" for entry in true_positives if missed(entry)]
    recall = 1 - len(misses) / len(true_positives)
    print(f"recall {recall:.1%} ({len(true_positives) - len(misses)}/{len(true_positives)})")
    assert recall >= 0.95, f"recall {recall:.1%}; missed:\n" + "\n".join(misses)


def test_kinds_in_the_counts_match_the_expected_kind(true_positives: list[dict[str, object]]) -> None:
    wrong = []
    for entry in true_positives:
        _, _, counts = redact(str(entry["line"]))
        # A gitleaks rule that names the provider of a generic assignment names it right.
        named = entry["kind"] == "assignment" and any(kind.startswith("gl_") for kind in counts)
        if entry["kind"] not in counts and not named:
            wrong.append(f"{entry['type']}: expected {entry['kind']}, got {dict(counts)}")
    assert len(wrong) <= 0.05 * len(true_positives), "\n".join(wrong)


def test_lookalikes_redacted_at_most_5_percent(lookalikes: list[dict[str, object]]) -> None:
    hit = touched_entries(lookalikes, "type")
    rate = len(hit) / len(lookalikes)
    print(f"look-alikes redacted {rate:.1%} ({len(hit)}/{len(lookalikes)})")
    assert rate <= 0.05, f"look-alike rate {rate:.1%}:\n" + "\n".join(hit)


LOPO_TARGET = 0.95
"""The leave-one-provider-out recall must meet the whole-corpus target: measured 95.3 % with the
prefixed-token rule (91.8 % without it). The misses left are bare tokens without a prefix and a
separator, or with a hex or one-case body, and no secret-ish word on their line or the one before
(`<value>GOOG1…</value>`, `Client("9476467298:AA…")`, `# rotated 2026-03-01: SK8d5b…`)."""


@pytest.mark.slow  # the whole secret corpus redacted once per provider, each time by a rebuilt scanner
def test_leave_one_provider_out_recall(
    true_positives: list[dict[str, object]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each provider of the catalogue is a fold.

    Its entries are redacted with the scanner built without that provider's formats (a rule written
    for its examples does not count for it), so only the other rules (keyword assignments,
    structured rules, gitleaks' rules, other formats) can find them. Entries of kinds no catalogue
    format has (assignments, URLs, key blocks) count as they are. Reports the figure beside the
    whole-corpus recall.
    """
    folds: dict[str, list[dict[str, object]]] = {}
    for entry in true_positives:
        folds.setdefault(str(entry["kind"]), []).append(entry)
    providers = {token.kind for token in TOKENS}
    total, missed_by_fold = 0, {}
    for kind, entries in sorted(folds.items()):
        if kind in providers:
            scanner = scan.build_scanner(tuple(t for t in TOKENS if t.kind != kind))
            monkeypatch.setattr(scan, "_scanner", lambda scanner=scanner: scanner)
        hits = sum(found(entry) for entry in entries)
        monkeypatch.undo()
        total += hits
        if hits < len(entries):
            missed_by_fold[kind] = f"{hits}/{len(entries)}"
    recall = total / len(true_positives)
    whole = sum(found(entry) for entry in true_positives) / len(true_positives)
    print(
        f"whole-corpus recall {whole:.1%}; leave-one-provider-out recall {recall:.1%} over "
        f"{len(folds)} folds; folds below 100 %: {missed_by_fold}"
    )
    assert whole >= 0.95
    assert recall >= LOPO_TARGET, f"leave-one-provider-out recall {recall:.1%}: {missed_by_fold}"
