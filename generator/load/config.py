"""The ``generate --config`` file, read and checked against its JSON Schema (``config.schema.json``).

A misspelt key used to be ignored: ``security_scheme:`` meant calls went out unauthenticated, and
``operations:`` written as a list was a traceback. Every object in the schema is closed, so an
unknown key is an error naming the file, its JSON pointer and the closest valid key; a wrong type
names what was expected. One line per problem, never a traceback.
"""

from __future__ import annotations

import difflib
import functools
import json
from importlib.resources import files
from pathlib import Path
from typing import Any

import jsonschema
from jsonschema.exceptions import ValidationError

__all__ = ["ConfigError", "config_schema", "read_config"]

SCHEMA_FILE = "config.schema.json"

_KINDS = {
    "object": "a mapping",
    "array": "a list",
    "string": "a string",
    "number": "a number",
    "integer": "an integer",
    "boolean": "true or false",
    "null": "nothing",
}


class ConfigError(Exception):
    """The config cannot be used; ``problems`` are one line each, naming the file."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = problems


@functools.cache
def config_schema() -> dict[str, Any]:
    schema: dict[str, Any] = json.loads(files("generator.load").joinpath(SCHEMA_FILE).read_text(encoding="utf-8"))
    return schema


def read_config(path: Path) -> dict[str, Any]:
    """The config's mapping, checked; raises :class:`ConfigError` with every problem found."""
    import yaml

    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError([f"{path}: cannot read it ({exc})"]) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1} column {mark.column + 1})" if mark is not None else ""
        problem = getattr(exc, "problem", None) or "not YAML"
        raise ConfigError([f"{path}: not YAML{where}: {problem}"]) from None
    data = {} if data is None else data
    problems = config_problems(data, str(path))
    if problems:
        raise ConfigError(problems)
    assert isinstance(data, dict)
    return data


def config_problems(data: Any, source: str) -> list[str]:
    """One line per way ``data`` breaks the schema, in document order."""
    schema = config_schema()
    validator = jsonschema.Draft202012Validator(schema)
    lines: list[str] = []
    for error in sorted(validator.iter_errors(data), key=lambda e: [str(p) for p in e.absolute_path]):
        lines.extend(_describe(error, source, schema))
    return list(dict.fromkeys(lines))


def _pointer(parts: Any) -> str:
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts) or "/"


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "true or false"
    if value is None:
        return "nothing"
    for name, kind in (("object", dict), ("array", list), ("string", str), ("integer", int), ("number", float)):
        if isinstance(value, kind):
            return _KINDS[name]
    return type(value).__name__


def _expected(subschema: dict[str, Any], root: dict[str, Any]) -> list[str]:
    """What a subschema accepts, in words."""
    if "$ref" in subschema:
        return _expected(_resolve(subschema["$ref"], root), root)
    for key in ("anyOf", "oneOf"):
        if key in subschema:
            return [kind for sub in subschema[key] for kind in _expected(sub, root)]
    if "enum" in subschema:
        return [", ".join(repr(v) for v in subschema["enum"]).join(("one of ", ""))]
    kinds = subschema.get("type", [])
    kinds = [kinds] if isinstance(kinds, str) else kinds
    if "array" in kinds and subschema.get("items", {}).get("type") == "string":
        return ["a list of strings"]
    return [_KINDS[k] for k in kinds]


def _resolve(ref: str, root: dict[str, Any]) -> dict[str, Any]:
    node: Any = root
    for part in ref.removeprefix("#/").split("/"):
        node = node[part]
    assert isinstance(node, dict)
    return node


def _describe(error: ValidationError, source: str, root: dict[str, Any]) -> list[str]:
    where = f"{source}: {_pointer(error.absolute_path)}"
    schema = error.schema if isinstance(error.schema, dict) else {}
    allowed = error.validator_value if isinstance(error.validator_value, list) else []
    if error.validator == "additionalProperties" and isinstance(error.instance, dict):
        known = list(schema.get("properties", {}))
        patterns = schema.get("patternProperties", {})
        lines = []
        for key in error.instance:
            if key in known or any(key.startswith(p.removeprefix("^")) for p in patterns):
                continue
            close = difflib.get_close_matches(str(key), known, n=1, cutoff=0.6)
            hint = f"did you mean {close[0]}?" if close else "valid keys: " + ", ".join(known)
            lines.append(f"{source}: {_pointer([*error.absolute_path, key])}: unknown key {str(key)!r}; {hint}")
        return lines
    if error.validator in ("anyOf", "oneOf"):
        # When the value has the type of one alternative, what is wrong inside it says more.
        inner = [e for e in error.context or () if e.relative_path or e.validator not in ("type", "anyOf", "oneOf")]
        if inner:
            return [line for e in inner for line in _describe(e, source, root)]
        expected = " or ".join(dict.fromkeys(_expected(schema, root)))
        return [f"{where}: expected {expected}, got {_kind(error.instance)}"]
    if error.validator == "type":
        expected = " or ".join(_expected(schema, root))
        return [f"{where}: expected {expected}, got {_kind(error.instance)}"]
    if error.validator == "enum":
        options = ", ".join(str(v) for v in allowed)
        close = difflib.get_close_matches(str(error.instance), [str(v) for v in allowed], n=1)
        hint = f"; did you mean {close[0]}?" if close else ""
        return [f"{where}: {str(error.instance)[:60]!r} is not one of {options}{hint}"]
    if error.validator == "required":
        return [f"{where}: {error.message}"]
    return [f"{where}: {error.message[:200]}"]
