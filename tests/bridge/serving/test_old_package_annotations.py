"""A package generated before annotations read operation names is served with its names read again."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from bridge.serving.package import load_catalogue
from generator.generate import generate
from generator.options import GenerateOptions

EXCERPT = Path(__file__).parents[2] / "generator" / "parse" / "data" / "ec2_excerpt.yaml"
BY_METHOD = {"GET": (True, False, True), "POST": (False, False, False)}


def _as_generated_before(package: Path) -> None:
    """The catalogue an earlier generator wrote: annotations from the method alone, no annotation_rules."""
    path = package / "catalogue.json"
    data = json.loads(path.read_text())
    assert data.pop("annotation_rules") == 1
    for tool in data["tools"]:
        read_only, destructive, idempotent = BY_METHOD[tool["binding"]["method"]]
        tool["annotations"] |= {"readOnlyHint": read_only, "destructiveHint": destructive, "idempotentHint": idempotent}
    path.write_text(json.dumps(data))


def test_an_earlier_package_is_served_with_its_writes_not_read_only(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    generate(str(EXCERPT), tmp_path / "p", GenerateOptions())
    _as_generated_before(tmp_path / "p")
    with caplog.at_level(logging.WARNING, logger="bridge.serving"):
        tools = {tool.name: tool.annotations for tool in load_catalogue(tmp_path / "p").tools}
    read_only = sorted(name for name, hints in tools.items() if hints.readOnlyHint)
    assert read_only == [
        "GET_DescribeInstanceStatus",
        "GET_DescribeInstances",
        "GET_DescribeSecurityGroups",
        "GET_GetConsoleOutput",
    ]
    assert tools["POST_TerminateInstances"].destructiveHint and tools["GET_RevokeSecurityGroupIngress"].destructiveHint
    [record] = [r for r in caplog.records if "generated before annotations" in r.getMessage()]
    assert "tool(s) named as writes" in record.getMessage() and "and " in record.getMessage()


def test_a_current_package_keeps_what_the_operator_settled(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    settled = {"GET_TerminateInstances": {"annotations": {"readOnlyHint": True}}}
    generate(str(EXCERPT), tmp_path / "p", GenerateOptions(overrides=settled))
    with caplog.at_level(logging.WARNING, logger="bridge.serving"):
        tools = {tool.name: tool.annotations for tool in load_catalogue(tmp_path / "p").tools}
    assert tools["GET_TerminateInstances"].readOnlyHint
    assert not tools["GET_RunInstances"].readOnlyHint
    assert not [r for r in caplog.records if "generated before annotations" in r.getMessage()]
