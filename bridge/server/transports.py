"""Running a server over stdio or streamable HTTP.

The HTTP app is an ordinary ASGI app (uvicorn or gunicorn can run it with several workers in
stateless mode). In front of the SDK's own checks sits a small guard that answers a foreign
``Host`` or ``Origin`` with 403 (the SDK answers 421 for Host) and refuses oversized bodies with
413 before anything parses them, chunked bodies included. Stateful sessions are admitted fairly
(``bridge.server.sessions``); clients are authenticated by ``bridge.identity.client_auth``.
"""

from __future__ import annotations

import logging
import re
from collections import deque
from collections.abc import Awaitable, Callable, MutableMapping, Sequence
from typing import Any

from mcp.server.lowlevel import Server

from bridge.identity.client_auth import DEFAULT_HTTP_PATH, WILDCARD_BINDS, ClientAuth, ClientTokenVerifier
from bridge.identity.step_up import CallRequirement, ResourceMetadata, ScopeGuard
from bridge.server.sdk_seams import bridge_requests, no_answer_to_a_cancelled_request
from bridge.server.sessions import (
    DEFAULT_MAX_PER_CLIENT,
    DEFAULT_MAX_SESSIONS,
    SessionAdmission,
    install_session_id_filter,
)

logger = logging.getLogger("bridge")

DEFAULT_MAX_BODY_BYTES = 4 * 1024 * 1024
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


async def run_stdio(server: Server) -> None:
    from bridge.server.stdio_eof import answer_before_eof
    from bridge.server.stdio_wire import stdio_streams

    async with stdio_streams() as (read, write), answer_before_eof(read, write) as (server_read, server_write):
        await server.run(server_read, server_write, server.create_initialization_options())


# --------------------------------------------------------------------------- Host / Origin / body guard


# RFC 9110 section 7.2 / RFC 3986 section 3.2.2: Host is uri-host [ ":" port ] and nothing else. A
# reg-name here is letters, digits, "-", "." and "_" (no userinfo "@", no list ",", no spaces).
_HOST = re.compile(r"(?P<name>\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]+)(?::(?P<port>[0-9]{1,5}))?")


def _hostname(value: str) -> str | None:
    """The host of a ``Host`` header value (lower case, IPv6 in brackets), or None when the value
    is not ``host[:port]``: ``127.0.0.1:8000@evil.com`` and ``localhost:8000, evil.com`` are not."""
    match = _HOST.fullmatch(value)
    if match is None or (match.group("port") is not None and int(match.group("port")) > 65535):
        return None
    return match.group("name").lower()


class HostOriginPolicy:
    """Which ``Host`` and ``Origin`` headers a request may carry: the one check of the MCP path and
    of ``/metrics`` on either port (only ``/healthz`` and ``/readyz`` answer before it)."""

    def __init__(self, *, allowed_hosts: Sequence[str], allowed_origins: Sequence[str]) -> None:
        self.hosts = {h.lower() for h in allowed_hosts}
        self.host_names = {h.lower() for h in allowed_hosts if ":" not in h.strip("[]") or h.startswith("[")}
        self.origins = {o.lower().rstrip("/") for o in allowed_origins}

    def _host_ok(self, host: str) -> bool:
        name = _hostname(host)
        return name is not None and (host.lower() in self.hosts or name in self.host_names)

    def _origin_ok(self, origin: str) -> bool:
        origin = origin.lower().rstrip("/")
        if origin in self.origins:
            return True
        scheme, _, rest = origin.partition("://")
        name = _hostname(rest)
        return scheme in ("http", "https") and name in LOOPBACK_NAMES and name in self.host_names

    def refusal(self, hosts: Sequence[str], origins: Sequence[str]) -> str | None:
        """The 403 text for a request with these ``Host`` and ``Origin`` values; None when allowed."""
        if len(hosts) != 1 or not self._host_ok(hosts[0]):  # exactly one Host (RFC 9112 section 3.2)
            return "Forbidden: Host not allowed"
        if not all(self._origin_ok(origin) for origin in origins):  # no Origin: not a browser
            return "Forbidden: Origin not allowed"
        return None

    def refusal_of(self, scope: Scope) -> str | None:
        """:meth:`refusal` for an ASGI HTTP scope."""
        pairs = [(k.decode("latin-1").lower(), v.decode("latin-1")) for k, v in scope.get("headers", [])]
        return self.refusal([v for k, v in pairs if k == "host"], [v for k, v in pairs if k == "origin"])


