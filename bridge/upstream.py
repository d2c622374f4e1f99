"""The upstream API: one pooled httpx client per server, bounded in time and in bytes.

Every call has httpx connect/read/write/pool timeouts *and* an overall deadline
(``anyio.fail_after``) covering redirects and the whole body read, because httpx timeouts are
per operation (a server dripping one byte at a time never trips them).

Bodies are streamed and capped on *decoded* bytes. ``Accept-Encoding`` is pinned to
``gzip, deflate`` (httpx's own default when brotli/zstandard are not installed), and the bridge
decompresses the raw stream itself with ``zlib``'s ``max_length``, so a compression bomb never
expands past the cap in memory. A server that sends another encoding anyway is decoded by httpx
with the cap counted on ``aiter_bytes()``. A 2xx/3xx body over the cap raises
:class:`ResponseTooLarge`; a 4xx/5xx body is cut at ``max_error_body_bytes`` (only an excerpt is
shown to the model anyway).

Redirects are never followed by httpx. The bridge follows a redirect itself only when the target
has the base URL's origin and stays under its base path (at most ``max_redirects`` hops);
otherwise the call fails with a tool error naming the other origin.

Nothing from the MCP client's request is forwarded: requests are built from the tool's binding,
arguments and the bridge's own credentials; the client keeps no cookies between calls.
"""

from __future__ import annotations

import http
import http.cookiejar
import logging
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass, replace
from importlib import metadata

import anyio
import httpx

from bridge.errors import ResponseTooLarge, UnsafeRequestError, UpstreamError, UpstreamTimeout
from bridge.request import PreparedRequest, origin_of

__all__ = [
    "ACCEPT_ENCODING",
    "DEFAULT_CONNECT_TIMEOUT",
    "DEFAULT_DEADLINE",
    "DEFAULT_MAX_CONNECTIONS",
    "DEFAULT_MAX_ERROR_BODY_BYTES",
    "DEFAULT_MAX_KEEPALIVE_CONNECTIONS",
    "DEFAULT_MAX_REDIRECTS",
    "DEFAULT_MAX_RESPONSE_BYTES",
    "DEFAULT_POOL_TIMEOUT",
    "DEFAULT_READ_TIMEOUT",
    "DEFAULT_WRITE_TIMEOUT",
    "USER_AGENT",
    "HttpSettings",
    "Upstream",
    "UpstreamResponse",
]

logger = logging.getLogger(__name__)

DEFAULT_CONNECT_TIMEOUT = 10.0
DEFAULT_READ_TIMEOUT = 30.0
DEFAULT_WRITE_TIMEOUT = 30.0
DEFAULT_POOL_TIMEOUT = 10.0
DEFAULT_DEADLINE = 60.0
"""Overall seconds for one tool call's HTTP exchange, redirects and body included."""
DEFAULT_MAX_RESPONSE_BYTES = 1024 * 1024
"""Largest decoded success body (1 MiB, as APISIX's openapi-to-mcp)."""
DEFAULT_MAX_ERROR_BODY_BYTES = 16 * 1024
"""Decoded bytes read from a 4xx/5xx body before it is cut."""
DEFAULT_MAX_REDIRECTS = 5
DEFAULT_MAX_CONNECTIONS = 20
DEFAULT_MAX_KEEPALIVE_CONNECTIONS = 10

try:
    _VERSION = metadata.version("mcp-bridge")
except metadata.PackageNotFoundError:  # pragma: no cover - running from a source tree
    _VERSION = "0"
USER_AGENT = f"mcp-bridge/{_VERSION}"

ACCEPT_ENCODING = "gzip, deflate"
"""What httpx sends by default without brotli/zstandard installed; pinned so every compressed body
goes through the bounded zlib decoder even if those packages appear later."""

_REDIRECTS = frozenset({301, 302, 303, 307, 308})
_ZLIB_ENCODINGS = frozenset({"gzip", "x-gzip", "deflate"})


