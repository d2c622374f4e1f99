"""The real authorization server (npm ``oidc-provider``, ``tests/node/oidc``) and an upstream that
checks what it is sent, for the end-to-end identity tests.

:func:`running_provider` starts ``node tests/node/oidc/oidc_provider.mjs`` on a free loopback
port, waits (bounded) for its ready line and stops it at the end; :class:`OidcProvider` gets
tokens from it the ways a real MCP client would (client credentials, or authorization code +
PKCE through its login and consent forms, driven over HTTP). :class:`CheckingUpstream` is the
API behind the bridge: it verifies every bearer token against the provider's JWKS and records
who called with which token.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import secrets
import shutil
import subprocess
from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal
from urllib.parse import parse_qs, urlsplit

import anyio
import httpx
import jwt
import uvicorn

from tests.e2e.conftest import STARTUP_TIMEOUT, STOP_TIMEOUT
from tests.node_tools import NODE_DIR, npm_ci

OIDC_DIR = NODE_DIR / "oidc"
SCRIPT = OIDC_DIR / "oidc_provider.mjs"
UPSTREAM_AUDIENCE = "https://pets.upstream.test"
OTHER_RESOURCE = "https://other.test/mcp"
USERS = {"alice": "alice-secret-0123456789", "bob": "bob-secret-0123456789"}
BRIDGE_CLIENT = ("bridge", "bridge-secret-0123456789")
APP_CLIENT = "mcp-app"
REDIRECT_URI = "http://127.0.0.1/callback"
MAX_FORM_STEPS = 12  # redirects and forms of one headless login, at most

Scope = MutableMapping[str, Any]


@dataclass
class OidcProvider:
    issuer: str
    kids: list[str]
    http: httpx.AsyncClient

    @property
    def jwks_url(self) -> str:
        return f"{self.issuer}/jwks"

    @property
    def token_url(self) -> str:
        return f"{self.issuer}/token"

    @property
    def introspection_url(self) -> str:
        return f"{self.issuer}/token/introspection"

    async def client_credentials(self, user: str, *, resource: str, scope: str) -> str:
        """An access token for ``resource`` issued to the user's own client."""
        answer = await self.http.post(
            "/token",
            data={"grant_type": "client_credentials", "resource": resource, "scope": scope},
            auth=(user, USERS[user]),
        )
        assert answer.status_code == 200, answer.text
        token: str = answer.json()["access_token"]
        return token

    async def authorization_code(self, login: str, *, resource: str, scope: str) -> str:
        """Authorization code + PKCE (S256) for ``login``, through the provider's login and consent forms."""
        verifier = secrets.token_urlsafe(48)
        challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
        state = secrets.token_urlsafe(8)
        query = {
            "client_id": APP_CLIENT,
            "response_type": "code",
            "redirect_uri": REDIRECT_URI,
            "scope": f"openid {scope}",
            "resource": resource,
            "code_challenge": challenge,
            "code_challenge_method": "S256",
            "state": state,
        }
        answered = await sign_in(str(httpx.URL(f"{self.issuer}/auth", params=query)), login)
        assert answered["state"] == [state] and answered["iss"] == [self.issuer]
        exchanged = await self.http.post(
            "/token",
            data={
                "grant_type": "authorization_code",
                "code": answered["code"][0],
                "redirect_uri": REDIRECT_URI,
                "client_id": APP_CLIENT,
                "code_verifier": verifier,
                "resource": resource,
            },
        )
        assert exchanged.status_code == 200, exchanged.text
        token: str = exchanged.json()["access_token"]
        return token

    async def rotate(self, *, publish: bool = True) -> list[str]:
        """New signing keys; ``publish=False`` keeps the old ones in the JWKS. The new key ids."""
        answer = await self.http.post("/_harness/rotate", params={"publish": "yes" if publish else "no"})
        self.kids = answer.json()["kids"]
        return self.kids

    async def shift_clock(self, seconds: float) -> None:
        await self.http.post("/_harness/clock", params={"offset": str(seconds)})

    async def opaque_tokens(self, opaque: bool = True) -> None:
        """Issue MCP access tokens as opaque strings (``True``) or as JWTs."""
        await self.http.post("/_harness/format", params={"opaque": "yes" if opaque else "no"})

    async def revoke(self, user: str, token: str) -> None:
        answer = await self.http.post("/token/revocation", data={"token": token}, auth=(user, USERS[user]))
        assert answer.status_code == 200, answer.text

    async def stats(self) -> dict[str, int]:
        answer: dict[str, int] = (await self.http.get("/_harness/stats")).json()
        return answer


