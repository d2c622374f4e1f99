"""Opaque access tokens, checked at the authorization server's RFC 7662 introspection endpoint.

The bridge authenticates as its own confidential client. An active answer is kept until the
token expires, but never longer than :data:`MAX_CACHE_SECONDS` (so a revoked token stops working
within that time); a refusal (inactive, another issuer or resource, no expiry) for
:data:`REFUSAL_CACHE_SECONDS`; both for at most :data:`MAX_ENTRIES` tokens (least recently used go
first). One introspection is in flight per token: the several checks of one request (the SDK's,
session admission's, the step-up guard's) and a burst of requests with one token cost one. Only
a digest of each token is kept as the key. With an issuer configured, the answer must name it
(``iss``), as a JWT must.

Every request with an unknown token costs one introspection, and anyone can send one, so at most
:data:`MAX_IN_FLIGHT` are in flight; a request that cannot get a slot within
:data:`MAX_QUEUE_WAIT` seconds is refused (401), so a flood of made-up tokens neither opens
unbounded connections to the authorization server nor queues without end.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import anyio

from bridge.identity.outbound import Endpoint, OutboundError
from bridge.identity.token_claims import access_token, audience_match

if TYPE_CHECKING:
    from mcp.server.auth.provider import AccessToken

logger = logging.getLogger("bridge")

MAX_CACHE_SECONDS = 60.0
REFUSAL_CACHE_SECONDS = 10.0  # short: a token the server did not know yet (replication) gets in soon
MAX_ENTRIES = 10_000
MAX_IN_FLIGHT = 16
MAX_QUEUE_WAIT = 1.0


class Introspector:
    def __init__(
        self,
        endpoint: Endpoint,
        *,
        client: tuple[str, str],
        resource_url: str,
        issuer: str | None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._endpoint = endpoint
        self._client = client
        self._resource_url = resource_url
        self._issuer = issuer
        self._clock = clock
        # digest -> (until, the verified token or None for a refusal)
        self._cache: OrderedDict[bytes, tuple[float, AccessToken | None]] = OrderedDict()
        self._slots = anyio.Semaphore(MAX_IN_FLIGHT)
        self._inflight: dict[bytes, anyio.Lock] = {}

    async def verify(self, token: str) -> AccessToken | None:
        key = hashlib.sha256(token.encode("utf-8", "surrogateescape")).digest()
        found = self._cached(key)
        if found is not None:
            return found[0]
        lock = self._inflight.setdefault(key, anyio.Lock())
        try:
            async with lock:
                found = self._cached(key)  # the introspection this one waited for may have answered
                if found is not None:
                    return found[0]
                return await self._introspect(token, key)
        finally:
            if not lock.locked():
                self._inflight.pop(key, None)

    def _cached(self, key: bytes) -> tuple[AccessToken | None] | None:
        hit = self._cache.get(key)
        if hit is None:
            return None
        if hit[0] <= self._clock():
            del self._cache[key]
            return None
        self._cache.move_to_end(key)
        return (hit[1],)

    def _keep(self, key: bytes, until: float, verified: AccessToken | None) -> None:
        self._cache[key] = (until, verified)
        self._cache.move_to_end(key)
        while len(self._cache) > MAX_ENTRIES:
            self._cache.popitem(last=False)

    async def _introspect(self, token: str, key: bytes) -> AccessToken | None:
        now = self._clock()
        with anyio.move_on_after(MAX_QUEUE_WAIT) as waiting:
            await self._slots.acquire()
        if waiting.cancelled_caught:
            logger.warning("refused a client bearer token: %d introspections already in flight", MAX_IN_FLIGHT)
            return None
        try:
            async with self._endpoint.client() as client:
                data = await self._endpoint.json(
                    client, form={"token": token, "token_type_hint": "access_token"}, auth=self._client
                )
        except OutboundError as exc:
            logger.warning("token introspection failed: %s", exc)
            return None  # not kept: the authorization server may answer the next time
        finally:
            self._slots.release()
        verified = self._judge(token, data, now)
        if verified is None:
            self._keep(key, now + REFUSAL_CACHE_SECONDS, None)
            return None
        self._keep(key, min(float(data["exp"]), now + MAX_CACHE_SECONDS), verified)  # _judge checked exp
        return verified

    def _judge(self, token: str, data: dict[str, Any], now: float) -> AccessToken | None:
        """The verified token an introspection answer vouches for, or None (logged)."""
        if data.get("active") is not True:
            logger.info("refused a client bearer token: the authorization server says it is not active")
            return None
        claims: dict[str, Any] = dict(data)
        exp = claims.get("exp")
        if not isinstance(exp, int | float) or isinstance(exp, bool) or exp <= now:
            logger.info("refused a client bearer token: introspection gave no future expiry")
            return None
        nbf = claims.get("nbf")
        if isinstance(nbf, int | float) and not isinstance(nbf, bool) and nbf > now + 60:
            return None
        if self._issuer is not None and claims.get("iss") != self._issuer:
            logger.info("refused a client bearer token: introspection named another issuer, or none")
            return None
        # No "aud" means the server does not say whom the token is for: it may be another resource's
        # (RFC 8707), so it is refused like one, never taken to be ours.
        audience = audience_match(claims, self._resource_url)
        if audience is None:
            logger.info("refused a client bearer token: it was issued for another resource (or names none)")
            return None
        return access_token(token, claims, audience)
