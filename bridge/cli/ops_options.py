"""``serve``'s operations options (logs, telemetry, drain, workers, shared limits) and its
``MCP_BRIDGE_<OPTION>`` environment variables."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any, TypeVar

import click

from bridge.cli.extras import installed, require
from bridge.ops.settings import DEFAULT_DRAIN_TIMEOUT, OpsSettings

ENV_PREFIX = "MCP_BRIDGE_"
OTEL_SIGNALS = ("traces", "metrics")
OTEL_MODULES = ("opentelemetry.sdk", "opentelemetry.exporter.otlp.proto.http")  # the `otel` extra
OPS_PARAMS = (
    "log_format",
    "otel",
    "metrics_port",
    "metrics_path",
    "drain_timeout",
    "workers",
    "worker_index",
    "session_route",
    "limits_redis",
    "limits_redis_fallback",
)

F = TypeVar("F", bound=Callable[..., Any])


def _signals(value: str | None) -> frozenset[str]:
    names = frozenset(item.strip() for item in (value or "").split(",") if item.strip())
    unknown = sorted(names - set(OTEL_SIGNALS))
    if unknown:
        raise click.UsageError(f"--otel: unknown signal {unknown[0]!r} (choose from {', '.join(OTEL_SIGNALS)})")
    return names


def ops_options(command: F) -> F:
    """Add the operations options to ``command`` (the last ones listed in ``--help``)."""
    options = [
        click.option(
            "--log-format",
            type=click.Choice(["text", "json"]),
            default="text",
            show_default=True,
            help="Log lines as text, or one JSON object a line (the audit line's fields as keys).",
        ),
        click.option(
            "--otel",
            metavar="SIGNALS",
            help="OpenTelemetry over OTLP, configured by the OTEL_* variables: traces, metrics or "
            "traces,metrics [default: off, unless OTEL_TRACES_EXPORTER/OTEL_METRICS_EXPORTER say otherwise].",
        ),
        click.option(
            "--metrics-port",
            type=click.IntRange(0, 65535),
            default=None,
            help="HTTP: serve Prometheus metrics on this port of --host [default: off].",
        ),
        click.option(
            "--metrics-path", metavar="PATH", help="HTTP: serve Prometheus metrics at this path of the MCP port."
        ),
        click.option(
            "--drain-timeout",
            type=click.FloatRange(0),
            default=DEFAULT_DRAIN_TIMEOUT,
            show_default=True,
            help="HTTP: after SIGTERM, seconds calls in flight may take to finish.",
        ),
        click.option(
            "--workers",
            type=click.IntRange(1, 64),
            default=1,
            show_default=True,
            help="HTTP: worker processes; worker i listens on --port + i (see docs/deployment.md).",
        ),
        click.option("--worker-index", type=click.IntRange(0), default=None, hidden=True),
        click.option(
            "--session-route",
            metavar="PREFIX",
            help="HTTP: start this process's session ids with PREFIX, for a load balancer to pin sessions "
            "[default: w<i>. for worker i of --workers, else none].",
        ),
        click.option(
            "--limits-redis",
            metavar="URL",
            help="Keep the call limits in Redis (redis://HOST:PORT/DB), shared by every process "
            "[default: per process].",
        ),
        click.option(
            "--limits-redis-fallback",
            type=click.Choice(["fail", "local"]),
            default="fail",
            show_default=True,
            help="Redis unreachable: calls get a tool error and /readyz fails, or (local) per-process limits apply.",
        ),
    ]
    for option in reversed(options):
        command = option(command)
    return command


def ops_settings(values: dict[str, Any], *, transport: str) -> OpsSettings:
    """The :class:`OpsSettings` of the parsed values (taken out of ``values``)."""
    found = {name: values.pop(name) for name in OPS_PARAMS}
    signals = _signals(found["otel"])
    environ = os.environ
    exporters = ("otlp", "console")
    traces = "traces" in signals or environ.get("OTEL_TRACES_EXPORTER", "").strip().lower() in exporters
    metrics = "metrics" in signals or environ.get("OTEL_METRICS_EXPORTER", "").strip().lower() in exporters
    if environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        traces = metrics = False
    if signals and (traces or metrics):
        require(*OTEL_MODULES)  # --otel asked for it: without the extra, one line and stop
    elif (traces or metrics) and not all(installed(m) for m in OTEL_MODULES):
        # Only OTEL_* variables (Kubernetes and operators set them for every pod): not a request.
        click.echo(
            "note: OTEL_* variables ask for telemetry, but the 'otel' extra is not installed: none is sent", err=True
        )
        traces = metrics = False
    if found["metrics_port"] is not None or found["metrics_path"] is not None:
        require("prometheus_client")
    if found["limits_redis"] is not None:
        require("redis")
    workers = found["workers"]
    if transport != "http":
        for name, flag in (("metrics_port", "--metrics-port"), ("metrics_path", "--metrics-path")):
            if found[name] is not None:
                raise click.UsageError(f"{flag} needs --transport http")
        if workers > 1:
            raise click.UsageError("--workers needs --transport http")
    path = found["metrics_path"]
    if path is not None and (not path.startswith("/") or path in ("/mcp", "/healthz", "/readyz")):
        raise click.UsageError(f"--metrics-path: {path!r} must start with / and not be the MCP or health path")
    route = found["session_route"]
    if route is None and found["worker_index"] is not None:
        route = f"w{found['worker_index']}."
    if route is not None and (not route or not all(0x21 <= ord(c) <= 0x7E for c in route)):
        raise click.UsageError("--session-route: visible ASCII characters only")
    return OpsSettings(
        log_format=found["log_format"],
        traces=traces,
        otel_metrics=metrics,
        metrics_port=found["metrics_port"],
        metrics_path=path,
        drain_timeout=found["drain_timeout"],
        workers=workers,
        worker_index=found["worker_index"],
        session_route=route,
        limits_redis=found["limits_redis"],
        limits_redis_fallback=found["limits_redis_fallback"],
    )


def with_env_vars(command: click.Command) -> click.Command:
    """Let every parameter of ``command`` come from ``MCP_BRIDGE_<NAME>`` (the command line wins)."""
    for param in command.params:
        if isinstance(param, click.Option):
            long = next((o for o in param.opts if o.startswith("--")), param.opts[0])
            param.envvar = ENV_PREFIX + long.lstrip("-").replace("-", "_").upper()
            param.show_envvar = True
        elif isinstance(param, click.Argument) and param.name:
            param.envvar = ENV_PREFIX + param.name.upper()
    return command
