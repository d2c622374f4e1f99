"""Per-user identity end to end, in-process: scope-aware tools, step-up, and per-user upstream
tokens by token exchange (never passthrough), with per-user limits and an audit line per call.

The MCP side is the real bridge app (``http_app``) driven over streamable HTTP with the official
client's wire format; the authorization server and the upstream are fakes at the transport
(``tests/identity.py``, ``tests/bridge/fake_upstream.py``). The same flows against the real
``oidc-provider`` are in ``tests/e2e/test_identity_oidc.py``.
"""

from __future__ import annotations

import logging
import unicodedata
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx
import pytest

from bridge.identity.auth_options import ExchangeOptions
from bridge.identity.client_auth import ClientAuth
from bridge.serving.assemble import ServeOptions, build_bridge_server, build_http_app, build_registry, build_runtime
from tests.bridge.fake_upstream import FakeUpstream, Recorded, Reply, catalogue_from_spec, entry_from_spec
from tests.identity import BRIDGE_CLIENT, ISSUER, JWKS_URL, TOKEN_URL, FakeAuthorizationServer

pytestmark = pytest.mark.anyio

BASE = "http://127.0.0.1:8000"
RESOURCE = f"{BASE}/mcp"
UPSTREAM = "http://upstream.test/v1"
STATIC = "team-static-token-0123456789"
HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
OAUTH = {
    "type": "oauth2",
    "flows": {
        "authorizationCode": {
            "authorizationUrl": "https://as.test/auth",
            "tokenUrl": TOKEN_URL,
            "scopes": {"pets:read": "", "pets:write": ""},
        }
    },
}
SPEC: dict[str, Any] = {
    "openapi": "3.0.3",
    "info": {"title": "Pets", "version": "1"},
    "servers": [{"url": UPSTREAM}],
    "components": {"securitySchemes": {"oauth": OAUTH, "key": {"type": "apiKey", "in": "header", "name": "X-Key"}}},
    "paths": {
        "/pets": {
            "get": {
                "operationId": "list_pets",
                "security": [{"oauth": ["pets:read"]}],
                "responses": {"200": {"description": "ok"}},
            },
            "post": {
                "operationId": "create_pet",
                "security": [{"oauth": ["pets:write"]}],
                "responses": {"201": {"description": "ok"}},
            },
        },
        "/status": {
            "get": {"operationId": "status", "security": [{"key": []}], "responses": {"200": {"description": "ok"}}}
        },
        "/me": {  # any signed-in user, no particular scope
            "get": {"operationId": "whoami", "security": [{"oauth": []}], "responses": {"200": {"description": "ok"}}}
        },
    },
}
OPERATIONS = (("/pets", "GET"), ("/pets", "POST"), ("/status", "GET"))


def catalogue(operations: tuple[tuple[str, str], ...] = OPERATIONS) -> Any:
    entries = tuple(entry_from_spec(SPEC, m, p) for p, m in operations)
    return catalogue_from_spec(SPEC, entries, prefix="PETS")


class Bridge:
    def __init__(self, client: httpx.AsyncClient, upstream: FakeUpstream, auth_server: FakeAuthorizationServer) -> None:
        self.client, self.upstream, self.auth_server = client, upstream, auth_server
        self._ids = iter(range(2, 10_000))

    async def session(self, token: str) -> dict[str, str]:
        init = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"},
            },
        }
        headers = {**HEADERS, "Authorization": f"Bearer {token}"}
        opened = await self.client.post("/mcp", json=init, headers=headers)
        assert opened.status_code == 200, opened.text
        headers = {**headers, "Mcp-Session-Id": opened.headers["mcp-session-id"], "MCP-Protocol-Version": "2025-11-25"}
        await self.client.post("/mcp", json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers)
        return headers

    async def rpc(self, headers: dict[str, str], method: str, params: dict[str, Any]) -> httpx.Response:
        return await self.client.post(
            "/mcp", json={"jsonrpc": "2.0", "id": next(self._ids), "method": method, "params": params}, headers=headers
        )

    @staticmethod
    def result(response: httpx.Response) -> dict[str, Any]:
        import json

        line = next(line for line in response.text.splitlines() if line.startswith("data: "))
        return json.loads(line[6:])["result"]


