"""What ``serve`` adds for production (``OpsSettings``): telemetry, shared limits, health, drain.

Everything here is opt-in. Off, no module of ``bridge.ops`` beyond the settings and the drain
is imported, and nothing is added to a call's path (``bench/ops_overhead.py`` measures it).
"""

from __future__ import annotations

import dataclasses
import logging
import threading
from typing import Any

from mcp.server.lowlevel import Server

from bridge.calls.runtime import HttpRuntime
from bridge.ops.health import ASGIApp, HealthRoutes, Readiness, serve_metrics
from bridge.ops.settings import OpsSettings
from bridge.server.transports import HostOriginPolicy

logger = logging.getLogger("bridge")


class Operations:
    """The operations parts one serving process runs, made from its :class:`OpsSettings`."""

    def __init__(
        self, settings: OpsSettings, *, api: str, span_processor: Any = None, metric_reader: Any = None
    ) -> None:
        """``span_processor`` / ``metric_reader`` replace the OTLP exporters (tests use the SDK's in-memory ones)."""
        self.settings = settings
        self.readiness = Readiness()
        self.telemetry: Any = None
        self.recorder: Any = None
        self.prometheus: Any = None
        self.shared: Any = None
        if settings.traces or settings.otel_metrics:
            from bridge.ops.telemetry import start_telemetry

            self.telemetry = start_telemetry(
                traces=settings.traces,
                metrics=settings.otel_metrics,
                span_processor=span_processor,
                metric_reader=metric_reader,
            )
        recorders: list[Any] = []
        if settings.prometheus:
            from bridge.ops.metrics import PrometheusRecorder

            self.prometheus = PrometheusRecorder()
            recorders.append(self.prometheus)
        if self.telemetry is not None and self.telemetry.meter_provider is not None:
            from bridge.ops.metrics import OtelRecorder

            recorders.append(OtelRecorder(self.telemetry.meter_provider))
        if len(recorders) == 1:
            self.recorder = recorders[0]
        elif recorders:
            from bridge.ops.metrics import Recorders

            self.recorder = Recorders(recorders)
        if settings.limits_redis is not None:
            from bridge.ops.shared_limits import SharedLimits

            self.shared = SharedLimits(settings.limits_redis, api=api, fallback=settings.limits_redis_fallback)
            if settings.limits_redis_fallback != "local":
                self.readiness.add_check(self.shared.unreachable)

    @property
    def tracer(self) -> Any:
        return None if self.telemetry is None else self.telemetry.tracer

    def adopt(self, runtime: HttpRuntime) -> HttpRuntime:
        """``runtime`` with the shared and observed limits and wrappers in place (before tools are made)."""
        limits: Any = runtime.caller_limits
        if self.shared is not None:
            from bridge.ops.shared_wrap import SharedCallerLimits, share_upstream_limits

            share_upstream_limits(runtime.upstream, self.shared)
            if limits is not None:
                limits = SharedCallerLimits(self.shared, limits, rate=limits._rate.rate)
        if self.settings.observed:
            from bridge.ops.instrument import ObservedCallerLimits, observe_exchanger, observe_upstream

            observe_upstream(runtime.upstream, tracer=self.tracer, recorder=self.recorder)
            if limits is not None:
                limits = ObservedCallerLimits(limits, self.recorder)
            if runtime.exchanger is not None and self.recorder is not None:
                observe_exchanger(runtime.exchanger, self.recorder)
        if limits is runtime.caller_limits:
            return runtime
        return dataclasses.replace(runtime, caller_limits=limits)

    def install(self, server: Server) -> None:
        """The ``tools/call`` observer, first of the server's middleware."""
        if self.settings.observed:
            from bridge.ops.observe import CallObserver

            server.middleware.insert(0, CallObserver(tracer=self.tracer, recorder=self.recorder))

    def wrap(self, app: ASGIApp, guard: HostOriginPolicy) -> ASGIApp:
        """Health routes (and the metrics path, behind ``guard``) in front of ``app``; the session route inside."""
        settings = self.settings
        if settings.session_route is not None:
            from bridge.ops.session_route import SessionRoute

            app = SessionRoute(app, settings.session_route)
        metrics = self.prometheus.exposition if self.prometheus is not None and settings.metrics_path else None
        return HealthRoutes(app, self.readiness, metrics_path=settings.metrics_path, metrics=metrics, guard=guard)

    def start_metrics_listener(self, host: str, guard: HostOriginPolicy) -> None:
        """``--metrics-port``: Prometheus on its own port (a daemon thread, stopped with the process)."""
        if self.prometheus is None or self.settings.metrics_port is None or self.settings.worker_index is not None:
            return  # a worker's metrics are served by its supervisor
        from prometheus_client.multiprocess import MultiProcessCollector

        registry = self.prometheus.registry
        if registry is None:
            from prometheus_client import CollectorRegistry

            registry = CollectorRegistry()
            MultiProcessCollector(registry)  # type: ignore[no-untyped-call]
        serve_metrics(self.settings.metrics_port, host, registry, guard)
        logger.info("Prometheus metrics on http://%s:%d/metrics", host, self.settings.metrics_port)

    async def aclose(self) -> None:
        """Close the Redis pool (in the loop that used it), then what :meth:`close` closes."""
        if self.shared is not None:
            await self.shared.aclose()
        self.close()

    def close(self) -> None:
        if self.telemetry is not None:
            # Flushing may wait on the collector: not on the event loop, and at most a few seconds.
            worker = threading.Thread(target=self.telemetry.shutdown, daemon=True)
            worker.start()
            worker.join(5.0)
