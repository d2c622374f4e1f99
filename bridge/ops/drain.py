"""Graceful drain on SIGTERM: refuse new work, let calls in flight finish (up to a deadline), exit 0.

uvicorn's own shutdown waits for every connection, so one open SSE stream (a session's GET)
holds the process until the deadline, and it re-raises the signal afterwards (exit status 143).
Here the wait is for requests that carry work (every method but GET); once they are done, the
streams left are ended, the lifespan (sessions, sandbox workers) is shut down, and the exit is 0,
which is what an orchestrator's rolling update counts as a clean stop.
"""

from __future__ import annotations

import asyncio
import logging
import signal
from collections.abc import Sequence
from types import FrameType
from typing import Any

import uvicorn

from bridge.ops.health import ASGIApp, Readiness, Receive, Scope, Send
from bridge.ops.settings import DEFAULT_DRAIN_TIMEOUT

logger = logging.getLogger("bridge")

STREAM_CLOSE_WAIT = 1.0  # seconds ended streams get to close their connections before they are cut


class InFlight:
    """ASGI: counts requests that carry work (not GET streams) and says when none is left."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.count = 0
        self._idle: asyncio.Event | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
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


class DrainingServer(uvicorn.Server):
    """uvicorn, with the drain above: readiness turns 503 at the signal, and the exit status is 0."""

    def __init__(self, config: uvicorn.Config, *, in_flight: InFlight, readiness: Readiness, timeout: float) -> None:
        super().__init__(config)
        self.in_flight = in_flight
        self.readiness = readiness
        self.drain_timeout = timeout

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        if not self.readiness.draining:
            self.readiness.draining = True
            logger.info("%s: draining (%d request(s) in flight)", signal.Signals(sig).name, self.in_flight.count)
        super().handle_exit(sig, frame)
        # A drained stop is a clean one: uvicorn would raise the signal again after shutdown (exit 143).
        self._captured_signals.clear()

    async def shutdown(self, sockets: list[Any] | None = None) -> None:
        for server in self.servers:
            server.close()  # no new connections
        for sock in sockets or []:
            sock.close()
        for connection in list(self.server_state.connections):
            connection.shutdown()  # idle keep-alive connections close; busy ones close after their answer
        try:
            await asyncio.wait_for(self.in_flight.wait_idle(), timeout=self.drain_timeout)
        except TimeoutError:
            logger.warning(
                "drain deadline (%g s) reached: %d request(s) cut off", self.drain_timeout, self.in_flight.count
            )
        for task in list(self.server_state.tasks):  # what is left: streams with no work, or work past the deadline
            task.cancel()
        loop = asyncio.get_running_loop()
        deadline = loop.time() + STREAM_CLOSE_WAIT
        while self.server_state.connections and loop.time() < deadline:
            await asyncio.sleep(0.05)
        for connection in list(self.server_state.connections):
            transport = getattr(connection, "transport", None)
            if transport is not None:
                transport.close()
        if not self.force_exit:
            await self.lifespan.shutdown()


def serve_draining(
    app: ASGIApp,
    *,
    host: str,
    port: int,
    forwarded_allow_ips: Sequence[str] = (),
    drain_timeout: float = DEFAULT_DRAIN_TIMEOUT,
    readiness: Readiness | None = None,
    plain_logs: bool = True,
) -> None:
    """Run ``app`` under uvicorn until SIGTERM/SIGINT, then drain. ``plain_logs=False`` leaves
    uvicorn's loggers to the root handler (the JSON log format)."""
    readiness = readiness or Readiness()
    in_flight = InFlight(app)
    trusted = ",".join(forwarded_allow_ips)
    options: dict[str, Any] = {} if plain_logs else {"log_config": None}
    config = uvicorn.Config(
        in_flight,
        host=host,
        port=port,
        log_level="warning",
        lifespan="on",
        proxy_headers=bool(trusted),
        forwarded_allow_ips=trusted or "",
        **options,
    )
    DrainingServer(config, in_flight=in_flight, readiness=readiness, timeout=drain_timeout).run()
