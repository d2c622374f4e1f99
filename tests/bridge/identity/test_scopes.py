"""Scope-aware tools: a tool's requirement, whether a token meets it, and what a refusal asks for.

The listing filter (``bridge.server.handlers``), the server's call check and the HTTP step-up guard
(``bridge.identity.step_up.ScopeGuard``) all decide with ``allows``; these properties pin it down against
a reference written from the OpenAPI rule (security alternatives: any one suffices; within one,
every scheme's scopes are needed; a scheme that is not the caller's asks nothing of the caller).
"""

from __future__ import annotations

import json
from typing import Any

import anyio
from hypothesis import given, settings
from hypothesis import strategies as st

from bridge.contract.catalogue import SchemeUse, SecurityScheme
from bridge.identity.scopes import allows, call_requirement, missing, requirement
from bridge.identity.step_up import ScopeGuard

SCHEMES = {
    "oauth": SecurityScheme(type="oauth2"),
    "oidc": SecurityScheme(type="openIdConnect"),
    "key": SecurityScheme(type="apiKey", location="header", param_name="X-Key"),
    "basic": SecurityScheme(type="http", http_scheme="basic"),
}
SCOPE = st.sampled_from(["pets:read", "pets:write", "admin", "a:b/c"])
USE = st.builds(SchemeUse, scheme=st.sampled_from([*SCHEMES, "undeclared"]), scopes=st.lists(SCOPE).map(tuple))
SECURITY = st.lists(st.lists(USE, max_size=3).map(tuple), max_size=4).map(tuple)
GRANTED = st.frozensets(SCOPE)


def reference_allows(security: tuple[tuple[SchemeUse, ...], ...], granted: frozenset[str]) -> bool:
    if not security:
        return True
    for alternative in security:
        caller = [
            u for u in alternative if u.scheme in SCHEMES and SCHEMES[u.scheme].type in ("oauth2", "openIdConnect")
        ]
        if all(set(u.scopes) <= granted for u in caller):
            return True
    return False


@settings(max_examples=300, deadline=None)
@given(security=SECURITY, granted=GRANTED)
def test_a_token_may_use_a_tool_exactly_when_one_security_alternative_is_met(
    security: tuple[tuple[SchemeUse, ...], ...], granted: frozenset[str]
) -> None:
    need = requirement(security, SCHEMES)
    assert allows(need, granted) == reference_allows(security, granted)
    assert allows(need, None)  # no authentication (stdio): every tool


@settings(max_examples=300, deadline=None)
@given(security=SECURITY, granted=GRANTED)
def test_a_refusal_names_scopes_that_would_be_enough_and_only_missing_ones(
    security: tuple[tuple[SchemeUse, ...], ...], granted: frozenset[str]
) -> None:
    need = requirement(security, SCHEMES)
    asked = missing(need, granted)
    assert (asked == []) == allows(need, granted)
    assert not set(asked) & granted
    assert allows(need, granted | set(asked))  # granting what the challenge names is enough


TOOLS = st.dictionaries(st.sampled_from(["list", "create", "delete", "status"]), SECURITY, min_size=1)


@settings(max_examples=100, deadline=None)
@given(tools=TOOLS, granted=GRANTED, name=st.sampled_from(["list", "create", "delete", "status", "unknown"]))
def test_the_step_up_guard_refuses_exactly_the_calls_the_server_would_refuse(
    tools: dict[str, tuple[tuple[SchemeUse, ...], ...]], granted: frozenset[str], name: str
) -> None:
    scopes_by_tool = {tool: requirement(security, SCHEMES) for tool, security in tools.items()}
    passed: list[str] = []
    sent: list[dict[str, Any]] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        passed.append(json.loads((await receive())["body"])["params"]["name"])

    async def token_scopes(token: str) -> frozenset[str] | None:
        return granted if token == "good-token" else None

    guard = ScopeGuard(
        app,
        path="/mcp",
        token_scopes=token_scopes,
        requirement=call_requirement(scopes_by_tool),
        resource_url="http://127.0.0.1:8000/mcp",
    )
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": name}}).encode()

    async def run() -> None:
        messages = iter([{"type": "http.request", "body": body, "more_body": False}])

        async def receive() -> dict[str, Any]:
            return next(messages)

        async def send(message: dict[str, Any]) -> None:
            sent.append(message)

        scope = {
            "type": "http",
            "method": "POST",
            "path": "/mcp",
            "headers": [(b"authorization", b"Bearer good-token")],
        }
        await guard(scope, receive, send)

    anyio.run(run)
    need = scopes_by_tool.get(name)
    if need is None or allows(need, granted):
        assert passed == [name] and sent == []
        return
    assert passed == []
    start = sent[0]
    assert start["status"] == 403
    challenge = dict(start["headers"])[b"www-authenticate"].decode()
    assert 'error="insufficient_scope"' in challenge
    assert f'scope="{" ".join(missing(need, granted))}"' in challenge


HEADER_VALUES = st.sampled_from(
    [
        b"Bearer tok-a",
        b"bearer tok-b",
        b"BEARER tok-c",
        b"Bearer  tok-d",
        b"Bearer",
        b"Bearer ",
        b"Basic dXNlcjpw",
        b"tok-e",
    ]
)
HEADERS = st.lists(
    st.one_of(
        st.tuples(st.just(b"authorization"), HEADER_VALUES),
        st.tuples(st.sampled_from([b"x-authorization", b"cookie"]), HEADER_VALUES),
    ),
    max_size=4,
)


@settings(max_examples=200, deadline=None)
@given(headers=HEADERS)
def test_the_step_up_guard_judges_the_token_the_sdk_authenticates(headers: list[tuple[bytes, bytes]]) -> None:
    from mcp.server.auth.middleware.bearer_auth import BearerAuthBackend
    from starlette.requests import HTTPConnection

    judged: list[str] = []
    authenticated: list[str] = []

    async def token_scopes(token: str) -> frozenset[str] | None:
        judged.append(token)
        return None

    class Verifier:
        async def verify_token(self, token: str) -> None:
            authenticated.append(token)

    async def app(scope: Any, receive: Any, send: Any) -> None:
        await receive()

    guard = ScopeGuard(
        app,
        path="/mcp",
        token_scopes=token_scopes,
        requirement=lambda method, params: (frozenset({"pets:write"}),),
        resource_url="http://127.0.0.1:8000/mcp",
    )
    scope = {"type": "http", "method": "POST", "path": "/mcp", "headers": headers}
    body = b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "create"}}'

    async def run() -> None:
        messages = iter([{"type": "http.request", "body": body, "more_body": False}])

        async def receive() -> dict[str, Any]:
            return next(messages)

        async def send(message: dict[str, Any]) -> None:
            raise AssertionError(message)

        await guard(scope, receive, send)
        await BearerAuthBackend(Verifier()).authenticate(HTTPConnection(scope))  # type: ignore[arg-type]

    anyio.run(run)
    assert judged == [t for t in authenticated if t]  # the same token, or none at all
