"""Trimmed results: smaller, honest about every cut, and always valid against the advertised schema."""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from bridge.contract.formats import FORMAT_CHECKER
from bridge.results.trim import (
    MARKER_KEY,
    MIN_STRING,
    TrimSettings,
    advertised_schema,
    iter_paths,
    page_args,
    trim_result,
)
from generator.load.spec import load_spec
from generator.options import GenerateOptions
from generator.parse.api import parse_api
from generator.shape.compact import CompactSettings, compact_api
from tests.golden import GOLDEN_SPECS, spec_path

NO_LIMITS = TrimSettings(max_bytes=None, max_items=None, max_string=None, drop_empty=False)


def _size(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode())


# ------------------------------------------------------------------------------ behaviour


def test_null_and_empty_members_are_dropped_but_array_positions_are_kept() -> None:
    data = {"a": None, "b": "", "c": [], "d": {}, "e": {"f": None}, "g": [None, "", 1], "h": 0, "i": False}
    trimmed = trim_result(data, TrimSettings())
    assert trimmed.value == {"g": [None, "", 1], "h": 0, "i": False}
    assert trimmed.notes == []


def test_the_result_wrapper_is_kept_even_when_empty() -> None:
    trimmed = trim_result({"result": []}, TrimSettings(), wrapped=True)
    assert trimmed.value == {"result": []}


def test_long_arrays_keep_their_first_items_and_the_note_names_the_paging_arguments() -> None:
    data = {"result": [{"id": n} for n in range(30)]}
    trimmed = trim_result(
        data, TrimSettings(max_items=5), wrapped=True, paging=("page", "per_page"), fields_arg="fields"
    )
    assert trimmed.value["result"] == [{"id": n} for n in range(5)]
    notes = trimmed.value[MARKER_KEY]
    assert notes[0] == "result: kept the first 5 of 30 items"
    assert "page with page, per_page" in notes[-1]


def test_long_strings_are_cut_with_an_ellipsis_and_a_note() -> None:
    text = "x" * 5000
    trimmed = trim_result({"body": text}, TrimSettings(max_string=1000))
    assert trimmed.value["body"] == "x" * 999 + "…"
    assert trimmed.value[MARKER_KEY] == ["body: text cut to 1000 of 5000 characters"]


def test_strings_up_to_the_floor_are_never_cut() -> None:
    value = "y" * MIN_STRING
    trimmed = trim_result({"a": value, "b": "z" * 400}, TrimSettings(max_string=10, max_bytes=1024))
    assert trimmed.value["a"] == value


def test_a_result_over_the_byte_budget_is_cut_to_fit_and_says_so() -> None:
    data = {"result": [{"id": n, "body": "lorem ipsum " * 40} for n in range(200)]}
    trimmed = trim_result(data, TrimSettings(max_bytes=24 * 1024), wrapped=True, paging=("page",))
    assert _size(trimmed.value) <= 24 * 1024
    kept = len(trimmed.value["result"])
    assert 0 < kept < 200
    assert trimmed.value["result"] == data["result"][:kept]
    assert any(f"kept the first {kept} of 200 items" in note for note in trimmed.value[MARKER_KEY])
    assert any("over the 24576-byte limit" in note for note in trimmed.value[MARKER_KEY])


def test_one_huge_string_is_cut_to_fit_the_budget() -> None:
    trimmed = trim_result({"log": "é" * 100_000}, TrimSettings(max_bytes=4096, max_string=None))
    assert _size(trimmed.value) <= 4096
    assert trimmed.value["log"].endswith("…")


def test_fields_keep_exactly_the_requested_paths() -> None:
    data = {"items": [{"name": "a", "id": 1, "owner": {"login": "x", "id": 9}}, {"name": "b", "id": 2}], "total": 2}
    trimmed = trim_result(data, NO_LIMITS, fields=["items.name", "items.owner.login", "total"], fields_arg="fields")
    assert trimmed.value == {
        "items": [{"name": "a", "owner": {"login": "x"}}, {"name": "b"}],
        "total": 2,
    }


