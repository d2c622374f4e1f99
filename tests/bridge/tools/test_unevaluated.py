"""unevaluatedProperties matches patternProperties keys with the linear engine, and agrees with jsonschema."""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bridge.tools.errors import InvalidArgumentsError, ToolError
from bridge.tools.validation import ArgumentValidator, check_output
from tests.bridge.contract.test_patterns import CATASTROPHIC

_KEYS = st.sampled_from(["a", "b", "ab", "x-1", "x-y", "1"])
_BENIGN = st.sampled_from(["^a", "b$", "^x-", r"^\d$", "a|b", "^[ab]+$"])
_LEAF = st.sampled_from([{}, {"type": "integer"}, {"type": "string"}, False, True])


def _object_parts(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {},
        optional={
            "properties": st.dictionaries(_KEYS, _LEAF, max_size=2),
            "patternProperties": st.dictionaries(_BENIGN, _LEAF, max_size=2),
            "additionalProperties": _LEAF,
            "allOf": st.lists(inner, min_size=1, max_size=2),
            "anyOf": st.lists(inner, min_size=1, max_size=2),
            "oneOf": st.lists(inner, min_size=1, max_size=2),
            "if": inner,
            "then": inner,
            "else": inner,
            "dependentSchemas": st.dictionaries(_KEYS, inner, max_size=1),
            "$ref": st.just("#/$defs/shared"),
        },
    )


_SUBSCHEMAS = st.recursive(st.just({}), _object_parts, max_leaves=4)
_SCHEMAS = st.builds(
    lambda parts, shared, unevaluated: {
        **parts,
        "$defs": {"shared": shared},
        "unevaluatedProperties": unevaluated,
    },
    _object_parts(_SUBSCHEMAS),
    st.fixed_dictionaries({}, optional={"patternProperties": st.dictionaries(_BENIGN, _LEAF, max_size=1)}),
    st.sampled_from([False, {"type": "integer"}]),
)
_INSTANCES = st.dictionaries(_KEYS, st.one_of(st.integers(0, 3), st.just("s")), max_size=4)


@given(_SCHEMAS, _INSTANCES)
@settings(max_examples=200, deadline=None)
def test_unevaluated_properties_give_jsonschemas_answer_on_benign_patterns(
    schema: dict[str, Any], instance: dict[str, Any]
) -> None:
    expected = jsonschema.Draft202012Validator(schema).is_valid(instance)
    try:
        check_output("t", schema, instance)
    except ToolError:
        assert not expected
    else:
        assert expected


@pytest.mark.parametrize(("pattern", "adversarial"), CATASTROPHIC[:4], ids=[p[:24] for p, _ in CATASTROPHIC[:4]])
def test_unevaluated_properties_match_catastrophic_key_patterns_linearly(pattern: str, adversarial: Any) -> None:
    schema = {
        "type": "object",
        "allOf": [{"patternProperties": {pattern: {"type": "integer"}}}],
        "unevaluatedProperties": False,
    }
    key = adversarial(64 * 1024)  # Python's re would not finish one such key in a lifetime
    with pytest.raises(InvalidArgumentsError) as caught:
        ArgumentValidator({"t": schema}).validate("t", {key: 1})
    assert "Unrecognized key" in str(caught.value)
