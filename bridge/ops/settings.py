"""What ``serve`` asks of the operations layer: one plain record, every field off by default."""

from __future__ import annotations

from dataclasses import dataclass

DEFAULT_DRAIN_TIMEOUT = 30.0  # seconds calls in flight may take to finish after SIGTERM
DEFAULT_LEASE_SECONDS = 15.0  # a shared-limit slot a dead worker held is free again after this


@dataclass(frozen=True, slots=True)
class OpsSettings:
    log_format: str = "text"  # "text" or "json"
    traces: bool = False  # --otel traces (or OTEL_TRACES_EXPORTER)
    otel_metrics: bool = False  # --otel metrics (or OTEL_METRICS_EXPORTER)
    metrics_port: int | None = None  # Prometheus on its own listener
    metrics_path: str | None = None  # Prometheus on the MCP port
    drain_timeout: float = DEFAULT_DRAIN_TIMEOUT
    workers: int = 1
    worker_index: int | None = None  # set by the supervisor in each worker it starts
    session_route: str | None = None  # prefix of this worker's session ids ("w0."), for the load balancer
    limits_redis: str | None = None  # redis://... : limits shared by every process
    limits_redis_fallback: str = "fail"  # "fail" (tool error, /readyz 503) or "local" (per-process limits)

    @property
    def prometheus(self) -> bool:
        return self.metrics_port is not None or self.metrics_path is not None

    @property
    def observed(self) -> bool:
        """Whether tool calls are observed at all (traces or metrics); off, no call pays anything."""
        return self.traces or self.otel_metrics or self.prometheus
