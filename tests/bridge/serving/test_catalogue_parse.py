"""A package's catalogue reads back as the data the standard library's parser gives, whatever its text holds."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from bridge.contract.catalogue import CATALOGUE_FILE
from bridge.serving.package import _parsed, load_catalogue
from tests.golden import GENERATED_DIR

# Texts a spec may carry into a schema: a lone surrogate (pydantic-core's parser refuses it), big
# and tiny numbers, an infinity, a control character.
ODD_VALUES = ['"\\ud800 lone"', "123456789012345678901234567890", "1e400", "1.5e-7", "-0.0", '"\\u0000"', '"\\u00e9"']


@pytest.mark.parametrize("value", ODD_VALUES)
def test_a_catalogue_reads_back_as_the_standard_parser_reads_it(value: str, tmp_path: Path) -> None:
    source = (GENERATED_DIR / "petstore" / CATALOGUE_FILE).read_text(encoding="utf-8")
    data = json.loads(source)
    data["tools"][0]["input_schema"]["x-odd"] = "@@ODD@@"
    text = json.dumps(data).replace('"@@ODD@@"', value)
    (tmp_path / CATALOGUE_FILE).write_text(text, encoding="utf-8")
    loaded = load_catalogue(tmp_path)
    expected: Any = json.loads(text)["tools"][0]["input_schema"]
    assert json.dumps(loaded.tools[0].input_schema) == json.dumps(expected)


# Number spellings where two parsers could round or type differently, and escapes pydantic-core refuses.
_RAW = st.sampled_from(
    [
        "1E5",
        "-0",
        "-0.0",
        "1e-400",
        "1e400",
        "-1e400",
        "123456789012345678901234567890",
        "-123456789012345678901234567890",
        "0.1000000000000000055511151231257827",
        "9007199254740993",
        "9007199254740993.0",
        "2.2250738585072011e-308",
        "4.9e-324",
        "1.7976931348623157e308",
        '"\\ud800"',
        '"\\udfff\\ud800"',
        '"\\u0000\\t\\/"',
        '"\\ud83d\\ude00"',
        "Infinity",
        "NaN",
    ]
)
_scalars = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=8), _RAW.map(json.loads)
)
_values = st.recursive(
    _scalars,
    lambda kids: st.one_of(st.lists(kids, max_size=4), st.dictionaries(st.text(max_size=4), kids, max_size=4)),
    max_leaves=16,
)


def _spelled(value: Any, raw: list[str], ensure_ascii: bool) -> str:
    """``value`` as JSON text, with each ``@@n@@`` marker string replaced by the raw token ``raw[n]``."""
    text = json.dumps(value, ensure_ascii=ensure_ascii)
    for index, token in enumerate(raw):
        text = text.replace(json.dumps(f"@@{index}@@"), token)
    return text


@settings(max_examples=500, deadline=None)
@given(_values, st.lists(_RAW, max_size=4), st.booleans(), st.integers(0, 3))
def test_any_json_text_parses_as_the_standard_library_parses_it(
    value: Any, raw: list[str], ensure_ascii: bool, duplicate: int
) -> None:
    # The raw tokens go in as members of a wrapping object, keys repeated ``duplicate`` times (the
    # last one wins for json.loads).
    wrapped: dict[str, Any] = {"value": value, **{f"k{i}": f"@@{i}@@" for i in range(len(raw))}}
    text = _spelled(wrapped, raw, ensure_ascii)
    text = text[:-1] + "".join(f', "value": {json.dumps(i)}' for i in range(duplicate)) + "}"
    try:
        data = text.encode()
    except UnicodeEncodeError:  # a raw lone surrogate: no UTF-8 file holds one (escaped, it is in _RAW)
        assume(False)
    assert repr(_parsed(data)) == repr(json.loads(data))
