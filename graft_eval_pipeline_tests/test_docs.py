"""The README and docs/ stay usable.

Every `graft-eval` command in a fenced bash block parses against the CLI (the subcommand exists, its
options exist and take the values shown, required options are there), every `./run.sh` sub-command
and `bench/` script shown exists, and every relative link between the pages resolves to a file and,
with a `#fragment`, to a heading of it.

Commands are parsed by click without running them (`make_context` on each level, as `main`
would before invoking), so the check is fast and touches no set. Placeholders such as `<set>`
and optional parts such as `[--write]` are filled in first. `cli/test_docs_export_walkthrough.py`
runs the offline export walkthrough of docs/case-sets.md as written.
"""

from __future__ import annotations

import re
import shlex
import unicodedata
from dataclasses import dataclass
from pathlib import Path

import click
import pytest

from graft_eval_pipeline.cli import cli
from graft_eval_pipeline.evalset.sets.paths import REPO_ROOT

README = REPO_ROOT / "README.md"
DOCS = REPO_ROOT / "docs"
PAGES = [README, *sorted(DOCS.glob("*.md"))]
README_MAX_LINES = 250

FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.M | re.S)
LINK = re.compile(r"(?<!!)\[[^\]\n]*\]\(([^)\s]+)\)")
PLACEHOLDER = re.compile(r"<[A-Za-z][\w -]*>")
OPTIONAL = re.compile(r"\[(--?[^\]]*)\]")
SEPARATORS = {";", "&&", "||", "|", "(", ")", "&"}


@dataclass(frozen=True)
class Command:
    page: str
    line: str
    args: tuple[str, ...]


def rel(path: Path) -> str:
    return str(path.relative_to(REPO_ROOT)) if path.is_relative_to(REPO_ROOT) else str(path)


def fenced(text: str, lang: str | None = None) -> list[str]:
    """The bodies of the page's fenced blocks (of one language, if given)."""
    return [body for tag, body in FENCE.findall(text) if lang is None or tag == lang]


def prose(text: str) -> str:
    """The page without its fenced blocks (headings and links inside code are not the page's)."""
    return FENCE.sub("", text)


def tokens(line: str) -> list[str]:
    """A shell line as words: comments dropped, `$(`/`)`/`;`/`|`/`&&` as separate tokens."""
    line = OPTIONAL.sub(r"\1", PLACEHOLDER.sub("PLACEHOLDER", line))
    lexer = shlex.shlex(line.replace("$(", " ( "), posix=True, punctuation_chars=";&|()")
    lexer.whitespace_split = True
    lexer.commenters = "#"
    return list(lexer)


def commands_in(text: str, program: str) -> list[tuple[str, tuple[str, ...]]]:
    """Each call of `program` in the bash blocks, with its arguments up to the next shell separator.

    Each call of `program` (bare or as a path such as `.venv/bin/graft-eval`, at the start of a
    command) in the bash blocks, with its arguments up to the next shell separator.
    """
    found = []
    for block in fenced(text, "bash"):
        for line in block.replace("\\\n", " ").splitlines():
            words = tokens(line)
            for i, word in enumerate(words):
                at_start = i == 0 or words[i - 1] in SEPARATORS  # a command, not an argument
                if at_start and (word == program or word.endswith(f"/{program}")):
                    args = []
                    for arg in words[i + 1 :]:
                        if arg in SEPARATORS:
                            break
                        args.append(arg)
                    found.append((line.strip(), tuple(args)))
    return found


def shown_commands(program: str) -> list[Command]:
    return [
        Command(rel(page), line, args)
        for page in PAGES
        for line, args in commands_in(page.read_text(encoding="utf-8"), program)
    ]


def parse(args: tuple[str, ...], root: click.Group = cli, prog: str = "graft-eval") -> list[str]:
    """Parse `PROG ARGS` level by level as click does before invoking; return the command path.

    Raises click.UsageError (unknown command or option, bad value, missing option).
    """
    path = [prog]
    ctx = root.make_context(prog, list(args))
    command: click.Command = root
    rest = [*ctx._protected_args, *ctx.args]
    while isinstance(command, click.Group):
        if not rest:
            raise click.UsageError(f"{' '.join(path)} needs a command")
        name, sub, rest = command.resolve_command(ctx, rest)
        assert name is not None and sub is not None
        path.append(name)
        ctx = sub.make_context(name, rest, parent=ctx)
        command = sub
        rest = [*ctx._protected_args, *ctx.args] if isinstance(sub, click.Group) else []
    if ctx.args:
        raise click.UsageError(f"unexpected arguments {ctx.args}")
    return path


def slug(heading: str) -> str:
    """GitHub's anchor for a heading.

    Lower case, code and link marks gone, punctuation dropped (letters, digits, `-`, `_` and spaces
    kept), spaces as `-`.
    """
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).replace("`", "").strip().lower()
    kept = "".join(c for c in text if c in "-_ " or unicodedata.category(c)[0] in "LN")
    return kept.replace(" ", "-")


def anchors(text: str) -> set[str]:
    seen: dict[str, int] = {}
    out = set()
    for heading in re.findall(r"^#{1,6} +(.+?) *#*$", prose(text), re.M):
        base = slug(heading)
        n = seen.get(base, 0)
        seen[base] = n + 1
        out.add(base if n == 0 else f"{base}-{n}")
    return out


