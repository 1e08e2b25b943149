"""Labeling logic (spec T10, E17): answers → label sets → updated cases. Pure, no I/O.

Used by the interactive sessions (`session`) and by `--apply`, assign-double and the inbox
import (`inbox`). Errors name case ids and numbers only, never case content.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from pydantic import ValidationError

from graft_eval_pipeline.evalset.sets import (
    DOUBLE_LABEL_TAG,
    HANDLE_PATTERN,
    LONE_SURROGATE_RULE,
    EvalCase,
    EvalError,
    LabelAnswers,
    LabelSet,
    allocate,
    describe_validation_error,
    lone_surrogate_at,
    mulberry32,
    needs_adjudication,
    path_stratum,
    seeded_shuffle,
    size_stratum,
    stratum_key,
)

LABELING_GUIDE_VERSION = "lg-1"
MAX_PROBLEMS_SHOWN = 5


def check_handle(handle: str) -> str:
    """A labeler handle is a short id; an e-mail address is personal data and is refused."""
    if "@" in handle:
        raise EvalError("the labeler handle looks like an e-mail address: use a short handle such as 'alice'")
    if not re.fullmatch(HANDLE_PATTERN, handle):
        raise EvalError(
            "bad labeler handle: use 1 to 40 lowercase letters, digits, '.', '_' or '-', "
            "starting with a letter or digit"
        )
    return handle


def make_label_set(answers: LabelAnswers, *, labeler: str, now: datetime) -> LabelSet:
    """The answers stamped with the labeler, the time and the guide version; oos sorted, unique."""
    fields = answers.model_dump(include=set(LabelAnswers.model_fields))
    fields["out_of_scope"] = sorted(set(answers.out_of_scope))
    return LabelSet(labeler=labeler, labeled_at=now, guide_version=LABELING_GUIDE_VERSION, **fields)


def _revalidated(case: EvalCase, **update: Any) -> EvalCase:
    """model_copy skips validation; the cross-field rules (oos paths, unique labelers) must hold."""
    return EvalCase.model_validate(case.model_copy(update=update).to_json_dict())


def with_label(case: EvalCase, label: LabelSet) -> EvalCase:
    """Replace the labeler's existing set in place (keeps the order gold() reads), else append."""
    labels = list(case.labels)
    index = next((i for i, old in enumerate(labels) if old.labeler == label.labeler), None)
    if index is None:
        labels.append(label)
    else:
        labels[index] = label
    return _revalidated(case, labels=labels)


def with_adjudicated(case: EvalCase, label: LabelSet) -> EvalCase:
    return _revalidated(case, adjudicated=label)


def with_tag(case: EvalCase, tag: str) -> EvalCase:
    """The case with `tag` added (unchanged when it already carries it)."""
    return case if tag in case.tags else _revalidated(case, tags=[*case.tags, tag])


def _summary(problems: list[str]) -> str:
    shown = "; ".join(problems[:MAX_PROBLEMS_SHOWN])
    more = len(problems) - MAX_PROBLEMS_SHOWN
    return shown + (f" (+{more} more)" if more > 0 else "")