def test_fields_of_a_wrapped_list_are_relative_to_its_items() -> None:
    data = {"result": [{"name": "a", "id": 1}, {"name": "b", "id": 2}]}
    trimmed = trim_result(data, NO_LIMITS, wrapped=True, fields=["name"], fields_arg="fields")
    assert trimmed.value == {"result": [{"name": "a"}, {"name": "b"}]}


@pytest.mark.parametrize(
    "path",
    ["__class__", "..", ".", "items..name", "__dict__", "items.__class__", "$ENV.HOME", "os.environ.PATH", "HOME", "*"],
)
def test_fields_cannot_read_anything_but_the_response(path: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", "/secret-home-canary")
    data = {"items": [{"name": "a"}]}
    trimmed = trim_result(data, NO_LIMITS, fields=[path], fields_arg="fields")
    assert set(trimmed.value) <= {MARKER_KEY}
    assert "secret-home-canary" not in json.dumps(trimmed.value)
    assert "nothing matched" in trimmed.value[MARKER_KEY][0] or "not dotted paths" in trimmed.value[MARKER_KEY][0]


@settings(max_examples=300, deadline=None)
@given(
    data=st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=5),
        lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=4), children, max_size=4),
        max_leaves=30,
    ),
    fields=st.lists(st.text(max_size=12), max_size=5),
)
def test_fields_only_ever_return_members_of_the_response(data: Any, fields: list[str]) -> None:
    root = data if isinstance(data, dict) else {"result": data}
    trimmed = trim_result(root, NO_LIMITS, wrapped=not isinstance(data, dict), fields=fields, fields_arg="fields")
    value = {k: v for k, v in trimmed.value.items() if k != MARKER_KEY}
    assert set(iter_paths(value)) <= set(iter_paths(root))
    for path in iter_paths(value):
        assert _leaves(value, path) <= _leaves(root, path)


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(st.text(alphabet="abc", min_size=1, max_size=2), children, max_size=4)
    ),
    max_leaves=30,
)


@settings(max_examples=300, deadline=None)
@given(data=JSON_VALUES, picks=st.data())
def test_fields_that_exist_in_the_answer_never_say_nothing_matched(data: Any, picks: st.DataObject) -> None:
    root = data if isinstance(data, dict) else {"result": data}
    wrapped = not isinstance(data, dict)
    paths = sorted({p.removeprefix("result.") if wrapped else p for p in iter_paths(root)} - {"result"})
    fields = picks.draw(st.lists(st.sampled_from(paths), min_size=1, max_size=3)) if paths else ["id"]
    trimmed = trim_result(root, NO_LIMITS, wrapped=wrapped, fields=fields, fields_arg="fields")
    notes = trimmed.value.get(MARKER_KEY, [])
    # An empty page, object or null answers nothing matched by itself: it is the answer, not a bad path.
    if paths or (wrapped and data in (None, [], {})):
        assert not [n for n in notes if "nothing matched" in n], (root, fields, notes)


@pytest.mark.parametrize(
    ("answer", "fields", "wrapped", "expected"),
    [
        ({"result": []}, ["number"], True, {"result": []}),  # no open pull requests
        ({"result": {}}, ["number"], True, {"result": {}}),
        ({"result": None}, ["number"], True, {"result": None}),
        ({"result": [{"number": 1, "x": 2}]}, ["number"], True, {"result": [{"number": 1}]}),
        ({"total": 0, "items": []}, ["total", "items.number"], False, {"total": 0, "items": []}),
    ],
)
def test_fields_on_an_empty_answer_give_the_empty_answer(
    answer: dict[str, Any], fields: list[str], wrapped: bool, expected: dict[str, Any]
) -> None:
    assert trim_result(answer, NO_LIMITS, wrapped=wrapped, fields=fields, fields_arg="fields").value == expected
    # With the default caps the answer is what the same data gives without fields (empty members dropped).
    capped = trim_result(answer, TrimSettings(), wrapped=wrapped, fields=fields, fields_arg="fields").value
    assert capped == trim_result(expected, TrimSettings(), wrapped=wrapped).value


