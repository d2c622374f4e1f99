"""The upstream API: one pooled httpx client per server, bounded in time, bytes and concurrency.

Every call has httpx connect/read/write/pool timeouts *and* an overall deadline
(``anyio.fail_after``) covering the wait for a concurrency slot, every attempt, the waits between
retries, redirects and the whole body read, because httpx timeouts are per operation (a server
dripping one byte at a time never trips them).

Before anything is sent, :func:`~bridge.request.build.check_prepared` re-checks the request (origin,
base path, path template, header names and values). The call then takes a slot of the
:class:`~bridge.upstream.limits.ConcurrencyLimit` (``max_concurrent_calls``, waiting at most
``max_queue_wait``) and a token of the per-operation :class:`~bridge.upstream.limits.RateLimit` (off by
default); refusals are tool errors and nothing is sent.

Retries are off by default (``retries=0``); when on, :class:`~bridge.upstream.retry.RetryPolicy` decides
from the HTTP method and the failure (connect failures for every method; after sending only
GET/HEAD/OPTIONS/PUT/DELETE, on read errors and 429/502/503/504; never POST/PATCH), with
jittered exponential backoff and ``Retry-After`` honoured only within the deadline. For the same
reason a POST or PATCH cut off after it was sent never tells the model to try again: it may have been
carried out, so the error says to check with the API first.

Bodies are streamed and capped on *decoded* bytes (:mod:`bridge.upstream.response_body`): a success body
over ``max_response_bytes`` is refused, an error body is redacted, then cut at
``max_error_body_bytes``.

Redirects are never followed by httpx. The bridge follows a redirect itself (at most
``max_redirects`` hops) only when :func:`~bridge.upstream.redirects.redirect_target` admits it: same
origin, raw path under the base path segment by segment, no dot segment in any spelling;
otherwise the call fails with a tool error and nothing more is sent.

Nothing from the MCP client's request is forwarded: requests are built from the tool's binding,
arguments and the bridge's own credentials; the client keeps no cookies between calls. Log
records of httpx/httpcore and of every root handler present when the upstream is created pass
through ``redact`` (:mod:`bridge.secrets.log_redaction`).
"""

from __future__ import annotations

import functools
import http
import logging
import ssl
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace

import anyio
import httpx

from bridge.request.base_url import origin_of
from bridge.request.build import PreparedRequest, check_prepared
from bridge.secrets.log_redaction import LogRedaction
from bridge.tools.errors import UnsafeRequestError, UpstreamError, UpstreamTimeout
from bridge.upstream.http_settings import ACCEPT_ENCODING, USER_AGENT, HttpSettings
from bridge.upstream.limits import ConcurrencyLimit, RateLimit
from bridge.upstream.redirects import redirect_target
from bridge.upstream.response_body import read_capped
from bridge.upstream.retry import IDEMPOTENT_METHODS, parse_retry_after, phase_of
from bridge.upstream.stateless_client import StatelessClient

__all__ = ["SendWrapper", "Upstream", "UpstreamResponse"]

logger = logging.getLogger("bridge.upstream")

_REDIRECTS = frozenset({301, 302, 303, 307, 308})


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
    attempts: int = 1
    """Attempts made (more than 1 only with retries on)."""

    @property
    def content_type(self) -> str:
        value: str = self.headers.get("content-type", "")
        return value


Send = Callable[[PreparedRequest], Awaitable[UpstreamResponse]]
SendWrapper = Callable[[Send], Send]
"""What :meth:`Upstream.wrap_send` takes: the send it wraps, in; the send that runs instead, out."""


@dataclass(frozen=True, slots=True)
class _Retry:
    """An answer (429/502/503/504) that will be retried after ``wait`` seconds."""

    status: int
    wait: float


def _no_redact(text: str) -> str:
    return text


class _CallState:
    """Mutable facts about one call, for error messages."""

    __slots__ = ("attempts",)

    def __init__(self) -> None:
        self.attempts = 0

    def note(self) -> str:
        return f" ({self.attempts} attempts)" if self.attempts > 1 else ""


