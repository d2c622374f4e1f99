"""The operations the bridge follows: start one from a 202, give a handle when the wait runs out, cancel on abort.

One :class:`OperationTracker` per API (on the :class:`~bridge.calls.http_tools.HttpRuntime`). A call
that gets ``202`` from a long-running operation is followed for ``wait`` seconds (a task: until
its deadline); if it is still running then, the tracker keeps it under an opaque random handle,
owned by the caller (:mod:`bridge.server.callers`: the token's user, else the MCP session or the
connection), for the status tool (:mod:`bridge.calls.longrunning.status_tool`). The handles are an
:class:`~bridge.tools.owned.OwnedPool`: at most ``keep`` in all, a share of it per caller and per
client, each until ``deadline`` seconds after its operation started. No handle is forgotten to
make room for another: when a share is full the call says the operation runs on unfollowed.

A handle the tracker does not know (expired, never given, another caller's) is answered with
what is true: the operation may still be running or be done, and the API is the place to check
before starting it again (a write must not be repeated because a handle was lost).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import anyio

from bridge.calls.context import CallContext
from bridge.calls.gate import USER_CANCEL
from bridge.calls.longrunning.azure import fallback_status_url
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
from bridge.tools.owned import OwnedPool, PoolFull
from bridge.upstream.client import UpstreamResponse

__all__ = ["INSTRUCTIONS", "STATUS_TOOL", "OperationTracker"]

logger = logging.getLogger("bridge.longrunning.tracker")

STATUS_TOOL = "get_operation_status"
INSTRUCTIONS = (
    "Some operations run long; their tools wait for them to finish. When a result says "
    f'"status": "running", call {STATUS_TOOL} with its "operation" handle to check again; do not start '
    "the operation again."
)
HANDLES_PER_CALLER = 64
HANDLES_PER_CLIENT = 256
CHECK_THE_API = "check with the API (list or get the resource) before starting it again"
UNKNOWN_HANDLE = (
    "This operation handle is unknown (expired, never given, or another caller's): the operation may still be "
    f"running or be done; {CHECK_THE_API}."
)


class OperationTracker:
    """Follows the long-running operations of one API."""

    def __init__(self, entries: Mapping[str, ToolEntry], settings: FollowSettings | None = None) -> None:
        self._entries = dict(entries)
        self.settings = settings or FollowSettings()

    @property
    def settings(self) -> FollowSettings:
        return self._settings

    @settings.setter
    def settings(self, settings: FollowSettings) -> None:
        """New settings (``serve``'s options, before any call): the handles' pool is sized by them."""
        self._settings = settings
        keep = settings.keep
        self._pending: OwnedPool[Pending] = OwnedPool(
            total=keep,
            per_caller=min(HANDLES_PER_CALLER, keep),
            per_group=min(HANDLES_PER_CLIENT, keep),
            max_ttl=settings.deadline,
            what="running operations followed",
        )

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
        url = status_url(response, settings, call.runtime.base_url, call.operation) or fallback_status_url(
            response, settings, prepared.url, prepared.method
        )
        if url is None:
            return response
        now = anyio.current_time()
        pending = Pending(call, url, _source(call, prepared, arguments, response), started=now)
        schedule_next(pending, response, self.settings)
        until = context.follow_until if context.follow_until is not None else now + self.settings.wait
        return await self._run(pending, context, min(until, now + self.settings.deadline), cancel_on_abort=True)

    async def check(self, handle: str, context: CallContext) -> tuple[Pending, UpstreamResponse]:
        """Follow a remembered operation again for up to ``wait`` seconds (the status tool)."""
        pending = self._pending.get(context.caller, handle)
        if pending is None:
            raise ToolError(UNKNOWN_HANDLE)
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
                    f"running at the API: {CHECK_THE_API}."
                ) from None
            try:
                self._remember(pending, context)
            except PoolFull as why:
                raise ToolError(
                    f"{exc} mcp-bridge cannot follow it for you ({why}); it runs on at the API: {CHECK_THE_API}."
                ) from None
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

    def _remember(self, pending: Pending, context: CallContext) -> None:
        """Keep ``pending`` for the status tool until its deadline (once: a check keeps its handle).

        Raises:
            PoolFull: the caller's share of handles, its client's or the tracker's is full.
        """
        if pending.handle and self._pending.get(context.caller, pending.handle) is pending:
            return
        left = pending.started + self.settings.deadline - anyio.current_time()
        pending.handle = self._pending.add(context.caller, pending, left, prefix="op_")

    def _forget(self, pending: Pending) -> None:
        if pending.handle:
            self._pending.discard(pending.handle)

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
        # The client's cancel of a call it made is the user's say: the API's cancel is not asked again.
        cancel_context = CallContext(
            surface=f"{context.surface} (cancel)", identity=context.identity, confirm=USER_CANCEL
        )
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
