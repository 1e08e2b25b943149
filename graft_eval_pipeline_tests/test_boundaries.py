"""Layer and log-hygiene rules, checked by reading the source (spec U-BND-1, U-BND-2)."""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

import pytest

from graft_eval_pipeline.heavy import HEAVY_LIBRARIES, HEAVY_MODULES

PACKAGE = Path(__file__).resolve().parent.parent / "graft_eval_pipeline"
ROOT = PACKAGE.name

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
    # A leaf: the secret rules are pure text functions that import nothing else of ours.
    "secrets": (
        "graft_eval_pipeline.evalset",
        "graft_eval_pipeline.card",
        "graft_eval_pipeline.github",
        "graft_eval_pipeline.defs",
        "graft_eval_pipeline.cli",
        "graft_eval_pipeline.lazy",
        "dagster",
    ),
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
# The human views: `show`, labeling and adjudication print case content on purpose (E24, E25).
CONTENT_ALLOWED = {"evalset/sets/terminal.py", "evalset/labeling/session.py"}

# evalset/ stage packages -> the stages each may import (through their public __init__).
# sets <- scoring <- run, compare <- report, labeling (kappa); sets <- export. evaluate.py composes
# them all.
STAGES = {
    "sets": set(),
    "export": {"sets"},
    "labeling": {"sets", "scoring"},
    "scoring": {"sets"},
    "run": {"sets", "scoring"},
    "compare": {"sets", "scoring"},
    "report": {"sets", "scoring", "compare"},
}
EVALSET = "graft_eval_pipeline.evalset"

# One xdist worker runs them all, so the package's sources are parsed once (`_tree`).
pytestmark = pytest.mark.xdist_group("sources")


@cache
def _tree(path: Path) -> ast.Module:
    """Each source parsed once for all the rules below (the suite's default lane stays short)."""
    return ast.parse(path.read_text(encoding="utf-8"))


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
            for name in _imports(_tree(path)):
                if any(name == f or name.startswith(f + ".") for f in forbidden):
                    offences.append(f"{path.relative_to(PACKAGE)} imports {name}")
    assert offences == []


def _evalset_imports(tree: ast.AST) -> list[tuple[str, list[str]]]:
    """(module, imported names) for every `from graft_eval_pipeline.evalset... import ...`."""
    return [
        (node.module, [alias.name for alias in node.names])
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith(EVALSET)
    ] + [
        (alias.name, [])
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
        if alias.name.startswith(EVALSET)
    ]


def _stage_of(path: Path) -> str | None:
    parts = path.relative_to(PACKAGE).parts
    return parts[1] if parts[0] == "evalset" and len(parts) > 2 else None


def _stage_offences(rel: str, own: str | None, imports: list[tuple[str, list[str]]]) -> list[str]:
    offences = []
    for module, names in imports:
        parts = module.split(".")
        stage = parts[2] if len(parts) > 2 else None
        if stage == own:
            continue
        if stage == "evaluate":
            if own is not None:
                offences.append(f"{rel}: stage {own} imports evaluate (only cli/ and defs/ may)")
        elif stage not in STAGES:
            offences.append(f"{rel} imports {module}")
        elif own is not None and stage not in STAGES[own]:
            offences.append(f"{rel}: stage {own} imports stage {stage}")
        elif len(parts) != 3:
            if not heavy(module):  # a heavy module is never in a facade: imported by its path
                offences.append(f"{rel} imports {module} (use the package {EVALSET}.{stage})")
        else:
            public = _public_names(stage)
            offences += [
                f"{rel} imports {n} from {stage}, not in its __all__" for n in names if n not in public
            ]
    return offences


def test_stages_import_only_the_stages_below_them_and_only_through_their_public_surface() -> None:
    """A stage imports its own modules directly and other stages only by their `__all__`.

    A stage imports its own modules directly and other stages only by their package's `__all__`, or
    a heavy module (graft_eval_pipeline/heavy.py) by its path; anything outside evalset/ (defs/,
    cli/) and evaluate.py the same way.
    """
    assert set(STAGES) == {p.name for p in (PACKAGE / "evalset").iterdir() if (p / "__init__.py").is_file()}
    offences = []
    for path in sorted(PACKAGE.rglob("*.py")):
        imports = _evalset_imports(_tree(path))
        offences += _stage_offences(path.relative_to(PACKAGE).as_posix(), _stage_of(path), imports)
    assert offences == []


