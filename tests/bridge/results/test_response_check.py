from __future__ import annotations

import json
import logging

import pytest

from bridge.results.response_check import ResponseContract
from generator.load.spec import load_spec


@pytest.fixture(scope="module")
def contract() -> ResponseContract:
    return ResponseContract(load_spec("specs/petstore.yaml").document)


def test_response_matching_the_spec_has_no_problems(contract: ResponseContract) -> None:
    body = json.dumps({"id": 1, "name": "Rex", "status": "available"}).encode()
    assert contract.problems("GET", "/pets/{petId}", 200, {"content-type": "application/json"}, body) == []


def test_response_with_wrong_types_names_the_problems(contract: ResponseContract) -> None:
    body = json.dumps({"id": "a"}).encode()
    problems = contract.problems("GET", "/pets/{petId}", 200, {"content-type": "application/json"}, body)
    assert len(problems) == 1
    assert "'a' is not of type 'integer'" in problems[0]
    assert "'name' is a required property" in problems[0]


def test_undeclared_status_is_reported(contract: ResponseContract) -> None:
    assert contract.problems("GET", "/pets/{petId}", 418, {"content-type": "application/json"}, b"{}") != []


def test_check_logs_mismatches_without_raising(contract: ResponseContract, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="bridge.response_check"):
        contract.check("GET", "/pets/{petId}", 200, {"content-type": "application/json"}, b'{"id": "a"}')
    assert "does not match the spec" in caplog.text


@pytest.mark.anyio
async def test_validate_responses_logs_a_mismatch_and_the_call_still_answers(
    caplog: pytest.LogCaptureFixture,
) -> None:
    from bridge.calls.http_tools import make_http_tool
    from bridge.calls.runtime import HttpRuntime
    from bridge.tools.registry import ToolContext
    from generator.generate import build_catalogue
    from generator.options import GenerateOptions
    from tests.bridge.fake_upstream import FakeUpstream

    catalogue, _ = build_catalogue("specs/petstore.yaml", GenerateOptions())
    fake = FakeUpstream()
    fake.reply(json_body={"available": "many"})
    runtime = HttpRuntime.create(
        catalogue,
        base_url="http://upstream.test/v1",
        environ={},
        transport=fake.transport(),
        contract=ResponseContract(load_spec("specs/petstore.yaml").document),
    )
    entry = next(t for t in catalogue.tools if t.name == "getInventory")
    async with runtime:
        with caplog.at_level(logging.WARNING, logger="bridge.response_check"):
            result = await make_http_tool(entry, runtime).run({}, ToolContext(tool_name=entry.name))
    # The model gets the answer with a note that it is not the documented shape (a 2xx is not an
    # error: a retry could repeat a write); the contract check tells the operator.
    assert not result.is_error and "available" in result.content[0].text  # type: ignore[union-attr]
    assert result.structured_content is not None and "_truncated" in result.structured_content
    assert "GET /store/inventory -> 200 does not match the spec" in caplog.text
