"""A small in-process authorization server for tests: signing keys, a JWKS, introspection.

The real one (npm ``oidc-provider``) runs in the end-to-end tests; this one lets unit and
in-memory tests sign tokens with any key and any claims, count JWKS fetches, and revoke opaque
tokens. It is an ASGI app reached through ``httpx.ASGITransport`` (a fake at the transport).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs

import httpx
import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa

ISSUER = "https://as.test"
JWKS_URL = f"{ISSUER}/jwks"
INTROSPECTION_URL = f"{ISSUER}/introspect"
TOKEN_URL = f"{ISSUER}/token"
EXCHANGE_GRANT = "urn:ietf:params:oauth:grant-type:token-exchange"
BRIDGE_CLIENT = ("bridge", "bridge-secret-0123456789")

Scope = MutableMapping[str, Any]


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


@dataclass
class Key:
    kid: str
    alg: str
    private: Any

    @classmethod
    def make(cls, alg: str, kid: str | None = None) -> Key:
        private: Any
        if alg == "RS256":
            private = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        elif alg == "ES256":
            private = ec.generate_private_key(ec.SECP256R1())
        elif alg == "EdDSA":
            private = ed25519.Ed25519PrivateKey.generate()
        else:
            raise ValueError(alg)
        return cls(kid or f"{alg.lower()}-{id(private) % 10_000}", alg, private)

    def jwk(self) -> dict[str, Any]:
        data = json.loads(jwt.get_algorithm_by_name(self.alg).to_jwk(self.private.public_key()))
        return {**data, "kid": self.kid, "alg": self.alg, "use": "sig"}

    def public_pem(self) -> bytes:
        return self.private.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )


def hs256_with(secret: bytes, claims: dict[str, Any], kid: str) -> str:
    """An HS256 token signed with ``secret`` by hand (PyJWT refuses a PEM key as an HMAC secret)."""
    header = _b64(json.dumps({"alg": "HS256", "typ": "JWT", "kid": kid}).encode())
    payload = _b64(json.dumps(claims).encode())
    signature = hmac.new(secret, f"{header}.{payload}".encode(), hashlib.sha256).digest()
    return f"{header}.{payload}.{_b64(signature)}"


@dataclass
class FakeAuthorizationServer:
    """JWKS at ``/jwks``; RFC 7662 introspection of opaque tokens at ``/introspect``."""

    audience: str
    keys: list[Key] = field(
        default_factory=lambda: [Key.make("RS256", "rs"), Key.make("ES256", "es"), Key.make("EdDSA", "ed")]
    )
    jwks_fetches: int = 0
    introspections: int = 0
    opaque: dict[str, dict[str, Any]] = field(default_factory=dict)
    exchanges: list[dict[str, str]] = field(default_factory=list)
    exchange_status: int = 200  # set to 400 to refuse every exchange
    jwks_status: int = 200  # set to 503 for a JWKS endpoint that is down
    raw: dict[str, bytes] = field(default_factory=dict)  # path -> the body answered as is (hostile answers)
    expires_in: Any = 300  # what an exchange answers as expires_in

    def key(self, alg: str) -> Key:
        return next(k for k in self.keys if k.alg == alg)

    def token(
        self, *, alg: str = "RS256", key: Key | None = None, headers: dict[str, Any] | None = None, **claims: Any
    ) -> str:
        key = key or self.key(alg)
        body = {"iss": ISSUER, "aud": self.audience, "exp": time.time() + 300, "iat": time.time(), "sub": "alice"}
        body.update(claims)
        body = {k: v for k, v in body.items() if v is not None}
        return jwt.encode(body, key.private, algorithm=key.alg, headers={"kid": key.kid, **(headers or {})})

    def issue_opaque(self, value: str | None = None, **claims: Any) -> str:
        value = value or _b64(hashlib.sha256(repr((time.time(), len(self.opaque))).encode()).digest())
        self.opaque[value] = {
            "active": True,
            "iss": ISSUER,
            "aud": self.audience,
            "exp": int(time.time()) + 300,
            "sub": "alice",
            "client_id": "cli",
            **claims,
        }
        self.opaque[value] = {k: v for k, v in self.opaque[value].items() if v is not None}  # None: left out
        return value

    def _exchange(self, headers: dict[bytes, bytes], form: dict[str, str]) -> tuple[int, dict[str, Any]]:
        expected = "Basic " + base64.b64encode(":".join(BRIDGE_CLIENT).encode()).decode()
        if headers.get(b"authorization", b"").decode() != expected:
            return 401, {"error": "invalid_client"}
        if form.get("grant_type") != EXCHANGE_GRANT or self.exchange_status != 200:
            return self.exchange_status if self.exchange_status != 200 else 400, {"error": "invalid_grant"}
        self.exchanges.append(form)
        try:
            claims = self.verify(form.get("subject_token", ""), self.audience)
        except jwt.PyJWTError:
            return 400, {"error": "invalid_grant", "error_description": "bad subject token"}
        audience = form.get("audience", "")
        token = self.token(
            aud=audience, sub=claims["sub"], scope=form.get("scope"), client_id="bridge", act={"sub": "bridge"}
        )
        return 200, {
            "access_token": token,
            "issued_token_type": "urn:ietf:params:oauth:token-type:access_token",
            "token_type": "Bearer",
            "expires_in": self.expires_in,
        }

    def verify(self, token: str, audience: str) -> dict[str, Any]:
        """Claims of a token this server signed for ``audience`` (raises ``jwt.PyJWTError`` otherwise)."""
        kid = jwt.get_unverified_header(token).get("kid")
        key = next(k for k in self.keys if k.kid == kid)
        return jwt.decode(token, key.private.public_key(), algorithms=[key.alg], audience=audience, issuer=ISSUER)

    def revoke(self, token: str) -> None:
        self.opaque[token]["active"] = False

    def transport(self) -> httpx.ASGITransport:
        return httpx.ASGITransport(app=self)

    async def __call__(
        self, scope: Scope, receive: Callable[[], Awaitable[Any]], send: Callable[[Any], Awaitable[None]]
    ) -> None:
        assert scope["type"] == "http"
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        status, answer = 404, {"error": "not_found"}
        if scope["path"] == "/jwks":
            self.jwks_fetches += 1
            status, answer = self.jwks_status, {"keys": [k.jwk() for k in self.keys]}
        elif scope["path"] == "/introspect" and scope["method"] == "POST":
            self.introspections += 1
            headers = dict(scope["headers"])
            expected = "Basic " + base64.b64encode(":".join(BRIDGE_CLIENT).encode()).decode()
            if headers.get(b"authorization", b"").decode() != expected:
                status, answer = 401, {"error": "invalid_client"}
            else:
                token = parse_qs(body.decode()).get("token", [""])[0]
                status, answer = 200, self.opaque.get(token, {"active": False})
        elif scope["path"] == "/token" and scope["method"] == "POST":
            status, answer = self._exchange(
                dict(scope["headers"]), {k: v[0] for k, v in parse_qs(body.decode()).items()}
            )
        payload = json.dumps(answer).encode()
        if scope["path"] in self.raw:
            status, payload = 200, self.raw[scope["path"]]
        await send(
            {"type": "http.response.start", "status": status, "headers": [(b"content-type", b"application/json")]}
        )
        await send({"type": "http.response.body", "body": payload})
