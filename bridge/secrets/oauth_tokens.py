"""OAuth2 access tokens of the client-credentials grant: fetched from the token URL, cached, refreshed.

One token per scheme and set of scopes, fetched under a lock so a burst of calls costs one request.
A token is kept until ``expiry_margin`` seconds before its ``expires_in`` (:data:`DEFAULT_TOKEN_LIFETIME`
when the endpoint sends none) and dropped when the API answers 401. The token request has its own
deadline and byte cap and follows no redirect; errors name environment variables, never values.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from urllib.parse import quote_plus, urlencode

import anyio
import httpx

from bridge.contract.catalogue import SecurityScheme
from bridge.secrets.header_values import HEADER_SAFE, basic_authorization
from bridge.secrets.held import HeldTokens
from bridge.tools.errors import CredentialsError
from bridge.tools.json_text import parse_json

__all__ = [
    "DEFAULT_TOKEN_EXPIRY_MARGIN",
    "DEFAULT_TOKEN_LIFETIME",
    "DEFAULT_TOKEN_RESPONSE_BYTES",
    "DEFAULT_TOKEN_TIMEOUT",
    "ClientCredentialsTokens",
]

# Credentials' logger: operators filter credential logging under one name.
logger = logging.getLogger("bridge.credentials")

DEFAULT_TOKEN_EXPIRY_MARGIN = 30.0
"""Seconds before ``expires_in`` at which a cached OAuth2 token is refreshed."""
DEFAULT_TOKEN_LIFETIME = 300.0
"""Seconds a token is cached when the token endpoint sends no ``expires_in``."""
DEFAULT_TOKEN_TIMEOUT = 30.0
"""Overall deadline, in seconds, of one token request."""
DEFAULT_TOKEN_RESPONSE_BYTES = 64 * 1024
"""Largest token-endpoint answer read."""


@dataclass(frozen=True, slots=True)
class ClientSecret:
    """The client of one scheme: its id and secret, and the environment variables they came from."""

    client_id: str
    secret: str
    id_var: str | None
    secret_var: str | None


@dataclass(slots=True)
class _Token:
    value: str
    expires_at: float


@dataclass(slots=True)
class _TokenSlot:
    lock: anyio.Lock = field(default_factory=anyio.Lock)
    token: _Token | None = None


class ClientCredentialsTokens:
    """The tokens of one API's client-credentials schemes.

    ``held`` redacts each cached token while it is cached, and while every call it was handed to
    runs (:mod:`bridge.secrets.held`); ``redact`` cleans the token endpoint's error code before it
    is quoted. ``base_url`` resolves a relative
    token URL; ``transport`` and ``clock`` exist for tests.
    """

    def __init__(
        self,
        *,
        held: HeldTokens,
        redact: Callable[[str], str],
        base_url: httpx.URL | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        clock: Callable[[], float] = time.monotonic,
        token_timeout: float = DEFAULT_TOKEN_TIMEOUT,
        expiry_margin: float = DEFAULT_TOKEN_EXPIRY_MARGIN,
        user_agent: str | None = None,
    ) -> None:
        self._held = held
        self._redact = redact
        self._base_url = base_url
        self._transport = transport
        self._clock = clock
        self._token_timeout = token_timeout
        self._margin = expiry_margin
        self._user_agent = user_agent
        self._client: httpx.AsyncClient | None = None
        self._slots: dict[tuple[str, tuple[str, ...]], _TokenSlot] = {}

    async def token(self, name: str, scheme: SecurityScheme, scopes: Sequence[str], client: ClientSecret) -> str:
        """A current access token for scheme ``name`` and ``scopes``, fetched when none is cached."""
        key = (name, tuple(sorted(set(scopes))))
        slot = self._slots.get(key)
        if slot is None:
            slot = self._slots[key] = _TokenSlot()
        async with slot.lock:
            token = slot.token
            if token is None or self._clock() >= token.expires_at:
                fresh = await self._fetch(name, scheme, key[1], client)
                # Held by the cache before it is ever sent (a new token rebuilds the index: off the loop).
                await anyio.to_thread.run_sync(self._held.hold, fresh.value)
                self._drop(slot)
                slot.token = token = fresh
            self._held.use(token.value)  # and by this call, for as long as it runs
            return token.value

    def invalidate(self, schemes: Sequence[str]) -> None:
        """Forget the cached tokens of ``schemes``."""
        for key, slot in self._slots.items():
            if key[0] in schemes:
                self._drop(slot)

    def _drop(self, slot: _TokenSlot) -> None:
        """The cache lets go of ``slot``'s token (calls that sent it still hold it)."""
        if slot.token is not None:
            self._held.release(slot.token.value)
            slot.token = None

    async def _fetch(self, name: str, scheme: SecurityScheme, scopes: tuple[str, ...], client: ClientSecret) -> _Token:
        assert scheme.token_url is not None
        what = f'an OAuth2 access token for "{name}"'
        url = self._token_url(scheme.token_url, what)
        form = {"grant_type": "client_credentials"}
        if scopes:
            form["scope"] = " ".join(scopes)
        headers = {
            "Authorization": basic_authorization(quote_plus(client.client_id), quote_plus(client.secret)),
            "Content-Type": "application/x-www-form-urlencoded",
            "Accept": "application/json",
        }
        if self._user_agent:
            headers["User-Agent"] = self._user_agent
        started = self._clock()
        try:
            with anyio.fail_after(self._token_timeout):
                request = self._http().build_request("POST", url, headers=headers, content=urlencode(form).encode())
                response = await self._http().send(request, stream=True)
                try:
                    body = await _read_limited(response, DEFAULT_TOKEN_RESPONSE_BYTES)
                finally:
                    with anyio.CancelScope(shield=True):
                        await response.aclose()
        except TimeoutError:
            raise CredentialsError(f"Could not get {what}: the token endpoint did not answer in time.") from None
        except httpx.HTTPError as exc:
            raise CredentialsError(
                f"Could not get {what}: the token endpoint could not be reached ({type(exc).__name__})."
            ) from None
        payload = _json_object(body)
        if response.status_code != 200:
            code = payload.get("error") if payload else None
            detail = f" ({self._redact(code)})" if isinstance(code, str) and len(code) < 100 else ""
            raise CredentialsError(
                f"Could not get {what}: the token endpoint answered HTTP {response.status_code}{detail}. "
                f"The user must check {client.id_var} and {client.secret_var}."
            )
        token = payload.get("access_token") if payload else None
        if not isinstance(token, str) or not HEADER_SAFE.fullmatch(token):
            raise CredentialsError(f"Could not get {what}: the token endpoint's answer has no usable access_token.")
        expires_in = payload.get("expires_in") if payload else None
        lifetime = (
            float(expires_in) if isinstance(expires_in, int | float) and not isinstance(expires_in, bool) else None
        )
        if lifetime is None or lifetime <= 0:
            lifetime = DEFAULT_TOKEN_LIFETIME
        keep = lifetime - self._margin if lifetime > 2 * self._margin else lifetime / 2
        logger.debug("Fetched an OAuth2 token for %s, cached for %.0f s", name, keep)
        return _Token(token, started + keep)

    def _token_url(self, token_url: str, what: str) -> httpx.URL:
        url = httpx.URL(token_url)
        if url.is_relative_url:
            if self._base_url is None:
                raise CredentialsError(f"Could not get {what}: the token URL is relative and no base URL is known.")
            url = self._base_url.join(token_url)
        if url.scheme not in ("http", "https") or not url.host:
            raise CredentialsError(f"Could not get {what}: the token URL is not an http(s) URL.")
        return url

    def _http(self) -> httpx.AsyncClient:
        if self._client is None:
            self._client = httpx.AsyncClient(
                transport=self._transport,
                follow_redirects=False,
                timeout=httpx.Timeout(self._token_timeout),
            )
        return self._client

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None


def _json_object(body: bytes) -> dict[str, object] | None:
    try:
        data = parse_json(body)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


async def _read_limited(response: httpx.Response, limit: int) -> bytes:
    chunks = bytearray()
    async for chunk in response.aiter_bytes():
        chunks += chunk
        if len(chunks) > limit:
            raise CredentialsError("The token endpoint's answer is too large.")
    return bytes(chunks)
