"""MCP tasks (protocol 2025-11-25) for long-running tools: a task-augmented call answers at once, the work runs on.

The SDK carries the 2025-11-25 task types but serves no ``tasks/*`` method, and its 2026-07-28
tasks extension (``io.modelcontextprotocol/tasks``) is only an extension point: so the bridge
serves ``tasks/get``, ``tasks/result``, ``tasks/list`` and ``tasks/cancel`` itself, advertises
``capabilities.tasks`` on handshake-era connections only, and lists ``execution.taskSupport:
optional`` on its long-running tools. 2026-07-28 clients get the no-tasks path (wait with
progress, then a handle for the status tool).

A task-augmented call is validated and, under ``--confirm``, confirmed while the request is
still open; then ``CreateTaskResult`` goes back and the call runs in the server's task group,
following its operation until the tracker's ``deadline``. The final result is what the call
would have returned (trimmed and redacted like any result); an ``isError`` result makes the task
``failed``. ``tasks/cancel`` cancels the run: polling stops and the API's cancel operation is
called where the spec links one. Tasks belong to their caller (the token's principal, else the
MCP session), are capped in number, and are forgotten ``ttl`` after they end.
"""

from __future__ import annotations

import logging
import secrets
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

import anyio
import anyio.abc
import mcp_types
from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from bridge.server.cursor import page_start
from bridge.tools.registry import ToolContext

__all__ = ["RELATED_TASK_KEY", "TASK_SUPPORT", "TaskRunner"]

logger = logging.getLogger("bridge.longrunning.tasks")

RELATED_TASK_KEY = "io.modelcontextprotocol/related-task"
TASK_SUPPORT = {"taskSupport": "optional"}
DEFAULT_TTL_MS = 3_600_000
MAX_TTL_MS = 24 * 3_600_000
POLL_INTERVAL_MS = 1000
MAX_TASKS = 256
PAGE = 50

# The tools/call being served when it asked for a task: the handler puts the CreateTaskResult here
# and the middleware answers with it (the SDK would check a handler's tools/call result against
# CallToolResult).
_CREATED: ContextVar[list[dict[str, Any]] | None] = ContextVar("bridge_task_created", default=None)

Run = Callable[[ToolContext], Awaitable[mcp_types.CallToolResult | mcp_types.InputRequiredResult]]


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _owner(ctx: ServerRequestContext[Any, Any]) -> str | None:
    from mcp.server.auth.middleware.auth_context import get_access_token

    token = get_access_token()
    if token is not None:
        return f"token:{token.subject or '-'}|{token.client_id}"
    request = ctx.request
    session = request.headers.get("mcp-session-id") if request is not None and hasattr(request, "headers") else None
    return f"session:{session}" if session else None


@dataclass(eq=False)
class _Task:
    id: str
    owner: str | None
    ttl: int
    created: str = field(default_factory=_now)
    updated: str = field(default_factory=_now)
    status: str = "working"
    message: str | None = None
    result: mcp_types.CallToolResult | None = None
    error: MCPError | None = None
    scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)
    cancelled: anyio.Event | None = None  # the run's ToolContext.cancelled: set by tasks/cancel only
    done: anyio.Event = field(default_factory=anyio.Event)
    ended: float | None = None  # time.monotonic() when it reached a terminal status

    def wire(self) -> dict[str, Any]:
        task = mcp_types.Task(
            task_id=self.id,
            status=self.status,  # type: ignore[arg-type]  # one of the five TaskStatus values
            status_message=self.message,
            created_at=self.created,
            last_updated_at=self.updated,
            ttl=self.ttl,
            poll_interval=POLL_INTERVAL_MS,
        )
        return task.model_dump(by_alias=True, mode="json", exclude_none=True) | {"ttl": self.ttl}

    def finish(self, status: str, message: str | None = None) -> None:
        if self.done.is_set():
            return
        self.status, self.message, self.updated, self.ended = status, message, _now(), time.monotonic()
        self.done.set()


