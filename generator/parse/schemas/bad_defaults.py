"""Defaults and examples that break their own schema are not advertised.

Real specs get them wrong (an AI API's integer ``max_tokens`` with ``default: "inf"``, an e-mail
API's ``format: date`` with ``default: ""``). Load validation warns about each; left in the tool's
schema, a model that copies the value gets a validation error from the bridge itself. So a
``default`` the schema refuses is dropped, and so is each such ``examples`` entry. The check is
the runtime's own rule for arguments (JSON Schema 2020-12 with the formats it asserts,
:mod:`bridge.contract.formats`), on the schema without its annotations; a schema that refers elsewhere
(``$ref``) is left as it is.
"""

from __future__ import annotations

from typing import Any

import jsonschema

from bridge.contract.formats import FORMAT_CHECKER

__all__ = ["without_bad_examples"]

_ANNOTATIONS = ("default", "examples", "title", "description", "deprecated", "readOnly", "writeOnly")


def without_bad_examples(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` (changed in place and returned) without the default and examples it refuses."""
    if "default" not in schema and "examples" not in schema:
        return schema
    check = {key: value for key, value in schema.items() if key not in _ANNOTATIONS}
    if _refers(check):
        return schema
    try:
        validator = jsonschema.Draft202012Validator(check, format_checker=FORMAT_CHECKER)
        if "default" in schema and not validator.is_valid(schema["default"]):
            del schema["default"]
        examples = schema.get("examples")
        if isinstance(examples, list):
            kept = [example for example in examples if validator.is_valid(example)]
            if kept:
                schema["examples"] = kept
            else:
                del schema["examples"]
    except (jsonschema.exceptions.SchemaError, jsonschema.exceptions.UnknownType, TypeError, ValueError):
        pass  # a schema the checker cannot read (a bad pattern): nothing can be said of its values
    return schema


def _refers(node: Any) -> bool:
    if isinstance(node, dict):
        return "$ref" in node or "$dynamicRef" in node or any(_refers(value) for value in node.values())
    if isinstance(node, list):
        return any(_refers(item) for item in node)
    return False
