"""Who owns a task, a handle or a confirmation round (bridge/server/callers.py), for every kind of request."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from mcp.server.auth.middleware.auth_context import auth_context_var
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp.server.context import ServerRequestContext
from starlette.requests import Request

from bridge.identity.token_claims import STATIC_TOKEN_CLIENT_ID
from bridge.server.callers import caller_of
from bridge.tools.owned import ANONYMOUS, Caller


def http(session: str | None = None, peer: str = "10.0.0.1") -> Request:
    headers = [(b"mcp-session-id", session.encode())] if session else []
    return Request({"type": "http", "method": "POST", "path": "/mcp", "headers": headers, "client": (peer, 5000)})


def context(request: Request | None = None, state: Any = None) -> ServerRequestContext[Any, Any]:
    return ServerRequestContext(
        session=None,  # type: ignore[arg-type]  # not read: the SDK's per-request session objects are not the connection
        lifespan_context={} if state is None else state,
        protocol_version="2025-11-25",
        method="tools/call",
        request=request,
    )


@contextmanager
def token(subject: str | None, client_id: str) -> Iterator[None]:
    reset = auth_context_var.set(
        AuthenticatedUser(AccessToken(token="t", client_id=client_id, scopes=[], subject=subject))
    )
    try:
        yield
    finally:
        auth_context_var.reset(reset)


def test_a_users_token_owns_across_sessions_and_peers() -> None:
    with token("alice", "app"):
        first = caller_of(context(http("s1", "10.0.0.1")))
        second = caller_of(context(http("s2", "10.0.0.2")))
        stateless = caller_of(context(http(None)))
    with token("bob", "app"):
        bob = caller_of(context(http("s1")))
    assert first == second == stateless == Caller("token:alice|app", "token:alice|app")
    assert bob != first and not bob.anonymous


def test_sessions_are_callers_counted_against_their_peer_and_the_static_token_names_nobody() -> None:
    one, two = caller_of(context(http("s1"))), caller_of(context(http("s2")))
    with token(None, STATIC_TOKEN_CLIENT_ID):  # a shared secret: its holders are told apart by session
        static = caller_of(context(http("s1")))
        static_stateless = caller_of(context(http(None)))
    assert one == static == Caller("session:s1", "peer:10.0.0.1")
    assert two.key != one.key and two.group == one.group
    assert static_stateless.anonymous


@pytest.mark.parametrize("peer", ["10.0.0.1", "10.0.0.2"])
def test_a_stateless_unauthenticated_request_is_anonymous_counted_per_peer(peer: str) -> None:
    assert caller_of(context(http(None, peer))) == Caller(ANONYMOUS, f"peer:{peer}")


def test_without_http_the_connection_is_the_caller() -> None:
    first_state: dict[str, Any] = {}
    second_state: dict[str, Any] = {}
    first = {caller_of(context(None, first_state)) for _ in range(3)}
    second = caller_of(context(None, second_state))
    assert len(first) == 1 and second not in first
    assert not second.anonymous and second.key == second.group