def _leaves(value: Any, path: str) -> set[str]:
    found: set[str] = set()
    parts = path.split(".")

    def walk(node: Any, rest: list[str]) -> None:
        if isinstance(node, list):
            for item in node:
                walk(item, rest)
        elif not rest:
            if not isinstance(node, dict):
                found.add(json.dumps(node, sort_keys=True))
        elif isinstance(node, dict) and rest[0] in node:
            walk(node[rest[0]], rest[1:])

    walk(value, parts)
    return found


def test_page_arguments_are_recognised_by_name() -> None:
    assert page_args(["owner", "per_page", "page", "pageToken", "cursor", "q", "starting_after"]) == (
        "per_page",
        "page",
        "pageToken",
        "cursor",
        "starting_after",
    )


def test_advertised_schema_requires_nothing_and_declares_the_marker() -> None:
    schema = {
        "type": "object",
        "required": ["id", "tags"],
        "additionalProperties": False,
        "properties": {
            "id": {"type": "integer"},
            "tags": {"type": "array", "minItems": 1, "uniqueItems": True, "items": {"type": "string", "minLength": 3}},
            "kind": {"oneOf": [{"const": "a"}, {"const": "b"}]},
            "owner": {"type": "object", "required": ["login"], "properties": {"login": {"type": "string"}}},
        },
    }
    advertised = advertised_schema(schema, depth=1)
    assert advertised == {
        "type": "object",
        "properties": {
            "id": {"type": "integer"},
            "tags": {"type": "array", "items": {"type": "string"}},
            "kind": {},  # value sets (enum, const) are not promised: APIs extend them
            "owner": {"type": "object"},
            MARKER_KEY: {"type": "array", "items": {"type": "string"}},
        },
    }


def test_advertised_schema_lists_repeated_members_once_and_promises_no_value_sets() -> None:
    pet = {"type": "object", "properties": {"id": {"type": "integer"}, "status": {"enum": ["sold", "available"]}}}
    schema = {
        "type": "object",
        "properties": {
            "pets": {"type": "array", "items": {"anyOf": [pet, dict(pet), {"type": "string"}]}},
            "owner": {"allOf": [{"type": "object", "properties": {"login": {"type": "string"}}}]},
            "level": {"type": "string", "const": "gold"},
        },
    }
    advertised = advertised_schema(schema, depth=2)
    props = advertised["properties"]
    assert props["pets"]["items"] == {
        "anyOf": [{"type": "object", "properties": {"id": {"type": "integer"}, "status": {}}}, {"type": "string"}]
    }
    assert props["owner"] == {"type": "object", "properties": {"login": {"type": "string"}}}
    assert props["level"] == {"type": "string"}
    # A new value in the API's answer is still a valid result.
    jsonschema.validate({"pets": [{"id": 1, "status": "pending"}], "level": "platinum"}, advertised)


def test_an_operations_field_selection_shapes_its_advertised_schema() -> None:
    schema = {
        "type": "object",
        "properties": {
            "result": {
                "type": "array",
                "items": {"type": "object", "properties": {"name": {"type": "string"}, "id": {"type": "integer"}}},
            }
        },
    }
    advertised = advertised_schema(schema, wrapped=True, selected=["name"])
    assert advertised["properties"]["result"]["items"]["properties"] == {"name": {"type": "string"}}


# --------------------------------------------- trimmed results validate against the advertised schema


def _output_schemas(path: Path, compact: bool) -> Iterator[tuple[str, dict[str, Any], bool]]:
    loaded = load_spec(str(path), validate=False)
    options = GenerateOptions()
    api = parse_api(loaded.document, options=options, source_name=str(path))
    results = (
        [c.result for c in compact_api(api, CompactSettings())] if compact else [op.result for op in api.operations]
    )
    for op, result in zip(api.operations, results, strict=True):
        if result is not None:
            yield f"{path.name}:{op.tool_name}", result, op.wrap_result


def _golden_schemas() -> list[tuple[str, dict[str, Any], bool]]:
    found = []
    for name in sorted(GOLDEN_SPECS):
        for compact in (False, True):
            found.extend(_output_schemas(spec_path(name), compact))
    return found


GOLDEN_SCHEMAS = _golden_schemas()

