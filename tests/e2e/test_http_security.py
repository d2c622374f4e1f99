"""Security of the streamable HTTP transport (security.md P1-P9, test plan rows 15-20).

Most checks run against the ASGI app in-process through ``httpx.ASGITransport``; the ones where
the wire matters (the CLI options, chunked framing, real clients with bearer tokens) run against
a bridge subprocess or an in-process uvicorn on 127.0.0.1.
"""

from __future__ import annotations

import logging
import string
import time
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
import uvicorn
from mcp import Client, MCPError
from mcp.client.streamable_http import streamable_http_client
from mcp.server.lowlevel import Server
from mcp.shared._httpx_utils import create_mcp_http_client

from bridge.client_auth import (
    ClientAuth,
    ClientTokenVerifier,
    default_resource_url,
    mint_hs256_jwt,
    verify_hs256_jwt,
)
from bridge.demo_upstream import DEMO_API_KEY
from bridge.serve import ServeOptions, build_bridge_server, build_registry, build_runtime, load_target
from bridge.transports import http_app
from tests.e2e.conftest import PACKAGE, STARTUP_TIMEOUT, Upstream, free_port, http_bridge

pytestmark = pytest.mark.anyio

BASE = "http://127.0.0.1:8000"
RESOURCE = f"{BASE}/mcp"
STATIC_TOKEN = "static-client-token-0123456789"
JWT_SECRET = b"an HS256 secret of at least 32 bytes!"
MCP_HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "probe", "version": "1"}},
}
MIB = 1024 * 1024


def petstore_server(upstream_url: str = "http://127.0.0.1:9/v1") -> Server:
    catalogue, package_dir = load_target(str(PACKAGE))
    environ = {"PETSTORE_BASE_URL": upstream_url, "PETSTORE_API_KEY": DEMO_API_KEY}
    runtime = build_runtime(catalogue, ServeOptions(), environ=environ)
    return build_bridge_server(catalogue, build_registry(catalogue, runtime, package_dir))


@asynccontextmanager
async def asgi_client(**options: Any) -> AsyncIterator[httpx.AsyncClient]:
    """An httpx client wired to ``http_app(petstore server, **options)`` in-process."""
    server = petstore_server()
    app = http_app(server, **options)
    transport = httpx.ASGITransport(app=app)
    with anyio.fail_after(10):
        async with server.session_manager.run():
            async with httpx.AsyncClient(transport=transport, base_url=BASE) as client:
                yield client


async def initialize(client: httpx.AsyncClient, headers: Mapping[str, str] | None = None) -> httpx.Response:
    return await client.post("/mcp", json=INITIALIZE, headers={**MCP_HEADERS, **(headers or {})})


def jwt(**claims: Any) -> str:
    return mint_hs256_jwt({"aud": RESOURCE, "exp": time.time() + 300, "sub": "alice", **claims}, JWT_SECRET)


def tampered(token: str) -> str:
    """The token with the first character of its signature changed (a whole 6-bit group, never padding)."""
    head, _, signature = token.rpartition(".")
    return f"{head}.{'B' if signature[0] == 'A' else 'A'}{signature[1:]}"


def non_canonical(token: str) -> str:
    """The same signature bytes spelled with a padding bit set in the last base64url character."""
    alphabet = string.ascii_uppercase + string.ascii_lowercase + string.digits + "-_"
    return token[:-1] + alphabet[alphabet.index(token[-1]) ^ 1]


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


# ----------------------------------------------------------------------------- Host and Origin (P1, P2)


@pytest.mark.parametrize(
    "host", ["evil.example.com", "evil.example.com:8000", "127.0.0.1.evil.example:8000", "localhost.evil:8000"]
)
async def test_a_foreign_host_header_is_refused_with_403(host: str) -> None:
    async with asgi_client() as client:
        response = await initialize(client, {"Host": host})
    assert response.status_code == 403
    assert "Host" in response.text


@pytest.mark.parametrize(
    "origin", ["http://evil.example.com", "null", "http://localhost.evil.example:8000", "file://", "ftp://localhost"]
)
async def test_a_foreign_origin_is_refused_with_403(origin: str) -> None:
    async with asgi_client() as client:
        response = await initialize(client, {"Origin": origin})
    assert response.status_code == 403
    assert "Origin" in response.text


