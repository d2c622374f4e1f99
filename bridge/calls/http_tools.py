"""Generated HTTP tools: catalogue entries turned into :class:`~bridge.tools.registry.Tool` objects.

``run(args, ctx)`` of each tool calls its operation through the call core (``bridge.calls.operation``:
request building, the bridge's own credentials, the shared :class:`Upstream`) and maps the answer
to a ``CallToolResult``. Failures raise :class:`~bridge.tools.errors.ToolError` subclasses whose messages
are redacted and meant for the model. Cancelling the task that awaits ``run`` aborts the
in-flight request.
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import anyio
import httpx
import mcp_types

from bridge.calls.longrunning.follow import OperationPending
from bridge.calls.longrunning.pending import pending_result
from bridge.calls.longrunning.tracker import OperationTracker
from bridge.calls.operation import CallContext, OperationCall, current_identity
from bridge.contract.catalogue import OPERATION_META_KEY, Catalogue, SecurityScheme, ToolAnnotationsSpec, ToolEntry
from bridge.identity.scopes import Requirement, requirement
from bridge.identity.token_exchange import TokenExchanger
from bridge.request.base_url import resolve_base_url
from bridge.results.response_check import ResponseContract
from bridge.results.trim import OFF_LOOP_BYTES, TrimSettings, split_fields
from bridge.secrets.bound import bound_env_names
from bridge.secrets.credentials import Credentials
from bridge.secrets.tls import upstream_ssl_context
from bridge.server.tasks import TASK_SUPPORT
from bridge.tools.errors import ToolError
from bridge.tools.registry import Tool, ToolContext
from bridge.upstream.client import Upstream
from bridge.upstream.http_settings import USER_AGENT, HttpSettings
from bridge.upstream.limits import CallerLimits

__all__ = ["HttpRuntime", "HttpSettings", "make_http_tool", "tools_from_catalogue"]

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

    @classmethod
    def create(
        cls,
        catalogue: Catalogue,
        *,
        base_url: str | None = None,
        server_variables: Mapping[str, str] | None = None,
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


def make_http_tool(entry: ToolEntry, runtime: HttpRuntime) -> Tool:
    """The :class:`Tool` that calls ``entry``'s operation through ``runtime`` (via the call core)."""
    call = OperationCall(entry, runtime)
    fields_arg = entry.binding.fields_arg

    async def run(args: dict[str, Any], ctx: ToolContext) -> mcp_types.CallToolResult:
        fields: list[str] | None = None
        if fields_arg is not None and fields_arg in args:
            args = dict(args)
            fields = split_fields(args.pop(fields_arg))  # never sent upstream
        # The server validated the arguments against this tool's schema before run.
        context = CallContext.from_tool(ctx, identity=current_identity() if runtime.identities else None)
        try:
            response = await call.respond(args, context, validated=True)
        except OperationPending as exc:  # still running when the wait ran out: a handle, not an error
            return pending_result(exc, structured=entry.output_schema is None)
        try:
            if len(response.content) > OFF_LOOP_BYTES:
                # parsing, redacting and trimming a big body takes milliseconds per 32 KiB: off the loop
                return await anyio.to_thread.run_sync(functools.partial(call.to_result, response, fields=fields))
            return call.to_result(response, fields=fields)
        except ToolError as exc:
            raise type(exc)(runtime.credentials.redact(str(exc))) from None

    return Tool(
        name=entry.name,
        run=run,
        description=entry.description,
        title=entry.title,
        input_schema=entry.input_schema,
        advertised_input_schema=entry.advertised_input_schema,
        output_schema=entry.output_schema,
        annotations=_annotations(entry.annotations),
        meta={OPERATION_META_KEY: entry.operation},
        apply_defaults=False,
        checks_own_output=True,
        internal=True,
        execution=TASK_SUPPORT if entry.long_running is not None else None,
    )


@functools.cache
def _annotations(spec: ToolAnnotationsSpec) -> Mapping[str, Any]:
    """One read-only mapping per distinct annotation set (an API has at most a handful)."""
    return MappingProxyType(dataclasses.asdict(spec))


def tools_from_catalogue(catalogue: Catalogue, runtime: HttpRuntime) -> list[Tool]:
    """One tool per catalogue entry, in catalogue order."""
    schemes = catalogue.security_schemes
    return [
        dataclasses.replace(make_http_tool(entry, runtime), scopes=_scopes(entry, schemes)) for entry in catalogue.tools
    ]


def _scopes(entry: ToolEntry, schemes: Mapping[str, SecurityScheme]) -> Requirement:
    if entry.scopes is not None:  # set in --config
        return tuple(frozenset(alternative) for alternative in entry.scopes if alternative)
    return requirement(entry.binding.security, schemes)
