"""Following a long-running operation: poll its status URL until it ends, the budget runs out, or the caller cancels.

Every poll goes through the call core (:meth:`bridge.calls.operation.OperationCall.fetch`): the
operation's credentials, the caller's and the API's limits, the response cap, redirects only
under the base path; the status URL itself must pass the redirect rules first, or nothing is
polled. ``Retry-After`` sets the next poll (clamped to the settings); otherwise the interval
grows from ``first_interval`` to ``max_interval``. Polls are counted and capped.

When the caller cancels (``notifications/cancelled``, ``tasks/cancel``), polling stops and the
API's cancel operation, when the spec links one, is called once (shielded, bounded), with the
arguments its link reads from the starting call. When the budget runs out first, the operation
is remembered under an opaque handle (:mod:`bridge.calls.longrunning.tracker`) and
:class:`OperationPending` says how to check again.
"""

from __future__ import annotations

import dataclasses
import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

import anyio
import httpx
import mcp_types

from bridge.calls.longrunning import DEFAULT_DEADLINE, DEFAULT_WAIT
from bridge.calls.longrunning.azure import azure_final
from bridge.calls.longrunning.status import DEFAULT_STATUS_HEADERS, Reading, read_status
from bridge.contract.catalogue import LongRunning, ToolEntry
from bridge.contract.media_types import decode_text
from bridge.results.trim import OFF_LOOP_BYTES
from bridge.secrets.credentials import Credentials
from bridge.secrets.excerpt import SLACK, excerpt
from bridge.secrets.redact import mask_before_decoding
from bridge.tools.errors import ToolError, UnsafeRequestError, UpstreamError
from bridge.upstream.client import UpstreamResponse
from bridge.upstream.redirects import redirect_target
from bridge.upstream.retry import parse_retry_after

if TYPE_CHECKING:
    from bridge.calls.context import ApiResponse, CallContext
    from bridge.contract.expressions.links import LinkSource

__all__ = ["FollowSettings", "OperationFailed", "OperationPending", "Pending", "StartedCall", "status_url"]

logger = logging.getLogger("bridge.longrunning.follow")

STATE_TEXT_CHARS = 64
FAILURE_EXCERPT_CHARS = 500


@dataclass(frozen=True, slots=True)
class FollowSettings:
    """How long and how often the bridge follows one operation."""

    wait: float = DEFAULT_WAIT
    """A call without MCP tasks waits this long, then answers with a handle to check again."""
    deadline: float = DEFAULT_DEADLINE
    """The longest the bridge follows one operation (a task, or checks through the status tool)."""
    first_interval: float = 1.0
    max_interval: float = 30.0
    min_interval: float = 0.5
    """The shortest wait between polls, whatever ``Retry-After`` says (``Retry-After: 0`` must not
    turn the bridge into a tight loop against the API)."""
    max_polls: int = 10_000
    keep: int = 1000
    """Operations remembered for the status tool at once, each caller's share a part of it
    (:mod:`bridge.calls.longrunning.tracker`); none is forgotten to make room for another."""
    cancel_timeout: float = 10.0


class CallRuntime(Protocol):
    """What following reads of the API's runtime (:class:`~bridge.calls.runtime.HttpRuntime`)."""

    @property
    def credentials(self) -> Credentials: ...

    @property
    def base_url(self) -> httpx.URL: ...


class StartedCall(Protocol):
    """The call that started an operation, as following it uses it.

    The call core (:class:`bridge.calls.operation.OperationCall`) follows the operations it starts,
    so following names what it needs of a call instead of importing the core back.
    """

    @property
    def entry(self) -> ToolEntry: ...

    @property
    def operation(self) -> str: ...

    @property
    def runtime(self) -> CallRuntime: ...

    def sibling(self, entry: ToolEntry) -> StartedCall:
        """The call of another operation of the same API (its linked cancel)."""
        ...

    async def fetch(self, url: httpx.URL, context: CallContext, *, what: str = "status") -> UpstreamResponse: ...

    def to_result(
        self, response: UpstreamResponse, *, fields: Sequence[str] | None = None
    ) -> mcp_types.CallToolResult: ...

    async def __call__(
        self,
        arguments: Mapping[str, Any] | None,
        context: CallContext,
        *,
        validated: bool = False,
        raise_status: bool = True,
    ) -> ApiResponse: ...


class OperationPending(ToolError):
    """The budget ran out while the operation was still running; ``pending`` can be checked again."""

    def __init__(self, message: str, pending: Pending) -> None:
        super().__init__(message)
        self.pending = pending


class OperationFailed(UpstreamError):
    """The status URL says the operation failed."""


@dataclass(eq=False, slots=True)
class Pending:
    """One operation the bridge follows."""

    call: StartedCall
    url: httpx.URL
    source: LinkSource
    started: float  # anyio.current_time()
    handle: str = ""
    polls: int = 0
    interval: float = 0.0
    not_before: float = 0.0  # no poll before this instant (Retry-After)
    last: Reading | None = None
    done: anyio.Event = field(default_factory=anyio.Event)

    @property
    def settings(self) -> LongRunning:
        assert self.call.entry.long_running is not None
        return self.call.entry.long_running

    @property
    def state_text(self) -> str:
        """The API's word for where the operation stands: short, printable, redacted (it is upstream text)."""
        text = self.last.state_text if self.last is not None and self.last.state_text else "running"
        read = text[: STATE_TEXT_CHARS + SLACK]  # a bounded read (the word may be megabytes): excerpt drops its tail
        printable = "".join(c for c in read if c.isprintable())  # before redaction: dropping joins the rest
        redact = self.call.runtime.credentials.redact
        return excerpt(printable, redact, STATE_TEXT_CHARS, mark="…", partial=len(read) < len(text)) or "…"


