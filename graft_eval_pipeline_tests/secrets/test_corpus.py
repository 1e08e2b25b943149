"""Recall and look-alike rate of the redactor on the committed secret corpus (issue 12).

The corpus (`data/`, fictional values, see its README) holds at least 300 true-positive
lines of at least 100 token types and 150 look-alikes. Each line is redacted as an added patch
line; a true positive counts when its secret is gone and the line count is unchanged, a
look-alike when the patch comes out unchanged. Targets: recall >= 95 %, look-alikes <= 5 %.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest

from graft_eval_pipeline.evalset.export.redact import RedactOptions, redact_text
from graft_eval_pipeline.secrets import scan
from graft_eval_pipeline.secrets.catalogue import TOKENS

DATA = Path(__file__).parent / "data"
_MARKER = re.compile(r"\[REDACTED:\w+\]")  # `password` must not be found in `[REDACTED:url_password]`


def _load(name: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in (DATA / name).read_text().splitlines() if line.strip()]


def _as_patch(line: str) -> str:
    lines = line.split("\n")
    return f"@@ -0,0 +1,{len(lines)} @@\n" + "\n".join("+" + part for part in lines)


def _redact(line: str) -> tuple[str, str, Counter[str]]:
    patch = _as_patch(line)
    counts: Counter[str] = Counter()
    return patch, redact_text(patch, RedactOptions(), counts, is_patch=True), counts


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
    missed = []
    for entry in true_positives:
        patch, out, _ = _redact(str(entry["line"]))
        if str(entry["secret"]) in _MARKER.sub("", out) or out.count("\n") != patch.count("\n"):
            missed.append(f"{entry['type']}: {entry['line']!r}")
    recall = 1 - len(missed) / len(true_positives)
    print(f"recall {recall:.1%} ({len(true_positives) - len(missed)}/{len(true_positives)})")
    assert recall >= 0.95, f"recall {recall:.1%}; missed:\n" + "\n".join(missed)


def test_kinds_in_the_counts_match_the_expected_kind(true_positives: list[dict[str, object]]) -> None:
    wrong = []
    for entry in true_positives:
        _, _, counts = _redact(str(entry["line"]))
        # A gitleaks rule that names the provider of a generic assignment names it right.
        named = entry["kind"] == "assignment" and any(kind.startswith("gl_") for kind in counts)
        if entry["kind"] not in counts and not named:
            wrong.append(f"{entry['type']}: expected {entry['kind']}, got {dict(counts)}")
    assert len(wrong) <= 0.05 * len(true_positives), "\n".join(wrong)


def test_lookalikes_redacted_at_most_5_percent(lookalikes: list[dict[str, object]]) -> None:
    hit = []
    for entry in lookalikes:
        patch, out, counts = _redact(str(entry["line"]))
        if out != patch:
            hit.append(f"{entry['type']}: {entry['line']!r} -> {dict(counts)}")
    rate = len(hit) / len(lookalikes)
    print(f"look-alikes redacted {rate:.1%} ({len(hit)}/{len(lookalikes)})")
    assert rate <= 0.05, f"look-alike rate {rate:.1%}:\n" + "\n".join(hit)


def _found(entry: dict[str, object]) -> bool:
    patch, out, _ = _redact(str(entry["line"]))
    return str(entry["secret"]) not in _MARKER.sub("", out) and out.count("\n") == patch.count("\n")


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
    found, missed_by_fold = 0, {}
    for kind, entries in sorted(folds.items()):
        if kind in providers:
            scanner = scan.build_scanner(tuple(t for t in TOKENS if t.kind != kind))
            monkeypatch.setattr(scan, "_scanner", lambda scanner=scanner: scanner)
        hits = sum(_found(entry) for entry in entries)
        monkeypatch.undo()
        found += hits
        if hits < len(entries):
            missed_by_fold[kind] = f"{hits}/{len(entries)}"
    recall = found / len(true_positives)
    whole = sum(_found(entry) for entry in true_positives) / len(true_positives)
    print(
        f"whole-corpus recall {whole:.1%}; leave-one-provider-out recall {recall:.1%} over "
        f"{len(folds)} folds; folds below 100 %: {missed_by_fold}"
    )
    assert whole >= 0.95
    assert recall >= LOPO_TARGET, f"leave-one-provider-out recall {recall:.1%}: {missed_by_fold}"
