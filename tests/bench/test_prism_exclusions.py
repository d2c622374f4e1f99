"""bench.prism's exclusions: each names the spec/Prism defect it was written for and nothing wider."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench import prism
from bench.prism import (
    FRAGMENT_MISROUTE,
    FRAMING_HEADER_PARAM,
    MULTIPART_STRING,
    NESTED_QUERY,
    OCTET_BYTE,
    OCTET_OBJECT,
    Call,
    SpecReport,
    exclusion_for,
)

DATALAKE = "round4/azure.com/datalake-store-filesystem.json"


def _call(operation: str, message: str, media: str = "", outcome: str = "violation") -> Call:
    headers = [("content-type", media)] if media else []
    return Call("tool", operation, "min", {}, outcome=outcome, violations=[message], request_headers=headers)


@pytest.mark.parametrize(
    ("spec", "call", "reason"),
    [
        (
            "round4/googleapis.com/drive.json",
            _call("POST /files", "Violation: request.body Request body must be object", "application/octet-stream"),
            OCTET_OBJECT,
        ),
        (
            "round4/googleapis.com/drive.json",
            _call("POST /files", "body: Request body property parents must be object", "application/octet-stream"),
            "",
        ),
        (
            "round4/googleapis.com/drive.json",
            _call("POST /files", "Request body must be object", "application/json"),
            "",
        ),
        (
            DATALAKE,
            _call("POST /WebHdfsExt/{path}", "Request header must have required property 'transfer-encoding'"),
            FRAMING_HEADER_PARAM,
        ),
        (
            DATALAKE,
            _call(
                "GET /webhdfs/v1/{path}#op=OPEN",
                "Request query parameter op must be equal to one of the allowed values: CHECKACCESS",
            ),
            FRAGMENT_MISROUTE,
        ),
        (
            "round4/xero.com/xero_accounting.json",
            _call(
                "PUT /Invoices/{InvoiceID}/Attachments/{FileName}",
                'Request body must match format "byte"',
                "application/octet-stream",
            ),
            OCTET_BYTE,
        ),
        (
            "round4/xero.com/xero_accounting.json",
            _call("PUT /Invoices", 'Request body property Content must match format "byte"', "application/json"),
            "",
        ),
        (
            "round4/atlassian.com/jira.json",
            _call("GET /rest/api/3/project/recent", "Request query parameter properties.0 must be object"),
            NESTED_QUERY,
        ),
        (
            "round4/atlassian.com/jira.json",
            _call(
                "POST /rest/api/3/issue/{issueIdOrKey}/attachments",
                "body: Request body must be string",
                "multipart/form-data; boundary=x",
            ),
            MULTIPART_STRING,
        ),
        (
            "round4/atlassian.com/jira.json",
            _call("POST /rest/api/3/issue", "body: Request body must be string", "application/json"),
            "",
        ),
        (DATALAKE, _call("GET /webhdfs/v1/{path}", "Request query must have required property 'fsaction'"), ""),
        (
            "round4/xero.com/xero_accounting.json",
            _call("GET /x#op=OPEN", "Request query must have required property 'fsaction'"),
            "",
        ),
    ],
)
def test_an_exclusion_covers_its_defect_and_not_its_neighbours(spec: str, call: Call, reason: str) -> None:
    assert exclusion_for(spec, call) == reason


def test_a_merge_judges_saved_failures_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(prism, "OUT_DIR", tmp_path)
    monkeypatch.setattr(prism, "spec_set", lambda name: [prism.Spec(DATALAKE, tmp_path, "round4")])
    failing = _call("POST /WebHdfsExt/{path}", "Request header must have required property 'transfer-encoding'")
    prism._save("round4", [SpecReport(DATALAKE, "round4", calls=[failing])])

    (merged,) = prism.merge_saved("round4", [])

    assert merged.calls[0].excluded == FRAMING_HEADER_PARAM
    assert merged.failures() == []
