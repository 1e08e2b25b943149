"""A fake GitHub REST API for the export tests (spec T8): a small Starlette app with state.

Serves the routes the export reads (pull list with `Link` pagination, pull, commits, files,
issue) and the App token exchange, with GitHub's `x-ratelimit-*` headers (named and shaped as
in the recorded octokit fixture, `github/data/octokit-fixtures`) on a decrementing budget: at zero it
answers 403 "API rate limit exceeded" until the injected clock passes the reset. Failures can be
injected per route (404, 429 with retry-after, ...) and every request is logged.

It also behaves as GitHub does where the export met surprises: bursts of 5xx answers with
GitHub's own messages (`server_errors`), dropped connections (`drop_connections`, in-process
only), a secondary rate limit answered 403 without `retry-after` (`secondary_limit`), and
`301 Moved Permanently` to `/repositories/<id>/...` for a renamed repository (`renamed_from`) or
a transferred issue (`transfer_issue`), shaped like the recorded redirect in
`github/data/octokit-fixtures/rename-repository.raw-fixture.json`.

Unit tests reach it in-process through `SyncASGITransport`; the CLI test serves it with uvicorn
on a loopback port (`serve`). Never the network.

`python -m graft_eval_pipeline_tests.fake_github --serve [--port N]` serves `demo_github()` (a
few fictional agent, bot and human PRs) on a loopback port for trying `graft-eval export`
offline, and prints its URL and the variables to export (docs/case-sets.md, "Trying export offline").
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import re
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import parse_qsl, urlencode

import httpx
import uvicorn
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import padding, rsa
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

DOCS_URL = "https://docs.github.com/rest"
REDIRECT_DOCS_URL = "https://docs.github.com/v3/#http-redirects"
SECONDARY_DOCS_URL = (
    "https://docs.github.com/rest/using-the-rest-api/rate-limits-for-the-rest-api#about-secondary-rate-limits"
)
# What GitHub answers for a secondary rate limit (no retry-after, primary budget not spent), and
# the older wording GitHub Enterprise Server still uses.
SECONDARY_LIMIT_MESSAGE = (
    "You have exceeded a secondary rate limit. Please wait a few minutes before you try again. "
    "If you reach out to GitHub Support for help, please include the request ID 0000:0000:0000000."
)
ABUSE_LIMIT_MESSAGE = (
    "You have triggered an abuse detection mechanism. Please wait a few minutes before you try again."
)
# GitHub's messages for its transient 5xx answers.
SERVER_ERROR_MESSAGES = {
    500: "Server Error",
    502: "Server Error",
    503: "No server is currently available to service your request. Sorry about that. "
    "Please try resubmitting your request and contact us if the problem persists.",
    504: "We couldn't respond to your request in time. Sorry about that. "
    "Please try resubmitting your request and contact us if the problem persists.",
}
T0 = datetime(2026, 6, 1, tzinfo=UTC)


def iso(t: datetime) -> str:
    return t.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def sha(n: int, salt: str = "a") -> str:
    return (f"{n:x}" + salt * 40)[:40]


@dataclass
class FakeFile:
    filename: str
    status: str = "modified"
    additions: int = 1
    deletions: int = 1
    patch: str | None = "@@ -1 +1 @@\n-old line\n+new line"
    previous_filename: str | None = None

    def json(self) -> dict[str, Any]:
        item: dict[str, Any] = {
            "sha": sha(len(self.filename), "f"),
            "filename": self.filename,
            "status": self.status,
            "additions": self.additions,
            "deletions": self.deletions,
            "changes": self.additions + self.deletions,
        }
        if self.patch is not None:
            item["patch"] = self.patch
        if self.previous_filename is not None:
            item["previous_filename"] = self.previous_filename
        return item


@dataclass
class FakeCommit:
    message: str
    author_login: str | None = "octocat"
    author_type: str = "User"
    email: str = "octocat@example.invalid"

    def json(self, n: int) -> dict[str, Any]:
        author = {"login": self.author_login, "type": self.author_type} if self.author_login else None
        return {
            "sha": sha(n, "c"),
            "commit": {"message": self.message, "author": {"name": "A", "email": self.email}},
            "author": author,
        }


@dataclass
class FakePull:
    number: int
    title: str = "Fictional change"
    body: str = ""
    user_login: str = "octocat"
    user_type: str = "User"
    updated_at: datetime = T0
    merged_at: datetime | None = T0
    files: list[FakeFile] = field(default_factory=lambda: [FakeFile("src/app.py")])
    commits: list[FakeCommit] = field(default_factory=lambda: [FakeCommit("Change things")])
    changed_files: int | None = None  # GitHub's count; defaults to len(files)

    def summary(self, repo: str) -> dict[str, Any]:
        return {
            "number": self.number,
            "title": self.title,
            "body": self.body,
            "state": "closed",
            "user": {"login": self.user_login, "type": self.user_type},
            "created_at": iso(self.updated_at - timedelta(days=1)),
            "updated_at": iso(self.updated_at),
            "closed_at": iso(self.merged_at or self.updated_at),
            "merged_at": iso(self.merged_at) if self.merged_at else None,
            "head": {"sha": sha(self.number, "e"), "ref": f"branch-{self.number}"},
            "base": {"sha": sha(self.number, "b"), "ref": "main", "repo": {"full_name": repo}},
        }

    def detail(self, repo: str) -> dict[str, Any]:
        return {
            **self.summary(repo),
            "merged": self.merged_at is not None,
            "additions": sum(f.additions for f in self.files),
            "deletions": sum(f.deletions for f in self.files),
            "changed_files": self.changed_files if self.changed_files is not None else len(self.files),
            "commits": len(self.commits),
        }


def agent_pull(n: int, at: datetime, *, title: str, path: str) -> FakePull:
    """PR #n merged at `at`, one changed file, one commit with the Graft-Agent trailer."""
    return FakePull(
        n,
        title=title,
        updated_at=at,
        merged_at=at,
        files=[FakeFile(path)],
        commits=[FakeCommit("Work\n\nGraft-Agent: fictional-agent")],
    )


