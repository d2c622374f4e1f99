"""Call metrics, one small recorder interface with two backends: Prometheus and OpenTelemetry (OTLP).

Labels are bounded sets only: tool names and operations come from the catalogue (never from a
caller), outcomes and limiter kinds are fixed words, upstream statuses are three digits. With
``PROMETHEUS_MULTIPROC_DIR`` set (``--workers``), prometheus-client writes each worker's values to
files there and the supervisor's one scrape adds them up.
"""

from __future__ import annotations

import os
from typing import Any, Protocol

OUTCOMES = ("ok", "tool_error", "protocol_error", "limited", "cancelled")
LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)
PREFIX = "mcp_bridge_"


class Recorder(Protocol):
    def call_started(self, tool: str) -> None: ...
    def call_finished(self, tool: str, outcome: str, seconds: float) -> None: ...
    def upstream(self, operation: str, status: str, seconds: float) -> None: ...
    def rejected(self, scope: str, kind: str) -> None: ...
    def exchange_cache(self, result: str) -> None: ...


class PrometheusRecorder:
    """prometheus-client instruments in their own registry (or the multiprocess files)."""

    def __init__(self) -> None:
        from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

        self.multiprocess = bool(os.environ.get("PROMETHEUS_MULTIPROC_DIR"))
        # Multiprocess mode writes to files and is collected by the supervisor; a private
        # registry otherwise, so nothing else in the process shows up in the scrape.
        self.registry = None if self.multiprocess else CollectorRegistry(auto_describe=True)
        where: dict[str, Any] = {} if self.registry is None else {"registry": self.registry}
        self._calls = Counter(f"{PREFIX}tool_calls", "Tool calls by tool and outcome.", ["tool", "outcome"], **where)
        self._call_seconds = Histogram(
            f"{PREFIX}tool_call_duration_seconds", "Whole tool calls.", ["tool"], buckets=LATENCY_BUCKETS, **where
        )
        self._upstream = Counter(
            f"{PREFIX}upstream_requests", "Upstream requests by operation and status.", ["operation", "status"], **where
        )
        self._upstream_seconds = Histogram(
            f"{PREFIX}upstream_request_duration_seconds",
            "Upstream requests (retries included).",
            ["operation"],
            buckets=LATENCY_BUCKETS,
            **where,
        )
        gauge: dict[str, Any] = {"multiprocess_mode": "livesum"} if self.multiprocess else {}
        self._in_flight = Gauge(f"{PREFIX}tool_calls_in_flight", "Tool calls running now.", **gauge, **where)
        self._rejected = Counter(f"{PREFIX}limiter_rejections", "Calls refused by a limit.", ["scope", "kind"], **where)
        self._exchange = Counter(
            f"{PREFIX}token_exchange_cache", "Per-user token look-ups: hit or miss (exchanged).", ["result"], **where
        )

    def call_started(self, tool: str) -> None:
        self._in_flight.inc()

    def call_finished(self, tool: str, outcome: str, seconds: float) -> None:
        self._in_flight.dec()
        self._calls.labels(tool, outcome).inc()
        self._call_seconds.labels(tool).observe(seconds)

    def upstream(self, operation: str, status: str, seconds: float) -> None:
        self._upstream.labels(operation, status).inc()
        self._upstream_seconds.labels(operation).observe(seconds)

    def rejected(self, scope: str, kind: str) -> None:
        self._rejected.labels(scope, kind).inc()

    def exchange_cache(self, result: str) -> None:
        self._exchange.labels(result).inc()

    def exposition(self) -> tuple[bytes, str]:
        """The scrape: Prometheus text format, and its content type."""
        from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
        from prometheus_client.multiprocess import MultiProcessCollector

        registry = self.registry
        if registry is None:
            registry = CollectorRegistry()
            MultiProcessCollector(registry)  # type: ignore[no-untyped-call]
        return generate_latest(registry), CONTENT_TYPE_LATEST


class OtelRecorder:
    """The same figures as OpenTelemetry instruments, exported by the meter provider (OTLP)."""

    def __init__(self, meter_provider: Any) -> None:
        meter = meter_provider.get_meter("mcp_bridge")
        self._calls = meter.create_counter(f"{PREFIX}tool_calls", description="Tool calls by tool and outcome.")
        self._call_seconds = meter.create_histogram(f"{PREFIX}tool_call_duration", unit="s")
        self._upstream = meter.create_counter(f"{PREFIX}upstream_requests")
        self._upstream_seconds = meter.create_histogram(f"{PREFIX}upstream_request_duration", unit="s")
        self._in_flight = meter.create_up_down_counter(f"{PREFIX}tool_calls_in_flight")
        self._rejected = meter.create_counter(f"{PREFIX}limiter_rejections")
        self._exchange = meter.create_counter(f"{PREFIX}token_exchange_cache")

    def call_started(self, tool: str) -> None:
        self._in_flight.add(1)

    def call_finished(self, tool: str, outcome: str, seconds: float) -> None:
        self._in_flight.add(-1)
        self._calls.add(1, {"tool": tool, "outcome": outcome})
        self._call_seconds.record(seconds, {"tool": tool})

    def upstream(self, operation: str, status: str, seconds: float) -> None:
        self._upstream.add(1, {"operation": operation, "status": status})
        self._upstream_seconds.record(seconds, {"operation": operation})

    def rejected(self, scope: str, kind: str) -> None:
        self._rejected.add(1, {"scope": scope, "kind": kind})

    def exchange_cache(self, result: str) -> None:
        self._exchange.add(1, {"result": result})


class Recorders:
    """Several recorders as one."""

    def __init__(self, recorders: list[Recorder]) -> None:
        self.recorders = recorders

    def call_started(self, tool: str) -> None:
        for r in self.recorders:
            r.call_started(tool)

    def call_finished(self, tool: str, outcome: str, seconds: float) -> None:
        for r in self.recorders:
            r.call_finished(tool, outcome, seconds)

    def upstream(self, operation: str, status: str, seconds: float) -> None:
        for r in self.recorders:
            r.upstream(operation, status, seconds)

    def rejected(self, scope: str, kind: str) -> None:
        for r in self.recorders:
            r.rejected(scope, kind)

    def exchange_cache(self, result: str) -> None:
        for r in self.recorders:
            r.exchange_cache(result)
