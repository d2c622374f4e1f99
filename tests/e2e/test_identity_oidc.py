"""Per-user identity end to end against a real authorization server (npm ``oidc-provider``).

Every test runs the real provider (``tests/oidc.py``), an upstream on loopback that verifies each
bearer token against the provider's JWKS, and ``mcp-bridge serve SPEC --transport http`` as a
subprocess configured with the flags an operator would use. Users get their tokens the way real
MCP clients do (client credentials; authorization code + PKCE through the login and consent
forms) and call the bridge with the official Python and TypeScript SDK clients.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx
import jwt
import pytest
from mcp import Client
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthClientMetadata, OAuthToken

from bridge.cli.demo_upstream import free_port
from bridge.identity.auth_options import ExchangeOptions
from bridge.identity.client_auth import ClientAuth, ClientTokenVerifier
from bridge.serving.assemble import ServeOptions, build_bridge_server, build_http_app, build_registry, build_runtime
from tests.bridge.fake_upstream import catalogue_from_spec, entry_from_spec
from tests.e2e.conftest import ROOT, STARTUP_TIMEOUT, port_accepts, stop_process, subprocess_env
from tests.e2e.test_http_security import INITIALIZE, MCP_HEADERS, bearer
from tests.e2e.test_ts_client import run_ts_client, ts_client  # noqa: F401  (ts_client is a fixture)
from tests.oidc import (
    APP_CLIENT,
    BRIDGE_CLIENT,
    OTHER_RESOURCE,
    REDIRECT_URI,
    UPSTREAM_AUDIENCE,
    CheckingUpstream,
    OidcProvider,
    pets_spec,
    running_provider,
    serving,
    sign_in,
)

pytestmark = [pytest.mark.anyio, pytest.mark.node]

READ, WRITE = "pets:read", "pets:read pets:write"


@dataclass
class World:
    provider: OidcProvider
    upstream: CheckingUpstream
    url: str  # the bridge's MCP endpoint, also the resource its tokens are for
    stderr: Path

    def log(self) -> str:
        return self.stderr.read_text(encoding="utf-8", errors="replace")


def serve_flags(provider: OidcProvider) -> list[str]:
    """What an operator passes to use this provider (docs/identity.md)."""
    return [
        "--auth-issuer",
        provider.issuer,
        "--auth-jwks-url",
        provider.jwks_url,
        "--token-exchange-url",
        provider.token_url,
        "--token-exchange-audience",
        UPSTREAM_AUDIENCE,
        "--auth-client-id-env",
        "BRIDGE_CLIENT_ID",
        "--auth-client-secret-env",
        "BRIDGE_CLIENT_SECRET",
    ]


@asynccontextmanager
async def bridge_process(
    spec: Path, provider: OidcProvider, stderr_path: Path, extra: tuple[str, ...] = ()
) -> AsyncIterator[int]:
    env = subprocess_env({"BRIDGE_CLIENT_ID": BRIDGE_CLIENT[0], "BRIDGE_CLIENT_SECRET": BRIDGE_CLIENT[1]})
    for _attempt in range(3):  # a free port can be taken between choosing it and binding it
        port = free_port()
        command = [sys.executable, "-m", "bridge", "serve", str(spec), "--transport", "http", "--port", str(port)]
        with stderr_path.open("wb") as stderr:
            process = subprocess.Popen(
                [*command, *serve_flags(provider), *extra],
                cwd=ROOT,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=stderr,
                stderr=stderr,
            )
        try:
            with anyio.fail_after(STARTUP_TIMEOUT):
                while not await anyio.to_thread.run_sync(port_accepts, port):
                    if process.poll() is not None:
                        break
                    await anyio.sleep(0.05)
            if process.poll() is None:
                yield port
                return
            output = stderr_path.read_text(errors="replace")
            if "address already in use" not in output.lower():
                raise RuntimeError(f"bridge exited with {process.returncode}:\n{output}")
        finally:
            await anyio.to_thread.run_sync(stop_process, process)
    raise RuntimeError("no free port for the bridge after 3 attempts")


@asynccontextmanager
async def world(tmp_path: Path, *flags: str, together: int = 1) -> AsyncIterator[World]:
    """Provider, upstream and ``serve`` with ``serve_flags`` and ``flags`` (``{issuer}`` is filled in)."""
    async with running_provider(tmp_path / "oidc.log") as provider:
        upstream = CheckingUpstream(provider.issuer, together=together)
        upstream_port = free_port()
        async with serving(upstream, upstream_port):
            spec = tmp_path / "pets.json"
            spec.write_text(json.dumps(pets_spec(f"http://127.0.0.1:{upstream_port}/v1", provider.token_url)))
            stderr = tmp_path / "bridge.log"
            extra = tuple(flag.format(issuer=provider.issuer) for flag in flags)
            async with bridge_process(spec, provider, stderr, extra) as port:
                yield World(provider, upstream, f"http://127.0.0.1:{port}/mcp", stderr)


async def python_client(url: str, token: str, calls: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    """The official Python client: the tool names it sees and the structured result of each call."""
    http = create_mcp_http_client(headers=bearer(token))
    async with http, Client(streamable_http_client(url, http_client=http), mode="legacy") as client:
        tools = [tool.name for tool in (await client.list_tools()).tools]
        results = []
        for name, arguments in calls:
            result = await client.call_tool(name, arguments)
            assert not result.is_error, result.content
            results.append(result.structured_content)
    return {"tools": tools, "results": results}


def assert_exchanged_for_each_user(w: World, mcp_tokens: dict[str, str]) -> dict[str, Any]:
    """Each user's list_pets request carried a token the provider exchanged for that user and the upstream only."""
    by_user: dict[str, Any] = {}
    for seen in [s for s in w.upstream.seen if (s.method, s.path) == ("GET", "/v1/pets")]:
        assert seen.token not in mcp_tokens.values()  # never the caller's MCP token
        assert seen.claims is not None, "the upstream could not verify the token it was sent"
        assert seen.claims["aud"] == UPSTREAM_AUDIENCE
        assert seen.claims["client_id"] == BRIDGE_CLIENT[0]  # obtained by the bridge's own client
        by_user[seen.claims["sub"]] = seen.claims
    assert sorted(by_user) == sorted(mcp_tokens)
    return by_user


