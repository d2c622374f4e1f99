"""HTTP-level scope checks: step-up for a tool call, and the protected-resource metadata.

The MCP authorization spec asks a resource server to answer a request the token is not scoped
for with ``403`` and ``WWW-Authenticate: Bearer error="insufficient_scope", scope="..."``, so the
client can ask the user for more (step-up). A ``tools/call`` names its tool in the JSON-RPC body,
so :class:`ScopeGuard` reads the (already size-capped) body, finds the tool's requirement and
answers 403 before the SDK runs anything; requests it cannot attribute to a tool pass on.

:class:`ResourceMetadata` serves RFC 9728 metadata naming the authorization servers and every
scope the tools ask for (the SDK's own route names only the scopes every token must carry).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping, MutableMapping
from typing import Any

from bridge.identity.scopes import Requirement, allows, missing
from bridge.tools.json_text import parse_json

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]
# The scopes of a bearer token, or None when it is not valid (the app will answer 401).
TokenScopes = Callable[[str], Awaitable[frozenset[str] | None]]
# The requirement of a JSON-RPC call (method, params), or None when it names no tool.
CallRequirement = Callable[[str, Mapping[str, Any]], Requirement | None]

WELL_KNOWN = "/.well-known/oauth-protected-resource"
_SCOPE_CHARS = frozenset(chr(c) for c in range(0x21, 0x7F) if chr(c) not in '"\\')


def bearer_token(headers: list[tuple[bytes, bytes]]) -> str | None:
    """The bearer token of a request, read exactly as the SDK's authentication reads it.

    The first ``Authorization`` header, ``Bearer `` in any case, the rest as it is: the guard must
    judge the token the request will be served as, not another header of the same request.
    """
    value = next((v for k, v in headers if k.lower() == b"authorization"), None)
    if value is None:
        return None
    text = value.decode("latin-1")
    return text[7:] if text.lower().startswith("bearer ") and len(text) > 7 else None


def metadata_path(resource_url: str) -> str:
    """RFC 9728 §3.1: the well-known prefix inserted before the resource's path."""
    from urllib.parse import urlsplit

    path = urlsplit(resource_url).path
    return WELL_KNOWN + (path if path != "/" else "")


def metadata_url(resource_url: str) -> str:
    from urllib.parse import urlsplit

    parts = urlsplit(resource_url)
    return f"{parts.scheme}://{parts.netloc}{metadata_path(resource_url)}"


async def _send_json(send: Send, status: int, body: bytes, headers: list[tuple[bytes, bytes]] | None = None) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                *(headers or []),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


class ResourceMetadata:
    def __init__(
        self, app: ASGIApp, *, resource_url: str, authorization_servers: list[str], scopes_supported: list[str]
    ) -> None:
        from mcp.shared.auth import ProtectedResourceMetadata

        self.app = app
        self.path = metadata_path(resource_url)
        metadata = ProtectedResourceMetadata(
            resource=resource_url,  # type: ignore[arg-type]  # pydantic parses the str
            authorization_servers=authorization_servers,  # type: ignore[arg-type]
            scopes_supported=scopes_supported or None,
        )
        self.body = metadata.model_dump_json(exclude_none=True).encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] in ("GET", "HEAD") and scope["path"] == self.path:
            await _send_json(send, 200, self.body, [(b"cache-control", b"public, max-age=3600")])
            return
        await self.app(scope, receive, send)


class ScopeGuard:
    """403 ``insufficient_scope`` for a tool call beyond the token's scopes, before the SDK sees it."""

    def __init__(
        self, app: ASGIApp, *, path: str, token_scopes: TokenScopes, requirement: CallRequirement, resource_url: str
    ) -> None:
        self.app = app
        self.path = path.rstrip("/") or "/"
        self._token_scopes = token_scopes
        self._requirement = requirement
        self._metadata_url = metadata_url(resource_url)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST" or (scope["path"].rstrip("/") or "/") != self.path:
            await self.app(scope, receive, send)
            return
        messages: list[Message] = []
        body = bytearray()
        while True:  # the guard in front already capped the body's size
            message = await receive()
            messages.append(message)
            if message["type"] != "http.request":
                break
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        replayed = iter(messages)

        async def replay() -> Message:
            return next(replayed, None) or await receive()

        need = self._need(bytes(body))
        if need:
            token = bearer_token(scope.get("headers") or [])
            granted = await self._token_scopes(token) if token else None
            if granted is not None and not allows(need, granted):
                await self._forbid(send, missing(need, granted))
                return
        await self.app(scope, replay, send)

    def _need(self, body: bytes) -> Requirement | None:
        try:
            message = parse_json(body)
        except ValueError:
            return None
        if not isinstance(message, dict) or not isinstance(message.get("method"), str):
            return None
        params = message.get("params")
        return self._requirement(message["method"], params if isinstance(params, dict) else {})

    async def _forbid(self, send: Send, scopes: list[str]) -> None:
        # Scope names come from the spec: keep only RFC 6749 scope-token characters in the header.
        wanted = " ".join("".join(c for c in s if c in _SCOPE_CHARS) for s in scopes)
        challenge = (
            f'Bearer error="insufficient_scope", scope="{wanted}", '
            f'resource_metadata="{self._metadata_url}", error_description="Required scope: {wanted}"'
        )
        body = json.dumps({"error": "insufficient_scope", "error_description": f"Required scope: {wanted}"}).encode()
        await _send_json(send, 403, body, [(b"www-authenticate", challenge.encode())])
