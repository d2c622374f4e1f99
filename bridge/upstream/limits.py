"""Backpressure for upstream calls: a concurrency limit with a short queue, and a rate limit (P23).

:class:`ConcurrencyLimit` lets at most ``max_concurrent`` calls of one upstream run at once. A
call that finds every slot busy waits up to ``max_queue_wait`` seconds in a FIFO queue (at most
``max_waiting`` callers wait; later ones are refused at once). A call that gets no slot raises
:class:`~bridge.tools.errors.TooManyConcurrentCalls`, which the model sees as an ``isError`` result;
nothing is sent upstream and the bridge keeps serving.

:class:`RateLimit` is a token bucket per key (the operation, ``"GET /pets/{petId}"``): ``rate``
calls per second on average, bursts of ``burst``. Off when ``rate`` is 0.
"""

from __future__ import annotations

import math
import time
from collections import deque
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass

import anyio

from bridge.tools.errors import RateLimitExceeded, TooManyConcurrentCalls

DEFAULT_CALLS_PER_USER = 8

__all__ = ["ConcurrencyLimit", "RateLimit"]


class ConcurrencyLimit:
    """At most ``max_concurrent`` holders of :meth:`slot` at once; a short, bounded, fair queue.

    ``label`` names the API in error messages. Usable from any number of tasks of one event loop.
    """

    def __init__(self, max_concurrent: int, max_queue_wait: float, *, max_waiting: int, label: str) -> None:
        if max_concurrent < 1:
            raise ValueError("max_concurrent_calls must be at least 1.")
        if max_queue_wait < 0:
            raise ValueError("max_queue_wait must not be negative.")
        if max_waiting < 0:
            raise ValueError("max_queued_calls must not be negative.")
        self.max_concurrent = max_concurrent
        self.max_queue_wait = max_queue_wait
        self.max_waiting = max_waiting
        self.label = label
        self._in_flight = 0
        self._waiters: deque[anyio.Event] = deque()
        self.peak = 0
        """Most slots ever held at once (for tests and the load test)."""
        self.refused = 0
        """Calls refused so far."""

    @property
    def in_flight(self) -> int:
        return self._in_flight

    @property
    def waiting(self) -> int:
        return len(self._waiters)

    def _refuse(self) -> TooManyConcurrentCalls:
        self.refused += 1
        return TooManyConcurrentCalls(
            f"too many concurrent calls to {self.label}; retry shortly. "
            f"(mcp-bridge runs at most {self.max_concurrent} calls to this API at once and nothing was sent.)"
        )

    def _take(self) -> None:
        self._in_flight += 1
        self.peak = max(self.peak, self._in_flight)

    def _release(self) -> None:
        if self._waiters:
            self._waiters.popleft().set()  # hand the slot over; in_flight stays the same
        else:
            self._in_flight -= 1

    async def _acquire(self) -> None:
        if self._in_flight < self.max_concurrent and not self._waiters:
            self._take()
            return
        if len(self._waiters) >= self.max_waiting or self.max_queue_wait == 0:
            raise self._refuse()
        granted = anyio.Event()
        self._waiters.append(granted)
        try:
            with anyio.move_on_after(self.max_queue_wait):
                await granted.wait()
        except BaseException:
            if granted.is_set():
                self._release()  # the slot arrived as we were cancelled: pass it on
            else:
                self._waiters.remove(granted)
            raise
        if not granted.is_set():
            self._waiters.remove(granted)
            raise self._refuse()

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        """Hold one slot for the body of the ``async with``.

        Raises:
            TooManyConcurrentCalls: no slot became free within ``max_queue_wait``, or the queue is full.
        """
        await self._acquire()
        try:
            yield
        finally:
            self._release()


@dataclass(slots=True)
class _Bucket:
    tokens: float
    updated: float


class RateLimit:
    """Token buckets, one per key: ``rate`` tokens per second, holding at most ``burst``."""

    def __init__(self, rate: float, burst: int | None = None, *, clock: Callable[[], float] = time.monotonic) -> None:
        if rate < 0:
            raise ValueError("max_calls_per_second must not be negative.")
        self.rate = rate
        self.burst = burst if burst is not None else max(1, math.ceil(rate))
        if self.burst < 1:
            raise ValueError("the rate-limit burst must be at least 1.")
        self._clock = clock
        self._buckets: dict[str, _Bucket] = {}

    @property
    def enabled(self) -> bool:
        return self.rate > 0

    def prune(self, max_keys: int) -> None:
        """Forget buckets that are full again (they hold no state) once there are over ``max_keys``."""
        if len(self._buckets) <= max_keys:
            return
        now = self._clock()
        for key, bucket in list(self._buckets.items()):
            if bucket.tokens + (now - bucket.updated) * self.rate >= self.burst:
                del self._buckets[key]

    def take(self, key: str) -> None:
        """Spend one token of ``key``'s bucket.

        Raises:
            RateLimitExceeded: the bucket is empty (its ``retry_after`` says when a token is back).
        """
        if not self.enabled:
            return
        now = self._clock()
        bucket = self._buckets.get(key)
        if bucket is None:
            bucket = self._buckets[key] = _Bucket(tokens=float(self.burst), updated=now)
        bucket.tokens = min(float(self.burst), bucket.tokens + (now - bucket.updated) * self.rate)
        bucket.updated = now
        if bucket.tokens >= 1.0:
            bucket.tokens -= 1.0
            return
        wait = (1.0 - bucket.tokens) / self.rate
        raise RateLimitExceeded(
            f"{key}: the rate limit of {self.rate:g} calls per second for this operation was reached and nothing "
            f"was sent; retry in {max(wait, 0.01):.2f} s.",
            retry_after=wait,
        )


class CallerLimits:
    """Per-caller limits beside the per-API ones: concurrent calls and calls per second by subject.

    One user cannot take every upstream slot or the whole rate of an API that many people share.
    State is kept only for callers with a call in flight or a bucket not yet full again, and for
    at most ``max_callers`` of them, so memory does not grow with the number of users.
    """

    def __init__(
        self,
        max_concurrent: int,
        rate: float = 0.0,
        *,
        max_callers: int = 10_000,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if max_concurrent < 1:
            raise ValueError("the per-user concurrency limit must be at least 1.")
        self.max_concurrent = max_concurrent
        self.max_callers = max_callers
        self._in_flight: dict[str, int] = {}
        self._rate = RateLimit(rate, clock=clock)

    def in_flight(self, caller: str) -> int:
        return self._in_flight.get(caller, 0)

    @asynccontextmanager
    async def slot(self, caller: str) -> AsyncIterator[None]:
        """Hold one of ``caller``'s slots; refuse at once (nothing sent) when they are all taken."""
        held = self._in_flight.get(caller, 0)
        if held >= self.max_concurrent:
            raise TooManyConcurrentCalls(
                f"You already have {held} calls in flight, the most one user may have at once; "
                "wait for them to finish, then retry."
            )
        if held == 0 and len(self._in_flight) >= self.max_callers:
            raise TooManyConcurrentCalls("Too many users are calling at once; retry in a moment.")
        self._rate.take(f"user {caller}")
        self._rate.prune(self.max_callers)
        self._in_flight[caller] = held + 1
        try:
            yield
        finally:
            left = self._in_flight[caller] - 1
            if left:
                self._in_flight[caller] = left
            else:
                del self._in_flight[caller]
