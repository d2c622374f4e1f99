"""Hypothesis strategies shared by the quick checks' tests: the keywords both compare with jsonschema."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hypothesis import strategies as st

TYPE_NAMES = ("object", "array", "string", "boolean", "null", "number", "integer")
NUMBERS = st.one_of(st.integers(-3, 3), st.sampled_from([0.5, 1.0, -1.5, 2.0]))


def bound_keywords(keys: Sequence[str]) -> dict[str, st.SearchStrategy[Any]]:
    """``type``, the length, size and number bounds, and ``required`` over ``keys``: small values,
    so generated values often meet or just miss them."""
    return {
        "type": st.one_of(
            st.sampled_from(TYPE_NAMES), st.lists(st.sampled_from(TYPE_NAMES), min_size=1, max_size=3, unique=True)
        ),
        "minLength": st.integers(0, 3),
        "maxLength": st.integers(0, 3),
        "minItems": st.integers(0, 2),
        "maxItems": st.integers(0, 2),
        "minimum": NUMBERS,
        "maximum": NUMBERS,
        "exclusiveMinimum": NUMBERS,
        "exclusiveMaximum": NUMBERS,
        "required": st.lists(st.sampled_from(keys), max_size=2, unique=True),
    }
