"""Who is calling: the one identity every per-caller pool (tasks, handles, confirmation rounds) keys on.

- An access token of a user (not the static ``--auth-token``, a secret everyone holding it
  shares): its subject and client; one user's sessions share their entries and their share.
- Else, on streamable HTTP, the MCP session (``Mcp-Session-Id``), counted against its peer
  address (one client that opens a hundred sessions gets one client's share, as in P7).
- Else an HTTP request without a session (``--stateless`` without authentication): callers who
  cannot be told apart, :data:`~bridge.tools.owned.ANONYMOUS`, counted per peer address. Their
  entries are capabilities (the random key reads them) and are never listed; tasks refuse them.
- Else (stdio, in memory) the connection itself: its run of the server (the lifespan's state,
  one per stdio process or in-memory client; the SDK's per-request session objects are not).
"""

from __future__ import annotations

import secrets
from collections.abc import MutableMapping
from typing import Any

from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.context import ServerRequestContext

from bridge.identity.token_claims import STATIC_TOKEN_CLIENT_ID
from bridge.tools.owned import ANONYMOUS, Caller

__all__ = ["caller_of"]

SESSION_HEADER = "mcp-session-id"
_CONNECTION_KEY = "bridge.caller"  # the connection's random name, kept in its lifespan state


def caller_of(ctx: ServerRequestContext[Any, Any]) -> Caller:
    """The caller of the request ``ctx`` serves (see the module docstring)."""
    token = get_access_token()
    if token is not None and token.client_id != STATIC_TOKEN_CLIENT_ID:
        who = f"token:{token.subject or '-'}|{token.client_id}"
        return Caller(who, who)
    request = ctx.request
    headers = getattr(request, "headers", None)
    if headers is None:
        state = ctx.lifespan_context
        if not isinstance(state, MutableMapping):
            return Caller("connection", "connection")  # a host's own lifespan: one connection
        connection = state.setdefault(_CONNECTION_KEY, "connection:" + secrets.token_hex(8))
        return Caller(connection, connection)
    client = getattr(request, "client", None)
    peer = f"peer:{getattr(client, 'host', None) or '?'}"
    session = headers.get(SESSION_HEADER)
    return Caller(f"session:{session}", peer) if session else Caller(ANONYMOUS, peer)