@dataclass(frozen=True, slots=True)
class HttpSettings:
    """Limits and timeouts of upstream calls (seconds and bytes)."""

    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT
    read_timeout: float = DEFAULT_READ_TIMEOUT
    write_timeout: float = DEFAULT_WRITE_TIMEOUT
    pool_timeout: float = DEFAULT_POOL_TIMEOUT
    deadline: float = DEFAULT_DEADLINE
    max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES
    max_error_body_bytes: int = DEFAULT_MAX_ERROR_BODY_BYTES
    max_redirects: int = DEFAULT_MAX_REDIRECTS
    """Same-origin redirects followed; 0 follows none."""
    max_connections: int = DEFAULT_MAX_CONNECTIONS
    max_keepalive_connections: int = DEFAULT_MAX_KEEPALIVE_CONNECTIONS
    trust_env: bool = True
    """Let httpx read proxy and CA settings (``HTTPS_PROXY``, ``SSL_CERT_FILE``…) from the environment."""

    def timeout(self) -> httpx.Timeout:
        return httpx.Timeout(
            connect=self.connect_timeout, read=self.read_timeout, write=self.write_timeout, pool=self.pool_timeout
        )


@dataclass(frozen=True, slots=True)
class UpstreamResponse:
    """A finished upstream exchange with its (capped, decoded) body."""

    status: int
    reason: str
    headers: httpx.Headers
    content: bytes
    url: httpx.URL
    operation: str
    truncated: bool = False
    """True when a 4xx/5xx body was cut at ``max_error_body_bytes``."""
    elapsed: float = 0.0

    @property
    def content_type(self) -> str:
        value: str = self.headers.get("content-type", "")
        return value


def _no_redact(text: str) -> str:
    return text


class _RefuseAll(http.cookiejar.DefaultCookiePolicy):
    """Never store a cookie: calls must not leak state into each other."""

    def set_ok(self, cookie: http.cookiejar.Cookie, request: object) -> bool:
        return False


class _RedactingFilter(logging.Filter):
    """Scrubs secrets out of httpx's own log lines (it logs full URLs, API keys in queries included)."""

    def __init__(self, redact: Callable[[str], str]) -> None:
        super().__init__()
        self._redact = redact

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except (TypeError, ValueError):
            return True
        redacted = self._redact(message)
        if redacted != message:
            record.msg, record.args = redacted, None
        return True


_HTTPX_LOGGERS = ("httpx", "httpcore")


