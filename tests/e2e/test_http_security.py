"""Security of the streamable HTTP transport (security.md P1-P9, test plan rows 15-20).

Most checks run against the ASGI app in-process through ``httpx.ASGITransport``; the ones where
the wire matters (the CLI options, chunked framing, real clients with bearer tokens) run against
a bridge subprocess or an in-process uvicorn on 127.0.0.1.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from mcp.server.lowlevel import Server

from bridge.cli.demo_upstream import DEMO_API_KEY
from bridge.server.transports import http_app
from bridge.serving.assemble import ServeOptions, build_bridge_server, build_registry, build_runtime, load_target
from tests.e2e.conftest import PACKAGE, Upstream, http_bridge

pytestmark = pytest.mark.anyio

BASE = "http://127.0.0.1:8000"
RESOURCE = f"{BASE}/mcp"
STATIC_TOKEN = "static-client-token-0123456789"
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
