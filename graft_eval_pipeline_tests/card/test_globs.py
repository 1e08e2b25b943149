"""Glob semantics of the floor and the sampler (design 3.2)."""

from __future__ import annotations

import random
import re
from collections.abc import Callable

import pytest

from graft_eval_pipeline.card.globs import (
    AUTH_SECRETS_GLOBS,
    CI_CONFIG_GLOBS,
    DEPENDENCY_GLOBS,
    DOCS_GLOBS,
    INFRA_GLOBS,
    MIGRATION_GLOBS,
    POLICY_FILE_GLOBS,
    TEST_GLOBS,
    GlobIndex,
    glob_matcher,
)


@pytest.mark.parametrize(
    ("glob", "path", "expected"),
    [
        ("src/**", "src/a/b/c.ts", True),
        ("src/**", "lib/src/a.ts", False),
        ("**/auth/**", "auth/x.ts", True),
        ("**/auth/**", "a/b/auth/c/d.ts", True),
        ("**/auth/**", "src/oauth/x.ts", False),
        ("src/*.ts", "src/a.ts", True),
        ("src/*.ts", "src/a/b.ts", False),
        ("*.tf", "deep/dir/main.tf", True),
        ("package.json", "packages/web/package.json", True),
        ("package.json", "package.json.bak", False),
        ("a?c.md", "abc.md", True),
        ("a?c.md", "a/c.md", False),
        ("*.{yml,yaml}", "x/ci.yaml", True),
        ("file[0-9].txt", "file7.txt", True),
        ("file[!0-9].txt", "file7.txt", False),
        ("/docs/**", "docs/a.md", True),
    ],
)
def test_glob_syntax(glob: str, path: str, expected: bool) -> None:
    assert glob_matcher([glob])(path) is expected


def test_smart_case_lower_case_glob_ignores_case_upper_case_glob_is_exact() -> None:
    assert glob_matcher(["**/migrations/**"])("Data/Migrations/0001_Init.cs")
    assert glob_matcher(["dockerfile"])("svc/Dockerfile")
    assert glob_matcher(["*Test.java"])("src/CartTest.java")
    assert not glob_matcher(["*Test.java"])("src/latest.java")


def test_empty_list_matches_nothing() -> None:
    assert not glob_matcher([])("anything")


def test_index_reports_every_list_that_matches() -> None:
    index = GlobIndex([["**/auth/**"], ["*.ts"], ["*.py"]])
    assert index.mask("src/auth/session.ts") == 0b011
    assert index.mask("README.md") == 0


@pytest.mark.parametrize(
    ("globs", "path"),
    [
        (CI_CONFIG_GLOBS, ".github/workflows/ci.yml"),
        (CI_CONFIG_GLOBS, ".gitlab-ci.yml"),
        (CI_CONFIG_GLOBS, "Jenkinsfile"),
        (CI_CONFIG_GLOBS, ".circleci/config.yml"),
        (DEPENDENCY_GLOBS, "pnpm-lock.yaml"),
        (DEPENDENCY_GLOBS, "requirements-dev.txt"),
        (DEPENDENCY_GLOBS, "services/api/go.sum"),
        (DEPENDENCY_GLOBS, "Cargo.lock"),
        (DEPENDENCY_GLOBS, "Gemfile.lock"),
        (DEPENDENCY_GLOBS, "app/build.gradle.kts"),
        (INFRA_GLOBS, "infra/main.tf"),
        (INFRA_GLOBS, "svc/Dockerfile"),
        (INFRA_GLOBS, "docker-compose.prod.yml"),
        (INFRA_GLOBS, "deploy/k8s/app.yaml"),
        (AUTH_SECRETS_GLOBS, "src/auth/session.ts"),
        (AUTH_SECRETS_GLOBS, "certs/server.pem"),
        (AUTH_SECRETS_GLOBS, "src/security/csp.ts"),
        (AUTH_SECRETS_GLOBS, "src/UserAuthService.java"),
        (AUTH_SECRETS_GLOBS, "src/middleware/auth.ts"),
        (AUTH_SECRETS_GLOBS, "config/.env.production"),
        (MIGRATION_GLOBS, "db/migrations/0042_add_discount.sql"),
        (MIGRATION_GLOBS, "prisma/schema.prisma"),
        (MIGRATION_GLOBS, "alembic/versions/abc_add.py"),
        (TEST_GLOBS, "src/cart/cart.test.ts"),
        (TEST_GLOBS, "tests/test_cart.py"),
        (TEST_GLOBS, "pkg/cart_test.go"),
        (DOCS_GLOBS, "README.md"),
        (DOCS_GLOBS, "docs/img/logo.png"),
        (DOCS_GLOBS, "LICENSE"),
    ],
)
def test_rule_lists_match_realistic_paths(globs: tuple[str, ...], path: str) -> None:
    assert glob_matcher(globs)(path)


