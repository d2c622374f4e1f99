"""A Redis that answers anything (nil, an integer, a short array, text, a huge bulk or array header)
fails closed with a message naming the cause, never the generic bug error, and the bridge reads
no more of the reply than its bound."""

from __future__ import annotations

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp import Client

from bridge.ops.settings import OpsSettings
from bridge.ops.shared_limits import SharedLimits, SharedLimitsUnavailable
from bridge.tools.errors import RateLimitExceeded, TooManyConcurrentCalls
from tests.ops.conftest import Gated, observed_server, text
from tests.services.fake_redis import fake_redis

pytestmark = pytest.mark.anyio

HOSTILE = {
    "nil": b"$-1\r\n",
    "nil array": b"*-1\r\n",
    "integer": b":5\r\n",
    "short array": b"*1\r\n:1\r\n",
    "text": b"+hello\r\n",
    "an error": b"-ERR no such thing\r\n",
    "strings, not integers": b"*2\r\n$1\r\n1\r\n$1\r\n0\r\n",
    "an unknown code": b"*2\r\n:7\r\n:0\r\n",
    "a 512 MiB bulk": b"$536870912\r\n",
    "a 100-million-item array": b"*100000000\r\n",
    "not RESP": b"\xb2\xff\r\n",
}


@pytest.mark.parametrize("reply", HOSTILE.values(), ids=HOSTILE.keys())
async def test_a_redis_answering_anything_fails_closed_with_a_message_naming_it(reply: bytes) -> None:
    async with fake_redis(reply, stream=reply.startswith((b"$5", b"*1000"))) as redis:
        state = Gated()
        async with observed_server(OpsSettings(limits_redis=redis.url), state) as (server, _):
            async with Client(server) as client:
                with anyio.fail_after(20):
                    answer = await client.call_tool("getPet", {"petId": 1})
    message = text(answer)
    assert answer.is_error is True and "failed unexpectedly" not in message
    assert f"Redis at 127.0.0.1:{redis.port}/0" in message and "Nothing was sent" in message
    assert state.requests == 0 and redis.evals >= 1


async def test_a_well_formed_reply_still_lets_the_call_go() -> None:
    async with fake_redis(b"*2\r\n:1\r\n:0\r\n") as redis:
        state = Gated()
        async with observed_server(OpsSettings(limits_redis=redis.url), state) as (server, _):
            async with Client(server) as client:
                answer = await client.call_tool("getPet", {"petId": 1})
    assert answer.is_error is False and state.requests == 1


RESP_ITEM = st.one_of(
    st.binary(max_size=40).map(lambda b: b + b"\r\n"),
    st.integers().map(lambda n: f":{n}\r\n".encode()),
    st.integers(-2, 10**12).map(lambda n: f"${n}\r\n".encode()),
    st.integers(-2, 10**12).map(lambda n: f"*{n}\r\n".encode()),
    st.text(max_size=20).map(lambda t: f"+{t}\r\n".encode("utf-8", "replace")),
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(RESP_ITEM, min_size=1, max_size=4).map(b"".join))
def test_any_bytes_from_redis_are_a_slot_a_refusal_or_unavailable_never_a_bug(reply: bytes) -> None:
    async def attempt() -> None:
        async with fake_redis(reply) as redis:
            limits = SharedLimits(redis.url, api="petstore")
            try:
                with anyio.fail_after(20):
                    async with limits.hold("op", limit=1, wait=0.0, busy="busy", limited=lambda s: "limited"):
                        pass
            except (SharedLimitsUnavailable, TooManyConcurrentCalls, RateLimitExceeded):
                pass
            finally:
                await limits.aclose()

    anyio.run(attempt)
