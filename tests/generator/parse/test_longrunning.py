"""Which operations the generator marks long-running, and how it resolves their cancel links: a table."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bridge.contract.catalogue import Catalogue, LongRunning, OperationLink
from generator.generate import build_catalogue
from generator.issues import Issue
from generator.options import GenerateOptions

ID = {"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}
JOB = {"type": "object", "properties": {"id": {"type": "string"}}}
LOCATION = {"Location": {"schema": {"type": "string"}}}


def accepted(headers: dict[str, Any] | None = None, links: dict[str, Any] | None = None) -> dict[str, Any]:
    response: dict[str, Any] = {"description": "accepted", "content": {"application/json": {"schema": JOB}}}
    if headers is not None:
        response["headers"] = headers
    if links is not None:
        response["links"] = links
    return response


def build(tmp_path: Path, start: dict[str, Any], **options: Any) -> tuple[Catalogue, tuple[Issue, ...]]:
    spec = {
        "openapi": "3.0.3",
        "info": {"title": "Jobs", "version": "1"},
        "paths": {
            "/jobs": {"post": {"operationId": "start", **start}},
            "/jobs/{id}": {
                "parameters": [ID],
                "delete": {"operationId": "stop", "responses": {"204": {"description": "gone"}}},
            },
        },
    }
    path = tmp_path / "jobs.json"
    path.write_text(json.dumps(spec))
    return build_catalogue(str(path), GenerateOptions(**options))


def start_entry(catalogue: Catalogue) -> Any:
    return next(e for e in catalogue.tools if e.name == "start")


CANCEL = {"stop": {"operationId": "stop", "parameters": {"id": "$response.body#/id"}}}
BY_REF = {"operationRef": "#/paths/~1jobs~1{id}/delete", "parameters": {"path.id": "$response.header.X-Job"}}


@pytest.mark.parametrize(
    ("start", "options", "expected"),
    [
        ({"responses": {"202": accepted(LOCATION)}}, {}, LongRunning()),
        ({"responses": {"202": accepted({"operation-location": {"schema": {"type": "string"}}})}}, {}, LongRunning()),
        ({"responses": {"202": accepted()}}, {}, None),  # no status URL header: an ordinary answer
        ({"responses": {"200": accepted(LOCATION)}}, {}, None),
        ({"responses": {"202": accepted(LOCATION)}, "x-mcp-async": False}, {}, None),
        # Azure's rules: autorest's default final-state-via for a POST, else the one the spec names.
        (
            {"responses": {"200": accepted()}, "x-ms-long-running-operation": True},
            {},
            LongRunning(final_state_via="location"),
        ),
        (
            {
                "responses": {"200": accepted()},
                "x-ms-long-running-operation": True,
                "x-ms-long-running-operation-options": {"final-state-via": "azure-async-operation"},
            },
            {},
            LongRunning(final_state_via="azure-async-operation"),
        ),
        ({"responses": {"200": accepted()}, "x-mcp-async": True}, {}, LongRunning()),
        (
            {"responses": {"200": accepted()}, "x-mcp-async": {"state": "/phase", "succeeded": ["ok"]}},
            {},
            LongRunning(state="/phase", succeeded=("ok",)),
        ),
        (
            {"responses": {"202": accepted(LOCATION)}, "x-mcp-async": {"state": "/a"}},
            {"overrides": {"start": {"async": {"state": "/b"}}}},
            LongRunning(state="/b"),  # the config wins
        ),
        (
            {"responses": {"202": accepted(LOCATION)}},
            {"overrides": {"POST /jobs": {"async": False}}},
            None,
        ),
        (
            {"responses": {"202": accepted(LOCATION, CANCEL)}},
            {},
            LongRunning(cancel=OperationLink(tool="stop", arguments={"id": "$response.body#/id"})),
        ),
        (
            {"responses": {"202": accepted(LOCATION, {"cancelIt": BY_REF})}},
            {},
            LongRunning(cancel=OperationLink(tool="stop", arguments={"id": "$response.header.X-Job"})),
        ),
    ],
)  # fmt: skip
def test_long_running_operations_are_found_as_the_table_says(
    tmp_path: Path, start: dict[str, Any], options: dict[str, Any], expected: LongRunning | None
) -> None:
    catalogue, _ = build(tmp_path, start, **options)
    entry = start_entry(catalogue)
    assert entry.long_running == expected
    if expected is not None:
        assert entry.output_schema is None  # the final answer is not the 202's body


@pytest.mark.parametrize(
    ("links", "problem"),
    [
        ({"cancel": {"operationId": "nowhere"}}, "no generated operation"),
        ({"cancel": {"operationId": "stop"}}, "nothing gives id"),
        ({"cancel": {"operationId": "stop", "parameters": {"id": "$env.SECRET"}}}, "not a runtime expression"),
        ({"cancel": {"operationId": "stop", "parameters": {"id": "x{$url}"}}}, "embeds an expression"),
    ],
)
def test_a_cancel_link_that_cannot_be_used_is_a_warning(tmp_path: Path, links: dict[str, Any], problem: str) -> None:
    catalogue, issues = build(tmp_path, {"responses": {"202": accepted(LOCATION, links)}})
    assert start_entry(catalogue).long_running == LongRunning()
    assert [issue.where for issue in issues] == ["POST /jobs"]
    assert problem in issues[0].detail


def test_a_cancel_link_to_an_excluded_operation_is_not_used(tmp_path: Path) -> None:
    catalogue, issues = build(
        tmp_path, {"responses": {"202": accepted(LOCATION, CANCEL)}}, exclude_operations=("stop",)
    )
    assert start_entry(catalogue).long_running == LongRunning()
    assert any("no generated operation" in issue.detail for issue in issues)


def test_a_misshapen_x_mcp_async_is_reported(tmp_path: Path) -> None:
    start = {"responses": {"202": accepted(LOCATION)}, "x-mcp-async": {"state": "status", "color": "red"}}
    catalogue, issues = build(tmp_path, start)
    assert start_entry(catalogue).long_running == LongRunning()
    details = sorted(issue.detail for issue in issues)
    assert details == [
        "x-mcp-async: 'color' is not understood; ignored",
        "x-mcp-async: 'state' has the wrong type (pointers start with '/'); ignored",
    ]


def test_a_swagger_2_operation_with_202_and_location_is_long_running(tmp_path: Path) -> None:
    spec = {
        "swagger": "2.0",
        "info": {"title": "S", "version": "1"},
        "host": "api.test",
        "basePath": "/v1",
        "paths": {
            "/jobs": {
                "post": {
                    "operationId": "start",
                    "responses": {"202": {"description": "ok", "headers": {"Location": {"type": "string"}}}},
                }
            }
        },
    }
    path = tmp_path / "swagger.json"
    path.write_text(json.dumps(spec))
    catalogue, _ = build_catalogue(str(path), GenerateOptions())
    assert start_entry(catalogue).long_running == LongRunning()
