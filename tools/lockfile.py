"""The dependency lock, `constraints.txt`: make it, and tell whether it still fits pyproject.toml.

Why: without a lock a fresh clone installs whatever versions are newest that day, so a new release
of Dagster (or of anything under it) can break CI overnight. `run.sh` installs with
`pip install -c constraints.txt`, so every machine gets the same versions, and refuses to install
from a lock that was made for other dependency declarations (`check`).

The lock is plain pip: exact `name==version` pins for Linux x86_64 / CPython 3.11 (the machine
kind of every developer and of CI), resolved by pip itself from pyproject.toml's dependencies, all
of its extras, its build requirements and pip. Its header records a digest of those declarations,
so a dependency added to pyproject.toml without a new lock is caught on the next install.

Standard library only: `run.sh` runs it with the system python3 before `.venv/` exists.

    python3 tools/lockfile.py check             # exit 2 when constraints.txt is missing or stale
    python3 tools/lockfile.py build-requires    # pyproject.toml's build requirements, one a line
    python3 tools/lockfile.py lock [--upgrade [NAME ...]]   # a NAME may be a glob: 'dagster*'
"""

from __future__ import annotations

import argparse
import fnmatch
import hashlib
import json
import platform
import re
import subprocess
import sys
import tempfile
import tomllib
import venv
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = ROOT / "pyproject.toml"
LOCK = ROOT / "constraints.txt"
DIGEST_PREFIX = "# pyproject-dependencies: sha256:"
TARGET = "Linux x86_64 / CPython 3.11"

USAGE_ERROR = 2


class LockError(Exception):
    """A one-line reason the lock cannot be checked or made; exits 2."""


def canonical_name(name: str) -> str:
    """PEP 503 normalisation, so `Foo_Bar` and `foo-bar` are one package."""
    return re.sub(r"[-_.]+", "-", name).lower()


def _requirement_name(requirement: str) -> str:
    match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", requirement)
    if match is None:
        raise LockError(f"pyproject.toml: cannot read the requirement {requirement!r}")
    return canonical_name(match.group(1))


