"""Quiet mistakes are said out loud: empty filters, stubs that cannot be typed, impossible tools, bad JSON."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from bridge.cli import cli
from bridge.contract.stubs import StubIndex
from generator.generate import generate
from generator.issues import GenerationError, Level
from generator.options import GenerateOptions
from generator.parse.unsatisfiable import impossible_parts
from tests.generator.test_cli_generate import SPEC

TAGGED = SPEC.replace("operationId: listThings", "operationId: listThings\n      tags: [things]")


def _spec(tmp_path: Path, text: str, name: str = "api.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    "flags",
    [
        ["--include-tags", "thingz"],
        ["--exclude-tags", "things", "--include-operations", "listThings"],
        ["--include-operations", "nothing*"],
        ["--exclude-operations", "*"],
        ["--read-only", "--exclude-operations", "GET *"],
    ],
)
def test_filters_that_leave_no_tool_are_an_error_unless_allowed(tmp_path: Path, flags: list[str]) -> None:
    spec = _spec(tmp_path, TAGGED)
    refused = CliRunner().invoke(cli, ["generate", str(spec), "-o", str(tmp_path / "a"), *flags])
    assert refused.exit_code == 1 and not (tmp_path / "a").exists()
    assert "no operation is left" in refused.output and flags[0] in refused.output
    allowed = CliRunner().invoke(cli, ["generate", str(spec), "-o", str(tmp_path / "b"), "--allow-empty", *flags])
    assert allowed.exit_code == 0 and "warning:" in allowed.output
    assert json.loads((tmp_path / "b" / "manifest.json").read_text())["tools"] == {}


def test_an_unknown_tag_is_named_with_the_tags_the_spec_has(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        cli, ["generate", str(_spec(tmp_path, TAGGED)), "-o", str(tmp_path / "a"), "--include-tags", "Isues"]
    )
    assert result.exit_code == 1 and "things" in result.output


CYCLE = """
openapi: 3.0.3
info: {title: Cycle, version: "1"}
servers: [{url: "https://c.example"}]
paths:
  /nodes:
    post:
      operationId: createNode
      requestBody:
        content: {application/json: {schema: {$ref: "#/components/schemas/Node"}}}
      responses: {"204": {description: ok}}
  /ping:
    get:
      operationId: ping
      parameters: [{name: q, in: query, schema: {type: string}}]
      responses: {"204": {description: ok}}
components:
  schemas:
    Node:
      allOf:
        - $ref: "#/components/schemas/Node"
        - type: object
          properties: {name: {type: string}}
