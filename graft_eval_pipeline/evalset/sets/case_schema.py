"""The versioned eval-case format (spec 6.1) and set metadata (spec 6.2).

pydantic is the source of truth; `eval/schema/*.json` is generated from these models.
"""

from __future__ import annotations

import hashlib
import json
import re
import secrets
from collections.abc import Iterable
from datetime import date, datetime
from typing import Annotated, Any, Literal, NamedTuple

import orjson
from pydantic import (
    BeforeValidator,
    Field,
    SerializerFunctionWrapHandler,
    StringConstraints,
    model_serializer,
    model_validator,
)

from graft_eval_pipeline.card import CamelModel, CardInputs, ContentModel, FakeScript, RiskClass
from graft_eval_pipeline.evalset.sets.untrusted import (
    UntrustedInputError,
    parse_json,
)

CASE_SCHEMA_VERSION = 1
DOUBLE_LABEL_TAG = "double-label"
SYNTHETIC_SET_ID = "synthetic"
EXPORT_TOOL = "graft-eval-export/1"

CASE_ID_PATTERN = r"^[a-z0-9][a-z0-9._-]{0,99}$"
SET_ID_PATTERN = r"^[a-z0-9][a-z0-9-]{0,39}$"
HANDLE_PATTERN = r"^[a-z0-9][a-z0-9._-]{0,39}$"
TAG_PATTERN = r"^[a-z0-9-]{1,40}$"
SHA_PATTERN = r"^[0-9a-f]{40}$"

DATE_PATTERN = r"^\d{4}-\d{2}-\d{2}$"


def _iso_date(value: Any) -> Any:
    """Spec 6.1 wants YYYY-MM-DD; pydantic alone would also take timestamps and datetimes."""
    if isinstance(value, date) or (isinstance(value, str) and re.fullmatch(DATE_PATTERN, value)):
        return value
    raise ValueError("must be a date in the form YYYY-MM-DD")


def _iso_datetime(value: Any) -> Any:
    """ISO 8601 text only; pydantic alone would read a bare number as a Unix timestamp."""
    if isinstance(value, datetime | str):
        return value
    raise ValueError("must be an ISO 8601 date-time string")


IsoDate = Annotated[date, BeforeValidator(_iso_date)]
IsoDateTime = Annotated[datetime, BeforeValidator(_iso_datetime)]
Handle = Annotated[str, StringConstraints(pattern=HANDLE_PATTERN)]
Tag = Annotated[str, StringConstraints(pattern=TAG_PATTERN)]
ShortText = Annotated[str, StringConstraints(max_length=300)]
Confidence = Literal["high", "medium", "low"]
MAX_KEY_CHANGES = 10
MAX_NOTES_CHARS = 2000


class LabelAnswers(ContentModel):
    """A labeler's answers for one case: one entry of a `label --apply` file (spec 7).

    The limits of a label set live here; `LabelSet` adds who answered, when and by which guide.
    """

    risk: RiskClass
    out_of_scope: list[str]
    goal: ShortText
    key_behavior_changes: list[ShortText] = Field(max_length=MAX_KEY_CHANGES)
    should_flag: bool
    confidence: Confidence
    notes: Annotated[str, StringConstraints(max_length=MAX_NOTES_CHARS)]


class _LabelStamp(ContentModel):
    """Who answered, when, under which guide version (the part of a label set not asked for)."""

    labeler: Handle
    labeled_at: IsoDateTime
    guide_version: Annotated[str, StringConstraints(pattern=r"^lg-\d+$")]


# pydantic orders fields by the reversed MRO, so with `_LabelStamp` listed after `LabelAnswers`
# its fields come first: labeler, labeledAt, guideVersion, risk, ... as in spec 6.1. That keeps
# the committed JSON Schema and the on-disk key order of every case unchanged.
class LabelSet(LabelAnswers, _LabelStamp):
    """One labeler's judgement of one case; only risk, shouldFlag and outOfScope are scored."""

    @model_validator(mode="after")
    def _sorted_unique_oos(self) -> LabelSet:
        if self.out_of_scope != sorted(set(self.out_of_scope)):
            raise ValueError("outOfScope must be sorted and unique")
        return self

    def scored(self) -> tuple[str, bool, tuple[str, ...]]:
        """The fields that decide agreement; free text is not comparable."""
        return (self.risk, self.should_flag, tuple(sorted(self.out_of_scope)))


