"""Form bodies honour the spec's ``encoding``: generator and runtime together.

The property test sends random nested values through every url-encoded style and reads the wire
back with a deepObject-aware parser: no nested key may become a top-level field, every top-level
field is a declared property, and what the upstream decodes is what the model gave.
"""

from __future__ import annotations

import base64
import email.parser
import email.policy
import json
import re
from collections.abc import Iterator
from typing import Any
from urllib.parse import unquote

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bridge.request.build import build_request
from bridge.request.forms import pruned
from bridge.request.styles import primitive_text
from generator.emit.catalogue import http_binding
from generator.options import GenerateOptions
from generator.parse.api import parse_api
from generator.parse.ir import Operation

API = "http://upstream.test"
FORM = "application/x-www-form-urlencoded"
OPEN: dict[str, Any] = {"type": "object", "additionalProperties": True}
STYLES = [(s, e) for s in ("form", "spaceDelimited", "pipeDelimited", "deepObject") for e in (True, False)]
DELIMITERS = {"form": ",", "spaceDelimited": "%20", "pipeDelimited": "%7C"}


def operation(media_type: str, properties: dict[str, Any], encoding: dict[str, Any]) -> Operation:
    schema = {"type": "object", "properties": properties, "additionalProperties": False}
    content = {media_type: {"schema": schema, "encoding": encoding}}
    document = {
        "openapi": "3.0.3",
        "info": {"title": "forms", "version": "1"},
        "paths": {"/charges": {"post": {"requestBody": {"content": content}, "responses": {"204": {}}}}},
    }
    api = parse_api(document, options=GenerateOptions(), source_name="forms.yaml")
    assert len(api.operations) == 1, [str(issue) for issue in api.issues]
    return api.operations[0]


def stripe_like(style: str, explode: bool) -> Operation:
    return operation(
        FORM,
        {
            "email": {"type": "string"},
            "amount": {"type": "integer"},
            "metadata": {"type": "object", "additionalProperties": {"type": "string", "nullable": True}},
            "address": {"type": "object", "properties": {"city": {"type": "string"}, "line": OPEN}},
            "items": {"type": "array", "items": OPEN},
            "tags": {"type": "array", "items": {"type": "string"}},
            "dims": {
                "type": "object",
                "properties": {"w": {"type": "integer"}, "h": {"type": "string"}},
                "additionalProperties": False,
            },
            "extra": OPEN,
        },
        {
            "address": {"style": "deepObject", "explode": True},
            "tags": {"style": style, "explode": explode},
            "dims": {"style": style, "explode": explode},
            "extra": {"contentType": "application/json"},
        },
    )


OPERATIONS = {combo: stripe_like(*combo) for combo in STYLES}


# ------------------------------------------------------------------------- the wire, read back


def _pairs(wire: bytes) -> Iterator[tuple[str, list[str], str]]:
    """``(top-level name, nested keys, raw value)`` of every field; the value is still encoded."""
    for pair in wire.decode("ascii").split("&"):
        raw_name, sep, raw_value = pair.partition("=")
        assert sep, pair
        match = re.fullmatch(r"([^\[\]]*)((?:\[[^\[\]]*\])*)", raw_name)
        assert match is not None, raw_name  # brackets inside keys are always encoded
        keys = [unquote(k) for k in re.findall(r"\[([^\[\]]*)\]", match.group(2))]
        yield unquote(match.group(1)), keys, raw_value


def _listify(node: Any) -> Any:
    if not isinstance(node, dict):
        return node
    items = {k: _listify(v) for k, v in node.items()}
    if items and list(items) == [str(i) for i in range(len(items))]:
        return list(items.values())
    return items


