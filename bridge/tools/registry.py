"""Tools and their registry: the reference tool semantics, independent of HTTP.

A tool is a name, a description, schemas, annotations and an async ``run(args, ctx)``. Generated
HTTP tools and hand-written tools use this same type.

Errors follow the reference rule: a hand-written tool reports a failure by raising an ordinary
exception, and its message becomes the tool error the model reads (:func:`run_tool`). The
bridge's own tools (``internal=True``: the generated HTTP tools, the discovery tools) raise
:class:`~bridge.tools.errors.ToolError` on purpose; anything else out of them is a bridge bug, whose
message may quote internals, so the server answers it with a fixed text and logs it.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Awaitable, Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

import anyio
from mcp.shared.exceptions import MCPError

from bridge.tools.errors import ToolDefinitionError, ToolError
from bridge.tools.owned import UNKNOWN_CALLER, Caller

logger = logging.getLogger("bridge.tools")

TOOL_NAME_PATTERN = re.compile(r"^[A-Za-z0-9_.-]{1,128}$")

ProgressReporter = Callable[[float, float | None, str | None], Awaitable[None]]


class Confirmer(Protocol):
    """The call core's gate before every upstream call of one request (bridge/confirm/).

    Called with the catalogue ``ToolEntry``, the validated arguments, and ``target``: the request
    as the user would be shown it (``"PUT /v1/users/42"``, bound values masked) when ``serve
    --confirm`` covers the call, None when it does not (the call is then only recorded, so that a
    later input round of the same request does not send it again).
    """

    async def __call__(self, entry: Any, arguments: Mapping[str, Any], target: str | None) -> Any:
        """Raises a ``ToolError`` when the call must not be sent. Returns the answer an earlier
        input round of this request already got for this very call (given instead of sending it
        again), or None: send it."""
        ...

    def sent(self, entry: Any, arguments: Mapping[str, Any], response: Any) -> None:
        """The call was sent and ``response`` came back."""
        ...


async def no_progress(progress: float, total: float | None, message: str | None) -> None:
    """The progress reporter of a call nobody asked progress of."""
    return None


@dataclass(slots=True)
class ToolContext:
    """What ``run`` receives besides its arguments.

    ``cancelled`` is set when the client cancels the call; the handler's task is also cancelled,
    so code that awaits I/O stops there. ``meta`` is the request's ``_meta`` (progress token and
    tracing keys) as the client sent it.
    """

    tool_name: str
    meta: Mapping[str, Any] = field(default_factory=dict)
    cancelled: anyio.Event = field(default_factory=anyio.Event)
    _report_progress: ProgressReporter = no_progress
    # Set by the server when --confirm asks before writes (bridge/confirm/); the call core calls it.
    confirm: Confirmer | None = None
    # A task's deadline for long-running operations (anyio time); None: the server's wait.
    follow_until: float | None = None
    # A task's run: only an explicit cancel (`cancelled` set) cancels its operation at the API, not
    # the server stopping.
    detached: bool = False
    # Who calls (bridge/server/callers.py): the owner of the tasks, handles and rounds the call leaves.
    caller: Caller = UNKNOWN_CALLER

    async def report_progress(self, progress: float, total: float | None = None, message: str | None = None) -> None:
        """Send a progress notification; does nothing when the client sent no progress token."""
        await self._report_progress(progress, total, message)


RunFunction = Callable[[dict[str, Any], ToolContext], Awaitable[Any]]


@dataclass(frozen=True, slots=True)
class Tool:
    """One MCP tool. ``annotations`` and ``meta`` are sent as given (wire names)."""

    name: str
    run: RunFunction
    description: str = ""
    title: str | None = None
    input_schema: Mapping[str, Any] = field(default_factory=lambda: {"type": "object"})
    output_schema: Mapping[str, Any] | None = None
    # Shown by tools/list instead of input_schema (a big schema cut for size); arguments are still
    # checked against input_schema.
    advertised_input_schema: Mapping[str, Any] | None = None
    annotations: Mapping[str, Any] | None = None
    meta: Mapping[str, Any] | None = None
    # Fill schema defaults into the arguments before run. Generated HTTP tools turn it off: an
    # OpenAPI default is what the API assumes when a value is absent, not a value to send.
    apply_defaults: bool = True
    # run() returns CallToolResults whose structuredContent it has checked against output_schema.
    checks_own_output: bool = False
    # run()'s structuredContent is JSON data already (parsed from an answer): the server sends it
    # without the SDK's re-dumps (bridge/server/call_wire.py).
    structured_is_json: bool = False
    # OAuth scopes a caller needs (alternatives; empty: none): bridge/identity/scopes.py.
    scopes: tuple[frozenset[str], ...] = ()
    # The bridge's own tool: it raises ToolError on purpose, and any other exception is a bug whose
    # message must not reach the model (see run_tool).
    internal: bool = False
    # MCP `execution` (2025-11-25), e.g. {"taskSupport": "optional"} for long-running operations.
    execution: Mapping[str, Any] | None = None


def single_leaf(exc: BaseException) -> BaseException:
    """The one exception inside (nested) exception groups, or ``exc`` itself."""
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    return exc


async def run_tool(tool: Tool, args: dict[str, Any], ctx: ToolContext) -> Any:
    """``tool.run(args, ctx)``, with a hand-written tool's exceptions turned into tool errors.

    An exception raised by a hand-written tool (not ``internal``) becomes a :class:`ToolError`
    carrying its message (the server redacts it like every tool error). ``ToolError`` and
    ``MCPError`` (also alone in an exception group) pass unchanged, and so does cancellation.

    Raises:
        ToolError: the tool failed; the message is for the model.
    """
    if tool.internal:
        return await tool.run(args, ctx)
    try:
        return await tool.run(args, ctx)
    except Exception as exc:
        leaf = single_leaf(exc)
        if isinstance(leaf, ToolError | MCPError):
            raise
        logger.debug(
            'Tool "%s" raised %s; sent to the model as a tool error', tool.name, type(leaf).__name__, exc_info=True
        )
        raise ToolError(str(leaf) or f'Tool "{tool.name}" failed.') from exc


def check_tool_name(name: str) -> None:
    """Raise ToolDefinitionError unless ``name`` is 1-128 characters of ``[A-Za-z0-9_.-]``."""
    if not isinstance(name, str) or not TOOL_NAME_PATTERN.fullmatch(name):
        raise ToolDefinitionError(
            f"Invalid tool name {name!r}: use 1-128 characters of letters, digits, '_', '.' and '-'."
        )


class ToolRegistry:
    """Ordered set of tools with unique, valid names; problems raise at registration."""

    def __init__(self, tools: Iterator[Tool] | list[Tool] | tuple[Tool, ...] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        for tool in tools:
            self.add(tool)

    def add(self, tool: Tool, *, replace: bool = False) -> Tool:
        check_tool_name(tool.name)
        if tool.input_schema.get("type") != "object":
            raise ToolDefinitionError(f'Tool "{tool.name}": the input schema must have "type": "object".')
        if tool.output_schema is not None and tool.output_schema.get("type") != "object":
            raise ToolDefinitionError(f'Tool "{tool.name}": the output schema must have "type": "object".')
        if tool.name in self._tools and not replace:
            raise ToolDefinitionError(f'Duplicate tool name "{tool.name}".')
        self._tools[tool.name] = tool
        return tool

    def remove(self, name: str) -> None:
        del self._tools[name]

    def tool(
        self,
        name: str,
        *,
        description: str = "",
        title: str | None = None,
        input_schema: Mapping[str, Any] | None = None,
        output_schema: Mapping[str, Any] | None = None,
        annotations: Mapping[str, Any] | None = None,
        replace: bool = False,
    ) -> Callable[[RunFunction], RunFunction]:
        """Decorator registering ``async def run(args, ctx)`` as a tool."""

        def register(run: RunFunction) -> RunFunction:
            self.add(
                Tool(
                    name=name,
                    run=run,
                    description=description,
                    title=title,
                    input_schema=input_schema if input_schema is not None else {"type": "object"},
                    output_schema=output_schema,
                    annotations=annotations,
                ),
                replace=replace,
            )
            return run

        return register

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def __iter__(self) -> Iterator[Tool]:
        return iter(self._tools.values())

    def __len__(self) -> int:
        return len(self._tools)

    def __contains__(self, name: object) -> bool:
        return name in self._tools
