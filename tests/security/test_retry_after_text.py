"""``Retry-After`` is upstream text: any value (a non-ASCII digit such as ``²``, hundreds or
thousands of digits, garbage) leaves the call's answer intact, the API's own error or its result,
and never the generic "failed unexpectedly"; a long-running start already accepted keeps its handle."""

from __future__ import annotations

import math
from typing import Any

import anyio
import pytest
from hypothesis import given
from hypothesis import strategies as st

from bridge.upstream.retry import MAX_RETRY_AFTER, parse_retry_after
from tests.bridge.calls.longrunning.harness import jobs_client
from tests.bridge.calls.longrunning.jobs_upstream import JobStore, serve_jobs
from tests.security.fault_server import Fault, FaultServer
from tests.security.harness import bridge_client, fast, result_text

pytestmark = pytest.mark.anyio

HOSTILE = {
    "superscript two": "\u00b2",
    "400 digits": "9" * 400,
    "5000 digits": "9" * 5000,
    "exponent": "1e400",
    "a far date": "Fri, 31 Dec 9999 23:59:59 GMT",
    "a date of year zero": "Mon, 01 Jan 0000 00:00:00 GMT",
}


@pytest.mark.parametrize("value", HOSTILE.values(), ids=HOSTILE.keys())
@pytest.mark.parametrize("retries", [0, 3])
async def test_a_retry_after_of_any_text_never_fails_the_call(value: str, retries: int) -> None:
    async with FaultServer(Fault.error(503, retry_after=value), Fault.echo()) as server:
        async with bridge_client(server.url + "/v1", settings=fast(retries=retries, retry_backoff=0.01)) as client:
            with anyio.fail_after(20):
                result = await client.call_tool("getItem", {"id": "1"})
    answer = result_text(result)
    assert "failed unexpectedly" not in answer
    assert (result.is_error and "HTTP 503" in answer) or not result.is_error


@pytest.fixture
async def store(anyio_backend: str) -> Any:
    async with serve_jobs() as running:
        yield running


@pytest.mark.parametrize("value", HOSTILE.values(), ids=HOSTILE.keys())
async def test_a_long_running_start_keeps_its_handle_whatever_its_retry_after(store: JobStore, value: str) -> None:
    store.retry_after = value
    async with jobs_client(store) as client:
        with anyio.fail_after(30):
            result = await client.call_tool("startJob", {"kind": "report", "steps": 2})
    assert not result.is_error, result_text(result)
    assert [job.status for job in store.jobs.values()] == ["succeeded"]


@given(st.text(max_size=300) | st.binary(max_size=300).map(lambda b: b.decode("latin-1")))
def test_parse_retry_after_reads_any_text_as_a_bounded_wait_or_none(value: str) -> None:
    wait = parse_retry_after(value)
    assert wait is None or (math.isfinite(wait) and 0.0 <= wait <= MAX_RETRY_AFTER)


@given(st.text(alphabet="0123456789", min_size=1, max_size=6000))
def test_parse_retry_after_reads_any_count_of_seconds_capped(digits: str) -> None:
    assert parse_retry_after(digits) == min(float(digits), MAX_RETRY_AFTER)  # float() has no digit limit
