"""``--config`` can set the OAuth scopes a tool asks of its caller, instead of the spec's security."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from bridge.calls.http_tools import tools_from_catalogue
from bridge.calls.runtime import HttpRuntime
from generator.generate import build_catalogue
from generator.options import GenerateOptions

OAUTH = {"type": "oauth2", "flows": {"clientCredentials": {"tokenUrl": "https://as.test/token", "scopes": {}}}}
OK = {"200": {"description": ""}}
SPEC: dict[str, Any] = {
    "openapi": "3.0.3",
    "info": {"title": "Scopes", "version": "1"},
    "servers": [{"url": "https://api.test"}],
    "components": {"securitySchemes": {"oauth": OAUTH}},
    "paths": {
        "/a": {
            "get": {"operationId": "a", "security": [{"oauth": ["read"]}], "responses": {"200": {"description": ""}}}
        },
        "/b": {
            "get": {"operationId": "b", "security": [{"oauth": ["read"]}], "responses": {"200": {"description": ""}}}
        },
        "/c": {"get": {"operationId": "c", "responses": {"200": {"description": ""}}}},
    },
}


def test_config_scopes_replace_the_specs_and_a_bad_value_is_a_warning(tmp_path: Path) -> None:
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps(SPEC))
    overrides = {"a": {"scopes": ["admin", "read"]}, "c": {"scopes": [["x"], ["y", "z"]]}, "b": {"scopes": "read"}}
    catalogue, issues = build_catalogue(str(spec), GenerateOptions(overrides=overrides))
    tools = {t.name: t for t in tools_from_catalogue(catalogue, HttpRuntime.create(catalogue, environ={}))}
    assert tools["a"].scopes == (frozenset({"admin", "read"}),)
    assert tools["b"].scopes == (frozenset({"read"}),)  # from the spec: the override was not a list
    assert tools["c"].scopes == (frozenset({"x"}), frozenset({"y", "z"}))
    assert any("scopes" in str(issue) and "GET /b" in str(issue) for issue in issues)
