"""Every token the bridge learns stays redacted as long as it can appear (P26, P69).

A session token a workflow's login step returned, an OAuth2 token the bridge fetched, a token it
exchanged for a user: each is held (:mod:`bridge.secrets.held`) by the cache entry that may send
it and by every tool call that sent it, until that call's result is made; never "the N most
recent", which let a live token fall out when more than N calls ran at once.
"""

from __future__ import annotations

import contextvars
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bridge.contract.catalogue import EnvVar, SchemeUse, SecurityScheme
from bridge.identity.token_exchange import MAX_CACHED, ExchangeSettings, TokenExchanger
from bridge.modes.codemode import RUN_CODE
from bridge.secrets.credentials import Credentials
from bridge.secrets.held import HeldTokens, call_scope
from bridge.secrets.redact import Redactor
from generator.generate import build_catalogue
from generator.options import GenerateOptions
from tests.bridge.fake_upstream import Recorded, Reply, make_reply
from tests.bridge.modes.codemode.harness import code_client
from tests.e2e.test_identity import RESOURCE
from tests.e2e.test_identity import UPSTREAM as AUDIENCE
from tests.identity import BRIDGE_CLIENT, TOKEN_URL, FakeAuthorizationServer
from tests.workflows.harness import ENV, UPSTREAM, arazzo, served, shop_upstream, text, write
from tests.workflows.test_runtime import LOGIN

WAIT = 30.0
RUNS = 40  # more than the 32 "most recent" tokens redaction used to keep


def session_of(user: str) -> str:
    return f"sess-{user}-7f3a9c2e41b8"


@pytest.mark.anyio
async def test_concurrent_login_workflows_never_show_their_own_session_token(tmp_path: Path) -> None:
    # Each run logs in, then calls /me, which echoes the session it was sent; the first user's
    # /me answers only once every other run has sent its own session (and so been learnt).
    fake = shop_upstream()
    first = session_of("u0")
    others_sent = anyio.Event()
    seen: set[str] = set()

    async def handle(r: Recorded) -> Reply:
        if r.raw_path.startswith("/login"):
            user = dict(r.query_pairs)["user"]
            return make_reply(json_body=session_of(user), headers={"X-Expires-After": "soon"})
        sent = (r.header("authorization") or "").removeprefix("Bearer ")
        seen.add(sent)
        if len(seen - {first}) == RUNS - 1:
            others_sent.set()
        if sent == first:
            with anyio.fail_after(WAIT):
                await others_sent.wait()
        return make_reply(json_body={"user": f"you sent {sent}"})

    fake.handler(handle)
    results: dict[str, str] = {}
    async with served(tmp_path, arazzo(LOGIN), fake) as client:

        async def run(user: str) -> None:
            result = await client.call_tool("whoami", {"user": user})
            assert not result.is_error, text(result)
            results[user] = text(result) + str(result.structured_content)

        with anyio.fail_after(WAIT * 2):
            async with anyio.create_task_group() as tg:
                for i in range(RUNS):
                    tg.start_soon(run, f"u{i}")
    assert len(results) == RUNS and len(seen) == RUNS
    shown = {user: shown for user, shown in results.items() if session_of(user) in shown}
    assert not shown, f"{len(shown)} of {RUNS} results showed their own session token: {sorted(shown)}"
    assert all("you sent ***" in shown for shown in results.values())


# --------------------------------------------------------------------------------- the lifetime rule

_TOKENS = [f"token-{i:02d}-abcdefgh" for i in range(12)]


@settings(max_examples=200, deadline=None)
@given(
    steps=st.lists(
        st.tuples(st.sampled_from(["hold", "release", "call", "end"]), st.integers(0, len(_TOKENS) - 1)),
        max_size=80,
    )
)
def test_a_token_is_redacted_exactly_while_something_holds_it_and_memory_follows_what_is_live(
    steps: list[tuple[str, int]],
) -> None:
    redactor = Redactor()
    held = HeldTokens(redactor.learn)
    cached: dict[str, int] = {}  # what the "caches" hold, by count
    # Tool calls running at once, each in its own context (as the server's tasks are): its scope,
    # and the token it sent.
    calls: list[tuple[contextvars.Context, Any, str]] = []
    base = contextvars.copy_context()  # no call scope open
    for action, i in steps:
        token = _TOKENS[i]
        if action == "hold":
            held.hold(token)
            cached[token] = cached.get(token, 0) + 1
        elif action == "release" and cached.get(token):
            held.release(token)
            cached[token] -= 1
        elif action == "call":
            context, scope = base.copy(), call_scope()
            context.run(scope.__enter__)
            context.run(held.use, token)
            calls.append((context, scope, token))
        elif action == "end" and calls:
            context, scope, _ = calls.pop(i % len(calls))  # calls end in any order
            context.run(scope.__exit__, None, None, None)
        live = {t for t, n in cached.items() if n} | {t for _, _, t in calls}
        for t in live:
            assert "***" in redactor(f"echo {t} end") and t not in redactor(f"echo {t} end"), (t, steps)
        assert set(_live(held)) == live
        assert _indexed(redactor) <= 2 * len(live) + 8 + 1
    for context, scope, _ in calls:
        context.run(scope.__exit__, None, None, None)