@asynccontextmanager
async def bridge(operations: tuple[tuple[str, str], ...] = OPERATIONS, **serve: Any) -> AsyncIterator[Bridge]:
    auth_server = FakeAuthorizationServer(audience=RESOURCE)
    upstream = FakeUpstream(SPEC)

    def answer(recorded: Recorded) -> Reply:
        return Reply(200, b'{"ok": true}', "application/json")

    upstream.handler(answer)
    auth = ClientAuth(
        resource_url=RESOURCE, issuer=ISSUER, jwks_url=JWKS_URL, tokens=(STATIC,), transport=auth_server.transport()
    )
    options = ServeOptions(
        transport="http",
        auth=auth,
        exchange=ExchangeOptions(TOKEN_URL, *BRIDGE_CLIENT, audience=UPSTREAM),
        **serve,
    )
    cat = catalogue(operations)
    runtime = build_runtime(
        cat,
        options,
        environ={"PETS_KEY_VALUE": "operator-key-0123456789"},
        transport=upstream.transport(),
        exchange_transport=auth_server.transport(),
    )
    registry = build_registry(cat, runtime, None)
    server = build_bridge_server(cat, registry, mode=options.mode)
    app = build_http_app(server, registry, options)
    with anyio.fail_after(20):
        async with server.session_manager.run(), runtime:
            async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=BASE) as client:
                yield Bridge(client, upstream, auth_server)


async def test_each_user_sees_only_the_tools_their_scopes_allow() -> None:
    async with bridge() as b:
        reader = await b.session(b.auth_server.token(sub="ann", scope="pets:read"))
        writer = await b.session(b.auth_server.token(sub="bob", scope="pets:read pets:write"))
        seen_reader = [t["name"] for t in b.result(await b.rpc(reader, "tools/list", {}))["tools"]]
        seen_writer = [t["name"] for t in b.result(await b.rpc(writer, "tools/list", {}))["tools"]]
    assert seen_reader == ["list_pets", "status"]
    assert seen_writer == ["list_pets", "create_pet", "status"]


async def test_a_call_beyond_the_tokens_scopes_gets_the_step_up_challenge_and_sends_nothing() -> None:
    async with bridge() as b:
        reader = await b.session(b.auth_server.token(sub="ann", scope="pets:read"))
        refused = await b.rpc(reader, "tools/call", {"name": "create_pet", "arguments": {}})
        metadata = await b.client.get("/.well-known/oauth-protected-resource/mcp")
    assert refused.status_code == 403
    challenge = refused.headers["www-authenticate"]
    assert 'error="insufficient_scope"' in challenge and 'scope="pets:write"' in challenge
    assert 'resource_metadata="http://127.0.0.1:8000/.well-known/oauth-protected-resource/mcp"' in challenge
    assert b.upstream.requests == []
    assert metadata.json()["scopes_supported"] == ["pets:read", "pets:write"]


async def test_discovery_mode_applies_the_same_filter() -> None:
    async with bridge(mode="discovery") as b:
        reader = await b.session(b.auth_server.token(sub="ann", scope="pets:read"))
        found = b.result(
            await b.rpc(reader, "tools/call", {"name": "search_operations", "arguments": {"query": "pet"}})
        )
        refused = await b.rpc(
            reader, "tools/call", {"name": "call_operation", "arguments": {"name": "create_pet", "arguments": {}}}
        )
    names = [op["name"] for op in found["structuredContent"]["operations"]]
    assert "create_pet" not in names and "list_pets" in names
    assert refused.status_code == 403


async def test_two_users_at_once_each_reach_the_upstream_with_their_own_exchanged_token() -> None:
    async with bridge() as b:
        tokens = {user: b.auth_server.token(sub=user, scope="pets:read") for user in ("ann", "bob")}
        sessions = {user: await b.session(token) for user, token in tokens.items()}
        results: dict[str, Any] = {}

        async def call(user: str) -> None:
            results[user] = b.result(await b.rpc(sessions[user], "tools/call", {"name": "list_pets", "arguments": {}}))

        async with anyio.create_task_group() as tg:
            for user in sessions:
                tg.start_soon(call, user)
    assert all(not r.get("isError") for r in results.values())
    seen = []
    for recorded in b.upstream.requests:
        sent = dict((k.lower(), v) for k, v in recorded.headers)["authorization"].removeprefix("Bearer ")
        assert sent not in tokens.values()  # never the MCP token
        claims = b.auth_server.verify(sent, UPSTREAM)  # exchanged for the upstream's audience
        assert claims["scope"] == "pets:read"
        seen.append(claims["sub"])
    assert sorted(seen) == ["ann", "bob"]


