"""Trimming's quick copy (bridge.results.trim_quick) gives what the full walk gives, or steps aside.

Hypothesis makes JSON answers around the caps and the byte budget (long strings, long arrays,
nulls and empty members at every depth, non-ASCII and lone surrogates, NaN and big numbers) and
compares :func:`bridge.results.trim.trim_result`, which takes the quick copy when it can, with the full
walk alone (``_trim``, what every answer went through before): same value, same notes, and the
text handed back is the compact JSON of that value.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from bridge.results import trim
from bridge.results.trim import TrimSettings, trim_result
from bridge.results.trim_quick import uncut_copy
from bridge.results.trim_walk import json_size, no_cyclic_gc

KEYS = ("a", "b", "name", "_truncated", "result", "é")

_strings = st.one_of(
    st.just(""),
    st.text(max_size=5),
    st.integers(200, 300).map(lambda n: "x" * n),
    st.integers(250, 260).map(lambda n: "é" * n),
    st.just("\ud800 lone"),
    # every character JSON escapes, and some it does not: the text may come from pydantic-core's encoder
    st.text(alphabet=st.sampled_from('\x00\x01\x08\t\n\x0c\r\x1f"\\/\x7f\u2028\u2029é😀a'), max_size=8),
)
_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=10**30, max_value=10**31),
    st.floats(allow_nan=True, allow_infinity=True),
    _strings,
)
_values = st.recursive(
    _scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=8),
        st.dictionaries(st.sampled_from(KEYS), children, max_size=5),
        st.just([]),
        st.just({}),
    ),
    max_leaves=40,
)
_roots = st.dictionaries(st.sampled_from(KEYS), _values, max_size=6)
_settings = st.builds(
    TrimSettings,
    max_bytes=st.one_of(st.none(), st.integers(0, 4000)),
    max_items=st.one_of(st.none(), st.integers(0, 6)),
    max_string=st.one_of(st.none(), st.integers(0, 300)),
    drop_empty=st.booleans(),
)


def _walked(value: dict[str, Any], limits: TrimSettings, wrapped: bool) -> trim.Trimmed:
    keep = frozenset({"result"}) if wrapped else frozenset()
    with no_cyclic_gc():
        return trim._trim(dict(value), limits.normalised(), keep, [], ("page",), "fields")


@settings(max_examples=1500, deadline=None)
@given(_roots, _settings, st.booleans())
@example({"a": None, "b": {"c": ""}, "name": []}, TrimSettings(), False)
@example({"result": None}, TrimSettings(), True)
@example({"result": []}, TrimSettings(), True)
@example({"a": [{"b": None}, {}, [], ""]}, TrimSettings(), False)
@example({"a": "x" * 300}, TrimSettings(max_string=256), False)
@example({"a": list(range(7))}, TrimSettings(max_items=6), False)
@example({"_truncated": ["upstream"]}, TrimSettings(), False)
def test_the_quick_copy_gives_what_the_full_walk_gives(
    value: dict[str, Any], limits: TrimSettings, wrapped: bool
) -> None:
    root = {"result": value} if wrapped else value
    full = _walked(root, limits, wrapped)
    quick = trim_result(root, limits, wrapped=wrapped, paging=("page",), fields_arg="fields")
    assert quick.value == full.value or _same_json(quick.value, full.value)
    assert quick.notes == full.notes
    if quick.text is not None:
        assert quick.text == json.dumps(quick.value, ensure_ascii=False, separators=(",", ":"))
        assert not quick.notes


def _same_json(a: Any, b: Any) -> bool:  # NaN != NaN: compare what is sent
    return json.dumps(a) == json.dumps(b)


def test_the_quick_copy_is_taken_for_an_answer_that_fits() -> None:
    answer = {"id": 1, "name": "Rex", "tag": None, "owner": {"login": "o", "bio": ""}, "topics": []}
    out = trim_result(answer, TrimSettings())
    assert out.value == {"id": 1, "name": "Rex", "owner": {"login": "o"}}
    assert out.text == '{"id":1,"name":"Rex","owner":{"login":"o"}}'
    assert out.notes == []


def test_the_quick_copy_steps_aside_for_cuts_and_odd_values() -> None:
    limits = TrimSettings().normalised()
    kwargs: dict[str, Any] = dict(max_items=limits.max_items, max_string=limits.max_string, drop_empty=True, keep=())
    assert uncut_copy({"a": "x" * 5000}, max_bytes=limits.max_bytes, **kwargs) is None
    assert uncut_copy({"a": list(range(1000))}, max_bytes=limits.max_bytes, **kwargs) is None
    big = {"a": ["y" * 200] * 10}
    assert uncut_copy(big, max_bytes=json_size(big) - 1, **kwargs) is None
    assert uncut_copy(big, max_bytes=json_size(big), **kwargs) is not None
    assert uncut_copy({"a": (1, 2)}, max_bytes=None, **kwargs) is None
    assert uncut_copy({1: "a"}, max_bytes=None, **kwargs) is None  # type: ignore[dict-item]
    deep: dict[str, Any] = {}
    node = deep
    for _ in range(100):
        node["a"] = node = {}
    assert uncut_copy(deep, max_bytes=None, **kwargs) is None
    assert trim_result(deep, TrimSettings()).value == _walked(deep, TrimSettings(), False).value


@settings(max_examples=300, deadline=None)
@given(_values)
def test_a_wrapped_answer_s_text_is_its_own_json(value: Any) -> None:
    from bridge.results.tool_result import _dumps, _shown_text

    out = trim_result({"result": value}, TrimSettings(), wrapped=True)
    if out.cut:
        return
    assert _shown_text(out.value, out.value["result"], out.text) == _dumps(out.value["result"])