def test_stage_detector_sees_an_upward_import_a_private_module_and_a_private_name() -> None:
    tree = ast.parse(
        "from graft_eval_pipeline.evalset.report.publish import build_report\n"
        "from graft_eval_pipeline.evalset.sets.store import CaseSet\n"
        "from graft_eval_pipeline.evalset.sets import _private\n"
        "from graft_eval_pipeline.evalset.scoring.rows import build_row\n"
    )
    assert _stage_offences("evalset/run/x.py", "run", _evalset_imports(tree)) == [
        "evalset/run/x.py: stage run imports stage report",
        "evalset/run/x.py imports graft_eval_pipeline.evalset.sets.store (use the package "
        "graft_eval_pipeline.evalset.sets)",
        "evalset/run/x.py imports _private from sets, not in its __all__",
        "evalset/run/x.py imports graft_eval_pipeline.evalset.scoring.rows (use the package "
        "graft_eval_pipeline.evalset.scoring)",
    ]


def _public_names(stage: str) -> set[str]:
    return _all_of(PACKAGE / "evalset" / stage / "__init__.py")


def _all_of(init: Path) -> set[str]:
    tree = _tree(init)
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "__all__" for t in node.targets):
            return set(ast.literal_eval(node.value))
    raise AssertionError(f"{init.relative_to(PACKAGE)} has no __all__")


def test_each_stage_exports_exactly_what_the_others_use() -> None:
    used: dict[str, set[str]] = {stage: set() for stage in STAGES}
    for path in sorted(PACKAGE.rglob("*.py")):
        for module, names in _evalset_imports(_tree(path)):
            parts = module.split(".")
            if len(parts) == 3 and parts[2] in STAGES and _stage_of(path) != parts[2]:
                used[parts[2]].update(names)
    assert {stage: _public_names(stage) for stage in STAGES} == used


SECRETS = "graft_eval_pipeline.secrets"


def _secrets_imports(tree: ast.AST) -> list[tuple[str, list[str]]]:
    """(module, imported names) for every import of the secrets package or one of its modules."""
    found: list[tuple[str, list[str]]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module == SECRETS or node.module.startswith(SECRETS + "."):
                found.append((node.module, [alias.name for alias in node.names]))
        elif isinstance(node, ast.Import):
            found += [
                (a.name, []) for a in node.names if a.name == SECRETS or a.name.startswith(SECRETS + ".")
            ]
    return found


def _package_all(init: Path) -> set[str]:
    for node in _tree(init).body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "__all__" for t in node.targets):
            return set(ast.literal_eval(node.value))
    raise AssertionError(f"{init} has no __all__")


def _secrets_offences(rel: str, imports: list[tuple[str, list[str]]], public: set[str]) -> list[str]:
    offences = []
    for module, names in imports:
        if module != SECRETS:
            offences.append(f"{rel} imports {module} (use the package {SECRETS})")
        offences += [f"{rel} imports {n} from secrets, not in its __all__" for n in names if n not in public]
    return offences


def test_the_secrets_package_is_used_only_through_its_public_surface_which_is_what_others_use() -> None:
    """The secrets package is used only through its `__all__`, which holds exactly the names used.

    Export, rescan and the live pre-send check import `graft_eval_pipeline.secrets` and the names of
    its `__all__`, never a module inside it; `__all__` holds exactly the names they use.
    """
    public = _package_all(PACKAGE / "secrets" / "__init__.py")
    offences: list[str] = []
    used: set[str] = set()
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE)
        if rel.parts[0] == "secrets":
            continue
        imports = _secrets_imports(_tree(path))
        offences += _secrets_offences(rel.as_posix(), imports, public)
        used.update(name for _, names in imports for name in names)
    assert offences == []
    assert used == public


def test_secrets_detector_sees_a_private_module_and_a_private_name() -> None:
    tree = ast.parse(
        "from graft_eval_pipeline.secrets.scan import scan\n"
        "from graft_eval_pipeline.secrets import _x, secret_kinds\n"
    )
    assert _secrets_offences("evalset/run/x.py", _secrets_imports(tree), {"secret_kinds"}) == [
        f"evalset/run/x.py imports {SECRETS}.scan (use the package {SECRETS})",
        "evalset/run/x.py imports scan from secrets, not in its __all__",
        "evalset/run/x.py imports _x from secrets, not in its __all__",
    ]


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
        if path.relative_to(PACKAGE).as_posix() in CONTENT_ALLOWED:
            continue
        for line, ident in _content_in_sink_calls(_tree(path)):
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


