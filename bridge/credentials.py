"""Upstream credentials: read from the environment, injected by the bridge, never shown.

Each :class:`~bridge.catalogue.SecurityScheme` names the environment variables that feed it
(``SecurityScheme.env``, by role). Values are read once, when :class:`Credentials` is built, and
stripped of surrounding whitespace. What each scheme needs:

============================ ============================================== =======================
scheme                       environment variables (roles)                  sent as
============================ ============================================== =======================
apiKey                       ``value``                                      header, query or cookie
http bearer                  ``token``                                      ``Authorization: Bearer``
http basic                   ``username`` (non-empty) + ``password`` (set)  ``Authorization: Basic``
other http schemes           ``token``                                      ``Authorization: <scheme>``
oauth2                       ``token`` (a ready access token), or           ``Authorization: Bearer``
                             ``client_id`` + ``client_secret`` + token URL
                             (client-credentials grant, cached)
openIdConnect                ``token``                                      ``Authorization: Bearer``
mutualTLS / unsupported      never satisfiable                              —
============================ ============================================== =======================

An operation lists alternatives (``HttpBinding.security``). The first alternative whose
credentials are all configured is used; an empty alternative allows anonymous access and is used
only when no other alternative is configured. Error messages name environment variables, never
values.

Redaction (P26) is :class:`bridge.redact.Redactor` (``Credentials.redact``): every configured
secret (API keys, tokens, passwords, client secrets, the ``user:password`` of HTTP basic and of
the OAuth2 client) and every OAuth2 access token the bridge fetched (the last 32) are masked in all
their spellings in every text that leaves the bridge, success bodies and binary bodies included.
A secret shorter than :data:`~bridge.redact.MIN_SECRET_LENGTH` is masked only in credential
positions, and named (never shown) in one start-up warning.
"""

from __future__ import annotations

import base64
import json
import logging
import os
import re
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal
from urllib.parse import quote_plus, urlencode

import anyio
import httpx

from bridge.catalogue import Catalogue, SchemeUse, SecurityScheme
from bridge.errors import CredentialsError
from bridge.redact import CREDENTIAL_HEADERS, MIN_SECRET_LENGTH, TOKEN_QUERY_PARAMS, Redactor, scrub

__all__ = [
    "CREDENTIAL_HEADERS",
    "DEFAULT_TOKEN_EXPIRY_MARGIN",
    "DEFAULT_TOKEN_LIFETIME",
    "DEFAULT_TOKEN_RESPONSE_BYTES",
    "DEFAULT_TOKEN_TIMEOUT",
    "TOKEN_QUERY_PARAMS",
    "CredentialParts",
    "Credentials",
    "scrub",
]

logger = logging.getLogger(__name__)

DEFAULT_TOKEN_EXPIRY_MARGIN = 30.0
"""Seconds before ``expires_in`` at which a cached OAuth2 token is refreshed."""
DEFAULT_TOKEN_LIFETIME = 300.0
"""Seconds a token is cached when the token endpoint sends no ``expires_in``."""
DEFAULT_TOKEN_TIMEOUT = 30.0
"""Overall deadline, in seconds, of one token request."""
DEFAULT_TOKEN_RESPONSE_BYTES = 64 * 1024
"""Largest token-endpoint answer read."""

Role = Literal["value", "token", "username", "password", "client_id", "client_secret"]
_SECRET_ROLES: frozenset[str] = frozenset({"value", "token", "password", "client_secret"})
_REMEMBERED_TOKENS = 32  # fetched tokens kept for redaction
_HEADER_SAFE = re.compile(r"[\x21-\x7e]+(?:[ \t]+[\x21-\x7e]+)*")


@dataclass(frozen=True, slots=True)
class CredentialParts:
    """What the chosen credentials add to one request. Query and cookie values are not encoded."""

    headers: tuple[tuple[str, str], ...] = ()
    query: tuple[tuple[str, str], ...] = ()
    cookies: tuple[tuple[str, str], ...] = ()
    schemes: tuple[str, ...] = ()
    """Names of the security schemes used (empty: anonymous)."""
    env_names: tuple[str, ...] = ()
    """Environment variables behind the credentials used, for hints after a 401/403."""