async def test_exchanged_tokens_are_cached_per_user_and_operations_without_oauth_use_the_operators_key() -> None:
    async with bridge() as b:
        ann = await b.session(b.auth_server.token(sub="ann", scope="pets:read"))
        for _ in range(20):
            assert not b.result(await b.rpc(ann, "tools/call", {"name": "list_pets", "arguments": {}})).get("isError")
        status = b.result(await b.rpc(ann, "tools/call", {"name": "status", "arguments": {}}))
    assert len(b.auth_server.exchanges) == 1  # 20 calls, one exchange
    assert not status.get("isError")
    status_request = b.upstream.requests[-1]
    assert ("x-key", "operator-key-0123456789") in [(k.lower(), v) for k, v in status_request.headers]
    assert "authorization" not in {k.lower() for k, _ in status_request.headers}


async def test_an_exchanged_token_the_upstream_refuses_is_exchanged_again_on_the_next_call() -> None:
    async with bridge() as b:
        answers = iter([Reply(401, b'{"error": "invalid_token"}', "application/json")])
        b.upstream.handler(lambda recorded: next(answers, Reply(200, b"{}", "application/json")))
        ann = await b.session(b.auth_server.token(sub="ann", scope="pets:read"))
        refused = b.result(await b.rpc(ann, "tools/call", {"name": "list_pets", "arguments": {}}))
        for _ in range(3):
            assert not b.result(await b.rpc(ann, "tools/call", {"name": "list_pets", "arguments": {}})).get("isError")
    assert refused["isError"] is True
    assert len(b.auth_server.exchanges) == 2  # the refused token was dropped, the next one kept
    sent = [dict((k.lower(), v) for k, v in r.headers)["authorization"] for r in b.upstream.requests]
    assert sent[0] != sent[1] and sent[1:] == [sent[1]] * 3


async def test_a_static_token_is_never_exchanged_and_cannot_act_as_a_user(caplog: pytest.LogCaptureFixture) -> None:
    async with bridge((*OPERATIONS, ("/me", "GET"))) as b:
        team = await b.session(STATIC)
        as_user = b.result(await b.rpc(team, "tools/call", {"name": "whoami", "arguments": {}}))
        operator = b.result(await b.rpc(team, "tools/call", {"name": "status", "arguments": {}}))
        scoped = await b.rpc(team, "tools/call", {"name": "list_pets", "arguments": {}})
    assert as_user["isError"] is True and "no user identity" in as_user["content"][0]["text"]
    assert b.auth_server.exchanges == []  # the shared secret never left the bridge
    assert not operator.get("isError")  # operations with the operator's own key still work
    assert scoped.status_code == 403  # and a static token carries no scope
    assert [r.raw_path for r in b.upstream.requests] == ["/v1/status"]
    assert STATIC not in caplog.text


async def test_a_failed_exchange_is_a_tool_error_that_shows_no_token(caplog: pytest.LogCaptureFixture) -> None:
    async with bridge() as b:
        b.auth_server.exchange_status = 400
        token = b.auth_server.token(sub="ann", scope="pets:read")
        ann = await b.session(token)
        result = b.result(await b.rpc(ann, "tools/call", {"name": "list_pets", "arguments": {}}))
    assert result["isError"] is True
    text = result["content"][0]["text"]
    assert "token-exchange endpoint answered HTTP 400" in text
    assert token not in text and token not in caplog.text
    assert b.upstream.requests == []


async def test_every_call_leaves_one_audit_line_without_tokens_or_arguments(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="bridge.audit")
    async with bridge() as b:
        token = b.auth_server.token(sub="ann", client_id="cli-7", scope="pets:read")
        ann = await b.session(token)
        await b.rpc(ann, "tools/call", {"name": "list_pets", "arguments": {}})
    lines = [r.getMessage() for r in caplog.records if r.name == "bridge.audit"]
    assert len(lines) == 1
    assert lines[0].startswith("call subject=ann client=cli-7 tool=list_pets method=GET path=/pets status=200 ms=")
    assert token not in caplog.text


AUDIT_KEYS = ["subject", "client", "tool", "method", "path", "status", "ms"]
BLANK_LETTERS = "\u115f\u1160\u3164\uffa0\u2800"


