"""Bearer authentication of MCP clients on the HTTP transport.

:class:`ClientAuth` accepts a static shared token, or an HS256 JWT signed with a shared secret
whose ``aud`` is this server's resource URL and whose ``exp`` has not passed. It is wired through
the SDK's ``token_verifier`` and ``AuthSettings(validate_token_resource=True)``, so a missing or
bad token gets 401 with a ``WWW-Authenticate`` header pointing at the RFC 9728 metadata the SDK
serves. :func:`client_auth_from_options` turns the ``serve --auth-*`` options into one, or refuses
them: an authentication option that cannot be enforced never starts a server that lets every
request in.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import logging
import math
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeGuard
from urllib.parse import urlsplit

if TYPE_CHECKING:
    from mcp.server.auth.provider import AccessToken

logger = logging.getLogger("bridge")

DEFAULT_HTTP_PATH = "/mcp"
WILDCARD_BINDS = ("0.0.0.0", "::", "")
MIN_STATIC_TOKEN_LENGTH = 16
MIN_JWT_SECRET_BYTES = 32  # RFC 7518 §3.2: an HS256 key must be at least as long as the hash output
MAX_TOKEN_LENGTH = 8192
NBF_LEEWAY_SECONDS = 60
STATIC_TOKEN_CLIENT_ID = "static-token"


@dataclass(frozen=True, slots=True)
class ClientAuth:
    """Bearer-token authentication of MCP clients on the HTTP transport.

    ``resource_url`` is this server's canonical MCP URL (e.g. ``https://bridge.example.com/mcp``):
    a JWT's ``aud`` must equal it, and it is the resource advertised in the protected-resource
    metadata. At least one of ``tokens`` (static shared tokens) or ``jwt_secret`` (HS256 shared
    secret) must be given. ``jwt_issuer``, when set, must equal the JWT's ``iss``. ``issuer_url``
    is the authorization server named in the metadata [default: ``jwt_issuer``, else the origin of
    ``resource_url``]. Every token must carry all ``required_scopes`` (a static token carries them
    all), else 403 ``insufficient_scope``. Secrets are left out of ``repr``.
    """

    resource_url: str
    tokens: tuple[str, ...] = field(default=(), repr=False)
    jwt_secret: bytes | None = field(default=None, repr=False)
    jwt_issuer: str | None = None
    issuer_url: str | None = None
    required_scopes: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        parts = urlsplit(self.resource_url)
        if parts.scheme not in ("http", "https") or not parts.netloc or parts.query or parts.fragment:
            raise ValueError(f"resource URL must be an absolute http(s) URL without query: {self.resource_url!r}")
        if not self.tokens and self.jwt_secret is None:
            raise ValueError("client authentication needs a static token or a JWT secret")
        for token in self.tokens:
            if len(token) < MIN_STATIC_TOKEN_LENGTH or not _is_token68(token):
                raise ValueError(
                    f"a static client token must be at least {MIN_STATIC_TOKEN_LENGTH} visible characters "
                    "(letters, digits, -._~+/=)"
                )
        if self.jwt_secret is not None and len(self.jwt_secret) < MIN_JWT_SECRET_BYTES:
            raise ValueError(f"the JWT secret must be at least {MIN_JWT_SECRET_BYTES} bytes")

    @classmethod
    def from_env(
        cls,
        environ: Mapping[str, str],
        *,
        resource_url: str,
        token_env: str | None = None,
        jwt_secret_env: str | None = None,
        jwt_issuer: str | None = None,
        issuer_url: str | None = None,
        required_scopes: Sequence[str] = (),
    ) -> ClientAuth:
        """Read the static token and/or the JWT secret from the named environment variables.

        A named variable that is unset or empty is an error (``ValueError``), so a typo never
        silently turns authentication off.
        """

        def read(name: str) -> str:
            value = environ.get(name, "")
            if not value:
                raise ValueError(f"environment variable {name} is not set")
            return value

        return cls(
            resource_url=resource_url,
            tokens=(read(token_env),) if token_env else (),
            jwt_secret=read(jwt_secret_env).encode() if jwt_secret_env else None,
            jwt_issuer=jwt_issuer,
            issuer_url=issuer_url,
            required_scopes=tuple(required_scopes),
        )

    def authorization_server(self) -> str:
        if self.issuer_url:
            return self.issuer_url
        if self.jwt_issuer and urlsplit(self.jwt_issuer).scheme in ("http", "https"):
            return self.jwt_issuer
        parts = urlsplit(self.resource_url)
        return f"{parts.scheme}://{parts.netloc}"


def default_resource_url(host: str, port: int, path: str = DEFAULT_HTTP_PATH) -> str:
    """``http://HOST:PORT/PATH`` for a bound address (a wildcard bind is named as 127.0.0.1)."""
    name = "127.0.0.1" if host in WILDCARD_BINDS else host
    if ":" in name and not name.startswith("["):
        name = f"[{name}]"
    return f"http://{name}:{port}{path}"