class TaskRunner:
    """The tasks of one server: created by task-augmented ``tools/call``, run in the server's task group."""

    def __init__(self, deadline: float, *, max_tasks: int | None = None) -> None:
        self.deadline = deadline
        self.max_tasks = max_tasks or MAX_TASKS
        self._tasks: OrderedDict[str, _Task] = OrderedDict()
        self._groups: list[anyio.abc.TaskGroup] = []

    # --------------------------------------------------------------------------- wiring

    def install(self, server: Any) -> None:
        """Serve ``tasks/*`` on ``server`` (an SDK low-level ``Server``) and advertise the capability."""
        server.add_request_handler("tasks/get", mcp_types.GetTaskRequestParams, self.get)
        server.add_request_handler("tasks/result", mcp_types.GetTaskPayloadRequestParams, self.result)
        server.add_request_handler("tasks/list", mcp_types.PaginatedRequestParams, self.list)
        server.add_request_handler("tasks/cancel", mcp_types.CancelTaskRequestParams, self.cancel)
        server.middleware.append(self.middleware)
        plain = server.get_capabilities

        def get_capabilities(*args: Any, protocol_version: str | None = None, **kwargs: Any) -> Any:
            capabilities = plain(*args, protocol_version=protocol_version, **kwargs)
            if protocol_version in MODERN_PROTOCOL_VERSIONS:
                return capabilities
            return capabilities.model_copy(update={"tasks": _CAPABILITY})

        server.get_capabilities = get_capabilities

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """The task group tasks run in (the server's lifespan): leaving it cancels its tasks.

        Each lifespan (one per in-process client; one for HTTP or stdio) has its own group, and new
        tasks go to the latest open one.
        """
        async with anyio.create_task_group() as group:
            self._groups.append(group)
            try:
                yield
            finally:
                self._groups.remove(group)
                group.cancel_scope.cancel()

    async def middleware(self, ctx: ServerRequestContext[Any, Any], call_next: Any) -> Any:
        if ctx.method != "tools/call" or not isinstance((ctx.params or {}).get("task"), Mapping):
            return await call_next(ctx)
        holder: list[dict[str, Any]] = []
        token = _CREATED.set(holder)
        try:
            result = await call_next(ctx)
        finally:
            _CREATED.reset(token)
        return holder[0] if holder else result

    def wants_task(self, ctx: ServerRequestContext[Any, Any], params: mcp_types.CallToolRequestParams) -> bool:
        """True when this call asked for a task on a connection that has them."""
        return (
            params.task is not None
            and ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS
            and _CREATED.get() is not None
        )

    # ------------------------------------------------------------------------------ submit

    async def submit(
        self,
        ctx: ServerRequestContext[Any, Any],
        params: mcp_types.CallToolRequestParams,
        run: Run,
        tool_ctx: ToolContext,
        *,
        task_support: bool,
    ) -> mcp_types.CallToolResult:
        """Start ``run`` as a task; the ``CreateTaskResult`` goes out through the middleware.

        Returns the call's own result instead when it ends before its task exists (declined).
        """
        if not task_support:
            raise MCPError(
                code=mcp_types.METHOD_NOT_FOUND, message=f'Tool "{params.name[:200]}" does not run as a task.'
            )
        if not self._groups:
            raise MCPError(code=mcp_types.INTERNAL_ERROR, message="Tasks are not available on this server now.")
        self._expire()
        if len(self._tasks) >= self.max_tasks:
            raise MCPError(code=mcp_types.INVALID_REQUEST, message="Too many tasks; wait for some to finish.")
        asked = params.task.ttl if params.task is not None else None
        task = _Task(id=secrets.token_urlsafe(18), owner=_owner(ctx), ttl=min(asked or DEFAULT_TTL_MS, MAX_TTL_MS))
        gate = anyio.Event()
        confirm = tool_ctx.confirm
        early: list[mcp_types.CallToolResult] = []

        async def confirm_first(entry: Any, arguments: Mapping[str, Any]) -> None:
            # The user is asked while tools/call is still open; the task exists only once they agreed.
            # A refusal raises: the run ends, and its result goes back as the call's own.
            assert confirm is not None
            await confirm(entry, arguments)
            gate.set()

        background = replace(
            tool_ctx,
            confirm=confirm_first if confirm is not None else None,
            follow_until=anyio.current_time() + self.deadline,
            _report_progress=_quiet,
            cancelled=anyio.Event(),
            detached=True,
        )

        async def body() -> None:
            try:
                with task.scope:
                    try:
                        answer = await run(background)
                        # Input rounds are a 2026-07-28 thing, and tasks are handshake-era only.
                        assert isinstance(answer, mcp_types.CallToolResult)
                        result = answer
                    except MCPError as exc:
                        task.error = exc
                        task.finish("failed", exc.error.message)
                        return
                    if not gate.is_set():
                        early.append(result)
                    task.result = result
                    failed = bool(result.is_error)
                    task.finish("failed" if failed else "completed", _first_text(result) if failed else None)
                if task.scope.cancelled_caught:
                    task.finish("cancelled", "Cancelled: the server stopped.")
            finally:
                gate.set()

        task.cancelled = background.cancelled
        self._groups[-1].start_soon(body)
        if confirm is not None:
            try:
                await gate.wait()  # bounded: the confirmation has its own timeout
            except BaseException:
                task.scope.cancel()  # the call itself was cancelled before its task existed
                raise
            if early:
                return early[0]  # ended before the task was made (declined): the plain result
        self._tasks[task.id] = task
        holder = _CREATED.get()
        assert holder is not None
        holder.append({"task": task.wire()})
        return mcp_types.CallToolResult(content=[])

    # ----------------------------------------------------------------------------- methods

    def _find(self, ctx: ServerRequestContext[Any, Any], task_id: str) -> _Task:
        self._expire()
        task = self._tasks.get(task_id)
        if task is None or task.owner != _owner(ctx):
            raise MCPError(code=mcp_types.INVALID_PARAMS, message="Unknown task id.")
        return task

    async def get(self, ctx: ServerRequestContext[Any, Any], params: mcp_types.GetTaskRequestParams) -> dict[str, Any]:
        return self._find(ctx, params.task_id).wire()

    async def result(
        self, ctx: ServerRequestContext[Any, Any], params: mcp_types.GetTaskPayloadRequestParams
    ) -> dict[str, Any]:
        task = self._find(ctx, params.task_id)
        await task.done.wait()  # bounded: the run ends by the tracker's deadline, or is cancelled
        if task.error is not None:
            raise task.error
        if task.result is None:
            raise MCPError(code=mcp_types.INVALID_PARAMS, message=f"The task was {task.status}; it has no result.")
        wire = task.result.model_dump(by_alias=True, mode="json", exclude_none=True)
        wire.pop("resultType", None)  # a 2026-07-28 field; tasks are served on handshake-era connections
        wire["_meta"] = {**wire.get("_meta", {}), RELATED_TASK_KEY: {"taskId": task.id}}
        return wire

    async def list(
        self, ctx: ServerRequestContext[Any, Any], params: mcp_types.PaginatedRequestParams
    ) -> dict[str, Any]:
        self._expire()
        owner = _owner(ctx)
        mine = [t for t in reversed(self._tasks.values()) if t.owner == owner]
        start = page_start(params.cursor, self.max_tasks)  # tasks expire between pages: past the end is empty
        page: dict[str, Any] = {"tasks": [t.wire() for t in mine[start : start + PAGE]]}
        if start + PAGE < len(mine):
            page["nextCursor"] = str(start + PAGE)
        return page

    async def cancel(
        self, ctx: ServerRequestContext[Any, Any], params: mcp_types.CancelTaskRequestParams
    ) -> dict[str, Any]:
        task = self._find(ctx, params.task_id)
        if task.done.is_set():
            raise MCPError(code=mcp_types.INVALID_PARAMS, message=f"The task is already {task.status}.")
        task.finish("cancelled", "Cancelled by the client.")
        if task.cancelled is not None:
            task.cancelled.set()  # first: this cancellation also cancels the operation at the API
        task.scope.cancel()
        return task.wire()

    def _expire(self) -> None:
        now = time.monotonic()
        for task_id, task in list(self._tasks.items()):
            if task.ended is not None and now - task.ended > task.ttl / 1000:
                del self._tasks[task_id]


_CAPABILITY = mcp_types.ServerTasksCapability(
    list=mcp_types.TasksListCapability(),
    cancel=mcp_types.TasksCancelCapability(),
    requests=mcp_types.ServerTasksRequestsCapability(
        tools=mcp_types.TasksToolsCapability(call=mcp_types.TasksCallCapability())
    ),
)


async def _quiet(progress: float, total: float | None, message: str | None) -> None:
    """A task's run reports no progress: the request that started it has been answered."""


def _first_text(result: mcp_types.CallToolResult) -> str | None:
    for block in result.content:
        if isinstance(block, mcp_types.TextContent):
            return block.text[:500]
    return None
