"""The dependency lock (tools/lockfile.py).

The committed lock fits pyproject.toml, a stale one is refused, and `./run.sh lock` keeps or drops
pins as asked. No test resolves (that needs the index).
"""

from __future__ import annotations

import importlib.util
import re
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "tools" / "lockfile.py"


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("graft_lockfile", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


lockfile = _load()


def _run(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *map(str, args)], capture_output=True, text=True, check=False
    )


@pytest.fixture
def project(tmp_path: Path) -> tuple[Path, Path]:
    """A copy of the committed pyproject.toml and constraints.txt to edit."""
    pyproject, lock = tmp_path / "pyproject.toml", tmp_path / "constraints.txt"
    shutil.copy(ROOT / "pyproject.toml", pyproject)
    shutil.copy(ROOT / "constraints.txt", lock)
    return pyproject, lock


def test_committed_lock_fits_pyproject() -> None:
    result = _run("check")
    assert result.returncode == 0, result.stderr


def test_committed_lock_pins_every_declared_package_exactly() -> None:
    pins = lockfile.read_pins(ROOT / "constraints.txt")
    assert all(re.fullmatch(r"[a-z0-9-]+==[^=\s;]+", pin) for pin in pins.values())
    own = "graft-eval-pipeline"
    declared = {lockfile._requirement_name(req) for req in lockfile.requirements(ROOT / "pyproject.toml")}
    assert own not in pins
    assert declared - set(pins) == set()
    assert {"pip", "setuptools", "dagster", "pytest"} <= set(pins)


def test_new_dependency_without_new_lock_is_refused(project: tuple[Path, Path]) -> None:
    pyproject, lock = project
    text = pyproject.read_text(encoding="utf-8")
    pyproject.write_text(text.replace('"click>=8.1",', '"click>=8.1",\n  "numpy>=2",'), encoding="utf-8")
    result = _run("--pyproject", pyproject, "--lock", lock, "check")
    assert result.returncode == 2
    assert "./run.sh lock" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_changed_extra_or_build_requirement_is_refused(project: tuple[Path, Path]) -> None:
    pyproject, lock = project
    text = pyproject.read_text(encoding="utf-8")
    for edited in (
        text.replace('"ruff>=0.8",', '"ruff>=0.9",'),
        text.replace('requires = ["setuptools>=68"]', 'requires = ["setuptools>=70"]'),
        text.replace("\n[project.scripts]", 're2 = ["google-re2>=1.1"]\n\n[project.scripts]'),
    ):
        assert edited != text
        pyproject.write_text(edited, encoding="utf-8")
        result = _run("--pyproject", pyproject, "--lock", lock, "check")
        assert result.returncode == 2
        assert "was made for other dependencies" in result.stderr


def test_tool_settings_and_dependency_order_do_not_stale_the_lock(project: tuple[Path, Path]) -> None:
    pyproject, lock = project
    text = pyproject.read_text(encoding="utf-8")
    edited = text.replace("line-length = 110", "line-length = 100").replace(
        '  "pandas>=2.2",\n  "pyarrow>=18",', '  "pyarrow>=18",\n  "pandas>=2.2",'
    )
    assert edited != text
    pyproject.write_text(edited, encoding="utf-8")
    assert _run("--pyproject", pyproject, "--lock", lock, "check").returncode == 0


def test_missing_lock_is_refused(project: tuple[Path, Path]) -> None:
    pyproject, lock = project
    lock.unlink()
    result = _run("--pyproject", pyproject, "--lock", lock, "check")
    assert result.returncode == 2
    assert "constraints.txt is missing" in result.stderr


def test_build_requires_lists_the_build_backend() -> None:
    result = _run("build-requires")
    assert result.returncode == 0
    assert result.stdout.split() == ["setuptools>=68"]