async def sign_in(authorize_url: str, login: str) -> dict[str, list[str]]:
    """What a user does in the browser: open ``authorize_url``, log in as ``login``, consent.

    The provider's development forms are filled in over HTTP with a cookie jar of this sign-in
    only; the answer is the query of the redirect back to the client (code, state, iss).
    """
    async with httpx.AsyncClient(timeout=10.0) as browser:
        response = await browser.get(authorize_url)
        for _step in range(MAX_FORM_STEPS):
            location = response.headers.get("location")
            if response.status_code in (302, 303) and location is not None:
                if location.startswith(REDIRECT_URI):
                    return parse_qs(urlsplit(location).query)
                response = await browser.get(response.url.join(location))
                continue
            assert response.status_code == 200, response.text
            action = re.search(r'<form[^>]*action="([^"]+)"', response.text)
            prompt = re.search(r'name="prompt" value="([^"]+)"', response.text)
            assert action is not None and prompt is not None, response.text
            form = {"prompt": prompt[1]} | ({"login": login, "password": "any"} if prompt[1] == "login" else {})
            response = await browser.post(response.url.join(action[1]), data=form)
    raise AssertionError(f"no redirect back to the client after {MAX_FORM_STEPS} steps")


def _node() -> str:
    node = shutil.which("node")
    assert node is not None, "Node.js is needed for this test"
    return node


@asynccontextmanager
async def running_provider(log: Path) -> AsyncIterator[OidcProvider]:
    """The provider on a free loopback port (it binds port 0 itself, so there is no race for it)."""
    await anyio.to_thread.run_sync(npm_ci, OIDC_DIR)
    with log.open("wb") as stderr:
        process = await anyio.open_process(
            [_node(), str(SCRIPT)],
            cwd=OIDC_DIR,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
            env={**os.environ, "UPSTREAM_AUDIENCE": UPSTREAM_AUDIENCE, "OTHER_RESOURCE": OTHER_RESOURCE},
        )
    try:
        assert process.stdout is not None and process.stdin is not None
        line = bytearray()
        with anyio.fail_after(STARTUP_TIMEOUT):
            while not line.endswith(b"\n"):
                chunk = await process.stdout.receive(1)  # the ready line is the first output
                line += chunk
        ready = json.loads(line)
        async with httpx.AsyncClient(base_url=ready["issuer"], timeout=10.0) as http:
            yield OidcProvider(ready["issuer"], ready["kids"], http)
    except anyio.EndOfStream:
        raise RuntimeError(f"oidc-provider exited before its ready line:\n{log.read_text(errors='replace')}") from None
    finally:
        await _stop(process)


async def _stop(process: anyio.abc.Process) -> None:
    # Closing stdin asks the harness to exit; terminate, then kill, if it does not.
    if process.stdin is not None:
        await process.stdin.aclose()
    with anyio.move_on_after(STOP_TIMEOUT):
        await process.wait()
        return
    process.terminate()
    with anyio.move_on_after(STOP_TIMEOUT):
        await process.wait()
        return
    process.kill()
    await process.wait()


# --------------------------------------------------------------------------- the upstream API


@dataclass(frozen=True)
class Seen:
    """One upstream request: the bearer token it carried and its verified claims (None: refused)."""

    method: str
    path: str
    token: str | None
    claims: dict[str, Any] | None