def decode(wire: bytes, modes: dict[str, str]) -> dict[str, Any]:
    """What a deepObject-aware server makes of the wire; ``modes`` says how each field is spelled."""
    out: dict[str, Any] = {}
    for name, keys, raw in _pairs(wire):
        mode = modes[name]
        if keys:
            assert mode == "deep", (name, keys)
            node = out.setdefault(name, {})
            for key in keys[:-1]:
                node = node.setdefault(key, {})
            assert keys[-1] not in node
            node[keys[-1]] = unquote(raw)
        elif mode == "json":
            out[name] = json.loads(unquote(raw))
        elif mode == "repeat":
            out.setdefault(name, []).append(unquote(raw))
        elif mode.startswith("split"):
            assert name not in out
            items = [unquote(v) for v in raw.split(mode.split(":", 1)[1])]
            out[name] = dict(zip(items[::2], items[1::2], strict=True)) if mode.startswith("split-object") else items
        else:
            assert name not in out and mode == "scalar", (name, mode)
            out[name] = unquote(raw)
    return {name: _listify(value) for name, value in out.items()}


def as_text(value: Any) -> Any:
    """A value as a form carries it: every leaf is text."""
    if isinstance(value, dict):
        return {str(k): as_text(v) for k, v in value.items()}
    if isinstance(value, list):
        return [as_text(v) for v in value]
    return primitive_text(value)


# ------------------------------------------------------------------------------------ property

LEAF = st.none() | st.booleans() | st.integers(-(10**6), 10**6) | st.text(max_size=6)
# Keys a prompt-injected model would pick, and any text; all-digit keys would read back as arrays.
KEY = st.sampled_from(["email", "amount", "metadata", "a[b]", "x=1&email", "[0]", "%5B"]) | st.text(
    min_size=1, max_size=5
)
KEY = KEY.filter(lambda k: not k.isdecimal())
NESTED = st.recursive(
    LEAF, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(KEY, inner, max_size=3), max_leaves=8
)
FLAT_TEXT = st.text(alphabet=st.characters(blacklist_characters=" |", blacklist_categories=["Cs"]), max_size=5)


@st.composite
def form_args(draw: st.DrawFn) -> dict[str, Any]:
    args = {
        "email": draw(st.none() | st.emails()),
        "amount": draw(st.none() | st.integers(0, 10**6)),
        "metadata": draw(st.none() | st.dictionaries(KEY, st.none() | st.text(max_size=5), max_size=4)),
        "address": draw(st.none() | st.fixed_dictionaries({}, optional={"city": FLAT_TEXT, "line": NESTED})),
        "items": draw(st.none() | st.lists(st.dictionaries(KEY, NESTED, max_size=3), max_size=3)),
        "tags": draw(st.none() | st.lists(FLAT_TEXT, max_size=3)),
        "dims": draw(st.none() | st.fixed_dictionaries({}, optional={"w": st.integers(), "h": FLAT_TEXT})),
        "extra": draw(st.none() | st.dictionaries(KEY, NESTED, max_size=3)),
    }
    return {name: value for name, value in args.items() if value is not None or draw(st.booleans())}


def modes(style: str, explode: bool) -> dict[str, str]:
    if style == "deepObject":
        array, obj = "deep", "deep"
    else:
        array = "repeat" if explode else f"split:{DELIMITERS[style]}"
        obj = "deep" if explode else f"split-object:{DELIMITERS[style]}"
    fixed = {"email": "scalar", "amount": "scalar", "metadata": "deep", "address": "deep", "items": "deep"}
    return fixed | {"tags": array, "dims": obj, "extra": "json"}


@settings(max_examples=150, deadline=None)
@given(combo=st.sampled_from(STYLES), args=form_args())
def test_form_fields_follow_their_encoding_and_no_nested_key_becomes_a_field(
    combo: tuple[str, bool], args: dict[str, Any]
) -> None:
    op = OPERATIONS[combo]
    request = build_request(http_binding(op), args, base_url=API)
    wire = request.content or b""
    declared = set(op.arguments["properties"])
    top_level = [name for name, _, _ in _pairs(wire)] if wire else []
    assert set(top_level) <= declared
    assert top_level.count("email") <= 1 and top_level.count("amount") <= 1
    got = decode(wire, modes(*combo)) if wire else {}
    expected = {}
    for name, value in args.items():
        if name == "extra":
            if value is not None:
                expected[name] = value  # JSON text keeps its nulls and empties
        elif (kept := pruned(value)) is not None:
            expected[name] = as_text(kept)
    assert got == expected


