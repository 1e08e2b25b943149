"""A run's files on disk (spec 6.6): report.json, report.md, cases.parquet and report.html.

Every file goes through the store: 0700 folders (missing parents too, whatever the umask) and
0600 files, written atomically. pyarrow is imported only when a Parquet file is written, so
reading reports (summary, sensors) does not pay for it; pandas never is (`cases_parquet`).
"""

from __future__ import annotations

import functools
import io
import types
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal, Union, get_args, get_origin

import orjson
from pydantic import BaseModel

from graft_eval_pipeline.evalset.report.legacy import ReportV1
from graft_eval_pipeline.evalset.scoring import REPORT_SCHEMA_VERSION, CaseRow, EvalReport
from graft_eval_pipeline.evalset.sets import (
    EvalError,
    parse_document,
    read_limited,
    validate,
    write_report_file,
)

if TYPE_CHECKING:
    import pyarrow as pa

REPORT_FILE = "report.json"
MARKDOWN_FILE = "report.md"
HTML_FILE = "report.html"
PARQUET_FILE = "cases.parquet"


def dump_report(report: EvalReport) -> str:
    """report.json's text, as the stdlib's indenting JSON encoder would write it, 5-10x faster.

    pydantic's serializer writes what `json.dumps(indent=2, ensure_ascii=False)` of the camelCase
    dict would (the same layout and values; a float below 1e-4 may be spelled differently, 0.00003
    for 3e-05): the stdlib's indenting encoder is pure Python, a fifth of a 1,000-case run's report
    step.
    """
    return report.model_dump_json(by_alias=True, indent=2) + "\n"


def load_any_report(path: Path, where: str | None = None) -> EvalReport | ReportV1:
    """A report of the current schema, or a schemaVersion 1 report, through the untrusted-file reader.

    A schemaVersion 1 report is read as a baseline; `where` names it in an error (default: the
    path).
    """
    where = where or str(path)
    try:
        raw = read_limited(Path(path), where)
    except OSError as exc:
        raise EvalError(f"cannot read report {path}: {exc.strerror}") from None
    document = parse_document(raw, where)
    data = document.value
    version = data.get("schemaVersion") if isinstance(data, dict) else None
    surrogates = document.may_hold_surrogate
    invalid = f"{where} is not a valid eval report (schemaVersion {REPORT_SCHEMA_VERSION}, or 1)"
    if version == 1:
        return validate(data, invalid, ReportV1, surrogates=surrogates)
    return validate(data, invalid, EvalReport, surrogates=surrogates)


def load_report(path: Path, where: str | None = None) -> EvalReport:
    """A report of the current schema; an older one is named, with how to get a new one."""
    report = load_any_report(path, where)
    if isinstance(report, ReportV1):
        raise EvalError(
            f"{path} is a schemaVersion 1 report (no counts or intervals): run the set again "
            "for a current report; as a baseline it is still compared by value"
        )
    return report


# --- cases.parquet: one flat record per CaseRow ----------------------------------------------

ColumnKind = Literal["string", "bool", "int", "float", "string_list"]

# Nested row models whose columns keep the inner names alone (`input_tokens`, not
# `usage_input_tokens`); every other nested model prefixes its field name (`gold_risk`, `oos_tp`).
UNPREFIXED_PARTS = frozenset({"usage"})


@dataclass(frozen=True)
class ParquetColumn:
    name: str
    path: tuple[str, ...]  # attribute path from the row; a None on the way gives a null
    kind: ColumnKind


def _without_none(annotation: Any) -> Any:
    if get_origin(annotation) in (Union, types.UnionType):
        args = [a for a in get_args(annotation) if a is not type(None)]
        if len(args) == 1:
            return args[0]
    if get_origin(annotation) is Annotated:
        return _without_none(get_args(annotation)[0])
    return annotation