async def test_two_users_of_the_python_client_at_once_reach_the_upstream_as_themselves(tmp_path: Path) -> None:
    async with world(tmp_path, together=2) as w:
        tokens = {
            "alice": await w.provider.client_credentials("alice", resource=w.url, scope=READ),
            "bob": await w.provider.authorization_code("bob", resource=w.url, scope=WRITE),
        }
        seen: dict[str, Any] = {}

        async def session(user: str) -> None:
            seen[user] = await python_client(w.url, tokens[user], [("list_pets", {})])

        async with anyio.create_task_group() as tg:
            for user in tokens:
                tg.start_soon(session, user)
        bob_writes = await python_client(w.url, tokens["bob"], [("create_pet", {})])
        stats = await w.provider.stats()
    assert seen["alice"]["tools"] == ["list_pets", "status"]
    assert seen["bob"]["tools"] == ["list_pets", "create_pet", "status"]
    assert [r["for"] for r in seen["alice"]["results"]] == ["alice"]
    assert [r["for"] for r in seen["bob"]["results"]] == ["bob"]
    claims = assert_exchanged_for_each_user(w, tokens)
    assert claims["alice"]["scope"] == "pets:read" and claims["bob"]["scope"] == "pets:read"
    [write] = [s for s in w.upstream.seen if s.method == "POST"]
    assert write.claims is not None and (write.claims["sub"], write.claims["scope"]) == ("bob", "pets:write")
    assert bob_writes["results"] == [{"id": 7, "owner": "bob"}]
    assert stats["exchanges"] == 3  # one per (user, scopes)
    audit = [line.split(": ", 1)[1] for line in w.log().splitlines() if line.startswith("INFO bridge.audit: ")]
    calls = sorted(" ".join(line.split(" ")[:6]) for line in audit)
    assert calls == [
        "call subject=alice client=alice tool=list_pets method=GET path=/pets",
        "call subject=bob client=mcp-app tool=create_pet method=POST path=/pets",
        "call subject=bob client=mcp-app tool=list_pets method=GET path=/pets",
    ]
    assert all(token not in w.log() for token in tokens.values())


