"""Bounded calls to the URLs an operator configures: JWKS, token introspection, token exchange.

These URLs come from configuration only, never from a request or a tool argument. Every call has
the same bounds: https (plain http only on a loopback address), a connect/read deadline, a byte
cap on the answer, no redirects, no cookies, and a JSON object as the only acceptable answer.
Errors say which configured URL failed and how, never what was sent.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import anyio
import httpx

from bridge.tools.json_text import parse_json

DEFAULT_TIMEOUT = 5.0
DEFAULT_MAX_BYTES = 256 * 1024


class OutboundError(Exception):
    """A configured endpoint could not be used; the message names it, never a token."""


def is_loopback(host: str) -> bool:
    host = host.strip("[]").lower()
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _not_json(constant: str) -> Any:
    raise ValueError(f"{constant} is not JSON")  # NaN, Infinity: an expiry or a count must be finite


def check_config_url(url: str, what: str) -> httpx.URL:
    """``url`` parsed, or ``ValueError``: absolute https (http only on loopback), no credentials or fragment."""
    try:
        parsed = httpx.URL(url)
    except (httpx.InvalidURL, TypeError) as exc:
        raise ValueError(f"{what} is not a URL: {url!r}") from exc
    if parsed.scheme not in ("https", "http") or not parsed.host:
        raise ValueError(f"{what} must be an absolute https URL: {url!r}")
    if parsed.scheme == "http" and not is_loopback(parsed.host):
        raise ValueError(f"{what} must use https (plain http is allowed on loopback only): {url!r}")
    if parsed.userinfo or parsed.fragment:
        raise ValueError(f"{what} must not carry credentials or a fragment: {url!r}")
    return parsed


@dataclass(frozen=True, slots=True)
class Endpoint:
    """One configured endpoint and its bounds. ``transport`` replaces the network (tests)."""

    url: httpx.URL
    what: str  # "the JWKS URL", for messages
    timeout: float = DEFAULT_TIMEOUT
    max_bytes: int = DEFAULT_MAX_BYTES
    transport: httpx.AsyncBaseTransport | None = None

    @classmethod
    def configured(cls, url: str, what: str, **options: Any) -> Endpoint:
        return cls(check_config_url(url, what), what, **options)

    async def json(
        self,
        client: httpx.AsyncClient,
        *,
        form: Mapping[str, str] | None = None,
        auth: tuple[str, str] | None = None,
    ) -> dict[str, Any]:
        """GET (or POST ``form``) and return the JSON object answered with a 2xx status.

        ``timeout`` bounds the whole exchange, not each read: an endpoint that drips its answer a
        byte at a time would otherwise hold a request (and, for the JWKS, every request waiting on
        the refresh) for as long as it likes.
        """
        try:
            with anyio.fail_after(self.timeout):
                return await self._json(client, form, auth)
        except TimeoutError:
            raise OutboundError(f"{self.what} did not answer within {self.timeout:g} s") from None

    async def _json(
        self, client: httpx.AsyncClient, form: Mapping[str, str] | None, auth: tuple[str, str] | None
    ) -> dict[str, Any]:
        method = "POST" if form is not None else "GET"
        try:
            request = client.build_request(
                method,
                self.url,
                data=dict(form) if form is not None else None,
                # identity: the byte cap counts what is parsed, and no decoder can be bombed
                headers={"Accept": "application/json", "Accept-Encoding": "identity"},
            )
            response = await client.send(
                request,
                stream=True,
                follow_redirects=False,
                auth=httpx.BasicAuth(*auth) if auth is not None else None,
            )
        except httpx.TimeoutException:
            raise OutboundError(f"{self.what} did not answer within {self.timeout:g} s") from None
        except httpx.HTTPError as exc:
            raise OutboundError(f"{self.what} could not be reached ({type(exc).__name__})") from None
        try:
            body = bytearray()
            async for chunk in response.aiter_raw():
                body += chunk
                if len(body) > self.max_bytes:
                    raise OutboundError(f"{self.what} answered more than {self.max_bytes} bytes")
        except httpx.HTTPError as exc:
            raise OutboundError(f"{self.what} failed while answering ({type(exc).__name__})") from None
        finally:
            await response.aclose()
        status = response.status_code
        if status in (301, 302, 303, 307, 308):
            raise OutboundError(f"{self.what} answered with a redirect, which is not followed")
        try:
            data = parse_json(bytes(body), parse_constant=_not_json)
        except ValueError:
            data = None
        if not 200 <= status < 300:
            error = data.get("error") if isinstance(data, dict) else None
            # Shown whole or not at all (an error code is short): a cut could leave part of a secret.
            detail = f" ({error})" if isinstance(error, str) and len(error) <= 80 and error.isprintable() else ""
            raise OutboundError(f"{self.what} answered HTTP {status}{detail}")
        if not isinstance(data, dict):
            raise OutboundError(f"{self.what} did not answer with a JSON object")
        return data

    def client(self) -> httpx.AsyncClient:
        """A client with this endpoint's bounds (no redirects, no cookie state kept between uses)."""
        return httpx.AsyncClient(
            timeout=httpx.Timeout(self.timeout),
            follow_redirects=False,
            transport=self.transport,
            trust_env=False,
        )