@dataclass(slots=True)
class _Token:
    value: str
    expires_at: float


@dataclass(slots=True)
class _TokenSlot:
    lock: anyio.Lock = field(default_factory=anyio.Lock)
    token: _Token | None = None


class Credentials:
    """Credentials of one API, read from ``environ`` (default ``os.environ``) at construction.

    ``transport`` and ``clock`` exist for tests (token endpoint and token expiry). ``base_url`` is
    used to resolve a relative OAuth2 token URL.
    """

    def __init__(
        self,
        schemes: Mapping[str, SecurityScheme],
        environ: Mapping[str, str] | None = None,
        *,
        base_url: httpx.URL | str | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        clock: Callable[[], float] = time.monotonic,
        token_timeout: float = DEFAULT_TOKEN_TIMEOUT,
        expiry_margin: float = DEFAULT_TOKEN_EXPIRY_MARGIN,
        user_agent: str | None = None,
        bound_env: Iterable[str] = (),
    ) -> None:
        if environ is None:
            environ = os.environ
        self._schemes = dict(schemes)
        self._env: dict[str, str] = {}
        for scheme in self._schemes.values():
            for var in scheme.env:
                raw = environ.get(var.name)
                if raw is not None:
                    self._env[var.name] = raw.strip()
        # Variables bound to parameters by the generator's `bind:` config: secrets like the rest.
        self._bound: dict[str, str] = {}
        for name in bound_env:
            raw = environ.get(name)
            if raw is not None and raw.strip():
                self._bound[name] = raw.strip()
        self._bound_view: Mapping[str, str] = MappingProxyType(self._bound)
        self._base_url = httpx.URL(base_url) if base_url is not None else None
        self._transport = transport
        self._clock = clock
        self._token_timeout = token_timeout
        self._margin = expiry_margin
        self._user_agent = user_agent
        self._client: httpx.AsyncClient | None = None
        self._slots: dict[tuple[str, tuple[str, ...]], _TokenSlot] = {}
        self._secrets: dict[str, None] = {}
        self._tokens: deque[str] = deque(maxlen=_REMEMBERED_TOKENS)
        short: list[str] = []
        for scheme in self._schemes.values():
            short.extend(self._collect_secrets(scheme))
        self._secrets.update(dict.fromkeys(self._bound.values()))  # parameters bound to the environment are secrets
        self._redactor = Redactor(self._secrets, **_positions(self._schemes.values()))
        if short:
            logger.warning(
                "Secrets shorter than %d characters (in %s) are masked in results only where they are sent as "
                "credentials (their header, query parameter or Authorization value), not everywhere: use longer ones",
                MIN_SECRET_LENGTH,
                " and ".join(dict.fromkeys(short)),
            )

    @classmethod
    def from_catalogue(
        cls,
        catalogue: Catalogue,
        environ: Mapping[str, str] | None = None,
        **options: Any,
    ) -> Credentials:
        """Credentials for every security scheme of ``catalogue``; ``options`` go to the constructor."""
        return cls(catalogue.security_schemes, environ, **options)

    # ------------------------------------------------------------------------------ configuration

    def _var(self, scheme: SecurityScheme, role: Role) -> str | None:
        for var in scheme.env:
            if var.role == role:
                return var.name
        return None

    def _raw(self, scheme: SecurityScheme, role: Role) -> str:
        name = self._var(scheme, role)
        return self._env.get(name, "") if name else ""

    def _ways(self, scheme: SecurityScheme) -> list[list[tuple[str, bool]]]:
        """Ways to configure ``scheme``: each a list of (env var, may be empty)."""

        def need(*roles: Role, empty_ok: tuple[Role, ...] = ()) -> list[list[tuple[str, bool]]]:
            names = [(self._var(scheme, role), role in empty_ok) for role in roles]
            if any(name is None for name, _ in names):
                return []
            return [[(name, ok) for name, ok in names if name is not None]]

        if not scheme.supported:
            return []
        http = (scheme.http_scheme or "").lower()
        if scheme.type == "apiKey":
            return need("value") if scheme.location and scheme.param_name else []
        if scheme.type == "http" and http == "basic":
            return need("username", "password", empty_ok=("password",))
        if scheme.type in ("http", "openIdConnect"):
            return need("token")
        if scheme.type == "oauth2":
            return need("token") + (need("client_id", "client_secret") if scheme.token_url else [])
        return []

    def _is_set(self, name: str, empty_ok: bool) -> bool:
        return name in self._env if empty_ok else bool(self._env.get(name))

    def missing(self, scheme_name: str) -> str | None:
        """None when ``scheme_name`` can be used; else what the user must set (names, never values)."""
        scheme = self._schemes.get(scheme_name)
        if scheme is None:
            return f'the security scheme "{scheme_name}", which the catalogue does not define'
        label = f'{_kind(scheme)} "{scheme_name}"'
        ways = self._ways(scheme)
        if not ways:
            return f"{label}, which mcp-bridge cannot supply (unsupported, or no environment variable for it)"
        for way in ways:
            if all(self._is_set(name, ok) for name, ok in way):
                return None
        options = [" and ".join(name for name, ok in way if not self._is_set(name, ok)) for way in ways]
        return f"{' or '.join(options)} ({label})"

    def configured(self, scheme_name: str) -> bool:
        return self.missing(scheme_name) is None

    @property
    def bound_values(self) -> Mapping[str, str]:
        """Values of the environment variables bound parameters read (only those that are set)."""
        return self._bound_view

    # ------------------------------------------------------------------------------------ choice

    async def for_operation(self, security: Sequence[Sequence[SchemeUse]]) -> CredentialParts:
        """Credentials for an operation's security alternatives.

        Raises:
            CredentialsError: no alternative is configured and anonymous access is not allowed, or
                an OAuth2 token could not be obtained.
        """
        if not security:
            return CredentialParts()
        anonymous = False
        problems: list[str] = []
        for alternative in security:
            if not alternative:
                anonymous = True
                continue
            missing = [m for use in alternative if (m := self.missing(use.scheme)) is not None]
            if not missing:
                return await self._parts(alternative)
            problems.append(" and ".join(missing))
        if anonymous:
            return CredentialParts()
        options = "; or ".join(dict.fromkeys(problems))
        raise CredentialsError(
            "This operation needs a credential that is not configured. "
            f"The user must set {options} in the environment of the MCP server and restart it. "
            "Retrying will not help until then."
        )

    async def _parts(self, alternative: Sequence[SchemeUse]) -> CredentialParts:
        headers: list[tuple[str, str]] = []
        query: list[tuple[str, str]] = []
        cookies: list[tuple[str, str]] = []
        env_names: list[str] = []
        for use in alternative:
            scheme = self._schemes[use.scheme]
            env_names.extend(v.name for v in scheme.env if v.name in self._env)
            if scheme.type == "apiKey":
                value = self._header_safe(scheme, "value")
                assert scheme.param_name is not None
                if scheme.location == "header":
                    headers.append((scheme.param_name, value))
                elif scheme.location == "query":
                    query.append((scheme.param_name, value))
                else:
                    cookies.append((scheme.param_name, value))
            elif scheme.type == "http" and (scheme.http_scheme or "").lower() == "basic":
                headers.append(
                    ("Authorization", "Basic " + _basic(self._raw(scheme, "username"), self._raw(scheme, "password")))
                )
            elif scheme.type == "http" and (scheme.http_scheme or "bearer").lower() != "bearer":
                headers.append(("Authorization", f"{scheme.http_scheme} {self._header_safe(scheme, 'token')}"))
            elif scheme.type == "oauth2" and not self._raw(scheme, "token"):
                token = await self._client_credentials_token(use.scheme, scheme, use.scopes)
                headers.append(("Authorization", f"Bearer {token}"))
            else:
                headers.append(("Authorization", f"Bearer {self._header_safe(scheme, 'token')}"))
        return CredentialParts(
            headers=tuple(headers),
            query=tuple(query),
            cookies=tuple(cookies),
            schemes=tuple(use.scheme for use in alternative),
            env_names=tuple(dict.fromkeys(env_names)),
        )

    def _header_safe(self, scheme: SecurityScheme, role: Role) -> str:
        value = self._raw(scheme, role)
        if not _HEADER_SAFE.fullmatch(value):
            raise CredentialsError(
                f"The value of {self._var(scheme, role)} contains characters that cannot be sent in an HTTP "
                "request (line breaks, control or non-ASCII characters). The user must fix it."
            )
        return value

    # ------------------------------------------------------------------------------------ oauth2

    async def _client_credentials_token(self, name: str, scheme: SecurityScheme, scopes: Sequence[str]) -> str:
        key = (name, tuple(sorted(set(scopes))))
        slot = self._slots.get(key)
        if slot is None:
            slot = self._slots[key] = _TokenSlot()
        async with slot.lock:
            token = slot.token
            if token is not None and self._clock() < token.expires_at:
                return token.value
            slot.token = await self._fetch_token(name, scheme, key[1])
            return slot.token.value

    def invalidate(self, parts: CredentialParts) -> None:
        """Forget cached OAuth2 tokens of the schemes in ``parts`` (after the API answered 401)."""
        for key, slot in self._slots.items():
            if key[0] in parts.schemes:
                slot.token = None

    async def _fetch_token(self, name: str, scheme: SecurityScheme, scopes: tuple[str, ...]) -> _Token:
        assert scheme.token_url is not None
        id_var = self._var(scheme, "client_id")
        secret_var = self._var(scheme, "client_secret")
        what = f'an OAuth2 access token for "{name}"'
        url = self._token_url(scheme.token_url, what)
        form = {"grant_type": "client_credentials"}
        if scopes:
            form["scope"] = " ".join(scopes)
        client_id, secret = self._raw(scheme, "client_id"), self._raw(scheme, "client_secret")
        headers = {
            "Authorization": "Basic " + _basic(quote_plus(client_id), quote_plus(secret)),
            "Content-Type": "application/x-www-form-urlencoded",
            "Accept": "application/json",
        }
        if self._user_agent:
            headers["User-Agent"] = self._user_agent
        started = self._clock()
        try:
            with anyio.fail_after(self._token_timeout):
                request = self._http().build_request("POST", url, headers=headers, content=urlencode(form).encode())
                response = await self._http().send(request, stream=True)
                try:
                    body = await _read_limited(response, DEFAULT_TOKEN_RESPONSE_BYTES)
                finally:
                    with anyio.CancelScope(shield=True):
                        await response.aclose()
        except TimeoutError:
            raise CredentialsError(f"Could not get {what}: the token endpoint did not answer in time.") from None
        except httpx.HTTPError as exc:
            raise CredentialsError(
                f"Could not get {what}: the token endpoint could not be reached ({type(exc).__name__})."
            ) from None
        payload = _json_object(body)
        if response.status_code != 200:
            code = payload.get("error") if payload else None
            detail = f" ({self.redact(code)})" if isinstance(code, str) and len(code) < 100 else ""
            raise CredentialsError(
                f"Could not get {what}: the token endpoint answered HTTP {response.status_code}{detail}. "
                f"The user must check {id_var} and {secret_var}."
            )
        token = payload.get("access_token") if payload else None
        if not isinstance(token, str) or not _HEADER_SAFE.fullmatch(token):
            raise CredentialsError(f"Could not get {what}: the token endpoint's answer has no usable access_token.")
        expires_in = payload.get("expires_in") if payload else None
        lifetime = (
            float(expires_in) if isinstance(expires_in, int | float) and not isinstance(expires_in, bool) else None
        )
        if lifetime is None or lifetime <= 0:
            lifetime = DEFAULT_TOKEN_LIFETIME
        keep = lifetime - self._margin if lifetime > 2 * self._margin else lifetime / 2
        self._add_secret(token)
        logger.debug("Fetched an OAuth2 token for %s, cached for %.0f s", name, keep)
        return _Token(token, started + keep)

    def _token_url(self, token_url: str, what: str) -> httpx.URL:
        url = httpx.URL(token_url)
        if url.is_relative_url:
            if self._base_url is None:
                raise CredentialsError(f"Could not get {what}: the token URL is relative and no base URL is known.")
            url = self._base_url.join(token_url)
        if url.scheme not in ("http", "https") or not url.host:
            raise CredentialsError(f"Could not get {what}: the token URL is not an http(s) URL.")
        return url

    def _http(self) -> httpx.AsyncClient:
        if self._client is None:
            self._client = httpx.AsyncClient(
                transport=self._transport,
                follow_redirects=False,
                timeout=httpx.Timeout(self._token_timeout),
            )
        return self._client

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    # --------------------------------------------------------------------------------- redaction

    def _collect_secrets(self, scheme: SecurityScheme) -> list[str]:
        """Register ``scheme``'s secrets; the environment variables whose secret is short."""
        short: list[str] = []
        for var in scheme.env:
            value = self._env.get(var.name)
            if value and var.role in _SECRET_ROLES:
                self._secrets[value] = None
                if len(value) < MIN_SECRET_LENGTH:
                    short.append(var.name)
        if scheme.type == "http" and (scheme.http_scheme or "").lower() == "basic":
            user, password = self._raw(scheme, "username"), self._raw(scheme, "password")
            if user or password:
                self._secrets[f"{user}:{password}"] = None  # the redactor adds its base64 forms
        if scheme.type == "oauth2":
            client_id, secret = self._raw(scheme, "client_id"), self._raw(scheme, "client_secret")
            if secret:
                self._secrets[f"{quote_plus(client_id)}:{quote_plus(secret)}"] = None
        return short

    def _add_secret(self, token: str) -> None:
        if token not in self._tokens:
            self._tokens.append(token)
            self._redactor.learn(self._tokens)

    @property
    def redact(self) -> Redactor:
        """The redactor of this API's secrets: ``credentials.redact(text)``; kept up to date with
        fetched tokens, so holders of it never need to ask again."""
        return self._redactor

    @property
    def has_secrets(self) -> bool:
        return self._redactor.has_secrets

    @property
    def schemes(self) -> Mapping[str, SecurityScheme]:
        """The API's security schemes, by name."""
        return MappingProxyType(self._schemes)

    def remember_token(self, token: str) -> None:
        """Redact ``token`` from now on (a token obtained at run time, e.g. by token exchange)."""
        self._add_secret(token)


