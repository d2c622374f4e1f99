"""Upstream credentials: read from the environment, injected by the bridge, never shown.

Each :class:`~bridge.contract.catalogue.SecurityScheme` names the environment variables that feed it
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
                             (client-credentials grant, cached:
                             :mod:`bridge.secrets.oauth_tokens`)
openIdConnect                ``token``                                      ``Authorization: Bearer``
mutualTLS                    ``cert_file`` (+ ``key_file``, ``key_password``) the TLS connection
                                                                            (:mod:`bridge.secrets.tls`)
unsupported                  never satisfiable                              —
============================ ============================================== =======================

Static headers the operator configured (``Catalogue.headers``) are added to every request, and
replace any same-named header a parameter would send.

An operation lists alternatives (``HttpBinding.security``). The first alternative whose
credentials are all configured is used; an empty alternative allows anonymous access and is used
only when no other alternative is configured. Error messages name environment variables, never
values.

Redaction (P26) is :class:`bridge.secrets.redact.Redactor` (``Credentials.redact``): every configured
secret (API keys, tokens, passwords, client secrets, the ``user:password`` of HTTP basic and of
the OAuth2 client), and every token the bridge learnt (an OAuth2 access token it fetched, a token
it exchanged for a user, a credential a workflow step supplied) for as long as a cache entry or a
running tool call holds it (:mod:`bridge.secrets.held`) are masked in all their spellings in every
text that leaves the bridge, success bodies and binary bodies included.
A secret shorter than :data:`~bridge.secrets.redact.MIN_SECRET_LENGTH` is masked only in credential
positions, and named (never shown) in one start-up warning.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from urllib.parse import quote_plus

import httpx

from bridge.contract.catalogue import EnvRole, SchemeUse, SecurityScheme, StaticHeader
from bridge.secrets.bound import missing_message
from bridge.secrets.header_values import HEADER_SAFE, basic_authorization
from bridge.secrets.held import HeldTokens
from bridge.secrets.oauth_tokens import (
    DEFAULT_TOKEN_EXPIRY_MARGIN,
    DEFAULT_TOKEN_TIMEOUT,
    ClientCredentialsTokens,
    ClientSecret,
)
from bridge.secrets.redact import MIN_SECRET_LENGTH, Redactor
from bridge.secrets.scheme_kinds import authorization_clash, bearer_kind, credential_positions, scheme_kind
from bridge.secrets.tls import ClientCertificate
from bridge.tools.errors import CredentialsError

__all__ = ["CredentialParts", "Credentials"]

logger = logging.getLogger("bridge.credentials")

Role = EnvRole
_SECRET_ROLES: frozenset[str] = frozenset({"value", "token", "password", "client_secret", "key_password"})


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
        headers: Sequence[StaticHeader] = (),
        url_secrets: Iterable[str] = (),
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
        self._headers = tuple(headers)
        self._secrets: dict[str, None] = {}
        short: list[str] = []
        for scheme in self._schemes.values():
            short.extend(self._collect_secrets(scheme))
        self._secrets.update(dict.fromkeys(self._bound.values()))  # parameters bound to the environment are secrets
        self._secrets.update(dict.fromkeys(url_secrets))  # tokens of the base URL (bridge.secrets.url_secrets)
        self._redactor = Redactor(self._secrets, **credential_positions(self._schemes.values()))
        self._held = HeldTokens(self._redactor.learn)
        self._tokens_of_clients = ClientCredentialsTokens(
            held=self._held,
            redact=self._redactor,
            base_url=httpx.URL(base_url) if base_url is not None else None,
            transport=transport,
            clock=clock,
            token_timeout=token_timeout,
            expiry_margin=expiry_margin,
            user_agent=user_agent,
        )
        if short:
            logger.warning(
                "Secrets shorter than %d characters (in %s) are masked in results only where they are sent as "
                "credentials (their header, query parameter or Authorization value), not everywhere: use longer ones",
                MIN_SECRET_LENGTH,
                " and ".join(dict.fromkeys(short)),
            )

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
        if scheme.type == "mutualTLS":
            return need("cert_file")
        return []

    def _is_set(self, name: str, empty_ok: bool) -> bool:
        return name in self._env if empty_ok else bool(self._env.get(name))

    def missing(self, scheme_name: str) -> str | None:
        """None when ``scheme_name`` can be used; else what the user must set (names, never values)."""
        scheme = self._schemes.get(scheme_name)
        if scheme is None:
            return f'the security scheme "{scheme_name}", which the catalogue does not define'
        label = f'{scheme_kind(scheme)} "{scheme_name}"'
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
        """Credentials for an operation's security alternatives, and the static headers.

        Raises:
            CredentialsError: no alternative is configured and anonymous access is not allowed, a
                static header's variable is not set, or an OAuth2 token could not be obtained.
        """
        parts = await self._chosen(security)
        if not self._headers:
            return parts
        own = {name.lower() for name, _ in parts.headers}
        static = tuple((name, value) for name, value in self.static_headers() if name.lower() not in own)
        return dataclasses.replace(parts, headers=(*static, *parts.headers))

    def static_headers(self) -> list[tuple[str, str]]:
        """The configured static headers, their variables read (never shown)."""
        out: list[tuple[str, str]] = []
        for header in self._headers:
            value = (header.value.value or "") if header.value.env is None else self._bound.get(header.value.env)
            if value is None:
                assert header.value.env is not None
                raise CredentialsError(missing_message([header.value.env]))
            if not HEADER_SAFE.fullmatch(value):
                raise CredentialsError(
                    f"The value of the configured header {header.name} cannot be sent in an HTTP request (line breaks, "
                    "control or non-ASCII characters). The user must fix it."
                )
            out.append((header.name, value))
        return out

    async def _chosen(self, security: Sequence[Sequence[SchemeUse]]) -> CredentialParts:
        if not security:
            return CredentialParts()
        anonymous = False
        problems: list[str] = []
        clashes: list[str] = []
        for alternative in security:
            if not alternative:
                anonymous = True
                continue
            clash = authorization_clash(self._schemes, alternative)
            if clash:
                clashes.append(clash)
                continue
            alternative, missing = self._one_bearer(alternative)
            if not missing:
                return await self._parts(alternative)
            problems.append(" and ".join(missing))
        if anonymous:
            return CredentialParts()
        if not problems:
            raise CredentialsError(
                f"This operation cannot be called: {'; '.join(dict.fromkeys(clashes))}, which one HTTP request "
                "cannot carry (the spec asks for the impossible). Retrying will not help."
            )
        options = "; or ".join(dict.fromkeys(problems))
        raise CredentialsError(
            "This operation needs a credential that is not configured. "
            f"The user must set {options} in the environment of the MCP server and restart it. "
            "Retrying will not help until then."
        )

    def _one_bearer(self, alternative: Sequence[SchemeUse]) -> tuple[Sequence[SchemeUse], list[str]]:
        """The alternative as sent, and what is missing for it.

        Several bearer-token schemes required together (Google's specs pair two OAuth2 schemes, one
        per flow, in every requirement) are one ``Authorization: Bearer`` credential on the wire:
        the first configured one is used, and the requirement is missing only when none is.
        """
        bearers = [use for use in alternative if (s := self._schemes.get(use.scheme)) is not None and bearer_kind(s)]
        if len(bearers) > 1:
            chosen = next((use for use in bearers if self.missing(use.scheme) is None), bearers[0])
            alternative = [use for use in alternative if use not in bearers or use is chosen]
            if self.missing(chosen.scheme) is not None:
                either = " or ".join(m for use in bearers if (m := self.missing(use.scheme)) is not None)
                others = [m for use in alternative if use is not chosen and (m := self.missing(use.scheme))]
                return alternative, [f"({either})", *others]
        return alternative, [m for use in alternative if (m := self.missing(use.scheme)) is not None]

    def client_certificate(self) -> ClientCertificate | None:
        """The client certificate of the first configured mutualTLS scheme (bridge/secrets/tls.py loads it)."""
        for scheme in self._schemes.values():
            if scheme.type == "mutualTLS" and scheme.supported and self._raw(scheme, "cert_file"):
                cert_var = self._var(scheme, "cert_file")
                assert cert_var is not None
                return ClientCertificate(
                    cert_file=self._raw(scheme, "cert_file"),
                    key_file=self._raw(scheme, "key_file") or None,
                    password=self._raw(scheme, "key_password") or None,
                    cert_var=cert_var,
                    key_var=self._var(scheme, "key_file"),
                )
        return None

    async def _parts(self, alternative: Sequence[SchemeUse]) -> CredentialParts:
        headers: list[tuple[str, str]] = []
        query: list[tuple[str, str]] = []
        cookies: list[tuple[str, str]] = []
        env_names: list[str] = []
        for use in alternative:
            scheme = self._schemes[use.scheme]
            env_names.extend(v.name for v in scheme.env if v.name in self._env)
            if scheme.type == "mutualTLS":
                continue  # the TLS connection presents the certificate (bridge/secrets/tls.py)
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
                    ("Authorization", basic_authorization(self._raw(scheme, "username"), self._raw(scheme, "password")))
                )
            elif scheme.type == "http" and (scheme.http_scheme or "bearer").lower() != "bearer":
                headers.append(("Authorization", f"{scheme.http_scheme} {self._header_safe(scheme, 'token')}"))
            elif scheme.type == "oauth2" and not self._raw(scheme, "token"):
                client = ClientSecret(
                    self._raw(scheme, "client_id"),
                    self._raw(scheme, "client_secret"),
                    self._var(scheme, "client_id"),
                    self._var(scheme, "client_secret"),
                )
                token = await self._tokens_of_clients.token(use.scheme, scheme, use.scopes, client)
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
        if not HEADER_SAFE.fullmatch(value):
            raise CredentialsError(
                f"The value of {self._var(scheme, role)} contains characters that cannot be sent in an HTTP "
                "request (line breaks, control or non-ASCII characters). The user must fix it."
            )
        return value

    # ------------------------------------------------------------------------------------ oauth2

    def invalidate(self, parts: CredentialParts) -> None:
        """Forget cached OAuth2 tokens of the schemes in ``parts`` (after the API answered 401)."""
        self._tokens_of_clients.invalidate(parts.schemes)

    async def aclose(self) -> None:
        await self._tokens_of_clients.aclose()

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

    @property
    def held(self) -> HeldTokens:
        """The learnt tokens redacted now, each for as long as something holds it (a cache entry
        holds its token; :meth:`remember_token` holds one for the running call)."""
        return self._held

    def remember_token(self, token: str) -> None:
        """Redact ``token`` (a credential the running call sends: fetched, exchanged, or supplied by a
        workflow step) until the tool call ends. A token new to redaction rebuilds the search index:
        for a token not yet held elsewhere, call it in a worker thread."""
        self._held.use(token)

    remember_exchanged = remember_token
