"""Observers of the call path, installed only when telemetry is on, through each part's own hook.

Nothing here is in the call path when it is off. When it is on: a wrapper around the upstream's
send (:meth:`~bridge.upstream.client.Upstream.wrap_send`) records and spans each request, an
httpx request event hook (:meth:`~bridge.upstream.client.Upstream.add_request_hook`) adds the
trace context, the per-user limits are wrapped by :class:`ObservedCallerLimits` (which has their
one method), and the token exchanger reports cache hits and misses to an observer
(:meth:`~bridge.identity.token_exchange.TokenExchanger.observe`). No attribute of a live object
is replaced. Cost of the hooks (Python function calls per ``Upstream.send``, counted with
``sys.setprofile`` against an httpx ``MockTransport``): 334 -> 335 with telemetry off, 352 -> 353
with it on (the one ``wrap_send`` indirection); C calls unchanged (281 and 293).
"""

from __future__ import annotations

import functools
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import httpx

from bridge.ops.metrics import Recorder
from bridge.ops.observe import CURRENT
from bridge.tools.errors import RateLimitExceeded, ToolError, TooManyConcurrentCalls

LIMIT_ERRORS = (TooManyConcurrentCalls, RateLimitExceeded)


def limit_kind(exc: BaseException) -> str:
    return "rate" if isinstance(exc, RateLimitExceeded) else "concurrency"


def note_limited(scope: str, kind: str, recorder: Recorder | None) -> None:
    """A limit refused the current call: its outcome is ``limited``."""
    record = CURRENT.get()
    if record is not None:
        record.limited = True
    if recorder is not None:
        recorder.rejected(scope, kind)


async def _add_trace_context(request: httpx.Request) -> None:
    """httpx request hook: the current span's ``traceparent``/``tracestate`` on the request."""
    from bridge.ops.telemetry import inject

    inject(request.headers)


def observe_upstream(upstream: Any, *, tracer: Any = None, recorder: Recorder | None = None) -> None:
    """Span, time and count every request ``upstream`` sends (retries inside one span)."""

    def observed(inner: Callable[[Any], Awaitable[Any]]) -> Callable[[Any], Awaitable[Any]]:
        return functools.partial(send, inner)

    async def send(inner: Callable[[Any], Awaitable[Any]], request: Any) -> Any:
        operation = request.operation
        record = CURRENT.get()
        if record is not None:
            record.operations.append(operation)
        span = attached = None
        if tracer is not None:
            from opentelemetry import context as otel_context
            from opentelemetry import trace

            span = tracer.start_span(
                operation,
                kind=trace.SpanKind.CLIENT,
                attributes={"http.request.method": request.method, "mcp_bridge.operation": operation},
            )
            attached = otel_context.attach(trace.set_span_in_context(span))
        started = time.perf_counter()
        status = "error"
        try:
            response = await inner(request)
            status = str(response.status)
            if record is not None:
                record.status = response.status
            return response
        except LIMIT_ERRORS as exc:
            status = "limited"
            note_limited("api", limit_kind(exc), recorder)
            raise
        except ToolError as exc:
            status = type(exc).__name__
            raise
        finally:
            if recorder is not None and status != "limited":
                recorder.upstream(operation, status, time.perf_counter() - started)
            if span is not None and attached is not None:
                from opentelemetry import context as otel_context
                from opentelemetry.trace import StatusCode

                if status.isdigit():
                    span.set_attribute("http.response.status_code", int(status))
                if not status.isdigit() or int(status) >= 500:
                    span.set_status(StatusCode.ERROR)
                    span.set_attribute("error.type", status)
                span.end()
                otel_context.detach(attached)

    upstream.wrap_send(observed)
    if tracer is not None:
        upstream.add_request_hook(_add_trace_context)


class ObservedCallerLimits:
    """Per-user limits that count their refusals (``scope=user``)."""

    def __init__(self, inner: Any, recorder: Recorder | None) -> None:
        self.inner = inner
        self.recorder = recorder

    def in_flight(self, caller: str) -> int:
        return int(self.inner.in_flight(caller))

    @asynccontextmanager
    async def slot(self, caller: str) -> AsyncIterator[None]:
        try:
            cm = self.inner.slot(caller)
            await cm.__aenter__()
        except LIMIT_ERRORS as exc:
            note_limited("user", limit_kind(exc), self.recorder)
            raise
        try:
            yield
        except BaseException as exc:
            if not await cm.__aexit__(type(exc), exc, exc.__traceback__):
                raise
        else:
            await cm.__aexit__(None, None, None)


def observe_exchanger(exchanger: Any, recorder: Recorder) -> None:
    """Count per-user token look-ups answered from the cache (hit) or by an exchange (miss)."""
    exchanger.observe(recorder.exchange_cache)
