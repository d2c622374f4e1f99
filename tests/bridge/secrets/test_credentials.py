"""Credentials from the environment: every scheme type, alternatives, OAuth2 caching, redaction."""

from __future__ import annotations

import base64
import logging
from typing import Any
from urllib.parse import parse_qs

import anyio
import pytest

from bridge.calls.http_tools import make_http_tool
from bridge.contract.catalogue import SchemeUse, SecurityScheme
from bridge.secrets.credentials import Credentials
from bridge.tools.errors import CredentialsError, UpstreamStatusError
from bridge.tools.registry import ToolContext
from tests.bridge.fake_upstream import (
    BASE_URL,
    FakeUpstream,
    Recorded,
    Reply,
    catalogue_from_spec,
    entry_from_spec,
    make_reply,
    runtime_for,
    schemes_from_spec,
)

API = f"{BASE_URL}/api"
TOKEN_PATH = "/oauth/token"
OK = {"200": {"description": "ok"}}
SECRET = "SECRET-canary-4f1d"


def _op(security: list[dict[str, list[str]]]) -> dict[str, Any]:
    return {"get": {"security": security, "responses": OK}}


SPEC: dict[str, Any] = {
    "openapi": "3.0.3",
    "info": {"title": "secure", "version": "1"},
    "servers": [{"url": API}],
    "components": {
        "securitySchemes": {
            "key_header": {"type": "apiKey", "in": "header", "name": "X-API-Key"},
            "key_query": {"type": "apiKey", "in": "query", "name": "api_key"},
            "key_cookie": {"type": "apiKey", "in": "cookie", "name": "sid"},
            "bearer": {"type": "http", "scheme": "bearer"},
            "basic": {"type": "http", "scheme": "basic"},
            "oauth": {
                "type": "oauth2",
                "flows": {
                    "clientCredentials": {
                        "tokenUrl": f"{BASE_URL}{TOKEN_PATH}",
                        "scopes": {"read": "read", "write": "write"},
                    }
                },
            },
            "oidc": {"type": "openIdConnect", "openIdConnectUrl": f"{BASE_URL}/.well-known/openid-configuration"},
            "mtls": {"type": "mutualTLS"},
        }
    },
    "paths": {
        "/header": _op([{"key_header": []}]),
        "/query": _op([{"key_query": []}]),
        "/cookie": _op([{"key_cookie": []}]),
        "/bearer": _op([{"bearer": []}]),
        "/basic": _op([{"basic": []}]),
        "/oauth": _op([{"oauth": ["read"]}]),
        "/oidc": _op([{"oidc": []}]),
        "/optional": _op([{}, {"key_header": []}]),
        "/either": _op([{"bearer": []}, {"key_query": []}]),
        "/both": _op([{"key_header": [], "key_query": []}]),
        "/public": _op([]),
    },
}
ENV = {
    "TEST_KEY_HEADER_VALUE": SECRET,
    "TEST_KEY_QUERY_VALUE": SECRET + "&q",
    "TEST_KEY_COOKIE_VALUE": SECRET + " c",
    "TEST_BEARER_TOKEN": SECRET + "-bearer",
    "TEST_BASIC_USERNAME": "alice",
    "TEST_BASIC_PASSWORD": SECRET + ":pw",
    "TEST_OAUTH_CLIENT_ID": "client-1",
    "TEST_OAUTH_CLIENT_SECRET": SECRET + "-client",
    "TEST_OIDC_TOKEN": SECRET + "-oidc",
}


class TokenEndpoint:
    """OAuth2 token endpoint on the fake upstream: counts requests, hands out numbered tokens."""

    def __init__(self, expires_in: int | None = 3600) -> None:
        self.requests: list[Recorded] = []
        self.expires_in = expires_in
        self.release: anyio.Event | None = None

    async def __call__(self, request: Recorded) -> Reply:
        self.requests.append(request)
        if self.release is not None:
            await self.release.wait()
        body: dict[str, Any] = {"access_token": f"tok-{len(self.requests)}", "token_type": "Bearer"}
        if self.expires_in is not None:
            body["expires_in"] = self.expires_in
        return make_reply(json_body=body)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def fake_with_token(endpoint: TokenEndpoint | None = None) -> FakeUpstream:
    fake = FakeUpstream(SPEC, unvalidated_paths=(TOKEN_PATH,))
    fake.route("POST", TOKEN_PATH, endpoint or TokenEndpoint())
    return fake


