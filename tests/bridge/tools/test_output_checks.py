"""One output check for every tool: generated HTTP tools and hand-written tools answer alike.

Before, HTTP tools checked answers with plain jsonschema (Python's re, no fallback) and
hand-written tools with bridge.tools.validation: an output schema with ``patternProperties:
{"^\\p{L}+$": ...}`` turned every successful HTTP call into "failed unexpectedly".
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import mcp_types
import pytest

from bridge.calls.http_tools import tools_from_catalogue
from bridge.results.tool_result import OutputCheck
from bridge.serving.package import load_catalogue
from bridge.tools.content import to_call_result
from bridge.tools.errors import InvalidArgumentsError, ToolError
from bridge.tools.registry import ToolContext
from bridge.tools.schema_messages import resolve_local
from bridge.tools.validation import MAX_CACHED_VALIDATORS, VALIDATORS, ArgumentValidator, check_output
from tests.bridge.fake_upstream import FakeUpstream, catalogue_from_spec, entry_from_spec, runtime_for

ROOT = Path(__file__).resolve().parents[3]

SPEC: dict[str, Any] = {
    "openapi": "3.0.3",
    "info": {"title": "Words", "version": "1"},
    "servers": [{"url": "http://upstream.test/v1"}],
    "paths": {"/words": {"get": {"operationId": "list_words", "responses": {"200": {"description": "ok"}}}}},
}

# Output schemas Python's re cannot run (ECMA-262 syntax) or would run in exponential time, each
# with an answer that matches and one that does not.
LETTERS = {"type": "object", "patternProperties": {"^\\p{L}+$": {"type": "integer"}}}
SCHEMAS: list[tuple[str, dict[str, Any], Any, Any]] = [
    (
        "array items with \\p{L} patternProperties",
        {"type": "object", "properties": {"result": {"type": "array", "items": LETTERS}}},
        {"result": [{"été": 1}, {"word": 2}]},
        {"result": [{"été": "x"}]},
    ),
    (
        "\\p{Lu} pattern",
        {"type": "object", "properties": {"code": {"type": "string", "pattern": "^\\p{Lu}+$"}}},
        {"code": "ÉTÉ"},
        {"code": "été"},
    ),
    (
        "catastrophic pattern",
        {"type": "object", "properties": {"id": {"type": "string", "pattern": "^[a-z0-9]+([._-]?[a-z0-9]+)*$"}}},
        {"id": "a.b-c"},
        {"id": "a" * 40 + "!"},
    ),
    (
        "lookahead",
        {"type": "object", "properties": {"v": {"type": "string", "pattern": "^(?!x)"}}},
        {"v": "a"},
        {"v": "x"},
    ),
]


@pytest.mark.parametrize(("what", "schema", "good", "bad"), SCHEMAS, ids=[s[0] for s in SCHEMAS])
@pytest.mark.anyio
async def test_http_and_hand_written_tools_check_outputs_alike(
    what: str, schema: dict[str, Any], good: Any, bad: Any
) -> None:
    for answer, ok in ((good, True), (bad, False)):
        # a generated HTTP tool, through a fake upstream
        fake = FakeUpstream(SPEC)
        fake.reply(json_body=answer)
        catalogue = catalogue_from_spec(SPEC, (entry_from_spec(SPEC, "GET", "/words", output_schema=schema),))
        runtime = runtime_for(fake, catalogue)
        (tool,) = tools_from_catalogue(catalogue, runtime)
        async with runtime:
            value = await tool.run({}, ToolContext(tool_name=tool.name))
        result = to_call_result(value, output_schema=schema, tool_name=tool.name, structured_verified=True)
        assert isinstance(result, mcp_types.CallToolResult)
        # Same verdict; an upstream answer that misses the schema still reaches the model (as text,
        # with a note), not as an error: the API did answer, and a retry could repeat a write.
        assert result.is_error is False
        assert (result.structured_content == answer) is ok
        if not ok:
            assert result.structured_content is not None and "_truncated" in result.structured_content
        # a hand-written tool returning the same value
        if ok:
            assert to_call_result(answer, output_schema=schema, tool_name="t").structured_content == answer
        else:
            with pytest.raises(ToolError):
                to_call_result(answer, output_schema=schema, tool_name="t")


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object", "properties": {"a": {"type": "file"}}},  # not a JSON Schema type
        {"type": "object", "properties": {"a": {"$ref": "#/$defs/missing"}}},
        {"type": "object", "properties": {"a": {"minimum": "one"}}},
    ],
)
def test_a_broken_output_schema_is_a_reported_problem_never_an_exception(schema: dict[str, Any]) -> None:
    problem = OutputCheck(schema, "t").problem({"a": 1})
    assert problem is not None and "output schema" in problem


def test_the_validator_cache_is_bounded_and_shared_by_inputs_and_outputs() -> None:
    schema: dict[str, Any] = {"type": "object", "properties": {"a": {"type": "string", "pattern": "^\\p{L}"}}}
    ArgumentValidator({"t": schema}).validate("t", {"a": "é"})
    check_output("t", schema, {"a": "é"})
    OutputCheck(schema).problem({"a": "é"})
    assert VALIDATORS.holds(schema, arguments=True) and VALIDATORS.holds(schema, arguments=False)
    for i in range(MAX_CACHED_VALIDATORS + 10):
        check_output("t", {"type": "object", "title": str(i)}, {})
    assert len(VALIDATORS) <= MAX_CACHED_VALIDATORS
    assert not VALIDATORS.holds(schema, arguments=True)  # the oldest went first


# --------------------------------------------------------------- every golden and corpus schema


def sample(schema: Any, root: Mapping[str, Any], depth: int = 0) -> Any:
    """A plausible instance of ``schema`` (not always a valid one: only the check's outcome matters)."""
    schema = resolve_local(root, schema)
    if not isinstance(schema, Mapping) or depth > 6:
        return None
    if "const" in schema:
        return schema["const"]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][0]
    if "default" in schema:
        return schema["default"]
    for key in ("anyOf", "oneOf", "allOf"):
        if isinstance(schema.get(key), list) and schema[key]:
            return sample(schema[key][0], root, depth + 1)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), None)
    if kind == "object" or "properties" in schema:
        props = schema.get("properties") or {}
        keys = [k for k in props if k in (schema.get("required") or ())] or list(props)[:3]
        return {k: sample(props[k], root, depth + 1) for k in keys}
    if kind == "array":
        return [sample(schema.get("items", {}), root, depth + 1)]
    if kind == "integer":
        return int(schema.get("minimum", 1))
    if kind == "number":
        return float(schema.get("minimum", 1.5))
    if kind == "boolean":
        return True
    if kind == "string":
        return "dGVzdA==" if schema.get("contentEncoding") == "base64" else "x"
    return None