@dataclass
class FakeIssue:
    number: int
    title: str = "Fictional issue"
    body: str = ""


@dataclass
class RateBudget:
    limit: int = 5000
    remaining: int = 5000
    reset: float = 0.0


@dataclass
class Failure:
    method: str
    path: re.Pattern[str]
    status: int
    times: int | None  # None: every time
    headers: dict[str, str]
    message: str
    docs: str = DOCS_URL


def _b64url_decode(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class FakeGitHub:
    """State and ASGI app of the fake; `log` holds (method, path with query) per request."""

    def __init__(
        self,
        repo: str = "fictional-org/shop-demo",
        *,
        clock: Callable[[], float] = time.time,
        token: str | None = "test-token",
        app_id: str | None = None,
        app_public_key: rsa.RSAPublicKey | None = None,
        budget: RateBudget | None = None,
        repo_id: int = 700001,
    ) -> None:
        self.repo = repo
        self.repo_id = repo_id  # GitHub's id: renamed-repository redirects point to /repositories/<id>
        self.clock = clock
        self.token = token
        self.app_id = app_id
        self.app_public_key = app_public_key
        self.budget = budget or RateBudget(reset=clock() + 3600)
        self.pulls: dict[int, FakePull] = {}
        self.issues: dict[int, FakeIssue] = {}
        self.failures: list[Failure] = []
        self.renamed_from: set[str] = set()  # old owner/name answered with 301 to /repositories/<id>
        self.redirect_origin: str | None = None  # Location origin; None: the request's own
        self.transferred: dict[int, tuple[int, int]] = {}  # issue -> (new repo id, new number)
        self.foreign_issues: dict[tuple[int, int], FakeIssue] = {}  # (repo id, number) -> issue
        self.connection_failures = 0  # the next n requests fail to connect (in-process only)
        self.dropped: list[str] = []  # paths of the requests whose connection was dropped
        self.log: list[tuple[str, str]] = []
        self.authorization_log: list[str | None] = []  # the Authorization header of each request
        self.installation_tokens: list[str] = []
        self.max_per_page = 100  # lower it to get several pages from a few items
        self.app = Starlette(routes=[Route("/{path:path}", self._dispatch, methods=["GET", "POST"])])
        self._lock = threading.Lock()
        self._routes: list[tuple[str, re.Pattern[str], Callable[..., Response]]] = [
            ("GET", re.compile(r"/repos/(?P<repo>[^/]+/[^/]+)/pulls"), self._list_pulls),
            ("GET", re.compile(r"/repos/(?P<repo>[^/]+/[^/]+)/pulls/(?P<n>\d+)"), self._get_pull),
            ("GET", re.compile(r"/repos/(?P<repo>[^/]+/[^/]+)/pulls/(?P<n>\d+)/commits"), self._commits),
            ("GET", re.compile(r"/repos/(?P<repo>[^/]+/[^/]+)/pulls/(?P<n>\d+)/files"), self._files),
            ("GET", re.compile(r"/repos/(?P<repo>[^/]+/[^/]+)/issues/(?P<n>\d+)"), self._get_issue),
            ("POST", re.compile(r"/app/installations/(?P<id>\d+)/access_tokens"), self._access_token),
        ]

    # --- set-up ---------------------------------------------------------------------------

    def add_pull(self, pull: FakePull) -> FakePull:
        self.pulls[pull.number] = pull
        return pull

    def add_issue(self, issue: FakeIssue) -> FakeIssue:
        self.issues[issue.number] = issue
        return issue

    def fail(
        self,
        path: str,
        status: int,
        *,
        method: str = "GET",
        times: int | None = 1,
        headers: dict[str, str] | None = None,
        message: str = "Injected failure",
        docs: str = DOCS_URL,
    ) -> None:
        """Answer `status` for requests whose path fully matches the regex `path`."""
        self.failures.append(Failure(method, re.compile(path), status, times, headers or {}, message, docs))

    def server_errors(self, path: str, statuses: tuple[int, ...] = (502, 503, 504)) -> None:
        """A 5xx burst: the next requests to `path` answer each status once, in order."""
        for status in statuses:
            self.fail(path, status, message=SERVER_ERROR_MESSAGES.get(status, "Server Error"))

    def secondary_limit(
        self, path: str, *, times: int | None = 1, message: str = SECONDARY_LIMIT_MESSAGE
    ) -> None:
        """403 as GitHub answers a secondary rate limit: no retry-after, the primary budget not spent."""
        self.fail(path, 403, times=times, message=message, docs=SECONDARY_DOCS_URL)

    def drop_connections(self, times: int) -> None:
        """The next `times` requests fail to connect (`httpx.ConnectError`); in-process transport only."""
        self.connection_failures += times

    def transfer_issue(self, number: int, issue: FakeIssue, *, to_repo_id: int) -> None:
        """Issue `number` moved to another repository (id `to_repo_id`) as `issue`: GET answers 301."""
        self.transferred[number] = (to_repo_id, issue.number)
        self.foreign_issues[(to_repo_id, issue.number)] = issue

    def transport(self) -> SyncASGITransport:
        return SyncASGITransport(self.app, before=self._maybe_drop)

    def _maybe_drop(self, request: httpx.Request) -> None:
        with self._lock:
            if self.connection_failures > 0:
                self.connection_failures -= 1
                self.dropped.append(request.url.path)
                raise httpx.ConnectError("connection refused (injected by the fake)", request=request)

    def paths(self, pattern: str = ".*") -> list[str]:
        """Logged paths (without query) that fully match `pattern`."""
        rx = re.compile(pattern)
        return [p.split("?")[0] for _, p in self.log if rx.fullmatch(p.split("?")[0])]

    # --- request handling -------------------------------------------------------------------

    def _rate_headers(self) -> dict[str, str]:
        b = self.budget
        return {
            "X-RateLimit-Limit": str(b.limit),
            "X-RateLimit-Remaining": str(b.remaining),
            "X-RateLimit-Reset": str(int(b.reset)),
            "X-RateLimit-Used": str(b.limit - b.remaining),
            "X-RateLimit-Resource": "core",
        }

    def _error(
        self, status: int, message: str, headers: dict[str, str] | None = None, docs: str = DOCS_URL
    ) -> Response:
        body = {"message": message, "documentation_url": docs}
        return JSONResponse(body, status_code=status, headers={**self._rate_headers(), **(headers or {})})

    def _injected(self, method: str, path: str) -> Response | None:
        for failure in self.failures:
            if failure.method == method and failure.path.fullmatch(path) and failure.times != 0:
                if failure.times is not None:
                    failure.times -= 1
                return self._error(failure.status, failure.message, failure.headers, failure.docs)
        return None

    def _moved(self, request: Request, path: str) -> Response:
        """301 as GitHub sends it (recorded in rename-repository.raw-fixture.json)."""
        origin = self.redirect_origin or f"{request.url.scheme}://{request.url.netloc}"
        location = f"{origin}{path}" + (f"?{request.url.query}" if request.url.query else "")
        body = {"message": "Moved Permanently", "url": location, "documentation_url": REDIRECT_DOCS_URL}
        return JSONResponse(body, status_code=301, headers={**self._rate_headers(), "Location": location})

    def _renamed(self, request: Request, path: str) -> Response | None:
        """A GET under a renamed repository answers 301 to its /repositories/<id> path."""
        match = re.fullmatch(r"/repos/(?P<repo>[^/]+/[^/]+)(?P<rest>/.*)?", path)
        if match is None or request.method != "GET" or match["repo"] not in self.renamed_from:
            return None
        return self._moved(request, f"/repositories/{self.repo_id}{match['rest'] or ''}")

    def _transferred(self, request: Request, path: str) -> Response | None:
        """A GET of a transferred issue answers 301 to the issue in its new repository."""
        match = re.fullmatch(rf"/repos/{re.escape(self.repo)}/issues/(\d+)", path)
        if match is None or request.method != "GET" or int(match[1]) not in self.transferred:
            return None
        repo_id, number = self.transferred[int(match[1])]
        return self._moved(request, f"/repositories/{repo_id}/issues/{number}")

    def _by_id(self, path: str) -> tuple[str, Response | None]:
        """`/repositories/<id>/...`: this repository's routes, or an issue transferred elsewhere."""
        match = re.fullmatch(r"/repositories/(?P<id>\d+)(?P<rest>/.*)?", path)
        if match is None:
            return path, None
        repo_id, rest = int(match["id"]), match["rest"] or ""
        if repo_id == self.repo_id:
            return f"/repos/{self.repo}{rest}", None
        issue = re.fullmatch(r"/issues/(\d+)", rest)
        moved = self.foreign_issues.get((repo_id, int(issue[1]))) if issue else None
        if moved is None:
            return path, self._error(404, "Not Found")
        body = {"number": moved.number, "title": moved.title, "body": moved.body, "state": "open"}
        return path, JSONResponse(body, headers=self._rate_headers())

    def _spend_budget(self) -> bool:
        b = self.budget
        if b.remaining == 0 and self.clock() >= b.reset:
            b.remaining, b.reset = b.limit, self.clock() + 3600
        if b.remaining == 0:
            return False
        b.remaining -= 1
        return True

    def _authorized(self, request: Request, path: str) -> bool:
        header = request.headers.get("authorization", "")
        scheme, _, value = header.partition(" ")
        if scheme.lower() not in ("bearer", "token"):
            return False
        if path.startswith("/app/"):
            return self._valid_app_jwt(value)
        return value == self.token or value in self.installation_tokens

    def _valid_app_jwt(self, jwt: str) -> bool:
        if self.app_public_key is None:
            return False
        try:
            header, payload, signature = jwt.split(".")
            self.app_public_key.verify(
                _b64url_decode(signature),
                f"{header}.{payload}".encode(),
                padding.PKCS1v15(),
                hashes.SHA256(),
            )
        except Exception:
            return False
        claims = json.loads(_b64url_decode(payload))
        now = self.clock()
        return bool(claims.get("iss") == self.app_id and claims["iat"] <= now < claims["exp"])

    async def _dispatch(self, request: Request) -> Response:
        path = request.url.path
        query = request.url.query
        with self._lock:
            self.log.append((request.method, f"{path}?{query}" if query else path))
            self.authorization_log.append(request.headers.get("authorization"))
            injected = self._injected(request.method, path)
            if injected is not None:
                return injected
            if not self._spend_budget():
                return self._error(403, "API rate limit exceeded for installation ID 1.")
            if not self._authorized(request, path):
                return self._error(401, "Bad credentials")
            moved = self._renamed(request, path)
            if moved is not None:
                return moved
            path, by_id = self._by_id(path)
            if by_id is not None:
                return by_id
            moved = self._transferred(request, path)
            if moved is not None:
                return moved
            for method, rx, handler in self._routes:
                match = rx.fullmatch(path)
                if match and method == request.method:
                    if "repo" in match.groupdict() and match["repo"] != self.repo:
                        return self._error(404, "Not Found")
                    response = handler(request, match)
                    response.headers.update(self._rate_headers())
                    return response
            return self._error(404, "Not Found")

    def _page(self, request: Request, items: list[Any], default_per_page: int = 30) -> Response:
        """One page plus a `Link` header with prev/next/last/first, as GitHub sends it."""
        params = dict(parse_qsl(request.url.query))
        per_page = min(int(params.get("per_page", default_per_page)), self.max_per_page)
        page = int(params.get("page", 1))
        last = max(1, -(-len(items) // per_page))
        chunk = items[(page - 1) * per_page : page * per_page]

        def url(n: int) -> str:
            return str(request.url.replace(query=urlencode({**params, "page": n})))

        links = []
        if page > 1:
            links.append(f'<{url(page - 1)}>; rel="prev"')
        if page < last:
            links += [f'<{url(page + 1)}>; rel="next"', f'<{url(last)}>; rel="last"']
        if page > 1:
            links.append(f'<{url(1)}>; rel="first"')
        headers = {"Link": ", ".join(links)} if links else {}
        return JSONResponse(chunk, headers=headers)

    def _pull_or_none(self, match: re.Match[str]) -> FakePull | None:
        return self.pulls.get(int(match["n"]))

    def _list_pulls(self, request: Request, match: re.Match[str]) -> Response:
        params = dict(parse_qsl(request.url.query))
        pulls = sorted(
            self.pulls.values(), key=lambda p: p.updated_at, reverse=params.get("direction") != "asc"
        )
        if params.get("state") != "closed":
            return self._error(422, "the fake serves state=closed only")
        return self._page(request, [p.summary(self.repo) for p in pulls])

    def _get_pull(self, request: Request, match: re.Match[str]) -> Response:
        pull = self._pull_or_none(match)
        return JSONResponse(pull.detail(self.repo)) if pull else self._error(404, "Not Found")

    def _commits(self, request: Request, match: re.Match[str]) -> Response:
        pull = self._pull_or_none(match)
        if pull is None:
            return self._error(404, "Not Found")
        return self._page(request, [c.json(i) for i, c in enumerate(pull.commits)])

    def _files(self, request: Request, match: re.Match[str]) -> Response:
        pull = self._pull_or_none(match)
        if pull is None:
            return self._error(404, "Not Found")
        return self._page(request, [f.json() for f in pull.files[:3000]])

    def _get_issue(self, request: Request, match: re.Match[str]) -> Response:
        n = int(match["n"])
        if n in self.issues:
            issue = self.issues[n]
            return JSONResponse({"number": n, "title": issue.title, "body": issue.body, "state": "closed"})
        if n in self.pulls:
            pull = self.pulls[n]
            return JSONResponse({"number": n, "title": pull.title, "body": pull.body, "pull_request": {}})
        return self._error(404, "Not Found")

    def _access_token(self, request: Request, match: re.Match[str]) -> Response:
        token = f"ghs_fakeinstallation{len(self.installation_tokens):020d}"
        self.installation_tokens.append(token)
        expires = datetime.fromtimestamp(self.clock() + 3600, UTC)
        return JSONResponse({"token": token, "expires_at": iso(expires)}, status_code=201)


class SyncASGITransport(httpx.BaseTransport):
    """Runs an ASGI app in-process for a synchronous httpx client (httpx's own is async only).

    `before(request)` runs first and may raise an httpx transport error (a dropped connection).
    """

    def __init__(self, app: Any, before: Callable[[httpx.Request], None] | None = None) -> None:
        self._inner = httpx.ASGITransport(app=app)
        self._loop = asyncio.new_event_loop()
        self._before = before

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        if self._before is not None:
            self._before(request)
        inner_request = httpx.Request(
            request.method, request.url, headers=request.headers, content=request.read()
        )

        async def run() -> httpx.Response:
            response = await self._inner.handle_async_request(inner_request)
            content = await response.aread()
            return httpx.Response(response.status_code, headers=response.headers, content=content)

        return self._loop.run_until_complete(run())

    def close(self) -> None:
        self._loop.close()


@contextmanager
def serve(app: Any, port: int = 0) -> Iterator[str]:
    """Serve `app` with uvicorn on 127.0.0.1 (`port`, or a free one) in a thread; yields the base URL."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # a fixed port again right after a stop
    sock.bind(("127.0.0.1", port))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="error", lifespan="off"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the fake GitHub server did not start")
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()


class FakeClock:
    """Injected time for client and fake: `sleep` advances `now` and is recorded."""

    def __init__(self, start: float) -> None:
        self.t = start
        self.sleeps: list[float] = []

    def now(self) -> float:
        return self.t

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.t += seconds


# --- a demo to try `graft-eval export` offline -------------------------------------------------

DEMO_REPO = "fictional-org/shop-demo"
DEMO_TOKEN = "fake"
DEMO_MERGED = datetime(2026, 6, 3, 9, tzinfo=UTC)  # the demo PRs are merged in June 2026


def _diff(old: str, new: str) -> str:
    return f"@@ -1 +1 @@\n-{old}\n+{new}"


def demo_github(clock: Callable[[], float] = time.time) -> FakeGitHub:
    """A fictional repository with eight merged PRs of every provenance; answers the token `fake`.

    A fictional repository with six agent PRs (docs, logic, CI, auth, a migration, a linked issue),
    one bot PR and one human PR, merged in June 2026; answers the token `fake`.
    """
    fake = FakeGitHub(DEMO_REPO, clock=clock, token=DEMO_TOKEN)
    agent = [FakeCommit("Apply the change\n\nGraft-Agent: fictional-agent\nGraft-Model: demo-model-1")]
    changes = [
        ("Fix a typo in the README", [FakeFile("README.md", patch=_diff("teh shop", "the shop"))], ""),
        (
            "Round discounts half-even",
            [FakeFile("src/cart/discount.py", patch=_diff("return round(x)", "return round_half_even(x)"))],
            "Fixes #7",
        ),
        (
            "Cache the CI dependencies",
            [
                FakeFile(
                    ".github/workflows/ci.yml",
                    patch=_diff("- run: pip install .", "- uses: actions/cache@v4"),
                )
            ],
            "",
        ),
        (
            "Shorten the session lifetime",
            [FakeFile("src/auth/session.py", patch=_diff("MAX_AGE = 86400", "MAX_AGE = 3600"))],
            "",
        ),
        (
            "Add an index on orders.created_at",
            [
                FakeFile(
                    "migrations/0042_orders_created_at.sql",
                    status="added",
                    deletions=0,
                    patch="@@ -0,0 +1 @@\n+CREATE INDEX orders_created_at ON orders (created_at);",
                )
            ],
            "",
        ),
        (
            "Show prices with the currency sign",
            [
                FakeFile("src/cart/format.py", patch=_diff("return f'{p:.2f}'", "return f'{sign}{p:.2f}'")),
                FakeFile("docs/pricing.md", patch=_diff("Prices show two decimals.", "Prices show a sign.")),
            ],
            "",
        ),
    ]
    for i, (title, files, body) in enumerate(changes):
        at = DEMO_MERGED + timedelta(days=3 * i)
        fake.add_pull(
            FakePull(101 + i, title=title, body=body, updated_at=at, merged_at=at, files=files, commits=agent)
        )
    fake.add_issue(FakeIssue(7, title="Discounts round the wrong way", body="2.5 should round to 2."))
    bot_at = DEMO_MERGED + timedelta(days=1)
    fake.add_pull(
        FakePull(
            120,
            title="Bump a dependency",
            user_login="renovate[bot]",
            user_type="Bot",
            updated_at=bot_at,
            merged_at=bot_at,
            files=[FakeFile("requirements.txt", patch=_diff("httpx==0.27.0", "httpx==0.28.1"))],
        )
    )
    human_at = DEMO_MERGED + timedelta(days=2)
    fake.add_pull(FakePull(121, title="Hand-written change", updated_at=human_at, merged_at=human_at))
    return fake


def main(argv: list[str] | None = None) -> int:
    """Serve `demo_github()` on 127.0.0.1 until interrupted (Ctrl-C or SIGTERM)."""
    parser = argparse.ArgumentParser(
        prog="python -m graft_eval_pipeline_tests.fake_github",
        description="A fake GitHub API with fictional PRs, to try `graft-eval export` offline.",
    )
    parser.add_argument("--serve", action="store_true", help="serve the demo repository")
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (default: a free one)")
    args = parser.parse_args(argv)
    if not args.serve:
        parser.print_help()
        return 2
    fake = demo_github()
    with serve(fake.app, port=args.port) as url:
        print(f"fake GitHub API for {DEMO_REPO} on {url} (token: {DEMO_TOKEN}); Ctrl-C stops it")
        print(f"  export GITHUB_API_URL={url} GRAFT_EVAL_GITHUB_TOKEN={DEMO_TOKEN}", flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass
    print(f"served {len(fake.log)} request(s)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
