"""Fair admission of stateful streamable-HTTP sessions.

The SDK caps open sessions, but a session only ends when its client deletes it or after the idle
timeout (30 minutes). One client that opens sessions in a loop therefore fills every slot and
locks everybody else out with 503 until then. :class:`SessionAdmission` sits in front of the SDK
and keeps room for others:

- each client (the identity of its bearer token when authentication is on, else its peer
  address) may hold at most ``max_per_client`` sessions;
- when a limit is reached, the least recently used *idle* session (no request in flight, no
  open stream) of the client with the most sessions is closed to make room, so a new client is
  admitted unless every session is busy;
- a session is closed through the protocol itself (a ``DELETE`` with its id and the creator's
  ``Authorization`` header, sent to the app in-process), so the SDK's own bookkeeping and its
  "only the creator may use a session" rule stay in charge.

Session ids are secrets of their clients: only a prefix is ever logged (:class:`SessionIdFilter`).
"""

from __future__ import annotations

import hashlib
import logging
import re
import time
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass, field
from typing import Any

import anyio

logger = logging.getLogger("bridge")

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]
# The identity behind a bearer token (e.g. "client:subject"), or None when the token is not valid.
Identify = Callable[[str], Awaitable[str | None]]

DEFAULT_MAX_SESSIONS = 1000
DEFAULT_MAX_PER_CLIENT = 100
SESSION_ID_LOG_CHARS = 8
SESSION_HEADER = b"mcp-session-id"
# The SDK's loggers that name session ids (they log the whole id at INFO).
SDK_SESSION_LOGGERS = ("mcp.server.streamable_http_manager", "mcp.server.streamable_http")

_LONG_ID = re.compile(r"\b[0-9a-fA-F]{16,}\b")


def short_id(session_id: str) -> str:
    """The part of a session id that is safe to log."""
    return session_id[:SESSION_ID_LOG_CHARS] + "…"


class SessionIdFilter(logging.Filter):
    """Rewrites log records so that long hex ids (the SDK's session ids) keep only a prefix."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if _LONG_ID.search(message) is not None:
            record.msg = _LONG_ID.sub(lambda m: short_id(m.group(0)), message)
            record.args = ()
        return True


def install_session_id_filter() -> None:
    """Attach :class:`SessionIdFilter` to the SDK's session loggers (once)."""
    for name in SDK_SESSION_LOGGERS:
        target = logging.getLogger(name)
        if not any(isinstance(f, SessionIdFilter) for f in target.filters):
            target.addFilter(SessionIdFilter())


@dataclass(slots=True)
class _Session:
    client: str
    authorization: bytes | None  # the creator's header, to close the session as its owner would
    last_used: float
    in_flight: int = 0
    user: Any = None  # the SDK's authenticated user of the session (closing it needs no token then)


@dataclass(slots=True)
class _Clients:
    sessions: dict[str, _Session] = field(default_factory=dict)
    opening: dict[str, int] = field(default_factory=dict)  # initialize requests not yet answered

    def count(self, client: str) -> int:
        return sum(1 for s in self.sessions.values() if s.client == client) + self.opening.get(client, 0)

    def total(self) -> int:
        return len(self.sessions) + sum(self.opening.values())