@pytest.mark.parametrize("host", ["127.0.0.1:8000", "localhost:8000", "[::1]:8000", "localhost", "LOCALHOST:1"])
async def test_loopback_host_headers_are_accepted(host: str) -> None:
    async with asgi_client() as client:
        response = await initialize(client, {"Host": host})
    assert response.status_code == 200


@pytest.mark.parametrize(
    "origin", [None, "http://localhost:3000", "http://127.0.0.1:8000", "https://[::1]", "https://app.example.com/"]
)
async def test_loopback_configured_or_absent_origins_are_accepted(origin: str | None) -> None:
    async with asgi_client(allowed_origins=["https://app.example.com"]) as client:
        response = await initialize(client, {"Origin": origin} if origin else {})
    assert response.status_code == 200
    assert "access-control-allow-origin" not in response.headers


async def test_an_allowed_host_admits_a_proxy_hostname_but_nothing_else() -> None:
    async with asgi_client(host="0.0.0.0", allowed_hosts=["bridge.example.com"]) as client:
        proxied = await initialize(client, {"Host": "bridge.example.com", "Origin": "http://localhost:5173"})
        with_port = await initialize(client, {"Host": "bridge.example.com:443"})
        foreign = await initialize(client, {"Host": "other.example.com"})
        foreign_origin = await initialize(
            client, {"Host": "bridge.example.com", "Origin": "https://bridge.example.com"}
        )
    assert (proxied.status_code, with_port.status_code) == (200, 200)
    assert (foreign.status_code, foreign_origin.status_code) == (403, 403)


async def test_the_serve_command_applies_allowed_host_on_the_wire(upstream: Upstream, tmp_path: Path) -> None:
    async with http_bridge(upstream, tmp_path, "--allowed-host", "bridge.example.com") as bridge:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{bridge.port}", timeout=10) as client:
            proxied = await initialize(client, {"Host": "bridge.example.com"})
            foreign = await initialize(client, {"Host": "evil.example.com"})
            evil_origin = await initialize(client, {"Origin": "http://evil.example.com"})
            local = await initialize(client)
    assert proxied.status_code == 200
    assert foreign.status_code == 403
    assert evil_origin.status_code == 403
    assert local.status_code == 200


# ----------------------------------------------------------------------------- binding (P3)


def test_binding_all_interfaces_logs_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="bridge"):
        http_app(petstore_server(), host="0.0.0.0")
    assert any("all interfaces" in r.getMessage() and "not authenticated" in r.getMessage() for r in caplog.records)


def test_binding_loopback_logs_no_warning(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="bridge"):
        http_app(petstore_server())
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == []


# ----------------------------------------------------------------------------- requests (P5, P6)