async def test_two_users_of_the_typescript_client_at_once_reach_the_upstream_as_themselves(
    tmp_path: Path,
    ts_client: Path,  # noqa: F811
) -> None:
    async with world(tmp_path, together=2) as w:
        tokens = {
            "alice": await w.provider.authorization_code("alice", resource=w.url, scope=READ),
            "bob": await w.provider.client_credentials("bob", resource=w.url, scope=WRITE),
        }
        summaries: dict[str, Any] = {}

        async def session(user: str) -> None:
            summaries[user] = await run_ts_client(
                ts_client, "http", w.url, tool="list_pets", arguments={}, env={"MCP_BEARER": tokens[user]}
            )

        async with anyio.create_task_group() as tg:
            for user in tokens:
                tg.start_soon(session, user)
    assert summaries["alice"]["tools"] == ["list_pets", "status"]
    assert summaries["bob"]["tools"] == ["list_pets", "create_pet", "status"]
    for user, summary in summaries.items():
        assert summary["isError"] is False
        assert summary["structuredContent"]["for"] == user
    assert_exchanged_for_each_user(w, tokens)
    assert tokens["alice"] not in w.log() and tokens["bob"] not in w.log()


# ------------------------------------------------------------------------------ refused


async def initialize(url: str, token: str | None, *, query: str = "") -> httpx.Response:
    async with httpx.AsyncClient(timeout=10.0) as http:
        headers = {**MCP_HEADERS, **(bearer(token) if token else {})}
        return await http.post(url + query, json=INITIALIZE, headers=headers)


def assert_invalid_token(response: httpx.Response, url: str) -> None:
    assert response.status_code == 401
    challenge = response.headers["www-authenticate"]
    assert challenge.startswith("Bearer ")
    assert f'resource_metadata="{url.removesuffix("/mcp")}/.well-known/oauth-protected-resource/mcp"' in challenge


async def test_without_a_token_the_client_is_sent_to_the_providers_metadata(tmp_path: Path) -> None:
    async with world(tmp_path) as w:
        refused = await initialize(w.url, None)
        async with httpx.AsyncClient() as http:
            metadata = (await http.get(w.url.replace("/mcp", "/.well-known/oauth-protected-resource/mcp"))).json()
    assert_invalid_token(refused, w.url)
    assert metadata["resource"] == w.url
    assert metadata["authorization_servers"] == [w.provider.issuer]
    assert metadata["scopes_supported"] == ["pets:read", "pets:write"]
    assert w.upstream.seen == []


async def test_a_token_the_provider_let_expire_is_refused(tmp_path: Path) -> None:
    async with world(tmp_path) as w:
        await w.provider.shift_clock(-3600)  # issued an hour ago with the provider's 600 s lifetime
        expired = await w.provider.client_credentials("alice", resource=w.url, scope=READ)
        await w.provider.shift_clock(0)
        fresh = await w.provider.client_credentials("alice", resource=w.url, scope=READ)
        refused, accepted = await initialize(w.url, expired), await initialize(w.url, fresh)
    assert_invalid_token(refused, w.url)
    assert 'error="invalid_token"' in refused.headers["www-authenticate"]
    assert accepted.status_code == 200


@pytest.mark.parametrize(
    "resource",
    [
        pytest.param(OTHER_RESOURCE, id="another-resource"),
        pytest.param(UPSTREAM_AUDIENCE, id="the-upstreams-own-token"),
        pytest.param("http://127.0.0.1:1/mcp", id="another-mcp-server-on-this-host"),
    ],
)
async def test_a_token_issued_for_another_resource_is_refused(tmp_path: Path, resource: str) -> None:
    async with world(tmp_path) as w:
        foreign = await w.provider.client_credentials("alice", resource=resource, scope=READ)
        refused = await initialize(w.url, foreign)
    assert_invalid_token(refused, w.url)
    assert "another resource" in w.log()


