from __future__ import annotations

import hashlib

from generator.issues import Level
from generator.parse.naming import (
    ArgNames,
    NameRequest,
    arg_name,
    assign_tool_names,
    base_tool_name,
    fallback_tool_name,
    fit_length,
    sanitize,
)


def test_separators_become_underscores_and_runs_collapse() -> None:
    assert sanitize("issues/list-events-for-timeline") == "issues_list-events-for-timeline"
    assert sanitize("a b:c{d}e") == "a_b_c_d_e"
    assert sanitize("__read  items//{id}__") == "read_items_id"


def test_name_falls_back_to_method_and_path() -> None:
    assert fallback_tool_name("GET", "/pets/{petId}") == "get_pets_petId"
    assert base_tool_name(None, "POST", "/") == "post"
    assert base_tool_name("///", "DELETE", "/pets/{id}") == "delete_pets_id"


def test_long_names_keep_a_prefix_and_a_hash_of_the_full_name() -> None:
    name = "x" * 50 + "_tail_one"
    fitted = fit_length(name, 32)
    digest = hashlib.sha256(name.encode()).hexdigest()[:8]
    assert fitted == "x" * 23 + "_" + digest
    assert len(fitted) == 32
    assert fit_length(name, 32) == fitted  # deterministic
    assert fit_length("x" * 50 + "_tail_two", 32) != fitted
    assert fit_length("short", 32) == "short"


def _requests(*items: tuple[str, str, str | None]) -> list[NameRequest]:
    return [NameRequest(label=f"{m} {p}", method=m, path=p, operation_id=o) for m, p, o in items]


def test_duplicates_are_numbered_in_path_then_method_order() -> None:
    items = [("POST", "/b", "same"), ("GET", "/b", "same"), ("GET", "/a", "same")]
    names, issues = assign_tool_names(_requests(*items), 64)
    assert issues == []
    assert names == {"GET /a": "same", "GET /b": "same_2", "POST /b": "same_3"}
    reversed_names, _ = assign_tool_names(list(reversed(_requests(*items))), 64)
    assert reversed_names == names


def test_an_operation_named_like_a_suffix_keeps_its_name() -> None:
    items = [("GET", "/a", "list"), ("GET", "/b", "list"), ("GET", "/c", "list_2")]
    names, _ = assign_tool_names(_requests(*items), 64)
    assert names == {"GET /a": "list", "GET /b": "list_3", "GET /c": "list_2"}


def test_numbered_names_stay_within_the_length_cap() -> None:
    long_id = "a" * 80
    names, _ = assign_tool_names(_requests(("GET", "/a", long_id), ("GET", "/b", long_id)), 64)
    assert len(names["GET /a"]) == 64
    assert len(names["GET /b"]) <= 64 and names["GET /b"].endswith("_2")


def test_explicit_names_are_used_as_is_and_win_over_generated_ones() -> None:
    requests = [
        NameRequest("GET /a", "GET", "/a", "listThings"),
        NameRequest("GET /b", "GET", "/b", "other", explicit="listThings"),
    ]
    names, issues = assign_tool_names(requests, 64)
    assert issues == []
    assert names == {"GET /b": "listThings", "GET /a": "listThings_2"}


def test_duplicated_explicit_name_is_an_error_naming_both_operations() -> None:
    requests = [
        NameRequest("GET /a", "GET", "/a", explicit="x"),
        NameRequest("POST /b", "POST", "/b", explicit="x"),
    ]
    names, issues = assign_tool_names(requests, 64)
    assert [(i.level, i.detail) for i in issues] == [(Level.ERROR, "GET /a and POST /b both want tool name 'x'")]
    assert len(set(names.values())) == 2


def test_invalid_explicit_name_is_an_error() -> None:
    names, issues = assign_tool_names([NameRequest("GET /a", "GET", "/a", "ok", explicit="bad name")], 64)
    assert issues[0].level is Level.ERROR and "'bad name'" in issues[0].detail
    assert names == {"GET /a": "ok"}
    _, too_long = assign_tool_names([NameRequest("GET /a", "GET", "/a", explicit="y" * 65)], 64)
    assert too_long[0].level is Level.ERROR


def test_conflicts_between_excluded_operations_are_not_reported() -> None:
    requests = [
        NameRequest("GET /a", "GET", "/a", explicit="x", report=False),
        NameRequest("GET /b", "GET", "/b", explicit="x", report=False),
    ]
    assert assign_tool_names(requests, 64)[1] == []


def test_arg_names_are_readable_safe_versions_of_wire_names() -> None:
    assert arg_name("filter[status]") == "filter_status"
    assert arg_name("$select") == "select"
    assert arg_name("X-Request-ID") == "X-Request-ID"
    assert arg_name("page.size") == "page.size"
    assert arg_name("[]") == "arg"
    assert len(arg_name("q" * 100)) == 64


def test_path_keeps_a_contested_name_and_query_gets_a_suffix() -> None:
    names = ArgNames()
    assert names.claim("id", "path") == "id"
    assert names.claim("id", "query") == "id_query"
    assert names.claim("id", "query") == "id_query_2"
    assert names.claim("id", "header") == "id_header"


def test_names_that_collide_after_sanitising_are_made_unique() -> None:
    names = ArgNames()
    assert names.claim("filter[status]", "query") == "filter_status"
    assert names.claim("filter_status", "query") == "filter_status_query"
    assert "filter_status" in names


def test_claim_first_numbers_the_last_candidate_when_all_are_taken() -> None:
    names = ArgNames(["body", "request_body"])
    assert names.claim_first(["body", "request_body"]) == "request_body_2"
