"""A result's items and next page, read from its schema: envelopes, bare arrays, refs, and the one-line shape."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bridge.contract.listing import body, field_names, listing, next_page_fields, paging_note, shape_line

OBJ = {"type": "object", "properties": {"id": {"type": "integer"}, "name": {"type": "string"}}, "required": ["name"]}


@pytest.mark.parametrize(
    ("schema", "items", "next_page"),
    [
        ({"type": "array", "items": OBJ}, "", ()),
        ({"type": "object", "properties": {"data": {"type": "array", "items": OBJ}, "has_more": {}}}, "data",
         ("has_more",)),
        ({"properties": {"ok": {}, "channels": {"type": "array"}, "response_metadata": {}}}, "channels",
         ("response_metadata",)),
        ({"properties": {"total_count": {}, "items": {"type": ["array", "null"], "items": OBJ}}}, "items", ()),
        ({"properties": {"data": {"type": "array", "items": OBJ}, "links": {"type": "array"}}}, "data", ("links",)),
        ({"$ref": "#/$defs/Page", "$defs": {"Page": {"properties": {"results": {"$ref": "#/$defs/Things"},
          "next": {}}}, "Things": {"type": "array", "items": OBJ}}}, "results", ("next",)),
        ({"allOf": [{"properties": {"value": {"type": "array", "items": OBJ}, "@odata.nextLink": {}}}]}, "value",
         ("@odata.nextLink",)),
    ],
)  # fmt: skip
def test_a_listing_is_an_array_or_an_envelope_with_one_array(
    schema: dict[str, Any], items: str, next_page: tuple[str, ...]
) -> None:
    found = listing(schema)
    assert found is not None and found.items == items and found.next_page == next_page


@pytest.mark.parametrize(
    "schema",
    [
        OBJ,
        {"properties": {"tags": {"type": "array", "items": {"type": "string"}}, "name": {}}},  # a detail, not a page
        {"properties": {"a": {"type": "array"}, "b": {"type": "array"}}},  # two arrays: which one?
        {"$ref": "#/$defs/Loop", "$defs": {"Loop": {"$ref": "#/$defs/Loop"}}},
        {"$ref": "#/nowhere"},
        "not a schema",
        None,
    ],
)
def test_anything_else_is_not_a_listing(schema: Any) -> None:
    assert listing(schema) is None


def test_the_shape_line_names_what_a_program_reads_links_last() -> None:
    issue = {"type": "object", "properties": {"url": {}, "html_url": {}, "node_id": {}, "number": {}, "title": {}}}
    assert shape_line({"type": "array", "items": issue}) == "list[{number, title, url, html_url, node_id}]"
    page = {"type": "object", "properties": {"data": {"type": "array", "items": OBJ}, "has_more": {}}}
    assert shape_line(page) == "{data: list[{name, id}], has_more}"
    wide = {"type": "object", "properties": {f"f{i}": {} for i in range(25)}}
    assert shape_line(wide) == "{f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, +15 more}"
    assert shape_line({"type": "string"}) == "string"
    assert shape_line(None) is None
    assert field_names(OBJ) == ["name", "id"]  # required first


def test_paging_names_arguments_and_the_fields_of_the_next_page() -> None:
    page = {"type": "object", "properties": {"data": {"type": "array"}, "next_cursor": {}}}
    assert paging_note(["limit", "cursor"], page) == "arguments limit, cursor; next page: next_cursor"
    assert paging_note(["page"], {"type": "array"}) == "arguments page"
    assert paging_note([], OBJ) is None
    assert next_page_fields({"nextPageToken": 1, "has-more": 1, "name": 1}) == ("nextPageToken", "has-more")


def test_body_unwraps_a_tools_result_member_and_drops_the_marker() -> None:
    wrapped = {"type": "object", "properties": {"result": {"type": "array", "items": OBJ}, "_truncated": {}}}
    assert body(wrapped, wrapped=True) == {"type": "array", "items": OBJ}
    plain = {"type": "object", "properties": {"name": {}, "_truncated": {}}}
    assert body(plain, wrapped=False) == {"type": "object", "properties": {"name": {}}}
    assert body(None, wrapped=False) is None


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(
        ["type", "properties", "items", "$ref", "allOf", "required", "data", "next", "#/$defs/a", "$defs", "a"]
    ), inner, max_size=4),
    max_leaves=20,
)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(JSON)
def test_any_json_reads_without_raising(schema: Any) -> None:
    listing(schema)
    shape_line(schema)
    paging_note(["page"], schema)
    body(schema, wrapped=True)
    field_names(schema)


def test_a_resource_with_its_own_id_holding_a_list_is_not_a_page() -> None:
    owner = {"type": "object", "properties": {"id": {}, "name": {}, "pets": {"type": "array", "items": OBJ}}}
    assert listing(owner) is None
