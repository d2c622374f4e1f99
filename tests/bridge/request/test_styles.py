"""OpenAPI style/explode serialisation, value by value (the OAS 3.0 style examples)."""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bridge.contract.catalogue import ParamBinding
from bridge.request.styles import (
    encode_value,
    has_dot_component,
    is_dot_segment,
    primitive_text,
    query_string,
    serialize_cookie,
    serialize_header,
    serialize_path,
    serialize_query,
)
from bridge.tools.errors import InvalidArgumentsError

BLUE = "blue"
COLORS = ["blue", "black", "brown"]
RGB = {"R": 100, "G": 200, "B": 150}


def param(location: str, style: str, explode: bool, **options: Any) -> ParamBinding:
    return ParamBinding(arg="color", wire="color", location=location, style=style, explode=explode, **options)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("style", "explode", "value", "expected"),
    [
        ("simple", False, BLUE, "blue"),
        ("simple", False, COLORS, "blue,black,brown"),
        ("simple", False, RGB, "R,100,G,200,B,150"),
        ("simple", True, COLORS, "blue,black,brown"),
        ("simple", True, RGB, "R=100,G=200,B=150"),
        ("label", False, BLUE, ".blue"),
        ("label", False, COLORS, ".blue,black,brown"),
        ("label", False, RGB, ".R,100,G,200,B,150"),
        ("label", True, COLORS, ".blue.black.brown"),
        ("label", True, RGB, ".R=100.G=200.B=150"),
        ("matrix", False, BLUE, ";color=blue"),
        ("matrix", False, COLORS, ";color=blue,black,brown"),
        ("matrix", False, RGB, ";color=R,100,G,200,B,150"),
        ("matrix", True, BLUE, ";color=blue"),
        ("matrix", True, COLORS, ";color=blue;color=black;color=brown"),
        ("matrix", True, RGB, ";R=100;G=200;B=150"),
    ],
)
def test_path_styles_match_the_openapi_examples(style: str, explode: bool, value: Any, expected: str) -> None:
    assert serialize_path(param("path", style, explode), value) == expected


@pytest.mark.parametrize(
    ("style", "explode", "value", "expected"),
    [
        ("form", True, BLUE, "color=blue"),
        ("form", False, COLORS, "color=blue,black,brown"),
        ("form", True, COLORS, "color=blue&color=black&color=brown"),
        ("form", False, RGB, "color=R,100,G,200,B,150"),
        ("form", True, RGB, "R=100&G=200&B=150"),
        ("spaceDelimited", False, COLORS, "color=blue%20black%20brown"),
        ("spaceDelimited", False, RGB, "color=R%20100%20G%20200%20B%20150"),
        ("pipeDelimited", False, COLORS, "color=blue%7Cblack%7Cbrown"),
        ("pipeDelimited", False, RGB, "color=R%7C100%7CG%7C200%7CB%7C150"),
        ("deepObject", True, RGB, "color[R]=100&color[G]=200&color[B]=150"),
    ],
)
def test_query_styles_match_the_openapi_examples(style: str, explode: bool, value: Any, expected: str) -> None:
    assert query_string(serialize_query(param("query", style, explode), value)) == expected


def test_deep_object_nests_brackets_and_encodes_keys() -> None:
    pairs = serialize_query(param("query", "deepObject", True), {"a b": {"c]": 1}, "tags": ["x", "y"]})
    assert query_string(pairs) == "color[a%20b][c%5D]=1&color[tags]=x&color[tags]=y"


def test_query_values_cannot_inject_parameters_or_fragments() -> None:
    text = query_string(serialize_query(param("query", "form", True), ["a&admin=true#x", "1\r\n2", "a b+c%"]))
    assert text == "color=a%26admin%3Dtrue%23x&color=1%0D%0A2&color=a%20b%2Bc%25"


def test_delimiters_inside_values_stay_encoded() -> None:
    assert query_string(serialize_query(param("query", "form", False), ["a,b", "c"])) == "color=a%2Cb,c"
    assert serialize_path(param("path", "simple", True), {"k=": "v,"}) == "k%3D=v%2C"


def test_allow_reserved_keeps_reserved_characters_but_not_query_structure() -> None:
    p = param("query", "form", True, allow_reserved=True)
    assert serialize_query(p, "http://x/y?z=1&w#f %41 100%") == [("color", "http://x/y?z=1%26w%23f%20%41%20100%25")]
    assert encode_value("a+b[c]") == "a%2Bb%5Bc%5D"
    assert encode_value("a+b[c]", allow_reserved=True) == "a%2Bb%5Bc%5D"
    assert encode_value(":/?@!$'()*,;=", allow_reserved=True) == ":/?@!$'()*,;="


def test_booleans_numbers_and_nulls_have_fixed_spellings() -> None:
    assert [primitive_text(v) for v in (True, False, 3, 2.5, 5.0, None)] == ["true", "false", "3", "2.5", "5", ""]
    assert serialize_query(param("query", "form", True), None) == []
    assert serialize_query(param("query", "form", True), [None, True]) == [("color", "true")]


def test_empty_arrays_and_objects_send_no_query_parameter() -> None:
    assert serialize_query(param("query", "form", False), []) == []
    assert serialize_query(param("query", "deepObject", True), {}) == []


def test_non_finite_numbers_are_refused() -> None:
    with pytest.raises(InvalidArgumentsError, match='"color"'):
        serialize_query(param("query", "form", True), float("nan"))