# A small, bounded instance generator for the JSON Schema subset the converter emits.
_FORMATS = {
    "date-time": "2024-05-06T07:08:09Z",
    "date": "2024-05-06",
    "time": "07:08:09Z",
    "email": "someone@example.test",
    "idn-email": "someone@example.test",
    "uuid": "123e4567-e89b-12d3-a456-426614174000",
    "ipv4": "192.0.2.1",
    "ipv6": "2001:db8::1",
    "hostname": "api.example.test",
    "uri": "https://example.test/a/b",
    "url": "https://example.test/a/b",
}
_MAX_DEPTH = 5


class _Reject(Exception):
    pass


def _resolve(root: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    for _ in range(32):
        ref = node.get("$ref")
        if not isinstance(ref, str):
            return node
        if not ref.startswith("#/$defs/"):
            raise _Reject
        target = root.get("$defs", {}).get(ref[len("#/$defs/") :])
        if not isinstance(target, dict):
            raise _Reject
        node = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
    raise _Reject


def _merge_all_of(root: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    members = node.get("allOf")
    if not isinstance(members, list):
        return node
    merged: dict[str, Any] = {k: v for k, v in node.items() if k != "allOf"}
    for member in members:
        if not isinstance(member, dict):
            continue
        member = _merge_all_of(root, _resolve(root, member))
        for key, value in member.items():
            if key == "properties":
                merged["properties"] = {**merged.get("properties", {}), **value}
            elif key == "required":
                merged["required"] = list(dict.fromkeys([*merged.get("required", []), *value]))
            elif key not in merged:
                merged[key] = value
    return merged


def _instance(draw: Any, root: dict[str, Any], node: Any, depth: int) -> Any:
    if node is True or node == {}:
        return draw(st.sampled_from([None, 1, "x", True]))
    if node is False or not isinstance(node, dict):
        raise _Reject
    node = _merge_all_of(root, _resolve(root, node))
    if "const" in node:
        return node["const"]
    if "enum" in node:
        if not node["enum"]:
            raise _Reject
        return draw(st.sampled_from(node["enum"]))
    for key in ("anyOf", "oneOf"):
        if isinstance(node.get(key), list) and node[key]:
            branch = draw(st.sampled_from(node[key]))
            rest = {k: v for k, v in node.items() if k not in ("anyOf", "oneOf")}
            if isinstance(branch, dict):
                return _instance(draw, root, _merge_all_of(root, {"allOf": [rest, branch]}), depth)
            return _instance(draw, root, branch, depth)
    kind = node.get("type")
    kinds = kind if isinstance(kind, list) else [kind] if kind else []
    if not kinds:
        if "properties" in node or "additionalProperties" in node:
            kinds = ["object"]
        elif "items" in node or "prefixItems" in node:
            kinds = ["array"]
        else:
            kinds = ["string", "integer", "null"]
    if depth >= _MAX_DEPTH and "null" in kinds:
        return None
    kind = draw(st.sampled_from(kinds))
    if kind == "null":
        return None
    if kind == "boolean":
        return draw(st.booleans())
    if kind in ("integer", "number"):
        return _number(draw, node, kind)
    if kind == "string":
        return _string(draw, node)
    if kind == "array":
        return _array(draw, root, node, depth)
    if kind == "object":
        return _object(draw, root, node, depth)
    raise _Reject


def _number(draw: Any, node: dict[str, Any], kind: str) -> int | float:
    low, high = -1000, 1000
    if isinstance(node.get("minimum"), int | float):
        low = math.ceil(node["minimum"])
    elif isinstance(node.get("exclusiveMinimum"), int | float):
        low = math.floor(node["exclusiveMinimum"]) + 1
    if isinstance(node.get("maximum"), int | float):
        high = math.floor(node["maximum"])
    elif isinstance(node.get("exclusiveMaximum"), int | float):
        high = math.ceil(node["exclusiveMaximum"]) - 1
    step = node.get("multipleOf")
    if isinstance(step, int | float) and step > 0:
        first, last = math.ceil(low / step), math.floor(high / step)
        if first > last:
            raise _Reject
        value = draw(st.integers(min_value=first, max_value=last)) * step
        return value if kind == "number" or float(value).is_integer() else int(value)
    if low > high:
        raise _Reject
    return int(draw(st.integers(min_value=low, max_value=high)))


def _string(draw: Any, node: dict[str, Any]) -> str:
    fmt = node.get("format")
    if fmt in _FORMATS:
        return _FORMATS[fmt]
    pattern = node.get("pattern")
    if isinstance(pattern, str):
        try:
            re.compile(pattern)
        except re.error:
            raise _Reject from None
        return draw(st.from_regex(pattern, fullmatch=True).filter(lambda s: len(s) < 300))
    low = int(node.get("minLength", 0))
    high = int(node.get("maxLength", 6000))
    length = draw(st.sampled_from(sorted({low, min(max(low, 3), high), min(max(low, 300), high), high})))
    return draw(st.sampled_from("ab é")) * length


def _array(draw: Any, root: dict[str, Any], node: dict[str, Any], depth: int) -> list[Any]:
    low = int(node.get("minItems", 0))
    high = int(node.get("maxItems", low + 12))
    count = 0 if depth >= _MAX_DEPTH and low == 0 else draw(st.integers(min_value=low, max_value=min(high, low + 12)))
    prefix = node.get("prefixItems") if isinstance(node.get("prefixItems"), list) else []
    items = node.get("items", {})
    out = []
    for index in range(count):
        schema = prefix[index] if index < len(prefix) else items
        out.append(_instance(draw, root, schema, depth + 1))
    if node.get("uniqueItems") and len({json.dumps(v, sort_keys=True) for v in out}) != len(out):
        raise _Reject
    return out


def _object(draw: Any, root: dict[str, Any], node: dict[str, Any], depth: int) -> dict[str, Any]:
    properties = node.get("properties") if isinstance(node.get("properties"), dict) else {}
    required = [name for name in node.get("required", []) if isinstance(name, str)]
    out: dict[str, Any] = {}
    for name, schema in properties.items():
        if name in required or (depth < _MAX_DEPTH and draw(st.booleans())):
            out[name] = _instance(draw, root, schema, depth + 1)
    for name in required:
        if name not in out:
            extra = node.get("additionalProperties", True)
            out[name] = _instance(draw, root, extra if isinstance(extra, dict) else True, depth + 1)
    extra = node.get("additionalProperties")
    if isinstance(extra, dict) and depth < _MAX_DEPTH and draw(st.booleans()):
        out["extra_key"] = _instance(draw, root, extra, depth + 1)
    return out


def _check_trimmed_result_matches_advertised_schema(
    data: st.DataObject, schema: dict[str, Any], wrapped: bool, where: str
) -> None:
    try:
        instance = _instance(data.draw, schema, schema, 0)
    except (_Reject, RecursionError):
        assume(False)
    original = Draft202012Validator(schema, format_checker=FORMAT_CHECKER)
    assume(original.is_valid(instance))
    depth = data.draw(st.integers(min_value=0, max_value=3), label="depth")
    trim = data.draw(
        st.builds(
            TrimSettings,
            max_bytes=st.sampled_from([None, 1024, 2048, 8192]),
            max_items=st.sampled_from([None, 1, 2, 5]),
            max_string=st.sampled_from([None, 256, 300]),
            drop_empty=st.booleans(),
        ),
        label="trim",
    )
    paths = sorted(set(iter_paths(instance)))
    fields = data.draw(st.none() | st.lists(st.sampled_from([*paths, "nope", "a.b"]), max_size=4), label="fields")
    selected = data.draw(st.sampled_from([(), tuple(paths[:2])]), label="selected")
    advertised = advertised_schema(schema, depth=depth, wrapped=wrapped, selected=selected)
    Draft202012Validator.check_schema(advertised)
    trimmed = trim_result(instance, trim, wrapped=wrapped, fields=fields, fields_arg="fields", selected=selected)
    event("cut" if trimmed.cut else "not cut")
    errors = list(Draft202012Validator(advertised, format_checker=FORMAT_CHECKER).iter_errors(trimmed.value))
    assert errors == [], f"{where}: {errors[0].message} at {list(errors[0].absolute_path)}"
    if trim.max_bytes:
        assert _size(trimmed.value) <= trim.max_bytes  # notes included, whatever the budget


@settings(
    max_examples=400,
    deadline=None,
    suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(data=st.data())
def test_trimmed_golden_results_always_validate_against_the_advertised_schema(data: st.DataObject) -> None:
    where, schema, wrapped = data.draw(st.sampled_from(GOLDEN_SCHEMAS), label="schema")
    _check_trimmed_result_matches_advertised_schema(data, schema, wrapped, where)


def _corpus_schemas() -> list[tuple[str, dict[str, Any], bool]]:
    from tests.node_tools import github_spec, oas_examples

    found: list[tuple[str, dict[str, Any], bool]] = []
    for path in oas_examples():
        try:
            found.extend(_output_schemas(path, compact=True))
        except Exception:  # specs the generator refuses are covered by test_corpus
            continue
    github = list(_output_schemas(github_spec(), compact=True))
    found.extend(github[::7])  # a spread sample of GitHub's 890 output schemas
    return found


@pytest.fixture(scope="module")
def corpus_schemas() -> list[tuple[str, dict[str, Any], bool]]:
    return _corpus_schemas()


@pytest.mark.corpus
def test_trimmed_corpus_results_always_validate_against_the_advertised_schema(
    corpus_schemas: list[tuple[str, dict[str, Any], bool]],
) -> None:
    assert len(corpus_schemas) > 300

    @settings(
        # 400 keeps the suite quick; MCP_BRIDGE_DEEP_EXAMPLES=5000 searches harder.
        max_examples=int(os.environ.get("MCP_BRIDGE_DEEP_EXAMPLES", "400")),
        deadline=None,
        suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(data=st.data())
    def check(data: st.DataObject) -> None:
        where, schema, wrapped = data.draw(st.sampled_from(corpus_schemas), label="schema")
        _check_trimmed_result_matches_advertised_schema(data, schema, wrapped, where)

    check()


# ----------------------------------------------------------- per-operation policy and `fields` end to end

ITEMS_SPEC: dict[str, Any] = {
    "openapi": "3.0.3",
    "info": {"title": "Items", "version": "1"},
    "servers": [{"url": "http://upstream.test"}],
    "paths": {
        "/items": {
            "get": {
                "operationId": "listItems",
                "x-mcp-output": {"fields": ["name"], "max_items": 2},
                "parameters": [{"name": "page", "in": "query", "schema": {"type": "integer"}}],
                "responses": {
                    "200": {
                        "description": "ok",
                        "content": {
                            "application/json": {
                                "schema": {
                                    "type": "array",
                                    "items": {
                                        "type": "object",
                                        "properties": {
                                            "name": {"type": "string"},
                                            "id": {"type": "integer"},
                                            "internal_note": {"type": "string"},
                                        },
                                    },
                                }
                            }
                        },
                    }
                },
            }
        },
        "/items/{id}": {
            "get": {
                "operationId": "getItem",
                "parameters": [{"name": "id", "in": "path", "required": True, "schema": {"type": "integer"}}],
                "responses": {
                    "200": {
                        "description": "ok",
                        "content": {
                            "application/json": {
                                "schema": {
                                    "type": "object",
                                    "required": ["id", "name"],
                                    "properties": {
                                        "id": {"type": "integer"},
                                        "name": {"type": "string"},
                                        "owner": {
                                            "type": "object",
                                            "properties": {"login": {"type": "string"}, "id": {"type": "integer"}},
                                        },
                                        "labels": {"type": "array", "items": {"type": "string"}},
                                        "closed_at": {"type": "string", "nullable": True},
                                    },
                                }
                            }
                        },
                    }
                },
            }
        },
    },
}


def _items_catalogue(tmp_path: Path, **options: Any) -> Any:
    from generator.generate import build_catalogue

    spec = tmp_path / "items.json"
    spec.write_text(json.dumps(ITEMS_SPEC), encoding="utf-8")
    catalogue, _ = build_catalogue(str(spec), GenerateOptions(**options))
    return catalogue


def test_x_mcp_output_selects_fields_and_limits_in_the_binding_and_schema(tmp_path: Path) -> None:
    from bridge.contract.catalogue import OutputPolicy

    entry = {t.name: t for t in _items_catalogue(tmp_path).tools}["listItems"]
    assert entry.binding.output == OutputPolicy(fields=("name",), max_items=2)
    assert entry.binding.page_args == ("page",)
    assert entry.output_schema is not None
    assert entry.output_schema["properties"]["result"]["items"]["properties"] == {"name": {"type": "string"}}


def test_config_output_overrides_the_extension(tmp_path: Path) -> None:
    catalogue = _items_catalogue(tmp_path, overrides={"listItems": {"output": {"fields": ["id"]}}})
    entry = {t.name: t for t in catalogue.tools}["listItems"]
    assert entry.binding.output is not None and entry.binding.output.fields == ("id",)
    assert entry.output_schema is not None
    assert entry.output_schema["properties"]["result"]["items"]["properties"] == {"id": {"type": "integer"}}


@pytest.mark.anyio
async def test_policy_and_fields_shape_the_real_result_and_fields_never_go_upstream(tmp_path: Path) -> None:
    from bridge.calls.http_tools import tools_from_catalogue
    from bridge.calls.runtime import HttpRuntime
    from bridge.tools.registry import ToolContext
    from tests.bridge.fake_upstream import FakeUpstream

    catalogue = _items_catalogue(tmp_path)
    fake = FakeUpstream(ITEMS_SPEC)
    items = [{"name": f"n{i}", "id": i, "internal_note": "x"} for i in range(5)]
    fake.route("GET", "/items", _reply(items))
    fake.route(
        "GET",
        "/items/7",
        _reply({"id": 7, "name": "seven", "owner": {"login": "o", "id": 1}, "labels": [], "closed_at": None}),
    )
    runtime = HttpRuntime.create(catalogue, environ={}, transport=fake.transport())
    tools = {tool.name: tool for tool in tools_from_catalogue(catalogue, runtime)}
    async with runtime:
        listed = await tools["listItems"].run({"page": 2}, ToolContext(tool_name="listItems"))
        got = await tools["getItem"].run({"id": 7, "fields": "owner.login, name"}, ToolContext(tool_name="getItem"))
    assert listed.structured_content == {
        "result": [{"name": "n0"}, {"name": "n1"}],
        MARKER_KEY: ["result: kept the first 2 of 5 items", "To get more: page with page."],
    }
    assert got.structured_content == {"name": "seven", "owner": {"login": "o"}}
    assert [r.target for r in fake.requests] == ["/items?page=2", "/items/7"]
    assert fake.violations == []
    for entry, result in ((catalogue.tools[0], listed), (catalogue.tools[1], got)):
        Draft202012Validator(entry.output_schema).validate(result.structured_content)


def _reply(body: Any) -> Any:
    from tests.bridge.fake_upstream import make_reply

    return make_reply(200, json_body=body)


def test_a_long_text_result_is_cut_to_the_budget_with_a_note() -> None:
    from bridge.results.tool_result import cap_text

    head, note = cap_text("é" * 10_000, 4096)
    assert len(head.encode()) <= 4096 + len("…".encode())
    assert note == f"[{MARKER_KEY}] text cut to 4096 of 20000 bytes."
    assert cap_text("short", 4096) == ["short"]


@pytest.mark.anyio
async def test_without_trimming_the_whole_result_comes_back(tmp_path: Path) -> None:
    from bridge.calls.http_tools import tools_from_catalogue
    from bridge.calls.runtime import HttpRuntime
    from bridge.tools.registry import ToolContext
    from tests.bridge.fake_upstream import FakeUpstream

    catalogue = _items_catalogue(tmp_path)
    fake = FakeUpstream(ITEMS_SPEC)
    body = {"id": 7, "name": "seven", "labels": [], "closed_at": None}
    fake.route("GET", "/items/7", _reply(body))
    runtime = HttpRuntime.create(catalogue, environ={}, transport=fake.transport(), trim=None)
    tool = {tool.name: tool for tool in tools_from_catalogue(catalogue, runtime)}["getItem"]
    async with runtime:
        result = await tool.run({"id": 7}, ToolContext(tool_name="getItem"))
    assert result.structured_content == body
