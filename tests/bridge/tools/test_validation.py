from __future__ import annotations

from typing import Any

import pytest

from bridge.tools.errors import InvalidArgumentsError, ToolDefinitionError, ToolError
from bridge.tools.registry import Tool, ToolContext, ToolRegistry
from bridge.tools.validation import VALIDATORS, ArgumentValidator, check_output

SEARCH = {
    "type": "object",
    "properties": {
        "q": {"type": "string", "minLength": 1},
        "state": {"type": "string", "enum": ["open", "closed"]},
        "limit": {"type": "integer", "minimum": 1, "maximum": 50, "default": 10},
    },
    "required": ["q"],
    "additionalProperties": False,
}


def _message(schema: dict[str, Any], args: dict[str, Any], name: str = "t") -> str:
    with pytest.raises(InvalidArgumentsError) as info:
        ArgumentValidator({name: schema}).validate(name, args)
    return str(info.value)


def test_reference_message_for_a_value_above_maximum() -> None:
    assert _message(SEARCH, {"q": "bug", "limit": 500}, "search_issues") == (
        'Invalid arguments for tool "search_issues":\nlimit: Too big: expected number to be <=50'
    )


def test_every_bad_field_is_listed_sorted_by_path() -> None:
    assert _message(SEARCH, {"q": "", "limit": 0, "state": "x", "zzz": 1, "aaa": 2}, "search_issues") == (
        'Invalid arguments for tool "search_issues":\n'
        'Unrecognized keys: "zzz", "aaa"\n'
        "limit: Too small: expected number to be >=1\n"
        "q: Too small: expected string to have >=1 characters\n"
        'state: Invalid option: expected one of "open"|"closed"'
    )


def test_every_missing_required_field_is_named_with_its_type() -> None:
    schema = {
        "type": "object",
        "properties": {
            "id": {"type": "integer"},
            "name": {"type": "string"},
            "mode": {"enum": ["a", "b"]},
            "flag": {"const": True},
            "tags": {"type": "array"},
            "note": {"anyOf": [{"type": "string"}, {"type": "null"}]},
            "any": {},
        },
        "required": ["id", "name", "mode", "flag", "tags", "note", "any"],
    }
    assert _message(schema, {}) == (
        'Invalid arguments for tool "t":\n'
        "any: Invalid input: expected value, received undefined\n"
        "flag: Invalid input: expected true\n"
        "id: Invalid input: expected number, received undefined\n"
        'mode: Invalid option: expected one of "a"|"b"\n'
        "name: Invalid input: expected string, received undefined\n"
        "note: Invalid input: expected string, received undefined\n"
        "tags: Invalid input: expected array, received undefined"
    )


def test_type_messages_use_zod_names() -> None:
    schema = {
        "type": "object",
        "properties": {
            "n": {"type": "integer"},
            "m": {"type": "integer"},
            "s": {"type": "string"},
            "o": {"type": "object"},
            "u": {"type": ["string", "number"]},
            "z": {"type": ["string", "null"]},
        },
    }
    assert _message(schema, {"n": 1.5, "m": "3", "s": None, "o": [1], "u": True, "z": 3}) == (
        'Invalid arguments for tool "t":\n'
        "m: Invalid input: expected number, received string\n"
        "n: Invalid input: expected int, received number\n"
        "o: Invalid input: expected object, received array\n"
        "s: Invalid input: expected string, received null\n"
        "u: Invalid input\n"
        "z: Invalid input: expected string, received number"
    )


def test_string_array_and_number_constraint_messages() -> None:
    schema = {
        "type": "object",
        "properties": {
            "code": {"type": "string", "pattern": "^[A-Z]{3}$", "maxLength": 3},
            "items": {"type": "array", "minItems": 3, "maxItems": 4, "uniqueItems": True},
            "step": {"type": "number", "multipleOf": 0.5, "exclusiveMaximum": 10},
            "low": {"type": "number", "exclusiveMinimum": 0},
            "one": {"const": "x"},
            "single": {"enum": [1]},
        },
    }
    args = {"code": "abcd", "items": [1, 1], "step": 10.25, "low": 0, "one": "y", "single": 2}
    assert _message(schema, args) == (
        'Invalid arguments for tool "t":\n'
        "code: Invalid string: must match pattern /^[A-Z]{3}$/\n"
        "code: Too big: expected string to have <=3 characters\n"
        "items: Too small: expected array to have >=3 items\n"
        "items: Invalid array: items must be unique\n"
        "low: Too small: expected number to be >0\n"
        'one: Invalid input: expected "x"\n'
        "single: Invalid input: expected 1\n"
        "step: Invalid number: must be a multiple of 0.5\n"
        "step: Too big: expected number to be <10"
    )