async def call(
    path: str, fake: FakeUpstream, environ: dict[str, str], *, clock: Clock | None = None, times: int = 1
) -> list[Recorded]:
    entry = entry_from_spec(SPEC, "GET", path)
    runtime = runtime_for(fake, catalogue_from_spec(SPEC, (entry,)), environ=environ, clock=clock)
    tool = make_http_tool(entry, runtime)
    seen = len(fake.requests)
    async with runtime:
        for _ in range(times):
            await tool.run({}, ToolContext(tool_name=entry.name))
    return [r for r in fake.requests[seen:] if r.raw_path.startswith("/api/")]


@pytest.mark.anyio
async def test_api_key_in_header() -> None:
    fake = FakeUpstream(SPEC)
    [request] = await call("/header", fake, ENV)
    assert request.header("x-api-key") == SECRET
    assert fake.violations == []


@pytest.mark.anyio
async def test_api_key_in_query_is_encoded() -> None:
    fake = FakeUpstream(SPEC)
    [request] = await call("/query", fake, ENV)
    assert request.query == f"api_key={SECRET}%26q"
    assert request.query_pairs == [("api_key", SECRET + "&q")]
    assert fake.violations == []


@pytest.mark.anyio
async def test_api_key_in_cookie() -> None:
    fake = FakeUpstream(SPEC)
    [request] = await call("/cookie", fake, ENV)
    assert request.header("cookie") == f"sid={SECRET}%20c"
    assert fake.violations == []


@pytest.mark.anyio
async def test_http_bearer_and_openid_connect_token() -> None:
    fake = FakeUpstream(SPEC)
    [bearer] = await call("/bearer", fake, ENV)
    [oidc] = await call("/oidc", fake, ENV)
    assert bearer.header("authorization") == f"Bearer {SECRET}-bearer"
    assert oidc.header("authorization") == f"Bearer {SECRET}-oidc"
    assert fake.violations == []


@pytest.mark.anyio
async def test_http_basic() -> None:
    fake = FakeUpstream(SPEC)
    [request] = await call("/basic", fake, ENV)
    expected = base64.b64encode(f"alice:{SECRET}:pw".encode()).decode()
    assert request.header("authorization") == f"Basic {expected}"
    assert fake.violations == []


@pytest.mark.anyio
async def test_oauth2_client_credentials_token_is_fetched_once_and_cached() -> None:
    endpoint = TokenEndpoint(expires_in=3600)
    fake = fake_with_token(endpoint)
    requests = await call("/oauth", fake, ENV, times=3)
    assert [r.header("authorization") for r in requests] == ["Bearer tok-1"] * 3
    [token_request] = endpoint.requests
    assert token_request.method == "POST"
    assert parse_qs(token_request.body.decode()) == {"grant_type": ["client_credentials"], "scope": ["read"]}
    client = base64.b64encode(f"client-1:{SECRET}-client".encode()).decode()
    assert token_request.header("authorization") == f"Basic {client}"
    assert token_request.header("content-type") == "application/x-www-form-urlencoded"
    assert fake.violations == []


@pytest.mark.anyio
async def test_oauth2_token_is_refreshed_after_expiry_minus_margin() -> None:
    endpoint = TokenEndpoint(expires_in=300)
    fake = fake_with_token(endpoint)
    clock = Clock()
    entry = entry_from_spec(SPEC, "GET", "/oauth")
    runtime = runtime_for(fake, catalogue_from_spec(SPEC, (entry,)), environ=ENV, clock=clock)
    tool = make_http_tool(entry, runtime)
    async with runtime:
        await tool.run({}, ToolContext(tool_name="t"))
        clock.now += 269  # 300 s lifetime minus the 30 s margin: still fresh
        await tool.run({}, ToolContext(tool_name="t"))
        clock.now += 2
        await tool.run({}, ToolContext(tool_name="t"))
    assert [r.header("authorization") for r in fake.requests if r.raw_path == "/api/oauth"] == [
        "Bearer tok-1",
        "Bearer tok-1",
        "Bearer tok-2",
    ]
    assert len(endpoint.requests) == 2


