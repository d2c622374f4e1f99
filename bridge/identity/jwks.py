"""The authorization server's signing keys (JWKS), fetched from the configured URL and kept.

A token whose ``kid`` is unknown triggers one refresh of the key set (the server may have
rotated its keys), but at most one every :data:`MIN_REFRESH_INTERVAL` seconds and one at a time:
a stream of tokens with made-up ``kid`` values costs one fetch, not one each. A key set older
than :data:`MAX_KEY_AGE` is fetched again before it is used, so a key the server stopped
publishing (retired, or compromised) stops being trusted within that time; if that fetch fails,
the keys in hand are kept (the server being down does not lock every user out). Keys are parsed by
PyJWT (``PyJWKSet``); each key's algorithm comes from the key itself (its ``alg``, else its type
and curve), never from a token.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

import anyio

from bridge.identity.outbound import Endpoint, OutboundError

logger = logging.getLogger("bridge")

MIN_REFRESH_INTERVAL = 30.0
MAX_KEY_AGE = 300.0
MAX_KEYS = 64
# The asymmetric algorithms accepted (the MCP authorization spec's OAuth 2.1 profile); HMAC and
# "none" are never accepted, whatever a key set or a token says.
ALGORITHMS = ("RS256", "ES256", "EdDSA")


@dataclass(frozen=True, slots=True)
class SigningKey:
    kid: str | None
    algorithm: str
    key: object  # a cryptography public key


class JwksKeys:
    """The key set behind one JWKS URL."""

    def __init__(self, endpoint: Endpoint, *, clock: Callable[[], float] = time.monotonic) -> None:
        # PyJWT and cryptography (about 2 MB and 20 ms of imports) load here, at start-up of a server
        # that verifies JWTs, and never in one that does not.
        import jwt

        self._jwt = jwt
        self._endpoint = endpoint
        self._clock = clock
        self._keys: dict[str | None, SigningKey] = {}
        self._fetched_at: float | None = None
        self._lock = anyio.Lock()
        self.fetches = 0

    async def key(self, kid: str | None) -> SigningKey | None:
        """The key for ``kid`` (None: the set's only key), refreshing the set once if it is unknown."""
        found = self._find(kid)
        if found is not None and not self._stale():
            return found
        async with self._lock:
            # another task may have refreshed while this one waited
            if self._stale() or (self._find(kid) is None and self._may_refresh()):
                await self._refresh()
            return self._find(kid)

    def fresh_for(self) -> float:
        """Seconds the key set in hand may still be used before it is fetched again (0: stale or none).

        A token verified with it is trusted no longer than that without checking again
        (:class:`~bridge.identity.client_auth.ClientTokenVerifier`): a key the issuer stopped publishing
        then stops working within :data:`MAX_KEY_AGE` of the fetch, for tokens seen before too."""
        if self._fetched_at is None:
            return 0.0
        return max(0.0, MAX_KEY_AGE - (self._clock() - self._fetched_at))

    def _find(self, kid: str | None) -> SigningKey | None:
        if kid is None:
            return next(iter(self._keys.values())) if len(self._keys) == 1 else None
        return self._keys.get(kid)

    def _stale(self) -> bool:
        return self._fetched_at is not None and self._clock() - self._fetched_at >= MAX_KEY_AGE

    def _may_refresh(self) -> bool:
        return self._fetched_at is None or self._clock() - self._fetched_at >= MIN_REFRESH_INTERVAL

    async def _refresh(self) -> None:
        self._fetched_at = self._clock()
        self.fetches += 1
        try:
            async with self._endpoint.client() as client:
                data = await self._endpoint.json(client)
        except OutboundError as exc:
            logger.warning("could not refresh the signing keys: %s", exc)
            return
        keys = data.get("keys")
        if not isinstance(keys, list):
            logger.warning("%s answered without a keys list", self._endpoint.what)
            return
        parsed: dict[str | None, SigningKey] = {}
        for item in keys[:MAX_KEYS]:
            if not isinstance(item, dict) or item.get("use", "sig") != "sig":
                continue
            try:
                jwk = self._jwt.PyJWK(item)
            except (self._jwt.PyJWKError, self._jwt.InvalidKeyError, ValueError, TypeError):
                continue  # a key type PyJWT cannot use is skipped, not fatal
            algorithm = jwk.algorithm_name  # the key's "alg", else derived from its type and curve
            if algorithm not in ALGORITHMS or jwk.key_type == "oct":
                continue
            kid = item.get("kid") if isinstance(item.get("kid"), str) else None
            parsed[kid] = SigningKey(kid, algorithm, jwk.key)
        self._keys = parsed
        logger.info("signing keys loaded: %d", len(parsed))
