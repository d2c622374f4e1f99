"""``/healthz`` and ``/readyz`` in front of the MCP app, and the metrics path on either port.

The two probes sit outside the Host guard: kubelet probes use the pod's address as Host, and
these answers carry no data an attacker could use (``ok``, or the reason the process is not
ready). Metrics are data (tool names, call counts, latencies): on the MCP port and on
``--metrics-port`` alike they meet the same Host/Origin policy as MCP requests, so a page in a
browser cannot read them by DNS rebinding. A scraper that uses the pod's address names it with
``--allowed-host``.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from bridge.server.transports import HostOriginPolicy

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]
Check = Callable[[], Awaitable[str | None]]  # None: fine; else why not ready

HEALTH_PATH = "/healthz"
READY_PATH = "/readyz"
CHECK_CACHE_SECONDS = 1.0  # probes may come often; a backend is asked at most once a second


class ListenError(OSError):
    """The address cannot be listened on; the message is one line that says what to do."""


class Readiness:
    """Ready once the catalogue is loaded (the app exists), not draining, and every check passes."""

    def __init__(self) -> None:
        self.draining = False
        self._checks: list[Check] = []
        self._cached: tuple[float, str | None] = (0.0, None)

    def add_check(self, check: Check) -> None:
        self._checks.append(check)

    async def reason(self) -> str | None:
        """Why the process should get no traffic now, or None."""
        if self.draining:
            return "draining"
        if not self._checks:
            return None
        at, reason = self._cached
        now = time.monotonic()
        if now - at < CHECK_CACHE_SECONDS:
            return reason
        reason = None
        for check in self._checks:
            reason = await check()
            if reason is not None:
                break
        self._cached = (now, reason)
        return reason


async def _answer(send: Send, status: int, body: bytes, content_type: bytes = b"text/plain; charset=utf-8") -> None:
    headers = [
        (b"content-type", content_type),
        (b"content-length", str(len(body)).encode()),
        (b"cache-control", b"no-store"),
    ]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class HealthRoutes:
    """ASGI: GET ``/healthz`` 200 while alive, ``/readyz`` 200 or 503 with the reason; ``metrics`` at its path."""

    def __init__(
        self,
        app: ASGIApp,
        readiness: Readiness,
        *,
        metrics_path: str | None = None,
        metrics: Callable[[], tuple[bytes, str]] | None = None,
        guard: HostOriginPolicy | None = None,
    ) -> None:
        if metrics is not None and guard is None:
            raise ValueError("the metrics path needs the Host/Origin policy")
        self.app = app
        self.readiness = readiness
        self.metrics_path = metrics_path
        self.metrics = metrics
        self.guard = guard

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] in ("GET", "HEAD"):
            path = scope["path"]
            if path == HEALTH_PATH:
                await _answer(send, 200, b"ok\n")
                return
            if path == READY_PATH:
                reason = await self.readiness.reason()
                if reason is None:
                    await _answer(send, 200, b"ready\n")
                else:
                    await _answer(send, 503, f"not ready: {reason}\n".encode())
                return
            if self.metrics is not None and path == self.metrics_path:
                refused = self.guard.refusal_of(scope) if self.guard is not None else "Forbidden"
                if refused is not None:
                    await _answer(send, 403, refused.encode() + b"\n")
                    return
                body, content_type = self.metrics()
                await _answer(send, 200, body, content_type.encode())
                return
        await self.app(scope, receive, send)


def serve_metrics(port: int, host: str, registry: Any, guard: HostOriginPolicy) -> None:
    """``--metrics-port``: Prometheus's exposition of ``registry`` on ``host:port`` (daemon threads,
    ended with the process), every request checked by ``guard`` first (403 otherwise)."""
    from socketserver import ThreadingMixIn
    from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

    from prometheus_client import make_wsgi_app

    exposition = make_wsgi_app(registry)

    def guarded(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        host = environ.get("HTTP_HOST")
        origin = environ.get("HTTP_ORIGIN")
        refused = guard.refusal([host] if host is not None else [], [origin] if origin is not None else [])
        if refused is not None:
            start_response(
                "403 Forbidden", [("Content-Type", "text/plain; charset=utf-8"), ("Cache-Control", "no-store")]
            )
            return [refused.encode() + b"\n"]
        return exposition(environ, start_response)  # type: ignore[no-any-return]

    class Server(ThreadingMixIn, WSGIServer):
        daemon_threads = True

    class Quiet(WSGIRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # the base class's name
            """Scrapes are not logged (the access log is the MCP port's)."""

    try:
        server = make_server(host, port, guarded, Server, handler_class=Quiet)
    except OSError as exc:  # busy or forbidden: one line (serve's ListenError handling), not a traceback
        raise ListenError(f"--metrics-port: cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    threading.Thread(target=server.serve_forever, name="metrics", daemon=True).start()
