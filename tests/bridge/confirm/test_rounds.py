"""Confirmations over 2026-07-28 input rounds resume where they stopped; they never replay a sent call.

The official client's driver answers each ``input_required`` and retries the call (the default
``mode="auto"``); the tests that need a hand on the state drive ``client.session`` themselves.
The fake upstream records what was sent: each write once per approved run.
"""

from __future__ import annotations

from pathlib import Path

import mcp_types
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bridge.confirm import rounds
from bridge.confirm.rounds import PoolFull, Round, RoundStore, Sent
from bridge.tools.owned import Caller
from tests.bridge.confirm.harness import User, accounts_client, accounts_upstream, sent, text

pytestmark = pytest.mark.anyio
YES = {"confirm": mcp_types.ElicitResult(action="accept", content={"confirm": True})}
ERAS = ["auto", "legacy"]


@pytest.mark.parametrize("era", ERAS)
async def test_a_workflow_that_creates_then_deletes_sends_each_write_once(tmp_path: Path, era: str) -> None:
    fake, user = accounts_upstream(), User("accept")
    async with accounts_client(tmp_path, fake, era=era, user=user) as client:
        result = await client.call_tool("orderAndCancel", {"item": "pen"})
    assert not result.is_error, text(result)
    assert sent(fake) == ["POST /v2/orders", "DELETE /v2/orders/ord-9"]
    assert len(user.forms) == 1


@pytest.mark.parametrize("era", ERAS)
async def test_two_confirmed_deletes_in_one_workflow_both_complete(tmp_path: Path, era: str) -> None:
    fake, user = accounts_upstream(), User("accept")
    async with accounts_client(tmp_path, fake, era=era, user=user) as client:
        result = await client.call_tool("cancelBoth", {"first": "a", "second": "b"})
    assert not result.is_error, text(result)
    assert sent(fake) == ["DELETE /v2/orders/a", "DELETE /v2/orders/b"]
    assert [form.split("\n")[0] for form in user.forms] == [
        "The assistant wants to send DELETE /v2/orders/a",
        "The assistant wants to send DELETE /v2/orders/b",
    ]


@pytest.mark.parametrize("era", ERAS)
async def test_a_declined_second_confirmation_keeps_the_first_and_sends_nothing_more(tmp_path: Path, era: str) -> None:
    fake, user = accounts_upstream(), User("accept", "decline")
    async with accounts_client(tmp_path, fake, era=era, user=user) as client:
        result = await client.call_tool("cancelBoth", {"first": "a", "second": "b"})
    assert result.is_error and "declined DELETE /orders/{id}; nothing was sent" in text(result)
    assert sent(fake) == ["DELETE /v2/orders/a"]


async def test_a_replayed_or_moved_answer_sends_nothing(tmp_path: Path) -> None:
    fake = accounts_upstream()
    async with accounts_client(tmp_path, fake, user=User()) as client:
        session = client.session
        first = await session.call_tool("orderAndCancel", {"item": "pen"}, allow_input_required=True)
        assert isinstance(first, mcp_types.InputRequiredResult) and first.request_state
        assert sent(fake) == ["POST /v2/orders"]  # the unconfirmed POST went out once, before the round
        moved = await session.call_tool(
            "orderAndCancel", {"item": "ink"}, input_responses=YES, request_state=first.request_state
        )
        assert sent(fake) == ["POST /v2/orders"]  # a state for other arguments: nothing, not even the POST
        again = await session.call_tool("orderAndCancel", {"item": "pen"}, allow_input_required=True)
        assert isinstance(again, mcp_types.InputRequiredResult)
        ok = await session.call_tool(
            "orderAndCancel", {"item": "pen"}, input_responses=YES, request_state=again.request_state
        )
        replayed = await session.call_tool(
            "orderAndCancel", {"item": "pen"}, input_responses=YES, request_state=again.request_state
        )
    assert isinstance(moved, mcp_types.CallToolResult) and moved.is_error and "not valid" in text(moved)
    assert isinstance(ok, mcp_types.CallToolResult) and not ok.is_error, text(ok)
    assert isinstance(replayed, mcp_types.CallToolResult) and replayed.is_error and "not valid" in text(replayed)
    # Two runs were started (two POSTs, one each); the approved one resumed and sent its DELETE once.
    assert sent(fake) == ["POST /v2/orders", "POST /v2/orders", "DELETE /v2/orders/ord-9"]


