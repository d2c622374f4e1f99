"""The ``serve --auth-*`` and ``--token-exchange-*`` options turned into settings, or refused.

An option that cannot be enforced never starts a server that lets requests in: every option given
is either used or refused with one line naming what is missing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import ClassVar

from bridge.identity.client_auth import ClientAuth, default_resource_url
from bridge.identity.outbound import check_config_url

__all__ = ["AuthOptions", "ExchangeOptions", "client_auth_from_options", "exchange_from_options"]


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
