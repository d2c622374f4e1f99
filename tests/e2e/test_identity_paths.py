"""Per-user token paths read line by line (P9, P34, P35, P7): every case a review of the identity
code found, each against the real verifier, exchanger or app with the fake authorization server
at the transport (``tests/identity.py``)."""

from __future__ import annotations

import math
from typing import Any

import anyio
import pytest

from bridge.identity.client_auth import ClientTokenVerifier
from bridge.identity.introspection import REFUSAL_CACHE_SECONDS
from bridge.identity.jwks import MAX_KEY_AGE
from bridge.identity.token_claims import scope_tokens
from bridge.identity.token_exchange import DEFAULT_LIFETIME, MAX_LIFETIME, ExchangeSettings, TokenExchanger
from bridge.tools.errors import CredentialsError
from tests.bridge.fake_upstream import Recorded, Reply
from tests.e2e.test_client_auth import auth_for, client_for
from tests.e2e.test_http_security import INITIALIZE, MCP_HEADERS, RESOURCE, bearer
from tests.e2e.test_identity import UPSTREAM, bridge
from tests.identity import BRIDGE_CLIENT, TOKEN_URL, FakeAuthorizationServer, Key

pytestmark = pytest.mark.anyio


# ----------------------------------------------------------------------- exchanged tokens are redacted


async def test_every_exchanged_token_the_bridge_may_still_send_is_redacted() -> None:
    """More users than redaction used to remember (32): the first user's cached token, echoed by
    the upstream after everyone else's exchange, still never reaches the model."""
    users = 40
    async with bridge() as b:

        def echo(recorded: Recorded) -> Reply:
            sent = (recorded.header("authorization") or "").removeprefix("Bearer ")  # the bare token
            return Reply(200, ('{"you sent": "' + sent + '"}').encode(), "application/json")

        b.upstream.handler(echo)
        sessions = [await b.session(b.auth_server.token(sub=f"user{i}", scope="pets:read")) for i in range(users)]
        for headers in sessions:
            await b.rpc(headers, "tools/call", {"name": "list_pets", "arguments": {}})
        again = b.result(await b.rpc(sessions[0], "tools/call", {"name": "list_pets", "arguments": {}}))
    assert len(b.auth_server.exchanges) == users  # the first user's token came from the cache
    first = (b.upstream.requests[-1].header("authorization") or "").removeprefix("Bearer ")
    assert first and first == (b.upstream.requests[0].header("authorization") or "").removeprefix("Bearer ")
    shown = str(again)
    assert first not in shown and first[:20] not in shown and "***" in shown


class _Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.mark.parametrize("expires_in", [math.nan, math.inf, -math.inf], ids=["nan", "inf", "-inf"])
async def test_an_exchange_answer_with_a_non_finite_number_is_refused(expires_in: float) -> None:
    server = FakeAuthorizationServer(audience=RESOURCE, expires_in=expires_in)  # NaN and Infinity are not JSON
    settings = ExchangeSettings(TOKEN_URL, *BRIDGE_CLIENT, audience=UPSTREAM, transport=server.transport())
    exchanger = TokenExchanger(settings)
    with pytest.raises(CredentialsError, match="did not answer with a JSON object"):
        await exchanger.token_for("ann", server.token(sub="ann"), ("pets:read",))


