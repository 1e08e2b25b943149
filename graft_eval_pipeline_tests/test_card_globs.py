"""Glob semantics of the floor and the sampler (design 3.2)."""

from __future__ import annotations

import pytest

from graft_eval_pipeline.card.globs import (
    AUTH_SECRETS_GLOBS,
    CI_CONFIG_GLOBS,
    DEPENDENCY_GLOBS,
    DOCS_GLOBS,
    INFRA_GLOBS,
    MIGRATION_GLOBS,
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
