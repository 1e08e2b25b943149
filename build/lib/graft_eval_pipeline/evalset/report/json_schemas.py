"""Generate the committed JSON Schemas (draft 2020-12) from the pydantic models (E3)."""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel

from graft_eval_pipeline.evalset.scoring import REPORT_RULES_NOT_IN_SCHEMA, REPORT_SCHEMA_VERSION, EvalReport
from graft_eval_pipeline.evalset.sets import CASE_RULES_NOT_IN_SCHEMA, EvalCase

DRAFT = "https://json-schema.org/draft/2020-12/schema"


def _schema(model: type[BaseModel], schema_id: str, title: str, rules: list[str]) -> dict[str, Any]:
    body = model.model_json_schema(by_alias=True, mode="validation")
    description = title
    if rules:
        description += " Rules not expressed in this schema: " + "; ".join(rules) + "."
    return {
        "$schema": DRAFT,
        "$id": schema_id,
        "description": description,
        **{k: v for k, v in body.items() if k != "description"},
    }


def render_schemas() -> dict[str, str]:
    """File name -> exact committed text (two-space JSON plus a trailing newline)."""
    schemas = {
        "eval-case.v1.schema.json": _schema(
            EvalCase,
            "https://graft.invalid/schema/eval-case.v1.json",
            "One Graft evaluation case (schemaVersion 1).",
            CASE_RULES_NOT_IN_SCHEMA,
        ),
        f"eval-report.v{REPORT_SCHEMA_VERSION}.schema.json": _schema(
            EvalReport,
            f"https://graft.invalid/schema/eval-report.v{REPORT_SCHEMA_VERSION}.json",
            f"One Graft evaluation report (schemaVersion {REPORT_SCHEMA_VERSION}).",
            REPORT_RULES_NOT_IN_SCHEMA,
        ),
    }
    return {name: json.dumps(s, indent=2, ensure_ascii=False) + "\n" for name, s in schemas.items()}
