"""The fast validation steps report exactly the problems the library's own steps report."""

from __future__ import annotations

import copy
import math
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema_path import SchemaPath
from openapi_spec_validator import OpenAPIV30SpecValidator, OpenAPIV31SpecValidator
from openapi_spec_validator.validation import keywords

from generator.load.validate import Problem, find_problems
from generator.load.validate_fast import fast_schema_meta

# Patterns both engines accept, ones only an ECMA engine accepts (Python's ``re`` rejects them, so
# the library reports them), ones neither accepts, and ones where ``$``/``\d`` differ between them.
PATTERNS = [
    "^[a-z]+$",
    r"^\d{3}-\d{4}$",
    r"\p{L}+",
    r"^\p{Lu}",
    r"\u{1F600}",
    "(?<name>x)",
    "(?P<name>x)",
    "[a-",
    "a{2,1}",
    "(?i)abc",
    "\\",
    "*",
    "x++",
    r"[\w-]+",
    "^a$\n",
    "",
]
TYPES_30 = ["string", "integer", "number", "boolean", "array", "object", "strin", "null", "file"]
TYPES_31 = [*TYPES_30, ["string", "null"], ["integer", "strin"], []]
LEAVES: list[Any] = [None, True, False, 0, 1, -1, 1.0, 1.5, math.inf, "", "x", "a\n", "é", "2024-01-01"]
LEAVES += [[], [1, 1.0], {}, {"a": 1}]
FORMATS = ["int32", "int64", "float", "double", "byte", "binary", "password", "date", "date-time", "regex", "uri", "x"]


def schemas(version: str) -> st.SearchStrategy[Any]:
    types = TYPES_31 if version == "3.1" else TYPES_30
    leaf = st.sampled_from(LEAVES)
    numbers = st.sampled_from([0, 1, 2, -1, 1.0, 2.5, "1", True, None])

    def extend(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
        keyword = st.one_of(
            st.tuples(st.just("type"), st.sampled_from(types) | leaf),
            st.tuples(st.just("nullable"), st.sampled_from([True, False, "yes"])),
            st.tuples(st.just("pattern"), st.sampled_from(PATTERNS) | numbers),
            st.tuples(st.just("format"), st.sampled_from(FORMATS) | numbers),
            st.tuples(st.just("default"), leaf | inner),
            st.tuples(st.just("example"), leaf),
            st.tuples(st.just("enum"), st.lists(leaf, max_size=3) | leaf),
            st.tuples(st.just("const"), leaf),
            st.tuples(st.just("required"), st.lists(st.sampled_from(["a", "b", 1]), max_size=3) | leaf),
            st.tuples(st.just("properties"), st.dictionaries(st.sampled_from("abc"), inner, max_size=3) | leaf),
            st.tuples(st.just("patternProperties"), st.dictionaries(st.sampled_from(PATTERNS), inner, max_size=2)),
            st.tuples(st.just("additionalProperties"), inner | leaf),
            st.tuples(st.just("items"), inner | st.lists(inner, max_size=2) | leaf),
            st.tuples(st.sampled_from(["allOf", "oneOf", "anyOf"]), st.lists(inner, max_size=3) | leaf),
            st.tuples(st.just("not"), inner | leaf),
            st.tuples(st.sampled_from(["minLength", "maxLength", "minItems", "maxProperties", "maximum"]), numbers),
            st.tuples(st.sampled_from(["exclusiveMaximum", "exclusiveMinimum"]), numbers),
            st.tuples(st.sampled_from(["uniqueItems", "readOnly", "writeOnly", "deprecated"]), leaf),
            st.tuples(st.just("discriminator"), st.sampled_from([{"propertyName": "a"}, {"mapping": {}}, "a", {}])),
            st.tuples(st.just("xml"), st.sampled_from([{"name": "a"}, {"namespace": "not a uri"}, {"wrapped": 1}])),
            st.tuples(st.just("externalDocs"), st.sampled_from([{"url": "https://x"}, {"url": 3}, {}])),
            st.tuples(st.just("$ref"), st.sampled_from(["#/components/schemas/Known", "#/components/schemas/Nope", 3])),
            st.tuples(st.sampled_from(["x-extra", "unknownKeyword", "$schema", "$id", "$anchor"]), leaf),
        )
        return st.lists(keyword, max_size=5).map(dict)

    return st.recursive(st.just({}) | st.sampled_from([{"type": t} for t in TYPES_30]), extend, max_leaves=12)


def openapi(version: str, schema: Any) -> dict[str, Any]:
    known = {"type": "object", "properties": {"id": {"type": "integer", "default": 1}}}
    nested = {"allOf": [{"$ref": "#/components/schemas/S"}]}
    operation = {
        "parameters": [{"name": "q", "in": "query", "schema": copy.deepcopy(schema)}],
        "responses": {"200": {"description": "ok", "content": {"application/json": {"schema": schema}}}},
    }
    return {
        "openapi": "3.1.0" if version == "3.1" else "3.0.3",
        "info": {"title": "t", "version": "1"},
        "paths": {"/a": {"get": operation}},
        "components": {"schemas": {"Known": known, "S": schema, "Nested": nested}},
    }


def swagger(schema: Any) -> dict[str, Any]:
    return {
        "swagger": "2.0",
        "info": {"title": "t", "version": "1"},
        "paths": {"/a": {"get": {"responses": {"200": {"description": "ok", "schema": schema}}}}},
        "definitions": {"Known": {"type": "object"}, "S": schema},
    }


def assert_same_problems(document: dict[str, Any]) -> list[Problem]:
    fast = find_problems(document)
    assert fast == find_problems(document, accelerated=False)
    return fast


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schemas("3.0"))
def test_openapi_30_schemas_get_the_librarys_problems(schema: Any) -> None:
    assert_same_problems(openapi("3.0", schema))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schemas("3.1"))
