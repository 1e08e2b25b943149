"""Card results of a run, written into the set as each case ends (sealed in a pilot set).

A large run cannot hold every card (model prose) until its last case; the harness hands each
result to `CardResultWriter` and drops it. `read_card_results` reads them back one at a time.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, nullcontext

from graft_eval_pipeline.card import CamelModel, CardResult
from graft_eval_pipeline.evalset.sets import (
    CARD_RESULTS_STEM,
    CaseSet,
    EvalCase,
    EvalError,
    RecordWriter,
    UntrustedInputError,
    parse_json,
    read_records,
    remove_file,
)


class CardResultRecord(CamelModel):
    """One line of a card-results file: the case id and its card result."""

    id: str
    result: CardResult


class CardResultWriter:
    """Writes each result as it comes; `None` for `rel` keeps none (the CLI's runs).

    Each is also shown to `on_result`, when given.
    """

    def __init__(
        self, cs: CaseSet, rel: str | None, on_result: Callable[[EvalCase, CardResult], None] | None = None
    ) -> None:
        self._on_result = on_result
        self._records: AbstractContextManager[RecordWriter | None] = (
            RecordWriter(cs, rel) if rel is not None else nullcontext()
        )
        self._writer: RecordWriter | None = None

    def __enter__(self) -> CardResultWriter:
        self._writer = self._records.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self._records.__exit__(*exc)  # type: ignore[arg-type]

    def add(self, case: EvalCase, result: CardResult) -> None:
        if self._on_result is not None:
            self._on_result(case, result)
        if self._writer is not None:
            self._writer.write(CardResultRecord(id=case.id, result=result).model_dump_json(by_alias=True))


def read_card_results(cs: CaseSet, rel: str) -> Iterator[tuple[str, CardResult]]:
    """(case id, card result) in the order the run wrote them.

    An EvalError if the file is missing or damaged (it names the file, never a result).
    """
    records = read_records(cs, rel)
    if records is None:
        raise EvalError(f"set {cs.set_id} holds no card results at {rel}: run the harness again")
    for text in records:
        try:
            record = parse_json(text, rel, CardResultRecord)
        except UntrustedInputError as err:
            raise UntrustedInputError(
                f"a card result in {err} (set {cs.set_id}; written by other code?): run the harness again"
            ) from None
        yield record.id, record.result


def drop_other_card_results(cs: CaseSet, keep: str) -> list[str]:
    """Delete the card-results files of earlier runs (`<stem>.<run id>.jsonl[.enc]`) except `keep`.

    Called by the run that holds the set once its own file is complete. Returns what went.
    """
    folder = (cs.dir / CARD_RESULTS_STEM).parent
    stem = CARD_RESULTS_STEM.rpartition("/")[2] + "."
    kept = {keep.rpartition("/")[2], keep.rpartition("/")[2] + ".enc"}
    if not folder.is_dir():
        return []
    gone = []
    for path in sorted(folder.iterdir()):
        name = path.name
        if name.startswith(stem) and name.endswith((".jsonl", ".jsonl.enc")) and name not in kept:
            remove_file(cs, path.relative_to(cs.dir).as_posix())
            gone.append(name)
    return gone
