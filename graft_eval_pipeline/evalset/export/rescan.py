"""Rescan: the current secret rules over the cases a set already holds.

Why: the rules grow (a new token format, a wider assignment rule), and a case exported earlier
keeps whatever the rules of its day missed; in live mode that text goes to the model API. A
rescan redacts every stored case again with the secret rules alone (the e-mail, host and custom
rules of its export are not re-applied: they were chosen per export) and reports, by kind, what
would change: counts and case ids, never a value. With `apply` the affected cases are rewritten
one at a time through the store (sealed, atomic), each re-read right before its write so a label
saved meanwhile is kept, and the new counts are added to the case's `source.redactions`. Text
that is already `[REDACTED:<kind>]` is not found again, so a second rescan finds nothing.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

from graft_eval_pipeline.card import CamelModel
from graft_eval_pipeline.evalset.export.redact import RedactOptions, redact_inputs, secret_counts
from graft_eval_pipeline.evalset.sets import (
    CaseSet,
    EvalCase,
    EvalError,
    PilotSource,
    Redaction,
    list_case_ids,
    read_case,
    write_case,
)

_SECRETS_ONLY = RedactOptions()


class RescannedCase(CamelModel):
    """A case in which the current rules find secrets: its id and the count per kind."""

    case_id: str
    found_by_kind: dict[str, int]


class RescanResult(CamelModel):
    set_id: str
    scanned: int
    affected: list[RescannedCase]
    applied: bool

    @property
    def found_by_kind(self) -> dict[str, int]:
        """Kind -> secrets found over every affected case, sorted by kind."""
        totals: Counter[str] = Counter()
        for item in self.affected:
            totals.update(item.found_by_kind)
        return dict(sorted(totals.items()))

    @property
    def cases_by_kind(self) -> dict[str, list[str]]:
        """Kind -> ids of the cases holding that kind, sorted by kind."""
        cases: dict[str, list[str]] = {}
        for item in self.affected:
            for kind in item.found_by_kind:
                cases.setdefault(kind, []).append(item.case_id)
        return dict(sorted(cases.items()))

    def summary(self) -> str:
        """Counts by kind and case ids only."""
        lines = [
            f"rescan of {self.set_id}: {self.scanned} case(s) scanned, "
            f"{len(self.affected)} with secrets the current rules redact"
        ]
        for kind, count in self.found_by_kind.items():
            ids = self.cases_by_kind[kind]
            lines.append(f"  {kind}: {count} in {len(ids)} case(s): {', '.join(ids)}")
        if self.affected:
            lines.append(
                f"applied: rewrote {len(self.affected)} case(s) and recorded the redactions"
                if self.applied
                else "not applied: run again with --apply to rewrite these cases"
            )
        return "\n".join(lines) + "\n"


def check_rescan_allowed(cs: CaseSet, apply: bool) -> None:
    """Whether a rescan may rewrite the set: only a pilot set is rewritten.

    Only a pilot case records its redactions, and the synthetic cases are committed and fictional (a
    test keeps them free of secrets), so only a pilot set is rewritten.
    """
    if apply and not cs.is_pilot:
        raise EvalError(
            f"set {cs.set_id} is not a pilot set: rescan --apply rewrites only pilot sets "
            "(fix a synthetic case in its generator)"
        )


def _recorded(case: EvalCase, found: list[Redaction]) -> EvalCase:
    """The case's redaction counts plus the new ones, one entry per kind, sorted by kind."""
    source = case.source
    if not isinstance(source, PilotSource):  # check_rescan_allowed keeps synthetic sets out
        raise EvalError(f"case {case.id} is not a pilot case: rescan --apply rewrites only pilot cases")
    totals = Counter({r.kind: r.count for r in source.redactions})
    totals.update({r.kind: r.count for r in found})
    redactions = [Redaction(kind=k, count=n) for k, n in sorted(totals.items()) if n > 0]
    return case.model_copy(update={"source": source.model_copy(update={"redactions": redactions})})


def _rewrite(cs: CaseSet, case_id: str) -> None:
    """Re-read, redact and write one case; a label saved since the scan is kept."""
    fresh = read_case(cs, case_id)
    inputs, found = redact_inputs(fresh.inputs, _SECRETS_ONLY)
    if found:
        write_case(cs, _recorded(fresh.model_copy(update={"inputs": inputs}), found))


def rescan_set(
    cs: CaseSet, *, apply: bool = False, progress: Callable[[int, int], None] | None = None
) -> RescanResult:
    """Scan every case (in id order) with the current secret rules; rewrite the affected ones when `apply`.

    A case that cannot be read stops the rescan naming its file (nothing is rewritten before every
    case has been scanned).
    """
    check_rescan_allowed(cs, apply)
    ids = list_case_ids(cs)
    affected: list[RescannedCase] = []
    for done, case_id in enumerate(ids, start=1):
        found = secret_counts(read_case(cs, case_id).inputs)
        if found:
            affected.append(RescannedCase(case_id=case_id, found_by_kind={r.kind: r.count for r in found}))
        if progress is not None:
            progress(done, len(ids))
    written = 0
    if apply:
        for item in affected:
            try:
                _rewrite(cs, item.case_id)
            except (EvalError, OSError) as err:
                what = (
                    str(err)
                    if isinstance(err, EvalError)
                    else f"cannot write case {item.case_id}: {err.strerror}"
                )
                raise EvalError(
                    f"{what}; rescan --apply rewrote {written} of {len(affected)} case(s): "
                    "run it again to finish (a rewritten case is not found again)"
                ) from None
            written += 1
    return RescanResult(set_id=cs.set_id, scanned=len(ids), affected=affected, applied=apply)