def test_openapi_31_schemas_get_the_librarys_problems(schema: Any) -> None:
    assert_same_problems(openapi("3.1", schema))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schemas("3.0"))
def test_swagger2_schemas_get_the_librarys_problems(schema: Any) -> None:
    assert_same_problems(swagger(schema))


def meta_problem(check: Any, keyword: Any, document: dict[str, Any]) -> str | None:
    path = SchemaPath.from_dict(document) / "components" / "schemas" / "S"
    error = check(keyword, path, document["components"]["schemas"]["S"])
    return None if error is None else f"{type(error).__name__}: {error}"


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(["3.0", "3.1"]), st.data())
def test_the_fast_meta_check_answers_what_the_librarys_answers(version: str, data: st.DataObject) -> None:
    document = openapi(version, data.draw(schemas(version)))
    spec_validator = OpenAPIV31SpecValidator if version == "3.1" else OpenAPIV30SpecValidator
    library = spec_validator.keyword_validators["schema"]
    keyword = spec_validator(document).keyword_validators_registry["schema"]

    assert meta_problem(fast_schema_meta(library), keyword, document) == meta_problem(
        library._validate_schema_meta, keyword, document
    )


@pytest.mark.parametrize("version", ["3.0", "3.1"])
@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        ({"type": "string", "pattern": r"\p{L}+"}, r"'\\p{L}+' is not a 'regex'"),
        ({"type": "string", "pattern": "[a-"}, "'[a-' is not a 'regex'"),
        ({"type": "strin"}, "'strin' is not"),
        ({"type": "integer", "default": "x"}, "'x' is not of type 'integer'"),
        ({"allOf": [{"type": "object"}], "required": ["a"]}, "Required list has not defined properties: ['a']"),
        ({"oneOf": [{"type": "string", "pattern": "(?<n>x)"}]}, "'(?<n>x)' is not a 'regex'"),
        ({"type": "string", "pattern": "^a$"}, None),
    ],
)
def test_table_of_schema_mistakes_gets_the_librarys_problems(version: str, schema: Any, expected: str | None) -> None:
    problems = assert_same_problems(openapi(version, schema))

    messages = [problem.message for problem in problems]
    assert any(expected in message for message in messages) if expected else messages == [], messages


@pytest.mark.parametrize("version", ["3.0", "3.1"])
def test_a_null_default_needs_nullable(version: str) -> None:
    nullable = {"type": "integer", "nullable": True, "default": None}
    plain = {"type": "integer", "default": None}

    assert assert_same_problems(openapi(version, nullable)) == []
    assert any("None is not of type 'integer'" in p.message for p in assert_same_problems(openapi(version, plain)))


def test_refs_missing_and_remote_stop_validation_with_the_librarys_message() -> None:
    for ref in ("#/components/schemas/Nope", "https://example.invalid/s.json"):
        problems = assert_same_problems(openapi("3.0", {"$ref": ref}))

        assert problems and problems[-1].message.startswith("validation stopped: ")


def test_a_valid_schema_never_reaches_the_librarys_meta_check(monkeypatch: pytest.MonkeyPatch) -> None:
    def slow(*args: Any) -> None:
        raise AssertionError("the library's meta-schema check ran on a valid schema")

    for keyword in (keywords.OpenAPIV30SchemaValidator, keywords.OpenAPIV31SchemaValidator):
        monkeypatch.setattr(keyword, "_validate_schema_meta", slow)
    valid = {"type": "object", "properties": {"a": {"type": "string", "pattern": "^[a-z]+$"}}}

    assert find_problems(openapi("3.0", valid)) == []
    assert find_problems(openapi("3.1", valid)) == []


@pytest.mark.parametrize("version", ["3.0", "3.1"])
def test_a_schema_too_deep_for_the_librarys_check_is_checked_instead_of_stopping_validation(version: str) -> None:
    # The one known difference (validate_fast's docstring): the library's recursive check overflows.
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(250):
        schema = {"type": "object", "properties": {"a": schema}}
    document = {
        "openapi": "3.1.0" if version == "3.1" else "3.0.3",
        "info": {"title": "t", "version": "1"},
        "paths": {},
        "components": {"schemas": {"S": schema}},
    }

    assert find_problems(document) == []
    assert [p.message.split(":")[:2] for p in find_problems(document, accelerated=False)] == [
        ["validation stopped", " RecursionError"]
    ]
