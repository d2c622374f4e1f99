"""OpenAPI runtime expressions of a link (``$response.body#/id``), read from the call that started an operation.

Part of the contract: the generator checks a link's expressions with :func:`check_expression`, the
runtime evaluates them with :func:`evaluate` (no httpx, no other runtime module).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from bridge.contract.expressions import json_pointer as jsonpointer

__all__ = ["LinkError", "LinkSource", "check_expression", "evaluate"]

_EXPRESSION = re.compile(
    r"\$(?:url|method|statusCode|request\.(?:path|query|header)\.[^\s.]{1,128}|request\.body(?:#/\S*)?|"
    r"response\.header\.[!#$%&'*+\-.^_`|~0-9A-Za-z]{1,128}|response\.body(?:#/\S*)?)"
)


class LinkError(LookupError):
    """An expression names something the starting call did not have."""


@dataclass(frozen=True, slots=True)
class LinkSource:
    """What expressions read: the starting request (by location and wire name) and its 202 answer."""

    method: str
    url: str
    status: int
    request: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)  # "path"|"query"|"header" -> values
    request_body: Any = None
    headers: Mapping[str, str] = field(default_factory=dict)  # httpx.Headers at run time
    body: bytes = b""


def check_expression(value: Any) -> str | None:
    """Why ``value`` cannot be a link parameter, or None (a constant, or a supported expression)."""
    if isinstance(value, str) and "{$" in value:
        return f"{value[:80]!r} embeds an expression in text, which mcp-bridge does not evaluate"
    if isinstance(value, str) and value.startswith("$"):
        if _EXPRESSION.fullmatch(value) is None:
            return f"{value[:80]!r} is not a runtime expression mcp-bridge evaluates"
        return None
    if value is None or isinstance(value, bool | int | float | str):
        return None
    return "a link parameter must be a runtime expression or a constant"


def evaluate(value: Any, source: LinkSource) -> Any:
    """The value ``value`` stands for. Raises :class:`LinkError` when it is absent."""
    if not (isinstance(value, str) and value.startswith("$")):
        return value
    if value == "$url":
        return source.url
    if value == "$method":
        return source.method
    if value == "$statusCode":
        return source.status
    kind, _, rest = value[1:].partition(".")
    if kind == "request":
        where, _, name = rest.partition(".")
        if where.startswith("body"):
            return _pointer(source.request_body, rest[len("body") :], value)
        values = source.request.get(where, {})
        if where == "header":
            values = {k.lower(): v for k, v in values.items()}
            name = name.lower()
        if name not in values:
            raise LinkError(f"{value}: the request had no such value")
        return values[name]
    if rest.startswith("header."):
        wanted = rest[len("header.") :].lower()
        header = next((v for k, v in source.headers.items() if k.lower() == wanted), None)
        if header is None:
            raise LinkError(f"{value}: the answer had no such header")
        return header
    try:
        body = json.loads(source.body) if source.body else None
    except (ValueError, RecursionError):  # upstream text: nested too deeply is "not JSON" too
        raise LinkError(f"{value}: the answer's body is not JSON") from None
    return _pointer(body, rest[len("body") :], value)


def _pointer(document: Any, fragment: str, value: str) -> Any:
    if not fragment:
        return document
    try:
        return jsonpointer.resolve(document, fragment[1:])
    except jsonpointer.PointerError:
        raise LinkError(f"{value}: not in the body") from None
