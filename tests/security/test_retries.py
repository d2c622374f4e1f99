"""Retries and idempotency (P24, P25; test plan rows 27-30) on real loopback sockets.

Retries are off by default. When on: connect failures may be retried for every method; after the
request was sent only GET/HEAD/OPTIONS/PUT/DELETE (on 429/502/503/504 and read errors); POST and
PATCH never; the deadline covers every attempt and wait; Retry-After is honoured only within it.

No test reads a clock: the waits the upstream decides between attempts are recorded (its
``retry_sleep``), and wall-clock figures (how close to the deadline a call ends) are in
``bench/timing_bench.py``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from typing import Any

import anyio
import pytest

from bridge.contract.catalogue import ToolAnnotationsSpec
from bridge.request.build import PreparedRequest, build_request
from bridge.tools.errors import UpstreamError, UpstreamTimeout
from bridge.upstream.client import Upstream, UpstreamResponse
from bridge.upstream.http_settings import HttpSettings
from bridge.upstream.retry import IDEMPOTENT_METHODS, Phase, RetryPolicy, parse_retry_after, phase_of
from tests.security.fault_server import Fault, FaultServer, closed_port
from tests.security.harness import bridge_client, fast, hardening_catalogue, result_text

pytestmark = pytest.mark.anyio

RETRYING: dict[str, Any] = {"retries": 3, "retry_backoff": 0.05, "retry_backoff_max": 0.2}


def prepared(tool: str, base: str, **args: Any) -> PreparedRequest:
    entry = next(t for t in hardening_catalogue().tools if t.name == tool)
    defaults: dict[str, Any] = {"id": "1"} if "{id}" in entry.binding.path else {}
    if entry.binding.body is not None:
        defaults["name"] = "n"
    return build_request(entry.binding, {**defaults, **args}, base_url=base, operation=entry.operation)


@asynccontextmanager
async def upstream(
    base: str, *, rand: float | None = None, waits: list[float] | None = None, **changes: Any
) -> AsyncIterator[Upstream]:
    """An upstream layer; ``waits`` (when given) records the waits between attempts, not waited."""
    async with Upstream(base, settings=fast(**changes)) as up:
        if rand is not None:
            up.retry_policy = dataclasses.replace(up.retry_policy, rand=lambda: rand)
        if waits is not None:

            async def record(seconds: float) -> None:
                waits.append(seconds)

            up.retry_sleep = record
        yield up


async def send(
    server: FaultServer, tool: str = "getItem", *, waits: list[float] | None = None, **changes: Any
) -> UpstreamResponse:
    base = server.url + "/v1"
    async with upstream(base, waits=waits, **changes) as up:
        with anyio.fail_after(10):
            return await up.send(prepared(tool, base))


# ----------------------------------------------------------------------------- off by default


async def test_retries_are_off_by_default() -> None:
    assert HttpSettings().retries == 0
    async with FaultServer(Fault.error(503), Fault.echo()) as server:
        response = await send(server)
    assert response.status == 503 and server.count == 1


# ------------------------------------------------------------------ row 27: idempotent retried


async def test_get_is_retried_after_503_503_then_succeeds() -> None:
    waits: list[float] = []
    async with FaultServer(Fault.error(503), Fault.error(503), Fault.echo()) as server:
        response = await send(server, rand=1.0, waits=waits, **RETRYING)
    assert response.status == 200 and response.attempts == 3
    assert server.count == 3 and [a.method for a in server.attempts] == ["GET"] * 3
    assert waits == pytest.approx([0.05, 0.1])  # 0.05 * 2**n, the jitter pinned


@pytest.mark.parametrize("status", [429, 502, 503, 504])
async def test_retryable_statuses_are_retried_for_get_and_bounded(status: int) -> None:
    async with FaultServer(Fault.error(status)) as server:
        response = await send(server, **RETRYING)
    assert response.status == status and response.attempts == 4 and server.count == 4  # 1 + retries


async def test_other_statuses_are_not_retried() -> None:
    async with FaultServer(Fault.error(500), Fault.echo()) as server:
        response = await send(server, **RETRYING)
    assert response.status == 500 and server.count == 1


@pytest.mark.parametrize(("tool", "method"), [("replaceItem", "PUT"), ("deleteItem", "DELETE")])
async def test_put_and_delete_are_retried_after_a_read_error(tool: str, method: str) -> None:
    async with FaultServer(Fault.close(), Fault.echo()) as server:
        response = await send(server, tool, **RETRYING)
    assert response.status == 200 and [a.method for a in server.attempts] == [method, method]


def test_backoff_is_fully_jittered_exponential_and_capped() -> None:
    draws = iter([0.0, 1.0, 0.5, 1.0, 1.0])
    policy = RetryPolicy(retries=5, backoff_base=0.1, backoff_max=0.3, rand=lambda: next(draws))
    assert [round(policy.backoff(n), 3) for n in (1, 1, 2, 3, 9)] == [0.0, 0.1, 0.1, 0.3, 0.3]
    varied = RetryPolicy(retries=5)
    samples = {round(varied.backoff(3), 6) for _ in range(50)}
    assert len(samples) > 40 and all(0 <= s <= 0.4 for s in samples)


async def test_retry_after_seconds_is_honoured() -> None:
    waits: list[float] = []
    async with FaultServer(Fault.error(503, retry_after="1"), Fault.echo()) as server:
        response = await send(server, waits=waits, **RETRYING)
    assert response.status == 200 and server.count == 2
    assert waits == [1.0]  # the header's, not the (0.05 s) backoff


async def test_retry_after_http_date_is_honoured() -> None:
    waits: list[float] = []
    when = format_datetime(datetime.now(UTC) + timedelta(seconds=2), usegmt=True)
    async with FaultServer(Fault.error(503, retry_after=when), Fault.echo()) as server:
        response = await send(server, waits=waits, **RETRYING)
    assert response.status == 200 and server.count == 2
    assert len(waits) == 1 and 0.5 < waits[0] <= 2.0  # until the date (second-granular), not the backoff


async def test_retry_after_beyond_the_deadline_is_not_waited_for() -> None:
    async with FaultServer(Fault.error(503, retry_after="120"), Fault.echo()) as server:
        async with bridge_client(server.url + "/v1", settings=fast(**RETRYING)) as client:
            with anyio.fail_after(10):  # waiting 120 s would end here
                result = await client.call_tool("getItem", {"id": "1"})
    assert result.is_error and "HTTP 503" in result_text(result) and "120" in result_text(result)
    assert server.count == 1


def test_retry_after_parsing() -> None:
    now = datetime(2026, 1, 1, tzinfo=UTC)
    assert parse_retry_after("5", now=now) == 5.0
    assert parse_retry_after("Thu, 01 Jan 2026 00:00:30 GMT", now=now) == 30.0
    assert parse_retry_after("Wed, 31 Dec 2025 00:00:00 GMT", now=now) == 0.0
    assert parse_retry_after("soon", now=now) is None and parse_retry_after(None) is None
    assert parse_retry_after("-3", now=now) is None


# --------------------------------------------------------------- row 28: never POST/PATCH after send


@pytest.mark.parametrize(("tool", "method"), [("createItem", "POST"), ("patchItem", "PATCH")])
async def test_post_and_patch_are_never_retried_once_sent(tool: str, method: str) -> None:
    async with FaultServer(Fault.close(), Fault.echo()) as server:
        with pytest.raises(UpstreamError, match="connection to the API failed"):
            await send(server, tool, **RETRYING)
    assert server.count == 1 and server.attempts[0].method == method and server.attempts[0].body


@pytest.mark.parametrize("fault", [Fault.error(503), Fault.error(429), Fault.reset()])
async def test_post_is_not_retried_on_retryable_statuses_or_resets(fault: Fault) -> None:
    async with FaultServer(fault, Fault.echo()) as server:
        try:
            await send(server, "createItem", **RETRYING)
        except UpstreamError:
            pass
    assert server.count == 1


def test_retry_decisions_by_method_and_phase() -> None:
    policy = RetryPolicy(retries=2)
    for method in ("GET", "HEAD", "OPTIONS", "PUT", "DELETE", "POST", "PATCH"):
        assert policy.retry_error(method, Phase.CONNECT, 1)
        assert policy.retry_error(method, Phase.SENT, 1) == (method in IDEMPOTENT_METHODS)
        assert policy.retry_status(method, 503, 1) == (method in IDEMPOTENT_METHODS)
        assert not policy.retry_error(method, Phase.CONNECT, 3)  # attempts are bounded
    assert "POST" not in IDEMPOTENT_METHODS and "PATCH" not in IDEMPOTENT_METHODS
    assert not RetryPolicy().retry_error("GET", Phase.CONNECT, 1)  # off by default
    import httpx

    assert phase_of(httpx.ConnectError("x")) is Phase.CONNECT
    assert phase_of(httpx.RemoteProtocolError("x")) is Phase.SENT
    assert phase_of(httpx.PoolTimeout("x")) is None


# ------------------------------------------------------------------- row 29: connect-phase retry


async def test_post_is_retried_when_the_connection_was_refused() -> None:
    port = closed_port()
    base = f"http://127.0.0.1:{port}/v1"
    refused, listening = anyio.Event(), anyio.Event()
    waits: list[float] = []

    async def wait_for_the_server(seconds: float) -> None:  # the first attempt was refused: retry once it listens
        waits.append(seconds)
        refused.set()
        await listening.wait()

    results: list[UpstreamResponse] = []
    async with upstream(base, rand=1.0, retries=4, retry_backoff=0.3, retry_backoff_max=0.3) as up:
        up.retry_sleep = wait_for_the_server
        with anyio.fail_after(10):
            async with anyio.create_task_group() as tg:
                done = anyio.Event()

                async def call() -> None:
                    results.append(await up.send(prepared("createItem", base)))
                    done.set()

                tg.start_soon(call)
                await refused.wait()
                async with FaultServer(Fault.echo(), port=port) as server:
                    listening.set()
                    await done.wait()
    assert waits == [0.3] and results[0].status == 200 and results[0].attempts == 2
    assert server.count == 1 and server.attempts[0].method == "POST"  # exactly one mutation


# ----------------------------------------------------------------- row 30: deadline covers retries


async def test_the_deadline_includes_every_retry() -> None:
    # Eleven attempts of 0.4 s each would take 4.4 s; the 1.5 s deadline ends them all (the time it
    # takes to, beside the deadline, is bench/timing_bench.py's figure).
    slow = Fault.delay_then(5.0)
    async with FaultServer(slow) as server:
        with pytest.raises(UpstreamTimeout, match=r"within 1\.5 s"):
            await send(server, deadline=1.5, read_timeout=0.4, retries=10, retry_backoff=0.01)
    assert 2 <= server.count < 11


# -------------------------------------------------------------- P25: annotations are never trusted


async def test_retry_decisions_ignore_tool_annotations() -> None:
    catalogue = hardening_catalogue()
    lying = ToolAnnotationsSpec(readOnlyHint=True, destructiveHint=False, idempotentHint=True, openWorldHint=False)
    tools = tuple(dataclasses.replace(t, annotations=lying) if t.name == "createItem" else t for t in catalogue.tools)
    catalogue = catalogue.model_copy(update={"tools": tools})
    async with FaultServer(Fault.error(503), Fault.echo()) as server:
        async with bridge_client(server.url + "/v1", catalogue=catalogue, settings=fast(**RETRYING)) as client:
            with anyio.fail_after(10):
                listed = {t.name: t for t in (await client.list_tools()).tools}
                result = await client.call_tool("createItem", {"name": "n"})
    assert listed["createItem"].annotations is not None and listed["createItem"].annotations.idempotent_hint
    assert result.is_error and "HTTP 503" in result_text(result)
    assert server.count == 1  # POST stays un-retried although the tool claims to be idempotent
