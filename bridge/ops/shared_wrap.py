"""The shared limits put in place of the per-process ones: on an upstream, and for users.

``--max-concurrent-calls``/``--max-queue-wait``/``--max-calls-per-second`` then hold for the API
across every process, and ``--max-calls-per-user``/``--max-user-calls-per-second`` for each user.
With ``fallback="local"`` the per-process limiters are kept and used while Redis is away.
"""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

from bridge.ops.shared_limits import SharedLimits, SharedLimitsUnavailable, _hashed
from bridge.upstream.limits import CallerLimits, ConcurrencyLimit, RateLimit

UNBOUNDED = 1 << 30


def share_upstream_limits(upstream: Any, shared: SharedLimits) -> None:
    """Replace ``upstream``'s concurrency and rate limits by shared ones (same settings)."""
    settings = upstream.settings
    limit, wait, rate = settings.max_concurrent_calls, settings.max_queue_wait, settings.max_calls_per_second
    local_limit: ConcurrencyLimit = upstream.limit
    local_rate: RateLimit = upstream.rate_limit
    upstream.limit = ConcurrencyLimit(UNBOUNDED, 0, max_waiting=0, label=upstream.name)
    upstream.rate_limit = RateLimit(0)
    busy = (
        f"too many concurrent calls to {upstream.name}; retry shortly. (mcp-bridge runs at most {limit} calls to "
        f"this API at once across every bridge process, none was free for {wait:g} s, and nothing was sent.)"
    )

    def wrapper(inner: Any) -> Any:
        return functools.partial(send_shared, inner)

    async def send_shared(inner: Any, request: Any) -> Any:
        op = request.operation

        def limited(wait: float) -> str:
            return (
                f"{op}: the rate limit of {rate:g} calls per second for this operation was reached (across every "
                f"bridge process) and nothing was sent; retry in {wait:.2f} s."
            )

        async with AsyncExitStack() as stack:
            try:
                await stack.enter_async_context(
                    shared.hold(
                        "api",
                        limit=limit,
                        wait=wait,
                        rate_name=f"op:{_hashed(op)}",
                        rate=rate,
                        busy=busy,
                        limited=limited,
                    )
                )
            except SharedLimitsUnavailable:
                if shared.fallback != "local":
                    raise
                shared.note_outage()
                local_rate.take(op)
                await stack.enter_async_context(local_limit.slot())
            return await inner(request)

    upstream.wrap_send(wrapper)


class SharedCallerLimits:
    """Per-user limits held in Redis (the interface of :class:`~bridge.upstream.limits.CallerLimits`)."""

    def __init__(self, shared: SharedLimits, local: CallerLimits, rate: float) -> None:
        self.shared = shared
        self.local = local
        self.max_concurrent = local.max_concurrent
        self.rate = rate

    def in_flight(self, caller: str) -> int:
        return self.local.in_flight(caller)

    @asynccontextmanager
    async def slot(self, caller: str) -> AsyncIterator[None]:
        key = f"user:{_hashed(caller)}"
        busy = (
            f"You already have {self.max_concurrent} calls in flight, the most one user may have at once; "
            "wait for them to finish, then retry."
        )
        rate = self.rate

        def limited(wait: float) -> str:
            return f"You reached your limit of {rate:g} calls per second; nothing was sent. Retry in {wait:.2f} s."

        async with AsyncExitStack() as stack:
            try:
                await stack.enter_async_context(
                    self.shared.hold(
                        key,
                        limit=self.max_concurrent,
                        wait=0,
                        rate_name=key,
                        rate=self.rate,
                        busy=busy,
                        limited=limited,
                    )
                )
            except SharedLimitsUnavailable:
                if self.shared.fallback != "local":
                    raise
                self.shared.note_outage()
                await stack.enter_async_context(self.local.slot(caller))
            yield
