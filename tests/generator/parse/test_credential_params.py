"""The generator leaves out every spelling of a credential parameter or body property (P11),
keeps every cursor, and says so in one bounded warning."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from generator.options import GenerateOptions
from generator.parse.api import parse_api
from generator.parse.credential_notes import credential_args_warning
from tests.bridge.contract.test_credential_names import CREDENTIALS, KEPT, spelled


def _api(location: str, name: str) -> Any:
    string = {"type": "string"}
    operation: dict[str, Any] = {"operationId": "op", "responses": {"200": {"description": "ok"}}}
    if location == "body":
        schema = {"type": "object", "properties": {name: string, "title": string}}
        operation["requestBody"] = {"content": {"application/json": {"schema": schema}}}
    else:
        operation["parameters"] = [{"name": name, "in": location, "schema": string}, {"name": "q", "in": "query"}]
        operation["parameters"][1]["schema"] = string
    document = {"openapi": "3.0.3", "info": {"title": "T", "version": "1"}, "paths": {"/things": {"post": operation}}}
    return parse_api(document, options=GenerateOptions(), source_name="t.yaml")


def _offered(api: Any) -> set[str]:
    (op,) = api.operations
    names = {p.wire_name for p in op.params if p.arg_name}
    return names | ({f.wire for f in op.body.fields if f.arg} if op.body is not None else set())


@pytest.mark.parametrize("words", [w for w, where in CREDENTIALS.items() if set(where) - {"path"}], ids="_".join)
@settings(max_examples=10, deadline=None)
@given(data=st.data())
def test_generate_leaves_out_every_spelling_of_a_credential_and_names_it(
    words: tuple[str, ...], data: st.DataObject
) -> None:
    name = data.draw(spelled(words))
    location = data.draw(st.sampled_from([loc for loc in CREDENTIALS[words] if loc != "path"]))
    if location == "header" and name.lower() in ("authorization",):
        return  # OpenAPI says to ignore it: left out without a word
    api = _api(location, name)
    assert name not in _offered(api)
    (warning,) = [issue.detail for issue in api.issues if issue.where == "credentials"]
    assert f"{name} ({location}) in 1 operation" in warning


@pytest.mark.parametrize("words", KEPT, ids="_".join)
@settings(max_examples=10, deadline=None)
@given(data=st.data())
def test_generate_keeps_every_spelling_of_a_cursor(words: tuple[str, ...], data: st.DataObject) -> None:
    name = data.draw(spelled(words))
    location = data.draw(st.sampled_from(["query", "header", "body"]))
    api = _api(location, name)
    assert name in _offered(api) and not [i for i in api.issues if i.where == "credentials"]


def test_the_warning_names_a_bounded_number_of_parameters_however_many_operations() -> None:
    left_out = {f"X-Amz-Field{i} (header)": {f"op{j}" for j in range(1188)} for i in range(30)}
    warning = credential_args_warning(left_out)
    assert "in 1188 operations" in warning and "and 18 more" in warning and len(warning) < 1500