@pytest.mark.parametrize("value", ["..", ".", "", "%2e%2e", "%2E%2e", ".%2E", "%2e", "%252e%252E", "%25252e"])
def test_dot_and_empty_path_values_are_refused_in_every_spelling(value: str) -> None:
    with pytest.raises(InvalidArgumentsError, match='Argument "color"'):
        serialize_path(param("path", "simple", False), value)


@pytest.mark.parametrize("style", ["simple", "label", "matrix"])
def test_empty_path_arrays_and_objects_are_refused(style: str) -> None:
    empty: tuple[Any, ...] = ([], {}, [None])
    for value in empty:
        with pytest.raises(InvalidArgumentsError, match="must not be empty"):
            serialize_path(param("path", style, False), value)


def test_missing_path_value_is_refused() -> None:
    with pytest.raises(InvalidArgumentsError, match="required"):
        serialize_path(param("path", "simple", False), None)


def test_path_separators_are_encoded_into_one_segment() -> None:
    p = param("path", "simple", False)
    assert serialize_path(p, "a/b?c#d") == "a%2Fb%3Fc%23d"
    assert serialize_path(p, "a\\b;c d ü %2F") == "a%5Cb%3Bc%20d%20%C3%BC%20%252F"


@given(st.text(max_size=40))
def test_any_path_text_is_one_segment_that_decodes_to_itself(text: str) -> None:
    p = param("path", "simple", False)
    if is_dot_segment(text) or has_dot_component(text):
        with pytest.raises(InvalidArgumentsError):
            serialize_path(p, text)
        return
    encoded = serialize_path(p, text)
    assert "/" not in encoded and "?" not in encoded and "#" not in encoded
    assert unquote(encoded) == text


@pytest.mark.parametrize(
    ("explode", "value", "expected"),
    [
        (False, BLUE, "blue"),
        (False, COLORS, "blue,black,brown"),
        (False, RGB, "R,100,G,200,B,150"),
        (True, RGB, "R=100,G=200,B=150"),
        (False, True, "true"),
    ],
)
def test_header_simple_style(explode: bool, value: Any, expected: str) -> None:
    assert serialize_header(param("header", "simple", explode), value) == expected


@pytest.mark.parametrize("value", ["ok\r\nX-Injected: 1", "a\nb", "a\rb", "a\x00", "a\x7f", "é", "\x1b[0m", "a\x0bb"])
def test_header_values_with_controls_or_non_ascii_are_refused(value: str) -> None:
    with pytest.raises(InvalidArgumentsError, match='Argument "color" cannot be sent as an HTTP header'):
        serialize_header(param("header", "simple", False), value)


def test_header_values_keep_inner_spaces_and_tabs() -> None:
    assert serialize_header(param("header", "simple", False), " a b\tc ") == "a b\tc"


def test_header_content_parameter_is_ascii_json() -> None:
    p = param("header", "simple", False, content_type="application/json")
    assert serialize_header(p, {"name": "é"}) == '{"name":"\\u00e9"}'


@pytest.mark.parametrize(
    ("explode", "value", "expected"),
    [
        (True, BLUE, [("color", "blue")]),
        (False, COLORS, [("color", "blue,black,brown")]),
        (True, COLORS, [("color", "blue"), ("color", "black"), ("color", "brown")]),
        (False, RGB, [("color", "R,100,G,200,B,150")]),
        (True, RGB, [("R", "100"), ("G", "200"), ("B", "150")]),
        (True, "a b;c=d,e", [("color", "a%20b%3Bc%3Dd%2Ce")]),
    ],
)
def test_cookie_form_style(explode: bool, value: Any, expected: list[tuple[str, str]]) -> None:
    assert serialize_cookie(param("cookie", "form", explode), value) == expected


def test_content_parameters_are_json_then_encoded() -> None:
    p = param("query", "form", True, content_type="application/json")
    assert serialize_query(p, {"a": [1, "x y"]}) == [("color", "%7B%22a%22%3A%5B1%2C%22x%20y%22%5D%7D")]
    path = param("path", "simple", False, content_type="application/json")
    assert serialize_path(path, "x/y") == "%22x%2Fy%22"
    text = param("query", "form", True, content_type="text/plain")
    assert serialize_query(text, "a b") == [("color", "a%20b")]


@pytest.mark.parametrize(
    "value",
    [
        "../admin",
        "a/../b",
        "a/./b",
        "..\\x",
        "..%2fadmin",
        "%2e%2e%2fx",
        "..;jsessionid=1",
        "x/..;",
        "．．/x",
        "%c0%ae%c0%ae",
    ],
)
def test_path_values_with_dot_components_are_refused(value: str) -> None:
    assert has_dot_component(value)
    with pytest.raises(InvalidArgumentsError, match="between slashes"):
        serialize_path(param("path", "simple", False), value)


@pytest.mark.parametrize("style", ["simple", "label", "matrix"])
def test_dot_components_inside_path_arrays_and_objects_are_refused(style: str) -> None:
    for value in (["a", "../x"], {"k": "../x"}, {"..": "v"}):
        with pytest.raises(InvalidArgumentsError, match="between slashes"):
            serialize_path(param("path", style, False), value)


@pytest.mark.parametrize("value", ["a/b", "...", "a..b", ".hidden", "v1.2/x", "/", "a;b"])
def test_other_separators_are_encoded_not_refused(value: str) -> None:
    assert not has_dot_component(value)
    assert unquote(serialize_path(param("path", "simple", False), value)) == value