def test_nested_paths_are_dotted_with_array_indices() -> None:
    schema = {
        "type": "object",
        "properties": {
            "owner": {
                "type": "object",
                "properties": {"login": {"type": "string"}},
                "required": ["login"],
                "additionalProperties": False,
            },
            "labels": {"type": "array", "items": {"type": "object", "properties": {"id": {"type": "integer"}}}},
        },
    }
    args = {"owner": {"x": 1}, "labels": [{"id": 1}, {"id": "a"}, {"id": 2}, {"id": "b"}]}
    assert _message(schema, args) == (
        'Invalid arguments for tool "t":\n'
        "labels.1.id: Invalid input: expected number, received string\n"
        "labels.3.id: Invalid input: expected number, received string\n"
        'owner: Unrecognized key: "x"\n'
        "owner.login: Invalid input: expected string, received undefined"
    )


def test_nullable_any_of_reports_the_inner_schema_problem() -> None:
    schema = {"type": "object", "properties": {"n": {"anyOf": [{"type": "integer", "maximum": 3}, {"type": "null"}]}}}
    assert _message(schema, {"n": 5}) == 'Invalid arguments for tool "t":\nn: Too big: expected number to be <=3'
    assert ArgumentValidator({"t": schema}).validate("t", {"n": None}) == {"n": None}


def test_json_schema_2020_12_conditionals_are_enforced() -> None:
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {"address": {"type": "object", "properties": {"city": {"type": "string"}}}},
        "properties": {
            "address": {"$ref": "#/$defs/address"},
            "contactMethod": {"type": "string", "enum": ["phone", "email"]},
            "phone": {"type": "string"},
            "email": {"type": "string"},
        },
        "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
        "then": {"required": ["phone"]},
        "else": {"required": ["email"]},
        "additionalProperties": False,
    }
    validator = ArgumentValidator({"t": schema})
    assert validator.validate("t", {"contactMethod": "phone", "phone": "1"}) == {"contactMethod": "phone", "phone": "1"}
    with pytest.raises(InvalidArgumentsError) as info:
        validator.validate("t", {"contactMethod": "phone", "address": {"city": 3}})
    assert str(info.value) == (
        'Invalid arguments for tool "t":\n'
        "address.city: Invalid input: expected string, received number\n"
        'phone: phone is required when contactMethod is "phone"'  # the `if` says when (issue 18)
    )


def test_older_draft_named_by_schema_keyword_is_used() -> None:
    schema = {
        "$schema": "http://json-schema.org/draft-04/schema#",
        "type": "object",
        "properties": {"n": {"type": "integer", "maximum": 5, "exclusiveMaximum": True}},
    }
    assert _message(schema, {"n": 5}) == 'Invalid arguments for tool "t":\nn: Too big: expected number to be <5'


def test_unevaluated_properties_are_unrecognized_keys() -> None:
    schema = {
        "type": "object",
        "allOf": [{"properties": {"a": {"type": "string"}}}],
        "unevaluatedProperties": False,
    }
    assert _message(schema, {"a": "x", "b": 1, "c's": 2}) == (
        'Invalid arguments for tool "t":\nUnrecognized keys: "b", "c\'s"'
    )


def test_dependent_required_names_the_missing_field() -> None:
    schema = {"type": "object", "properties": {"b": {"type": "string"}}, "dependentRequired": {"a": ["b"]}}
    # Says why it is needed (issue 18: "PhoneNumber is required when Body is given").
    assert _message(schema, {"a": 1}) == 'Invalid arguments for tool "t":\nb: b is required when a is given'
    assert _message({**schema, "required": ["b"]}, {}) == (
        'Invalid arguments for tool "t":\nb: Invalid input: expected string, received undefined'
    )


