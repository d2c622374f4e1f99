"""One owner per field: parsing states facts, shaping computes products, one builder makes the catalogue.

Structural checks (like tests/test_layering.py) keep the stages apart; behaviour checks show the
parsed model is never changed by what comes after it.
"""

from __future__ import annotations

import ast
import copy
import dataclasses
import json
from pathlib import Path

import yaml
from click.testing import CliRunner

from bridge.cli import cli
from generator.emit.catalogue import assemble_catalogue, http_binding
from generator.generate import build_api, finish_catalogue
from generator.options import (
    DEFAULT_DESCRIPTION_LIMIT,
    DEFAULT_TOOL_DESCRIPTION_LIMIT,
    GenerateOptions,
    tool_description_limit_of,
)
from generator.parse import ir
from generator.parse.api import parse_api
from generator.shape.api import shape_api
from generator.shape.describe import DescriptionRules, tool_description
from tests.golden import spec_path

ROOT = Path(__file__).resolve().parents[2]
GENERATOR = ROOT / "generator"
# What the runtime reads; generator/emit/catalogue.py alone builds them.
CATALOGUE_PARTS = {"HttpBinding", "ParamBinding", "BodyBinding", "ToolEntry", "Catalogue"}
# Fields shaping computes: the parsed model has none of them, and nothing rewrites them.
PRODUCTS = {"binding", "tool_description", "input_schema", "output_schema", "fields_arg", "page_args", "tools"}


def _calls(path: Path) -> list[ast.Call]:
    return [node for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))) if isinstance(node, ast.Call)]


def _name(call: ast.Call) -> str | None:
    func = call.func
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None


def test_the_parsed_model_has_no_runtime_binding_and_no_final_schema() -> None:
    for model in (ir.Api, ir.Operation, ir.Param, ir.Body, ir.Response):
        for f in dataclasses.fields(model):
            assert f.name not in PRODUCTS, f"{model.__name__}.{f.name}"
            assert not any(part in str(f.type) for part in CATALOGUE_PARTS), f"{model.__name__}.{f.name}: {f.type}"


def test_only_the_catalogue_builder_constructs_bindings_entries_and_the_catalogue() -> None:
    builders = sorted(
        f"{path.relative_to(ROOT)}: {_name(call)}"
        for path in GENERATOR.rglob("*.py")
        for call in _calls(path)
        if _name(call) in CATALOGUE_PARTS
    )
    assert builders and all(line.startswith("generator/emit/catalogue.py:") for line in builders), builders


def test_no_generator_stage_replaces_a_computed_product() -> None:
    rewrites = []
    for path in GENERATOR.rglob("*.py"):
        for call in _calls(path):
            if _name(call) not in ("replace", "model_copy"):
                continue
            keys = {k.arg for k in call.keywords if k.arg}
            for k in call.keywords:
                if k.arg == "update" and isinstance(k.value, ast.Dict):
                    keys |= {key.value for key in k.value.keys if isinstance(key, ast.Constant)}
            rewrites += [f"{path.relative_to(ROOT)}: {key}" for key in sorted(keys & (PRODUCTS | {"operations"}))]
    assert rewrites == []


def test_overrides_are_looked_up_by_parsing_alone() -> None:
    readers = sorted(
        str(path.relative_to(ROOT))
        for path in GENERATOR.rglob("*.py")
        if "options.overrides" in path.read_text(encoding="utf-8")
    )
    assert readers == ["generator/parse/api.py"]


def _petstore() -> ir.Api:
    _, api = build_api(str(spec_path("petstore")), GenerateOptions())
    return api


def test_shaping_and_building_the_catalogue_leave_the_parsed_model_as_it_was() -> None:
    api = _petstore()
    before = copy.deepcopy(api)
    finish_catalogue(api, GenerateOptions())
    finish_catalogue(api, GenerateOptions(compact=False, output_schemas=False))
    assert api == before


def test_every_catalogue_field_comes_from_the_operation_or_its_shape() -> None:
    api = _petstore()
    shaped = shape_api(api, GenerateOptions())
    catalogue = assemble_catalogue(api, shaped, mode="code")
    assert catalogue.mode == "code" and catalogue.shared_arguments == shaped.shared_arguments
    for op, shape, tool in zip(api.operations, shaped.tools, catalogue.tools, strict=True):
        assert (tool.name, tool.title, tool.tags, tool.deprecated) == (op.tool_name, op.summary, op.tags, op.deprecated)
        assert (tool.description, tool.input_schema, tool.output_schema) == (
            shape.description,
            shape.input_schema,
            shape.output_schema,
        )
        assert tool.binding == dataclasses.replace(
            http_binding(op), fields_arg=shape.fields_arg, page_args=shape.page_args
        )
    assert any(tool.tags for tool in catalogue.tools)


