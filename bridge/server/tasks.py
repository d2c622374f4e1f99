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
called where the spec links one. Tasks and the results they hold are an
:class:`~bridge.tools.owned.OwnedPool`: each belongs to its caller (:mod:`bridge.server.callers`:
the token's user, else the MCP session), a caller and its client have a share of the pool, and a
task is forgotten ``ttl`` after it ends (the server caps ``ttl`` at an hour). Callers who cannot
be told apart (``--stateless`` without authentication) get no tasks: the capability is not
advertised to them and a task-augmented call is refused; the call without a task still runs.
"""

from __future__ import annotations

import logging
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

from bridge.secrets.excerpt import cut_redacted
from bridge.server.callers import caller_of
from bridge.server.cursor import page_start
from bridge.tools.owned import OwnedPool, PoolFull
from bridge.tools.registry import Confirmer, ToolContext

__all__ = ["RELATED_TASK_KEY", "TASK_SUPPORT", "TaskRunner"]

logger = logging.getLogger("bridge.longrunning.tasks")

RELATED_TASK_KEY = "io.modelcontextprotocol/related-task"
TASK_SUPPORT = {"taskSupport": "optional"}
DEFAULT_TTL_MS = 30 * 60_000
MAX_TTL_MS = 3_600_000  # the server's cap on the ttl a client asks for
POLL_INTERVAL_MS = 1000
MAX_TASKS = 1024
TASKS_PER_CALLER = 16
TASKS_PER_CLIENT = 64
PAGE = 50
UNKNOWN_TASK = (
    "Unknown task id: it expired, was never made, or is not yours. If it started an operation, that "
    "operation may still be running or be done: check with the API (list or get the resource) before "
    "starting it again."
)

STATUS_MESSAGE_CHARS = 500  # of a failed task's first text block, as its status message

# The tools/call being served when it asked for a task: the handler puts the CreateTaskResult here
# and the middleware answers with it (the SDK would check a handler's tools/call result against
# CallToolResult).
_CREATED: ContextVar[list[dict[str, Any]] | None] = ContextVar("bridge_task_created", default=None)

Run = Callable[[ToolContext], Awaitable[mcp_types.CallToolResult | mcp_types.InputRequiredResult]]


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass(eq=False)
class _Task:
    ttl: int
    id: str = ""
    created: str = field(default_factory=_now)
    updated: str = field(default_factory=_now)
    status: str = "working"
    message: str | None = None
    result: mcp_types.CallToolResult | None = None
    error: MCPError | None = None
    scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)
    cancelled: anyio.Event | None = None  # the run's ToolContext.cancelled: set by tasks/cancel only
    done: anyio.Event = field(default_factory=anyio.Event)
    on_end: Callable[[], None] | None = None  # called once it reaches a terminal status (its ttl starts)

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
        self.status, self.message, self.updated = status, message, _now()
        self.done.set()
        if self.on_end is not None:
            self.on_end()


class _ConfirmFirst:
    """The user is asked while ``tools/call`` is still open; the task exists only once they agreed.

    A refusal raises: the run ends, and its result goes back as the call's own.
    """

    def __init__(self, confirm: Confirmer, gate: anyio.Event) -> None:
        self._confirm = confirm
        self._gate = gate

    async def __call__(self, entry: Any, arguments: Mapping[str, Any], target: str | None) -> Any:
        answer = await self._confirm(entry, arguments, target)
        self._gate.set()
        return answer

    def sent(self, entry: Any, arguments: Mapping[str, Any], response: Any) -> None:
        self._confirm.sent(entry, arguments, response)


class TaskRunner:
    """The tasks of one server: created by task-augmented ``tools/call``, run in the server's task group."""

    def __init__(self, deadline: float, *, anonymous_callers: bool = False) -> None:
        """``anonymous_callers``: every caller may be anonymous (``--stateless`` without authentication)."""
        self.deadline = deadline
        self.anonymous_callers = anonymous_callers
        # A task runs at most `deadline` (and its confirmation), then is kept `ttl`.
        self._tasks: OwnedPool[_Task] = OwnedPool(
            total=MAX_TASKS,
            per_caller=TASKS_PER_CALLER,
            per_group=TASKS_PER_CLIENT,
            max_ttl=2 * deadline + MAX_TTL_MS / 1000,
            what="tasks",
        )
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
            if protocol_version in MODERN_PROTOCOL_VERSIONS or self.anonymous_callers:
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
        caller = tool_ctx.caller  # the handler's caller_of(ctx)
        if caller.anonymous:
            # Anonymous stateless callers cannot be told apart: one could read another's task.
            raise MCPError(
                code=mcp_types.INVALID_REQUEST,
                message="Tasks need a session or an access token on this server; call the tool without a task.",
            )
        asked = params.task.ttl if params.task is not None else None
        task = _Task(ttl=min(asked or DEFAULT_TTL_MS, MAX_TTL_MS))
        try:  # kept while it runs (at most the deadline and a confirmation), then `ttl` after it ends
            task.id = self._tasks.add(caller, task, 2 * self.deadline + task.ttl / 1000)
        except PoolFull as exc:
            raise MCPError(
                code=mcp_types.INVALID_REQUEST, message=f"No new task: {exc}. Wait for some to end or expire."
            ) from None
        task.on_end = lambda: self._tasks.keep_for(task.id, task.ttl / 1000)
        gate = anyio.Event()
        confirm = tool_ctx.confirm
        early: list[mcp_types.CallToolResult] = []

        background = replace(
            tool_ctx,
            confirm=_ConfirmFirst(confirm, gate) if confirm is not None else None,
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
                self._tasks.discard(task.id)
                raise
            if early:
                self._tasks.discard(task.id)
                return early[0]  # ended before the task was made (declined): the plain result
        holder = _CREATED.get()
        assert holder is not None
        holder.append({"task": task.wire()})
        return mcp_types.CallToolResult(content=[])

    # ----------------------------------------------------------------------------- methods

    def _find(self, ctx: ServerRequestContext[Any, Any], task_id: str) -> _Task:
        task = self._tasks.get(caller_of(ctx), task_id)
        if task is None:
            raise MCPError(code=mcp_types.INVALID_PARAMS, message=UNKNOWN_TASK)
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
        mine = [task for _, task in self._tasks.mine(caller_of(ctx))]
        start = page_start(params.cursor, self._tasks.total)  # tasks expire between pages: past the end is empty
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
            return cut_redacted(block.text, STATUS_MESSAGE_CHARS, mark="…")  # the handler redacted it
    return None
