"""Bearer authentication of MCP clients: the bridge as an OAuth 2.1 resource server.

Accepted, in this order: a static shared token (simple single-team setups); a JWT access token
signed by the authorization server (verified with PyJWT against its JWKS, ``bridge.jwks``); an
opaque token, asked about at the authorization server's RFC 7662 introspection endpoint
(``bridge.introspection``). Every accepted token was issued by the configured issuer for this
server (``aud``, RFC 8707), is within its validity (``exp``/``nbf`` with a small leeway), and is
read only from the ``Authorization`` header. It is wired through the SDK's ``token_verifier``,
so a missing or bad token gets 401 with a ``WWW-Authenticate`` header naming the RFC 9728
metadata (``bridge.resource_metadata``).

:func:`client_auth_from_options` turns the ``serve --auth-*`` options into a :class:`ClientAuth`,
or refuses them: an option that cannot be enforced never starts a server that lets requests in.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar
from urllib.parse import urlsplit

import httpx
import jwt

from bridge.introspection import Introspector
from bridge.jwks import ALGORITHMS, JwksKeys
from bridge.outbound import Endpoint, check_config_url

if TYPE_CHECKING:
    from mcp.server.auth.provider import AccessToken

logger = logging.getLogger("bridge")

DEFAULT_HTTP_PATH = "/mcp"
WILDCARD_BINDS = ("0.0.0.0", "::", "")
MIN_STATIC_TOKEN_LENGTH = 16
MAX_TOKEN_LENGTH = 8192
LEEWAY_SECONDS = 60  # clock skew allowed on exp and nbf
STATIC_TOKEN_CLIENT_ID = "static-token"
REMEMBER_SECONDS = 300.0  # a verified token is trusted this long at most without checking again
MAX_REMEMBERED = 10_000

_TOKEN68 = re.compile(r"^[A-Za-z0-9\-._~+/]+=*$")


@dataclass(frozen=True, slots=True)
class ClientAuth:
    """How MCP clients are authenticated on the HTTP transport.

    ``resource_url`` is this server's canonical MCP URL: a token's audience must name it, and it
    is the resource of the protected-resource metadata. At least one way to verify is needed:
    ``tokens`` (static), ``jwks_url`` (JWTs; needs ``issuer``), or ``introspection_url`` (opaque
    tokens; needs ``client_id``/``client_secret``, the bridge's own confidential client).
    ``authorization_servers`` are named in the metadata [default: ``issuer``]. Every token must
    carry ``required_scopes``; ``scopes_supported`` (the scopes the tools ask for) are advertised.
    ``transport`` replaces the network for the JWKS and introspection calls (tests).
    """

    resource_url: str
    tokens: tuple[str, ...] = field(default=(), repr=False)
    issuer: str | None = None
    jwks_url: str | None = None
    introspection_url: str | None = None
    client_id: str | None = None
    client_secret: str | None = field(default=None, repr=False)
    authorization_servers: tuple[str, ...] = ()
    required_scopes: tuple[str, ...] = ()
    scopes_supported: tuple[str, ...] = ()
    transport: httpx.AsyncBaseTransport | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        parts = urlsplit(self.resource_url)
        if parts.scheme not in ("http", "https") or not parts.netloc or parts.query or parts.fragment:
            raise ValueError(f"resource URL must be an absolute http(s) URL without query: {self.resource_url!r}")
        if not (self.tokens or self.jwks_url or self.introspection_url):
            raise ValueError("client authentication needs a static token, a JWKS URL or an introspection URL")
        for token in self.tokens:
            if len(token) < MIN_STATIC_TOKEN_LENGTH or _TOKEN68.fullmatch(token) is None:
                raise ValueError(
                    f"a static client token must be at least {MIN_STATIC_TOKEN_LENGTH} visible characters "
                    "(letters, digits, -._~+/=)"
                )
        if self.jwks_url:
            check_config_url(self.jwks_url, "the JWKS URL")
            if not self.issuer:
                raise ValueError("JWT verification needs the issuer (--auth-issuer): tokens of any issuer would pass")
        if self.introspection_url:
            check_config_url(self.introspection_url, "the introspection URL")
            if not (self.client_id and self.client_secret):
                raise ValueError("token introspection needs the bridge's client id and secret")

    def authorization_server(self) -> str:
        if self.authorization_servers:
            return self.authorization_servers[0]
        if self.issuer and urlsplit(self.issuer).scheme in ("http", "https"):
            return self.issuer
        parts = urlsplit(self.resource_url)
        return f"{parts.scheme}://{parts.netloc}"


def default_resource_url(host: str, port: int, path: str = DEFAULT_HTTP_PATH) -> str:
    """``http://HOST:PORT/PATH`` for a bound address (a wildcard bind is named as 127.0.0.1)."""
    name = "127.0.0.1" if host in WILDCARD_BINDS else host
    if ":" in name and not name.startswith("["):
        name = f"[{name}]"
    return f"http://{name}:{port}{path}"


def same_resource(a: str, b: str) -> bool:
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


def scopes_of(claims: Mapping[str, Any]) -> list[str]:
    scope = claims.get("scope")
    if isinstance(scope, str):
        return scope.split()
    scp = claims.get("scp")
    if isinstance(scp, list):
        return [s for s in scp if isinstance(s, str)]
    if isinstance(scp, str):
        return scp.split()
    return []


def audience_match(claims: Mapping[str, Any], resource_url: str) -> str | None:
    aud = claims.get("aud")
    audiences = [aud] if isinstance(aud, str) else aud if isinstance(aud, list) else []
    return next((a for a in audiences if isinstance(a, str) and same_resource(a, resource_url)), None)


def access_token(token: str, claims: Mapping[str, Any], audience: str) -> AccessToken:
    from mcp.server.auth.provider import AccessToken

    subject = claims.get("sub") if isinstance(claims.get("sub"), str) else None
    client_id = next(
        (v for k in ("client_id", "azp", "sub") if isinstance(v := claims.get(k), str) and v),
        "unknown-client",
    )
    issuer = claims.get("iss")
    exp = claims.get("exp")
    return AccessToken(
        token=token,
        client_id=client_id,
        scopes=scopes_of(claims),
        # The SDK refuses a token past expires_at with no leeway of its own: the leeway is added here.
        expires_at=int(exp) + LEEWAY_SECONDS if isinstance(exp, int | float) and not isinstance(exp, bool) else None,
        resource=audience,
        subject=subject,
        claims={"iss": issuer} if isinstance(issuer, str) else None,
    )


class ClientTokenVerifier:
    """The SDK's ``TokenVerifier`` for a :class:`ClientAuth`."""

    def __init__(self, auth: ClientAuth) -> None:
        self._auth = auth
        # Compare digests, so every comparison takes the same time whatever the token's length.
        self._static = [hashlib.sha256(t.encode()).digest() for t in auth.tokens]
        # digest -> (until, token): a verified token is not verified again on every request.
        self._accepted: dict[bytes, tuple[float, AccessToken]] = {}
        self.jwks = (
            JwksKeys(Endpoint.configured(auth.jwks_url, "the JWKS URL", transport=auth.transport))
            if auth.jwks_url
            else None
        )
        self.introspector = (
            Introspector(
                Endpoint.configured(auth.introspection_url, "the introspection URL", transport=auth.transport),
                client=(auth.client_id or "", auth.client_secret or ""),
                resource_url=auth.resource_url,
                issuer=auth.issuer,
            )
            if auth.introspection_url
            else None
        )

    async def verify_token(self, token: str) -> AccessToken | None:
        """The verified token, or None. Accepted tokens are remembered (bounded) until they expire."""
        if not token or len(token) > MAX_TOKEN_LENGTH:
            return None
        digest = hashlib.sha256(token.encode("utf-8", "surrogateescape")).digest()
        now = time.time()
        hit = self._accepted.get(digest)
        if hit is not None:
            if hit[0] > now:
                return hit[1]
            del self._accepted[digest]
        verified = await self._verify(token, digest)
        # Opaque tokens are not kept here: the introspector keeps them, no longer than revocation allows.
        if verified is not None and (verified.client_id == STATIC_TOKEN_CLIENT_ID or token.count(".") == 2):
            until = now + REMEMBER_SECONDS
            if verified.expires_at is not None:
                until = min(until, float(verified.expires_at))
            if len(self._accepted) >= MAX_REMEMBERED:
                self._accepted.pop(next(iter(self._accepted)))
            self._accepted[digest] = (until, verified)
        return verified

    async def scopes(self, token: str) -> frozenset[str] | None:
        verified = await self.verify_token(token)
        return None if verified is None else frozenset(verified.scopes)

    async def _verify(self, token: str, digest: bytes) -> AccessToken | None:
        from mcp.server.auth.provider import AccessToken

        auth = self._auth
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
        if self.jwks is not None and token.count(".") == 2:
            return await self._jwt(token)
        if self.introspector is not None:
            return await self.introspector.verify(token)
        logger.info("refused a client bearer token: not a configured static token")
        return None

    async def _jwt(self, token: str) -> AccessToken | None:
        assert self.jwks is not None
        auth = self._auth
        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError:
            return _refused("not a well-formed JWT")
        alg, kid = header.get("alg"), header.get("kid")
        if "crit" in header or alg not in ALGORITHMS:
            return _refused("its algorithm is not accepted")
        key = await self.jwks.key(kid if isinstance(kid, str) else None)
        if key is None:
            return _refused("no signing key of the issuer has its key id")
        if key.algorithm != alg:
            return _refused("its algorithm does not match its key")  # the key decides, never the token
        try:
            claims = jwt.decode(
                token,
                key.key,  # type: ignore[arg-type]
                algorithms=[key.algorithm],
                issuer=auth.issuer,
                leeway=LEEWAY_SECONDS,
                options={"require": ["exp", "iss", "aud"], "verify_aud": False},
            )
        except jwt.PyJWTError as exc:
            return _refused(type(exc).__name__)
        audience = audience_match(claims, auth.resource_url)
        if audience is None:
            return _refused("it was issued for another resource")
        return access_token(token, claims, audience)


def _refused(why: str) -> AccessToken | None:
    logger.info("refused a client bearer token: %s", why)
    return None


# --------------------------------------------------------------------------- serve options


@dataclass(frozen=True, slots=True)
class AuthOptions:
    """The ``serve --auth-*`` options as given (None or empty: not given)."""

    token_env: str | None = None
    resource_url: str | None = None
    issuer: str | None = None
    jwks_url: str | None = None
    introspection_url: str | None = None
    client_id_env: str | None = None
    client_secret_env: str | None = None
    issuer_url: str | None = None
    required_scopes: tuple[str, ...] = ()

    FLAGS: ClassVar[dict[str, str]] = {
        "token_env": "--auth-token-env",
        "resource_url": "--auth-resource-url",
        "issuer": "--auth-issuer",
        "jwks_url": "--auth-jwks-url",
        "introspection_url": "--auth-introspection-url",
        "client_id_env": "--auth-client-id-env",
        "client_secret_env": "--auth-client-secret-env",
        "issuer_url": "--auth-issuer-url",
        "required_scopes": "--auth-required-scope",
    }

    def given(self) -> list[str]:
        """The flags that were given, spelled as on the command line."""
        return [flag for attr, flag in self.FLAGS.items() if getattr(self, attr)]


def _read(environ: Mapping[str, str], name: str | None) -> str | None:
    if not name:
        return None
    value = environ.get(name, "")
    if not value:
        raise ValueError(f"environment variable {name} is not set")
    return value


def client_auth_from_options(
    options: AuthOptions,
    environ: Mapping[str, str],
    *,
    transport: str,
    host: str,
    port: int,
    scopes_supported: Sequence[str] = (),
) -> ClientAuth | None:
    """The client authentication the options ask for, or None when no ``--auth-*`` option is given.

    Every option given is either enforced or refused (``ValueError``, one line naming what is
    missing): an issuer with nothing to check tokens against, scopes that only a static token
    would meet, any option on stdio, an unset secret variable.
    """
    given = options.given()
    if not given:
        return None
    if transport != "http":
        raise ValueError(f"{', '.join(given)}: client authentication applies to --transport http only")
    if not (options.token_env or options.jwks_url or options.introspection_url):
        raise ValueError(
            f"{', '.join(given)} given, but nothing can verify a token: add --auth-jwks-url URL (JWTs), "
            "--auth-introspection-url URL (opaque tokens) or --auth-token-env NAME (a static token)"
        )
    if options.required_scopes and not (options.jwks_url or options.introspection_url):
        raise ValueError(
            "--auth-required-scope checks the scopes of issued tokens, but only a static token is accepted: "
            "add --auth-jwks-url or --auth-introspection-url, or drop the option"
        )
    if options.issuer and not (options.jwks_url or options.introspection_url):
        raise ValueError("--auth-issuer checks issued tokens: add --auth-jwks-url or --auth-introspection-url")
    static = _read(environ, options.token_env)
    return ClientAuth(
        resource_url=options.resource_url or default_resource_url(host, port),
        tokens=(static,) if static else (),
        issuer=options.issuer,
        jwks_url=options.jwks_url,
        introspection_url=options.introspection_url,
        client_id=_read(environ, options.client_id_env),
        client_secret=_read(environ, options.client_secret_env),
        authorization_servers=(options.issuer_url,) if options.issuer_url else (),
        required_scopes=options.required_scopes,
        scopes_supported=tuple(sorted(set(scopes_supported) | set(options.required_scopes))),
    )


@dataclass(frozen=True, slots=True)
class ExchangeOptions:
    """``--token-exchange-*``: where to exchange, as which client (the audience defaults to the base URL)."""

    token_url: str
    client_id: str
    client_secret: str = field(repr=False)
    audience: str | None = None


def exchange_from_options(
    token_url: str | None,
    audience: str | None,
    auth: ClientAuth | None,
    client_id_env: str | None,
    client_secret_env: str | None,
    environ: Mapping[str, str],
) -> ExchangeOptions | None:
    """Token-exchange settings, or None; ``ValueError`` (one line) when they cannot be used."""
    if not token_url:
        if audience:
            raise ValueError("--token-exchange-audience needs --token-exchange-url")
        return None
    check_config_url(token_url, "--token-exchange-url")
    if auth is None or not (auth.jwks_url or auth.introspection_url):
        raise ValueError(
            "--token-exchange-url exchanges each caller's token, so it needs client authentication with "
            "issued tokens (--auth-jwks-url or --auth-introspection-url)"
        )
    client_id, client_secret = _read(environ, client_id_env), _read(environ, client_secret_env)
    if not (client_id and client_secret):
        raise ValueError(
            "--token-exchange-url needs the bridge's own client: --auth-client-id-env and --auth-client-secret-env"
        )
    return ExchangeOptions(token_url, client_id, client_secret, audience)
