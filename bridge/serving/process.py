"""``serve``'s process: logging, workers, the server assembled from its target, then stdio or HTTP until stopped."""

from __future__ import annotations

import os
import sys

import anyio

from bridge.ops.logs import configure_logging
from bridge.server.transports import HostOriginPolicy, host_origin_policy, run_stdio
from bridge.serving.assemble import (
    ServeOptions,
    build_bridge_server,
    build_http_app,
    build_registry,
    build_runtime,
    load_target,
    report_startup,
    response_contract,
    without_output_schemas,
)
from bridge.serving.operate import Operations
from bridge.serving.tuning import long_lived_objects
from bridge.tools.errors import BridgeError


def _is_terminal(stream: object) -> bool:
    try:
        return bool(stream is not None and stream.isatty())  # type: ignore[attr-defined]
    except (ValueError, OSError):  # closed or odd stdin: not a person at a terminal
        return False


def serve_target(target: str, options: ServeOptions) -> int:
    ops = options.ops
    configure_logging(ops.log_format)
    if ops.workers > 1 and ops.worker_index is None:
        from bridge.ops.health import ListenError
        from bridge.ops.workers import supervise

        try:
            return supervise(ops, host=options.host, port=options.port, guard=_guard(options))
        except ListenError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
    try:
        with long_lived_objects():
            catalogue, package_dir = load_target(
                target, overlays=options.overlays, workflows=options.workflows, use_cache=options.cache
            )
            if not options.output_schemas:
                catalogue = without_output_schemas(catalogue)
            runtime = build_runtime(catalogue, options, contract=response_contract(target, options))
            operations = Operations(ops, api=catalogue.name)
            runtime = operations.adopt(runtime)
            registry = build_registry(catalogue, runtime, package_dir)
            server = build_bridge_server(
                catalogue,
                registry,
                mode=options.mode,
                redact=runtime.credentials.redact,
                max_argument_bytes=options.max_argument_bytes,
                runtime=runtime,
                package_dir=package_dir,
                sandbox=options.sandbox,
                options=options,
            )
            operations.install(server)
    except BridgeError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except Exception as exc:  # a bad spec or hooks file: one line, not a traceback
        from generator.issues import GenerationError
        from generator.load.reading import SpecError

        if isinstance(exc, SpecError | GenerationError):
            print(f"error: {exc}", file=sys.stderr)
            return 1
        raise
    report_startup(catalogue, runtime, options, os.environ)
    try:
        if options.transport == "http":
            from bridge.ops.drain import serve_draining  # uvicorn: not loaded for stdio
            from bridge.ops.health import ListenError

            try:
                operations.start_metrics_listener(options.host, _guard(options))
                serve_draining(
                    operations.wrap(build_http_app(server, registry, options), _guard(options)),
                    host=options.host,
                    port=options.port,
                    forwarded_allow_ips=options.forwarded_allow_ips,
                    drain_timeout=ops.drain_timeout,
                    readiness=operations.readiness,
                    plain_logs=ops.log_format != "json",
                )
            except ListenError as exc:
                print(f"error: {exc}", file=sys.stderr)
                return 1
        else:
            if _is_terminal(sys.stdin):
                # A person ran it by hand: without this it waits in silence for JSON-RPC lines.
                print(
                    "mcp-bridge: waiting for an MCP client on stdin (configure it as a client's server, or try "
                    "`mcp-bridge list` / `mcp-bridge call`); Ctrl-D or Ctrl-C to stop",
                    file=sys.stderr,
                )
            anyio.run(run_stdio, server)
    finally:
        operations.close()
    return 0


def _guard(options: ServeOptions) -> HostOriginPolicy:
    """The Host/Origin policy of the MCP path, which ``/metrics`` meets too on either port (P64)."""
    return host_origin_policy(options.host, options.allowed_hosts, options.allowed_origins)