def broken_links(page: Path) -> list[str]:
    """Each relative link of the page whose file or heading does not exist."""
    broken = []
    for target in LINK.findall(prose(page.read_text(encoding="utf-8"))):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):  # https:, mailto: ...
            continue
        file_part, _, fragment = target.partition("#")
        dest = (page.parent / file_part).resolve() if file_part else page
        if not dest.exists():
            broken.append(f"{rel(page)}: {target}: no file {file_part}")
        elif fragment and dest.suffix == ".md" and fragment not in anchors(dest.read_text(encoding="utf-8")):
            broken.append(f"{rel(page)}: {target}: no heading #{fragment} in {rel(dest)}")
    return broken


COMMANDS = shown_commands("graft-eval")
DAGSTER_COMMANDS = shown_commands("dagster")


def test_the_pages_show_graft_eval_commands_of_most_subcommands() -> None:
    """The extraction finds the commands (an empty list would make the next test pass vacuously)."""
    assert len(COMMANDS) >= 40
    shown = {c.args[0] for c in COMMANDS if c.args}
    assert {"run", "export", "init", "compare", "cases", "view", "history", "sets"} <= shown
    assert all(page in {c.page for c in COMMANDS} for page in ("README.md", "docs/case-sets.md"))


@pytest.mark.parametrize("command", COMMANDS, ids=[f"{c.page}: {' '.join(c.args)}" for c in COMMANDS])
def test_every_graft_eval_command_in_the_docs_parses(command: Command) -> None:
    try:
        parse(command.args)
    except click.UsageError as exc:
        pytest.fail(f"{command.page}: `{command.line}`: {exc.format_message()}")


def test_every_dagster_command_in_the_docs_parses() -> None:
    """`dagster asset materialize …`, `dagster dev`: Dagster's own click CLI, parsed the same way."""
    from dagster._cli import cli as dagster_cli

    assert {c.args[0] for c in DAGSTER_COMMANDS} >= {"asset", "dev"}
    for command in DAGSTER_COMMANDS:
        try:
            parse(command.args, dagster_cli, "dagster")
        except click.UsageError as exc:
            pytest.fail(f"{command.page}: `{command.line}`: {exc.format_message()}")


@pytest.mark.parametrize(
    "args",
    [
        ("rnu", "--set", "x"),  # no such command
        ("run", "--set", "x", "--no-such-flag"),  # no such option
        ("run",),  # a required option missing
        ("run", "--set", "x", "--trials", "many"),  # a value of the wrong type
        ("sets",),  # a group without its command
        ("sets", "sync", "extra"),  # an argument nothing takes
    ],
)
def test_the_parse_check_refuses_what_the_cli_refuses(args: tuple[str, ...]) -> None:
    with pytest.raises(click.UsageError):
        parse(args)


def test_commands_are_read_through_comments_substitutions_and_placeholders() -> None:
    text = (
        "```bash\n"
        "export K=$(.venv/bin/graft-eval keygen)   # a key\n"
        "graft-eval compare --set s --base <runId> --new runs/<runId>/ --json\n"
        "graft-eval schema [--write]   # the schemas; --check is not an arg\n"
        "./run.sh lock --upgrade graft-eval\n"
        "```\n```text\ngraft-eval not-bash\n```\n"
    )
    assert [args for _, args in commands_in(text, "graft-eval")] == [
        ("keygen",),
        ("compare", "--set", "s", "--base", "PLACEHOLDER", "--new", "runs/PLACEHOLDER/", "--json"),
        ("schema", "--write"),
    ]
    assert parse(("sets", "sync", "--prune")) == ["graft-eval", "sets", "sync"]


def test_every_run_sh_subcommand_and_bench_script_shown_exists() -> None:
    run_sh = (REPO_ROOT / "run.sh").read_text(encoding="utf-8")
    (usage,) = re.findall(r'echo "usage: ./run.sh ([^"]+)"', run_sh)  # run.sh's list of sub-commands
    subcommands = {part.split()[0] for part in usage.split(" | ")}
    assert {"main-job", "test", "test-fast", "lock"} == subcommands
    missing = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for line, args in commands_in(text, "run.sh"):
            if not args or args[0] not in subcommands:
                missing.append(f"{rel(page)}: `{line}`")
        for script in re.findall(r"\bbench/[\w.]+\.py", text):
            if not (REPO_ROOT / script).is_file():
                missing.append(f"{rel(page)}: {script}")
    assert missing == []


@pytest.mark.parametrize("page", PAGES, ids=rel)
def test_every_relative_link_resolves_to_a_file_and_heading(page: Path) -> None:
    assert broken_links(page) == []


def test_slugs_and_broken_links_are_found(tmp_path: Path) -> None:
    assert slug("Batch mode (`--batch`, half price)") == "batch-mode---batch-half-price"
    assert slug("The files in `deploy/`") == "the-files-in-deploy"
    assert anchors("# A\n## A\n```\n# not a heading\n```\n") == {"a", "a-1"}
    page = tmp_path / "page.md"
    page.write_text("[ok](#top)\n# Top\n[gone](other.md) [bad](#nowhere) [web](https://x.org/#y)\n")
    assert broken_links(page) == [
        f"{page}: other.md: no file other.md",
        f"{page}: #nowhere: no heading #nowhere in {page}",
    ]


def test_readme_is_a_front_door_that_links_every_page() -> None:
    text = README.read_text(encoding="utf-8")
    assert text.startswith("# graft-eval-pipeline\n")
    assert len(text.splitlines()) < README_MAX_LINES
    linked = {target.partition("#")[0] for target in LINK.findall(prose(text))}
    assert {f"docs/{page.name}" for page in DOCS.glob("*.md")} <= linked
