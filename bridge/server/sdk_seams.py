"""Every use of the MCP SDK's private names, each with why, the versions checked and its upstream issue.

No other module of ``bridge/`` or ``generator/`` names a private name of ``mcp``
(``tests/test_seams.py`` scans for it). Checked on ``mcp`` 2.3.0 (pinned ``>=2.3,<2.4``);
``tests/bridge/server/test_sdk_seams.py`` fails loudly when an SDK release moves or renames
one (each name exists with the signature used here) and pins what the bridge relies on.

1. **stdio's descriptor claim** (``mcp.server.stdio._claim_fd``, ``_open_stdout_diversion``,
   ``_open_stdin_diversion``, ``_UnownedTextWrapper``): ``stdio_server`` claims fd 0 and fd 1
   (null device on fd 0, stderr on fd 1, private duplicates for the wire) only when it opens the
   streams itself; :mod:`bridge.server.stdio_wire` hands it its own one-hop files, so it claims
   the descriptors first with the SDK's own helpers rather than a copy of them. No upstream
   issue found; draft: *"stdio_server: expose the fd claim (or accept a claim=True flag with
   caller-supplied stdin/stdout files), so a server with its own async files keeps stray prints
   off the wire."*
2. **No answer to a cancelled request on 2025-era streamable HTTP**
   (``StreamableHTTPServerTransport._terminate_unanswered_request``): the SDK answers a request
   that settled unanswered with ``-32800 Request cancelled``; MCP's cancellation utility says a
   receiver SHOULD NOT answer, and the bridge ends the request's SSE stream with nothing. The
   session manager builds its transports itself (no class or factory parameter), so the method
   is replaced once on the class, and the replacement runs the SDK's own method for every
   transport that is not serving a request of a bridge app (:func:`bridge_requests` marks
   those): another server in the same process keeps the SDK's behaviour. Related upstream:
   modelcontextprotocol/python-sdk#3188 (the dispatcher stopped answering cancelled requests
   and gave the transport the ``on_request_unanswered`` hook). Draft: *"StreamableHTTPSessionManager:
   accept a transport factory (or an ``answer_cancelled=False`` option), so a server can end a
   cancelled request's stream without a response on the 2025 wire."*
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from contextvars import ContextVar
from typing import IO, Any

from starlette.types import ASGIApp, Receive, Scope, Send

__all__ = [
    "bridge_requests",
    "claim_stdin",
    "claim_stdout",
    "no_answer_to_a_cancelled_request",
    "unowned_text",
]

Release = Callable[[], None] | None


# --------------------------------------------------------------------------- 1. stdio's descriptor claim


def claim_stdout() -> tuple[IO[bytes], Release]:
    """fd 1 claimed: the wire's binary file and the function that puts fd 1 back (None: nothing to put back)."""
    from mcp.server import stdio as sdk_stdio

    claimed: tuple[IO[bytes], Release] = sdk_stdio._claim_fd(1, sys.stdout, "wb", sdk_stdio._open_stdout_diversion)
    return claimed


def claim_stdin() -> tuple[IO[bytes], Release]:
    """fd 0 claimed: the wire's binary file and the function that puts fd 0 back (None: nothing to put back)."""
    from mcp.server import stdio as sdk_stdio

    claimed: tuple[IO[bytes], Release] = sdk_stdio._claim_fd(0, sys.stdin, "rb", sdk_stdio._open_stdin_diversion)
    return claimed


def unowned_text(buffer: IO[bytes], **options: Any) -> Any:
    """A text wrapper over ``buffer`` that does not close it (the SDK's, as its own stdio uses)."""
    from mcp.server import stdio as sdk_stdio

    return sdk_stdio._UnownedTextWrapper(buffer, **options)


# --------------------------------------------------------------------------- 2. no answer after a cancel

_BRIDGE_REQUEST: ContextVar[bool] = ContextVar("mcp_bridge_http_request", default=False)
_INSTALLED: list[bool] = []


def bridge_requests(app: ASGIApp) -> ASGIApp:
    """``app`` with its requests (and the session tasks they start) marked as the bridge's."""

    async def marked(scope: Scope, receive: Receive, send: Send) -> None:
        token = _BRIDGE_REQUEST.set(True)
        try:
            await app(scope, receive, send)
        finally:
            _BRIDGE_REQUEST.reset(token)

    return marked


def no_answer_to_a_cancelled_request() -> None:
    """A cancelled request of a bridge app gets no response on streamable HTTP (see the module docstring).

    Only cancelled (or otherwise unanswered) requests reach the hook; ``tests/e2e/test_http_cancel.py``
    pins the wire behaviour, and ``tests/bridge/server/test_sdk_seams.py`` that a transport outside
    a bridge app still runs the SDK's own method.
    """
    if _INSTALLED:
        return
    from mcp.server.streamable_http import StreamableHTTPServerTransport

    sdk_terminate = StreamableHTTPServerTransport._terminate_unanswered_request

    async def end_without_answer(self: StreamableHTTPServerTransport, request_id: Any) -> None:
        if not _BRIDGE_REQUEST.get():
            await sdk_terminate(self, request_id)
            return
        self.close_sse_stream(str(request_id))

    StreamableHTTPServerTransport._terminate_unanswered_request = end_without_answer  # type: ignore[method-assign]
    _INSTALLED.append(True)