@pytest.mark.parametrize(
    ("expires_in", "kept"),
    [
        (-5, 31),  # already expired: kept 1 s
        (0, 31),
        ("3600", DEFAULT_LIFETIME),
        (True, DEFAULT_LIFETIME),
        (1e300, MAX_LIFETIME),
        (600, 600),
    ],
    ids=["negative", "zero", "string", "bool", "huge", "normal"],
)
async def test_an_exchanged_token_is_never_cached_forever(expires_in: Any, kept: float) -> None:
    server = FakeAuthorizationServer(audience=RESOURCE, expires_in=expires_in)
    clock = _Clock()
    settings = ExchangeSettings(TOKEN_URL, *BRIDGE_CLIENT, audience=UPSTREAM, transport=server.transport())
    exchanger = TokenExchanger(settings, clock=clock)
    subject = server.token(sub="ann")
    await exchanger.token_for("ann", subject, ("pets:read",))
    clock.now += kept - 31  # the margin: renewed 30 s before it expires
    await exchanger.token_for("ann", subject, ("pets:read",))
    assert len(server.exchanges) == 1
    clock.now += 2
    await exchanger.token_for("ann", subject, ("pets:read",))
    assert len(server.exchanges) == 2


# ----------------------------------------------------------------------- how long a token is trusted


async def test_a_jwt_shaped_opaque_token_is_trusted_no_longer_than_introspection_allows() -> None:
    server = FakeAuthorizationServer(audience=RESOURCE)
    verifier = ClientTokenVerifier(auth_for(server, jwks_url=None, tokens=()))
    token = server.issue_opaque(value="looks.like.ajwt-0123456789")
    assert await verifier.verify_token(token) is not None
    server.revoke(token)
    assert verifier.introspector is not None
    clock = [verifier.introspector._clock() + 61]  # past the introspection cache's 60 s bound
    verifier.introspector._clock = lambda: clock[0]
    assert await verifier.verify_token(token) is None  # not remembered for 300 s as a JWT would be


async def test_a_key_dropped_from_the_jwks_stops_working_for_tokens_already_seen_within_the_key_age() -> None:
    server = FakeAuthorizationServer(audience=RESOURCE)
    verifier = ClientTokenVerifier(auth_for(server))
    assert verifier.jwks is not None
    clock = [0.0]
    started = verifier._clock()
    verifier.jwks._clock = lambda: clock[0]
    verifier._clock = lambda: started + clock[0]
    retired = server.key("RS256")
    await verifier.verify_token(server.token(key=server.key("ES256"), sub="first"))  # the key set is fetched at 0
    clock[0] = MAX_KEY_AGE - 1
    seen = server.token(key=retired, sub="seen")
    assert await verifier.verify_token(seen) is not None  # first seen at the very end of the set's age
    server.keys = [k for k in server.keys if k is not retired]
    clock[0] = MAX_KEY_AGE + 1
    assert await verifier.verify_token(seen) is None  # not trusted for another 300 s from memory
    assert server.jwks_fetches == 2


async def test_a_refresh_of_the_key_set_rechecks_remembered_tokens() -> None:
    server = FakeAuthorizationServer(audience=RESOURCE)
    verifier = ClientTokenVerifier(auth_for(server))
    assert verifier.jwks is not None
    clock = [0.0]
    verifier.jwks._clock = lambda: clock[0]
    retired = server.key("RS256")
    seen = server.token(key=retired, sub="seen")
    assert await verifier.verify_token(seen) is not None
    server.keys = [k for k in server.keys if k is not retired] + [Key.make("RS256", "rs-2")]
    clock[0] = 31
    assert await verifier.verify_token(server.token(key=server.keys[-1], sub="new")) is not None  # refreshes
    assert await verifier.verify_token(seen) is None


async def test_an_introspection_answer_without_the_issuer_is_refused() -> None:
    server = FakeAuthorizationServer(audience=RESOURCE)
    token = server.issue_opaque(iss=None)
    assert (await _status(token, server)).status_code == 401


