"""Call limits shared by every process through Redis (``--limits-redis``).

Concurrency is a sorted set of leases scored by their expiry: taking a slot is one Lua script
that drops expired leases, counts and adds, so a worker that dies frees its slots when their
lease runs out (``DEFAULT_LEASE_SECONDS``); a live process renews its leases in the background,
so a long call keeps its slot. Rate is GCRA (one stored time per key) on the same script, on
Redis's clock, so the machines' clocks do not matter. Keys name the API, the operation, or a
hash of the user's subject (no identity is stored in Redis).

Redis unreachable: the default policy refuses the call with a tool error that names the cause
and sends nothing, and ``/readyz`` answers 503 (never fail-open); ``fallback="local"`` applies
the per-process limits instead, with one warning per outage.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any
from urllib.parse import urlsplit

import anyio

from bridge.ops.settings import DEFAULT_LEASE_SECONDS
from bridge.tools.errors import RateLimitExceeded, ToolError, TooManyConcurrentCalls

logger = logging.getLogger("bridge")

REDIS_TIMEOUT = 0.5  # seconds for one Redis round trip before it counts as unreachable
POLL_FIRST, POLL_MAX = 0.005, 0.1  # waiting for a shared slot: back-off between tries
KEY_PREFIX = "mcp_bridge"

# KEYS: leases (zset), rate (string; "" to skip). ARGV: limit (0: none), lease ms, lease id,
# interval ms (0: no rate), burst. Returns {1, 0}, {0, 0} (slots full) or {-1, wait_ms} (rate).
_ACQUIRE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local limit = tonumber(ARGV[1])
if limit > 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
  if redis.call('ZCARD', KEYS[1]) >= limit then return {0, 0} end
end
local interval = tonumber(ARGV[4])
if interval > 0 then
  local tat = tonumber(redis.call('GET', KEYS[2]) or now)
  if tat < now then tat = now end
  local new_tat = tat + interval
  local allow_at = new_tat - interval * tonumber(ARGV[5])
  if allow_at > now then return {-1, allow_at - now} end
  redis.call('SET', KEYS[2], new_tat, 'PX', math.ceil(new_tat - now) + 1000)
end
if limit > 0 then
  redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[3])
  redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]) * 2)
end
return {1, 0}
"""
# KEYS: leases. ARGV: lease ms, then lease ids. Pushes the expiry of the leases still held.
_RENEW = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
for i = 2, #ARGV do redis.call('ZADD', KEYS[1], 'XX', now + tonumber(ARGV[1]), ARGV[i]) end
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[1]) * 2)
return 1
"""


class SharedLimitsUnavailable(ToolError):
    """Redis, which holds the shared limits, cannot be reached; nothing was sent."""


def redis_location(url: str) -> str:
    """``host:port/db`` of a Redis URL, for messages: never its user name or password."""
    parts = urlsplit(url)
    return f"{parts.hostname or '?'}:{parts.port or 6379}{parts.path or ''}"


def _hashed(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:32]


class SharedLimits:
    """One Redis connection pool and the scripts; the per-API and per-user limiters use it."""

    def __init__(
        self, url: str, *, api: str, fallback: str = "fail", lease_seconds: float = DEFAULT_LEASE_SECONDS
    ) -> None:
        import redis.asyncio as aioredis

        from bridge.ops.redis_reply import BoundedParser

        self.url = url
        self.location = redis_location(url)
        self.fallback = fallback
        self.lease_ms = int(lease_seconds * 1000)
        self.prefix = f"{KEY_PREFIX}:{_hashed(api)[:16]}"
        self.client: Any = aioredis.Redis.from_url(
            url,
            socket_timeout=REDIS_TIMEOUT,
            socket_connect_timeout=REDIS_TIMEOUT,
            health_check_interval=0,
            parser_class=BoundedParser,
        )
        self._acquire = self.client.register_script(_ACQUIRE)
        self._renew = self.client.register_script(_RENEW)
        self._held: dict[str, dict[str, None]] = {}  # leases key -> lease ids held by this process
        self._renewer: asyncio.Task[None] | None = None
        self.outage = False

    # ------------------------------------------------------------------ health

    async def unreachable(self) -> str | None:
        """Why Redis cannot serve the limits now (for ``/readyz``), or None."""
        try:
            with anyio.fail_after(REDIS_TIMEOUT * 2):
                await self.client.ping()
        except Exception as exc:
            return f"shared limits unreachable (Redis at {self.location}: {type(exc).__name__})"
        return None

    def _unavailable(self, exc: BaseException) -> SharedLimitsUnavailable:
        return SharedLimitsUnavailable(
            f"The shared call limits cannot be checked: Redis at {self.location} did not answer "
            f"({type(exc).__name__}). Nothing was sent; try again shortly."
        )

    @contextmanager
    def _redis_errors(self) -> Iterator[None]:
        from redis.exceptions import RedisError

        from bridge.ops.redis_reply import UnexpectedReply

        try:
            with anyio.fail_after(REDIS_TIMEOUT * 2):
                yield
        except UnexpectedReply as exc:
            raise SharedLimitsUnavailable(
                f"The shared call limits cannot be checked: Redis at {self.location} answered something that is "
                f"not a limits reply ({exc}). Nothing was sent; check that --limits-redis names a Redis server."
            ) from None
        except (RedisError, OSError, TimeoutError) as exc:
            raise self._unavailable(exc) from None
        except (TypeError, ValueError, AttributeError, IndexError, KeyError) as exc:  # the client choked on a reply
            raise self._unavailable(exc) from None

    # ------------------------------------------------------------------ slots

    async def _try(
        self, leases: str, limit: int, lease: str, rate_key: str, interval_ms: float, burst: int
    ) -> tuple[int, int]:
        from bridge.ops.redis_reply import pair

        with self._redis_errors():
            result = pair(
                await self._acquire(
                    keys=[leases, rate_key or leases + ":none"], args=[limit, self.lease_ms, lease, interval_ms, burst]
                )
            )
        self.outage = False
        return result

    @asynccontextmanager
    async def hold(
        self,
        name: str,
        *,
        limit: int,
        wait: float,
        rate_name: str | None = None,
        rate: float = 0.0,
        busy: str,
        limited: Callable[[float], str],
    ) -> AsyncIterator[None]:
        """Hold one of ``limit`` slots of ``name`` (waiting up to ``wait`` s) and spend a rate token.

        Raises TooManyConcurrentCalls (``busy``), RateLimitExceeded (``limited(seconds to wait)``) or
        SharedLimitsUnavailable; in each case nothing is sent.
        """
        leases = f"{self.prefix}:{name}:leases"
        rate_key = f"{self.prefix}:{rate_name}:rate" if rate > 0 and rate_name else ""
        interval_ms = 1000.0 / rate if rate > 0 else 0.0
        burst = max(1, int(-(-rate // 1))) if rate > 0 else 1
        lease = uuid.uuid4().hex
        deadline = time.monotonic() + wait
        pause = POLL_FIRST
        while True:
            code, wait_ms = await self._try(leases, limit, lease, rate_key, interval_ms, burst)
            if code == 1:
                break
            if code == -1:
                seconds = wait_ms / 1000
                raise RateLimitExceeded(limited(max(seconds, 0.01)), retry_after=seconds)
            if time.monotonic() + pause > deadline:
                raise TooManyConcurrentCalls(busy)
            await anyio.sleep(pause)
            pause = min(pause * 2, POLL_MAX)
        if limit > 0:
            self._held.setdefault(leases, {})[lease] = None
            self._ensure_renewer()
        try:
            yield
        finally:
            if limit > 0:
                held = self._held[leases]
                held.pop(lease, None)
                if not held:  # one entry per key with a slot held: no growth with the number of users
                    del self._held[leases]
                with anyio.CancelScope(shield=True):
                    try:
                        with anyio.fail_after(REDIS_TIMEOUT * 2):
                            await self.client.zrem(leases, lease)
                    except Exception as exc:  # the lease expires by itself
                        logger.warning(
                            "shared limits: a slot could not be freed (%s); it expires in %g s",
                            type(exc).__name__,
                            self.lease_ms / 1000,
                        )

    def _ensure_renewer(self) -> None:
        if self._renewer is None or self._renewer.done():
            self._renewer = asyncio.get_running_loop().create_task(self._renew_forever())

    async def _renew_forever(self) -> None:
        while any(self._held.values()):
            await asyncio.sleep(self.lease_ms / 3000)
            for leases, ids in list(self._held.items()):
                if ids:
                    try:
                        await self._renew(keys=[leases], args=[self.lease_ms, *ids])
                    except Exception as exc:
                        logger.warning("shared limits: leases not renewed (%s)", type(exc).__name__)

    async def aclose(self) -> None:
        if self._renewer is not None:
            self._renewer.cancel()
        await self.client.aclose()

    def note_outage(self) -> None:
        if not self.outage:
            self.outage = True
            logger.warning(
                "shared limits: Redis at %s unreachable; per-process limits apply until it is back", self.location
            )