@pytest.mark.anyio
async def test_concurrent_calls_share_one_token_fetch() -> None:
    endpoint = TokenEndpoint()
    endpoint.release = anyio.Event()
    fake = fake_with_token(endpoint)
    credentials = Credentials(schemes_from_spec(SPEC), ENV, transport=fake.transport())
    results: list[str] = []
    started = 0

    async def one() -> None:
        nonlocal started
        started += 1
        if started == 5:
            assert endpoint.release is not None
            endpoint.release.set()
        parts = await credentials.for_operation(((SchemeUse(scheme="oauth", scopes=("read",)),),))
        results.append(dict(parts.headers)["Authorization"])

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            for _ in range(5):
                tg.start_soon(one)
    await credentials.aclose()
    assert results == ["Bearer tok-1"] * 5
    assert len(endpoint.requests) == 1


@pytest.mark.anyio
async def test_oauth2_ready_token_is_used_as_bearer_without_a_fetch() -> None:
    endpoint = TokenEndpoint()
    fake = fake_with_token(endpoint)
    [request] = await call("/oauth", fake, {"TEST_OAUTH_TOKEN": "ready-token"})
    assert request.header("authorization") == "Bearer ready-token"
    assert endpoint.requests == []


@pytest.mark.anyio
async def test_oauth2_token_endpoint_refusal_names_env_vars_not_secrets() -> None:
    fake = FakeUpstream(SPEC, unvalidated_paths=(TOKEN_PATH,))
    fake.route(
        "POST",
        TOKEN_PATH,
        make_reply(401, json_body={"error": "invalid_client", "echo": ENV["TEST_OAUTH_CLIENT_SECRET"]}),
    )
    with pytest.raises(CredentialsError) as info:
        await call("/oauth", fake, ENV)
    message = str(info.value)
    assert "HTTP 401 (invalid_client)" in message
    assert "TEST_OAUTH_CLIENT_ID" in message and "TEST_OAUTH_CLIENT_SECRET" in message
    assert SECRET not in message
    assert [r for r in fake.requests if r.raw_path.startswith("/api/")] == []


@pytest.mark.anyio
async def test_optional_security_is_anonymous_without_credentials_and_authenticated_with_them() -> None:
    fake = FakeUpstream(SPEC)
    [anonymous] = await call("/optional", fake, {})
    [keyed] = await call("/optional", fake, ENV)
    assert anonymous.header("x-api-key") is None
    assert keyed.header("x-api-key") == SECRET


@pytest.mark.anyio
async def test_first_configured_alternative_is_used() -> None:
    fake = FakeUpstream(SPEC)
    [request] = await call("/either", fake, {"TEST_KEY_QUERY_VALUE": "k"})
    assert request.header("authorization") is None
    assert request.query == "api_key=k"
    [both] = await call("/either", fake, {"TEST_KEY_QUERY_VALUE": "k", "TEST_BEARER_TOKEN": "b"})
    assert both.header("authorization") == "Bearer b" and both.query == ""


@pytest.mark.anyio
async def test_all_schemes_of_an_alternative_are_sent() -> None:
    fake = FakeUpstream(SPEC)
    [request] = await call("/both", fake, ENV)
    assert request.header("x-api-key") == SECRET
    assert request.query_pairs == [("api_key", SECRET + "&q")]
    assert fake.violations == []


@pytest.mark.anyio
async def test_missing_credential_names_the_env_var_and_sends_nothing() -> None:
    fake = FakeUpstream(SPEC)
    environ = {"TEST_KEY_QUERY_VALUE": SECRET}  # configured, but not for this operation
    with pytest.raises(CredentialsError) as info:
        await call("/either", fake, {"TEST_BEARER_TOKEN": ""} | {"UNRELATED": SECRET})
    message = str(info.value)
    assert "TEST_BEARER_TOKEN" in message and "TEST_KEY_QUERY_VALUE" in message
    with pytest.raises(CredentialsError) as info:
        await call("/header", fake, environ)
    assert "TEST_KEY_HEADER_VALUE" in str(info.value)
    assert SECRET not in str(info.value)
    assert fake.requests == []


@pytest.mark.anyio
async def test_operation_without_security_sends_no_credentials() -> None:
    fake = FakeUpstream(SPEC)
    [request] = await call("/public", fake, ENV)
    assert request.header("authorization") is None and request.header("x-api-key") is None


@pytest.mark.anyio
async def test_unsupported_and_unknown_schemes_are_explained() -> None:
    schemes = schemes_from_spec(SPEC)
    credentials = Credentials(schemes, {})
    with pytest.raises(CredentialsError, match="mcp-bridge cannot supply"):
        await credentials.for_operation(((SchemeUse(scheme="mtls"),),))
    with pytest.raises(CredentialsError, match="does not define"):
        await credentials.for_operation(((SchemeUse(scheme="nope"),),))


