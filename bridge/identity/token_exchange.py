"""Per-user upstream tokens by OAuth 2.0 Token Exchange (RFC 8693), never passthrough.

The MCP authorization spec forbids sending the client's token to the upstream API. Instead the
bridge, authenticated as its own confidential client, exchanges the caller's access token (the
subject token) at the configured token endpoint for a token whose audience is the upstream API
and whose scopes are the operation's. The caller's token goes nowhere else.

Exchanged tokens are kept per (subject token, audience, scopes) until shortly before they expire
(an ``expires_in`` that is not a finite number counts as none, and none is kept longer than
:data:`MAX_LIFETIME`), for at most :data:`MAX_CACHED` keys, and each is redacted while it may
still be sent or shown: while it is cached (``held``) and while each call it was handed to runs
(``remember`` is told at every use); one exchange is in flight per key, so a burst of calls by
one user costs one request to the authorization server. The key is the caller's token itself
(as a digest), not only its subject: the authorization server decides per subject token (which
client got it, with which scopes, whether it may be exchanged at all), so a token exchanged for
one of a user's tokens is never handed to a call made with another. A failed exchange is a
:class:`~bridge.tools.errors.CredentialsError` that says what failed, never showing a token.
"""

from __future__ import annotations

import hashlib
import logging
import math
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field

import anyio
import httpx

from bridge.identity.outbound import DEFAULT_TIMEOUT, Endpoint, OutboundError
from bridge.secrets.held import HeldTokens
from bridge.tools.errors import CredentialsError

logger = logging.getLogger("bridge")

GRANT_TYPE = "urn:ietf:params:oauth:grant-type:token-exchange"
ACCESS_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:access_token"
EXPIRY_MARGIN = 30.0  # an exchanged token is renewed this long before it expires
DEFAULT_LIFETIME = 60.0  # kept this long when the answer gives no usable expires_in
MAX_LIFETIME = 24 * 3600.0
MAX_CACHED = 256
MAX_TOKEN_LENGTH = 16_384


@dataclass(frozen=True, slots=True)
class ExchangeSettings:
    """Where and as whom to exchange; ``audience`` is the upstream API (sent as audience and resource)."""

    token_url: str
    client_id: str
    client_secret: str = field(repr=False)
    audience: str
    transport: httpx.AsyncBaseTransport | None = field(default=None, repr=False, compare=False)
    timeout: float = DEFAULT_TIMEOUT  # the whole exchange, answer included


@dataclass(slots=True)
class _Cached:
    token: str
    until: float  # monotonic


