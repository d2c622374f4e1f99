"""Running a server over stdio or streamable HTTP.

The HTTP app is an ordinary ASGI app (uvicorn or gunicorn can run it with several workers in
stateless mode). In front of the SDK's own checks sits a small guard that answers a foreign
``Host`` or ``Origin`` with 403 (the SDK answers 421 for Host) and refuses oversized bodies.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, MutableMapping, Sequence
from typing import Any

from mcp.server.lowlevel import Server

logger = logging.getLogger("bridge")

DEFAULT_HTTP_PATH = "/mcp"
DEFAULT_MAX_BODY_BYTES = 4 * 1024 * 1024
DEFAULT_MAX_SESSIONS = 1000
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")
WILDCARD_BINDS = ("0.0.0.0", "::", "")

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


async def run_stdio(server: Server) -> None:
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


def _hostname(value: str) -> str:
    value = value.strip().lower()
    if value.startswith("["):
        return value[: value.find("]") + 1] if "]" in value else value
    return value.rsplit(":", 1)[0] if value.count(":") == 1 else value


class HostOriginGuard:
    """403 for a Host not in the allow-list or an Origin present and not allowed; 413 for big bodies."""

    def __init__(
        self, app: ASGIApp, *, allowed_hosts: Sequence[str], allowed_origins: Sequence[str], max_body_bytes: int
    ) -> None:
        self.app = app
        self.hosts = {h.lower() for h in allowed_hosts}
        self.host_names = {h.lower() for h in allowed_hosts if ":" not in h.strip("[]") or h.startswith("[")}
        self.origins = {o.lower().rstrip("/") for o in allowed_origins}
        self.max_body_bytes = max_body_bytes

    def _host_ok(self, host: str) -> bool:
        host = host.lower()
        return host in self.hosts or _hostname(host) in self.host_names

    def _origin_ok(self, origin: str) -> bool:
        origin = origin.lower().rstrip("/")
        if origin in self.origins:
            return True
        scheme, _, rest = origin.partition("://")
        return scheme in ("http", "https") and _hostname(rest) in LOOPBACK_NAMES and _hostname(rest) in self.host_names

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        if not self._host_ok(headers.get("host", "")):
            await _plain(send, 403, "Forbidden: Host not allowed")
            return
        origin = headers.get("origin")
        if origin is not None and not self._origin_ok(origin):
            await _plain(send, 403, "Forbidden: Origin not allowed")
            return
        length = headers.get("content-length")
        if length is not None and length.isdigit() and int(length) > self.max_body_bytes:
            await _plain(send, 413, "Request body too large")
            return
        await self.app(scope, _capped(receive, self.max_body_bytes), send)


def _capped(receive: Receive, limit: int) -> Receive:
    seen = 0

    async def wrapped() -> Message:
        nonlocal seen
        message = await receive()
        if message["type"] == "http.request":
            seen += len(message.get("body", b""))
            if seen > limit:
                # Chunked bodies have no Content-Length: stop reading and let the app see a disconnect.
                return {"type": "http.disconnect"}
        return message

    return wrapped


async def _plain(send: Send, status: int, text: str) -> None:
    body = text.encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"text/plain; charset=utf-8"), (b"content-length", str(len(body)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": body})


def http_app(
    server: Server,
    *,
    host: str = "127.0.0.1",
    stateless: bool = False,
    allowed_hosts: Sequence[str] = (),
    allowed_origins: Sequence[str] = (),
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    max_sessions: int = DEFAULT_MAX_SESSIONS,
    path: str = DEFAULT_HTTP_PATH,
) -> ASGIApp:
    """The streamable HTTP ASGI app for ``server``, behind the Host/Origin guard."""
    from mcp.server.transport_security import TransportSecuritySettings

    if host in WILDCARD_BINDS:
        logger.warning(
            "listening on all interfaces (%s): only Host headers in --allowed-host and loopback names are accepted",
            host or "*",
        )
    hosts = [*LOOPBACK_NAMES, *allowed_hosts]
    if host not in WILDCARD_BINDS and host not in hosts:
        hosts.append(host)
    # The guard above does the checking (with 403); the SDK's own check would answer 421 first otherwise.
    security = TransportSecuritySettings(enable_dns_rebinding_protection=False)
    inner = server.streamable_http_app(
        streamable_http_path=path,
        stateless_http=stateless,
        transport_security=security,
        host=host,
        max_request_body_size=max_body_bytes,
        max_sessions=max_sessions,
    )
    app: ASGIApp = inner
    if stateless:
        app = _no_get(app, path)
    return HostOriginGuard(app, allowed_hosts=hosts, allowed_origins=allowed_origins, max_body_bytes=max_body_bytes)


def _no_get(app: ASGIApp, path: str) -> ASGIApp:
    # A stateless server has no session to push to; the SDK would keep an idle SSE stream open forever.
    async def guarded(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] == "GET" and scope["path"].rstrip("/") == path.rstrip("/"):
            await _plain(send, 405, "Method Not Allowed: this server is stateless")
            return
        await app(scope, receive, send)

    return guarded


def run_http(app: ASGIApp, *, host: str, port: int) -> None:
    import uvicorn

    uvicorn.run(app, host=host, port=port, log_level="warning", lifespan="on")
