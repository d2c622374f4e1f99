"""What every HTTP tool of one API shares: the upstream client, credentials, limits and settings.

:class:`HttpRuntime` is built once per API at start-up; the call core reads it on every call, and a
package's ``hooks.py`` gets it (through the public face, ``bridge.http_tools``).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass, field

import httpx

from bridge.calls.longrunning.tracker import OperationTracker
from bridge.confirm.policy import ConfirmSettings
from bridge.contract.catalogue import Catalogue
from bridge.identity.token_exchange import TokenExchanger
from bridge.request.base_url import resolve_base_url
from bridge.results.response_check import ResponseContract
from bridge.results.trim import TrimSettings
from bridge.secrets.bound import bound_env_names
from bridge.secrets.credentials import Credentials
from bridge.secrets.tls import upstream_ssl_context
from bridge.secrets.url_secrets import url_secrets
from bridge.upstream.client import Upstream
from bridge.upstream.http_settings import USER_AGENT, HttpSettings
from bridge.upstream.limits import CallerLimits

__all__ = ["DEFAULT_TRIM", "HttpRuntime"]

logger = logging.getLogger("bridge.http_tools")

DEFAULT_TRIM = TrimSettings()


@dataclass(frozen=True, slots=True)
class HttpRuntime:
    """What every HTTP tool of one API shares: the upstream client, credentials and settings."""

    upstream: Upstream
    credentials: Credentials
    base_url: httpx.URL
    settings: HttpSettings = field(default_factory=HttpSettings)
    # How results are trimmed (bridge/results/trim.py); None: no limits (the `fields` argument still works).
    trim: TrimSettings | None = field(default_factory=TrimSettings)
    # --validate-responses: checks each upstream answer against the spec and logs mismatches.
    contract: ResponseContract | None = None
    # Per-user upstream tokens (RFC 8693) and per-user limits, for servers with client authentication.
    exchanger: TokenExchanger | None = None
    caller_limits: CallerLimits | None = None
    # Calls carry the caller's identity (HTTP with client authentication); off: no lookup per call.
    identities: bool = False
    # Follows operations that answer 202 and a status URL (bridge/calls/longrunning/); None: the API has none.
    operations: OperationTracker | None = None
    # --confirm: which calls the call core lets through only with the user's yes (bridge/confirm/).
    confirm: ConfirmSettings = field(default_factory=ConfirmSettings)

    @classmethod
    def create(
        cls,
        catalogue: Catalogue,
        *,
        base_url: str | None = None,
        server_variables: Mapping[str, str] | None = None,
        server: int | None = None,
        environ: Mapping[str, str] | None = None,
        settings: HttpSettings | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        token_transport: httpx.AsyncBaseTransport | None = None,
        base_url_env_var: str | None = None,
        trim: TrimSettings | None = DEFAULT_TRIM,
        contract: ResponseContract | None = None,
    ) -> HttpRuntime:
        """Runtime for ``catalogue``: base URL resolved, credentials read from ``environ``.

        ``transport`` replaces the network for API calls and ``token_transport`` for OAuth2
        token requests (tests). ``base_url_env_var`` only names the variable in error messages.
        ``server`` chooses the spec's server (from 1; the first when None).
        ``trim`` sets how results are trimmed; None: no limits (the ``fields`` argument still works).

        Raises:
            ConfigurationError: the base URL or a server variable cannot be used, or the CA bundle
                or client certificate cannot be loaded.
        """
        settings = settings or HttpSettings()
        url = resolve_base_url(
            catalogue.servers,
            override=base_url,
            variables=dict(server_variables or {}),
            env_var=base_url_env_var,
            server=server,
        )
        bound_env = bound_env_names(catalogue)
        credentials = Credentials(
            catalogue.security_schemes,
            environ,
            base_url=url,
            transport=token_transport,
            user_agent=USER_AGENT,
            bound_env=bound_env,
            headers=catalogue.headers,
            url_secrets=url_secrets(url, catalogue, server_variables or {}),
        )
        # Credential slots read their scheme's variable: the start-up line already reports those.
        scheme_vars = {var.name for scheme in catalogue.security_schemes.values() for var in scheme.env}
        unset = [name for name in bound_env if name not in credentials.bound_values and name not in scheme_vars]
        if unset:
            # Like a missing credential: serving goes on, and the tools that need it say what to set.
            logger.warning("bound parameters read unset environment variables: %s", ", ".join(unset))
        ssl_context = upstream_ssl_context(
            catalogue.env_prefix,
            os.environ if environ is None else environ,
            credentials.client_certificate(),
            trust_env=settings.trust_env,
        )
        upstream = Upstream(
            url,
            settings=settings,
            transport=transport,
            redact=credentials.redact,
            name=catalogue.title,
            ssl_context=ssl_context,
        )
        long_running = {entry.name: entry for entry in catalogue.tools if entry.long_running is not None}
        return cls(
            upstream=upstream,
            credentials=credentials,
            base_url=url,
            settings=settings,
            trim=trim,
            contract=contract,
            operations=OperationTracker({e.name: e for e in catalogue.tools}) if long_running else None,
        )

    async def aclose(self) -> None:
        await self.upstream.aclose()
        await self.credentials.aclose()

    async def __aenter__(self) -> HttpRuntime:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()