@pytest.mark.parametrize(
    ("fmt", "good", "bad", "noun"),
    [
        ("date", "2024-02-29", "2023-02-29", "ISO date"),
        ("date-time", "2024-02-29T23:59:60.5+05:30", "2024-02-29T24:00:00Z", "ISO datetime"),
        ("date-time", "2024-01-01t10:00:00z", "2024-01-01T10:00:00", "ISO datetime"),
        ("time", "10:00:00", "10:60:00", "ISO time"),
        ("email", "a.b@example.com", "example.com", "email address"),
        ("ipv4", "192.168.0.1", "192.168.0.256", "IPv4 address"),
        ("ipv6", "::1", "::1%eth0", "IPv6 address"),
        ("uuid", "123e4567-e89b-12d3-a456-426614174000", "123e4567e89b12d3a456426614174000", "UUID"),
    ],
)
def test_safe_formats_are_asserted(fmt: str, good: str, bad: str, noun: str) -> None:
    schema = {"type": "object", "properties": {"v": {"type": "string", "format": fmt}}}
    assert ArgumentValidator({"t": schema}).validate("t", {"v": good}) == {"v": good}
    assert _message(schema, {"v": bad}) == f'Invalid arguments for tool "t":\nv: Invalid {noun}'


@pytest.mark.parametrize("fmt", ["uri", "hostname", "regex", "duration", "x-made-up", "int64"])
def test_formats_outside_the_safe_set_are_not_asserted(fmt: str) -> None:
    schema = {"type": "object", "properties": {"v": {"type": "string", "format": fmt}}}
    assert ArgumentValidator({"t": schema}).validate("t", {"v": "(( not it"}) == {"v": "(( not it"}


def test_ecma_patterns_python_cannot_compile_are_enforced() -> None:
    schema = {"type": "object", "properties": {"v": {"type": "string", "pattern": "^\\p{L}+$"}}}
    assert ArgumentValidator({"t": schema}).validate("t", {"v": "é"}) == {"v": "é"}
    with pytest.raises(InvalidArgumentsError):
        ArgumentValidator({"t": schema}).validate("t", {"v": "123"})


def test_pattern_no_engine_can_run_is_not_enforced() -> None:
    schema = {"type": "object", "properties": {"v": {"type": "string", "pattern": "^[\\d-z]$"}}}
    assert ArgumentValidator({"t": schema}).validate("t", {"v": "123"}) == {"v": "123"}


def test_remote_ref_is_never_fetched() -> None:
    schema = {"type": "object", "properties": {"v": {"$ref": "https://example.invalid/schema.json"}}}
    with pytest.raises(ToolDefinitionError):
        ArgumentValidator({"t": schema}).validate("t", {"v": 1})


def test_invalid_schema_is_a_definition_error() -> None:
    with pytest.raises(ToolDefinitionError):
        ArgumentValidator({"t": {"type": "object", "properties": {"v": {"type": "file"}}}}).validate("t", {})


def test_top_level_and_nested_defaults_are_applied_without_mutating_input() -> None:
    schema = {
        "type": "object",
        "$defs": {"page": {"type": "object", "properties": {"size": {"type": "integer", "default": 20}}}},
        "properties": {
            "q": {"type": "string"},
            "limit": {"type": "integer", "default": 10},
            "tags": {"type": "array", "default": ["a"]},
            "page": {"$ref": "#/$defs/page"},
            "filter": {"type": "object", "properties": {"state": {"type": "string", "default": "open"}}},
        },
    }
    validator = ArgumentValidator({"t": schema})
    args: dict[str, Any] = {"q": "x", "page": {}, "limit": 3}
    first = validator.validate("t", args)
    assert first == {"q": "x", "page": {"size": 20}, "limit": 3, "tags": ["a"]}
    assert args == {"q": "x", "page": {}, "limit": 3}
    first["tags"].append("b")
    assert validator.validate("t", {})["tags"] == ["a"]