def test_stripe_style_metadata_and_nested_objects_keep_their_brackets() -> None:
    op = OPERATIONS[("deepObject", True)]
    args = {
        "email": "a@example.com",
        "metadata": {"email": "evil@example.com", "order[id]": "7"},
        "address": {"city": "Berlin", "line": {"a": {"b": ["c", None, True]}}},
        "items": [{"price": "p_1", "quantity": 2}],
        "tags": ["x", "y"],
    }
    request = build_request(http_binding(op), args, base_url=API)
    assert request.content == (
        b"email=a%40example.com&metadata[email]=evil%40example.com&metadata[order%5Bid%5D]=7"
        b"&address[city]=Berlin&address[line][a][b][0]=c&address[line][a][b][1]=true"
        b"&items[0][price]=p_1&items[0][quantity]=2&tags[0]=x&tags[1]=y"
    )
    assert request.content_type == FORM


@pytest.mark.parametrize(
    ("style", "explode", "wire"),
    [
        ("form", True, b"tags=a&tags=b%2Cc&dims[w]=1&dims[h]=x"),
        ("form", False, b"tags=a,b%2Cc&dims=w,1,h,x"),
        ("spaceDelimited", False, b"tags=a%20b%2Cc&dims=w%201%20h%20x"),
        ("pipeDelimited", False, b"tags=a%7Cb%2Cc&dims=w%7C1%7Ch%7Cx"),
        ("deepObject", True, b"tags[0]=a&tags[1]=b%2Cc&dims[w]=1&dims[h]=x"),
    ],
)
def test_each_url_encoded_style_spells_arrays_and_objects_as_the_table_says(
    style: str, explode: bool, wire: bytes
) -> None:
    request = build_request(
        http_binding(OPERATIONS[(style, explode)]), {"tags": ["a", "b,c"], "dims": {"w": 1, "h": "x"}}, base_url=API
    )
    assert request.content == wire


# ------------------------------------------------------------------------------------ multipart


def parts(content: bytes, content_type: str) -> dict[str, list[tuple[str | None, bytes]]]:
    message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
        f"Content-Type: {content_type}\r\n\r\n".encode() + content
    )
    out: dict[str, list[tuple[str | None, bytes]]] = {}
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        payload = part.get_payload(decode=True)
        assert isinstance(name, str) and isinstance(payload, bytes)
        out.setdefault(name, []).append((part["content-type"], payload))
    return out


def test_multipart_parts_carry_the_content_type_their_encoding_declares() -> None:
    op = operation(
        "multipart/form-data",
        {
            "profile": OPEN,
            "geo": OPEN,
            "avatar": {"type": "string", "format": "binary"},
            "photo": {"type": "string", "format": "binary"},
            "report": {"type": "string"},
            "note": {"type": "string"},
            "ids": {"type": "array", "items": {"type": "integer"}},
        },
        {
            "geo": {"contentType": "application/geo+json"},
            "avatar": {"contentType": "image/png, image/jpeg"},
            "photo": {"contentType": "image/*"},
            "report": {"contentType": "text/csv"},
            "note": {"contentType": "application/json"},
        },
    )
    png = base64.b64encode(b"\x89PNG").decode()
    args = {
        "profile": {"name": "Ann"},
        "geo": {"type": "Point"},
        "avatar": png,
        "photo": f"data:image/webp;base64,{png}",
        "report": "a,b\n1,2",
        "note": "hi",
        "ids": [1, 2],
    }
    request = build_request(http_binding(op), args, base_url=API)
    assert request.content is not None and request.content_type is not None
    got = parts(request.content, request.content_type)
    assert got["profile"] == [("application/json", b'{"name":"Ann"}')]
    assert got["geo"] == [("application/geo+json", b'{"type":"Point"}')]
    assert got["avatar"] == [("image/png", b"\x89PNG")]
    assert got["photo"] == [("image/webp", b"\x89PNG")]
    assert got["report"] == [("text/csv", b"a,b\n1,2")]
    assert got["note"] == [("application/json", b'"hi"')]
    assert got["ids"] == [(None, b"1"), (None, b"2")]
