"""``/healthz`` and ``/readyz`` (and an opt-in metrics path) in front of the MCP app.

They sit outside the Host guard: probes and scrapers use the pod's address as Host, and these
answers carry no data an attacker could use (``ok``, or the reason the process is not ready).
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]
Check = Callable[[], Awaitable[str | None]]  # None: fine; else why not ready

HEALTH_PATH = "/healthz"
READY_PATH = "/readyz"
CHECK_CACHE_SECONDS = 1.0  # probes may come often; a backend is asked at most once a second


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
    ) -> None:
        self.app = app
        self.readiness = readiness
        self.metrics_path = metrics_path
        self.metrics = metrics

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
                body, content_type = self.metrics()
                await _answer(send, 200, body, content_type.encode())
                return
        await self.app(scope, receive, send)
