"""A Postgres-backed Dagster instance for the shared-deployment tests.

`GRAFT_TEST_POSTGRES_URL` (`postgresql://user[:password]@host:port/db`, a server on loopback that
`.ci/run` starts) names the server; every test gets a database of its own, dropped afterwards.
Without the variable the tests skip, saying so; under `CI=true` they fail instead, so CI cannot
pass without running them.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from graft_eval_pipeline.evalset.sets.paths import EVAL_REPO_VAR, REPO_ROOT
from graft_eval_pipeline_tests.builders import copy_eval_home

URL_VAR = "GRAFT_TEST_POSTGRES_URL"
DEPLOY_DIR = REPO_ROOT / "deploy"


@dataclass(frozen=True)
class PgServer:
    host: str
    port: int
    user: str
    password: str
    db: str

    def env(self) -> dict[str, str]:
        """What the dagster.yaml files of this repository read (docs/deploying.md, deploy/dagster.yaml)."""
        return {
            "DAGSTER_PG_HOST": self.host,
            "DAGSTER_PG_PORT": str(self.port),
            "DAGSTER_PG_USER": self.user,
            "DAGSTER_PG_PASSWORD": self.password,
            "DAGSTER_PG_DB": self.db,
        }


def _server() -> PgServer:
    url = os.environ.get(URL_VAR, "").strip()
    if not url:
        reason = f"{URL_VAR} is not set: these tests need a PostgreSQL server (.ci/run starts one)"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"CI=true but {reason}", pytrace=False)
        pytest.skip(reason)
    parts = urlsplit(url)
    return PgServer(
        host=parts.hostname or "127.0.0.1",
        port=parts.port or 5432,
        user=unquote(parts.username or "postgres"),
        password=unquote(parts.password or ""),
        db=parts.path.lstrip("/") or "postgres",
    )


@pytest.fixture
def pg_database() -> Iterator[PgServer]:
    """A fresh database on the test server, dropped after the test."""
    import psycopg2

    server = _server()
    name = f"graft_test_{uuid.uuid4().hex[:12]}"

    def admin(sql: str) -> None:
        conn = psycopg2.connect(
            host=server.host, port=server.port, user=server.user, password=server.password, dbname=server.db
        )
        conn.autocommit = True
        try:
            with conn.cursor() as cur:
                cur.execute(sql)
        finally:
            conn.close()

    admin(f'CREATE DATABASE "{name}"')
    try:
        yield PgServer(server.host, server.port, server.user, server.password, name)
    finally:
        admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture
def deployment(tmp_path: Path, pg_database: PgServer, monkeypatch: pytest.MonkeyPatch) -> PgServer:
    """This process and its children on the test database, with eval/ and the pilot sets in temp folders.

    This process (and every process it starts) on the test database, with eval/ and the pilot sets
    in temp folders: what a machine of a shared deployment has.
    """
    for name, value in pg_database.env().items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv(EVAL_REPO_VAR, str(copy_eval_home(tmp_path / "repo")))
    monkeypatch.setenv("GRAFT_EVAL_DIR", str(tmp_path / "pilots"))
    monkeypatch.setenv("DAGSTER_COMPUTE_LOGS_DIR", str(tmp_path / "compute-logs"))
    monkeypatch.delenv("GRAFT_EVAL_KEY", raising=False)
    monkeypatch.delenv("GRAFT_EVAL_EXECUTOR", raising=False)
    return pg_database
