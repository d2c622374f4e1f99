"""Backpressure (P23; test plan row 35): a concurrency limit with a short queue and a per-operation
rate limit, answered with tool errors, never a crash; plus the small version of bench/load_test.py.
"""

from __future__ import annotations

import os
import time
from typing import Any

import anyio
import pytest

from bridge.tools.errors import RateLimitExceeded, TooManyConcurrentCalls
from bridge.upstream.http_settings import DEFAULT_MAX_CONCURRENT_CALLS, HttpSettings
from bridge.upstream.limits import ConcurrencyLimit, RateLimit
from tests.security.fault_server import Attempt, Fault, FaultServer
from tests.security.harness import bridge_client, fast, result_text

pytestmark = pytest.mark.anyio


def peak_concurrency(attempts: list[Attempt]) -> int:
    events = sorted(
        [(a.started, 1) for a in attempts] + [(a.finished or float("inf"), -1) for a in attempts],
        key=lambda e: (e[0], e[1]),
    )
    current = peak = 0
    for _, delta in events:
        current += delta
        peak = max(peak, current)
    return peak


async def test_concurrency_limit_has_a_default_and_is_configurable() -> None:
    assert HttpSettings().max_concurrent_calls == DEFAULT_MAX_CONCURRENT_CALLS == 32
    assert 0 < HttpSettings().max_queue_wait <= 5
    with pytest.raises(ValueError):
        HttpSettings(max_concurrent_calls=0)


async def test_calls_beyond_the_limit_get_a_clear_tool_error_and_never_reach_upstream() -> None:
    limit, calls = 4, 30
    settings = fast(max_concurrent_calls=limit, max_queue_wait=0.1, deadline=5.0)
    results: list[Any] = []
    async with FaultServer(Fault.delay_then(0.5)) as server:
        async with bridge_client(server.url + "/v1", settings=settings) as client:
            with anyio.fail_after(15):
                async with anyio.create_task_group() as tg:
                    for n in range(calls):

                        async def one(n: int = n) -> None:
                            results.append(await client.call_tool("getItem", {"id": str(n)}))

                        tg.start_soon(one)
                after = await client.call_tool("getItem", {"id": "after"})
        await server.wait_for(server.count, closed=True)
    ok = [r for r in results if not r.is_error]
    limited = [r for r in results if r.is_error]
    assert len(results) == calls and len(ok) == limit and len(limited) == calls - limit
    for result in limited:
        assert result_text(result).startswith("too many concurrent calls to Hardening; retry shortly")
    assert peak_concurrency(server.attempts) <= limit
    assert server.count == limit + 1  # the refused calls sent nothing
    assert not after.is_error  # the bridge keeps serving


async def test_short_queue_absorbs_a_burst_without_exceeding_the_limit() -> None:
    limit, calls = 3, 12
    settings = fast(max_concurrent_calls=limit, max_queue_wait=3.0, deadline=5.0)
    async with FaultServer(Fault.delay_then(0.1)) as server:
        async with bridge_client(server.url + "/v1", settings=settings) as client:
            with anyio.fail_after(15):
                async with anyio.create_task_group() as tg:
                    for n in range(calls):
                        tg.start_soon(client.call_tool, "getItem", {"id": str(n)})
        await server.wait_for(calls, closed=True)
    assert server.count == calls
    assert peak_concurrency(server.attempts) <= limit


async def test_queue_length_is_bounded_and_cancelled_waiters_free_their_place() -> None:
    limit = ConcurrencyLimit(1, 5.0, max_waiting=1, label="api.example")
    holder_in, release = anyio.Event(), anyio.Event()

    async def hold() -> None:
        async with limit.slot():
            holder_in.set()
            await release.wait()

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(hold)
            await holder_in.wait()
            waiter = anyio.CancelScope()

            async def wait_in_queue() -> None:
                with waiter:
                    async with limit.slot():
                        pass

            tg.start_soon(wait_in_queue)
            while limit.waiting == 0:
                await anyio.sleep(0.01)
            with pytest.raises(TooManyConcurrentCalls, match=r"too many concurrent calls to api\.example"):
                async with limit.slot():
                    pass  # the queue (1 place) is full: refused at once
            waiter.cancel()
            while limit.waiting:
                await anyio.sleep(0.01)
            release.set()
    assert limit.in_flight == 0 and limit.waiting == 0 and limit.peak == 1
    async with limit.slot():  # nothing leaked
        assert limit.in_flight == 1


async def test_per_operation_rate_limit_refuses_with_a_retry_hint_and_sends_nothing() -> None:
    async with FaultServer(Fault.echo()) as server:
        async with bridge_client(server.url + "/v1", settings=fast(max_calls_per_second=2)) as client:
            with anyio.fail_after(10):
                results = [await client.call_tool("getItem", {"id": str(n)}) for n in range(3)]
                other = await client.call_tool("listItems", {})
    assert [r.is_error for r in results] == [False, False, True]
    assert "rate limit of 2 calls per second" in result_text(results[2]) and "retry in" in result_text(results[2])
    assert not other.is_error  # the limit is per operation
    assert server.count == 3


def test_rate_limit_token_bucket_refills() -> None:
    now = [0.0]
    bucket = RateLimit(2.0, clock=lambda: now[0])
    bucket.take("op")
    bucket.take("op")
    with pytest.raises(RateLimitExceeded) as info:
        bucket.take("op")
    assert info.value.retry_after == pytest.approx(0.5)
    now[0] = 0.5
    bucket.take("op")
    assert not RateLimit(0).enabled


async def test_fifty_concurrent_calls_finish_quickly_with_bounded_memory() -> None:
    """The small, CI-sized version of bench/load_test.py."""
    psutil = pytest.importorskip("psutil")
    process = psutil.Process(os.getpid())
    before = process.memory_info().rss
    settings = fast(max_concurrent_calls=16, max_queue_wait=0.3, deadline=5.0)
    outcomes = {"ok": 0, "limited": 0, "other": 0}
    started = time.monotonic()
    async with FaultServer(Fault.delay_then(0.2)) as server:
        async with bridge_client(server.url + "/v1", settings=settings) as client:
            with anyio.fail_after(10):
                async with anyio.create_task_group() as tg:
                    for n in range(50):

                        async def one(n: int = n) -> None:
                            result = await client.call_tool("getItem", {"id": str(n)})
                            text = result_text(result)
                            key = "ok" if not result.is_error else "limited" if "too many" in text else "other"
                            outcomes[key] += 1

                        tg.start_soon(one)
    elapsed = time.monotonic() - started
    growth = process.memory_info().rss - before
    assert outcomes["other"] == 0 and outcomes["ok"] + outcomes["limited"] == 50 and outcomes["ok"] >= 16
    assert elapsed < 10
    assert growth < 100 * 1024 * 1024, growth
    assert peak_concurrency(server.attempts) <= 16