@pytest.mark.parametrize(
    ("globs", "path"),
    [
        (AUTH_SECRETS_GLOBS, "config/app.yaml"),
        (AUTH_SECRETS_GLOBS, "src/config/defaults.ts"),
        (AUTH_SECRETS_GLOBS, "src/util/token.ts"),
        (AUTH_SECRETS_GLOBS, "src/lexer/tokenizer.ts"),
        (AUTH_SECRETS_GLOBS, "src/Author.java"),
        (AUTH_SECRETS_GLOBS, "src/handlers/orders.ts"),
        (INFRA_GLOBS, "src/components/charts/Bar.tsx"),
        (DEPENDENCY_GLOBS, "src/packages.ts"),
        (MIGRATION_GLOBS, "docs/migrating.md"),
        (TEST_GLOBS, "src/latest.ts"),
        (TEST_GLOBS, "src/util/format-cases.ts"),
        (DOCS_GLOBS, "src/history.ts"),
        (CI_CONFIG_GLOBS, ".github/ISSUE_TEMPLATE/bug.md"),
    ],
)
def test_rule_lists_leave_near_misses_alone(globs: tuple[str, ...], path: str) -> None:
    assert not glob_matcher(globs)(path)


# --- The fast index against the plain translation -------------------------------------------
#
# `GlobIndex` sorts globs into dict and tuple lookups and runs a regex only after a required
# literal was found. Each shortcut is a chance to diverge from the documented syntax, so every
# glob list is checked against a slow, obviously-correct reference over many generated paths.

ALL_LISTS: dict[str, tuple[str, ...]] = {
    "ci_config": CI_CONFIG_GLOBS,
    "policy_file": POLICY_FILE_GLOBS,
    "dependency_manifest": DEPENDENCY_GLOBS,
    "infra": INFRA_GLOBS,
    "auth_secrets": AUTH_SECRETS_GLOBS,
    "migration": MIGRATION_GLOBS,
    "test": TEST_GLOBS,
    "docs": DOCS_GLOBS,
}

HAND_WRITTEN: tuple[str, ...] = (
    "src/**/billing.py",
    "services/**/billing/*.ts",
    "src/**/*.sql",
    "**/payments/*.ts",
    "**/requirements/*.txt",
    "**/db/*/schema.sql",
    "a/**/b/**/c.py",
    "lib/**/index.?s",
    "lib/*/index.{js,ts}",
    "**/*.min.js",
    "**/Internal/*.cs",
    "**/ledger/**",
    "**/billing/core/**",
    "payments/**",
    "**/Makefile",
    "config/prod.yaml",
    "/docs/**",
    "src/**",
    "*.{ts,tsx}",
    "*billing*",
    "Make*",
    "?ake*",
    "*_[0-9][0-9].sql",
    "[Aa]uth.py",
    "[!A-Z]x.py",
    "Data[A-Z]*",
    "a**b",
    "*.Tests.*",
)
CATCH_ALL: tuple[str, ...] = ("**/**", "**", "*")
"""Each matches every path, so they are checked alone (in a list they would hide the rest)."""


def _expand(glob: str) -> list[str]:
    head, brace, rest = glob.partition("{")
    if not brace:
        return [glob]
    options, _, tail = rest.partition("}")
    return [head + option + more for option in options.split(",") for more in _expand(tail)]


def _regex(glob: str) -> str:
    """The documented syntax, one token at a time, with no shortcut."""
    out, i = "", 0
    while i < len(glob):
        if glob.startswith("**/", i):
            out, i = out + "(?:.*/)?", i + 3
        elif glob.startswith("**", i):
            out, i = out + ".*", i + 2
        elif glob[i] == "*":
            out, i = out + "[^/]*", i + 1
        elif glob[i] == "?":
            out, i = out + "[^/]", i + 1
        elif glob[i] == "[" and "]" in glob[i + 1 :]:
            end = glob.index("]", i + 1)
            body = glob[i + 1 : end]
            out, i = out + "(?!/)[" + ("^" + body[1:] if body.startswith("!") else body) + "]", end + 1
        else:
            out, i = out + re.escape(glob[i]), i + 1
    return out


def reference_matcher(globs: tuple[str, ...]) -> Callable[[str], bool]:
    """The reference glob match: slow and plain.

    Slow and plain: each expanded glob is one fullmatch on the path (or, without `/`, on the file
    name), lower-cased unless the glob has an upper-case letter.
    """
    compiled = []
    for glob in globs:
        for pattern in _expand(glob.lstrip("/")):
            exact = pattern != pattern.lower()
            compiled.append((re.compile(_regex(pattern)).fullmatch, exact, "/" in pattern))

    def match(path: str) -> bool:
        for fullmatch, exact, on_path in compiled:
            subject = path if exact else path.lower()
            if not on_path:
                subject = subject.rsplit("/", 1)[-1]
            if fullmatch(subject) is not None:
                return True
        return False

    return match


_FILLERS = ("", "a", "Foo", "x.y", "_-", "lib", "v2")
_DIRS = ("", "x/", "Deep/er/", "a.b/", "src/", "test/")


