"""Token exchange (RFC 8693): which cached upstream token a call gets, and how many exchanges it costs."""

from __future__ import annotations

import hashlib
import json
from typing import Any
from urllib.parse import parse_qs

import anyio
import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bridge.identity.token_exchange import ExchangeSettings, TokenExchanger
from bridge.tools.errors import CredentialsError

TOKEN_URL = "https://as.test/token"
ID_TOKEN = "urn:ietf:params:oauth:token-type:id_token"
SAML = "urn:ietf:params:oauth:token-type:saml2"
REFRESH = "urn:ietf:params:oauth:token-type:refresh_token"


def exchanged_for(subject_token: str, scope: str) -> str:
    return "upstream-" + hashlib.sha256(f"{subject_token}|{scope}".encode()).hexdigest()[:24]


class TokenEndpoint:
    """A token endpoint at the transport: the token it issues names the subject token and scope it got."""

    def __init__(self) -> None:
        self.exchanges: list[tuple[str, str]] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        form = {k: v[0] for k, v in parse_qs(request.content.decode()).items()}
        self.exchanges.append((form["subject_token"], form.get("scope", "")))
        token = exchanged_for(form["subject_token"], form.get("scope", ""))
        body = json.dumps({"access_token": token, "token_type": "Bearer", "expires_in": 300}).encode()
        # A streamed body, as a socket gives it (the bridge reads answers raw, with a byte cap).
        return httpx.Response(200, stream=httpx.ByteStream(body), headers={"Content-Type": "application/json"})


def exchanger(endpoint: TokenEndpoint) -> TokenExchanger:
    settings = ExchangeSettings(
        TOKEN_URL, "bridge", "secret", "https://api.test", transport=httpx.MockTransport(endpoint)
    )
    return TokenExchanger(settings)


# Calls by a few users, each with one or two tokens (another client, a refreshed token, other scopes).
CALLS = st.lists(
    st.tuples(
        st.sampled_from(["alice", "bob", None]),
        st.sampled_from(["tok-a-0123456789", "tok-b-0123456789", "tok-c-0123456789"]),
        st.sampled_from([("pets:read",), ("pets:write",), ("pets:read", "pets:write"), ()]),
    ),
    min_size=1,
    max_size=12,
)


@settings(max_examples=60, deadline=None)
@given(calls=CALLS)
def test_a_call_gets_only_a_token_exchanged_for_its_own_subject_token(
    calls: list[tuple[str | None, str, tuple[str, ...]]],
) -> None:
    endpoint = TokenEndpoint()
    ex = exchanger(endpoint)

    async def run() -> None:
        for subject, token, scopes in calls:
            got = await ex.token_for(subject, token, scopes)
            assert got == exchanged_for(token, " ".join(sorted(scopes)))

    anyio.run(run)
    distinct = {(token, tuple(sorted(scopes)), subject) for subject, token, scopes in calls}
    assert len(endpoint.exchanges) == len(distinct)  # and each exchange is made once, then cached


def test_a_burst_of_one_users_calls_costs_one_exchange() -> None:
    endpoint = TokenEndpoint()
    ex = exchanger(endpoint)
    got: list[str] = []

    async def run() -> None:
        async with anyio.create_task_group() as tg:
            for _ in range(50):
                tg.start_soon(lambda: _collect(ex, got))

    anyio.run(run)
    assert len(endpoint.exchanges) == 1
    assert set(got) == {exchanged_for("tok-a-0123456789", "pets:read")}


async def _collect(ex: TokenExchanger, got: list[str]) -> None:
    got.append(await ex.token_for("alice", "tok-a-0123456789", ("pets:read",)))


ACCESS = "urn:ietf:params:oauth:token-type:access_token"


@pytest.mark.parametrize(
    "answer",
    [
        pytest.param({"token_type": "Bearer"}, id="no-token"),
        pytest.param({"access_token": "", "token_type": "Bearer"}, id="empty-token"),
        pytest.param({"access_token": 42, "token_type": "Bearer"}, id="token-not-a-string"),
        pytest.param({"access_token": "x" * 20_000, "token_type": "Bearer"}, id="huge-token"),
        pytest.param({"access_token": "t0123456789", "token_type": "mac"}, id="not-bearer"),
        pytest.param(
            {"access_token": "t0123456789", "token_type": "N_A", "issued_token_type": ID_TOKEN}, id="an-id-token"
        ),
        pytest.param(
            {"access_token": "t0123456789", "token_type": "N_A", "issued_token_type": SAML}, id="a-saml-assertion"
        ),
        pytest.param(
            {"access_token": "t0123456789", "token_type": "Bearer", "issued_token_type": REFRESH}, id="a-refresh-token"
        ),
    ],
)
def test_only_an_issued_bearer_access_token_goes_upstream(answer: dict[str, Any]) -> None:
    def endpoint(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, stream=httpx.ByteStream(json.dumps(answer).encode()))

    settings = ExchangeSettings(
        TOKEN_URL, "bridge", "secret", "https://api.test", transport=httpx.MockTransport(endpoint)
    )

    async def run() -> None:
        with pytest.raises(CredentialsError, match="without a usable bearer token"):
            await TokenExchanger(settings).token_for("alice", "tok-a-0123456789", ("pets:read",))

    anyio.run(run)


@pytest.mark.parametrize(
    "answer",
    [
        pytest.param({"access_token": "t0123456789", "token_type": "Bearer"}, id="plain"),
        pytest.param({"access_token": "t0123456789", "token_type": "bearer", "issued_token_type": ACCESS}, id="typed"),
        pytest.param({"access_token": "t0123456789", "token_type": "N_A", "issued_token_type": ACCESS}, id="n_a"),
    ],
)
def test_an_issued_access_token_is_used(answer: dict[str, Any]) -> None:
    def endpoint(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, stream=httpx.ByteStream(json.dumps(answer).encode()))

    settings = ExchangeSettings(
        TOKEN_URL, "bridge", "secret", "https://api.test", transport=httpx.MockTransport(endpoint)
    )
    got = anyio.run(TokenExchanger(settings).token_for, "alice", "tok-a-0123456789", ("pets:read",))
    assert got == "t0123456789"


def test_a_forgotten_token_is_exchanged_again() -> None:
    endpoint = TokenEndpoint()
    ex = exchanger(endpoint)

    async def run() -> None:
        await ex.token_for("alice", "tok-a-0123456789", ("pets:read",))
        ex.forget("alice", "tok-a-0123456789", ("pets:read",))
        await ex.token_for("alice", "tok-a-0123456789", ("pets:read",))
        await ex.token_for("alice", "tok-a-0123456789", ("pets:read",))

    anyio.run(run)
    assert len(endpoint.exchanges) == 2