SPEC = """
openapi: 3.0.3
info: {title: T, version: "1"}
paths:
  /items:
    get:
      operationId: listItems
      summary: List items
      description: Every item there is. It may be a long list.
      x-mcp-output: {fields: [id]}
      parameters: [{name: page, in: query, schema: {type: integer}}]
      responses:
        "200":
          description: ok
          content:
            application/json:
              schema: {type: array, items: {type: object, properties: {id: {type: string}, name: {type: string}}}}
"""


def test_the_config_output_policy_is_read_while_parsing_and_wins_over_the_spec() -> None:
    overrides = {"GET /items": {"output": {"max_items": 5}}, "listItems": {"output": {"fields": ["name"], "x": 1}}}
    api = parse_api(yaml.safe_load(SPEC), options=GenerateOptions(overrides=overrides), source_name="t.yaml")
    (op,) = api.operations
    assert op.output_policy is not None and op.output_policy.fields == ("name",) and op.output_policy.max_items is None
    assert [issue.detail for issue in api.issues] == ["config output: 'x' is not understood; ignored"]
    (tool,) = finish_catalogue(api, GenerateOptions()).tools
    assert tool.binding.output == op.output_policy and tool.binding.page_args == ("page",)


def test_the_tool_description_limit_is_one_option_whose_default_follows_compaction() -> None:
    assert not hasattr(GenerateOptions(), "description_limit")
    assert tool_description_limit_of(GenerateOptions()) == DEFAULT_TOOL_DESCRIPTION_LIMIT
    assert tool_description_limit_of(GenerateOptions(compact=False)) == DEFAULT_DESCRIPTION_LIMIT
    assert tool_description_limit_of(GenerateOptions(compact=False, tool_description_limit=90)) == 90


def test_one_description_builder_serves_both_compacted_and_converted_descriptions() -> None:
    (op,) = parse_api(yaml.safe_load(SPEC), options=GenerateOptions(), source_name="t.yaml").operations
    assert tool_description(op, DescriptionRules(250)) == "List items\nEvery item there is. It may be a long list."
    converted = DescriptionRules(250, compact=False)
    assert tool_description(op, converted) == "List items\n\nEvery item there is. It may be a long list."
    assert tool_description(op, DescriptionRules(40, compact=False)) == "List items\n\nEvery item there is."
    (tool,) = finish_catalogue(
        parse_api(yaml.safe_load(SPEC), options=GenerateOptions(), source_name="t.yaml"),
        GenerateOptions(compact=False),
    ).tools
    assert tool.description == tool_description(op, converted)


def test_the_old_description_limit_flag_still_works_and_says_it_is_deprecated(tmp_path: Path) -> None:
    spec = tmp_path / "api.yaml"
    spec.write_text(SPEC.replace("It may be a long list.", "It may be a long list. " * 10), encoding="utf-8")
    out = tmp_path / "pkg"
    result = CliRunner().invoke(cli, ["generate", str(spec), "-o", str(out), "--description-limit", "80"])
    assert result.exit_code == 0, result.output
    assert "--description-limit is deprecated; use --tool-description-limit" in result.output
    (tool,) = json.loads((out / "catalogue.json").read_text(encoding="utf-8"))["tools"]
    assert len(tool["description"]) <= 80


def _many(descriptions: list[str]) -> ir.Api:
    paths = {
        f"/r{i}": {
            "get": {
                "parameters": [
                    {"name": "org", "in": "query", "description": text, "schema": {"type": "string"}},
                    {"name": "q", "in": "query", "description": f"Query {i}.", "schema": {"type": "string"}},
                ],
                "responses": {"204": {"description": "done"}},
            }
        }
        for i, text in enumerate(descriptions)
    }
    document = {"openapi": "3.0.3", "info": {"title": "T", "version": "1"}, "paths": paths}
    return parse_api(document, options=GenerateOptions(), source_name="t.yaml")


def test_an_argument_described_alike_in_enough_tools_is_described_once_for_the_catalogue() -> None:
    api = _many(["Login of the account that owns the repository."] * 4 + ["Another meaning."])
    catalogue = finish_catalogue(api, GenerateOptions(shared_argument_tools=3))
    assert catalogue.shared_arguments == {"org": "Login of the account that owns the repository."}
    described = [tool.input_schema["properties"]["org"].get("description") for tool in catalogue.tools]
    assert described == [None, None, None, None, "Another meaning."]
    assert all(tool.input_schema["properties"]["q"]["description"].startswith("Query") for tool in catalogue.tools)
    assert (
        api.operations[0].arguments["properties"]["org"]["description"]
        == "Login of the account that owns the repository."
    )


def test_a_description_shared_by_too_few_of_an_arguments_tools_or_without_compaction_stays_in_each_tool() -> None:
    api = _many(["Login of the account that owns the repository."] * 3 + ["Another meaning.", "A third one."])
    assert finish_catalogue(api, GenerateOptions(shared_argument_tools=3)).shared_arguments == {}
    alike = _many(["Login of the account that owns the repository."] * 5)
    assert finish_catalogue(alike, GenerateOptions(shared_argument_tools=3, compact=False)).shared_arguments == {}