def status_url(response: UpstreamResponse, settings: LongRunning, base_url: httpx.URL, op: str) -> httpx.URL | None:
    """The status URL a 202 answer names, checked like a redirect; None when it names none.

    Raises:
        UnsafeRequestError: the URL leaves the API's origin or base path (in any spelling).
    """
    for name in settings.status_headers or DEFAULT_STATUS_HEADERS:
        location = response.headers.get(name)
        if location is None:
            continue
        try:
            return redirect_target(response.url, location, base_url=base_url, op=op, redact=lambda text: text)
        except UpstreamError:
            raise UnsafeRequestError(
                f"{op}: the API's status URL ({name} header) is outside its origin or base path; mcp-bridge "
                "does not poll it. Tell the user; the operation may still be running."
            ) from None
    return None


async def poll_until(
    pending: Pending, context: CallContext, until: float, settings: FollowSettings
) -> UpstreamResponse:
    """Poll until the operation ends (its final answer) or ``until`` passes (:class:`OperationPending`).

    Raises:
        OperationFailed: the status says it failed.
        OperationPending: still running at ``until``.
        ApiError, UpstreamError: a poll failed.
    """
    op = pending.call.operation
    while True:
        now = anyio.current_time()
        wait = max(pending.not_before - now, 0.0)
        if pending.polls >= settings.max_polls or now + wait >= until:
            raise OperationPending(_pending_message(pending), pending)
        if wait:
            await anyio.sleep(wait)
        response = await pending.call.fetch(pending.url, context)
        pending.polls += 1
        if len(response.content) > OFF_LOOP_BYTES:  # parsing a big status body: off the event loop
            reading = await anyio.to_thread.run_sync(read_status, response, pending.settings)
        else:
            reading = read_status(response, pending.settings)
        pending.last = reading
        if reading.state == "running" or response.status == 202:
            schedule_next(pending, response, settings)
            moved = status_url(response, pending.settings, pending.call.runtime.base_url, op)
            if moved is not None and response.status == 202:
                pending.url = moved
            await context.progress(float(pending.polls), None, f"{op}: {pending.state_text}")
            continue
        if reading.state == "failed":
            raise OperationFailed(_failure(pending, response))
        return await _final(pending, response, reading, context)


def schedule_next(pending: Pending, response: UpstreamResponse, settings: FollowSettings) -> None:
    """When ``pending`` may be polled next: ``Retry-After``, else a growing interval, within the bounds."""
    after = parse_retry_after(response.headers.get("retry-after"))
    if after is None:
        pending.interval = min(
            settings.max_interval, max(settings.first_interval, pending.interval * 1.5 or settings.first_interval)
        )
        after = pending.interval
    pending.not_before = anyio.current_time() + min(max(after, settings.min_interval), settings.max_interval)


async def _final(
    pending: Pending, response: UpstreamResponse, reading: Reading, context: CallContext
) -> UpstreamResponse:
    """The operation's result: the result inside the status, the resource it names, or the status itself."""
    if (final := await azure_final(pending, response, context)) is not None:
        return final
    if reading.has_result:
        content = json.dumps(reading.result, ensure_ascii=False).encode()
        headers = httpx.Headers({"content-type": "application/json"})
        return dataclasses.replace(response, status=200, headers=headers, content=content)
    if reading.result_url is not None:
        op = pending.call.operation
        try:
            target = redirect_target(
                response.url, reading.result_url, base_url=pending.call.runtime.base_url, op=op, redact=lambda t: t
            )
        except UpstreamError:
            raise UnsafeRequestError(
                f"{op}: the operation finished, but its result URL is outside the API's origin or base path; "
                "mcp-bridge does not fetch it."
            ) from None
        return await pending.call.fetch(target, context, what="result")
    return response


def _pending_message(pending: Pending) -> str:
    waited = anyio.current_time() - pending.started
    return (
        f"{pending.call.operation} is still running ({pending.state_text}) after {waited:.0f} s and "
        f"{pending.polls} status checks."
    )


def _failure(pending: Pending, response: UpstreamResponse) -> str:
    redact = pending.call.runtime.credentials.redact
    text = decode_text(mask_before_decoding(response.content, redact), response.content_type)
    said = excerpt(" ".join(text.split()), redact, FAILURE_EXCERPT_CHARS, mark=" …")
    return f"{pending.call.operation}: the operation failed ({pending.state_text}). The API said: {said}"


def request_values(call: StartedCall, arguments: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The starting request's parameter values by location and wire name (what ``$request.*`` reads)."""
    values: dict[str, dict[str, Any]] = {"path": {}, "query": {}, "header": {}}
    for param in call.entry.binding.params:
        if param.location in values and param.arg in arguments and param.bound is None:
            values[param.location][param.wire] = arguments[param.arg]
    return values
