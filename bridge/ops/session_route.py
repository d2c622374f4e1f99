"""Session ids that name their worker (``--session-route``), so a load balancer can pin a session.

The SDK makes the ids; this layer adds the route in front of each ``Mcp-Session-Id`` it answers
with and takes it off each one it is sent. An id without this process's route belongs to no
session here and goes on unchanged, to be answered 404 (the client then starts a new session).
"""

from __future__ import annotations

from bridge.ops.health import ASGIApp, Message, Receive, Scope, Send

HEADER = b"mcp-session-id"


class SessionRoute:
    def __init__(self, app: ASGIApp, route: str) -> None:
        self.app = app
        self.route = route.encode("ascii")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        route = self.route
        headers = scope.get("headers", [])
        if any(k.lower() == HEADER for k, _ in headers):
            scope = dict(scope)
            scope["headers"] = [
                (k, v[len(route) :] if k.lower() == HEADER and v.startswith(route) else v) for k, v in headers
            ]

        async def routed(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [
                    (k, route + v if k.lower() == HEADER else v) for k, v in message.get("headers", [])
                ]
            await send(message)

        await self.app(scope, receive, routed)
