"""The repository object the fake upstream answers ``GET /repos/{owner}/{repo}`` with.

``repos/get`` is the GitHub call of the per-call bench that takes arguments and returns JSON, so
its body should be what GitHub really sends: the spec's own example
(``full-repository-default-response``, about 24 KB with ``parent`` and ``source``). That example
breaks its own schema: ``language`` is required (and nullable) but missing at the top level and
in ``source``. A body that fails the response schema would measure error handling, not the call,
so every required property the example leaves out of an object is added as ``null`` where the
schema says it may be null; anything else still missing is reported, never guessed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

OPERATION = ("/repos/{owner}/{repo}", "get")
EXAMPLE = "full-repository-default-response"
ARGS = {"owner": "octocat", "repo": "Hello-World"}
PATH = "/repos/octocat/Hello-World"


def _components(spec: dict[str, Any]) -> dict[str, Any]:
    return spec.get("components") or {}


def response_schema(spec: dict[str, Any]) -> dict[str, Any]:
    """The 200 JSON schema of ``repos/get``, with the spec's components beside it for its ``$ref``s."""
    path, method = OPERATION
    content = spec["paths"][path][method]["responses"]["200"]["content"]["application/json"]
    return {**content["schema"], "components": _components(spec)}


def schema_errors(spec: dict[str, Any], value: Any) -> list[str]:
    """Where ``value`` breaks the response schema (OpenAPI 3.0 semantics: ``nullable``), as JSON pointers."""
    from openapi_schema_validator import OAS30Validator

    validator = OAS30Validator(response_schema(spec))
    errors = validator.iter_errors(value)
    return sorted("/" + "/".join(str(p) for p in e.absolute_path) + ": " + e.message for e in errors)


def _resolve(spec: dict[str, Any], node: Any) -> Any:
    while isinstance(node, dict) and "$ref" in node:
        name = str(node["$ref"]).rsplit("/", 1)[-1]
        node = _components(spec).get("schemas", {}).get(name, {})
    return node


def _complete(spec: dict[str, Any], schema: Any, value: Any) -> None:
    """Add ``null`` for required nullable properties missing from ``value`` (in place, recursively)."""
    schema = _resolve(spec, schema)
    if not isinstance(schema, dict) or not isinstance(value, dict):
        return
    for member in schema.get("allOf") or []:
        _complete(spec, member, value)
    properties = schema.get("properties") or {}
    for name in schema.get("required") or []:
        if name not in value and _resolve(spec, properties.get(name, {})).get("nullable"):
            value[name] = None
    for name, sub in properties.items():
        if isinstance(value.get(name), dict):
            _complete(spec, sub, value[name])
        elif isinstance(value.get(name), list):
            for item in value[name]:
                _complete(spec, _resolve(spec, sub).get("items", {}), item)


def repository(spec: dict[str, Any]) -> dict[str, Any]:
    """The spec's example, completed; raises ``ValueError`` naming what still breaks the schema."""
    example = _components(spec)["examples"][EXAMPLE]["value"]
    value: dict[str, Any] = json.loads(json.dumps(example))
    _complete(spec, response_schema(spec), value)
    errors = schema_errors(spec, value)
    if errors:
        raise ValueError(f"{EXAMPLE} does not validate: {errors[:5]}")
    return value


def write_body(spec_path: Path, out: Path) -> Path:
    """The completed example as compact JSON in ``out`` (what the upstream process serves)."""
    spec = json.loads(spec_path.read_text(encoding="utf-8"))
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(repository(spec), separators=(",", ":"), ensure_ascii=False), encoding="utf-8")
    return out