def _positions(schemes: Iterable[SecurityScheme]) -> dict[str, list[str]]:
    """Where each scheme puts its credential: the redactor masks even short secrets there."""
    names: list[str] = []
    header_names: list[str] = []
    words: list[str] = []
    for scheme in schemes:
        if scheme.type == "apiKey" and scheme.param_name:
            names.append(scheme.param_name)
            if scheme.location == "header":
                header_names.append(scheme.param_name)
        elif scheme.type == "http" and scheme.http_scheme:
            words.append(scheme.http_scheme)
    return {"names": names, "header_names": header_names, "scheme_words": words}


def _basic(user: str, password: str) -> str:
    return base64.b64encode(f"{user}:{password}".encode()).decode("ascii")


def _kind(scheme: SecurityScheme) -> str:
    if scheme.type == "apiKey":
        return "API key"
    if scheme.type == "http":
        return f"HTTP {scheme.http_scheme or 'auth'}"
    if scheme.type == "oauth2":
        return "OAuth2"
    if scheme.type == "openIdConnect":
        return "OpenID Connect token"
    return "mutual TLS"


def _join(names: Sequence[str]) -> str:
    return " and ".join(names)


def _json_object(body: bytes) -> dict[str, object] | None:
    try:
        data = json.loads(body)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


async def _read_limited(response: httpx.Response, limit: int) -> bytes:
    chunks = bytearray()
    async for chunk in response.aiter_bytes():
        chunks += chunk
        if len(chunks) > limit:
            raise CredentialsError("The token endpoint's answer is too large.")
    return bytes(chunks)
