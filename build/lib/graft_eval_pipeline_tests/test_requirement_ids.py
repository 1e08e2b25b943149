"""Requirement ids: never in what users read, always explained in docs/requirements.md.

Help texts, Dagster descriptions and the committed JSON Schemas are read by people who do not have
the specification or the design, so they must say what they mean without citing an id. Code
comments may cite one, and then docs/requirements.md must have a line for it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click
import pytest

from graft_eval_pipeline.cli import cli
from graft_eval_pipeline.definitions import defs

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "graft_eval_pipeline"
REQUIREMENTS = ROOT / "docs" / "requirements.md"
TESTS = Path(__file__).resolve().parent

# A citation of the spec or the design: E19, T13, spec 8.12, spec section 8, design §5, §6.4.
CITATION = re.compile(r"\b[ET]\d+\b|\bspec(?:ification)?\b|\bdesign (?:§|section)|§\s*\d")


# --- what users read ------------------------------------------------------------------------


def click_texts(command: click.Command, path: str = "graft-eval") -> Iterator[tuple[str, str]]:
    """(where, text) for every help text of a command and, for a group, of its subcommands."""
    texts = {"help": command.help, "short_help": command.short_help, "epilog": command.epilog}
    for name, text in texts.items():
        if text:
            yield f"{path} {name}", text
    for param in command.params:
        help_text = getattr(param, "help", None)
        if help_text:
            yield f"{path} {param.name}", help_text
    if isinstance(command, click.Group):
        for name, sub in command.commands.items():
            yield from click_texts(sub, f"{path} {name}")


def config_texts(config_type: Any, where: str, seen: set[int]) -> Iterator[tuple[str, str]]:
    """Descriptions of a Dagster config type and of every field below it."""
    if config_type is None or id(config_type) in seen:
        return
    seen.add(id(config_type))
    if getattr(config_type, "description", None):
        yield where, config_type.description
    for name, field in (getattr(config_type, "fields", None) or {}).items():
        if field.description:
            yield f"{where}.{name}", field.description
        yield from config_texts(field.config_type, f"{where}.{name}", seen)
    yield from config_texts(getattr(config_type, "inner_type", None), where, seen)


def dagster_texts() -> Iterator[tuple[str, str]]:
    """Every description the Dagster UI shows for the code location."""
    repo = defs.get_repository_def()
    seen: set[int] = set()
    for assets_def in repo.asset_graph.assets_defs:
        for key, text in assets_def.descriptions_by_key.items():
            if text:
                yield f"asset {key.to_user_string()}", text
        for spec in assets_def.check_specs:
            if spec.description:
                yield f"check {spec.name}", spec.description
        if not assets_def.is_executable:  # an external asset (case files written outside Dagster)
            continue
        node = assets_def.node_def
        config_field = getattr(node, "config_field", None)
        if config_field is not None:
            if config_field.description:
                yield f"config of {node.name}", config_field.description
            yield from config_texts(config_field.config_type, f"config of {node.name}", seen)
    for job in repo.get_all_jobs():
        if job.description:
            yield f"job {job.name}", job.description
    for sensor in repo.sensor_defs:
        if sensor.description:
            yield f"sensor {sensor.name}", sensor.description
    for schedule in repo.schedule_defs:
        if schedule.description:
            yield f"schedule {schedule.name}", schedule.description
    for name, resource in repo.get_top_level_resources().items():
        if resource.description:
            yield f"resource {name}", resource.description
        yield from config_texts(resource.config_schema.config_type, f"resource {name}", seen)


def schema_texts() -> Iterator[tuple[str, str]]:
    """Every description in the committed JSON Schemas."""

    def walk(node: object, where: str) -> Iterator[tuple[str, str]]:
        if isinstance(node, dict):
            for key, value in node.items():
                if key == "description" and isinstance(value, str):
                    yield where, value
                else:
                    yield from walk(value, f"{where}/{key}")
        elif isinstance(node, list):
            for i, item in enumerate(node):
                yield from walk(item, f"{where}/{i}")

    for path in sorted((ROOT / "eval" / "schema").glob("*.json")):
        yield from walk(json.loads(path.read_text(encoding="utf-8")), path.name)


def citing(texts: Iterator[tuple[str, str]]) -> list[str]:
    return [f"{where}: {text!r}" for where, text in texts if CITATION.search(text)]


@pytest.mark.parametrize(
    "text",
    [
        "Label cases blind (E25).",
        "Settle label sets (T10)",
        "Cohen's kappa (spec 8.1)",
        "Every metric of spec section 8",
        "the key is the set id (design §5)",
        "design section 4",
        "the patterns of §6.4",
    ],
)
def test_the_citation_pattern_sees_every_form_of_id(text: str) -> None:
    assert CITATION.search(text)


@pytest.mark.parametrize(
    "text",
    ["Share of cases, e.g. 0.2.", "Live: start no case past it.", "asset_spec", "Stage 1: merged PRs"],
)
def test_the_citation_pattern_leaves_plain_help_alone(text: str) -> None:
    assert not CITATION.search(text)


def test_click_help_texts_cite_no_requirement_id() -> None:
    texts = list(click_texts(cli))
    assert {"graft-eval show help", "graft-eval run max_cost_usd"} <= {where for where, _ in texts}
    assert citing(iter(texts)) == []


def test_dagster_descriptions_cite_no_requirement_id() -> None:
    texts = list(dagster_texts())
    wheres = {where for where, _ in texts}
    assert {"asset eval_metrics", "resource github", "config of harness_run.max_cost_usd"} <= wheres
    assert citing(iter(texts)) == []


def test_committed_json_schemas_cite_no_requirement_id() -> None:
    texts = list(schema_texts())
    assert len(texts) > 10
    assert citing(iter(texts)) == []


# --- ids the code and docs cite are explained ----------------------------------------------

SECTION = r"(\d+(?:\.\d+)?)"
SPEC_SECTION = re.compile(rf"\bspec (?:section |§\s*)?{SECTION}")
DESIGN_SECTION = re.compile(rf"\bdesign (?:section |§\s*)?{SECTION}")
DECISION = re.compile(r"\b([ET])(\d+)(?:\s*[-–/]\s*[ET]?(\d+))?\b")
FLOOR_RULE = re.compile(r"\bR(\d+)\b(?:\s*(?:-|–|\.\.)\s*R(\d+)\b)?")
TEST_ID = re.compile(r"\b[UEI]-[A-Z]+-\d+\b")
ROW_KEY = re.compile(r"^\| ([^|]+?) \|", re.MULTILINE)


def requirement_keys(text: str) -> set[str]:
    """First cells of the tables in docs/requirements.md: E19, T13, 8.12, 8.1–8.11, §5, 3.2, R14."""
    keys: set[str] = set()
    for cell in ROW_KEY.findall(text):
        keys.update(re.findall(r"[ETR]\d+|§\d+|[UEI]-[A-Z]+-\d+|\d+(?:\.\d+)?", cell))
    return keys


def cited_ids(text: str) -> set[str]:
    """The spec and design ids a text cites, ranges expanded (E4-E9, R1..R15)."""
    ids: set[str] = set()
    for line in text.splitlines():
        if "noqa" in line:
            line = line.split("noqa", 1)[0]
        for kind, first, last in DECISION.findall(line):
            ids.update(f"{kind}{n}" for n in range(int(first), int(last or first) + 1))
        for first, last in FLOOR_RULE.findall(line):
            ids.update(f"R{n}" for n in range(int(first), int(last or first) + 1))
        ids.update(SPEC_SECTION.findall(line))
        ids.update(s if "." in s else f"§{s}" for s in DESIGN_SECTION.findall(line))
        ids.update(TEST_ID.findall(line))
    return ids


def cited_sources() -> list[Path]:
    docs = [p for p in sorted((ROOT / "docs").glob("*.md")) if p != REQUIREMENTS]
    readmes = [ROOT / "README.md", *sorted((ROOT / "eval").rglob("README.md"))]
    return [*sorted(PACKAGE.rglob("*.py")), *readmes, *docs]


def test_cited_ids_parse_ranges_and_forms() -> None:
    text = "(spec E4-E9, E24) E22/E23 (spec section 8) spec 8.12 design §5 design 3.6 R1..R15 # noqa: E501"
    assert cited_ids(text) == {
        *(f"E{n}" for n in range(4, 10)),
        "E24",
        "E22",
        "E23",
        "8",
        "8.12",
        "§5",
        "3.6",
        *(f"R{n}" for n in range(1, 16)),
    }


def test_every_id_cited_in_the_code_and_docs_has_a_line_in_requirements_md() -> None:
    keys = requirement_keys(REQUIREMENTS.read_text(encoding="utf-8"))
    assert {"E1", "E25", "T17", "8.12", "§5", "R15", "U-STORE-1"} <= keys
    missing = {
        f"{path.relative_to(ROOT)}: {cited}"
        for path in cited_sources()
        for cited in cited_ids(path.read_text(encoding="utf-8"))
        if cited not in keys and not cited.startswith("I-")  # T17's integration ids: prose only
    }
    assert sorted(missing) == []


def test_every_spec_test_id_in_a_test_name_has_a_line_in_requirements_md() -> None:
    keys = requirement_keys(REQUIREMENTS.read_text(encoding="utf-8"))
    named = {
        match.group(1).replace("_", "-")
        for path in TESTS.rglob("test_*.py")
        for match in re.finditer(r"def (?:test_)([UE]_[A-Z]+_\d+)", path.read_text(encoding="utf-8"))
    }
    assert len(named) > 100
    assert sorted(named - keys) == []