class Redaction(CamelModel):
    kind: str
    count: int = Field(ge=0)


class SyntheticSource(CamelModel):
    kind: Literal["synthetic"]
    author: str
    created_at: IsoDate


class CaseStratum(CamelModel):
    """Where an exported case was drawn.

    Its stratum of the export sample (evalset/sets/sample.py), the stratum's population of candidate
    PRs and how many of them the sample took. `frame` names the export's population (repository,
    merge dates of the candidates, seed), so cases of two exports are never pooled into one stratum.
    Weight = population / sampled.
    """

    frame: str = Field(min_length=1, max_length=200)
    key: str = Field(min_length=1, max_length=40)
    population: int = Field(ge=1)
    sampled: int = Field(ge=1)

    @model_validator(mode="after")
    def _sampled_within_population(self) -> CaseStratum:
        if self.sampled > self.population:
            raise ValueError("stratum.sampled must not exceed stratum.population")
        return self


class PilotSource(CamelModel):
    kind: Literal["pilot"]
    set_id: Annotated[str, StringConstraints(pattern=SET_ID_PATTERN)]
    repository: str
    pr_number: int = Field(ge=1)
    head_sha: Annotated[str, StringConstraints(pattern=SHA_PATTERN)]
    base_sha: Annotated[str, StringConstraints(pattern=SHA_PATTERN)]
    merged_at: IsoDateTime
    exported_at: IsoDateTime
    export_tool: Literal["graft-eval-export/1"]
    author_kind: Literal["agent", "human"]
    author_kind_reason: Literal["trailer", "coauthor", "login", "bot", "none"]
    agent: str | None
    model: str | None
    redactions: list[Redaction]
    stratum: CaseStratum | None = None

    @model_serializer(mode="wrap")
    def _omit_missing_stratum(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """`stratum` is additive: a case exported before it existed keeps its exact bytes."""
        data: dict[str, Any] = handler(self)
        if self.stratum is None:
            data.pop("stratum", None)
        return data


Source = Annotated[SyntheticSource | PilotSource, Field(discriminator="kind")]


class FloorConfig(CamelModel):
    extra_sensitive_globs: list[str] = Field(default_factory=list, max_length=100)


class EvalCase(CamelModel):
    schema_version: Literal[1]
    id: Annotated[str, StringConstraints(pattern=CASE_ID_PATTERN)]
    source: Source
    tags: list[Tag] = Field(max_length=20, json_schema_extra={"uniqueItems": True})
    floor_config: FloorConfig
    inputs: CardInputs
    labels: list[LabelSet] = Field(max_length=5)
    adjudicated: LabelSet | None = None
    fake_llm: FakeScript | None = None

    @model_validator(mode="after")
    def _cross_field_rules(self) -> EvalCase:
        if len(set(self.tags)) != len(self.tags):
            raise ValueError("tags must be unique")
        labelers = [lbl.labeler for lbl in self.labels]
        if len(set(labelers)) != len(labelers):
            raise ValueError("labels must have unique labelers")
        paths = {f.path for f in self.inputs.files}
        for lbl in [*self.labels, *([self.adjudicated] if self.adjudicated else [])]:
            missing = [p for p in lbl.out_of_scope if p not in paths]
            if missing:
                raise ValueError(
                    f"outOfScope of labeler {lbl.labeler} names {len(missing)} path(s) "
                    "that are not in inputs.files"
                )
        src = self.source
        if isinstance(src, SyntheticSource):
            if not self.id.startswith("syn-"):
                raise ValueError("a synthetic case id must start with 'syn-'")
        else:
            if not self.id.startswith(f"{src.set_id}--"):
                raise ValueError(f"a pilot case id must start with '{src.set_id}--'")
            if self.fake_llm is not None:
                raise ValueError("fakeLlm must be null in a pilot case")
            if self.inputs.repository_full_name != src.repository:
                raise ValueError("inputs.repositoryFullName must equal source.repository")
            if self.inputs.pr.number != src.pr_number:
                raise ValueError("inputs.pr.number must equal source.prNumber")
        return self


class SetMeta(CamelModel):
    """set.json: plaintext in every set; keyId detects a wrong key before any decryption."""

    schema_version: Literal[1]
    set_id: Annotated[str, StringConstraints(pattern=SET_ID_PATTERN)]
    kind: Literal["synthetic", "pilot"]
    description: str = ""
    encrypted: bool
    key_id: Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{8}$")] | None
    consent_ref: str | None
    default_floor_config: FloorConfig = Field(default_factory=FloorConfig)
    created_at: IsoDateTime

    @model_validator(mode="after")
    def _kind_rules(self) -> SetMeta:
        if self.kind == "synthetic":
            if self.encrypted or self.key_id is not None or self.consent_ref is not None:
                raise ValueError("a synthetic set has encrypted: false, keyId: null, consentRef: null")
        else:
            if self.set_id == SYNTHETIC_SET_ID:
                raise ValueError("setId 'synthetic' is reserved for the committed set")
            if not self.encrypted or self.key_id is None:
                raise ValueError("a pilot set has encrypted: true and a keyId")
            if not (self.consent_ref or "").strip():
                raise ValueError("a pilot set needs a non-empty consentRef (the pilot agreement reference)")
        return self


# Rules JSON Schema cannot express; listed in the generated schema's description (T2).
CASE_RULES_NOT_IN_SCHEMA = [
    "labelers are unique",
    "outOfScope paths are sorted, unique and each in inputs.files[].path",
    "synthetic ids start with 'syn-'; pilot ids start with '<source.setId>--'",
    "pilot: fakeLlm is null, inputs.repositoryFullName == source.repository, "
    "inputs.pr.number == source.prNumber",
    "the id equals the file name without its extension",
]


def gold(case: EvalCase) -> LabelSet | None:
    """E17: adjudicated wins; else the first set when all sets agree on the scored fields."""
    if case.adjudicated is not None:
        return case.adjudicated
    if not case.labels:
        return None
    first = case.labels[0].scored()
    return case.labels[0] if all(lbl.scored() == first for lbl in case.labels) else None


def needs_adjudication(case: EvalCase) -> bool:
    return case.adjudicated is None and len(case.labels) > 1 and gold(case) is None


class LabelCounts(NamedTuple):
    """How far labeling has come; `labeled` means a label set or an adjudication."""

    cases: int
    labeled: int
    gold: int
    needs_adjudication: int

    @property
    def unlabeled(self) -> int:
        return self.cases - self.labeled


def label_counts(cases: Iterable[EvalCase]) -> LabelCounts:
    tally = CaseTally()
    for case in cases:
        tally.add(case)
    return tally.counts()


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _canonical(value: Any) -> str:
    """json.dumps with these options, without building an encoder per call (two a case)."""
    return _CANONICAL.encode(value)


def case_hash(case: EvalCase) -> str:
    """8.13: what the engine sees (id, inputs, floorConfig); labels and tags do not count.

    SHA-256 of the canonical JSON (sorted keys, no spaces, UTF-8). orjson writes it with sorted
    keys: the same bytes as `json` with those options (the same escapes; no model of a case's
    inputs or floor config holds a float, whose text the two would write differently), four
    times faster on long patches. What orjson refuses (a lone surrogate, an int beyond 64 bits)
    takes the `json` path.
    """
    document = [case.id, case.inputs.to_json_dict(), case.floor_config.to_json_dict()]
    try:
        return _orjson_sha256(document)
    except orjson.JSONEncodeError:
        return _sha256(_canonical(document))


_PIECE = 1 << 20
"""A patch longer than this is escaped into the hash a piece at a time (`_orjson_sha256`)."""
_MARK = f"graft-eval-patch-{secrets.token_hex(16)}-"


def _orjson_sha256(document: list[Any]) -> str:
    """SHA-256 of `orjson.dumps(document, option=OPT_SORT_KEYS)`, never holding a long patch's JSON whole.

    Each patch longer than `_PIECE` is dumped as a mark (a string no case holds but by a 1 in
    2^128 chance, and then found more than once: the whole document is dumped instead), and the
    hash takes the dump up to the mark, then the patch's JSON string a piece at a time: orjson
    escapes each character on its own, so the pieces' escapes joined are the whole string's. A
    case with a 170 MB patch held its JSON (170 MB more) only for its hash.
    """
    inputs = document[1]
    long = [(n, f["patch"]) for n, f in enumerate(inputs["files"]) if len(f["patch"] or "") > _PIECE]
    if not long:
        return hashlib.sha256(orjson.dumps(document, option=orjson.OPT_SORT_KEYS)).hexdigest()
    files = list(inputs["files"])
    for n, _ in long:
        files[n] = {**files[n], "patch": f"{_MARK}{n}"}
    marked = [document[0], {**inputs, "files": files}, document[2]]
    skeleton = orjson.dumps(marked, option=orjson.OPT_SORT_KEYS)
    marks = [orjson.dumps(f"{_MARK}{n}") for n, _ in long]
    if any(skeleton.count(mark) != 1 for mark in marks):
        return hashlib.sha256(orjson.dumps(document, option=orjson.OPT_SORT_KEYS)).hexdigest()
    digest = hashlib.sha256()
    at = 0
    for mark, (_, patch) in zip(marks, long, strict=True):  # in file order, as the dump holds them
        found = skeleton.index(mark)
        digest.update(skeleton[at:found])
        digest.update(b'"')
        for start in range(0, len(patch), _PIECE):
            digest.update(orjson.dumps(patch[start : start + _PIECE])[1:-1])
        digest.update(b'"')
        at = found + len(mark)
    digest.update(skeleton[at:])
    return digest.hexdigest()


def gold_digest(case: EvalCase) -> str:
    g = gold(case)
    if g is None:
        return _sha256("none")
    return _sha256(
        _canonical({"risk": g.risk, "shouldFlag": g.should_flag, "outOfScope": sorted(g.out_of_scope)})
    )


def case_set_hash(cases: Iterable[EvalCase]) -> str:
    tally = CaseTally()
    for case in cases:
        tally.add(case)
    return tally.case_set_hash()


class CaseTally:
    """`case_set_hash` and `label_counts` of cases seen one at a time.

    A streamed run adds each case as it goes and keeps only its two digests (about 130 bytes), never
    the case.
    """

    def __init__(self) -> None:
        self._digests: list[str] = []
        self._labeled = self._gold = self._needs_adjudication = 0

    def add(self, case: EvalCase) -> None:
        self._digests.append(f"{case_hash(case)}:{gold_digest(case)}")
        self._labeled += bool(case.labels) or case.adjudicated is not None
        self._gold += gold(case) is not None
        self._needs_adjudication += needs_adjudication(case)

    def case_set_hash(self) -> str:
        return _sha256(_canonical(sorted(self._digests)))

    def counts(self) -> LabelCounts:
        return LabelCounts(
            cases=len(self._digests),
            labeled=self._labeled,
            gold=self._gold,
            needs_adjudication=self._needs_adjudication,
        )


class CaseFormatError(UntrustedInputError):
    """One line naming the file, the field path and the broken rule; never the field's value."""


def _free_form(data: Any) -> Any:
    """The only free-form JSON of a case, the scripted replies; the schema bounds the rest."""
    return data.get("fakeLlm")


def parse_case(text: str | bytes, where: str) -> EvalCase:
    """Parse and validate one case document (text, or its UTF-8 bytes); `where` names the file.

    Through the one reader of untrusted files (`untrusted.parse_json`): orjson parses (twice as
    fast as pydantic's own parser on long escaped patches, which is most of a case) and pydantic
    validates the objects: a fifth faster than `model_validate_json`, with the same verdict and
    values on every document both read (a test puts 23 kinds of value in every field of five
    synthetic cases to compare them). Only a scripted reply is free-form JSON, so the fast path
    measures the depth of `fakeLlm` alone.
    """
    try:
        return parse_json(text, where, EvalCase, depth_of=_free_form)
    except UntrustedInputError as err:
        raise CaseFormatError(str(err)) from None


def dump_case(case: EvalCase) -> str:
    """Stable on-disk form of a case.

    camelCase, two-space indent, ASCII escapes (so zero-width and bidi characters stay visible in a
    diff), trailing newline.
    """
    return json.dumps(case.to_json_dict(), indent=2) + "\n"
