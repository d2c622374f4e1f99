"""Wrappers that observe the call path from outside, installed only when telemetry is on.

Nothing here is in the call path when it is off: the upstream's ``send``, its httpx transport,
the per-user limits and the token exchanger are replaced on the instance by wrappers that
record, span and propagate, and call the original.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from contextvars import ContextVar
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


class _TraceTransport(httpx.AsyncBaseTransport):
    """Adds the current span's ``traceparent``/``tracestate`` to each request the upstream client sends."""

    def __init__(self, inner: httpx.AsyncBaseTransport) -> None:
        self.inner = inner

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        from bridge.ops.telemetry import inject

        inject(request.headers)
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self.inner.aclose()


def observe_upstream(upstream: Any, *, tracer: Any = None, recorder: Recorder | None = None) -> None:
    """Span, time and count every request ``upstream`` sends (retries inside one span)."""
    inner: Callable[[Any], Awaitable[Any]] = upstream.send

    async def send(request: Any) -> Any:
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

    upstream.send = send
    if tracer is not None:
        client = upstream._client
        client._transport = _TraceTransport(client._transport)


class ObservedCallerLimits:
    """Per-user limits that count their refusals (``scope=user``)."""

    def __init__(self, inner: Any, recorder: Recorder | None) -> None:
        self.inner = inner
        self.recorder = recorder

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

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


_EXCHANGED: ContextVar[list[bool] | None] = ContextVar("mcp_bridge_exchanged", default=None)


def observe_exchanger(exchanger: Any, recorder: Recorder) -> None:
    """Count per-user token look-ups answered from the cache (hit) or by an exchange (miss)."""
    token_for = exchanger.token_for
    exchange = exchanger._exchange

    async def counted_exchange(*args: Any) -> Any:
        flag = _EXCHANGED.get()
        if flag is not None:
            flag[0] = True
        return await exchange(*args)

    async def counted_token_for(*args: Any) -> Any:
        flag = [False]
        reset = _EXCHANGED.set(flag)
        try:
            return await token_for(*args)
        finally:
            _EXCHANGED.reset(reset)
            recorder.exchange_cache("miss" if flag[0] else "hit")

    exchanger._exchange = counted_exchange
    exchanger.token_for = counted_token_for
