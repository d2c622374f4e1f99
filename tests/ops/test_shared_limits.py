"""Limits shared through a real redis-server (started here): they hold across processes, a dead
holder's slots come back, a live one keeps its slot, and an unreachable Redis never fails open."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import AsyncExitStack, asynccontextmanager

import anyio
import pytest
from mcp import Client

from bridge.ops.settings import OpsSettings
from bridge.ops.shared_limits import SharedLimits
from bridge.ops.shared_wrap import SharedCallerLimits
from bridge.tools.errors import RateLimitExceeded, TooManyConcurrentCalls
from bridge.upstream.limits import CallerLimits
from tests.ops.conftest import Gated, observed_server, text
from tests.services.processes import free_port
from tests.services.redis import RedisServer, command, running_redis

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def redis() -> Iterator[RedisServer]:
    with running_redis() as server:
        yield server


@pytest.fixture(autouse=True)
def _fresh(redis: RedisServer) -> None:
    command(redis.port, "FLUSHALL")


@asynccontextmanager
async def processes(count: int, url: str, state: Gated, **serve: object) -> AsyncIterator[list[Client]]:
    """``count`` bridges ("processes": own runtimes, limiters and Redis pools) on one upstream."""
    async with AsyncExitStack() as stack:
        clients = []
        for _ in range(count):
            server, _ = await stack.enter_async_context(
                observed_server(OpsSettings(limits_redis=url), state, **serve)  # type: ignore[arg-type]
            )
            clients.append(await stack.enter_async_context(Client(server)))
        yield clients


async def test_a_concurrency_limit_of_k_holds_across_processes_and_frees_its_slots(redis: RedisServer) -> None:
    state = Gated()
    async with processes(3, redis.url, state, max_concurrent_calls=2, max_queue_wait=0.0) as clients:
        gate = state.hold()
        results: list[object] = []
        async with anyio.create_task_group() as tg:
            for number, client in enumerate(clients[:2]):
                tg.start_soon(lambda c=client, n=number: _call(c, n, results))
            with anyio.fail_after(10):
                while state.in_flight < 2:
                    await anyio.sleep(0.01)
            refused = await clients[2].call_tool("getPet", {"petId": 9})
            gate.set()
        after = await clients[2].call_tool("getPet", {"petId": 10})
    assert state.peak == 2 and state.requests == 3
    assert refused.is_error is True and "across every bridge process" in text(refused)
    assert after.is_error is False
    leases = [k for k in command(redis.port, "KEYS", "*leases").split(b"\r\n") if b"leases" in k]
    assert all(command(redis.port, "ZCARD", k.decode()).strip() == b":0" for k in leases)


async def _call(client: Client, number: int, results: list[object]) -> None:
    results.append(await client.call_tool("getPet", {"petId": number + 1}))


async def test_a_rate_limit_holds_across_processes(redis: RedisServer) -> None:
    state = Gated()
    async with processes(2, redis.url, state, max_calls_per_second=2.0) as (first, second):
        answers = [await c.call_tool("getPet", {"petId": 1}) for c in (first, second, first)]
    assert [a.is_error for a in answers] == [False, False, True]
    assert "rate limit of 2 calls per second" in text(answers[2]) and state.requests == 2


async def test_a_dead_holders_slot_comes_back_after_its_lease_and_a_live_one_keeps_it(redis: RedisServer) -> None:
    live = SharedLimits(redis.url, api="pets", lease_seconds=0.3)
    dead = SharedLimits(redis.url, api="pets", lease_seconds=0.3)
    other = SharedLimits(redis.url, api="pets", lease_seconds=0.3)
    hold = {"limit": 1, "wait": 0.0, "busy": "busy", "limited": str}
    try:
        abandoned = dead.hold("api", **hold)  # type: ignore[arg-type]
        await abandoned.__aenter__()
        assert dead._renewer is not None
        dead._renewer.cancel()  # the process "dies": nothing renews or frees its lease
        with pytest.raises(TooManyConcurrentCalls):
            async with other.hold("api", **hold):  # type: ignore[arg-type]
                pass
        await anyio.sleep(0.45)
        async with live.hold("api", **hold):  # type: ignore[arg-type]
            await anyio.sleep(0.8)  # longer than the lease: renewed in the background
            with pytest.raises(TooManyConcurrentCalls):
                async with other.hold("api", **hold):  # type: ignore[arg-type]
                    pass
        async with other.hold("api", **hold):  # type: ignore[arg-type]
            pass
    finally:
        for limits in (live, dead, other):
            await limits.aclose()


async def test_per_user_limits_hold_across_processes_and_users_do_not_share_them(redis: RedisServer) -> None:
    shared = [SharedLimits(redis.url, api="pets") for _ in range(2)]
    first, second = (SharedCallerLimits(s, CallerLimits(1, 5.0), rate=5.0) for s in shared)
    try:
        async with first.slot("alice"):
            with pytest.raises(TooManyConcurrentCalls, match="1 calls in flight"):
                async with second.slot("alice"):
                    pass
            async with second.slot("bob"):
                pass
        for _ in range(5):  # the burst: ceil(rate)
            async with second.slot("carol"):
                pass
        with pytest.raises(RateLimitExceeded, match="5 calls per second"):
            async with first.slot("carol"):
                pass
        keys = command(redis.port, "KEYS", "*")
        named = [name for name in (b"alice", b"bob", b"carol") if name in keys]
        assert b"user:" in keys
        assert named == []  # subjects are hashed
    finally:
        for s in shared:
            await s.aclose()


async def test_unreachable_redis_is_a_tool_error_naming_it_and_readyz_fails() -> None:
    url = f"redis://:s3cret-pass@127.0.0.1:{free_port()}/0"
    state = Gated()
    async with observed_server(OpsSettings(limits_redis=url), state) as (server, operations):
        async with Client(server) as client:
            with anyio.fail_after(10):
                answer = await client.call_tool("getPet", {"petId": 1})
        reason = await operations.readiness.reason()
    assert answer.is_error is True
    message = text(answer)
    assert "Redis at 127.0.0.1:" in message and "Nothing was sent" in message
    assert "s3cret" not in message and reason is not None and "s3cret" not in reason
    assert reason.startswith("shared limits unreachable") and state.requests == 0


async def test_a_hung_redis_fails_closed_within_its_timeout(redis: RedisServer) -> None:
    state = Gated()
    async with observed_server(OpsSettings(limits_redis=redis.url), state) as (server, operations):
        async with Client(server) as client:
            assert (await client.call_tool("getPet", {"petId": 1})).is_error is False
            redis.pause()
            try:
                with anyio.fail_after(10):
                    answer = await client.call_tool("getPet", {"petId": 2})
                    reason = await operations.readiness.reason()
            finally:
                redis.resume()
    assert answer.is_error is True and "did not answer" in text(answer)
    assert reason is not None and state.requests == 1


async def test_the_local_fallback_keeps_serving_under_per_process_limits() -> None:
    url = f"redis://127.0.0.1:{free_port()}/0"
    settings = OpsSettings(limits_redis=url, limits_redis_fallback="local")
    state = Gated()
    async with observed_server(settings, state, max_concurrent_calls=1, max_queue_wait=0.0) as (server, operations):
        async with Client(server) as client:
            answer = await client.call_tool("getPet", {"petId": 1})
            gate = state.hold()
            async with anyio.create_task_group() as tg:
                tg.start_soon(client.call_tool, "getPet", {"petId": 2})
                with anyio.fail_after(10):
                    while state.in_flight < 1:
                        await anyio.sleep(0.01)
                busy = await client.call_tool("getPet", {"petId": 3})
                gate.set()
        reason = await operations.readiness.reason()
    assert answer.is_error is False and reason is None
    assert busy.is_error is True and state.peak == 1  # the per-process limit still holds
