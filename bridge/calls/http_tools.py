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
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

import anyio
import mcp_types

from bridge.calls.context import CallContext, current_identity
from bridge.calls.longrunning.follow import OperationPending
from bridge.calls.longrunning.pending import pending_result
from bridge.calls.operation import OperationCall
from bridge.calls.runtime import HttpRuntime
from bridge.contract.catalogue import OPERATION_META_KEY, Catalogue, SecurityScheme, ToolAnnotationsSpec, ToolEntry
from bridge.identity.scopes import Requirement, requirement
from bridge.results.trim import OFF_LOOP_BYTES, split_fields
from bridge.server.tasks import TASK_SUPPORT
from bridge.tools.errors import ToolError
from bridge.tools.registry import Tool, ToolContext

__all__ = ["make_http_tool", "tool_annotations", "tools_from_catalogue"]

logger = logging.getLogger("bridge.http_tools")


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
        annotations=tool_annotations(entry.annotations),
        meta={OPERATION_META_KEY: entry.operation},
        apply_defaults=False,
        checks_own_output=True,
        structured_is_json=True,
        internal=True,
        execution=TASK_SUPPORT if entry.long_running is not None else None,
    )


@functools.cache
def tool_annotations(spec: ToolAnnotationsSpec) -> Mapping[str, Any]:
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