_TOKEN68 = re.compile(r"^[A-Za-z0-9\-._~+/]+=*$")
_B64URL = re.compile(r"^[A-Za-z0-9_-]*$")


def _is_token68(value: str) -> bool:
    return _TOKEN68.fullmatch(value) is not None


def _b64url_encode(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _b64url_decode(text: str) -> bytes | None:
    if _B64URL.fullmatch(text) is None or len(text) % 4 == 1:
        return None
    try:
        data = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError):
        return None
    # Only the canonical spelling: non-zero padding bits would give one token several valid forms.
    return data if _b64url_encode(data) == text else None


def _json_object(data: bytes | None) -> dict[str, Any] | None:
    if data is None:
        return None
    try:
        value = json.loads(data)
    except (UnicodeDecodeError, ValueError):
        return None
    return value if isinstance(value, dict) else None


def mint_hs256_jwt(claims: Mapping[str, Any], secret: bytes) -> str:
    """Sign ``claims`` as a compact HS256 JWT (for operators handing out tokens, and for tests)."""
    header = _b64url_encode(json.dumps({"alg": "HS256", "typ": "JWT"}, separators=(",", ":")).encode())
    payload = _b64url_encode(json.dumps(dict(claims), separators=(",", ":")).encode())
    signing_input = f"{header}.{payload}".encode("ascii")
    signature = _b64url_encode(hmac.new(secret, signing_input, hashlib.sha256).digest())
    return f"{header}.{payload}.{signature}"


def _same_resource(a: str, b: str) -> bool:
    """Compare two http(s) URLs as the SDK does: scheme and host case-insensitive, default port implied."""

    def norm(url: str) -> tuple[str, str, int | None, str] | None:
        try:
            parts = urlsplit(url)
            port = parts.port
        except ValueError:
            return None
        scheme = parts.scheme.lower()
        if scheme not in ("http", "https") or not parts.hostname or parts.query or parts.fragment:
            return None
        default = 443 if scheme == "https" else 80
        return scheme, parts.hostname.lower(), None if port == default else port, parts.path.rstrip("/")

    left, right = norm(a), norm(b)
    return left is not None and left == right


