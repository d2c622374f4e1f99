"""What a status answer means, how long until the next poll, and what a cancel link reads: tables."""

from __future__ import annotations

import json
from typing import Any

import anyio
import httpx
import pytest

from bridge.calls.longrunning.follow import FollowSettings, Pending, schedule_next
from bridge.calls.longrunning.status import read_status
from bridge.contract.catalogue import LongRunning
from bridge.contract.expressions.links import LinkError, LinkSource, check_expression, evaluate
from bridge.upstream.client import UpstreamResponse

DEFAULT = LongRunning()
CUSTOM = LongRunning(state="/progress/phase", succeeded=("written",), failed=("broken",), result="/file")


def answer(body: Any, status: int = 200, **headers: str) -> UpstreamResponse:
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    return UpstreamResponse(
        status=status,
        reason="",
        headers=httpx.Headers({"content-type": "application/json", **headers}),
        content=content,
        url=httpx.URL("http://api.test/v1/jobs/1/status"),
        operation="POST /jobs",
    )


@pytest.mark.parametrize(
    ("body", "status", "settings", "state", "result"),
    [
        ({"status": "running"}, 200, DEFAULT, "running", None),
        ({"status": "InProgress"}, 200, DEFAULT, "running", None),  # Azure's spelling, any case
        ({"status": "not_started"}, 200, DEFAULT, "running", None),
        ({"provisioningState": "Creating"}, 200, DEFAULT, "running", None),
        ({"status": "Succeeded"}, 200, DEFAULT, "succeeded", None),
        ({"status": "Failed"}, 200, DEFAULT, "failed", None),
        ({"state": "CANCELLED"}, 200, DEFAULT, "failed", None),
        ({"status": "succeeded"}, 202, DEFAULT, "running", None),  # 202 always means "not yet"
        ({"status": "available", "name": "Rex"}, 200, DEFAULT, "succeeded", None),  # a resource's own status
        ({"id": 1}, 200, DEFAULT, "succeeded", None),  # no state at all: the final resource
        (b"not json", 200, DEFAULT, "succeeded", None),
        ([1, 2], 200, DEFAULT, "succeeded", None),
        ({"done": False}, 200, DEFAULT, "running", None),  # Google's operations
        ({"done": True, "response": {"x": 1}}, 200, DEFAULT, "succeeded", {"x": 1}),
        ({"done": True, "error": {"code": 3}}, 200, DEFAULT, "failed", None),
        ({"progress": {"phase": "writing"}}, 200, CUSTOM, "running", None),  # not in `succeeded`: not yet
        ({"progress": {"phase": "written"}, "file": {"n": 1}}, 200, CUSTOM, "succeeded", {"n": 1}),
        ({"progress": {"phase": "broken"}}, 200, CUSTOM, "failed", None),
        ({"status": "running"}, 200, CUSTOM, "succeeded", None),  # the pointer names no state: final
    ],
)
def test_status_answers_are_read_as_the_table_says(
    body: Any, status: int, settings: LongRunning, state: str, result: Any
) -> None:
    reading = read_status(answer(body, status), settings)
    assert reading.state == state
    assert reading.result == result


def test_a_finished_status_naming_a_resource_location_points_at_it() -> None:
    reading = read_status(answer({"status": "Succeeded", "resourceLocation": "/v1/things/1"}), DEFAULT)
    assert reading.result_url == "/v1/things/1"


class _Call:
    operation = "POST /jobs"


def pending() -> Pending:
    return Pending(call=_Call(), url=httpx.URL("http://api.test/v1/s"), source=LinkSource("POST", "", 202), started=0.0)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("retry_after", "expected"),
    [("7", 7.0), ("0", 0.5), ("100000", 30.0), (None, 1.0), ("garbage", 1.0)],
)
@pytest.mark.anyio
async def test_retry_after_sets_the_next_poll_within_the_settings_bounds(
    retry_after: str | None, expected: float
) -> None:
    settings = FollowSettings(first_interval=1.0, min_interval=0.5, max_interval=30.0)
    headers = {"retry-after": retry_after} if retry_after is not None else {}
    waiting = pending()
    before = anyio.current_time()
    schedule_next(waiting, answer({}, 202, **headers), settings)
    assert waiting.not_before - before == pytest.approx(expected, abs=0.05)


@pytest.mark.anyio
async def test_without_retry_after_the_interval_grows_to_the_maximum() -> None:
    settings = FollowSettings(first_interval=1.0, max_interval=3.0)
    waiting = pending()
    intervals = []
    for _ in range(6):
        schedule_next(waiting, answer({}, 202), settings)
        intervals.append(waiting.interval)
    assert intervals == [1.0, 1.5, 2.25, 3.0, 3.0, 3.0]


SOURCE = LinkSource(
    method="POST",
    url="http://api.test/v1/jobs?region=eu",
    status=202,
    request={"path": {"tenant": "acme"}, "query": {"region": "eu"}, "header": {"X-Trace": "t1"}},
    request_body={"kind": "report", "options": {"fast": True}},
    headers=httpx.Headers({"X-Job": "job-9"}),
    body=json.dumps({"id": "job-9", "links": [{"rel": "self"}]}).encode(),
)


@pytest.mark.parametrize(
    ("expression", "value"),
    [
        ("$response.body#/id", "job-9"),
        ("$response.body#/links/0/rel", "self"),
        ("$response.header.X-Job", "job-9"),
        ("$response.header.x-job", "job-9"),
        ("$request.path.tenant", "acme"),
        ("$request.query.region", "eu"),
        ("$request.header.x-trace", "t1"),
        ("$request.body#/options/fast", True),
        ("$statusCode", 202),
        ("$method", "POST"),
        ("constant", "constant"),
        (42, 42),
    ],
)
def test_link_expressions_read_the_starting_call(expression: Any, value: Any) -> None:
    assert check_expression(expression) is None
    assert evaluate(expression, SOURCE) == value


@pytest.mark.parametrize("expression", ["$response.body#/missing", "$response.header.X-None", "$request.path.nope"])
def test_a_link_expression_naming_nothing_is_an_error(expression: str) -> None:
    with pytest.raises(LinkError):
        evaluate(expression, SOURCE)


@pytest.mark.parametrize("expression", ["$env.HOME", "$response.body#/a b", "{$url}", "$request.cookie.session"])
def test_unsupported_expressions_are_refused_when_generating(expression: str) -> None:
    assert check_expression(expression) is not None
    assert check_expression({"an": "object"}) is not None


@pytest.mark.anyio
async def test_a_handle_works_only_for_its_owner() -> None:
    from bridge.calls.context import CallContext
    from bridge.calls.longrunning.tracker import OperationTracker
    from bridge.tools.errors import ToolError
    from bridge.tools.owned import UNKNOWN_CALLER, Caller

    tracker = OperationTracker({})
    waiting = pending()
    waiting.started = anyio.current_time()
    alice = Caller("token:alice|app", "token:alice|app")
    tracker._remember(waiting, CallContext(surface="startJob", caller=alice))
    assert waiting.handle.startswith("op_")
    others = (
        Caller("token:bob|app", "token:bob|app"),
        Caller("token:alice|other", "token:alice|other"),
        UNKNOWN_CALLER,
    )
    for caller in others:
        with pytest.raises(ToolError, match="handle is unknown"):
            await tracker.check(waiting.handle, CallContext(surface="get_operation_status", caller=caller))