def _live(held: HeldTokens) -> list[str]:
    return [t for t in _TOKENS if t in held]


def _indexed(redactor: Redactor) -> int:
    return len(redactor._learnt)  # what the search index holds, live and stale


def test_a_token_used_outside_any_call_is_among_the_most_recent() -> None:
    redactor = Redactor()
    held = HeldTokens(redactor.learn)
    for i in range(100):
        held.use(f"unscoped-token-{i:03d}")
    assert len(held) == 32 and "unscoped-token-099" in held and "unscoped-token-000" not in held


@pytest.mark.anyio
async def test_an_exchanged_token_stays_redacted_while_cached_or_sent_and_no_longer() -> None:
    server = FakeAuthorizationServer(audience=RESOURCE)
    settings = ExchangeSettings(TOKEN_URL, *BRIDGE_CLIENT, audience=AUDIENCE, transport=server.transport())
    redactor = Redactor()
    held = HeldTokens(redactor.learn)
    exchanger = TokenExchanger(settings, remember=held.use, held=held)
    users = MAX_CACHED + 40  # more than the exchange caches: the first ones are evicted
    with call_scope():  # a call that sent the first user's token, answered
        first = await exchanger.token_for("user0", server.token(sub="user0"), ("pets:read",))
    sent: list[str] = []
    started, answer = anyio.Event(), anyio.Event()

    async def long_call() -> None:  # sends the second user's token, answers at the end
        with call_scope():
            sent.append(await exchanger.token_for("user1", server.token(sub="user1"), ("pets:read",)))
            started.set()
            await answer.wait()

    with anyio.fail_after(WAIT):
        async with anyio.create_task_group() as tg:
            tg.start_soon(long_call)
            await started.wait()
            for i in range(2, users):
                with call_scope():
                    await exchanger.token_for(f"user{i}", server.token(sub=f"user{i}"), ("pets:read",))
            inflight = sent[0]
            assert inflight in held and inflight not in redactor(f"echo {inflight}")  # evicted, still sent
            assert len(held) == MAX_CACHED + 1  # the cache, and the call still running: nothing else
            answer.set()
    assert first not in held and inflight not in held  # evicted and answered: let go


@pytest.mark.anyio
async def test_a_fetched_oauth_token_stays_redacted_while_cached_however_many_tokens_come_and_go() -> None:
    fetched = "fetched-oauth-token-5d41402abc4b2a76"

    def token_endpoint(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json={"access_token": fetched, "expires_in": 3600})

    scheme = SecurityScheme(
        type="oauth2",
        token_url="https://auth.test/token",
        env=(EnvVar(role="client_id", name="CID"), EnvVar(role="client_secret", name="CSECRET")),
    )
    credentials = Credentials(
        {"oauth": scheme},
        {"CID": "bridge", "CSECRET": "client-secret-0123456789"},
        transport=httpx.MockTransport(token_endpoint),
    )
    with call_scope():  # the call that fetched it answered long ago
        parts = await credentials.for_operation(((SchemeUse(scheme="oauth"),),))
    assert ("Authorization", f"Bearer {fetched}") in parts.headers

    async def workflow_run(i: int) -> None:  # each sends its own session token, then answers
        with call_scope():
            credentials.remember_token(f"session-{i:03d}-7f3a9c2e41b8")
            await anyio.sleep(0)

    async with anyio.create_task_group() as tg:
        for i in range(RUNS):
            tg.start_soon(workflow_run, i)
    for i in range(RUNS):
        credentials.remember_token(f"library-call-{i:03d}-7f3a9c2e")  # calls outside any tool call
    assert fetched not in credentials.redact(f"echo {fetched}")  # still cached: may still be sent
    await credentials.aclose()


@pytest.mark.anyio
async def test_a_workflow_a_program_runs_holds_its_session_token_for_the_programs_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Code mode's host functions run inside the program's tool call: the token is held by that
    # call's scope, never left to the "outside any tool call" fallback.
    outside: list[str] = []
    monkeypatch.setattr(HeldTokens, "_use_unscoped", lambda self, token: outside.append(token))
    spec, flows = write(tmp_path, arazzo(LOGIN))
    catalogue, _ = build_catalogue(str(spec), GenerateOptions(workflows=(str(flows),), mode="code"))
    fake = shop_upstream()
    session = session_of("ann")

    def handle(r: Recorded) -> Reply:
        if r.raw_path.startswith("/login"):
            return make_reply(json_body=session, headers={"X-Expires-After": "soon"})
        return make_reply(json_body={"user": f"you sent {r.header('authorization')}"})

    fake.handler(handle)
    async with code_client(None, catalogue=catalogue, fake=fake, base_url=UPSTREAM, environ=ENV) as (client, _):
        with anyio.fail_after(WAIT):
            ran = await client.call_tool(RUN_CODE, {"code": "r = await whoami(user='ann')\nr"})
    assert not ran.is_error, text(ran)
    assert outside == [] and session not in text(ran) and "***" in text(ran)
