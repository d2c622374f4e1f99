"""What one operation call carries and gives back: the caller's identity, the call's context, its answer.

Every surface (per-operation tools, discovery, code mode, workflows, resources, the long-running
status tool) builds a :class:`CallContext` and calls :class:`~bridge.calls.operation.OperationCall`;
following a long-running operation reads the same context, so these types sit below both.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import anyio

from bridge.tools.errors import UpstreamStatusError
from bridge.tools.owned import UNKNOWN_CALLER, Caller
from bridge.tools.registry import Confirmer, ProgressReporter, ToolContext, no_progress
from bridge.upstream.client import UpstreamResponse

__all__ = ["TRACE_KEYS", "ApiError", "ApiResponse", "CallContext", "Identity", "current_identity"]

# _meta keys of W3C trace context that a client may send with a request (carried, never trusted).
TRACE_KEYS = ("traceparent", "tracestate", "baggage")


def current_identity() -> Identity | None:
    """The caller of the request being served, from the SDK's authenticated access token."""
    from mcp.server.auth.middleware.auth_context import get_access_token

    from bridge.identity.token_claims import STATIC_TOKEN_CLIENT_ID

    token = get_access_token()
    if token is None:
        return None
    # The static token is the bridge's own shared secret, not a token the authorization server
    # issued: it names no user and must never be sent anywhere, a token-exchange endpoint included.
    static = token.client_id == STATIC_TOKEN_CLIENT_ID
    return Identity(
        subject=token.subject,
        client_id=token.client_id,
        scopes=frozenset(token.scopes),
        token=None if static else token.token,
    )


class ApiError(UpstreamStatusError):
    """The upstream answered 4xx/5xx: ``status`` and the message a tool error would carry."""


@dataclass(frozen=True, slots=True)
class Identity:
    """Who calls, as the MCP client's access token says (none on stdio or without auth).

    ``token`` is the caller's own access token: it goes nowhere but a token-exchange endpoint,
    and is left out of ``repr`` so that no log line can show it.
    """

    subject: str | None
    client_id: str | None
    scopes: frozenset[str] = frozenset()
    token: str | None = field(default=None, repr=False)


@dataclass(slots=True)
class CallContext:
    """What one call carries besides its arguments.

    ``deadline`` is an ``anyio.current_time()`` instant: the call fails with a timeout when it
    passes (the upstream's own deadline still applies). ``cancelled`` is set when the caller
    cancels; the awaiting task is cancelled too, which aborts the HTTP request.
    """

    surface: str  # the tool (or program) the call comes from, for logs
    identity: Identity | None = None
    deadline: float | None = None
    cancelled: anyio.Event = field(default_factory=anyio.Event)
    progress: ProgressReporter = no_progress
    trace: Mapping[str, str] = field(default_factory=dict)
    # Credentials a workflow step supplies (security scheme -> value, e.g. a session token a login
    # step returned): they replace the operator's for those schemes on this call only.
    supplied: Mapping[str, str] = field(default_factory=dict)
    # Asks the user before a write the server's --confirm covers (bridge/confirm/); None: no asking.
    confirm: Confirmer | None = None
    # Until when a long-running operation is followed (anyio time); None: the tracker's `wait`.
    follow_until: float | None = None
    # A task's run: the API's cancel is called only when `cancelled` was set (tasks/cancel).
    detached: bool = False
    # Who calls: the owner of the operation handle the call may leave (bridge/tools/owned.py).
    caller: Caller = UNKNOWN_CALLER

    @classmethod
    def from_tool(cls, ctx: ToolContext, *, identity: Identity | None = None) -> CallContext:
        trace = {k: v for k in TRACE_KEYS if isinstance(v := ctx.meta.get(k), str)}
        return cls(
            surface=ctx.tool_name,
            identity=identity,
            cancelled=ctx.cancelled,
            progress=ctx._report_progress,
            trace=trace,
            confirm=ctx.confirm,
            follow_until=ctx.follow_until,
            detached=ctx.detached,
            caller=ctx.caller,
        )


@dataclass(frozen=True, slots=True)
class ApiResponse:
    """A successful (below 400) upstream answer, whole and redacted: what a program sees.

    ``data`` is the body as JSON data, or its text when it is not JSON (None when empty). It is
    redacted before anyone sees it: a program could otherwise read an echoed secret and spell it
    in a way no redaction of its final value would recognise.
    """

    status: int
    content_type: str
    data: Any
    upstream: UpstreamResponse = field(repr=False)
