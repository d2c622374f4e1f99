"""Where an OpenAPI document may hold references, and the kind of object each one stands for.

Split from :mod:`generator.load.refs` (bundling): the walk knows the OpenAPI structure, the bundler
knows files and policies.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Tokens = tuple[str, ...]

_METHODS_V2 = ("get", "put", "post", "delete", "options", "head", "patch")
_METHODS_V3 = (*_METHODS_V2, "trace")
_SUBSCHEMA_MAPS = ("properties", "patternProperties", "dependentSchemas", "$defs", "definitions")
_SUBSCHEMA_ONE = (
    "additionalProperties",
    "items",
    "not",
    "if",
    "then",
    "else",
    "contains",
    "propertyNames",
    "additionalItems",
    "unevaluatedItems",
    "unevaluatedProperties",
    "contentSchema",
)
_SUBSCHEMA_LISTS = ("allOf", "anyOf", "oneOf", "prefixItems", "items")

SECTIONS_V3 = {
    "schema": "schemas",
    "parameter": "parameters",
    "response": "responses",
    "requestBody": "requestBodies",
    "header": "headers",
    "example": "examples",
    "link": "links",
    "callback": "callbacks",
    "securityScheme": "securitySchemes",
    "pathItem": "pathItems",
}
BUNDLED_UNKNOWN = "x-bundled"
# OpenAPI 3.0 and Swagger 2.0 have no path-item components; an extension key keeps the document valid.
BUNDLED_PATH_ITEMS = "x-pathItems"


RefVisitor = Callable[[dict[str, Any], str, str, Tokens], None]
"""(object holding the ref, key of the ref in it, kind of the target, pointer tokens of the object)."""


class Walker:
    """Finds the references of an OpenAPI document together with the kind of object each stands for.

    Only places where the specification allows references are visited: examples, defaults, enums
    and ``x-`` extensions are data, so a ``$ref`` key in them is not a reference.
    """

    def __init__(self, visit: RefVisitor, *, swagger2: bool, start: Tokens = ()) -> None:
        self._visit = visit
        self._swagger2 = swagger2
        self._path: list[str] = list(start)

    def walk(self, node: Any, kind: str) -> None:
        if isinstance(node, dict):
            getattr(self, "_" + kind)(node)

    def _child(self, node: dict[str, Any], key: str, kind: str) -> None:
        value = node.get(key)
        if isinstance(value, dict):
            self._path.append(key)
            getattr(self, "_" + kind)(value)
            self._path.pop()

    def _entries(self, node: dict[str, Any], key: str, kind: str, *, skip_extensions: bool = False) -> None:
        value = node.get(key)
        if isinstance(value, dict):
            self._path.append(key)
            self._map(value, kind, skip_extensions=skip_extensions)
            self._path.pop()

    def _map(self, node: dict[str, Any], kind: str, *, skip_extensions: bool = False) -> None:
        method = getattr(self, "_" + kind)
        # bundling adds entries to component sections while they are walked
        for name, value in list(node.items()):
            if isinstance(value, dict) and not (skip_extensions and name.startswith("x-")):
                self._path.append(name)
                method(value)
                self._path.pop()

    def _items(self, node: dict[str, Any], key: str, kind: str) -> None:
        value = node.get(key)
        if isinstance(value, list):
            method = getattr(self, "_" + kind)
            self._path.append(key)
            for index, item in enumerate(value):
                if isinstance(item, dict):
                    self._path.append(str(index))
                    method(item)
                    self._path.pop()
            self._path.pop()

    def _ref(self, node: dict[str, Any], kind: str) -> bool:
        if isinstance(node.get("$ref"), str):
            self._visit(node, "$ref", kind, tuple(self._path))
            return True
        return False

    def _document(self, node: dict[str, Any]) -> None:
        self._entries(node, "paths", "pathItem", skip_extensions=True)
        if self._swagger2:
            self._entries(node, "definitions", "schema")
            self._entries(node, "parameters", "parameter")
            self._entries(node, "responses", "response")
            self._entries(node, BUNDLED_PATH_ITEMS, "pathItem")
            self._entries(node, BUNDLED_UNKNOWN, "unknown")
        else:
            self._entries(node, "webhooks", "pathItem", skip_extensions=True)
            self._child(node, "components", "components")

    def _components(self, node: dict[str, Any]) -> None:
        for kind, section in SECTIONS_V3.items():
            self._entries(node, section, kind)
        self._entries(node, BUNDLED_PATH_ITEMS, "pathItem")
        self._entries(node, BUNDLED_UNKNOWN, "unknown")

    def _pathItem(self, node: dict[str, Any]) -> None:
        self._ref(node, "pathItem")
        self._items(node, "parameters", "parameter")
        for method in _METHODS_V2 if self._swagger2 else _METHODS_V3:
            self._child(node, method, "operation")

    def _operation(self, node: dict[str, Any]) -> None:
        self._items(node, "parameters", "parameter")
        self._entries(node, "responses", "response", skip_extensions=True)
        if not self._swagger2:
            self._child(node, "requestBody", "requestBody")
            self._entries(node, "callbacks", "callback")

    def _callback(self, node: dict[str, Any]) -> None:
        if not self._ref(node, "callback"):
            self._map(node, "pathItem", skip_extensions=True)

    def _parameter(self, node: dict[str, Any]) -> None:
        if self._ref(node, "parameter"):
            return
        self._child(node, "schema", "schema")
        if not self._swagger2:
            self._child(node, "content", "content")
            self._entries(node, "examples", "example")

    def _header(self, node: dict[str, Any]) -> None:
        if self._ref(node, "header"):
            return
        self._child(node, "schema", "schema")
        self._child(node, "content", "content")
        self._entries(node, "examples", "example")

    def _requestBody(self, node: dict[str, Any]) -> None:
        if not self._ref(node, "requestBody"):
            self._child(node, "content", "content")

    def _content(self, node: dict[str, Any]) -> None:
        self._map(node, "mediaType")

    def _mediaType(self, node: dict[str, Any]) -> None:
        self._child(node, "schema", "schema")
        self._entries(node, "examples", "example")
        self._entries(node, "encoding", "encoding")

    def _encoding(self, node: dict[str, Any]) -> None:
        self._entries(node, "headers", "header")

    def _response(self, node: dict[str, Any]) -> None:
        if self._ref(node, "response"):
            return
        if self._swagger2:
            self._child(node, "schema", "schema")
            return
        self._entries(node, "headers", "header")
        self._child(node, "content", "content")
        self._entries(node, "links", "link")

    def _example(self, node: dict[str, Any]) -> None:
        self._ref(node, "example")

    def _link(self, node: dict[str, Any]) -> None:
        self._ref(node, "link")

    def _securityScheme(self, node: dict[str, Any]) -> None:
        self._ref(node, "securityScheme")

    def _unknown(self, node: dict[str, Any]) -> None:
        self._ref(node, "unknown")

    def _schema(self, node: dict[str, Any]) -> None:
        self._ref(node, "schema")  # 3.1 allows keywords next to $ref, so the walk goes on
        for key in _SUBSCHEMA_MAPS:
            self._entries(node, key, "schema")
        for key in _SUBSCHEMA_ONE:
            self._child(node, key, "schema")
        for key in _SUBSCHEMA_LISTS:
            self._items(node, key, "schema")
        discriminator = node.get("discriminator")
        if isinstance(discriminator, dict) and isinstance(discriminator.get("mapping"), dict):
            self._path += ["discriminator", "mapping"]
            mapping: dict[str, Any] = discriminator["mapping"]
            for key, value in mapping.items():
                # A mapping value is a schema name or a reference; only references contain these.
                if isinstance(value, str) and ("/" in value or "#" in value):
                    self._visit(mapping, key, "schema", tuple(self._path))
            del self._path[-2:]
