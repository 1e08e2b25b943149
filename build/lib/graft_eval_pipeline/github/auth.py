"""GitHub authentication for the export (spec E16): a read-only token, or a GitHub App.

The App path signs an RS256 JWT with `cryptography` (no PyJWT needed), exchanges it for an
installation token, and refreshes that token shortly before it expires.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa

from graft_eval_pipeline.github.errors import GitHubError

# POST path, bearer value → JSON answer; supplied by the client so the exchange is rate limited too.
TokenPost = Callable[[str, str], Any]

JWT_BACKDATE_S = 60  # GitHub's advice against clock drift
JWT_LIFETIME_S = 540  # GitHub allows at most 10 minutes
REFRESH_MARGIN_S = 300


class Auth(Protocol):
    def authorization(self, post: TokenPost) -> str:
        """The Authorization header value for the next request."""
        ...


@dataclass(frozen=True)
class TokenAuth:
    token: str

    def authorization(self, post: TokenPost) -> str:
        return f"Bearer {self.token}"


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def load_app_private_key(pem: bytes) -> rsa.RSAPrivateKey:
    key = serialization.load_pem_private_key(pem, password=None)
    if not isinstance(key, rsa.RSAPrivateKey):
        raise ValueError("the GitHub App private key must be an RSA key")
    return key


def app_jwt(app_id: str, key: rsa.RSAPrivateKey, now: float) -> str:
    """RS256 JWT that authenticates as the App itself (iss = App id)."""
    header = {"alg": "RS256", "typ": "JWT"}
    payload = {"iat": int(now) - JWT_BACKDATE_S, "exp": int(now) + JWT_LIFETIME_S, "iss": app_id}
    signing_input = ".".join(
        _b64url(json.dumps(part, separators=(",", ":")).encode()) for part in (header, payload)
    )
    signature = key.sign(signing_input.encode("ascii"), padding.PKCS1v15(), hashes.SHA256())
    return f"{signing_input}.{_b64url(signature)}"


class AppAuth:
    """Installation token for one installation, fetched lazily and refreshed before expiry."""

    def __init__(
        self, app_id: str, private_key: rsa.RSAPrivateKey, installation_id: int, now: Callable[[], float]
    ) -> None:
        self.app_id = app_id
        self.installation_id = installation_id
        self._key = private_key
        self._now = now
        self._token: str | None = None
        self._expires_at = 0.0

    def authorization(self, post: TokenPost) -> str:
        if self._token is None or self._now() >= self._expires_at - REFRESH_MARGIN_S:
            jwt = app_jwt(self.app_id, self._key, self._now())
            path = f"/app/installations/{self.installation_id}/access_tokens"
            answer = post(path, f"Bearer {jwt}")
            try:
                token, expires_at = answer["token"], answer["expires_at"]
                expires = datetime.fromisoformat(str(expires_at).replace("Z", "+00:00"))
                if not isinstance(token, str) or not token:
                    raise TypeError
            except (KeyError, TypeError, ValueError):
                raise GitHubError(
                    "unexpected", None, f"GitHub API answered POST {path} with no installation token"
                ) from None
            self._token = token
            self._expires_at = expires.timestamp()
        return f"Bearer {self._token}"