def host_origin_policy(
    host: str, allowed_hosts: Sequence[str] = (), allowed_origins: Sequence[str] = ()
) -> HostOriginPolicy:
    """The policy of a server bound to ``host``: loopback names, ``--allowed-host`` and the bind address."""
    hosts = [*LOOPBACK_NAMES, *allowed_hosts]
    if host not in WILDCARD_BINDS and host not in hosts:
        hosts.append(host)
    return HostOriginPolicy(allowed_hosts=hosts, allowed_origins=allowed_origins)


class HostOriginGuard(HostOriginPolicy):
    """403 for a Host not in the allow-list or an Origin present and not allowed; 413 for big bodies."""

    def __init__(
        self, app: ASGIApp, *, allowed_hosts: Sequence[str], allowed_origins: Sequence[str], max_body_bytes: int
    ) -> None:
        super().__init__(allowed_hosts=allowed_hosts, allowed_origins=allowed_origins)
        self.app = app
        self.max_body_bytes = max_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        refused = self.refusal_of(scope)
        if refused is not None:
            await _plain(send, 403, refused)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        length = headers.get("content-length")
        if length is not None:
            if not (length.isascii() and length.isdigit()):  # "²".isdigit() is true
                await _plain(send, 400, "Bad Request: invalid Content-Length")
                return
            if len(length) > 18 or int(length) > self.max_body_bytes:
                await _plain(send, 413, "Request body too large")
                return
            # The server enforces Content-Length framing, so the body cannot be longer than declared.
            await self.app(scope, receive, send)
            return
        replay = await _buffer_capped(receive, self.max_body_bytes)
        if replay is None:
            await _plain(send, 413, "Request body too large")
            return
        await self.app(scope, replay, send)


async def _buffer_capped(receive: Receive, limit: int) -> Receive | None:
    """Read a body of unknown length (chunked) up to ``limit``; None when it is longer."""
    body = bytearray()
    pending: deque[Message] = deque()
    while True:
        message = await receive()
        if message["type"] != "http.request":
            pending.append(message)
            break
        body.extend(message.get("body", b""))
        if len(body) > limit:
            return None
        if not message.get("more_body", False):
            break
    pending.appendleft({"type": "http.request", "body": bytes(body), "more_body": False})

    async def replay() -> Message:
        return pending.popleft() if pending else await receive()

    return replay