async def test_a_key_rotated_but_not_published_costs_one_jwks_refresh_then_401(tmp_path: Path) -> None:
    async with world(tmp_path) as w:
        await w.provider.rotate(publish=False)  # signs with a key its JWKS does not have
        tokens = [await w.provider.client_credentials(u, resource=w.url, scope=READ) for u in ("alice", "bob")]
        refused = [await initialize(w.url, token) for token in tokens]
        stats = await w.provider.stats()
    for response in refused:
        assert_invalid_token(response, w.url)
    assert stats["jwks"] == 1  # one refresh for the unknown kid, none for the next within 30 s


async def test_the_bridge_picks_rotated_keys_up_with_one_jwks_refresh(tmp_path: Path) -> None:
    # In process (uvicorn), so the test can move the key set's clock past the 30 s refresh bound.
    async with running_provider(tmp_path / "oidc.log") as provider:
        upstream = CheckingUpstream(provider.issuer)
        upstream_port, port = free_port(), free_port()
        spec = pets_spec(f"http://127.0.0.1:{upstream_port}/v1", provider.token_url)
        catalogue = catalogue_from_spec(spec, tuple(entry_from_spec(spec, "GET", p) for p in ("/pets", "/status")))
        url = f"http://127.0.0.1:{port}/mcp"
        options = ServeOptions(
            transport="http",
            auth=ClientAuth(resource_url=url, issuer=provider.issuer, jwks_url=provider.jwks_url),
            exchange=ExchangeOptions(provider.token_url, *BRIDGE_CLIENT, audience=UPSTREAM_AUDIENCE),
        )
        assert options.auth is not None
        verifier = ClientTokenVerifier(options.auth)
        assert verifier.jwks is not None
        clock = [0.0]
        verifier.jwks._clock = lambda: clock[0]
        runtime = build_runtime(catalogue, options, environ={})
        registry = build_registry(catalogue, runtime, None)
        app = build_http_app(build_bridge_server(catalogue, registry), registry, options, verifier=verifier)
        async with runtime, serving(upstream, upstream_port), serving(app, port, lifespan="on"):
            before = await python_client(
                url, await provider.client_credentials("alice", resource=url, scope=READ), [("list_pets", {})]
            )
            old_kids, new_kids = provider.kids, await provider.rotate()
            clock[0] += 31  # past the bound on refreshes
            bob = await provider.client_credentials("bob", resource=url, scope=READ)
            after = await python_client(url, bob, [("list_pets", {})])
    assert before["results"] == [{"pets": [{"id": 1, "name": "Rex"}], "for": "alice"}]
    assert after["results"] == [{"pets": [{"id": 1, "name": "Rex"}], "for": "bob"}]
    assert jwt.get_unverified_header(bob)["kid"] in new_kids and not set(new_kids) & set(old_kids)
    assert verifier.jwks.fetches == 2  # the first token, then one refresh for the new kid


async def test_a_call_beyond_the_tokens_scope_gets_403_naming_the_missing_scope(tmp_path: Path) -> None:
    async with world(tmp_path) as w:
        token = await w.provider.authorization_code("alice", resource=w.url, scope=READ)
        async with httpx.AsyncClient(timeout=10.0) as http:
            opened = await http.post(w.url, json=INITIALIZE, headers={**MCP_HEADERS, **bearer(token)})
            headers = {
                **MCP_HEADERS,
                **bearer(token),
                "Mcp-Session-Id": opened.headers["mcp-session-id"],
                "MCP-Protocol-Version": "2025-11-25",
            }
            params = {"name": "create_pet", "arguments": {}}
            call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": params}
            refused = await http.post(w.url, json=call, headers=headers)
    assert refused.status_code == 403
    challenge = refused.headers["www-authenticate"]
    assert 'error="insufficient_scope"' in challenge and 'scope="pets:write"' in challenge
    assert refused.json()["error"] == "insufficient_scope"
    assert w.upstream.seen == []


