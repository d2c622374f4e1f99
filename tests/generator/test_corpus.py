"""Corpus: every JSON spec of @readme/oas-examples and GitHub's spec give correct, self-contained tools.

The npm packages are pinned in tests/node/package.json and installed on first use.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from bridge.contract.expressions.json_pointer import resolve
from bridge.contract.path_template import split_template
from bridge.contract.wire_rules import credential_name, describes_credential, may_hold_text
from generator.generate import build_api, finish_catalogue
from generator.options import GenerateOptions
from generator.parse.api import is_never_an_argument
from generator.parse.ir import Api
from generator.parse.schemas.keywords import unresolved_refs
from tests.node_tools import NODE_DIR, github_spec, oas_examples

pytestmark = pytest.mark.corpus

NAME = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")


def _deref(document: dict[str, Any], node: Any) -> Any:
    seen = 0
    while isinstance(node, dict) and "$ref" in node and seen < 50:
        node = resolve(document, node["$ref"])
        seen += 1
    return node


def _declared_operations(document: dict[str, Any]) -> list[tuple[str, str, dict[str, Any], list[dict[str, Any]]]]:
    out = []
    for path, item in (document.get("paths") or {}).items():
        item = _deref(document, item)
        shared = [_deref(document, p) for p in item.get("parameters") or []]
        for method in METHODS:
            if method not in item:
                continue
            op = item[method]
            own = [_deref(document, p) for p in op.get("parameters") or []]
            merged = {(p["name"], p["in"]): p for p in shared}
            merged.update({(p["name"], p["in"]): p for p in own})
            out.append((method.upper(), path, op, list(merged.values())))
    return out


def _credential_params(document: dict[str, Any]) -> set[tuple[str, str]]:
    """``(name, in)`` of every apiKey slot of the document (header names lower-cased): never an
    argument, whether or not the operation lists the scheme (P11)."""
    schemes = (document.get("components") or {}).get("securitySchemes") or {}
    out = set()
    for node in schemes.values():
        scheme = _deref(document, node or {})
        if scheme.get("type") == "apiKey" and isinstance(scheme.get("name"), str):
            name = scheme["name"].lower() if scheme.get("in") == "header" else scheme["name"]
            out.add((name, scheme.get("in")))
    return out


def _carries_credential(param: dict[str, Any]) -> bool:
    """A parameter the contract's rule says carries a credential (P11): never an argument."""
    name, location = param["name"], param["in"]
    description = param.get("description")
    reason = credential_name(location, name, description) or describes_credential(location, name, description)
    return reason is not None and may_hold_text(param.get("schema", {}))


def _check_api(document: dict[str, Any], api: Api) -> None:
    tools = {
        op.label: tool for op, tool in zip(api.operations, finish_catalogue(api, GenerateOptions()).tools, strict=True)
    }
    names = [op.tool_name for op in api.operations]
    assert len(names) == len(set(names)), "tool names must be unique"
    declared = _declared_operations(document)
    assert len(api.operations) + len(api.excluded) == len(declared), "one tool per operation"
    by_label = {op.label: op for op in api.operations}
    for method, path, op_doc, params in declared:
        op = by_label[f"{method} {path}"]
        tool = tools[op.label]
        assert NAME.fullmatch(op.tool_name), op.tool_name
        assert tool.input_schema["type"] == "object"
        assert unresolved_refs(tool.input_schema) == [], op.label
        if tool.output_schema is not None:
            assert tool.output_schema["type"] == "object"
            assert unresolved_refs(tool.output_schema) == [], op.label
        bound = {(p.wire, p.location): p.arg for p in tool.binding.params}
        constants = {(p.wire, p.location) for p in tool.binding.params if p.bound is not None and p.bound.value}
        credentials = _credential_params(document)
        fixed = {name for name, _ in split_template(path)[1]}
        properties = tool.input_schema["properties"]
        for param in params:
            key = (param["name"], param["in"])
            if is_never_an_argument(param["in"], param["name"]):
                continue
            if (param["name"].lower() if param["in"] == "header" else param["name"], param["in"]) in credentials:
                assert bound.get(key, "") == "", f"{op.label}: credential slot {key} is an argument"
                continue
            if param["in"] == "query" and param["name"] in fixed:
                continue  # the path template sends it
            if _carries_credential(param):
                assert bound.get(key, "") == "", f"{op.label}: credential {key} is an argument"
                continue
            if key in constants:
                continue  # one value the spec states: the bridge sends it (generator/parse/constants.py)
            assert key in bound, f"{op.label}: parameter {key} dropped"
            assert bound[key] in properties, f"{op.label}: argument {bound[key]} missing from the schema"
        if "requestBody" in op_doc:
            assert tool.binding.body is not None, f"{op.label}: request body dropped"


def _spec_id(path: Path) -> str:
    return str(path.relative_to(NODE_DIR / "node_modules" / "@readme" / "oas-examples"))


@pytest.mark.parametrize("spec", oas_examples(), ids=_spec_id)
def test_oas_examples_spec_gives_correct_tools(spec: Path) -> None:
    loaded, api = build_api(str(spec), GenerateOptions())
    _check_api(loaded.document, api)


def test_github_spec_gives_correct_tools() -> None:
    loaded, api = build_api(str(github_spec()), GenerateOptions())
    assert len(api.operations) > 1000
    _check_api(loaded.document, api)
