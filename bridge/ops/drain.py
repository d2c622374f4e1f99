"""Graceful drain on SIGTERM: refuse new work, let calls in flight finish (up to a deadline), exit 0.

uvicorn's own shutdown waits for every connection, so one open SSE stream (a session's GET)
holds the process until the deadline, and it re-raises the signal afterwards (exit status 143).
Here the wait is for requests that carry work (every method but GET); once they are done, the
streams left are ended, the lifespan (sessions, sandbox workers) is shut down, and the exit is 0,
which is what an orchestrator's rolling update counts as a clean stop.
"""

from __future__ import annotations

import asyncio
import errno
import logging
import signal
import socket
from collections.abc import MutableMapping, Sequence
from types import FrameType
from typing import Any

import uvicorn

from bridge.ops.health import ASGIApp, ListenError, Readiness, Receive, Scope, Send
from bridge.ops.settings import DEFAULT_DRAIN_TIMEOUT
from bridge.ops.uvicorn_seams import forget_captured_signals

logger = logging.getLogger("bridge")

STREAM_CLOSE_WAIT = 1.0  # seconds ended streams get to close their connections before they are cut
# A request a proxy already sent over an idle keep-alive connection is lost if the server closes
# that connection at the same moment (the proxy cannot resend a POST). So after the signal open
# connections stay for DRAIN_LINGER, each answer closing its own (``Connection: close``), longer
# than the proxy keeps an upstream connection idle (docs/deployment.md's nginx: ``keepalive_timeout 2s``):
# by then the proxy itself has closed every connection that carried no answer, and none is left
# for the bridge to close under a request. (One second, with nginx keeping connections a minute,
# lost about one call in 8,000 during a rolling restart.)
DRAIN_LINGER = 3.0
# Longer than the idle timeout of the proxies in front (nginx's upstream keepalive_timeout and
# most load balancers: 60 s), so it is always the proxy that closes an idle connection, never
# the bridge while the proxy is sending on it.
KEEP_ALIVE_SECONDS = 75