@pytest.mark.parametrize(
    "subject",
    [
        "ann status=200 subject=root",
        "ann\ncall subject=root client=x tool=list_pets method=GET path=/pets status=200 ms=1",
        "ann\r\n\tbob",
        "\u2028ann\u0085\x1b[31m",
        "x" * 5000,
        "",
        "eve\u3164tool=create_pet",  # a Hangul filler: a letter that shows as a space
        "eve\u2800status=200\uffa0x\u115f\u1160",  # Braille blank, halfwidth and jamo fillers
        "eve\u200btool=x\u2060\ufeff\u00ad\u180e\u200e\u202e",  # format characters (bidi overrides too)
        "eve\u0301\u034f\u20dd\ue000\U000e0041",  # combining marks, private use, tags
    ],
    ids=[
        "spaces",
        "newline-forged-line",
        "crlf-tab",
        "unicode-separators-and-escape",
        "huge",
        "empty",
        "hangul-filler",
        "other-blank-letters",
        "format-characters",
        "marks-private-tags",
    ],
)
async def test_an_audit_line_cannot_be_forged_or_bloated_by_a_claim(
    caplog: pytest.LogCaptureFixture, subject: str
) -> None:
    caplog.set_level(logging.INFO, logger="bridge.audit")
    async with bridge() as b:
        ann = await b.session(b.auth_server.token(sub=subject, client_id="cli 7\nx", scope="pets:read"))
        await b.rpc(ann, "tools/call", {"name": "list_pets", "arguments": {}})
    [line] = [r.getMessage() for r in caplog.records if r.name == "bridge.audit"]
    assert line.isprintable() and len(line) < 600
    # Nothing in it looks blank or is invisible but the spaces between fields.
    assert all(c == " " or (unicodedata.category(c)[0] in "LNPS" and c not in BLANK_LETTERS) for c in line), line
    words = line.split(" ")
    assert words[0] == "call"
    fields = dict(word.split("=", 1) for word in words[1:])
    assert list(fields) == AUDIT_KEYS
    assert fields["tool"] == "list_pets" and fields["path"] == "/pets" and fields["status"] == "200"


async def test_one_user_cannot_hold_more_than_their_share_of_upstream_calls() -> None:
    async with bridge(max_calls_per_user=2) as b:
        release = anyio.Event()

        async def slow(recorded: Recorded) -> Reply:
            await release.wait()
            return Reply(200, b"{}", "application/json")

        b.upstream.handler(slow)
        ann = await b.session(b.auth_server.token(sub="ann", scope="pets:read"))
        bob = await b.session(b.auth_server.token(sub="bob", scope="pets:read"))
        results: list[Any] = []

        async def call(headers: dict[str, str]) -> None:
            results.append(b.result(await b.rpc(headers, "tools/call", {"name": "list_pets", "arguments": {}})))

        async with anyio.create_task_group() as tg:
            for _ in range(2):
                tg.start_soon(call, ann)
            await anyio.wait_all_tasks_blocked()
            third = b.result(await b.rpc(ann, "tools/call", {"name": "list_pets", "arguments": {}}))
            tg.start_soon(call, bob)
            await anyio.wait_all_tasks_blocked()
            release.set()
    assert third["isError"] is True and "calls in flight" in third["content"][0]["text"]
    assert [r.get("isError") for r in results] == [False, False, False]  # bob was not held back by ann


async def test_a_filtered_tool_list_on_a_2026_connection_is_marked_private() -> None:
    """tools/list differs per caller, so a 2026-07-28 answer must say cacheScope: private."""
    from mcp import Client
    from mcp.server.auth.middleware.auth_context import auth_context_var
    from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
    from mcp.server.auth.provider import AccessToken
    from mcp_types.version import MODERN_PROTOCOL_VERSIONS

    from bridge.calls.http_tools import tools_from_catalogue
    from bridge.calls.runtime import HttpRuntime
    from bridge.server.handlers import build_server
    from bridge.tools.registry import ToolRegistry

    cat = catalogue()
    registry = ToolRegistry(tools_from_catalogue(cat, HttpRuntime.create(cat, environ={})))
    seen: list[tuple[str, Any]] = []

    async def spy(ctx: Any, call_next: Any) -> Any:
        result = await call_next(ctx)
        if ctx.method == "tools/list":
            seen.append((ctx.protocol_version, result))
        return result

    server = build_server(registry, name="s", version="1")
    server.middleware.insert(0, spy)
    reader = AccessToken(token="t" * 20, client_id="c", scopes=["pets:read"], subject="ann")
    token = auth_context_var.set(AuthenticatedUser(reader))
    try:
        with anyio.fail_after(10):
            async with Client(server, mode="auto") as client:  # type: ignore[arg-type]
                listed = await client.list_tools(cache_mode="bypass")
    finally:
        auth_context_var.reset(token)
    assert [t.name for t in listed.tools] == ["list_pets", "status"]
    version, answer = seen[-1]
    assert version in MODERN_PROTOCOL_VERSIONS
    assert answer["cacheScope"] == "private"