async def test_an_expired_round_sends_nothing(tmp_path: Path) -> None:
    fake = accounts_upstream()
    async with accounts_client(tmp_path, fake, user=User(), timeout=0.0) as client:
        session = client.session
        first = await session.call_tool("orderAndCancel", {"item": "pen"}, allow_input_required=True)
        assert isinstance(first, mcp_types.InputRequiredResult)
        late = await session.call_tool(
            "orderAndCancel", {"item": "pen"}, input_responses=YES, request_state=first.request_state
        )
    assert isinstance(late, mcp_types.CallToolResult) and late.is_error and "expired" in text(late)
    assert sent(fake) == ["POST /v2/orders"]


async def test_a_resource_round_is_bound_to_its_uri(tmp_path: Path) -> None:
    fake = accounts_upstream()
    async with accounts_client(tmp_path, fake, user=User()) as client:
        session = client.session
        first = await session.read_resource("accounts:///reports/r1", allow_input_required=True)
        assert isinstance(first, mcp_types.InputRequiredResult)
        with pytest.raises(Exception, match="not valid"):
            await session.read_resource(
                "accounts:///reports/r2", input_responses=YES, request_state=first.request_state
            )
    assert sent(fake) == []


@pytest.mark.parametrize(("era", "expected"), [("legacy", 2), ("auto", 1)])
async def test_a_program_never_replays_a_sent_write(tmp_path: Path, era: str, expected: int) -> None:
    # On 2026-07-28 a program cannot stop for a round: its covered call is refused, and the POST
    # it already made is not made again by any retry (there is none).
    program = 'order = await createOrder(item="pen")\nawait cancelOrder(id=order["id"])\n"done"'
    fake, user = accounts_upstream(), User("accept")
    async with accounts_client(tmp_path, fake, mode="code", era=era, user=user) as client:
        result = await client.call_tool("run_code", {"code": program})
    assert sent(fake) == ["POST /v2/orders", "DELETE /v2/orders/ord-9"][:expected]
    assert result.is_error is (era == "auto")
    if era == "auto":
        assert "a program cannot stop to ask on this connection" in text(result)


def _round(size: int, expires: float = 1e18) -> Round:
    return Round("request", expires, ("DELETE /x", "d"), (Sent("POST /y", "d", b"", size),))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["ann", "bob", "eve"]), st.integers(0, 400)), max_size=60))
def test_open_rounds_stay_within_every_bound(opened: list[tuple[str, int]]) -> None:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(rounds, "MAX_OPEN_ROUNDS", 10)
        patch.setattr(rounds, "MAX_ROUNDS_PER_CALLER", 4)
        patch.setattr(rounds, "MAX_ROUNDS_PER_CLIENT", 8)
        patch.setattr(rounds, "MAX_KEPT_BYTES", 2000)
        store = RoundStore()
        callers = {who: Caller(who, "one-client" if who != "eve" else "eve") for who in ("ann", "bob", "eve")}
        kept: list[tuple[str, str, int]] = []
        for who, size in opened:
            try:
                kept.append((who, store.open(callers[who], _round(size)), size))
            except PoolFull:
                # Refused only at a limit, never by dropping an open round (anyone's).
                mine = sum(1 for k in kept if k[0] == who)
                group = sum(1 for k in kept if callers[k[0]].group == callers[who].group)
                full = len(kept) >= 10 or mine >= 4 or group >= 8 or sum(k[2] for k in kept) + size > 2000
                assert full
            assert len(store) == len(kept) <= 10 and store.kept_bytes == sum(k[2] for k in kept) <= 2000
        # Each round is taken once, and only by its own caller.
        for who, nonce, _ in kept:
            other = callers["eve" if who != "eve" else "ann"]
            assert store.take(other, nonce) is None
            assert store.take(callers[who], nonce) is not None and store.take(callers[who], nonce) is None


async def test_a_run_whose_kept_answers_are_too_large_is_refused_at_the_covered_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from bridge.confirm import asking
    from tests.bridge.fake_upstream import make_reply

    monkeypatch.setattr(asking, "MAX_ROUND_BYTES", 4000)  # one answer cannot pass 1 MiB (the response cap); several can
    fake = accounts_upstream()
    big = {"id": "ord-9", "pad": "x" * 5000}
    fake.route("POST", "/v2/orders", make_reply(200, json_body=big))
    user = User("accept")
    async with accounts_client(tmp_path, fake, user=user) as client:
        result = await client.call_tool("orderAndCancel", {"item": "pen"})
    assert result.is_error and "too large to keep while the user is asked" in text(result)
    assert "the calls before it were" in text(result) and user.forms == []
    assert sent(fake) == ["POST /v2/orders"]