def apply_labels(
    cases: Mapping[str, EvalCase], entries: Mapping[str, Any], *, labeler: str, now: datetime, where: str
) -> dict[str, LabelSet]:
    """Validate every entry against `cases`; the label set per case id, or one EvalError for all.

    Each set is also tried on its case (`with_label`), so the cross-field rules hold; the caller
    applies the sets to freshly read copies when it writes (see `write_labels`).
    """
    check_handle(labeler)
    problems: list[str] = []
    labels: dict[str, LabelSet] = {}
    unknown = sum(case_id not in cases for case_id in entries)
    if unknown:  # counted, never quoted: an id that is not in the set is text from the file
        problems.append(f"{unknown} case id(s) not in the set (check them with `graft-eval validate`)")
    for case_id, raw in entries.items():
        case = cases.get(case_id)
        if case is None:
            continue
        try:
            answers = LabelAnswers.model_validate(raw)
        except ValidationError as err:
            problems.append(describe_validation_error(err, f"case {case_id}"))
            continue
        at = lone_surrogate_at(answers)
        if at is not None:
            problems.append(f"case {case_id}: {at}: {LONE_SURROGATE_RULE}")
            continue
        paths = {f.path for f in case.inputs.files}
        bad = [i + 1 for i, p in enumerate(answers.out_of_scope) if p not in paths]
        if bad:
            numbers = ", ".join(map(str, bad))
            problems.append(f"case {case_id}: outOfScope entry {numbers} is not a file of the case")
            continue
        label = make_label_set(answers, labeler=labeler, now=now)
        try:
            with_label(case, label)
        except ValueError as err:
            problems.append(describe_validation_error(err, f"case {case_id}"))
            continue
        labels[case_id] = label
    if problems:
        raise EvalError(f"{where}: {len(problems)} problem(s), nothing written: {_summary(problems)}")
    return labels


def double_label_target(n: int, fraction: float, minimum: int) -> int:
    """max(min, ceil(fraction × n)), never more than the cases there are."""
    return min(n, max(minimum, math.ceil(fraction * n)))


def choose_double(cases: Sequence[EvalCase], *, fraction: float, minimum: int, seed: int) -> list[str]:
    """Ids to tag so that the target is reached; already tagged cases count, so a rerun adds none.

    The choice is stratified by the gold-free size and path strata recomputed from the inputs
    (labels never steer it) and seeded, so the same set and seed give the same ids.
    """
    if not 0 <= fraction <= 1 or minimum < 0:
        raise EvalError("--fraction must be between 0 and 1 and --min must be 0 or more")
    tagged = [c for c in cases if DOUBLE_LABEL_TAG in c.tags]
    missing = double_label_target(len(cases), fraction, minimum) - len(tagged)
    if missing <= 0:
        return []
    strata: dict[str, list[str]] = {}
    for case in sorted((c for c in cases if DOUBLE_LABEL_TAG not in c.tags), key=lambda c: c.id):
        pr = case.inputs.pr
        key = stratum_key(
            size_stratum(pr.additions, pr.deletions),
            path_stratum(case.inputs.files, case.floor_config.extra_sensitive_globs),
        )
        strata.setdefault(key, []).append(case.id)
    quotas = allocate({k: len(ids) for k, ids in strata.items()}, missing, 0)
    rng = mulberry32(seed)
    return sorted(cid for k in sorted(strata) for cid in seeded_shuffle(strata[k], rng)[: quotas[k]])


def cases_to_label(
    cases: Sequence[EvalCase], *, handle: str, case_id: str | None = None, double_only: bool = False
) -> list[EvalCase]:
    """Sorted by id, without a set by `handle`; --case picks one case (relabeling replaces the set)."""
    if case_id is not None:
        picked = [c for c in cases if c.id == case_id]
        if not picked:
            raise EvalError(f"case {case_id} is not in the set: check the id with `graft-eval validate`")
        return picked
    return sorted(
        (
            c
            for c in cases
            if all(lbl.labeler != handle for lbl in c.labels)
            and (not double_only or DOUBLE_LABEL_TAG in c.tags)
        ),
        key=lambda c: c.id,
    )


def cases_to_adjudicate(cases: Sequence[EvalCase], *, case_id: str | None = None) -> list[EvalCase]:
    """Cases whose label sets disagree on the scored fields and that have no adjudicated set."""
    pending = sorted((c for c in cases if needs_adjudication(c)), key=lambda c: c.id)
    if case_id is None:
        return pending
    picked = [c for c in pending if c.id == case_id]
    if not picked:
        raise EvalError(
            f"case {case_id} does not need adjudication "
            "(unknown, agreeing label sets, or already adjudicated)"
        )
    return picked
