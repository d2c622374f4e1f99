"""Fair session admission (one client cannot lock others out) and session ids kept out of logs.

The admission rules are checked two ways: on the real SDK app in-process (a flood of initialize
requests from one peer, then another peer), and on a small fake session app whose requests the
test holds open, so "busy" and "idle" are exact.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bridge.server.sessions import SessionAdmission, SessionIdFilter
from bridge.server.transports import http_app
from tests.e2e.test_client_auth import AS, auth_for
from tests.e2e.test_http_security import (
    BASE,
    MCP_HEADERS,
    bearer,
    initialize,
    petstore_server,
)

pytestmark = pytest.mark.anyio
LISTED = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}


@asynccontextmanager
async def peers(*addresses: str, **options: Any) -> AsyncIterator[list[httpx.AsyncClient]]:
    """One httpx client per peer address, all wired to one in-process ``http_app``."""
    server = petstore_server()
    app = http_app(server, **options)
    with anyio.fail_after(30):
        async with server.session_manager.run():
            clients = [
                httpx.AsyncClient(transport=httpx.ASGITransport(app=app, client=(a, 50000)), base_url=BASE)
                for a in addresses
            ]
            try:
                yield clients
            finally:
                for c in clients:
                    await c.aclose()


async def test_a_flood_of_initializes_from_one_client_does_not_lock_out_another() -> None:
    async with peers("10.0.0.66", "10.0.0.7", max_sessions=20, max_sessions_per_client=5) as (attacker, user):
        flood = [(await initialize(attacker)).status_code for _ in range(120)]
        mine = await initialize(user)
        listed = await user.post(
            "/mcp", json=LISTED, headers={**MCP_HEADERS, "Mcp-Session-Id": mine.headers["mcp-session-id"]}
        )
        more = [(await initialize(attacker)).status_code for _ in range(40)]
        still = await user.post(
            "/mcp", json=LISTED, headers={**MCP_HEADERS, "Mcp-Session-Id": mine.headers["mcp-session-id"]}
        )
    assert set(flood) == {200} and set(more) == {200}  # the flooder only ever displaces its own sessions
    assert mine.status_code == 200
    assert listed.status_code == 200
    assert still.status_code == 200  # the other client's session survived the second flood


async def test_sessions_of_one_token_identity_are_capped_and_other_identities_keep_their_room() -> None:
    auth = auth_for()
    # Static-token and JWT callers are different identities even from the same peer address.
    async with peers("127.0.0.1", max_sessions=10, max_sessions_per_client=2, auth=auth) as (client,):
        alice = [await initialize(client, bearer(AS.token(sub="alice"))) for _ in range(6)]
        bob = await initialize(client, bearer(AS.token(sub="bob")))
        alice_ids = [r.headers["mcp-session-id"] for r in alice]
        headers = {**MCP_HEADERS, **bearer(AS.token(sub="alice"))}
        alive = [
            (await client.post("/mcp", json=LISTED, headers={**headers, "Mcp-Session-Id": i})).status_code
            for i in alice_ids
        ]
        refused = await initialize(client, bearer("not-a-valid-token-at-all-xyz"))
    assert [r.status_code for r in alice] == [200] * 6
    assert alive == [404, 404, 404, 404, 200, 200]  # at most two of alice's sessions are open
    assert bob.status_code == 200
    assert refused.status_code == 401


async def test_no_full_session_id_is_ever_logged(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    async with peers("127.0.0.1", max_sessions=2) as (client,):
        ids = [(await initialize(client)).headers["mcp-session-id"] for _ in range(3)]
        unknown = "ab" * 16
        await client.post("/mcp", json=LISTED, headers={**MCP_HEADERS, "Mcp-Session-Id": ids[0]})
        await client.post("/mcp", json=LISTED, headers={**MCP_HEADERS, "Mcp-Session-Id": unknown})
        await client.delete("/mcp", headers={**MCP_HEADERS, "Mcp-Session-Id": ids[2]})
    text = "\n".join(r.getMessage() for r in caplog.records)
    assert ids[0][:8] in text  # the prefix is there to correlate
    for session_id in [*ids, unknown]:
        assert session_id not in text


def test_the_session_id_filter_keeps_a_prefix_of_every_long_hex_id() -> None:
    session_id = secrets.token_hex(16)
    record = logging.LogRecord("mcp", logging.INFO, __file__, 1, "Created session %s (%d)", (session_id, 3), None)
    SessionIdFilter().filter(record)
    assert session_id not in record.getMessage()
    assert session_id[:8] in record.getMessage()
    assert record.getMessage().endswith("(3)")


# ----------------------------------------------------------------------------- the rules, exactly


class FakeSessions:
    """A minimal session app: POST without id opens a session; a request to a session can be held."""

    def __init__(self) -> None:
        self.open: set[str] = set()
        self.hold: dict[str, anyio.Event] = {}
        self.counter = 0

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        headers = dict(scope["headers"])
        sid = headers.get(b"mcp-session-id", b"").decode()
        status, extra = 200, []
        if not sid:
            self.counter += 1
            sid = f"{self.counter:032x}"
            self.open.add(sid)
            extra = [(b"mcp-session-id", sid.encode())]
        elif sid not in self.open:
            status = 404
        elif scope["method"] == "DELETE":
            self.open.discard(sid)
        elif sid in self.hold:
            await self.hold[sid].wait()
        await send({"type": "http.response.start", "status": status, "headers": extra})
        await send({"type": "http.response.body", "body": b""})


async def call(app: SessionAdmission, peer: str, method: str = "POST", sid: str | None = None) -> tuple[int, str]:
    headers = [(b"mcp-session-id", sid.encode())] if sid else []
    scope = {"type": "http", "method": method, "path": "/mcp", "headers": headers, "client": (peer, 1)}
    result: dict[str, Any] = {}

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            result["status"] = message["status"]
            result["sid"] = dict(message["headers"]).get(b"mcp-session-id", b"").decode()

    await app(scope, receive, send)
    return result["status"], result["sid"] or (sid or "")


async def test_busy_sessions_are_never_closed_and_with_only_busy_ones_a_newcomer_gets_503() -> None:
    fake = FakeSessions()
    app = SessionAdmission(fake, path="/mcp", max_sessions=2, max_per_client=2)
    with anyio.fail_after(5):
        _, a = await call(app, "p1")
        _, b = await call(app, "p2")
        fake.hold[a], fake.hold[b] = anyio.Event(), anyio.Event()
        async with anyio.create_task_group() as tg:
            tg.start_soon(call, app, "p1", "POST", a)
            tg.start_soon(call, app, "p2", "POST", b)
            await anyio.wait_all_tasks_blocked()
            refused, _ = await call(app, "p3")
            fake.hold[a].set()
            await anyio.wait_all_tasks_blocked()
            admitted, c = await call(app, "p3")  # a is idle again, so it makes room
            fake.hold[b].set()
    assert refused == 503
    assert admitted == 200
    assert fake.open == {b, c}


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(["a", "a", "a", "b", "c", "d"]), min_size=1, max_size=60), st.integers(1, 6))
def test_limits_always_hold_and_a_newcomer_always_gets_in_while_sessions_are_idle(peers: list[str], cap: int) -> None:
    async def run() -> None:
        fake = FakeSessions()
        app = SessionAdmission(fake, path="/mcp", max_sessions=6, max_per_client=cap)
        for peer in peers:
            status, _ = await call(app, peer)
            assert status == 200  # nothing is busy, so there is always room
            assert len(fake.open) <= 6
            assert app.open_sessions == len(fake.open)
            owners = [app._state.sessions[s].client for s in fake.open]
            assert max(owners.count(o) for o in owners) <= min(cap, 6)

    anyio.run(run)