# --- start-up: heavy modules are declared in graft_eval_pipeline/heavy.py ------------------------


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(path): path for path in PACKAGE.rglob("*.py")}


def _top_level_imports(tree: ast.Module) -> list[str]:
    """What importing the module imports.

    Module-level statements (into `if` and `try` blocks, not under `if TYPE_CHECKING:`), never a
    function body. `from a import b` yields `a` and `a.b` (b may be a module).
    """
    found: list[str] = []

    def visit(body: list[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, ast.Import):
                found.extend(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                found.append(node.module)
                found.extend(
                    f"{node.module}.{a.name}" for a in node.names if f"{node.module}.{a.name}" in MODULES
                )
            elif isinstance(node, ast.If):
                if not (isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"):
                    visit(node.body)
                visit(node.orelse)
            elif isinstance(node, ast.Try):
                visit(node.body)
                for handler in node.handlers:
                    visit(handler.body)
                visit(node.orelse)
                visit(node.finalbody)

    visit(tree.body)
    return found


def _parents(module: str) -> list[str]:
    """Importing `a.b.c` runs `a/__init__` and `a.b/__init__` first."""
    parts = module.split(".")
    return [".".join(parts[:n]) for n in range(1, len(parts))]


@cache
def _loads(module: str) -> frozenset[str]:
    """Every module importing `module` loads.

    Ours followed through their module-level imports, third-party ones by their top-level name.
    """
    seen: set[str] = set()
    todo = [module]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        if name.split(".")[0] != ROOT:
            seen.discard(name)
            seen.add(name.split(".")[0])
            continue
        todo.extend(p for p in _parents(name) if p in MODULES)
        if name in MODULES:
            todo.extend(_top_level_imports(_tree(MODULES[name])))
    return frozenset(seen)


def _is_declared(name: str) -> bool:
    return name in HEAVY_LIBRARIES or any(name == m or name.startswith(m + ".") for m in HEAVY_MODULES)


def heavy(module: str) -> list[str]:
    """The declared heavy modules and libraries that importing `module` loads (empty: light)."""
    return sorted(name for name in _loads(module) if _is_declared(name))


def _start_up_modules() -> list[str]:
    """What every command imports before it runs: the package facades (outside defs/), cli/ and evaluate.py.

    A heavy package's own facade (secrets/) is heavy by its declaration: who may import it is the
    table's rule, checked below.
    """
    return sorted(
        name
        for name, path in MODULES.items()
        if not name.startswith(f"{ROOT}.defs")
        and not _is_declared(name)
        and (path.name == "__init__.py" or name.startswith(f"{ROOT}.cli") or name == f"{EVALSET}.evaluate")
    )


def test_no_facade_nor_cli_module_loads_a_heavy_module_at_import() -> None:
    assert {name: heavy(name) for name in _start_up_modules() if heavy(name)} == {}


def test_the_heavy_table_names_real_modules_and_importers() -> None:
    for module, importers in HEAVY_MODULES.items():
        assert module in MODULES, module
        for importer in importers:
            assert any(m == importer or m.startswith(importer + ".") for m in MODULES), importer


def _all_imports(tree: ast.AST) -> list[str]:
    """Every import of the module, also inside functions (not under `if TYPE_CHECKING:`)."""
    skipped = {
        id(inner)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"
        for stmt in node.body
        for inner in ast.walk(stmt)
    }
    found: list[str] = []
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            found.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append(node.module)
            found.extend(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def _declared_importer_offences(module: str, imports: list[str]) -> list[str]:
    offences = []
    for heavy_module, importers in HEAVY_MODULES.items():
        inside = module == heavy_module or module.startswith(heavy_module + ".")
        allowed = inside or any(module == i or module.startswith(i + ".") for i in importers)
        if not allowed and any(n == heavy_module or n.startswith(heavy_module + ".") for n in imports):
            offences.append(f"{module} imports {heavy_module} (heavy.py allows: {', '.join(importers)})")
    return offences


def test_each_heavy_module_is_imported_only_by_the_modules_heavy_py_names() -> None:
    offences = []
    for name, path in sorted(MODULES.items()):
        offences += _declared_importer_offences(name, _all_imports(_tree(path)))
    assert offences == []


def _function_local_imports(tree: ast.AST) -> list[tuple[int, str]]:
    found = []
    for func in ast.walk(tree):
        if isinstance(func, ast.FunctionDef | ast.AsyncFunctionDef):
            for node in ast.walk(func):
                if isinstance(node, ast.Import):
                    found += [(node.lineno, alias.name) for alias in node.names]
                elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                    found.append((node.lineno, node.module))
    return sorted(set(found))


def test_a_function_local_import_in_cli_loads_a_heavy_module() -> None:
    """A function-local import is how a command loads what only it needs.

    One that loads nothing heavy belongs at the top of its module.
    """
    offences = [
        f"{path.relative_to(PACKAGE)}:{line} imports {module} inside a function, which loads nothing heavy"
        for path in sorted((PACKAGE / "cli").glob("*.py"))
        for line, module in _function_local_imports(_tree(path))
        if not heavy(module)
    ]
    assert offences == []


def test_start_up_detectors_see_a_heavy_import_and_an_undeclared_importer() -> None:
    assert heavy(f"{EVALSET}.run.live") and heavy(f"{EVALSET}.export.run") and not heavy(f"{EVALSET}.run")
    assert "httpx" in heavy(f"{ROOT}.github.pulls") and heavy(f"{ROOT}.cli.export") == []
    tree = ast.parse("def f():\n    from graft_eval_pipeline.evalset.run.live import anthropic_llm\n")
    assert _declared_importer_offences(f"{ROOT}.cli.sets", _all_imports(tree)) == [
        f"{ROOT}.cli.sets imports {EVALSET}.run.live (heavy.py allows: {EVALSET}.run.harness, "
        f"{ROOT}.cli.run, {ROOT}.defs.assets.evaluation)"
    ]
    typing_only = ast.parse("if TYPE_CHECKING:\n    from graft_eval_pipeline.evalset.run.live import x\n")
    assert _declared_importer_offences(f"{ROOT}.cli.sets", _all_imports(typing_only)) == []
    assert _function_local_imports(ast.parse("def f():\n    import json\n")) == [(2, "json")]


# --- card/: the same facade rule as the stages -------------------------------------------------

CARD = f"{ROOT}.card"


def _card_imports(tree: ast.AST) -> list[tuple[str, list[str]]]:
    """(module, imported names) for every import of card or one of its modules."""
    return [
        (node.module, [alias.name for alias in node.names])
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module and (node.module + ".").startswith(CARD + ".")
    ] + [
        (alias.name, [])
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
        if (alias.name + ".").startswith(CARD + ".")
    ]


def _card_offences(rel: str, imports: list[tuple[str, list[str]]]) -> list[str]:
    public = _all_of(PACKAGE / "card" / "__init__.py")
    offences = []
    for module, names in imports:
        if module != CARD:
            if not heavy(module):
                offences.append(f"{rel} imports {module} (use the package {CARD})")
        else:
            offences += [f"{rel} imports {n} from card, not in its __all__" for n in names if n not in public]
    return offences


def test_other_packages_import_card_only_through_its_public_surface() -> None:
    """Outside card/, `card` is imported as the package or a heavy module of it by its path.

    Outside card/, `card` is imported as the package (its `__all__`), or a heavy module of it (the
    live Anthropic client) by its path; card's own modules import each other directly.
    """
    offences = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if not rel.startswith("card/"):
            offences += _card_offences(rel, _card_imports(_tree(path)))
    assert offences == []


def test_card_exports_exactly_what_the_other_packages_use() -> None:
    used: set[str] = set()
    for path in sorted(PACKAGE.rglob("*.py")):
        if not path.relative_to(PACKAGE).as_posix().startswith("card/"):
            for module, names in _card_imports(_tree(path)):
                if module == CARD:
                    used.update(names)
    assert _all_of(PACKAGE / "card" / "__init__.py") == used


def test_card_detector_sees_a_deep_import_and_a_private_name() -> None:
    tree = ast.parse(
        "from graft_eval_pipeline.card.floor import path_rules\n"
        "from graft_eval_pipeline.card import _private\n"
        "from graft_eval_pipeline.card.anthropic_llm import create_anthropic_llm\n"
    )
    assert _card_offences("evalset/run/x.py", _card_imports(tree)) == [
        f"evalset/run/x.py imports {CARD}.floor (use the package {CARD})",
        "evalset/run/x.py imports _private from card, not in its __all__",
    ]