def _column_kind(annotation: Any, where: str) -> ColumnKind:
    if get_origin(annotation) is Literal and all(isinstance(a, str) for a in get_args(annotation)):
        return "string"
    if (
        get_origin(annotation) is list
        and _column_kind(_without_none(get_args(annotation)[0]), where) == "string"
    ):
        return "string_list"
    kinds: dict[Any, ColumnKind] = {str: "string", bool: "bool", int: "int", float: "float"}
    if annotation in kinds:
        return kinds[annotation]
    raise TypeError(f"{where}: no Parquet column type for {annotation!r}; extend evalset/report/files.py")


NOT_IN_PARQUET = frozenset({"trial"})  # the file holds the report's cases: trial 0 only


def parquet_columns(
    model: type[BaseModel] = CaseRow, prefix: str = "", path: tuple[str, ...] = ()
) -> list[ParquetColumn]:
    """The Parquet columns of a row model, derived from its fields (nested models flattened).

    A field of a type with no column mapping raises, so a new row field never silently misses
    the file.
    """
    columns = []
    for name, info in model.model_fields.items():
        if model is CaseRow and name in NOT_IN_PARQUET:
            continue
        annotation = _without_none(info.annotation)
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            inner = prefix if name in UNPREFIXED_PARTS else f"{prefix}{name}_"
            columns += parquet_columns(annotation, inner, (*path, name))
        else:
            kind = _column_kind(annotation, f"{model.__name__}.{name}")
            columns.append(ParquetColumn(prefix + name, (*path, name), kind))
    return columns


PARQUET_COLUMNS = parquet_columns()


@functools.cache
def parquet_schema() -> pa.Schema:
    import pyarrow as arrow

    types_: dict[ColumnKind, pa.DataType] = {
        "string": arrow.string(),
        "bool": arrow.bool_(),
        "int": arrow.int64(),
        "float": arrow.float64(),
        "string_list": arrow.list_(arrow.string()),
    }
    schema: pa.Schema = arrow.schema([(c.name, types_[c.kind]) for c in PARQUET_COLUMNS])
    return schema


def flat_row(row: CaseRow) -> dict[str, Any]:
    """One Parquet record: the nested row flattened to snake_case columns."""
    record = {}
    for column in PARQUET_COLUMNS:
        value: Any = row
        for part in column.path:
            value = None if value is None else getattr(value, part)
        record[column.name] = value
    return record


def cases_parquet(rows: list[CaseRow]) -> bytes:
    """The rows as one Parquet table, built by pyarrow's JSON reader from one record a line.

    `pa.array` of Python values asks pandas whether they are a DataFrame, which imports pandas
    (0.45 s) in a process that has not: most of a fake run's report step. The C++ JSON reader,
    given the schema, builds the same columns and needs no pandas. (Importing pyarrow with numpy
    hidden, as before, avoided pandas too, but a process that later used pyarrow with pandas
    crashed: docs/decisions.md.) orjson writes a float NaN as null, a missing value here.
    """
    import pyarrow.json as pj
    import pyarrow.parquet as pq

    schema = parquet_schema()
    if rows:
        lines = b"".join(orjson.dumps(flat_row(row), option=orjson.OPT_APPEND_NEWLINE) for row in rows)
        table = pj.read_json(
            io.BytesIO(lines),
            # one block: a record never straddles two, whatever its length
            read_options=pj.ReadOptions(block_size=max(len(lines), 1 << 20)),
            parse_options=pj.ParseOptions(explicit_schema=schema, unexpected_field_behavior="error"),
        )
    else:
        table = schema.empty_table()
    buffer = io.BytesIO()
    pq.write_table(table, buffer)
    return buffer.getvalue()


def write_run_outputs(
    out_dir: Path, report: EvalReport, markdown: str, html: str | None = None
) -> dict[str, Path]:
    """Write report.json, report.md, cases.parquet and (when given) report.html, each atomically.

    Folders are made 0700, files 0600.
    """
    files: dict[str, str | bytes] = {
        REPORT_FILE: dump_report(report),
        MARKDOWN_FILE: markdown,
        PARQUET_FILE: cases_parquet(report.cases),
    }
    if html is not None:
        files[HTML_FILE] = html
    return {name: write_report_file(Path(out_dir), name, data) for name, data in files.items()}