async def test_a_valid_token_in_the_query_string_is_refused(tmp_path: Path) -> None:
    async with world(tmp_path) as w:
        token = await w.provider.client_credentials("alice", resource=w.url, scope=READ)
        refused = await initialize(w.url, None, query=f"?access_token={token}")
        accepted = await initialize(w.url, token)
    assert_invalid_token(refused, w.url)
    assert accepted.status_code == 200


async def test_a_token_without_the_required_scope_is_refused_with_403_naming_it(tmp_path: Path) -> None:
    async with world(tmp_path, "--auth-required-scope", "pets:read") as w:
        writer_only = await w.provider.client_credentials("bob", resource=w.url, scope="pets:write")
        refused = await initialize(w.url, writer_only)
        accepted = await initialize(w.url, await w.provider.client_credentials("bob", resource=w.url, scope=WRITE))
    assert refused.status_code == 403
    challenge = refused.headers["www-authenticate"]
    assert 'error="insufficient_scope"' in challenge and "pets:read" in challenge
    assert accepted.status_code == 200


async def test_opaque_tokens_are_introspected_at_the_provider_and_exchanged_per_user(tmp_path: Path) -> None:
    async with world(tmp_path, "--auth-introspection-url", "{issuer}/token/introspection") as w:
        await w.provider.opaque_tokens()
        token = await w.provider.client_credentials("alice", resource=w.url, scope=READ)
        revoked = await w.provider.client_credentials("bob", resource=w.url, scope=READ)
        await w.provider.revoke("bob", revoked)
        seen = await python_client(w.url, token, [("list_pets", {})])
        refused = await initialize(w.url, revoked)
    assert token.count(".") == 0  # opaque: only the provider can say what it is
    assert seen["tools"] == ["list_pets", "status"] and seen["results"][0]["for"] == "alice"
    assert_exchanged_for_each_user(w, {"alice": token})
    assert_invalid_token(refused, w.url)


@dataclass
class MemoryStorage:
    """The SDK's ``TokenStorage``: the client is pre-registered at the provider (public, PKCE)."""

    client: OAuthClientInformationFull
    tokens: OAuthToken | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


async def test_the_python_sdks_own_oauth_flow_signs_the_user_in_and_calls_as_them(tmp_path: Path) -> None:
    # 401 -> protected-resource metadata -> the provider's metadata -> authorization code + PKCE with
    # the bridge as resource (RFC 8707): all done by the SDK; the test only plays the user's browser.
    async with world(tmp_path) as w:
        signed_in: dict[str, list[str]] = {}

        async def open_browser(url: str) -> None:
            signed_in.update(await sign_in(url, "carol"))

        async def back_at_the_client() -> AuthorizationCodeResult:
            return AuthorizationCodeResult(
                code=signed_in["code"][0], state=signed_in["state"][0], iss=signed_in["iss"][0]
            )

        registered: dict[str, Any] = {"redirect_uris": [REDIRECT_URI], "token_endpoint_auth_method": "none"}
        storage = MemoryStorage(OAuthClientInformationFull(client_id=APP_CLIENT, **registered))
        oauth = OAuthClientProvider(
            server_url=w.url,
            client_metadata=OAuthClientMetadata(client_name="e2e", **registered),
            storage=storage,
            redirect_handler=open_browser,
            callback_handler=back_at_the_client,
        )
        http = create_mcp_http_client(auth=oauth)
        async with http, Client(streamable_http_client(w.url, http_client=http), mode="legacy") as client:
            tools = [tool.name for tool in (await client.list_tools()).tools]
            result = await client.call_tool("list_pets", {})
    assert storage.tokens is not None
    token = storage.tokens.access_token
    claims = jwt.decode(token, options={"verify_signature": False})
    # The SDK asks for the scopes the bridge's metadata advertises (the MCP spec's scope selection).
    assert (claims["sub"], claims["aud"], claims["scope"]) == ("carol", w.url, WRITE)
    assert tools == ["list_pets", "create_pet", "status"]
    assert result.structured_content == {"pets": [{"id": 1, "name": "Rex"}], "for": "carol"}
    assert_exchanged_for_each_user(w, {"carol": token})