@functools.cache
def every_schema() -> tuple[tuple[str, Mapping[str, Any], Mapping[str, Any] | None], ...]:
    from generator.generate import build_catalogue
    from generator.options import GenerateOptions
    from tests.node_tools import oas_examples

    found: list[tuple[str, Mapping[str, Any], Mapping[str, Any] | None]] = []
    for folder in sorted((ROOT / "generated").iterdir()):
        if (folder / "catalogue.json").is_file():
            found.extend(
                (f"golden:{folder.name}:{t.name}", t.input_schema, t.output_schema)
                for t in load_catalogue(folder).tools
            )
    for spec in oas_examples():
        try:
            catalogue, _ = build_catalogue(str(spec), GenerateOptions())
        except Exception:  # a spec the generator refuses has no schemas to check
            continue
        found.extend((f"corpus:{spec.name}:{t.name}", t.input_schema, t.output_schema) for t in catalogue.tools)
    return tuple(found)


@pytest.mark.corpus
def test_every_golden_and_corpus_schema_compiles_and_checks_a_sample_without_exceptions() -> None:
    schemas = every_schema()
    assert len(schemas) > 500 and any(name.startswith("corpus:") for name, _, _ in schemas)
    outputs = 0
    for name, input_schema, output_schema in schemas:
        try:
            ArgumentValidator({name: input_schema}).validate(name, sample(input_schema, input_schema))
        except InvalidArgumentsError:
            pass  # a sample may miss a constraint; what matters is that the check ran
        if output_schema is None:
            continue
        outputs += 1
        value = sample(output_schema, output_schema)
        problem = OutputCheck(output_schema, name).problem(value)
        try:
            check_output(name, output_schema, value)
        except ToolError:
            assert problem is not None, name  # both checks give the same verdict
        else:
            assert problem is None, name
    assert outputs > 100
