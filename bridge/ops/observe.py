"""One observer per ``tools/call``: its span (parent: the caller's W3C context) and its metrics.

It is a server middleware, installed only when traces or metrics are on. The call's
:class:`CallRecord` sits in a context variable for the parts below (the upstream wrapper and
the limit wrappers in ``bridge.ops.instrument``) to fill in: the operations called, the last
upstream status, whether a limit refused the call. Code-mode tools are one span per program,
with a child span per API call the program makes.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

import anyio
from mcp.shared.exceptions import MCPError

from bridge.ops.metrics import Recorder

PROGRAM_TOOLS = frozenset({"run_code", "run_query"})


@dataclass(slots=True)
class CallRecord:
    tool: str
    operations: list[str] = field(default_factory=list)
    status: int | None = None  # the last upstream answer's status
    limited: bool = False


CURRENT: ContextVar[CallRecord | None] = ContextVar("mcp_bridge_call", default=None)


def _is_error(result: Any) -> bool:
    if isinstance(result, Mapping):
        return result.get("isError") is True
    return getattr(result, "is_error", False) is True


def _headers(ctx: Any) -> Mapping[str, str] | None:
    request = getattr(ctx, "request", None)
    headers = getattr(request, "headers", None)
    return headers if isinstance(headers, Mapping) else None


class CallObserver:
    """Server middleware: times each ``tools/call``, classifies its outcome, spans it."""

    def __init__(self, *, tracer: Any = None, recorder: Recorder | None = None) -> None:
        self.tracer = tracer
        self.recorder = recorder

    async def __call__(self, ctx: Any, call_next: Any) -> Any:
        if ctx.method != "tools/call":
            return await call_next(ctx)
        name = ctx.params.get("name") if ctx.params else None
        tool = name[:128] if isinstance(name, str) else "?"
        record = CallRecord(tool)
        token = CURRENT.set(record)
        span = attached = None
        if self.tracer is not None:
            span, attached = self._start_span(ctx, tool)
        recorder = self.recorder
        if recorder is not None:
            recorder.call_started(tool)
        started = time.perf_counter()
        outcome = "protocol_error"
        try:
            result = await call_next(ctx)
            outcome = ("limited" if record.limited else "tool_error") if _is_error(result) else "ok"
            return result
        except anyio.get_cancelled_exc_class():
            outcome = "cancelled"
            raise
        except MCPError:
            raise
        finally:
            CURRENT.reset(token)
            seconds = time.perf_counter() - started
            if recorder is not None:
                # Only a registered tool's name is a label; an unknown one is a protocol error of "?".
                recorder.call_finished(tool if outcome != "protocol_error" else "?", outcome, seconds)
            if span is not None:
                self._end_span(span, attached, record, outcome)

    def _start_span(self, ctx: Any, tool: str) -> tuple[Any, Any]:
        from opentelemetry import context as otel_context
        from opentelemetry import trace

        from bridge.ops.telemetry import caller_context

        meta = ctx.params.get("_meta") if ctx.params else None
        parent = caller_context(meta if isinstance(meta, Mapping) else None, _headers(ctx))
        attributes: dict[str, Any] = {
            "mcp.method.name": "tools/call",
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": tool,
        }
        if ctx.request_id is not None:
            attributes["jsonrpc.request.id"] = str(ctx.request_id)
        kind = "program" if tool in PROGRAM_TOOLS else "tools/call"
        span = self.tracer.start_span(
            f"{kind} {tool}", context=parent, kind=trace.SpanKind.SERVER, attributes=attributes
        )
        return span, otel_context.attach(trace.set_span_in_context(span))

    @staticmethod
    def _end_span(span: Any, attached: Any, record: CallRecord, outcome: str) -> None:
        from opentelemetry import context as otel_context
        from opentelemetry.trace import StatusCode

        span.set_attribute("mcp_bridge.outcome", outcome)
        if len(record.operations) == 1:
            span.set_attribute("mcp_bridge.operation", record.operations[0])
        elif record.operations:  # a program's calls
            span.set_attribute("mcp_bridge.operations", record.operations[:32])
        if record.status is not None:
            span.set_attribute("http.response.status_code", record.status)
        if outcome != "ok":
            span.set_attribute("error.type", outcome)
            span.set_status(StatusCode.ERROR)
        span.end()
        otel_context.detach(attached)
