"""The operations the bridge follows: start one from a 202, give a handle when the wait runs out, cancel on abort.

One :class:`OperationTracker` per API (on the :class:`~bridge.calls.http_tools.HttpRuntime`). A call
that gets ``202`` from a long-running operation is followed for ``wait`` seconds (a task: until
its deadline); if it is still running then, the tracker keeps it under an opaque random handle,
owned by the caller (the token's subject and client; anyone on an unauthenticated server),
for the status tool (:mod:`bridge.calls.longrunning.status_tool`). At most ``keep`` are kept, each
until ``deadline`` seconds after it started.
"""

from __future__ import annotations

import logging
import secrets
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

import anyio

from bridge.calls.context import CallContext
from bridge.calls.longrunning.follow import (
    FollowSettings,
    OperationPending,
    Pending,
    StartedCall,
    poll_until,
    request_values,
    schedule_next,
    status_url,
)
from bridge.contract.catalogue import ToolEntry
from bridge.contract.expressions.links import LinkError, LinkSource, evaluate
from bridge.request.build import PreparedRequest
from bridge.results.trim import OFF_LOOP_BYTES
from bridge.tools.errors import ToolError
from bridge.tools.json_text import parse_json
from bridge.upstream.client import UpstreamResponse

__all__ = ["INSTRUCTIONS", "STATUS_TOOL", "OperationTracker"]

logger = logging.getLogger("bridge.longrunning.tracker")

STATUS_TOOL = "get_operation_status"
INSTRUCTIONS = (
    "Some operations run long; their tools wait for them to finish. When a result says "
    f'"status": "running", call {STATUS_TOOL} with its "operation" handle to check again; do not start '
    "the operation again."
)


def owner_of(context: CallContext) -> str | None:
    identity = context.identity
    if identity is None:
        return None
    return f"{identity.subject or '-'}|{identity.client_id or '-'}"


