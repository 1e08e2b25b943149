"""Layer and log-hygiene rules, checked by reading the source (spec U-BND-1, U-BND-2)."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "graft_eval_pipeline"

# layer -> packages of ours it must never import (design §2: each imports only the layers above)
FORBIDDEN = {
    "card": (
        "graft_eval_pipeline.evalset",
        "graft_eval_pipeline.github",
        "graft_eval_pipeline.defs",
        "graft_eval_pipeline.cli",
        "dagster",
    ),
    "github": (
        "graft_eval_pipeline.evalset",
        "graft_eval_pipeline.defs",
        "graft_eval_pipeline.cli",
        "dagster",
    ),
    "evalset": ("graft_eval_pipeline.defs", "graft_eval_pipeline.cli", "dagster"),
}

# Output sinks: a call to one of these must not be handed case content.
SINK_NAMES = {
    "print",
    "echo",
    "secho",
    "progress",
    "info",
    "debug",
    "warning",
    "error",
    "exception",
    "critical",
    "log",
}
CONTENT_NAMES = {
    "title",
    "body",
    "patch",
    "goal",
    "behavior_changes",
    "key_behavior_changes",
    "risk_reason",
    "reason",
    "out_of_scope_edits",
}
# The human views: `show`, labelling and adjudication print case content on purpose (E24, E25).
CONTENT_ALLOWED = {"terminal.py", "label_session.py"}


def _imports(tree: ast.AST) -> list[str]:
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.append(node.module)
    return names


def _sources(layer: str) -> list[Path]:
    files = sorted((PACKAGE / layer).rglob("*.py"))
    assert files, f"no sources found for layer {layer}"
    return files


def test_U_BND_1_layers_import_only_the_layers_above_them() -> None:
    offences = []
    for layer, forbidden in FORBIDDEN.items():
        for path in _sources(layer):
            for name in _imports(ast.parse(path.read_text(encoding="utf-8"))):
                if any(name == f or name.startswith(f + ".") for f in forbidden):
                    offences.append(f"{path.relative_to(PACKAGE)} imports {name}")
    assert offences == []


def test_U_BND_1_detector_sees_a_forbidden_import() -> None:
    tree = ast.parse("from graft_eval_pipeline.defs.assets import x\nimport dagster\n")
    assert _imports(tree) == ["graft_eval_pipeline.defs.assets", "dagster"]


def _content_in_sink_calls(tree: ast.AST) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
        if name not in SINK_NAMES:
            continue
        for arg in [*node.args, *(kw.value for kw in node.keywords)]:
            for inner in ast.walk(arg):
                ident = (
                    inner.attr
                    if isinstance(inner, ast.Attribute)
                    else inner.id
                    if isinstance(inner, ast.Name)
                    else None
                )
                if ident in CONTENT_NAMES:
                    found.append((node.lineno, ident))
    return found


def test_U_BND_2_no_output_call_outside_the_human_views_mentions_case_content() -> None:
    offences = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name in CONTENT_ALLOWED:
            continue
        for line, ident in _content_in_sink_calls(ast.parse(path.read_text(encoding="utf-8"))):
            offences.append(f"{path.relative_to(PACKAGE)}:{line} prints {ident}")
    assert offences == []


def test_U_BND_2_detector_flags_a_logged_title() -> None:
    tree = ast.parse("click.echo(f'{case.inputs.pr.title}')\nlogger.info('n=%d', count)\n")
    assert _content_in_sink_calls(tree) == [(1, "title")]


def test_content_models_never_print_their_content() -> None:
    """A traceback or assertion message that shows a case or a card result carries no content."""
    from graft_eval_pipeline.card.floor import compute_risk_floor
    from graft_eval_pipeline.card.models import IssueInfo
    from graft_eval_pipeline.card.options import PrepareOptions
    from graft_eval_pipeline.card.prepare import prepare_card_inputs
    from graft_eval_pipeline.card.result import Card, OutOfScopeEdit
    from graft_eval_pipeline_tests.builders import make_case, make_file, make_inputs, make_label

    secret = "Rotate the ledger reconciliation window"
    case = make_case(
        inputs=make_inputs([make_file("src/ledger/secret.ts")], pr={"title": secret}),
        labels=[make_label(goal=secret)],
    )
    card = Card(
        goal=secret,
        behavior_changes=[secret],
        out_of_scope_edits=[OutOfScopeEdit(path="src/ledger/secret.ts", reason=secret)],
        risk_reason=secret,
    )
    for shown in (repr(case), str(case), repr(card), f"{card}", repr([case.inputs, card])):
        assert secret not in shown and "src/ledger/secret.ts" not in shown
    assert case.inputs.pr.title == secret  # the fields themselves are untouched

    # The parts of `CardInputs` on their own, the floor's `fired_by` and the prepared cut paths.
    path, old = "src/ledger/auth/secret.ts", "src/ledger/old.ts"
    patch = "@@ -1,1 +1,999 @@\n" + "\n".join([f"+// {secret}"] * 1_000)
    inputs = make_inputs(
        [make_file(path, previous_path=old, status="renamed", patch=patch)],
        pr={"title": secret, "body": secret},
        issue=IssueInfo(number=7, title=secret, body=secret),
    )
    prepared = prepare_card_inputs(inputs, PrepareOptions())
    assert prepared.cut_paths == {path} and prepared.floor.fired_by["auth_secrets"] == path
    floor = compute_risk_floor(inputs)
    assert floor.fired_by["auth_secrets"] == path
    parts = (inputs.pr, inputs.issue, inputs.files[0], inputs.files, floor, prepared, prepared.floor)
    for shown in [repr(part) for part in parts] + [str(part) for part in parts]:
        assert secret not in shown and "ledger" not in shown, shown
    assert "auth_secrets" in repr(floor)  # rule ids and the class are not content
    assert inputs.files[0].path == path and inputs.pr.body == secret
