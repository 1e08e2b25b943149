"""Replays real recorded GitHub API answers (octokit/fixtures scenarios) through httpx.MockTransport.

The fake GitHub (`fake_github.py`) is this project's model of the API; a replay checks the client
against what GitHub itself sent: status, raw headers (`Location`, `Link`, `x-ratelimit-*`) and
body. A scenario (`github/data/octokit-fixtures/<name>.raw-fixture.json`) is a list of recorded exchanges;
each request is answered by the first unserved exchange with the same method, origin, path and
query (in any order). A request the scenario never recorded fails the test loudly. The body is
re-serialised from the recorded JSON, so `Content-Length` is dropped and httpx sets its own.
Requests are kept (with headers) so tests can check what the client sent on each hop.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import httpx

FIXTURES = Path(__file__).parent / "github" / "data" / "octokit-fixtures"
_DROPPED_HEADERS = frozenset({"content-length", "transfer-encoding", "connection"})


@dataclass(frozen=True)
class Exchange:
    """One recorded request and GitHub's answer."""

    method: str
    origin: str
    path: str
    query: tuple[tuple[str, str], ...]
    status: int
    headers: tuple[tuple[str, str], ...]
    body: Any

    def matches(self, request: httpx.Request) -> bool:
        url = request.url
        origin = f"{url.scheme}://{url.host}:{url.port or 443}"
        query = tuple(sorted(parse_qsl(url.query.decode("ascii"), keep_blank_values=True)))
        return (request.method, origin, url.path, query) == (self.method, self.origin, self.path, self.query)

    def response(self) -> httpx.Response:
        headers = [(k, v) for k, v in self.headers if k.lower() not in _DROPPED_HEADERS]
        content = b"" if self.body == "" else json.dumps(self.body).encode()
        return httpx.Response(self.status, headers=headers, content=content)


def load_scenario(name: str) -> list[Exchange]:
    """The exchanges of `github/data/octokit-fixtures/<name>.raw-fixture.json`, in recorded order."""
    exchanges = []
    for entry in json.loads((FIXTURES / f"{name}.raw-fixture.json").read_text(encoding="utf-8")):
        path = urlsplit(entry["path"])
        raw = entry["rawHeaders"]
        exchanges.append(
            Exchange(
                method=entry["method"].upper(),
                origin=entry["scope"],
                path=path.path,
                query=tuple(sorted(parse_qsl(path.query, keep_blank_values=True))),
                status=entry["status"],
                headers=tuple(zip(raw[::2], raw[1::2], strict=True)),
                body=entry["response"],
            )
        )
    return exchanges


class Replay:
    """Serves one scenario; `requests` holds every request received, in order."""

    def __init__(self, exchanges: list[Exchange]) -> None:
        self._unserved = list(exchanges)
        self.requests: list[httpx.Request] = []

    @classmethod
    def scenario(cls, name: str) -> Replay:
        return cls(load_scenario(name))

    def transport(self) -> httpx.MockTransport:
        return httpx.MockTransport(self._handle)

    def _handle(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        for i, exchange in enumerate(self._unserved):
            if exchange.matches(request):
                del self._unserved[i]
                return exchange.response()
        raise AssertionError(f"the recorded scenario has no answer for {request.method} {request.url}")