class InFlight:
    """ASGI: counts requests that carry work (not GET streams) and says when none is left."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.count = 0
        self.draining = False
        self._idle: asyncio.Event | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.draining and scope["type"] == "http":
            send = _closing(send)
        if scope["type"] != "http" or scope["method"] == "GET":
            await self.app(scope, receive, send)
            return
        self.count += 1
        try:
            await self.app(scope, receive, send)
        finally:
            self.count -= 1
            if self.count == 0 and self._idle is not None:
                self._idle.set()

    async def wait_idle(self) -> None:
        while self.count:
            self._idle = asyncio.Event()
            await self._idle.wait()


def _keep_sse_streams_on_signal() -> None:
    """sse-starlette ends every SSE answer the moment uvicorn is signalled, which would cut the
    answers of calls in flight (an MCP call's answer is an SSE stream): it waits for the drain."""
    from sse_starlette.sse import AppStatus

    AppStatus.disable_automatic_graceful_drain()  # type: ignore[no-untyped-call]


def _end_sse_streams() -> None:
    from sse_starlette.sse import AppStatus

    AppStatus.should_exit = True


def _closing(send: Send) -> Send:
    """``send`` with ``Connection: close`` on the answer: the proxy does not reuse the connection."""

    async def closing(message: MutableMapping[str, Any]) -> None:
        if message["type"] == "http.response.start":
            message["headers"] = [*message.get("headers", []), (b"connection", b"close")]
        await send(message)

    return closing


class DrainingServer(uvicorn.Server):
    """uvicorn, with the drain above: readiness turns 503 at the signal, and the exit status is 0."""

    def __init__(self, config: uvicorn.Config, *, in_flight: InFlight, readiness: Readiness, timeout: float) -> None:
        super().__init__(config)
        self.in_flight = in_flight
        self.readiness = readiness
        self.drain_timeout = timeout

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        if not self.readiness.draining:
            self.readiness.draining = self.in_flight.draining = True
            logger.info("%s: draining (%d request(s) in flight)", signal.Signals(sig).name, self.in_flight.count)
        super().handle_exit(sig, frame)
        # A drained stop is a clean one: uvicorn would raise the signal again after shutdown (exit 143).
        forget_captured_signals(self)  # bridge.ops.uvicorn_seams

    async def shutdown(self, sockets: list[Any] | None = None) -> None:
        for server in self.servers:
            server.close()  # no new connections
        for sock in sockets or []:
            sock.close()
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.drain_timeout
        await asyncio.sleep(min(DRAIN_LINGER, self.drain_timeout))
        for connection in list(self.server_state.connections):
            connection.shutdown()  # idle keep-alive connections close; busy ones close after their answer
        try:
            await asyncio.wait_for(self.in_flight.wait_idle(), timeout=max(deadline - loop.time(), 0.0))
        except TimeoutError:
            logger.warning(
                "drain deadline (%g s) reached: %d request(s) cut off", self.drain_timeout, self.in_flight.count
            )
        _end_sse_streams()  # what is left: streams with no work (a session's GET), or work past the deadline
        deadline = loop.time() + STREAM_CLOSE_WAIT
        while self.server_state.connections and loop.time() < deadline:
            await asyncio.sleep(0.05)
        for task in list(self.server_state.tasks):
            task.cancel()
        for connection in list(self.server_state.connections):
            transport = getattr(connection, "transport", None)
            if transport is not None:
                transport.close()
        if not self.force_exit:
            await self.lifespan.shutdown()


def listen_socket(host: str, port: int) -> socket.socket:
    """A bound socket for ``host:port``, before uvicorn starts: a busy or forbidden address is one line
    (uvicorn would log its raw ``[Errno 98]`` and exit, after the server had said it was starting)."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    except socket.gaierror as exc:
        raise ListenError(f"cannot listen on {host}:{port}: {host!r} is not an address here ({exc})") from None
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn does: restart while old ones linger
    try:
        sock.bind(address)
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise ListenError(
                f"port {port} on {host} is in use by another program: stop it, or choose a free port with --port"
            ) from None
        if exc.errno == errno.EACCES:
            raise ListenError(f"not allowed to listen on {host}:{port}: choose a port above 1023 with --port") from None
        raise ListenError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    sock.set_inheritable(True)
    return sock


def serve_draining(
    app: ASGIApp,
    *,
    host: str,
    port: int,
    forwarded_allow_ips: Sequence[str] = (),
    drain_timeout: float = DEFAULT_DRAIN_TIMEOUT,
    readiness: Readiness | None = None,
    plain_logs: bool = True,
    path: str = "/mcp",
) -> None:
    """Run ``app`` under uvicorn until SIGTERM/SIGINT, then drain. ``plain_logs=False`` leaves
    uvicorn's loggers to the root handler (the JSON log format). A port that cannot be listened on
    raises :class:`ListenError` before anything starts; once it is bound, its URL is logged."""
    listener = listen_socket(host, port)
    shown = f"[{host}]" if ":" in host else host
    logger.info("listening on http://%s:%d%s (streamable HTTP; Ctrl-C or SIGTERM drains and stops)", shown, port, path)
    readiness = readiness or Readiness()
    _keep_sse_streams_on_signal()
    in_flight = InFlight(app)
    trusted = ",".join(forwarded_allow_ips)
    options: dict[str, Any] = {} if plain_logs else {"log_config": None}
    config = uvicorn.Config(
        in_flight,
        host=host,
        port=port,
        log_level="warning",
        lifespan="on",
        timeout_keep_alive=KEEP_ALIVE_SECONDS,
        proxy_headers=bool(trusted),
        forwarded_allow_ips=trusted or "",
        **options,
    )
    DrainingServer(config, in_flight=in_flight, readiness=readiness, timeout=drain_timeout).run(sockets=[listener])