def _read_pyproject(pyproject: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(pyproject.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise LockError(f"{pyproject} is missing") from exc
    except tomllib.TOMLDecodeError as exc:
        raise LockError(f"{pyproject} is not valid TOML ({exc}): fix it and retry") from exc


def declarations(pyproject: Path) -> dict[str, Any]:
    """What the lock is made from: every dependency declaration of pyproject.toml, sorted."""
    data = _read_pyproject(pyproject)
    project = data.get("project", {})
    extras = project.get("optional-dependencies", {})
    return {
        "requires-python": project.get("requires-python", ""),
        "dependencies": sorted(project.get("dependencies", [])),
        "optional-dependencies": {name: sorted(reqs) for name, reqs in sorted(extras.items())},
        "build-system.requires": sorted(data.get("build-system", {}).get("requires", [])),
    }


def digest(pyproject: Path) -> str:
    """SHA-256 of the declarations; other edits to pyproject.toml (ruff, mypy) leave it alone."""
    text = json.dumps(declarations(pyproject), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def recorded_digest(lock: Path) -> str | None:
    for line in lock.read_text(encoding="utf-8").splitlines():
        if line.startswith(DIGEST_PREFIX):
            return line[len(DIGEST_PREFIX) :].strip()
    return None


def read_pins(lock: Path) -> dict[str, str]:
    """Package name -> the full pin line (`name==version`) of an existing lock."""
    pins: dict[str, str] = {}
    for line in lock.read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            pins[_requirement_name(line)] = line
    return pins


def check(pyproject: Path, lock: Path) -> None:
    if not lock.is_file():
        raise LockError(f"{lock.name} is missing: run `./run.sh lock` and commit it")
    if recorded_digest(lock) != digest(pyproject):
        raise LockError(
            f"{lock.name} was made for other dependencies than {pyproject.name} declares now: "
            f"run `./run.sh lock` and commit {lock.name}"
        )


def requirements(pyproject: Path) -> list[str]:
    """Everything to resolve: dependencies, every extra, the build requirements and pip."""
    decl = declarations(pyproject)
    own = canonical_name(_read_pyproject(pyproject).get("project", {}).get("name", ""))
    reqs = list(decl["dependencies"])
    for extra in decl["optional-dependencies"].values():
        reqs.extend(extra)
    reqs.extend(decl["build-system.requires"])
    reqs.append("pip")
    # An extra that names the project itself (`all = ["pkg[a,b]"]`) adds nothing: every extra is in.
    return [req for req in dict.fromkeys(reqs) if _requirement_name(req) != own]


def _check_platform() -> None:
    here = f"{platform.system()} {platform.machine()} / {platform.python_implementation()} "
    here += ".".join(map(str, sys.version_info[:2]))
    if here != TARGET:
        raise LockError(
            f"the lock is pinned for {TARGET} (the developers' and CI's machines); "
            f"this is {here}: run `./run.sh lock` on such a machine"
        )


def resolve(pyproject: Path, keep: dict[str, str]) -> list[tuple[str, str]]:
    """Ask pip (in a throw-away venv) what it would install; `keep` pins are honoured."""
    with tempfile.TemporaryDirectory(prefix="graft-lock-") as tmp_name:
        tmp = Path(tmp_name)
        venv.create(tmp / "venv", with_pip=True)
        pip = [str(tmp / "venv" / "bin" / "python"), "-m", "pip", "--quiet", "--disable-pip-version-check"]
        (tmp / "requirements.txt").write_text("\n".join(requirements(pyproject)) + "\n", encoding="utf-8")
        (tmp / "keep.txt").write_text("".join(f"{pin}\n" for pin in keep.values()), encoding="utf-8")
        constraint = ["-c", str(tmp / "keep.txt")]
        subprocess.run([*pip, "install", "--upgrade", "pip", *constraint], check=True)
        report = tmp / "report.json"
        subprocess.run(
            [
                *pip,
                "install",
                "--dry-run",
                "--ignore-installed",
                "--report",
                str(report),
                "-r",
                str(tmp / "requirements.txt"),
                *constraint,
            ],
            check=True,
        )
        installs = json.loads(report.read_text(encoding="utf-8"))["install"]
    return sorted(
        (canonical_name(item["metadata"]["name"]), item["metadata"]["version"]) for item in installs
    )


def write_lock(pyproject: Path, lock: Path, pins: list[tuple[str, str]]) -> None:
    header = [
        f"# Pinned versions for {TARGET}: run.sh installs with `pip install -c {lock.name}`.",
        "# Made by `./run.sh lock` from pyproject.toml (dependencies, every extra, build requirements",
        '# and pip); do not edit by hand. docs/decisions.md "Upgrading dependencies" says how to change it.',
        f"{DIGEST_PREFIX}{digest(pyproject)}",
    ]
    body = [f"{name}=={version}" for name, version in pins]
    tmp = lock.with_name(lock.name + ".tmp")
    tmp.write_text("\n".join(header + body) + "\n", encoding="utf-8")
    tmp.replace(lock)


def upgrades(name: str, patterns: list[str]) -> bool:
    """Whether `--upgrade` frees the pin of `name`.

    A pattern is a name or a glob (`'dagster*'` frees dagster and every dagster-* library, which
    each pin one dagster release exactly).
    """
    return any(fnmatch.fnmatchcase(name, canonical_name(pattern)) for pattern in patterns)


def lock_command(pyproject: Path, lock: Path, upgrade: list[str] | None) -> None:
    _check_platform()
    keep: dict[str, str] = {}
    if upgrade != [] and lock.is_file():  # --upgrade with no names: everything anew
        keep = {name: pin for name, pin in read_pins(lock).items() if not upgrades(name, upgrade or [])}
    try:
        pins = resolve(pyproject, keep)
    except subprocess.CalledProcessError:
        if not keep:
            raise LockError(
                "pip could not resolve pyproject.toml's dependencies (its error is above)"
            ) from None
        print(
            f"lockfile: the current pins of {lock.name} do not fit the new declarations; "
            "resolving every package anew",
            file=sys.stderr,
        )
        pins = resolve(pyproject, {})
    old = read_pins(lock) if lock.is_file() else {}
    write_lock(pyproject, lock, pins)
    changed = sum(1 for name, version in pins if old.get(name) != f"{name}=={version}")
    removed = len(set(old) - {name for name, _ in pins})
    print(f"lockfile: wrote {lock.name}: {len(pins)} packages, {changed} new or changed, {removed} removed")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tools/lockfile.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--pyproject", type=Path, default=PYPROJECT, help=argparse.SUPPRESS)
    parser.add_argument("--lock", type=Path, default=LOCK, help=argparse.SUPPRESS)
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("check", help="exit 2 when the lock is missing or made for other dependencies")
    sub.add_parser("build-requires", help="print pyproject.toml's build requirements, one a line")
    lock_parser = sub.add_parser("lock", help="write the lock; keeps current pins unless --upgrade")
    lock_parser.add_argument(
        "--upgrade",
        nargs="*",
        metavar="NAME",
        help="take the newest allowed version of these packages (a glob such as 'dagster*' names several; "
        "every package when none is named)",
    )
    args = parser.parse_args(argv)
    try:
        if args.command == "check":
            check(args.pyproject, args.lock)
        elif args.command == "build-requires":
            print("\n".join(declarations(args.pyproject)["build-system.requires"]))
        else:
            lock_command(args.pyproject, args.lock, args.upgrade)
    except LockError as exc:
        print(f"lockfile: {exc}", file=sys.stderr)
        return USAGE_ERROR
    return 0


if __name__ == "__main__":
    sys.exit(main())
