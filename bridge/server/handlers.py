"""Serve a ToolRegistry on the MCP SDK's low-level ``Server``: the reference tool semantics.

- ``tools/list`` returns typed ``mcp_types.Tool`` models, built once and rebuilt only when the
  registry's tools change.
- ``tools/call``: an unknown tool is a JSON-RPC error (-32602). Arguments are validated before
  ``run`` (failure: an ``isError`` result naming every bad field; ``run`` is not called), schema
  defaults are applied, and the return value is mapped by :func:`bridge.tools.content.to_call_result`.
  A ``ToolError``, and any exception a hand-written tool's ``run`` raises (see
  :func:`bridge.tools.registry.run_tool`), becomes an ``isError`` result with its message, redacted. Any
  other exception (a bug of the bridge's own tools or of the result mapping) becomes an
  ``isError`` result with a fixed message and is logged with its traceback, never sent. An
  ``MCPError`` raised by ``run`` is answered as a JSON-RPC error with its code. Cancellation is
  never caught: the tool's task is cancelled, ``ctx.cancelled`` is set, and the SDK sends no
  response for the cancelled request.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Mapping, Sequence
from contextvars import ContextVar
from typing import Any

import anyio
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS
from pydantic import ValidationError

from bridge.confirm.asking import Confirmations, InputRequired
from bridge.identity.scopes import allows, caller_scopes, missing
from bridge.secrets.held import call_scope
from bridge.secrets.scrub import scrub
from bridge.server.call_wire import CallResultWire, hold_structured
from bridge.server.callers import caller_of
from bridge.server.tasks import TaskRunner
from bridge.tools.argument_size import DEFAULT_MAX_ARGUMENT_BYTES
from bridge.tools.content import error_result
from bridge.tools.errors import ToolError
from bridge.tools.invoke import invoke
from bridge.tools.registry import Tool, ToolContext, ToolRegistry, single_leaf
from bridge.tools.validation import ArgumentValidator

__all__ = ["UNEXPECTED_ERROR_MESSAGE", "build_server", "modern_wire_data", "wire_data", "wire_tool"]

logger = logging.getLogger("bridge.server")

UNEXPECTED_ERROR_MESSAGE = 'Tool "{name}" failed unexpectedly; the error was logged on the server.'
"""The ``isError`` text for a bug: an exception of the bridge's own tools that is neither ToolError nor MCPError."""

_EMPTY_META: Mapping[str, Any] = {}

# Set while the SDK makes a 2026-07-28 tools/list envelope: the handler then lists no tools.
_ENVELOPE_ONLY: ContextVar[bool] = ContextVar("bridge_tools_envelope_only", default=False)
# Distinct scope sets whose tool lists are kept (a few roles in practice; bounded against churn).
MAX_SCOPE_SETS = 64


def _plain(value: Any) -> Any:
    """Mappings and tuples as dicts and lists, so pydantic can serialise any schema object.

    A plain dict is taken as it is (JSON data, as every generated schema is): copying a thousand
    tools' schemas doubled the memory and the time of the first tools/list.
    """
    if type(value) is dict:
        return value
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def wire_data(tool: Tool) -> dict[str, Any]:
    """``tool`` as the JSON data ``tools/list`` sends on a handshake-era connection.

    It is what the SDK's dump of :func:`wire_tool` gives, built without the pydantic models: the
    schemas are the tool's own dicts, not copies (tests compare the two for every version).
    """
    wire: dict[str, Any] = {"name": tool.name}
    if tool.title is not None:
        wire["title"] = tool.title
    if tool.description:
        wire["description"] = tool.description
    shown = tool.advertised_input_schema if tool.advertised_input_schema is not None else tool.input_schema
    wire["inputSchema"] = _plain(shown)
    if tool.output_schema is not None:
        wire["outputSchema"] = _plain(tool.output_schema)
    # The title is not repeated inside the annotations: clients read `title` first, and on a big
    # API the copy costs tens of kilobytes of every tools/list.
    if tool.annotations:
        wire["annotations"] = {k: _plain(v) for k, v in tool.annotations.items() if v is not None}
    if tool.execution is not None:  # 2025-11-25 task support (2026-07-28 has no such field)
        wire["execution"] = _plain(tool.execution)
    if tool.meta is not None:
        wire["_meta"] = _plain(tool.meta)
    return wire