class Upstream:
    """The upstream server at ``base_url``: one shared ``httpx.AsyncClient`` (pooled connections).

    ``transport`` replaces the network (tests use ``httpx.ASGITransport``). ``redact`` scrubs
    secrets out of error messages.
    """

    def __init__(
        self,
        base_url: httpx.URL | str,
        *,
        settings: HttpSettings | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        redact: Callable[[str], str] = _no_redact,
    ) -> None:
        self.base_url = httpx.URL(base_url)
        self.settings = settings or HttpSettings()
        self._redact = redact
        self._origin = origin_of(self.base_url)
        self._base_path = self.base_url.path.rstrip("/")
        self._client = httpx.AsyncClient(
            transport=transport,
            timeout=self.settings.timeout(),
            limits=httpx.Limits(
                max_connections=self.settings.max_connections,
                max_keepalive_connections=self.settings.max_keepalive_connections,
            ),
            follow_redirects=False,
            headers={"User-Agent": USER_AGENT, "Accept-Encoding": ACCEPT_ENCODING},
            cookies=http.cookiejar.CookieJar(policy=_RefuseAll()),
            trust_env=self.settings.trust_env,
        )
        self._log_filter = _RedactingFilter(redact) if redact is not _no_redact else None
        if self._log_filter is not None:
            for name in _HTTPX_LOGGERS:
                logging.getLogger(name).addFilter(self._log_filter)

    async def __aenter__(self) -> Upstream:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        if self._log_filter is not None:
            for name in _HTTPX_LOGGERS:
                logging.getLogger(name).removeFilter(self._log_filter)
        await self._client.aclose()

    def _origin_text(self, url: httpx.URL) -> str:
        scheme, host, port = origin_of(url)
        return self._redact(f"{scheme}://{host}:{port}")

    async def send(self, request: PreparedRequest) -> UpstreamResponse:
        """Send ``request``; return the response with its capped body.

        Raises:
            UpstreamTimeout: a timeout or the overall deadline was reached.
            ResponseTooLarge: a success body exceeded ``max_response_bytes``.
            UnsafeRequestError: the request does not go to this upstream's origin.
            UpstreamError: connection failure, bad redirect or undecodable body.
        """
        op = request.operation
        started = time.monotonic()
        try:
            with anyio.fail_after(self.settings.deadline):
                response = await self._send_following(request)
        except TimeoutError:
            raise UpstreamTimeout(
                f"{op}: the API did not finish answering within {self.settings.deadline:g} s. "
                "Try again later, or ask for less data."
            ) from None
        except httpx.TimeoutException as exc:
            raise UpstreamTimeout(
                f"{op}: the API did not answer in time ({_timeout_kind(exc)}). Try again later."
            ) from None
        except httpx.ConnectError:
            raise UpstreamError(
                f"{op}: could not connect to the API at {self._origin_text(self.base_url)}. "
                "It may be down, or the configured base URL may be wrong."
            ) from None
        except httpx.DecodingError:
            raise UpstreamError(f"{op}: the API's response could not be decoded.") from None
        except httpx.HTTPError as exc:
            raise UpstreamError(
                f"{op}: the connection to the API failed ({type(exc).__name__}). Try again later."
            ) from None
        elapsed = time.monotonic() - started
        logger.debug("%s -> %d (%.0f ms, %d bytes)", op, response.status, elapsed * 1000, len(response.content))
        return replace(response, elapsed=elapsed)

    async def _send_following(self, prepared: PreparedRequest) -> UpstreamResponse:
        method, url = prepared.method, prepared.url
        headers = list(prepared.headers)
        content = prepared.content
        for hop in range(self.settings.max_redirects + 1):
            request = self._client.build_request(method, url, headers=headers, content=content)
            self._check_target(request.url, prepared.operation)
            if hop == 0 and request.url.raw_path != prepared.url.raw_path:
                raise UnsafeRequestError(
                    f"{prepared.operation}: the request URL changed before sending; nothing was sent."
                )
            response = await self._client.send(request, stream=True)
            try:
                location = response.headers.get("location")
                if response.status_code in _REDIRECTS and location is not None:
                    target = self._redirect_target(url, location, prepared.operation)
                    if hop == self.settings.max_redirects:
                        raise UpstreamError(
                            f"{prepared.operation}: the API redirected more than {self.settings.max_redirects} "
                            "times; mcp-bridge stopped following."
                        )
                    if response.status_code == 303 or (response.status_code in (301, 302) and method == "POST"):
                        method = "GET" if method != "HEAD" else method
                        content = None
                        headers = [(n, v) for n, v in headers if n.lower() not in ("content-type", "content-length")]
                    url = target
                    continue
                return await self._read(response, url, prepared.operation)
            finally:
                with anyio.CancelScope(shield=True):
                    await response.aclose()
        raise AssertionError("unreachable")  # pragma: no cover

    def _check_target(self, url: httpx.URL, op: str) -> None:
        if origin_of(url) != self._origin or url.userinfo:
            raise UnsafeRequestError(f"{op}: the request would leave the configured API origin; nothing was sent.")

    def _redirect_target(self, current: httpx.URL, location: str, op: str) -> httpx.URL:
        try:
            target = current.join(location).copy_with(fragment=None)
        except httpx.InvalidURL:
            raise UpstreamError(f"{op}: the API answered with an invalid redirect.") from None
        if origin_of(target) != self._origin or target.userinfo:
            raise UpstreamError(
                f"{op}: the API redirected to another origin ({self._origin_text(target)}); mcp-bridge does not "
                f"follow redirects away from {self._origin_text(self.base_url)}. Tell the user; the base URL may "
                "need to change."
            )
        path = target.path
        if self._base_path and not (path == self._base_path or path.startswith(self._base_path + "/")):
            raise UpstreamError(
                f"{op}: the API redirected outside its base path; mcp-bridge does not follow such redirects."
            )
        if self.settings.max_redirects == 0:
            raise UpstreamError(f"{op}: the API answered with a redirect, and following redirects is turned off.")
        return target

    async def _read(self, response: httpx.Response, url: httpx.URL, op: str) -> UpstreamResponse:
        success = response.status_code < 400
        limit = self.settings.max_response_bytes if success else self.settings.max_error_body_bytes
        encodings = [e.strip().lower() for e in response.headers.get("content-encoding", "").split(",") if e.strip()]
        if success and not encodings:
            declared = response.headers.get("content-length", "")
            if declared.isdigit() and int(declared) > limit:
                raise _too_large(op, limit)
        body = bytearray()
        truncated = False

        def take(chunk: bytes) -> bool:
            """Append ``chunk``; False once the limit is passed (success raises instead)."""
            nonlocal truncated
            room = limit - len(body)
            if len(chunk) > room:
                if success:
                    raise _too_large(op, limit)
                body.extend(chunk[:room])
                truncated = True
                return False
            body.extend(chunk)
            return True

        codings = [e for e in encodings if e != "identity"]
        if len(codings) <= 1 and all(e in _ZLIB_ENCODINGS for e in codings):
            decoder = _BoundedDecoder(codings[0]) if codings else None
            async for raw in response.aiter_raw():
                chunk = decoder.decode(raw, limit - len(body) + 1) if decoder else raw
                if not take(chunk):
                    break
        else:
            async for chunk in response.aiter_bytes():
                if not take(chunk):
                    break
        reason = response.reason_phrase or _phrase(response.status_code)
        return UpstreamResponse(
            status=response.status_code,
            reason=reason,
            headers=response.headers,
            content=bytes(body),
            url=url,
            operation=op,
            truncated=truncated,
        )


