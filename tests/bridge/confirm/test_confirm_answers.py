"""Whatever a client answers to the confirmation form (a malformed elicitation result, any JSON),
the call is refused with the "did not answer / did not confirm" tool error and nothing is sent;
never the generic "failed unexpectedly"."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from mcp.client.session import ClientSession

from bridge.confirm.form import approved
from tests.bridge.calls.longrunning.harness import jobs_client
from tests.bridge.calls.longrunning.jobs_upstream import JobStore, serve_jobs
from tests.bridge.confirm.test_confirm import User, confirming, text

pytestmark = pytest.mark.anyio


@pytest.fixture
async def store(anyio_backend: str) -> Any:
    async with serve_jobs() as running:
        yield running


MALFORMED = {
    "unknown action": {"action": "maybe", "content": {"confirm": True}},
    "action a number": {"action": 7},
    "content a list": {"action": "accept", "content": ["confirm", True]},
    "content nested": {"action": "accept", "content": {"confirm": {"deep": [1, 2]}}},
    "no action": {"content": {"confirm": True}},
    "not an object": [1, "accept"],
}


@pytest.mark.parametrize("answer", MALFORMED.values(), ids=MALFORMED.keys())
async def test_a_malformed_confirmation_answer_is_a_refusal_not_a_bug(
    store: JobStore, answer: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def raw_answer(self: ClientSession, dctx: Any, method: str, params: Any) -> Any:
        return answer  # what a client that does not use the SDK's checks puts on the wire

    monkeypatch.setattr(ClientSession, "_on_request", raw_answer)
    declared = User("accept")  # declares form elicitation; the raw answer replaces its result
    async with jobs_client(store, mode="legacy", options=confirming(), elicitation_callback=declared) as c:
        result = await c.call_tool("cancelJob", {"jobId": "job-1"})
    assert result.is_error and "failed unexpectedly" not in text(result)
    assert "DELETE /jobs/{jobId}; nothing was sent" in text(result)
    assert store.requests == []


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=12,
)


@given(
    st.dictionaries(st.sampled_from(["action", "content", "confirm", "_meta"]) | st.text(max_size=6), JSON, max_size=4)
    | JSON
)
def test_only_an_accept_with_confirm_true_is_a_yes_whatever_the_answer(answer: Any) -> None:
    expected = (
        isinstance(answer, dict)
        and answer.get("action") == "accept"
        and isinstance(answer.get("content"), dict)
        and answer["content"].get("confirm") is True
    )
    assert approved(answer) is expected