def modern_wire_data(tool: Tool) -> dict[str, Any]:
    """``tool`` as a 2026-07-28 ``tools/list`` sends it: :func:`wire_data` without ``execution``
    (tasks are a 2025-11-25 feature; the 2026 tool has no such field)."""
    data = wire_data(tool)
    data.pop("execution", None)
    return data


def wire_tool(tool: Tool) -> types.Tool:
    """``tool`` as ``tools/list`` sends it, checked by the SDK's model."""
    return types.Tool.model_validate(wire_data(tool), by_name=False)


class _ToolHandlers:
    """The ``tools/list`` and ``tools/call`` handlers over one registry."""

    def __init__(
        self,
        registry: ToolRegistry,
        redact: Callable[[str], str],
        max_argument_bytes: int = DEFAULT_MAX_ARGUMENT_BYTES,
        *,
        confirmations: Confirmations | None = None,
        tasks: TaskRunner | None = None,
    ) -> None:
        self._registry = registry
        self._confirmations = confirmations
        self._tasks = tasks
        self._redact = redact
        self._validator = ArgumentValidator(registry, max_argument_bytes=max_argument_bytes)
        self._listed: tuple[Tool, ...] = ()
        self._visible: dict[frozenset[str], tuple[tuple[Tool, ...], tuple[Tool, ...]]] = {}

    def input_schema(self, name: str) -> Mapping[str, Any] | None:
        tool = self._registry.get(name)
        return None if tool is None else tool.input_schema

    def listing(self) -> tuple[Tool, ...]:
        """The registry's tools; the same tuple object for as long as they have not changed."""
        current = tuple(self._registry)
        if len(current) != len(self._listed) or not all(a is b for a, b in zip(current, self._listed, strict=True)):
            self._listed = current
            self._visible.clear()
        return self._listed

    def visible(self) -> tuple[frozenset[str] | None, tuple[Tool, ...]]:
        """The tools the caller's token allows, and the scope set they were chosen for.

        Unauthenticated callers (stdio, HTTP without ``--auth-*``) see every tool; the same scope
        set gets the same tuple object, so the wire cache below keeps one answer per scope set.
        """
        listed = self.listing()
        granted = caller_scopes() if any(tool.scopes for tool in listed) else None
        if granted is None:
            return None, listed
        hit = self._visible.get(granted)
        if hit is None or hit[0] is not listed:
            if len(self._visible) >= MAX_SCOPE_SETS:
                self._visible.clear()
            hit = self._visible[granted] = (listed, tuple(t for t in listed if allows(t.scopes, granted)))
        return granted, hit[1]

    def list_result(self) -> types.ListToolsResult:
        # Built on demand and not kept: the wire cache below keeps the shaped answer instead, and
        # holding both would double the memory of a big API's tool list.
        return types.ListToolsResult(tools=[_checked(t, wire_data(t)) for t in self.visible()[1]])

    async def list_tools(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        if _ENVELOPE_ONLY.get():
            return types.ListToolsResult(tools=[])
        return self.list_result()

    async def call_tool(
        self, ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult:
        tool = self._registry.get(params.name)
        if tool is None:
            raise MCPError(
                code=types.INVALID_PARAMS,
                message=f'Unknown tool "{params.name[:200]}". Call tools/list to see the available tools.',
            )
        if tool.scopes and not allows(tool.scopes, granted := caller_scopes()):
            # On HTTP the scope guard answers 403 (step-up) before this; here it is a second line.
            needed = " ".join(missing(tool.scopes, granted or ()))
            return error_result(f'Tool "{tool.name}" needs the scope(s) {needed}; ask the user to grant them.')
        raw_meta = ctx.params.get("_meta") if ctx.params is not None else None
        caller = caller_of(ctx)
        tool_ctx = ToolContext(
            tool_name=tool.name,
            meta=raw_meta if isinstance(raw_meta, Mapping) else _EMPTY_META,
            _report_progress=ctx.session.report_progress,
            confirm=self._confirmations.for_request(ctx, caller) if self._confirmations is not None else None,
            caller=caller,
        )
        if self._tasks is not None and self._tasks.wants_task(ctx, params):
            try:  # a bad call is answered at once, not as a failed task
                self._validator.validate(tool.name, params.arguments, apply_defaults=tool.apply_defaults)
            except ToolError as exc:
                return self._error(tool, exc)
            run = functools.partial(self._run, tool, params.arguments)
            return await self._tasks.submit(ctx, params, run, tool_ctx, task_support=tool.execution is not None)
        result = await self._run(tool, params.arguments, tool_ctx)
        return hold_structured(result) if tool.structured_is_json else result

    async def _run(
        self, tool: Tool, arguments: dict[str, Any] | None, tool_ctx: ToolContext
    ) -> types.CallToolResult | types.InputRequiredResult:
        """The tool's result, or its error as an ``isError`` result (``InputRequiredResult``: a confirmation round).

        Every token the call learns or sends stays redacted until its result and error are made."""
        with call_scope():
            return await self._run_held(tool, arguments, tool_ctx)

    async def _run_held(
        self, tool: Tool, arguments: dict[str, Any] | None, tool_ctx: ToolContext
    ) -> types.CallToolResult | types.InputRequiredResult:
        try:
            return await invoke(tool, self._validator, arguments, tool_ctx)
        except MCPError:
            raise
        except InputRequired as exc:
            return exc.result
        except ToolError as exc:
            return self._error(tool, exc)
        except Exception as exc:
            leaf = single_leaf(exc)
            if isinstance(leaf, MCPError):
                raise leaf from exc
            if isinstance(leaf, InputRequired):
                return leaf.result
            if isinstance(leaf, ToolError):
                return self._error(tool, leaf)
            logger.exception('Tool "%s" failed unexpectedly', tool.name)
            return error_result(UNEXPECTED_ERROR_MESSAGE.format(name=tool.name))
        except BaseException as exc:
            if isinstance(exc, anyio.get_cancelled_exc_class()):
                tool_ctx.cancelled.set()
            raise

    def _error(self, tool: Tool, exc: ToolError) -> types.CallToolResult:
        # HTTP tools' messages are redacted already; a hand-written tool's may quote anything.
        return error_result(self._redact(str(exc)) or f'Tool "{tool.name}" failed.')


class _ListToolsWireCache:
    """Keeps each protocol version's ``tools/list`` answer until the tool set changes.

    The tools are sent as plain JSON data that shares the tools' schema dicts: the SDK's own path
    dumps, re-validates and re-dumps the whole list (most of a second and tens of megabytes on a
    thousand tools). Each tool is still checked with the SDK's ``Tool`` model, and tests compare
    the answer with the SDK's for every version. A 2024-11-05 .. 2025-11-25 answer is just the
    list; for a 2026-07-28 one, the SDK still makes the envelope (cache hints, result type, server
    stamp) around an empty list, and the tools go into it. Requests with a cursor, and sessions
    whose handshake is not done (the SDK's gate must answer them), always take the normal path.
    """

    def __init__(self, handlers: _ToolHandlers) -> None:
        self._handlers = handlers
        self._wire: dict[tuple[str, frozenset[str] | None], tuple[tuple[Tool, ...], Any]] = {}

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: Any) -> Any:
        if ctx.method != "tools/list" or ctx.request_id is None or not self._cacheable(ctx):
            return await call_next(ctx)
        granted, current = self._handlers.visible()
        key = (ctx.protocol_version, granted)
        hit = self._wire.get(key)
        if hit is not None and hit[0] is current:
            return hit[1]
        if ctx.protocol_version in HANDSHAKE_PROTOCOL_VERSIONS:
            result: Any = {"tools": [_checked_wire_data(tool) for tool in current]}
        elif any(None in (tool.meta or {}).values() for tool in current):
            result = await call_next(ctx)  # the 2026 wire drops null _meta members: the SDK's path
        else:
            token = _ENVELOPE_ONLY.set(True)
            try:
                result = await call_next(ctx)
            finally:
                _ENVELOPE_ONLY.reset(token)
            if isinstance(result, dict) and result.get("tools") == []:
                result = {**result, "tools": [_checked_wire_data(tool, modern=True) for tool in current]}
        if isinstance(result, dict):
            if len(self._wire) >= MAX_SCOPE_SETS:
                self._wire.clear()
            self._wire[key] = (current, result)
        return result

    @staticmethod
    def _cacheable(ctx: ServerRequestContext[Any, Any]) -> bool:
        if any(key != "_meta" for key in ctx.params or {}):
            return False
        return ctx.protocol_version in MODERN_PROTOCOL_VERSIONS or ctx.session.client_params is not None


def _checked(tool: Tool, data: dict[str, Any]) -> types.Tool:
    """``data`` (``tool``'s wire data) as the SDK's ``Tool`` model: the check the SDK would make."""
    try:
        return types.Tool.model_validate(data, by_name=False)
    except ValidationError:
        # As the SDK answers a handler's invalid result: the details stay in the server's log.
        logger.exception('Tool "%s" has an invalid definition', tool.name)
        raise MCPError(code=types.INTERNAL_ERROR, message="Handler returned an invalid result") from None


def _checked_wire_data(tool: Tool, *, modern: bool = False) -> dict[str, Any]:
    data = modern_wire_data(tool) if modern else wire_data(tool)
    _checked(tool, data)
    return data


def build_server(
    registry: ToolRegistry,
    *,
    name: str,
    version: str,
    instructions: str | None = None,
    opentelemetry: bool = True,
    redact: Callable[[str], str] = scrub,
    max_argument_bytes: int = DEFAULT_MAX_ARGUMENT_BYTES,
    title: str | None = None,
    icons: Sequence[types.Icon] | None = None,
    confirmations: Confirmations | None = None,
    tasks: TaskRunner | None = None,
) -> Server[Any]:
    """Build the MCP server that serves ``registry``'s tools.

    ``opentelemetry=False`` removes the SDK's default OpenTelemetry middleware (a span per
    message, and trace-context pick-up from ``_meta``). It is kept by default: it costs about
    5-10% of in-process throughput, which is nothing next to an upstream HTTP call, and dropping
    it would silently break tracing for deployments that install an OpenTelemetry SDK.

    ``max_argument_bytes`` caps one call's arguments (0: no cap; see ``bridge.tools.argument_size``).
    ``redact`` scrubs every tool error message before it is sent (default: the structural
    credential spellings of :func:`bridge.secrets.scrub.scrub`; ``Credentials.redact`` adds the
    configured secret values).

    ``confirmations`` asks the user before covered calls (``--confirm``, bridge/confirm/);
    ``tasks`` serves MCP tasks for tools with ``execution`` (bridge/server/tasks.py); the
    caller runs ``tasks.running()`` in the server's lifespan.
    """
    handlers = _ToolHandlers(registry, redact, max_argument_bytes, confirmations=confirmations, tasks=tasks)
    server: Server[Any] = Server(
        name,
        version=version,
        title=title,
        icons=list(icons) if icons else None,
        instructions=instructions,
        on_list_tools=handlers.list_tools,
        on_call_tool=handlers.call_tool,
        # Also spares the 2026-07-28 HTTP path a tools/list run per call (Mcp-Param-* checks).
        get_tool_input_schema=handlers.input_schema,
    )
    if not opentelemetry:
        server.middleware = [m for m in server.middleware if type(m).__name__ != "OpenTelemetryMiddleware"]
    server.middleware.append(_ListToolsWireCache(handlers))
    server.middleware.append(CallResultWire())
    if tasks is not None:
        tasks.install(server)
    return server
