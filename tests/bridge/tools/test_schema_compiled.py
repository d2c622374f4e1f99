"""The compiled quick yes (bridge.tools.schema_compiled) says yes only where the full validator finds nothing.

Hypothesis builds 2020-12 schemas from the keywords generated tools use and more (formats,
patterns, enums, combinators, ``contentEncoding``) and values of every JSON type (huge integers,
integral floats, NaN and the infinities); the full validator is the one the bridge ran before
(``compile_validator``), for arguments (formats asserted) and outputs (none). Wherever the compiled
check says yes, jsonschema must find no error. Examples pin the ground it must leave to jsonschema.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from bridge.tools.schema_compiled import compiled_check
from bridge.tools.schema_validators import compile_validator, is_draft_2020_12, run_validator
from bridge.tools.validation import VALIDATORS, ArgumentValidator, output_issues
from tests.bridge.tools.schema_strategies import NUMBERS, bound_keywords

KEYS = ("a", "b", "c")
_enum_members = st.one_of(st.none(), st.booleans(), NUMBERS, st.sampled_from(["", "x", "2020-01-01"]))

LEAF = {
    **bound_keywords(KEYS),
    "format": st.sampled_from(["date", "date-time", "time", "email", "ipv4", "ipv6", "uuid", "uri", "int64"]),
    "pattern": st.sampled_from(["^x", "\\d", "^[a-z]+$", "\\w{2}", "^$", "."]),
    "enum": st.lists(_enum_members, min_size=1, max_size=3),
    "const": _enum_members,
    "uniqueItems": st.booleans(),
    "contentEncoding": st.just("base64"),
    "minProperties": st.integers(0, 2),
    "description": st.just("d"),
}
_leaf = st.fixed_dictionaries({}, optional=LEAF)


def _composite(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.builds(
        lambda base, extra: {**base, **extra},
        _leaf,
        st.fixed_dictionaries(
            {},
            optional={
                "properties": st.dictionaries(st.sampled_from(KEYS), children, max_size=3),
                "additionalProperties": children,
                "patternProperties": st.dictionaries(st.sampled_from(["^a", "b$"]), children, max_size=1),
                "propertyNames": children,
                "items": children,
                "prefixItems": st.lists(children, max_size=2),
                "anyOf": st.lists(children, min_size=1, max_size=3),
                "oneOf": st.lists(children, min_size=1, max_size=2),
                "allOf": st.lists(children, min_size=1, max_size=2),
                "not": children,
            },
        ),
    )


schemas = st.recursive(_leaf, _composite, max_leaves=8)
_strings = st.one_of(
    st.text(max_size=4),
    st.sampled_from(["2020-01-01", "2020-13-45", "2020-01-01 10:00:00Z", "a@b", "::1", "10.0.0.1", "aGk=", "!!"]),
    st.just("123e4567-e89b-12d3-a456-426614174000"),
)
_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=2**53 - 2, max_value=2**53 + 2),
    st.integers(min_value=2**64, max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([1.0, 2.0, -0.0, 0.5, 1e300]),
    _strings,
)
values = st.recursive(
    _scalars,
    lambda children: st.one_of(st.lists(children, max_size=3), st.dictionaries(st.sampled_from(KEYS), children)),
    max_leaves=10,
)


def _full_errors(schema: dict[str, Any], value: Any, *, arguments: bool) -> list[Any]:
    validator = compile_validator(schema, arguments=arguments, what="test")
    assert is_draft_2020_12(validator)
    return run_validator(validator, value, "test")


@settings(max_examples=1500, deadline=None)
@given(schemas, values, st.booleans())
@example({"type": "integer"}, 1.0, True)
@example({"type": "number", "multipleOf": 0.1}, 0.3, True)
@example({"enum": [1]}, True, True)
@example({"uniqueItems": True}, [1, 1.0], True)
@example({"uniqueItems": True}, [[1], [True]], False)
@example({"maximum": 2.0}, 2**53 + 1, False)
@example({"format": "date"}, "2020-13-45", True)
@example({"contentEncoding": "base64"}, "!!", True)
@example({"additionalProperties": False, "patternProperties": {"^a": {}}}, {"ab": 1, "b": 2}, True)
@example({"pattern": "^[a-z]+$"}, "abc\n", True)
def test_a_compiled_yes_is_a_yes_of_jsonschema(schema: dict[str, Any], value: Any, arguments: bool) -> None:
    check = compiled_check(schema, arguments=arguments)
    if check is not None and check(value):
        assert _full_errors(schema, value, arguments=arguments) == []


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "number", "multipleOf": 0.1},  # 0.3: jsonschema-rs says yes, jsonschema's float division no
        {"type": "object", "unevaluatedProperties": False},
        {"$ref": "https://example.com/schema.json"},  # never leaves the document
        {"$ref": "#/$defs/missing"},
        {"type": "string", "pattern": "^(?=a)a$"},  # lookahead: the budgeted engine, not the linear one
        {"type": "string", "pattern": "a{"},  # an ECMA literal brace: respelled before it runs
        {"type": "integer", "maximum": 2**53},
        {"enum": [9007199254740993]},
        {"$id": "https://example.com/s", "type": "string"},
    ],
)
def test_schemas_where_the_engines_may_differ_get_no_compiled_check(schema: dict[str, Any]) -> None:
    assert compiled_check(schema, arguments=True) is None
    assert compiled_check(schema, arguments=False) is None


def test_arguments_that_are_not_plain_json_data_are_left_to_jsonschema() -> None:
    check = compiled_check({"type": "object", "properties": {"a": {"type": "array"}}}, arguments=True)
    assert check is not None
    assert check({"a": [1]})
    assert not check({"a": (1,)})  # an array to jsonschema-rs, not to jsonschema
    assert not check({"a": [math.nan]})
    text = compiled_check({"type": "string"}, arguments=True)
    assert text is not None and not text("\ud800")  # jsonschema-rs cannot read a lone surrogate


def test_arguments_assert_the_bridges_own_formats_and_base64() -> None:
    check = compiled_check({"type": "string", "format": "date-time"}, arguments=True)
    assert check is not None
    assert check("2020-01-01 10:00:00Z")  # the bridge accepts a space separator, as Ajv does
    assert not check("2020-01-01")
    encoded = compiled_check({"type": "string", "contentEncoding": "base64"}, arguments=True)
    assert encoded is not None and encoded("aGk=") and not encoded("not base64!")
    output = compiled_check({"type": "string", "format": "date-time"}, arguments=False)
    assert output is not None and output("yesterday")  # outputs assert no format


def test_an_invalid_argument_is_still_named_by_jsonschemas_message() -> None:
    validator = ArgumentValidator({"t": {"type": "object", "properties": {"petId": {"type": "integer", "minimum": 1}}}})
    assert validator.validate("t", {"petId": 3}) == {"petId": 3}
    with pytest.raises(Exception, match="petId"):
        validator.validate("t", {"petId": 0})


def _golden_tools(package: str) -> list[Any]:
    from bridge.serving.package import load_catalogue

    return list(load_catalogue(Path(__file__).parents[3] / "generated" / package).tools)


def test_the_petstore_tools_get_the_compiled_check() -> None:
    tools = {e.name: e for e in _golden_tools("petstore")}
    entry = tools["getPet"]
    VALIDATORS.get(entry.input_schema, arguments=True, what="test")
    check = compiled_check(entry.input_schema, arguments=True)
    assert check is not None and check({"petId": 1}) and not check({"petId": 0})
    assert entry.output_schema is not None
    out = compiled_check(entry.output_schema, arguments=False)
    assert out is not None and out({"id": 1, "name": "rex"})
    assert output_issues("getPet", entry.output_schema, {"id": "x", "name": "rex"}, json_data=True)


def test_a_compiled_output_yes_leaves_the_answer_unchanged() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}}
    value = {"a": 1, "b": [1, 2]}
    before = json.dumps(value)
    assert output_issues("t", schema, value, json_data=True) == []
    assert json.dumps(value) == before
    assert output_issues("t", schema, {"a": "x"}, json_data=True) != []