@dataclass
class CheckingUpstream:
    """The pet API behind the bridge: only tokens the provider issued for ``audience`` get an answer.

    ``together`` holds each request until that many are in flight (bounded), so a test can show
    that calls of different users really overlapped.
    """

    issuer: str
    audience: str = UPSTREAM_AUDIENCE
    seen: list[Seen] = field(default_factory=list)
    together: int = 1
    _keys: dict[str, jwt.PyJWK] = field(default_factory=dict)
    _arrived: int = 0
    _all_here: anyio.Event = field(default_factory=anyio.Event)

    async def _claims(self, token: str) -> dict[str, Any] | None:
        try:
            kid = str(jwt.get_unverified_header(token).get("kid"))
            if kid not in self._keys:
                async with httpx.AsyncClient(timeout=5.0) as client:
                    keys = (await client.get(f"{self.issuer}/jwks")).json()["keys"]
                self._keys = {k["kid"]: jwt.PyJWK(k) for k in keys}
            key = self._keys[kid]
            claims: dict[str, Any] = jwt.decode(
                token, key.key, algorithms=[key.algorithm_name], audience=self.audience, issuer=self.issuer
            )
            return claims
        except (jwt.PyJWTError, KeyError):
            return None

    async def __call__(self, scope: Scope, receive: Callable[[], Awaitable[Any]], send: Callable[..., Any]) -> None:
        if scope["type"] != "http":
            return
        while (await receive()).get("more_body"):
            pass
        headers = dict(scope["headers"])
        kind, _, token = headers.get(b"authorization", b"").decode().partition(" ")
        bearer = token if kind.lower() == "bearer" and token else None
        claims = await self._claims(bearer) if bearer else None
        self.seen.append(Seen(scope["method"], scope["path"], bearer, claims))
        self._arrived += 1
        if self._arrived >= self.together:
            self._all_here.set()
        body: dict[str, Any]
        together = False
        with anyio.move_on_after(10):
            await self._all_here.wait()
            together = True
        public = scope["path"] == "/v1/status"
        if not together:  # the calls did not overlap: fail them, so the test cannot pass by accident
            status, body = 503, {"error": "alone"}
        elif claims is None and not public:
            status, body = 401, {"error": "invalid_token"}
        elif scope["method"] == "POST":
            status, body = 201, {"id": 7, "owner": claims["sub"] if claims else None}
        else:
            status, body = 200, {"pets": [{"id": 1, "name": "Rex"}], "for": claims["sub"] if claims else None}
        payload = json.dumps(body).encode()
        start = {"type": "http.response.start", "status": status, "headers": [(b"content-type", b"application/json")]}
        await send(start)
        await send({"type": "http.response.body", "body": payload})


@asynccontextmanager
async def serving(app: Any, port: int, *, lifespan: Literal["on", "off"] = "off") -> AsyncIterator[None]:
    """``app`` under uvicorn on 127.0.0.1:``port`` in this event loop, until the block ends."""
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan=lifespan)
    server = uvicorn.Server(config)
    async with anyio.create_task_group() as tg:
        tg.start_soon(server.serve)
        try:
            with anyio.fail_after(STARTUP_TIMEOUT):
                while not server.started:
                    await anyio.sleep(0.01)
            yield
        finally:
            server.should_exit = True


def pets_spec(base_url: str, token_url: str) -> dict[str, Any]:
    """Two OAuth-protected operations with different scopes and one public one."""
    oauth = {
        "type": "oauth2",
        "flows": {
            "authorizationCode": {
                "authorizationUrl": token_url.replace("/token", "/auth"),
                "tokenUrl": token_url,
                "scopes": {"pets:read": "read pets", "pets:write": "add pets"},
            }
        },
    }
    ok = {"200": {"description": "ok", "content": {"application/json": {"schema": {"type": "object"}}}}}
    return {
        "openapi": "3.0.3",
        "info": {"title": "Pets", "version": "1"},
        "servers": [{"url": base_url}],
        "components": {"securitySchemes": {"oauth": oauth}},
        "paths": {
            "/pets": {
                "get": {"operationId": "list_pets", "security": [{"oauth": ["pets:read"]}], "responses": ok},
                "post": {
                    "operationId": "create_pet",
                    "security": [{"oauth": ["pets:write"]}],
                    "responses": {"201": ok["200"]},
                },
            },
            "/status": {"get": {"operationId": "status", "security": [], "responses": ok}},
        },
    }
