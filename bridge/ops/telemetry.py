"""OpenTelemetry set-up (``--otel``), and the W3C trace context in and out.

Loaded only when a signal is on. The SDK reads every standard ``OTEL_*`` variable itself
(endpoints, headers, sampler, resource attributes, export interval); the bridge adds only the
default service name and the choice of exporter (``OTEL_*_EXPORTER=console`` prints instead).
The propagator is W3C TraceContext alone: the caller's ``baggage`` is not forwarded upstream,
because it may carry anything the caller put there.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

SERVICE_NAME = "mcp-bridge"
TRACER_NAME = "mcp_bridge"
_PROPAGATOR = TraceContextTextMapPropagator()
_FIELDS = ("traceparent", "tracestate")


@dataclass(slots=True)
class Telemetry:
    """The providers ``--otel`` made; ``shutdown`` flushes what is not exported yet."""

    tracer: trace.Tracer | None
    tracer_provider: Any = None
    meter_provider: Any = None

    def shutdown(self) -> None:
        for provider in (self.tracer_provider, self.meter_provider):
            if provider is not None:
                provider.shutdown()


def _resource() -> Any:
    from opentelemetry.sdk.resources import Resource

    # Resource.create reads OTEL_RESOURCE_ATTRIBUTES and OTEL_SERVICE_NAME; ours is the default.
    return Resource.create({"service.name": os.environ.get("OTEL_SERVICE_NAME") or SERVICE_NAME})


def start_telemetry(*, traces: bool, metrics: bool, span_processor: Any = None, metric_reader: Any = None) -> Telemetry:
    """Providers for the signals asked for, exporting over OTLP/HTTP (or to the processor/reader given, in tests)."""
    tracer = tracer_provider = meter_provider = None
    resource = _resource()
    if traces:
        from opentelemetry.sdk.trace import TracerProvider

        tracer_provider = TracerProvider(resource=resource)
        if span_processor is None:
            from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter

            if os.environ.get("OTEL_TRACES_EXPORTER", "").strip().lower() == "console":
                exporter: Any = ConsoleSpanExporter()
            else:
                from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

                exporter = OTLPSpanExporter()
            span_processor = BatchSpanProcessor(exporter)
        tracer_provider.add_span_processor(span_processor)
        tracer = tracer_provider.get_tracer(TRACER_NAME)
    if metrics:
        from opentelemetry.sdk.metrics import MeterProvider

        if metric_reader is None:
            from opentelemetry.sdk.metrics.export import ConsoleMetricExporter, PeriodicExportingMetricReader

            if os.environ.get("OTEL_METRICS_EXPORTER", "").strip().lower() == "console":
                metric_exporter: Any = ConsoleMetricExporter()
            else:
                from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter

                metric_exporter = OTLPMetricExporter()
            metric_reader = PeriodicExportingMetricReader(metric_exporter)
        meter_provider = MeterProvider(resource=resource, metric_readers=[metric_reader])
    return Telemetry(tracer, tracer_provider, meter_provider)


def caller_context(meta: Mapping[str, Any] | None, headers: Mapping[str, str] | None) -> otel_context.Context | None:
    """The caller's trace context: ``_meta``'s ``traceparent``/``tracestate``, else the HTTP request's headers."""
    for source in (meta, headers):
        if source is None:
            continue
        carrier = {name: value for name in _FIELDS if isinstance(value := source.get(name), str)}
        if "traceparent" in carrier:
            return _PROPAGATOR.extract(carrier)
    return None


def inject(headers: Any) -> None:
    """Write the current span's ``traceparent``/``tracestate`` into ``headers`` (httpx.Headers)."""
    carrier: dict[str, str] = {}
    _PROPAGATOR.inject(carrier)
    for name, value in carrier.items():
        headers[name] = value