@pytest.mark.parametrize(
    ("upgrade", "kept"),
    [
        (None, {"dagster", "dagster-webserver", "pandas", "pip"}),  # plain `lock`: every current pin stays
        (["Dagster"], {"dagster-webserver", "pandas", "pip"}),  # `--upgrade dagster`: that one is free
        (["dagster*"], {"pandas", "pip"}),  # a glob frees dagster and its libraries together
        ([], set()),  # `--upgrade`: everything anew
    ],
)
def test_lock_keeps_current_pins_unless_upgraded(
    project: tuple[Path, Path],
    monkeypatch: pytest.MonkeyPatch,
    upgrade: list[str] | None,
    kept: set[str],
) -> None:
    pyproject, lock = project
    lock.write_text(
        "# old\ndagster==1.0.0\ndagster-webserver==1.0.0\npandas==2.2.0\npip==24.0\n", encoding="utf-8"
    )
    seen: list[dict[str, str]] = []

    def fake_resolve(_pyproject: Path, keep: dict[str, str]) -> list[tuple[str, str]]:
        seen.append(keep)
        return [("dagster", "1.0.0"), ("dagster-webserver", "1.0.0"), ("pandas", "2.2.0"), ("pip", "24.0")]

    monkeypatch.setattr(lockfile, "resolve", fake_resolve)
    monkeypatch.setattr(lockfile, "_check_platform", lambda: None)
    lockfile.lock_command(pyproject, lock, upgrade)
    assert len(seen) == 1
    assert set(seen[0]) == kept
    assert _run("--pyproject", pyproject, "--lock", lock, "check").returncode == 0
    assert lockfile.read_pins(lock) == {
        "dagster": "dagster==1.0.0",
        "dagster-webserver": "dagster-webserver==1.0.0",
        "pandas": "pandas==2.2.0",
        "pip": "pip==24.0",
    }


def test_lock_resolves_anew_when_current_pins_no_longer_fit(
    project: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    pyproject, lock = project
    lock.write_text("dagster==1.0.0\n", encoding="utf-8")
    seen: list[dict[str, str]] = []

    def fake_resolve(_pyproject: Path, keep: dict[str, str]) -> list[tuple[str, str]]:
        seen.append(keep)
        if keep:
            raise subprocess.CalledProcessError(1, ["pip"])
        return [("dagster", "1.13.0")]

    monkeypatch.setattr(lockfile, "resolve", fake_resolve)
    monkeypatch.setattr(lockfile, "_check_platform", lambda: None)
    lockfile.lock_command(pyproject, lock, None)
    assert [set(keep) for keep in seen] == [{"dagster"}, set()]
    assert lockfile.read_pins(lock) == {"dagster": "dagster==1.13.0"}


def test_lock_refuses_another_platform(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lockfile.platform, "machine", lambda: "arm64")
    with pytest.raises(lockfile.LockError, match=r"pinned for Linux x86_64 / CPython 3\.11"):
        lockfile._check_platform()


def test_committed_lock_moves_dagster_with_the_integrations_it_pins() -> None:
    """dagster-postgres, -celery and -k8s each require one dagster release exactly.

    The lock holds the dagster family at that release (issue 21), which `--upgrade 'dagster*'` moves
    together.
    """
    pins = {name: pin.split("==")[1] for name, pin in lockfile.read_pins(ROOT / "constraints.txt").items()}
    core = {
        pins[name]
        for name in ("dagster", "dagster-webserver", "dagster-graphql", "dagster-pipes", "dagster-shared")
    }
    integrations = {pins[name] for name in ("dagster-postgres", "dagster-celery", "dagster-k8s")}
    assert len(core) == 1 and len(integrations) == 1
    _major, minor, patch = next(iter(core)).split(".")
    assert next(iter(integrations)) == f"0.{int(minor) + 16}.{patch}"  # dagster 1.13.27 <-> 0.29.27


def _third_party_imports(package: Path) -> set[str]:
    """The top-level names the package imports that are neither the standard library nor itself."""
    import ast

    found: set[str] = set()
    for path in package.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                found.add(node.module.split(".")[0])
    return found - set(sys.stdlib_module_names) - {"graft_eval_pipeline"}


PARTS = {"pydantic_core": "pydantic", "httpcore2": "httpx2"}
"""Imported parts of a declared library, which pins them: pydantic's core, httpx2's transport
(imported for its loggers only)."""


def test_every_library_the_package_imports_is_a_declared_dependency() -> None:
    """A library that only comes in through another one's requirements is declared too."""
    import importlib.metadata
    import tomllib

    declared = {
        lockfile.canonical_name(re.split(r"[\s<>=!~;\[]", requirement, maxsplit=1)[0])
        for requirement in tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    }
    distributions = importlib.metadata.packages_distributions()
    undeclared = {
        name: distributions.get(name)
        for name in _third_party_imports(ROOT / "graft_eval_pipeline")
        if PARTS.get(name) not in declared
        and not declared & {lockfile.canonical_name(d) for d in distributions.get(name, [])}
    }
    assert undeclared == {}
