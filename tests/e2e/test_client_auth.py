"""The bridge as an OAuth 2.1 resource server (security.md P9): JWTs against a JWKS, opaque tokens
by introspection, protected-resource metadata, and every way a token must be refused.

Tokens are signed by an in-process authorization server (``tests/identity.py``, reached at the
transport); ``tests/e2e/test_identity_oidc.py`` does the same against the real ``oidc-provider``.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx
import pytest
import uvicorn
from mcp import Client, MCPError
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from bridge.identity.client_auth import ClientAuth, ClientTokenVerifier, default_resource_url
from bridge.identity.jwks import MAX_KEY_AGE
from bridge.server.transports import http_app
from tests.e2e.conftest import STARTUP_TIMEOUT, free_port
from tests.e2e.test_http_security import BASE, INITIALIZE, MCP_HEADERS, RESOURCE, STATIC_TOKEN, bearer, petstore_server
from tests.identity import BRIDGE_CLIENT, INTROSPECTION_URL, ISSUER, JWKS_URL, FakeAuthorizationServer, Key, hs256_with

pytestmark = pytest.mark.anyio

AS = FakeAuthorizationServer(audience=RESOURCE)


def auth_for(server: FakeAuthorizationServer = AS, **options: Any) -> ClientAuth:
    settings: dict[str, Any] = {
        "resource_url": RESOURCE,
        "tokens": (STATIC_TOKEN,),
        "issuer": ISSUER,
        "jwks_url": JWKS_URL,
        "introspection_url": INTROSPECTION_URL,
        "client_id": BRIDGE_CLIENT[0],
        "client_secret": BRIDGE_CLIENT[1],
        "transport": server.transport(),
    }
    settings.update(options)
    return ClientAuth(**settings)


@asynccontextmanager
async def client_for(auth: ClientAuth) -> AsyncIterator[httpx.AsyncClient]:
    server = petstore_server()
    app = http_app(server, auth=auth)
    with anyio.fail_after(10):
        async with server.session_manager.run():
            async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=BASE) as client:
                yield client


async def status_with(token: str | None, auth: ClientAuth | None = None) -> httpx.Response:
    async with client_for(auth or auth_for()) as client:
        headers = {**MCP_HEADERS, **(bearer(token) if token is not None else {})}
        return await client.post("/mcp", json=INITIALIZE, headers=headers)


async def test_without_a_token_the_client_gets_401_naming_the_resource_metadata() -> None:
    auth = auth_for(scopes_supported=("pets:read", "pets:write"))
    async with client_for(auth) as client:
        response = await client.post("/mcp", json=INITIALIZE, headers=MCP_HEADERS)
        metadata = await client.get("/.well-known/oauth-protected-resource/mcp")
    assert response.status_code == 401
    challenge = response.headers["www-authenticate"]
    assert 'resource_metadata="http://127.0.0.1:8000/.well-known/oauth-protected-resource/mcp"' in challenge
    assert metadata.status_code == 200
    assert metadata.json()["resource"] == RESOURCE
    assert metadata.json()["authorization_servers"] == [ISSUER]
    assert metadata.json()["scopes_supported"] == ["pets:read", "pets:write"]


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(lambda: STATIC_TOKEN, id="static"),
        pytest.param(lambda: AS.token(alg="RS256"), id="RS256"),
        pytest.param(lambda: AS.token(alg="ES256"), id="ES256"),
        pytest.param(lambda: AS.token(alg="EdDSA"), id="EdDSA"),
        pytest.param(lambda: AS.token(aud=["https://other.example/mcp", RESOURCE + "/"]), id="aud-list"),
        pytest.param(lambda: AS.token(aud="HTTP://127.0.0.1:8000/mcp"), id="aud-case"),
        pytest.param(lambda: AS.token(exp=time.time() - 30), id="expired-within-leeway"),
        pytest.param(lambda: AS.issue_opaque(), id="opaque-introspected"),
    ],
)
async def test_a_valid_token_is_accepted(make: Any) -> None:
    assert (await status_with(make())).status_code == 200


OTHER_KEY = Key.make("RS256", "rs")  # same kid as the real key, another key pair


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(lambda: AS.token(exp=time.time() - 300), id="expired"),
        pytest.param(lambda: AS.token(nbf=time.time() + 3600), id="not-yet-valid"),
        pytest.param(lambda: AS.token(iss="https://evil.example"), id="wrong-issuer"),
        pytest.param(lambda: AS.token(iss=None), id="no-issuer"),
        pytest.param(lambda: AS.token(aud="http://127.0.0.1:8001/mcp"), id="wrong-audience"),
        pytest.param(lambda: AS.token(aud="https://upstream.example/v1"), id="token-for-another-resource"),
        pytest.param(lambda: AS.token(aud=None), id="no-audience"),
        pytest.param(lambda: AS.token(exp=None), id="no-exp"),
        pytest.param(lambda: AS.token(key=OTHER_KEY), id="signed-by-another-key-same-kid"),
        pytest.param(lambda: AS.token(headers={"kid": "ghost"}), id="unknown-kid"),
        pytest.param(lambda: AS.token(headers={"crit": ["exp"]}), id="crit-header"),
        pytest.param(lambda: AS.token(key=Key("rs", "ES256", AS.key("ES256").private)), id="alg-not-the-keys"),
        pytest.param(lambda: "eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0." + AS.token().split(".")[1] + ".", id="alg-none"),
        pytest.param(
            lambda: hs256_with(AS.key("RS256").public_pem(), {"iss": ISSUER, "aud": RESOURCE, "exp": 2e9}, "rs"),
            id="hs256-with-the-rsa-public-key-as-secret",
        ),
        pytest.param(lambda: AS.token()[:-4] + "AAAA", id="tampered-signature"),
        pytest.param(lambda: "not.a.jwt", id="garbage-jwt"),
        pytest.param(lambda: "opaque-but-unknown-0123456789", id="unknown-opaque"),
        pytest.param(lambda: STATIC_TOKEN + "x", id="wrong-static"),
    ],
)
async def test_a_bad_token_is_refused_with_401(make: Any) -> None:
    response = await status_with(make())
    assert response.status_code == 401
    assert 'error="invalid_token"' in response.headers["www-authenticate"]


@pytest.mark.parametrize(
    "claims",
    [
        pytest.param({"aud": None}, id="no-audience"),
        pytest.param({"aud": "https://other.example/mcp"}, id="another-resource"),
        pytest.param({"aud": ["https://other.example/mcp"]}, id="another-resource-list"),
        pytest.param({"iss": "https://evil.example"}, id="another-issuer"),
        pytest.param({"exp": None}, id="no-expiry"),
        pytest.param({"exp": int(time.time()) - 5}, id="expired"),
        pytest.param({"exp": "soon"}, id="expiry-not-a-number"),
        pytest.param({"nbf": int(time.time()) + 3600}, id="not-yet-valid"),
        pytest.param({"active": "true"}, id="active-not-the-boolean"),
    ],
)
async def test_an_introspected_token_must_be_active_ours_and_current(claims: dict[str, Any]) -> None:
    server = FakeAuthorizationServer(audience=RESOURCE)
    token = server.issue_opaque(**claims)
    assert (await status_with(token, auth_for(server))).status_code == 401


async def test_a_revoked_opaque_token_is_refused() -> None:
    server = FakeAuthorizationServer(audience=RESOURCE)
    token = server.issue_opaque()
    server.revoke(token)
    assert (await status_with(token, auth_for(server))).status_code == 401


async def test_a_token_in_the_query_string_is_not_accepted() -> None:
    async with client_for(auth_for()) as client:
        response = await client.post(f"/mcp?access_token={AS.token()}", json=INITIALIZE, headers=MCP_HEADERS)
    assert response.status_code == 401


async def test_a_missing_scope_is_refused_with_403_naming_it() -> None:
    async with client_for(auth_for(required_scopes=("pets:read",))) as client:
        missing = await client.post("/mcp", json=INITIALIZE, headers={**MCP_HEADERS, **bearer(AS.token(scope="x"))})
        present = await client.post(
            "/mcp", json=INITIALIZE, headers={**MCP_HEADERS, **bearer(AS.token(scope="x pets:read"))}
        )
    assert missing.status_code == 403
    assert 'error="insufficient_scope"' in missing.headers["www-authenticate"]
    assert "pets:read" in missing.headers["www-authenticate"]
    assert present.status_code == 200


async def test_an_unknown_kid_costs_one_bounded_jwks_refresh() -> None:
    server = FakeAuthorizationServer(audience=RESOURCE)
    verifier = ClientTokenVerifier(auth_for(server))
    assert await verifier.verify_token(server.token()) is not None
    assert server.jwks_fetches == 1
    for kid in ("ghost-1", "ghost-2", "ghost-3"):
        assert await verifier.verify_token(server.token(headers={"kid": kid})) is None
    assert server.jwks_fetches == 1  # refreshed at most once every 30 s, and the first fetch was just now


async def test_rotated_keys_are_picked_up_on_the_first_token_with_the_new_kid() -> None:
    server = FakeAuthorizationServer(audience=RESOURCE)
    verifier = ClientTokenVerifier(auth_for(server))
    clock = [0.0]
    assert verifier.jwks is not None
    verifier.jwks._clock = lambda: clock[0]
    assert await verifier.verify_token(server.token()) is not None
    rotated = Key.make("ES256", "es-2")
    server.keys = [rotated]
    clock[0] += 31
    assert await verifier.verify_token(server.token(key=rotated)) is not None
    assert await verifier.verify_token(server.token(alg="RS256", key=Key.make("RS256", "rs"))) is None
    assert server.jwks_fetches == 2


async def test_a_key_the_issuer_stopped_publishing_is_trusted_for_the_key_sets_max_age_at_most() -> None:
    server = FakeAuthorizationServer(audience=RESOURCE)
    verifier = ClientTokenVerifier(auth_for(server))
    assert verifier.jwks is not None
    clock = [0.0]
    verifier.jwks._clock = lambda: clock[0]
    retired = server.key("RS256")
    assert await verifier.verify_token(server.token(key=retired, sub="a")) is not None
    server.keys = [Key.make("ES256", "es-2")]  # the issuer retires (or revokes) the RSA key
    clock[0] += MAX_KEY_AGE - 1
    assert await verifier.verify_token(server.token(key=retired, sub="b")) is not None  # still in its age
    clock[0] += 2
    assert await verifier.verify_token(server.token(key=retired, sub="c")) is None
    assert server.jwks_fetches == 2


async def test_an_old_key_set_is_kept_while_the_issuer_cannot_be_reached() -> None:
    server = FakeAuthorizationServer(audience=RESOURCE)
    verifier = ClientTokenVerifier(auth_for(server))
    assert verifier.jwks is not None
    clock = [0.0]
    verifier.jwks._clock = lambda: clock[0]
    assert await verifier.verify_token(server.token(sub="a")) is not None
    server.jwks_status = 503
    clock[0] += MAX_KEY_AGE + 1
    assert await verifier.verify_token(server.token(sub="b")) is not None  # one failed refresh, keys kept
    assert await verifier.verify_token(server.token(sub="c")) is not None
    assert server.jwks_fetches == 2


async def test_introspection_answers_are_cached_until_expiry() -> None:
    server = FakeAuthorizationServer(audience=RESOURCE)
    verifier = ClientTokenVerifier(auth_for(server))
    token = server.issue_opaque(scope="pets:read", sub="bob")
    first = await verifier.verify_token(token)
    second = await verifier.verify_token(token)
    assert first is not None and second is not None
    assert (first.subject, first.scopes) == ("bob", ["pets:read"])
    assert server.introspections == 1


async def test_verified_claims_become_the_access_token() -> None:
    verifier = ClientTokenVerifier(auth_for())
    access = await verifier.verify_token(AS.token(scope="pets:read pets:write", client_id="cli", sub="alice"))
    assert access is not None
    assert (access.client_id, access.subject, access.resource) == ("cli", "alice", RESOURCE)
    assert access.scopes == ["pets:read", "pets:write"]
    assert await verifier.verify_token("") is None
    assert await verifier.verify_token("x" * 10_000) is None


async def test_a_session_cannot_be_used_with_another_users_token() -> None:
    async with client_for(auth_for()) as client:
        opened = await client.post(
            "/mcp", json=INITIALIZE, headers={**MCP_HEADERS, **bearer(AS.token(sub="alice", client_id="c"))}
        )
        session = opened.headers["mcp-session-id"]
        listed = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
        headers = {**MCP_HEADERS, "Mcp-Session-Id": session, "MCP-Protocol-Version": "2025-11-25"}
        other = await client.post(
            "/mcp", json=listed, headers={**headers, **bearer(AS.token(sub="bob", client_id="c"))}
        )
        same = await client.post(
            "/mcp", json=listed, headers={**headers, **bearer(AS.token(sub="alice", client_id="c"))}
        )
    assert other.status_code == 404  # answered as if the session did not exist
    assert same.status_code == 200


def test_client_auth_refuses_settings_that_would_not_check_tokens() -> None:
    with pytest.raises(ValueError, match="needs a static token"):
        ClientAuth(resource_url=RESOURCE)
    with pytest.raises(ValueError, match="issuer"):
        ClientAuth(resource_url=RESOURCE, jwks_url=JWKS_URL)
    with pytest.raises(ValueError, match="client id and secret"):
        ClientAuth(resource_url=RESOURCE, introspection_url=INTROSPECTION_URL)
    with pytest.raises(ValueError, match="https"):
        ClientAuth(resource_url=RESOURCE, issuer=ISSUER, jwks_url="http://as.example/jwks")
    with pytest.raises(ValueError, match="at least 16"):
        ClientAuth(resource_url=RESOURCE, tokens=("short",))
    with pytest.raises(ValueError, match="absolute http"):
        ClientAuth(resource_url="/mcp", tokens=(STATIC_TOKEN,))
    auth = auth_for()
    assert STATIC_TOKEN not in repr(auth) and BRIDGE_CLIENT[1] not in repr(auth)


def test_default_resource_url_names_the_bound_address() -> None:
    assert default_resource_url("127.0.0.1", 8000) == "http://127.0.0.1:8000/mcp"
    assert default_resource_url("0.0.0.0", 8080, "/x") == "http://127.0.0.1:8080/x"
    assert default_resource_url("::1", 9000) == "http://[::1]:9000/mcp"


async def test_the_official_client_connects_with_a_signed_token_over_uvicorn() -> None:
    port = free_port()
    resource = default_resource_url("127.0.0.1", port)
    server_as = FakeAuthorizationServer(audience=resource)
    app = http_app(petstore_server(), auth=auth_for(server_as, resource_url=resource))
    uv = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on"))
    async with anyio.create_task_group() as tg:
        tg.start_soon(uv.serve)
        try:
            with anyio.fail_after(STARTUP_TIMEOUT):
                while not uv.started:
                    await anyio.sleep(0.01)
                http = create_mcp_http_client(headers=bearer(server_as.token(alg="EdDSA", client_id="e2e")))
                async with http, Client(streamable_http_client(resource, http_client=http), mode="legacy") as client:
                    listed = await client.list_tools()
                    assert len(listed.tools) == 6
                refused = create_mcp_http_client(headers=bearer("wrong-token-0123456789"))
                with pytest.RaisesGroup(MCPError, flatten_subgroups=True):
                    async with refused, Client(streamable_http_client(resource, http_client=refused)) as client:
                        await client.list_tools()
        finally:
            uv.should_exit = True