class OperationTracker:
    """Follows the long-running operations of one API."""

    def __init__(self, entries: Mapping[str, ToolEntry], settings: FollowSettings | None = None) -> None:
        self.settings = settings or FollowSettings()
        self._entries = dict(entries)
        self._pending: OrderedDict[str, Pending] = OrderedDict()

    def __len__(self) -> int:
        return len(self._pending)

    async def follow(
        self,
        call: StartedCall,
        response: UpstreamResponse,
        prepared: PreparedRequest,
        arguments: Mapping[str, Any],
        context: CallContext,
    ) -> UpstreamResponse:
        """The operation's final answer, following the status URL ``response`` (a 202) names.

        A 202 that names no status URL is the answer itself.

        Raises:
            UnsafeRequestError: the status URL is outside the API's origin or base path.
            OperationPending: still running when the wait ran out (``context.follow_until``, else ``wait``).
            OperationFailed, ApiError, UpstreamError: the operation or a poll failed.
        """
        settings = call.entry.long_running
        assert settings is not None
        url = status_url(response, settings, call.runtime.base_url, call.operation)
        if url is None:
            return response
        now = anyio.current_time()
        pending = Pending(call, url, _source(call, prepared, arguments, response), started=now, owner=owner_of(context))
        schedule_next(pending, response, self.settings)
        until = context.follow_until if context.follow_until is not None else now + self.settings.wait
        return await self._run(pending, context, min(until, now + self.settings.deadline), cancel_on_abort=True)

    async def check(self, handle: str, context: CallContext) -> tuple[Pending, UpstreamResponse]:
        """Follow a remembered operation again for up to ``wait`` seconds (the status tool)."""
        pending = self._pending.get(handle) if isinstance(handle, str) else None
        if pending is None or pending.owner != owner_of(context):
            raise ToolError(
                "No operation with this handle is being followed (it finished, expired, or was started by "
                "someone else). Call the operation again if its result is still needed."
            )
        now = anyio.current_time()
        until = min(now + self.settings.wait, pending.started + self.settings.deadline)
        return pending, await self._run(pending, context, until, cancel_on_abort=False)

    async def _run(
        self, pending: Pending, context: CallContext, until: float, *, cancel_on_abort: bool
    ) -> UpstreamResponse:
        try:
            response = await poll_until(pending, context, until, self.settings)
        except OperationPending as exc:
            # The last wait the deadline allows, or one that overran it (a slow poll on a loaded
            # machine): remembered past its deadline, the entry would be swept at once and the next
            # check would find no operation instead of this answer.
            if max(until, anyio.current_time()) >= pending.started + self.settings.deadline:
                self._forget(pending)
                raise ToolError(
                    f"{exc} mcp-bridge stopped following it after {self.settings.deadline:g} s; it may still be "
                    "running at the API."
                ) from None
            self._remember(pending)
            raise OperationPending(
                f'{exc} Check again with {STATUS_TOOL} {{"operation": "{pending.handle}"}}.', pending
            ) from None
        except BaseException as exc:
            # A call's cancellation cancels its operation; a task's only when the client cancelled it
            # (not when the server stops: the operation may finish without us).
            wanted = cancel_on_abort and (not context.detached or context.cancelled.is_set())
            if isinstance(exc, anyio.get_cancelled_exc_class()) and wanted:
                with anyio.CancelScope(shield=True):
                    await self.cancel(pending, context)
            self._forget(pending)
            raise
        self._forget(pending)
        return response

    def _remember(self, pending: Pending) -> None:
        if not pending.handle:
            pending.handle = "op_" + secrets.token_urlsafe(18)
        self._pending[pending.handle] = pending
        self._pending.move_to_end(pending.handle)
        now = anyio.current_time()
        for handle, old in list(self._pending.items()):
            if len(self._pending) > self.settings.keep or now >= old.started + self.settings.deadline:
                del self._pending[handle]

    def _forget(self, pending: Pending) -> None:
        if pending.handle:
            self._pending.pop(pending.handle, None)

    async def cancel(self, pending: Pending, context: CallContext) -> bool:
        """Call the API's cancel operation for ``pending`` when its spec links one; True when it answered."""
        link = pending.settings.cancel
        entry = self._entries.get(link.tool) if link is not None else None
        if link is None or entry is None:
            return False

        def linked() -> dict[str, Any]:
            return {name: evaluate(value, pending.source) for name, value in link.arguments.items()}

        try:  # a link reading a big upstream answer parses it: off the loop, as trimming is
            big = len(pending.source.body) > OFF_LOOP_BYTES
            arguments = await anyio.to_thread.run_sync(linked) if big else linked()
        except LinkError as exc:
            logger.warning("%s: cannot cancel the operation: %s", pending.call.operation, exc)
            return False
        cancel_context = CallContext(surface=f"{context.surface} (cancel)", identity=context.identity)
        with anyio.move_on_after(self.settings.cancel_timeout):
            try:
                answer = await pending.call.sibling(entry)(arguments, cancel_context)
            except ToolError as exc:
                logger.warning("%s: the API's cancel operation failed: %s", pending.call.operation, exc)
                return False
            logger.info("%s: cancelled (%s answered %d)", pending.call.operation, entry.operation, answer.status)
            return True
        logger.warning("%s: the API's cancel operation did not answer in time", pending.call.operation)
        return False


def _source(
    call: StartedCall, prepared: PreparedRequest, arguments: Mapping[str, Any], response: UpstreamResponse
) -> LinkSource:
    body: Any = None
    if prepared.content and (prepared.content_type or "").split(";")[0].strip().endswith("json"):
        try:
            body = parse_json(prepared.content)
        except ValueError:
            body = None
    return LinkSource(
        method=prepared.method,
        url=str(prepared.url),
        status=response.status,
        request=request_values(call, arguments),
        request_body=body,
        headers=response.headers,
        body=response.content,
    )
