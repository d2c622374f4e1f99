"""The result of a call whose long-running operation is still running when the wait runs out (not an error)."""

from __future__ import annotations

import json
from typing import Any

import anyio
import mcp_types

from bridge.calls.longrunning.follow import OperationPending
from bridge.calls.longrunning.tracker import STATUS_TOOL
from bridge.results.trim import MARKER_KEY

__all__ = ["pending_result"]


def pending_result(exc: OperationPending, *, structured: bool = True) -> mcp_types.CallToolResult:
    """Not an error: the operation runs on; the result says where it stands and how to check again.

    ``structured=False`` (a tool with an output schema the payload cannot match) sends the
    payload as text and the note every bridge output schema admits as structured content.
    """
    pending = exc.pending
    payload: dict[str, Any] = {
        "status": "running",
        "operation": pending.handle,
        "state": pending.state_text,
        "status_checks": pending.polls,
        "elapsed_seconds": round(anyio.current_time() - pending.started, 1),
        "check_again": f'Call {STATUS_TOOL} with {{"operation": "{pending.handle}"}}.',
        "message": str(exc),
    }
    text = json.dumps(payload, ensure_ascii=False, separators=(",", ":"))
    content: list[mcp_types.ContentBlock] = [mcp_types.TextContent(type="text", text=text)]
    return mcp_types.CallToolResult(
        content=content, structured_content=payload if structured else {MARKER_KEY: [str(exc)]}
    )
