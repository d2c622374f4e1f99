"""Compaction: leaner tool definitions that keep every constraint."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import pytest

from generator.generate import build_api, finish_catalogue
from generator.load.spec import load_spec
from generator.options import GenerateOptions
from generator.parse.api import parse_api
from generator.parse.schemas.keywords import unresolved_refs
from generator.shape.compact import (
    CompactSettings,
    SchemaCompactor,
    compact_api,
    compact_text,
    count_constraints,
    find_boilerplate,
    inline_single_use,
    is_trivial_description,
    share_defs,
)
from tests.golden import GOLDEN_SPECS, spec_path


def _compact(schema: dict[str, Any], **settings: Any) -> Any:
    compactor = SchemaCompactor(CompactSettings(**settings))
    return compactor.schema(schema)


def test_documentation_only_keywords_are_dropped() -> None:
    schema = {
        "type": "object",
        "title": "Pet",
        "required": [],
        "deprecated": False,
        "additionalProperties": True,
        "properties": {
            "id": {"type": "integer", "readOnly": True, "title": "id", "examples": [1, 2, 3]},
            "note": {"type": "string", "x-internal": True, "$comment": "hidden", "examples": ["x" * 200]},
        },
    }
    assert _compact(schema) == {
        "type": "object",
        "properties": {"id": {"type": "integer", "examples": [1]}, "note": {"type": "string"}},
    }


def test_every_constraint_is_kept() -> None:
    schema = {
        "type": "object",
        "required": ["kind", "kind"],
        "additionalProperties": False,
        "properties": {
            "kind": {"type": "string", "enum": ["a", "b"], "default": "a"},
            "code": {"type": "string", "pattern": "^[A-Z]{3}$", "minLength": 3, "maxLength": 3, "format": "iso"},
            "count": {"type": ["integer", "null"], "minimum": 0, "exclusiveMaximum": 10, "multipleOf": 2},
            "tags": {"type": "array", "items": {"const": "t"}, "minItems": 1, "maxItems": 4, "uniqueItems": True},
            "deprecated_field": {"type": "string", "deprecated": True},
        },
    }
    compacted = _compact(schema)
    assert compacted["required"] == ["kind"]
    assert compacted["additionalProperties"] is False
    assert compacted["properties"] == schema["properties"]
    assert count_constraints(compacted) == count_constraints(schema)


def test_a_branch_title_survives_when_it_is_the_only_label() -> None:
    schema = {"anyOf": [{"title": "By id", "type": "integer"}, {"title": "By name", "type": "string"}]}
    assert _compact(schema) == schema


def test_descriptions_keep_the_first_paragraph_with_links_reduced_to_their_text() -> None:
    text = (
        "The number of results per page (max 100). For more information, see "
        '"[Using pagination in the REST API](https://docs.github.com/rest/using-pagination)."'
        "\n\n> [!NOTE]\n> Second paragraph with <b>details</b>."
    )
    assert compact_text(text, 200) == "The number of results per page (max 100)."


def test_a_long_description_keeps_whole_sentences_that_fit() -> None:
    text = "First sentence is here. Second sentence is a bit longer than the first. Third."
    assert compact_text(text, 60) == "First sentence is here."
    assert compact_text("word " * 40, 30).endswith("…")
    assert len(compact_text("word " * 40, 30)) <= 30


def test_html_tags_go_but_angle_placeholders_stay() -> None:
    assert compact_text('Use <a href="https://x.test">this</a> with <owner>/<repo>.', 200) == (
        "Use this with <owner>/<repo>."
    )


def test_sentences_repeated_across_the_api_are_boilerplate_unless_first() -> None:
    texts = ["The owner. The name is not case sensitive."] * 3 + ["The name is not case sensitive."]
    boilerplate = find_boilerplate(texts, repeats=3)
    assert boilerplate == frozenset({"The name is not case sensitive."})
    assert compact_text(texts[0], 200, boilerplate) == "The owner."
    assert compact_text(texts[-1], 200, boilerplate) == "The name is not case sensitive."


def test_a_boilerplate_first_sentence_is_dropped_only_after_a_summary() -> None:
    notice = "This endpoint is in public preview and is subject to change."
    texts = [(f"{notice} Lists the widget's {n} parts.", True) for n in ("red", "blue", "green")]
    texts.append(f"{notice} Gets one part.")
    boilerplate = find_boilerplate(texts, repeats=3)
    assert boilerplate == frozenset({notice})
    assert compact_text(texts[0][0], 200, boilerplate, after_summary=True) == "Lists the widget's red parts."
    assert compact_text(f"{notice} Gets one part.", 200, boilerplate) == f"{notice} Gets one part."


@pytest.mark.parametrize(
    ("name", "description", "trivial"),
    [
        ("secret_name", "The name of the secret.", True),
        ("org", "The organization name.", True),
        ("issue_number", "The number that identifies the issue.", True),
        ("owner", "The account owner of the repository.", False),
        ("repo", "The name of the repository without the `.git` extension.", False),
    ],
)
def test_a_description_that_only_restates_the_name_is_dropped(name: str, description: str, trivial: bool) -> None:
    assert is_trivial_description(name, description) is trivial
    compacted = _compact({"type": "object", "properties": {name: {"type": "string", "description": description}}})
    assert ("description" in compacted["properties"][name]) is not trivial


def test_single_use_definitions_are_inlined_and_cycles_stay_references() -> None:
    schema = {
        "type": "object",
        "properties": {"node": {"$ref": "#/$defs/Node"}, "leaf": {"$ref": "#/$defs/Leaf"}},
        "$defs": {
            "Node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/Node"}}},
            "Leaf": {"type": "string"},
            "Unused": {"type": "integer"},
        },
    }
    inlined = inline_single_use(schema)
    assert inlined == {
        "type": "object",
        "properties": {"node": {"$ref": "#/$defs/Node"}, "leaf": {"type": "string"}},
        "$defs": {"Node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/Node"}}}},
    }
    assert unresolved_refs(inlined) == []


def test_repeated_subschemas_are_shared_once_in_defs() -> None:
    user = {
        "type": "object",
        "properties": {name: {"type": "string", "description": f"The {name} of the user."} for name in "abcdefgh"},
    }
    schema = {"type": "object", "properties": {"author": user, "committer": user, "list": {"items": user}}}
    shared = share_defs(schema, min_chars=100)
    assert shared["properties"]["author"] == {"$ref": "#/$defs/author"}
    assert shared["properties"]["committer"] == {"$ref": "#/$defs/author"}
    assert shared["$defs"] == {"author": user}
    assert unresolved_refs(shared) == []
    assert count_constraints(shared) == count_constraints(schema)
    assert len(json.dumps(shared)) < len(json.dumps(schema)) / 2


def _golden_api(name: str) -> Any:
    path = spec_path(name)
    loaded = load_spec(str(path))
    return parse_api(loaded.document, options=GenerateOptions(), source_name=str(path))


@pytest.mark.parametrize("name", sorted(GOLDEN_SPECS))
def test_golden_compaction_keeps_constraints_and_resolves_every_ref(name: str) -> None:
    api = _golden_api(name)
    lean = compact_api(api, CompactSettings())
    for before, after in zip(api.operations, lean, strict=True):
        for which in ("arguments", "result"):
            old, new = getattr(before, which), getattr(after, which)
            if old is None:
                continue
            assert count_constraints(new) == count_constraints(old), f"{before.tool_name} {which}"
            assert unresolved_refs(new) == []
            assert len(json.dumps(new)) <= len(json.dumps(old))


def test_summary_that_the_description_restates_is_not_repeated() -> None:
    catalogue = finish_catalogue(_golden_api("petstore"), GenerateOptions())
    by_name = {tool.name: tool.description for tool in catalogue.tools}
    assert by_name["createPet"] == "Adds a pet to the store and returns it with its new id."
    assert by_name["getPet"] == "Get a pet\nReturns one pet by its id."


@pytest.mark.corpus
def test_github_compaction_keeps_every_enum_required_and_bound() -> None:
    from tests.node_tools import github_spec

    path = github_spec()
    loaded = load_spec(str(path), validate=False)
    api = parse_api(loaded.document, options=GenerateOptions(), source_name=str(path))
    lean = compact_api(api, CompactSettings())
    for which in ("arguments", "result"):
        before: Counter[str] = Counter()
        after: Counter[str] = Counter()
        for old_op, new_op in zip(api.operations, lean, strict=True):
            old, new = getattr(old_op, which), getattr(new_op, which)
            if old is None:
                continue
            before += count_constraints(old)
            after += count_constraints(new)
            assert unresolved_refs(new) == [], old_op.tool_name
        assert after == before, which
        assert before["enum"] > 1000 and before["required"] > 1000


@pytest.mark.corpus
def test_corpus_lean_tools_have_no_unresolved_refs() -> None:
    from tests.node_tools import oas_examples

    checked = 0
    for path in oas_examples():
        try:
            _, api = build_api(str(path), GenerateOptions())
        except Exception:  # refused specs are test_corpus's concern
            continue
        for tool in finish_catalogue(api, GenerateOptions()).tools:
            assert unresolved_refs(tool.input_schema) == [], f"{path.name} {tool.name}"
            if tool.output_schema is not None:
                assert unresolved_refs(tool.output_schema) == [], f"{path.name} {tool.name}"
            checked += 1
    assert checked > 500