async def _plain(send: Send, status: int, text: str, *, extra: Sequence[tuple[bytes, bytes]] = ()) -> None:
    body = text.encode()
    headers = [(b"content-type", b"text/plain; charset=utf-8"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": [*headers, *extra]})
    await send({"type": "http.response.body", "body": body})


# --------------------------------------------------------------------------- the app


def http_app(
    server: Server,
    *,
    host: str = "127.0.0.1",
    stateless: bool = False,
    allowed_hosts: Sequence[str] = (),
    allowed_origins: Sequence[str] = (),
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    max_sessions: int = DEFAULT_MAX_SESSIONS,
    max_sessions_per_client: int = DEFAULT_MAX_PER_CLIENT,
    path: str = DEFAULT_HTTP_PATH,
    auth: ClientAuth | None = None,
    call_requirement: CallRequirement | None = None,
    verifier: ClientTokenVerifier | None = None,
) -> ASGIApp:
    """The streamable HTTP ASGI app for ``server``, behind the Host/Origin guard.

    With ``auth``, every request to ``path`` needs ``Authorization: Bearer <token>`` (401 without
    a valid one, 403 without the required scopes), and the RFC 9728 protected-resource metadata
    is served under ``/.well-known/oauth-protected-resource``. ``call_requirement`` says which
    scopes a call needs, so one beyond the token's gets the 403 step-up challenge. ``verifier``
    replaces the one made for ``auth`` (to share its caches, or to watch its key set in tests).
    """
    from mcp.server.transport_security import TransportSecuritySettings

    if host in WILDCARD_BINDS:
        logger.warning(
            "listening on all interfaces (%s): only Host headers in --allowed-host and loopback names are accepted%s",
            host or "*",
            "" if auth is not None else "; MCP clients are not authenticated",
        )
    policy = host_origin_policy(host, allowed_hosts, allowed_origins)
    # The guard above does the checking (with 403); the SDK's own check would answer 421 first otherwise.
    security = TransportSecuritySettings(enable_dns_rebinding_protection=False)
    install_session_id_filter()
    no_answer_to_a_cancelled_request()  # for this app's requests only: bridge.server.sdk_seams
    auth_options: dict[str, Any] = {}
    if auth is None:
        verifier = None
    elif verifier is None:
        verifier = ClientTokenVerifier(auth)
    if auth is not None:
        from mcp.server.auth.settings import AuthSettings

        auth_options = {
            "token_verifier": verifier,
            "auth": AuthSettings(
                issuer_url=auth.authorization_server(),  # type: ignore[arg-type]  # pydantic parses the str
                resource_server_url=auth.resource_url,  # type: ignore[arg-type]
                required_scopes=list(auth.required_scopes) or None,
                validate_token_resource=True,
            ),
        }
    inner = server.streamable_http_app(
        streamable_http_path=path,
        stateless_http=stateless,
        transport_security=security,
        host=host,
        max_request_body_size=max_body_bytes,
        # SessionAdmission enforces the limit (a session it closes for room is ended in the session
        # manager itself, whatever its creator's token has become since); the SDK's is a backstop.
        max_sessions=2 * max_sessions,
        **auth_options,
    )
    app: ASGIApp = inner
    if stateless:
        app = _no_get(app, path)
    else:
        identify = None
        if verifier is not None:
            checker = verifier

            async def identify(token: str) -> str | None:
                access = await checker.verify_token(token)
                return None if access is None else f"{access.client_id}\x00{access.subject or ''}"

        app = SessionAdmission(
            app,
            path=path,
            max_sessions=max_sessions,
            max_per_client=max_sessions_per_client,
            identify=identify,
            close_directly=server.session_manager.handle_request if auth is not None else None,
        )
    if auth is not None and verifier is not None:
        if call_requirement is not None:
            app = ScopeGuard(
                app,
                path=path,
                token_scopes=verifier.scopes,
                requirement=call_requirement,
                resource_url=auth.resource_url,
            )
        app = ResourceMetadata(
            app,
            resource_url=auth.resource_url,
            authorization_servers=[auth.authorization_server()],
            scopes_supported=list(auth.scopes_supported),
        )
    return HostOriginGuard(
        bridge_requests(app),
        allowed_hosts=sorted(policy.hosts),
        allowed_origins=allowed_origins,
        max_body_bytes=max_body_bytes,
    )


def _no_get(app: ASGIApp, path: str) -> ASGIApp:
    # A stateless server has no session to push to; the SDK would keep an idle SSE stream open forever.
    async def guarded(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] == "GET" and scope["path"].rstrip("/") == path.rstrip("/"):
            await _plain(send, 405, "Method Not Allowed: this server is stateless", extra=[(b"allow", b"POST")])
            return
        await app(scope, receive, send)

    return guarded


def run_http(app: ASGIApp, *, host: str, port: int, forwarded_allow_ips: Sequence[str] = ()) -> None:
    """uvicorn on ``host:port``. ``X-Forwarded-For``/``-Proto`` are read only from the proxies
    named in ``forwarded_allow_ips``: uvicorn's own default trusts them from loopback (or
    ``$FORWARDED_ALLOW_IPS``), so a local client could choose its own address, the identity
    ``--max-sessions-per-client`` counts by without authentication."""
    import uvicorn

    trusted = ",".join(forwarded_allow_ips)
    uvicorn.run(
        app,
        host=host,
        port=port,
        log_level="warning",
        lifespan="on",
        proxy_headers=bool(trusted),
        forwarded_allow_ips=trusted or "",
    )