def _instantiate(pattern: str, rng: random.Random) -> str:
    """A path that the brace-free pattern likely matches (char classes are a guess)."""
    out, i = [], 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append(rng.choice(_DIRS))
            i += 3
        elif pattern.startswith("**", i):
            out.append(rng.choice(("", "x", "y/z.q", "m/n")))
            i += 2
        elif pattern[i] == "*":
            out.append(rng.choice(_FILLERS))
            i += 1
        elif pattern[i] == "?":
            out.append(rng.choice("aZ0._"))
            i += 1
        elif pattern[i] == "[" and "]" in pattern[i + 1 :]:
            end = pattern.index("]", i + 1)
            body = pattern[i + 1 : end]
            negated = body.startswith("!")
            body = body.lstrip("!").replace("-", "")
            out.append(rng.choice("a_0" + body if negated else body * 3 + "aZ0"))
            i = end + 1
        else:
            out.append(pattern[i])
            i += 1
    return "".join(out)


def _mutate(path: str, rng: random.Random) -> str:
    """The path itself or a near miss: other case, more or fewer directories, a suffix."""
    choice = rng.randrange(8)
    if choice == 1:
        path = rng.choice(("src/", "Lib/", "a/b/", "node_modules/x/")) + path
    elif choice == 2:
        path = path.upper()
    elif choice == 3 and path:
        k = rng.randrange(len(path))
        path = path[:k] + path[k].swapcase() + path[k + 1 :]
    elif choice == 4:
        path += rng.choice((".bak", "/x.ts", "s", "_"))
    elif choice == 5:
        path = path.split("/", 1)[-1]
    elif choice == 6:
        path = path[:-1]
    elif choice == 7:
        path = path.replace("/", "/sub/", 1)
    return path


def _generated_paths(seed: int) -> list[str]:
    rng = random.Random(seed)
    lists = (*ALL_LISTS.values(), HAND_WRITTEN, CATCH_ALL)
    patterns = [p for globs in lists for g in globs for p in _expand(g.lstrip("/"))]
    words = sorted({w for p in patterns for w in re.split(r"[*?/\[\]]+", p) if w})
    words += ["src", "Src", "README", "index.ts", "main.go", "app", "x", "-", "."]
    raw = []
    for pattern in patterns:
        plain = [_instantiate(pattern, rng) for _ in range(2)]
        raw += plain + [path.lower() for path in plain]
        raw += [_mutate(_instantiate(pattern, rng), rng) for _ in range(4)]
    for _ in range(3000):
        raw.append("/".join(rng.choice(words) for _ in range(rng.randint(1, 5))))
    # Real paths: no empty segment, no leading or trailing slash.
    paths = {"/".join(s for s in p.split("/") if s) for p in raw}
    return sorted(p for p in paths if p)


PATHS = _generated_paths(seed=20240601)


def _divergences(index: Callable[[str], bool], reference: Callable[[str], bool]) -> list[tuple[str, bool]]:
    return [(p, reference(p)) for p in PATHS if index(p) != reference(p)]


@pytest.mark.parametrize("name", [*ALL_LISTS, "hand_written"])
def test_index_agrees_with_the_plain_translation_on_every_list(name: str) -> None:
    globs = HAND_WRITTEN if name == "hand_written" else ALL_LISTS[name]
    assert _divergences(glob_matcher(globs), reference_matcher(globs))[:10] == []


@pytest.mark.parametrize("glob", HAND_WRITTEN + CATCH_ALL)
def test_index_agrees_with_the_plain_translation_on_each_hand_written_glob(glob: str) -> None:
    reference = reference_matcher((glob,))
    assert any(reference(p) for p in PATHS), "the generator never hits this glob"
    assert _divergences(GlobIndex([[glob]]), reference)[:10] == []


def test_combined_index_agrees_with_the_plain_translation_bit_by_bit() -> None:
    """The floor's shape: every list in one index, each list one bit of the mask."""
    lists = [*ALL_LISTS.values(), HAND_WRITTEN]
    index = GlobIndex(lists)
    references = [reference_matcher(globs) for globs in lists]
    wrong = []
    for path in PATHS:
        expected = sum(1 << i for i, reference in enumerate(references) if reference(path))
        if index.mask(path) != expected:
            wrong.append((path, bin(index.mask(path)), bin(expected)))
    assert wrong[:10] == []


def test_every_built_in_glob_is_exercised_by_the_generated_paths() -> None:
    patterns = [pattern for globs in ALL_LISTS.values() for glob in globs for pattern in _expand(glob)]
    missed = [pattern for pattern in patterns if not any(map(reference_matcher((pattern,)), PATHS))]
    assert missed == []


@pytest.mark.parametrize(
    ("glob", "path"),
    [
        ("src/**/billing.py", "src/billing.py"),
        ("src/**/billing.py", "src/a/b/billing.py"),
        ("services/**/billing/*.ts", "services/billing/invoice.ts"),
        ("src/**/*.sql", "src/a.sql"),
        ("**/payments/*.ts", "payments/refund.ts"),
        ("[Aa]uth.py", "lib/auth.py"),
        ("**/**", "a/b"),
    ],
)
def test_double_star_slash_and_classes_match_where_the_syntax_says(glob: str, path: str) -> None:
    assert glob_matcher([glob])(path)


def test_root_requirements_directory_is_a_dependency_manifest() -> None:
    assert glob_matcher(DEPENDENCY_GLOBS)("requirements/base.txt")
