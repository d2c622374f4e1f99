"""Bearer authentication of MCP clients: the bridge as an OAuth 2.1 resource server.

Accepted, in this order: a static shared token (simple single-team setups); a JWT access token
signed by the authorization server (verified with PyJWT against its JWKS, ``bridge.identity.jwks``); an
opaque token, asked about at the authorization server's RFC 7662 introspection endpoint
(``bridge.identity.introspection``). Every accepted token was issued by the configured issuer for this
server (``aud``, RFC 8707), is within its validity (``exp``/``nbf`` with a small leeway), and is
read only from the ``Authorization`` header. It is wired through the SDK's ``token_verifier``,
so a missing or bad token gets 401 with a ``WWW-Authenticate`` header naming the RFC 9728
metadata (``bridge.resource_metadata``).

The ``serve --auth-*`` options become a :class:`ClientAuth` in :mod:`bridge.identity.auth_options`; what
claims mean (audience, scopes) is :mod:`bridge.identity.token_claims`.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import re
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import httpx

from bridge.identity.introspection import Introspector
from bridge.identity.jwks import ALGORITHMS, JwksKeys
from bridge.identity.outbound import Endpoint, check_config_url
from bridge.identity.token_claims import LEEWAY_SECONDS, STATIC_TOKEN_CLIENT_ID, access_token, audience_match

if TYPE_CHECKING:
    from mcp.server.auth.provider import AccessToken

logger = logging.getLogger("bridge")

DEFAULT_HTTP_PATH = "/mcp"
WILDCARD_BINDS = ("0.0.0.0", "::", "")
MIN_STATIC_TOKEN_LENGTH = 16
MAX_TOKEN_LENGTH = 8192
REMEMBER_SECONDS = 300.0  # a verified static token or JWT is trusted this long at most without checking again
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


class ClientTokenVerifier:
    """The SDK's ``TokenVerifier`` for a :class:`ClientAuth`."""

    def __init__(self, auth: ClientAuth) -> None:
        self._auth = auth
        # Compare digests, so every comparison takes the same time whatever the token's length.
        self._static = [hashlib.sha256(t.encode()).digest() for t in auth.tokens]
        # digest -> (until, token, key-set fetch it was verified with): a verified static token or
        # JWT is not verified again on every request.
        self._accepted: dict[bytes, tuple[float, AccessToken, int]] = {}
        self._clock = time.time
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
        now = self._clock()
        keys = self.jwks.fetches if self.jwks is not None else 0
        hit = self._accepted.get(digest)
        if hit is not None:
            # A JWT is trusted as long as the key set that verified it, and not past a refresh.
            if hit[0] > now and (hit[1].client_id == STATIC_TOKEN_CLIENT_ID or hit[2] == keys):
                return hit[1]
            del self._accepted[digest]
        verified = await self._verify(token, digest)
        # Opaque tokens (JWT-shaped ones too, when only introspection is configured) are not kept
        # here: the introspector keeps them, no longer than revocation allows.
        static = verified is not None and verified.client_id == STATIC_TOKEN_CLIENT_ID
        jwt_checked = verified is not None and self.jwks is not None and token.count(".") == 2
        if verified is not None and (static or jwt_checked):
            until = now + REMEMBER_SECONDS
            if jwt_checked and self.jwks is not None:
                until = min(until, now + self.jwks.fresh_for())
                keys = self.jwks.fetches
            if verified.expires_at is not None:
                until = min(until, float(verified.expires_at))
            if len(self._accepted) >= MAX_REMEMBERED:
                self._accepted.pop(next(iter(self._accepted)))
            self._accepted[digest] = (until, verified, keys)
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
        import jwt  # already loaded by JwksKeys at start-up; not at all without a JWKS URL

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
