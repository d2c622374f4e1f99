"""A loopback OTLP/HTTP receiver: what an OpenTelemetry collector would be sent, decoded with the OTLP protos.

:func:`running_sink` serves it from a thread of the test on a free port: it accepts ``POST
/v1/traces`` and ``/v1/metrics`` (protobuf, gzip or not) and answers 200 like a collector; the
test reads the requests back with :meth:`OtlpSink.spans` and :meth:`OtlpSink.metric_names`.
"""

from __future__ import annotations

import gzip
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.services.processes import HOST

MAX_BODY = 16 * 1024 * 1024


class OtlpSink:
    def __init__(self) -> None:
        self.requests: list[tuple[str, bytes]] = []
        self.lock = threading.Lock()
        self.received = threading.Event()

    def bodies(self, path: str) -> list[bytes]:
        with self.lock:
            return [body for p, body in self.requests if p == path]

    def spans(self) -> list[Any]:
        """Every span received, as OTLP ``Span`` messages (with ``resource`` attributes on the side)."""
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

        found = []
        for body in self.bodies("/v1/traces"):
            request = ExportTraceServiceRequest()
            request.ParseFromString(body)
            for resource_spans in request.resource_spans:
                for scope_spans in resource_spans.scope_spans:
                    found.extend(scope_spans.spans)
        return found

    def metric_names(self) -> set[str]:
        from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceRequest

        names = set()
        for body in self.bodies("/v1/metrics"):
            request = ExportMetricsServiceRequest()
            request.ParseFromString(body)
            for resource_metrics in request.resource_metrics:
                for scope_metrics in resource_metrics.scope_metrics:
                    names.update(metric.name for metric in scope_metrics.metrics)
        return names


def _handler(sink: OtlpSink) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            body = self.rfile.read(min(length, MAX_BODY))
            if self.headers.get("content-encoding") == "gzip":
                body = gzip.decompress(body)
            with sink.lock:
                sink.requests.append((self.path, body))
            sink.received.set()
            self.send_response(200)
            self.send_header("content-type", "application/x-protobuf")
            self.send_header("content-length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:
            return None

    return Handler


@contextmanager
def running_sink() -> Iterator[tuple[OtlpSink, str]]:
    """The sink on a free port, in a thread; yields it and its endpoint (``OTEL_EXPORTER_OTLP_ENDPOINT``)."""
    sink = OtlpSink()
    server = ThreadingHTTPServer((HOST, 0), _handler(sink))
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield sink, f"http://{HOST}:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