class Upstream:
    """The upstream server at ``base_url``: one shared ``httpx.AsyncClient`` (pooled connections).

    ``transport`` replaces the network (tests use ``httpx.ASGITransport``). ``redact`` scrubs
    secrets out of error messages, error bodies and logs. ``name`` is how messages name the API
    (default: the base URL's host). ``ssl_context`` carries a per-API CA bundle and the client
    certificate of a mutualTLS scheme (:mod:`bridge.secrets.tls`); None: httpx's default verification.
    """

    def __init__(
        self,
        base_url: httpx.URL | str,
        *,
        settings: HttpSettings | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        redact: Callable[[str], str] = _no_redact,
        name: str | None = None,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        self.base_url = httpx.URL(base_url)
        self.settings = settings or HttpSettings()
        self._redact = redact
        self.retry_sleep: Callable[[float], Awaitable[None]] = (
            anyio.sleep
        )  # the waits between attempts (tests record them)
        self._origin = origin_of(self.base_url)
        self.name = name or self.base_url.host
        self.limit = ConcurrencyLimit(
            self.settings.max_concurrent_calls,
            self.settings.max_queue_wait,
            max_waiting=self.settings.max_queued_calls,
            label=self.name,
        )
        self.rate_limit = RateLimit(self.settings.max_calls_per_second)
        self.retry_policy = self.settings.retry_policy()
        self._client = StatelessClient(
            transport=transport,
            timeout=self.settings.timeout(),
            limits=httpx.Limits(
                max_connections=self.settings.max_connections,
                max_keepalive_connections=self.settings.max_keepalive_connections,
            ),
            follow_redirects=False,
            headers={"User-Agent": USER_AGENT, "Accept-Encoding": ACCEPT_ENCODING},
            trust_env=self.settings.trust_env,
            verify=ssl_context if ssl_context is not None else True,
        )
        self._log_redaction = LogRedaction(redact) if redact is not _no_redact else None
        self._wrapped: Send | None = None

    def wrap_send(self, wrapper: SendWrapper) -> None:
        """Put ``wrapper`` around every later :meth:`send` (the last one added is the outermost).

        The one extension point for what runs around a request without being the call path's own
        business (limits shared across processes, telemetry): nothing replaces ``send`` on a live
        upstream, and with no wrapper the call pays one ``is None`` test."""
        self._wrapped = wrapper(self._send if self._wrapped is None else self._wrapped)

    def add_request_hook(self, hook: Callable[[httpx.Request], Awaitable[None]]) -> None:
        """Run ``hook`` on each HTTP request before it is sent (retries and redirect hops included).

        httpx's own event hooks (``AsyncClient.event_hooks``): e.g. trace-context headers."""
        self._client.event_hooks["request"].append(hook)

    async def __aenter__(self) -> Upstream:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        if self._log_redaction is not None:
            self._log_redaction.remove()
        await self._client.aclose()

    def _origin_text(self, url: httpx.URL) -> str:
        scheme, host, port = origin_of(url)
        return self._redact(f"{scheme}://{host}:{port}")

    async def send(self, request: PreparedRequest) -> UpstreamResponse:
        """Send ``request`` (through the wrappers of :meth:`wrap_send`); return the response with its capped body.

        Raises:
            UnsafeRequestError: the request failed the final check (wrong origin, path or header).
            TooManyConcurrentCalls: no concurrency slot within ``max_queue_wait``; nothing was sent.
            RateLimitExceeded: the operation's rate limit was reached; nothing was sent.
            UpstreamTimeout: a timeout or the overall deadline was reached.
            ResponseTooLarge: a success body exceeded ``max_response_bytes``.
            UpstreamError: connection failure, bad redirect or undecodable body.
        """
        if self._wrapped is not None:
            return await self._wrapped(request)
        return await self._send(request)

    async def _send(self, request: PreparedRequest) -> UpstreamResponse:
        op = request.operation
        check_prepared(request, self.base_url)
        self.rate_limit.take(op)
        started = time.monotonic()
        state = _CallState()
        try:
            with anyio.fail_after(self.settings.deadline):
                async with self.limit.slot():
                    response = await self._send_with_retries(request, started, state)
        except TimeoutError:
            later = "Try again later, or ask for less data." if _repeatable(request) else _MAY_HAVE_HAPPENED
            raise UpstreamTimeout(
                f"{op}: the API did not finish answering within {self.settings.deadline:g} s{state.note()}. {later}"
            ) from None
        except httpx.TimeoutException as exc:
            sent = not isinstance(exc, httpx.ConnectTimeout | httpx.PoolTimeout)
            later = _MAY_HAVE_HAPPENED if sent and not _repeatable(request) else "Try again later."
            raise UpstreamTimeout(
                f"{op}: the API did not answer in time ({_timeout_kind(exc)}){state.note()}. {later}"
            ) from None
        except httpx.ConnectError:
            raise UpstreamError(
                f"{op}: could not connect to the API at {self._origin_text(self.base_url)}{state.note()}. "
                "It may be down, or the configured base URL may be wrong."
            ) from None
        except httpx.DecodingError:
            raise UpstreamError(f"{op}: the API's response could not be decoded.") from None
        except httpx.HTTPError as exc:
            later = "Try again later." if _repeatable(request) else _MAY_HAVE_HAPPENED
            raise UpstreamError(
                f"{op}: the connection to the API failed ({type(exc).__name__}){state.note()}. {later}"
            ) from None
        elapsed = time.monotonic() - started
        logger.debug(
            "%s -> %d (%.0f ms, %d bytes, %d attempt(s))",
            op,
            response.status,
            elapsed * 1000,
            len(response.content),
            response.attempts,
        )
        return replace(response, elapsed=elapsed)

    # ------------------------------------------------------------------------------- attempts

    def _remaining(self, started: float) -> float:
        return self.settings.deadline - (time.monotonic() - started)

    async def _send_with_retries(self, request: PreparedRequest, started: float, state: _CallState) -> UpstreamResponse:
        policy = self.retry_policy
        method = request.method
        while True:
            state.attempts += 1
            attempt = state.attempts
            retry_wait = functools.partial(self._status_wait, method, attempt, started)
            try:
                outcome = await self._send_following(request, retry_wait)
            except httpx.HTTPError as exc:
                phase = phase_of(exc)
                if phase is None or not policy.retry_error(method, phase, attempt):
                    raise
                wait = policy.backoff(attempt)
                if not policy.fits(wait, self._remaining(started), self.settings.deadline):
                    raise
                logger.info(
                    "%s: attempt %d failed (%s, %s); retrying in %.2f s",
                    request.operation,
                    attempt,
                    type(exc).__name__,
                    phase.value,
                    wait,
                )
                await self.retry_sleep(wait)
                continue
            if isinstance(outcome, _Retry):
                logger.info(
                    "%s: attempt %d answered HTTP %d; retrying in %.2f s",
                    request.operation,
                    attempt,
                    outcome.status,
                    outcome.wait,
                )
                await self.retry_sleep(outcome.wait)
                continue
            return replace(outcome, attempts=attempt)

    def _status_wait(
        self, method: str, attempt: int, started: float, status: int, headers: httpx.Headers
    ) -> float | None:
        """Seconds to wait before retrying an answer with ``status``; None to keep the answer."""
        policy = self.retry_policy
        if not policy.retry_status(method, status, attempt):
            return None
        wait = policy.wait(attempt, parse_retry_after(headers.get("retry-after")))
        if not policy.fits(wait, self._remaining(started), self.settings.deadline):
            return None
        return wait

    async def _send_following(
        self, prepared: PreparedRequest, retry_wait: Callable[[int, httpx.Headers], float | None]
    ) -> UpstreamResponse | _Retry:
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
                wait = retry_wait(response.status_code, response.headers)
                if wait is not None:
                    return _Retry(status=response.status_code, wait=wait)
                return await self._read(response, url, prepared.operation)
            finally:
                with anyio.CancelScope(shield=True):
                    await response.aclose()
        raise AssertionError("unreachable")  # pragma: no cover

    def _check_target(self, url: httpx.URL, op: str) -> None:
        if origin_of(url) != self._origin or url.userinfo:
            raise UnsafeRequestError(f"{op}: the request would leave the configured API origin; nothing was sent.")

    def _redirect_target(self, current: httpx.URL, location: str, op: str) -> httpx.URL:
        target = redirect_target(current, location, base_url=self.base_url, op=op, redact=self._redact)
        if self.settings.max_redirects == 0:
            raise UpstreamError(f"{op}: the API answered with a redirect, and following redirects is turned off.")
        return target

    # ----------------------------------------------------------------------------------- body

    async def _read(self, response: httpx.Response, url: httpx.URL, op: str) -> UpstreamResponse:
        success = response.status_code < 400
        content, truncated = await read_capped(
            response,
            op,
            limit=self.settings.max_response_bytes if success else self.settings.max_error_body_bytes,
            redact=None if self._redact is _no_redact else self._redact,
        )
        reason = response.reason_phrase or _phrase(response.status_code)
        return UpstreamResponse(
            status=response.status_code,
            reason=reason,
            headers=response.headers,
            content=content,
            url=url,
            operation=op,
            truncated=truncated,
        )


def _phrase(status: int) -> str:
    try:
        return http.HTTPStatus(status).phrase
    except ValueError:
        return ""


# A write cut off after it was sent may have been carried out: the model must look before repeating it.
_MAY_HAVE_HAPPENED = (
    "The request may have reached the API and been carried out: check with the API (list or get the resource) "
    "before trying it again."
)


def _repeatable(request: PreparedRequest) -> bool:
    return request.method.upper() in IDEMPOTENT_METHODS


def _timeout_kind(exc: httpx.TimeoutException) -> str:
    return {
        httpx.ConnectTimeout: "connecting",
        httpx.ReadTimeout: "waiting for data",
        httpx.WriteTimeout: "sending the request",
        httpx.PoolTimeout: "waiting for a free connection",
    }.get(type(exc), "timeout")
