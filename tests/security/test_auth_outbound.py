"""Outbound bounds of the URLs client authentication calls (JWKS, introspection, token exchange).

Each of the three, pointed at the loopback fault server, must give up within its deadline
whatever the server does (drip, hang, endless body, redirect, reset, garbage), refuse instead of
failing open, follow no redirect, and never show the caller's token in an error or a log line.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import pytest

from bridge.identity.introspection import Introspector
from bridge.identity.jwks import JwksKeys
from bridge.identity.outbound import Endpoint
from bridge.identity.token_exchange import ExchangeSettings, TokenExchanger
from bridge.tools.errors import CredentialsError
from tests.security.fault_server import Fault, FaultServer, closed_port

pytestmark = pytest.mark.anyio

TIMEOUT = 0.5
BOUND = 3 * TIMEOUT  # the deadline, plus room for a loaded machine
SUBJECT_TOKEN = "caller-access-token-0123456789abcdef"
RESOURCE = "http://127.0.0.1:8000/mcp"


async def jwks(url: str) -> str | None:
    keys = JwksKeys(Endpoint.configured(url + "/jwks", "the JWKS URL", timeout=TIMEOUT))
    return None if await keys.key("k1") is None else "a key was found"


async def introspection(url: str) -> str | None:
    endpoint = Endpoint.configured(url + "/introspect", "the introspection URL", timeout=TIMEOUT)
    introspector = Introspector(endpoint, client=("bridge", "secret"), resource_url=RESOURCE, issuer=None)
    return None if await introspector.verify(SUBJECT_TOKEN) is None else "the token was accepted"


async def exchange(url: str) -> str | None:
    settings = ExchangeSettings(url + "/token", "bridge", "secret", "https://api.test", timeout=TIMEOUT)
    try:
        await TokenExchanger(settings).token_for("alice", SUBJECT_TOKEN, ("pets:read",))
    except CredentialsError as exc:
        assert SUBJECT_TOKEN not in str(exc)
        return None
    return "a token was returned"


USERS: dict[str, Callable[[str], Awaitable[str | None]]] = {
    "jwks": jwks,
    "introspection": introspection,
    "exchange": exchange,
}
FAULTS = {
    "drip": Fault.drip(b'{"keys": [], "active": true, "access_token": "x"}' + b" " * 64, interval=0.2),
    "hang": Fault.hang(),
    "endless-body": Fault.oversize(0, chunked=True),
    "huge-declared-body": Fault.oversize(10 * 1024 * 1024, chunked=False),
    "redirect": Fault.redirect("http://127.0.0.1:1/elsewhere"),
    "server-error": Fault.error(500),
    "not-json": Fault.ok(b"<html>hello</html>", content_type="text/html"),
    "json-not-an-object": Fault.ok(b"[1, 2]"),
    "reset": Fault.reset(),
    "close": Fault.close(),
    "gzip-bomb": Fault.gzip_bomb(20 * 1024 * 1024),
}


@pytest.mark.parametrize("fault", FAULTS.values(), ids=FAULTS.keys())
@pytest.mark.parametrize("user", USERS.values(), ids=USERS.keys())
async def test_every_auth_endpoint_gives_up_in_time_and_refuses(
    user: Callable[[str], Awaitable[str | None]], fault: Fault, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    async with FaultServer(fault) as server:
        started = anyio.current_time()
        with anyio.fail_after(BOUND * 2):
            outcome = await user(server.url)
        took = anyio.current_time() - started
    assert outcome is None  # refused, never failed open
    assert took < BOUND, f"gave up after {took:.2f} s, the deadline is {TIMEOUT} s"
    assert server.count == 1  # no redirect followed, no retry
    assert SUBJECT_TOKEN not in caplog.text


@pytest.mark.parametrize("user", USERS.values(), ids=USERS.keys())
async def test_an_unreachable_auth_endpoint_is_refused_quickly(user: Any) -> None:
    with anyio.fail_after(BOUND):
        assert await user(f"http://127.0.0.1:{closed_port()}") is None


async def test_a_flood_of_made_up_opaque_tokens_keeps_introspections_in_flight_bounded() -> None:
    from bridge.identity.introspection import MAX_IN_FLIGHT, MAX_QUEUE_WAIT

    async with FaultServer(Fault.hang()) as server:
        endpoint = Endpoint.configured(server.url + "/introspect", "the introspection URL", timeout=TIMEOUT * 4)
        introspector = Introspector(endpoint, client=("bridge", "secret"), resource_url=RESOURCE, issuer=None)
        outcomes: list[object] = []

        async def one(i: int) -> None:
            outcomes.append(await introspector.verify(f"made-up-token-{i:04d}-0123456789"))

        started = anyio.current_time()
        with anyio.fail_after(MAX_QUEUE_WAIT + TIMEOUT * 4 + BOUND):
            async with anyio.create_task_group() as tg:
                for i in range(3 * MAX_IN_FLIGHT):
                    tg.start_soon(one, i)
        took = anyio.current_time() - started
    assert outcomes == [None] * (3 * MAX_IN_FLIGHT)
    # The rest waited their bounded while, then were refused. On a loaded machine some of the first
    # MAX_IN_FLIGHT may time out before their request is even read, so the bound is what holds, not equality.
    assert 0 < server.count <= MAX_IN_FLIGHT
    assert took < MAX_QUEUE_WAIT + TIMEOUT * 4 + BOUND
