from __future__ import annotations

import json
import logging

import pytest

from bridge.contract import ResponseContract
from generator.load import load_spec


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
    with caplog.at_level(logging.WARNING, logger="bridge.contract"):
        contract.check("GET", "/pets/{petId}", 200, {"content-type": "application/json"}, b'{"id": "a"}')
    assert "does not match the spec" in caplog.text