class TokenExchanger:
    def __init__(
        self,
        settings: ExchangeSettings,
        *,
        remember: Callable[[str], None] = lambda token: None,
        clock: Callable[[], float] = time.monotonic,
        held: HeldTokens | None = None,
    ) -> None:
        self.settings = settings
        self._endpoint = Endpoint.configured(
            settings.token_url, "the token-exchange endpoint", transport=settings.transport, timeout=settings.timeout
        )
        self._remember = remember  # redaction holds every exchanged token for the call that sends it
        self._held = held  # and for as long as it is cached
        self._clock = clock
        self._cache: OrderedDict[tuple[str, str, tuple[str, ...]], _Cached] = OrderedDict()
        self._inflight: dict[tuple[str, str, tuple[str, ...]], anyio.Lock] = {}
        self._observers: list[Callable[[str], None]] = []

    def observe(self, observer: Callable[[str], None]) -> None:
        """Tell ``observer`` how each :meth:`token_for` was answered: ``"hit"`` (cached) or ``"miss"`` (exchanged)."""
        self._observers.append(observer)

    def _answered(self, how: str) -> None:
        for observer in self._observers:
            observer(how)

    @staticmethod
    def _subject_key(subject: str | None, subject_token: str) -> str:
        digest = hashlib.sha256(subject_token.encode("utf-8", "surrogateescape")).hexdigest()
        return f"{subject or '-'}:{digest}"

    def _key(
        self, subject: str | None, subject_token: str, scopes: tuple[str, ...]
    ) -> tuple[str, str, tuple[str, ...]]:
        return self._subject_key(subject, subject_token), self.settings.audience, tuple(sorted(set(scopes)))

    def forget(self, subject: str | None, subject_token: str, scopes: tuple[str, ...]) -> None:
        """Drop the cached token of this caller and scopes (the upstream refused it: revoked, or expired early)."""
        self._uncache(self._cache.pop(self._key(subject, subject_token, scopes), None))

    async def token_for(self, subject: str | None, subject_token: str, scopes: tuple[str, ...]) -> str:
        """An upstream token for the caller of ``subject_token``: cached, or exchanged now."""
        key = self._key(subject, subject_token, scopes)
        cached = self._fresh(key)
        if cached is not None:
            self._remember(cached)  # held for redaction while this call runs
            self._answered("hit")
            return cached
        lock = self._inflight.setdefault(key, anyio.Lock())
        try:
            async with lock:
                cached = self._fresh(key)  # the exchange this call waited for may have made it
                if cached is not None:
                    self._remember(cached)
                    self._answered("hit")
                    return cached
                self._answered("miss")
                token, lifetime = await self._exchange(subject_token, key[2])
                # Redacted before it is ever sent; a new token rebuilds redaction's index: off the loop.
                if self._held is not None:
                    await anyio.to_thread.run_sync(self._held.hold, token)
                await anyio.to_thread.run_sync(self._remember, token)
                self._uncache(self._cache.pop(key, None))
                self._cache[key] = _Cached(token, self._clock() + max(lifetime - EXPIRY_MARGIN, 1.0))
                while len(self._cache) > MAX_CACHED:
                    self._uncache(self._cache.popitem(last=False)[1])
                return token
        finally:
            if not lock.locked():
                self._inflight.pop(key, None)

    def _fresh(self, key: tuple[str, str, tuple[str, ...]]) -> str | None:
        entry = self._cache.get(key)
        if entry is None:
            return None
        if entry.until <= self._clock():
            self._uncache(self._cache.pop(key))
            return None
        self._cache.move_to_end(key)
        return entry.token

    def _uncache(self, entry: _Cached | None) -> None:
        """The cache lets go of ``entry``'s token (calls that sent it still hold it)."""
        if entry is not None and self._held is not None:
            self._held.release(entry.token)

    async def _exchange(self, subject_token: str, scopes: tuple[str, ...]) -> tuple[str, float]:
        form = {
            "grant_type": GRANT_TYPE,
            "subject_token": subject_token,
            "subject_token_type": ACCESS_TOKEN_TYPE,
            "requested_token_type": ACCESS_TOKEN_TYPE,
            "audience": self.settings.audience,
            "resource": self.settings.audience,
        }
        if scopes:
            form["scope"] = " ".join(scopes)
        try:
            async with self._endpoint.client() as client:
                data = await self._endpoint.json(
                    client, form=form, auth=(self.settings.client_id, self.settings.client_secret)
                )
        except OutboundError as exc:
            raise CredentialsError(
                f"Exchanging the caller's token for an upstream token failed: {exc}. The call was not sent; "
                "the user may need to sign in again."
            ) from None
        token = data.get("access_token")
        token_type = str(data.get("token_type", "Bearer")).lower()
        # RFC 8693 §2.2.1: the "access_token" member may hold another kind of token (an ID token, a
        # SAML assertion); only an access token may go to the API as a bearer token.
        issued = data.get("issued_token_type", ACCESS_TOKEN_TYPE)
        if (
            not isinstance(token, str)
            or not token
            or len(token) > MAX_TOKEN_LENGTH
            or token_type not in ("bearer", "n_a")
            or issued != ACCESS_TOKEN_TYPE
        ):
            raise CredentialsError("The token-exchange endpoint answered without a usable bearer token.")
        lifetime = data.get("expires_in")
        if not isinstance(lifetime, int | float) or isinstance(lifetime, bool) or not math.isfinite(lifetime):
            return token, DEFAULT_LIFETIME
        return token, min(float(lifetime), MAX_LIFETIME)  # kept at least 1 s (token_for), at most a day