async def test_refused_introspections_are_cached_and_one_runs_per_token() -> None:
    server = FakeAuthorizationServer(audience=RESOURCE)
    verifier = ClientTokenVerifier(auth_for(server))
    made_up = "made-up-opaque-token-0123456789"
    async with anyio.create_task_group() as tg:
        for _ in range(20):
            tg.start_soon(verifier.verify_token, made_up)
    assert await verifier.verify_token(made_up) is None
    assert server.introspections == 1
    assert verifier.introspector is not None
    clock = [verifier.introspector._clock() + REFUSAL_CACHE_SECONDS + 1]
    verifier.introspector._clock = lambda: clock[0]
    assert await verifier.verify_token(made_up) is None
    assert server.introspections == 2
    # Through the app: one request checks the token several times (SDK, admission): one introspection.
    fresh = FakeAuthorizationServer(audience=RESOURCE)
    assert (await _status("another-made-up-token-0123456789", fresh)).status_code == 401
    assert fresh.introspections == 1


async def _status(token: str, server: FakeAuthorizationServer) -> Any:
    async with client_for(auth_for(server)) as client:
        return await client.post("/mcp", json=INITIALIZE, headers={**MCP_HEADERS, **bearer(token)})


# ----------------------------------------------------------------------- hostile answers and bodies

DEEP = b"[" * 100_000 + b"]" * 100_000


@pytest.mark.parametrize("path", ["/jwks", "/introspect"])
async def test_json_nested_deeply_from_the_authorization_server_is_a_clean_refusal(path: str) -> None:
    server = FakeAuthorizationServer(audience=RESOURCE, raw={path: DEEP})
    token = server.token() if path == "/jwks" else server.issue_opaque()
    assert (await _status(token, server)).status_code == 401


@pytest.mark.parametrize(
    "answer", [DEEP, b'{"access_token": "t", "token_type": "Bearer", "expires_in": NaN}'], ids=["deep", "nan"]
)
async def test_a_hostile_exchange_answer_is_a_tool_error_and_nothing_is_sent(answer: bytes) -> None:
    async with bridge() as b:
        b.auth_server.raw["/token"] = answer
        ann = await b.session(b.auth_server.token(sub="ann", scope="pets:read"))
        result = b.result(await b.rpc(ann, "tools/call", {"name": "list_pets", "arguments": {}}))
    assert result["isError"] is True
    assert "token-exchange endpoint" in result["content"][0]["text"]
    assert b.upstream.requests == []


async def test_a_deeply_nested_client_body_is_refused_cleanly_by_the_step_up_check() -> None:
    async with bridge() as b:
        headers = await b.session(b.auth_server.token(sub="ann", scope="pets:read"))
        body = b'{"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": ' + DEEP + b"}"
        response = await b.client.post("/mcp", content=body, headers=headers)
    assert response.status_code in (200, 400)  # the SDK's parse error, never a crash (500)


# ----------------------------------------------------------------------- scopes and describe


@pytest.mark.parametrize(
    ("scope", "granted"),
    [
        ("pets:read pets:write", ["pets:read", "pets:write"]),
        ("pets:read  pets:write ", ["pets:read", "pets:write"]),
        ("pets:read\u00a0pets:write", []),
        ("pets:read\tpets:write", []),
        ("pets:read\npets:write", []),
        ("pets:read\u2003pets:write", []),
        ("pets:read\u3000pets:write", []),
        ('pets:read "x" pets\\write', ["pets:read"]),
    ],
    ids=["space", "spaces", "no-break-space", "tab", "newline", "em-space", "ideographic-space", "bad-characters"],
)
def test_scopes_are_split_on_spaces_only(scope: str, granted: list[str]) -> None:
    assert scope_tokens(scope) == granted


@pytest.mark.parametrize("separator", ["\u00a0", "\t", "\u2003", "\x0b"])
async def test_a_scope_string_with_another_separator_grants_neither_scope(separator: str) -> None:
    async with bridge() as b:
        ann = await b.session(b.auth_server.token(sub="ann", scope=f"pets:read{separator}pets:write"))
        listed = b.result(await b.rpc(ann, "tools/list", {}))
        created = await b.rpc(ann, "tools/call", {"name": "create_pet", "arguments": {}})
    names = [tool["name"] for tool in listed["tools"]]
    assert "create_pet" not in names and "list_pets" not in names
    assert created.status_code == 403
    assert b.upstream.requests == []


