"""The bundler's JSON copy (``refs._copy``) gives what :func:`copy.deepcopy` gives for parsed
documents, and shares no container with the original."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from generator.load.refs import _copy

_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=4)),
    lambda kids: st.one_of(st.lists(kids, max_size=4), st.dictionaries(st.text(max_size=4), kids, max_size=4)),
    max_leaves=20,
)


def _containers(value: Any) -> list[int]:
    found = []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict | list):
            found.append(id(item))
            stack.extend(item.values() if isinstance(item, dict) else item)
    return found


@settings(max_examples=400, deadline=None)
@given(_values)
def test_the_json_copy_is_a_deep_copy(value: Any) -> None:
    copied = _copy(value)
    assert repr(copied) == repr(copy.deepcopy(value))  # repr: NaN compares unequal to itself
    assert not set(_containers(copied)) & set(_containers(value))