"""


def test_a_schema_extending_itself_is_typed_without_a_warning(tmp_path: Path) -> None:
    out = tmp_path / "pkg"
    result = CliRunner().invoke(cli, ["generate", str(_spec(tmp_path, CYCLE)), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert not [line for line in result.output.splitlines() if line.startswith("warning: api.pyi")]
    index = StubIndex.parse((out / "api.pyi").read_text(encoding="utf-8"))
    assert index.signature("createNode") == "async def createNode(*, body: CreateNodeInputBody = ...) -> Any"
    assert "name: str" in index.subset(["createNode"])


def test_a_stub_that_cannot_be_typed_is_one_warning_and_the_package_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from generator.emit import stubs

    real = stubs._typed_dicts

    def failing(tools: list[dict[str, Any]], reserved: frozenset[str]) -> Any:
        if any(tool["name"] == "CreateNode" for tool in tools):
            raise RecursionError("maximum recursion depth exceeded")  # a schema nested too deep to walk
        return real(tools, reserved)

    monkeypatch.setattr(stubs, "_typed_dicts", failing)
    out = tmp_path / "pkg"
    result = CliRunner().invoke(cli, ["generate", str(_spec(tmp_path, CYCLE)), "-o", str(out)])
    assert result.exit_code == 0, result.output
    warnings = [line for line in result.output.splitlines() if line.startswith("warning: api.pyi")]
    assert len(warnings) == 1 and "createNode" in warnings[0] and "ping" not in warnings[0]
    assert "Traceback" not in result.output
    stubs_text = (out / "api.pyi").read_text(encoding="utf-8")
    assert "class PingInput(TypedDict" in stubs_text
    assert "async def createNode(*, body: Any = ...) -> Any:" in stubs_text
    assert json.loads((out / "catalogue.json").read_text())["tools"][0]["name"] == "createNode"
    with pytest.raises(GenerationError) as strict:
        generate(str(tmp_path / "api.yaml"), tmp_path / "strict", GenerateOptions(strict=True))
    assert any(i.where == "api.pyi" and i.level is Level.ERROR for i in strict.value.issues)


IMPOSSIBLE = {
    "enum of integers on a string": (
        {"type": "object", "properties": {"s": {"type": "string", "enum": [1, 2]}}, "required": ["s"]},
        "/properties/s",
    ),
    "required property that does not exist": (
        {"type": "object", "properties": {}, "required": ["ghost"], "additionalProperties": False},
        "",
    ),
    "deep inside a required object": (
        {
            "type": "object",
            "properties": {
                "o": {"type": "object", "properties": {"b": {"type": "boolean", "enum": ["yes"]}}, "required": ["b"]}
            },
            "required": ["o"],
        },
        "/properties/o",
    ),
}
POSSIBLE = [
    {"type": "object", "properties": {"s": {"type": "string", "enum": [1, 2]}}},  # optional: omit it
    {"type": "object", "properties": {}, "required": ["extra"]},  # extra properties allowed
    {"type": "object", "properties": {"n": {"type": ["string", "integer"], "enum": [1]}}, "required": ["n"]},
    {"type": "object", "properties": {"n": {"type": "number", "enum": [1, 2.5]}}, "required": ["n"]},
]


@pytest.mark.parametrize("name", sorted(IMPOSSIBLE))
def test_an_impossible_required_part_is_found_with_its_pointer(name: str) -> None:
    schema, pointer = IMPOSSIBLE[name]
    found = impossible_parts(schema)
    assert len(found) == 1
    assert found[0][0].startswith(pointer)


@pytest.mark.parametrize("schema", POSSIBLE)
def test_satisfiable_schemas_are_not_reported(schema: dict[str, object]) -> None:
    assert impossible_parts(schema) == []


_TYPES = st.sampled_from(["string", "integer", "number", "boolean"])
_VALUES = {
    "string": st.text(max_size=5),
    "integer": st.integers(),
    "number": st.floats(allow_nan=False),
    "boolean": st.booleans(),
}


@settings(max_examples=100, deadline=None)
@given(st.data())
def test_an_enum_is_impossible_exactly_when_no_value_has_the_type(data: st.DataObject) -> None:
    kind = data.draw(_TYPES)
    value_kinds = data.draw(st.lists(_TYPES, min_size=1, max_size=4))
    values = [data.draw(_VALUES[k]) for k in value_kinds]
    schema = {"type": "object", "properties": {"a": {"type": kind, "enum": values}}, "required": ["a"]}
    fits = {
        "string": lambda v: isinstance(v, str),
        "integer": lambda v: type(v) is int or (type(v) is float and v.is_integer()),
        "number": lambda v: type(v) in (int, float),
        "boolean": lambda v: type(v) is bool,
    }[kind]
    assert bool(impossible_parts(schema)) == (not any(fits(v) for v in values))


def test_generate_warns_about_a_tool_no_input_satisfies(tmp_path: Path) -> None:
    text = SPEC.replace(
        "      parameters: [{name: id, in: path, required: true, schema: {type: integer}}]",
        "      parameters:\n"
        "        - {name: id, in: path, required: true, schema: {type: integer}}\n"
        "        - {name: mode, in: query, required: true, schema: {type: string, enum: [1, 2]}}",
    )
    result = CliRunner().invoke(cli, ["generate", str(_spec(tmp_path, text)), "-o", str(tmp_path / "pkg")])
    assert result.exit_code == 0, result.output
    warning = [line for line in result.output.splitlines() if "no input satisfies" in line]
    assert len(warning) == 1
    assert "DELETE /things/{id}" in warning[0] and "/inputSchema/properties/mode" in warning[0]


BROKEN_JSON = {
    "trailing comma": ('{"openapi": "3.0.3", "info": {"title": "t", "version": "1"}, "paths": {},}', 1),
    "single quotes": ("{\n  'openapi': '3.0.3'\n}", 2),
    "missing comma": ('{\n "openapi": "3.0.3"\n "paths": {}\n}', 3),
}


# A .json name makes any text JSON; JSON-looking text (`{"key"`) is JSON whatever the name.
@pytest.mark.parametrize(
    ("case", "file_name"),
    [*((case, "api.json") for case in sorted(BROKEN_JSON)), ("trailing comma", "api.yaml"), ("missing comma", "spec")],
)
def test_a_json_syntax_error_is_reported_as_json_with_its_line(tmp_path: Path, case: str, file_name: str) -> None:
    text, line = BROKEN_JSON[case]
    result = CliRunner().invoke(cli, ["generate", str(_spec(tmp_path, text, file_name)), "-o", str(tmp_path / "o")])
    assert result.exit_code == 1
    assert result.output.count("\n") == 1
    assert f"{file_name}: line {line}, column" in result.output and "invalid JSON" in result.output


def test_flow_style_yaml_is_still_yaml(tmp_path: Path) -> None:
    document = {"openapi": "3.0.3", "info": {"title": "t", "version": "1"}, "paths": {}}
    text = yaml.safe_dump(document, default_flow_style=True)
    assert text.startswith("{") and not text.startswith('{"')
    result = CliRunner().invoke(
        cli, ["generate", str(_spec(tmp_path, text)), "-o", str(tmp_path / "o"), "--allow-empty"]
    )
    assert result.exit_code == 0, result.output


def test_a_spec_without_operations_is_written_with_a_warning(tmp_path: Path) -> None:
    text = 'openapi: 3.0.3\ninfo: {title: Empty, version: "1"}\npaths: {}\n'
    result = CliRunner().invoke(cli, ["generate", str(_spec(tmp_path, text)), "-o", str(tmp_path / "pkg")])
    assert result.exit_code == 0, result.output
    assert "warning: spec: the package has no tool" in result.output


def test_third_party_warnings_do_not_reach_the_user(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import warnings

    import generator.generate

    real = generator.generate.shape_api

    def noisy(*args: Any, **kwargs: Any) -> Any:  # as a library called mid-run warns
        warnings.warn("deprecated thing in /site-packages/lib/module.py", DeprecationWarning, stacklevel=1)
        warnings.warn("user-facing library warning", UserWarning, stacklevel=1)
        return real(*args, **kwargs)

    monkeypatch.setattr(generator.generate, "shape_api", noisy)
    result = CliRunner().invoke(cli, ["generate", str(_spec(tmp_path, SPEC)), "-o", str(tmp_path / "pkg")])
    assert result.exit_code == 0, result.output
    assert "Warning" not in result.output and "site-packages" not in result.output
    # Only "Wrote ..." (and the note that this spec declares no credential).
    lines = [line for line in result.output.splitlines() if not line.startswith("warning: security: ")]
    assert len(lines) == 1 and lines[0].startswith("Wrote ")
