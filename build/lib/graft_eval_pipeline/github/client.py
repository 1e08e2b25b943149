"""A small synchronous GitHub REST client over httpx (spec E10, E16).

Sync on purpose: the export is sequential (rate limits make concurrency pointless), and the CLI
and the Dagster assets both call it from plain functions. Tests inject `transport`.

GET follows redirects (301/302/307/308), as GitHub asks of clients: a renamed repository or a
transferred issue answers 301 with the new `Location`. httpx drops the `Authorization` header
when a hop leaves the origin (scheme, host and port) and stops after `MAX_REDIRECTS` hops; the
`Link: rel="next"` pages are followed only on the API's own origin, so the token never leaves it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import httpx

from graft_eval_pipeline.github.auth import Auth
from graft_eval_pipeline.github.errors import ErrorKind, GitHubError, classify_status
from graft_eval_pipeline.github.rate_limit import (
    RETRYABLE_TRANSPORT_ERRORS,
    TRANSIENT_RETRIES,
    RateLimiter,
    is_rate_limited,
    is_transient,
)

DEFAULT_API_URL = "https://api.github.com"
USER_AGENT = "graft-eval-export/1"
API_VERSION = "2022-11-28"
MAX_REDIRECTS = 5

Params = Mapping[str, str | int]


def _where(method: str, url: str | httpx.URL) -> str:
    """`METHOD /path` for messages: the route, never a query or a body."""
    return f"{method} {httpx.URL(url).path}"


def _origin(url: httpx.URL) -> tuple[str, str, int | None]:
    return url.scheme, url.host, url.port or {"http": 80, "https": 443}.get(url.scheme)


class GitHubClient:
    def __init__(
        self,
        *,
        auth: Auth,
        limiter: RateLimiter,
        base_url: str = DEFAULT_API_URL,
        transport: httpx.BaseTransport | None = None,
        timeout_s: float = 30.0,
    ) -> None:
        self.limiter = limiter
        self._auth = auth
        self._http = httpx.Client(
            base_url=base_url.rstrip("/"),
            transport=transport,
            timeout=timeout_s,
            max_redirects=MAX_REDIRECTS,
            headers={
                "Accept": "application/vnd.github+json",
                "X-GitHub-Api-Version": API_VERSION,
                "User-Agent": USER_AGENT,
            },
        )

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> GitHubClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _request(
        self, method: str, url: str, *, authorization: str, params: Params | None = None
    ) -> httpx.Response:
        def send() -> httpx.Response:
            return self._http.request(
                method,
                url,
                params=params,
                headers={"Authorization": authorization},
                follow_redirects=method == "GET",
            )

        try:
            response = self.limiter.call(send)
        except httpx.TooManyRedirects:
            raise GitHubError(
                "unexpected",
                None,
                f"GitHub API redirected {_where(method, url)} more than {MAX_REDIRECTS} times",
            ) from None
        except RETRYABLE_TRANSPORT_ERRORS as err:
            raise GitHubError(
                "network",
                None,
                f"GitHub API unreachable ({type(err).__name__}) for {_where(method, url)}{self._gave_up()}",
            ) from None
        except httpx.TransportError as err:
            raise GitHubError(
                "http",
                None,
                f"GitHub API request failed ({type(err).__name__}) for {_where(method, url)}; "
                "check GITHUB_API_URL",
            ) from None
        status = response.status_code
        where = _where(method, response.request.url)
        if status >= 400:
            if is_transient(response):
                raise GitHubError(
                    "server",
                    status,
                    f"GitHub API answered {status} for {where}{self._gave_up()}",
                )
            kind: ErrorKind = "rate_limited" if is_rate_limited(response) else classify_status(status)
            raise GitHubError(kind, status, f"GitHub API answered {status} for {where}")
        if status >= 300:
            reason = (
                "a redirect without a Location" if method == "GET" else "a redirect (only GET follows them)"
            )
            raise GitHubError("unexpected", status, f"GitHub API answered {status} for {where}: {reason}")
        return response

    def _gave_up(self) -> str:
        retries = self.limiter.last_transient_retries
        limit = "" if retries >= TRANSIENT_RETRIES else " (the next wait would pass --max-wait)"
        return f" after {retries} retries{limit}"

    def _json(self, response: httpx.Response) -> Any:
        try:
            return response.json()
        except ValueError:
            where = _where(response.request.method, response.request.url)
            raise GitHubError(
                "unexpected",
                response.status_code,
                f"GitHub API answered {where} with a body that is not JSON",
            ) from None

    def _post_token(self, path: str, authorization: str) -> Any:
        return self._json(self._request("POST", path, authorization=authorization))

    def get(self, url: str, params: Params | None = None) -> httpx.Response:
        return self._request(
            "GET", url, authorization=self._auth.authorization(self._post_token), params=params
        )

    def get_json(self, url: str, params: Params | None = None) -> Any:
        return self._json(self.get(url, params))

    def pages(self, url: str, params: Params | None = None) -> Iterator[tuple[list[Any], bool]]:
        """Yield (page items, has next) following `Link: rel="next"` (absolute URLs, as GitHub sends)."""
        response = self.get(url, params)
        while True:
            page = self._json(response)
            where = _where("GET", response.request.url)
            if not isinstance(page, list):
                raise GitHubError(
                    "unexpected", response.status_code, f"GitHub API answered {where} with no list of items"
                )
            next_link = response.links.get("next", {}).get("url")
            yield page, next_link is not None
            if next_link is None:
                return
            if _origin(self._http.base_url.join(next_link)) != _origin(self._http.base_url):
                raise GitHubError(
                    "unexpected", None, f"GitHub API answered {where} with a next page on another host"
                )
            response = self.get(next_link)
