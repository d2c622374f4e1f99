"""A pagination cursor is client text: on ``resources/list``, ``resources/templates/list`` and
``tasks/list`` anything the bridge did not hand out (``²``, 5,000 digits, words, a negative
number) is invalid params (-32602) with an actionable message, never code 0 with Python's."""

from __future__ import annotations

from typing import Any

import mcp_types
import pytest
from hypothesis import given
from hypothesis import strategies as st
from mcp import MCPError

from bridge.resources import PAGE
from bridge.server.cursor import page_start
from tests.bridge.calls.longrunning.harness import jobs_client
from tests.bridge.calls.longrunning.jobs_upstream import JobStore, serve_jobs
from tests.bridge.resources.test_resources import WITH_RESOURCES, many_gets

pytestmark = pytest.mark.anyio

BAD = {
    "superscript two": "\u00b2",
    "5000 digits": "9" * 5000,
    "400 digits": "9" * 400,
    "a word": "next",
    "negative": "-1",
    "empty": "",
    "arabic digits": "\u0661",
}
LISTS = ["resources/list", "resources/templates/list", "tasks/list"]


@pytest.fixture
async def store(anyio_backend: str) -> Any:
    async with serve_jobs() as running:
        yield running


@pytest.mark.parametrize("method", LISTS)
async def test_a_cursor_of_any_text_is_invalid_params_on_every_list(store: JobStore, method: str) -> None:
    catalogue = None if method == "tasks/list" else many_gets(PAGE + 5)  # the jobs API's tools run as tasks
    async with jobs_client(store, mode="legacy", options=WITH_RESOURCES, catalogue=catalogue) as client:
        send = client.session._dispatcher.send_raw_request
        errors = {}
        for name, cursor in BAD.items():
            with pytest.raises(MCPError) as raised:
                await send(method, {"cursor": cursor})
            errors[name] = raised.value.error
        first = await send(method, {})
    assert {name: error.code for name, error in errors.items()} == dict.fromkeys(BAD, mcp_types.INVALID_PARAMS)
    assert all("Invalid cursor" in error.message and "nextCursor" in error.message for error in errors.values())
    assert isinstance(first, dict)


@given(st.text(max_size=60) | st.binary(max_size=60).map(lambda b: b.decode("latin-1")), st.integers(0, 10_000))
def test_page_start_reads_any_text_as_an_offset_or_invalid_params(cursor: str, total: int) -> None:
    try:
        start = page_start(cursor, total)
    except MCPError as exc:
        assert exc.error.code == mcp_types.INVALID_PARAMS
    else:
        assert 0 <= start <= total and cursor == str(start).zfill(len(cursor))
