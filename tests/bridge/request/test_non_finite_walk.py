"""The fast non-finite test every call makes (``_has_non_finite``) answers what the path-naming walk
(``_non_finite``) answers, on values of any shape: hand-built arguments included."""

from __future__ import annotations

import math
from collections import OrderedDict
from types import MappingProxyType
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from bridge.request.sendable import _has_non_finite, _non_finite


class _Float(float):
    pass


_leaves = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.text(max_size=3),
    st.floats(),  # NaN and both infinities included
    st.sampled_from([math.nan, math.inf, -math.inf, 1.5]).map(_Float),
    st.binary(max_size=3),
)
_values = st.recursive(
    _leaves,
    lambda kids: st.one_of(
        st.lists(kids, max_size=3),
        st.lists(kids, max_size=3).map(tuple),
        st.dictionaries(st.text(max_size=3), kids, max_size=3),
        st.dictionaries(st.text(max_size=3), kids, max_size=3).map(OrderedDict),
        st.dictionaries(st.text(max_size=3), kids, max_size=3).map(MappingProxyType),
    ),
    max_leaves=12,
)


@settings(max_examples=600, deadline=None)
@given(_values)
def test_the_fast_non_finite_test_agrees_with_the_path_naming_walk(value: Any) -> None:
    assert _has_non_finite(value) == (_non_finite(value, "arg", 0) is not None)