async def test_describe_beyond_the_callers_scopes_answers_as_for_an_unknown_name() -> None:
    async with bridge(mode="discovery") as b:
        reader = await b.session(b.auth_server.token(sub="ann", scope="pets:read"))
        hidden = b.result(
            await b.rpc(reader, "tools/call", {"name": "describe_operation", "arguments": {"name": "create_pet"}})
        )
        shown = b.result(
            await b.rpc(reader, "tools/call", {"name": "describe_operation", "arguments": {"name": "list_pets"}})
        )
    assert shown.get("isError") is not True
    assert hidden["isError"] is True
    message = hidden["content"][0]["text"]
    assert message.startswith('Unknown operation "create_pet".')
    assert "pets:write" not in message and "scope" not in message and message.count("create_pet") == 1


# ----------------------------------------------------------------------- sessions of expired tokens


async def test_sessions_whose_creators_token_has_gone_are_closed_for_room_not_orphaned() -> None:
    """Short-lived tokens: a session's creator token is no longer valid when its room is needed.
    Closing it must really end it (the SDK keeps a session it refused to DELETE for 30 minutes,
    and its own backstop cap, twice the admission limit, would then refuse everyone)."""
    from tests.e2e.test_http_sessions import peers

    server = FakeAuthorizationServer(audience=RESOURCE)
    auth = auth_for(server)
    verifier = ClientTokenVerifier(auth)
    statuses = []
    async with peers("127.0.0.1", max_sessions=2, max_sessions_per_client=2, auth=auth, verifier=verifier) as (client,):
        for i in range(10):
            token = server.issue_opaque(sub=f"user{i}")
            opened = await client.post("/mcp", json=INITIALIZE, headers={**MCP_HEADERS, **bearer(token)})
            statuses.append(opened.status_code)
            server.revoke(token)  # as good as expired: its DELETE would get 401
            assert verifier.introspector is not None
            verifier.introspector._cache.clear()
    assert statuses == [200] * 10


# ----------------------------------------------------------------------- one audience rule

ACCEPTED = {RESOURCE, RESOURCE + "/", "HTTP://127.0.0.1:8000/mcp", "http://127.0.0.1:8000/./mcp"}
AUDIENCES = [
    *sorted(ACCEPTED),
    RESOURCE + "//",
    RESOURCE + "/x",
    RESOURCE[:-1],
    "http://127.0.0.1:8000/MCP",
    "http://127.0.0.1:8000/%6Dcp",
    "http://127.0.0.1:8000/mcp?x=1",
    "http://127.0.0.1:8000/mcp#f",
    "http://127.0.0.1:80/mcp",
    "https://127.0.0.1:8000/mcp",
    "http://localhost:8000/mcp",
    "http://127.0.0.1:8000",
]


@pytest.mark.parametrize("audience", AUDIENCES)
async def test_an_audience_names_this_server_by_one_rule_the_sdks(audience: str) -> None:
    """One trailing slash is ignored, as the SDK's bearer middleware ignores it, after the URL
    normalisation it applies (case of scheme and host, default port, dot segments); nothing else.
    The verifier and the SDK's own second check never disagree."""
    from mcp.server.auth.middleware.bearer_auth import BearerAuthBackend
    from pydantic import AnyHttpUrl

    from bridge.identity.token_claims import audience_match

    ours = audience_match({"aud": audience}, RESOURCE) is not None
    backend = BearerAuthBackend(ClientTokenVerifier(auth_for()), resource_server_url=AnyHttpUrl(RESOURCE))
    assert ours is backend._issued_for_this_resource(audience)
    assert ours is (audience in ACCEPTED)
    server = FakeAuthorizationServer(audience=RESOURCE)
    assert (await _status(server.token(aud=audience), server)).status_code == (200 if ours else 401)