def _phrase(status: int) -> str:
    try:
        return http.HTTPStatus(status).phrase
    except ValueError:
        return ""


def _too_large(op: str, limit: int) -> ResponseTooLarge:
    return ResponseTooLarge(
        f"{op}: the API's response is larger than the {limit:,}-byte limit; mcp-bridge stopped reading it. "
        "Ask for less data (filters, smaller pages, fewer fields)."
    )


def _timeout_kind(exc: httpx.TimeoutException) -> str:
    return {
        httpx.ConnectTimeout: "connecting",
        httpx.ReadTimeout: "waiting for data",
        httpx.WriteTimeout: "sending the request",
        httpx.PoolTimeout: "waiting for a free connection",
    }.get(type(exc), "timeout")


class _BoundedDecoder:
    """zlib decoding that never produces more than it is asked for in one step."""

    def __init__(self, encoding: str) -> None:
        self._deflate = encoding == "deflate"
        self._first = True
        wbits = zlib.MAX_WBITS if self._deflate else zlib.MAX_WBITS | 16
        self._obj = zlib.decompressobj(wbits)

    def decode(self, data: bytes, max_length: int) -> bytes:
        try:
            if self._first and self._deflate and data:
                self._first = False
                try:
                    return self._step(data, max_length)
                except zlib.error:  # raw deflate without the zlib wrapper, as httpx tolerates
                    self._obj = zlib.decompressobj(-zlib.MAX_WBITS)
            return self._step(data, max_length)
        except zlib.error as exc:
            raise httpx.DecodingError(str(exc)) from None

    def _step(self, data: bytes, max_length: int) -> bytes:
        out = self._obj.decompress(data, max_length)
        # Output stops at max_length; the caller treats max_length as "over the limit".
        while self._obj.unconsumed_tail and len(out) < max_length:
            out += self._obj.decompress(self._obj.unconsumed_tail, max_length - len(out))
        return out