def _is_number(value: object) -> TypeGuard[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def verify_hs256_jwt(
    token: str,
    secret: bytes,
    *,
    audience: str,
    issuer: str | None = None,
    now: float | None = None,
) -> tuple[dict[str, Any], str] | None:
    """The claims and the matching ``aud`` entry of a valid token, or None.

    Valid means: three base64url parts; header ``alg`` is ``HS256`` (``none`` and every other
    algorithm are refused) with no ``crit``; the HMAC-SHA256 signature matches (constant-time);
    ``exp`` is present and in the future; ``nbf``, when present, is not in the future (60 s leeway);
    ``aud`` (a string or a list) contains ``audience``; ``iss`` equals ``issuer`` when one is given.
    """
    if len(token) > MAX_TOKEN_LENGTH:
        return None
    parts = token.split(".")
    if len(parts) != 3:
        return None
    header = _json_object(_b64url_decode(parts[0]))
    if header is None or header.get("alg") != "HS256" or "crit" in header:
        return None
    signature = _b64url_decode(parts[2])
    expected = hmac.new(secret, f"{parts[0]}.{parts[1]}".encode("ascii"), hashlib.sha256).digest()
    if signature is None or not hmac.compare_digest(signature, expected):
        return None
    claims = _json_object(_b64url_decode(parts[1]))
    if claims is None:
        return None
    now = time.time() if now is None else now
    exp = claims.get("exp")
    if not _is_number(exp) or now >= exp:
        return None
    nbf = claims.get("nbf")
    if nbf is not None and (not _is_number(nbf) or now + NBF_LEEWAY_SECONDS < nbf):
        return None
    if issuer is not None and claims.get("iss") != issuer:
        return None
    aud = claims.get("aud")
    audiences = [aud] if isinstance(aud, str) else aud if isinstance(aud, list) else []
    matched = next((a for a in audiences if isinstance(a, str) and _same_resource(a, audience)), None)
    if matched is None:
        return None
    return claims, matched


def _scopes(claims: Mapping[str, Any]) -> list[str]:
    scope = claims.get("scope")
    if isinstance(scope, str):
        return scope.split()
    scp = claims.get("scp")
    if isinstance(scp, list):
        return [s for s in scp if isinstance(s, str)]
    if isinstance(scp, str):
        return scp.split()
    return []


class ClientTokenVerifier:
    """The SDK's ``TokenVerifier`` for a :class:`ClientAuth`: a static token or an HS256 JWT."""

    def __init__(self, auth: ClientAuth, *, clock: Callable[[], float] = time.time) -> None:
        self._auth = auth
        self._clock = clock
        # Compare digests, so every comparison takes the same time whatever the token's length.
        self._static = [hashlib.sha256(t.encode()).digest() for t in auth.tokens]

    async def verify_token(self, token: str) -> AccessToken | None:
        from mcp.server.auth.provider import AccessToken

        auth = self._auth
        if not token or len(token) > MAX_TOKEN_LENGTH:
            return None
        digest = hashlib.sha256(token.encode("utf-8", "surrogateescape")).digest()
        static_match = False
        for known in self._static:
            static_match |= hmac.compare_digest(digest, known)
        if static_match:
            return AccessToken(
                token=token,
                client_id=STATIC_TOKEN_CLIENT_ID,
                scopes=list(auth.required_scopes),
                resource=auth.resource_url,
            )
        if auth.jwt_secret is None:
            logger.info("refused a client bearer token: not a configured static token")
            return None
        verified = verify_hs256_jwt(
            token, auth.jwt_secret, audience=auth.resource_url, issuer=auth.jwt_issuer, now=self._clock()
        )
        if verified is None:
            logger.info("refused a client bearer token: invalid, expired, or issued for another audience")
            return None
        claims, audience = verified
        subject = claims.get("sub") if isinstance(claims.get("sub"), str) else None
        client_id = next(
            (v for k in ("client_id", "azp", "sub") if isinstance(v := claims.get(k), str) and v),
            "jwt",
        )
        issuer = claims.get("iss")
        return AccessToken(
            token=token,
            client_id=client_id,
            scopes=_scopes(claims),
            expires_at=int(claims["exp"]),
            resource=audience,
            subject=subject,
            claims={"iss": issuer} if isinstance(issuer, str) else None,
        )


@dataclass(frozen=True, slots=True)
class AuthOptions:
    """The ``serve --auth-*`` options as given (None or empty: not given)."""

    token_env: str | None = None
    jwt_secret_env: str | None = None
    resource_url: str | None = None
    jwt_issuer: str | None = None
    issuer_url: str | None = None
    required_scopes: tuple[str, ...] = ()

    def given(self) -> list[str]:
        """The flags that were given, spelled as on the command line."""
        names = {
            "token_env": "--auth-token-env",
            "jwt_secret_env": "--auth-jwt-secret-env",
            "resource_url": "--auth-resource-url",
            "jwt_issuer": "--auth-jwt-issuer",
            "issuer_url": "--auth-issuer-url",
            "required_scopes": "--auth-required-scope",
        }
        return [flag for attr, flag in names.items() if getattr(self, attr)]


def client_auth_from_options(
    options: AuthOptions, environ: Mapping[str, str], *, transport: str, host: str, port: int
) -> ClientAuth | None:
    """The client authentication the options ask for, or None when no ``--auth-*`` option is given.

    Every option given is either enforced or refused: an option that would be silently ignored
    (a JWT issuer or scope with no way to verify JWTs; any option on stdio) is a ``ValueError``
    with one line naming what is missing, so ``serve`` never starts open while the operator
    believes it is protected.
    """
    given = options.given()
    if not given:
        return None
    if transport != "http":
        raise ValueError(f"{', '.join(given)}: client authentication applies to --transport http only")
    if not options.token_env and not options.jwt_secret_env:
        raise ValueError(
            f"{', '.join(given)} given, but nothing can verify a token: add --auth-jwt-secret-env NAME "
            "(HS256 JWTs) or --auth-token-env NAME (a static token)"
        )
    if not options.jwt_secret_env:
        jwt_only = [flag for flag in ("--auth-jwt-issuer", "--auth-required-scope") if flag in given]
        if jwt_only:
            raise ValueError(
                f"{', '.join(jwt_only)} checks JWTs, but only a static token is accepted: "
                "add --auth-jwt-secret-env NAME or drop the option"
            )
    return ClientAuth.from_env(
        environ,
        resource_url=options.resource_url or default_resource_url(host, port),
        token_env=options.token_env,
        jwt_secret_env=options.jwt_secret_env,
        jwt_issuer=options.jwt_issuer,
        issuer_url=options.issuer_url,
        required_scopes=options.required_scopes,
    )
