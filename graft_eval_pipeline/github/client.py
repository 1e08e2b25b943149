"""A small synchronous GitHub REST client over httpx (spec E10, E16).

Sync on purpose: the export is sequential (rate limits make concurrency pointless), and the CLI
and the Dagster assets both call it from plain functions. Tests inject `transport`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import httpx

from graft_eval_pipeline.github.auth import Auth
from graft_eval_pipeline.github.errors import GitHubError, classify_status
from graft_eval_pipeline.github.rate_limit import RateLimiter, is_rate_limited

DEFAULT_API_URL = "https://api.github.com"
USER_AGENT = "graft-eval-export/1"
API_VERSION = "2022-11-28"

Params = Mapping[str, str | int]


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
            try:
                return self._http.request(
                    method, url, params=params, headers={"Authorization": authorization}
                )
            except httpx.TransportError as err:
                raise GitHubError(
                    "network", None, f"GitHub API unreachable ({type(err).__name__}) for {method} {url}"
                ) from None

        response = self.limiter.call(send)
        if response.status_code >= 400:
            where = f"{method} {response.request.url.path}"
            kind = "rate_limited" if is_rate_limited(response) else classify_status(response.status_code)
            raise GitHubError(
                kind, response.status_code, f"GitHub API answered {response.status_code} for {where}"
            )
        return response

    def _post_token(self, path: str, authorization: str) -> Any:
        return self._request("POST", path, authorization=authorization).json()

    def get(self, url: str, params: Params | None = None) -> httpx.Response:
        return self._request(
            "GET", url, authorization=self._auth.authorization(self._post_token), params=params
        )

    def get_json(self, url: str, params: Params | None = None) -> Any:
        return self.get(url, params).json()

    def pages(self, url: str, params: Params | None = None) -> Iterator[tuple[list[Any], bool]]:
        """Yield (page items, has next) following `Link: rel="next"` (absolute URLs, as GitHub sends)."""
        response = self.get(url, params)
        while True:
            next_link = response.links.get("next", {}).get("url")
            yield response.json(), next_link is not None
            if next_link is None:
                return
            response = self.get(next_link)
