"""The quick output check (bridge.tools.schema_fast) says yes only where the full validator finds nothing.

Hypothesis builds schemas from the keywords it covers (booleans schemas and annotations included)
and values of every JSON type (NaN, infinities, huge and integral numbers, plus a few non-JSON
Python values); the full validator is the one output checks used before (``compile_validator``
with ``arguments=False``). On plain JSON values and schemas without a ``false`` subschema the two
must agree exactly: the quick check is then not only sound but takes every valid answer.
"""

from __future__ import annotations

import json
import math
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from bridge.tools.schema_fast import quick_check
from bridge.tools.schema_messages import format_issues
from bridge.tools.schema_validators import compile_validator, is_draft_2020_12, run_validator
from bridge.tools.validation import VALIDATORS, output_issues
from tests.bridge.tools.schema_strategies import bound_keywords

KEYS = ("a", "b", "_truncated")

LEAF = {
    **bound_keywords(KEYS),
    "format": st.sampled_from(["date-time", "int64", "uri"]),
    "title": st.just("t"),
}
_leaf_keywords = st.fixed_dictionaries({}, optional=LEAF)
# One keyword (and maybe a type): most values then meet or just miss it, where bugs would show.
_single_keyword = st.builds(
    lambda one, typed: {**typed, **one},
    st.one_of(*(st.fixed_dictionaries({name: strategy}) for name, strategy in LEAF.items())),
    st.fixed_dictionaries({}, optional={"type": LEAF["type"]}),
)


def _composite(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.builds(
        lambda base, extra: {**base, **extra},
        _leaf_keywords,
        st.fixed_dictionaries(
            {},
            optional={
                "properties": st.dictionaries(st.sampled_from(KEYS), children, max_size=3),
                "additionalProperties": children,
                "items": children,
                "anyOf": st.lists(children, min_size=1, max_size=3),
                "allOf": st.lists(children, min_size=1, max_size=2),
            },
        ),
    )


schemas = st.recursive(st.one_of(st.booleans(), _leaf_keywords, _single_keyword), _composite, max_leaves=8)

_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=2**64, max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([1.0, 2.0, -0.0, 0.5]),
    st.text(max_size=4),
)
values = st.recursive(
    _scalars,
    lambda children: st.one_of(st.lists(children, max_size=3), st.dictionaries(st.sampled_from(KEYS), children)),
    max_leaves=10,
)


def _parts(node: Any, schema: bool) -> list[Any]:
    """``node`` and what is nested in it: the subschemas of a schema, the members of a value."""
    out = [node]
    if isinstance(node, dict):
        if schema:
            nested = [*node.get("properties", {}).values(), *node.get("anyOf", []), *node.get("allOf", [])]
            nested += [node[k] for k in ("items", "additionalProperties") if k in node]
        else:
            nested = list(node.values())
        for child in nested:
            out += _parts(child, schema)
    elif isinstance(node, list) and not schema:
        for child in node:
            out += _parts(child, schema)
    return out


class _Str(str):
    pass


_odd = st.sampled_from([(1, 2), _Str("abcd"), Decimal("1.5"), {"a": (1,)}, [_Str("")], frozenset()])


def _full_errors(schema: Any, value: Any) -> list[Any]:
    validator = compile_validator(schema, arguments=False, what="test")
    assert is_draft_2020_12(validator)
    return run_validator(validator, value, "test")


def _old_issues(schema: Any, value: Any) -> list[str]:
    """What output_issues answered before the quick check: the full walk's errors, worded."""
    errors = _full_errors(schema, value)
    return format_issues(schema, errors) if errors else []


def _has_false(schema: Any) -> bool:
    return schema is False or ("false" in json.dumps(schema))


@settings(max_examples=800, deadline=None)
@given(schemas, values)
@example({"type": "integer"}, 1.0)
@example({"type": "integer"}, True)
@example({"type": "number"}, False)
@example({"minimum": 0}, math.nan)
@example({"maximum": 0}, math.inf)
@example({"properties": {"a": False}}, {"a": 1})
@example({"additionalProperties": False, "properties": {"a": True}}, {"a": 1, "b": 2})
@example({"anyOf": [False, {"type": "string"}]}, "x")
@example({"items": {"type": "integer"}, "maxItems": 1}, [1, 2.0])
def test_the_quick_check_agrees_with_the_full_validator(schema: Any, value: Any) -> None:
    # Every subschema against every part of the value too: many more near misses per example.
    pairs = [(s, v) for s in _parts(schema, True) for v in _parts(value, False)][:24]
    for part, item in pairs:
        _agrees(part, item)


@settings(max_examples=1500, deadline=None)
@given(_single_keyword, _scalars)
def test_each_keyword_alone_agrees_with_the_full_validator(schema: Any, value: Any) -> None:
    _agrees(schema, value)


def _agrees(schema: Any, value: Any) -> None:
    quick = quick_check(schema) if isinstance(schema, dict) else None
    if quick is None:
        assert not isinstance(schema, dict)
        return
    errors = _full_errors(schema, value)
    if quick(value):
        assert errors == [], (schema, value)
    if not _has_false(schema):
        assert quick(value) is (not errors), (schema, value)
    assert output_issues("test", schema, value) == _old_issues(schema, value)


@settings(max_examples=400, deadline=None)
@given(st.one_of(_single_keyword, schemas), _odd)
def test_values_json_never_makes_are_left_to_the_full_validator_or_judged_the_same(schema: Any, value: Any) -> None:
    quick = quick_check(schema) if isinstance(schema, dict) else None
    if quick is not None and quick(value):
        assert _full_errors(schema, value) == []


@pytest.mark.parametrize(
    "schema",
    [
        {"$ref": "#/$defs/x", "$defs": {"x": {}}},
        {"pattern": "^a"},
        {"patternProperties": {"^a": {}}},
        {"oneOf": [{}]},
        {"not": {}},
        {"enum": [1]},
        {"const": 1},
        {"multipleOf": 2},
        {"uniqueItems": True},
        {"prefixItems": [{}]},
        {"unevaluatedProperties": False},
        {"dependentRequired": {"a": ["b"]}},
        {"properties": {"a": {"x-custom": 1}}},
        {"items": {"$id": "x"}},
    ],
)
def test_schemas_with_other_keywords_have_no_quick_check(schema: dict[str, Any]) -> None:
    assert quick_check(schema) is None


def test_output_schemas_of_other_drafts_have_no_quick_check() -> None:
    schema = {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object"}
    assert VALIDATORS.get(schema, arguments=False, what="test").quick is None
    assert VALIDATORS.get({"type": "object", "properties": {"a": {"type": "string"}}}, arguments=False, what="t").quick


def test_a_mismatch_is_still_reported_in_full() -> None:
    schema = {"type": "object", "properties": {"id": {"type": "integer"}, "name": {"type": "string"}}}
    assert VALIDATORS.get(schema, arguments=False, what="t").quick is not None
    assert output_issues("t", schema, {"id": 1, "name": "x"}) == []
    assert output_issues("t", schema, {"id": "1", "name": 2}) == _old_issues(schema, {"id": "1", "name": 2})
    assert len(output_issues("t", schema, {"id": "1", "name": 2})) == 2
