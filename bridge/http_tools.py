"""Generated HTTP tools: catalogue entries turned into :class:`~bridge.tools.Tool` objects.

``run(args, ctx)`` of each tool: build the request from the (already validated) arguments, add
the bridge's own credentials, send it through the shared :class:`Upstream`, and map the answer to
a ``CallToolResult``. Failures raise :class:`~bridge.errors.ToolError` subclasses whose messages
are redacted and meant for the model. Cancelling the task that awaits ``run`` aborts the
in-flight request.
"""

from __future__ import annotations

import dataclasses
import functools
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import anyio
import httpx
import mcp_types

from bridge.binding import OPERATION_META_KEY, Catalogue, ToolAnnotationsSpec, ToolEntry
from bridge.contract import ResponseContract
from bridge.credentials import Credentials
from bridge.errors import ToolError, UpstreamStatusError
from bridge.request import build_request, resolve_base_url
from bridge.results import OutputCheck, response_to_result, status_error
from bridge.tools import Tool, ToolContext
from bridge.trim import OFF_LOOP_BYTES, TrimSettings, split_fields
from bridge.upstream import USER_AGENT, HttpSettings, Upstream

__all__ = ["HttpRuntime", "HttpSettings", "make_http_tool", "tools_from_catalogue"]

logger = logging.getLogger(__name__)

DEFAULT_TRIM = TrimSettings()


@dataclass(frozen=True, slots=True)
class HttpRuntime:
    """What every HTTP tool of one API shares: the upstream client, credentials and settings."""

    upstream: Upstream
    credentials: Credentials
    base_url: httpx.URL
    settings: HttpSettings = field(default_factory=HttpSettings)
    # How results are trimmed (bridge/trim.py); None: no limits (the `fields` argument still works).
    trim: TrimSettings | None = field(default_factory=TrimSettings)
    # --validate-responses: checks each upstream answer against the spec and logs mismatches.
    contract: ResponseContract | None = None

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
            ConfigurationError: the base URL or a server variable cannot be used.
        """
        settings = settings or HttpSettings()
        url = resolve_base_url(
            catalogue.servers,
            override=base_url,
            variables=dict(server_variables or {}),
            env_var=base_url_env_var,
        )
        credentials = Credentials(
            catalogue.security_schemes,
            environ,
            base_url=url,
            transport=token_transport,
            user_agent=USER_AGENT,
        )
        upstream = Upstream(
            url, settings=settings, transport=transport, redact=credentials.redact, name=catalogue.title
        )
        return cls(
            upstream=upstream,
            credentials=credentials,
            base_url=url,
            settings=settings,
            trim=trim,
            contract=contract,
        )

    async def aclose(self) -> None:
        await self.upstream.aclose()
        await self.credentials.aclose()

    async def __aenter__(self) -> HttpRuntime:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


def make_http_tool(entry: ToolEntry, runtime: HttpRuntime) -> Tool:
    """The :class:`Tool` that calls ``entry``'s operation through ``runtime``."""
    binding = entry.binding
    operation = entry.operation
    output_check = OutputCheck(entry.output_schema) if entry.output_schema is not None else None
    redact = runtime.credentials.redact

    async def run(args: dict[str, Any], ctx: ToolContext) -> mcp_types.CallToolResult:
        fields: list[str] | None = None
        if binding.fields_arg is not None and binding.fields_arg in args:
            args = dict(args)
            fields = split_fields(args.pop(binding.fields_arg))  # never sent upstream
        try:
            prepared = build_request(binding, args, base_url=runtime.base_url, operation=operation)
            parts = await runtime.credentials.for_operation(binding.security)
            prepared = prepared.with_credentials(parts)
            response = await runtime.upstream.send(prepared)
            if runtime.contract is not None and not response.truncated:
                # openapi-core takes ~20 ms a response: off the event loop, so other calls go on.
                await anyio.to_thread.run_sync(
                    runtime.contract.check,
                    binding.method,
                    binding.path,
                    response.status,
                    response.headers,
                    response.content,
                )
            if response.status >= 400:
                if response.status == 401:
                    runtime.credentials.invalidate(parts)
                raise status_error(response, binding=binding, redact=redact, credential_env=parts.env_names)
            to_result = functools.partial(
                response_to_result,
                response,
                binding=binding,
                tool_name=entry.name,
                redact=redact,
                output_check=output_check,
                trim=runtime.trim,
                fields=fields,
            )
            if len(response.content) > OFF_LOOP_BYTES:
                # parsing, redacting and trimming a big body takes milliseconds per 32 KiB: off the loop
                return await anyio.to_thread.run_sync(to_result)
            return to_result()
        except UpstreamStatusError as exc:
            raise UpstreamStatusError(redact(str(exc)), status=exc.status) from None
        except ToolError as exc:
            raise type(exc)(redact(str(exc))) from None

    return Tool(
        name=entry.name,
        run=run,
        description=entry.description,
        title=entry.title,
        input_schema=entry.input_schema,
        output_schema=entry.output_schema,
        annotations=_annotations(entry.annotations),
        meta={OPERATION_META_KEY: operation},
        apply_defaults=False,
        checks_own_output=True,
    )


@functools.cache
def _annotations(spec: ToolAnnotationsSpec) -> Mapping[str, Any]:
    """One read-only mapping per distinct annotation set (an API has at most a handful)."""
    return MappingProxyType(dataclasses.asdict(spec))


def tools_from_catalogue(catalogue: Catalogue, runtime: HttpRuntime) -> list[Tool]:
    """One tool per catalogue entry, in catalogue order."""
    return [make_http_tool(entry, runtime) for entry in catalogue.tools]