class SessionAdmission:
    """ASGI middleware: per-client session caps, and room made by closing idle sessions first."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        path: str,
        max_sessions: int,
        max_per_client: int = DEFAULT_MAX_PER_CLIENT,
        identify: Identify | None = None,
        close_directly: ASGIApp | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if max_sessions < 1 or max_per_client < 1:
            raise ValueError("session limits must be at least 1")
        self.app = app
        self.path = path.rstrip("/") or "/"
        self.max_sessions = max_sessions
        self.max_per_client = min(max_per_client, max_sessions)
        self._identify = identify
        # The session manager's own handler, below authentication: a session is closed for room
        # even when its creator's token has expired since (its DELETE would get 401, and the SDK
        # would keep the session for its idle timeout while it no longer counts here).
        self._close_directly = close_directly
        self._clock = clock
        self._state = _Clients()
        self._lock = anyio.Lock()

    @property
    def open_sessions(self) -> int:
        return len(self._state.sessions)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or (scope["path"].rstrip("/") or "/") != self.path:
            await self.app(scope, receive, send)
            return
        session_id = _first(scope, SESSION_HEADER)
        if session_id is not None:
            await self._existing(session_id.decode("latin-1"), scope, receive, send)
        elif scope["method"] == "POST":
            await self._opening(_first(scope, b"authorization"), scope, receive, send)
        else:
            await self.app(scope, receive, send)

    async def _existing(self, session_id: str, scope: Scope, receive: Receive, send: Send) -> None:
        session = self._state.sessions.get(session_id)
        status = 0

        async def watch(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        if session is not None:
            session.in_flight += 1
            session.last_used = self._clock()
        try:
            await self.app(scope, receive, watch)
        finally:
            if session is not None:
                session.in_flight -= 1
                session.last_used = self._clock()
                ended = status == 404 or (scope["method"] == "DELETE" and 200 <= status < 300)
                if ended and self._state.sessions.get(session_id) is session:
                    del self._state.sessions[session_id]

    async def _client_of(self, scope: Scope, authorization: bytes | None) -> str | None:
        """Whose session this would be; None when its bearer token is not valid (the app answers 401)."""
        if self._identify is not None:
            if authorization is None:
                return None
            scheme, _, token = authorization.decode("latin-1").partition(" ")
            if scheme.lower() != "bearer" or not token:
                return None
            who = await self._identify(token.strip())
            return None if who is None else "user:" + hashlib.sha256(who.encode()).hexdigest()[:16]
        peer = scope.get("client")
        return f"peer:{peer[0] if peer else '?'}"

    async def _opening(self, authorization: bytes | None, scope: Scope, receive: Receive, send: Send) -> None:
        client = await self._client_of(scope, authorization)
        if client is None:
            # Not authenticated: the app refuses it; it must not cost anybody their session.
            await self.app(scope, receive, send)
            return
        async with self._lock:
            admitted = await self._make_room(client)
            if admitted:
                self._state.opening[client] = self._state.opening.get(client, 0) + 1
        if not admitted:
            logger.warning("refused a new session: every session is busy (%d open)", self.open_sessions)
            await _json_error(send, 503, "Too many open sessions; retry later")
            return
        created: str | None = None
        status = 0

        async def watch(message: Message) -> None:
            nonlocal created, status
            if message["type"] == "http.response.start":
                status = message["status"]
                for key, value in message.get("headers") or []:
                    if key.lower() == SESSION_HEADER:
                        created = value.decode("latin-1")
            await send(message)

        try:
            await self.app(scope, receive, watch)
        finally:
            left = self._state.opening.get(client, 1) - 1
            if left:
                self._state.opening[client] = left
            else:
                self._state.opening.pop(client, None)
            if created is not None and status < 400:
                session = _Session(client, authorization, self._clock())
                session.user = scope.get("user")  # who the SDK bound the session to (its auth middleware)
                self._state.sessions[created] = session

    async def _make_room(self, client: str) -> bool:
        """Close idle sessions until ``client`` may open one; False when only busy sessions are left."""
        for _ in range(self.max_sessions + 1):  # each pass closes one session, so this is bounded
            if self._state.count(client) >= self.max_per_client:
                victim = self._idle_lru(lambda s: s.client == client)
            elif self._state.total() >= self.max_sessions:
                victim = self._idle_of_busiest_client()
            else:
                return True
            if victim is None:
                return False
            await self._close(victim)
        return False

    def _idle_lru(self, wanted: Callable[[_Session], bool]) -> str | None:
        best: tuple[float, str] | None = None
        for session_id, session in self._state.sessions.items():
            if session.in_flight == 0 and wanted(session) and (best is None or session.last_used < best[0]):
                best = (session.last_used, session_id)
        return None if best is None else best[1]

    def _idle_of_busiest_client(self) -> str | None:
        holdings: dict[str, int] = {}
        for session in self._state.sessions.values():
            if session.in_flight == 0:
                holdings[session.client] = holdings.get(session.client, 0) + 1
        for client, _ in sorted(holdings.items(), key=lambda item: -item[1]):
            victim = self._idle_lru(lambda s, c=client: s.client == c)  # type: ignore[misc]
            if victim is not None:
                return victim
        return None

    async def _close(self, session_id: str) -> None:
        session = self._state.sessions.pop(session_id)
        headers = [(SESSION_HEADER, session_id.encode("latin-1")), (b"host", b"127.0.0.1")]
        if session.authorization is not None:
            headers.append((b"authorization", session.authorization))
        scope: Scope = {
            "type": "http",
            "asgi": {"version": "3.0"},
            "http_version": "1.1",
            "method": "DELETE",
            "scheme": "http",
            "path": self.path,
            "raw_path": self.path.encode(),
            "query_string": b"",
            "root_path": "",
            "headers": headers,
            "client": ("127.0.0.1", 0),
            "server": ("127.0.0.1", 0),
        }
        status = 0

        async def receive() -> Message:
            return {"type": "http.request", "body": b"", "more_body": False}

        async def send(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]

        app = self.app
        if self._close_directly is not None and session.user is not None:
            scope["user"] = session.user
            app = self._close_directly
        with anyio.move_on_after(5):
            await app(scope, receive, send)
        logger.info("closed idle session %s to make room (status %d)", short_id(session_id), status)


def _first(scope: Scope, name: bytes) -> bytes | None:
    """A request header's first value, the one the SDK reads (a repeated header must not differ)."""
    return next((value for key, value in scope.get("headers") or [] if key.lower() == name), None)


async def _json_error(send: Send, status: int, message: str) -> None:
    body = ('{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"' + message + '"}}').encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": body})