@pytest.mark.anyio
async def test_env_values_are_stripped_and_header_breaking_values_refused() -> None:
    schemes = {"bearer": schemes_from_spec(SPEC)["bearer"]}
    use = ((SchemeUse(scheme="bearer"),),)
    parts = await Credentials(schemes, {"TEST_BEARER_TOKEN": "  tok \n"}).for_operation(use)
    assert parts.headers == (("Authorization", "Bearer tok"),)
    assert parts.env_names == ("TEST_BEARER_TOKEN",)
    with pytest.raises(CredentialsError, match="TEST_BEARER_TOKEN") as info:
        await Credentials(schemes, {"TEST_BEARER_TOKEN": "a\r\nX-Evil: 1"}).for_operation(use)
    assert "X-Evil" not in str(info.value)


def test_basic_password_may_be_empty_but_must_be_set() -> None:
    schemes = schemes_from_spec(SPEC)
    assert Credentials(schemes, {"TEST_BASIC_USERNAME": "sk_live"}).missing("basic") == (
        'TEST_BASIC_PASSWORD (HTTP basic "basic")'
    )
    assert Credentials(schemes, {"TEST_BASIC_USERNAME": "sk_live", "TEST_BASIC_PASSWORD": ""}).configured("basic")


def test_oauth2_missing_lists_both_ways_to_configure_it() -> None:
    credentials = Credentials(schemes_from_spec(SPEC), {"TEST_OAUTH_CLIENT_ID": "x"})
    assert credentials.missing("oauth") == 'TEST_OAUTH_TOKEN or TEST_OAUTH_CLIENT_SECRET (OAuth2 "oauth")'


def test_redact_removes_secrets_in_every_spelling() -> None:
    credentials = Credentials(schemes_from_spec(SPEC), ENV)
    basic = base64.b64encode(f"alice:{SECRET}:pw".encode()).decode()
    text = f"a {SECRET} b {SECRET}%26q c {SECRET}+c {basic} alice"
    assert credentials.redact(text) == "a *** b *** c *** *** alice"
    assert credentials.redact("nothing here") == "nothing here"
    assert Credentials({}, {}).redact(SECRET) == SECRET


@pytest.mark.anyio
async def test_fetched_tokens_are_redacted_too() -> None:
    fake = fake_with_token()
    credentials = Credentials(schemes_from_spec(SPEC), ENV, transport=fake.transport())
    await credentials.for_operation(((SchemeUse(scheme="oauth"),),))
    await credentials.aclose()
    # "tok-1" is shorter than MIN_SECRET_LENGTH: masked where it is a credential, not in words.
    assert credentials.redact("sent Authorization: Bearer tok-1") == "sent Authorization: Bearer ***"
    assert credentials.redact('{"access_token": "tok-1"}') == '{"access_token": "***"}'
    assert credentials.redact("got tok-1 of tok-10") == "got tok-1 of tok-10"


def test_scheme_without_env_vars_cannot_be_configured() -> None:
    credentials = Credentials({"k": SecurityScheme(type="apiKey", location="header", param_name="K")}, {})
    assert credentials.missing("k") is not None and "cannot supply" in (credentials.missing("k") or "")


@pytest.mark.anyio
async def test_secrets_echoed_by_the_api_never_reach_errors_or_logs(caplog: pytest.LogCaptureFixture) -> None:
    fake = fake_with_token()

    def echo(request: Recorded) -> Reply:  # a 401 that echoes every header and the query back
        return make_reply(401, json_body={"headers": dict(request.headers), "query": request.query})

    fake.handler(echo)
    caplog.set_level(logging.DEBUG)
    basic = base64.b64encode(f"alice:{SECRET}:pw".encode()).decode()
    for path in ("/query", "/both", "/cookie", "/oauth", "/basic", "/bearer"):
        with pytest.raises(UpstreamStatusError) as info:
            await call(path, fake, ENV)
        message = str(info.value)
        assert "HTTP 401" in message and "***" in message
        assert SECRET not in message and basic not in message and "tok-1" not in message
    assert "api_key=***" in caplog.text  # httpx logs the request URL; the key is scrubbed
    assert SECRET not in caplog.text and basic not in caplog.text