def test_recursive_schema_defaults_terminate() -> None:
    schema = {
        "type": "object",
        "$defs": {
            "node": {"type": "object", "properties": {"kind": {"default": "leaf"}, "child": {"$ref": "#/$defs/node"}}}
        },
        "properties": {"root": {"$ref": "#/$defs/node"}},
    }
    assert ArgumentValidator({"t": schema}).validate("t", {"root": {"child": {}}}) == {
        "root": {"child": {}, "kind": "leaf"}
    }


def test_arguments_are_validated_before_defaults() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "integer", "default": 1}}, "required": ["a"]}
    assert (
        _message(schema, {}) == 'Invalid arguments for tool "t":\na: Invalid input: expected number, received undefined'
    )


def test_validators_compile_lazily_per_tool() -> None:
    async def run(args: dict[str, Any], ctx: ToolContext) -> None:
        return None

    # Each tool has its own schema object, as generated tools do (the cache is keyed by schema).
    registry = ToolRegistry(Tool(name=f"t{i}", run=run, input_schema=dict(SEARCH)) for i in range(1200))
    validator = ArgumentValidator(registry)

    def compiled() -> list[int]:
        return [i for i, tool in enumerate(registry) if VALIDATORS.holds(tool.input_schema, arguments=True)]

    assert compiled() == []
    assert validator.validate("t7", {"q": "x"}) == {"q": "x", "limit": 10}
    assert compiled() == [7]


def test_replaced_schema_is_recompiled() -> None:
    schemas: dict[str, dict[str, Any]] = {"t": {"type": "object", "properties": {"a": {"type": "string"}}}}
    validator = ArgumentValidator(schemas)
    assert validator.validate("t", {"a": "x"}) == {"a": "x"}
    schemas["t"] = {"type": "object", "properties": {"a": {"type": "integer"}}}
    assert validator.validate("t", {"a": 1}) == {"a": 1}


def test_unknown_tool_is_a_key_error() -> None:
    with pytest.raises(KeyError):
        ArgumentValidator({}).validate("nope", {})


def test_number_limits_are_formatted_like_javascript() -> None:
    schema = {"type": "object", "properties": {"a": {"maximum": 1.0}, "b": {"minimum": 0.00001}}}
    assert _message(schema, {"a": 2, "b": 0}) == (
        'Invalid arguments for tool "t":\n'
        "a: Too big: expected number to be <=1\n"
        "b: Too small: expected number to be >=0.00001"
    )


def test_very_many_bad_fields_are_capped() -> None:
    schema = {"type": "object", "additionalProperties": {"type": "string"}}
    message = _message(schema, {f"k{i:03}": i for i in range(150)})
    lines = message.splitlines()
    assert len(lines) == 102
    assert lines[-1] == "... and 50 more"


OUTPUT = {
    "type": "object",
    "properties": {"sku": {"type": "string"}, "cents": {"type": "integer"}, "at": {"type": "string", "format": "date"}},
    "required": ["sku", "cents"],
}


def test_matching_output_passes_and_formats_are_not_asserted() -> None:
    check_output("get_price", OUTPUT, {"sku": "a", "cents": 3, "at": "not a date"})


def test_output_mismatch_names_every_field() -> None:
    with pytest.raises(ToolError) as info:
        check_output("get_price", OUTPUT, {"cents": "3"})
    assert str(info.value) == (
        'Tool "get_price" returned a value that does not match its output schema: '
        "cents: Invalid input: expected number, received string; "
        "sku: Invalid input: expected string, received undefined. "
        "This is a fault of the tool or its upstream API, not of the arguments."
    )


def test_pattern_properties_are_enforced_and_unrunnable_ones_are_lenient() -> None:
    schema = {
        "type": "object",
        "patternProperties": {"^\\p{L}+$": {"type": "string"}, "^x-": {"type": "integer"}, "^[\\d-z]$": {}},
        "additionalProperties": False,
    }
    validator = ArgumentValidator({"t": schema})
    assert validator.validate("t", {"abc": "s", "1": 2}) == {"abc": "s", "1": 2}  # "1": only [\d-z] might match
    assert _message(schema, {"x-a": "s"}) == (
        'Invalid arguments for tool "t":\nx-a: Invalid input: expected number, received string'
    )
    assert (
        _message(schema, {"é": 1})
        == 'Invalid arguments for tool "t":\né: Invalid input: expected string, received number'
    )