async def test_a_body_over_the_cap_is_refused_with_413() -> None:
    async def chunks() -> AsyncIterator[bytes]:
        for _ in range(3):
            yield b" " * (MIB // 2)

    async with asgi_client(max_body_bytes=MIB) as client:
        declared = await client.post("/mcp", content=b" " * (MIB + 1), headers=MCP_HEADERS)
        chunked = await client.post("/mcp", content=chunks(), headers=MCP_HEADERS)
        at_cap = await client.post("/mcp", content=b" " * (MIB - 100) + b"{}", headers=MCP_HEADERS)
    assert declared.status_code == 413
    assert chunked.status_code == 413
    assert "transfer-encoding" in chunked.request.headers and "content-length" not in chunked.request.headers
    assert at_cap.status_code != 413


async def test_the_serve_command_refuses_chunked_and_declared_big_bodies_on_the_wire(
    upstream: Upstream, tmp_path: Path
) -> None:
    async def chunks() -> AsyncIterator[bytes]:
        for _ in range(5):
            yield b" " * MIB

    async with http_bridge(upstream, tmp_path) as bridge:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{bridge.port}", timeout=10) as client:
            chunked = await client.post("/mcp", content=chunks(), headers=MCP_HEADERS)
            declared = await client.post("/mcp", content=b" " * (5 * MIB), headers=MCP_HEADERS)
            still_serving = await initialize(client)
    assert chunked.status_code == 413
    assert declared.status_code == 413
    assert still_serving.status_code == 200


@pytest.mark.parametrize("content_type", ["text/plain", "application/x-www-form-urlencoded", None])
async def test_a_post_that_is_not_json_is_refused_with_400(content_type: str | None) -> None:
    headers = {"Accept": MCP_HEADERS["Accept"]}
    if content_type is not None:
        headers["Content-Type"] = content_type
    async with asgi_client() as client:
        response = await client.post("/mcp", content=b'{"jsonrpc": "2.0"}', headers=headers)
    assert response.status_code == 400


async def test_an_unsupported_protocol_version_header_is_refused_with_400() -> None:
    async with asgi_client() as client:
        session = (await initialize(client)).headers["mcp-session-id"]
        response = await client.post(
            "/mcp",
            json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
            headers={**MCP_HEADERS, "Mcp-Session-Id": session, "MCP-Protocol-Version": "1999-01-01"},
        )
    assert response.status_code == 400


# ----------------------------------------------------------------------------- sessions (P7)


async def test_open_sessions_are_capped_and_the_least_recently_used_idle_one_makes_room() -> None:
    listed = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
    async with asgi_client(max_sessions=2) as client:
        first, second, third = [await initialize(client) for _ in range(3)]
        ids = [r.headers["mcp-session-id"] for r in (first, second, third)]
        evicted = await client.post("/mcp", json=listed, headers={**MCP_HEADERS, "Mcp-Session-Id": ids[0]})
        kept = await client.post("/mcp", json=listed, headers={**MCP_HEADERS, "Mcp-Session-Id": ids[2]})
    assert (first.status_code, second.status_code, third.status_code) == (200, 200, 200)
    assert evicted.status_code == 404  # the oldest idle session was closed for the newcomer
    assert kept.status_code == 200
    assert len(set(ids)) == 3
    assert all(len(i) >= 32 and all(0x21 <= ord(c) <= 0x7E for c in i) for i in ids)


async def test_an_unknown_or_ended_session_is_answered_with_404() -> None:
    async with asgi_client() as client:
        session = (await initialize(client)).headers["mcp-session-id"]
        await client.delete("/mcp", headers={"Mcp-Session-Id": session})
        listed = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
        ended = await client.post("/mcp", json=listed, headers={**MCP_HEADERS, "Mcp-Session-Id": session})
        unknown = await client.post("/mcp", json=listed, headers={**MCP_HEADERS, "Mcp-Session-Id": "nope"})
    assert ended.status_code == 404
    assert unknown.status_code == 404


# ----------------------------------------------------------------------------- client authentication (P9)

AUTH = ClientAuth(resource_url=RESOURCE, tokens=(STATIC_TOKEN,), jwt_secret=JWT_SECRET)


async def test_without_a_bearer_token_the_client_gets_401_pointing_at_the_resource_metadata() -> None:
    async with asgi_client(auth=AUTH) as client:
        response = await initialize(client)
        metadata = await client.get("/.well-known/oauth-protected-resource/mcp")
    assert response.status_code == 401
    challenge = response.headers["www-authenticate"]
    assert challenge.startswith("Bearer ")
    assert 'resource_metadata="http://127.0.0.1:8000/.well-known/oauth-protected-resource/mcp"' in challenge
    assert metadata.status_code == 200
    assert metadata.json()["resource"] == RESOURCE


@pytest.mark.parametrize(
    "token",
    [
        pytest.param(STATIC_TOKEN, id="static"),
        pytest.param(jwt(), id="jwt"),
        pytest.param(jwt(aud=["https://other.example/mcp", RESOURCE + "/"]), id="jwt-aud-list"),
        pytest.param(jwt(aud="HTTP://127.0.0.1:8000/mcp"), id="jwt-aud-case"),
    ],
)
async def test_a_valid_bearer_token_is_accepted(token: str) -> None:
    async with asgi_client(auth=AUTH) as client:
        response = await initialize(client, bearer(token))
    assert response.status_code == 200


@pytest.mark.parametrize(
    "token",
    [
        pytest.param(STATIC_TOKEN + "x", id="wrong-static"),
        pytest.param(STATIC_TOKEN[:-1], id="static-prefix"),
        pytest.param(jwt(aud="http://127.0.0.1:8001/mcp"), id="wrong-audience"),
        pytest.param(jwt(aud="http://127.0.0.1:8000/other"), id="wrong-path"),
        pytest.param(jwt(aud=None), id="no-audience"),
        pytest.param(jwt(exp=time.time() - 5), id="expired"),
        pytest.param(jwt(exp=None), id="no-exp"),
        pytest.param(jwt(exp="soon"), id="exp-not-a-number"),
        pytest.param(jwt(exp=float("nan")), id="exp-nan"),
        pytest.param(jwt(exp=float("inf")), id="exp-infinite"),
        pytest.param(jwt(exp=True), id="exp-boolean"),
        pytest.param(jwt(nbf=time.time() + 3600), id="not-yet-valid"),
        pytest.param(
            mint_hs256_jwt({"aud": RESOURCE, "exp": time.time() + 300}, b"another secret of at least 32 bytes"),
            id="wrong-key",
        ),
        pytest.param(tampered(jwt()), id="tampered-signature"),
        pytest.param(".".join(jwt().split(".")[:2]) + ".", id="no-signature"),
        pytest.param(non_canonical(jwt()), id="non-canonical-signature-padding"),
        pytest.param("eyJhbGciOiJub25lIn0." + jwt().split(".")[1] + ".", id="alg-none"),
        pytest.param("not-a-jwt", id="garbage"),
    ],
)
async def test_a_bad_expired_or_foreign_bearer_token_is_refused_with_401(token: str) -> None:
    async with asgi_client(auth=AUTH) as client:
        response = await initialize(client, bearer(token))
    assert response.status_code == 401
    assert 'error="invalid_token"' in response.headers["www-authenticate"]


async def test_a_token_in_the_query_string_is_not_accepted() -> None:
    async with asgi_client(auth=AUTH) as client:
        response = await client.post(f"/mcp?access_token={STATIC_TOKEN}", json=INITIALIZE, headers=MCP_HEADERS)
    assert response.status_code == 401


async def test_a_jwt_without_the_required_scope_is_refused_with_403() -> None:
    auth = ClientAuth(resource_url=RESOURCE, jwt_secret=JWT_SECRET, required_scopes=("pets:read",))
    async with asgi_client(auth=auth) as client:
        missing = await initialize(client, bearer(jwt(scope="pets:write")))
        present = await initialize(client, bearer(jwt(scope="pets:write pets:read")))
    assert missing.status_code == 403
    assert 'error="insufficient_scope"' in missing.headers["www-authenticate"]
    assert present.status_code == 200


async def test_the_jwt_issuer_is_checked_when_configured() -> None:
    auth = ClientAuth(resource_url=RESOURCE, jwt_secret=JWT_SECRET, jwt_issuer="https://issuer.example")
    async with asgi_client(auth=auth) as client:
        right = await initialize(client, bearer(jwt(iss="https://issuer.example")))
        wrong = await initialize(client, bearer(jwt(iss="https://other.example")))
        metadata = await client.get("/.well-known/oauth-protected-resource/mcp")
    assert (right.status_code, wrong.status_code) == (200, 401)
    assert metadata.json()["authorization_servers"] == ["https://issuer.example"]


async def test_a_session_cannot_be_used_with_another_users_token() -> None:
    async with asgi_client(auth=AUTH) as client:
        session = (await initialize(client, bearer(jwt(sub="alice")))).headers["mcp-session-id"]
        listed = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
        headers = {**MCP_HEADERS, "Mcp-Session-Id": session, "MCP-Protocol-Version": "2025-11-25"}
        other = await client.post("/mcp", json=listed, headers={**headers, **bearer(jwt(sub="bob"))})
        same = await client.post("/mcp", json=listed, headers={**headers, **bearer(jwt(sub="alice"))})
    assert other.status_code == 404  # answered as if the session did not exist
    assert same.status_code == 200


async def test_the_official_client_connects_with_a_bearer_token_over_uvicorn() -> None:
    port = free_port()
    resource = default_resource_url("127.0.0.1", port)
    secret = JWT_SECRET
    server = petstore_server()
    app = http_app(server, auth=ClientAuth(resource_url=resource, jwt_secret=secret))
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on")
    uv = uvicorn.Server(config)
    token = mint_hs256_jwt({"aud": resource, "exp": time.time() + 300, "client_id": "e2e"}, secret)
    async with anyio.create_task_group() as tg:
        tg.start_soon(uv.serve)
        try:
            with anyio.fail_after(STARTUP_TIMEOUT):
                while not uv.started:
                    await anyio.sleep(0.01)
                http = create_mcp_http_client(headers=bearer(token))
                async with http, Client(streamable_http_client(resource, http_client=http), mode="legacy") as client:
                    listed = await client.list_tools()
                    assert len(listed.tools) == 6
                refused = create_mcp_http_client(headers=bearer("wrong-token-0123456789"))
                with pytest.RaisesGroup(MCPError, flatten_subgroups=True):
                    async with refused, Client(streamable_http_client(resource, http_client=refused)) as client:
                        await client.list_tools()
        finally:
            uv.should_exit = True


def test_client_auth_needs_a_credential_and_strong_secrets() -> None:
    with pytest.raises(ValueError, match="static token or a JWT secret"):
        ClientAuth(resource_url=RESOURCE)
    with pytest.raises(ValueError, match="at least 32 bytes"):
        ClientAuth(resource_url=RESOURCE, jwt_secret=b"short")
    with pytest.raises(ValueError, match="at least 16"):
        ClientAuth(resource_url=RESOURCE, tokens=("short",))
    with pytest.raises(ValueError, match="at least 16"):
        ClientAuth(resource_url=RESOURCE, tokens=("has spaces in the token value",))
    with pytest.raises(ValueError, match="absolute http"):
        ClientAuth(resource_url="/mcp", tokens=(STATIC_TOKEN,))
    assert STATIC_TOKEN not in repr(AUTH)
    assert repr(JWT_SECRET) not in repr(AUTH)


def test_client_auth_reads_its_secrets_from_the_environment() -> None:
    environ = {"BRIDGE_TOKEN": STATIC_TOKEN, "BRIDGE_JWT_SECRET": JWT_SECRET.decode()}
    auth = ClientAuth.from_env(
        environ, resource_url=RESOURCE, token_env="BRIDGE_TOKEN", jwt_secret_env="BRIDGE_JWT_SECRET"
    )
    assert auth.tokens == (STATIC_TOKEN,)
    assert auth.jwt_secret == JWT_SECRET
    with pytest.raises(ValueError, match="BRIDGE_MISSING is not set"):
        ClientAuth.from_env(environ, resource_url=RESOURCE, token_env="BRIDGE_MISSING")


def test_default_resource_url_names_the_bound_address() -> None:
    assert default_resource_url("127.0.0.1", 8000) == "http://127.0.0.1:8000/mcp"
    assert default_resource_url("0.0.0.0", 8080, "/x") == "http://127.0.0.1:8080/x"
    assert default_resource_url("::1", 9000) == "http://[::1]:9000/mcp"


def test_hs256_verification_reports_the_matching_audience_and_claims() -> None:
    token = jwt(aud=["https://a.example", RESOURCE], scope="a b", iss="me")
    verified = verify_hs256_jwt(token, JWT_SECRET, audience=RESOURCE, issuer="me")
    assert verified is not None
    claims, audience = verified
    assert audience == RESOURCE
    assert claims["scope"] == "a b"
    assert verify_hs256_jwt(token, JWT_SECRET, audience=RESOURCE, now=claims["exp"]) is None


async def test_the_token_verifier_maps_jwt_claims_to_an_access_token() -> None:
    verifier = ClientTokenVerifier(AUTH)
    token = jwt(scope="pets:read pets:write", client_id="cli", iss="https://issuer.example", sub="alice")
    access = await verifier.verify_token(token)
    assert access is not None
    assert (access.client_id, access.subject, access.resource) == ("cli", "alice", RESOURCE)
    assert access.scopes == ["pets:read", "pets:write"]
    assert access.claims == {"iss": "https://issuer.example"}
    static = await verifier.verify_token(STATIC_TOKEN)
    assert static is not None and static.resource == RESOURCE
    assert await verifier.verify_token("") is None
    assert await verifier.verify_token("x" * 10_000) is None


async def test_no_cors_headers_are_sent_even_to_a_preflight() -> None:
    preflight = {
        "Origin": "http://localhost:3000",
        "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "content-type, mcp-session-id",
    }
    async with asgi_client() as client:
        options = await client.options("/mcp", headers=preflight)
        post = await initialize(client, {"Origin": "http://localhost:3000"})
    for response in (options, post):
        assert not [h for h in response.headers if h.lower().startswith("access-control-")]
