"""What the model sees of a long-running operation: the "still running" result, and the status tool.

The status tool (``get_operation_status``) is listed only when the API has long-running
operations. It takes the opaque handle a "still running" result gave, never a URL: which URL is
polled, with which credentials, stays on the server, and a handle works only for the caller
that started the operation.
"""

from __future__ import annotations

import functools
from typing import Any

import anyio
import mcp_types

from bridge.calls.context import CallContext, current_identity
from bridge.calls.longrunning.follow import OperationPending
from bridge.calls.longrunning.pending import pending_result
from bridge.calls.longrunning.tracker import STATUS_TOOL, OperationTracker
from bridge.calls.runtime import HttpRuntime
from bridge.results.trim import OFF_LOOP_BYTES
from bridge.tools.registry import Tool, ToolContext

__all__ = ["STATUS_TOOL", "status_tool"]

_HINTS = {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True, "openWorldHint": True}


def status_tool(tracker: OperationTracker, runtime: HttpRuntime) -> Tool:
    """``get_operation_status``: follow a still-running operation again, for up to the server's wait."""

    async def run(args: dict[str, Any], ctx: ToolContext) -> mcp_types.CallToolResult:
        context = CallContext.from_tool(ctx, identity=current_identity() if runtime.identities else None)
        try:
            pending, response = await tracker.check(str(args["operation"]), context)
        except OperationPending as exc:
            return pending_result(exc)
        call = pending.call
        if len(response.content) > OFF_LOOP_BYTES:
            return await anyio.to_thread.run_sync(functools.partial(call.to_result, response))
        return call.to_result(response)

    return Tool(
        name=STATUS_TOOL,
        run=run,
        internal=True,
        title="Check a long-running operation",
        description=(
            "Check an operation that was still running when its tool answered (its result gave an `operation` "
            f"handle). Waits up to {tracker.settings.wait:g} s for it to finish; returns its result when it has, "
            "or where it stands."
        ),
        input_schema={
            "type": "object",
            "properties": {
                "operation": {"type": "string", "maxLength": 64, "description": "The handle from the result."}
            },
            "required": ["operation"],
            "additionalProperties": False,
        },
        annotations=dict(_HINTS),
    )
